"""The table controller: the hand cycle, seat console flows and displays.

:class:`Table` turns what the table reports (wall status, dice, takes, key presses,
trays, faults) into rules events, feeds them to the pure rules core, and turns the
result into display, lamp and motor commands.  It owns no I/O itself: commands go out
through ``post``, accepted events through the ``recorder`` (the journal) *before* any
command that depends on them, and live state through the optional ``publisher``.
The key flows and prompts are specified in docs/console.md.

With a wall reader (``Capability.WALL_READER``) the table reports every raised wall's
tiles (``WallLayout``); the controller keeps them for the hand and shows the dora
indicators on the centre display, and forgets them for the rest of the hand as soon as a
take's tile disagrees (docs/protocol.md, "The wall reader").
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from firmware_bridge import messages as m
from firmware_bridge.ratelog import RateLimitedLog
from tablectl.alerts import AlertBoard
from tablectl.console.claim import ClaimFlow
from tablectl.console.confirm import ConfirmFlow
from tablectl.console.endings import ABORT_LABELS, ABORT_MENU, DrawFlow
from tablectl.console.entry import EntryFlow
from tablectl.console.host import (
    ConsoleHost,
    FlowError,
    Publisher,
    Recorder,
    log,
    tray_alert_text,
)
from tablectl.console.model import Pending, SeatConsole, WinEntry, fit, signed
from tablectl.console.prompts import PROMPTS, STAFF_PROMPTS, idle_spec
from tablectl.console.staff import StaffGate
from tablectl.console.staffmenu import StaffFlow
from tablectl.console.tiles import TileFlow
from tablectl.phases import PhaseModel, build_machine, public_phase
from tablectl.rules import events as ev
from tablectl.rules import walltrack
from tablectl.rules.conditions import Conditions, conditions, tsumo_split
from tablectl.rules.ending import ranking
from tablectl.rules.options import HouseRules
from tablectl.rules.state import Final, GameState, initial_state
from tablectl.rules.wall import positions_per_wall

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
#: Phases in which a ``WallLayout`` belongs to the hand being set up (the table sends it
#: while raising the walls, before their DONE; a late one may follow the last DONE).
_LAYOUT_PHASES = ("table_shuffling", "table_walls_up")
#: A seat console's fields (all plain values), in the order the stored flow lists them.
_CONSOLE_FIELDS = tuple(f.name for f in dataclasses.fields(SeatConsole) if f.name != "under")


def _console_snapshot(console: SeatConsole) -> dict[str, Any]:
    """A console's stored form, field by field (dataclasses.asdict's deep copy was half
    the cost of a flow snapshot, which every journalled event pays). ``under`` only when
    set: the staff menu over a prompt is rare, and snapshots without it stay as they were."""
    data = {f: getattr(console, f) for f in _CONSOLE_FIELDS}
    if console.under is not None:
        data["under"] = list(console.under)
    return data


#: A display or lamp slot: the message class's name and its seat (0 for the centre).
_Slot = tuple[str, int]


class Table(StaffFlow, ConfirmFlow, EntryFlow, ClaimFlow, DrawFlow, TileFlow, ConsoleHost):
    """The controller of one table: construct, ``await link_up()``, feed it messages.

    The glue between the link (:meth:`handle`, :meth:`link_up`), the rules core, the
    console flows (the mixins, one module each under :mod:`tablectl.console`) and the
    displays (:meth:`refresh`).
    """

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
        claim_window_s: float = CLAIM_WINDOW_S,
        new_games: bool = True,
        on_game_over: Callable[[Final], None] | None = None,
        rules_ref: str | None = None,
        staff: StaffGate | None = None,
        rules_menu: Sequence[str] = (),
        load_rules: Callable[[str], HouseRules] | None = None,
        hold_on_tray_mismatch: bool = True,
        seat_names: Sequence[str] | None = None,
        wall_time: Callable[[], float] = time.time,
    ) -> None:
        self.rules = rules
        self.rules_ref = rules_ref if rules_ref is not None else rules.name
        self.players = rules.players
        self.state = state if state is not None else initial_state(rules)
        self.post_command = post
        self.recorder = recorder
        self.publisher = publisher
        self.now = now
        # Events a forged or noisy line can repeat at will: logged once, then counted.
        self._ratelog = RateLimitedLog(log, clock=now, prefix=f"[{table_id}] ")
        self.table_id = table_id
        self.claim_window_s = claim_window_s
        self.new_games = new_games
        self.consoles = [SeatConsole() for _ in range(self.players)]
        self.pending: Pending | None = None
        self.walls_done: set[int] = set()
        #: The tiles of each raised wall of this hand, by wall (the wall reader's
        #: ``WallLayout``); cleared at the next shuffle.
        self.wall_layouts: dict[int, tuple[int, ...]] = {}
        #: A take's tile disagreed with the layouts (or they contradicted each other): they
        #: are not trusted until the next shuffle, and no dora is shown.
        self.layouts_void = False
        #: What the table reported at the hello (tile-aware hands need the readers).
        self.capabilities = m.Capability.NONE
        self.reset_zones()
        self.faults: set[m.FaultCode] = set()
        self.sessions = 0
        self.roll_session = None
        self.resume_phase = "table_idle" if self.state.wall is None else "table_playing_turn"
        #: What each display and lamp slot was last sent (its field values).
        self.sent: dict[tuple[str, int], dict[str, Any]] = {}
        #: The all-last conditions and the rules state they were computed for.
        self._conditions_memo: tuple[GameState | None, Conditions | None] = (None, None)
        #: Per seat: the state and console inputs its display fields were made from.
        self._seat_memo: dict[int, tuple[GameState, tuple[Any, ...], dict[str, Any]]] = {}
        #: The centre display's fields and the (state fields, dora, clock) they came from.
        self._centre_memo: tuple[dict[str, Any], tuple[int, ...], int | None, dict[str, Any]] | None
        self._centre_memo = None
        #: The lamps and centre fields (without the clock) made from one state.
        self._state_memo: tuple[GameState | None, list[dict[str, Any]], dict[str, Any]] = (
            None,
            [],
            {},
        )
        self.claim_deadline: float | None = None
        self.clock_started: float | None = None
        self.games_finished = 0
        self.on_game_over = on_game_over
        #: Seats whose tray total differs from their score, with the tray's total.
        self.tray_mismatch: dict[int, int] = {}
        #: The totals the trays reported last (None: no trays, or none reported yet).
        self.tray_totals: tuple[int, ...] | None = None
        #: Staff let this hand start although the trays differ.
        self.tray_override = False
        self.hold_on_tray_mismatch = hold_on_tray_mismatch
        #: What the latest fault said (shown over every seat's prompt while it lasts).
        self.fault_text = ""
        self.game_started = state is not None and not self.state.finished
        #: Staff PIN check and lockout; None: staff actions only from ``tablectl ctl``.
        self.staff = staff if staff is not None else StaffGate(None, now)
        #: Rules staff may pick for a new game on a console (RULES?); the current first.
        self.rules_menu = tuple(dict.fromkeys((self.rules_ref, *rules_menu)))
        self.load_rules = load_rules
        self.state_model: Any = PhaseModel()
        self.machine = build_machine(self.state_model)
        #: Names the parlor's view shows for the seats (None: their winds).
        self.seat_names = tuple(seat_names) if seat_names is not None else None
        #: Unix time, for when an alert was raised (``now`` is monotonic).
        self.wall_time = wall_time
        #: What the table needs from staff (published with the state).
        self.alerts = AlertBoard()
        #: The last settled hand in its replay form (published with the state).
        self.last_hand: dict[str, Any] | None = None
        #: The game clock's last published step (clock // CLOCK_PUBLISH_S).
        self._clock_published: int | None = None

    def flow_snapshot(self) -> dict[str, Any]:
        """What the consoles are in the middle of (prompts, typed digits, a claim window,
        a win entry, confirmations) and the phase, as plain JSON-able data.

        The daemon stores it with the link position after every table event, so a
        restarted daemon that resumes the rules state from the journal resumes the
        console flow too, instead of dropping a half-typed han entry."""
        pending = None
        if self.pending is not None:
            p = self.pending
            pending = {
                "kind": p.kind,
                "discarders": list(p.discarders),
                "seats": list(p.seats),
                "answered": sorted(p.answered),
                "entries": [dataclasses.asdict(e) for e in p.entries.values()],
                "tenpai": sorted(p.tenpai),
                "nagashi": sorted(p.nagashi),
                "call_kind": p.call_kind,
            }
        phase = self.phase if self.phase.startswith("table_") else self.resume_phase
        started = self.clock_started
        return {
            "phase": phase,
            # Seconds the game clock had run (a time limit survives a restart; the time
            # the daemon was down is not counted).
            "clock_s": None if started is None else round(self.now() - started, 3),
            "consoles": [_console_snapshot(c) for c in self.consoles],
            "pending": pending,
            "walls_done": sorted(self.walls_done),
            "wall_layouts": {str(w): list(t) for w, t in sorted(self.wall_layouts.items())},
            "layouts_void": self.layouts_void,
            "game_started": self.game_started,
            "rules_ref": self.rules_ref,
            "tray_mismatch": {str(k): v for k, v in sorted(self.tray_mismatch.items())},
            "tray_override": self.tray_override,
            "tray_totals": None if self.tray_totals is None else list(self.tray_totals),
            "staff_failures": self.staff.failures,
            "staff_locked_s": round(self.staff.locked_for(), 3),
            # Staff calls nobody answered yet: a restart must not silence them. (LAST GAME
            # and a tray mismatch come back from the consoles and trays above.)
            "staff_calls": self.alerts.seats("staff_call"),
            **self.tile_flow_snapshot(),
        }

    def flow_key(self) -> Hashable:
        """The durable part of :meth:`flow_snapshot` as a cheap comparable value: what the
        consoles are doing, without display pages, messages or the running clock. The
        daemon compares it before and after a group of table events to know whether the
        stored console flow must be committed with the group."""
        pending: tuple[Any, ...] | None = None
        if self.pending is not None:
            p = self.pending
            pending = (
                p.kind,
                p.discarders,
                tuple(p.seats),
                frozenset(p.answered),
                tuple(
                    (e.seat, e.han, e.fu, e.yakuman, e.pao, e.done, e.scored, len(e.each))
                    for e in p.entries.values()
                ),
                frozenset(p.tenpai),
                frozenset(p.nagashi),
                p.call_kind,
            )
        return (
            self.phase if self.phase.startswith("table_") else self.resume_phase,
            tuple((c.prompt, c.typed, c.choice, c.last_game, c.staff) for c in self.consoles),
            pending,
            frozenset(self.walls_done),
            tuple(sorted(self.wall_layouts.items())),
            self.layouts_void,
            self.game_started,
            self.rules_ref,
            tuple(sorted(self.tray_mismatch.items())),
            self.tray_override,
            self.tray_totals,
            self.staff.failures,
            self.clock_started is None,
            tuple(self.alerts.seats("staff_call")),
            self.tile_flow_key(),
        )

    def restore_flow(self, snapshot: dict[str, Any]) -> None:
        """Take up a :meth:`flow_snapshot` of the same rules state (before ``link_up``).
        Raises ValueError (changing nothing) if it does not fit this table."""
        try:
            consoles = [SeatConsole(**c) for c in snapshot["consoles"]]
            for console in consoles:
                if console.under is not None:
                    prompt, typed, choice = console.under
                    if prompt not in PROMPTS:
                        raise ValueError(f"no prompt {prompt!r} for the staff menu to stand over")
                    console.under = (
                        str(prompt),
                        str(typed),
                        None if choice is None else int(choice),
                    )
            raw = snapshot["pending"]
            pending = None
            if raw is not None:
                entries = [WinEntry.from_dict(e) for e in raw["entries"]]
                pending = Pending(
                    kind=str(raw["kind"]),
                    discarders=tuple(int(d) for d in raw["discarders"]),
                    seats=[int(x) for x in raw["seats"]],
                    answered={int(x) for x in raw["answered"]},
                    entries={e.seat: e for e in entries},
                    tenpai={int(x) for x in raw["tenpai"]},
                    nagashi={int(x) for x in raw["nagashi"]},
                    call_kind=str(raw["call_kind"]),
                )
            phase = str(snapshot["phase"])
            clock_s = snapshot.get("clock_s")
            clock_s = None if clock_s is None else float(clock_s)
            walls_done = {int(w) for w in snapshot["walls_done"]}
            # Stored before the wall reader: no layouts (no dora shown this hand).
            layouts = {
                int(w): tuple(int(t) for t in tiles)
                for w, tiles in snapshot.get("wall_layouts", {}).items()
            }
            layouts_void = bool(snapshot.get("layouts_void", False))
            for w, tiles in layouts.items():
                if not 0 <= w < self.players or len(tiles) != self._per_wall():
                    raise ValueError(f"a layout of wall {w} with {len(tiles)} tiles")
            game_started = bool(snapshot["game_started"])
            trays = {int(k): int(v) for k, v in snapshot.get("tray_mismatch", {}).items()}
            tray_override = bool(snapshot.get("tray_override", False))
            raw_totals = snapshot.get("tray_totals")
            tray_totals = None if raw_totals is None else tuple(int(t) for t in raw_totals)
            staff_failures = int(snapshot.get("staff_failures", 0))
            staff_locked_s = float(snapshot.get("staff_locked_s", 0.0))
            staff_calls = [int(s) for s in snapshot.get("staff_calls", [])]
            for console in consoles:
                if console.prompt == "FAULT":  # stored before faults stood over prompts
                    console.prompt, console.typed = "", ""
                if console.prompt and console.prompt not in PROMPTS:
                    raise ValueError(f"unknown prompt {console.prompt!r}")
            self.restore_tile_flow(snapshot)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"console state does not fit: {exc!r}") from exc
        if len(consoles) != self.players or not phase.startswith("table_"):
            raise ValueError(f"console state for another table: {len(consoles)} seats, {phase}")
        self.consoles = consoles
        self.pending = pending
        self.walls_done = walls_done
        self.wall_layouts = layouts
        self.layouts_void = layouts_void
        self.game_started = game_started
        self.tray_mismatch = trays
        self.tray_override = tray_override
        self.tray_totals = tray_totals
        self.staff.failures = staff_failures
        self.staff.locked_until = self.now() + staff_locked_s if staff_locked_s > 0 else None
        self.clock_started = None if clock_s is None else self.now() - clock_s
        self.resume_phase = phase
        if phase == "table_playing_claim":
            self.claim_deadline = self.now() + self.claim_window_s  # a fresh window
        now = self.wall_time()
        for seat in staff_calls:
            self.alerts.raise_alert("staff_call", seat, "STAFF CALL", now)
        for seat, console in enumerate(consoles):
            if console.last_game:
                self.alerts.raise_alert("last_game", seat, "LAST GAME", now)
        if trays and tray_totals is not None:
            self._alert_for_note(
                "tray_mismatch", None, {"trays": list(tray_totals), "scores": self.state.scores}
            )

    async def link_up(self, *, rebooted: bool, capabilities: m.Capability | None = None) -> None:
        """The link (re)connected and the hello was accepted: resume where the hand stood.

        ``capabilities`` are the table's (its HelloReply); a table that reads every tile
        gets the scorer loaded now, not at its first win."""
        if capabilities is not None:
            self.capabilities = capabilities
            self.load_scorer()
        # Straight through the handshake to where the hand stood: the prompts are swept
        # only there, not in the ``table_idle`` the hello passes through.
        if self.phase != "offline":
            await self.state_model.to_offline()
        await self.state_model.trigger("link_up")
        await self.state_model.trigger("hello_ok")
        self.sessions += 1
        self.sent.clear()  # re-send every display: the table may have rebooted
        # The table may hold faults latched that this daemon never saw (it was restarted
        # while FAULT showed); the TableStatus answer says which (docs/protocol.md).
        self.post_command(m.StatusRequest())
        target = self.resume_phase
        if target in ("table_shuffling", "table_walls_up", "table_idle") or (
            rebooted and target == "table_dice"
        ):
            target = "table_idle"
        await self._to(target)
        if self.phase == "table_idle":
            await self._start_hand()
        self.alerts.resolve("link_down")
        self._publish_state()
        self.refresh()

    async def link_lost(self) -> None:
        """The link dropped: remember the phase so that a reconnect resumes there."""
        if self.phase.startswith("table_"):
            self.resume_phase = self.phase
        if self.phase != "offline":
            await self._to("offline")
        self.alerts.raise_alert("link_down", None, "no link to the table", self.wall_time())
        self._publish_state()

    async def handle(self, msg: m.Message) -> None:
        """One event from the table."""
        match msg:
            case m.KeyPress(seat=seat, key=key):
                if 0 <= seat < self.players:
                    await self._key(seat, key)
            case m.WallTake(seat=seat, position=pos, tile=tile):
                if tile is not None:
                    self._check_layout(pos, tile)
                await self._take(seat, pos)
            case m.WallLayout(wall=wall, tiles=tiles):
                self._wall_layout(wall, tiles)
            case m.DiceResult(die1=a, die2=b):
                await self._dice(a, b)
            case m.WallStatus(wall=wall, state=wstate):
                await self._wall_status(wall, wstate)
            case m.TrayTotals(totals=totals):
                self._trays(totals)
            case m.Fault(code=code, text=text, detail=detail):
                if code == m.FaultCode.TILE_READER:
                    self.reader_fault(detail)
                await self._fault(code, text)
            case m.TableStatus(faults=faults):
                await self._latched_faults(faults)
            case m.SeatTiles(seat=seat, zone=zone, tiles=tiles):
                # The seat readers (protocol 1.3): a discard or meld in a tile-aware hand.
                await self.seat_tiles(seat, zone, tiles)
            case _:
                log.debug("[%s] ignored %s", self.table_id, type(msg).__name__)
        self.refresh()

    async def tick(self) -> None:
        """Called about once a second: the claim window and the game clock."""
        if not self.phase.startswith("table_"):
            return  # offline or in a fault: both wait (a restored window restarts on link up)
        if self.claim_deadline is not None and self.now() >= self.claim_deadline:
            await self._close_claim()
        if self._clock_ran_out():
            self._apply(ev.TimeUp())
        clock = self.clock_seconds()
        if clock is not None and clock // CLOCK_PUBLISH_S != self._clock_published:
            # The parlor's view counts down between states; a state every
            # CLOCK_PUBLISH_S keeps it right without a message a second per table.
            self._clock_published = clock // CLOCK_PUBLISH_S
            self._publish_state()
        self.refresh()

    def _clock_ran_out(self) -> bool:
        limit = self.rules.game.time_limit_minutes
        if limit is None or self.clock_started is None:
            return False
        state = self.state
        return (
            not state.last_hand
            and not state.finished
            and (self.now() - self.clock_started >= limit * 60)
        )

    async def _start_hand(self) -> None:
        if self.state.finished:
            return
        if not self.game_started:
            self.game_started = True
            self.clock_started = self.now()
            if self.recorder is not None:
                self.recorder.game_started(self.rules, self.rules_ref)
        elif self.clock_started is None:
            self.clock_started = self.now()
        # A mismatch belongs to the hand it was found in: the trays are compared afresh
        # with the scores as they now stand. A new game's scores are back at the start
        # while the trays report nothing until sticks move (a game may end before they
        # do), so without this a stale mismatch would hold the dice for ever.
        self._compare_trays()
        self.walls_done.clear()
        self.wall_layouts = {}
        self.layouts_void = False
        self.reset_zones()
        self.pending = None
        if self.conditions() is not None:
            for console in self.consoles:
                console.page = 3  # what each player needs, shown once as the hand starts
        await self._trigger("shuffle")  # sweeps the last hand's prompts, keeps staff ones
        self.post_command(m.WallCommand(action=m.WallAction.SHUFFLE))

    async def _wall_status(self, wall: int, wstate: m.WallState) -> None:
        if wstate == m.WallState.TILE_COUNT_ERROR:
            await self._fault(m.FaultCode.TILE_COUNT, f"wall {wall} tile count")
            return
        if wstate == m.WallState.DONE and self.phase == "table_shuffling":
            self.walls_done.add(wall)
            if len(self.walls_done) >= self.players:
                await self._trigger("walls_ready")
                self.consoles[self.state.dealer].prompt = "ROLL?"

    def _per_wall(self) -> int:
        """Positions in one wall (docs/wall.md)."""
        return positions_per_wall(walltrack.wall_rules(self.rules))

    def _wall_layout(self, wall: int, tiles: tuple[int, ...]) -> None:
        """A raised wall's tiles from the wall reader: kept for this hand."""
        if self.phase not in _LAYOUT_PHASES:
            self._ratelog.warning("layouts outside a raise",
                                  "[%s] layout of wall %d outside a raise ignored",
                                  self.table_id, wall)  # fmt: skip
            return
        if wall >= self.players or len(tiles) != self._per_wall():
            self._ratelog.warning("layouts of a wrong size",
                                  "[%s] layout of wall %d with %d tiles ignored (%d walls of %d)",
                                  self.table_id, wall, len(tiles), self.players,
                                  self._per_wall())  # fmt: skip
            return
        others = {t for w, ts in self.wall_layouts.items() if w != wall for t in ts}
        if len(set(tiles)) != len(tiles) or others & set(tiles):
            log.warning("[%s] layout of wall %d repeats tiles: no dora shown this hand",
                        self.table_id, wall)  # fmt: skip
            self.layouts_void = True
        self.wall_layouts[wall] = tiles

    def _layout_tile(self, pos: int) -> int | None:
        """The tile the layouts put at ``pos`` (None: not known, or not trusted)."""
        if self.layouts_void:
            return None
        per = self._per_wall()
        tiles = self.wall_layouts.get(pos // per)
        return None if tiles is None else tiles[pos % per]

    def _check_layout(self, pos: int, tile: int) -> None:
        """A take's tile (tile reader) against the layout: a difference is a misread, and
        the layouts are not trusted for the rest of the hand (never a wrong dora)."""
        expected = self._layout_tile(pos)
        if expected is not None and expected != tile:
            log.warning("[%s] position %d: the take read tile %d, the wall layout says %d;"
                        " no dora shown until the next shuffle",
                        self.table_id, pos, tile, expected)  # fmt: skip
            self.layouts_void = True

    def dora_tiles(self) -> tuple[int, ...]:
        """The revealed dora indicators' tile ids, first one first, when the wall reader's
        layouts of their walls are known and trusted; ``()`` otherwise (never a partial
        list)."""
        wall = self.state.wall
        if wall is None or not wall.dora_indicators:
            return ()
        tiles = [self._layout_tile(pos) for pos in wall.dora_indicators[:5]]
        if any(t is None for t in tiles):
            return ()
        return tuple(t for t in tiles if t is not None)

    async def _dice(self, a: int, b: int) -> None:
        if self.phase != "table_dice":
            self._ratelog.warning("dice outside a roll", "[%s] dice %d+%d outside a roll ignored",
                                  self.table_id, a, b)  # fmt: skip
            return
        refusal = self._apply(ev.Dice(dice=(a, b)))
        if refusal is not None:
            await self._fault(m.FaultCode.DICE, refusal.message)
            return
        self._start_tiles()
        await self._trigger("dice_rolled")

    async def _take(self, seat: int, pos: int) -> None:
        if self.phase not in ("table_dealing", "table_playing_turn", "table_playing_claim"):
            self._refuse(seat, "not now: no hand in play")
            return
        if self.phase == "table_playing_claim":
            await self._close_claim()
            if self.phase != "table_playing_turn":
                return
        wall = self.state.wall
        if wall is not None and wall.taken and (wall.taken[-1], wall.taken_by[-1]) == (pos, seat):
            # A position is taken once, so this is the same take reported twice (a sensor
            # bounce, or firmware that resends without the link's resume): not a new take.
            # Resends across daemon restarts are stopped by the link position itself.
            log.info("[%s] seat %d's take of %d again: a resend, ignored", self.table_id, seat, pos)
            return
        self.apply_take(seat, pos)
        wall = self.state.wall
        if self.phase == "table_dealing" and wall is not None and wall.phase != "deal":
            await self._trigger("dealt")

    async def _key(self, seat: int, key: m.Key) -> None:
        """One key press: handled by the seat's prompt, or by the phase when it has none.

        A key that neither takes is refused on that seat's display (with the keys that
        would do something) and a beep, and changes nothing."""
        console = self.consoles[seat]
        if self.faults:
            if key == m.Key.OK:
                await self._clear_fault()
            else:
                self._refuse(seat, "fault: fix it, then OK")
            return
        if not self.phase.startswith("table_"):
            return  # the hello is not through yet: the table has no phase to act in
        if console.prompt:
            if console.under is not None and console.prompt not in STAFF_PROMPTS:
                console.under = None  # a flow put another prompt over the staff menu
            spec = PROMPTS[console.prompt]
            if key == m.Key.STAFF_CALL and console.prompt not in STAFF_PROMPTS:
                # A player's call for staff is never refused: the staff menu stands over
                # the prompt being answered, which comes back when the menu closes.
                console.under = (console.prompt, console.typed, console.choice)
                self._open(seat, "STAFF?")
                return
            if not spec.accepts(key):
                self._refuse(seat, spec.refusal())
                return
            await self._prompt_key(seat, key)
            self._back_from_staff(seat)
            return
        console.under = None
        if key not in idle_spec(self.phase).keys:
            self._refuse(seat, "not now")
            return
        if key == m.Key.DIGIT_0:
            console.page = (console.page + 1) % (4 if self.conditions() is not None else 3)
        elif key == m.Key.LAST_GAME:
            console.last_game = not console.last_game
            self._note("last_game", seat, {"on": console.last_game})
        elif key == m.Key.STAFF_CALL:
            self._open(seat, "STAFF?")
        elif key == m.Key.MENU:
            self._open(seat, "ABORT?")
        elif key == m.Key.RIICHI:
            refusal = self._apply(ev.Riichi(seat=seat))
            if refusal is not None:
                self._refuse(seat, refusal)
            else:
                console.message = "RIICHI"
        elif key == m.Key.TSUMO:
            refusal = walltrack.check_tsumo(self.state, seat)
            if refusal is not None:
                self._refuse(seat, refusal)
                return
            self.check_winner_hand(seat, tsumo=True)
            await self._open_entry("tsumo", [seat], ())
        elif key == m.Key.RON:
            await self._ron_key(seat)
        elif key in (m.Key.PON, m.Key.CHI, m.Key.KAN):
            await self._call_key(seat, key)
        elif key in (m.Key.TENPAI, m.Key.NOTEN):
            await self._draw_key(seat, key)

    def _back_from_staff(self, seat: int) -> None:
        """The staff menu opened over a prompt closed: that prompt comes back, if it
        still belongs to the phase (a staff action may have moved the table on)."""
        console = self.consoles[seat]
        if console.under is None or console.prompt in STAFF_PROMPTS:
            return
        under, console.under = console.under, None
        if console.prompt or self.phase not in PROMPTS[under[0]].phases:
            return
        message = console.message
        console.prompt, console.typed, console.choice = under
        console.message = message  # what the staff menu said (STAFF CALLED, a refusal)

    async def _prompt_key(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        prompt = console.prompt
        handler = {
            "ROLL?": self._roll_prompt,
            "RON?": self._ron_prompt,
            "HAN?": self._han_prompt,
            "FU?": self._fu_prompt,
            "PAO?": self._pao_prompt,
            "FROM?": self._from_prompt,
            "KAN?": self._kan_prompt,
            "ABORT?": self._abort_prompt,
            "STAFF?": self._staff_prompt,
            "SEAT?": self._seat_prompt,
            "TENPAI?": self._tenpai_prompt,
            "STOP?": self._stop_prompt,
            "CONFIRM": self._confirm_prompt,
            "GAME OVER": self._confirm_prompt,
            "OK?": self._score_prompt,
            "PLACE MELD": self._meld_prompt,
            "PIN?": self._pin_prompt,
            "RULES?": self._rules_prompt,
        }[prompt]
        await handler(seat, key)

    def status(self) -> dict[str, Any]:
        """What ``tablectl ctl status`` shows: the live state and what staff may need."""
        return {
            **self.snapshot(),
            "phase": self.phase,  # staff see the machine's own name
            "rules_ref": self.rules_ref,
            "faults": sorted(code.name for code in self.faults),
            "tray_mismatch": {str(k): v for k, v in sorted(self.tray_mismatch.items())},
            "staff_locked_s": round(self.staff.locked_for(), 1),
            "last_game": [s for s, c in enumerate(self.consoles) if c.last_game],
            "prompts": [c.prompt for c in self.consoles],
        }

    async def _clear_fault(self) -> None:
        """OK on any seat while FAULT shows: clear the latched faults and go back to where
        the hand stood; the prompts the fault stood over come back."""
        for code in sorted(self.faults):
            self.post_command(m.FaultClear(code=code))
        self.faults.clear()
        self.fault_text = ""
        self.alerts.resolve("fault")
        self._publish_state()
        if self.phase != "fault":
            return  # the link went down during the fault: link_up resumes the phase
        target = self.resume_phase
        if target == "table_dice":
            # The fault came while waiting for the dice (a roll refused, the dice stuck):
            # no DiceResult is coming, so the dealer rolls again.
            await self._to("table_walls_up")
            self.consoles[self.state.dealer].prompt = "ROLL?"
            return
        await self._to(target)
        if target in ("table_shuffling", "table_walls_up", "table_idle"):
            await self._to("table_idle")
            await self._start_hand()

    async def _latched_faults(self, faults: Sequence[m.FaultCode]) -> None:
        """The faults a ``TableStatus`` says the table holds latched: one this daemon has
        not seen stands over the prompts as if just reported, until staff clear it.

        HOST_SILENT always reaches the host as a Fault event of its own, which clears it
        (and may roll the dice again): answering it here as well would do that twice. A
        tile reader's fault turns a tile-aware hand to key entry, as its event does."""
        for code in faults:
            if code in self.faults or code == m.FaultCode.HOST_SILENT:
                continue
            log.warning("[%s] the table holds %s latched", self.table_id, code.name)
            if code == m.FaultCode.TILE_READER:
                self.tiles_off("tile reader fault (latched)")
            await self._fault(code, "")

    async def _fault(self, code: m.FaultCode, text: str) -> None:
        if code == m.FaultCode.HOST_SILENT:
            log.warning("[%s] the table stopped its motors while we were away", self.table_id)
            self.post_command(m.FaultClear(code=code))
            if self.phase in ("table_shuffling", "table_walls_up"):
                await self._to("table_idle")
                await self._start_hand()
            elif self.phase == "table_dice" and self.roll_session != self.sessions:
                # The table reports its events in order, and this one when the line went:
                # had it rolled, its DiceResult would have come before. So our DiceRoll
                # was lost with the session (commands are not kept across it), and the
                # dealer, who already pressed OK, waits for dice that never come. Not so
                # for a DiceRoll sent in this session: the fault tells of an older one
                # (queued behind a backlog), and the table rolls what it was asked to.
                log.info("[%s] the roll was lost with the link: rolling again", self.table_id)
                self.post_command(m.DiceRoll())
                self.roll_session = self.sessions
            return
        self.faults.add(code)
        if self.phase.startswith("table_"):
            self.resume_phase = self.phase
            await self._trigger("table_fault")
        self.fault_text = fit(text or code.name.replace("_", " ").lower())
        names = ", ".join(sorted(c.name for c in self.faults))
        self.alerts.raise_alert("fault", None, f"{names}: {self.fault_text}", self.wall_time())
        self._publish_state()
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.ALARM, duration_ms=500))

    def _trays(self, totals: Sequence[int]) -> None:
        if len(totals) != self.players:
            log.warning("[%s] tray totals for %d seats ignored", self.table_id, len(totals))
            return
        self.tray_totals = tuple(totals)
        self._compare_trays()

    def _compare_trays(self) -> None:
        """Compare the last tray totals with the scores as they now stand; journal and
        publish a change (the same seats off against other scores is one too)."""
        totals = self.tray_totals
        if totals is None:
            return
        expected = self.state.scores
        mismatch = {
            seat: totals[seat] for seat in range(self.players) if totals[seat] != expected[seat]
        }
        if mismatch == self.tray_mismatch and (
            not mismatch or self._tray_alert() == tray_alert_text(totals, expected)
        ):
            return
        self.tray_mismatch = mismatch
        detail: dict[str, Any] = {"trays": list(totals), "scores": list(expected)}
        self._note("tray_mismatch" if mismatch else "trays_match", None, detail)
        self._publish_state()

    def _tray_alert(self) -> str | None:
        """The open tray alert's text, or None."""
        texts = (a["text"] for a in self.alerts.as_list() if a["kind"] == "tray_mismatch")
        return next(texts, None)

    def snapshot(self) -> dict[str, Any]:
        """The table's live state as a plain dict (MQTT state payload, tests)."""
        state = self.state
        wall = state.wall
        return {
            "table": self.table_id,
            "rules": self.rules.name,
            "phase": public_phase(self.phase),
            "round": state.round_dict(),
            "dealer": state.dealer,
            "honba": state.honba,
            "deposits": state.kyoutaku,
            "scores": list(state.scores),
            "riichi": sorted(state.riichi),
            "tiles_left": wall.live_left if wall is not None else None,
            "finished": state.finished,
            "conditions": self.conditions(),
            "names": list(self.seat_names) if self.seat_names is not None else None,
            "link": "down" if self.phase == "offline" else "up",
            "clock": self.clock_seconds(),
            "game_id": getattr(self.recorder, "game_id", None),
            "hands": state.hands_played,
            "last_hand": self.last_hand,
            "alerts": self.alerts.as_list(),
        }

    def game_result(self, final: Final) -> dict[str, Any]:
        """A finished game as published and printed by ``tablectl demo --json``: with its
        journal game id (consumers de-duplicate by it) and its number of hands."""
        return {
            "table": self.table_id,
            "game_id": getattr(self.recorder, "game_id", None),
            "rules": self.rules.name,
            "hands": self.state.hands_played,
            "final": final.as_dict(),
        }

    def seat_lines(self, seat: int) -> tuple[str, str]:
        """The two display lines of ``seat``."""
        console = self.consoles[seat]
        state = self.state
        if self.faults:
            return "FAULT", self.fault_text
        if "\n" in console.message and not console.prompt:
            # A refused win says why on both lines (``! furiten: 3p`` / ``in your discards``).
            head, _, detail = console.message.partition("\n")
            return fit(head), fit(detail)
        if console.prompt == "OK?":
            return self.score_lines(seat)
        if console.prompt:
            typed = "*" * len(console.typed) if console.prompt == "PIN?" else console.typed
            if seat in self.tray_mismatch and not typed:
                # Sticks move while CONFIRM shows: the mismatch must stay in sight.
                typed = f"!TRAY {self.tray_mismatch[seat]}"
            line1 = f"{console.prompt} {typed}".rstrip()
            return fit(line1), fit(console.message.replace("\n", " "))
        wind = "ESWN"[(seat - state.dealer) % self.players]
        # After the game the final scores (leftover deposits, adjustments) are what count.
        score = state.final.scores[seat] if state.final is not None else state.scores[seat]
        message = console.message
        if seat in self.tray_mismatch:
            message = f"! TRAY {self.tray_mismatch[seat]}"
        if console.page == 1:
            # Each other seat by its wind: E+8000 on line 1 after the title, the rest below.
            others = [
                f"{'ESWN'[(o - state.dealer) % self.players]}{signed(score - state.scores[o])}"
                for o in range(self.players)
                if o != seat
            ]
            return fit(f"{wind} DIFF {others[0]}"), fit(" ".join(others[1:]))
        if console.page == 2:
            order = sorted(range(self.players), key=lambda s: (-state.scores[s], s))
            return fit(f"{wind} RANK {order.index(seat) + 1}/{self.players}"), fit(str(score))
        if console.page == 3 and self.conditions() is not None:
            return self.condition_lines(seat)  # once the game is over: the score page
        tag = " LAST" if console.last_game else ""
        clock = self.clock_text()
        if not message and clock is not None:
            message = f"TIME {clock}"  # the game clock, where the preset has one
        return fit(f"{wind} {score}{tag}"), fit(message)

    def conditions(self) -> Conditions | None:
        """The all-last conditions of the hand in progress (None when it cannot be the
        last), computed once per rules state."""
        if self._conditions_memo[0] is not self.state:
            self._conditions_memo = (self.state, conditions(self.state))
        return self._conditions_memo[1]

    def condition_lines(self, seat: int) -> tuple[str, str]:
        """The conditions page: the best place ``seat`` can reach, by ron off a third
        seat (R) and off the seat it must pass (D), then by tsumo, as parlors say them
        (``1ST R 8000 D 3900`` / ``TSUMO 1000-2000``); ``SAFE`` for the leader, ``NO WAY``
        when no hand moves the seat up."""
        found = self.conditions() or {}
        if str(seat) not in found:
            return "SAFE", "TOP NOW"
        places = found[str(seat)]
        if not places:
            return "NO WAY", "NO HAND MOVES UP"
        place = min(places, key=int)
        need = places[place]
        order = ranking(self.state.scores)
        target = str(order[int(place) - 1])
        others = [v for d, v in need["ron"].items() if d != target]
        third = "-" if not others or None in others else str(max(others))
        direct = need["ron"].get(target)
        label = {"1": "1ST", "2": "2ND", "3": "3RD"}[place]
        line1 = f"{label} R {third} D {'-' if direct is None else direct}"
        tsumo = need["tsumo"]
        split = "-" if tsumo is None else tsumo_split(self.state, seat, tsumo)
        return fit(line1), fit(f"TSUMO {split}")

    def clock_seconds(self) -> int | None:
        """Seconds left on the game clock (None: the preset has none, or it has not
        started)."""
        limit = self.rules.game.time_limit_minutes
        if limit is None or self.clock_started is None:
            return None
        return max(0, int(limit * 60 - (self.now() - self.clock_started)))

    def clock_text(self) -> str | None:
        """The game clock as ``MM:SS`` (None without one)."""
        left = self.clock_seconds()
        return None if left is None else f"{left // 60:02d}:{left % 60:02d}"

    def _seat_fields(self, seat: int, clock: int | None) -> dict[str, Any]:
        """A seat display's fields, remade only when what :meth:`seat_lines` reads changed
        (a key press usually changes one seat's console and nothing else); ``clock`` is
        :meth:`clock_seconds`, read once per refresh."""
        console = self.consoles[seat]
        inputs = (
            console.prompt,
            console.typed,
            console.message,
            console.page,
            console.choice,
            console.last_game,
            self.fault_text if self.faults else None,
            self.tray_mismatch.get(seat),
            clock,
        )
        memo = self._seat_memo.get(seat)
        if memo is not None and memo[0] is self.state and memo[1] == inputs:
            return memo[2]
        line1, line2 = self.seat_lines(seat)
        fields = {"seat": seat, "line1": line1, "line2": line2}
        self._seat_memo[seat] = (self.state, inputs, fields)
        return fields

    def _state_fields(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The lamps and the centre display (clock left out), remade on a new state."""
        state = self.state
        if self._state_memo[0] is state:
            return self._state_memo[1], self._state_memo[2]
        lamps = [
            {
                "seat": seat,
                "dealer": seat == state.dealer,
                "riichi": seat in state.riichi or seat == state.pending_riichi,
            }
            for seat in range(self.players)
        ]
        wall = state.wall
        centre = {
            "round_wind": m.Wind(state.round_index % 4),
            "round_number": state.dealer + 1,
            "honba": min(state.honba, 255),
            "deposits": min(state.kyoutaku // 1000, 255),
            "tiles_left": min(wall.live_left, 136) if wall is not None else 0,
        }
        self._state_memo = (state, lamps, centre)
        return lamps, centre

    def _centre_fields(self, centre: dict[str, Any], clock: int | None) -> dict[str, Any]:
        """The centre display's fields: ``centre`` from :meth:`_state_fields` with the dora
        and the clock, remade only when one of the three changed."""
        dora = self.dora_tiles()
        memo = self._centre_memo
        if memo is not None and memo[0] is centre and memo[1] == dora and memo[2] == clock:
            return memo[3]
        fields = {**centre, "dora": dora, "clock": clock}
        self._centre_memo = (centre, dora, clock, fields)
        return fields

    def _display_fields(self) -> list[tuple[_Slot, type[m.Message], dict[str, Any]]]:
        """Every display and lamp command describing the table now: its slot, its class
        and its field values (cheap to compare; building the message validates every
        field). Unchanged fields are the very dicts made last time (memoised)."""
        out: list[tuple[_Slot, type[m.Message], dict[str, Any]]] = []
        lamps, centre = self._state_fields()
        clock = self.clock_seconds()
        for seat in range(self.players):
            out.append((("SeatDisplay", seat), m.SeatDisplay, self._seat_fields(seat, clock)))
            out.append((("SeatLamps", seat), m.SeatLamps, lamps[seat]))
        out.append((("CentreDisplay", 0), m.CentreDisplay, self._centre_fields(centre, clock)))
        return out

    def refresh(self, force: bool = False) -> None:
        """Send the display and lamp commands that changed since they were last sent.

        Called after every table event; only the changed ones are built as messages (a key
        press usually changes one display of nine)."""
        if not self.phase.startswith("table_") and self.phase != "fault":
            return
        sent = self.sent
        for slot, cls, fields in self._display_fields():
            last = sent.get(slot)
            # The memoised dict itself: nothing changed (the dicts are never mutated).
            if last is fields and not force:
                continue
            if force or last != fields:
                sent[slot] = fields
                self.post_command(cls(**fields))
