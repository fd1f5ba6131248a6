"""The staff menu: STAFF?, PIN?, SEAT?, RULES?, and the game control staff have (a new
game, a correction), from a console or from ``tablectl ctl``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any

from firmware_bridge import messages as m
from tablectl.alerts import check_stored_call
from tablectl.console.confirm import ConfirmFlow
from tablectl.console.core import TableCore
from tablectl.console.hand import HandFlow
from tablectl.console.model import fit
from tablectl.console.prompts import STAFF_MENU, Prompt
from tablectl.console.staff import LOCKOUT_S, StaffGate
from tablectl.console.trays import Trays
from tablectl.phases import HAND_PHASES
from tablectl.rules import events as ev
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.seating import Seating
from tablectl.seating_players import MEMBER_DIGITS


class StaffFlow:
    """The staff menu: STAFF?, PIN?, SEAT?, RULES?, and the game control staff have (a new
    game, a correction), from a console or from ``tablectl ctl``.

    Owns the staff PIN's gate (wrong PINs, the lockout) and the rules staff may pick;
    stores the gate and the staff calls nobody answered yet. Declares ``STAFF?``, ``PIN?``,
    ``SEAT?`` and ``RULES?``."""

    def __init__(
        self,
        core: TableCore,
        *,
        confirm: ConfirmFlow,
        hand: HandFlow,
        trays: Trays,
        gate: StaffGate,
        rules_menu: Sequence[str],
        load_rules: Callable[[str], HouseRules] | None,
        seating: Seating | None = None,
    ) -> None:
        self.core = core
        self.confirm = confirm
        self.hand = hand
        self.trays = trays
        #: Staff PIN check and lockout; unset: staff actions only from ``tablectl ctl``.
        self.gate = gate
        #: Rules staff may pick for a new game on a console (RULES?); the current first.
        self.rules_menu = tuple(dict.fromkeys((core.rules_ref, *rules_menu)))
        #: Called when :attr:`rules_menu` changed (a new game under other rules puts
        #: them first): the daemon publishes the parlor's menu again.
        self.on_menu_changed: Callable[[], None] | None = None
        self.load_rules = load_rules
        #: Seats a member at a console between games (entry 6); None: not offered.
        self.seating = seating
        self._restored_calls: list[dict[str, Any] | int] = []

    async def staff_prompt(self, seat: int, key: m.Key) -> None:
        """``STAFF?``: 0 calls staff; the other entries ask for the PIN."""
        console = self.core.consoles[seat]
        if key == m.Key.CANCEL:
            self.core.close(seat)
            return
        choice = int(key)
        if choice == 0:  # calling staff is open to everyone
            self.core.close(seat)
            self.core.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.LONG, duration_ms=1000))
            console.message = "STAFF CALLED"
            self.core.note("staff_call", seat)
            return
        why = self._staff_unavailable(choice)
        if why is not None:
            self.core.close(seat)
            self.core.refuse(seat, why)
            return
        console.choice = choice
        self.core.open(seat, Prompt.PIN, message=fit(STAFF_MENU[choice].upper()))

    def _staff_unavailable(self, choice: int) -> str | None:
        """Why staff action ``choice`` cannot be taken now (before asking for the PIN)."""
        if not self.gate.configured:
            return "no staff PIN set"
        locked = self.gate.locked_for()
        if locked > 0:
            return f"staff locked {int(locked) + 1} s"
        phase = self.core.phase
        if choice in (1, 2) and phase not in HAND_PHASES:
            return "no hand now"
        if choice == 3:
            return self.confirm.correction_unavailable()
        if choice == 5 and not self.trays.mismatch:
            return "the trays agree"
        if choice == 6:
            if self.seating is None or self.seating.players_path is None:
                return "no player list"
            if self.seating.unavailable() is not None:
                return "between games only"
        return None

    async def pin_prompt(self, seat: int, key: m.Key) -> None:
        """``PIN?``: digits, then OK checks the PIN and carries out the chosen action."""
        console = self.core.consoles[seat]
        if key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed, console.choice, console.message = "", None, ""
            return
        if key <= m.Key.DIGIT_9:
            if len(console.typed) < 8:
                console.typed += str(int(key))
            return
        pin, console.typed = console.typed, ""
        choice = console.choice
        action = STAFF_MENU.get(choice or 0, "?")
        verdict = self.gate.check(pin)
        if verdict != "ok":
            self.core.note("staff_pin_failed", seat, {"action": action, "verdict": verdict})
            self.core.close(seat)
            console.choice = None
            self.core.refuse(
                seat,
                {
                    "wrong": "wrong PIN",
                    "locked": f"PIN: locked {int(LOCKOUT_S)} s",
                    "still_locked": f"staff locked {int(self.gate.locked_for()) + 1} s",
                    "not_configured": "no staff PIN set",
                }[verdict],
            )
            return
        console.staff, console.choice, console.message = choice, None, ""
        why = None if choice is None else self._staff_unavailable(choice)
        if choice is None or why is not None:
            self.core.close(seat)
            console.staff = None
            self.core.refuse(seat, why or "choose again")
            return
        if choice in (1, 2):
            self.core.open(seat, Prompt.SEAT, message=fit(action.upper()))
        elif choice == 3:
            self.core.close(seat)
            console.staff = None
            failure = await self.confirm.reopen_last_hand(seat, by=f"staff at seat {seat}")
            if failure is not None:
                self.core.refuse(seat, failure)
        elif choice == 4:
            self.core.open(seat, Prompt.RULES, typed="0", message=fit(self.rules_menu[0]))
        elif choice == 6:
            self.core.open(seat, Prompt.MEMBER, message="MEMBER NO.")
        elif choice == 5:
            self.core.close(seat)
            console.staff = None
            self.override_trays(seat)
            console.message = "TRAYS: PLAY ON"

    async def seat_prompt(self, seat: int, key: m.Key) -> None:
        """``SEAT?``: the seat a chombo or false call is for, then OK."""
        console = self.core.consoles[seat]
        if key <= m.Key.DIGIT_9:
            if int(key) < self.core.players:
                console.typed = str(int(key))
            else:
                self.core.refuse(seat, f"seats are 0-{self.core.players - 1}")
        elif key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed, console.staff = "", None
        elif key == m.Key.OK and console.typed:
            target = int(console.typed)
            action = "chombo" if console.staff == 1 else "false_call"
            self.core.close(seat)
            console.typed, console.staff = "", None
            refusal = await self.penalty(action, target, seat=seat)
            if refusal is not None:
                self.core.refuse(seat, refusal)
        else:
            self.core.refuse(seat, "a seat digit, then OK")

    def override_trays(self, seat: int | None, *, by: str | None = None) -> str | None:
        """Staff let play go on although the trays differ from the scores (until the next
        game). Returns why not, or None."""
        if not self.trays.mismatch:
            return "the trays agree"
        self.trays.override = True
        detail: dict[str, Any] = {"action": "tray_override"}
        if by is not None:
            detail["by"] = by
        self.core.note("staff_action", seat, detail)
        return None

    async def penalty(
        self, action: str, target: int, *, seat: int | None = None, by: str | None = None
    ) -> Refusal | str | None:
        """Staff give seat ``target`` a ``chombo`` (the hand ends) or a ``false_call``.
        Returns why not (the rules core's refusal, or no hand now), changing nothing, or
        None."""
        if self.core.phase not in HAND_PHASES:
            return "no hand now"
        if not 0 <= target < self.core.players:
            return f"seats are 0-{self.core.players - 1}"
        chombo = action == "chombo"
        event: ev.Event = ev.Chombo(seat=target) if chombo else ev.FalseCall(seat=target)
        pending, deadline = self.core.pending, self.core.claim_deadline
        if chombo:
            # A chombo ends the hand: whatever was being entered is void.
            self.core.pending = None
            self.core.claim_deadline = None
        refusal = self.core.apply(event)
        if refusal is not None:
            self.core.pending, self.core.claim_deadline = pending, deadline
            return refusal
        detail: dict[str, Any] = {"action": action, "target": target}
        if by is not None:
            detail["by"] = by
        self.core.note("staff_action", seat, detail)
        if chombo and self.core.phase in HAND_PHASES:
            await self.core.trigger("hand_over")
        return None

    async def rules_prompt(self, seat: int, key: m.Key) -> None:
        """``RULES?``: pick the new game's rules (digit or MENU), OK starts it."""
        console = self.core.consoles[seat]
        menu = self.rules_menu
        if key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed, console.staff, console.message = "", None, ""
            return
        index = int(console.typed or 0)
        if key == m.Key.MENU:
            index = (index + 1) % len(menu)
        elif key <= m.Key.DIGIT_9:
            if int(key) >= len(menu):
                self.core.refuse(seat, f"rules 0-{len(menu) - 1}; MENU: next")
                return
            index = int(key)
        if key != m.Key.OK:
            console.typed = str(index)
            console.message = fit(menu[index])
            return
        self.core.close(seat)
        console.typed, console.staff, console.message = "", None, ""
        ref = menu[index]
        failure = await self.new_game(ref, by=f"staff at seat {seat}", seat=seat)
        if failure is not None:
            self.core.refuse(seat, failure)

    async def member_prompt(self, seat: int, key: m.Key) -> None:
        """``MEMBER?``: a member number from the parlor's player list, then OK seats that
        member at this console's seat for the next game (see :mod:`tablectl.seating`)."""
        console = self.core.consoles[seat]
        if key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed, console.staff, console.message = "", None, ""
            return
        if key <= m.Key.DIGIT_9:
            if len(console.typed) < MEMBER_DIGITS:
                console.typed += str(int(key))
                console.message = console.typed
            return
        if key != m.Key.OK or not console.typed:
            self.core.refuse(seat, "a member number, then OK")
            return
        member = console.typed
        self.core.close(seat)
        console.typed, console.staff, console.message = "", None, ""
        assert self.seating is not None  # entry 6 is only offered with seating
        failure = self.seating.seat_member(seat, member, by=f"staff at seat {seat}")
        if failure is not None:
            self.core.refuse(seat, failure)
        else:
            console.message = fit(f"SEATED #{member}")

    async def new_game(
        self, rules_ref: str | None = None, *, by: str = "ctl", seat: int | None = None
    ) -> str | None:
        """Staff end the game in progress (kept as abandoned unless it had finished) and
        start a new one, with other rules if ``rules_ref`` names them. Returns why not,
        changing nothing, or None."""
        rules = self.core.rules
        ref = self.core.rules_ref if rules_ref is None else rules_ref
        if ref != self.core.rules_ref:
            if self.load_rules is None:
                return "this table cannot change its rules"
            try:
                rules = self.load_rules(ref)
            except ValueError as exc:
                return f"rules {ref!r}: {exc}"
            if rules.players != self.core.players:
                return f"{ref} is for {rules.players} players; this table has {self.core.players}"
        if not self.core.phase.startswith("table_"):
            return "the table is not connected"
        abandoned = self.hand.game_started and not self.core.state.finished
        detail: dict[str, Any] = {"action": "new_game", "by": by, "rules": ref}
        detail["abandoned"] = abandoned
        if abandoned:
            detail["scores"] = list(self.core.state.scores)  # what the abandoned game stood at
        # Noted first, so that the note belongs to the game it ends.
        self.core.note("staff_action", seat, detail)
        if abandoned:
            game_id = getattr(self.core.recorder, "game_id", None)
            if self.core.recorder is not None:
                self.core.recorder.game_abandoned()
            if self.core.publisher is not None:
                self.core.publisher.publish_game(
                    {
                        "table": self.core.table_id,
                        "game_id": game_id,
                        "rules": self.core.rules.name,
                        "hands": self.core.state.hands_played,
                        "abandoned": True,
                        "scores": list(self.core.state.scores),
                        "final": None,
                    }
                )
        self.core.rules, self.core.rules_ref = rules, ref
        menu, self.rules_menu = self.rules_menu, tuple(dict.fromkeys((ref, *self.rules_menu)))
        if self.rules_menu != menu and self.on_menu_changed is not None:
            self.on_menu_changed()
        self.core.pending = None
        self.core.claim_deadline = None
        self.trays.override = False
        self.core.clear_consoles()
        self.hand.fresh_game(rules)
        await self.core.trigger("abandon")
        await self.hand.start_hand()
        return None

    async def staff_command(
        self, cmd: str, rules_ref: str | None, *, by: str, seat: int | None = None
    ) -> str | None:
        """Game control from outside the table (``tablectl ctl``, the parlor's dashboard),
        journalled with ``by``: ``undo`` the last hand, ``tray_override``, a ``chombo`` or
        ``false_call`` for ``seat``, ``abandon`` (a new game under the same rules), or
        anything else a ``new_game`` (under ``rules_ref``). Returns why not, changing
        nothing, or None."""
        if cmd == "undo":
            return await self.correct_last_hand(by=by)
        if cmd == "tray_override":
            return self.override_trays(None, by=by)
        if cmd in ("chombo", "false_call"):
            if seat is None:
                return f"{cmd} needs the seat it is for"
            refusal = await self.penalty(cmd, seat, by=by)
            return refusal.message if isinstance(refusal, Refusal) else refusal
        if cmd == "abandon":
            return await self.new_game(None, by=by)
        return await self.new_game(rules_ref, by=by)

    async def correct_last_hand(self, *, by: str = "ctl") -> str | None:
        """Staff reopen the last settled hand for entry again. Returns why not, or None."""
        return await self.confirm.reopen_last_hand(None, by=by)

    # ------------------------------------------------------------------ stored flow

    def snapshot(self) -> dict[str, Any]:
        """The PIN gate's failures and lockout, and the calls not yet answered."""
        snapshot: dict[str, Any] = {
            "staff_failures": self.gate.failures,
            "staff_locked_s": round(self.gate.locked_for(), 3),
            # Staff calls nobody answered yet: a restart must not silence them. (LAST
            # GAME and a tray mismatch come back from the consoles and trays.)
            "staff_calls": self.core.alerts.seats("staff_call"),
        }
        calls = self.core.alerts.calls()
        if calls:
            # The open calls (staff calls, LAST GAME) with the words they were raised
            # with: a restart must not re-word them (the dealer may have moved on). Only
            # when there are some: snapshots without calls stay as they were.
            snapshot["calls"] = calls
        return snapshot

    def key(self) -> Hashable:
        """The durable part of :meth:`snapshot` (not the lockout's running time)."""
        calls = tuple((c["kind"], c["seat"], c["words"]) for c in self.core.alerts.calls())
        return (self.gate.failures, calls)

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read :meth:`snapshot`'s part; the returned call takes it up (the staff calls
        are raised again by :meth:`restore_alerts`). Raises ValueError (KeyError,
        TypeError) on a bad one."""
        failures = int(snapshot.get("staff_failures", 0))
        locked_s = float(snapshot.get("staff_locked_s", 0.0))
        calls: list[dict[str, Any] | int]
        if "calls" in snapshot:
            calls = [check_stored_call(call) for call in snapshot["calls"]]
        else:  # stored before the calls kept their words: the staff calls' seats only
            calls = [int(s) for s in snapshot.get("staff_calls", [])]

        def commit() -> None:
            self.gate.failures = failures
            self.gate.locked_until = self.core.now() + locked_s if locked_s > 0 else None
            self._restored_calls = calls

        return commit

    def restore_alerts(self) -> None:
        """The restored calls stand as alerts again, worded as when they were raised
        (a call stored by seat only is worded as the table is now)."""
        now = self.core.wall_time()
        for call in self._restored_calls:
            if isinstance(call, int):
                self.core.raise_call("staff_call", call, now)
            else:
                self.core.alerts.restore_call(call)
        self._restored_calls = []
