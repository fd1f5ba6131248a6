"""The crash-proof journal: every accepted rules event, in SQLite, before its effects go out.

The daemon runs each event through :func:`tablectl.rules.core.step`; when the core accepts
it, the daemon calls :meth:`Journal.append` (one transaction, ``synchronous=FULL``, so the
event is on disk when the call returns) and only then lets the effects out to the seats,
the displays and MQTT.  A crash at any point therefore loses at most an event whose
effects nobody saw.  After a restart :func:`resume` replays the unfinished game's events
through the same pure core, which gives exactly the state from before the crash.

The file also holds the game records (see :mod:`tablectl.records`), written in the same
transaction that marks a game finished.  The schema is versioned with
``PRAGMA user_version`` and upgraded by :data:`MIGRATIONS`; ``PRAGMA application_id``
marks the file as a tablectl journal.  See ``docs/journal.md``.

Nothing here reads the clock: every call that stamps a time takes ``now`` (seconds since
the epoch) from the caller.  Calls block (an fsync per write, a few ms on an SD card);
one lock serialises them, so the daemon may call them from a worker thread.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import math
import os
import sqlite3
import stat
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from tablectl.rules.core import step
from tablectl.rules.events import (
    Event,
    EventFormatError,
    Start,
    Undo,
    event_to_json,
    parse_event,
)
from tablectl.rules.loader import (
    RulesConfigError,
    load_rules,
    preset_names,
    regular_file_problem,
)
from tablectl.rules.options import HouseRules, as_dict
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state

log = logging.getLogger(__name__)

#: Marks the file as ours (``PRAGMA application_id``): ASCII "TBLC".
APPLICATION_ID = 0x54424C43
#: Seconds a write waits for another connection (a CLI export) to let go of the file.
BUSY_TIMEOUT = 5.0

#: Largest JSON text read from one row: an event or a record is a few hundred bytes.
MAX_ROW = 64 * 1024

STATUS_PLAYING = "playing"
STATUS_FINISHED = "finished"
STATUS_ABANDONED = "abandoned"


class JournalError(Exception):
    """The journal file cannot be used: unreadable, corrupt, too new, or a call that the
    journal's contents do not allow (an unknown game, appending to a finished game).

    The message always names the file.
    """


class JournalNotReady(JournalError):
    """A file opened to be read holds no journal yet: empty, or a daemon starting on it has
    not committed the schema yet. Try again in a moment (a poller keeps polling)."""


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
    :meth:`Journal.link_position`)."""
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
    LAST GAME calls, with the seat they came from (see :meth:`Journal.note`)."""
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


#: Schema upgrades: ``MIGRATIONS[n]`` turns a version ``n - 1`` file into version ``n``.
#: Each runs in its own transaction together with the ``user_version`` bump, so a crash
#: mid-upgrade leaves the previous version intact.  Add a new entry; never edit an old one.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _schema_v1,
    2: _schema_v2,
    3: _schema_v3,
}


@dataclass(frozen=True, slots=True)
class Note:
    """A journalled note (see :meth:`Journal.note`)."""

    game_id: str | None
    at: float
    seat: int | None
    kind: str
    detail: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``journal export``, records)."""
        return {"at": self.at, "seat": self.seat, "kind": self.kind, **self.detail}


class LinkPosition(NamedTuple):
    """The table's boot id and the sequence number after the last event the daemon
    handled (``firmware_bridge.LinkPosition``; kept as plain numbers here)."""

    boot_id: int
    rx_next: int


def _write_position(
    conn: sqlite3.Connection, position: LinkPosition, flow: str | None = None
) -> None:
    conn.execute(
        "INSERT INTO link_position (id, boot_id, rx_next, flow) VALUES (1, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET boot_id = excluded.boot_id,"
        " rx_next = excluded.rx_next, flow = excluded.flow",
        (position.boot_id, position.rx_next, flow),
    )


