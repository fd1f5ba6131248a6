"""Kill -9: the daemon killed at random points and restarted finishes the same game.

The daemon runs as a real ``tablectl run`` process against the simulated table over TCP
on loopback.  After each SIGKILL a new daemon replays the journal and resumes; the final
result must equal an uninterrupted run with the same seed.
"""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from firmware_bridge.messages import FaultCode, Key
from hw_sim import SimTable
from tablectl.journal import Journal
from tablectl.records import list_records
from tablectl.rules.loader import load_rules
from tests.e2e.test_daemon_sim import play
from tests.helpers import journal_events

PRESET = "jboy"
SEED = 23
KILLS = 3


async def start_daemon(config: Path, log: Path) -> asyncio.subprocess.Process:
    handle = log.open("ab")
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.cli",
        "run",
        "--config",
        str(config),
        stdout=handle,
        stderr=handle,
    )


def table_config(folder: Path, table_id: str, port: int, journal: Path) -> Path:
    """A ``tablectl run`` config for the simulated table on ``port`` (loopback)."""
    config = folder / "tablectl.toml"
    config.write_text(
        f'[table]\nid = "{table_id}"\ndevice = "socket://127.0.0.1:{port}"\n'
        f'rules = "{PRESET}"\njournal = "{journal}"\n'
    )
    return config


def chip_win(path: Path) -> int | None:
    """The number of the first journalled win whose winner entered chips, or None."""
    if not path.exists():
        return None
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            rows = conn.execute(
                "SELECT seq, event FROM events WHERE event LIKE '%\"chips\":%' ORDER BY seq"
            ).fetchall()
    except sqlite3.Error:
        return None
    for seq, text in rows:
        event = json.loads(text)
        hands = event.get("winners") or [event]  # a ron, or a tsumo (its hand inline)
        if any(hand.get("chips") for hand in hands):
            return int(seq)
    return None


async def kill_after_a_chip_win(config: Path, log: Path, journal: Path) -> None:
    """Start the daemon, kill -9 it as soon as a win with chips is journalled: between
    the win and the next hand, while every seat's CONFIRM shows it."""
    proc = await start_daemon(config, log)
    try:
        async with asyncio.timeout(60):
            # Another process writes the journal: polling is the only way to watch it.
            while chip_win(journal) is None:  # noqa: ASYNC110
                await asyncio.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()


async def wait_for_events(path: Path, count: int) -> None:
    async with asyncio.timeout(60):
        # Another process writes the journal: polling is the only way to watch it.
        while journal_events(path) < count:  # noqa: ASYNC110
            await asyncio.sleep(0.01)


#: A table that reads every tile: its hands are tile-aware (docs/tiles.md, "The daemon").
TILES = {"tile_reader": True, "wall_reader": True, "seat_reader": True}


@pytest.mark.parametrize("readers", [{}, TILES], ids=["keyed", "tiles read"])
async def test_daemon_killed_and_restarted_reaches_the_same_result(
    tmp_path: Path, readers: dict[str, bool]
) -> None:
    _, _, reference = await play(PRESET, SEED, tmp_path / "reference.sqlite3", **readers)
    expected = reference[0]["final"]
    # jboy pays chips: the keyed bots enter some, and a kill right after such a win must
    # lose none of them (the tiles-read game's chips are counted from the tiles).
    chips_entered = not readers and chip_win(tmp_path / "reference.sqlite3") is not None
    assert readers or chips_entered, "seed 23: the keyed bots entered no chips"

    sim = SimTable(load_rules(PRESET), SEED, max_games=1, **readers)
    journal = tmp_path / "journal.sqlite3"
    config = table_config(tmp_path, "kill9", await sim.start_tcp(0), journal)
    log = tmp_path / "daemon.log"
    rng = random.Random(SEED)
    proc: asyncio.subprocess.Process | None = None
    try:
        kill_points = sorted(rng.sample(range(5, 400), KILLS))
        if chips_entered:
            await kill_after_a_chip_win(config, log, journal)
            kill_points = [p for p in kill_points if p > journal_events(journal)]
        for point in kill_points:
            proc = await start_daemon(config, log)
            await wait_for_events(journal, point)
            proc.send_signal(signal.SIGKILL)
            await proc.wait()
        killed_at = journal_events(journal)
        assert killed_at >= max(kill_points, default=0)
        proc = await start_daemon(config, log)
        async with asyncio.timeout(120):
            await sim.wait_games(1)
    finally:
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
        await sim.close()
    with Journal.open(journal) as j:
        records = list_records(j)
    assert len(records) == 1, log.read_text()[-3000:]
    got = records[0]
    assert list(got.scores) == expected["scores"], json.dumps(expected)
    assert list(got.ranking) == expected["ranking"]
    # The settlement in P, chips included, as the uninterrupted game's.
    assert list(got.chips) == expected["money"]["chips"]
    assert list(got.p) == expected["money"]["total"]
    if readers:
        with Journal.open(journal) as j:
            (game,) = [g.game_id for g in j.games() if g.finished]
            kinds = [type(e).__name__ for e in j.events(game)]
        assert "Layout" in kinds and "TilesOff" not in kinds


async def _shows(sim: SimTable, seat: int, line1: str, *, drawn_after: int = -1) -> int:
    """Wait until ``seat`` shows ``line1``, drawn after display number ``drawn_after``
    (the table keeps what a dead daemon drew); the number it was drawn at."""
    console = sim.firmware.consoles[seat]
    async with asyncio.timeout(30):
        # The display lives in the simulated table: polling it is how a player sees it.
        while console.line1 != line1 or console.seq <= drawn_after:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    return console.seq


async def test_a_fault_the_table_holds_shows_again_after_kill_9(tmp_path: Path) -> None:
    """The daemon killed while FAULT shows: the table keeps the fault latched, and the
    next daemon learns it from the table's status and shows it until staff clear it."""
    sim = SimTable(load_rules(PRESET), SEED, autoplay=False)
    config = table_config(tmp_path, "fault9", await sim.start_tcp(0), tmp_path / "j.sqlite3")
    log = tmp_path / "daemon.log"
    proc: asyncio.subprocess.Process | None = None
    try:
        proc = await start_daemon(config, log)
        await _shows(sim, 0, "ROLL?")
        sim.firmware.raise_fault(FaultCode.LID_OPEN, text="lid open")
        drawn = await _shows(sim, 0, "FAULT")
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
        proc = await start_daemon(config, log)
        await _shows(sim, 0, "FAULT", drawn_after=drawn)  # the restarted daemon puts it back
        assert FaultCode.LID_OPEN in sim.firmware.latched
        sim.firmware.press(2, Key.OK)  # staff closed the lid
        await _shows(sim, 0, "ROLL?")
        assert FaultCode.LID_OPEN not in sim.firmware.latched
    finally:
        if proc is not None and proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await proc.wait()
        await sim.close()
