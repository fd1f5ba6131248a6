"""Tile ids: the 136 format of the wire protocol, and a preset's set of tiles.

Every physical tile has its own id 0..135; ``id // 4`` is its kind 0..33 (0-8 man 1-9,
9-17 pin, 18-26 sou, 27-33 east south west north haku hatsu chun), ``id % 4`` its copy.
A three-player set has no 2m..8m (108 tiles).  Which copies of a five are red or gold
belongs to the set; following tenhou.net, the lowest ids of a kind are the coloured ones
(16 = red 5m, 52 = red 5p, 88 = red 5s), gold before red.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "FIVES",
    "KIND_NAMES",
    "SetOptions",
    "TileSet",
    "kind",
    "kind_name",
    "tile_set",
]

#: ``"1m"`` .. ``"9s"``, then the honours as ``"1z"`` (east) .. ``"7z"`` (chun).
KIND_NAMES: tuple[str, ...] = tuple(
    [f"{n}{suit}" for suit in "mps" for n in range(1, 10)] + [f"{n}z" for n in range(1, 8)]
)
#: The kind of each suit's five, by its name in the presets.
FIVES: dict[str, int] = {"5m": 4, "5p": 13, "5s": 22}
_SANMA_MISSING = range(1, 8)  # 2m..8m


def kind(tile: int) -> int:
    """The kind 0..33 of tile id ``tile``."""
    return tile // 4


def kind_name(k: int) -> str:
    """``"1m"`` .. ``"7z"`` for kind ``k``."""
    return KIND_NAMES[k]


@dataclass(frozen=True, slots=True)
class TileSet:
    """The tiles a preset plays with: their ids, and which fives are red or gold."""

    players: int
    ids: tuple[int, ...]
    red: frozenset[int]
    gold: frozenset[int]

    def __contains__(self, tile: object) -> bool:
        return tile in self.ids

    def is_red(self, tile: int) -> bool:
        """A red five (gold ones are not counted here)."""
        return tile in self.red

    def name(self, tile: int) -> str:
        """``"5p"``, or ``"0p"`` for a red or gold five (the usual notation)."""
        text = KIND_NAMES[kind(tile)]
        if tile in self.red or tile in self.gold:
            return "0" + text[1]
        return text


class _Game(Protocol):
    @property
    def players(self) -> int: ...


class _Fives(Protocol):
    @property
    def red_fives(self) -> Sequence[str]: ...

    @property
    def gold_fives(self) -> Sequence[str]: ...

    @property
    def red_count(self) -> int: ...


class SetOptions(Protocol):
    """What :func:`tile_set` reads of a preset (a :class:`tablectl.rules.options.HouseRules`):
    the number of players and the coloured fives.  Named here so that the tile ids stay
    below the rules core, which imports them."""

    @property
    def game(self) -> _Game:
        """``[game]``: ``players``."""
        ...

    @property
    def tiles(self) -> _Fives:
        """``[tiles]``: ``red_fives``, ``gold_fives``, ``red_count``."""
        ...


def tile_set(house: SetOptions) -> TileSet:
    """The set of ``house``: 136 tiles, or 108 at three players; its coloured fives.

    A suit named in ``gold_fives`` gets one gold five; each suit in ``red_fives`` one red;
    what ``red_count`` leaves over goes to the red suits again from the last one named
    (jboy-sanma: gold 5p, red 5p and two red 5s)."""
    players = house.game.players
    ids = tuple(t for t in range(136) if not (players == 3 and kind(t) in _SANMA_MISSING))
    tiles = house.tiles
    gold = [FIVES[s] * 4 for s in tiles.gold_fives]
    per_suit: dict[str, int] = {s: 1 for s in tiles.red_fives}
    extra = tiles.red_count - len(tiles.gold_fives) - len(tiles.red_fives)
    order = list(reversed(tiles.red_fives))
    i = 0
    while extra > 0 and order:
        per_suit[order[i % len(order)]] += 1
        extra -= 1
        i += 1
    red: list[int] = []
    for suit, count in per_suit.items():
        first = FIVES[suit] * 4 + (1 if suit in tiles.gold_fives else 0)
        red.extend(range(first, first + count))
    present = set(ids)
    return TileSet(
        players=players,
        ids=ids,
        red=frozenset(t for t in red if t in present),
        gold=frozenset(t for t in gold if t in present),
    )