def schema_version() -> int:
    """The schema version this code writes (the newest migration)."""
    return max(MIGRATIONS)


def rules_digest(rules: HouseRules) -> str:
    """A fingerprint of every resolved option, to notice a preset that changed under a game."""
    resolved = as_dict(rules)
    resolved.pop("description")  # prose; a reworded description changes no score
    text = json.dumps(resolved, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class GameRow:
    """One game in the journal.

    ``rules`` is the preset name or rules-file path the game was started with;
    ``status`` is ``playing``, ``finished`` or ``abandoned``; ``ended_at`` is set once
    the game is no longer playing.
    """

    game_id: str
    table_id: str
    rules: str
    rules_digest: str
    seats: tuple[str, ...] | None
    started_at: float
    status: str
    ended_at: float | None
    event_count: int

    @property
    def finished(self) -> bool:
        """True once the game ended (normally or abandoned): it will not be resumed."""
        return self.status != STATUS_PLAYING


@dataclass(frozen=True, slots=True)
class Entry:
    """One journalled event with its sequence number (1, 2, ...) and wall-clock time."""

    seq: int
    at: float
    event: Event


class Resumed(NamedTuple):
    """What :func:`resume` rebuilt: unpack as ``rules, game_id, state = resume(j)``."""

    rules: HouseRules
    game_id: str
    state: GameState


def _check_now(now: float) -> float:
    # A NaN or a string would sort and compare nonsensically in the records for ever.
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise ValueError(f"now must be a finite number of seconds, got {now!r}")
    return float(now)


def _check_final(final: dict[str, Any], seats: tuple[str, ...] | None) -> dict[str, Any]:
    """Validate a ``Final.as_dict()``-shaped mapping; returns a clean copy."""
    scores = final.get("scores")
    ranking = final.get("ranking")
    if not isinstance(scores, list | tuple) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in scores
    ):
        raise ValueError(f"final['scores'] must be a list of integers, got {scores!r}")
    if not isinstance(ranking, list | tuple) or sorted(ranking) != list(range(len(scores))):
        raise ValueError(
            f"final['ranking'] must list every seat 0..{len(scores) - 1} once, got {ranking!r}"
        )
    if seats is not None and len(seats) != len(scores):
        raise ValueError(f"final has {len(scores)} scores but the game has {len(seats)} seats")
    out: dict[str, Any] = {
        "scores": list(scores),
        "ranking": list(ranking),
        "reason": str(final.get("reason", "")),
    }
    result = final.get("result")
    if result:
        if not isinstance(result, list | tuple) or len(result) != len(scores):
            raise ValueError(f"final['result'] must hold one number per seat, got {result!r}")
        out["result"] = [float(r) for r in result]
    return out


