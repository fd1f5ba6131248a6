"""The daemon and a simulated table with a wall reader: the centre display's dora.

Every ``CentreDisplay`` the table receives is checked against the simulator's own wall:
its dora must be the tiles lying at the hand's indicator positions (as the simulator's
wall follower tracks them), first one first, kan dora included.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.messages import CentreDisplay, DiceResult, Message
from hw_sim import SimTable
from hw_sim.firmware import Direction
from hw_sim.wall import tile_name
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.rules.loader import load_rules

GAME_TIMEOUT_S = 60
_names = itertools.count()


class DoraCheck:
    """Listens to the simulated table: what the centre showed, and every wrong dora."""

    def __init__(self, sim: SimTable) -> None:
        self.sim = sim
        self.shown: list[tuple[int, ...]] = []
        self.wrong: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        #: The terminal view's centre line when the centre first showed a dora.
        self.view_line = ""
        sim.firmware.add_listener(self._on_message)

    def _on_message(self, direction: Direction, msg: Message) -> None:
        if direction != "rx" or not isinstance(msg, CentreDisplay) or not msg.dora:
            return
        state = self.sim.follower.state
        positions = state.dora_indicators if state is not None else ()
        wall = self.sim.firmware.wall
        expected = tuple(wall.tile_at(p) for p in positions[: len(msg.dora)])
        self.shown.append(msg.dora)
        if not self.view_line:
            self.view_line = next(x for x in self.sim.render().splitlines() if "clock" in x)
        if expected != msg.dora:
            self.wrong.append((msg.dora, expected))


async def play(preset: str, seed: int, tmp: Path, **kw: Any) -> tuple[DoraCheck, dict[str, Any]]:
    sim = SimTable(load_rules(preset), seed, max_games=1, **kw)
    check = DoraCheck(sim)
    results: list[dict[str, Any]] = []
    url = await sim.start_sim(f"dora-{next(_names)}")
    config = config_for(url, preset, tmp / f"{next(_names)}.sqlite3", table_id="dora")
    daemon = Daemon(
        config,
        claim_window_s=None,  # closed by the bots' answers: the same game at any load
        max_games=1,
        on_game=lambda table, result: results.append(result),
    )
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(GAME_TIMEOUT_S):
            await sim.wait_games(1)
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    assert len(results) == 1
    results[0].pop("game_id")
    return check, results[0]


@pytest.mark.parametrize(("preset", "seed"), [("ariari", 2), ("jboy-sanma", 3)])
async def test_the_centre_shows_the_simulated_walls_indicators(
    preset: str, seed: int, tmp_path: Path
) -> None:
    check, with_reader = await play(preset, seed, tmp_path, wall_reader=True, tile_reader=True)
    assert check.shown, "the centre never showed a dora"
    assert check.wrong == []
    names = " ".join(tile_name(t) for t in check.shown[0])
    assert f"dora {names}  clock" in check.view_line, check.view_line
    if preset == "ariari":
        assert max(len(d) for d in check.shown) >= 2, "this seed's game has a kan dora"
    # A table without the wall reader: the same game, and never a dora on the centre.
    check, without = await play(preset, seed, tmp_path, tile_reader=True)
    assert check.shown == [] and without == with_reader


async def test_the_dora_survive_a_daemon_restart_in_the_middle_of_a_hand(tmp_path: Path) -> None:
    # No bots: the dealer rolls, the hand is dealt no further; the daemon stops and a new
    # one resumes from the journal and its stored console flow (the layouts with it).
    preset = "ariari"
    sim = SimTable(load_rules(preset), 4, autoplay=False, wall_reader=True)
    check = DoraCheck(sim)
    url = await sim.start_sim(f"dora-{next(_names)}")
    config = config_for(url, preset, tmp_path / "journal.sqlite3", table_id="dora")
    fw = sim.firmware
    try:
        for run in range(2):
            daemon = Daemon(config, claim_window_s=0.05)
            task = asyncio.create_task(daemon.run())
            try:
                seen = len(check.shown)
                if run == 0:
                    assert await fw.wait_for(lambda: fw.consoles[0].line1 == "ROLL?", 10)
                    sim.press(0, "OK")
                # Shown after the roll; after the restart, shown again on the resent displays.
                assert await fw.wait_for(lambda seen=seen: len(check.shown) > seen, 10)
                assert fw.centre is not None and fw.centre.dora
            finally:
                daemon.stop.set()
                await task
        assert check.wrong == [] and len(check.shown) >= 2
        assert check.shown[-1] == check.shown[0]
        assert sum(isinstance(msg, DiceResult) for _, msg in fw.transcript) == 1
    finally:
        await sim.close()
