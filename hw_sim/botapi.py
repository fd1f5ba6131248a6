"""What the players of play (:mod:`hw_sim.keyedplay`, :mod:`hw_sim.tileplay`) use of the
bot table that runs them (:class:`hw_sim.players.BotTable`): its table, rules and moves.

A protocol, so that the players need not import the bot table that imports them.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from firmware_bridge.messages import Key
from hw_sim.botmemory import Hand
from hw_sim.firmware import SimFirmware
from hw_sim.follower import WallFollower
from tablectl.rules import wall as W
from tablectl.rules.events import WallEvent
from tablectl.rules.options import HouseRules
from tablectl.tiles.hand import HandScore

__all__ = ["Bots"]


class Bots(Protocol):
    """The bot table as its players see it (see :class:`hw_sim.players.BotTable`)."""

    fw: SimFirmware
    house: HouseRules
    rules: W.WallRules
    players: int
    seats: set[int]
    follower: WallFollower
    rng: random.Random
    calling: set[int]
    _hand: Hand | None
    _intent: dict[int, list[Key]]
    _refused_at: list[int]
    _scores: list[int | None]

    def press(self, seat: int, key: Key) -> None:
        """A bot presses ``key`` on its seat."""

    async def _wait_until(self, cond: Callable[[], bool], *, stall: bool = True) -> bool:
        """Wait for ``cond``, answering prompts meanwhile."""

    def _others_from(self, seat: int) -> list[int]:
        """The other seats in turn order after ``seat``."""

    def _valid(self, state: W.WallState, event: WallEvent) -> bool:
        """The wall tracker takes ``event`` in ``state``."""

    async def _discard(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` discarded: play goes on from the discard."""

    async def _take(self, seat: int, then: Callable[[], object] | None = None) -> bool:
        """``seat`` takes what comes next and waits until the daemon shows it."""

    async def _tsumo(self, hand: Hand, seat: int, score: HandScore | None = None) -> bool:
        """``seat`` declares tsumo."""

    async def _ron(self, hand: Hand, seat: int, score: HandScore | None = None) -> bool:
        """``seat`` declares ron."""

    async def _kan(self, hand: Hand, state: W.WallState, seat: int, digit: Key) -> bool:
        """``seat`` declares a kan or a north (``digit`` at ``KAN?``)."""

    async def _abort(self, hand: Hand, seat: int, digit: Key, reason: str) -> bool:
        """``seat`` declares an abortive draw (``digit`` at ``ABORT?``)."""

    async def _draw(self, hand: Hand, first: int) -> bool:
        """The wall is exhausted: the draw, ``first`` declaring."""
