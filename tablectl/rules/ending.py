"""The end of a game: leftover deposits, final checks, ranking and result points.

The order is the one the standard rule sets give (M-League, WRC 2022 7.x, EMA RCR 2016
10.x): the table scores are settled (leftover deposits, kenko's sum check), the players are
ranked, uma and oka are added, and only then are penalties in result points taken, so a
penalty never changes anyone's place.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablectl.rules.state import Final, GameState

#: Result points are kept to the hundred points (0.1 in thousands).
HUNDRED = 100


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


def split_evenly(total: int, count: int) -> list[int]:
    """``total`` points split into ``count`` shares of whole hundreds, the odd hundreds to
    the first shares (seat order among the tied players)."""
    hundreds, extra = divmod(total // HUNDRED, count)
    return [(hundreds + (1 if i < extra else 0)) * HUNDRED for i in range(count)]


def _round_half_up_thousands(points: int) -> int:
    return (points + 500) // 1000 * 1000


def _place_bonus(state: GameState, scores: Sequence[int], order: Sequence[int]) -> list[int]:
    """Uma (and oka for 1st) in points by place; tied places share theirs under share_uma."""
    game = state.rules.game
    players = len(scores)
    bonus = [game.uma[place] * 1000 if game.uma else 0 for place in range(players)]
    if game.oka_to_top:
        bonus[0] += (game.return_points - game.start_points) * players
    if game.tie != "share_uma":
        return bonus
    for places in tied_groups(scores, order):
        if len(places) > 1:
            shares = split_evenly(sum(bonus[p] for p in places), len(places))
            for place, share in zip(places, shares, strict=True):
                bonus[place] = share
    return bonus


def _settled_score(state: GameState, score: int) -> int:
    game = state.rules.game
    if not game.negative_settlement:
        score = max(score, 0)
    if game.final_rounding == "thousand_half_up":
        score = _round_half_up_thousands(score)
    return score


def result_points(
    state: GameState, scores: Sequence[int], order: Sequence[int], lost: int = 0
) -> tuple[float, ...]:
    """Points in thousands against the return, with uma and oka (empty when neither applies).

    Every seat but the top is worked out on its own (its score settled and rounded, the
    return taken off, its place bonus added); the top's result is what makes the table sum
    to zero, less the deposits that were ``lost`` (WRC). So the results of every preset sum
    to zero before penalties, whatever the rounding (jboy: 百点単位は四捨五入).
    """
    game = state.rules.game
    if not game.uma and not (game.oka_to_top and game.return_points != game.start_points):
        return ()
    bonus = _place_bonus(state, scores, order)
    points = [0] * len(scores)
    for place, seat in enumerate(order[1:], start=1):
        points[seat] = _settled_score(state, scores[seat]) - game.return_points + bonus[place]
    points[order[0]] = -sum(points) - lost
    return tuple(round(p / 1000, 1) for p in points)


def _leftover_to_top(state: GameState, scores: list[int]) -> None:
    """The deposits left on the table go to the top (shared by tied tops under share_uma)."""
    order = ranking(scores)
    top = [order[p] for p in tied_groups(scores, order)[0]]
    if state.rules.game.tie != "share_uma":
        top = top[:1]
    for seat, share in zip(top, split_evenly(state.kyoutaku, len(top)), strict=True):
        scores[seat] += share


def finish(state: GameState, reason: str) -> Final:
    """Apply the end-of-game adjustments to ``state``, rank the players, then penalties."""
    game = state.rules.game
    scores = list(state.scores)
    lost = 0
    if state.kyoutaku:
        if game.leftover_deposits == "top":
            _leftover_to_top(state, scores)
        else:
            lost = state.kyoutaku
    if game.final_sum_check:
        excess = sum(scores) - game.start_points * len(scores)
        if excess > 0:
            scores[ranking(scores)[0]] -= excess
    order = ranking(scores)
    result = result_points(state, scores, order, lost)
    penalties = tuple(state.final_penalties) or (0,) * len(scores)
    if any(penalties):
        if result:
            result = tuple(round(r - p / 1000, 1) for r, p in zip(result, penalties, strict=True))
        else:
            scores = [s - p for s, p in zip(scores, penalties, strict=True)]
    return Final(
        scores=tuple(scores),
        ranking=order,
        reason=reason,
        result=result,
        penalties=penalties if any(penalties) else (),
    )
