"""The ledger's store and the night's close on SQLite and on a real PostgreSQL: each game
once by revision (a copy twice, a late older revision, an undo and an abandon), malformed
messages refused whole, and the close of a business day that runs past midnight."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tablectl.ledger.close import business_day, close_night
from tablectl.ledger.db import DatabaseError, open_database
from tablectl.ledger.store import LedgerStore, MessageError, parse_message

TOKYO = ZoneInfo("Asia/Tokyo")


def at(text: str) -> float:
    """Epoch seconds of a Tokyo wall-clock time ``YYYY-MM-DD HH:MM``."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=TOKYO).timestamp()


def message(
    game_id: str,
    *,
    table: str = "t1",
    revision: int = 1,
    state: str = "finished",
    finished: str = "2026-11-26 21:00",
    seats: list[str] | None = None,
    scores: list[int] | None = None,
    ranking: list[int] | None = None,
    result: list[float] | None = None,
    money: dict[str, Any] | None = None,
) -> bytes:
    """A table's ledger message as the wire carries it."""
    final = None
    if state == "finished":
        final = {
            "scores": scores or [45000, 30000, 15000, 10000],
            "ranking": ranking or [0, 1, 2, 3],
            "reason": "end",
            "result": result or [55.0, 10.0, -25.0, -40.0],
            "money": money,
        }
    return json.dumps(
        {
            "v": 1,
            "table": table,
            "game_id": game_id,
            "revision": revision,
            "state": state,
            "rules": "kenko",
            "seats": seats or ["Aoki", "Baba", "Chiba", "Doi"],
            "started_at": at(finished) - 3600,
            "finished_at": at(finished) if state == "finished" else None,
            "final": final,
        }
    ).encode()


@pytest.fixture
def store(database: str) -> Iterator[LedgerStore]:
    """A set-up store on a fresh database (SQLite, then PostgreSQL)."""
    store = LedgerStore(open_database(database))
    store.setup()
    yield store
    store.db.close()


def apply(store: LedgerStore, payload: bytes, table: str = "t1") -> str:
    return store.apply(parse_message(table, payload), now=0.0)


def test_a_game_delivered_twice_is_stored_once(store: LedgerStore) -> None:
    assert apply(store, message("g1")) == "stored"
    assert apply(store, message("g1")) == "duplicate"
    assert store.games() == [("t1", "g1", 1, "finished")]
    night = close_night(store, date(2026, 11, 26), 6, TOKYO)
    assert [(p.player, p.games) for p in night.players] == [
        ("Aoki", 1), ("Baba", 1), ("Chiba", 1), ("Doi", 1)
    ]  # fmt: skip


def test_an_undo_reopens_the_game_and_its_new_end_replaces_the_old(store: LedgerStore) -> None:
    apply(store, message("g1"))
    assert apply(store, message("g1", revision=2, state="reopened")) == "stored"
    assert close_night(store, date(2026, 11, 26), 6, TOKYO).players == []
    # The first end arriving late (a resend) does not bring it back.
    assert apply(store, message("g1")) == "stale"
    assert close_night(store, date(2026, 11, 26), 6, TOKYO).players == []
    again = message("g1", revision=3, scores=[20000, 30000, 25000, 25000], ranking=[1, 2, 3, 0])
    assert apply(store, again) == "stored"
    night = close_night(store, date(2026, 11, 26), 6, TOKYO)
    assert {p.player: p.places for p in night.players}["Baba"] == [1, 0, 0, 0]
    assert store.games() == [("t1", "g1", 3, "finished")]
    assert apply(store, message("g1", revision=4, state="abandoned")) == "stored"
    assert close_night(store, date(2026, 11, 26), 6, TOKYO).players == []
    assert store.games() == [("t1", "g1", 4, "abandoned")]


def test_the_same_revision_with_other_results_keeps_the_held_one(store: LedgerStore) -> None:
    apply(store, message("g1"))
    other = message("g1", scores=[10000, 15000, 30000, 45000], ranking=[3, 2, 1, 0])
    assert apply(store, other) == "conflict"
    night = close_night(store, date(2026, 11, 26), 6, TOKYO)
    assert {p.player: p.score for p in night.players}["Aoki"] == 45000


def test_the_same_game_id_on_two_tables_is_two_games(store: LedgerStore) -> None:
    apply(store, message("g1"), "t1")
    apply(store, message("g1", table="t2"), "t2")
    assert [t.games for t in close_night(store, date(2026, 11, 26), 6, TOKYO).tables] == [1, 1]


