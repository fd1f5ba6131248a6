"""Games played elsewhere, read from their logs: tenhou.net's mjlog XML and tenhou.net/6
JSON, as one typed description (:class:`~.game.LogGame`: rules, each hand's deal,
dice and wall where known, actions and results).

Pure: text in, description out, no I/O but :func:`read_log`.  :mod:`.tenhou_wall`
rebuilds tenhou.net's walls and dice from an mjlog's shuffle seed.  See docs/tiles.md,
"Real games".
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from tablectl.logs.game import LogError, LogGame
from tablectl.logs.mjlog import parse_mjlog
from tablectl.logs.tenhou6 import parse_tenhou6

#: The first bytes of a gzip file.
GZIP_MAGIC = b"\x1f\x8b"

__all__ = ["LogError", "LogGame", "parse_log", "parse_mjlog", "parse_tenhou6", "read_log"]


def parse_log(text: str) -> LogGame:
    """The game of ``text``, mjlog XML (it starts with ``<``) or tenhou.net/6 JSON."""
    if text.lstrip().startswith("<"):
        return parse_mjlog(text)
    return parse_tenhou6(text)


def read_log(path: Path) -> LogGame:
    """The game of the log file ``path``, gzipped or not (tenhou.net serves its mjlogs
    gzipped).  Raises :class:`LogError` (also for a file that cannot be read, a broken
    gzip stream or text that is not UTF-8)."""
    try:
        raw = path.read_bytes()
        if raw.startswith(GZIP_MAGIC):
            raw = gzip.decompress(raw)
        text = raw.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise LogError(f"{path}: {exc}") from None
    return parse_log(text)
