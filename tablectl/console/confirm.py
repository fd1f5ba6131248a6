"""After a hand: CONFIRM (and GAME OVER) on every seat, the next hand or game, and the
dealer's ROLL? that starts the next hand.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.core import TableCore
from tablectl.console.entry import EntryFlow
from tablectl.console.hand import HandFlow
from tablectl.console.model import Pending, PendingKind, WinEntry, fit, signed
from tablectl.console.prompts import Prompt
from tablectl.console.trays import Trays
from tablectl.console.wins import has_chips, win_value
from tablectl.phases import CORRECTABLE
from tablectl.rules import events as ev
from tablectl.rules.state import HandRecord


class ConfirmFlow:
    """After a hand: CONFIRM (and GAME OVER) on every seat, the all-last dealer's STOP?,
    the next hand or game, corrections, and the dealer's ROLL? that starts a hand.

    Runs the confirmation (the core's ``pending`` of kind ``confirm``); declares
    ``ROLL?``, ``CONFIRM``, ``GAME OVER`` and ``STOP?``. Stores nothing of its own."""

    def __init__(self, core: TableCore, hand: HandFlow, trays: Trays, entry: EntryFlow) -> None:
        self.core = core
        self.hand = hand
        self.trays = trays
        self.entry = entry

    def hand_settled(self, record: HandRecord) -> None:
        """A hand was settled (a rules core effect): every seat confirms what it pays or
        receives in the settlement the hand's end leads to."""
        core = self.core
        pending = core.pending
        entries: dict[int, WinEntry] = {}
        if pending is not None and pending.kind in (PendingKind.TSUMO, PendingKind.RON):
            entries = pending.entries  # the win entry just submitted: its values
        core.pending = Pending(kind=PendingKind.CONFIRM, seats=list(range(core.players)))
        prompt = Prompt.GAME_OVER if core.state.finished else Prompt.CONFIRM
        for seat in range(core.players):
            value, message = self.settled_lines(seat, record, entries.get(seat))
            if prompt == Prompt.GAME_OVER:
                value = ""  # the rank, the score and the P say what counts now
            core.open(seat, prompt, typed=value, message=message, entering="hand_over")
        if core.state.finished:
            self.show_final()
        core.claim_deadline = None
        self.trays.override = False
        self.trays.compare()

    def settled_lines(
        self, seat: int, record: HandRecord, entry: WinEntry | None
    ) -> tuple[str, str]:
        """What ``seat``'s ``CONFIRM`` shows after the prompt on line 1, and on line 2:
        what it pays or receives and its score (``-3900 = 21100``). On a preset with
        chips line 2 ends with the seat's chips in the hand where it has any
        (``+5200 = 30200 +3``, ``-5200 = 24800 -3``) and a winner's line 1 says its win
        (``CONFIRM 3 HAN 40 FU``): CONFIRM takes no digits, its ``typed`` holds the value.
        The total stays on line 2, where a player (and a bot) counts the sticks to."""
        rules = self.core.rules
        text = f"{signed(record.deltas[seat])} = {self.core.state.scores[seat]}"
        if not has_chips(rules.money):
            return "", fit(text)
        chips = record.chips[seat] if record.chips else 0
        winners = record.detail.get("winners", ()) if record.result in ("ron", "tsumo") else ()
        if chips or seat in winners:  # a winner's +0 too: the table counted them
            text += f" {chips:+d}"
        value = ""
        if entry is not None and seat in winners:
            value = win_value(entry, fu_counts=rules.scoring.table == "standard")
        return value, fit(text)

    def show_final(self) -> None:
        """Each seat's rank and final score on its second line, and its P where the
        preset settles in P (``#1 41200 +2350P``)."""
        final = self.core.state.final
        assert final is not None
        for seat, console in enumerate(self.core.consoles):
            rank = final.ranking.index(seat) + 1
            text = f"#{rank} {final.scores[seat]}"
            if final.money is not None:
                text += f" {final.money.total[seat]:+d}P"
            console.message = fit(text)

    async def roll_prompt(self, seat: int, key: m.Key) -> None:
        """``ROLL?``: OK rolls the dice (held while the trays differ)."""
        if self.trays.hold_dice():
            self.core.refuse(seat, "fix trays/STAFF 5")
            return
        if key == m.Key.OK:
            self.core.close(seat)
            await self.core.trigger("roll")
            self.core.post_command(m.DiceRoll())
            self.core.roll_session = self.core.sessions

    async def confirm_prompt(self, seat: int, key: m.Key) -> None:
        """``CONFIRM`` / ``GAME OVER``: OK agrees (the next hand or game once all have),
        CANCEL takes the result back."""
        pending = self.core.pending
        if key == m.Key.CANCEL:
            await self._cancel_confirm(seat)
            return
        if key != m.Key.OK or pending is None or pending.kind != PendingKind.CONFIRM:
            return
        pending.answered.add(seat)
        self.core.close(seat)
        self.core.consoles[seat].typed = ""  # a winner's value, shown until agreed
        consoles = self.core.consoles
        if len(pending.answered) < self.core.players or any(
            c.prompt == Prompt.STOP for c in consoles
        ):
            return
        self.core.pending = None
        for console in self.core.consoles:
            console.message = ""
        if self.core.state.finished:
            if self.core.phase == "table_settlement":
                await self.core.trigger("game_ended")
            self.core.games_finished += 1
            if self.core.new_games:
                await self._new_game()
            return
        await self.core.trigger("next_hand")
        await self.hand.start_hand()

    async def stop_prompt(self, seat: int, key: m.Key) -> None:
        """``STOP?``: OK ends the game now (all-last dealer), CANCEL plays on."""
        core = self.core
        if key == m.Key.OK:
            refusal = core.apply(ev.Stop())
            if refusal is not None:
                core.refuse(seat, refusal)
                core.open(seat, Prompt.CONFIRM, typed=None, message=None)
                return
            # The game is over: everyone confirms the final result.
            core.pending = Pending(kind=PendingKind.CONFIRM, seats=list(range(core.players)))
            for other in range(core.players):
                core.open(other, Prompt.GAME_OVER, typed="", message=None)
            self.show_final()
        elif key == m.Key.CANCEL:
            core.open(seat, Prompt.CONFIRM, typed=None, message=None)
            await self.confirm_prompt(seat, m.Key.OK)

    async def _new_game(self) -> None:
        self.hand.fresh_game(self.core.rules)
        await self.core.trigger("new_game")
        await self.hand.start_hand()

    # ------------------------------------------------------------------ corrections

    async def _cancel_confirm(self, seat: int) -> None:
        """CANCEL at CONFIRM: the result is wrong; the hand goes back to its entry."""
        point = self.core.state.undo
        if point is not None and point.record.result == "chombo":
            self.core.refuse(seat, "staff: STAFF 3")  # a penalty is staff's to take back
            return
        failure = await self.reopen_last_hand(seat, by=f"seat {seat}")
        if failure is not None:
            self.core.refuse(seat, failure)

    def correction_unavailable(self) -> str | None:
        """Why the last hand's result cannot be taken back now, or None."""
        point = self.core.state.undo
        if point is None:
            return "nothing to correct"
        if point.blocked is not None or self.core.phase not in CORRECTABLE:
            return "next hand begun"
        return None

    async def reopen_last_hand(self, seat: int | None, *, by: str) -> str | None:
        """Take the last result back (an ``undo`` event, journalled) and enter the hand
        again: the winners' HAN?, everyone's TENPAI?, or back to play for an abort or a
        chombo. Returns why not, changing nothing, or None."""
        why = self.correction_unavailable()
        point = self.core.state.undo
        if why is not None or point is None:
            return why
        record = point.record
        refusal = self.core.apply(ev.Undo())
        if refusal is not None:
            return refusal.message
        self.core.note(
            "correction",
            seat,
            {"by": by, "result": record.result, "deltas": list(record.deltas)},
        )
        self.core.pending = None
        self.core.claim_deadline = None
        self.core.last_hand = None  # taken back: the hand is played or entered again
        self.core.clear_consoles()
        if record.result in ("ron", "tsumo"):
            kind = PendingKind(record.result)
            winners = [int(s) for s in record.detail.get("winners", [])]
            discarders = tuple(int(s) for s in record.detail.get("from", []))
            if self.core.state.tiles is not None:
                # The tiles' value again: OK, or CANCEL to take the win back.
                await self.entry.open_scored_entry(kind, winners, discarders, "reopen")
                if self.core.pending is None:
                    await self._resume_hand()
                return None
            self.core.pending = Pending(
                kind=kind,
                discarders=discarders,
                seats=list(winners),
                entries={s: WinEntry(seat=s) for s in winners},
            )
            await self.core.trigger("reopen")
            for winner in winners:
                self.core.open(winner, Prompt.HAN, message="AGAIN")
        elif record.result == "draw":
            self.core.pending = Pending(kind=PendingKind.DRAW, seats=list(range(self.core.players)))
            await self.core.trigger("reopen")
            for other in range(self.core.players):
                self.core.open(other, Prompt.TENPAI)
        else:
            await self._resume_hand()
        return None

    async def _resume_hand(self) -> None:
        """Back to where an aborted or penalised hand stood: before the dice, in the
        deal, or in play."""
        wall = self.core.state.wall
        if wall is None:
            await self.core.to("table_walls_up")
            self.core.open(self.core.state.dealer, Prompt.ROLL)
        elif wall.phase == "deal":
            await self.core.to("table_dealing")
        else:
            await self.core.trigger("resume_play")
