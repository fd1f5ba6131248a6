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
from tablectl.rules.state import HandRecord
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
    """Play ``games`` games, game ``k`` with seed ``seed + k`` (so that ``--seed`` of any
    printed line plays that game again); returns each game's result (also printed with
    ``as_json``). On a terminal the live view shows the table; elsewhere one plain line
    per hand."""
    results: list[dict[str, Any]] = []
    live = not as_json and out.isatty()
    if not as_json:
        out.write(f"tablectl demo: {rules}, seed {seed}; Ctrl-C to quit\n")
        out.flush()
    with tempfile.TemporaryDirectory(prefix="tablectl-demo-") as tmp:
        journal_path = journal or Path(tmp) / "journal.sqlite3"
        for game in range(games):
            result = await _one_game(rules, seed + game, journal_path, fast, live, as_json, out)
            results.append(result)
            if as_json:
                out.write(json.dumps(result) + "\n")
            else:
                final = result["final"]
                out.write(
                    f"game over, seed {result['seed']} ({final['reason']}): scores"
                    f" {final['scores']}, ranking {final['ranking']}\n"
                )
            out.flush()
    return results


async def _one_game(
    rules: str,
    seed: int,
    journal_path: Path,
    fast: bool,
    live: bool,
    as_json: bool,
    out: TextIO,
) -> dict[str, Any]:
    from hw_sim import SimTable

    house = load_rules(rules)
    results: list[dict[str, Any]] = []
    # A wall reader: the view's centre display shows the dora indicators.
    sim = SimTable(house, seed, speed=0.0 if fast else 0.2, max_games=1, wall_reader=True)
    if not fast and sim.bots is not None:
        sim.bots.pace = WATCH_PACE_S
    url = await sim.start_pty()
    config = config_for(url, rules, journal_path, table_id="demo")

    def on_game(table: Table, result: dict[str, Any]) -> None:
        results.append({"rules": house.name, "seed": seed, **result})

    def on_hand(table: Table, record: HandRecord) -> None:
        if not live and not as_json:
            state = table.state
            out.write(
                f"{record.wind}{record.number} honba {record.honba}: {record.result},"
                f" scores {list(state.scores)}, deposits {state.kyoutaku}\n"
            )
            out.flush()

    daemon = Daemon(
        config, claim_window_s=FAST_CLAIM_S, max_games=1, on_game=on_game, on_hand=on_hand
    )
    daemon_task = asyncio.create_task(daemon.run())
    view_task = asyncio.create_task(_live_view(sim, out)) if live else None
    try:
        done, _ = await asyncio.wait(
            {daemon_task, asyncio.ensure_future(sim.wait_games(1))},
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
    if not results:
        raise RuntimeError("the game ended without a result")
    return results[0]


async def _live_view(sim: Any, out: TextIO) -> None:
    while True:
        out.write(CLEAR + sim.render() + "\nCtrl-C to quit\n")
        out.flush()
        await asyncio.sleep(REFRESH_S)


def journal_in_use(path: Path) -> str | None:
    """Why ``path`` should not be played on by the demo (a game in progress there, from
    a table or an earlier demo), or None."""
    from tablectl.journal import Journal, JournalError

    if not path.exists():
        return None
    try:
        with Journal.open(path, readonly=True) as journal:
            game_id = journal.current_game()
            if game_id is None:
                return None
            row = journal.game(game_id)
    except JournalError as exc:
        return str(exc)
    return (
        f"{path}: table {row.table_id!r} has a game in progress there ({row.rules},"
        f" {row.event_count} events); give --resume to play it on, or another file"
    )
