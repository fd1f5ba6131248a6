"""The random keyed bots: their play at a table that does not read its tiles.

:class:`KeyedPlay` makes a :class:`~hw_sim.players.BotTable`'s decisions by the
probabilities below, tuned so that a game has wins by ron and tsumo, exhaustive draws in
about a third of the hands, a few calls, kans and riichi, and rare oddities. It asks the
wall tracker which moves are legal; the keys, waits and prompts are the bot table's.
"""

from __future__ import annotations

import random
from typing import Literal

from firmware_bridge.messages import Key
from hw_sim.botapi import Bots
from hw_sim.botmemory import Entry, Hand
from tablectl.rules import wall as W
from tablectl.rules.events import Call, Kan, North
from tablectl.rules.options import HouseRules

__all__ = ["KeyedPlay", "choose_entry"]

P_TSUMO = 0.0045  # per draw, rising to 3x at the haitei
P_RON = 0.008  # per discard, for the table (then one seat is picked)
P_CHANKAN = 0.03
P_HOUTEI_RON = 0.05
P_PON = 0.03  # per seat and discard
P_CHI = 0.04
P_OPEN_KAN = 0.004
P_CLOSED_KAN = 0.004
P_ADDED_KAN = 0.05
P_NORTH = 0.3  # three-player north pulls: 4 norths in 108 tiles
P_RIICHI = 0.05
P_NINE_TERMINALS = 0.004
P_TENPAI = 0.45
P_YAKUMAN = 0.02
P_LIMIT = 0.12
#: Han/fu pairs a bot wins with (ron); tsumo adds the 20-fu (pinfu tsumo) ones.
HANDS_RON = ((1, 30), (1, 40), (2, 25), (2, 30), (3, 30), (3, 60), (4, 30))
HANDS_TSUMO = (*HANDS_RON, (2, 20), (3, 20), (4, 20))
#: Limit hands (no fu asked).
LIMIT_HANS = (5, 5, 6, 6, 7, 8, 9, 10, 11, 12)
#: What a bot enters once a value was refused too often: legal under every preset.
SAFE_HAND = (3, 30)


def choose_entry(entry: Entry, rng: random.Random, house: HouseRules) -> None:
    """Pick the han and fu (or yakuman) a bot enters for a win whose value it does not
    know: a random legal one, the safe one after three refusals."""
    entry.chosen = True
    if entry.refusals >= 3:
        entry.han, entry.fu, entry.yakuman = SAFE_HAND[0], SAFE_HAND[1], 0
        return
    roll = rng.random()
    if roll < P_YAKUMAN:
        entry.han, entry.fu, entry.yakuman = 0, None, 1
    elif roll < P_YAKUMAN + P_LIMIT:
        entry.han, entry.fu, entry.yakuman = rng.choice(LIMIT_HANS), None, 0
    else:
        entry.han, fu = rng.choice(HANDS_TSUMO if entry.tsumo else HANDS_RON)
        entry.fu = fu if house.scoring.table == "standard" else None
        entry.yakuman = 0


