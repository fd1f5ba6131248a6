"""The table controller: the hand cycle, seat console flows and displays.

:class:`Table` turns what the table reports (wall status, dice, takes, key presses,
trays, faults) into rules events, feeds them to the pure rules core, and turns the
result into display, lamp and motor commands.  It owns no I/O itself: commands go out
through ``post``, accepted events through the ``recorder`` (the journal) *before* any
command that depends on them, and live state through the optional ``publisher``.
The key flows and prompts are specified in docs/console.md.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from firmware_bridge import messages as m
from tablectl.console import prompts
from tablectl.console.model import Pending, SeatConsole, WinEntry, fit, signed
from tablectl.console.prompts import PROMPTS, STAFF_MENU, idle_spec
from tablectl.console.staff import LOCKOUT_S, StaffGate
from tablectl.phases import PhaseModel, build_machine
from tablectl.rules import events as ev
from tablectl.rules import walltrack
from tablectl.rules.core import step
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import (
    DeadHand,
    Final,
    GameOver,
    GameState,
    HandSettled,
    StopOffered,
    initial_state,
)
from tablectl.rules.wall import implied_discarder

log = logging.getLogger(__name__)

#: Seconds the other seats have to join a ron; the window closes early once all answered.
CLAIM_WINDOW_S = 3.0
ABORT_MENU: dict[int, ev.AbortReason] = {
    1: "nine_terminals",
    2: "four_winds",
    3: "four_riichi",
    4: "four_kans",
}
ABORT_LABELS = {1: "9 TERMINALS", 2: "4 WINDS", 3: "4 RIICHI", 4: "4 KANS"}
#: Phases in which a hand is under way and can end (abort, chombo, a result).
HAND_PHASES = tuple(sorted(prompts.HAND_PHASES))


class FlowError(RuntimeError):
    """A console flow asked the phase machine for a transition it does not have: a bug in
    the flow declarations (tablectl.console.prompts), never the players' doing."""


class Recorder(Protocol):
    """Where accepted events go before their effects are shown (the journal)."""

    def game_started(self, rules: HouseRules, rules_ref: str) -> None:
        """A new game begins with ``rules`` (``rules_ref`` names them: a preset or file)."""

    def event_accepted(self, event: ev.Event, state: GameState) -> None:
        """``event`` was accepted and led to ``state``; must be durable on return."""

    def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
        """Something staff must be able to look up later happened (a staff action, a
        wrong PIN, a tray mismatch, a LAST GAME call); durable like an event."""

    def game_abandoned(self) -> None:
        """The game in progress was ended by staff; it is kept as abandoned."""


class Publisher(Protocol):
    """Live state for the parlor (MQTT); calls must not block."""

    def publish_state(self, state: dict[str, Any]) -> None:
        """The table's state changed."""

    def publish_event(self, event: dict[str, Any]) -> None:
        """An event was accepted."""

    def publish_game(self, result: dict[str, Any]) -> None:
        """A game finished."""


_fit = fit
_signed = signed


