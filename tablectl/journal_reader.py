"""Reading games back from the journal: the games, their events, notes and records' rows.

:class:`GameReader` answers the daemon at start (the game to resume, the link position)
and the reading commands (``journal list``, ``export``, ``records``); every damaged row
it meets becomes a :class:`~tablectl.journal_file.JournalError` naming the file and the
row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablectl import journal_rows
from tablectl.journal_commit import GroupCommit
from tablectl.journal_file import JournalError
from tablectl.journal_rows import Entry, GameRow, LinkPosition, Note
from tablectl.rules.events import Event, EventFormatError, parse_event

__all__ = ["GameReader"]


class GameReader:
    """Reads one journal's games.

    Args:
        path: The journal file, named in every error.
        commit: The journal's connection, which every query goes through.
    """

    def __init__(self, path: Path, commit: GroupCommit) -> None:
        self._path = path
        self._commit = commit

    def link_flow(self) -> str | None:
        """The console state stored with the last link position (None if none)."""
        rows = self._commit.query("SELECT flow FROM link_position WHERE id = 1")
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def link_position(self) -> LinkPosition | None:
        """The last stored link position, or None if none was ever stored."""
        rows = self._commit.query("SELECT boot_id, rx_next FROM link_position WHERE id = 1")
        return LinkPosition(int(rows[0][0]), int(rows[0][1])) if rows else None

    def notes(self, game_id: str | None = None) -> list[Note]:
        """The notes of one game (every note when ``game_id`` is None), oldest first."""
        where, params = ("WHERE game_id = ?", (game_id,)) if game_id is not None else ("", ())
        if not self._commit.query("SELECT 1 FROM sqlite_master WHERE name = 'notes'"):
            return []  # a file from before version 3, opened only to be read
        rows = self._commit.query(
            f"SELECT game_id, at, seat, kind, detail FROM notes {where} ORDER BY id", params
        )
        out = []
        for game, at, seat, kind, text in rows:
            detail = self.decode(f"game {game} note {kind!r}", text)
            if not isinstance(detail, dict):
                raise JournalError(f"{self._path}: game {game} note {kind!r} is unreadable")
            out.append(Note(game_id=game, at=at, seat=seat, kind=kind, detail=detail))
        return out

    def current_game(self) -> str | None:
        """The game still being played (the one to resume after a restart), or None."""
        rows = self._commit.query(
            "SELECT game_id FROM games WHERE status = 'playing' ORDER BY rowid DESC LIMIT 1"
        )
        return str(rows[0][0]) if rows else None

    def last_game(self) -> str | None:
        """The most recently started game, whatever its status, or None."""
        rows = self._commit.query("SELECT game_id FROM games ORDER BY rowid DESC LIMIT 1")
        return str(rows[0][0]) if rows else None

    def _games(self, where: str = "", params: Sequence[Any] = ()) -> list[GameRow]:
        rows = self._commit.query(
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
        return journal_rows.seat_names(self._path, where, text)

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
            raise JournalError(f"{self._path}: no game {game_id!r} in the journal")
        if len(matches) > 1:
            raise JournalError(
                f"{self._path}: {game_id!r} matches {len(matches)} games; give more of the id"
            )
        return matches[0]

    def entries(self, game_id: str) -> list[Entry]:
        """The game's journalled events in order, with sequence numbers and times."""
        rows = self._commit.query(
            "SELECT seq, at, event FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
        )
        out = []
        for seq, at, text in rows:
            where = f"game {game_id} event #{seq}"
            try:
                event = parse_event(self.decode(where, text))
            except EventFormatError as exc:
                raise JournalError(f"{self._path}: {where} is unreadable: {exc}") from None
            out.append(Entry(seq=seq, at=at, event=event))
        return out

    def decode(self, where: str, text: Any) -> Any:
        """The JSON in a row's column, or a :class:`JournalError` naming the file and
        ``where`` (the game and the row): a damaged row may hold anything (not text, not
        JSON, megabytes, nesting deep enough to exhaust the interpreter's stack)."""
        return journal_rows.decode(self._path, where, text)

    def events(self, game_id: str) -> list[Event]:
        """The game's journalled events in order."""
        return [entry.event for entry in self.entries(game_id)]
