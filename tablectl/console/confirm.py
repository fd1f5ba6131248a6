"""After a hand: CONFIRM (and GAME OVER) on every seat, the next hand or game, and the
dealer's ROLL? that starts the next hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware_bridge import messages as m
from tablectl.console.host import ConsoleHost
from tablectl.console.model import Pending, fit, signed
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

    async def _confirm_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
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
        await self._trigger("new_game")
        await self._start_hand()
