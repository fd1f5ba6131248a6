"""A log that a flood cannot fill: each kind of repeated warning is logged in full the
first time, then counted, and at most once per window a line says how many more came.

A noisy or hostile line (50,000 undecodable frames) once wrote a warning per frame, 7.8 MB
of log in minutes on an SD card; through this it writes one line per kind per minute.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

#: How often a kind of warning may write a line after its first (s).
WINDOW_S = 60.0


@dataclass
class _Kind:
    #: When this kind last wrote a line.
    logged_at: float
    #: Occurrences since then that wrote nothing.
    held: int = 0


class RateLimitedLog:
    """Writes to ``logger`` at most one line per kind per ``window_s`` seconds.

    The first occurrence of a kind is logged as given. Later ones within the window only
    count; the first one after the window writes ``"N more <kind> in the last T s
    (latest: ...)"``, N counting it too, and starts a new window. A kind quiet for a whole
    window is logged in full again. :meth:`flush` writes what is still held (at close).
    """

    def __init__(
        self,
        logger: logging.Logger,
        *,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        prefix: str = "",
    ) -> None:
        self.logger = logger
        self.prefix = prefix
        self.window_s = window_s
        self.clock = clock
        self._kinds: dict[str, _Kind] = {}

    def log(self, level: int, kind: str, msg: str, *args: object) -> None:
        """One occurrence of ``kind``: ``msg % args`` is logged now, or counted."""
        now = self.clock()
        seen = self._kinds.get(kind)
        if seen is None:
            self._kinds[kind] = _Kind(now)
            self.logger.log(level, msg, *args)
            return
        if now - seen.logged_at < self.window_s:
            seen.held += 1
            return
        if seen.held:
            self.logger.log(
                level,
                self.prefix + "%d more %s in the last %d s (latest: " + msg + ")",
                seen.held + 1,
                kind,
                round(now - seen.logged_at),
                *args,
            )
        else:
            self.logger.log(level, msg, *args)
        seen.logged_at, seen.held = now, 0

    def warning(self, kind: str, msg: str, *args: object) -> None:
        """:meth:`log` at WARNING."""
        self.log(logging.WARNING, kind, msg, *args)

    def error(self, kind: str, msg: str, *args: object) -> None:
        """:meth:`log` at ERROR."""
        self.log(logging.ERROR, kind, msg, *args)

    def held(self, kind: str) -> int:
        """Occurrences of ``kind`` counted but not logged yet."""
        seen = self._kinds.get(kind)
        return 0 if seen is None else seen.held

    def flush(self, level: int = logging.WARNING) -> None:
        """Log the count of every kind still held (when the source closes), so that the
        log never under-reports a flood that stopped inside a window."""
        now = self.clock()
        for kind, seen in self._kinds.items():
            if seen.held:
                self.logger.log(
                    level,
                    self.prefix + "%d more %s in the last %d s",
                    seen.held,
                    kind,
                    round(now - seen.logged_at),
                )
                seen.logged_at, seen.held = now, 0
