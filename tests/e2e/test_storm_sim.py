"""Random keys from every seat, over the simulated table, while bots play: the daemon
survives them, link unplugs and its own restarts, and its journal stays the truth.

The in-process storm (tests/daemon/test_consoles.py, tests/storm.py) covers
every phase with many more keys; this one runs the real daemon, link and journal.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from firmware_bridge import messages as m
from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal, export_game
from tablectl.replay import replay
from tablectl.rules.loader import load_rules

#: Seconds of storm per preset: bounded for CI (bench/key_storm.py is the long run).
STORM_S = 6.0
KEYS = list(m.Key)
K = m.Key
#: Key sequences that mean something (a penalty, a menu, a win, agreeing), mixed into the
#: random keys so that flows are entered and finished in every phase, not only opened.
SEQUENCES: list[list[K]] = [
    [K.STAFF_CALL, K.DIGIT_1, K.DIGIT_2, K.OK],
    [K.STAFF_CALL, K.DIGIT_2, K.DIGIT_1, K.OK],
    [K.MENU, K.DIGIT_1, K.OK],
    [K.TSUMO, K.DIGIT_2, K.OK, K.DIGIT_3, K.DIGIT_0, K.OK],
    [K.RON],
    [K.OK, K.CANCEL],
]


async def _daemon(url: str, preset: str, journal: Path) -> tuple[Daemon, asyncio.Task[None]]:
    daemon = Daemon(config_for(url, preset, journal, table_id="storm"), claim_window_s=0.05)
    return daemon, asyncio.create_task(daemon.run())


@pytest.mark.parametrize(("preset", "seed"), [("jboy", 1), ("kantan", 2), ("jboy-sanma", 3)])
async def test_random_keys_unplugs_and_restarts_never_stop_the_daemon(
    preset: str, seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    journal_path = tmp_path / "journal.sqlite3"
    # Motors at a twentieth of real time: shuffles and dice take long enough for keys to
    # land in every phase, not only in play.
    sim = SimTable(load_rules(preset), seed, speed=0.05, max_games=100, stall_timeout=0.5)
    url = await sim.start_pty()
    players = sim.house.players
    daemon, task = await _daemon(url, preset, journal_path)
    restarts = presses = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STORM_S
    try:
        while loop.time() < deadline:
            assert not task.done(), f"the daemon stopped: {task.exception()!r}"
            roll = rng.random()
            if roll < 0.003:
                await sim.inject("unplug", "0.2")
            elif roll < 0.004:
                # A firmware reboot, a tile-count fault (FAULT on every seat until OK), a
                # tray misread: the faults a table reports.
                await sim.inject(rng.choice(("reboot", "tilecount", "tray")))
            elif roll < 0.0055:
                # The daemon is stopped and a new one starts on the same journal.
                before = None if daemon.table is None else daemon.table.state
                daemon.stop.set()
                await task
                daemon, task = await _daemon(url, preset, journal_path)
                restarts += 1
                if before is not None and not before.finished:
                    async with asyncio.timeout(10):
                        while daemon.table is None:  # noqa: ASYNC110
                            await asyncio.sleep(0.01)
                    assert daemon.table.state.scores == before.scores
            elif roll < 0.1:
                for key in rng.choice(SEQUENCES):
                    sim.press(rng.randrange(players), key)
                    presses += 1
            elif roll < 0.15:
                for seat in range(players):  # everyone agrees to whatever shows
                    sim.press(seat, K.OK)
                    presses += 1
            else:
                sim.press(rng.randrange(players), rng.choice(KEYS))
                presses += 1
            if presses % 8 == 0:
                await asyncio.sleep(0.002)  # bursts of keys, and time for the link
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    assert presses > 500 and restarts >= 1
    live = daemon.table
    assert live is not None
    with Journal.open(journal_path) as journal:
        last = journal.last_game()
        assert last is not None
        replayed_last = replay(export_game(journal, last).splitlines()).as_dict()
        assert replayed_last["scores"] == list(live.state.scores)
        assert (replayed_last["honba"], replayed_last["kyoutaku"]) == (
            live.state.honba,
            live.state.kyoutaku,
        )
        for game in journal.games():
            replayed = replay(export_game(journal, game.game_id).splitlines()).as_dict()
            assert replayed["rejected"] == [], game.game_id
            total = sum(replayed["scores"]) + replayed["kyoutaku"]
            if preset != "kantan":  # kantan's West round adds a bonus pot from outside
                assert total == sim.house.game.start_points * players
