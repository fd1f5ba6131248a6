"""The ledger's database connection: SQLite (one file) or PostgreSQL (a URL), one SQL.

:func:`open_database` takes what the parlor gave (a file path, or a ``postgresql://``
URL) and returns a :class:`Database` whose :meth:`~Database.execute` takes the SQL with
``?`` placeholders on both (psycopg's ``%s`` is substituted here). The SQL the ledger
writes is the part SQLite and PostgreSQL share: ``INSERT ... ON CONFLICT ... DO UPDATE``,
``DOUBLE PRECISION``, ``CASE``, ``SUM``/``COUNT``.

PostgreSQL goes through psycopg 3 (the ``tablectl[postgres]`` extra, see docs/ledger.md
for why that driver), imported only when a URL is given.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Database", "DatabaseError", "describe", "is_url", "open_database"]

#: Seconds a write waits for another process holding the SQLite file (``ledger close``
#: beside the running service).
SQLITE_BUSY_TIMEOUT = 10.0
#: Seconds to wait for a PostgreSQL server to answer the connection.
PG_CONNECT_TIMEOUT = 10
_URL = re.compile(r"^postgres(ql)?://", re.IGNORECASE)


class DatabaseError(Exception):
    """The database cannot be opened or used; the message says which and why, one line."""


class _Cursor(Protocol):
    rowcount: int

    def fetchall(self) -> list[Any]: ...


def is_url(target: str) -> bool:
    """Whether ``target`` is a PostgreSQL URL (else a SQLite file path)."""
    return bool(_URL.match(target))


def describe(target: str) -> str:
    """``target`` (or a message quoting it) with any URL's password hidden."""
    return re.sub(r"(://[^:/@\s]*):\S*@", r"\1:***@", target)


class Database:
    """One connection to the ledger's database; thread-safe (one lock), so the service
    may use it from a worker thread.

    Args:
        conn: An open DB-API connection (sqlite3 in autocommit mode, or psycopg).
        dialect: ``"sqlite"`` or ``"postgresql"``.
        where: How to name the database in messages (no password).
    """

    def __init__(self, conn: Any, dialect: str, where: str) -> None:
        self._conn = conn
        self.dialect = dialect
        self.where = where
        self._lock = threading.RLock()
        self._in_tx = False
        self._errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
        if dialect == "postgresql":
            import psycopg

            self._errors = (psycopg.Error,)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.dialect == "postgresql" else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        """Run one statement (``?`` placeholders); errors become :class:`DatabaseError`."""
        with self._lock:
            try:
                cursor: _Cursor = self._conn.execute(self._sql(sql), tuple(params))
            except self._errors as exc:
                raise DatabaseError(f"{self.where}: {_first_line(exc)}") from exc
            return cursor

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a query and return its rows."""
        with self._lock:
            rows = self.execute(sql, params).fetchall()
            return [tuple(row) for row in rows]

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Everything inside in one transaction, committed on leaving, rolled back if it
        raises."""
        with self._lock:
            if self.dialect == "sqlite":
                self.execute("BEGIN IMMEDIATE")
                try:
                    yield
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                    raise
                self.execute("COMMIT")
                return
            try:
                with self._conn.transaction():
                    yield
            except self._errors as exc:
                raise DatabaseError(f"{self.where}: {_first_line(exc)}") from exc

    def close(self) -> None:
        """Close the connection."""
        with self._lock, contextlib.suppress(*self._errors):
            self._conn.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def open_database(target: str, *, create: bool = True) -> Database:
    """The database at ``target``: a ``postgresql://`` URL, or a SQLite file path
    (created with ``create``). Raises :class:`DatabaseError` (one line) when it cannot be
    reached or opened, and ``ImportError`` when a URL is given without psycopg."""
    if is_url(target):
        return _open_postgresql(target)
    path = Path(target)
    try:
        if not create and not path.exists():
            raise DatabaseError(f"{target}: no ledger database there")
        if path.exists() and not path.is_file():
            raise DatabaseError(f"{target}: not a regular file")
        conn = sqlite3.connect(
            path, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT, check_same_thread=False
        )
        # Reading (the close) writes nothing, not even a mode, to a file that may not be ours.
        conn.execute("PRAGMA journal_mode=WAL" if create else "PRAGMA schema_version")
        # FULL: a game acknowledged to a table is on disk; the table forgets it after.
        conn.execute("PRAGMA synchronous=FULL")
    except (sqlite3.Error, OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise DatabaseError(f"{target!r}: cannot open the ledger database: {exc}") from None
    return Database(conn, "sqlite", target)


def _open_postgresql(url: str) -> Database:
    import psycopg

    where = describe(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=PG_CONNECT_TIMEOUT)
    except (psycopg.Error, ValueError) as exc:
        # libpq quotes the URL it could not parse, password and all.
        text = describe(_first_line(exc).replace(url, where))
        raise DatabaseError(f"{where}: cannot connect: {text}") from None
    return Database(conn, "postgresql", where)
