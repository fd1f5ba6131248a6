"""The ledger's store: every finished game of every table, once, with each seat's result.

A table sends each game at a *revision* (docs/ledger.md): ``finished`` with its final,
later perhaps ``reopened`` (staff undid the hand that ended it) and ``finished`` again, or
``abandoned``. :meth:`LedgerStore.apply` keeps the highest revision of each game: a copy
delivered twice, or an older revision arriving late, changes nothing and is acknowledged
all the same, so the table stops sending it. Only ``finished`` games have seats rows and
count in the night's close.

:func:`parse_message` checks a message before anything is written: a malformed one is
refused with one line naming what is wrong, and is not acknowledged.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from tablectl.ledger.db import Database, DatabaseError

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "GameMessage",
    "LedgerStore",
    "MessageError",
    "SeatRow",
    "parse_message",
]

SCHEMA_VERSION = 1
#: The tables; the same text on SQLite and PostgreSQL (docs/ledger.md "Schema").
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS ledger_meta (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS ledger_games (
        table_id    TEXT NOT NULL,
        game_id     TEXT NOT NULL,
        revision    INTEGER NOT NULL,
        state       TEXT NOT NULL,
        rules       TEXT NOT NULL,
        started_at  DOUBLE PRECISION NOT NULL,
        finished_at DOUBLE PRECISION,
        final       TEXT,
        stored_at   DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (table_id, game_id)
    )""",
    "CREATE INDEX IF NOT EXISTS ledger_games_finished ON ledger_games (finished_at)",
    """CREATE TABLE IF NOT EXISTS ledger_seats (
        table_id TEXT NOT NULL,
        game_id  TEXT NOT NULL,
        seat     INTEGER NOT NULL,
        player   TEXT NOT NULL,
        score    INTEGER NOT NULL,
        place    INTEGER NOT NULL,
        result   DOUBLE PRECISION,
        chips    INTEGER,
        fee      INTEGER,
        p        INTEGER,
        PRIMARY KEY (table_id, game_id, seat)
    )""",
)
STATES = ("finished", "reopened", "abandoned")
#: Longest text accepted in an id, a name or a preset (a table cannot send megabytes).
MAX_TEXT = 200
#: Largest message accepted: a game's record is about 1 KiB.
MAX_PAYLOAD = 64 * 1024
_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class MessageError(ValueError):
    """A message the ledger cannot store; the text says what is wrong in it."""


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat of a finished game as stored: ``fee`` is what the seat paid (positive),
    ``p`` its total in P; chips, fee and P are None for a preset without money."""

    seat: int
    player: str
    score: int
    place: int
    result: float | None
    chips: int | None
    fee: int | None
    p: int | None


@dataclass(frozen=True, slots=True)
class GameMessage:
    """A checked message of a table's ``ledger`` topic."""

    table_id: str
    game_id: str
    revision: int
    state: str
    rules: str
    started_at: float
    finished_at: float | None
    final: dict[str, Any] | None
    seats: tuple[SeatRow, ...]


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not 0 < len(value) <= MAX_TEXT:
        raise MessageError(f"{key} must be a text of 1 to {MAX_TEXT} characters")
    return value


