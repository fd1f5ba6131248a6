"""The game state and the effects a step produces: plain frozen values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tablectl.rules.money import Money
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.tiletracker import TileState
from tablectl.rules.wall import WallState

WINDS = "ESWN"
HandResult = Literal["ron", "tsumo", "draw", "abort", "chombo"]


@dataclass(frozen=True, slots=True)
class Final:
    """The end of a game: scores after the end-of-game adjustments and the ranking.

    ``penalties`` are the points each seat lost to penalties taken at the end (chombo in
    result points); they are taken after the ranking, from ``result`` when the preset has
    result points and from ``scores`` otherwise, so they never change a place.

    ``money`` is the settlement in P where the preset has money (None otherwise).
    """

    scores: tuple[int, ...]
    ranking: tuple[int, ...]
    reason: str
    result: tuple[float, ...] = ()
    penalties: tuple[int, ...] = ()
    money: Money | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        out: dict[str, Any] = {
            "scores": list(self.scores),
            "ranking": list(self.ranking),
            "reason": self.reason,
        }
        if self.result:
            out["result"] = list(self.result)
        if self.penalties:
            out["penalties"] = list(self.penalties)
        out["money"] = self.money.as_dict() if self.money else None
        return out


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything the rules core knows between two events.

    ``round_index`` counts rounds from 0 (East), 1 (South), ...; ``dealer`` is also the
    round's hand number - 1 because seat 0 is the first dealer.  ``riichi`` lists the seats
    whose deposit was taken this hand; ``pending_riichi`` a declaration whose deposit is
    taken unless the next event is a ron off that seat; ``hand_payments`` what each seat
    paid to the table during the hand (riichi and false-call deposits), reported with the
    hand's deltas.
    """

    rules: HouseRules
    scores: tuple[int, ...]
    round_index: int = 0
    dealer: int = 0
    honba: int = 0
    kyoutaku: int = 0
    riichi: tuple[int, ...] = ()
    riichi_deposits: int = 0
    hand_payments: tuple[int, ...] = ()
    pending_riichi: int | None = None
    dead: tuple[int, ...] = ()
    bust_after_hand: tuple[int, ...] = ()
    last_hand: bool = False
    stop_offered: bool = False
    extension: bool = False
    hands_played: int = 0
    final_penalties: tuple[int, ...] = ()
    finished: bool = False
    final: Final | None = None
    wall: WallState | None = None
    #: Every seat's tiles, in a hand whose wall layout was read (docs/tiles.md); else None.
    tiles: TileState | None = None
    #: Each seat's net chips (祝儀) in the game so far (docs/rules.md, "Money").
    chips: tuple[int, ...] = ()
    #: What an ``undo`` goes back to; not part of the game's value (equality, repr).
    undo: UndoPoint | None = field(default=None, compare=False, repr=False)

    @property
    def players(self) -> int:
        """Number of players."""
        return self.rules.players

    @property
    def wind(self) -> str:
        """The round wind letter of the current hand."""
        return WINDS[self.round_index % 4]

    def round_dict(self) -> dict[str, Any]:
        """``{"wind": "E", "number": 1}``."""
        return {"wind": self.wind, "number": self.dealer + 1}


@dataclass(frozen=True, slots=True)
class UndoPoint:
    """The state just before the last hand result, kept for one ``undo``.

    ``record`` is the hand the result settled; ``time_up`` that the clock ran out after it
    (which an undo does not take back); ``blocked`` names the event of the next hand that
    came after it, which ends the chance to undo.
    """

    before: GameState
    record: HandRecord
    time_up: bool = False
    blocked: str | None = None


def initial_state(rules: HouseRules) -> GameState:
    """The state before the first hand (East 1, seat 0 deals)."""
    players = rules.players
    return GameState(
        rules=rules,
        scores=(rules.game.start_points,) * players,
        final_penalties=(0,) * players,
        hand_payments=(0,) * players,
        chips=(0,) * players,
    )


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One finished hand, as listed in the replay output.

    ``chips`` is each seat's chip change in the hand (zeros where nobody earned any); it
    is not in :meth:`as_dict`, whose form the consoles and MQTT pin: the replay adds it.
    """

    wind: str
    number: int
    honba: int
    result: HandResult
    deltas: tuple[int, ...]
    detail: dict[str, Any] = field(default_factory=dict, compare=False)
    chips: tuple[int, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "round": {"wind": self.wind, "number": self.number},
            "honba": self.honba,
            "result": self.result,
            "deltas": list(self.deltas),
            **self.detail,
        }


@dataclass(frozen=True, slots=True)
class Payment:
    """Points moved during a hand (a riichi deposit, a false-call penalty)."""

    reason: str
    deltas: tuple[int, ...]
    to_table: int = 0


@dataclass(frozen=True, slots=True)
class HandSettled:
    """A hand ended; ``record`` says how and who paid what."""

    record: HandRecord


@dataclass(frozen=True, slots=True)
class DeadHand:
    """A seat may no longer win, call, riichi or be tenpai this hand."""

    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class StopOffered:
    """The all-last dealer may end the game now with a ``stop`` event."""

    dealer: int


@dataclass(frozen=True, slots=True)
class HandUndone:
    """The last hand result was taken back (``reopened``: it had ended the game)."""

    record: HandRecord
    reopened: bool


@dataclass(frozen=True, slots=True)
class GameOver:
    """The game ended."""

    final: Final


@dataclass(frozen=True, slots=True)
class Noted:
    """An accepted event that changes no points (a wall take, a free false call ...)."""

    what: str


Effect = Refusal | Payment | HandSettled | HandUndone | DeadHand | StopOffered | GameOver | Noted
