"""What the seat consoles hold between key presses: plain data, stored across restarts."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tablectl.console.prompts import Prompt

#: Characters on one line of a seat display.
LINE = 20


@dataclass
class SeatConsole:
    """What one seat's console is doing: a prompt being answered, its page, its message.

    ``choice`` is the menu entry picked at a prompt that needs a second step (the abort
    reason, the staff action); ``staff`` the staff action whose PIN was accepted and that
    this seat is now carrying out. ``under`` is the prompt (with its ``typed`` and
    ``choice``) the staff menu was opened over: a player answering a prompt can still
    call staff, and gets the prompt back when the staff menu closes.
    """

    prompt: Prompt | Literal[""] = ""
    typed: str = ""
    message: str = ""
    page: int = 0
    choice: int | None = None
    last_game: bool = False
    staff: int | None = None
    under: tuple[Prompt, str, int | None] | None = None


@dataclass
class RonValue:
    """What one discarder pays kantan's winner who rons several last discards: the value
    of the hand on that discarder's tile, scored from the tiles."""

    discarder: int
    han: int = 0
    fu: int | None = None
    yakuman: int = 0
    points: int = 0
    yaku: list[str] = field(default_factory=list)


@dataclass
class WinEntry:
    """One winner's han/fu entry. ``scored``: the tiles gave the value (a tile-aware
    hand), with the ``points`` the core pays for it and its ``yaku`` for the display.
    ``each``: kantan's ron off several discarders scored from the tiles, one value per
    discarder (``points`` is then their sum). ``chips``: the chips (祝儀) the hand earns
    besides the yakuman chips, as the winner entered them at ``CHIPS?`` (None: not asked,
    the preset has none). ``counted_chips``: those the tiles show in a scored win, shown
    at ``OK?`` only (the rules core counts them itself from the same tiles)."""

    seat: int
    han: int = 0
    fu: int | None = None
    yakuman: int = 0
    pao: int | None = None
    chips: int | None = None
    counted_chips: int | None = None
    done: bool = False
    scored: bool = False
    points: int = 0
    yaku: list[str] = field(default_factory=list)
    each: list[RonValue] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WinEntry:
        """An entry from its stored form (``dataclasses.asdict``)."""
        each = [RonValue(**value) for value in data.get("each", [])]
        return cls(**{**data, "each": each})


class PendingKind(StrEnum):
    """What a :class:`Pending` interaction is (its stored form is the value)."""

    CLAIM = "claim"  # the claim window after a discard (RON?)
    FROM = "from"  # a ron or call naming its discarders (FROM?)
    TSUMO = "tsumo"  # a win entry
    RON = "ron"
    DRAW = "draw"  # the exhaustive draw's TENPAI?
    CONFIRM = "confirm"  # CONFIRM / GAME OVER on every seat


@dataclass
class Pending:
    """A multi-seat interaction under way: a claim window, a win entry, a draw, a confirm."""

    kind: PendingKind
    discarders: tuple[int, ...] = ()
    seats: list[int] = field(default_factory=list)
    answered: set[int] = field(default_factory=set)
    entries: dict[int, WinEntry] = field(default_factory=dict)
    tenpai: set[int] = field(default_factory=set)
    nagashi: set[int] = field(default_factory=set)
    call_kind: str = ""


def fit(text: str) -> str:
    """``text`` cut to one display line."""
    return text[:LINE]


def signed(points: int) -> str:
    """``+3900``, ``-1000`` or ``0``."""
    return f"{points:+d}" if points else "0"
