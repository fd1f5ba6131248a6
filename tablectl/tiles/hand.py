"""A winning hand as the tile tracker sees it, and its value: the shapes that the tracker
(:mod:`.tracker`) builds and the scorer (:mod:`.scoring`) reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["HandScore", "Meld", "MeldKind", "WinContext"]

MeldKind = Literal["chi", "pon", "open_kan", "closed_kan", "added_kan"]


@dataclass(frozen=True, slots=True)
class Meld:
    """One meld on the table: all its tile ids (3, or 4 for a kan), the called tile and the
    seat it came from (both None for a closed kan; for an added kan, those of the pon).

    Kantan (鳴いた牌を河から持って来ないで、代わりに山の牌を加える): ``in_river``, the called
    tile stayed in the discarder's river and counts here by its kind alone; ``stand_in``
    is the tile from the caller's own wall that lies in the meld zone in its place (None
    until it is taken)."""

    kind: MeldKind
    tiles: tuple[int, ...]
    called: int | None = None
    source: int | None = None
    in_river: bool = False
    stand_in: int | None = None

    @property
    def opened(self) -> bool:
        """The meld opens the hand (every meld but a closed kan)."""
        return self.kind != "closed_kan"

    @property
    def zone_tiles(self) -> tuple[int, ...]:
        """The tiles a seat reader sees in the meld zone: the meld's own, with kantan's
        stand-in (once taken) where the called tile would lie."""
        if not self.in_river:
            return self.tiles
        own = tuple(t for t in self.tiles if t != self.called)
        return own if self.stand_in is None else (*own, self.stand_in)


@dataclass(frozen=True, slots=True)
class WinContext:
    """Everything that decides a win's value, seen by the table.

    ``concealed`` holds the winner's concealed tiles *including* ``win_tile`` (14 tiles less
    three per meld).  Winds are 0 east .. 3 north; the seat wind is ``(seat - dealer) %
    players``.  Ura indicators count only with ``riichi``; ``north_count`` is the nuki-dora
    pulled by the winner (three players)."""

    seat: int
    dealer: int
    players: int
    round_wind: int
    concealed: tuple[int, ...]
    melds: tuple[Meld, ...]
    win_tile: int
    tsumo: bool
    riichi: bool = False
    double_riichi: bool = False
    ippatsu: bool = False
    haitei: bool = False
    houtei: bool = False
    rinshan: bool = False
    chankan: bool = False
    tenhou: bool = False
    chiihou: bool = False
    renhou: bool = False
    dora_indicators: tuple[int, ...] = ()
    ura_indicators: tuple[int, ...] = ()
    north_count: int = 0

    @property
    def seat_wind(self) -> int:
        """0 east .. 3 north: the winner's seat wind."""
        return (self.seat - self.dealer) % self.players


@dataclass(frozen=True, slots=True)
class HandScore:
    """A scored win: han and fu (fu None where the preset has none), or a yakuman count;
    the yaku by short English name (``"riichi"``, ``"dora 2"``, ...) for the display."""

    han: int
    fu: int | None
    yakuman: int = 0
    yaku: tuple[str, ...] = ()
