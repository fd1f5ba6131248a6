"""The night's close equals the sum of the tables' own ``tablectl records``, in every
column: games, places, scores, results, chips, P and fees per player; games and fees per
table. Three tables with the ledger on SQLite and on PostgreSQL, a real Mosquitto, games
played through the rules core into each table's journal (tests/ledger/test_ledger_sync.py
has the tables and the ledger): mleague settles in result points only, sanma-free in P
with chips, a game fee and prizes, jboy in points with chips and no fee.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from tablectl.cli import main as cli_main
from tests.helpers import Broker
from tests.ledger.test_ledger_sync import (
    Ledger,
    Table,
    fast_polls,  # noqa: F401 (autouse: tables poll often)
    until,
)


def run_cli(argv: list[str]) -> tuple[int, str]:
    """``tablectl ARGV`` in this process: its exit code and stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(argv)
    return code, out.getvalue()


def _add(total: int | float | None, value: int | float) -> int | float:
    return value if total is None else total + value


def sum_of_records(records: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per player and per table, the plain sums of ``tablectl records --json`` rows, in
    the shape of ``tablectl ledger close --json`` (None where no game had the column)."""
    players: dict[str, dict[str, Any]] = {}
    tables: dict[str, dict[str, Any]] = {}
    for record in records:
        table = tables.setdefault(record["table"], {"games": 0, "fees": None})
        table["games"] += 1
        for seat, name in enumerate(record["seats"]):
            row = players.setdefault(
                name, {"games": 0, "places": [0, 0, 0, 0], "score": 0, "result": None,
                       "chips": None, "fees": None, "p": None},
            )  # fmt: skip
            row["games"] += 1
            row["places"][record["ranks"][seat] - 1] += 1
            row["score"] += record["scores"][seat]
            for column in ("result", "chips", "fees", "p"):
                if record[column] is not None:
                    row[column] = _add(row[column], record[column][seat])
            if record["fees"] is not None:
                table["fees"] = _add(table["fees"], record["fees"][seat])
    for row in players.values():
        if row["result"] is not None:
            row["result"] = round(row["result"], 2)
    return players, tables


async def test_the_close_equals_the_sum_of_the_tables_records(
    mosquitto: Broker, tmp_path: Path, database: str
) -> None:
    ledger = Ledger(database, mosquitto.port)
    await ledger.start()
    tables = [
        Table(tmp_path, "t1", mosquitto.port, ["Aoki", "Baba", "Chiba", "Doi"], "mleague"),
        Table(tmp_path, "t2", mosquitto.port, ["Eto", "Aoki", "Fujii"], "sanma-free"),
        Table(tmp_path, "t3", mosquitto.port, ["Goto", "Hara", "Baba", "Eto"], "jboy"),
    ]
    for table in tables:
        table.start()
    try:
        for seed in range(3):
            for number, table in enumerate(tables):
                table.game(10 * number + seed)
        await until(lambda: not any(table.pending() for table in tables))
    finally:
        for table in tables:
            await table.close()
    await ledger.stop()
    records: list[dict[str, Any]] = []
    for table in tables:
        code, out = run_cli(["records", "--journal", str(tmp_path / f"{table.table_id}.sqlite3"),
                             "--json"])  # fmt: skip
        assert code == 0
        records += json.loads(out)
    code, out = run_cli(["ledger", "close", "--day", "2026-11-26", "--db", database,
                         "--cutoff-hour", "6", "--json"])  # fmt: skip
    assert code == 0
    night = json.loads(out)
    players, per_table = sum_of_records(records)
    got = {p.pop("player"): p for p in night["players"]}
    assert got == players
    assert {t.pop("table"): t for t in night["tables"]} == per_table
    # Every column is tried: a player at a table with money and one without adds up
    # (Aoki at t1 and t2, Baba at t1 and t3), and the night has chips, fees and P.
    assert per_table == {
        "t1": {"games": 3, "fees": None},
        "t2": {"games": 3, "fees": 3 * 3 * 300},
        "t3": {"games": 3, "fees": 0},
    }
    assert got["Aoki"]["games"] == 6 and got["Aoki"]["p"] == players["Aoki"]["p"] is not None
    assert got["Doi"]["chips"] is None and got["Doi"]["result"] is not None
    assert any(row["chips"] for row in got.values())
    assert any(row["p"] for row in got.values())
