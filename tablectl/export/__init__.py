"""Game logs in the standard formats: tenhou.net/6 JSON and mjai JSON Lines (docs/tiles.md,
"Game logs").

Pure like the rules core: from a preset, a game's events and the players' names to the
log, with no I/O.  :func:`~.log.game_log` follows the tiles of every hand;
:mod:`.tenhou6` and :mod:`.mjai` write that record in their format.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from tablectl.export.log import ExportError, GameLog, game_log
from tablectl.export.mjai import mjai
from tablectl.export.tenhou6 import tenhou6
from tablectl.rules.events import Event
from tablectl.rules.options import HouseRules

__all__ = ["FORMATS", "ExportError", "GameLog", "export_text", "game_log", "mjai", "tenhou6"]

#: The formats :func:`export_text` writes.
FORMATS = ("tenhou6", "mjai")


def export_text(
    fmt: str,
    rules: HouseRules,
    events: Iterable[Event],
    names: Sequence[str] | None = None,
    title: tuple[str, str] = ("", ""),
) -> str:
    """The game as text: one line of tenhou.net/6 JSON, or mjai JSON Lines.

    Raises :class:`ExportError` for a game that cannot be written (see
    :func:`~.log.game_log`) and :class:`ValueError` for a format not in :data:`FORMATS`.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown log format {fmt!r}; known: {', '.join(FORMATS)}")
    log = game_log(rules, events, names)

    def dumps(obj: object) -> str:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))

    if fmt == "tenhou6":
        return dumps(tenhou6(log, title)) + "\n"
    return "".join(dumps(line) + "\n" for line in mjai(log))
