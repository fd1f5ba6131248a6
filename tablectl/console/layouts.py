"""The tiles of each raised wall of a hand, as the wall reader reports them
(``WallLayout``): kept for the hand, the dora indicators for the centre display, and
forgotten for the rest of the hand as soon as a take's tile disagrees (docs/protocol.md,
"The wall reader"). Its own module because the hand cycle and the tile flow both use
it, and the hand cycle is built on the tile flow.
"""

from __future__ import annotations

from firmware_bridge.ratelog import RateLimitedLog
from tablectl.console.core import TableCore, log
from tablectl.rules import walltrack
from tablectl.rules.wall import positions_per_wall

#: Phases in which a ``WallLayout`` belongs to the hand being set up (the table sends it
#: while raising the walls, before their DONE; a late one may follow the last DONE).
_LAYOUT_PHASES = ("table_shuffling", "table_walls_up")


class WallLayouts:
    """The tiles of each raised wall of this hand (the wall reader's ``WallLayout``),
    cleared at the next shuffle, and whether they are still trusted."""

    def __init__(self, core: TableCore) -> None:
        self.core = core
        self.walls: dict[int, tuple[int, ...]] = {}
        #: A take's tile disagreed with the layouts: they are not trusted until the next
        #: shuffle, and no dora is shown.
        self.void = False
        # Events a forged or noisy line can repeat at will: logged once, then counted.
        self._ratelog = RateLimitedLog(log, clock=core.now, prefix=f"[{core.table_id}] ")

    def per_wall(self) -> int:
        """Positions in one wall (docs/wall.md)."""
        return positions_per_wall(walltrack.wall_rules(self.core.rules))

    def clear(self) -> None:
        """A new hand: no layout yet."""
        self.walls = {}
        self.void = False

    def keep(self, wall: int, tiles: tuple[int, ...]) -> None:
        """A raised wall's tiles from the wall reader: kept for this hand."""
        core = self.core
        if core.phase not in _LAYOUT_PHASES:
            self._ratelog.warning("layouts outside a raise",
                                  "[%s] layout of wall %d outside a raise ignored",
                                  core.table_id, wall)  # fmt: skip
            return
        if wall >= core.players or len(tiles) != self.per_wall():
            self._ratelog.warning("layouts of a wrong size",
                                  "[%s] layout of wall %d with %d tiles ignored (%d walls of %d)",
                                  core.table_id, wall, len(tiles), core.players,
                                  self.per_wall())  # fmt: skip
            return
        # A wall read again was raised again (a reboot's re-sent shuffle: the first raise's
        # layouts, kept across the reset, come before the second's): the new read replaces
        # the old, and the layouts are judged as they now stand. A sticky "repeats" voided
        # the hand for good, and it was keyed with nothing on any display (kantan seed 284).
        self.walls[wall] = tiles
        if self.repeats():
            log.warning("[%s] layout of wall %d repeats tiles: no dora shown until every"
                        " wall is read again", core.table_id, wall)  # fmt: skip

    def repeats(self) -> bool:
        """The layouts kept show a tile twice (a broken reader, or walls of two raises)."""
        tiles = [t for ts in self.walls.values() for t in ts]
        return len(set(tiles)) != len(tiles)

    def trusted(self) -> bool:
        """No take disagreed with the layouts and they show no tile twice."""
        return not self.void and not self.repeats()

    def tile_at(self, pos: int) -> int | None:
        """The tile the layouts put at ``pos`` (None: not known, or not trusted)."""
        if not self.trusted():
            return None
        per = self.per_wall()
        tiles = self.walls.get(pos // per)
        return None if tiles is None else tiles[pos % per]

    def check(self, pos: int, tile: int) -> None:
        """A take's tile (tile reader) against the layout: a difference is a misread, and
        the layouts are not trusted for the rest of the hand (never a wrong dora)."""
        expected = self.tile_at(pos)
        if expected is not None and expected != tile:
            log.warning("[%s] position %d: the take read tile %d, the wall layout says %d;"
                        " no dora shown until the next shuffle",
                        self.core.table_id, pos, tile, expected)  # fmt: skip
            self.void = True

    def dora_tiles(self) -> tuple[int, ...]:
        """The revealed dora indicators' tile ids, first one first, when the wall reader's
        layouts of their walls are known and trusted; ``()`` otherwise (never a partial
        list)."""
        wall = self.core.state.wall
        if wall is None or not wall.dora_indicators:
            return ()
        tiles = [self.tile_at(pos) for pos in wall.dora_indicators[:5]]
        if any(t is None for t in tiles):
            return ()
        return tuple(t for t in tiles if t is not None)

    def whole(self) -> tuple[int, ...] | None:
        """The layout of the whole wall, when every wall was read and is trusted."""
        walls = [self.walls.get(w) for w in range(self.core.players)]
        if not self.trusted() or any(w is None for w in walls):
            return None
        return tuple(t for w in walls if w is not None for t in w)
