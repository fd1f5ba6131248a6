"""A key press, routed: to the handler its seat's prompt declares
(:data:`tablectl.console.prompts.PROMPTS`), or to what a seat with no prompt may do in the
phase (:func:`tablectl.console.prompts.idle_spec`).
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.core import log
from tablectl.console.flows import Flows
from tablectl.console.model import PendingKind
from tablectl.console.prompts import PROMPTS, STAFF_PROMPTS, Prompt, idle_spec
from tablectl.rules import events as ev
from tablectl.rules import walltrack


class KeyRouter:
    """Routes each key press; holds no state of its own."""

    def __init__(self, flows: Flows) -> None:
        self.flows = flows
        self.core = flows.core

    async def press(self, seat: int, key: m.Key) -> None:
        """One key press: handled by the seat's prompt, or by the phase when it has none.

        A key that neither takes is refused on that seat's display (with the keys that
        would do something) and a beep, and changes nothing."""
        core = self.core
        console = core.consoles[seat]
        if self.flows.faults.faults:
            if key == m.Key.OK:
                await self.flows.faults.clear()
            else:
                core.refuse(seat, "fault: fix it, then OK")
            return
        if not core.phase.startswith("table_"):
            return  # the hello is not through yet: the table has no phase to act in
        if console.prompt:
            if console.under is not None and console.prompt not in STAFF_PROMPTS:
                console.under = None  # a flow put another prompt over the staff menu
            spec = PROMPTS[console.prompt]
            if key == m.Key.STAFF_CALL and console.prompt not in STAFF_PROMPTS:
                # A player's call for staff is never refused: the staff menu stands over
                # the prompt being answered, which comes back when the menu closes.
                console.under = (console.prompt, console.typed, console.choice)
                core.open(seat, Prompt.STAFF)
                return
            if not spec.accepts(key):
                core.refuse(seat, spec.refusal())
                return
            await spec.handler(self.flows, seat, key)
            core.back_from_staff(seat)
            return
        console.under = None
        if key not in idle_spec(core.phase).keys:
            core.refuse(seat, "not now")
            return
        await self._idle(seat, key)

    def drop_stale(self, seat: int, key: m.Key, pressed_on: str, shows: str) -> None:
        """A key the table sent while ``seat`` showed ``pressed_on`` (a screen of
        :func:`tablectl.console.screens.screen_of`), which it no longer shows: it was meant
        for that screen, not for ``shows``. Dropped with a refusal, so the player sees
        the new screen and answers it (docs/console.md, "A key pressed on another
        screen")."""
        log.info("[%s] seat %d: %s was pressed on %s, the seat shows %s: dropped",
                 self.core.table_id, seat, key.name, pressed_on or "its page",
                 shows or "its page")  # fmt: skip
        self.core.refuse(seat, "screen changed")

    async def _idle(self, seat: int, key: m.Key) -> None:
        """A key the phase takes from a seat with no prompt."""
        core, flows = self.core, self.flows
        console = core.consoles[seat]
        if key == m.Key.DIGIT_0:
            console.page = (console.page + 1) % (4 if core.conditions() is not None else 3)
        elif key == m.Key.LAST_GAME:
            console.last_game = not console.last_game
            core.note("last_game", seat, {"on": console.last_game})
        elif key == m.Key.STAFF_CALL:
            core.open(seat, Prompt.STAFF)
        elif key == m.Key.MENU:
            core.open(seat, Prompt.ABORT)
            # Nothing chosen yet: another prompt's choice (a page at OK?, a staff entry)
            # must not be declared by the first OK (0 was a KeyError that stopped the
            # daemon; random keys on a bot's seat found it, issue 29).
            console.choice = None
        elif key == m.Key.RIICHI:
            refusal = core.apply(ev.Riichi(seat=seat))
            if refusal is not None:
                core.refuse(seat, refusal)
            else:
                console.message = "RIICHI"
        elif key == m.Key.TSUMO:
            refusal = walltrack.check_tsumo(core.state, seat)
            if refusal is not None:
                core.refuse(seat, refusal)
                return
            flows.tiles.check_winner_hand(seat, tsumo=True)
            await flows.entry.open_entry(PendingKind.TSUMO, [seat], ())
        elif key == m.Key.RON:
            await flows.claim.ron_key(seat)
        elif key in (m.Key.PON, m.Key.CHI, m.Key.KAN):
            await flows.claim.call_key(seat, key)
        elif key in (m.Key.TENPAI, m.Key.NOTEN):
            await flows.draw.draw_key(seat, key)