class Table:
    """The controller of one table.  Construct, then ``await start()``; feed it messages."""

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
    ) -> None:
        self.rules = rules
        self.rules_ref = rules_ref if rules_ref is not None else rules.name
        self.players = rules.players
        self.state = state if state is not None else initial_state(rules)
        self.post_command = post
        self.recorder = recorder
        self.publisher = publisher
        self.now = now
        self.table_id = table_id
        self.claim_window_s = claim_window_s
        self.new_games = new_games
        self.consoles = [SeatConsole() for _ in range(self.players)]
        self.pending: Pending | None = None
        self.walls_done: set[int] = set()
        self.faults: set[m.FaultCode] = set()
        self.resume_phase = "table_idle" if self.state.wall is None else "table_playing_turn"
        #: What each display and lamp slot was last sent (its field values).
        self.sent: dict[tuple[str, int], dict[str, Any]] = {}
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

    # ------------------------------------------------------------------ flow snapshot

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
            "consoles": [dataclasses.asdict(c) for c in self.consoles],
            "pending": pending,
            "walls_done": sorted(self.walls_done),
            "game_started": self.game_started,
            "rules_ref": self.rules_ref,
            "tray_mismatch": {str(k): v for k, v in sorted(self.tray_mismatch.items())},
            "tray_override": self.tray_override,
            "tray_totals": None if self.tray_totals is None else list(self.tray_totals),
            "staff_failures": self.staff.failures,
            "staff_locked_s": round(self.staff.locked_for(), 3),
        }

    def restore_flow(self, snapshot: dict[str, Any]) -> None:
        """Take up a :meth:`flow_snapshot` of the same rules state (before ``link_up``).
        Raises ValueError (changing nothing) if it does not fit this table."""
        try:
            consoles = [SeatConsole(**c) for c in snapshot["consoles"]]
            raw = snapshot["pending"]
            pending = None
            if raw is not None:
                entries = [WinEntry(**e) for e in raw["entries"]]
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
            game_started = bool(snapshot["game_started"])
            trays = {int(k): int(v) for k, v in snapshot.get("tray_mismatch", {}).items()}
            tray_override = bool(snapshot.get("tray_override", False))
            raw_totals = snapshot.get("tray_totals")
            tray_totals = None if raw_totals is None else tuple(int(t) for t in raw_totals)
            staff_failures = int(snapshot.get("staff_failures", 0))
            staff_locked_s = float(snapshot.get("staff_locked_s", 0.0))
            for console in consoles:
                if console.prompt == "FAULT":  # stored before faults stood over prompts
                    console.prompt, console.typed = "", ""
                if console.prompt and console.prompt not in PROMPTS:
                    raise ValueError(f"unknown prompt {console.prompt!r}")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"console state does not fit: {exc!r}") from exc
        if len(consoles) != self.players or not phase.startswith("table_"):
            raise ValueError(f"console state for another table: {len(consoles)} seats, {phase}")
        self.consoles = consoles
        self.pending = pending
        self.walls_done = walls_done
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

    # ------------------------------------------------------------------ phase helpers

    @property
    def phase(self) -> str:
        """The current phase name (``table_playing_turn`` ...)."""
        return str(self.state_model.state)

    async def _to(self, phase: str) -> None:
        await getattr(self.state_model, f"to_{phase}")()
        self._sweep_prompts()

    async def _trigger(self, name: str) -> None:
        """Fire ``name``; only transitions the machine has from here are ever asked for."""
        if name not in self.machine.get_triggers(self.phase):
            raise FlowError(f"no transition {name!r} from {self.phase}")
        await self.state_model.trigger(name)
        self._sweep_prompts()

    def _sweep_prompts(self) -> None:
        """Clear every prompt that does not belong to the phase just entered, so that a
        prompt's keys are only ever handled in the phases it declares."""
        phase = self.phase
        if not phase.startswith("table_"):
            return  # offline or a fault: the prompts wait for the table to come back
        for console in self.consoles:
            spec = PROMPTS.get(console.prompt)
            if console.prompt and (spec is None or phase not in spec.phases):
                console.prompt, console.typed, console.choice, console.staff = "", "", None, None

    # ------------------------------------------------------------------ link lifecycle

    async def link_up(self, *, rebooted: bool) -> None:
        """The link (re)connected and the hello was accepted: resume where the hand stood."""
        # Straight through the handshake to where the hand stood: the prompts are swept
        # only there, not in the ``table_idle`` the hello passes through.
        if self.phase != "offline":
            await self.state_model.to_offline()
        await self.state_model.trigger("link_up")
        await self.state_model.trigger("hello_ok")
        self.sent.clear()  # re-send every display: the table may have rebooted
        target = self.resume_phase
        if target in ("table_shuffling", "table_walls_up", "table_idle") or (
            rebooted and target == "table_dice"
        ):
            target = "table_idle"
        await self._to(target)
        if self.phase == "table_idle":
            await self._start_hand()
        self.refresh()

    async def link_lost(self) -> None:
        """The link dropped: remember the phase so that a reconnect resumes there."""
        if self.phase.startswith("table_"):
            self.resume_phase = self.phase
        if self.phase != "offline":
            await self._to("offline")

    # ------------------------------------------------------------------ inputs

    async def handle(self, msg: m.Message) -> None:
        """One event from the table."""
        match msg:
            case m.KeyPress(seat=seat, key=key):
                if 0 <= seat < self.players:
                    await self._key(seat, key)
            case m.WallTake(seat=seat, position=pos):
                await self._take(seat, pos)
            case m.DiceResult(die1=a, die2=b):
                await self._dice(a, b)
            case m.WallStatus(wall=wall, state=wstate):
                await self._wall_status(wall, wstate)
            case m.TrayTotals(totals=totals):
                self._trays(totals)
            case m.Fault(code=code, text=text):
                await self._fault(code, text)
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

    # ------------------------------------------------------------------ applying events

    def _apply(self, *events: ev.Event) -> Refusal | None:
        """Apply ``events`` together: all are accepted, or nothing changes.

        Each accepted event is recorded (the journal) before anything it causes is sent.
        """
        staged: list[tuple[ev.Event, GameState, tuple[Any, ...]]] = []
        state = self.state
        for event in events:
            state, effects = step(state, event)
            for effect in effects:
                if isinstance(effect, Refusal):
                    return effect
            staged.append((event, state, effects))
        for event, new_state, effects in staged:
            if self.recorder is not None:
                self.recorder.event_accepted(event, new_state)
            self.state = new_state
            if self.publisher is not None:
                # Takes and discards reach the parlor as tiles left in the state, not as
                # events: a parlor follows scores, and a fast table makes ~70 takes a hand.
                if not isinstance(event, ev.Dice | ev.Deal | ev.Take | ev.Discard):
                    self.publisher.publish_event(ev.event_to_json(event))
                self.publisher.publish_state(self.snapshot())
            self._effects(effects)
        return None

    def _effects(self, effects: Sequence[Any]) -> None:
        for effect in effects:
            if isinstance(effect, DeadHand):
                self.consoles[effect.seat].message = "DEAD HAND"
            elif isinstance(effect, HandSettled):
                self._hand_settled(effect.record.deltas)
            elif isinstance(effect, StopOffered):
                self.consoles[effect.dealer].prompt = "STOP?"
            elif isinstance(effect, GameOver):
                if self.on_game_over is not None:
                    self.on_game_over(effect.final)
                if self.publisher is not None:
                    self.publisher.publish_game(self.game_result(effect.final))

    def _check_after(
        self, implied: Sequence[ev.Event], check: Callable[[GameState], Refusal | None]
    ) -> Refusal | None:
        """``check`` on the state ``implied`` would lead to, applying nothing; a refusal
        of ``implied`` itself comes back as it is."""
        state = self.state
        for event in implied:
            state, effects = step(state, event)
            if effects and isinstance(effects[0], Refusal):
                return effects[0]
        return check(state)

    def _refuse(self, seat: int, refusal: Refusal | str) -> None:
        text = refusal.message if isinstance(refusal, Refusal) else refusal
        self.consoles[seat].message = _fit("! " + text)
        log.info("[%s] seat %d refused: %s", self.table_id, seat, text)
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100))

    def _hand_settled(self, deltas: Sequence[int]) -> None:
        self.pending = Pending(kind="confirm", seats=list(range(self.players)))
        for seat, console in enumerate(self.consoles):
            console.prompt = "CONFIRM"
            console.typed = ""
            console.message = _fit(f"{_signed(deltas[seat])} = {self.state.scores[seat]}")
        if self.state.finished:
            for console in self.consoles:
                console.prompt = "GAME OVER"
            self._show_final()
        self.claim_deadline = None
        self.tray_override = False
        self._compare_trays()

    def _show_final(self) -> None:
        final = self.state.final
        assert final is not None
        for seat, console in enumerate(self.consoles):
            rank = final.ranking.index(seat) + 1
            console.message = _fit(f"#{rank} {final.scores[seat]}")

    # ------------------------------------------------------------------ hand cycle

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
        self.walls_done.clear()
        self.pending = None
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

    async def _dice(self, a: int, b: int) -> None:
        if self.phase != "table_dice":
            log.warning("[%s] dice %d+%d outside a roll ignored", self.table_id, a, b)
            return
        refusal = self._apply(ev.Dice(dice=(a, b)))
        if refusal is not None:
            await self._fault(m.FaultCode.DICE, refusal.message)
            return
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
        refusal = self._apply(*self._implied_discard(actor=seat), ev.Take(seat=seat, pos=pos))
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        self.consoles[seat].message = ""
        wall = self.state.wall
        if self.phase == "table_dealing" and wall is not None and wall.phase != "deal":
            await self._trigger("dealt")

    def _implied_discard(self, actor: int) -> tuple[ev.Event, ...]:
        """Discards are not sensed: the seat that drew has discarded once another acts."""
        wall = self.state.wall
        seat = None if wall is None else implied_discarder(wall, actor)
        return () if seat is None else (ev.Discard(seat=seat),)

    # ------------------------------------------------------------------ keys

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
            spec = PROMPTS[console.prompt]
            if not spec.accepts(key):
                self._refuse(seat, spec.refusal())
                return
            await self._prompt_key(seat, key)
            return
        if key not in idle_spec(self.phase).keys:
            self._refuse(seat, "not now")
            return
        if key == m.Key.DIGIT_0:
            console.page = (console.page + 1) % 3
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
            await self._open_entry("tsumo", [seat], ())
        elif key == m.Key.RON:
            await self._ron_key(seat)
        elif key in (m.Key.PON, m.Key.CHI, m.Key.KAN):
            await self._call_key(seat, key)
        elif key in (m.Key.TENPAI, m.Key.NOTEN):
            await self._draw_key(seat, key)

    def _open(self, seat: int, prompt: str, *, typed: str = "") -> None:
        """Put ``prompt`` on ``seat``'s display (a prompt only stands in its phases)."""
        spec = PROMPTS[prompt]
        if self.phase not in spec.phases:
            raise FlowError(f"prompt {prompt} opened in {self.phase}")
        console = self.consoles[seat]
        console.prompt, console.typed = prompt, typed

    def _note(self, kind: str, seat: int | None, detail: dict[str, Any] | None = None) -> None:
        """Journal and publish something staff may look up later."""
        detail = detail or {}
        if self.recorder is not None:
            self.recorder.note(kind, seat, detail)
        if self.publisher is not None:
            self.publisher.publish_event({"type": kind, "seat": seat, **detail})
        log.info("[%s] %s seat %s %s", self.table_id, kind, seat, detail)

    def _discarder_for_claim(self, seat: int) -> int | str:
        """Whose discard ``seat`` is claiming, or why there is none."""
        wall = self.state.wall
        if wall is None or self.rules.wall.own_walls:
            return "FROM?"
        if wall.phase in ("discard", "called") and wall.turn != seat:
            return wall.turn
        if wall.phase == "claim" and wall.last_discard is not None:
            return wall.last_discard
        if wall.phase == "rinshan" and wall.turn != seat:
            return wall.turn
        return "no discard to claim"

    async def _ron_key(self, seat: int) -> None:
        target = self._discarder_for_claim(seat)
        if target == "FROM?":
            self.pending = Pending(kind="from", seats=[seat], call_kind="ron")
            self.consoles[seat].prompt = "FROM?"
            return
        if isinstance(target, str):
            self._refuse(seat, target)
            return
        implied = self._implied_discard(actor=seat)
        refusal = self._check_after(
            implied, lambda after: walltrack.check_ron(after, (target,), (seat,))
        )
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        self._apply(*implied)
        if self.phase == "table_playing_claim" and self.pending and self.pending.kind == "claim":
            self._join_claim(seat)
            return
        others = [s for s in range(self.players) if s not in (seat, target)]
        self.pending = Pending(kind="claim", discarders=(target,), seats=[seat], answered={seat})
        for other in others:
            self.consoles[other].prompt = "RON?"
        await self._trigger("claim_opened")
        self.claim_deadline = self.now() + self.claim_window_s
        if len(self.pending.answered) >= self.players - 1:
            await self._close_claim()

    def _join_claim(self, seat: int) -> None:
        assert self.pending is not None
        if seat not in self.pending.seats:
            self.pending.seats.append(seat)
        self.pending.answered.add(seat)
        self.consoles[seat].prompt = ""

    async def _close_claim(self) -> None:
        pending = self.pending
        self.claim_deadline = None
        if pending is None or pending.kind != "claim":
            return
        for console in self.consoles:
            if console.prompt == "RON?":
                console.prompt = ""
        await self._trigger("claim_closed")
        await self._open_entry("ron", pending.seats, pending.discarders)

    async def _open_entry(self, kind: str, seats: list[int], discarders: tuple[int, ...]) -> None:
        self.pending = Pending(
            kind=kind,
            discarders=discarders,
            seats=list(seats),
            entries={s: WinEntry(seat=s) for s in seats},
        )
        for seat in seats:
            self.consoles[seat].prompt = "HAN?"
            self.consoles[seat].typed = ""
        await self._trigger("enter_result")

    async def _call_key(self, seat: int, key: m.Key) -> None:
        wall = self.state.wall
        if key == m.Key.KAN and wall is not None and wall.phase == "discard" and wall.turn == seat:
            self.consoles[seat].prompt = "KAN?"
            return
        target = self._discarder_for_claim(seat)
        kind = {m.Key.PON: "pon", m.Key.CHI: "chi", m.Key.KAN: "kan"}[key]
        if target == "FROM?":
            self.pending = Pending(kind="from", seats=[seat], call_kind=kind)
            self.consoles[seat].prompt = "FROM?"
            return
        if isinstance(target, str):
            self._refuse(seat, target)
            return
        call = ev.Call(seat=seat, kind=kind, discarder=target)  # type: ignore[arg-type]
        refusal = self._apply(*self._implied_discard(actor=seat), call)
        if refusal is not None:
            self._refuse(seat, refusal)

    async def _draw_key(self, seat: int, key: m.Key) -> None:
        wall = self.state.wall
        implied = (
            () if wall is None else self._implied_discard(actor=(wall.turn + 1) % self.players)
        )
        refusal = self._check_after(implied, walltrack.check_draw)
        if refusal is not None:
            self._refuse(seat, refusal)
            return
        self._apply(*implied)
        self.pending = Pending(kind="draw", seats=list(range(self.players)))
        for console in self.consoles:
            console.prompt = "TENPAI?"
        await self._trigger("enter_result")
        await self._prompt_key(seat, key)

    # ------------------------------------------------------------------ prompts

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
            "PIN?": self._pin_prompt,
            "RULES?": self._rules_prompt,
        }[prompt]
        await handler(seat, key)

    async def _roll_prompt(self, seat: int, key: m.Key) -> None:
        if self.tray_mismatch and self.hold_on_tray_mismatch and not self.tray_override:
            self._refuse(seat, "fix trays/STAFF 5")
            return
        if key == m.Key.OK:
            self.consoles[seat].prompt = ""
            await self._trigger("roll")
            self.post_command(m.DiceRoll())

    async def _ron_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        if pending is None or pending.kind != "claim":
            self.consoles[seat].prompt = ""
            return
        if key == m.Key.RON:
            refusal = walltrack.check_ron(self.state, pending.discarders, (seat,))
            if refusal is not None:
                self._refuse(seat, refusal)
                return
            self._join_claim(seat)
        elif key == m.Key.CANCEL:
            pending.answered.add(seat)
            self.consoles[seat].prompt = ""
        if len(pending.answered) >= self.players - len(pending.discarders):
            await self._close_claim()

    def _entry(self, seat: int) -> WinEntry | None:
        if self.pending is None:
            return None
        return self.pending.entries.get(seat)

    async def _han_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9 and len(console.typed) < 2 and not entry.yakuman:
            console.typed += str(int(key))
        elif key == m.Key.MENU:
            entry.yakuman = entry.yakuman % 6 + 1
            console.typed = f"YAKUMAN x{entry.yakuman}"
        elif key == m.Key.CANCEL:
            if console.typed:
                console.typed = ""
                entry.yakuman = 0
            else:
                await self._cancel_entry(seat)
        elif key == m.Key.OK:
            if entry.yakuman:
                entry.han, entry.fu = 0, None
                if self.rules.scoring.pao:
                    console.prompt, console.typed = "PAO?", ""
                    return
                await self._entry_done(seat)
                return
            if not console.typed or int(console.typed) < 1:
                self._refuse(seat, "enter the han, then OK")
                return
            entry.han = int(console.typed)
            console.typed = ""
            if self.rules.scoring.table == "standard" and entry.han < 5:
                console.prompt = "FU?"
            else:
                entry.fu = None
                await self._entry_done(seat)

    async def _fu_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9 and len(console.typed) < 3:
            console.typed += str(int(key))
        elif key == m.Key.CANCEL:
            console.prompt, console.typed = "HAN?", ""
        elif key == m.Key.OK and console.typed:
            entry.fu = int(console.typed)
            console.typed = ""
            await self._entry_done(seat)

    async def _pao_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        entry = self._entry(seat)
        if entry is None:
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9:
            entry.pao = int(key)
            console.typed = str(int(key))
        elif key == m.Key.CANCEL:
            console.prompt, console.typed = "HAN?", ""
            entry.yakuman, entry.pao = 0, None
        elif key == m.Key.OK:
            console.typed = ""
            await self._entry_done(seat)

    async def _cancel_entry(self, seat: int) -> None:
        pending = self.pending
        assert pending is not None
        pending.entries.pop(seat, None)
        if seat in pending.seats:
            pending.seats.remove(seat)
        self.consoles[seat].prompt = ""
        self.consoles[seat].typed = ""
        if not pending.entries:
            self.pending = None
            await self._trigger("entry_cancelled")
        elif all(e.done for e in pending.entries.values()):
            await self._submit_win()

    async def _entry_done(self, seat: int) -> None:
        entry = self._entry(seat)
        assert entry is not None and self.pending is not None
        entry.done = True
        self.consoles[seat].prompt = ""
        self.consoles[seat].message = "WAIT"
        if all(e.done for e in self.pending.entries.values()):
            await self._submit_win()

    async def _submit_win(self) -> None:
        pending = self.pending
        assert pending is not None
        hands = tuple(
            ev.Hand(seat=e.seat, han=e.han, fu=e.fu, yakuman=e.yakuman, pao=e.pao)
            for e in (pending.entries[s] for s in pending.seats)
        )
        event: ev.Event
        if pending.kind == "tsumo":
            event = ev.Tsumo(hand=hands[0])
        else:
            event = ev.Ron(discarders=pending.discarders, winners=hands)
        refusal = self._apply(event)
        if refusal is None:
            await self._trigger("hand_over")
            return
        # Start the entry over on every winner's console, with the reason shown.
        for seat, entry in pending.entries.items():
            pending.entries[seat] = WinEntry(seat=entry.seat)
            self.consoles[seat].prompt = "HAN?"
            self.consoles[seat].typed = ""
            self._refuse(seat, refusal)

    async def _from_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        pending = self.pending
        if pending is None or pending.kind != "from":
            console.prompt = ""
            return
        if key <= m.Key.DIGIT_9:
            digit = str(int(key))
            console.typed = (
                console.typed.replace(digit, "")
                if digit in console.typed
                else (console.typed + digit)
            )
        elif key == m.Key.CANCEL:
            console.prompt, console.typed = "", ""
            self.pending = None
        elif key == m.Key.OK and console.typed:
            discarders = tuple(int(c) for c in console.typed)
            console.prompt, console.typed = "", ""
            self.pending = None
            implied = self._implied_discard(actor=seat)
            if pending.call_kind == "ron":
                bad = self._check_after(
                    implied, lambda after: walltrack.check_ron(after, discarders, (seat,))
                )
                if bad is not None:
                    self._refuse(seat, bad)
                    return
                self._apply(*implied)
                await self._open_entry("ron", [seat], discarders)
            else:
                call = ev.Call(seat=seat, kind=pending.call_kind, discarder=discarders[0])  # type: ignore[arg-type]
                refusal = self._apply(*implied, call)
                if refusal is not None:
                    self._refuse(seat, refusal)

    async def _kan_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        choices: dict[m.Key, ev.Event] = {
            m.Key.DIGIT_1: ev.Kan(seat=seat, kind="closed"),
            m.Key.DIGIT_2: ev.Kan(seat=seat, kind="added"),
            m.Key.DIGIT_3: ev.North(seat=seat),
        }
        event = choices.get(key)
        if key == m.Key.CANCEL:
            console.prompt = ""
        elif event is not None:
            console.prompt = ""
            refusal = self._apply(event)
            if refusal is not None:
                self._refuse(seat, refusal)

    async def _abort_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.choice = "", "", None
        elif int(key) in ABORT_MENU:
            console.choice = int(key)
            console.typed = ABORT_LABELS[int(key)]
        elif key == m.Key.OK and console.choice is not None:
            reason = ABORT_MENU[console.choice]
            console.prompt, console.typed, console.choice = "", "", None
            abort = ev.Abort(reason=reason)
            refusal = self._apply(abort)
            wall = self.state.wall
            if refusal is not None and wall is not None:
                # Four winds and four kans come after a discard, which is not sensed.
                implied = self._implied_discard(actor=(wall.turn + 1) % self.players)
                if implied and self._apply(*implied, abort) is None:
                    refusal = None
            if refusal is not None:
                self._refuse(seat, refusal)
            elif self.phase.startswith(HAND_PHASES):
                await self._trigger("hand_over")

    async def _staff_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt = ""
            return
        choice = int(key)
        if choice == 0:  # calling staff is open to everyone
            console.prompt = ""
            self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.LONG, duration_ms=1000))
            console.message = "STAFF CALLED"
            self._note("staff_call", seat)
            return
        why = self._staff_unavailable(choice)
        if why is not None:
            console.prompt = ""
            self._refuse(seat, why)
            return
        console.choice = choice
        self._open(seat, "PIN?")
        console.message = _fit(STAFF_MENU[choice].upper())

    def _staff_unavailable(self, choice: int) -> str | None:
        """Why staff action ``choice`` cannot be taken now (before asking for the PIN)."""
        if not self.staff.configured:
            return "no staff PIN set"
        locked = self.staff.locked_for()
        if locked > 0:
            return f"staff locked {int(locked) + 1} s"
        phase = self.phase
        if choice in (1, 2) and phase not in prompts.HAND_PHASES:
            return "no hand now"
        if choice == 3:
            return self._correction_unavailable()
        if choice == 5 and not self.tray_mismatch:
            return "the trays agree"
        return None

    def _correction_unavailable(self) -> str | None:
        """Why the last hand cannot be corrected now, or None."""
        return "corrections come with the undo event"

    async def _pin_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.choice, console.message = "", "", None, ""
            return
        if key <= m.Key.DIGIT_9:
            if len(console.typed) < 8:
                console.typed += str(int(key))
            return
        pin, console.typed = console.typed, ""
        choice = console.choice
        action = STAFF_MENU.get(choice or 0, "?")
        verdict = self.staff.check(pin)
        if verdict != "ok":
            self._note("staff_pin_failed", seat, {"action": action, "verdict": verdict})
            console.prompt, console.choice = "", None
            self._refuse(
                seat,
                {
                    "wrong": "wrong PIN",
                    "locked": f"PIN: locked {int(LOCKOUT_S)} s",
                    "still_locked": f"staff locked {int(self.staff.locked_for()) + 1} s",
                    "not_configured": "no staff PIN set",
                }[verdict],
            )
            return
        console.staff, console.choice, console.message = choice, None, ""
        why = None if choice is None else self._staff_unavailable(choice)
        if choice is None or why is not None:
            console.prompt, console.staff = "", None
            self._refuse(seat, why or "choose again")
            return
        if choice in (1, 2):
            self._open(seat, "SEAT?")
            console.message = _fit(action.upper())
        elif choice == 4:
            self._open(seat, "RULES?", typed="0")
            console.message = _fit(self.rules_menu[0])
        elif choice == 5:
            console.prompt, console.staff = "", None
            self.tray_override = True
            self._note("staff_action", seat, {"action": "tray_override"})
            console.message = "TRAYS: PLAY ON"

    async def _seat_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key <= m.Key.DIGIT_9:
            if int(key) < self.players:
                console.typed = str(int(key))
            else:
                self._refuse(seat, f"seats are 0-{self.players - 1}")
        elif key == m.Key.CANCEL:
            console.prompt, console.typed, console.staff = "", "", None
        elif key == m.Key.OK and console.typed:
            target = int(console.typed)
            chombo = console.staff == 1
            event: ev.Event = ev.Chombo(seat=target) if chombo else ev.FalseCall(seat=target)
            console.prompt, console.typed, console.staff = "", "", None
            if chombo:
                # A chombo ends the hand: whatever was being entered is void.
                self.pending = None
                self.claim_deadline = None
            refusal = self._apply(event)
            if refusal is not None:
                self._refuse(seat, refusal)
                return
            action = "chombo" if chombo else "false_call"
            self._note("staff_action", seat, {"action": action, "target": target})
            if chombo and self.phase in prompts.HAND_PHASES:
                await self._trigger("hand_over")
        else:
            self._refuse(seat, "a seat digit, then OK")

    async def _rules_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        menu = self.rules_menu
        if key == m.Key.CANCEL:
            console.prompt, console.typed, console.staff, console.message = "", "", None, ""
            return
        index = int(console.typed or 0)
        if key == m.Key.MENU:
            index = (index + 1) % len(menu)
        elif key <= m.Key.DIGIT_9:
            if int(key) >= len(menu):
                self._refuse(seat, f"rules 0-{len(menu) - 1}; MENU: next")
                return
            index = int(key)
        if key != m.Key.OK:
            console.typed = str(index)
            console.message = _fit(menu[index])
            return
        console.prompt, console.typed, console.staff, console.message = "", "", None, ""
        ref = menu[index]
        failure = await self.new_game(ref, by=f"seat {seat}")
        if failure is not None:
            self._refuse(seat, failure)

    # ------------------------------------------------------------------ game control

    async def new_game(self, rules_ref: str | None = None, *, by: str = "ctl") -> str | None:
        """Staff end the game in progress (kept as abandoned unless it had finished) and
        start a new one, with other rules if ``rules_ref`` names them. Returns why not,
        changing nothing, or None."""
        rules = self.rules
        ref = self.rules_ref if rules_ref is None else rules_ref
        if ref != self.rules_ref:
            if self.load_rules is None:
                return "this table cannot change its rules"
            try:
                rules = self.load_rules(ref)
            except ValueError as exc:
                return f"rules {ref!r}: {exc}"
            if rules.players != self.players:
                return f"{ref} is for {rules.players} players; this table has {self.players}"
        if not self.phase.startswith("table_"):
            return "the table is not connected"
        abandoned = self.game_started and not self.state.finished
        if abandoned:
            if self.recorder is not None:
                self.recorder.game_abandoned()
            if self.publisher is not None:
                self.publisher.publish_game(
                    {
                        "table": self.table_id,
                        "rules": self.rules.name,
                        "abandoned": True,
                        "scores": list(self.state.scores),
                    }
                )
        self._note(
            "staff_action",
            None,
            {"action": "new_game", "by": by, "rules": ref, "abandoned": abandoned},
        )
        self.rules, self.rules_ref = rules, ref
        self.rules_menu = tuple(dict.fromkeys((ref, *self.rules_menu)))
        self.state = initial_state(rules)
        self.game_started = False
        self.clock_started = None
        self.pending = None
        self.claim_deadline = None
        self.tray_mismatch.clear()
        self.tray_override = False
        for console in self.consoles:
            console.prompt, console.typed, console.choice, console.staff = "", "", None, None
            console.message, console.last_game = "", False
        await self._trigger("abandon")
        await self._start_hand()
        return None

    async def correct_last_hand(self, *, by: str = "ctl") -> str | None:
        """Staff reopen the last settled hand for entry again. Returns why not, or None."""
        return self._correction_unavailable()

    def status(self) -> dict[str, Any]:
        """What ``tablectl ctl status`` shows: the live state and what staff may need."""
        return {
            **self.snapshot(),
            "rules_ref": self.rules_ref,
            "faults": sorted(code.name for code in self.faults),
            "tray_mismatch": {str(k): v for k, v in sorted(self.tray_mismatch.items())},
            "staff_locked_s": round(self.staff.locked_for(), 1),
            "last_game": [s for s, c in enumerate(self.consoles) if c.last_game],
            "prompts": [c.prompt for c in self.consoles],
        }

    async def _tenpai_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        console = self.consoles[seat]
        if pending is None or pending.kind != "draw":
            console.prompt = ""
            return
        if key == m.Key.MENU and self.rules.flow.nagashi != "none":
            pending.nagashi ^= {seat}
            console.typed = "NAGASHI" if seat in pending.nagashi else ""
            return
        if key not in (m.Key.TENPAI, m.Key.NOTEN):
            return
        if key == m.Key.TENPAI:
            pending.tenpai.add(seat)
        pending.answered.add(seat)
        console.prompt, console.typed = "", ""
        console.message = "TENPAI" if key == m.Key.TENPAI else "NOTEN"
        if len(pending.answered) < self.players:
            return
        draw = ev.Draw(tenpai=tuple(sorted(pending.tenpai)), nagashi=tuple(sorted(pending.nagashi)))
        refusal = self._apply(draw)
        if refusal is None:
            await self._trigger("hand_over")
            return
        self.pending = Pending(kind="draw", seats=list(range(self.players)))
        for other in range(self.players):
            self.consoles[other].prompt = "TENPAI?"
            self._refuse(other, refusal)

    async def _stop_prompt(self, seat: int, key: m.Key) -> None:
        console = self.consoles[seat]
        if key == m.Key.OK:
            refusal = self._apply(ev.Stop())
            if refusal is not None:
                self._refuse(seat, refusal)
                console.prompt = "CONFIRM"
                return
            # The game is over: everyone confirms the final result.
            self.pending = Pending(kind="confirm", seats=list(range(self.players)))
            for other in self.consoles:
                other.prompt = "GAME OVER"
            self._show_final()
        elif key == m.Key.CANCEL:
            console.prompt = "CONFIRM"
            await self._confirm_prompt(seat, m.Key.OK)

    async def _confirm_prompt(self, seat: int, key: m.Key) -> None:
        pending = self.pending
        if key != m.Key.OK or pending is None or pending.kind != "confirm":
            return
        pending.answered.add(seat)
        self.consoles[seat].prompt = ""
        if len(pending.answered) < self.players or any(c.prompt == "STOP?" for c in self.consoles):
            return
        self.pending = None
        for console in self.consoles:
            console.message = ""
        if self.state.finished:
            if self.phase == "table_settlement":
                await self._trigger("game_ended")
            self.games_finished += 1
            if self.new_games:
                await self._new_game()
            return
        await self._trigger("next_hand")
        await self._start_hand()

    async def _new_game(self) -> None:
        self.state = initial_state(self.rules)
        self.game_started = False
        self.clock_started = None
        for console in self.consoles:
            console.last_game = False  # a LAST GAME call is for the game it was made in
        await self._trigger("new_game")
        await self._start_hand()

    async def _clear_fault(self) -> None:
        """OK on any seat while FAULT shows: clear the latched faults and go back to where
        the hand stood; the prompts the fault stood over come back."""
        for code in sorted(self.faults):
            self.post_command(m.FaultClear(code=code))
        self.faults.clear()
        self.fault_text = ""
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

    # ------------------------------------------------------------------ faults and trays

    async def _fault(self, code: m.FaultCode, text: str) -> None:
        if code == m.FaultCode.HOST_SILENT:
            log.warning("[%s] the table stopped its motors while we were away", self.table_id)
            self.post_command(m.FaultClear(code=code))
            if self.phase in ("table_shuffling", "table_walls_up"):
                await self._to("table_idle")
                await self._start_hand()
            elif self.phase == "table_dice":
                # The table reports its events in order, and this one when the line went:
                # had it rolled, its DiceResult would have come before. So our DiceRoll
                # was lost with the session (commands are not kept across it), and the
                # dealer, who already pressed OK, waits for dice that never come.
                log.info("[%s] the roll was lost with the link: rolling again", self.table_id)
                self.post_command(m.DiceRoll())
            return
        self.faults.add(code)
        if self.phase.startswith("table_"):
            self.resume_phase = self.phase
            await self._trigger("table_fault")
        self.fault_text = _fit(text or code.name.replace("_", " ").lower())
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.ALARM, duration_ms=500))

    def _trays(self, totals: Sequence[int]) -> None:
        if len(totals) != self.players:
            log.warning("[%s] tray totals for %d seats ignored", self.table_id, len(totals))
            return
        self.tray_totals = tuple(totals)
        self._compare_trays()

    def _compare_trays(self) -> None:
        """Compare the last tray totals with the scores; journal and publish a change."""
        totals = self.tray_totals
        if totals is None:
            return
        expected = self.state.scores
        mismatch = {
            seat: totals[seat] for seat in range(self.players) if totals[seat] != expected[seat]
        }
        if mismatch == self.tray_mismatch:
            return
        self.tray_mismatch = mismatch
        detail: dict[str, Any] = {"trays": list(totals), "scores": list(expected)}
        self._note("tray_mismatch" if mismatch else "trays_match", None, detail)
        if self.publisher is not None:
            self.publisher.publish_state(self.snapshot())

    # ------------------------------------------------------------------ displays

    def snapshot(self) -> dict[str, Any]:
        """The table's live state as a plain dict (MQTT state payload, tests)."""
        state = self.state
        wall = state.wall
        return {
            "table": self.table_id,
            "rules": self.rules.name,
            "phase": self.phase,
            "round": state.round_dict(),
            "dealer": state.dealer,
            "honba": state.honba,
            "deposits": state.kyoutaku,
            "scores": list(state.scores),
            "riichi": sorted(state.riichi),
            "tiles_left": wall.live_left if wall is not None else None,
            "finished": state.finished,
        }

    def game_result(self, final: Final) -> dict[str, Any]:
        """A finished game as published and printed by ``tablectl demo --json``."""
        return {"table": self.table_id, "rules": self.rules.name, "final": final.as_dict()}

    def seat_lines(self, seat: int) -> tuple[str, str]:
        """The two display lines of ``seat``."""
        console = self.consoles[seat]
        state = self.state
        if self.faults:
            return "FAULT", self.fault_text
        if console.prompt:
            typed = "*" * len(console.typed) if console.prompt == "PIN?" else console.typed
            if seat in self.tray_mismatch and not typed:
                # Sticks move while CONFIRM shows: the mismatch must stay in sight.
                typed = f"!TRAY {self.tray_mismatch[seat]}"
            line1 = f"{console.prompt} {typed}".rstrip()
            return _fit(line1), _fit(console.message)
        wind = "ESWN"[(seat - state.dealer) % self.players]
        # After the game the final scores (leftover deposits, adjustments) are what count.
        score = state.final.scores[seat] if state.final is not None else state.scores[seat]
        message = console.message
        if seat in self.tray_mismatch:
            message = f"! TRAY {self.tray_mismatch[seat]}"
        if console.page == 1:
            diffs = " ".join(
                _signed(score - state.scores[o]) for o in range(self.players) if o != seat
            )
            return _fit(f"{wind} DIFF"), _fit(diffs)
        if console.page == 2:
            order = sorted(range(self.players), key=lambda s: (-state.scores[s], s))
            return _fit(f"{wind} RANK {order.index(seat) + 1}/{self.players}"), _fit(str(score))
        tag = " LAST" if console.last_game else ""
        return _fit(f"{wind} {score}{tag}"), _fit(message)

    def _display_fields(self) -> list[tuple[type[m.Message], dict[str, Any]]]:
        """Every display and lamp command describing the table now, as a class and its
        field values (cheap to compare; building the message validates every field)."""
        state = self.state
        out: list[tuple[type[m.Message], dict[str, Any]]] = []
        for seat in range(self.players):
            line1, line2 = self.seat_lines(seat)
            out.append((m.SeatDisplay, {"seat": seat, "line1": line1, "line2": line2}))
            riichi = seat in state.riichi or seat == state.pending_riichi
            lamps = {"seat": seat, "dealer": seat == state.dealer, "riichi": riichi}
            out.append((m.SeatLamps, lamps))
        wall = state.wall
        clock = None
        limit = self.rules.game.time_limit_minutes
        if limit is not None and self.clock_started is not None:
            clock = max(0, int(limit * 60 - (self.now() - self.clock_started)))
        centre = {
            "round_wind": m.Wind(state.round_index % 4),
            "round_number": state.dealer + 1,
            "honba": min(state.honba, 255),
            "deposits": min(state.kyoutaku // 1000, 255),
            "tiles_left": min(wall.live_left, 136) if wall is not None else 0,
            "clock": clock,
        }
        out.append((m.CentreDisplay, centre))
        return out

    def refresh(self, force: bool = False) -> None:
        """Send the display and lamp commands that changed since they were last sent.

        Called after every table event; only the changed ones are built as messages (a key
        press usually changes one display of nine)."""
        if not self.phase.startswith("table_") and self.phase != "fault":
            return
        for cls, fields in self._display_fields():
            slot = (cls.__name__, int(fields.get("seat", 0)))
            if force or self.sent.get(slot) != fields:
                self.sent[slot] = fields
                self.post_command(cls(**fields))
