"""The staff menu: STAFF?, PIN?, SEAT?, RULES?, and the game control staff have (a new
game, a correction), from a console or from ``tablectl ctl``.
"""

from __future__ import annotations

from typing import Any

from firmware_bridge import messages as m
from tablectl.console import prompts
from tablectl.console.host import ConsoleHost
from tablectl.console.model import fit
from tablectl.console.prompts import STAFF_MENU
from tablectl.console.staff import LOCKOUT_S
from tablectl.rules import events as ev
from tablectl.rules.state import initial_state


class StaffFlow(ConsoleHost):
    """The staff menu: STAFF?, PIN?, SEAT?, RULES?, and the game control staff have (a new"""

    async def _staff_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt = ""
            return
        choice = int(key)
        if choice == 0:  # calling staff is open to everyone
            console.prompt = ""
            self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.LONG, duration_ms=1000))
            console.message = "STAFF CALLED"
            self._note("staff_call", seat)
            return
        why = self._staff_unavailable(choice)
        if why is not None:
            console.prompt = ""
            self._refuse(seat, why)
            return
        console.choice = choice
        self._open(seat, "PIN?")
        console.message = fit(STAFF_MENU[choice].upper())

    def _staff_unavailable(self, choice: int) -> str | None:
        """Why staff action ``choice`` cannot be taken now (before asking for the PIN)."""
        if not self.staff.configured:
            return "no staff PIN set"
        locked = self.staff.locked_for()
        if locked > 0:
            return f"staff locked {int(locked) + 1} s"
        phase = self.phase
        if choice in (1, 2) and phase not in prompts.HAND_PHASES:
            return "no hand now"
        if choice == 3:
            return self._correction_unavailable()
        if choice == 5 and not self.tray_mismatch:
            return "the trays agree"
        return None

    async def _pin_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.choice, console.message = "", "", None, ""
            return
        if key <= m.Key.DIGIT_9:
            if len(console.typed) < 8:
                console.typed += str(int(key))
            return
        pin, console.typed = console.typed, ""
        choice = console.choice
        action = STAFF_MENU.get(choice or 0, "?")
        verdict = self.staff.check(pin)
        if verdict != "ok":
            self._note("staff_pin_failed", seat, {"action": action, "verdict": verdict})
            console.prompt, console.choice = "", None
            self._refuse(
                seat,
                {
                    "wrong": "wrong PIN",
                    "locked": f"PIN: locked {int(LOCKOUT_S)} s",
                    "still_locked": f"staff locked {int(self.staff.locked_for()) + 1} s",
                    "not_configured": "no staff PIN set",
                }[verdict],
            )
            return
        console.staff, console.choice, console.message = choice, None, ""
        why = None if choice is None else self._staff_unavailable(choice)
        if choice is None or why is not None:
            console.prompt, console.staff = "", None
            self._refuse(seat, why or "choose again")
            return
        if choice in (1, 2):
            self._open(seat, "SEAT?")
            console.message = fit(action.upper())
        elif choice == 3:
            console.prompt, console.staff = "", None
            failure = await self._reopen_last_hand(seat, by=f"staff at seat {seat}")
            if failure is not None:
                self._refuse(seat, failure)
        elif choice == 4:
            self._open(seat, "RULES?", typed="0")
            console.message = fit(self.rules_menu[0])
        elif choice == 5:
            console.prompt, console.staff = "", None
            self.tray_override = True
            self._note("staff_action", seat, {"action": "tray_override"})
            console.message = "TRAYS: PLAY ON"

    async def _seat_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key <= m.Key.DIGIT_9:
            if int(key) < self.players:
                console.typed = str(int(key))
            else:
                self._refuse(seat, f"seats are 0-{self.players - 1}")
        elif key == m.Key.CANCEL:
            console.prompt, console.typed, console.staff = "", "", None
        elif key == m.Key.OK and console.typed:
            target = int(console.typed)
            chombo = console.staff == 1
            event: ev.Event = ev.Chombo(seat=target) if chombo else ev.FalseCall(seat=target)
            console.prompt, console.typed, console.staff = "", "", None
            if chombo:
                # A chombo ends the hand: whatever was being entered is void.
                self.pending = None
                self.claim_deadline = None
            refusal = self._apply(event)
            if refusal is not None:
                self._refuse(seat, refusal)
                return
            action = "chombo" if chombo else "false_call"
            self._note("staff_action", seat, {"action": action, "target": target})
            if chombo and self.phase in prompts.HAND_PHASES:
                await self._trigger("hand_over")
        else:
            self._refuse(seat, "a seat digit, then OK")

    async def _rules_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        menu = self.rules_menu
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.staff, console.message = "", "", None, ""
            return
        index = int(console.typed or 0)
        if key == m.Key.MENU:
            index = (index + 1) % len(menu)
        elif key <= m.Key.DIGIT_9:
            if int(key) >= len(menu):
                self._refuse(seat, f"rules 0-{len(menu) - 1}; MENU: next")
                return
            index = int(key)
        if key != m.Key.OK:
            console.typed = str(index)
            console.message = fit(menu[index])
            return
        console.prompt, console.typed, console.staff, console.message = "", "", None, ""
        ref = menu[index]
        failure = await self.new_game(ref, by=f"staff at seat {seat}", seat=seat)
        if failure is not None:
            self._refuse(seat, failure)

    async def new_game(
        self, rules_ref: str | None = None, *, by: str = "ctl", seat: int | None = None
    ) -> str | None:
        """Staff end the game in progress (kept as abandoned unless it had finished) and
        start a new one, with other rules if ``rules_ref`` names them. Returns why not,
        changing nothing, or None."""
        rules = self.rules
        ref = self.rules_ref if rules_ref is None else rules_ref
        if ref != self.rules_ref:
            if self.load_rules is None:
                return "this table cannot change its rules"
            try:
                rules = self.load_rules(ref)
            except ValueError as exc:
                return f"rules {ref!r}: {exc}"
            if rules.players != self.players:
                return f"{ref} is for {rules.players} players; this table has {self.players}"
        if not self.phase.startswith("table_"):
            return "the table is not connected"
        abandoned = self.game_started and not self.state.finished
        detail: dict[str, Any] = {"action": "new_game", "by": by, "rules": ref}
        detail["abandoned"] = abandoned
        if abandoned:
            detail["scores"] = list(self.state.scores)  # what the abandoned game stood at
        # Noted first, so that the note belongs to the game it ends.
        self._note("staff_action", seat, detail)
        if abandoned:
            game_id = getattr(self.recorder, "game_id", None)
            if self.recorder is not None:
                self.recorder.game_abandoned()
            if self.publisher is not None:
                self.publisher.publish_game(
                    {
                        "table": self.table_id,
                        "game_id": game_id,
                        "rules": self.rules.name,
                        "hands": self.state.hands_played,
                        "abandoned": True,
                        "scores": list(self.state.scores),
                        "final": None,
                    }
                )
        self.rules, self.rules_ref = rules, ref
        self.rules_menu = tuple(dict.fromkeys((ref, *self.rules_menu)))
        self.state = initial_state(rules)
        self.game_started = False
        self.clock_started = None
        self.pending = None
        self.claim_deadline = None
        self.tray_override = False
        for console in self.consoles:
            console.prompt, console.typed, console.choice, console.staff = "", "", None, None
            console.message, console.last_game = "", False
        self.alerts.resolve("last_game", any_seat=True)
        self.last_hand = None
        await self._trigger("abandon")
        await self._start_hand()
        return None

    async def staff_command(self, cmd: str, rules_ref: str | None, *, by: str) -> str | None:
        """Game control from outside the table (``tablectl ctl``, the parlor's dashboard):
        ``undo`` the last hand, or anything else a ``new_game`` (under ``rules_ref``).
        Returns why not, changing nothing, or None."""
        if cmd == "undo":
            return await self.correct_last_hand(by=by)
        return await self.new_game(rules_ref, by=by)

    async def correct_last_hand(self, *, by: str = "ctl") -> str | None:
        """Staff reopen the last settled hand for entry again. Returns why not, or None."""
        return await self._reopen_last_hand(None, by=by)
