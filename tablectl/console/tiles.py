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
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from firmware_bridge import messages as m
from tablectl.console.core import SHORT_REFUSALS, TableCore, log
from tablectl.console.layouts import WallLayouts
from tablectl.console.model import LINE
from tablectl.console.prompts import Prompt
from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState
from tablectl.rules.tiletracker import SeatTiles
from tablectl.rules.wall import WallState, implied_discarder, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.tiles.ids import TileSet, tile_set

#: What the table must report at the hello for its hands to be tile-aware.
TILE_CAPS = m.Capability.WALL_READER | m.Capability.SEAT_READER | m.Capability.WALL_TAKE_SENSORS
#: A held meld: a call on a discard (chi, pon, kan) or an own-turn kan or north.
MeldKind = Literal["chi", "pon", "kan", "closed", "added", "north"]
#: Tiles each kind of meld shows in the meld zone (a call: the called tile with the own;
#: kantan's stand-in in place of the called tile).
MELD_SIZE: dict[MeldKind, int] = {"chi": 3, "pon": 3, "kan": 4, "closed": 4, "added": 1, "north": 1}


@dataclass
class HeldMeld:
    """A call, kan or north keyed by ``seat`` and waiting for its tiles in the seat's meld
    zone (``PLACE MELD``): ``kind`` chi/pon/kan (a call on ``discarder``'s discard) or
    closed/added/north (own turn). ``take``: kantan, the position of the stand-in the seat
    took from its wall before its own tiles showed (applied right after the call)."""

    seat: int
    kind: MeldKind
    discarder: int | None = None
    take: int | None = None


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


def _owned(st: SeatTiles) -> set[int]:
    """Every tile a seat holds, has discarded, laid in its meld zone (called tiles,
    kantan's stand-ins) or pulled."""
    return {*st.concealed, *(d.tile for d in st.discards), *st.meld_zone}


