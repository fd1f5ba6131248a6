"""How a hand ends without a win: the exhaustive draw's TENPAI?, the abortive draw's
ABORT?, and the all-last dealer's STOP?.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.host import ConsoleHost
from tablectl.console.model import Pending
from tablectl.console.prompts import HAND_PHASES as _HAND_PHASES
from tablectl.rules import events as ev
from tablectl.rules import walltrack

#: Phases in which a hand is under way and can end.
HAND_PHASES = tuple(sorted(_HAND_PHASES))
ABORT_MENU: dict[int, ev.AbortReason] = {
    1: "nine_terminals",
    2: "four_winds",
    3: "four_riichi",
    4: "four_kans",
}
ABORT_LABELS = {1: "9 TERMINALS", 2: "4 WINDS", 3: "4 RIICHI", 4: "4 KANS"}


class DrawFlow(ConsoleHost):
    """How a hand ends without a win: the exhaustive draw's TENPAI?, the abortive draw's"""

    async def _draw_key(self, seat: int, key: m.Key) -> None:
        if self.state.tiles is not None:
            # The tiles decide tenpai and noten once the last discard has passed.
            self._refuse(seat, "tiles decide: no key")
            return
        wall = self.state.wall
        implied = (
            () if wall is None else self._implied_discard(actor=(wall.turn + 1) % self.players)
        )
        refusal = self._check_after(implied, walltrack.check_draw)
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        self._apply(*implied)
        self.pending = Pending(kind="draw", seats=list(range(self.players)))
        for console in self.consoles:
            console.prompt = "TENPAI?"
        await self._trigger("enter_result")
        await self._prompt_key(seat, key)

    async def _tenpai_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        console = self.consoles[seat]
        if pending is None or pending.kind != "draw":
            console.prompt = ""
            return
        if key == m.Key.MENU and self.rules.flow.nagashi != "none":
            pending.nagashi ^= {seat}
            console.typed = "NAGASHI" if seat in pending.nagashi else ""
            return
        if key not in (m.Key.TENPAI, m.Key.NOTEN):
            return
        if key == m.Key.TENPAI:
            pending.tenpai.add(seat)
        pending.answered.add(seat)
        console.prompt, console.typed = "", ""
        console.message = "TENPAI" if key == m.Key.TENPAI else "NOTEN"
        if len(pending.answered) < self.players:
            return
        draw = ev.Draw(tenpai=tuple(sorted(pending.tenpai)), nagashi=tuple(sorted(pending.nagashi)))
        refusal = self._apply(draw)
        if refusal is None:
            await self._trigger("hand_over")
            return
        self.pending = Pending(kind="draw", seats=list(range(self.players)))
        for other in range(self.players):
            self.consoles[other].prompt = "TENPAI?"
            self._refuse(other, refusal)

    async def _abort_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.choice = "", "", None
        elif int(key) in ABORT_MENU:
            console.choice = int(key)
            console.typed = ABORT_LABELS[int(key)]
        elif key == m.Key.OK and console.choice is not None:
            reason = ABORT_MENU[console.choice]
            console.prompt, console.typed, console.choice = "", "", None
            abort = ev.Abort(reason=reason)
            refusal = self._apply(abort)
            wall = self.state.wall
            if refusal is not None and wall is not None:
                # Four winds and four kans come after a discard, which is not sensed.
                implied = self._implied_discard(actor=(wall.turn + 1) % self.players)
                if implied and self._apply(*implied, abort) is None:
                    refusal = None
            if refusal is not None:
                self._refuse(seat, refusal)
            elif self.phase.startswith(HAND_PHASES):
                await self._trigger("hand_over")

    async def _stop_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.OK:
            refusal = self._apply(ev.Stop())
            if refusal is not None:
                self._refuse(seat, refusal)
                console.prompt = "CONFIRM"
                return
            # The game is over: everyone confirms the final result.
            self.pending = Pending(kind="confirm", seats=list(range(self.players)))
            for other in self.consoles:
                other.prompt = "GAME OVER"
            self._show_final()
        elif key == m.Key.CANCEL:
            console.prompt = "CONFIRM"
            await self._confirm_prompt(seat, m.Key.OK)
