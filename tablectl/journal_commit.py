"""The journal's one SQLite connection, and how writes are grouped into commits.

Every write is one transaction (``synchronous=FULL``: an fsync, so it is on disk when the
call returns), unless it is made inside :meth:`GroupCommit.batch`: then all the batch's
writes share one transaction and one fsync, committed when the batch ends, and each
:meth:`GroupCommit.unit` of the batch (one table event of a group) can fail alone. One
lock serialises every use of the connection, so the daemon may write from a worker thread.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tablectl.journal_file import JournalError

__all__ = ["GroupCommit"]


class GroupCommit:
    """Owns an open journal's connection: reads, writes, and their grouping.

    Args:
        path: The journal file, named in every error.
        conn: The connection, already checked and set up (autocommit mode: the
            transactions are this class's).
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self._path = path
        self._conn = conn
        self._lock = threading.RLock()
        # Inside batch(): writes share one transaction, opened at the first write.
        self._in_batch = False
        self._batch_open = False
        # Inside unit(): whether each nested unit's savepoint has been opened yet.
        self._unit_open: list[bool] = []

    def close(self) -> None:
        """Close the connection (everything written is already on disk)."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make every write inside one transaction: one commit (one fsync) on leaving the
        block, nothing written if it raises. Nothing is opened, and nothing is synced, if
        the block writes nothing. Nested batches join the outer one."""
        with self._lock:
            if self._in_batch:
                yield
                return
            self._in_batch = True
            try:
                with self._rollback_on_error():
                    yield
                    if self._batch_open:
                        self._conn.execute("COMMIT")
            finally:
                self._in_batch = self._batch_open = False
                self._unit_open.clear()

    @contextmanager
    def unit(self) -> Iterator[None]:
        """Inside :meth:`batch`: the writes of one unit of work (one table event of a
        group) in a savepoint of their own, so that a unit that raises leaves the batch
        as it was before it while the units before it stay. Like the batch, the savepoint
        is only opened at the unit's first write."""
        with self._lock:
            if not self._in_batch:
                raise RuntimeError("Journal.unit() is for use inside Journal.batch()")
            index = len(self._unit_open)
            self._unit_open.append(False)
            try:
                yield
            except BaseException:
                if self._unit_open[index]:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute(f"ROLLBACK TO unit{index}")
                        self._conn.execute(f"RELEASE unit{index}")
                raise
            else:
                if self._unit_open[index]:
                    try:
                        self._conn.execute(f"RELEASE unit{index}")
                    except sqlite3.Error as exc:
                        raise JournalError(f"{self._path}: write failed: {exc}") from exc
            finally:
                self._unit_open.pop()

    @contextmanager
    def _rollback_on_error(self) -> Iterator[None]:
        """Roll back an open transaction if the block raises; a SQLite failure becomes a
        JournalError naming the file."""
        conn = self._conn
        try:
            yield
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise JournalError(f"{self._path}: write failed: {exc}") from exc
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write: its own transaction, or a savepoint of the open batch (so a write
        that fails leaves the batch as it was before it). Any SQLite failure becomes a
        JournalError naming the file."""
        with self._lock:
            conn = self._conn
            if self._in_batch:
                try:
                    if not self._batch_open:
                        conn.execute("BEGIN IMMEDIATE")
                        self._batch_open = True
                    for index, opened in enumerate(self._unit_open):
                        if not opened:  # a unit's savepoint, opened at its first write
                            conn.execute(f"SAVEPOINT unit{index}")
                            self._unit_open[index] = True
                    conn.execute("SAVEPOINT write")
                except sqlite3.Error as exc:
                    raise JournalError(f"{self._path}: write failed: {exc}") from exc
                try:
                    yield conn
                    conn.execute("RELEASE write")
                except BaseException as exc:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK TO write")
                        conn.execute("RELEASE write")
                    if isinstance(exc, sqlite3.Error):
                        raise JournalError(f"{self._path}: write failed: {exc}") from exc
                    raise
                return
            with self._rollback_on_error():
                # IMMEDIATE takes the write lock up front, so a concurrent reader upgrading
                # to a writer cannot make us fail half-way.
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query; errors name the file."""
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise JournalError(f"{self._path}: read failed: {exc}") from exc
