"""The dashboard's reads of the ledger (tablectl/dashboard/books.py) on SQLite and on a
real PostgreSQL: the finished games with their players, and the close, as the ledger
holds them."""

from __future__ import annotations

from datetime import date

import pytest

pytest.importorskip("aiohttp")  # the dashboard extra

from tablectl.dashboard.books import Books  # noqa: E402
from tablectl.ledger.close import close_night  # noqa: E402
from tablectl.ledger.db import open_database  # noqa: E402
from tablectl.ledger.settings import LedgerSettings  # noqa: E402
from tablectl.ledger.store import LedgerStore, parse_message  # noqa: E402
from tests.ledger.test_ledger_store import TOKYO, message  # noqa: E402


def test_the_dashboard_reads_the_ledgers_games_and_close(database: str) -> None:
    store = LedgerStore(open_database(database))
    store.setup()
    for payload, table in (
        (message("g1", finished="2026-11-26 21:00"), "t1"),
        (message("g2", table="t2", finished="2026-11-26 23:00", seats=["Eto", "F", "G", "H"]),
         "t2"),
        (message("g3", state="reopened", revision=2), "t1"),  # taken back: not listed
    ):  # fmt: skip
        store.apply(parse_message(table, payload), now=0.0)
    try:
        books = Books(LedgerSettings(database=database, timezone="Asia/Tokyo"), None)
        games = books.finished_games()
        assert [(g["table"], g["game_id"]) for g in games] == [("t1", "g1"), ("t2", "g2")]
        assert games[1]["names"] == ["Eto", "F", "G", "H"]
        night = books.close(date(2026, 11, 26))
        assert night.to_csv() == close_night(store, date(2026, 11, 26), 6, TOKYO).to_csv()
        assert books.finished_games(limit=1)[0]["game_id"] == "g2"
    finally:
        store.db.close()
