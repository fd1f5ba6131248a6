"""What the journal's rows hold, as values: games, events, notes, the link position.

Also the decoding of a row's JSON (:func:`decode`, :func:`seat_names`): a damaged row may
hold anything, and each problem becomes a :class:`~tablectl.journal_file.JournalError`
naming the file and the row.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from tablectl.journal_file import JournalError
from tablectl.rules.events import Event
from tablectl.rules.options import HouseRules, MoneyOptions, as_dict

__all__ = [
    "MAX_ROW",
    "STATUS_ABANDONED",
    "STATUS_FINISHED",
    "STATUS_PLAYING",
    "Entry",
    "GameRow",
    "LinkPosition",
    "Note",
    "decode",
    "rules_digest",
    "seat_names",
]

#: Largest JSON text read from one row: an event or a record is a few hundred bytes.
MAX_ROW = 64 * 1024

STATUS_PLAYING = "playing"
STATUS_FINISHED = "finished"
STATUS_ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class Note:
    """A journalled note (see :meth:`~tablectl.journal.Journal.note`)."""

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


def rules_digest(rules: HouseRules) -> str:
    """A fingerprint of every resolved option, to notice a preset that changed under a game."""
    resolved = as_dict(rules)
    resolved.pop("description")  # prose; a reworded description changes no score
    if rules.money == MoneyOptions():
        # A preset without money settles as before money existed: its games' digests,
        # journalled before the section was added, must still match after an upgrade.
        resolved.pop("money")
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


def decode(path: Path, where: str, text: Any) -> Any:
    """The JSON in a row's column, or a :class:`JournalError` naming the file ``path`` and
    ``where`` (the game and the row): a damaged row may hold anything (not text, not
    JSON, megabytes, nesting deep enough to exhaust the interpreter's stack)."""
    if not isinstance(text, str | bytes):
        raise JournalError(f"{path}: {where} is unreadable: not text")
    if len(text) > MAX_ROW:
        raise JournalError(f"{path}: {where} is unreadable: {len(text)} bytes, at most {MAX_ROW}")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else "not JSON"
        raise JournalError(f"{path}: {where} is unreadable: {why}") from None


def seat_names(path: Path, where: str, text: Any) -> tuple[str, ...]:
    """The seat names stored as JSON in a row (a list of strings, or refused)."""
    seats = decode(path, f"{where} seat names", text)
    if not isinstance(seats, list) or not all(isinstance(s, str) for s in seats):
        raise JournalError(f"{path}: {where} seat names are unreadable: not names")
    return tuple(seats)
