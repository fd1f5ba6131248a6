"""The table controller: the hand cycle, seat console flows and displays.

:class:`Table` turns what the table reports (wall status, dice, takes, key presses,
trays, faults) into rules events, feeds them to the pure rules core, and turns the
result into display, lamp and motor commands.  It owns no I/O itself: commands go out
through ``post``, accepted events through the ``recorder`` (the journal) *before* any
command that depends on them, and live state through the optional ``publisher``.
The key flows and prompts are specified in docs/console.md.

``Table`` is the glue: it builds the :class:`~tablectl.console.core.TableCore` every
flow shares and one object per flow (:mod:`tablectl.console`), routes each message from
the link to the flow it is for, stores the console flow as one loop over the flows'
parts, and keeps the public interface the daemon, ``tablectl ctl`` and the tests use
(the attributes below forward to the object that owns them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from firmware_bridge import messages as m
from tablectl.alerts import AlertBoard
from tablectl.console.claim import ClaimFlow
from tablectl.console.confirm import ConfirmFlow
from tablectl.console.core import CoreConfig, FlowError, Publisher, Recorder, TableCore, log
from tablectl.console.display import Displays
from tablectl.console.endings import ABORT_LABELS, ABORT_MENU, DrawFlow
from tablectl.console.entry import EntryFlow
from tablectl.console.faults import FaultFlow
from tablectl.console.flows import Flows
from tablectl.console.forward import Forward
from tablectl.console.hand import HandFlow
from tablectl.console.keys import KeyRouter
from tablectl.console.layouts import WallLayouts
from tablectl.console.model import Pending, SeatConsole
from tablectl.console.staff import StaffGate
from tablectl.console.staffmenu import StaffFlow
from tablectl.console.tiles import HeldMeld, TileFlow
from tablectl.console.trays import Trays
from tablectl.console.wins import WinScoring
from tablectl.rules import events as ev
from tablectl.rules.options import HouseRules
from tablectl.rules.state import Final, GameState, HandRecord
from tablectl.seating import Seating

__all__ = [
    "ABORT_LABELS",
    "ABORT_MENU",
    "CLAIM_WINDOW_S",
    "FlowError",
    "Publisher",
    "Recorder",
    "Table",
]

#: Seconds the other seats have to join a ron; the window closes early once all answered.
CLAIM_WINDOW_S = 3.0
#: The game clock is published with the state this often (s) while it runs.
CLOCK_PUBLISH_S = 15


class Table:
    """The controller of one table: construct, ``await link_up()``, feed it messages."""

    rules = Forward[HouseRules]("core")
    rules_ref = Forward[str]("core")
    players = Forward[int]("core")
    state = Forward[GameState]("core")
    post_command = Forward[Callable[[m.Message], None]]("core")
    recorder = Forward[Recorder | None]("core")
    publisher = Forward[Publisher | None]("core")
    now = Forward[Callable[[], float]]("core")
    table_id = Forward[str]("core")
    consoles = Forward[list[SeatConsole]]("core")
    pending = Forward[Pending | None]("core")
    alerts = Forward[AlertBoard]("core")
    clock_started = Forward[float | None]("core")
    games_finished = Forward[int]("core")
    new_games = Forward[bool]("core")
    on_hand_settled = Forward[Callable[[HandRecord], None] | None]("core")
    capabilities = Forward[m.Capability]("tiles")
    held_meld = Forward[HeldMeld | None]("tiles")
    zone_hands = Forward[list[tuple[int, ...] | None]]("tiles")
    zone_melds = Forward[list[tuple[int, ...]]]("tiles")
    zone_ponds = Forward[list[tuple[int, ...]]]("tiles")
    wall_layouts = Forward[dict[int, tuple[int, ...]]]("layouts", "walls")
    layouts_void = Forward[bool]("layouts", "void")
    tray_mismatch = Forward[dict[int, int]]("trays", "mismatch")
    tray_totals = Forward[tuple[int, ...] | None]("trays", "totals")
    faults = Forward[set[m.FaultCode]]("fault_flow", "faults")
    rules_menu = Forward[tuple[str, ...]]("staff_flow")

    def __init__(
        self,
        rules: HouseRules,
        *,
        post: Callable[[m.Message], None],
        recorder: Recorder | None = None,
        publisher: Publisher | None = None,
        now: Callable[[], float],
        table_id: str = "table",
        state: GameState | None = None,
        claim_window_s: float | None = CLAIM_WINDOW_S,
        new_games: bool = True,
        on_game_over: Callable[[Final], None] | None = None,
        rules_ref: str | None = None,
        staff: StaffGate | None = None,
        rules_menu: Sequence[str] = (),
        load_rules: Callable[[str], HouseRules] | None = None,
        hold_on_tray_mismatch: bool = True,
        seat_names: Sequence[str] | None = None,
        seated: Sequence[str] | None = None,
        wall_time: Callable[[], float] = time.time,
    ) -> None:
        core = TableCore(
            CoreConfig(
                rules,
                post=post,
                now=now,
                wall_time=wall_time,
                recorder=recorder,
                publisher=publisher,
                table_id=table_id,
                state=state,
                claim_window_s=claim_window_s,
                new_games=new_games,
                on_game_over=on_game_over,
                rules_ref=rules_ref,
                seat_names=seated if seated is not None else seat_names,
            )
        )
        self.core = core
        self.layouts = WallLayouts(core)
        self.tiles = TileFlow(core, self.layouts)
        wins = WinScoring(core)
        self.trays = Trays(core, hold_on_mismatch=hold_on_tray_mismatch)
        entry = EntryFlow(core, self.tiles, wins)
        draw = DrawFlow(core, self.tiles)
        self.claim = ClaimFlow(core, self.tiles, wins, entry, draw)
        started = state is not None and not core.state.finished
        self.hand = HandFlow(
            core, self.layouts, self.tiles, self.claim, self.trays, game_started=started
        )
        confirm = ConfirmFlow(core, self.hand, self.trays, entry)
        core.on_settled = confirm.hand_settled
        self.seating = Seating(core, self.hand, seat_names)
        self.staff_flow = StaffFlow(
            core,
            confirm=confirm,
            hand=self.hand,
            trays=self.trays,
            gate=staff if staff is not None else StaffGate(None, now),
            rules_menu=rules_menu,
            load_rules=load_rules,
            seating=self.seating,
        )
        self.fault_flow = FaultFlow(core, self.hand, self.tiles)
        self.flows = Flows(
            core,
            self.hand,
            self.tiles,
            wins,
            self.claim,
            entry,
            draw,
            confirm,
            self.staff_flow,
            self.trays,
            self.fault_flow,
        )
        self.keys = KeyRouter(self.flows)
        #: The stored flow's parts, in order, and their snapshot and key methods (bound
        #: once: the daemon compares the key before and after every group of events).
        self._stored = self.flows.stored()
        self._snapshots = tuple(part.snapshot for part in self._stored)
        self._keys = tuple(part.key for part in self._stored)
        self.displays = Displays(
            core, wins=wins, layouts=self.layouts, faults=self.fault_flow, trays=self.trays
        )
        #: The game clock's last published step (clock // CLOCK_PUBLISH_S).
        self._clock_published: int | None = None

    @property
    def phase(self) -> str:
        """The current phase name (``table_playing_turn`` ...)."""
        return self.core.phase

    # ------------------------------------------------------------------ the stored flow

    def flow_snapshot(self) -> dict[str, Any]:
        """What the consoles are in the middle of (prompts, typed digits, a claim window,
        a win entry, confirmations) and the phase, as plain JSON-able data: each flow's
        part in turn (:meth:`tablectl.console.flows.Flows.stored`).

        The daemon stores it with the link position after every table event, so a
        restarted daemon that resumes the rules state from the journal resumes the
        console flow too, instead of dropping a half-typed han entry."""
        data: dict[str, Any] = {}
        for snapshot in self._snapshots:
            data.update(snapshot())
        return data

    def flow_key(self) -> Hashable:
        """The durable part of :meth:`flow_snapshot` as a cheap comparable value: what the
        consoles are doing, without display pages, messages or the running clock. The
        daemon compares it before and after a group of table events to know whether the
        stored console flow must be committed with the group."""
        return tuple([key() for key in self._keys])

    def restore_flow(self, snapshot: dict[str, Any]) -> None:
        """Take up a :meth:`flow_snapshot` of the same rules state (before ``link_up``).
        Raises ValueError (changing nothing) if it does not fit this table."""
        try:
            commits = [part.restore(snapshot) for part in self._stored]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"console state does not fit: {exc!r}") from exc
        for commit in commits:
            commit()
        # The alerts a restart must not silence, raised in the order staff saw them.
        self.staff_flow.restore_alerts()
        self.core.restore_alerts()
        self.trays.restore_alerts()

    # ------------------------------------------------------------------ the link

    async def link_up(self, *, rebooted: bool, capabilities: m.Capability | None = None) -> None:
        """The link (re)connected and the hello was accepted: resume where the hand stood.

        ``capabilities`` are the table's (its HelloReply); a table that reads every tile
        gets the scorer loaded now, not at its first win."""
        core = self.core
        if capabilities is not None:
            self.tiles.capabilities = capabilities
            self.tiles.load_scorer()
        # Straight through the handshake to where the hand stood: the prompts are swept
        # only there, not in the ``table_idle`` the hello passes through.
        if core.phase != "offline":
            await core.state_model.to_offline()
        await core.state_model.trigger("link_up")
        await core.state_model.trigger("hello_ok")
        core.sessions += 1
        self.displays.sent.clear()  # re-send every display: the table may have rebooted
        # The table may hold faults latched that this daemon never saw (it was restarted
        # while FAULT showed); the TableStatus answer says which (docs/protocol.md).
        core.post_command(m.StatusRequest())
        target = core.resume_phase
        if target in ("table_shuffling", "table_walls_up", "table_idle") or (
            rebooted and target == "table_dice"
        ):
            target = "table_idle"
        await core.to(target)
        if core.phase == "table_idle":
            await self.hand.start_hand()
        core.alerts.resolve("link_down")
        core.publish_state()
        self.refresh()

    async def link_lost(self) -> None:
        """The link dropped: remember the phase so that a reconnect resumes there."""
        core = self.core
        if core.phase.startswith("table_"):
            core.resume_phase = core.phase
        if core.phase != "offline":
            await core.to("offline")
        core.alerts.raise_alert("link_down", None, "no link to the table", core.wall_time())
        core.publish_state()

    async def handle(self, msg: m.Message) -> None:
        """One event from the table, handed to the flow it is for."""
        match msg:
            case m.KeyPress(seat=seat, key=key):
                if 0 <= seat < self.core.players:
                    await self.keys.press(seat, key)
            case m.WallTake(seat=seat, position=pos, tile=tile):
                if tile is not None:
                    self.layouts.check(pos, tile)
                await self.hand.take(seat, pos)
            case m.WallLayout(wall=wall, tiles=tiles):
                self.layouts.keep(wall, tiles)
            case m.DiceResult(die1=a, die2=b):
                refusal = await self.hand.dice(a, b)
                if refusal is not None:
                    await self.fault_flow.fault(m.FaultCode.DICE, refusal.message)
            case m.WallStatus(wall=wall, state=wstate):
                if wstate == m.WallState.TILE_COUNT_ERROR:
                    await self.fault_flow.fault(m.FaultCode.TILE_COUNT, f"wall {wall} tile count")
                elif wstate == m.WallState.DONE:
                    await self.hand.wall_done(wall)
            case m.TrayTotals(totals=totals):
                self.trays.report(totals)
            case m.Fault(code=code, text=text, detail=detail):
                if code == m.FaultCode.TILE_READER:
                    self.tiles.reader_fault(detail)
                await self.fault_flow.fault(code, text)
            case m.TableStatus(faults=faults):
                await self.fault_flow.latched(faults)
            case m.SeatTiles(seat=seat, zone=zone, tiles=tiles):
                # The seat readers (protocol 1.3): a discard or meld in a tile-aware hand.
                if self.tiles.seat_tiles(seat, zone, tiles):
                    await self.claim.last_discard_window(seat)
            case _:
                log.debug("[%s] ignored %s", self.core.table_id, type(msg).__name__)
        self.refresh()

    async def tick(self) -> None:
        """Called about once a second: the claim window and the game clock."""
        core = self.core
        if not core.phase.startswith("table_"):
            return  # offline or in a fault: both wait (a restored window restarts on link up)
        if core.claim_deadline is not None and core.now() >= core.claim_deadline:
            await self.claim.close_claim()
        if core.clock_ran_out():
            core.apply(ev.TimeUp())
        clock = core.clock_seconds()
        if clock is not None and clock // CLOCK_PUBLISH_S != self._clock_published:
            # The parlor's view counts down between states; a state every
            # CLOCK_PUBLISH_S keeps it right without a message a second per table.
            self._clock_published = clock // CLOCK_PUBLISH_S
            core.publish_state()
        self.refresh()

    # ------------------------------------------------------------------ what it shows

    def refresh(self, force: bool = False) -> None:
        """Send the display and lamp commands that changed since they were last sent."""
        self.displays.refresh(force)

    def seat_lines(self, seat: int) -> tuple[str, str]:
        """The two display lines of ``seat``."""
        return self.displays.seat_lines(seat)

    def snapshot(self) -> dict[str, Any]:
        """The table's live state as a plain dict (MQTT state payload, tests)."""
        return self.core.live_state()

    def game_result(self, final: Final) -> dict[str, Any]:
        """A finished game as published (see :meth:`TableCore.game_result`)."""
        return self.core.game_result(final)

    def clock_text(self) -> str | None:
        """The game clock as ``MM:SS`` (None without one)."""
        return self.core.clock_text()

    def dora_tiles(self) -> tuple[int, ...]:
        """The revealed dora indicators' tile ids (see :class:`WallLayouts`)."""
        return self.layouts.dora_tiles()

    def reads_tiles(self) -> bool:
        """The table reads every tile (see :meth:`TileFlow.reads_tiles`)."""
        return self.tiles.reads_tiles()

    def status(self) -> dict[str, Any]:
        """What ``tablectl ctl status`` shows: the live state and what staff may need."""
        core = self.core
        return {
            **self.snapshot(),
            "phase": core.phase,  # staff see the machine's own name
            "rules_ref": core.rules_ref,
            "faults": sorted(code.name for code in self.fault_flow.faults),
            "tray_mismatch": {str(k): v for k, v in sorted(self.trays.mismatch.items())},
            "staff_locked_s": round(self.staff_flow.gate.locked_for(), 1),
            "last_game": [s for s, c in enumerate(core.consoles) if c.last_game],
            "prompts": [c.prompt for c in core.consoles],
        }

    # ------------------------------------------------------------------ staff

    async def new_game(
        self, rules_ref: str | None = None, *, by: str = "ctl", seat: int | None = None
    ) -> str | None:
        """Staff end the game in progress and start a new one (see
        :meth:`StaffFlow.new_game`). Returns why not, changing nothing, or None."""
        return await self.staff_flow.new_game(rules_ref, by=by, seat=seat)

    async def correct_last_hand(self, *, by: str = "ctl") -> str | None:
        """Staff reopen the last settled hand for entry again. Returns why not, or None."""
        return await self.staff_flow.correct_last_hand(by=by)

    def acknowledge_alert(self, alert_id: str, by: str, *, via: str) -> str | None:
        """Staff acknowledged an alert (see :meth:`TableCore.acknowledge_alert`)."""
        return self.core.acknowledge_alert(alert_id, by, via=via)

    def refuse_staff_request(self, action: str, by: str, why: str) -> None:
        """Tell the parlor why a staff request from it was not carried out."""
        self.core.refuse_staff_request(action, by, why)

    def note_parlor_refusal(
        self, action: str | None, by: str, why: str | None, counts: dict[str, int] | None
    ) -> None:
        """A staff request from the broker was refused unauthenticated (see
        :meth:`TableCore.note_parlor_refusal`)."""
        self.core.note_parlor_refusal(action, by, why, counts)
