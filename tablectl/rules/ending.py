"""The end of a game: leftover deposits, final checks, ranking and result points.

The order is the one the standard rule sets give (M-League, WRC 2022 7.x, EMA RCR 2016
10.x): the players are ranked on the table scores (ties by seat order, or shared places
under ``tie = "share_uma"``), then the deposits left on the table go to the top (shared
equally by tied tops) and kenko's sum check is made, uma and oka are added by place, and
only then are penalties in result points taken. So neither the leftover deposits nor a
penalty ever changes anyone's place, and tied players stay tied.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from tablectl.rules.money import settle
from tablectl.rules.state import Final, GameState

#: Result points are kept to the hundred points (0.1 in thousands) ...
HUNDRED = 100
#: ... except a share among tied players that is not whole hundreds: to ten points (0.01).
TEN = 10


def ranking(scores: Sequence[int]) -> tuple[int, ...]:
    """Seats best first; equal scores rank by seat order from the first dealer (seat 0)."""
    return tuple(sorted(range(len(scores)), key=lambda seat: (-scores[seat], seat)))


def tied_groups(scores: Sequence[int], order: Sequence[int]) -> list[list[int]]:
    """Places grouped by equal score: ``[[0], [1, 2], [3]]`` when 2nd and 3rd are tied."""
    groups: list[list[int]] = []
    for place, seat in enumerate(order):
        if groups and scores[order[groups[-1][0]]] == scores[seat]:
            groups[-1].append(place)
        else:
            groups.append([place])
    return groups


def _groups(state: GameState, scores: Sequence[int], order: Sequence[int]) -> list[list[int]]:
    """The places that share: tied places under ``share_uma``, each place alone otherwise."""
    if state.rules.game.tie == "share_uma":
        return tied_groups(scores, order)
    return [[place] for place in range(len(order))]


def _round_half_up_thousands(points: int) -> int:
    return (points + 500) // 1000 * 1000


def _place_bonus(state: GameState, groups: Sequence[Sequence[int]], players: int) -> list[Fraction]:
    """Uma (and oka for 1st) in points by place; the places of a group share theirs
    equally (exactly: a three-way share of 50000 is 16666 2/3 each)."""
    game = state.rules.game
    bonus = [Fraction(game.uma[place] * 1000 if game.uma else 0) for place in range(players)]
    if game.oka_to_top:
        bonus[0] += (game.return_points - game.start_points) * players
    for places in groups:
        share = sum((bonus[p] for p in places), Fraction(0)) / len(places)
        for place in places:
            bonus[place] = share
    return bonus


def _settled_score(state: GameState, score: int) -> int:
    game = state.rules.game
    if not game.negative_settlement:
        score = max(score, 0)
    if game.final_rounding == "thousand_half_up":
        score = _round_half_up_thousands(score)
    return score


def to_ten_points(points: Fraction) -> Fraction:
    """An exact share rounded to ten points (0.01 in thousands), half away from zero.
    Whole hundreds, as every score and uma is, come back unchanged."""
    steps = abs(points) / TEN
    whole = int(steps) + (1 if steps - int(steps) >= Fraction(1, 2) else 0)
    return Fraction(whole * TEN if points >= 0 else -whole * TEN)


def thousands(points: Fraction) -> float:
    """Result points in thousands: 0.1 steps, or 0.01 for a share that is not whole hundreds."""
    return float(points / 1000)


def result_points(
    state: GameState,
    scores: Sequence[int],
    order: Sequence[int],
    groups: Sequence[Sequence[int]],
    lost: int = 0,
) -> tuple[Fraction, ...]:
    """Result points (in points) against the return, with uma and oka (empty when neither
    applies); :func:`thousands` turns them into the result figures.

    ``scores`` are the table scores the places were decided on, before the deposits left
    on the table (which the first group's share includes, as they go to it). Every seat outside
    the first group is worked out on its own (its score settled and rounded, the return
    taken off, its place bonus added); the first group (the top, or the tied tops under
    ``share_uma``) shares equally what makes the table sum to zero, less the deposits that
    were ``lost`` (WRC). So the results of every preset sum to zero before penalties,
    whatever the rounding (jboy: 百点単位は四捨五入). A share among tied players that is
    not whole hundreds is kept to ten points (0.01); where it is not whole ten points
    either (a three-way share), the tied tops stay equal and the sum may miss zero by ten
    points: equal shares win (docs/rules.md, "Ties and the final result").
    """
    game = state.rules.game
    if not game.uma and not (game.oka_to_top and game.return_points != game.start_points):
        return ()
    bonus = _place_bonus(state, groups, len(scores))
    points = [Fraction(0)] * len(scores)
    for places in groups[1:]:
        for place in places:
            seat = order[place]
            points[seat] = to_ten_points(
                _settled_score(state, scores[seat]) - game.return_points + bonus[place]
            )
    top = [order[place] for place in groups[0]]
    share = to_ten_points((-sum(points, Fraction(0)) - lost) / len(top))
    for seat in top:
        points[seat] = share
    return tuple(points)


def finish(state: GameState, reason: str, made_bust: Sequence[int] = ()) -> Final:
    """Apply the end-of-game adjustments to ``state``, rank the players, then penalties,
    and settle the money where the preset has it.

    The places are decided on the table scores first; only then do the deposits left on
    the table go to the top (shared equally by the tied tops under ``share_uma``), so they
    never change who is tied or who is ahead. The bust prize is paid by every seat below
    zero and by ``made_bust``, the seats the rules made bust whatever their score
    (sanma-free's riichi at 900 or less).
    """
    game = state.rules.game
    scores = list(state.scores)
    order = ranking(scores)
    groups = _groups(state, scores, order)
    top = [order[place] for place in groups[0]]
    lost = 0
    if state.kyoutaku:
        if game.leftover_deposits == "top":
            # Each of the tied tops gets an equal share in whole points (2000 among three:
            # 666 each); their result carries the exact share, as it balances the table.
            for seat in top:
                scores[seat] += state.kyoutaku // len(top)
        else:
            lost = state.kyoutaku
    if game.final_sum_check:
        excess = sum(scores) - game.start_points * len(scores)
        if excess > 0:
            scores[order[0]] -= excess
    points = result_points(state, state.scores, order, groups, lost)
    penalties = tuple(state.final_penalties) or (0,) * len(scores)
    if any(penalties):
        if points:
            points = tuple(r - p for r, p in zip(points, penalties, strict=True))
        else:
            scores = [s - p for s, p in zip(scores, penalties, strict=True)]
    result = tuple(thousands(p) for p in points)
    # Without result points the money is paid on what each seat won or lost.
    won = points or tuple(Fraction(s - game.start_points) for s in scores)
    busted = sorted({s for s, score in enumerate(state.scores) if score < 0} | set(made_bust))
    money = settle(
        state.rules, result=won, order=order, groups=groups, chips=state.chips, busted=busted
    )
    return Final(
        scores=tuple(scores),
        ranking=order,
        reason=reason,
        result=result,
        penalties=penalties if any(penalties) else (),
        money=money,
    )
