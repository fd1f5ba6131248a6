"""Glue between the rules core and the wall tracker (provisional: no wall sensors yet)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablectl.rules import events as ev
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import Effect, GameState

Handled = tuple[GameState, list[Effect]] | Refusal


def wall_event(state: GameState, event: ev.Event) -> Handled:
    """Apply a wall event (dice, deal, take, discard, call, kan, north)."""
    return Refusal("no_wall", "wall tracking is not available yet")


def check_riichi(state: GameState, seat: int) -> Refusal | None:
    """A riichi declaration is possible as far as the wall goes."""
    return None


def check_tsumo(state: GameState, seat: int) -> Refusal | None:
    """A tsumo by ``seat`` is possible as far as the wall goes."""
    return None


def check_ron(
    state: GameState, discarders: Sequence[int], winners: Sequence[int]
) -> Refusal | None:
    """A ron is possible as far as the wall goes."""
    return None


def check_draw(state: GameState) -> Refusal | None:
    """An exhaustive draw is possible as far as the wall goes."""
    return None


def check_abort(state: GameState, reason: str) -> Refusal | None:
    """An abortive draw is possible as far as the wall goes."""
    return None


def summary(state: GameState) -> dict[str, Any] | None:
    """The wall of the hand in progress for the replay output, or None without tracking."""
    return None
