"""The table's outbox to the parlor's ledger: finished games kept until the ledger has them.

Every change the ledger must hear of (a game finished, a finished game reopened by an
undo, a reopened game abandoned) bumps the game's row in ``ledger_outbox`` to a new
*revision*, in the same transaction as the change itself, so no crash can lose it. The
table sends each game whose revision the ledger has not acknowledged (``revision >
acked``) and sends it again after a reconnect; the ledger acknowledges by game id and
revision (:mod:`tablectl.mqtt_ledger`). The message itself is read from the journal's
own rows (the game and its record) when it is sent, so it is always the journal's truth.

A game that never finished is not the ledger's business: abandoning it writes nothing
here. The rows stay after their acknowledgement (one small row per game), so a later
undo gets a revision higher than any the ledger holds. See ``docs/ledger.md``.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LEDGER_OUTBOX",
    "LEDGER_PENDING_INDEX",
    "PENDING_QUERY",
    "STATE_ABANDONED",
    "STATE_FINISHED",
    "STATE_REOPENED",
    "PendingGame",
    "acknowledge",
    "mark",
    "pending",
]

STATE_FINISHED = "finished"
STATE_REOPENED = "reopened"
STATE_ABANDONED = "abandoned"

#: The table (journal schema version 4).
LEDGER_OUTBOX = """CREATE TABLE ledger_outbox (
    game_id  TEXT PRIMARY KEY REFERENCES games (game_id),
    revision INTEGER NOT NULL CHECK (revision >= 1),
    acked    INTEGER NOT NULL DEFAULT 0 CHECK (acked >= 0),
    state    TEXT NOT NULL CHECK (state IN ('finished', 'reopened', 'abandoned')),
    at       REAL NOT NULL
)"""
#: The pending rows only, as the table reads them every second.
LEDGER_PENDING_INDEX = (
    "CREATE INDEX ledger_outbox_pending ON ledger_outbox (at) WHERE revision > acked"
)


@dataclass(frozen=True, slots=True)
class PendingGame:
    """One game the ledger has not acknowledged at its current revision.

    ``final`` is the record's final (scores, ranking, result, money...) for a finished
    game, None for a reopened or abandoned one; ``finished_at`` likewise.
    """

    game_id: str
    revision: int
    state: str
    at: float
    table_id: str
    rules: str
    seats: list[str] | None
    started_at: float
    finished_at: float | None
    final: dict[str, Any] | None

    def message(self) -> dict[str, Any]:
        """The payload of the table's ``ledger`` topic (docs/mqtt.md), without ``v``."""
        return {
            "table": self.table_id,
            "game_id": self.game_id,
            "revision": self.revision,
            "state": self.state,
            "rules": self.rules,
            "seats": self.seats,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "final": self.final,
        }


def mark(conn: sqlite3.Connection, game_id: str, state: str, now: float) -> None:
    """Queue ``game_id`` for the ledger as ``state``, at a new revision.

    ``finished`` always queues; ``reopened`` and ``abandoned`` only a game the ledger was
    ever told of (one with a row), since a game that never finished is not in it."""
    if state == STATE_FINISHED:
        conn.execute(
            "INSERT INTO ledger_outbox (game_id, revision, state, at) VALUES (?, 1, ?, ?)"
            " ON CONFLICT (game_id) DO UPDATE SET revision = revision + 1,"
            " state = excluded.state, at = excluded.at",
            (game_id, state, now),
        )
    else:
        conn.execute(
            "UPDATE ledger_outbox SET revision = revision + 1, state = ?, at = ? WHERE game_id = ?",
            (state, now, game_id),
        )


def acknowledge(conn: sqlite3.Connection, game_id: str, revision: int) -> bool:
    """The ledger holds ``game_id`` at ``revision``: it is no longer pending unless it
    changed since. Returns whether that took a pending game off the list (an unknown
    game, a stale or repeated acknowledgement change nothing)."""
    cursor = conn.execute(
        "UPDATE ledger_outbox SET acked = ? WHERE game_id = ? AND acked < ? AND ? <= revision",
        (revision, game_id, revision, revision),
    )
    return cursor.rowcount > 0


def _decode(text: Any) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None


def pending(rows: list[tuple[Any, ...]]) -> list[PendingGame]:
    """The :data:`PENDING_QUERY` rows as values (a damaged seats or final column is sent
    as null: the ledger refuses such a game with a line in its log, it is not lost)."""
    out = []
    for game_id, revision, state, at, table_id, rules, seats, started, finished, final in rows:
        names = _decode(seats)
        out.append(
            PendingGame(
                game_id=str(game_id),
                revision=int(revision),
                state=str(state),
                at=float(at),
                table_id=str(table_id),
                rules=str(rules),
                seats=names if isinstance(names, list) else None,
                started_at=float(started),
                finished_at=None if state != STATE_FINISHED or finished is None else finished,
                final=_decode(final) if state == STATE_FINISHED else None,
            )
        )
    return out


#: Every game pending for the ledger, oldest change first, with what its message needs.
PENDING_QUERY = (
    "SELECT o.game_id, o.revision, o.state, o.at, g.table_id, g.rules, g.seats,"
    " g.started_at, r.finished_at, r.final"
    " FROM ledger_outbox o JOIN games g ON g.game_id = o.game_id"
    " LEFT JOIN records r ON r.game_id = o.game_id"
    " WHERE o.revision > o.acked ORDER BY o.at, o.game_id"
)
