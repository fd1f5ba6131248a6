"""The claim window: RON from other seats, PON/CHI/KAN calls, FROM? and KAN?.

After a discard the other seats have ``claim_window_s`` to join a ron; the winners go to
the rules core together (head bump, double ron, triple-ron abort). Kantan and tables
without take sensors name the discarder on ``FROM?``; a kantan hand whose tiles are read
names a ron's discarders from the tiles, and after the 18th discards every seat may ron.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.model import Pending
from tablectl.console.tiles import HeldMeld, TileFlow
from tablectl.rules import events as ev
from tablectl.rules import walltrack
from tablectl.rules.core import step
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import nearest_in_turn


class ClaimFlow(TileFlow):
    """The claim window: RON from other seats, PON/CHI/KAN calls, FROM? and KAN?."""

    def _discarder_for_claim(self, seat: int) -> int | str:
        """Whose discard ``seat`` is claiming, or why there is none."""
        wall = self.state.wall
        if wall is None or self.rules.wall.own_walls:
            return "FROM?"
        if wall.phase in ("discard", "called") and wall.turn != seat:
            return wall.turn
        if wall.phase == "claim" and wall.last_discard is not None:
            return wall.last_discard
        if wall.phase == "rinshan" and wall.turn != seat:
            return wall.turn
        return "no discard to claim"

    async def _ron_key(self, seat: int) -> None:
        if self.rules.wall.own_walls and self.state.tiles is not None:
            await self._own_turn_ron(seat)
            return
        target = self._discarder_for_claim(seat)
        if target == "FROM?":
            self._ask_from(seat, "ron")
            return
        if isinstance(target, str):
            self._refuse(seat, target)
            return
        # Before the implied discard: a disagreement turns the tiles off, and that
        # discard is then keyed too.
        self.check_winner_hand(seat, tsumo=False)
        implied = self._implied_discard(actor=seat)
        refusal = self._check_after(
            implied, lambda after: walltrack.check_ron(after, (target,), (seat,))
        )
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        if self.state.tiles is not None:
            after = self.state
            for event in implied:
                after, _ = step(after, event)
            if after.tiles is not None:
                score = self.win_score(seat, tsumo=False, discarder=target, state=after)
                if isinstance(score, tuple):
                    self.refuse_win(seat, score)
                    return
        self._apply(*implied)
        if self.phase == "table_playing_claim" and self.pending and self.pending.kind == "claim":
            self._join_claim(seat)
            return
        others = [s for s in range(self.players) if s not in (seat, target)]
        self.pending = Pending(kind="claim", discarders=(target,), seats=[seat], answered={seat})
        for other in others:
            self.consoles[other].prompt = "RON?"
        await self._trigger("claim_opened")
        self.claim_deadline = self.now() + self.claim_window_s
        if len(self.pending.answered) >= self.players - 1:
            await self._close_claim()

    async def _own_turn_ron(self, seat: int) -> None:
        """Kantan, tiles read: RON on one's own turn wins off every other seat whose last
        discard the tiles make a win (ロン牌が複数ある場合は全員からあがれる), each scored on its
        own tile; no FROM?. A hand reader that disagrees leaves the ron to the keys."""
        implied = self._implied_discard(actor=seat)
        after = self._state_after(implied)
        if isinstance(after, Refusal):
            self._refuse(seat, after)
            return
        discarded = after.wall.discards if after.wall is not None else ()
        others = tuple(d for d, n in enumerate(discarded) if n and d != seat)
        bad = walltrack.check_ron(after, others, (seat,))
        if bad is not None:
            self._refuse(seat, "ron on own turn" if bad.code == "out_of_turn" else bad)
            return
        self.check_winner_hand(seat, tsumo=False)
        if self.state.tiles is None:
            self._ask_from(seat, "ron")
            return
        offers = self.kantan_discarders(seat, after)
        if isinstance(offers, tuple):
            self.refuse_win(seat, offers)
            return
        self._apply(*implied)
        await self._open_entry("ron", [seat], tuple(offers))

    def _ask_from(self, seat: int, kind: str) -> None:
        """``FROM?``: ``seat`` names whose discard its ron or call (``kind``) takes. It
        opens empty (a CONFIRM line's TENPAI may still be typed there); a hand reader's
        disagreement stays on line 2: why a ron is keyed."""
        self.pending = Pending(kind="from", seats=[seat], call_kind=kind)
        self._open(seat, "FROM?")
        self.consoles[seat].message = self.hand_misread.get(seat, "")

    def _join_claim(self, seat: int) -> None:
        assert self.pending is not None
        if seat not in self.pending.seats:
            self.pending.seats.append(seat)
        self.pending.answered.add(seat)
        self.consoles[seat].prompt = ""

    async def _close_claim(self) -> None:
        pending = self.pending
        self.claim_deadline = None
        if pending is None or pending.kind != "claim":
            return
        for console in self.consoles:
            if console.prompt == "RON?":
                console.prompt = ""
                console.message = ""
        await self._trigger("claim_closed")
        if not pending.seats:
            # The last discard passed: the tiles decide the draw (keyed in if they are off).
            self.pending = None
            if self.state.tiles is not None:
                await self.tile_draw()
            return
        if not pending.discarders:
            await self._last_discards_ron(pending.seats)
            return
        await self._open_entry("ron", pending.seats, pending.discarders)

    async def _last_discards_ron(self, seats: list[int]) -> None:
        """Kantan's 18th discards (18枚目の捨て牌は流局後にロン出来る): one winner, the first of
        ``seats`` in turn order after the last discarder, as the turns would have gone on
        (kantan's rons are made on one's own turn); it wins off every last discard the
        tiles make a win, or names them at FROM? once the tiles are off."""
        wall = self.state.wall
        last = 0 if wall is None or wall.last_discard is None else wall.last_discard
        winner = nearest_in_turn(self.players, (last + 1) % self.players, seats)[0]
        self.pending = None
        offers = self.kantan_discarders(winner) if self.state.tiles is not None else None
        if offers is None:
            self._ask_from(winner, "ron")
        elif isinstance(offers, tuple):  # pragma: no cover - checked when it joined
            self.refuse_win(winner, offers)
        else:
            await self._open_entry("ron", [winner], tuple(offers))

    async def _call_key(self, seat: int, key: m.Key) -> None:
        wall = self.state.wall
        if key == m.Key.KAN and wall is not None and wall.phase == "discard" and wall.turn == seat:
            self.consoles[seat].prompt = "KAN?"
            return
        target = self._discarder_for_claim(seat)
        kind = {m.Key.PON: "pon", m.Key.CHI: "chi", m.Key.KAN: "kan"}[key]
        if target == "FROM?":
            self._ask_from(seat, kind)
            return
        if isinstance(target, str):
            self._refuse(seat, target)
            return
        self._make_call(seat, kind, target)

    def _make_call(self, seat: int, kind: str, discarder: int) -> None:
        """``seat`` calls ``discarder``'s last discard: held until the meld zone shows it in
        a tile-aware hand, else made at once (after the discard it implies)."""
        if self.state.tiles is not None:
            self.hold_meld(HeldMeld(seat, kind, discarder))
            return
        call = ev.Call(seat=seat, kind=kind, discarder=discarder)  # type: ignore[arg-type]
        refusal = self._apply(*self._implied_discard(actor=seat), call)
        if refusal is not None:
            self._refuse(seat, refusal)

    async def _ron_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        if pending is None or pending.kind != "claim":
            self.consoles[seat].prompt = ""
            return
        if key == m.Key.RON:
            # Kantan's 18th discards (no discarder named): off any of the others'.
            others = tuple(d for d in range(self.players) if d != seat)
            refusal = walltrack.check_ron(self.state, pending.discarders or others, (seat,))
            if refusal is not None:
                self._refuse(seat, refusal)
                return
            self.check_winner_hand(seat, tsumo=False)
            if self.state.tiles is not None:
                found = (
                    self.win_score(seat, tsumo=False, discarder=pending.discarders[0])
                    if pending.discarders
                    else self.kantan_discarders(seat)
                )
                if isinstance(found, tuple):
                    self.refuse_win(seat, found)
                    return
            self._join_claim(seat)
        elif key == m.Key.CANCEL:
            pending.answered.add(seat)
            self.consoles[seat].prompt = ""
        if len(pending.answered) >= self.players - len(pending.discarders):
            await self._close_claim()

    async def _from_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        pending = self.pending
        if pending is None or pending.kind != "from":
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9:
            digit = str(int(key))
            console.typed = (
                console.typed.replace(digit, "")
                if digit in console.typed
                else (console.typed + digit)
            )
        elif key == m.Key.CANCEL:
            console.prompt, console.typed = "", ""
            self.pending = None
        elif key == m.Key.OK and console.typed:
            discarders = tuple(int(c) for c in console.typed)
            console.prompt, console.typed = "", ""
            self.pending = None
            implied = self._implied_discard(actor=seat)
            if pending.call_kind == "ron":
                bad = self._check_after(
                    implied, lambda after: walltrack.check_ron(after, discarders, (seat,))
                )
                if bad is not None:
                    self._refuse(seat, bad)
                    return
                self._apply(*implied)
                await self._open_entry("ron", [seat], discarders)
            else:
                self._make_call(seat, pending.call_kind, discarders[0])

    async def _kan_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        choices: dict[m.Key, ev.Event] = {
            m.Key.DIGIT_1: ev.Kan(seat=seat, kind="closed"),
            m.Key.DIGIT_2: ev.Kan(seat=seat, kind="added"),
            m.Key.DIGIT_3: ev.North(seat=seat),
        }
        event = choices.get(key)
        if key == m.Key.CANCEL:
            console.prompt = ""
        elif event is not None and self.state.tiles is not None:
            console.prompt = ""
            kind = {m.Key.DIGIT_1: "closed", m.Key.DIGIT_2: "added", m.Key.DIGIT_3: "north"}[key]
            self.hold_meld(HeldMeld(seat, kind))  # made when the meld zone shows it
        elif event is not None:
            console.prompt = ""
            refusal = self._apply(event)
            if refusal is not None:
                self._refuse(seat, refusal)
