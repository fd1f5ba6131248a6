"""The wall follower and the physical wall disagree: nobody lifts a tile twice.

The follower tracks the hand from what the table reported; the wall is what players did.
They part when a take cannot be reported (the event queue is full) and when dice are
rolled again on a wall already dealt from. A bot that then took what the follower said
lifted an empty position, and the ValueError ended the simulator's bots (seen in
tests/e2e/test_storm_sim.py under load: a daemon's stale HOST_SILENT made it roll again).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest

from firmware_bridge.link import DEVICE_QUEUE_MAX
from firmware_bridge.messages import FaultCode, Key, WallTake
from hw_sim import SimTable
from tablectl.rules import wall as W
from tablectl.rules.events import Take
from tablectl.rules.refusal import Refusal

_names = itertools.count()


@contextlib.asynccontextmanager
async def bot_table(seed: int) -> AsyncIterator[SimTable]:
    """A table with bots and no host: every event waits in the device queue, in order."""
    sim = SimTable("jboy", seed, speed=0, max_games=1)
    await sim.start_sim(f"follower-{next(_names)}")
    sim.firmware.wall.shuffle()  # what a host's WallCommand(SHUFFLE) does, without one
    try:
        yield sim
    finally:
        await sim.close()


def _tracker_says(sim: SimTable, seat: int) -> tuple[int, ...]:
    """What the tracker alone names for ``seat``'s take, wall or no wall."""
    state = sim.follower.state
    assert state is not None
    new = W.wall_step(sim.follower.rules, state, Take(seat))
    assert not isinstance(new, Refusal)
    return new.taken[len(state.taken) :]


async def test_a_take_the_table_could_not_report_is_not_taken_again() -> None:
    async with bot_table(1) as table:
        table.roll()
        first = table.follower.expected_take(0)
        assert first is not None
        for _ in range(DEVICE_QUEUE_MAX):  # nobody reads the queue: it fills, then overflows
            table.press(1, Key.DIGIT_0)
        assert FaultCode.EVENT_OVERFLOW in table.firmware.latched
        table.take(0)  # lifted, but its WallTake was dropped with the overflow
        assert not any(isinstance(m, WallTake) for _, m in table.firmware.transcript)
        assert _tracker_says(table, 0) == first  # the tracker never heard of it
        assert table.follower.expected_take(0) is None
        with pytest.raises(ValueError, match="no take due"):
            table.take(0)
        assert table.bots is not None
        assert await table.bots._take(0) is False  # the bots leave the hand, they do not crash
        assert table.bots.hands_left == 1
        assert table.firmware.wall.taken == dict.fromkeys(first, 0)


async def test_dice_rolled_again_on_a_dealt_wall_take_nothing_twice() -> None:
    async with bot_table(2) as table:
        table.roll()
        while (state := table.follower.state) is not None and state.phase == W.DEAL:
            table.take(state.turn)
        taken = dict(table.firmware.wall.taken)
        assert len(taken) == 13 * 4
        table.roll()  # the dice again, no shuffle: the tracker starts on a dealt wall
        state = table.follower.state
        assert state is not None and state.phase == W.DEAL and not state.taken
        # This seed's second break starts in the dealt part of the wall.
        assert set(_tracker_says(table, state.turn)) & set(taken)
        assert table.follower.expected_take(state.turn) is None
        assert table.bots is not None
        assert await table.bots._take(state.turn) is False
        assert table.bots.hands_left == 1
        assert table.firmware.wall.taken == taken
