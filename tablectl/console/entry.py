"""Win entry: HAN?, FU?, PAO?, CHIPS? on each winner's console, then one ron or tsumo
event.

The rules core checks the values; a refusal shows its reason and the entry starts over on
every winner's console, with nothing changed.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.core import TableCore
from tablectl.console.model import Pending, PendingKind, WinEntry
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import TileFlow
from tablectl.console.wins import WinScoring
from tablectl.rules import events as ev
from tablectl.rules.money import max_hand_chips, yakuman_chips

#: Digits a chip count takes at ``CHIPS?`` (no hand earns 100 chips).
CHIP_DIGITS = 2


def entry_hands(entry: WinEntry) -> tuple[ev.Hand, ...]:
    """The hands a win entry submits: its one value, or kantan's one per discarder (in
    the ron's order of discarders, which ``each`` keeps)."""
    if entry.each:
        return tuple(
            ev.Hand(seat=entry.seat, han=v.han, fu=v.fu, yakuman=v.yakuman) for v in entry.each
        )
    hand = ev.Hand(
        entry.seat,
        han=entry.han,
        fu=entry.fu,
        yakuman=entry.yakuman,
        pao=entry.pao,
        chips=entry.chips,
    )
    return (hand,)


class EntryFlow:
    """Win entry: HAN?, FU?, PAO?, CHIPS? on each winner's console (``OK?`` with the
    tiles' value in a tile-aware hand), then one ron or tsumo event.

    Runs the win entry (the core's ``pending`` of kind ``tsumo`` or ``ron``, with a
    :class:`WinEntry` per winner); declares ``HAN?``, ``FU?``, ``PAO?``, ``CHIPS?`` and
    ``OK?``.
    Stores nothing of its own beyond that pending entry."""

    def __init__(self, core: TableCore, tiles: TileFlow, wins: WinScoring) -> None:
        self.core = core
        self.tiles = tiles
        self.wins = wins

    async def open_entry(
        self, kind: PendingKind, seats: list[int], discarders: tuple[int, ...]
    ) -> None:
        if self.core.state.tiles is not None:
            await self.open_scored_entry(kind, seats, discarders)  # the tiles say the value
            return
        self.core.pending = Pending(
            kind=kind,
            discarders=discarders,
            seats=list(seats),
            entries={s: WinEntry(seat=s) for s in seats},
        )
        for seat in seats:
            # A new entry starts clean: a refusal of some earlier key (a key resent after
            # a daemon restart, say) must not show under HAN? as if the entry were refused.
            # A hand reader's disagreement stays: it is why this win is keyed.
            misread = self.tiles.hand_misread.get(seat, "")
            self.core.open(seat, Prompt.HAN, message=misread, entering="enter_result")
        await self.core.trigger("enter_result")

    async def han_prompt(self, seat: int, key: m.Key) -> None:
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            self.core.close(seat)
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
                await self.cancel_entry(seat)
        elif key == m.Key.OK:
            if entry.yakuman:
                entry.han, entry.fu = 0, None
                if self.core.rules.scoring.pao:
                    self.core.open(seat, Prompt.PAO, message=None)
                    return
                await self.value_done(seat)
                return
            if not console.typed or int(console.typed) < 1:
                self.core.refuse(seat, "enter the han, then OK")
                return
            entry.han = int(console.typed)
            console.typed = ""
            if self.core.rules.scoring.table == "standard" and entry.han < 5:
                self.core.open(seat, Prompt.FU, typed=None, message=None)
            else:
                entry.fu = None
                await self.value_done(seat)

    async def fu_prompt(self, seat: int, key: m.Key) -> None:
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            self.core.close(seat)
            return
        if key <= m.Key.DIGIT_9 and len(console.typed) < 3:
            console.typed += str(int(key))
        elif key == m.Key.CANCEL:
            self.core.open(seat, Prompt.HAN, message=None)
        elif key == m.Key.OK and console.typed:
            entry.fu = int(console.typed)
            console.typed = ""
            await self.value_done(seat)

    async def pao_prompt(self, seat: int, key: m.Key) -> None:
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            self.core.close(seat)
            return
        if key <= m.Key.DIGIT_9:
            entry.pao = int(key)
            console.typed = str(int(key))
        elif key == m.Key.CANCEL:
            if entry.scored:  # back to the tiles' value
                self.core.open(seat, Prompt.SCORE, message=None)
                entry.pao = None
                return
            self.core.open(seat, Prompt.HAN, message=None)
            entry.yakuman, entry.pao = 0, None
        elif key == m.Key.OK:
            console.typed = ""
            if entry.scored:
                await self.entry_done(seat)  # the tiles counted the chips
            else:
                await self.value_done(seat)

    def asks_chips(self, seat: int) -> bool:
        """Whether ``seat``'s keyed win asks ``CHIPS?``: the preset has chips a hand earns
        and this winner can earn some (under sanma-free only a riichi win does)."""
        if not self.core.rules.money.hand_chips:
            return False
        return max_hand_chips(self.core.rules, riichi=seat in self.core.state.riichi) > 0

    async def value_done(self, seat: int) -> None:
        """A keyed value is entered: ``CHIPS?`` next where the winner can earn chips,
        else the entry is done (chips stay None: none entered)."""
        entry = self.core.entry(seat)
        assert entry is not None
        if not self.asks_chips(seat):
            await self.entry_done(seat)
            return
        extra = yakuman_chips(self.core.rules.money, yakuman=entry.yakuman)
        # The yakuman chips follow from the value: the winner enters only the others.
        hint = f"+{extra} FOR YAKUMAN" if extra else "OK ALONE: NONE"
        self.core.open(seat, Prompt.CHIPS, message=hint)

    async def chips_prompt(self, seat: int, key: m.Key) -> None:
        """``CHIPS?``: the chips the hand earns besides the yakuman chips (OK with
        nothing typed: none); a count no hand earns here is refused, changing nothing."""
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            self.core.close(seat)
            return
        if key <= m.Key.DIGIT_9:
            if len(console.typed) < CHIP_DIGITS:
                console.typed += str(int(key))
        elif key == m.Key.CANCEL:
            if console.typed:
                console.typed = ""
                return
            # Back to the value: the whole entry again, as PAO? and FU? go back.
            entry.han, entry.fu, entry.yakuman, entry.pao = 0, None, 0, None
            self.core.open(seat, Prompt.HAN, message=None)
        elif key == m.Key.OK:
            chips = int(console.typed or "0")
            most = max_hand_chips(self.core.rules, riichi=seat in self.core.state.riichi)
            if chips > most:
                console.typed = ""
                self.core.refuse(seat, f"at most {most} chips")
                return
            entry.chips = chips
            console.typed = ""
            await self.entry_done(seat)

    async def cancel_entry(self, seat: int) -> None:
        pending = self.core.pending
        assert pending is not None
        pending.entries.pop(seat, None)
        if seat in pending.seats:
            pending.seats.remove(seat)
        self.core.close(seat)
        self.core.consoles[seat].typed = ""
        if not pending.entries:
            self.core.pending = None
            await self.core.trigger("entry_cancelled")
        elif all(e.done for e in pending.entries.values()):
            await self.submit_win()

    async def entry_done(self, seat: int) -> None:
        entry = self.core.entry(seat)
        assert entry is not None and self.core.pending is not None
        entry.done = True
        self.core.close(seat)
        self.core.consoles[seat].message = "WAIT"
        if all(e.done for e in self.core.pending.entries.values()):
            await self.submit_win()

    async def submit_win(self) -> None:
        pending = self.core.pending
        assert pending is not None
        hands = tuple(hand for s in pending.seats for hand in entry_hands(pending.entries[s]))
        event: ev.Event
        if pending.kind == PendingKind.TSUMO:
            event = ev.Tsumo(hand=hands[0])
        else:
            event = ev.Ron(discarders=pending.discarders, winners=hands)
        refusal = self.core.apply(event)
        if refusal is None:
            await self.core.trigger("hand_over")
            return
        # Start the entry over on every winner's console, with the reason shown.
        for seat, entry in pending.entries.items():
            if entry.scored:  # the tiles' value again: agree once more, or take it back
                entry.done, entry.pao = False, None
                self.core.open(seat, Prompt.SCORE, message=None)
                self.core.refuse(seat, refusal)
                continue
            pending.entries[seat] = WinEntry(seat=entry.seat)
            self.core.open(seat, Prompt.HAN, message=None)
            self.core.refuse(seat, refusal)

    async def open_scored_entry(
        self,
        kind_: PendingKind,
        seats: list[int],
        discarders: tuple[int, ...],
        trigger: str = "enter_result",
    ) -> None:
        """Each winner's display: the tiles' value, ``OK?``; a seat whose hand the tiles
        refuse is told why and leaves the win (``trigger`` enters the entry phase)."""
        entries: dict[int, WinEntry] = {}
        for seat in seats:
            entry = self.wins.scored(seat, tsumo=kind_ == PendingKind.TSUMO, discarders=discarders)
            if isinstance(entry, tuple):
                self.wins.refuse_win(seat, entry)
                continue
            entries[seat] = entry
        self.core.pending = Pending(
            kind=kind_, discarders=discarders, seats=list(entries), entries=entries
        )
        if not entries:
            self.core.pending = None
            return
        await self.core.trigger(trigger)
        for seat in entries:
            self.core.open(seat, Prompt.SCORE)
            self.core.consoles[seat].choice = 0

    async def score_prompt(self, seat: int, key: m.Key) -> None:
        """``OK?``: OK agrees with the tiles' value (PAO? next for a yakuman where the
        preset has pao), CANCEL takes the win back, 0 pages the yaku."""
        console = self.core.consoles[seat]
        entry = self.core.entry(seat)
        if entry is None:
            self.core.close(seat)
            return
        if key == m.Key.DIGIT_0:
            console.choice = ((console.choice or 0) + 1) % len(self.wins.score_pages(entry))
            console.message = ""
        elif key == m.Key.CANCEL:
            await self.cancel_entry(seat)
        elif key == m.Key.OK:
            if entry.yakuman and self.core.rules.scoring.pao:
                self.core.open(seat, Prompt.PAO, message=None)
                return
            await self.entry_done(seat)
