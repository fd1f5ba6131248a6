"""The end of a game: leftover deposits, final checks, ranking and result points."""

from __future__ import annotations

from collections.abc import Sequence

from tablectl.rules.state import Final, GameState


def ranking(scores: Sequence[int]) -> tuple[int, ...]:
    """Seats best first; equal scores rank by seat order from the first dealer (seat 0)."""
    return tuple(sorted(range(len(scores)), key=lambda seat: (-scores[seat], seat)))


def _round_half_up_thousands(points: int) -> int:
    return (points + 500) // 1000 * 1000


def result_points(
    state: GameState, scores: Sequence[int], order: Sequence[int]
) -> tuple[float, ...]:
    """Points in thousands against the return, with uma and oka (empty when neither applies)."""
    game = state.rules.game
    if not game.uma and not (game.oka_to_top and game.return_points != game.start_points):
        return ()
    out = [0.0] * len(scores)
    for place, seat in enumerate(order):
        score = scores[seat]
        if not game.negative_settlement:
            score = max(score, 0)
        if game.final_rounding == "thousand_half_up":
            score = _round_half_up_thousands(score)
        value = (score - game.return_points) / 1000
        if game.uma:
            value += game.uma[place]
        if place == 0 and game.oka_to_top:
            value += (game.return_points - game.start_points) * len(scores) / 1000
        out[seat] = round(value, 1)
    return tuple(out)


def finish(state: GameState, reason: str) -> Final:
    """Apply the end-of-game adjustments to ``state`` and rank the players."""
    game = state.rules.game
    scores = list(state.scores)
    if game.leftover_deposits == "top" and state.kyoutaku:
        scores[ranking(scores)[0]] += state.kyoutaku
    for seat, penalty in enumerate(state.final_penalties):
        scores[seat] -= penalty
    if game.final_sum_check:
        excess = sum(scores) - game.start_points * len(scores)
        if excess > 0:
            scores[ranking(scores)[0]] -= excess
    order = ranking(scores)
    return Final(
        scores=tuple(scores),
        ranking=order,
        reason=reason,
        result=result_points(state, scores, order),
    )
