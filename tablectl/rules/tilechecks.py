"""Checks on a hand in progress at a table that reads its tiles: whether a hand is
complete, thirteen orphans and nine terminals, furiten with its reason, nagashi mangan,
the tile a ron takes and the context of a win.

Pure and deterministic.  The top of the rules core's tile modules: it reads the game
state (:mod:`.state`) and the tile tracker's seats (:mod:`.tiletracker`) on the shapes of
:mod:`.tileshapes`; the glue to the rules core (:mod:`.tiletrack`), the daemon's tile
table and the journal export call it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tablectl.rules.options import HouseRules
from tablectl.rules.state import GameState
from tablectl.rules.tileshapes import KINDS, complete, counts, four_tile_pairs, kinds_text, waits
from tablectl.rules.tiletracker import SeatTiles, TileState, discarded_waits
from tablectl.tiles.hand import WinContext
from tablectl.tiles.ids import KIND_NAMES, kind

__all__ = [
    "TERMINALS_AND_HONOURS",
    "WINDS",
    "furiten",
    "is_complete",
    "is_kokushi",
    "nagashi",
    "ron_tile",
    "terminal_kinds",
    "win_context",
]

#: Kinds of the ones, nines and honours.
TERMINALS_AND_HONOURS = frozenset({0, 8, 9, 17, 18, 26, *range(27, KINDS)})
#: Kinds of the four winds, east to north.
WINDS = frozenset(range(27, 31))


def is_complete(house: HouseRules, hand: Sequence[int]) -> bool:
    """The concealed ``hand`` (3n+2 tiles, the winning tile included) is complete: four
    sets and a pair (less the melds), seven pairs (four of a kind as two of them where the
    preset allows it) or thirteen orphans."""
    return len(hand) % 3 == 2 and complete(counts(hand), four_tile_pairs(house))


def terminal_kinds(hand: Iterable[int]) -> frozenset[int]:
    """The different terminal and honour kinds among ``hand``: nine terminals (kyuushu
    kyuuhai) needs nine of them among the 14 tiles of the declarer's first draw."""
    return frozenset(kind(t) for t in hand) & TERMINALS_AND_HONOURS


def is_kokushi(hand: Sequence[int]) -> bool:
    """The 14 tiles are thirteen orphans (one of each terminal and honour, one of them
    twice): the only hand that may rob a closed kan, where the preset allows it."""
    kinds = [kind(t) for t in hand]
    return len(kinds) == 14 and set(kinds) == TERMINALS_AND_HONOURS


def furiten(house: HouseRules, tiles: TileState, seat: int, win_tile: int) -> str | None:
    """Why ``seat`` may not ron ``win_tile``, or None.

    Permanent furiten: a wait among the seat's own discards (called-away ones and pulled
    norths included).  Riichi furiten: a wait let pass after the riichi (for the rest of
    the hand).  Temporary furiten: a wait let pass since the seat's own last discard.  The
    tile being ronned is not one that was let pass.  None of them where the preset has no
    furiten (``tiles.furiten`` false: kantan)."""
    if not house.tiles.furiten:
        return None
    st = tiles.seats[seat]
    wait_kinds = set(waits(house, st.concealed))
    waiting = kinds_text(wait_kinds)
    discarded = discarded_waits(house, st)
    if discarded:
        return (
            f"permanent furiten: seat {seat} waits on {waiting} and has discarded "
            f"{KIND_NAMES[discarded[0]]}"
        )
    if st.riichi:
        for tile in st.riichi_passed:
            if tile != win_tile and kind(tile) in wait_kinds:
                return (
                    f"riichi furiten: seat {seat} waits on {waiting} and let "
                    f"{KIND_NAMES[kind(tile)]} pass after its riichi"
                )
    for tile in st.passed:
        if tile != win_tile and kind(tile) in wait_kinds:
            return (
                f"temporary furiten: seat {seat} waits on {waiting} and let "
                f"{KIND_NAMES[kind(tile)]} pass since its last discard"
            )
    return None


