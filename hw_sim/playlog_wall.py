"""The walls and dice of a logged game, laid out on the simulated table.

tenhou.net's wall (:mod:`tablectl.logs.tenhou_wall`) is an array in dealing order:
``wall[135]`` is the first tile dealt, ``wall[0]`` the last tile of the dead wall.  The
table's wall tracker (:func:`tablectl.rules.wall.start_wall`) gives every position in
its own draw order for the dealer and the dice: the live wall from the break, the dead
wall last.  The two agree tile for tile (the deal's 4-4-4-1 blocks, the live draws, the
dora indicator on the third stack from the break end with its ura beneath, the
replacement tiles from the break end), so the tile at draw-order index ``k`` is tenhou's
``wall[135 - k]``.

An mjlog gives each hand's whole wall and dice (rebuilt from its seed).  A tenhou.net/6
log gives what was seen: the deal, the draws, the replacement tiles and the dora and ura
indicators; its other tiles are laid in the free places (lowest id first), and its dice,
which the format does not keep, come from the hand's place in the game.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from tablectl.logs.game import Draw, LogError, LogHand, NewDora
from tablectl.logs.tenhou_wall import (
    dora_position,
    haipai_positions,
    live_draw_position,
    rinshan_position,
    ura_position,
)
from tablectl.rules import wall as W
from tablectl.rules.refusal import Refusal

__all__ = ["HandDeal", "hand_deal", "tenhou_order_wall"]

TILES = 136


@dataclass(frozen=True, slots=True)
class HandDeal:
    """One hand as the table deals it: the dice and the tile id at each position."""

    dice: tuple[int, int]
    layout: tuple[int, ...]


def _put(wall: list[int | None], pos: int, tile: int, what: str) -> None:
    if wall[pos] is not None and wall[pos] != tile:
        raise LogError(f"{what}: wall place {pos} holds {wall[pos]} and {tile}")
    wall[pos] = tile


def tenhou_order_wall(hand: LogHand) -> tuple[int, ...]:
    """The hand's 136 tiles in tenhou's dealing order: the log's own wall where it has
    one, else built from what the log shows (the rest free).  Raises :class:`LogError`
    when the log's tiles do not fit one wall (a tile twice, too many draws)."""
    if hand.wall is not None:
        return hand.wall
    wall: list[int | None] = [None] * TILES
    for seat, tiles in enumerate(hand.haipai):
        offset = (seat - hand.dealer) % len(hand.haipai)
        for pos, tile in zip(haipai_positions(offset), tiles, strict=True):
            _put(wall, pos, tile, f"seat {seat}'s deal")
    live = rinshan = 0
    dora = 1
    _put(wall, dora_position(0), hand.dora, "the dora indicator")
    for action in hand.actions:
        if isinstance(action, Draw) and action.rinshan:
            if rinshan >= 4:
                raise LogError("more than four replacement draws")
            _put(wall, rinshan_position(rinshan), action.tile, "a replacement draw")
            rinshan += 1
        elif isinstance(action, Draw):
            try:
                pos = live_draw_position(live)
            except ValueError as exc:
                raise LogError(str(exc)) from None
            _put(wall, pos, action.tile, f"live draw {live + 1}")
            live += 1
        elif isinstance(action, NewDora):
            _put(wall, dora_position(dora), action.indicator, "a kan dora indicator")
            dora += 1
    for n, tile in enumerate(hand.ura):
        _put(wall, ura_position(n), tile, "an ura indicator")
    placed = [t for t in wall if t is not None]
    if len(set(placed)) != len(placed):
        twice = sorted({t for t in placed if placed.count(t) > 1})
        raise LogError(f"tile ids {twice[:4]} lie twice in the wall")
    free = iter(sorted(set(range(TILES)) - set(placed)))
    return tuple(t if t is not None else next(free) for t in wall)


def _dice(hand: LogHand, index: int) -> tuple[int, int]:
    if hand.dice is not None:
        return hand.dice
    rng = random.Random(f"playlog-dice:{index}")
    return rng.randint(1, 6), rng.randint(1, 6)


def hand_deal(rules: W.WallRules, hand: LogHand, index: int) -> HandDeal:
    """The dice and physical layout of ``hand`` (the game's ``index``-th) under the wall
    ``rules`` (four players, 136 positions).  Raises :class:`LogError`."""
    if rules.players != 4 or rules.own_walls:
        raise LogError("only four-player tables with a shared wall deal logged games")
    dice = _dice(hand, index)
    started = W.start_wall(rules, hand.dealer, dice)
    if isinstance(started, Refusal):
        raise LogError(f"hand {index + 1}: {started.message}")
    tenhou = tenhou_order_wall(hand)
    layout = [0] * TILES
    for k, pos in enumerate(started.order):
        layout[pos] = tenhou[TILES - 1 - k]
    return HandDeal(dice, tuple(layout))
