"""The hand cycle up to play: a game's start, the shuffle, the walls raised and read
(``WallLayout``), the dice and the dealer's ``ROLL?``, and the takes from the wall.

With a wall reader (``Capability.WALL_READER``) the table reports every raised wall's
tiles; :class:`~tablectl.console.layouts.WallLayouts` keeps them for the hand and gives
the dora indicators for the centre display, and forgets them for the rest of the hand as
soon as a take's tile disagrees (docs/protocol.md, "The wall reader").
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from firmware_bridge import messages as m
from firmware_bridge.ratelog import RateLimitedLog
from tablectl.console.claim import ClaimFlow
from tablectl.console.core import TableCore, log
from tablectl.console.layouts import WallLayouts
from tablectl.console.prompts import Prompt
from tablectl.console.tiles import TileFlow
from tablectl.console.trays import Trays
from tablectl.phases import PLAYING
from tablectl.rules import events as ev
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import initial_state

#: The phases a take is for the hand in (the deal and play; phases.HAND_PHASES is wider:
#: from the walls up to the result entry, where a hand may still be aborted).
TAKE_PHASES = frozenset({"table_dealing", *PLAYING})


class HandFlow:
    """A game's start and each hand's set-up: the shuffle, the walls, the dice (the
    dealer's ``ROLL?`` is :mod:`.confirm`'s), the takes.

    Owns which walls are up, the wall layouts and whether the game has begun (the
    recorder told); stores them with the rules' name."""

    def __init__(
        self,
        core: TableCore,
        layouts: WallLayouts,
        tiles: TileFlow,
        claim: ClaimFlow,
        trays: Trays,
        *,
        game_started: bool,
    ) -> None:
        self.core = core
        self.layouts = layouts
        self.tiles = tiles
        self.claim = claim
        self.trays = trays
        self.walls_done: set[int] = set()
        #: Takes the table reported while FAULT stood over a hand (seat, position).
        self.takes_in_fault: list[tuple[int, int]] = []
        #: The recorder was told of the game in progress (its first shuffle came).
        self.game_started = game_started
        self._ratelog = RateLimitedLog(log, clock=core.now, prefix=f"[{core.table_id}] ")

    async def takes_after_fault(self) -> None:
        """The fault is cleared and the hand resumed: the takes it held, in order."""
        held, self.takes_in_fault = self.takes_in_fault, []
        for seat, pos in held:
            await self.take(seat, pos)

    async def start_hand(self) -> None:
        """Shuffle for the next hand (the game's first: the recorder is told first)."""
        core = self.core
        self.takes_in_fault.clear()  # lifted in a hand that is over
        if core.state.finished:
            return
        if not self.game_started:
            self.game_started = True
            core.clock_started = core.now()
            if core.recorder is not None:
                core.recorder.game_started(core.rules, core.rules_ref)
        elif core.clock_started is None:
            core.clock_started = core.now()
        # A mismatch belongs to the hand it was found in: the trays are compared afresh
        # with the scores as they now stand. A new game's scores are back at the start
        # while the trays report nothing until sticks move (a game may end before they
        # do), so without this a stale mismatch would hold the dice for ever.
        self.trays.compare()
        self.walls_done.clear()
        self.layouts.clear()
        self.tiles.reset_zones()
        core.pending = None
        if core.conditions() is not None:
            for console in core.consoles:
                console.page = 3  # what each player needs, shown once as the hand starts
        await core.trigger("shuffle")  # sweeps the last hand's prompts, keeps staff ones
        core.post_command(m.WallCommand(action=m.WallAction.SHUFFLE))

    def fresh_game(self, rules: HouseRules) -> None:
        """A new game under ``rules``: its first state, no clock, no LAST GAME calls."""
        core = self.core
        core.state = initial_state(rules)
        self.game_started = False
        core.clock_started = None
        for console in core.consoles:
            console.last_game = False  # a LAST GAME call is for the game it was made in
        core.alerts.resolve("last_game", any_seat=True)
        core.last_hand = None

    async def wall_done(self, wall: int) -> None:
        """A wall is raised; with the last one the dealer rolls."""
        core = self.core
        if core.phase == "table_shuffling":
            self.walls_done.add(wall)
            if len(self.walls_done) >= core.players:
                await core.trigger("walls_ready")
                core.open(core.state.dealer, Prompt.ROLL, typed=None, message=None)

    async def dice(self, a: int, b: int) -> Refusal | None:
        """The dice rolled: the deal begins (a tile-aware hand with the whole wall's
        layout), at once or, under a fault raised while they rolled, once it is cleared.
        A refusal of the dice is the caller's fault to raise."""
        core = self.core
        in_fault = core.phase == "fault" and core.resume_phase == "table_dice"
        if core.phase != "table_dice" and not in_fault:
            self._ratelog.warning("dice outside a roll", "[%s] dice %d+%d outside a roll ignored",
                                  core.table_id, a, b)  # fmt: skip
            return None
        refusal = core.apply(ev.Dice(dice=(a, b)))
        if refusal is not None:
            return refusal
        layout = self.layouts.whole() if self.tiles.reads_tiles() else None
        if layout is not None:
            refused = core.apply(ev.Layout(tiles=layout))
            if refused is not None:
                log.warning("[%s] the wall layout was refused (%s): this hand is keyed in",
                            core.table_id, refused.message)  # fmt: skip
        if in_fault:
            # Rolled as the fault came (a reader's fault is not the dice's): the dice lie
            # where they fell and the deal goes on at the table, so the hand resumes dealing
            # once staff clear the fault, and the takes meanwhile are kept for it. Ignored,
            # they left the hand waiting for a roll after its deal was lifted.
            core.resume_phase = "table_dealing"
            return None
        await core.trigger("dice_rolled")
        return None

    async def take(self, seat: int, pos: int) -> None:
        """A tile taken from the wall (the deal, a draw, a replacement)."""
        core = self.core
        if core.phase == "fault" and core.resume_phase in TAKE_PHASES:
            # Lifted as the fault came (a reader's fault is not the wall's): the tiles are
            # gone from the wall, so the take is kept for when staff clear the fault. A
            # refusal would leave the hand waiting for a take nobody can make again.
            self.takes_in_fault.append((seat, pos))
            return
        if core.phase not in TAKE_PHASES:
            core.refuse(seat, "not now: no hand in play")
            return
        if core.phase == "table_playing_claim":
            await self.claim.close_claim()
            if core.phase != "table_playing_turn":
                return
        wall = core.state.wall
        if wall is not None and wall.taken and (wall.taken[-1], wall.taken_by[-1]) == (pos, seat):
            # A position is taken once, so this is the same take reported twice (a sensor
            # bounce, or firmware that resends without the link's resume): not a new take.
            # Resends across daemon restarts are stopped by the link position itself.
            log.info("[%s] seat %d's take of %d again: a resend, ignored", core.table_id, seat, pos)
            return
        self.tiles.apply_take(seat, pos)
        wall = core.state.wall
        if core.phase == "table_dealing" and wall is not None and wall.phase != "deal":
            await core.trigger("dealt")

    # ------------------------------------------------------------------ stored flow

    def snapshot(self) -> dict[str, Any]:
        """The walls up, their layouts, whether the game began, and its rules' name."""
        layouts = self.layouts
        return {
            "walls_done": sorted(self.walls_done),
            "wall_layouts": {str(w): list(t) for w, t in sorted(layouts.walls.items())},
            "layouts_void": layouts.void,
            "game_started": self.game_started,
            "rules_ref": self.core.rules_ref,
        }

    def key(self) -> Hashable:
        """The durable part of :meth:`snapshot`, cheap to compare."""
        return (
            frozenset(self.walls_done),
            tuple(sorted(self.layouts.walls.items())),
            self.layouts.void,
            self.game_started,
            self.core.rules_ref,
        )

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read :meth:`snapshot`'s part; the returned call takes it up. Raises ValueError
        (KeyError, TypeError) on a bad one."""
        walls_done = {int(w) for w in snapshot["walls_done"]}
        # Stored before the wall reader: no layouts (no dora shown this hand).
        layouts = {
            int(w): tuple(int(t) for t in tiles)
            for w, tiles in snapshot.get("wall_layouts", {}).items()
        }
        void = bool(snapshot.get("layouts_void", False))
        for w, tiles in layouts.items():
            if not 0 <= w < self.core.players or len(tiles) != self.layouts.per_wall():
                raise ValueError(f"a layout of wall {w} with {len(tiles)} tiles")
        game_started = bool(snapshot["game_started"])

        def commit() -> None:
            self.walls_done = walls_done
            self.layouts.walls = layouts
            self.layouts.void = void
            self.game_started = game_started

        return commit