def test_the_close_sums_each_player_and_each_table_over_the_business_day(
    store: LedgerStore,
) -> None:
    money = {
        "chips": [3, -1, -1, -1],
        "result": [0, 0, 0, 0],
        "uma": [0, 0, 0, 0],
        "chip_p": [0, 0, 0, 0],
        "fee": [-300, -300, -300, -300],
        "prizes": [0, 0, 0, 0],
        "total": [1200, 100, -500, -1000],
    }
    # Business day 2026-11-26 with the cut-off at 06:00 Tokyo: 26th 06:00 to 27th 06:00.
    apply(store, message("early", finished="2026-11-26 05:59"))  # the 25th's night
    apply(store, message("a", finished="2026-11-26 06:00", money=money))
    apply(store, message("b", finished="2026-11-27 01:30", money=money))
    apply(
        store,
        message("c", table="t2", finished="2026-11-27 05:59", seats=["Doi", "Eto", "Fujii", "Aoki"],
                ranking=[3, 2, 1, 0], money=money),
        "t2",
    )  # fmt: skip
    apply(store, message("late", finished="2026-11-27 06:00"))  # the 27th's
    apply(store, message("gone", finished="2026-11-26 22:00"))
    apply(store, message("gone", revision=2, state="abandoned"))
    night = close_night(store, date(2026, 11, 26), 6, TOKYO)
    players = {p.player: p for p in night.players}
    aoki = players["Aoki"]
    # Seat 0 twice at t1 (first both times), seat 3 at t2 (first: ranking starts with 3).
    assert (aoki.games, aoki.places, aoki.score) == (3, [3, 0, 0, 0], 45000 + 45000 + 10000)
    assert aoki.result == pytest.approx(55.0 + 55.0 - 40.0)
    assert (aoki.chips, aoki.fees, aoki.p) == (3 + 3 - 1, 900, 1200 + 1200 - 1000)
    doi = players["Doi"]
    assert (doi.games, doi.places) == (3, [0, 0, 0, 3])
    assert set(players) == {"Aoki", "Baba", "Chiba", "Doi", "Eto", "Fujii"}
    assert [(t.table, t.games, t.fees) for t in night.tables] == [("t1", 2, 2400), ("t2", 1, 1200)]
    assert night.start.isoformat() == "2026-11-26T06:00:00+09:00"
    assert night.end.isoformat() == "2026-11-27T06:00:00+09:00"
    rows = night.to_csv().splitlines()
    assert rows[0].split(",")[:3] == ["kind", "name", "games"]
    assert "player,Aoki,3,3,0,0,0,100000,70.0,5,900,1400" in rows
    assert "table,t1,2,,,,,,,,2400," in rows
    # Without money, chips, fees and P are empty, not zero.
    before = close_night(store, date(2026, 11, 25), 6, TOKYO)
    assert [(p.player, p.chips, p.fees, p.p) for p in before.players][0] == (
        "Aoki",
        None,
        None,
        None,
    )


def test_a_table_without_seat_names_counts_its_chairs_apart(store: LedgerStore) -> None:
    payload = json.loads(message("g1"))
    payload["seats"] = None
    apply(store, json.dumps(payload).encode())
    names = [p.player for p in close_night(store, date(2026, 11, 26), 6, TOKYO).players]
    assert names == ["t1 seat 0", "t1 seat 1", "t1 seat 2", "t1 seat 3"]


def test_business_day_boundaries_follow_the_cutoff_hour() -> None:
    start, end = business_day(date(2026, 3, 31), 0, TOKYO)
    assert (start.isoformat(), end.isoformat()) == (
        "2026-03-31T00:00:00+09:00", "2026-04-01T00:00:00+09:00"
    )  # fmt: skip


def _broken(**changes: Any) -> bytes:
    data = json.loads(message("g1"))
    for key, value in changes.items():
        if key.startswith("final."):
            data["final"][key[6:]] = value
        else:
            data[key] = value
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (b"not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (_broken(table="t9"), "is not the topic's"),
        (_broken(game_id=""), "game_id"),
        (_broken(game_id="x" * 201), "game_id"),
        (_broken(revision=0), "revision"),
        (_broken(revision=True), "revision"),
        (_broken(state="lost"), "state must be one of"),
        (_broken(started_at="noon"), "started_at"),
        (_broken(finished_at=float("nan")), "finished_at"),
        (_broken(final=None), "needs its final"),
        (_broken(**{"final.scores": [1, 2, 3, 4, 5]}), "final.scores"),
        (_broken(**{"final.scores": [1, 2, "3", 4]}), "final.scores"),
        (_broken(**{"final.ranking": [0, 0, 1, 2]}), "final.ranking"),
        (_broken(seats=["a", "b"]), "seats must be"),
        (_broken(seats=["a", "b", "c", ""]), "seat name"),
        (_broken(**{"final.result": [1, 2]}), "final.result"),
        (_broken(**{"final.money": {"chips": [1, 2, 3, 4]}}), "final.money.fee"),
        (_broken(**{"final.money": [1]}), "final.money"),
    ],
)
def test_a_malformed_message_is_refused_naming_the_problem(payload: bytes, why: str) -> None:
    with pytest.raises(MessageError, match=why):
        parse_message("t1", payload)


@pytest.mark.parametrize(
    ("table", "payload", "why"),
    [
        ("t" * 65, message("g1", table="t" * 65), "table id"),
        ("t 1", message("g1", table="t 1"), "table id"),
        ("t1", message("g1", seats=["x" * 30000] * 4), "at most 65536"),
    ],
)
def test_an_odd_topic_or_a_huge_message_is_refused(table: str, payload: bytes, why: str) -> None:
    with pytest.raises(MessageError, match=why):
        parse_message(table, payload)


def test_a_newer_schema_is_refused(database: str) -> None:
    store = LedgerStore(open_database(database))
    store.setup()
    store.db.execute("UPDATE ledger_meta SET value = '99' WHERE name = 'schema'")
    with pytest.raises(DatabaseError, match="newer than this tablectl"):
        store.setup()
    store.db.close()