def _int(value: Any, what: str, *, low: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
        raise MessageError(f"{what} must be an integer" + (f" >= {low}" if low is not None else ""))
    return value


def _time(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MessageError(f"{what} must be a time in seconds since the epoch")
    return float(value)


def _ints(value: Any, what: str, count: int) -> list[int]:
    if not isinstance(value, list) or len(value) != count:
        raise MessageError(f"{what} must be a list of {count} integers")
    return [_int(v, what) for v in value]


def _seats(table: str, names: Any, final: dict[str, Any]) -> tuple[SeatRow, ...]:
    scores = final.get("scores")
    if not isinstance(scores, list) or not 2 <= len(scores) <= 4:
        raise MessageError("final.scores must be a list of 2 to 4 integers")
    count = len(scores)
    scores = _ints(scores, "final.scores", count)
    ranking = _ints(final.get("ranking"), "final.ranking", count)
    if sorted(ranking) != list(range(count)):
        raise MessageError(f"final.ranking must list each seat 0..{count - 1} once")
    if names is None:
        # A table without seat names: its chairs, told apart from other tables' chairs.
        names = [f"{table} seat {seat}" for seat in range(count)]
    if not isinstance(names, list) or len(names) != count:
        raise MessageError(f"seats must be null or {count} names")
    for name in names:
        if not isinstance(name, str) or not 0 < len(name) <= MAX_TEXT:
            raise MessageError(f"each seat name must be a text of 1 to {MAX_TEXT} characters")
    result = final.get("result") or None
    if result is not None:
        if not isinstance(result, list) or len(result) != count:
            raise MessageError(f"final.result must be null or {count} numbers")
        for value in result:
            _time(value, "final.result")  # any finite number
    money = final.get("money")
    chips = fee = total = None
    if money is not None:
        if not isinstance(money, dict):
            raise MessageError("final.money must be null or an object")
        chips = _ints(money.get("chips"), "final.money.chips", count)
        fee = _ints(money.get("fee"), "final.money.fee", count)
        total = _ints(money.get("total"), "final.money.total", count)
    places = [0] * count
    for place, seat in enumerate(ranking, start=1):
        places[seat] = place
    return tuple(
        SeatRow(
            seat=seat,
            player=names[seat],
            score=scores[seat],
            place=places[seat],
            result=None if result is None else float(result[seat]),
            chips=None if chips is None else chips[seat],
            # The final's fee is what it adds to the seat's P (0 or less): paid is minus it.
            fee=None if fee is None else -fee[seat],
            p=None if total is None else total[seat],
        )
        for seat in range(count)
    )


def parse_message(table: str, payload: bytes) -> GameMessage:
    """The message a table sent on ``<prefix>/v1/<table>/ledger``, checked; raises
    :class:`MessageError` naming the first problem."""
    if not _TABLE_ID.match(table):
        raise MessageError("the topic's table id is not 1 to 64 letters, digits, '_' or '-'")
    if len(payload) > MAX_PAYLOAD:
        raise MessageError(f"{len(payload)} bytes; a game's message is at most {MAX_PAYLOAD}")
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        raise MessageError("not JSON") from None
    if not isinstance(data, dict):
        raise MessageError("not a JSON object")
    if data.get("table", table) != table:
        raise MessageError(f"table {data.get('table')!r} is not the topic's {table!r}")
    game_id = _text(data, "game_id")
    revision = _int(data.get("revision"), "revision", low=1)
    state = data.get("state")
    if state not in STATES:
        raise MessageError(f"state must be one of {', '.join(STATES)}")
    rules = _text(data, "rules")
    started_at = _time(data.get("started_at"), "started_at")
    finished_at = None
    final = None
    seats: tuple[SeatRow, ...] = ()
    if state == "finished":
        finished_at = _time(data.get("finished_at"), "finished_at")
        final = data.get("final")
        if not isinstance(final, dict):
            raise MessageError("a finished game needs its final")
        seats = _seats(table, data.get("seats"), final)
    return GameMessage(
        table, game_id, revision, state, rules, started_at, finished_at, final, seats
    )


class LedgerStore:
    """The ledger's tables in one database (SQLite or PostgreSQL).

    Args:
        db: The open database; :meth:`setup` creates the tables it lacks.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    def setup(self) -> None:
        """Create the tables if they are not there; refuse a newer schema."""
        with self.db.transaction():
            for statement in SCHEMA:
                self.db.execute(statement)
            rows = self.db.query("SELECT value FROM ledger_meta WHERE name = 'schema'")
            if not rows:
                self.db.execute(
                    "INSERT INTO ledger_meta (name, value) VALUES ('schema', ?)",
                    (str(SCHEMA_VERSION),),
                )
            elif int(rows[0][0]) > SCHEMA_VERSION:
                raise DatabaseError(
                    f"{self.db.where}: ledger schema {rows[0][0]} is newer than this tablectl"
                    f" understands ({SCHEMA_VERSION}); upgrade tablectl"
                )

    def apply(self, message: GameMessage, now: float) -> str:
        """Store ``message`` unless the ledger holds the game at this revision or a later
        one. Returns what happened: ``stored``, ``duplicate`` (held at this revision
        already), ``stale`` (held at a later one) or ``conflict`` (held at this revision
        with other results: the held one is kept; the caller logs it)."""
        m = message
        final = None if m.final is None else json.dumps(m.final, sort_keys=True)
        with self.db.transaction():
            cursor = self.db.execute(
                "INSERT INTO ledger_games (table_id, game_id, revision, state, rules,"
                " started_at, finished_at, final, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id, game_id) DO UPDATE SET revision = excluded.revision,"
                " state = excluded.state, rules = excluded.rules,"
                " started_at = excluded.started_at, finished_at = excluded.finished_at,"
                " final = excluded.final, stored_at = excluded.stored_at"
                " WHERE ledger_games.revision < excluded.revision",
                (m.table_id, m.game_id, m.revision, m.state, m.rules, m.started_at,
                 m.finished_at, final, now),
            )  # fmt: skip
            if cursor.rowcount == 0:
                held = self.db.query(
                    "SELECT revision, final FROM ledger_games WHERE table_id = ? AND game_id = ?",
                    (m.table_id, m.game_id),
                )
                revision, held_final = held[0]
                if revision > m.revision:
                    return "stale"
                return "duplicate" if held_final == final else "conflict"
            self.db.execute(
                "DELETE FROM ledger_seats WHERE table_id = ? AND game_id = ?",
                (m.table_id, m.game_id),
            )
            for s in m.seats:
                self.db.execute(
                    "INSERT INTO ledger_seats (table_id, game_id, seat, player, score, place,"
                    " result, chips, fee, p) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (m.table_id, m.game_id, s.seat, s.player, s.score, s.place, s.result,
                     s.chips, s.fee, s.p),
                )  # fmt: skip
        return "stored"

    def games(self) -> list[tuple[str, str, int, str]]:
        """``(table, game id, revision, state)`` of every game held, by table and id."""
        rows = self.db.query(
            "SELECT table_id, game_id, revision, state FROM ledger_games ORDER BY table_id, game_id"
        )
        return [(str(t), str(g), int(r), str(s)) for t, g, r, s in rows]

    def seats_between(self, start: float, end: float) -> list[tuple[Any, ...]]:
        """``(table, game id, player, place, score, result, chips, fee, p)`` of every
        seat of the games finished in ``[start, end)``."""
        return self.db.query(
            "SELECT s.table_id, s.game_id, s.player, s.place, s.score, s.result, s.chips,"
            " s.fee, s.p FROM ledger_seats s JOIN ledger_games g"
            " ON g.table_id = s.table_id AND g.game_id = s.game_id"
            " WHERE g.state = 'finished' AND g.finished_at >= ? AND g.finished_at < ?"
            " ORDER BY g.finished_at, s.table_id, s.game_id, s.seat",
            (start, end),
        )
