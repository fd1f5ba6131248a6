"""How many refused staff requests from the broker are journalled one by one.

Anyone who can write to the broker can send requests the table refuses (unsigned,
forged, replayed). Each refusal is worth a journal note and an event for staff, but a
flood of them must not fill the table's SD card: :class:`RefusalLimiter` lets the first
:data:`BURST` of every :data:`PERIOD` through, counts the rest by reason, and hands the
counts over once the period is over (one summary note instead of thousands).
"""

from __future__ import annotations

import collections

__all__ = ["BURST", "PERIOD", "RefusalLimiter"]

#: Refusals journalled one by one per period.
BURST = 5
#: Seconds of a period.
PERIOD = 60.0


class RefusalLimiter:
    """Counts refusals in periods of ``period`` seconds, admitting ``burst`` of each.

    A period starts with the first refusal after the last one ended. The caller asks
    :meth:`admit` for each refusal and, once ``period`` seconds after the first, calls
    :meth:`close` for the counts of those that were not admitted.
    """

    def __init__(self, burst: int = BURST, period: float = PERIOD) -> None:
        self.burst = burst
        self.period = period
        self._started: float | None = None
        self._admitted = 0
        self._suppressed: collections.Counter[str] = collections.Counter()

    def admit(self, why: str, now: float) -> bool:
        """Whether this refusal (for reason ``why``) is journalled by itself; when not,
        it is counted. Opens a period when none is open."""
        if self._started is None:
            self._started = now
        if self._admitted < self.burst:
            self._admitted += 1
            return True
        self._suppressed[_reason(why)] += 1
        return False

    @property
    def open_since(self) -> float | None:
        """When the open period started, or None."""
        return self._started

    def close(self) -> dict[str, int]:
        """End the open period: the refusals it counted but did not admit, by reason
        (empty when all were admitted)."""
        counts = dict(self._suppressed)
        self._started, self._admitted = None, 0
        self._suppressed.clear()
        return counts


def _reason(why: str) -> str:
    """The kind of a reason: a stale timestamp's offset differs each time, and a count
    per offset would be no summary."""
    return "timestamp off this table's clock" if why.startswith("timestamp ") else why
