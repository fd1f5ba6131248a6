"""Random complete hands for the property test and the scoring benchmark.

:func:`random_win` draws a winning hand of a preset's set from a seeded
:class:`random.Random`: four sets and a pair (some of them called: chi, pon, open, closed
and added kans), sometimes seven pairs or thirteen orphans; random seat, dealer and round
wind, tsumo or ron, riichi (with ippatsu, double riichi, ura indicators), the chance yaku,
dora indicators and, where the preset pulls them, norths.  Every hand is complete; whether
it has a yaku is left to chance.
"""

from __future__ import annotations

import random
from collections import Counter

from tablectl.rules.options import HouseRules
from tablectl.tiles.hand import Meld, MeldKind, WinContext
from tablectl.tiles.ids import tile_set

TERMINALS_AND_HONOURS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def _groups(
    rng: random.Random, kinds: list[int], winds: list[int]
) -> tuple[list[list[int]], int] | None:
    """Four sets (as kinds) and a pair kind, each kind at most four times; the pair is one
    of ``winds`` (the seat and round wind) more often than chance would make it."""
    counts: Counter[int] = Counter()
    available = set(kinds)
    groups: list[list[int]] = []
    for _ in range(40):
        if len(groups) == 4:
            break
        if rng.random() < 0.6:
            start = rng.choice(kinds)
            group = [start, start + 1, start + 2]
            if start >= 27 or start % 9 > 6 or not set(group) <= available:
                continue
        else:
            group = [rng.choice(kinds)] * 3
        if all(counts[k] + group.count(k) <= 4 for k in group):
            counts.update(group)
            groups.append(group)
    pairs = [k for k in kinds if counts[k] <= 2]
    if len(groups) < 4 or not pairs:
        return None
    favoured = [k for k in winds if k in pairs]
    if favoured and rng.random() < 0.2:
        return groups, rng.choice(favoured)
    return groups, rng.choice(pairs)


def _shape(
    rng: random.Random, kinds: list[int], winds: list[int]
) -> tuple[list[list[int]], list[int]]:
    """``(sets, rest)``: the sets that may be called, and the concealed rest (as kinds)."""
    roll = rng.random()
    if roll < 0.08:
        pairs = rng.sample(kinds, 7)
        return [], [k for k in pairs for _ in range(2)]
    if roll < 0.12:
        orphans = [k for k in TERMINALS_AND_HONOURS if k in kinds]
        return [], [*orphans, rng.choice(orphans)]
    while True:
        made = _groups(rng, kinds, winds)
        if made is not None:
            groups, pair = made
            return groups, [pair, pair]


def random_win(rng: random.Random, house: HouseRules) -> WinContext:
    """A random complete winning hand under ``house`` (see the module docstring)."""
    tiles = tile_set(house)
    kinds = sorted({t // 4 for t in tiles.ids})
    free = {k: [t for t in tiles.ids if t // 4 == k] for k in kinds}
    for copies in free.values():
        rng.shuffle(copies)
    players = house.players
    seat, dealer, round_wind = rng.randrange(players), rng.randrange(players), rng.randrange(2)
    groups, rest = _shape(rng, kinds, [27 + round_wind, 27 + (seat - dealer) % players])
    chi = house.wall.chi_allowed
    kans = house.wall.kans_allowed
    # A kan takes the fourth copy: only of a kind no other set or the pair uses.
    used = Counter([*rest, *(k for group in groups for k in group)])
    melds: list[Meld] = []
    concealed: list[int] = [free[k].pop() for k in rest]
    for group in groups:
        roll = rng.random()
        if group[0] != group[1]:
            if chi and roll < 0.25:
                melds.append(Meld(kind="chi", tiles=tuple(free[k].pop() for k in group)))
            else:
                concealed.extend(free[k].pop() for k in group)
            continue
        meld_kind: MeldKind | None = None
        if roll < 0.2:
            meld_kind = "pon"
        elif kans and roll < 0.3 and used[group[0]] == 3:
            meld_kind = rng.choice(("open_kan", "closed_kan", "added_kan"))
        if meld_kind is None:
            concealed.extend(free[k].pop() for k in group)
        else:
            size = 3 if meld_kind == "pon" else 4
            melds.append(
                Meld(kind=meld_kind, tiles=tuple(free[group[0]].pop() for _ in range(size)))
            )
    win_tile = rng.choice(concealed)
    is_open = any(m.opened for m in melds)
    has_kan = any(len(m.tiles) == 4 for m in melds)
    tsumo = rng.random() < 0.5
    riichi = (not is_open or house.scoring.table == "kantan") and rng.random() < 0.4
    double_riichi = riichi and rng.random() < 0.1
    rinshan = tsumo and has_kan and rng.random() < 0.3
    houtei = not tsumo and rng.random() < 0.05
    leftovers = [t for copies in free.values() for t in copies]
    rng.shuffle(leftovers)
    indicators = rng.randint(1, 3)
    dora = tuple(leftovers[:indicators])
    ura = tuple(leftovers[indicators : 2 * indicators]) if riichi else ()
    norths = 0
    if house.tiles.north == "nuki":
        norths = rng.randint(0, 4 - sum(1 for t in (*concealed, *ura, *dora) if t // 4 == 30))
        norths = min(norths, sum(1 for t in leftovers[2 * indicators :] if t // 4 == 30), 2)
    return WinContext(
        seat=seat,
        dealer=dealer,
        players=players,
        round_wind=round_wind,
        concealed=tuple(concealed),
        melds=tuple(melds),
        win_tile=win_tile,
        tsumo=tsumo,
        riichi=riichi and not double_riichi,
        double_riichi=double_riichi,
        ippatsu=riichi and rng.random() < 0.2,
        haitei=tsumo and not rinshan and rng.random() < 0.05,
        houtei=houtei,
        rinshan=rinshan,
        chankan=not tsumo and not houtei and rng.random() < 0.05,
        dora_indicators=dora,
        ura_indicators=ura,
        north_count=norths,
    )
