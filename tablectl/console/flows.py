"""The console flows of one table, each an object holding the core: what a prompt's
declared handler (:data:`tablectl.console.prompts.PROMPTS`) is called on, and the parts
the stored console flow is made of, in their stored order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from tablectl.console.claim import ClaimFlow
from tablectl.console.confirm import ConfirmFlow
from tablectl.console.core import TableCore
from tablectl.console.endings import DrawFlow
from tablectl.console.entry import EntryFlow
from tablectl.console.faults import FaultFlow
from tablectl.console.hand import HandFlow
from tablectl.console.staffmenu import StaffFlow
from tablectl.console.tiles import TileFlow
from tablectl.console.trays import Trays
from tablectl.console.wins import WinScoring


class Stored(Protocol):
    """A part of the stored console flow: its keys of the snapshot, a cheap comparable
    key of them, and a restore that checks everything before it changes anything."""

    def snapshot(self) -> dict[str, Any]:
        """This part's keys of the stored flow (plain JSON-able values)."""

    def key(self) -> Hashable:
        """The durable part of :meth:`snapshot` as a cheap comparable value."""

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read this part of ``snapshot`` (ValueError, KeyError, TypeError if it does not
        fit); the returned call takes it up."""


@dataclass(frozen=True)
class Flows:
    """Every flow of one table (built by :class:`tablectl.table.Table`)."""

    core: TableCore
    hand: HandFlow
    tiles: TileFlow
    wins: WinScoring
    claim: ClaimFlow
    entry: EntryFlow
    draw: DrawFlow
    confirm: ConfirmFlow
    staff: StaffFlow
    trays: Trays
    faults: FaultFlow

    def stored(self) -> tuple[Stored, ...]:
        """The parts of the stored flow, in the order their keys are stored."""
        return (self.core, self.hand, self.trays, self.staff, self.tiles)
