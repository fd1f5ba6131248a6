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

:class:`Journal` is composed of one object per job, each in its own module:
:mod:`~tablectl.journal_file` (what may be opened, the write-ahead log, the lock),
:mod:`~tablectl.journal_schema` (tables and migrations), :mod:`~tablectl.journal_commit`
(the connection and the grouping of writes into commits), :mod:`~tablectl.journal_writer`
and :mod:`~tablectl.journal_reader` (games in and out), :mod:`~tablectl.journal_rows`
(the rows as values).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, NamedTuple

from tablectl.journal_commit import GroupCommit
from tablectl.journal_file import (
    COMPANIONS,
    WAL_FRAME_HEADER,
    WAL_HEADER,
    WAL_SLACK_FRAMES,
    JournalError,
    JournalLock,
    JournalNotReady,
    check_kind,
    check_writable,
    preallocate_wal,
)
from tablectl.journal_ledger import acknowledge
from tablectl.journal_reader import GameReader
from tablectl.journal_rows import (
    MAX_ROW,
    STATUS_ABANDONED,
    STATUS_FINISHED,
    STATUS_PLAYING,
    Entry,
    GameRow,
    LinkPosition,
    Note,
    rules_digest,
)
from tablectl.journal_schema import APPLICATION_ID, MIGRATIONS, prepare, schema_version
from tablectl.journal_writer import GameWriter
from tablectl.rules.core import step
from tablectl.rules.events import Event, Start, event_to_json
from tablectl.rules.loader import RulesConfigError, load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT",
    "COMPANIONS",
    "MAX_ROW",
    "MIGRATIONS",
    "STATUS_ABANDONED",
    "STATUS_FINISHED",
    "STATUS_PLAYING",
    "WAL_FRAME_HEADER",
    "WAL_HEADER",
    "WAL_SLACK_FRAMES",
    "Entry",
    "GameRow",
    "Journal",
    "JournalError",
    "JournalLock",
    "JournalNotReady",
    "LinkPosition",
    "Note",
    "Resumed",
    "export_game",
    "resume",
    "rules_digest",
    "schema_version",
]

log = logging.getLogger(__name__)

#: Seconds a write waits for another connection (a CLI export) to let go of the file.
BUSY_TIMEOUT = 5.0