class TileFlow:
    """The daemon's side of a table that reads its tiles (see the module docstring).

    Owns the zones the seat readers last showed, the meld waiting for its tiles and the
    table's capabilities; stores the tiles the zones show beyond the hand's and the held
    meld. Declares ``PLACE MELD``."""

    #: The latest snapshot of every seat's meld and discard zones (seat readers).
    zone_melds: list[tuple[int, ...]]
    zone_ponds: list[tuple[int, ...]]
    #: The latest snapshot of every seat's hand zone this hand (None: none came yet).
    zone_hands: list[tuple[int, ...] | None]
    #: Each seat's tiles when its turn last began (None: not since the deal or a
    #: restart): what it took, discarded or melded since may still be in flight.
    turn_starts: list[SeatTiles | None]
    #: Per seat, what its display said when its hand zone disagreed with the tiles this
    #: hand (a keyed win entry shows it again: it says why the value is keyed).
    hand_misread: dict[int, str]
    held_meld: HeldMeld | None

    def __init__(self, core: TableCore, layouts: WallLayouts) -> None:
        self.core = core
        self.layouts = layouts
        #: What the table reported at the hello (tile-aware hands need the readers).
        self.capabilities = m.Capability.NONE
        self.reset_zones()

    def reads_tiles(self) -> bool:
        """The table reads every tile (its hands are tile-aware when the layouts are
        trusted): the wall and seat readers, and the take sensors that say which wall
        position each tile came from."""
        return (self.capabilities & TILE_CAPS) == TILE_CAPS

    def tile_hand(self) -> bool:
        """The hand in progress is tile-aware (the rules core holds its tiles)."""
        return self.core.state.tiles is not None

    def load_scorer(self) -> None:
        """Import the scorer (and the ``mahjong`` package: 70-90 ms) when a table that
        reads tiles connects, so that the first TSUMO does not wait for it."""
        if self.reads_tiles():
            importlib.import_module("tablectl.rules.tilescoring")

    def reset_zones(self) -> None:
        """Forget the zones (a new hand: the shuffle empties them)."""
        self.zone_melds = [() for _ in range(self.core.players)]
        self.zone_ponds = [() for _ in range(self.core.players)]
        self.zone_hands = [None] * self.core.players
        self.turn_starts = [None] * self.core.players
        self.hand_misread = {}
        self.held_meld = None

    def take_tile(self, pos: int) -> int | None:
        """The tile a take at ``pos`` brings in a tile-aware hand (the layout's)."""
        tiles = self.core.state.tiles
        if tiles is None or not 0 <= pos < len(tiles.layout):
            return None
        return tiles.layout[pos]

    def tiles_off(self, reason: str) -> None:
        """Stop reading tiles for the rest of the hand (journalled ``tiles_off``): the
        hand goes on keyed in; a meld waiting for its tiles is made as keyed."""
        if not self.tile_hand():
            return
        log.warning(
            "[%s] tile reading off for the rest of the hand: %s", self.core.table_id, reason
        )
        self.core.apply(ev.TilesOff(reason=reason))
        held, self.held_meld = self.held_meld, None
        if held is not None:
            console = self.core.consoles[held.seat]
            if console.prompt == Prompt.PLACE_MELD:
                self.core.close(held.seat)
                console.typed = ""
            refusal = self.core.apply(*self.meld_events(held, ()))
            if refusal is not None:
                self.core.refuse(held.seat, refusal)
            if held.take is not None:
                self.apply_take(held.seat, held.take)  # the stand-in, keyed as the call
        for console in self.core.consoles:
            if not console.prompt:
                # On the score page: the conditions page of an all-last hand hid it, and
                # nobody knew to key the hand in (tile soak, kantan seed 254).
                console.message = "KEY ENTRY: NO TILES"
                console.page = 0

    def apply_take(self, seat: int, pos: int) -> None:
        """A take at ``pos`` by ``seat``, after the discard it implies: in a tile-aware
        hand with the layout's tile (the layouts void: the tiles go off first), and held
        instead while it is kantan's stand-in for a call still waiting for its meld. A
        take that begins the seat's turn has its hand checked."""
        tile = None
        if self.core.state.tiles is not None:
            if not self.layouts.trusted():
                self.tiles_off(f"seat {seat}'s take at {pos} was read as another tile")
            else:
                tile = self.take_tile(pos)
        if self.hold_take(seat, pos):
            return
        before = self.core.state
        refusal = self.core.apply(*self.implied_discard(actor=seat), ev.Take(seat, pos, tile))
        if refusal is not None:
            self.core.refuse(seat, refusal)
            return
        self.core.consoles[seat].message = ""
        self.check_hand_at_take(seat, before)

    def hold_take(self, seat: int, pos: int) -> bool:
        """Kantan: a take by a seat whose call waits at ``PLACE MELD`` is the tile that
        stands in for the called one, lifted before the caller's own tiles showed in its
        meld zone. The call must come first in the core (it makes the next take the
        stand-in), so the take is kept and applied right after it (or as the seat's draw
        if the call is withdrawn). True if kept (a resend of it too)."""
        held = self.held_meld
        kantan_call = held is not None and held.kind in ("chi", "pon") and held.seat == seat
        if held is None or not kantan_call or not self.core.rules.wall.own_walls:
            return False
        if held.take is None:
            log.info("[%s] seat %d's take of %d waits for its call's meld",
                     self.core.table_id, seat, pos)  # fmt: skip
            held.take = pos
        return held.take == pos

    def reader_fault(self, detail: int) -> None:
        """A ``Fault(TILE_READER)``: a seat reader (detail 0x100 + 16 * seat + zone) or the
        wall reader failed. A tile-aware hand goes on keyed in."""
        what = "wall reader" if detail < 0x100 else f"seat {(detail - 0x100) // 16} reader"
        self.tiles_off(f"{what} fault")

    def seat_tiles(self, seat: int, zone: m.Zone, tiles: tuple[int, ...]) -> bool:
        """A seat reader's snapshot: kept, and read for a discard or a meld. True if it
        showed the hand's last discard (the claim window on it is the caller's)."""
        if not 0 <= seat < self.core.players:
            return False
        if zone == m.Zone.HAND:
            self.zone_hands[seat] = tiles  # a check only, at the moments of check_hand
        elif zone == m.Zone.DISCARDS:
            self.zone_ponds[seat] = tiles
            if self.tile_hand():
                return self.pond_changed(seat)
        elif zone == m.Zone.MELDS:
            self.zone_melds[seat] = tiles
            if self.tile_hand():
                self.try_meld(seat)
        return False

    def check_hand(self, seat: int, in_flight: Collection[int] = ()) -> str | None:
        """Compare ``seat``'s ``HAND`` zone with its hand as the tiles have it, id by id
        (a red five is not its plain copy), leaving out ``in_flight``: tiles that moved
        in or out of the hand so lately that the reader may not show it yet.

        Called only when the seat's hand must be still (see the callers). A disagreement
        turns the tiles off for the rest of the hand, as a reader fault does (docs/tiles.md,
        "The daemon": the daemon cannot tell a misread from a tile moved where no reader
        saw it, so it guesses neither) and is shown on the seat's display; returns that
        text (``hand: 0p not 5p``), or None when they agree or no snapshot came yet."""
        shown, tiles = self.zone_hands[seat], self.core.state.tiles
        if shown is None or tiles is None:
            return None
        held = set(tiles.seats[seat].concealed)
        missing = sorted(held - set(shown) - set(in_flight))
        extra = sorted(set(shown) - held - set(in_flight))
        if not missing and not extra:
            return None
        tileset = tile_set(self.core.rules)

        def ids(found: list[int]) -> str:
            return ", ".join(f"{tileset.name(t)} (id {t})" for t in found)

        said = [f"it shows {ids(extra)}, which the seat does not hold"] if extra else []
        said += [f"it does not show {ids(missing)}, which the seat holds"] if missing else []
        self.tiles_off(f"seat {seat}'s hand reader disagrees with its hand: {'; '.join(said)}")
        text = hand_text(tileset, missing, extra)
        self.hand_misread[seat] = "! " + text
        self.core.refuse(seat, text)
        return text

    def moved_this_turn(self, seat: int) -> set[int]:
        """The tiles that came into or left ``seat``'s hand since its turn began (the take,
        a kan or north and its replacement tile, the discard): the reader may lag them."""
        tiles = self.core.state.tiles
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
        wall, tiles, after = before.wall, before.tiles, self.core.state.tiles
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
        wall = self.core.state.wall
        last = None if wall is None else wall.last_discard
        for seat in range(self.core.players):
            lag = self.moved_this_turn(seat) if seat == last else set()
            if self.check_hand(seat, lag) is not None:
                return False
        return True

    def unplayed(self, seat: int) -> list[int]:
        """Tiles in ``seat``'s pond that the tiles do not have as its discards yet."""
        tiles = self.core.state.tiles
        assert tiles is not None
        river = {d.tile for d in tiles.seats[seat].discards}
        return [t for t in self.zone_ponds[seat] if t not in river]

    def pond_changed(self, seat: int) -> bool:
        """A tile new in the pond of the seat to discard is its discard; True if it was
        the hand's last discard (the others may ron it)."""
        wall = self.core.state.wall
        fresh = self.unplayed(seat)
        if wall is None or not fresh:
            return False
        if len(fresh) > 1:
            self.tiles_off(f"seat {seat}'s pond shows {len(fresh)} new tiles")
            return False
        if wall.phase not in ("discard", "called") or wall.turn != seat:
            log.info("[%s] seat %d's pond shows a tile out of turn", self.core.table_id, seat)
            return False
        refusal = self.core.apply(ev.Discard(seat=seat, tile=fresh[0]))
        if refusal is not None:
            if refusal.code == "tile_not_in_hand":
                self.tiles_off(f"seat {seat}'s pond shows a tile it did not hold")
                return False
            self.core.refuse(seat, refusal)  # a rule (kuikae, riichi): take it back
            return False
        self.core.consoles[seat].message = ""
        after = self.core.state.wall
        return after is not None and after.finished

    def implied_discard(self, actor: int) -> tuple[ev.Event, ...]:
        """Discards are not sensed (in a hand keyed in): the seat that drew has discarded
        once another acts. In a tile-aware hand, with the tile its pond shows."""
        wall = self.core.state.wall
        seat = None if wall is None else implied_discarder(wall, actor)
        if seat is None:
            return ()
        if self.core.state.tiles is not None:
            return self.implied_tiles(seat)
        return (ev.Discard(seat=seat),)

    def unmade_discard(self, actor: int) -> int | None:
        """The seat whose discard a RON by ``actor`` implies, when the readers say it has
        made none: its hand zone still shows every tile it holds (the drawn one too) and
        its pond nothing new. None when no discard is implied or the readers cannot say
        (the tiles off, no snapshot of that hand this hand, a zone that moved)."""
        wall, tiles = self.core.state.wall, self.core.state.tiles
        seat = None if wall is None else implied_discarder(wall, actor)
        if seat is None or tiles is None:
            return None
        shown = self.zone_hands[seat]
        if shown is None or self.unplayed(seat):
            return None
        return seat if set(tiles.seats[seat].concealed) <= set(shown) else None

    def implied_tiles(self, seat: int) -> tuple[ev.Event, ...]:
        """The discard of ``seat`` another seat's action implies, in a tile-aware hand:
        with the tile its pond shows; without one, the tiles are off (a discard the
        reader missed) and the discard is keyed."""
        fresh = self.unplayed(seat)
        if len(fresh) == 1:
            return (ev.Discard(seat=seat, tile=fresh[0]),)
        reason = f"seat {seat}'s discard not read"
        log.warning(
            "[%s] %s: tile reading off for the rest of the hand", self.core.table_id, reason
        )
        return (ev.TilesOff(reason=reason), ev.Discard(seat=seat))

    def hold_meld(self, held: HeldMeld) -> None:
        """A call, kan or north key in a tile-aware hand: made once the meld zone shows
        its tiles (at once if it already does), else ``PLACE MELD`` until it does."""
        probe = self.meld_events(held, ())
        state = self.core.state_after(probe[:-1])
        if isinstance(state, Refusal):
            self.core.refuse(held.seat, state)
            return
        _, effects = step(state, probe[-1])
        refusal = next((e for e in effects if isinstance(e, Refusal)), None)
        if refusal is not None and refusal.code != "tile_unknown":
            self.core.refuse(held.seat, refusal)  # the wall says no, whatever the tiles
            return
        self.held_meld = held
        self.core.open(held.seat, Prompt.PLACE_MELD, typed=held.kind.upper())
        self.try_meld(held.seat)

    def meld_events(self, held: HeldMeld, tiles: tuple[int, ...]) -> tuple[ev.Event, ...]:
        seat = held.seat
        if held.kind in ("chi", "pon", "kan"):
            assert held.discarder is not None
            call = ev.Call(seat=seat, kind=held.kind, discarder=held.discarder, tiles=tiles)
            return (*self.implied_discard(actor=seat), call)
        if held.kind == "north":
            return (ev.North(seat=seat, tile=tiles[0] if tiles else None),)
        return (ev.Kan(seat=seat, kind=held.kind, tiles=tiles),)  # type: ignore[arg-type]

    def try_meld(self, seat: int) -> None:
        """Make the held meld of ``seat`` if its meld zone shows it."""
        held = self.held_meld
        if held is None or held.seat != seat:
            return
        if self.core.consoles[seat].prompt != Prompt.PLACE_MELD:
            self.held_meld = None  # swept by a phase change, or withdrawn
            return
        laid = self.fresh_melds(seat)
        own = MELD_SIZE[held.kind]
        if held.kind in ("chi", "pon", "kan"):
            own -= 1
            before = self.before_call(held)
            if self.core.rules.wall.own_walls:
                # Kantan: the called tile stays in its pond, and the stand-in the caller
                # lifts from its own wall may lie here before its take is reported.
                laid = [t for t in laid if t != self.stand_in(held, before)]
            elif len(laid) > own:
                called = self.called_tile(held, before)
                if called not in laid:
                    self.core.refuse(seat, f"not that {held.kind}")
                    return
                laid = [t for t in laid if t != called]
            else:
                return
        if len(laid) < own:
            return
        if len(laid) > own:
            self.core.refuse(seat, f"not that {held.kind}")
            return
        refusal = self.core.apply(*self.meld_events(held, tuple(laid)))
        if refusal is None:
            self.release(held)
            return
        self.core.refuse(seat, refusal)
        if refusal.code not in SHORT_REFUSALS:
            self.release(held)  # not about the tiles laid (the turn moved on): it is gone

    def release(self, held: HeldMeld) -> None:
        """The held meld is made, withdrawn or gone: its prompt closes, and a stand-in
        take it kept is applied (the stand-in after the call; else the seat's draw)."""
        self.held_meld = None
        console = self.core.consoles[held.seat]
        if console.prompt == Prompt.PLACE_MELD:
            self.core.close(held.seat)
            console.typed = ""
        if held.take is not None:
            self.apply_take(held.seat, held.take)

    def before_call(self, held: HeldMeld) -> GameState | None:
        """The state the held call would be made in (after the discard it implies)."""
        state = self.core.state_after(self.meld_events(held, ())[:-1])
        return None if isinstance(state, Refusal) or state.tiles is None else state

    def called_tile(self, held: HeldMeld, before: GameState | None) -> int | None:
        """The tile the held call takes: the discarder's last discard."""
        if before is None or before.tiles is None or held.discarder is None:
            return None
        river = before.tiles.seats[held.discarder].discards
        return river[-1].tile if river else None

    def stand_in(self, held: HeldMeld, before: GameState | None) -> int | None:
        """Kantan: the tile the caller's next take brings from its own wall, to lie in its
        meld zone for the called tile (the one it took already, if it did)."""
        if before is None or before.tiles is None or before.wall is None:
            return None
        pos = held.take
        if pos is None:
            rules = wall_rules(self.core.rules)
            call = ev.Call(held.seat, held.kind, held.discarder)  # type: ignore[arg-type]
            after = wall_step(rules, before.wall, call)
            pos = next_position(rules, after, held.seat) if isinstance(after, WallState) else None
        return None if pos is None else before.tiles.layout[pos]

    async def meld_prompt(self, seat: int, key: m.Key) -> None:
        """CANCEL at ``PLACE MELD``: the call is withdrawn (a stand-in already lifted is
        then the seat's draw)."""
        if key == m.Key.CANCEL and self.held_meld is not None:
            self.release(self.held_meld)
        elif key == m.Key.CANCEL:
            self.core.close(seat)
            self.core.consoles[seat].typed = ""

    def fresh_melds(self, seat: int) -> list[int]:
        """Tiles in ``seat``'s meld zone that the tiles do not have there yet."""
        tiles = self.core.state.tiles
        if tiles is None:
            return []
        placed = set(tiles.seats[seat].meld_zone)
        return [t for t in self.zone_melds[seat] if t not in placed]

    def unread(self) -> tuple[list[list[int]], list[list[int]]]:
        """The tiles the zones show that the tiles of the hand do not have yet (a discard
        refused, a meld laid before its key), per seat: ponds, melds."""
        if self.core.state.tiles is None:
            return [[] for _ in range(self.core.players)], [[] for _ in range(self.core.players)]
        ponds = [self.unplayed(s) for s in range(self.core.players)]
        return ponds, [self.fresh_melds(s) for s in range(self.core.players)]

    def snapshot(self) -> dict[str, Any]:
        """What :meth:`Table.flow_snapshot` stores of the tiles: the tiles the zones show
        beyond the hand's tiles (usually none, so a discard changes nothing stored) and a
        held meld; the rest of the zones is the rules state's."""
        held = self.held_meld
        ponds, melds = self.unread()
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

    def key(self) -> tuple[Any, ...]:
        """The durable part of :meth:`snapshot`, cheap to compare."""
        held = self.held_meld
        ponds, melds = self.unread()
        return (
            tuple(map(tuple, ponds)),
            tuple(map(tuple, melds)),
            None if held is None else (held.seat, held.kind, held.discarder, held.take),
        )

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read :meth:`snapshot`'s part (absent in a snapshot from before: nothing unread,
        no held meld); the returned call takes it up: the zones are the hand's tiles and
        the unread ones. Raises ValueError (KeyError, TypeError) on a bad one."""
        players = self.core.players
        ponds = [[int(t) for t in z] for z in snapshot.get("unread_ponds", [])]
        melds = [[int(t) for t in z] for z in snapshot.get("unread_melds", [])]
        if ponds and (len(ponds) != players or len(melds) != players):
            raise ValueError(f"unread tiles of {len(ponds)} seats")
        raw = snapshot.get("held_meld")
        held = None
        if raw is not None:
            kind = raw["kind"]
            if kind not in get_args(MeldKind) or not 0 <= int(raw["seat"]) < players:
                raise ValueError(f"a held meld of kind {kind!r} by seat {raw['seat']}")
            discarder, take = raw.get("discarder"), raw.get("take")
            held = HeldMeld(
                int(raw["seat"]),
                kind,
                None if discarder is None else int(discarder),
                None if take is None else int(take),
            )

        def commit() -> None:
            self.reset_zones()
            tiles = self.core.state.tiles
            if tiles is not None:
                for seat, st in enumerate(tiles.seats):
                    # What the readers show: kantan's called tiles in the ponds, its
                    # stand-ins in the meld zones.
                    self.zone_ponds[seat] = (*st.pond, *(ponds[seat] if ponds else ()))
                    self.zone_melds[seat] = (*st.meld_zone, *(melds[seat] if melds else ()))
            self.held_meld = held

        return commit
