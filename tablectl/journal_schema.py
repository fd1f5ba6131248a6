"""The journal's schema: its tables, their upgrades, and the checks of a file before use.

The schema is versioned with ``PRAGMA user_version`` and upgraded by :data:`MIGRATIONS`;
``PRAGMA application_id`` marks the file as a tablectl journal. :func:`prepare` checks
that an opened file is a journal this code can use, sets it up (WAL, ``synchronous=FULL``)
and upgrades it. See ``docs/journal.md``.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tablectl.journal_file import JournalError, JournalNotReady
from tablectl.journal_ledger import LEDGER_OUTBOX, LEDGER_PENDING_INDEX

__all__ = ["APPLICATION_ID", "MIGRATIONS", "prepare", "schema_version"]

log = logging.getLogger("tablectl.journal")

#: Marks the file as ours (``PRAGMA application_id``): ASCII "TBLC".
APPLICATION_ID = 0x54424C43

_SCHEMA_V1 = (
    """CREATE TABLE games (
        game_id      TEXT PRIMARY KEY,
        table_id     TEXT NOT NULL,
        rules        TEXT NOT NULL,
        rules_digest TEXT NOT NULL,
        seats        TEXT,
        started_at   REAL NOT NULL,
        status       TEXT NOT NULL DEFAULT 'playing'
                     CHECK (status IN ('playing', 'finished', 'abandoned')),
        ended_at     REAL
    )""",
    """CREATE TABLE events (
        game_id TEXT NOT NULL REFERENCES games (game_id),
        seq     INTEGER NOT NULL CHECK (seq >= 1),
        at      REAL NOT NULL,
        event   TEXT NOT NULL,
        PRIMARY KEY (game_id, seq)
    ) WITHOUT ROWID""",
    """CREATE TABLE records (
        game_id     TEXT PRIMARY KEY REFERENCES games (game_id),
        table_id    TEXT NOT NULL,
        rules       TEXT NOT NULL,
        seats       TEXT,
        started_at  REAL NOT NULL,
        finished_at REAL NOT NULL,
        final       TEXT NOT NULL
    )""",
    "CREATE INDEX records_finished_at ON records (finished_at)",
)


def _schema_v1(conn: sqlite3.Connection) -> None:
    """Version 1: games, their events, and the records of finished games."""
    # One statement at a time: executescript() would COMMIT the migration's transaction.
    for statement in _SCHEMA_V1:
        conn.execute(statement)


def _schema_v2(conn: sqlite3.Connection) -> None:
    """Version 2: how far the daemon handled the table's events (one row, see
    :meth:`~tablectl.journal.Journal.link_position`)."""
    conn.execute(
        """CREATE TABLE link_position (
            id      INTEGER PRIMARY KEY CHECK (id = 1),
            boot_id INTEGER NOT NULL,
            rx_next INTEGER NOT NULL,
            flow    TEXT
        )"""
    )


def _schema_v3(conn: sqlite3.Connection) -> None:
    """Version 3: the table's notes: staff actions, wrong staff PINs, tray mismatches and
    LAST GAME calls, with the seat they came from (see :meth:`~tablectl.journal.Journal.note`)."""
    conn.execute(
        """CREATE TABLE notes (
            id      INTEGER PRIMARY KEY,
            game_id TEXT REFERENCES games (game_id),
            at      REAL NOT NULL,
            seat    INTEGER,
            kind    TEXT NOT NULL,
            detail  TEXT NOT NULL
        )"""
    )
    conn.execute("CREATE INDEX notes_game ON notes (game_id)")


def _schema_v4(conn: sqlite3.Connection) -> None:
    """Version 4: the games the parlor's ledger has not acknowledged yet (see
    :mod:`tablectl.journal_ledger`)."""
    conn.execute(LEDGER_OUTBOX)
    conn.execute(LEDGER_PENDING_INDEX)


#: Schema upgrades: ``MIGRATIONS[n]`` turns a version ``n - 1`` file into version ``n``.
#: Each runs in its own transaction together with the ``user_version`` bump, so a crash
#: mid-upgrade leaves the previous version intact.  Add a new entry; never edit an old one.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _schema_v1,
    2: _schema_v2,
    3: _schema_v3,
    4: _schema_v4,
}


def schema_version() -> int:
    """The schema version this code writes (the newest migration)."""
    return max(MIGRATIONS)


def prepare(path: Path, conn: sqlite3.Connection, *, readonly: bool = False) -> None:
    """Check the file is a tablectl journal this code can use, set it up, upgrade it."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        raise JournalError(
            f"{path}: not a journal (unreadable or corrupt SQLite file: {exc})"
        ) from exc
    if app_id not in (0, APPLICATION_ID) or (app_id == 0 and (version or tables)):
        raise JournalError(f"{path}: not a tablectl journal (another program's SQLite file)")
    if version > schema_version():
        raise JournalError(
            f"{path}: journal schema version {version} is newer than this tablectl"
            f" understands ({schema_version()}); upgrade tablectl"
        )
    if readonly:
        if version == 0:
            # The daemon creates the file, switches it to WAL, then commits the schema: a
            # reader in between (`tablectl records` as the daemon first starts) would fail
            # on the first table it asks for ("no such table: games").
            raise JournalNotReady(
                f"{path}: no journal in it yet (a daemon starting on it creates one within"
                " a moment; try again)"
            )
        return
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    if problems != ["ok"]:
        raise JournalError(
            f"{path}: the journal is damaged ({problems[0]}); move it aside (keep it for"
            " the records) and restore a backup, or start with a new journal"
        )
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        # FULL: fsync the WAL at every commit, so an appended event survives power loss.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError as exc:
        raise JournalError(f"{path}: cannot set up the journal: {exc}") from exc
    if str(mode).lower() != "wal":
        raise JournalError(f"{path}: the file system does not allow WAL mode (got {mode!r})")
    for target in range(version + 1, schema_version() + 1):
        try:
            conn.execute("BEGIN IMMEDIATE")
            MIGRATIONS[target](conn)
            # PRAGMAs cannot take parameters; both values are our own integers.
            conn.execute(f"PRAGMA user_version = {int(target)}")
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise JournalError(
                f"{path}: upgrading the journal to schema version {target} failed: {exc}"
            ) from exc
        log.info("%s: journal schema at version %d", path, target)