class Journal:
    """An open journal file.  Create with :meth:`open`; close with :meth:`close` (or use
    it as a context manager)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        """Wrap an already checked connection; use :meth:`open` instead."""
        self.path = path
        self._commit = GroupCommit(path, conn)
        self._writer = GameWriter(path, self._commit)
        self._reader = GameReader(path, self._commit)

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
        write-ahead log out to its working size (:func:`~tablectl.journal_file.preallocate_wal`).

        Raises :class:`JournalError` naming the file and the fix when it is missing, in a
        missing or read-only folder, not writable, not a SQLite database, another
        program's database, damaged, or written by a newer tablectl.
        """
        path = Path(path)
        check_kind(path, may_be_absent=create and not readonly, readonly=readonly)
        if not readonly:
            check_writable(path)
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
            prepare(path, conn, readonly=readonly)
            if preallocate_log and not readonly:
                preallocate_wal(path, conn)
        except BaseException:
            conn.close()
            raise
        return cls(path, conn)

    def close(self) -> None:
        """Close the file.  Everything appended is already on disk."""
        self._commit.close()

    def __enter__(self) -> Journal:
        """Use as ``with Journal.open(path) as journal: ...``."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close on leaving the ``with`` block."""
        self.close()

    # --- plumbing: GroupCommit ----------------------------------------------------

    def batch(self) -> AbstractContextManager[None]:
        """Make every write inside one transaction: one commit (one fsync) on leaving the
        block, nothing written if it raises.

        The daemon wraps the handling of each table event in a batch, so what one event
        causes (an implied discard and a take, a game's start and its first event, the
        link position) is on disk all together or not at all. Nothing is opened, and
        nothing is synced, if the block writes nothing. Nested batches join the outer one.
        """
        return self._commit.batch()

    def unit(self) -> AbstractContextManager[None]:
        """Inside :meth:`batch`: the writes of one unit of work (one table event of a
        group) in a savepoint of their own, so that a unit that raises leaves the batch
        as it was before it while the units before it stay. Like the batch, the savepoint
        is only opened at the unit's first write."""
        return self._commit.unit()

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a read-only query (for :mod:`tablectl.records` and tools); errors name the file."""
        return self._commit.query(sql, params)

    # --- writing: GameWriter ------------------------------------------------------

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
        return self._writer.start_game(table_id, rules_name, seats, now, game_id=game_id)

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
        return self._writer.append(game_id, event, now, final=final, position=position)

    def finish_game(self, game_id: str, final_dict: dict[str, Any], now: float) -> None:
        """Mark the game finished and write its record (``final_dict`` is
        ``Final.as_dict()``: scores, ranking, reason, result, money) in one transaction."""
        self._writer.finish_game(game_id, final_dict, now)

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
        self._writer.set_link_position(position, flow=flow)

    def abandon_game(self, game_id: str, now: float) -> None:
        """End a game that will not be completed (players left): no record, no resume."""
        self._writer.abandon_game(game_id, now)

    def set_game_seats(self, game_id: str, seats: Sequence[str] | None) -> None:
        """Staff seated other players before ``game_id`` journalled its first event: the
        game is theirs. Raises :class:`JournalError` once it has an event (its players
        are fixed then). Durable on return, or with the batch it is written in."""
        self._writer.set_game_seats(game_id, seats)

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
        self._writer.note(game_id, now, seat, kind, detail)

    # --- the parlor's ledger: journal_ledger ---------------------------------------

    def ledger_acknowledge(self, game_id: str, revision: int) -> bool:
        """The ledger holds ``game_id`` at ``revision``; True if that took it off the
        pending list (see :func:`tablectl.journal_ledger.acknowledge`)."""
        with self._commit.write() as conn:
            return acknowledge(conn, game_id, revision)

    # --- reading: GameReader ------------------------------------------------------

    def current_game(self) -> str | None:
        """The game still being played (the one to resume after a restart), or None."""
        return self._reader.current_game()

    def last_game(self) -> str | None:
        """The most recently started game, whatever its status, or None."""
        return self._reader.last_game()

    def games(self) -> list[GameRow]:
        """Every game, oldest first."""
        return self._reader.games()

    def game(self, game_id: str) -> GameRow:
        """One game by id, or by a unique prefix of its id (as typed at the command line)."""
        return self._reader.game(game_id)

    def entries(self, game_id: str) -> list[Entry]:
        """The game's journalled events in order, with sequence numbers and times."""
        return self._reader.entries(game_id)

    def events(self, game_id: str) -> list[Event]:
        """The game's journalled events in order."""
        return self._reader.events(game_id)

    def notes(self, game_id: str | None = None) -> list[Note]:
        """The notes of one game (every note when ``game_id`` is None), oldest first."""
        return self._reader.notes(game_id)

    def link_flow(self) -> str | None:
        """The console state stored with the last link position (None if none)."""
        return self._reader.link_flow()

    def link_position(self) -> LinkPosition | None:
        """The last stored link position, or None if none was ever stored."""
        return self._reader.link_position()

    def decode(self, where: str, text: Any) -> Any:
        """The JSON in a row's column, or a :class:`JournalError` naming the file and
        ``where`` (the game and the row): a damaged row may hold anything (not text, not
        JSON, megabytes, nesting deep enough to exhaust the interpreter's stack)."""
        return self._reader.decode(where, text)

    def seat_names(self, where: str, text: Any) -> tuple[str, ...]:
        """The seat names stored as JSON in a row (a list of strings, or refused)."""
        return self._reader.seat_names(where, text)


class Resumed(NamedTuple):
    """What :func:`resume` rebuilt: unpack as ``rules, game_id, state = resume(j)``."""

    rules: HouseRules
    game_id: str
    state: GameState


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
