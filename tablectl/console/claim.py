"""The claim window: RON from other seats, PON/CHI/KAN calls, FROM? and KAN?.

After a discard the other seats have ``claim_window_s`` to join a ron; the winners go to
the rules core together (head bump, double ron, triple-ron abort). Kantan and tables
without take sensors name the discarder on ``FROM?``; a kantan hand whose tiles are read
names a ron's discarders from the tiles, and after the 18th discards every seat may ron.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.core import TableCore
from tablectl.console.endings import DrawFlow
from tablectl.console.entry import EntryFlow
from tablectl.console.model import Pending, PendingKind
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import HeldMeld, MeldKind, TileFlow
from tablectl.console.wins import WinScoring
from tablectl.rules import events as ev
from tablectl.rules import walltrack
from tablectl.rules.core import step
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import nearest_in_turn

#: A RON while the readers show the seat to discard still holding its drawn tile.
NO_DISCARD = "no discard"
#: The call each key makes on a discard.
_CALL_KEYS: dict[m.Key, ev.CallKind] = {m.Key.PON: "pon", m.Key.CHI: "chi", m.Key.KAN: "kan"}
#: A call kind as FROM?'s pending interaction keeps it.
_CALLS: dict[str, ev.CallKind] = {kind: kind for kind in _CALL_KEYS.values()}


class ClaimFlow:
    """The claim window: RON from other seats, PON/CHI/KAN calls, FROM? and KAN?.

    Runs the claim and FROM? interactions (the core's ``pending``, kinds ``claim`` and
    ``from``) and the claim window's deadline; declares ``RON?``, ``FROM?`` and ``KAN?``.
    Stores nothing of its own: what it is doing is the core's pending interaction."""

    def __init__(
        self,
        core: TableCore,
        tiles: TileFlow,
        wins: WinScoring,
        entry: EntryFlow,
        draw: DrawFlow,
    ) -> None:
        self.core = core
        self.tiles = tiles
        self.wins = wins
        self.entry = entry
        self.draw = draw

    def _discarder_for_claim(self, seat: int) -> int | str:
        """Whose discard ``seat`` is claiming, or why there is none."""
        wall = self.core.state.wall
        if wall is None or self.core.rules.wall.own_walls:
            return "FROM?"
        if wall.phase in ("discard", "called") and wall.turn != seat:
            return wall.turn
        if wall.phase == "claim" and wall.last_discard is not None:
            return wall.last_discard
        if wall.phase == "rinshan" and wall.turn != seat:
            return wall.turn
        return "no discard to claim"

    async def ron_key(self, seat: int) -> None:
        if self.core.rules.wall.own_walls and self.core.state.tiles is not None:
            await self._own_turn_ron(seat)
            return
        target = self._discarder_for_claim(seat)
        if target == "FROM?":
            self._ask_from(seat, "ron")
            return
        if isinstance(target, str):
            self.core.refuse(seat, target)
            return
        if self.tiles.unmade_discard(seat) is not None:
            # The readers see the drawn tile still in the hand: nothing to ron, and no
            # discard they missed (which would turn the tiles off).
            self.core.refuse(seat, NO_DISCARD)
            return
        # Before the implied discard: a disagreement turns the tiles off, and that
        # discard is then keyed too.
        self.tiles.check_winner_hand(seat, tsumo=False)
        implied = self.tiles.implied_discard(actor=seat)
        refusal = self.core.check_after(
            implied, lambda after: walltrack.check_ron(after, (target,), (seat,))
        )
        if refusal is not None:
            self.core.refuse(seat, refusal)
            return
        if self.core.state.tiles is not None:
            after = self.core.state
            for event in implied:
                after, _ = step(after, event)
            if after.tiles is not None:
                score = self.wins.win_score(seat, tsumo=False, discarder=target, state=after)
                if isinstance(score, tuple):
                    self.wins.refuse_win(seat, score)
                    return
        self.core.apply(*implied)
        if (
            self.core.phase == "table_playing_claim"
            and self.core.pending
            and self.core.pending.kind == PendingKind.CLAIM
        ):
            self._join_claim(seat)
            return
        others = [s for s in range(self.core.players) if s not in (seat, target)]
        self.core.pending = Pending(
            kind=PendingKind.CLAIM, discarders=(target,), seats=[seat], answered={seat}
        )
        for other in others:
            self.core.open(other, Prompt.RON, typed=None, message=None, entering="claim_opened")
        await self.core.trigger("claim_opened")
        self.core.open_claim_window()
        if len(self.core.pending.answered) >= self.core.players - 1:
            await self.close_claim()

    async def _own_turn_ron(self, seat: int) -> None:
        """Kantan, tiles read: RON on one's own turn wins off every other seat whose last
        discard the tiles make a win (ロン牌が複数ある場合は全員からあがれる), each scored on its
        own tile; no FROM?. A hand reader that disagrees leaves the ron to the keys."""
        if self.tiles.unmade_discard(seat) is not None:
            self.core.refuse(seat, NO_DISCARD)
            return
        implied = self.tiles.implied_discard(actor=seat)
        after = self.core.state_after(implied)
        if isinstance(after, Refusal):
            self.core.refuse(seat, after)
            return
        discarded = after.wall.discards if after.wall is not None else ()
        others = tuple(d for d, n in enumerate(discarded) if n and d != seat)
        bad = walltrack.check_ron(after, others, (seat,))
        if bad is not None:
            self.core.refuse(seat, "ron on own turn" if bad.code == "out_of_turn" else bad)
            return
        self.tiles.check_winner_hand(seat, tsumo=False)
        if self.core.state.tiles is None:
            self._ask_from(seat, "ron")
            return
        offers = self.wins.kantan_discarders(seat, after)
        if isinstance(offers, tuple):
            self.wins.refuse_win(seat, offers)
            return
        self.core.apply(*implied)
        await self.entry.open_entry(PendingKind.RON, [seat], tuple(offers))

    def _ask_from(self, seat: int, kind: str) -> None:
        """``FROM?``: ``seat`` names whose discard its ron or call (``kind``) takes. It
        opens empty (a CONFIRM line's TENPAI may still be typed there); a hand reader's
        disagreement stays on line 2: why a ron is keyed."""
        self.core.pending = Pending(kind=PendingKind.FROM, seats=[seat], call_kind=kind)
        self.core.open(seat, Prompt.FROM)
        self.core.consoles[seat].message = self.tiles.hand_misread.get(seat, "")

    def _join_claim(self, seat: int) -> None:
        assert self.core.pending is not None
        if seat not in self.core.pending.seats:
            self.core.pending.seats.append(seat)
        self.core.pending.answered.add(seat)
        self.core.close(seat)

    async def close_claim(self) -> None:
        pending = self.core.pending
        self.core.claim_deadline = None
        if pending is None or pending.kind != PendingKind.CLAIM:
            return
        for seat, console in enumerate(self.core.consoles):
            if console.prompt == Prompt.RON:
                self.core.close(seat)
                console.message = ""
        await self.core.trigger("claim_closed")
        if not pending.seats:
            # The last discard passed: the tiles decide the draw (keyed in if they are off).
            self.core.pending = None
            if self.core.state.tiles is not None:
                await self.draw.tile_draw()
            return
        if not pending.discarders:
            await self._last_discards_ron(pending.seats)
            return
        await self.entry.open_entry(PendingKind.RON, pending.seats, pending.discarders)

    async def _last_discards_ron(self, seats: list[int]) -> None:
        """Kantan's 18th discards (18枚目の捨て牌は流局後にロン出来る): one winner, the first of
        ``seats`` in turn order after the last discarder, as the turns would have gone on
        (kantan's rons are made on one's own turn); it wins off every last discard the
        tiles make a win, or names them at FROM? once the tiles are off."""
        wall = self.core.state.wall
        last = 0 if wall is None or wall.last_discard is None else wall.last_discard
        winner = nearest_in_turn(self.core.players, (last + 1) % self.core.players, seats)[0]
        self.core.pending = None
        offers = self.wins.kantan_discarders(winner) if self.core.state.tiles is not None else None
        if offers is None:
            self._ask_from(winner, "ron")
        elif isinstance(offers, tuple):  # pragma: no cover - checked when it joined
            self.wins.refuse_win(winner, offers)
        else:
            await self.entry.open_entry(PendingKind.RON, [winner], tuple(offers))

    async def call_key(self, seat: int, key: m.Key) -> None:
        wall = self.core.state.wall
        if key == m.Key.KAN and wall is not None and wall.phase == "discard" and wall.turn == seat:
            self.core.open(seat, Prompt.KAN, typed=None, message=None)
            return
        target = self._discarder_for_claim(seat)
        kind = _CALL_KEYS[key]
        if target == "FROM?":
            self._ask_from(seat, kind)
            return
        if isinstance(target, str):
            self.core.refuse(seat, target)
            return
        self._make_call(seat, kind, target)

    def _make_call(self, seat: int, kind: ev.CallKind, discarder: int) -> None:
        """``seat`` calls ``discarder``'s last discard: held until the meld zone shows it in
        a tile-aware hand, else made at once (after the discard it implies)."""
        if self.core.state.tiles is not None:
            self.tiles.hold_meld(HeldMeld(seat, kind, discarder))
            return
        call = ev.Call(seat=seat, kind=kind, discarder=discarder)
        refusal = self.core.apply(*self.tiles.implied_discard(actor=seat), call)
        if refusal is not None:
            self.core.refuse(seat, refusal)

    async def ron_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.core.pending
        if pending is None or pending.kind != PendingKind.CLAIM:
            self.core.close(seat)
            return
        if key == m.Key.RON:
            # Kantan's 18th discards (no discarder named): off any of the others'.
            others = tuple(d for d in range(self.core.players) if d != seat)
            refusal = walltrack.check_ron(self.core.state, pending.discarders or others, (seat,))
            if refusal is not None:
                self.core.refuse(seat, refusal)
                return
            self.tiles.check_winner_hand(seat, tsumo=False)
            if self.core.state.tiles is not None:
                found = (
                    self.wins.win_score(seat, tsumo=False, discarder=pending.discarders[0])
                    if pending.discarders
                    else self.wins.kantan_discarders(seat)
                )
                if isinstance(found, tuple):
                    self.wins.refuse_win(seat, found)
                    return
            self._join_claim(seat)
        elif key == m.Key.CANCEL:
            pending.answered.add(seat)
            self.core.close(seat)
        if len(pending.answered) >= self.core.players - len(pending.discarders):
            await self.close_claim()

    async def from_prompt(self, seat: int, key: m.Key) -> None:
        console = self.core.consoles[seat]
        pending = self.core.pending
        if pending is None or pending.kind != PendingKind.FROM:
            self.core.close(seat)
            return
        if key <= m.Key.DIGIT_9:
            digit = str(int(key))
            console.typed = (
                console.typed.replace(digit, "")
                if digit in console.typed
                else (console.typed + digit)
            )
        elif key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed = ""
            self.core.pending = None
        elif key == m.Key.OK and console.typed:
            discarders = tuple(int(c) for c in console.typed)
            self.core.close(seat)
            console.typed = ""
            self.core.pending = None
            implied = self.tiles.implied_discard(actor=seat)
            if pending.call_kind == "ron":
                bad = self.core.check_after(
                    implied, lambda after: walltrack.check_ron(after, discarders, (seat,))
                )
                if bad is not None:
                    self.core.refuse(seat, bad)
                    return
                self.core.apply(*implied)
                await self.entry.open_entry(PendingKind.RON, [seat], discarders)
            else:
                self._make_call(seat, _CALLS[pending.call_kind], discarders[0])

    async def kan_prompt(self, seat: int, key: m.Key) -> None:
        """``KAN?``: 1 closed kan, 2 added kan, 3 north (held for its tiles in a
        tile-aware hand)."""
        choices: dict[m.Key, ev.Event] = {
            m.Key.DIGIT_1: ev.Kan(seat=seat, kind="closed"),
            m.Key.DIGIT_2: ev.Kan(seat=seat, kind="added"),
            m.Key.DIGIT_3: ev.North(seat=seat),
        }
        event = choices.get(key)
        if key == m.Key.CANCEL:
            self.core.close(seat)
        elif event is not None and self.core.state.tiles is not None:
            self.core.close(seat)
            kinds: dict[m.Key, MeldKind] = {
                m.Key.DIGIT_1: "closed",
                m.Key.DIGIT_2: "added",
                m.Key.DIGIT_3: "north",
            }
            self.tiles.hold_meld(HeldMeld(seat, kinds[key]))  # made when the meld zone shows it
        elif event is not None:
            self.core.close(seat)
            refusal = self.core.apply(event)
            if refusal is not None:
                self.core.refuse(seat, refusal)

    async def last_discard_window(self, discarder: int) -> None:
        """The last discard is out: the other seats may ron it (``RON?``); when every one
        passed (or the claim window ran out) the tiles decide the draw. Kantan: every seat
        may ron the others' 18th discards (18枚目の捨て牌は流局後にロン出来る): no discarder
        is named, and each seat's ron names its own."""
        kantan = self.core.rules.wall.own_walls
        self.core.pending = Pending(
            kind=PendingKind.CLAIM,
            discarders=() if kantan else (discarder,),
            seats=[],
            answered=set(),
        )
        for other in range(self.core.players):
            if other != discarder or kantan:
                self.core.open(other, Prompt.RON)
                self.core.consoles[other].message = "LAST DISCARDS" if kantan else "LAST DISCARD"
        await self.core.trigger("claim_opened")
        self.core.open_claim_window()
