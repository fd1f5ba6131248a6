"""The bots' play at a table with seat readers: they play the tiles they hold.

:class:`TilePlay` makes a :class:`~hw_sim.players.BotTable`'s decisions from the tiles
in the seat zones (:mod:`hw_sim.tilebot` does the tile arithmetic): it discards what
keeps shanten lowest, wins only with a complete hand that has a yaku (and for ron is not
furiten), calls when it lowers shanten and leaves a yaku in reach, declares riichi when
tenpai, and enters the real han and fu. Its tiles move through the seat zones, which the
firmware reports as ``SeatTiles``. The keys, waits and prompts are the bot table's.
"""

from __future__ import annotations

import logging
import random
from typing import Literal

from firmware_bridge.messages import Capability, Key, Zone
from hw_sim import tilebot as T
from hw_sim.botapi import Bots
from hw_sim.botmemory import Hand, TileSeat
from hw_sim.zones import TableZones
from tablectl.rules import wall as W
from tablectl.rules.events import Call, Kan, North
from tablectl.rules.options import HouseRules
from tablectl.rules.tilechecks import terminal_kinds
from tablectl.rules.tiletrack import NINE_TERMINALS
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import kind, tile_set

__all__ = ["TilePlay"]

_log = logging.getLogger(__name__)

#: The most tiles a hand zone can hold: 14, a drawn tile and no meld.
MAX_CONCEALED = 14

# The tiles decide; these only say how often a bot takes a chance it has.
P_TILE_CALL = 0.5  # a call that lowers shanten and keeps a yaku in reach
P_TILE_OPEN_KAN = 0.3
P_TILE_KAN = 0.5  # a closed or added kan
P_TILE_RIICHI = 0.6  # tenpai, closed, 1000 points, a draw left
P_TILE_NINE_TERMINALS = 0.5
P_STAND_IN_FIRST = 0.5  # kantan: the stand-in taken before the own tiles are laid


