"""Shapes of a concealed hand as the preset reads them: shanten, waits, whether a closed
kan in riichi keeps the hand's form; the 34-kind counts and names of tiles.

Pure and deterministic.  The ``mahjong`` package (shanten and complete-hand tests) is
imported when a check first needs it, so a table that does not read tiles never loads it.
Tiles are ids 0..135 (:mod:`tablectl.tiles.ids`); a *hand* here is the concealed tiles
only: a seat's melds are whole sets and take no part in shanten or waits (the ``mahjong``
package counts a hand of 3n+1 or 3n+2 tiles with the missing sets as melds).  What makes a
hand complete is the preset's: its set (three players: no 2m..8m) and whether four of a
kind may be two of a chiitoitsu's pairs (``tiles.four_tile_chiitoitsu_han``), which the
package never counts.

The lowest of the rules core's tile modules: the scorer (:mod:`.tilescoring`), formal
tenpai (:mod:`.tenpai`), the tile tracker (:mod:`.tiletracker`) and the checks on a hand
in progress (:mod:`.tilechecks`) build on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

from tablectl.rules.options import HouseRules
from tablectl.tiles.ids import KIND_NAMES, kind

__all__ = [
    "KINDS",
    "NORTH",
    "complete",
    "counts",
    "dora_kind",
    "four_tile_pairs",
    "kan_keeps_form",
    "kinds_text",
    "shanten",
    "waits",
]

KINDS = 34
#: 2m..8m: not in a three-player set.
SANMA_MISSING = frozenset(range(1, 8))
#: The first honour kind (east): runs are of the suits below it.
HONOURS = 27
NORTH = 30


def dora_kind(indicator: int, players: int) -> int:
    """The kind an indicator (tile id) makes dora: the next of its suit, wind or dragon
    (three players: 1m shows 9m, the 2m..8m being out of the set)."""
    k = kind(indicator)
    if k < HONOURS:
        if players == 3 and k == 0:
            return 8
        return k // 9 * 9 + (k % 9 + 1) % 9
    if k <= NORTH:
        return HONOURS + (k - HONOURS + 1) % 4
    haku = NORTH + 1
    return haku + (k - haku + 1) % 3


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
def complete(hand: tuple[int, ...], fours: bool) -> bool:
    """The 34-kind counts ``hand`` (14 tiles less three per meld) make a complete hand:
    sets and a pair, seven pairs (four of a kind as two of them with ``fours``) or
    thirteen orphans."""
    from mahjong.agari import Agari

    if fours and sum(hand) == 14 and _four_pairs(hand) == 7:
        return True
    return bool(Agari.is_agari(list(hand)))


#: The terminals and honours: the kinds of thirteen orphans.
ORPHANS = frozenset((0, 8, 9, 17, 18, 26, *range(HONOURS, KINDS)))


def _candidates(hand: tuple[int, ...]) -> Iterator[int]:
    """The kinds that could complete ``hand`` at all: a kind it holds (a pair, a
    triplet, a chiitoitsu's pair), a suit kind within two of a held one of its suit (a
    run), and every orphan when the hand holds orphans only (thirteen orphans).  A
    complete hand needs the added tile in one of those, so the rest need no test."""
    orphans_only = all(hand[k] == 0 for k in range(KINDS) if k not in ORPHANS)
    for k in range(KINDS):
        if hand[k] or (orphans_only and k in ORPHANS):
            yield k
        elif k < HONOURS:
            low, high = max(k - 2, k - k % 9), min(k + 2, k - k % 9 + 8)
            if any(hand[j] for j in range(low, high + 1)):
                yield k


@lru_cache(maxsize=1 << 16)
def _waits(hand: tuple[int, ...], three: bool, fours: bool) -> tuple[int, ...]:
    out = []
    for k in _candidates(hand):
        # No fifth tile: a kind held four times in the hand is no wait (1111m tanki).
        if (three and k in SANMA_MISSING) or hand[k] >= 4:
            continue
        plus = list(hand)
        plus[k] += 1
        if complete(tuple(plus), fours):
            out.append(k)
    return tuple(out)


def four_tile_pairs(house: HouseRules) -> bool:
    """The preset lets four of a kind be two of a chiitoitsu's pairs."""
    return house.tiles.four_tile_chiitoitsu_han > 0


def shanten(house: HouseRules, hand: Sequence[int]) -> int:
    """Tiles away from tenpai (0) or a complete hand (-1): the ``mahjong`` package's count
    (regular, seven pairs and thirteen orphans, the preset's set), and seven pairs with
    four of a kind as two where the preset allows it; ``hand`` holds 3n+1 or 3n+2 tiles."""
    return _shanten(counts(hand), house.players == 3, four_tile_pairs(house))


def waits(house: HouseRules, hand: Sequence[int]) -> tuple[int, ...]:
    """The kinds that complete the concealed ``hand`` (3n+1 tiles) as :func:`complete`
    reads it: its waits by shape, whoever holds those tiles (a kind held four times in the
    hand itself is none).  A hand tenpai both as a meld hand and as a four-tile
    chiitoitsu waits on both (sanma-free's seed: シャボとのチートイツの単騎待ち)."""
    if len(hand) % 3 != 1:
        return ()
    return _waits(counts(hand), house.players == 3, four_tile_pairs(house))


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
