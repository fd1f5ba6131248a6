"""``tablectl demo``: the simulator and the daemon together, autoplaying games.

The simulated table (hw_sim) opens a pseudo-terminal; the daemon opens it as its serial
device, exactly as it opens ``/dev/ttyUSB0`` on a real table.  The terminal shows the
simulator's live view; ``--json`` prints one line per finished game instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.rules.loader import load_rules
from tablectl.table import Table

#: Claim window with bots (they answer at once) and for people watching.
FAST_CLAIM_S = 0.05
#: Seconds between two bot actions when people watch (0 with --fast).
WATCH_PACE_S = 0.12
#: Screen refresh interval of the live view.
REFRESH_S = 0.1
CLEAR = "\x1b[H\x1b[2J"


async def run_demo(
    rules: str,
    seed: int,
    games: int,
    *,
    fast: bool,
    as_json: bool,
    journal: Path | None = None,
    out: TextIO = sys.stdout,
) -> list[dict[str, Any]]:
    """Play ``games`` games; returns each game's result (also printed with ``as_json``)."""
    from hw_sim import SimTable

    house = load_rules(rules)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tablectl-demo-") as tmp:
        journal_path = journal or Path(tmp) / "journal.sqlite3"
        sim = SimTable(house, seed, speed=0.0 if fast else 0.2, max_games=games)
        if not fast and sim.bots is not None:
            sim.bots.pace = WATCH_PACE_S
        url = await sim.start_pty()
        config = config_for(url, rules, journal_path, table_id="demo")

        def on_game(table: Table, result: dict[str, Any]) -> None:
            line = {"rules": house.name, "seed": seed, **result}
            results.append(line)
            if as_json:
                out.write(json.dumps(line) + "\n")
                out.flush()

        daemon = Daemon(
            config,
            claim_window_s=FAST_CLAIM_S,
            max_games=games,
            on_game=on_game,
        )
        daemon_task = asyncio.create_task(daemon.run())
        view_task = None if as_json else asyncio.create_task(_view(sim, out))
        try:
            done, _ = await asyncio.wait(
                {daemon_task, asyncio.ensure_future(sim.wait_games(games))},
                return_when=asyncio.FIRST_COMPLETED,
            )
            for task in done:
                task.result()
        finally:
            daemon.stop.set()
            with contextlib.suppress(asyncio.CancelledError):
                await daemon_task
            if view_task is not None:
                view_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await view_task
                out.write(CLEAR + sim.render() + "\n")
            await sim.close()
    if not as_json:
        for line in results:
            final = line["final"]
            out.write(
                f"game over ({final['reason']}): scores {final['scores']},"
                f" ranking {final['ranking']}\n"
            )
    return results


async def _view(sim: Any, out: TextIO) -> None:
    while True:
        out.write(CLEAR + sim.render() + "\n")
        out.flush()
        await asyncio.sleep(REFRESH_S)
