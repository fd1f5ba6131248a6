"""The tile tracker: every seat's tiles through one hand, from the events of a table that
reads its tiles (docs/tiles.md, "The tile tracker").

Beside the wall tracker (:mod:`tablectl.rules.wall`) and in the same style: pure, one
immutable :class:`TileState` per step, a :class:`~tablectl.rules.refusal.Refusal` (the
state unchanged) for what the tiles contradict.  The wall tracker says *where* each tile
came from (positions, deal blocks, replacement tiles, dora indicator positions); the
``layout`` says *which* tile lies there; this module follows where the tiles go: into a
hand, a river, a meld, the north pile.

:func:`start_tiles` begins with the layout, :func:`tile_step` applies one wall event
given the wall state before and after it, :func:`declare_riichi` marks a riichi the rules
core has accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from tablectl.rules import tenpai, tileshapes
from tablectl.rules.events import Call, Deal, Dice, Discard, Kan, Layout, North, Take, WallEvent
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.wall import WallState
from tablectl.tiles.hand import Meld
from tablectl.tiles.ids import KIND_NAMES, kind, tile_set

__all__ = [
    "REFUSAL_CODES",
    "RiverTile",
    "SeatTiles",
    "TileState",
    "declare_riichi",
    "discarded_waits",
    "start_tiles",
    "tile_step",
]

BAD_LAYOUT = "bad_layout"
TILE_MISMATCH = "tile_mismatch"
TILE_UNKNOWN = "tile_unknown"
TILE_NOT_IN_HAND = "tile_not_in_hand"
BAD_MELD = "bad_meld"
KUIKAE = "kuikae"
NOT_NORTH = "not_north"
RIICHI_DISCARD = "riichi_discard"
RIICHI_KAN = "riichi_kan"
RIICHI_CALL = "riichi_call"
RIICHI_NORTH = "riichi_north"
NOT_TENPAI = "not_tenpai"

#: Every refusal code this module can answer with.
REFUSAL_CODES = (
    BAD_LAYOUT,
    TILE_MISMATCH,
    TILE_UNKNOWN,
    TILE_NOT_IN_HAND,
    BAD_MELD,
    KUIKAE,
    NOT_NORTH,
    RIICHI_DISCARD,
    RIICHI_KAN,
    RIICHI_CALL,
    RIICHI_NORTH,
    NOT_TENPAI,
)

HONOURS = 27


@dataclass(frozen=True, slots=True)
class RiverTile:
    """One discard: the tile, the seat that called it away (None if it stayed), whether it
    was the riichi declaration tile, and whether it was the tile just drawn (tsumogiri)."""

    tile: int
    called_by: int | None = None
    riichi: bool = False
    drawn: bool = False


@dataclass(frozen=True, slots=True)
class SeatTiles:
    """One seat's tiles and the state that rides on them.

    ``concealed`` is sorted and includes ``drawn`` (the tile just taken, live or
    replacement, until the seat discards).  ``riichi`` is a declaration the core accepted;
    ``riichi_pending`` that its declaration tile is not yet discarded.  ``passed`` holds the
    tiles the seat could have ronned since its own last discard (temporary furiten),
    ``riichi_passed`` those since its riichi (riichi furiten).  ``kuikae`` the kinds its
    next discard may not be (right after a chi or pon, where the preset forbids swap
    calls).  ``riichi_furiten``: the waits that were among the seat's own discards and pulled norths
    when its riichi declaration tile went out (a furiten riichi; empty when it was not, or
    not waiting)."""

    concealed: tuple[int, ...] = ()
    melds: tuple[Meld, ...] = ()
    discards: tuple[RiverTile, ...] = ()
    norths: tuple[int, ...] = ()
    drawn: int | None = None
    riichi: bool = False
    riichi_pending: bool = False
    double_riichi: bool = False
    ippatsu: bool = False
    passed: tuple[int, ...] = ()
    riichi_passed: tuple[int, ...] = ()
    kuikae: tuple[int, ...] = ()
    riichi_furiten: tuple[int, ...] = ()

    @property
    def closed(self) -> bool:
        """No meld opens the hand (closed kans keep it closed)."""
        return not any(m.opened for m in self.melds)

    @property
    def riichi_on(self) -> bool:
        """In riichi, the declaration tile discarded."""
        return self.riichi and not self.riichi_pending

    @property
    def pond(self) -> tuple[int, ...]:
        """The tiles the seat's discard zone shows, in discard order: its discards but those
        called away (kantan's called tiles stay)."""
        return tuple(d.tile for d in self.discards if d.called_by is None)

    @property
    def meld_zone(self) -> tuple[int, ...]:
        """The tiles the seat's meld zone shows: every meld's (kantan's stand-ins in place
        of the called tiles), then the pulled norths."""
        return (*(t for meld in self.melds for t in meld.zone_tiles), *self.norths)


#: Where a take came from: the live wall, the dead wall after a kan or a pulled north (on
#: the haitei: no live tile was left to refill the dead wall), or kantan's own wall for a
#: called tile.
DrawSource = Literal["live", "rinshan", "north", "north_on_haitei", "stand_in"]


@dataclass(frozen=True, slots=True)
class TileState:
    """Every seat's tiles in the hand in progress, and the dora.

    ``layout[p]`` is the tile at wall position ``p``.  ``dora`` and ``ura`` are the
    indicator tiles the wall tracker has revealed (kan dora included) and the tiles under
    them.  ``interrupted``: a chi, pon or kan was made (the uninterrupted first go-around
    is over; under ``tiles.yaku_with_calls``, kantan, a kan only).  ``last_discard`` is
    ``(seat, tile)`` of the latest discard; ``kan_tile`` the tile a chankan would take
    (the one added to a pon; a closed kan's first tile) until the replacement tile is
    taken; ``draw_source`` where the last take came from."""

    layout: tuple[int, ...]
    seats: tuple[SeatTiles, ...]
    dora: tuple[int, ...] = ()
    ura: tuple[int, ...] = ()
    interrupted: bool = False
    last_discard: tuple[int, int] | None = None
    kan_tile: int | None = None
    draw_source: DrawSource | None = None


def _name(tile: int) -> str:
    return f"{KIND_NAMES[kind(tile)]} (id {tile})"


def _set_seat(tiles: TileState, seat: int, st: SeatTiles) -> TileState:
    seats = list(tiles.seats)
    seats[seat] = st
    return replace(tiles, seats=tuple(seats))


def _without(hand: tuple[int, ...], remove: Sequence[int]) -> tuple[int, ...]:
    out = list(hand)
    for tile in remove:
        out.remove(tile)
    return tuple(out)


def _indicators(tiles: TileState, wall: WallState) -> TileState:
    # Indicators are top tiles (even positions); the ura indicator lies under each.
    dora = tuple(tiles.layout[p] for p in wall.dora_indicators)
    ura = tuple(tiles.layout[p + 1] for p in wall.dora_indicators)
    if dora == tiles.dora and ura == tiles.ura:
        return tiles
    return replace(tiles, dora=dora, ura=ura)


def start_tiles(house: HouseRules, wall: WallState, layout: Sequence[int]) -> TileState | Refusal:
    """Begin a tile-aware hand from the wall reader's ``layout``; refused (``bad_layout``)
    unless it holds every tile of the preset's set exactly once, one per wall position."""
    ids = tile_set(house).ids
    if len(layout) != wall.tiles:
        return Refusal(
            BAD_LAYOUT,
            f"the layout has {len(layout)} tiles; the wall has {wall.tiles} positions",
        )
    valid = set(ids)
    seen: dict[int, int] = {}
    for pos, tile in enumerate(layout):
        if tile not in valid:
            return Refusal(BAD_LAYOUT, f"position {pos}: {tile} is not a tile id of this set")
        if tile in seen:
            return Refusal(
                BAD_LAYOUT, f"tile {_name(tile)} lies at positions {seen[tile]} and {pos}"
            )
        seen[tile] = pos
    state = TileState(layout=tuple(layout), seats=(SeatTiles(),) * wall.players)
    return _indicators(state, wall)


def declare_riichi(house: HouseRules, tiles: TileState, wall: WallState, seat: int) -> TileState:
    """Mark a riichi the rules core accepted: declared with the drawn tile in hand (the
    next discard is the declaration tile), or right after the seat's discard (that one
    is).  Double riichi: the declaration tile is the seat's first discard and no call came
    before it."""
    st = tiles.seats[seat]
    if wall.phase == "claim" and wall.last_discard == seat and st.discards:
        river = (*st.discards[:-1], replace(st.discards[-1], riichi=True))
        first = len(st.discards) == 1 and not tiles.interrupted
        st = replace(st, riichi=True, discards=river, ippatsu=True, double_riichi=first)
        st = _riichi_declared(house, st)
    else:
        st = replace(st, riichi=True, riichi_pending=True)
    return _set_seat(tiles, seat, st)


def tile_step(
    house: HouseRules,
    tiles: TileState,
    wall_before: WallState,
    wall_after: WallState,
    event: WallEvent,
) -> TileState | Refusal:
    """Apply one wall event the wall tracker accepted (``wall_before`` -> ``wall_after``).

    A Refusal leaves ``tiles`` as it was; the caller then refuses the event as a whole."""
    out: TileState | Refusal
    match event:
        case Layout(tiles=layout):
            return start_tiles(house, wall_after, layout)
        case Deal():
            out = _dealt(tiles, wall_before, wall_after)
        case Take():
            out = _take(tiles, wall_before, wall_after, event)
        case Discard():
            out = _discard(house, tiles, wall_after, event)
        case Call():
            out = _call(house, tiles, wall_before, event)
        case Kan():
            out = _kan(house, tiles, event)
        case North():
            out = _north(house, tiles, event)
        case Dice():  # pragma: no cover - the wall tracker refuses dice in a hand
            return tiles
    if isinstance(out, Refusal):
        return out
    return _indicators(out, wall_after)


def _new_positions(before: WallState, after: WallState) -> list[tuple[int, int]]:
    start = len(before.taken)
    return list(zip(after.taken[start:], after.taken_by[start:], strict=True))


def _dealt(tiles: TileState, before: WallState, after: WallState) -> TileState:
    hands = [list(st.concealed) for st in tiles.seats]
    for pos, seat in _new_positions(before, after):
        hands[seat].append(tiles.layout[pos])
    seats = tuple(
        replace(st, concealed=tuple(sorted(hand)))
        for st, hand in zip(tiles.seats, hands, strict=True)
    )
    return replace(tiles, seats=seats)


def _take(
    tiles: TileState, before: WallState, after: WallState, event: Take
) -> TileState | Refusal:
    taken = _new_positions(before, after)
    pos, seat = taken[0]
    tile = tiles.layout[pos]
    if event.tile is not None and event.tile != tile:
        return Refusal(
            TILE_MISMATCH,
            f"seat {seat} took position {pos} and the reader says {_name(event.tile)}; the "
            f"layout has {_name(tile)} there",
        )
    if before.phase == "deal":
        return _dealt(tiles, before, after)
    st = tiles.seats[seat]
    if before.replacing_call:
        # Kantan: this wall tile stands for the called one in the meld; not in the hand.
        melds = (*st.melds[:-1], replace(st.melds[-1], stand_in=tile))
        st = replace(st, melds=melds)
        return replace(_set_seat(tiles, seat, st), draw_source="stand_in", kan_tile=None)
    if after.own_walls and st.riichi_on:
        # Kantan rons on one's own turn: taking instead lets the open discards pass.
        open_tiles = [
            o.discards[-1].tile for i, o in enumerate(tiles.seats) if i != seat and o.discards
        ]
        st = replace(st, riichi_passed=(*st.riichi_passed, *open_tiles))
    st = replace(st, concealed=tuple(sorted((*st.concealed, tile))), drawn=tile)
    out = _set_seat(tiles, seat, st)
    source = _draw_source(before, after)
    if source == "rinshan":
        # The kan is complete (no chankan came): it ends every riichi's ippatsu.
        out = replace(out, seats=tuple(replace(s, ippatsu=False) for s in out.seats))
    return replace(out, draw_source=source, kan_tile=None)


def _draw_source(before: WallState, after: WallState) -> DrawSource:
    """Where a take came from: the live wall, or the dead wall after a kan or a north
    (pulled on the haitei when no live tile was left to refill the dead wall)."""
    if after.last_take != "rinshan":
        return "live"
    if before.replacing != "north":
        return "rinshan"
    return "north_on_haitei" if before.live_left == 0 else "north"


def _discard(
    house: HouseRules, tiles: TileState, wall: WallState, event: Discard
) -> TileState | Refusal:
    seat, tile = event.seat, event.tile
    st = tiles.seats[seat]
    if tile is None:
        return Refusal(
            TILE_UNKNOWN, f"seat {seat}'s discard has no tile; this hand's tiles are read"
        )
    if tile not in st.concealed:
        return Refusal(TILE_NOT_IN_HAND, f"seat {seat} discarded {_name(tile)}, not in its hand")
    if kind(tile) in st.kuikae:
        return Refusal(
            KUIKAE,
            f"seat {seat} may not discard {KIND_NAMES[kind(tile)]} right after its call: "
            f"swap calling is not allowed (not {tileshapes.kinds_text(st.kuikae)})",
        )
    if st.riichi_on and st.drawn is not None and tile != st.drawn:
        return Refusal(
            RIICHI_DISCARD,
            f"seat {seat} is in riichi and must discard the drawn {_name(st.drawn)}, not "
            f"{_name(tile)}",
        )
    rest = _without(st.concealed, [tile])
    if (
        st.riichi_pending
        and not tenpai.noten_riichi_allowed(house)
        and not tenpai.tenpai(house, rest, st.melds)
    ):
        return Refusal(
            NOT_TENPAI,
            f"seat {seat} declared riichi; discarding {_name(tile)} leaves it not tenpai",
        )
    river = RiverTile(tile=tile, riichi=st.riichi_pending, drawn=tile == st.drawn)
    first = not st.discards and not tiles.interrupted
    st = replace(
        st,
        concealed=rest,
        discards=(*st.discards, river),
        drawn=None,
        kuikae=(),
        passed=(),
        ippatsu=st.riichi_pending,
        riichi_pending=False,
        double_riichi=st.double_riichi or (st.riichi_pending and first),
    )
    if river.riichi:
        st = _riichi_declared(house, st)
    out = _set_seat(tiles, seat, st)
    if not wall.own_walls:
        out = _pass(out, seat, tile)
    return replace(out, last_discard=(seat, tile))


def _riichi_declared(house: HouseRules, st: SeatTiles) -> SeatTiles:
    """The declaration tile is out: note whether the riichi is furiten, a wait among the
    seat's own discards and pulled norths, for the exhaustive draw (a preset may make that
    a chombo, ``riichi.furiten_at_draw``).  Noted now, not at the draw: a winning tile the
    seat lets pass after its riichi (its own draw thrown, another's discard not ronned) is
    its choice, not a furiten riichi."""
    return replace(st, riichi_furiten=discarded_waits(house, st))


def _pass(tiles: TileState, owner: int, tile: int) -> TileState:
    """Every other seat may ron ``tile`` now; unless it does, it has let it pass."""
    seats = tuple(
        st
        if i == owner
        else replace(
            st,
            passed=(*st.passed, tile),
            riichi_passed=(*st.riichi_passed, tile) if st.riichi_on else st.riichi_passed,
        )
        for i, st in enumerate(tiles.seats)
    )
    return replace(tiles, seats=seats)


def _own_tiles(
    st: SeatTiles, seat: int, given: Sequence[int], want: int, what: str
) -> Refusal | None:
    if not given:
        return Refusal(
            TILE_UNKNOWN, f"seat {seat}'s {what} has no tiles; this hand's tiles are read"
        )
    if len(given) != want or len(set(given)) != want:
        return Refusal(
            BAD_MELD,
            f"seat {seat}'s {what} needs {want} different tiles of its own, got {list(given)}",
        )
    for tile in given:
        if tile not in st.concealed:
            return Refusal(
                TILE_NOT_IN_HAND, f"seat {seat}'s {what}: {_name(tile)} is not in its hand"
            )
    return None


def _meld_shape(kind_: str, all_tiles: Sequence[int]) -> bool:
    kinds = sorted(kind(t) for t in all_tiles)
    if kind_ == "chi":
        lo = kinds[0]
        return lo < HONOURS and lo % 9 <= 6 and kinds == [lo, lo + 1, lo + 2]
    return len(set(kinds)) == 1


def kuikae_kinds(called: int, own: Sequence[int], chi: bool) -> tuple[int, ...]:
    """The kinds a caller may not discard right after calling kind ``called`` with its own
    kinds ``own`` (kuikae off): the called kind, and after a chi called at one end of its
    run the kind beyond the other end."""
    out = [called]
    if chi:
        lo, hi = sorted(own)
        suit_end = called // 9 * 9 + 8
        if (lo, hi) == (called + 1, called + 2) and called + 3 <= suit_end:
            out.append(called + 3)
        if (lo, hi) == (called - 2, called - 1) and called - 3 >= called // 9 * 9:
            out.append(called - 3)
    return tuple(out)


def _call(
    house: HouseRules, tiles: TileState, before: WallState, event: Call
) -> TileState | Refusal:
    seat, frm = event.seat, event.discarder
    st = tiles.seats[seat]
    if st.riichi:
        return Refusal(RIICHI_CALL, f"seat {seat} is in riichi and may not call {event.kind}")
    want = 3 if event.kind == "kan" else 2
    bad = _own_tiles(st, seat, event.tiles, want, event.kind)
    if bad is not None:
        return bad
    source = tiles.seats[frm]
    north_pon = before.phase == "rinshan" and before.replacing == "north"
    if north_pon:
        called = source.norths[-1]
        source = replace(source, norths=source.norths[:-1])
    else:
        called = source.discards[-1].tile
        # Kantan: the called tile stays in the river (鳴いた牌を河から持って来ない), where
        # another seat may call or ron it too; a tile of the caller's wall stands in.
        if not before.own_walls:
            river = (*source.discards[:-1], replace(source.discards[-1], called_by=seat))
            source = replace(source, discards=river)
    if not _meld_shape(event.kind, (*event.tiles, called)):
        shape = "a run in one suit" if event.kind == "chi" else "tiles of one kind"
        return Refusal(
            BAD_MELD,
            f"seat {seat}'s {event.kind} of {_name(called)} with "
            f"{', '.join(_name(t) for t in event.tiles)} is not {shape}",
        )
    meld_kind: Literal["chi", "pon", "open_kan"] = "open_kan" if event.kind == "kan" else event.kind
    meld = Meld(
        meld_kind,
        tuple(sorted((*event.tiles, called))),
        called=called,
        source=frm,
        in_river=before.own_walls,
    )
    forbidden: tuple[int, ...] = ()
    if event.kind != "kan" and not house.tiles.kuikae:
        forbidden = kuikae_kinds(kind(called), [kind(t) for t in event.tiles], event.kind == "chi")
    rest = _without(st.concealed, event.tiles)
    if forbidden and all(kind(t) in forbidden for t in rest):
        return Refusal(
            KUIKAE,
            f"seat {seat}'s {event.kind} would leave only tiles it may not discard right after"
            f" the call ({tileshapes.kinds_text(forbidden)}): swap calling is not allowed",
        )
    st = replace(
        st,
        concealed=rest,
        melds=(*st.melds, meld),
        kuikae=forbidden,
        drawn=None,
    )
    out = _set_seat(_set_seat(tiles, frm, source), seat, st)
    # Any call ends every riichi's ippatsu, and the first go-around but where calls keep
    # its yaku (kantan, 鳴きがあっても成立: its calls are made on the caller's own turn and
    # skip nobody's draw, so double riichi and chiihou stand).
    seats = tuple(replace(s, ippatsu=False) for s in out.seats)
    interrupted = tiles.interrupted or not house.tiles.yaku_with_calls
    return replace(out, seats=seats, interrupted=interrupted)


def _kan(house: HouseRules, tiles: TileState, event: Kan) -> TileState | Refusal:
    seat = event.seat
    st = tiles.seats[seat]
    if event.kind == "closed":
        bad = _own_tiles(st, seat, event.tiles, 4, "closed kan")
        if bad is not None:
            return bad
        if len({kind(t) for t in event.tiles}) != 1:
            return Refusal(
                BAD_MELD,
                f"seat {seat}'s closed kan {', '.join(_name(t) for t in event.tiles)} is not "
                "four of one kind",
            )
        rest = _without(st.concealed, event.tiles)
        if st.riichi_on:
            bad = _riichi_kan(house, st, seat, event.tiles, rest)
            if bad is not None:
                return bad
        meld = Meld("closed_kan", tuple(sorted(event.tiles)))
        st = replace(st, concealed=rest, melds=(*st.melds, meld), drawn=None)
        out = replace(_set_seat(tiles, seat, st), kan_tile=event.tiles[0], interrupted=True)
        return _pass(out, seat, event.tiles[0]) if house.wall.kokushi_closed_kan_ron else out
    bad = _own_tiles(st, seat, event.tiles, 1, "added kan")
    if bad is not None:
        return bad
    tile = event.tiles[0]
    pons = [i for i, m in enumerate(st.melds) if m.kind == "pon" and kind(m.tiles[0]) == kind(tile)]
    if not pons:
        return Refusal(
            BAD_MELD,
            f"seat {seat} has no pon of {KIND_NAMES[kind(tile)]} to add {_name(tile)} to",
        )
    pon = st.melds[pons[0]]
    melds = list(st.melds)
    melds[pons[0]] = Meld(
        "added_kan", tuple(sorted((*pon.tiles, tile))), called=pon.called, source=pon.source
    )
    st = replace(st, concealed=_without(st.concealed, [tile]), melds=tuple(melds), drawn=None)
    out = replace(_set_seat(tiles, seat, st), kan_tile=tile, interrupted=True)
    return _pass(out, seat, tile)


def _riichi_kan(
    house: HouseRules, st: SeatTiles, seat: int, kan: Sequence[int], rest: tuple[int, ...]
) -> Refusal | None:
    """A closed kan in riichi: of the drawn tile's kind, leaving the waits unchanged, and
    where the preset says so (``riichi.kan_keeps``) the hand's form too."""
    drawn = st.drawn
    if drawn is None or kind(drawn) != kind(kan[0]):
        return Refusal(
            RIICHI_KAN,
            f"seat {seat} is in riichi: a closed kan must use the tile just drawn",
        )
    held = _without(st.concealed, [drawn])
    before = tileshapes.waits(house, held)
    after = tileshapes.waits(house, rest)
    if before != after:
        return Refusal(
            RIICHI_KAN,
            f"seat {seat} is in riichi: this kan would change its waits "
            f"({tileshapes.kinds_text(before)} to {tileshapes.kinds_text(after)})",
        )
    name = KIND_NAMES[kind(drawn)]
    form = house.riichi.kan_keeps == "waits_and_form"
    if form and not tileshapes.kan_keeps_form(house, held, kind(drawn)):
        return Refusal(
            RIICHI_KAN,
            f"seat {seat} is in riichi: a kan of {name} would change its hand's form (its "
            f"waits {tileshapes.kinds_text(before)} stay, but its {name}s are not a triplet in "
            "every reading of it); this preset allows a kan in riichi only where both stay",
        )
    return None


def _riichi_north(house: HouseRules, st: SeatTiles, seat: int, tile: int) -> Refusal | None:
    """A north pull in riichi, held to what a closed kan in riichi is: the tile just drawn
    must be a north.  Then any north the seat pulls leaves the hand as it was before the
    draw (norths are alike), so its waits and form stay.  A north from the hand with
    another tile drawn keeps that tile in the hand, as a kan not of the drawn tile
    (okurikan) would: refused even where the waits happen to stay, since a riichi hand may
    not change (seed 003: 送りカン・待ちの変わるカン・形の変わるカンはできません)."""
    drawn = st.drawn
    if drawn is None or kind(drawn) == tileshapes.NORTH:
        return None
    before = tileshapes.waits(house, _without(st.concealed, [drawn]))
    after = tileshapes.waits(house, _without(st.concealed, [tile]))
    if before != after:
        change = f"would change its waits ({tileshapes.kinds_text(before)} to "
        change += f"{tileshapes.kinds_text(after)})"
    else:
        change = f"would change its hand (the waits stay {tileshapes.kinds_text(before)})"
    return Refusal(
        RIICHI_NORTH,
        f"seat {seat} is in riichi and may pull only a north it has just drawn: pulling "
        f"{_name(tile)} from its hand keeps the drawn {_name(drawn)} in it and {change}",
    )


def _north(house: HouseRules, tiles: TileState, event: North) -> TileState | Refusal:
    seat, tile = event.seat, event.tile
    st = tiles.seats[seat]
    if tile is None:
        return Refusal(TILE_UNKNOWN, f"seat {seat}'s north has no tile; this hand's tiles are read")
    if kind(tile) != tileshapes.NORTH:
        return Refusal(NOT_NORTH, f"seat {seat} pulled {_name(tile)}, which is not a north")
    if tile not in st.concealed:
        return Refusal(TILE_NOT_IN_HAND, f"seat {seat} pulled {_name(tile)}, not in its hand")
    if st.riichi_on:
        bad = _riichi_north(house, st, seat, tile)
        if bad is not None:
            return bad
    st = replace(
        st,
        concealed=_without(st.concealed, [tile]),
        norths=(*st.norths, tile),
        drawn=None,
    )
    return _pass(_set_seat(tiles, seat, st), seat, tile)


def discarded_waits(house: HouseRules, st: SeatTiles) -> tuple[int, ...]:
    """The seat's waits that are among its own discards (called-away ones included) and
    pulled norths (a pulled north counts as a discard), in the order it put them out: its
    permanent furiten, none when it is not furiten that way (or not waiting)."""
    wait_kinds = set(tileshapes.waits(house, st.concealed))
    put_out = (kind(t) for t in (*(d.tile for d in st.discards), *st.norths))
    return tuple(dict.fromkeys(k for k in put_out if k in wait_kinds))