class KeyedPlay:
    """The random decisions of ``bots`` on their own turn, after a discard and at an
    added kan (docs/simulator.md, "Bots")."""

    def __init__(self, bots: Bots) -> None:
        self.bots = bots
        self.fw = bots.fw
        self.house = bots.house
        self.rules = bots.rules
        self.players = bots.players
        self.seats = bots.seats
        self.rng: random.Random = bots.rng

    async def chankan(self, hand: Hand, state: W.WallState) -> bool | None:
        """Now and then another bot robs the added kan; None when nobody does."""
        for seat in self.bots._others_from(state.turn):
            if seat in self.seats and self.rng.random() < P_CHANKAN:
                return await self.bots._ron(hand, seat)
        return None

    async def tenpai_at_draw(self, hand: Hand) -> bool:
        """Riichi seats are tenpai, the others by chance."""
        for seat in range(self.players):
            hand.tenpai[seat] = seat in hand.riichi or self.rng.random() < P_TENPAI
        return True

    async def called(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` called: it discards."""
        return await self.bots._discard(hand, state, seat)

    async def drawn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` holds a drawn tile: win, kan, north, abort, riichi, or just discard."""
        rng = self.rng
        late = 1.0 - state.live_left / 70 if not self.rules.own_walls else sum(state.discards) / 72
        # A declaration the daemon refused is not tried again on the same tile.
        fresh = hand.last_state is not state
        hand.last_state = state
        if not fresh:
            return await self.bots._discard(hand, state, seat)
        if rng.random() < P_TSUMO * (1 + 2 * max(late, 0.0)):
            return await self.bots._tsumo(hand, seat)
        if (
            "nine_terminals" in self.house.flow.abortive_draws
            and "nine_terminals" not in hand.refused
            and W.check_abort(self.rules, state, "nine_terminals") is None
            and rng.random() < P_NINE_TERMINALS
        ):
            return await self.bots._abort(hand, seat, Key.DIGIT_1, "nine_terminals")
        if (
            state.pons[seat]
            and rng.random() < P_ADDED_KAN
            and self.bots._valid(state, Kan(seat, "added"))
        ):
            return await self.bots._kan(hand, state, seat, Key.DIGIT_2)
        if rng.random() < P_CLOSED_KAN and self.bots._valid(state, Kan(seat, "closed")):
            return await self.bots._kan(hand, state, seat, Key.DIGIT_1)
        if (
            self.rules.north_pulls
            and rng.random() < P_NORTH
            and self.bots._valid(state, North(seat))
        ):
            return await self.bots._kan(hand, state, seat, Key.DIGIT_3)
        score = self.bots._scores[seat]
        if (
            seat not in hand.riichi
            and seat not in hand.called
            and score is not None
            and score >= 1000
            and W.check_riichi(self.rules, state, seat) is None
            and rng.random() < P_RIICHI
        ):
            hand.riichi.add(seat)
            self.bots.press(seat, Key.RIICHI)
        return await self.bots._discard(hand, state, seat)

    async def after_discard(self, hand: Hand, after: W.WallState) -> bool:
        """The last discard is out (not yet reported: the next take, call or ron tells the
        daemon): ron, call, the draw, or the next seat takes."""
        rng = self.rng
        discarder = after.last_discard
        assert discarder is not None
        if after.finished:
            if rng.random() < P_HOUTEI_RON:
                winner = rng.choice(self.bots._others_from(discarder))
                if winner in self.seats:
                    return await self.bots._ron(hand, winner)
            return await self.bots._draw(hand, after.turn)
        if after.four_kans_abort_due:
            # Someone else declares it: that is what tells the daemon the discard was made.
            # Refused, the one other legal way on is a ron on that discard.
            if after.turn in self.seats and "four_kans" not in hand.refused:
                return await self.bots._abort(hand, after.turn, Key.DIGIT_4, "four_kans")
            robber = next((s for s in self.bots._others_from(discarder) if s in self.seats), None)
            if robber is None:
                return False
            return await self.bots._ron(hand, robber)
        if rng.random() < P_RON:
            winner = rng.choice(self.bots._others_from(discarder))
            if winner in self.seats:
                return await self.bots._ron(hand, winner)
        for seat in self.bots._others_from(discarder):
            if seat not in self.seats or seat in hand.riichi:
                continue
            kind: Literal["kan", "pon", "chi"] | None = None
            roll = rng.random()
            if roll < P_OPEN_KAN:
                kind = "kan"
            elif roll < P_OPEN_KAN + P_PON:
                kind = "pon"
            elif roll < P_OPEN_KAN + P_PON + P_CHI and seat == after.turn:
                kind = "chi"
            if kind is not None and self.bots._valid(after, Call(seat, kind, discarder)):
                hand.called.add(seat)
                key = {"kan": Key.KAN, "pon": Key.PON, "chi": Key.CHI}[kind]
                self.bots.press(seat, key)
                return True
        return await self.bots._take(after.turn)

    async def own_turn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """Kantan, ``seat``'s own turn before the draw: now and then ron off the previous
        seat's last discard, else take."""
        prev = (seat - 1) % self.players
        if state.discards[prev] and self.rng.random() < P_RON / 2:
            self.bots._intent[seat] = [Key(prev), Key.OK]
            return await self.bots._ron(hand, seat)
        return await self.bots._take(seat)
