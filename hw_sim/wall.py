"""The physical wall of the simulated table: which tile lies at which position.

Positions follow docs/wall.md and are fixed to the table: four players use 136 positions
(four walls of 17 stacks, position = wall * 34 + stack * 2 + (0 top, 1 bottom)), three
players 108 (three walls of 18 stacks, wall * 36 + ...). A shuffle lays a seeded
permutation of the tile set into the positions; a take empties positions and remembers who
took them, so the terminal view can draw the wall and the firmware can count tiles.

Tile ids are the usual 136 format (kind = id // 4). The three-player set leaves out the
manzu 2 to 8 (ids 4..31), as every sanma set does.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence

__all__ = ["KIND_NAMES", "PhysicalWall", "tile_name", "tile_set"]

#: Short names of the 34 tile kinds: 1m..9m, 1p..9p, 1s..9s, E S W N, P (haku), F, C.
KIND_NAMES: tuple[str, ...] = (
    *(f"{n}m" for n in range(1, 10)),
    *(f"{n}p" for n in range(1, 10)),
    *(f"{n}s" for n in range(1, 10)),
    "E", "S", "W", "N", "P", "F", "C",
)  # fmt: skip

#: Tile ids left out of a three-player set: manzu 2..8 (kinds 1..7).
_SANMA_MISSING = range(4, 32)


def tile_name(tile: int) -> str:
    """Short name of a tile id (``5p``, ``E``); ``?`` for an id outside 0..135."""
    if not 0 <= tile <= 135:
        return "?"
    return KIND_NAMES[tile // 4]


def tile_set(players: int) -> list[int]:
    """The tile ids of a set for ``players`` (136 for four, 108 for three), sorted."""
    if players == 4:
        return list(range(136))
    if players == 3:
        return [t for t in range(136) if t not in _SANMA_MISSING]
    raise ValueError(f"players must be 3 or 4, got {players}")


class PhysicalWall:
    """The tiles in the walls of one table, laid out by a seeded shuffle.

    ``rng`` drives every shuffle, so a table built from one seed raises the same walls in
    the same order of hands.
    """

    def __init__(self, players: int, rng: random.Random, ids: Sequence[int] | None = None) -> None:
        self.players = players
        #: The set's tile ids (a preset's set: ``tablectl.tiles.ids.tile_set(house).ids``).
        self.ids: tuple[int, ...] = tuple(tile_set(players) if ids is None else sorted(ids))
        if len(self.ids) != len(tile_set(players)) or len(set(self.ids)) != len(self.ids):
            raise ValueError(
                f"a {players}-player set has {len(tile_set(players))} distinct tile ids, "
                f"got {len(self.ids)} ({len(set(self.ids))} distinct)"
            )
        self.size = len(self.ids)
        #: Positions in one wall (34 for four players, 36 for three).
        self.per_wall = self.size // players
        self._rng = rng
        #: Tile id at each position (after the first shuffle).
        self.tiles: list[int] = list(self.ids)
        #: Position -> seat that took the tile.
        self.taken: dict[int, int] = {}
        #: Shuffles so far (the view shows it as the hand counter of the machine).
        self.shuffles = 0
        #: Layouts given for the next shuffles (:meth:`plan`), first one first.
        self.planned: deque[tuple[int, ...]] = deque()

    def plan(self, tiles: Sequence[int]) -> int:
        """Lay ``tiles`` (the tile id at each position 0, 1, ...) at the next shuffle that
        has no layout yet, instead of a seeded one; returns how many layouts wait.

        Raises ValueError, changing nothing, unless ``tiles`` is this set's ids, each once.
        """
        layout = tuple(tiles)
        if len(layout) != self.size:
            raise ValueError(
                f"a layout has one tile id per position: {self.size} for this set, got"
                f" {len(layout)}"
            )
        if sorted(layout) != list(self.ids):
            foreign = sorted(set(layout) - set(self.ids))
            twice = sorted({t for t in layout if layout.count(t) > 1})
            why = f"not in this set: {foreign[:5]}" if foreign else f"given twice: {twice[:5]}"
            raise ValueError(f"a layout holds each tile id of the set once; {why}")
        self.planned.append(layout)
        return len(self.planned)

    def shuffle(self) -> None:
        """Gather every tile, shuffle them and build full walls (the first planned
        layout, if one waits)."""
        if self.planned:
            tiles = list(self.planned.popleft())
        else:
            tiles = list(self.ids)
            self._rng.shuffle(tiles)
        self.tiles = tiles
        self.taken = {}
        self.shuffles += 1

    def wall_of(self, position: int) -> int:
        """The wall (seat in front of it) holding ``position``."""
        self._check(position)
        return position // self.per_wall

    def tile_at(self, position: int) -> int:
        """The tile id lying (or that lay) at ``position``."""
        self._check(position)
        return self.tiles[position]

    def present(self, position: int) -> bool:
        """True while the tile at ``position`` is still in the wall."""
        self._check(position)
        return position not in self.taken

    def take(self, seat: int, positions: Sequence[int]) -> list[int]:
        """``seat`` lifts the tiles at ``positions``; returns their ids.

        Raises ValueError for a position outside the wall or already empty (nothing there
        for the sensor to see).
        """
        for pos in positions:
            self._check(pos)
            if pos in self.taken:
                raise ValueError(f"position {pos} is empty (taken by seat {self.taken[pos]})")
        if len(set(positions)) != len(positions):
            raise ValueError(f"positions {list(positions)} repeat")
        for pos in positions:
            self.taken[pos] = seat
        return [self.tiles[p] for p in positions]

    def put_back(self, positions: Iterable[int]) -> None:
        """Return tiles to their positions (a take the daemon refused)."""
        for pos in positions:
            self.taken.pop(pos, None)

    def count(self, wall: int) -> int:
        """Tiles still standing in ``wall``."""
        start = wall * self.per_wall
        return sum(1 for p in range(start, start + self.per_wall) if p not in self.taken)

    def position_of(self, tile: int) -> int | None:
        """Where tile id ``tile`` lies, or None if it is not in this set."""
        try:
            return self.tiles.index(tile)
        except ValueError:
            return None

    def _check(self, position: int) -> None:
        if not 0 <= position < self.size:
            raise ValueError(f"no wall position {position}: positions are 0..{self.size - 1}")
