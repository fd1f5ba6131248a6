"""The game clock of a preset with a time limit (kenko's 50 minutes): the seconds left,
the ``MM:SS`` the consoles show, and whether time ran out. Pure: the table's core hands in
its rules, when the clock started and the time now."""

from __future__ import annotations

from tablectl.rules.options import HouseRules
from tablectl.rules.state import GameState


def seconds_left(rules: HouseRules, started: float | None, now: float) -> int | None:
    """Seconds left on the game clock (None: the preset has none, or it has not
    started)."""
    limit = rules.game.time_limit_minutes
    if limit is None or started is None:
        return None
    return max(0, int(limit * 60 - (now - started)))


def as_text(left: int | None) -> str | None:
    """``left`` seconds as ``MM:SS`` (None without a clock)."""
    return None if left is None else f"{left // 60:02d}:{left % 60:02d}"


def ran_out(rules: HouseRules, started: float | None, now: float, state: GameState) -> bool:
    """The game's time is up and the hand in progress is not yet its last."""
    limit = rules.game.time_limit_minutes
    if limit is None or started is None:
        return False
    return not state.last_hand and not state.finished and now - started >= limit * 60
