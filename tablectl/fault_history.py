"""The journal's notes as staff read them back (``tablectl journal notes``): one line
each, oldest first, or only the table's trouble with ``--faults``: its faults, their
clearing and its stalls (docs/journal.md, "Notes").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from tablectl.journal_rows import Note

__all__ = ["FAULT_KINDS", "describe", "format_notes", "notes_json"]

#: The notes that make up a table's fault history.
FAULT_KINDS: Final = ("fault", "fault_repeats", "fault_cleared", "stalled", "stall_over")


def describe(note: Note) -> str:
    """What a note says, in a few words (its details as ``key=value`` for kinds without
    a sentence of their own)."""
    d = note.detail
    if note.kind == "fault":
        text = f"{d.get('code')}: {d.get('text')}" if d.get("text") else f"{d.get('code')}"
        return text + (" (held latched by the table)" if d.get("latched") else "")
    if note.kind == "fault_repeats":
        return f"{d.get('code')} came {d.get('count')} more times, answered once"
    if note.kind == "fault_cleared":
        repeats = d.get("repeats") or {}
        again = "".join(f", {code} reported {n} more times" for code, n in repeats.items())
        return f"cleared {', '.join(map(str, d.get('codes', [])))}{again}"
    if note.kind == "stalled":
        return f"no progress for {d.get('idle_s')} s ({d.get('phase')})"
    if note.kind == "stall_over":
        return f"moving again after {d.get('stalled_s')} s"
    return " ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in d.items())


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S")


def format_notes(notes: Sequence[Note]) -> str:
    """One line per note: local time, game (8 characters), seat, kind, what it says."""
    if not notes:
        return "no notes\n"
    lines = [f"{'time':<19}  {'game':<8}  seat  {'kind':<14}  what"]
    for note in notes:
        game = (note.game_id or "-")[:8]
        seat = "-" if note.seat is None else str(note.seat)
        lines.append(
            f"{_when(note.at):<19}  {game:<8}  {seat:<4}  {note.kind:<14}  {describe(note)}"
        )
    return "\n".join(lines) + "\n"


def notes_json(notes: Sequence[Note]) -> str:
    """The notes as a JSON array of ``{game, at, seat, kind, ...details}``."""
    rows: list[dict[str, Any]] = [{"game": n.game_id, **n.as_dict()} for n in notes]
    return json.dumps(rows, ensure_ascii=False) + "\n"