def nagashi(house: HouseRules, st: SeatTiles) -> bool:
    """The seat made nagashi mangan: every discard a terminal or honour, none called away
    (and, under ``flow.nagashi_closed``, no call of its own), where the preset has it."""
    if house.flow.nagashi == "none" or not st.discards:
        return False
    if house.flow.nagashi_closed and any(m.opened for m in st.melds):
        return False
    return all(kind(d.tile) in TERMINALS_AND_HONOURS and d.called_by is None for d in st.discards)


def ron_tile(state: GameState, discarder: int) -> int | None:
    """The tile a ron off ``discarder`` takes: its last discard, the tile it adds to a pon
    (chankan), the closed kan's tile (kokushi) or the north it pulled; None if none."""
    tiles, wall = state.tiles, state.wall
    if tiles is None or wall is None or not 0 <= discarder < len(tiles.seats):
        return None
    st = tiles.seats[discarder]
    if wall.own_walls or (wall.phase == "claim" and wall.last_discard == discarder):
        return st.discards[-1].tile if st.discards else None
    if wall.phase == "rinshan" and wall.turn == discarder:
        if wall.replacing == "north":
            return st.norths[-1] if st.norths else None
        return tiles.kan_tile
    return None


def win_context(
    house: HouseRules, state: GameState, seat: int, tsumo: bool, discarder: int | None
) -> WinContext:
    """The context of a win by ``seat`` in the hand in progress (tsumo, or a ron off
    ``discarder``): the tiles, the riichi and first-go-around state, the chance yaku and
    the dora.  The caller has checked that the hand has tiles and that the win is one the
    wall allows.

    Readings: haitei is a tsumo on the last live tile (not a replacement tile: that is
    rinshan); a pulled north's replacement is rinshan where ``tiles.north_rinshan``, and
    otherwise neither, or the haitei when the north was pulled on it (sanma-free: 北を抜
    いて嶺上牌からのツモアガりに嶺上開花はつきません; ハイテイで北を抜く…自摸あがった場合、
    ハイテイになります); houtei a ron on the discard made after it; chankan
    a ron on an added kan (or a closed one, kokushi); a ron on a pulled north is neither.
    Kantan's own walls have no haitei and houtei.  Ura indicators are given with riichi
    only."""
    tiles, wall = state.tiles, state.wall
    assert tiles is not None and wall is not None
    st = tiles.seats[seat]
    if tsumo:
        win = st.drawn if st.drawn is not None else st.concealed[-1]
        concealed = st.concealed
    else:
        found = ron_tile(state, discarder if discarder is not None else -1)
        assert found is not None
        win = found
        concealed = (*st.concealed, win)
    riichi = st.riichi and not st.riichi_pending
    first = not tiles.interrupted and not st.discards
    first_draw = tsumo and first and wall.last_take == "live" and wall.draws[seat] == 1
    last_live = not wall.own_walls and wall.live_left == 0
    source = tiles.draw_source if tsumo else None
    north = source in ("north", "north_on_haitei")
    rinshan = source == "rinshan" or (north and house.tiles.north_rinshan)
    lift = source == "live" or (source == "north_on_haitei" and not rinshan)
    return WinContext(
        seat=seat,
        dealer=state.dealer,
        players=state.players,
        round_wind=state.round_index % 4,
        concealed=tuple(concealed),
        melds=st.melds,
        win_tile=win,
        tsumo=tsumo,
        riichi=riichi,
        double_riichi=riichi and st.double_riichi,
        ippatsu=riichi and st.ippatsu,
        haitei=last_live and lift,
        houtei=not tsumo and last_live and wall.phase == "claim",
        rinshan=rinshan,
        chankan=not tsumo and wall.phase == "rinshan" and wall.replacing == "kan",
        tenhou=first_draw and seat == state.dealer,
        chiihou=first_draw and seat != state.dealer,
        renhou=not tsumo and first and seat != state.dealer and wall.draws[seat] == 0,
        dora_indicators=tiles.dora,
        ura_indicators=tiles.ura if riichi else (),
        north_count=len(st.norths),
    )
