"""What a bot that sees its tiles knows: shanten, waits, the discard to make, the calls
worth making, and whether a finished hand has a yaku and what it is worth.

Used by :class:`hw_sim.players.BotTable` at a table with seat readers (docs/simulator.md,
"Bots with real tiles"). Shanten comes from ``mahjong.shanten.Shanten``; a win's value
from the ``mahjong`` package's ``HandCalculator``, configured from the preset's
``[tiles]`` options as far as a bot needs it (the daemon's own scorer,
``tablectl.rules.tilescoring``, is the reference for real scoring). Deterministic: the only
randomness is the ``random.Random`` a caller passes for tie-breaks.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from mahjong.constants import EAST
from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, OptionalRules
from mahjong.meld import Meld as LibMeld

from tablectl.rules import tileshapes, tiletracker
from tablectl.rules.options import HouseRules
from tablectl.rules.scoring import MAX_HAN
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import TileSet, kind

__all__ = [
    "MAX_YAKUMAN",
    "chi_options",
    "choose_discard",
    "counts",
    "is_simple",
    "kuikae_kinds",
    "pon_options",
    "shanten",
    "value",
    "waits",
    "yakuhai_kinds",
]

#: Haku, hatsu, chun.
DRAGONS = (31, 32, 33)
#: The ``mahjong`` package's dora "yaku", which no win can stand on.
DORA_NAMES = frozenset({"Dora", "Aka Dora"})
#: The most yakuman the HAN? prompt counts (MENU cycles x1..x6).
MAX_YAKUMAN = 6


def counts(tiles: Iterable[int]) -> tuple[int, ...]:
    """The 34-kind counts of tile ids ``tiles`` (the tile tracker's own count)."""
    return tileshapes.counts(tiles)


def shanten(house: HouseRules, tiles: Sequence[int]) -> int:
    """Shanten of concealed ``tiles`` (3n+1 or 3n+2 of them) under ``house``: -1 complete,
    0 tenpai; the count the rules core's checks make."""
    return tileshapes.shanten(house, tiles)


def is_simple(k: int) -> bool:
    """A 2..8 of a suit."""
    return k < 27 and 1 <= k % 9 <= 7


def _keep_score(k: int, have: Sequence[int]) -> int:
    """How much a kind is worth keeping (lower: discard first): copies and suit
    neighbours within two, and a little for the middle numbers."""
    score = 3 * (have[k] - 1)
    if k < 27:
        base = k - k % 9
        for d in (-2, -1, 1, 2):
            n = k + d
            if base <= n < base + 9:
                score += have[n] * (2 if abs(d) == 1 else 1)
        score += 1 if is_simple(k) else 0
    return score


def choose_discard(
    house: HouseRules,
    tiles: Sequence[int],
    rng: random.Random,
    *,
    forbidden: frozenset[int] = frozenset(),
    keep: frozenset[int] = frozenset(),
) -> tuple[int, int]:
    """The tile to discard from ``tiles`` (a hand that just drew or called) and the
    shanten left: the lowest shanten, then the kind least worth keeping, then ``rng``.

    Kinds in ``forbidden`` are never discarded (kuikae) while another tile is left; of a
    kind's copies the highest id goes, which keeps red fives (the lowest ids) and the
    ids in ``keep``."""
    have = counts(tiles)
    best: list[tuple[int, int]] = []
    best_key: tuple[int, int] | None = None
    for k in sorted({kind(t) for t in tiles}):
        if k in forbidden and any(kind(t) not in forbidden for t in tiles):
            continue
        copies = sorted((t for t in tiles if kind(t) == k), key=lambda t: (t in keep, -t))
        tile = copies[0]
        rest = list(tiles)
        rest.remove(tile)
        key = (shanten(house, rest), _keep_score(k, have))
        if best_key is None or key < best_key:
            best_key, best = key, [(tile, key[0])]
        elif key == best_key:
            best.append((tile, key[0]))
    return rng.choice(best)


def waits(house: HouseRules, tiles: Sequence[int]) -> frozenset[int]:
    """The kinds that complete concealed ``tiles`` (3n+1 of them) under ``house``, leaving
    out kinds the hand already holds four of; empty unless tenpai (the rules core's
    checks)."""
    return frozenset(tileshapes.waits(house, tiles))


def pon_options(tiles: Sequence[int], called: int) -> list[tuple[int, int]]:
    """The pairs of ``tiles`` that pon ``called`` (one option: the two highest ids)."""
    same = sorted((t for t in tiles if kind(t) == kind(called)), reverse=True)
    return [(same[0], same[1])] if len(same) >= 2 else []


def chi_options(tiles: Sequence[int], called: int) -> list[tuple[int, int]]:
    """The pairs of ``tiles`` that chi ``called`` (a suit tile), one per shape."""
    k = kind(called)
    if k >= 27:
        return []
    base = k - k % 9
    out = []
    for lo in (k - 2, k - 1, k):
        shape = [n for n in (lo, lo + 1, lo + 2) if n != k]
        if lo < base or lo + 2 >= base + 9:
            continue
        pair = []
        for n in shape:
            ids = sorted((t for t in tiles if kind(t) == n), reverse=True)
            if not ids:
                break
            pair.append(ids[0])
        if len(pair) == 2:
            out.append((pair[0], pair[1]))
    return out


def kuikae_kinds(called: int, own: Sequence[int]) -> frozenset[int]:
    """Kinds a caller may not discard right after calling ``called`` with ``own`` (kuikae
    off): the kinds the tile tracker refuses (the called kind, and for a chi the kind at
    the other end of the run)."""
    k = kind(called)
    own_kinds = [kind(t) for t in own]
    chi = len(own_kinds) == 2 and set(own_kinds) != {k}
    return frozenset(tiletracker.kuikae_kinds(k, own_kinds, chi))


def yakuhai_kinds(seat_wind: int, round_wind: int) -> frozenset[int]:
    """The dragons and the seat's and round's winds (kinds 27..33)."""
    return frozenset({*DRAGONS, 27 + seat_wind, 27 + round_wind})


def _lib_meld(meld: Meld) -> LibMeld:
    meld_type = {"chi": LibMeld.CHI, "pon": LibMeld.PON}.get(meld.kind, LibMeld.KAN)
    return LibMeld(meld_type, meld.tiles, opened=meld.opened, called_tile=meld.called)


def value(house: HouseRules, tiles: TileSet, ctx: WinContext) -> HandScore | None:
    """What the win ``ctx`` is worth under ``house``, as a bot enters it at ``HAN?`` and
    ``FU?`` (han at most 13, yakuman at most 6); None when it is no win or has no yaku.

    Red and gold fives count one han each (the set's ids, not the library's fixed 16, 52,
    88); sanma-free's closed-kan bonus is added once."""
    options = house.tiles
    all_tiles = list(ctx.concealed) + [t for m in ctx.melds for t in m.tiles]
    config = HandConfig(
        is_tsumo=ctx.tsumo,
        is_riichi=ctx.riichi,
        is_daburu_riichi=ctx.double_riichi,
        is_ippatsu=ctx.ippatsu,
        is_rinshan=ctx.rinshan,
        is_chankan=ctx.chankan,
        is_haitei=ctx.haitei,
        is_houtei=ctx.houtei,
        is_tenhou=ctx.tenhou,
        is_chiihou=ctx.chiihou,
        player_wind=EAST + ctx.seat_wind,
        round_wind=EAST + ctx.round_wind,
        num_nuki_dora=ctx.north_count,
        options=OptionalRules(
            has_open_tanyao=options.kuitan,
            has_aka_dora=False,
            fu_for_pinfu_tsumo=not options.tsumo_pinfu,
            is_three_player=ctx.players == 3,
        ),
    )
    result = HandCalculator.estimate_hand_value(
        all_tiles,
        ctx.win_tile,
        melds=[_lib_meld(m) for m in ctx.melds],
        dora_indicators=list(ctx.dora_indicators),
        ura_dora_indicators=list(ctx.ura_indicators),
        config=config,
    )
    if result.error is not None or result.han is None:
        return None
    found = list(result.yaku or ())
    if any(y.is_yakuman for y in found):
        count = min(max(result.han // 13, 1), MAX_YAKUMAN)
        return HandScore(han=0, fu=None, yakuman=count, yaku=tuple(str(y) for y in found))
    han = result.han
    if house.scoring.table == "kantan":
        # Kantan has no pinfu (seed 004: ピンフ無し): a hand that has only pinfu is no win.
        han -= sum(y.han_closed for y in found if y.name == "Pinfu")
        found = [y for y in found if y.name != "Pinfu"]
        if not any(y.name not in DORA_NAMES for y in found):
            return None
    coloured = sum(1 for t in all_tiles if t in tiles.red or t in tiles.gold)
    bonus = options.closed_kan_bonus_han if any(m.kind == "closed_kan" for m in ctx.melds) else 0
    han = min(han + coloured + bonus, MAX_HAN)
    return HandScore(han=han, fu=result.fu, yaku=tuple(str(y) for y in found))
