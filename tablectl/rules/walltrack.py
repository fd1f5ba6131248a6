"""Glue between the rules core and the wall tracker (:mod:`tablectl.rules.wall`).

A hand without a ``dice`` event is score keeping only: every wall check passes.  Once the
dice are rolled, the wall tracker follows every take, call and kan, and the score events
(riichi, wins, draws, aborts) are checked against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from tablectl.rules import events as ev
from tablectl.rules import tiletrack, wall
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import Effect, GameState, Noted

Handled = tuple[GameState, list[Effect]] | Refusal


@lru_cache(maxsize=64)
def wall_rules(rules: HouseRules) -> wall.WallRules:
    """The wall tracker's view of a rule set."""
    opts = rules.wall
    return wall.WallRules(
        players=rules.players,
        own_walls=opts.own_walls,
        own_wall_discards=opts.own_wall_discards,
        kans_allowed=opts.kans_allowed,
        four_kan_abort="four_kans" in rules.flow.abortive_draws,
        kan_dora=opts.kan_dora,
        kan_dora_on_chankan=opts.kan_dora_on_chankan,
        haitei_discard_callable=opts.haitei_discard_callable,
        riichi_needs_draw_left=rules.riichi.needs_draw_left,
        north_pulls=opts.north_pulls,
        chi_allowed=opts.chi_allowed,
        kokushi_closed_kan_ron=opts.kokushi_closed_kan_ron,
    )


def wall_event(state: GameState, event: ev.Event) -> Handled:
    """Apply a wall event (dice, layout, deal, take, discard, call, kan, north) to the
    wall and, in a hand with a layout, to the tiles."""
    rules = wall_rules(state.rules)
    if isinstance(event, ev.Dice) and state.wall is None:
        new_wall = wall.start_wall(rules, state.dealer, event.dice)
    elif not isinstance(
        event, ev.Dice | ev.Layout | ev.Deal | ev.Take | ev.Discard | ev.Call | ev.Kan | ev.North
    ):
        raise TypeError(f"not a wall event: {event!r}")  # pragma: no cover
    elif state.wall is None:
        return wall.no_wall_refusal(event)
    else:
        new_wall = wall.wall_step(rules, state.wall, event)
    if isinstance(new_wall, Refusal):
        return new_wall
    # The tiles step beside the wall; what either refuses refuses the event.
    tiles = tiletrack.step_tiles(state, event, new_wall)
    if isinstance(tiles, Refusal):
        return tiles
    return replace(state, wall=new_wall, tiles=tiles), [Noted(type(event).__name__.lower())]


def check_riichi(state: GameState, seat: int) -> Refusal | None:
    """A riichi declaration is possible as far as the wall goes."""
    if state.wall is None:
        return None
    return wall.check_riichi(wall_rules(state.rules), state.wall, seat)


def check_tsumo(state: GameState, seat: int) -> Refusal | None:
    """A tsumo by ``seat`` is possible as far as the wall goes (it has just drawn)."""
    if state.wall is None:
        return None
    return wall.check_tsumo(wall_rules(state.rules), state.wall, seat)


def check_ron(
    state: GameState, discarders: Sequence[int], winners: Sequence[int]
) -> Refusal | None:
    """A ron is possible as far as the wall goes (off the last discard, a kan or a north)."""
    if state.wall is None:
        return None
    return wall.check_ron(wall_rules(state.rules), state.wall, tuple(discarders), tuple(winners))


def check_draw(state: GameState) -> Refusal | None:
    """An exhaustive draw is possible as far as the wall goes (no live tile left)."""
    if state.wall is None:
        return None
    return wall.check_draw(wall_rules(state.rules), state.wall)


def check_abort(state: GameState, reason: str) -> Refusal | None:
    """An abortive draw's condition holds as far as the wall can tell."""
    if state.wall is None:
        return None
    return wall.check_abort(wall_rules(state.rules), state.wall, reason)


def summary(state: GameState) -> dict[str, Any] | None:
    """The wall of the hand in progress for the replay output, or None without tracking."""
    if state.wall is None:
        return None
    return wall.wall_summary(state.wall)
