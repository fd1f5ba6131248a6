"""Checks a table that reads its tiles can make: shanten, waits, tenpai (formal tenpai as
the preset reads it), furiten with its reason, nagashi mangan, and the context of a win.

Pure and deterministic.  The ``mahjong`` package (shanten and complete-hand tests) is
imported when a check first needs it, so a table that does not read tiles never loads it.
Tiles are ids 0..135 (:mod:`.ids`); a *hand* here is the concealed tiles only: a seat's
melds are whole sets and take no part in shanten or waits (the ``mahjong`` package counts
a hand of 3n+1 or 3n+2 tiles with the missing sets as melds).  What makes a hand complete
is the preset's: its set (three players: no 2m..8m) and whether four of a kind may be two
of a chiitoitsu's pairs (``tiles.four_tile_chiitoitsu_han``), which the package never
counts.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import KIND_NAMES, kind

if TYPE_CHECKING:
    from tablectl.rules.state import GameState
    from tablectl.tiles.tracker import SeatTiles, TileState

__all__ = [
    "TERMINALS_AND_HONOURS",
    "counts",
    "discarded_waits",
    "furiten",
    "has_yaku",
    "is_complete",
    "is_kokushi",
    "kan_keeps_form",
    "kinds_text",
    "nagashi",
    "noten_riichi_allowed",
    "ron_tile",
    "scorer",
    "shanten",
    "tenpai",
    "tenpai_waits",
    "terminal_kinds",
    "waits",
    "win_context",
]

KINDS = 34
#: 2m..8m: not in a three-player set.
SANMA_MISSING = frozenset(range(1, 8))
#: Kinds of the ones, nines and honours.
TERMINALS_AND_HONOURS = frozenset({0, 8, 9, 17, 18, 26, *range(27, KINDS)})
#: The first honour kind (east): runs are of the suits below it.
HONOURS = 27
#: Kinds of the four winds, east to north.
WINDS = frozenset(range(27, 31))
NORTH = 30

Scorer = Callable[[HouseRules, WinContext], "HandScore | Refusal"]


def counts(tiles: Iterable[int]) -> tuple[int, ...]:
    """The 34-kind count array of ``tiles`` (ids)."""
    out = [0] * KINDS
    for tile in tiles:
        out[kind(tile)] += 1
    return tuple(out)


def kinds_text(kinds: Iterable[int]) -> str:
    """``"1p 4p"``: kinds by name, for messages."""
    return " ".join(KIND_NAMES[k] for k in sorted(kinds)) or "nothing"


def _four_pairs(hand: tuple[int, ...]) -> int:
    """The pairs of a seven-pairs hand when four of a kind counts as two of them."""
    return min(7, sum(n // 2 for n in hand))


@lru_cache(maxsize=1 << 16)
def _shanten(hand: tuple[int, ...], three: bool, fours: bool) -> int:
    from mahjong.shanten import Shanten

    found = Shanten.calculate_shanten(list(hand), is_three_player=three)
    if fours and sum(hand) >= 13:
        # The package's seven pairs are seven different kinds; with fours allowed a kind
        # held four times is two pairs and a lone tile no longer costs a step.
        found = min(found, 6 - _four_pairs(hand))
    return found


@lru_cache(maxsize=1 << 16)
def _complete(hand: tuple[int, ...], fours: bool) -> bool:
    from mahjong.agari import Agari

    if fours and sum(hand) == 14 and _four_pairs(hand) == 7:
        return True
    return bool(Agari.is_agari(list(hand)))


@lru_cache(maxsize=1 << 16)
def _waits(hand: tuple[int, ...], three: bool, fours: bool) -> tuple[int, ...]:
    out = []
    for k in range(KINDS):
        # No fifth tile: a kind held four times in the hand is no wait (1111m tanki).
        if (three and k in SANMA_MISSING) or hand[k] >= 4:
            continue
        plus = list(hand)
        plus[k] += 1
        if _complete(tuple(plus), fours):
            out.append(k)
    return tuple(out)


def _fours(house: HouseRules) -> bool:
    return house.tiles.four_tile_chiitoitsu_han > 0


def shanten(house: HouseRules, hand: Sequence[int]) -> int:
    """Tiles away from tenpai (0) or a complete hand (-1): the ``mahjong`` package's count
    (regular, seven pairs and thirteen orphans, the preset's set), and seven pairs with
    four of a kind as two where the preset allows it; ``hand`` holds 3n+1 or 3n+2 tiles."""
    return _shanten(counts(hand), house.players == 3, _fours(house))


def is_complete(house: HouseRules, hand: Sequence[int]) -> bool:
    """The concealed ``hand`` (3n+2 tiles, the winning tile included) is complete: four
    sets and a pair (less the melds), seven pairs (four of a kind as two of them where the
    preset allows it) or thirteen orphans."""
    return len(hand) % 3 == 2 and _complete(counts(hand), _fours(house))


def terminal_kinds(hand: Iterable[int]) -> frozenset[int]:
    """The different terminal and honour kinds among ``hand``: nine terminals (kyuushu
    kyuuhai) needs nine of them among the 14 tiles of the declarer's first draw."""
    return frozenset(kind(t) for t in hand) & TERMINALS_AND_HONOURS


def is_kokushi(hand: Sequence[int]) -> bool:
    """The 14 tiles are thirteen orphans (one of each terminal and honour, one of them
    twice): the only hand that may rob a closed kan, where the preset allows it."""
    kinds = [kind(t) for t in hand]
    return len(kinds) == 14 and set(kinds) == TERMINALS_AND_HONOURS


def waits(house: HouseRules, hand: Sequence[int]) -> tuple[int, ...]:
    """The kinds that complete the concealed ``hand`` (3n+1 tiles) as :func:`is_complete`
    reads it: its waits by shape, whoever holds those tiles (a kind held four times in the
    hand itself is none).  A hand tenpai both as a meld hand and as a four-tile
    chiitoitsu waits on both (sanma-free's seed: シャボとのチートイツの単騎待ち)."""
    if len(hand) % 3 != 1:
        return ()
    return _waits(counts(hand), house.players == 3, _fours(house))


def _set_readings(c: tuple[int, ...], start: int = 0) -> Iterator[frozenset[int]]:
    """Every way to read the counts ``c`` as runs and triplets only, each given by the
    kinds it reads as triplets (none when ``c`` cannot be read so)."""
    i = next((k for k in range(start, KINDS) if c[k]), KINDS)
    if i == KINDS:
        yield frozenset()
        return
    if c[i] >= 3:
        rest = (*c[:i], c[i] - 3, *c[i + 1 :])
        yield from (r | {i} for r in _set_readings(rest, i))
    if i < HONOURS and i % 9 <= 6 and c[i + 1] and c[i + 2]:
        rest = (*c[:i], c[i] - 1, c[i + 1] - 1, c[i + 2] - 1, *c[i + 3 :])
        yield from _set_readings(rest, i)


def kan_keeps_form(house: HouseRules, hand: Sequence[int], k: int) -> bool:
    """A closed kan of kind ``k`` in riichi keeps the hand's form (面子構成): ``hand``, the
    concealed tiles before the draw with three of ``k`` among them, reads with ``k`` as a
    triplet in every way it completes with each of its waits (sets and a pair; seven
    pairs and thirteen orphans never hold three of a kind).  222333444m 5678p waits on 5p
    8p with a kan of 2m or without, but also reads as 234m three times: the kan changes
    its form."""
    held = counts(hand)
    for wait in waits(house, hand):
        full = (*held[:wait], held[wait] + 1, *held[wait + 1 :])
        for pair in (p for p in range(KINDS) if full[p] >= 2):
            sets = (*full[:pair], full[pair] - 2, *full[pair + 1 :])
            if any(k not in triplets for triplets in _set_readings(sets)):
                return False
    return True


def noten_riichi_allowed(house: HouseRules) -> bool:
    """A noten riichi is a bluff the preset allows, to be found at the exhaustive draw.

    Reading: a preset that punishes a noten riichi found at the draw
    (``riichi.noten_at_draw`` chombo or penalty_each: every parlor preset) lets it be
    declared (the table must not give the bluff away); one with no such rule (``none``:
    Tenhou, where the client refuses it) does not, and the table refuses it."""
    return house.riichi.noten_at_draw != "none"


def tenpai_waits(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> tuple[int, ...]:
    """The waits that make the hand tenpai under the preset's ``formal_tenpai``.

    ``yes``: every wait by shape.  ``not_all_four_own``: a wait on a kind the player holds
    all four of (concealed tiles and own melds) does not count.  ``open_hand_invalid``
    (sanma-free, no kuitan and no atozuke): an open hand counts only if it has a yaku on a
    ron of the wait (all its waits, without atozuke; any, with it); the winds matter there
    only."""
    shape = waits(house, concealed)
    mode = house.tiles.formal_tenpai
    if mode == "not_all_four_own":
        own = counts([*concealed, *(t for m in melds for t in m.tiles)])
        return tuple(k for k in shape if own[k] < 4)
    if mode == "open_hand_invalid" and shape and any(m.opened for m in melds):
        with_yaku = tuple(
            k
            for k in shape
            if has_yaku(house, concealed, melds, k, seat_wind=seat_wind, round_wind=round_wind)
        )
        if not house.tiles.atozuke and len(with_yaku) < len(shape):
            return ()
        return with_yaku
    return shape


def tenpai(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> bool:
    """The hand is tenpai as the preset counts it at an exhaustive draw (see
    :func:`tenpai_waits`)."""
    return bool(tenpai_waits(house, concealed, melds, seat_wind=seat_wind, round_wind=round_wind))


def _free_id(k: int, used: Iterable[int]) -> int:
    taken = set(used)
    for copy in range(4):
        if k * 4 + copy not in taken:
            return k * 4 + copy
    return k * 4


def has_yaku(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    wait: int,
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> bool:
    """A ron on kind ``wait`` would have a yaku (no riichi, no chance yaku, no dora).

    Uses :mod:`tablectl.tiles.scoring` when it is there; otherwise the ``mahjong``
    package's calculator with the preset's kuitan (an approximation of the preset's
    scorer: its other readings do not change whether a hand has a yaku)."""
    win = _free_id(wait, [*concealed, *(t for m in melds for t in m.tiles)])
    score = scorer()
    if score is not None:
        players = house.players
        ctx = WinContext(
            seat=seat_wind % players,
            dealer=0,
            players=players,
            round_wind=round_wind,
            concealed=(*concealed, win),
            melds=tuple(melds),
            win_tile=win,
            tsumo=False,
        )
        return isinstance(score(house, ctx), HandScore)
    return _library_has_yaku(house, concealed, melds, win, seat_wind, round_wind)


def _library_has_yaku(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    win: int,
    seat_wind: int,
    round_wind: int,
) -> bool:
    from mahjong.hand_calculating.hand import HandCalculator
    from mahjong.hand_calculating.hand_config import HandConfig, OptionalRules
    from mahjong.meld import Meld as LibMeld

    kinds = {
        "chi": LibMeld.CHI,
        "pon": LibMeld.PON,
        "open_kan": LibMeld.KAN,
        "closed_kan": LibMeld.KAN,
        "added_kan": LibMeld.SHOUMINKAN,
    }
    lib_melds = [
        LibMeld(meld_type=kinds[m.kind], tiles=list(m.tiles), opened=m.opened) for m in melds
    ]
    config = HandConfig(
        player_wind=27 + seat_wind,
        round_wind=27 + round_wind,
        options=OptionalRules(
            has_open_tanyao=house.tiles.kuitan, is_three_player=house.players == 3
        ),
    )
    tiles = [*concealed, win, *(t for m in melds for t in m.tiles)]
    result = HandCalculator.estimate_hand_value(tiles, win, melds=lib_melds, config=config)
    return result.error is None and bool(result.han)


def discarded_waits(house: HouseRules, st: SeatTiles) -> tuple[int, ...]:
    """The seat's waits that are among its own discards (called-away ones included) and
    pulled norths (a pulled north counts as a discard), in the order it put them out: its
    permanent furiten, none when it is not furiten that way (or not waiting)."""
    wait_kinds = set(waits(house, st.concealed))
    put_out = (kind(t) for t in (*(d.tile for d in st.discards), *st.norths))
    return tuple(dict.fromkeys(k for k in put_out if k in wait_kinds))


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


@lru_cache(maxsize=1)
def scorer() -> Scorer | None:
    """``tablectl.tiles.scoring.score_win`` if that module is there, else None (the value
    of a win is then not checked against the tiles).  Looked up once: a missing module
    would otherwise be searched for on disk at every win."""
    try:
        module = importlib.import_module("tablectl.tiles.scoring")
    except ModuleNotFoundError as exc:
        if exc.name != "tablectl.tiles.scoring":
            raise
        return None
    found = getattr(module, "score_win", None)
    return cast(Scorer, found) if callable(found) else None
