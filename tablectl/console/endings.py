"""How a hand ends without a win: the exhaustive draw's TENPAI? (or the tiles' say),
and the abortive draw's ABORT?.
"""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.console.core import TableCore, log
from tablectl.console.model import Pending, PendingKind
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import TileFlow
from tablectl.phases import HAND_PHASES
from tablectl.rules import events as ev
from tablectl.rules import tiletrack, walltrack

ABORT_MENU: dict[int, ev.AbortReason] = {
    1: "nine_terminals",
    2: "four_winds",
    3: "four_riichi",
    4: "four_kans",
}
ABORT_LABELS = {1: "9 TERMINALS", 2: "4 WINDS", 3: "4 RIICHI", 4: "4 KANS"}


class DrawFlow:
    """How a hand ends without a win: the exhaustive draw's TENPAI? (or the tiles' say),
    and the abortive draw's ABORT?.

    Runs the exhaustive draw's declarations (the core's ``pending`` of kind ``draw``);
    the abort's reason is the seat's console ``choice``. Declares ``TENPAI?`` and
    ``ABORT?``; stores nothing of its own."""

    def __init__(self, core: TableCore, tiles: TileFlow) -> None:
        self.core = core
        self.tiles = tiles

    async def draw_key(self, seat: int, key: m.Key) -> None:
        """TENPAI or NOTEN with no prompt: the exhaustive draw's declarations begin."""
        if self.core.state.tiles is not None:
            # The tiles decide tenpai and noten once the last discard has passed.
            self.core.refuse(seat, "tiles decide: no key")
            return
        wall = self.core.state.wall
        implied = (
            ()
            if wall is None
            else self.tiles.implied_discard(actor=(wall.turn + 1) % self.core.players)
        )
        refusal = self.core.check_after(implied, walltrack.check_draw)
        if refusal is not None:
            self.core.refuse(seat, refusal)
            return
        self.core.apply(*implied)
        self.core.pending = Pending(kind=PendingKind.DRAW, seats=list(range(self.core.players)))
        for other in range(self.core.players):
            self.core.open(other, Prompt.TENPAI, typed=None, message=None, entering="enter_result")
        await self.core.trigger("enter_result")
        await self.tenpai_prompt(seat, key)

    async def tenpai_prompt(self, seat: int, key: m.Key) -> None:
        """``TENPAI?``: this seat's declaration (MENU: nagashi, where the rules have it)."""
        pending = self.core.pending
        console = self.core.consoles[seat]
        if pending is None or pending.kind != PendingKind.DRAW:
            self.core.close(seat)
            return
        if key == m.Key.MENU and self.core.rules.flow.nagashi != "none":
            pending.nagashi ^= {seat}
            console.typed = "NAGASHI" if seat in pending.nagashi else ""
            return
        if key not in (m.Key.TENPAI, m.Key.NOTEN):
            return
        if key == m.Key.TENPAI:
            pending.tenpai.add(seat)
        pending.answered.add(seat)
        self.core.close(seat)
        console.typed = ""
        console.message = "TENPAI" if key == m.Key.TENPAI else "NOTEN"
        if len(pending.answered) < self.core.players:
            return
        draw = ev.Draw(tenpai=tuple(sorted(pending.tenpai)), nagashi=tuple(sorted(pending.nagashi)))
        refusal = self.core.apply(draw)
        if refusal is None:
            await self.core.trigger("hand_over")
            return
        self.core.pending = Pending(kind=PendingKind.DRAW, seats=list(range(self.core.players)))
        for other in range(self.core.players):
            self.core.open(other, Prompt.TENPAI, typed=None, message=None)
            self.core.refuse(other, refusal)

    async def abort_prompt(self, seat: int, key: m.Key) -> None:
        """``ABORT?``: a digit picks the reason, OK declares it."""
        console = self.core.consoles[seat]
        if key == m.Key.CANCEL:
            self.core.close(seat)
            console.typed, console.choice = "", None
        elif int(key) in ABORT_MENU:
            console.choice = int(key)
            console.typed = ABORT_LABELS[int(key)]
        elif key == m.Key.OK and console.choice is not None:
            reason = ABORT_MENU[console.choice]
            self.core.close(seat)
            console.typed, console.choice = "", None
            abort = ev.Abort(reason=reason)
            refusal = self.core.apply(abort)
            wall = self.core.state.wall
            if refusal is not None and wall is not None:
                # Four winds and four kans come after a discard, which is not sensed.
                implied = self.tiles.implied_discard(actor=(wall.turn + 1) % self.core.players)
                if implied and self.core.apply(*implied, abort) is None:
                    refusal = None
            if refusal is not None:
                self.core.refuse(seat, refusal)
            elif self.core.phase in HAND_PHASES:
                await self.core.trigger("hand_over")

    async def tile_draw(self) -> None:
        """The exhaustive draw as the tiles say it: each seat's display shows TENPAI,
        NOTEN or NAGASHI over the settlement, and FURITEN for a tenpai riichi the core
        made a chombo (sanma-free's furiten riichi: a noten one shows NOTEN)."""
        if not self.tiles.check_hands_at_draw():
            return
        draw = tiletrack.expected_draw(self.core.state)
        assert draw is not None
        said = {
            seat: "NAGASHI"
            if seat in draw.nagashi
            else "TENPAI"
            if seat in draw.tenpai
            else "NOTEN"
            for seat in range(self.core.players)
        }
        refusal = self.core.apply(draw)
        if refusal is not None:
            log.error("[%s] the draw the tiles say was refused: %s", self.core.table_id, refusal)
            return
        point = self.core.state.undo
        if point is not None and point.record.result == "chombo":
            for seat in point.record.detail.get("seats", []):
                if said[seat] == "TENPAI":
                    said[seat] = "FURITEN"
        await self.core.trigger("hand_over")
        for seat, console in enumerate(self.core.consoles):
            if console.prompt in (Prompt.CONFIRM, Prompt.GAME_OVER):
                console.typed = said[seat]
