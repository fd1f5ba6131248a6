"""A table that reads its tiles (docs/tiles.md, "The daemon"): the layout at the dice, the
take tiles, discards and melds read off the seat readers, wins scored from the tiles and
confirmed with OK, the exhaustive draw decided by the tiles, and the fallback to key entry
for the rest of a hand when a reader fails.

A hand is *tile-aware* when the rules core holds its tiles (``GameState.tiles``): the
table reported ``WALL_READER``, ``SEAT_READER`` and ``WALL_TAKE_SENSORS`` at the hello,
every wall's layout was read and trusted at the dice, and no ``tiles_off`` event came
since. Everything here is skipped in any other hand, which is keyed in as before.

Kantan (own walls) too: a call's meld zone shows the caller's own tiles and the stand-in
it takes from its own wall (the called tile stays in the discarder's pond), a ron names
its discarders from the tiles, and the 18th discards may be ronned by every seat.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from firmware_bridge import messages as m
from tablectl.console.host import SHORT_REFUSALS, ConsoleHost, log
from tablectl.console.model import LINE, Pending, RonValue, WinEntry, fit
from tablectl.rules import events as ev
from tablectl.rules import tilechecks as checks
from tablectl.rules import tiletrack
from tablectl.rules.core import step
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import hand_value, ron_points, tsumo_payments
from tablectl.rules.state import GameState
from tablectl.rules.tiletracker import SeatTiles
from tablectl.rules.wall import WallState, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.tiles.hand import HandScore
from tablectl.tiles.ids import KIND_NAMES, TileSet, kind, tile_set

#: What the table must report at the hello for its hands to be tile-aware.
TILE_CAPS = m.Capability.WALL_READER | m.Capability.SEAT_READER | m.Capability.WALL_TAKE_SENSORS
#: Tiles each kind of meld shows in the meld zone (a call: the called tile with the own;
#: kantan's stand-in in place of the called tile).
MELD_SIZE = {"chi": 3, "pon": 3, "kan": 4, "closed": 4, "added": 1, "north": 1}
_FURITEN = (
    (re.compile(r"has discarded (\S+)$"), "in your discards"),
    (re.compile(r"let (\S+) pass after its riichi"), "passed in riichi"),
    (re.compile(r"let (\S+) pass since"), "passed this turn"),
)


@dataclass
class HeldMeld:
    """A call, kan or north keyed by ``seat`` and waiting for its tiles in the seat's meld
    zone (``PLACE MELD``): ``kind`` chi/pon/kan (a call on ``discarder``'s discard) or
    closed/added/north (own turn). ``take``: kantan, the position of the stand-in the seat
    took from its wall before its own tiles showed (applied right after the call)."""

    seat: int
    kind: str
    discarder: int | None = None
    take: int | None = None


def value_text(han: int, fu: int | None, yakuman: int, *, fu_counts: bool = True) -> str:
    """A scored value: ``3 HAN 40 FU``, ``YAKUMAN x2``; without the fu where they do not
    count (5 han and more, a table without fu)."""
    if yakuman:
        return "YAKUMAN" + ("" if yakuman == 1 else f" x{yakuman}")
    if fu is None or not fu_counts or han >= 5:
        return f"{han} HAN"
    return f"{han} HAN {fu} FU"


def score_line(entry: WinEntry, *, fu_counts: bool = True) -> str:
    """Line 1 of a scored win: ``3 HAN 40 FU 5200 OK?``, ``YAKUMAN 32000 OK?``; kantan's
    ron off several discarders with their number and the sum: ``RON x2 9000 OK?``."""
    if entry.each:
        return fit(f"RON x{len(entry.each)} {entry.points} OK?")
    value = value_text(entry.han, entry.fu, entry.yakuman, fu_counts=fu_counts)
    text = f"{value} {entry.points} OK?"
    if len(text) > LINE:
        text = text.replace(" HAN ", "HAN ").replace(" FU ", "FU ")
    return fit(text)


def hand_text(tiles: TileSet, missing: Sequence[int], extra: Sequence[int]) -> str:
    """What a seat's display says when its HAND zone disagrees with its hand (after
    ``! ``): ``hand: 0p not 5p`` (one tile read as another: ``extra`` read, ``missing``
    held), ``hand: another 5p`` (another copy of the same kind), ``hand: no 5p 7s``,
    ``hand: extra 5p``, or how many tiles differ when the names do not fit the line."""
    shown, held = [tiles.name(t) for t in extra], [tiles.name(t) for t in missing]
    if len(shown) == len(held) == 1:
        if shown == held:
            return f"hand: another {held[0]}"
        return f"hand: {shown[0]} not {held[0]}"
    text = ""
    if held and not shown:
        text = " ".join(("hand: no", *held))
    elif shown and not held:
        text = " ".join(("hand: extra", *shown))
    if text and len(text) + 2 <= LINE:  # the line also carries the "! "
        return text
    return f"hand: {len(shown) + len(held)} tiles differ"


def yaku_pages(yaku: Sequence[str]) -> list[str]:
    """The yaku cut into display lines (each name is at most one line), key 0 pages."""
    pages: list[str] = []
    for name in yaku:
        if pages and len(pages[-1]) + 2 + len(name) <= LINE:
            pages[-1] += ", " + name
        else:
            pages.append(fit(name))
    return pages or [""]


def _owned(st: SeatTiles) -> set[int]:
    """Every tile a seat holds, has discarded, laid in its meld zone (called tiles,
    kantan's stand-ins) or pulled."""
    return {*st.concealed, *(d.tile for d in st.discards), *st.meld_zone}


class TileFlow(ConsoleHost):
    """The daemon's side of a table that reads its tiles (see the module docstring)."""

    capabilities: m.Capability
    wall_layouts: dict[int, tuple[int, ...]]
    layouts_void: bool
    #: The latest snapshot of every seat's meld and discard zones (seat readers).
    zone_melds: list[tuple[int, ...]]
    zone_ponds: list[tuple[int, ...]]
    #: The latest snapshot of every seat's hand zone this hand (None: none came yet).
    zone_hands: list[tuple[int, ...] | None]
    #: Each seat's tiles when its turn last began (None: not since the deal or a
    #: restart): what it took, discarded or melded since may still be in flight.
    turn_starts: list[SeatTiles | None]
    held_meld: HeldMeld | None

    # ------------------------------------------------------------------ set-up

    def reads_tiles(self) -> bool:
        """The table reads every tile (its hands are tile-aware when the layouts are
        trusted): the wall and seat readers, and the take sensors that say which wall
        position each tile came from."""
        return (self.capabilities & TILE_CAPS) == TILE_CAPS

    def tile_hand(self) -> bool:
        """The hand in progress is tile-aware (the rules core holds its tiles)."""
        return self.state.tiles is not None

    def load_scorer(self) -> None:
        """Import the scorer (and the ``mahjong`` package: 70-90 ms) when a table that
        reads tiles connects, so that the first TSUMO does not wait for it."""
        if self.reads_tiles():
            importlib.import_module("tablectl.rules.tilescoring")

    def reset_zones(self) -> None:
        """Forget the zones (a new hand: the shuffle empties them)."""
        self.zone_melds = [() for _ in range(self.players)]
        self.zone_ponds = [() for _ in range(self.players)]
        self.zone_hands = [None] * self.players
        self.turn_starts = [None] * self.players
        self.hand_misread = {}
        self.held_meld = None

    def _start_tiles(self) -> None:
        """Right after the dice: the layout of the whole wall, when every wall was read
        and trusted; the hand is then tile-aware."""
        # Each kept layout has its wall's length (Table._wall_layout drops any other).
        walls = [self.wall_layouts.get(w) for w in range(self.players)]
        if not self.reads_tiles() or self.layouts_void or any(w is None for w in walls):
            return
        layout = tuple(t for w in walls if w is not None for t in w)
        refusal = self._apply(ev.Layout(tiles=layout))
        if refusal is not None:
            log.warning("[%s] the wall layout was refused (%s): this hand is keyed in",
                        self.table_id, refusal.message)  # fmt: skip

    def _take_tile(self, pos: int) -> int | None:
        """The tile a take at ``pos`` brings in a tile-aware hand (the layout's)."""
        tiles = self.state.tiles
        if tiles is None or not 0 <= pos < len(tiles.layout):
            return None
        return tiles.layout[pos]

    def tiles_off(self, reason: str) -> None:
        """Stop reading tiles for the rest of the hand (journalled ``tiles_off``): the
        hand goes on keyed in; a meld waiting for its tiles is made as keyed."""
        if not self.tile_hand():
            return
        log.warning("[%s] tile reading off for the rest of the hand: %s", self.table_id, reason)
        self._apply(ev.TilesOff(reason=reason))
        held, self.held_meld = self.held_meld, None
        if held is not None:
            console = self.consoles[held.seat]
            if console.prompt == "PLACE MELD":
                console.prompt, console.typed = "", ""
            refusal = self._apply(*self._meld_events(held, ()))
            if refusal is not None:
                self._refuse(held.seat, refusal)
            if held.take is not None:
                self.apply_take(held.seat, held.take)  # the stand-in, keyed as the call
        for console in self.consoles:
            if not console.prompt:
                console.message = "KEY ENTRY: NO TILES"

    def apply_take(self, seat: int, pos: int) -> None:
        """A take at ``pos`` by ``seat``, after the discard it implies: in a tile-aware
        hand with the layout's tile (the layouts void: the tiles go off first), and held
        instead while it is kantan's stand-in for a call still waiting for its meld. A
        take that begins the seat's turn has its hand checked."""
        tile = None
        if self.state.tiles is not None:
            if self.layouts_void:
                self.tiles_off(f"seat {seat}'s take at {pos} was read as another tile")
            else:
                tile = self._take_tile(pos)
        if self._hold_take(seat, pos):
            return
        before = self.state
        refusal = self._apply(*self._implied_discard(actor=seat), ev.Take(seat, pos, tile))
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        self.consoles[seat].message = ""
        self.check_hand_at_take(seat, before)

    def _hold_take(self, seat: int, pos: int) -> bool:
        """Kantan: a take by a seat whose call waits at ``PLACE MELD`` is the tile that
        stands in for the called one, lifted before the caller's own tiles showed in its
        meld zone. The call must come first in the core (it makes the next take the
        stand-in), so the take is kept and applied right after it (or as the seat's draw
        if the call is withdrawn). True if kept (a resend of it too)."""
        held = self.held_meld
        kantan_call = held is not None and held.kind in ("chi", "pon") and held.seat == seat
        if held is None or not kantan_call or not self.rules.wall.own_walls:
            return False
        if held.take is None:
            log.info("[%s] seat %d's take of %d waits for its call's meld",
                     self.table_id, seat, pos)  # fmt: skip
            held.take = pos
        return held.take == pos

    def reader_fault(self, detail: int) -> None:
        """A ``Fault(TILE_READER)``: a seat reader (detail 0x100 + 16 * seat + zone) or the
        wall reader failed. A tile-aware hand goes on keyed in."""
        what = "wall reader" if detail < 0x100 else f"seat {(detail - 0x100) // 16} reader"
        self.tiles_off(f"{what} fault")

    # ------------------------------------------------------------------ the zones

    async def seat_tiles(self, seat: int, zone: m.Zone, tiles: tuple[int, ...]) -> None:
        """A seat reader's snapshot: kept, and read for a discard or a meld."""
        if not 0 <= seat < self.players:
            return
        if zone == m.Zone.HAND:
            self.zone_hands[seat] = tiles  # a check only, at the moments of check_hand
        elif zone == m.Zone.DISCARDS:
            self.zone_ponds[seat] = tiles
            if self.tile_hand():
                await self._pond_changed(seat)
        elif zone == m.Zone.MELDS:
            self.zone_melds[seat] = tiles
            if self.tile_hand():
                self._try_meld(seat)

    # ------------------------------------------------------------------ the hands

    def check_hand(self, seat: int, in_flight: Collection[int] = ()) -> str | None:
        """Compare ``seat``'s ``HAND`` zone with its hand as the tiles have it, id by id
        (a red five is not its plain copy), leaving out ``in_flight``: tiles that moved
        in or out of the hand so lately that the reader may not show it yet.

        Called only when the seat's hand must be still (see the callers). A disagreement
        turns the tiles off for the rest of the hand, as a reader fault does (docs/tiles.md,
        "The daemon": the daemon cannot tell a misread from a tile moved where no reader
        saw it, so it guesses neither) and is shown on the seat's display; returns that
        text (``hand: 0p not 5p``), or None when they agree or no snapshot came yet."""
        shown, tiles = self.zone_hands[seat], self.state.tiles
        if shown is None or tiles is None:
            return None
        held = set(tiles.seats[seat].concealed)
        missing = sorted(held - set(shown) - set(in_flight))
        extra = sorted(set(shown) - held - set(in_flight))
        if not missing and not extra:
            return None
        tileset = tile_set(self.rules)

        def ids(found: list[int]) -> str:
            return ", ".join(f"{tileset.name(t)} (id {t})" for t in found)

        said = [f"it shows {ids(extra)}, which the seat does not hold"] if extra else []
        said += [f"it does not show {ids(missing)}, which the seat holds"] if missing else []
        self.tiles_off(f"seat {seat}'s hand reader disagrees with its hand: {'; '.join(said)}")
        text = hand_text(tileset, missing, extra)
        self.hand_misread[seat] = "! " + text
        self._refuse(seat, text)
        return text

    def moved_this_turn(self, seat: int) -> set[int]:
        """The tiles that came into or left ``seat``'s hand since its turn began (the take,
        a kan or north and its replacement tile, the discard): the reader may lag them."""
        tiles = self.state.tiles
        if tiles is None:
            return set()
        now, start = tiles.seats[seat], self.turn_starts[seat]
        if start is None:
            return set() if now.drawn is None else {now.drawn}
        # A tile taken and put out again this turn is in neither hand, but it is in the
        # seat's pond or melds now and was not then.
        return (set(start.concealed) ^ set(now.concealed)) | (_owned(now) - _owned(start))

    def check_hand_at_take(self, seat: int, before: GameState) -> None:
        """After a take that begins ``seat``'s turn (a deal block, a live draw; not a
        replacement tile or kantan's stand-in, which come in the middle of a move): the
        hand has been still since the seat's last move, so its zone must show it, the
        tiles just taken either way. A disagreement is thus one that lasted from the
        seat's last move to its next, never a reader catching up."""
        wall, tiles, after = before.wall, before.tiles, self.state.tiles
        if wall is None or tiles is None or after is None:
            return
        if wall.phase == "rinshan" or wall.replacing_call:
            return
        start = self.turn_starts[seat] = tiles.seats[seat]
        self.check_hand(seat, set(after.seats[seat].concealed) - set(start.concealed))

    def check_winner_hand(self, seat: int, *, tsumo: bool) -> None:
        """At TSUMO or RON in a tile-aware hand: the winner's zone must show the hand the
        tiles score (by tsumo, what moved this turn may lag). A disagreement turns the
        tiles off: the win is keyed (``HAN?``, with the disagreement on line 2)."""
        if self.tile_hand():
            self.check_hand(seat, self.moved_this_turn(seat) if tsumo else ())

    def check_hands_at_draw(self) -> bool:
        """Before the tiles decide the exhaustive draw: every hand as its zone shows it
        (the last discarder's last move may lag). False if one disagreed: the tiles are
        off and the players declare the draw with the keys."""
        wall = self.state.wall
        last = None if wall is None else wall.last_discard
        for seat in range(self.players):
            lag = self.moved_this_turn(seat) if seat == last else set()
            if self.check_hand(seat, lag) is not None:
                return False
        return True

    def _unplayed(self, seat: int) -> list[int]:
        """Tiles in ``seat``'s pond that the tiles do not have as its discards yet."""
        tiles = self.state.tiles
        assert tiles is not None
        river = {d.tile for d in tiles.seats[seat].discards}
        return [t for t in self.zone_ponds[seat] if t not in river]

    async def _pond_changed(self, seat: int) -> None:
        """A tile new in the pond of the seat to discard is its discard."""
        wall = self.state.wall
        fresh = self._unplayed(seat)
        if wall is None or not fresh:
            return
        if len(fresh) > 1:
            self.tiles_off(f"seat {seat}'s pond shows {len(fresh)} new tiles")
            return
        if wall.phase not in ("discard", "called") or wall.turn != seat:
            log.info("[%s] seat %d's pond shows a tile out of turn", self.table_id, seat)
            return
        refusal = self._apply(ev.Discard(seat=seat, tile=fresh[0]))
        if refusal is not None:
            if refusal.code == "tile_not_in_hand":
                self.tiles_off(f"seat {seat}'s pond shows a tile it did not hold")
                return
            self._refuse(seat, refusal)  # a rule (kuikae, riichi): take it back
            return
        self.consoles[seat].message = ""
        after = self.state.wall
        if after is not None and after.finished:
            await self._last_discard_window(seat)

    def implied_tiles(self, seat: int) -> tuple[ev.Event, ...]:
        """The discard of ``seat`` another seat's action implies, in a tile-aware hand:
        with the tile its pond shows; without one, the tiles are off (a discard the
        reader missed) and the discard is keyed."""
        fresh = self._unplayed(seat)
        if len(fresh) == 1:
            return (ev.Discard(seat=seat, tile=fresh[0]),)
        reason = f"seat {seat}'s discard not read"
        log.warning("[%s] %s: tile reading off for the rest of the hand", self.table_id, reason)
        return (ev.TilesOff(reason=reason), ev.Discard(seat=seat))

    # ------------------------------------------------------------------ melds

    def hold_meld(self, held: HeldMeld) -> None:
        """A call, kan or north key in a tile-aware hand: made once the meld zone shows
        its tiles (at once if it already does), else ``PLACE MELD`` until it does."""
        probe = self._meld_events(held, ())
        state = self._state_after(probe[:-1])
        if isinstance(state, Refusal):
            self._refuse(held.seat, state)
            return
        _, effects = step(state, probe[-1])
        refusal = next((e for e in effects if isinstance(e, Refusal)), None)
        if refusal is not None and refusal.code != "tile_unknown":
            self._refuse(held.seat, refusal)  # the wall says no, whatever the tiles
            return
        self.held_meld = held
        self._open(held.seat, "PLACE MELD", typed=held.kind.upper())
        self._try_meld(held.seat)

    def _meld_events(self, held: HeldMeld, tiles: tuple[int, ...]) -> tuple[ev.Event, ...]:
        seat = held.seat
        if held.kind in ("chi", "pon", "kan"):
            assert held.discarder is not None
            call = ev.Call(seat=seat, kind=held.kind, discarder=held.discarder, tiles=tiles)  # type: ignore[arg-type]
            return (*self._implied_discard(actor=seat), call)
        if held.kind == "north":
            return (ev.North(seat=seat, tile=tiles[0] if tiles else None),)
        return (ev.Kan(seat=seat, kind=held.kind, tiles=tiles),)  # type: ignore[arg-type]

    def _state_after(self, events: Sequence[ev.Event]) -> GameState | Refusal:
        state = self.state
        for event in events:
            state, effects = step(state, event)
            refusal = next((e for e in effects if isinstance(e, Refusal)), None)
            if refusal is not None:
                return refusal
        return state

    def _try_meld(self, seat: int) -> None:
        """Make the held meld of ``seat`` if its meld zone shows it."""
        held = self.held_meld
        if held is None or held.seat != seat:
            return
        if self.consoles[seat].prompt != "PLACE MELD":
            self.held_meld = None  # swept by a phase change, or withdrawn
            return
        laid = self._fresh_melds(seat)
        own = MELD_SIZE[held.kind]
        if held.kind in ("chi", "pon", "kan"):
            own -= 1
            before = self._before_call(held)
            if self.rules.wall.own_walls:
                # Kantan: the called tile stays in its pond, and the stand-in the caller
                # lifts from its own wall may lie here before its take is reported.
                laid = [t for t in laid if t != self._stand_in(held, before)]
            elif len(laid) > own:
                called = self._called_tile(held, before)
                if called not in laid:
                    self._refuse(seat, f"not that {held.kind}")
                    return
                laid = [t for t in laid if t != called]
            else:
                return
        if len(laid) < own:
            return
        if len(laid) > own:
            self._refuse(seat, f"not that {held.kind}")
            return
        refusal = self._apply(*self._meld_events(held, tuple(laid)))
        if refusal is None:
            self._release(held)
            return
        self._refuse(seat, refusal)
        if refusal.code not in SHORT_REFUSALS:
            self._release(held)  # not about the tiles laid (the turn moved on): it is gone

    def _release(self, held: HeldMeld) -> None:
        """The held meld is made, withdrawn or gone: its prompt closes, and a stand-in
        take it kept is applied (the stand-in after the call; else the seat's draw)."""
        self.held_meld = None
        console = self.consoles[held.seat]
        if console.prompt == "PLACE MELD":
            console.prompt, console.typed = "", ""
        if held.take is not None:
            self.apply_take(held.seat, held.take)

    def _before_call(self, held: HeldMeld) -> GameState | None:
        """The state the held call would be made in (after the discard it implies)."""
        state = self._state_after(self._meld_events(held, ())[:-1])
        return None if isinstance(state, Refusal) or state.tiles is None else state

    def _called_tile(self, held: HeldMeld, before: GameState | None) -> int | None:
        """The tile the held call takes: the discarder's last discard."""
        if before is None or before.tiles is None or held.discarder is None:
            return None
        river = before.tiles.seats[held.discarder].discards
        return river[-1].tile if river else None

    def _stand_in(self, held: HeldMeld, before: GameState | None) -> int | None:
        """Kantan: the tile the caller's next take brings from its own wall, to lie in its
        meld zone for the called tile (the one it took already, if it did)."""
        if before is None or before.tiles is None or before.wall is None:
            return None
        pos = held.take
        if pos is None:
            rules = wall_rules(self.rules)
            call = ev.Call(held.seat, held.kind, held.discarder)  # type: ignore[arg-type]
            after = wall_step(rules, before.wall, call)
            pos = next_position(rules, after, held.seat) if isinstance(after, WallState) else None
        return None if pos is None else before.tiles.layout[pos]

    async def _meld_prompt(self, seat: int, key: m.Key) -> None:
        """CANCEL at ``PLACE MELD``: the call is withdrawn (a stand-in already lifted is
        then the seat's draw)."""
        if key == m.Key.CANCEL and self.held_meld is not None:
            self._release(self.held_meld)
        elif key == m.Key.CANCEL:
            self.consoles[seat].prompt, self.consoles[seat].typed = "", ""

    # ------------------------------------------------------------------ wins

    def win_score(
        self, seat: int, *, tsumo: bool, discarder: int | None, state: GameState | None = None
    ) -> HandScore | tuple[str, str]:
        """What ``seat``'s win is worth by the tiles, or why it is no win (a short head
        and detail for the two display lines)."""
        from tablectl.rules.tilescoring import score_win

        state = self.state if state is None else state
        tiles = state.tiles
        assert tiles is not None
        st = tiles.seats[seat]
        if tsumo:
            if not checks.is_complete(self.rules, st.concealed):
                return "not a win", "hand not complete"
        else:
            tile = checks.ron_tile(state, -1 if discarder is None else discarder)
            if tile is None:
                return "not a win", "nothing to ron"
            name = KIND_NAMES[kind(tile)]
            if not checks.is_complete(self.rules, (*st.concealed, tile)):
                return "not a win", f"{name} is no wait"
            reason = checks.furiten(self.rules, tiles, seat, tile)
            if reason is not None:
                for pattern, said in _FURITEN:
                    found = pattern.search(reason)
                    if found:
                        return f"furiten: {found.group(1)}", said
                return "furiten", ""
        ctx = checks.win_context(self.rules, state, seat, tsumo, discarder)
        score = score_win(self.rules, ctx)
        if isinstance(score, Refusal):
            detail = {
                "no_yaku": "dora are no yaku",
                "atozuke": "no atozuke here",
                "not_complete": "hand not complete",
            }.get(score.code, score.code)
            head = "no yaku" if score.code in ("no_yaku", "atozuke") else "not a win"
            return head, detail
        return score

    def kantan_discarders(
        self, seat: int, state: GameState | None = None
    ) -> list[int] | tuple[str, str]:
        """Kantan: every other seat whose last discard ``seat`` wins on by the tiles, in
        turn order after it (ロン牌が複数ある場合は全員からあがれる: the tiles name them all,
        and the winner never gains by leaving one out), or why none is a win: the reason a
        completing tile gave (no yaku), else that none completes the hand."""
        state = self.state if state is None else state
        wall = state.wall
        found: list[int] = []
        why = ("not a win", "no last discard wins")
        for step_ in range(1, self.players):
            discarder = (seat + step_) % self.players
            if wall is None or not wall.discards[discarder]:
                continue
            score = self.win_score(seat, tsumo=False, discarder=discarder, state=state)
            if isinstance(score, tuple):
                why = why if score[0] == "not a win" else score
                continue
            found.append(discarder)
        return found or why

    def refuse_win(self, seat: int, why: tuple[str, str]) -> None:
        """A win the tiles do not make, on both display lines (``! furiten: 3p`` / ``in
        your discards``); nothing changes."""
        head, detail = why
        self.consoles[seat].message = fit(f"! {head}") + "\n" + fit(detail)
        log.info("[%s] seat %d's win refused: %s %s", self.table_id, seat, head, detail)
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100))

    def scored_entry(self, seat: int, score: HandScore, *, tsumo: bool) -> WinEntry:
        """The win entry of a scored hand: its han, fu or yakuman, its points as the rules
        core pays them (without honba and deposits) and its yaku."""
        from tablectl.rules.tilescoring import to_hand

        hand = to_hand(score, seat)
        value = hand_value(self.rules, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=tsumo)
        points = 0
        if not isinstance(value, Refusal):
            dealer = self.state.dealer
            if tsumo:
                points = sum(tsumo_payments(self.rules, value, winner=seat, dealer=dealer))
            else:
                points = ron_points(self.rules, value, dealer=seat == dealer)
        return WinEntry(
            seat=seat,
            han=hand.han,
            fu=hand.fu,
            yakuman=hand.yakuman,
            scored=True,
            points=points,
            yaku=list(score.yaku),
        )

    def _scored(
        self, seat: int, *, tsumo: bool, discarders: tuple[int, ...]
    ) -> WinEntry | tuple[str, str]:
        """``seat``'s win entry as the tiles score it, or why it is no win. Kantan's ron
        off several discarders is scored once per discarder, on that discarder's tile
        (each pays its own value: docs/rules.md, "Several winners")."""
        if tsumo or len(discarders) < 2:
            discarder = discarders[0] if discarders else None
            score = self.win_score(seat, tsumo=tsumo, discarder=discarder)
            if isinstance(score, tuple):
                return score
            return self.scored_entry(seat, score, tsumo=tsumo)
        entries: list[WinEntry] = []
        for discarder in discarders:
            score = self.win_score(seat, tsumo=False, discarder=discarder)
            if isinstance(score, tuple):
                return score
            entries.append(self.scored_entry(seat, score, tsumo=False))
        each = [
            RonValue(d, e.han, e.fu, e.yakuman, e.points, e.yaku)
            for d, e in zip(discarders, entries, strict=True)
        ]
        # The first discarder's value stands for the entry; the winner gets the sum.
        return replace(entries[0], points=sum(v.points for v in each), each=each)

    async def open_scored_entry(
        self,
        kind_: str,
        seats: list[int],
        discarders: tuple[int, ...],
        trigger: str = "enter_result",
    ) -> None:
        """Each winner's display: the tiles' value, ``OK?``; a seat whose hand the tiles
        refuse is told why and leaves the win (``trigger`` enters the entry phase)."""
        entries: dict[int, WinEntry] = {}
        for seat in seats:
            entry = self._scored(seat, tsumo=kind_ == "tsumo", discarders=discarders)
            if isinstance(entry, tuple):
                self.refuse_win(seat, entry)
                continue
            entries[seat] = entry
        self.pending = Pending(
            kind=kind_, discarders=discarders, seats=list(entries), entries=entries
        )
        if not entries:
            self.pending = None
            return
        await self._trigger(trigger)
        for seat in entries:
            self._open(seat, "OK?")
            self.consoles[seat].choice = 0

    async def _score_prompt(self, seat: int, key: m.Key) -> None:
        """``OK?``: OK agrees with the tiles' value (PAO? next for a yakuman where the
        preset has pao), CANCEL takes the win back, 0 pages the yaku."""
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key == m.Key.DIGIT_0:
            console.choice = ((console.choice or 0) + 1) % len(self.score_pages(entry))
            console.message = ""
        elif key == m.Key.CANCEL:
            await self._cancel_entry(seat)
        elif key == m.Key.OK:
            if entry.yakuman and self.rules.scoring.pao:
                console.prompt, console.typed = "PAO?", ""
                return
            await self._entry_done(seat)

    def score_lines(self, seat: int) -> tuple[str, str]:
        """The two lines of a seat at ``OK?``."""
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            return "OK?", fit(console.message)
        line1 = score_line(entry, fu_counts=self.rules.scoring.table == "standard")
        if console.message:
            return line1, fit(console.message)
        pages = self.score_pages(entry)
        return line1, pages[(console.choice or 0) % len(pages)]

    def score_pages(self, entry: WinEntry) -> list[str]:
        """Line 2 at ``OK?``, paged with 0: the yaku; for kantan's ron off several
        discarders each one's wind and value (``S: 3 HAN 6000``) before its yaku."""
        if not entry.each:
            return yaku_pages(entry.yaku)
        fu_counts = self.rules.scoring.table == "standard"
        pages: list[str] = []
        for v in entry.each:
            wind = "ESWN"[(v.discarder - self.state.dealer) % self.players]
            value = value_text(v.han, v.fu, v.yakuman, fu_counts=fu_counts)
            pages += [fit(f"{wind}: {value} {v.points}"), *yaku_pages(v.yaku)]
        return pages

    # ------------------------------------------------------------------ the draw

    async def _last_discard_window(self, discarder: int) -> None:
        """The last discard is out: the other seats may ron it (``RON?``); when every one
        passed (or the claim window ran out) the tiles decide the draw. Kantan: every seat
        may ron the others' 18th discards (18枚目の捨て牌は流局後にロン出来る): no discarder
        is named, and each seat's ron names its own."""
        kantan = self.rules.wall.own_walls
        self.pending = Pending(
            kind="claim", discarders=() if kantan else (discarder,), seats=[], answered=set()
        )
        for other in range(self.players):
            if other != discarder or kantan:
                self._open(other, "RON?")
                self.consoles[other].message = "LAST DISCARDS" if kantan else "LAST DISCARD"
        await self._trigger("claim_opened")
        self.claim_deadline = self.now() + self.claim_window_s

    async def tile_draw(self) -> None:
        """The exhaustive draw as the tiles say it: each seat's display shows TENPAI,
        NOTEN or NAGASHI over the settlement, and FURITEN for a tenpai riichi the core
        made a chombo (sanma-free's furiten riichi: a noten one shows NOTEN)."""
        if not self.check_hands_at_draw():
            return
        draw = tiletrack.expected_draw(self.state)
        assert draw is not None
        said = {
            seat: "NAGASHI"
            if seat in draw.nagashi
            else "TENPAI"
            if seat in draw.tenpai
            else "NOTEN"
            for seat in range(self.players)
        }
        refusal = self._apply(draw)
        if refusal is not None:
            log.error("[%s] the draw the tiles say was refused: %s", self.table_id, refusal)
            return
        point = self.state.undo
        if point is not None and point.record.result == "chombo":
            for seat in point.record.detail.get("seats", []):
                if said[seat] == "TENPAI":
                    said[seat] = "FURITEN"
        await self._trigger("hand_over")
        for seat, console in enumerate(self.consoles):
            if console.prompt in ("CONFIRM", "GAME OVER"):
                console.typed = said[seat]

    def _fresh_melds(self, seat: int) -> list[int]:
        """Tiles in ``seat``'s meld zone that the tiles do not have there yet."""
        tiles = self.state.tiles
        if tiles is None:
            return []
        placed = set(tiles.seats[seat].meld_zone)
        return [t for t in self.zone_melds[seat] if t not in placed]

    def _unread(self) -> tuple[list[list[int]], list[list[int]]]:
        """The tiles the zones show that the tiles of the hand do not have yet (a discard
        refused, a meld laid before its key), per seat: ponds, melds."""
        if self.state.tiles is None:
            return [[] for _ in range(self.players)], [[] for _ in range(self.players)]
        ponds = [self._unplayed(s) for s in range(self.players)]
        return ponds, [self._fresh_melds(s) for s in range(self.players)]

    def tile_flow_snapshot(self) -> dict[str, Any]:
        """What :meth:`Table.flow_snapshot` stores of the tiles: the tiles the zones show
        beyond the hand's tiles (usually none, so a discard changes nothing stored) and a
        held meld; the rest of the zones is the rules state's."""
        held = self.held_meld
        ponds, melds = self._unread()
        return {
            "unread_ponds": ponds,
            "unread_melds": melds,
            "held_meld": None
            if held is None
            else {
                "seat": held.seat,
                "kind": held.kind,
                "discarder": held.discarder,
                "take": held.take,
            },
        }

    def tile_flow_key(self) -> tuple[Any, ...]:
        """The durable part of :meth:`tile_flow_snapshot`, cheap to compare."""
        held = self.held_meld
        ponds, melds = self._unread()
        return (
            tuple(map(tuple, ponds)),
            tuple(map(tuple, melds)),
            None if held is None else (held.seat, held.kind, held.discarder, held.take),
        )

    def restore_tile_flow(self, snapshot: dict[str, Any]) -> None:
        """Take up :meth:`tile_flow_snapshot` (absent in a snapshot from before: nothing
        unread, no held meld): the zones are the hand's tiles and the unread ones. Raises
        ValueError (KeyError, TypeError) on a bad one."""
        ponds = [[int(t) for t in z] for z in snapshot.get("unread_ponds", [])]
        melds = [[int(t) for t in z] for z in snapshot.get("unread_melds", [])]
        if ponds and (len(ponds) != self.players or len(melds) != self.players):
            raise ValueError(f"unread tiles of {len(ponds)} seats")
        raw = snapshot.get("held_meld")
        held = None
        if raw is not None:
            if raw["kind"] not in MELD_SIZE or not 0 <= int(raw["seat"]) < self.players:
                raise ValueError(f"a held meld of kind {raw['kind']!r} by seat {raw['seat']}")
            discarder, take = raw.get("discarder"), raw.get("take")
            held = HeldMeld(
                int(raw["seat"]),
                str(raw["kind"]),
                None if discarder is None else int(discarder),
                None if take is None else int(take),
            )
        self.reset_zones()
        tiles = self.state.tiles
        if tiles is not None:
            for seat, st in enumerate(tiles.seats):
                # What the readers show: kantan's called tiles in the ponds, its stand-ins
                # in the meld zones.
                self.zone_ponds[seat] = (*st.pond, *(ponds[seat] if ponds else ()))
                self.zone_melds[seat] = (*st.meld_zone, *(melds[seat] if melds else ()))
        self.held_meld = held
