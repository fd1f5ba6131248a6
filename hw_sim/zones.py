"""The seat zones of the simulated table: which tiles lie in each seat's hand, melds and
discards, as the seat readers under them see it (docs/protocol.md, "The seat readers").

Each zone is a list in the order the protocol's snapshots use: tiles that were there keep
their place, new ones are appended, so a pond lists the discards in the order they were
made. Every move answers with the zones it changed, which the firmware reports as
``SeatTiles`` snapshots. A move that cannot be (a tile not in the hand, a pond with
nothing to call) raises ValueError naming what is wrong and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from firmware_bridge.messages import Zone

__all__ = ["TableZones"]

#: A zone of a seat, as the firmware reports it.
Place = tuple[int, Zone]


class TableZones:
    """The three zones of every seat of one table (``players`` seats)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self._zones: list[dict[Zone, list[int]]] = [
            {zone: [] for zone in Zone} for _ in range(players)
        ]

    def tiles(self, seat: int, zone: Zone) -> tuple[int, ...]:
        """The tiles in ``seat``'s ``zone``, in snapshot order."""
        self._check_seat(seat)
        return tuple(self._zones[seat][zone])

    def hand(self, seat: int) -> tuple[int, ...]:
        """``seat``'s hand zone, in the order the tiles came (the last taken last)."""
        return self.tiles(seat, Zone.HAND)

    def last_discard(self, seat: int) -> int | None:
        """The tile ``seat`` discarded last and still in its pond, or None."""
        pond = self.tiles(seat, Zone.DISCARDS)
        return pond[-1] if pond else None

    def where(self, tile: int) -> Place | None:
        """The seat and zone holding ``tile``, or None (in the walls)."""
        for seat, zones in enumerate(self._zones):
            for zone, tiles in zones.items():
                if tile in tiles:
                    return seat, zone
        return None

    def all_places(self) -> list[Place]:
        """Every zone of every seat, seat by seat, zones in wire order (the resync)."""
        return [(seat, zone) for seat in range(self.players) for zone in Zone]

    # ---- moves

    def clear(self) -> list[Place]:
        """Every tile goes back into the table (the shuffle); the zones that held some."""
        changed = [(s, z) for s in range(self.players) for z in Zone if self._zones[s][z]]
        for seat, zone in changed:
            self._zones[seat][zone].clear()
        return changed

    def take(self, seat: int, tiles: Sequence[int], into: Zone = Zone.HAND) -> list[Place]:
        """``seat`` took ``tiles`` from the wall into its hand (or, kantan's stand-in for a
        called tile, straight among its melds: ``into``)."""
        self._check_seat(seat)
        for tile in tiles:
            found = self.where(tile)
            if found is not None:
                raise ValueError(f"tile {tile} is already in seat {found[0]}'s {found[1].name}")
        self._zones[seat][into].extend(tiles)
        return [(seat, into)]

    def put_back(self, seat: int, tiles: Sequence[int]) -> list[Place]:
        """``seat`` puts ``tiles`` it took back in the wall (from its hand, or its melds
        where kantan's stand-in went); the zones that held them."""
        self._check_seat(seat)
        changed: list[Place] = []
        for tile in tiles:
            found = self.where(tile)
            if found is None or found[0] != seat:
                raise ValueError(f"tile {tile} is not among seat {seat}'s tiles")
            self._zones[seat][found[1]].remove(tile)
            if found not in changed:
                changed.append(found)
        return changed

    def discard(self, seat: int, tile: int) -> list[Place]:
        """``seat`` discards ``tile`` from its hand into its pond."""
        self._from_hand(seat, (tile,))
        self._zones[seat][Zone.DISCARDS].append(tile)
        return [(seat, Zone.HAND), (seat, Zone.DISCARDS)]

    def declare(self, seat: int, tiles: Sequence[int]) -> list[Place]:
        """``seat`` lays ``tiles`` from its hand among its melds (a closed kan, the tile
        added to a pon, a pulled north)."""
        self._from_hand(seat, tiles)
        self._zones[seat][Zone.MELDS].extend(tiles)
        return [(seat, Zone.HAND), (seat, Zone.MELDS)]

    def call(self, seat: int, discarder: int, own: Sequence[int]) -> tuple[int, list[Place]]:
        """``seat`` calls ``discarder``'s last discard with ``own`` tiles from its hand:
        all of them go to its melds, the called tile first. Returns the called tile."""
        self._check_seat(discarder)
        if discarder == seat:
            raise ValueError(f"seat {seat} cannot call its own discard")
        called = self.last_discard(discarder)
        if called is None:
            raise ValueError(f"seat {discarder} has no discard to call")
        self._from_hand(seat, own)
        self._zones[discarder][Zone.DISCARDS].pop()
        self._zones[seat][Zone.MELDS].extend((called, *own))
        return called, [(discarder, Zone.DISCARDS), (seat, Zone.HAND), (seat, Zone.MELDS)]

    def _from_hand(self, seat: int, tiles: Iterable[int]) -> None:
        self._check_seat(seat)
        hand = self._zones[seat][Zone.HAND]
        wanted = list(tiles)
        if len(set(wanted)) != len(wanted):
            raise ValueError(f"tiles {wanted} repeat")
        missing = [t for t in wanted if t not in hand]
        if missing:
            raise ValueError(f"tile(s) {missing} are not in seat {seat}'s hand {sorted(hand)}")
        for tile in wanted:
            hand.remove(tile)

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.players:
            raise ValueError(f"no seat {seat}: seats are 0..{self.players - 1}")
