"""Faults the table reports: FAULT over every seat's prompt until staff fix it and press
OK, and the table's own recovery from a link it lost (``HOST_SILENT``).

Each fault is logged once and journalled as a ``fault`` note (published like every
note), so staff can read the history back (``tablectl journal faults``, the dashboard);
the same fault reported again while it stands is counted, and the count goes with the
``fault_cleared`` note when staff clear it.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware_bridge import messages as m
from tablectl.console.core import TableCore, log
from tablectl.console.hand import HandFlow
from tablectl.console.model import fit
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import TileFlow


def journal_note(core: TableCore, kind: str, seat: int | None, detail: dict[str, object]) -> None:
    """Journal and publish a note without the log line of ``TableCore.note``: for what
    logs its own, better line once (a fault, a stall)."""
    if core.recorder is not None:
        core.recorder.note(kind, seat, detail)
    if core.publisher is not None:
        core.publisher.publish_event({"type": kind, "seat": seat, **detail})


class FaultFlow:
    """Owns the latched faults and what the latest one said (shown over every seat's
    prompt while it lasts). Nothing of it is stored: the table reports its latched
    faults again at the next link up."""

    def __init__(self, core: TableCore, hand: HandFlow, tiles: TileFlow) -> None:
        self.core = core
        self.hand = hand
        self.tiles = tiles
        self.faults: set[m.FaultCode] = set()
        #: What the latest fault said (shown over every seat's prompt while it lasts).
        self.text = ""
        #: Reports of a fault that already stood, by code, since the last clear.
        self.repeats: dict[m.FaultCode, int] = {}
        #: The link session whose HOST_SILENT was answered (the table queues one for every
        #: session it lost while we were away: a 120 s unplug brought 15), and how many
        #: more came in it, not yet reported (:meth:`report_counted`).
        self.silent_session: int | None = None
        self.silent_more = 0

    def _record(self, code: m.FaultCode, text: str, *, latched: bool = False) -> None:
        """The one log line and the journal note of a fault."""
        core = self.core
        said = f": {text}" if text else ""
        held = " (held latched by the table)" if latched else ""
        log.warning("[%s] fault %s%s%s", core.table_id, code.name, said, held)
        detail: dict[str, object] = {"code": code.name, "text": text}
        if latched:
            detail["latched"] = True
        journal_note(core, "fault", None, detail)

    async def fault(self, code: m.FaultCode, text: str) -> None:
        """The table reported a fault (``HOST_SILENT``: it stopped while we were away)."""
        await self._fault(code, text)

    async def _fault(self, code: m.FaultCode, text: str, *, latched: bool = False) -> None:
        core = self.core
        if code == m.FaultCode.HOST_SILENT:
            if self.silent_session == core.sessions:
                # Another session the table lost while we were away: the same stop of
                # its motors, answered once.
                self.silent_more += 1
                return
            self.silent_session = core.sessions
            self._record(code, text or "the table stopped its motors while we were away")
            core.post_command(m.FaultClear(code=code))
            if core.phase in ("table_shuffling", "table_walls_up"):
                await core.to("table_idle")
                await self.hand.start_hand()
            elif core.phase == "table_dice" and core.roll_session != core.sessions:
                # The table reports its events in order, and this one when the line went:
                # had it rolled, its DiceResult would have come before. So our DiceRoll
                # was lost with the session (commands are not kept across it), and the
                # dealer, who already pressed OK, waits for dice that never come. Not so
                # for a DiceRoll sent in this session: the fault tells of an older one
                # (queued behind a backlog), and the table rolls what it was asked to.
                log.info("[%s] the roll was lost with the link: rolling again", core.table_id)
                core.post_command(m.DiceRoll())
                core.roll_session = core.sessions
            return
        if code in self.faults:
            # Reported again while it stands (a TableStatus after a reconnect, a table
            # that repeats itself): counted, not logged or journalled again.
            self.repeats[code] = self.repeats.get(code, 0) + 1
            return
        self._record(code, text, latched=latched)
        self.faults.add(code)
        if core.phase.startswith("table_"):
            core.resume_phase = core.phase
            await core.trigger("table_fault")
        self.text = fit(text or code.name.replace("_", " ").lower())
        codes = sorted(c.name for c in self.faults)
        text = f"{', '.join(codes)}: {self.text}"
        core.alerts.raise_alert("fault", None, text, core.wall_time(), params={"codes": codes})
        core.publish_state()
        core.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.ALARM, duration_ms=500))

    def report_counted(self) -> None:
        """Log and journal once how many HOST_SILENT faults came after the one answered
        (the daemon calls this every tick; nothing to do most of the time)."""
        if not self.silent_more:
            return
        core, count = self.core, self.silent_more
        self.silent_more = 0
        why = "one for each session the table lost while we were away"
        log.info(
            "[%s] HOST_SILENT came %d more times (%s): answered once", core.table_id, count, why
        )
        journal_note(core, "fault_repeats", None, {"code": "HOST_SILENT", "count": count})

    async def latched(self, faults: Sequence[m.FaultCode]) -> None:
        """The faults a ``TableStatus`` says the table holds latched: one this daemon has
        not seen stands over the prompts as if just reported, until staff clear it.

        HOST_SILENT always reaches the host as a Fault event of its own, which clears it
        (and may roll the dice again): answering it here as well would do that twice. A
        tile reader's fault turns a tile-aware hand to key entry, as its event does."""
        for code in faults:
            if code in self.faults or code == m.FaultCode.HOST_SILENT:
                continue
            if code == m.FaultCode.TILE_READER:
                self.tiles.tiles_off("tile reader fault (latched)")
            await self._fault(code, "", latched=True)

    async def clear(self) -> None:
        """OK on any seat while FAULT shows: clear the latched faults and go back to where
        the hand stood; the prompts the fault stood over come back."""
        core = self.core
        for code in sorted(self.faults):
            core.post_command(m.FaultClear(code=code))
        if self.faults:
            detail: dict[str, object] = {"codes": sorted(c.name for c in self.faults)}
            if self.repeats:
                detail["repeats"] = {c.name: n for c, n in sorted(self.repeats.items())}
            journal_note(core, "fault_cleared", None, detail)
        self.faults.clear()
        self.repeats.clear()
        self.text = ""
        core.alerts.resolve("fault")
        core.publish_state()
        if core.phase != "fault":
            return  # the link went down during the fault: link_up resumes the phase
        target = core.resume_phase
        if target == "table_dice":
            # The fault came while waiting for the dice (a roll refused, the dice stuck):
            # no DiceResult is coming, so the dealer rolls again.
            await core.to("table_walls_up")
            core.open(core.state.dealer, Prompt.ROLL, typed=None, message=None)
            return
        await core.to(target)
        await self.hand.takes_after_fault()
        if target in ("table_shuffling", "table_walls_up", "table_idle"):
            await core.to("table_idle")
            await self.hand.start_hand()
