"""A game read from an outside log: what was dealt, what was done, what it scored.

Tiles are the 136 ids of :mod:`tablectl.tiles.ids` (tenhou.net's own numbering: ``id //
4`` is the kind, 16, 52 and 88 the red fives).  A log without the physical ids
(tenhou.net/6 JSON names kinds, not tiles) gets ids that keep each tile's identity
through the hand: the red five is copy 0, every other tile the lowest copy not yet seen.
Points are in points (25000, not 250), deltas per seat in seat order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Action",
    "AddedKan",
    "Call",
    "ClosedKan",
    "Discard",
    "Draw",
    "DrawnHand",
    "DRAW_KINDS",
    "LogError",
    "LogGame",
    "LogHand",
    "LogRules",
    "NewDora",
    "RiichiAccepted",
    "Win",
]


class LogError(ValueError):
    """A log this package cannot read: the message says where and what."""


@dataclass(frozen=True, slots=True)
class LogRules:
    """The rules a log names: seats, red fives, open tanyao, east-only or east+south."""

    players: int
    red_fives: bool
    open_tanyao: bool
    length: Literal["east", "south"]


@dataclass(frozen=True, slots=True)
class Draw:
    """``seat`` draws ``tile``; ``rinshan`` for a kan's replacement tile."""

    seat: int
    tile: int
    rinshan: bool = False


@dataclass(frozen=True, slots=True)
class Discard:
    """``seat`` discards ``tile``: ``tsumogiri`` when it is the tile just drawn,
    ``riichi`` when the discard declares riichi."""

    seat: int
    tile: int
    tsumogiri: bool
    riichi: bool = False


@dataclass(frozen=True, slots=True)
class RiichiAccepted:
    """``seat``'s riichi declaration survived its discard: the stick is paid."""

    seat: int


@dataclass(frozen=True, slots=True)
class Call:
    """``seat`` calls ``source``'s discard ``called`` with its own ``own`` tiles: a chi,
    a pon or an open kan (``kind`` ``"kan"``)."""

    seat: int
    kind: Literal["chi", "pon", "kan"]
    source: int
    called: int
    own: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClosedKan:
    """``seat`` declares a closed kan of ``tiles``."""

    seat: int
    tiles: tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class AddedKan:
    """``seat`` adds ``tile`` to its pon."""

    seat: int
    tile: int


@dataclass(frozen=True, slots=True)
class NewDora:
    """A kan turns a new dora ``indicator``."""

    indicator: int


Action = Draw | Discard | RiichiAccepted | Call | ClosedKan | AddedKan | NewDora


@dataclass(frozen=True, slots=True)
class Win:
    """One winner: ``source`` is the seat dealt in (the winner itself for tsumo);
    ``yaku`` the (tenhou.net yaku id, han) pairs that count, dora included (a yakuman
    counts 13); ``fu`` is 0 where the log does not say it (a tenhou.net/6 limit hand);
    ``pao`` the seat liable for it, if any; ``deltas`` what the win moved, honba and the
    sticks on the table included."""

    seat: int
    source: int
    fu: int
    points: int
    han: int
    yaku: tuple[tuple[int, int], ...]
    pao: int | None
    deltas: tuple[int, ...]


#: A hand's end without a win: an exhaustive draw (``nagashi`` for a nagashi mangan)
#: or one of the aborts.
DRAW_KINDS = (
    "exhaustive",
    "nagashi",
    "nine_terminals",
    "four_riichi",
    "triple_ron",
    "four_kans",
    "four_winds",
)


@dataclass(frozen=True, slots=True)
class DrawnHand:
    """A hand ended with no winner: its kind (one of :data:`DRAW_KINDS`) and deltas."""

    kind: str
    deltas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class LogHand:
    """One hand: where it stands, what was dealt, what was done, how it ended.

    ``round_index`` counts hands from East 1 (0) as tenhou.net does: East 4 is 3, South
    1 is 4.  ``dice`` and ``wall`` (the 136 ids in tenhou's dealing order, see
    :mod:`.tenhou_wall`) are known only from a log that keeps the shuffle seed.
    ``dora`` holds the first indicator; kan dora come as :class:`NewDora` actions.
    ``ura`` the ura indicators turned for a riichi winner (empty otherwise).
    """

    round_index: int
    honba: int
    sticks: int
    dealer: int
    scores: tuple[int, ...]
    haipai: tuple[tuple[int, ...], ...]
    dora: int
    ura: tuple[int, ...]
    actions: tuple[Action, ...]
    result: tuple[Win, ...] | DrawnHand
    dice: tuple[int, int] | None = None
    wall: tuple[int, ...] | None = None

    @property
    def name(self) -> str:
        """``E3-0``: the round wind (W for West, N past it), the hand's number in the
        round and the honba, as tests/data/tenhou/README.md names hands."""
        wind = "ESWN"[min(self.round_index // 4, 3)]
        return f"{wind}{self.round_index % 4 + 1}-{self.honba}"

    def riichi_paid(self) -> tuple[int, ...]:
        """The seats whose riichi stick this hand took."""
        return tuple(a.seat for a in self.actions if isinstance(a, RiichiAccepted))

    def deltas(self) -> tuple[int, ...]:
        """The hand's whole score change per seat: its results' deltas less the riichi
        sticks paid."""
        total = [0] * len(self.scores)
        for seat in self.riichi_paid():
            total[seat] -= 1000
        results = self.result if isinstance(self.result, tuple) else (self.result,)
        for r in results:
            total = [t + d for t, d in zip(total, r.deltas, strict=True)]
        return tuple(total)


@dataclass(frozen=True, slots=True)
class LogGame:
    """A whole game: its rules, its hands in order, the final scores if the log has them."""

    rules: LogRules
    hands: tuple[LogHand, ...]
    final_scores: tuple[int, ...] | None
