"""The stall watchdog: a table in the middle of a hand that makes no progress for too
long gets a ``stalled`` alert (published with the state, journalled as a note, logged
once), which ends at the next progress.

Progress is anything that changes what the table is doing: an accepted rules event (a
take, a discard, a call, a result), a key that moves a console on (a prompt opened,
a digit typed, a claim answered) or a new game. A key the daemon refuses is not
progress: a bot pressing a refused key forever is exactly the wedge to notice. Time
outside a hand (between hands, at a game's end, in a fault, with the link down) is not
counted: people may pause there, and a fault or a lost link has an alert of its own. The
one phase between hands that is counted is the machine's: the walls being built
(``shuffling``), which waits on no person, so a table whose walls never come up is caught.

:class:`StallClock` is the pure part (no table, an injected clock, so tests need no
sleep); :class:`StallWatch` puts its verdicts on a table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Literal

from tablectl.console.core import TableCore
from tablectl.console.faults import journal_note
from tablectl.phases import PLAYING, public_phase

__all__ = ["IN_HAND", "WATCHED", "StallClock", "StallWatch", "stall_text"]

log = logging.getLogger(__name__)

#: The phases in which a hand is in play: from the dice to its result. A table waiting
#: for the dealer's roll, a confirmation or a new game is not stalled, only paused.
IN_HAND = frozenset({"table_dice", "table_dealing", *PLAYING, "table_result_entry"})
#: The phases the watchdog counts: a hand in play, and the machine building the walls
#: between hands (only the table's motors and sensors move it on, never a person).
WATCHED = IN_HAND | {"table_shuffling"}

Verdict = Literal["stalled", "cleared"]


def stall_text(seconds: float, phase: str) -> str:
    """The alert's text: how long nothing happened, and where the hand stood."""
    return f"no progress for {int(seconds)} s ({public_phase(phase)})"


class StallClock:
    """Says when a hand in play has gone ``after_s`` seconds without progress, and when
    it moves again. ``clock`` is monotonic seconds (injectable for tests)."""

    def __init__(self, after_s: float, clock: Callable[[], float]) -> None:
        if not after_s > 0:
            raise ValueError(f"a stall is at least a moment long, got {after_s!r} s")
        self.after_s = after_s
        self.clock = clock
        self._progress: Hashable = None
        self._last = clock()
        #: Whether the stall has been reported and has not ended yet.
        self.stalled = False

    def idle_for(self) -> float:
        """Seconds since the last progress (or since the hand was last out of play)."""
        return self.clock() - self._last

    def observe(self, in_hand: bool, progress: Hashable) -> Verdict | None:
        """Look at the table once: ``progress`` is any value that changes when the table
        makes progress. Returns "stalled" when a stall begins, "cleared" when one ends."""
        now = self.clock()
        if progress != self._progress:
            self._progress = progress
            self._last = now
            if self.stalled:
                self.stalled = False
                return "cleared"
            return None
        if not in_hand:
            self._last = now  # the time out of play does not count
            return None
        if not self.stalled and now - self._last >= self.after_s:
            self.stalled = True
            return "stalled"
        return None


class StallWatch:
    """A :class:`StallClock` on one table: at each :meth:`check` (the daemon's tick,
    under its lock, inside the tick's journal unit) a stall raises the ``stalled`` alert
    and a ``stalled`` note; progress ends both with a ``stall_over`` note."""

    def __init__(
        self,
        core: TableCore,
        progress: Callable[[], Hashable],
        after_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.core = core
        self.progress = progress
        self.watch = StallClock(after_s, clock)

    def check(self) -> None:
        """Look at the table; raise or end the alert as the clock says."""
        core = self.core
        phase = core.phase
        idle = self.watch.idle_for()
        verdict = self.watch.observe(phase in WATCHED, self.progress())
        if verdict is None:
            return
        if verdict == "stalled":
            since = core.wall_time() - idle
            text = stall_text(idle, phase)
            detail = {"phase": public_phase(phase), "idle_s": round(idle, 1)}
            core.alerts.raise_alert("stalled", None, text, since, params=dict(detail))
            log.warning("[%s] stalled: %s", core.table_id, text)
            journal_note(core, "stalled", None, detail)
        else:
            core.alerts.resolve("stalled")
            log.info("[%s] moving again after %.0f s", core.table_id, idle)
            journal_note(core, "stall_over", None, {"stalled_s": round(idle, 1)})
        core.publish_state()
