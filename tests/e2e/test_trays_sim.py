"""The daemon on a simulated table with point-stick trays, game after game, the dice held
while the trays disagree with the scores (issue #32).

A game that ended before any stick moved (a bust in hand 1, seen at GAME OVER, where the
bots do not pay) left its mismatch standing into the next game, whose scores the unmoved
trays matched: no tray report came to compare them again, and the dealer's OK at
``ROLL?`` was refused for ever. The report's table (``python -m hw_sim serve --rules jboy
--speed 0 --trays``) stuck with seed 5 and seed 8; here, with the daemon in the same
process, seed 5 stuck after 6 games and seed 8 after 24.

Progress is the measure: the games finished before a generous deadline. A table that
sticks finishes no more games however long it is given.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hw_sim import SimTable
from tablectl.config import load_config
from tablectl.daemon import Daemon
from tablectl.journal import Journal

#: Per seed, the games it must finish: past the game it stuck in before.
GAMES = {5: 10, 8: 28}
#: Seconds they may take at most (about 30 s for seed 8 on an idle machine).
DEADLINE_S = 240


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Path]:
    """The journal's folder; in RAM when possible (the journal syncs every event to disk,
    which is most of a game's time here)."""
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="tablectl-trays-", dir="/dev/shm"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("seed", sorted(GAMES))
async def test_games_with_trays_held_never_stick_at_the_dice(seed: int, folder: Path) -> None:
    games = GAMES[seed]
    sim = SimTable("jboy", seed, speed=0.0, trays=True, max_games=games)
    await sim.start_tcp(0)
    journal = folder / "journal.sqlite3"
    config_file = folder / "tablectl.toml"
    config_file.write_text(
        f'[table]\nid = "trays"\ndevice = "{sim.url}"\nrules = "jboy"\n'
        f'journal = "{journal}"\n\n[trays]\nhold_next_hand = true\n'
    )
    config = load_config(config_file)
    assert config.hold_next_hand
    daemon = Daemon(config, claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(DEADLINE_S):
            await sim.wait_games(games)
    except TimeoutError:
        pass  # judged below, by the games finished
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    table = daemon.table
    assert table is not None
    assert sim.games_finished >= games, (
        f"seed {seed}: {sim.games_finished} of {games} games; the table stands at"
        f" {table.phase} with trays {table.tray_totals}, scores {table.state.scores},"
        f" mismatch {table.tray_mismatch}; refused: {sim.bots and sim.bots.refusals[-3:]}"
    )
    with Journal.open(journal) as opened:
        kinds = [note.kind for note in opened.notes()]
    # Trays were off at some GAME OVER and matched the next game's start points.
    assert "tray_mismatch" in kinds and "trays_match" in kinds
