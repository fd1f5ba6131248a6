"""After a hand: CONFIRM (and GAME OVER) on every seat, the next hand or game, and the
dealer's ROLL? that starts the next hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware_bridge import messages as m
from tablectl.console import prompts
from tablectl.console.host import ConsoleHost
from tablectl.console.model import Pending, WinEntry, fit, signed
from tablectl.rules import events as ev
from tablectl.rules.state import initial_state


class ConfirmFlow(ConsoleHost):
    """After a hand: CONFIRM (and GAME OVER) on every seat, the next hand or game, and the"""

    def _hand_settled(self, deltas: Sequence[int]) -> None:
        self.pending = Pending(kind="confirm", seats=list(range(self.players)))
        for seat, console in enumerate(self.consoles):
            console.prompt = "CONFIRM"
            console.typed = ""
            console.message = fit(f"{signed(deltas[seat])} = {self.state.scores[seat]}")
        if self.state.finished:
            for console in self.consoles:
                console.prompt = "GAME OVER"
            self._show_final()
        self.claim_deadline = None
        self.tray_override = False
        self._compare_trays()

    def _show_final(self) -> None:
        final = self.state.final
        assert final is not None
        for seat, console in enumerate(self.consoles):
            rank = final.ranking.index(seat) + 1
            console.message = fit(f"#{rank} {final.scores[seat]}")

    async def _roll_prompt(self, seat: int, key: m.Key) -> None:
        if self.tray_mismatch and self.hold_on_tray_mismatch and not self.tray_override:
            self._refuse(seat, "fix trays/STAFF 5")
            return
        if key == m.Key.OK:
            self.consoles[seat].prompt = ""
            await self._trigger("roll")
            self.post_command(m.DiceRoll())
            self.roll_session = self.sessions

    async def _confirm_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        if key == m.Key.CANCEL:
            await self._cancel_confirm(seat)
            return
        if key != m.Key.OK or pending is None or pending.kind != "confirm":
            return
        pending.answered.add(seat)
        self.consoles[seat].prompt = ""
        if len(pending.answered) < self.players or any(c.prompt == "STOP?" for c in self.consoles):
            return
        self.pending = None
        for console in self.consoles:
            console.message = ""
        if self.state.finished:
            if self.phase == "table_settlement":
                await self._trigger("game_ended")
            self.games_finished += 1
            if self.new_games:
                await self._new_game()
            return
        await self._trigger("next_hand")
        await self._start_hand()

    async def _new_game(self) -> None:
        self.state = initial_state(self.rules)
        self.game_started = False
        self.clock_started = None
        for console in self.consoles:
            console.last_game = False  # a LAST GAME call is for the game it was made in
        self.alerts.resolve("last_game", any_seat=True)
        self.last_hand = None
        await self._trigger("new_game")
        await self._start_hand()

    # ------------------------------------------------------------------ corrections

    async def _cancel_confirm(self, seat: int) -> None:
        """CANCEL at CONFIRM: the result is wrong; the hand goes back to its entry."""
        point = self.state.undo
        if point is not None and point.record.result == "chombo":
            self._refuse(seat, "staff: STAFF 3")  # a penalty is staff's to take back
            return
        failure = await self._reopen_last_hand(seat, by=f"seat {seat}")
        if failure is not None:
            self._refuse(seat, failure)

    def _correction_unavailable(self) -> str | None:
        """Why the last hand's result cannot be taken back now, or None."""
        point = self.state.undo
        if point is None:
            return "nothing to correct"
        if point.blocked is not None or self.phase not in prompts.CORRECTABLE:
            return "next hand begun"
        return None

    async def _reopen_last_hand(self, seat: int | None, *, by: str) -> str | None:
        """Take the last result back (an ``undo`` event, journalled) and enter the hand
        again: the winners' HAN?, everyone's TENPAI?, or back to play for an abort or a
        chombo. Returns why not, changing nothing, or None."""
        why = self._correction_unavailable()
        point = self.state.undo
        if why is not None or point is None:
            return why
        record = point.record
        refusal = self._apply(ev.Undo())
        if refusal is not None:
            return refusal.message
        self._note(
            "correction",
            seat,
            {"by": by, "result": record.result, "deltas": list(record.deltas)},
        )
        self.pending = None
        self.claim_deadline = None
        self.last_hand = None  # taken back: the hand is played or entered again
        for console in self.consoles:
            console.prompt, console.typed, console.choice, console.staff = "", "", None, None
            console.message = ""
        if record.result in ("ron", "tsumo"):
            winners = [int(s) for s in record.detail.get("winners", [])]
            discarders = tuple(int(s) for s in record.detail.get("from", []))
            if self.state.tiles is not None:
                # The tiles' value again: OK, or CANCEL to take the win back.
                await self.open_scored_entry(record.result, winners, discarders, "reopen")
                if self.pending is None:
                    await self._resume_hand()
                return None
            self.pending = Pending(
                kind=record.result,
                discarders=discarders,
                seats=list(winners),
                entries={s: WinEntry(seat=s) for s in winners},
            )
            await self._trigger("reopen")
            for winner in winners:
                self._open(winner, "HAN?")
                self.consoles[winner].message = "AGAIN"
        elif record.result == "draw":
            self.pending = Pending(kind="draw", seats=list(range(self.players)))
            await self._trigger("reopen")
            for other in range(self.players):
                self._open(other, "TENPAI?")
        else:
            await self._resume_hand()
        return None

    async def _resume_hand(self) -> None:
        """Back to where an aborted or penalised hand stood: before the dice, in the
        deal, or in play."""
        wall = self.state.wall
        if wall is None:
            await self._to("table_walls_up")
            self._open(self.state.dealer, "ROLL?")
        elif wall.phase == "deal":
            await self._to("table_dealing")
        else:
            await self._trigger("resume_play")
