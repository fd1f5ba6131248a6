"""Faults the table reports: FAULT over every seat's prompt until staff fix it and press
OK, and the table's own recovery from a link it lost (``HOST_SILENT``).
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware_bridge import messages as m
from tablectl.console.core import TableCore, log
from tablectl.console.hand import HandFlow
from tablectl.console.model import fit
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import TileFlow


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

    async def fault(self, code: m.FaultCode, text: str) -> None:
        """The table reported a fault (``HOST_SILENT``: it stopped while we were away)."""
        core = self.core
        if code == m.FaultCode.HOST_SILENT:
            log.warning("[%s] the table stopped its motors while we were away", core.table_id)
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
        self.faults.add(code)
        if core.phase.startswith("table_"):
            core.resume_phase = core.phase
            await core.trigger("table_fault")
        self.text = fit(text or code.name.replace("_", " ").lower())
        names = ", ".join(sorted(c.name for c in self.faults))
        core.alerts.raise_alert("fault", None, f"{names}: {self.text}", core.wall_time())
        core.publish_state()
        core.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.ALARM, duration_ms=500))

    async def latched(self, faults: Sequence[m.FaultCode]) -> None:
        """The faults a ``TableStatus`` says the table holds latched: one this daemon has
        not seen stands over the prompts as if just reported, until staff clear it.

        HOST_SILENT always reaches the host as a Fault event of its own, which clears it
        (and may roll the dice again): answering it here as well would do that twice. A
        tile reader's fault turns a tile-aware hand to key entry, as its event does."""
        for code in faults:
            if code in self.faults or code == m.FaultCode.HOST_SILENT:
                continue
            log.warning("[%s] the table holds %s latched", self.core.table_id, code.name)
            if code == m.FaultCode.TILE_READER:
                self.tiles.tiles_off("tile reader fault (latched)")
            await self.fault(code, "")

    async def clear(self) -> None:
        """OK on any seat while FAULT shows: clear the latched faults and go back to where
        the hand stood; the prompts the fault stood over come back."""
        core = self.core
        for code in sorted(self.faults):
            core.post_command(m.FaultClear(code=code))
        self.faults.clear()
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
