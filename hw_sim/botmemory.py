"""What the bots remember: a win entry in progress, the hand in play, and (at a table
with seat readers) each bot seat's own hand beyond the tiles the zones hold."""

from __future__ import annotations

import dataclasses

from tablectl.rules import wall as W
from tablectl.rules.options import HouseRules
from tablectl.tiles.hand import HandScore, Meld

__all__ = ["Entry", "Hand", "TileSeat", "entry_for"]


@dataclasses.dataclass(slots=True)
class Entry:
    """One winner's han/fu entry in progress."""

    tsumo: bool
    han: int = 0
    fu: int | None = None
    yakuman: int = 0
    refusals: int = 0
    chosen: bool = False


@dataclasses.dataclass(slots=True)
class TileSeat:
    """What a bot seat at a tile-reading table remembers of its own hand (the tiles
    themselves lie in the firmware's zones)."""

    melds: list[Meld] = dataclasses.field(default_factory=list)
    #: Kinds this seat discarded this hand (called ones too): furiten.
    discarded: set[int] = dataclasses.field(default_factory=set)
    #: The kinds that complete the hand (empty unless tenpai), since its last discard.
    waits: frozenset[int] = frozenset()
    #: Passed a winning tile since its last draw / since its riichi.
    temp_furiten: bool = False
    riichi_furiten: bool = False
    #: (melds on the table, own discards) right after the riichi discard: ippatsu holds
    #: while both stay so.
    riichi_at: tuple[int, int] | None = None
    double_riichi: bool = False
    #: Kinds it may not discard right after a call (kuikae).
    forbidden: frozenset[int] = frozenset()

    @property
    def furiten(self) -> bool:
        """It may not ron."""
        return self.temp_furiten or self.riichi_furiten or bool(self.waits & self.discarded)

    @property
    def closed(self) -> bool:
        """No open meld."""
        return not any(m.opened for m in self.melds)


@dataclasses.dataclass(slots=True)
class Hand:
    """What the bots remember about the hand in play."""

    dealer: int
    riichi: set[int] = dataclasses.field(default_factory=set)
    called: set[int] = dataclasses.field(default_factory=set)
    tenpai: dict[int, bool] = dataclasses.field(default_factory=dict)
    #: Declarations the daemon refused this hand (not tried again).
    refused: set[str] = dataclasses.field(default_factory=set)
    #: The state the last own-turn decision was made on.
    last_state: W.WallState | None = None
    over: bool = False
    #: Tile-reading tables: each bot seat's own memory, and the rons the daemon refused
    #: (seat, tile, tiles taken so far), not tried again.
    tiles: dict[int, TileSeat] = dataclasses.field(default_factory=dict)
    refused_rons: set[tuple[int, int, int]] = dataclasses.field(default_factory=set)
    #: A tile reader failed or disagreed this hand: the daemon keys the rest of it in
    #: (docs/tiles.md), so the bots declare the exhaustive draw themselves again.
    keyed: bool = False

    def riichi_lamp(self, seat: int, on: bool) -> None:
        """The daemon's riichi lamp of ``seat``: a riichi someone keyed on a bot's seat
        binds the bot too (it discards its drawn tile from then on, as the daemon insists;
        issue 29: it discarded another, refused for ever)."""
        if on:
            self.riichi.add(seat)
        else:
            self.riichi.discard(seat)


def entry_for(house: HouseRules, tsumo: bool, score: HandScore | None) -> Entry:
    """A win entry: the real value when the bot knows it (``chosen``), else one the
    entry picks at ``HAN?``."""
    if score is None:
        return Entry(tsumo=tsumo)
    fu = score.fu if house.scoring.table == "standard" and score.han < 5 else None
    return Entry(tsumo=tsumo, han=score.han, fu=fu, yakuman=score.yakuman, chosen=True)