class Journal:
    """An open journal file.  Create with :meth:`open`; close with :meth:`close` (or use
    it as a context manager)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        """Wrap an already checked connection; use :meth:`open` instead."""
        self.path = path
        self._conn = conn
        self._lock = threading.RLock()
        # Inside batch(): writes share one transaction, opened at the first write.
        self._in_batch = False
        self._batch_open = False
        # Inside unit(): whether each nested unit's savepoint has been opened yet.
        self._unit_open: list[bool] = []

    # --- opening ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = True,
        readonly: bool = False,
        preallocate_log: bool = False,
    ) -> Journal:
        """Open (and with ``create``, create) the journal at ``path``, upgrading its schema.

        ``readonly`` (the reading commands: ``journal list``, ``export``, ``records``)
        opens an existing file without writing anything to it: no upgrade, no WAL switch.
        Otherwise the file is checked (``PRAGMA quick_check``) before it is used, and its
        folder must exist: nothing is created but the file itself (and SQLite's ``-wal``
        and ``-shm`` beside it). ``preallocate_log`` (the daemon) then writes the
        write-ahead log out to its working size (:func:`_preallocate_wal`).

        Raises :class:`JournalError` naming the file and the fix when it is missing, in a
        missing or read-only folder, not writable, not a SQLite database, another
        program's database, damaged, or written by a newer tablectl.
        """
        path = Path(path)
        _check_kind(path, may_be_absent=create and not readonly, readonly=readonly)
        if not readonly:
            _check_writable(path)
        try:
            if readonly:
                # With no -wal beside it nobody is writing and every event is in the file
                # itself: read it as immutable, which leaves no -wal or -shm behind.
                quiet = not Path(f"{path}-wal").exists()
                uri = f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if quiet else "")
            elif create:
                uri = f"{path.resolve().as_uri()}?mode=rwc"
            else:
                # mode=rw: never create a fresh empty journal by mistyping a path.
                uri = f"{path.resolve().as_uri()}?mode=rw"
            conn = sqlite3.connect(
                uri, uri=True, isolation_level=None, timeout=BUSY_TIMEOUT, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"{path}: cannot open the journal: {exc}") from exc
        try:
            _prepare(path, conn, readonly=readonly)
            if preallocate_log and not readonly:
                _preallocate_wal(path, conn)
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def close(self) -> None:
        """Close the file.  Everything appended is already on disk."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Journal:
        """Use as ``with Journal.open(path) as journal: ...``."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on leaving the ``with`` block."""
        self.close()

    # --- plumbing -----------------------------------------------------------------------

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make every write inside one transaction: one commit (one fsync) on leaving the
        block, nothing written if it raises.

        The daemon wraps the handling of each table event in a batch, so what one event
        causes (an implied discard and a take, a game's start and its first event, the
        link position) is on disk all together or not at all. Nothing is opened, and
        nothing is synced, if the block writes nothing. Nested batches join the outer one.
        """
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
                        raise JournalError(f"{self.path}: write failed: {exc}") from exc
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
            raise JournalError(f"{self.path}: write failed: {exc}") from exc
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; any SQLite failure becomes a JournalError naming the file."""
        with self._lock:
            conn = self._conn
            if self._in_batch:
                # A savepoint, so a write that fails leaves the batch as it was before it.
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
                    raise JournalError(f"{self.path}: write failed: {exc}") from exc
                try:
                    yield conn
                    conn.execute("RELEASE write")
                except BaseException as exc:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK TO write")
                        conn.execute("RELEASE write")
                    if isinstance(exc, sqlite3.Error):
                        raise JournalError(f"{self.path}: write failed: {exc}") from exc
                    raise
                return
            with self._rollback_on_error():
                # IMMEDIATE takes the write lock up front, so a concurrent reader upgrading
                # to a writer cannot make us fail half-way.
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query (for :mod:`tablectl.records` and tools); errors name the file."""
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: read failed: {exc}") from exc

    def _row(self, conn: sqlite3.Connection, game_id: str) -> tuple[Any, ...]:
        row = conn.execute(
            "SELECT table_id, rules, seats, started_at, status FROM games WHERE game_id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            raise JournalError(f"{self.path}: no game {game_id!r} in the journal")
        return tuple(row)

    # --- writing ------------------------------------------------------------------------

    def start_game(
        self,
        table_id: str,
        rules_name: str,
        seats: Sequence[str] | None,
        now: float,
        *,
        game_id: str | None = None,
    ) -> str:
        """Record a new game and return its id (``game_id`` or a fresh uuid4 hex).

        The rules are loaded here so that a game that could not be resumed is never
        started (raises :class:`~tablectl.rules.loader.RulesConfigError`).  Raises
        :class:`JournalError` while another game is still playing: finish or abandon it
        first, so that :meth:`current_game` is never ambiguous.
        """
        now = _check_now(now)
        rules = load_rules(rules_name)
        if rules_name not in preset_names():
            # A parlor's own rules file: keep an absolute path so that resuming from
            # another working directory loads the same file.
            rules_name = str(Path(rules_name).resolve())
        seat_list = None if seats is None else [str(s) for s in seats]
        if seat_list is not None and len(seat_list) != rules.players:
            raise ValueError(
                f"{len(seat_list)} seat names for {rules.name!r}, a {rules.players}-player game"
            )
        game_id = game_id or uuid.uuid4().hex
        with self._transaction() as conn:
            playing = conn.execute("SELECT game_id FROM games WHERE status = 'playing'").fetchone()
            if playing is not None:
                raise JournalError(
                    f"{self.path}: game {playing[0]} is still being played;"
                    " finish or abandon it before starting another"
                )
            if conn.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone():
                raise JournalError(f"{self.path}: game id {game_id!r} is already used")
            conn.execute(
                "INSERT INTO games (game_id, table_id, rules, rules_digest, seats, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    game_id,
                    table_id,
                    rules_name,
                    rules_digest(rules),
                    None if seat_list is None else json.dumps(seat_list, ensure_ascii=False),
                    now,
                ),
            )
        log.info("table %s: game %s started (%s)", table_id, game_id, rules_name)
        return game_id

    def append(
        self,
        game_id: str,
        event: Event,
        now: float,
        *,
        final: dict[str, Any] | None = None,
        position: LinkPosition | None = None,
    ) -> int:
        """Journal one *accepted* event durably; returns its sequence number (1, 2, ...).

        Call it after ``step`` accepted the event and before any effect goes out.  When
        the event ended the game, pass ``final=state.final.as_dict()``: the game is then
        finished and its record written in the same transaction, so no crash can leave a
        game over but unrecorded.  The journal does not judge events (it has no state);
        journalling a refused one is the caller's bug, which :func:`resume` survives.
        ``position`` (the link position after the table event that caused this one) is
        stored in the same transaction, so a restarted daemon resumes the link exactly there.
        """
        now = _check_now(now)
        if isinstance(event, Start):
            raise ValueError("'start' is not journalled: the preset is in the games table")
        text = json.dumps(event_to_json(event), ensure_ascii=False, separators=(",", ":"))
        with self._transaction() as conn:
            table_id, rules, seats, started_at, status = self._row(conn, game_id)
            if status == STATUS_FINISHED and isinstance(event, Undo):
                # The result that ended the game is taken back: the game is played on. Its
                # events stay as they are; the record is the finished game's, so it goes
                # and is written again when the game ends again.
                conn.execute(
                    "UPDATE games SET status = 'playing', ended_at = NULL WHERE game_id = ?",
                    (game_id,),
                )
                conn.execute("DELETE FROM records WHERE game_id = ?", (game_id,))
                status = STATUS_PLAYING
            if status != STATUS_PLAYING:
                raise JournalError(f"{self.path}: game {game_id} is {status}; no more events")
            seq = int(
                conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE game_id = ?", (game_id,)
                ).fetchone()[0]
            )
            conn.execute(
                "INSERT INTO events (game_id, seq, at, event) VALUES (?, ?, ?, ?)",
                (game_id, seq, now, text),
            )
            if final is not None:
                self._finish(conn, game_id, final, now)
            if position is not None:
                _write_position(conn, position)
        log.debug("table %s: game %s #%d %s", table_id, game_id, seq, text)
        if final is not None:
            log.info("table %s: game %s finished: %s", table_id, game_id, final.get("scores"))
        return seq

    def _finish(
        self, conn: sqlite3.Connection, game_id: str, final: dict[str, Any], now: float
    ) -> None:
        table_id, rules, seats_json, started_at, status = self._row(conn, game_id)
        if status != STATUS_PLAYING:
            raise JournalError(f"{self.path}: game {game_id} is already {status}")
        seats = None if seats_json is None else self.seat_names(f"game {game_id}", seats_json)
        clean = _check_final(final, seats)
        conn.execute(
            "UPDATE games SET status = 'finished', ended_at = ? WHERE game_id = ?",
            (now, game_id),
        )
        conn.execute(
            "INSERT INTO records (game_id, table_id, rules, seats, started_at, finished_at, final)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (game_id, table_id, rules, seats_json, started_at, now, json.dumps(clean)),
        )

    def finish_game(self, game_id: str, final_dict: dict[str, Any], now: float) -> None:
        """Mark the game finished and write its record (``final_dict`` is
        ``Final.as_dict()``: scores, ranking, reason, result) in one transaction."""
        now = _check_now(now)
        with self._transaction() as conn:
            self._finish(conn, game_id, final_dict, now)
        log.info("game %s finished: %s", game_id, final_dict.get("scores"))

    def set_link_position(self, position: LinkPosition, *, flow: str | None = None) -> None:
        """Store how far the daemon handled the table's events, on its own (for table
        events that journal nothing, such as keys that move a prompt).

        Durable when it returns (an fsync), like every other write: a stored position
        that a power cut of the Pi alone had rolled back could lag the table's own by a
        whole turn of the link's 8-bit sequence space and then read as a new
        acknowledgement, letting the table drop events nobody handled. Inside a batch it
        simply joins the batch. ``flow`` is the daemon's console state at that position
        (JSON text, see :meth:`link_flow`); it replaces the stored one.
        """
        with self._transaction() as conn:
            _write_position(conn, position, flow)

    def link_flow(self) -> str | None:
        """The console state stored with the last link position (None if none)."""
        rows = self.query("SELECT flow FROM link_position WHERE id = 1")
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def link_position(self) -> LinkPosition | None:
        """The last stored link position, or None if none was ever stored."""
        rows = self.query("SELECT boot_id, rx_next FROM link_position WHERE id = 1")
        return LinkPosition(int(rows[0][0]), int(rows[0][1])) if rows else None

    def abandon_game(self, game_id: str, now: float) -> None:
        """End a game that will not be completed (players left): no record, no resume."""
        now = _check_now(now)
        with self._transaction() as conn:
            status = self._row(conn, game_id)[4]
            if status != STATUS_PLAYING:
                raise JournalError(f"{self.path}: game {game_id} is already {status}")
            conn.execute(
                "UPDATE games SET status = 'abandoned', ended_at = ? WHERE game_id = ?",
                (now, game_id),
            )
        log.info("game %s abandoned", game_id)

    def note(
        self,
        game_id: str | None,
        now: float,
        seat: int | None,
        kind: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Journal a note: something staff may look up later that is not a rules event
        (a staff action, a wrong staff PIN, a tray mismatch, a LAST GAME call).

        ``game_id`` is the game it happened in (None between games). Durable on return,
        or with the batch it is written in."""
        now = _check_now(now)
        text = json.dumps(detail or {}, ensure_ascii=False, separators=(",", ":"))
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO notes (game_id, at, seat, kind, detail) VALUES (?, ?, ?, ?, ?)",
                (game_id, now, seat, kind, text),
            )

    def notes(self, game_id: str | None = None) -> list[Note]:
        """The notes of one game (every note when ``game_id`` is None), oldest first."""
        where, params = ("WHERE game_id = ?", (game_id,)) if game_id is not None else ("", ())
        if not self.query("SELECT 1 FROM sqlite_master WHERE name = 'notes'"):
            return []  # a file from before version 3, opened only to be read
        rows = self.query(
            f"SELECT game_id, at, seat, kind, detail FROM notes {where} ORDER BY id", params
        )
        out = []
        for game, at, seat, kind, text in rows:
            detail = self.decode(f"game {game} note {kind!r}", text)
            if not isinstance(detail, dict):
                raise JournalError(f"{self.path}: game {game} note {kind!r} is unreadable")
            out.append(Note(game_id=game, at=at, seat=seat, kind=kind, detail=detail))
        return out

    # --- reading ------------------------------------------------------------------------

    def current_game(self) -> str | None:
        """The game still being played (the one to resume after a restart), or None."""
        rows = self.query(
            "SELECT game_id FROM games WHERE status = 'playing' ORDER BY rowid DESC LIMIT 1"
        )
        return str(rows[0][0]) if rows else None

    def last_game(self) -> str | None:
        """The most recently started game, whatever its status, or None."""
        rows = self.query("SELECT game_id FROM games ORDER BY rowid DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    def _games(self, where: str = "", params: Sequence[Any] = ()) -> list[GameRow]:
        rows = self.query(
            "SELECT g.game_id, g.table_id, g.rules, g.rules_digest, g.seats, g.started_at,"
            " g.status, g.ended_at,"
            " (SELECT COUNT(*) FROM events e WHERE e.game_id = g.game_id)"
            f" FROM games g {where} ORDER BY g.rowid",
            params,
        )
        return [
            GameRow(
                game_id=r[0],
                table_id=r[1],
                rules=r[2],
                rules_digest=r[3],
                seats=None if r[4] is None else self.seat_names(f"game {r[0]}", r[4]),
                started_at=r[5],
                status=r[6],
                ended_at=r[7],
                event_count=r[8],
            )
            for r in rows
        ]

    def seat_names(self, where: str, text: Any) -> tuple[str, ...]:
        """The seat names stored as JSON in a row (a list of strings, or refused)."""
        seats = self.decode(f"{where} seat names", text)
        if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
            raise JournalError(f"{self.path}: {where} seat names are unreadable: not names")
        return tuple(seats)

    def games(self) -> list[GameRow]:
        """Every game, oldest first."""
        return self._games()

    def game(self, game_id: str) -> GameRow:
        """One game by id, or by a unique prefix of its id (as typed at the command line)."""
        exact = self._games("WHERE g.game_id = ?", (game_id,))
        if exact:
            return exact[0]
        matches = self._games("WHERE substr(g.game_id, 1, length(?)) = ?", (game_id, game_id))
        if not matches or not game_id:
            raise JournalError(f"{self.path}: no game {game_id!r} in the journal")
        if len(matches) > 1:
            raise JournalError(
                f"{self.path}: {game_id!r} matches {len(matches)} games; give more of the id"
            )
        return matches[0]

    def entries(self, game_id: str) -> list[Entry]:
        """The game's journalled events in order, with sequence numbers and times."""
        rows = self.query(
            "SELECT seq, at, event FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
        )
        out = []
        for seq, at, text in rows:
            where = f"game {game_id} event #{seq}"
            try:
                event = parse_event(self.decode(where, text))
            except EventFormatError as exc:
                raise JournalError(f"{self.path}: {where} is unreadable: {exc}") from None
            out.append(Entry(seq=seq, at=at, event=event))
        return out

    def decode(self, where: str, text: Any) -> Any:
        """The JSON in a row's column, or a :class:`JournalError` naming the file and
        ``where`` (the game and the row): a damaged row may hold anything (not text, not
        JSON, megabytes, nesting deep enough to exhaust the interpreter's stack)."""
        if not isinstance(text, str | bytes):
            raise JournalError(f"{self.path}: {where} is unreadable: not text")
        if len(text) > MAX_ROW:
            raise JournalError(
                f"{self.path}: {where} is unreadable: {len(text)} bytes, at most {MAX_ROW}"
            )
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else "not JSON"
            raise JournalError(f"{self.path}: {where} is unreadable: {why}") from None

    def events(self, game_id: str) -> list[Event]:
        """The game's journalled events in order."""
        return [entry.event for entry in self.entries(game_id)]


#: Files SQLite keeps beside the journal: they must be plain files too, or SQLite would
#: write its log into whatever they point at.
COMPANIONS = ("-wal", "-shm")


def _check_kind(path: Path, *, may_be_absent: bool, readonly: bool = False) -> None:
    """The journal is a regular file (or, with ``may_be_absent``, not there yet), never a
    directory, a FIFO, a device or a symlink to one, and never an empty file: an empty
    file is someone else's mistake, not a journal to start afresh in (only an absent
    path makes a new journal). Checked before SQLite opens anything, as SQLite would
    hang on a FIFO and make a ``-journal`` file beside a device."""
    problem = regular_file_problem(path, absent_ok=may_be_absent)
    if problem == "no file there":
        raise JournalError(f"{path}: no journal file there")
    if problem is not None:
        raise JournalError(f"{path}: {problem}, not a journal")
    for suffix in COMPANIONS:
        problem = regular_file_problem(Path(f"{path}{suffix}"), absent_ok=True)
        if problem is not None:
            raise JournalError(f"{path}{suffix}: {problem}; the journal's {suffix} must be a file")
    if path.exists() and path.stat().st_size == 0 and not _has_log(path):
        if readonly:
            # A reader cannot tell a stray empty file from the instant after a daemon's
            # sqlite3.connect() made the file: a poller keeps polling (JournalNotReady).
            raise JournalNotReady(
                f"{path}: an empty file (0 bytes), no journal in it yet: a daemon starting"
                " on it writes one within a moment; otherwise it is not a journal"
            )
        raise JournalError(
            f"{path}: an empty file (0 bytes), not a journal; remove it to start a new"
            " journal there, or name the journal file"
        )


def _has_log(path: Path) -> bool:
    """Whether a write-ahead log with something in it lies beside ``path`` (a journal
    whose pages are all still in its log has a main file of 0 bytes)."""
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


def _check_writable(path: Path) -> None:
    """The daemon's journal lives in a folder that exists and that it may write (SQLite
    puts the -wal and -shm files beside the journal)."""
    folder = path.parent
    if not folder.is_dir():
        raise JournalError(
            f"{path}: the folder {folder} does not exist; create it, owned by the daemon's"
            " user (the systemd unit's StateDirectory= does)"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise JournalError(
            f"{path}: the folder {folder} is not writable by this user; fix its owner or mode"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise JournalError(f"{path}: not readable and writable by this user; fix its owner or mode")


def _prepare(path: Path, conn: sqlite3.Connection, *, readonly: bool = False) -> None:
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


#: SQLite's write-ahead log: a 32-byte header, then frames of a 24-byte header and a page.
WAL_HEADER = 32
WAL_FRAME_HEADER = 24
#: Frames past the automatic checkpoint's size in the preallocated log: the commit that
#: crosses that size (a whole group's pages) still lands in the preallocated part.
WAL_SLACK_FRAMES = 64


def _preallocate_wal(path: Path, conn: sqlite3.Connection) -> None:
    """Extend the journal's write-ahead log with zeros to the size it reaches before
    SQLite's automatic checkpoint wraps it (``wal_autocheckpoint`` pages, plus slack).

    Why: a commit appended to a growing file makes its fdatasync write the file's new size
    too (a file-system journal commit of its own); once the log has wrapped, commits
    overwrite blocks that exist and the sync carries their data alone (ext4 here: 135 vs
    88 us at the median, docs/performance.md). SQLite deletes the log at a clean close,
    so without this every start grew it again through its first ~500 commits.

    Safe because only bytes after the log's end are written, once, before this
    connection's first write: SQLite never takes zeros for a frame (a frame must carry the
    header's random salts and a running checksum) and ignores them as it ignores the stale
    frames it leaves behind itself after a wrap; a crash while padding leaves a shorter
    tail of zeros. The log is not locked by SQLite (its locks are on the ``-shm`` file),
    so opening and closing it here drops no lock of this process.
    """
    wal = Path(f"{path}-wal")
    try:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = max(int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]), 0)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal's settings: {exc}") from exc
    want = WAL_HEADER + (pages + WAL_SLACK_FRAMES) * (WAL_FRAME_HEADER + page)
    try:
        # Not created here: SQLite made it when the connection went into WAL mode.
        fd = os.open(wal, os.O_WRONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"{wal}: cannot open the write-ahead log: {exc.strerror}") from exc
    try:
        size = os.fstat(fd).st_size
        if size >= want:
            return
        zeros = bytes(min(want - size, 1 << 20))
        while size < want:
            size += os.pwrite(fd, zeros[: want - size], size)
        os.fsync(fd)
    except OSError as exc:
        raise JournalError(f"{wal}: cannot extend the write-ahead log: {exc.strerror}") from exc
    finally:
        os.close(fd)


class JournalLock:
    """An exclusive lock on ``<journal>.lock``, held for a daemon's life: two daemons on
    one journal would interleave their games and each resume the other's."""

    def __init__(self, path: Path) -> None:
        self.path = Path(f"{path}.lock")
        self._fd: int | None = None

    def acquire(self) -> JournalLock:
        """Take the lock, or raise :class:`JournalError` naming who holds it (or why the
        journal's folder cannot be used at all)."""
        journal = Path(str(self.path)[: -len(".lock")])
        _check_kind(journal, may_be_absent=True)  # no lock beside a device or a FIFO
        _check_writable(journal)
        # O_NOFOLLOW and O_NONBLOCK: the lock file is truncated below, so it must be our
        # own plain file, not a link to someone else's nor a FIFO that would hang.
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o640)
        except OSError as exc:
            why = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
            raise JournalError(f"{self.path}: cannot use it as the lock file: {why}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise JournalError(f"{self.path}: not a regular file; the journal's lock must be one")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise JournalError(
                    f"{journal}: another tablectl (pid {holder}) is using this journal;"
                    " stop it first: two daemons must not share a journal"
                ) from None
            raise JournalError(f"{self.path}: cannot lock: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Let go of the lock (also done by the kernel when the process dies)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def resume(journal: Journal) -> Resumed | None:
    """Rebuild the game in progress by replaying its events through the rules core.

    Returns None when no game is being played.  A journalled event that the core refuses
    (which the daemon never writes, but an old bug might have) is logged and skipped,
    exactly as ``tablectl replay`` lists and skips it.  If the returned state is finished
    (a crash between the last event and :meth:`Journal.finish_game`), the caller should
    finish the game now.
    """
    game_id = journal.current_game()
    if game_id is None:
        return None
    row = journal.game(game_id)
    try:
        rules = load_rules(row.rules)
    except RulesConfigError as exc:
        raise JournalError(
            f"{journal.path}: game {game_id}: cannot load its rules {row.rules!r}: {exc}"
        ) from exc
    if rules_digest(rules) != row.rules_digest:
        # A preset edited or a tablectl upgrade between crash and restart: the replay
        # might not give the scores the players saw.  Go on, but leave a trace.
        log.warning(
            "table %s: game %s: rules %r changed since the game started; resuming anyway",
            row.table_id,
            game_id,
            row.rules,
        )
    state = initial_state(rules)
    for entry in journal.entries(game_id):
        new_state, effects = step(state, entry.event)
        refusals = [e for e in effects if isinstance(e, Refusal)]
        if refusals:
            log.warning(
                "table %s: game %s: journalled event #%d %s is refused on replay (%s); skipped",
                row.table_id,
                game_id,
                entry.seq,
                json.dumps(event_to_json(entry.event)),
                refusals[0].code,
            )
            continue
        state = new_state
    log.info("table %s: resumed game %s after %d events", row.table_id, game_id, row.event_count)
    return Resumed(rules, game_id, state)


def export_game(journal: Journal, game_id: str) -> str:
    """The game as ``tablectl replay`` JSON Lines: a start line naming the preset, then
    one line per event.  Replaying it gives exactly the game's result."""
    row = journal.game(game_id)
    lines = [json.dumps(event_to_json(Start(rules=row.rules)), separators=(",", ":"))]
    lines.extend(
        json.dumps(event_to_json(event), ensure_ascii=False, separators=(",", ":"))
        for event in journal.events(row.game_id)
    )
    return "\n".join(lines) + "\n"
