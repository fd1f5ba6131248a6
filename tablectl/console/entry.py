"""Win entry: HAN?, FU?, PAO? on each winner's console, then one ron or tsumo event.

The rules core checks the values; a refusal shows its reason and the entry starts over on
every winner's console, with nothing changed.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.host import ConsoleHost
from tablectl.console.model import Pending, WinEntry
from tablectl.rules import events as ev


def entry_hands(entry: WinEntry) -> tuple[ev.Hand, ...]:
    """The hands a win entry submits: its one value, or kantan's one per discarder (in
    the ron's order of discarders, which ``each`` keeps)."""
    if entry.each:
        return tuple(
            ev.Hand(seat=entry.seat, han=v.han, fu=v.fu, yakuman=v.yakuman) for v in entry.each
        )
    hand = ev.Hand(entry.seat, han=entry.han, fu=entry.fu, yakuman=entry.yakuman, pao=entry.pao)
    return (hand,)


class EntryFlow(ConsoleHost):
    """Win entry: HAN?, FU?, PAO? on each winner's console, then one ron or tsumo event."""

    async def _open_entry(self, kind: str, seats: list[int], discarders: tuple[int, ...]) -> None:
        if self.state.tiles is not None:
            await self.open_scored_entry(kind, seats, discarders)  # the tiles say the value
            return
        self.pending = Pending(
            kind=kind,
            discarders=discarders,
            seats=list(seats),
            entries={s: WinEntry(seat=s) for s in seats},
        )
        for seat in seats:
            # A new entry starts clean: a refusal of some earlier key (a key resent after
            # a daemon restart, say) must not show under HAN? as if the entry were refused.
            # A hand reader's disagreement stays: it is why this win is keyed.
            self.consoles[seat].prompt = "HAN?"
            self.consoles[seat].typed = ""
            self.consoles[seat].message = self.hand_misread.get(seat, "")
        await self._trigger("enter_result")

    async def _han_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9 and len(console.typed) < 2 and not entry.yakuman:
            console.typed += str(int(key))
        elif key == m.Key.MENU:
            entry.yakuman = entry.yakuman % 6 + 1
            console.typed = f"YAKUMAN x{entry.yakuman}"
        elif key == m.Key.CANCEL:
            if console.typed:
                console.typed = ""
                entry.yakuman = 0
            else:
                await self._cancel_entry(seat)
        elif key == m.Key.OK:
            if entry.yakuman:
                entry.han, entry.fu = 0, None
                if self.rules.scoring.pao:
                    console.prompt, console.typed = "PAO?", ""
                    return
                await self._entry_done(seat)
                return
            if not console.typed or int(console.typed) < 1:
                self._refuse(seat, "enter the han, then OK")
                return
            entry.han = int(console.typed)
            console.typed = ""
            if self.rules.scoring.table == "standard" and entry.han < 5:
                console.prompt = "FU?"
            else:
                entry.fu = None
                await self._entry_done(seat)

    async def _fu_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9 and len(console.typed) < 3:
            console.typed += str(int(key))
        elif key == m.Key.CANCEL:
            console.prompt, console.typed = "HAN?", ""
        elif key == m.Key.OK and console.typed:
            entry.fu = int(console.typed)
            console.typed = ""
            await self._entry_done(seat)

    async def _pao_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9:
            entry.pao = int(key)
            console.typed = str(int(key))
        elif key == m.Key.CANCEL:
            if entry.scored:  # back to the tiles' value
                console.prompt, console.typed, entry.pao = "OK?", "", None
                return
            console.prompt, console.typed = "HAN?", ""
            entry.yakuman, entry.pao = 0, None
        elif key == m.Key.OK:
            console.typed = ""
            await self._entry_done(seat)

    async def _cancel_entry(self, seat: int) -> None:
        pending = self.pending
        assert pending is not None
        pending.entries.pop(seat, None)
        if seat in pending.seats:
            pending.seats.remove(seat)
        self.consoles[seat].prompt = ""
        self.consoles[seat].typed = ""
        if not pending.entries:
            self.pending = None
            await self._trigger("entry_cancelled")
        elif all(e.done for e in pending.entries.values()):
            await self._submit_win()

    async def _entry_done(self, seat: int) -> None:
        entry = self._entry(seat)
        assert entry is not None and self.pending is not None
        entry.done = True
        self.consoles[seat].prompt = ""
        self.consoles[seat].message = "WAIT"
        if all(e.done for e in self.pending.entries.values()):
            await self._submit_win()

    async def _submit_win(self) -> None:
        pending = self.pending
        assert pending is not None
        hands = tuple(hand for s in pending.seats for hand in entry_hands(pending.entries[s]))
        event: ev.Event
        if pending.kind == "tsumo":
            event = ev.Tsumo(hand=hands[0])
        else:
            event = ev.Ron(discarders=pending.discarders, winners=hands)
        refusal = self._apply(event)
        if refusal is None:
            await self._trigger("hand_over")
            return
        # Start the entry over on every winner's console, with the reason shown.
        for seat, entry in pending.entries.items():
            if entry.scored:  # the tiles' value again: agree once more, or take it back
                entry.done, entry.pao = False, None
                self.consoles[seat].prompt, self.consoles[seat].typed = "OK?", ""
                self._refuse(seat, refusal)
                continue
            pending.entries[seat] = WinEntry(seat=entry.seat)
            self.consoles[seat].prompt = "HAN?"
            self.consoles[seat].typed = ""
            self._refuse(seat, refusal)