class TilePlay:
    """The decisions of ``bots`` at a table whose seat zones are ``zones``: its moves on
    its own turn, after a discard and at a robbed kan, what it wins at ``RON?`` and
    whether it is tenpai at the draw."""

    def __init__(self, bots: Bots, zones: TableZones) -> None:
        self.bots = bots
        self.zones = zones
        self.fw = bots.fw
        self.house = bots.house
        self.rules = bots.rules
        self.players = bots.players
        self.seats = bots.seats
        self.follower = bots.follower
        self.rng = bots.rng
        self.tileset = tile_set(bots.house)
        #: The table reads every tile (seat and wall readers): the daemon scores the wins
        #: (the bots agree at ``OK?``) and decides the exhaustive draw (no TENPAI/NOTEN).
        self.scored = bool(self.fw.capabilities & Capability.WALL_READER)
        #: The discarder (or kan maker) and tile of the ron a bot declared, and whether it
        #: robs a kan (for the other bots' RON? prompts).
        self._claim: tuple[int, int, bool] | None = None

    async def tenpai_at_draw(self, hand: Hand) -> bool:
        """Each seat's tenpai from its tiles. Where the daemon reads every tile it
        decides the draw once the last discard passed (False: the hand is over), unless
        it keys the hand in after all (a hand reader disagrees then)."""
        if self.scored and not hand.keyed:
            await self.bots._wait_until(lambda: hand.over or hand.keyed, stall=False)
            if hand.over:
                return False
        for seat in range(self.players):
            hand.tenpai[seat] = self.tenpai(hand, seat)
        return True

    async def called(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` called: it discards."""
        return await self.discard(hand, state, seat)

    def _last_discards(self, state: W.WallState, seat: int) -> list[tuple[int, int]]:
        """Kantan: (seat, tile) of every other seat's last discard, in turn order after
        ``seat`` (called ones too: they stay in the pond)."""
        out = []
        for other in self.bots._others_from(seat):
            tile = self.zones.last_discard(other) if state.discards[other] else None
            if tile is not None:
                out.append((other, tile))
        return out

    async def own_turn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """Kantan with real tiles, on one's own turn before the draw: ron off every other
        seat's last discard that wins (a table that reads tiles names them itself; keyed,
        at FROM?), else now and then pon or chi one of them (FROM?, then the own tiles
        among the melds; the next take is the stand-in), else draw. A ron or call the
        daemon refused is not tried again this turn."""
        turn = (seat, -1, len(state.taken))
        if turn in hand.refused_rons:
            return await self.bots._take(seat)
        wins = [
            (discarder, score)
            for discarder, tile in self._last_discards(state, seat)
            if (score := self.ron_value(hand, state, seat, tile)) is not None
        ]
        if wins:
            if not self.scored or hand.keyed:
                self.bots._intent[seat] = [*(Key(d) for d, _ in wins), Key.OK]
            self._claim = None
            if await self.bots._ron(hand, seat, wins[0][1]):
                hand.refused_rons.add(turn)
            return True
        for _, tile in self._last_discards(state, seat):
            self.passed(hand, seat, tile)
        if seat not in hand.riichi:
            for discarder, tile in self._last_discards(state, seat):
                choice = self._call_choice(hand, state, seat, tile, discarder)
                if choice is not None:
                    if not await self._own_turn_call(hand, seat, discarder, choice):
                        hand.refused_rons.add(turn)
                    return True
        return await self.bots._take(seat)

    async def _own_turn_call(
        self,
        hand: Hand,
        seat: int,
        discarder: int,
        choice: tuple[Literal["kan", "pon", "chi"], tuple[int, ...]],
    ) -> bool:
        """Kantan: ``seat`` pons or chis ``discarder``'s last discard on its own turn: the
        key, the discarder at FROM?, then its own tiles among its melds (the called tile
        stays in the discarder's pond; the take that follows stands in for it). False if
        the daemon refused it."""
        call, own = choice
        tile = self.zones.last_discard(discarder)
        assert tile is not None
        since, before = self.fw.display_seq, self.follower.state
        self.bots._intent[seat] = [Key(discarder), Key.OK]
        self.bots.calling.add(seat)
        self.bots.press(seat, Key.PON if call == "pon" else Key.CHI)
        await self.bots._wait_until(
            lambda: self.follower.state is not before or self.bots._refused_at[seat] > since
        )
        self.bots._intent.pop(seat, None)
        if self.follower.state is before:
            return False
        hand.called.add(seat)
        self._remember_call(hand, seat, call, tile, own, discarder)
        if self.rng.random() < P_STAND_IN_FIRST:
            # The stand-in lifted before the own tiles are laid: the daemon keeps the take
            # until the meld shows.
            return await self.bots._take(seat, then=lambda: self.fw.declare(seat, own))
        self.fw.declare(seat, own)
        return True

    def _remember_call(
        self,
        hand: Hand,
        seat: int,
        call: Literal["kan", "pon", "chi"],
        tile: int,
        own: tuple[int, ...],
        discarder: int,
    ) -> None:
        """A bot's call is made: its meld (the called tile by kind where it stays in the
        discarder's pond: kantan) and, where kuikae is refused, what it may not throw."""
        mem = self.mem(hand, seat)
        kind_ = "open_kan" if call == "kan" else call
        meld = Meld(kind_, (tile, *own), tile, discarder, in_river=self.rules.own_walls)
        mem.melds.append(meld)
        if call != "kan" and not self.house.tiles.kuikae:
            mem.forbidden = T.kuikae_kinds(tile, own)

    def mem(self, hand: Hand, seat: int) -> TileSeat:
        return hand.tiles.setdefault(seat, TileSeat())

    def _hand_tiles(self, seat: int) -> tuple[int, ...]:
        return self.zones.hand(seat)

    def sound(self, hand: Hand, seat: int) -> bool:
        """Whether ``seat``'s hand zone holds what a hand can (at most 14 tiles). One that
        cannot (whatever put the tiles there) turns the hand keyed, as a reader's fault
        does: the bots declare its end themselves, and no tile arithmetic is made on it
        (shanten refuses more than 14 tiles; a raise killed the bots, sanma-free seed
        47): the seat discards the tile it took last, wins, calls and waits nothing."""
        held = len(self._hand_tiles(seat))
        if held <= MAX_CONCEALED:
            return True
        if not hand.keyed:
            _log.warning("bots: seat %d holds %d tiles, no hand: the hand is keyed", seat, held)
            hand.keyed = True
        return False

    def _round_wind(self) -> int:
        centre = self.fw.centre
        return int(centre.round_wind) if centre is not None else 0

    def _context(
        self,
        hand: Hand,
        state: W.WallState,
        seat: int,
        win_tile: int,
        concealed: tuple[int, ...],
        *,
        tsumo: bool,
        chankan: bool = False,
    ) -> WinContext:
        """The win of ``seat`` on ``win_tile`` as the table saw it (``state``: the wall
        when the tile was drawn or discarded)."""
        mem = self.mem(hand, seat)
        riichi = seat in hand.riichi
        first_draw = (
            tsumo and not state.any_call and state.draws[seat] == 1 and state.last_take == "live"
        )
        last = state.live_left == 0 and not self.rules.own_walls
        dora = tuple(self.fw.wall.tile_at(p) for p in state.dora_indicators)
        ura = tuple(self.fw.wall.tile_at(p + 1) for p in state.dora_indicators)
        return WinContext(
            seat=seat,
            dealer=hand.dealer,
            players=self.players,
            round_wind=self._round_wind(),
            concealed=concealed,
            melds=tuple(mem.melds),
            win_tile=win_tile,
            tsumo=tsumo,
            riichi=riichi and not mem.double_riichi,
            double_riichi=riichi and mem.double_riichi,
            ippatsu=riichi and mem.riichi_at == (sum(state.melds), state.discards[seat]),
            # Kantan's own walls have no haitei or houtei (seed 004: 海底・河底がありません).
            haitei=tsumo and last and state.last_take == "live",
            houtei=not tsumo and not chankan and last,
            rinshan=tsumo and state.last_take == "rinshan",
            chankan=chankan,
            tenhou=first_draw and seat == hand.dealer and sum(state.discards) == 0,
            chiihou=first_draw and seat != hand.dealer and state.discards[seat] == 0,
            dora_indicators=dora,
            ura_indicators=ura if riichi else (),
            north_count=state.norths[seat] if state.norths else 0,
        )

    def _tsumo_value(self, hand: Hand, state: W.WallState, seat: int) -> HandScore | None:
        """The value of ``seat``'s hand if it is a complete hand with a yaku."""
        concealed = self._hand_tiles(seat)
        if not concealed or not self.sound(hand, seat) or T.shanten(self.house, concealed) != -1:
            return None
        ctx = self._context(hand, state, seat, concealed[-1], concealed, tsumo=True)
        return T.value(self.house, self.tileset, ctx)

    def ron_value(
        self, hand: Hand, state: W.WallState, seat: int, tile: int, *, chankan: bool = False
    ) -> HandScore | None:
        """The value of ``seat`` ronning ``tile``: None unless it completes the hand, the
        seat is not furiten and the hand has a yaku."""
        mem = self.mem(hand, seat)
        if kind(tile) not in mem.waits or (mem.furiten and self.house.tiles.furiten):
            return None
        if not self.sound(hand, seat) or len(self._hand_tiles(seat)) == MAX_CONCEALED:
            return None
        concealed = (*self._hand_tiles(seat), tile)
        ctx = self._context(hand, state, seat, tile, concealed, tsumo=False, chankan=chankan)
        return T.value(self.house, self.tileset, ctx)

    def passed(self, hand: Hand, seat: int, tile: int) -> None:
        """``seat`` let a tile that completes its hand go by: furiten until its next draw
        (for good after riichi)."""
        mem = self.mem(hand, seat)
        if kind(tile) in mem.waits:
            mem.temp_furiten = True
            if seat in hand.riichi:
                mem.riichi_furiten = True

    def claim_value(self, seat: int) -> HandScore | None:
        """At ``RON?``: what ``seat`` wins by joining the ron on the claimed tile."""
        hand, state = self.bots._hand, self.follower.state
        if hand is None or state is None or self.zones is None:
            return None
        if self.rules.own_walls:  # kantan's 18th discards: any of the others' wins
            tiles = [tile for _, tile in self._last_discards(state, seat)]
            found = (self.ron_value(hand, state, seat, tile) for tile in tiles)
            return next((score for score in found if score is not None), None)
        claim = self._claim
        if claim is None and state.last_discard is not None:
            tile = self.zones.last_discard(state.last_discard)
            claim = None if tile is None else (state.last_discard, tile, False)
        if claim is None or claim[0] == seat:
            return None
        _, tile, chankan = claim
        score = self.ron_value(hand, state, seat, tile, chankan=chankan)
        if score is None:
            self.passed(hand, seat, tile)
        return score

    def tenpai(self, hand: Hand, seat: int) -> bool:
        """Tenpai as the preset's ``formal_tenpai`` reads it, from the tiles held."""
        concealed = self._hand_tiles(seat)
        if len(concealed) % 3 != 1 or not self.sound(hand, seat):
            return False
        waits = T.waits(self.house, concealed)
        mem = self.mem(hand, seat)
        rule = self.house.tiles.formal_tenpai
        if rule != "yes":
            held = T.counts([*concealed, *(t for m in mem.melds for t in m.tiles)])
            waits = frozenset(k for k in waits if held[k] < 4)
        if rule == "open_hand_invalid" and not mem.closed:
            state = self.follower.state
            if state is None:
                return False
            waits = frozenset(
                k
                for k in waits
                if T.value(
                    self.house,
                    self.tileset,
                    self._context(
                        hand, state, seat, 4 * k + 3, (*concealed, 4 * k + 3), tsumo=False
                    ),
                )
                is not None
            )
        return bool(waits)

    async def drawn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """A bot holding a drawn tile, at a table that reads tiles: tsumo with a yaku,
        nine terminals, a kan or a north, riichi when tenpai, then the discard."""
        rng = self.rng
        fresh = hand.last_state is not state
        hand.last_state = state
        mem = self.mem(hand, seat)
        if not fresh:
            return await self.discard(hand, state, seat)
        mem.temp_furiten = False
        if not self.sound(hand, seat):
            return await self.discard(hand, state, seat)
        concealed = self._hand_tiles(seat)
        score = self._tsumo_value(hand, state, seat)
        if score is not None:
            return await self.bots._tsumo(hand, seat, score)
        if (
            len(terminal_kinds(concealed)) >= NINE_TERMINALS
            and "nine_terminals" in self.house.flow.abortive_draws
            and "nine_terminals" not in hand.refused
            and W.check_abort(self.rules, state, "nine_terminals") is None
            and rng.random() < P_TILE_NINE_TERMINALS
        ):
            return await self.bots._abort(hand, seat, Key.DIGIT_1, "nine_terminals")
        have = T.counts(concealed)
        if seat not in hand.riichi:
            for meld in mem.melds:
                pon = kind(meld.tiles[0]) if meld.kind == "pon" else None
                fourth = [t for t in concealed if kind(t) == pon]
                if (
                    fourth
                    and self.bots._valid(state, Kan(seat, "added"))
                    and rng.random() < P_TILE_KAN
                ):
                    return await self._tile_kan(hand, state, seat, Key.DIGIT_2, (fourth[0],))
            quads = [k for k in range(34) if have[k] == 4]
            if quads and self.bots._valid(state, Kan(seat, "closed")) and rng.random() < P_TILE_KAN:
                tiles = tuple(t for t in concealed if kind(t) == quads[0])
                return await self._tile_kan(hand, state, seat, Key.DIGIT_1, tiles)
        norths = [t for t in concealed if kind(t) == 30]
        if norths and self.rules.north_pulls and self.bots._valid(state, North(seat)):
            return await self._tile_kan(hand, state, seat, Key.DIGIT_3, (norths[0],))
        score_shown = self.bots._scores[seat]
        if (
            seat not in hand.riichi
            and mem.closed
            and score_shown is not None
            and score_shown >= 1000
            and W.check_riichi(self.rules, state, seat) is None
        ):
            tile, left = T.choose_discard(self.house, concealed, rng)
            if left == 0 and rng.random() < P_TILE_RIICHI:
                hand.riichi.add(seat)
                mem.double_riichi = not state.any_call and state.discards[seat] == 0
                self.bots.press(seat, Key.RIICHI)
                return await self.discard(hand, state, seat, tile, riichi=True)
        return await self.discard(hand, state, seat)

    async def discard(
        self,
        hand: Hand,
        state: W.WallState,
        seat: int,
        tile: int | None = None,
        *,
        riichi: bool = False,
    ) -> bool:
        """A bot discards a real tile (the drawn one in riichi, else the one that keeps
        shanten lowest, never a kuikae swap) and play goes on from the discard."""
        mem = self.mem(hand, seat)
        concealed = self._hand_tiles(seat)
        if tile is None:
            if seat in hand.riichi or not self.sound(hand, seat):
                tile = concealed[-1]
            else:
                tile, _ = T.choose_discard(self.house, concealed, self.rng, forbidden=mem.forbidden)
        self.fw.discard(seat, tile)
        mem.forbidden = frozenset()
        mem.discarded.add(kind(tile))
        left = self._hand_tiles(seat)
        mem.waits = T.waits(self.house, left) if len(left) < MAX_CONCEALED else frozenset()
        if riichi:
            mem.riichi_at = (sum(state.melds), state.discards[seat] + 1)
        self._claim = None
        return await self.bots._discard(hand, state, seat)

    async def after_discard(self, hand: Hand, after: W.WallState) -> bool:
        """After a real discard: a ron where it completes a hand with a yaku (not
        furiten), a call now and then where it lowers shanten, else the next take."""
        discarder = after.last_discard
        assert discarder is not None
        tile = self.zones.last_discard(discarder)
        if tile is None:
            return await self.bots._take(after.turn)
        for seat in self.bots._others_from(discarder):
            if seat not in self.seats:
                continue
            score = self.ron_value(hand, after, seat, tile)
            key = (seat, tile, len(after.taken))
            if score is None or key in hand.refused_rons:
                self.passed(hand, seat, tile)
                continue
            self._claim = (discarder, tile, False)
            if await self.bots._ron(hand, seat, score):
                hand.refused_rons.add(key)
                return True
            return False
        if after.finished:
            # The daemon asks RON? of the last discard: the bots' claim is that tile.
            self._claim = (discarder, tile, False)
            return await self.bots._draw(hand, after.turn)
        if after.four_kans_abort_due:
            if after.turn in self.seats and "four_kans" not in hand.refused:
                return await self.bots._abort(hand, after.turn, Key.DIGIT_4, "four_kans")
            return await self.bots._take(after.turn)
        for seat in self.bots._others_from(discarder):
            if seat not in self.seats or seat in hand.riichi:
                continue
            choice = self._call_choice(hand, after, seat, tile, discarder)
            if choice is not None:
                call, own = choice
                hand.called.add(seat)
                self.bots.calling.add(seat)
                self.bots.press(seat, {"kan": Key.KAN, "pon": Key.PON, "chi": Key.CHI}[call])
                called = self.fw.call(seat, discarder, own)
                self._remember_call(hand, seat, call, called, own, discarder)
                return True
        return await self.bots._take(after.turn)

    def _call_choice(
        self, hand: Hand, after: W.WallState, seat: int, tile: int, discarder: int
    ) -> tuple[Literal["kan", "pon", "chi"], tuple[int, ...]] | None:
        """The call ``seat`` makes on ``discarder``'s ``tile``, if any: one the wall tracker
        allows, that lowers shanten (a kan: keeps it), leaves a legal discard and a yaku in
        reach."""
        if not self.sound(hand, seat) or len(self._hand_tiles(seat)) == MAX_CONCEALED:
            return None
        concealed = self._hand_tiles(seat)
        mem = self.mem(hand, seat)
        now = T.shanten(self.house, concealed)
        options: list[tuple[Literal["kan", "pon", "chi"], tuple[int, ...]]] = []
        same = [t for t in concealed if kind(t) == kind(tile)]
        if len(same) == 3:
            options.append(("kan", tuple(same)))
        options += [("pon", own) for own in T.pon_options(concealed, tile)]
        if seat == after.turn:
            options += [("chi", own) for own in T.chi_options(concealed, tile)]
        for call, own in options:
            if not self.bots._valid(after, Call(seat, call, discarder)):
                continue
            rest = list(concealed)
            for t in own:
                rest.remove(t)
            seat_wind = (seat - hand.dealer) % self.players
            if not yaku_in_reach(
                self.house, seat_wind, self._round_wind(), rest, [*mem.melds], (tile, *own)
            ):
                continue
            if call == "kan":
                if T.shanten(self.house, rest) > now or self.rng.random() >= P_TILE_OPEN_KAN:
                    continue
                return call, own
            forbidden = T.kuikae_kinds(tile, own) if not self.house.tiles.kuikae else frozenset()
            if all(kind(t) in forbidden for t in rest):
                continue
            _, left = T.choose_discard(self.house, rest, random.Random(0), forbidden=forbidden)
            if left < now and self.rng.random() < P_TILE_CALL:
                return call, own
        return None

    async def chankan(self, hand: Hand, state: W.WallState) -> bool | None:
        """Another bot robs the added kan when the added tile completes its hand; None
        when nobody does."""
        maker = state.turn
        melds = self.zones.tiles(maker, Zone.MELDS)
        if not melds:
            return None
        tile = melds[-1]
        for seat in self.bots._others_from(maker):
            if seat not in self.seats:
                continue
            key = (seat, tile, len(state.taken))
            score = self.ron_value(hand, state, seat, tile, chankan=True)
            if score is None or key in hand.refused_rons:
                self.passed(hand, seat, tile)
                continue
            self._claim = (maker, tile, True)
            if await self.bots._ron(hand, seat, score):
                hand.refused_rons.add(key)
                return True
            return False
        return None

    async def _tile_kan(
        self, hand: Hand, state: W.WallState, seat: int, digit: Key, tiles: tuple[int, ...]
    ) -> bool:
        """A closed kan (DIGIT_1), an added kan (DIGIT_2) or a north (DIGIT_3) with real
        tiles: declared with the keys, then the tiles are laid among the melds."""
        await self.bots._kan(hand, state, seat, digit)
        if self.follower.state is state:
            return True  # refused: the next look at the same tile just discards
        self.fw.declare(seat, tiles)
        mem = self.mem(hand, seat)
        if digit == Key.DIGIT_1:
            mem.melds.append(Meld("closed_kan", tiles))
        elif digit == Key.DIGIT_2:
            for i, meld in enumerate(mem.melds):
                if meld.kind == "pon" and kind(meld.tiles[0]) == kind(tiles[0]):
                    mem.melds[i] = Meld(
                        "added_kan", (*meld.tiles, *tiles), meld.called, meld.source
                    )
                    break
        return True

    # ---- actions


def yaku_in_reach(
    house: HouseRules,
    seat_wind: int,
    round_wind: int,
    rest: list[int],
    melds: list[Meld],
    new_meld: tuple[int, ...],
) -> bool:
    """An open hand keeps a yaku in reach: a dragon or own wind triplet, or (kuitan)
    only simples melded and at most one other tile in the hand."""
    yakuhai = T.yakuhai_kinds(seat_wind, round_wind)
    groups = [m.tiles for m in melds] + [new_meld]
    for group in groups:
        kinds = {kind(t) for t in group}
        if len(kinds) == 1 and kinds <= yakuhai:
            return True
    if not house.tiles.kuitan:
        return False
    melded_simple = all(T.is_simple(kind(t)) for group in groups for t in group)
    return melded_simple and sum(1 for t in rest if not T.is_simple(kind(t))) <= 1
