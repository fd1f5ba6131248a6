"""What every console flow shares: the rules state and ``apply``, the phase machine, the
seat consoles and their prompts, notes and alerts, the recorder and the publisher.

:class:`TableCore` is handed to every flow object (:mod:`.claim`, :mod:`.entry`,
:mod:`.endings`, :mod:`.confirm`, :mod:`.staffmenu`, :mod:`.tiles`, :mod:`.hand`, ...);
the flows change the table only through it and through the flows their constructor is
given. :meth:`TableCore.open` is the only way a prompt is shown (a test scans the package
for any other assignment to a console's ``prompt``).

The core also owns the interaction several flows hand to each other (``pending``: a claim
window becomes a win entry, a settled hand every seat's CONFIRM) and stores it with the
phase, the game clock and the consoles (:meth:`TableCore.snapshot`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal, Protocol

from firmware_bridge import messages as m
from tablectl.alerts import AlertBoard
from tablectl.console import clock
from tablectl.console.model import Pending, PendingKind, SeatConsole, WinEntry, fit
from tablectl.console.parlor_words import (
    call_words,
    seat_params,
    seat_words,
    tray_alert_params,
    tray_alert_words,
    win_values,
)
from tablectl.console.prompts import PROMPTS, STAFF_PROMPTS, Prompt
from tablectl.phases import PhaseModel, build_machine, destination, public_phase
from tablectl.rules import events as ev
from tablectl.rules.conditions import Conditions, conditions
from tablectl.rules.core import step
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import (
    DeadHand,
    Final,
    GameOver,
    GameState,
    HandRecord,
    HandSettled,
    StopOffered,
    initial_state,
)

log = logging.getLogger("tablectl.table")

#: Refusals of a tile-aware hand, said short enough for a display line (after ``! ``).
SHORT_REFUSALS = {
    "not_tenpai": "not tenpai",
    "open_riichi": "hand is open",
    "kuikae": "kuikae: swap call",
    "riichi_discard": "riichi: drawn tile",
    "riichi_call": "no call in riichi",
    "riichi_kan": "kan changes hand",
    "riichi_north": "north: drawn only",
    "tile_not_in_hand": "tile not in hand",
    "bad_meld": "not that meld",
    "not_north": "not a north",
    "tile_unknown": "tile not read",
    "too_few_terminals": "under 9 terminals",
    "not_same_wind": "not 4 same winds",
    "bad_chips": "bad chip count",
    "chips_need_riichi": "chips: riichi only",
    "chips_not_allowed": "no chips here",
}
#: A seat console's fields (all plain values), in the order the stored flow lists them.
_CONSOLE_FIELDS = tuple(f.name for f in dataclasses.fields(SeatConsole) if f.name != "under")


def tray_alert_text(trays: Sequence[int], scores: Sequence[int]) -> str:
    """The tray alert's text: each seat whose tray differs, as ``seat:tray/score``."""
    pairs = (f"{s}:{trays[s]}/{scores[s]}" for s in range(len(trays)) if trays[s] != scores[s])
    return "TRAY " + " ".join(pairs)


def raise_tray_alert(core: TableCore, trays: list[int], scores: list[int], now: float) -> None:
    """Raise the ``tray_mismatch`` alert: each differing tray and score, its seat named in
    words fixed now (the dealer and the seat names as they are when it is raised)."""
    dealer, names = core.state.dealer, core.seat_names
    words = tray_alert_words(trays, scores, dealer, names)
    params = tray_alert_params(trays, scores, dealer, names)
    text = tray_alert_text(trays, scores)
    core.alerts.raise_alert("tray_mismatch", None, text, now, words=words, params=params)


def console_snapshot(console: SeatConsole) -> dict[str, Any]:
    """A console's stored form, field by field (dataclasses.asdict's deep copy was half
    the cost of a flow snapshot, which every journalled event pays). ``under`` only when
    set: the staff menu over a prompt is rare, and snapshots without it stay as they were."""
    data = {f: getattr(console, f) for f in _CONSOLE_FIELDS}
    if console.under is not None:
        data["under"] = list(console.under)
    return data


def entry_snapshot(entry: WinEntry) -> dict[str, Any]:
    """A win entry's stored form (``dataclasses.asdict``); ``chips`` and
    ``counted_chips`` only when set: most presets have none, and their snapshots stay as
    they were."""
    data = dataclasses.asdict(entry)
    for unset in ("chips", "counted_chips"):
        if data[unset] is None:
            del data[unset]
    return data


def _prompt(name: Any) -> Prompt | Literal[""]:
    """A stored prompt name as its :class:`Prompt` ("" for none); ValueError if unknown."""
    if not name:
        return ""
    if name not in PROMPTS:
        raise ValueError(f"unknown prompt {name!r}")
    return Prompt(name)


class FlowError(RuntimeError):
    """A console flow asked the phase machine for a transition it does not have, or opened
    a prompt outside its phases: a bug in the flow declarations
    (tablectl.console.prompts), never the players' doing.
    """


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

    def publish_hand(self, hand: dict[str, Any]) -> None:
        """A hand was settled."""


@dataclasses.dataclass
class CoreConfig:
    """How a table was set up: what the core is constructed from (``Table``'s options)."""

    rules: HouseRules
    post: Callable[[m.Message], None]
    now: Callable[[], float]
    wall_time: Callable[[], float]
    recorder: Recorder | None = None
    publisher: Publisher | None = None
    table_id: str = "table"
    state: GameState | None = None
    #: None: no deadline, the window closes on the asked seats' answers alone.
    claim_window_s: float | None = 3.0
    new_games: bool = True
    on_game_over: Callable[[Final], None] | None = None
    rules_ref: str | None = None
    seat_names: Sequence[str] | None = None


class TableCore:
    """The state and the operations every console flow shares (see the module doc)."""

    def __init__(self, config: CoreConfig) -> None:
        rules = config.rules
        self.rules = rules
        self.rules_ref = config.rules_ref if config.rules_ref is not None else rules.name
        self.players = rules.players
        self.state = config.state if config.state is not None else initial_state(rules)
        self.post_command = config.post
        self.recorder = config.recorder
        self.publisher = config.publisher
        self.now = config.now
        #: Unix time, for when an alert was raised (``now`` is monotonic).
        self.wall_time = config.wall_time
        self.table_id = config.table_id
        self.claim_window_s = config.claim_window_s
        self.new_games = config.new_games
        self.on_game_over = config.on_game_over
        #: Called with each settled hand's record (the demo's plain output).
        self.on_hand_settled: Callable[[HandRecord], None] | None = None
        #: The flow that shows a settled hand (CONFIRM on every seat); set by the table.
        self.on_settled: Callable[[HandRecord], None] = lambda record: None
        #: Names the parlor's view shows for the seats (None: their winds).
        self.seat_names = tuple(config.seat_names) if config.seat_names is not None else None
        self.consoles = [SeatConsole() for _ in range(self.players)]
        #: The multi-seat interaction under way, handed from flow to flow (a claim window
        #: becomes a win entry, a settled hand every seat's CONFIRM), and the claim
        #: window's deadline.
        self.pending: Pending | None = None
        self.claim_deadline: float | None = None
        self.clock_started: float | None = None
        self.games_finished = 0
        #: What the table needs from staff (published with the state).
        self.alerts = AlertBoard()
        #: The last settled hand in its replay form (published with the state).
        self.last_hand: dict[str, Any] | None = None
        self.state_model: Any = PhaseModel()
        self.machine: Any = build_machine(self.state_model)
        #: Where the hand stood when the link dropped or a fault came (resumed there).
        self.resume_phase = "table_idle" if self.state.wall is None else "table_playing_turn"
        #: Link sessions so far (each ``link_up``), and the one the last DiceRoll went out
        #: in: a HOST_SILENT fault tells of a session before the current one.
        self.sessions = 0
        self.roll_session: int | None = None
        #: The all-last conditions and the rules state they were computed for.
        self._conditions_memo: tuple[GameState | None, Conditions | None] = (None, None)

    # ------------------------------------------------------------------ the phase

    @property
    def phase(self) -> str:
        """The current phase name (``table_playing_turn`` ...)."""
        return str(self.state_model.state)

    def in_play(self) -> bool:
        """The table is in one of its ``table_`` phases (not offline, nor in a fault)."""
        return self.phase.startswith("table_")

    async def to(self, phase: str) -> None:
        """Go straight to ``phase`` (a resume after a fault or a reconnect)."""
        await getattr(self.state_model, f"to_{phase}")()
        self.sweep_prompts()

    async def trigger(self, name: str) -> None:
        """Fire ``name``; only transitions the machine has from here are ever asked for."""
        if name not in self.machine.get_triggers(self.phase):
            raise FlowError(f"no transition {name!r} from {self.phase}")
        await self.state_model.trigger(name)
        self.sweep_prompts()
        # The parlor sees every phase change, the end of a game included.
        self.publish_state()

    # ------------------------------------------------------------------ prompts

    def open(
        self,
        seat: int,
        prompt: Prompt,
        *,
        typed: str | None = "",
        message: str | None = "",
        entering: str | None = None,
    ) -> None:
        """Put ``prompt`` on ``seat``'s display; it only stands in its declared phases:
        the current one, or the one the trigger ``entering`` (fired next) leads to.

        A prompt opens with a clean ``typed`` and second line unless told what to show
        (None keeps what the console has)."""
        spec = PROMPTS[prompt]
        phase = self.phase if entering is None else destination(entering, self.phase)
        if phase not in spec.phases:
            raise FlowError(f"prompt {prompt} opened in {phase}")
        console = self.consoles[seat]
        console.prompt = prompt
        if typed is not None:
            console.typed = typed
        if message is not None:
            console.message = message

    def close(self, seat: int) -> None:
        """Take ``seat``'s prompt down (what it typed or chose is the caller's to clear)."""
        self.consoles[seat].prompt = ""

    def back_from_staff(self, seat: int) -> None:
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

    def sweep_prompts(self) -> None:
        """Clear every prompt that does not belong to the phase just entered, so that a
        prompt's keys are only ever handled in the phases it declares."""
        phase = self.phase
        if not phase.startswith("table_"):
            return  # offline or a fault: the prompts wait for the table to come back
        for console in self.consoles:
            prompt = console.prompt
            if prompt and phase not in PROMPTS[prompt].phases:
                console.prompt, console.typed, console.choice, console.staff = "", "", None, None
                console.under = None
            if console.under is not None and phase not in PROMPTS[console.under[0]].phases:
                console.under = None  # the prompt the staff menu stands over is done with

    def clear_consoles(self) -> None:
        """Every seat's prompt, entry and second line cleared (the hand starts over)."""
        for console in self.consoles:
            console.prompt, console.typed, console.choice, console.staff = "", "", None, None
            console.message = ""

    def refuse(self, seat: int, refusal: Refusal | str) -> None:
        """Say why not on ``seat``'s second line, with a beep; nothing else changes."""
        if isinstance(refusal, Refusal):
            text = SHORT_REFUSALS.get(refusal.code, refusal.message)
        else:
            text = refusal
        console = self.consoles[seat]
        console.message = fit("! " + text)
        # Line 2 is the score page's: another page (the conditions page an all-last hand
        # opens on) would hide why the key did nothing.
        console.page = 0
        log.info("[%s] seat %d refused: %s", self.table_id, seat, text)
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100))

    def entry(self, seat: int) -> WinEntry | None:
        """``seat``'s win entry in the pending interaction, if it has one."""
        if self.pending is None:
            return None
        return self.pending.entries.get(seat)

    # ------------------------------------------------------------------ the rules core

    def apply(self, *events: ev.Event) -> Refusal | None:
        """Apply ``events`` together: all are accepted, or nothing changes.

        Each accepted event is recorded (the journal) before anything it causes is sent.
        """
        staged: list[tuple[ev.Event, GameState, GameState, tuple[Any, ...]]] = []
        state = self.state
        for event in events:
            before = state
            state, effects = step(state, event)
            for effect in effects:
                if isinstance(effect, Refusal):
                    return effect
            staged.append((event, before, state, effects))
        for event, before, new_state, effects in staged:
            if self.recorder is not None:
                self.recorder.event_accepted(event, new_state)
            self.state = new_state
            if self.publisher is not None:
                # Takes and discards reach the parlor as tiles left in the state, not as
                # events: a parlor follows scores, and a fast table makes ~70 takes a hand
                # (nor does the wall's layout: the parlor is not to see the tiles).
                if not isinstance(event, ev.Dice | ev.Layout | ev.Deal | ev.Take | ev.Discard):
                    payload = {**ev.event_to_json(event), "scores": list(new_state.scores)}
                    self.publisher.publish_event(payload)
                self.publisher.publish_state(self.live_state())
            self._effects(effects, event, before)
        return None

    def _effects(self, effects: Sequence[Any], event: ev.Event, before: GameState) -> None:
        for effect in effects:
            if isinstance(effect, DeadHand):
                self.consoles[effect.seat].message = "DEAD HAND"
            elif isinstance(effect, HandSettled):
                self.last_hand = effect.record.as_dict()
                if self.publisher is not None:
                    self.publisher.publish_hand(
                        {
                            "table": self.table_id,
                            "game_id": getattr(self.recorder, "game_id", None),
                            "hand": self.state.hands_played,
                            **self.last_hand,
                            "chips": list(effect.record.chips),  # MQTT revision 4
                            "scores": list(self.state.scores),
                            # MQTT revision 5: the hand's own winds, riichi and values.
                            "dealer": before.dealer,
                            "riichi": sorted(before.riichi),
                            "values": win_values(event, self.pending),
                        }
                    )
                self.on_settled(effect.record)
                if self.on_hand_settled is not None:
                    self.on_hand_settled(effect.record)
            elif isinstance(effect, StopOffered):
                # Shown with the settlement the hand's end leads to.
                self.open(
                    effect.dealer, Prompt.STOP, typed=None, message=None, entering="hand_over"
                )
            elif isinstance(effect, GameOver):
                if self.on_game_over is not None:
                    self.on_game_over(effect.final)
                if self.publisher is not None:
                    self.publisher.publish_game(self.game_result(effect.final))

    def state_after(self, events: Sequence[ev.Event]) -> GameState | Refusal:
        """The state ``events`` would lead to (applying nothing), or the first refusal."""
        state = self.state
        for event in events:
            state, effects = step(state, event)
            refusal = next((e for e in effects if isinstance(e, Refusal)), None)
            if refusal is not None:
                return refusal
        return state

    def check_after(
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

    def conditions(self) -> Conditions | None:
        """The all-last conditions of the hand in progress (None when it cannot be the
        last), computed once per rules state."""
        if self._conditions_memo[0] is not self.state:
            self._conditions_memo = (self.state, conditions(self.state))
        return self._conditions_memo[1]

    # ------------------------------------------------------------------ the clocks

    def open_claim_window(self) -> None:
        """Start the claim window's deadline, ``claim_window_s`` from now. Without one
        (None: every seat is a bot that answers at once, as in ``tablectl demo``) the
        window closes on the last answer alone: a deadline could only cut off an answer
        still on its way, and which answers count would then depend on the machine's
        load."""
        window = self.claim_window_s
        self.claim_deadline = None if window is None else self.now() + window

    def clock_seconds(self) -> int | None:
        """Seconds left on the game clock (see :func:`clock.seconds_left`)."""
        return clock.seconds_left(self.rules, self.clock_started, self.now())

    def clock_text(self) -> str | None:
        """The game clock as ``MM:SS`` (None without one)."""
        return clock.as_text(self.clock_seconds())

    def clock_ran_out(self) -> bool:
        """The game's time is up and the hand in progress is not yet its last."""
        return clock.ran_out(self.rules, self.clock_started, self.now(), self.state)

    # ------------------------------------------------------------------ the parlor

    def live_state(self) -> dict[str, Any]:
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

    def publish_state(self) -> None:
        """Send the parlor the table's state as it is now (retained: latest only)."""
        if self.publisher is not None:
            self.publisher.publish_state(self.live_state())

    def note(self, kind: str, seat: int | None, detail: dict[str, Any] | None = None) -> None:
        """Journal and publish something staff may look up later."""
        detail = detail or {}
        if self.recorder is not None:
            self.recorder.note(kind, seat, detail)
        if self.publisher is not None:
            self.publisher.publish_event({"type": kind, "seat": seat, **detail})
        log.info("[%s] %s seat %s %s", self.table_id, kind, seat, detail)
        if self.alert_for_note(kind, seat, detail):
            self.publish_state()

    def alert_for_note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> bool:
        """Raise or end the alert a note means for staff; True if the board changed."""
        before = self.alerts.as_list()
        now = self.wall_time()
        if kind == "staff_call" and seat is not None:
            self.raise_call("staff_call", seat, now)
        elif kind == "last_game" and seat is not None:
            if detail.get("on"):
                self.raise_call("last_game", seat, now)
            else:
                self.alerts.resolve("last_game", seat)
        elif kind == "tray_mismatch":
            raise_tray_alert(self, detail["trays"], detail["scores"], now)
        elif kind == "trays_match":
            self.alerts.resolve("tray_mismatch")
        return self.alerts.as_list() != before

    def raise_call(self, kind: Literal["staff_call", "last_game"], seat: int, now: float) -> None:
        """Raise a player's call for staff, its seat named in words as it is now."""
        dealer, names = self.state.dealer, self.seat_names
        where = seat_words(seat, dealer, self.players, names)
        text, words = call_words(kind, where)
        params = seat_params(seat, dealer, self.players, names)
        self.alerts.raise_alert(kind, seat, text, now, where=where, words=words, params=params)

    def acknowledge_alert(self, alert_id: str, by: str, *, via: str) -> str | None:
        """Staff member ``by`` acknowledged an alert (from the parlor's dashboard, or
        ``tablectl ctl``): journalled as a staff action and published. Returns why not,
        or None."""
        alert = self.alerts.acknowledge(alert_id, by)
        if alert is None:
            return f"no open alert {alert_id!r} to acknowledge"
        detail = {"action": "alert_ack", "alert": alert.id, "kind": alert.kind, "by": by}
        self.note("staff_action", alert.seat, {**detail, "via": via})
        self.publish_state()
        return None

    def refuse_staff_request(self, action: str, by: str, why: str) -> None:
        """Tell the parlor why a staff request from it was not carried out (published,
        not journalled: nothing happened at the table)."""
        if self.publisher is not None:
            self.publisher.publish_event(
                {"type": "staff_refused", "seat": None, "action": action, "by": by, "why": why}
            )

    def note_parlor_refusal(
        self, action: str | None, by: str, why: str | None, counts: dict[str, int] | None
    ) -> None:
        """A staff request from the broker was refused unauthenticated (unsigned, forged,
        replayed): a ``staff_refused`` note, journalled like a wrong PIN and published;
        with ``counts``, a ``staff_refusals`` note for the many not noted one by one."""
        if counts is not None:
            self.note("staff_refusals", None, {"count": sum(counts.values()), "reasons": counts})
        else:
            detail = {"action": action or "unknown", "by": by, "why": why or "", "via": "mqtt"}
            self.note("staff_refused", None, detail)

    # ------------------------------------------------------------------ stored flow

    def stored_phase(self) -> str:
        """The phase the stored flow names (where the hand stands, even offline)."""
        phase = str(self.state_model.state)
        return phase if phase.startswith("table_") else self.resume_phase

    def snapshot(self) -> dict[str, Any]:
        """The phase, the game clock, the consoles and the pending interaction."""
        pending = None
        if self.pending is not None:
            p = self.pending
            pending = {
                "kind": p.kind,
                "discarders": list(p.discarders),
                "seats": list(p.seats),
                "answered": sorted(p.answered),
                "entries": [entry_snapshot(e) for e in p.entries.values()],
                "tenpai": sorted(p.tenpai),
                "nagashi": sorted(p.nagashi),
                "call_kind": p.call_kind,
            }
        started = self.clock_started
        return {
            "phase": self.stored_phase(),
            # Seconds the game clock had run (a time limit survives a restart; the time
            # the daemon was down is not counted).
            "clock_s": None if started is None else round(self.now() - started, 3),
            "consoles": [console_snapshot(c) for c in self.consoles],
            "pending": pending,
        }

    def key(self) -> Hashable:
        """The durable part of :meth:`snapshot` (no pages, messages, running clock)."""
        pending: tuple[Any, ...] | None = None
        if self.pending is not None:
            p = self.pending
            pending = (
                p.kind,
                p.discarders,
                tuple(p.seats),
                frozenset(p.answered),
                tuple(
                    (
                        (e.seat, e.han, e.fu, e.yakuman, e.pao, e.done, e.scored, len(e.each))
                        + ((e.chips,) if e.chips is not None else ())
                    )
                    for e in p.entries.values()
                ),
                frozenset(p.tenpai),
                frozenset(p.nagashi),
                p.call_kind,
            )
        return (
            self.stored_phase(),
            tuple((c.prompt, c.typed, c.choice, c.last_game, c.staff) for c in self.consoles),
            pending,
            self.clock_started is None,
        )

    def restore(self, snapshot: dict[str, Any]) -> Callable[[], None]:
        """Read :meth:`snapshot`'s part of ``snapshot``; the returned call takes it up.
        Raises ValueError (KeyError, TypeError) on a bad one, changing nothing."""
        consoles = [SeatConsole(**c) for c in snapshot["consoles"]]
        for console in consoles:
            if console.prompt == "FAULT":  # stored before faults stood over prompts
                console.prompt, console.typed = "", ""
            console.prompt = _prompt(console.prompt)
            if console.under is not None:
                prompt, typed, choice = console.under
                if prompt not in PROMPTS:
                    raise ValueError(f"no prompt {prompt!r} for the staff menu to stand over")
                choice = None if choice is None else int(choice)
                console.under = (Prompt(prompt), str(typed), choice)
        raw = snapshot["pending"]
        pending = None
        if raw is not None:
            entries = [WinEntry.from_dict(e) for e in raw["entries"]]
            pending = Pending(
                kind=PendingKind(str(raw["kind"])),
                discarders=tuple(int(d) for d in raw["discarders"]),
                seats=[int(x) for x in raw["seats"]],
                answered={int(x) for x in raw["answered"]},
                entries={e.seat: e for e in entries},
                tenpai={int(x) for x in raw["tenpai"]},
                nagashi={int(x) for x in raw["nagashi"]},
                call_kind=str(raw["call_kind"]),
            )
        phase = str(snapshot["phase"])
        raw_clock = snapshot.get("clock_s")
        clock_s = None if raw_clock is None else float(raw_clock)
        if len(consoles) != self.players or not phase.startswith("table_"):
            raise ValueError(f"console state for another table: {len(consoles)} seats, {phase}")

        def commit() -> None:
            self.consoles = consoles
            self.pending = pending
            self.clock_started = None if clock_s is None else self.now() - clock_s
            self.resume_phase = phase
            if phase == "table_playing_claim":
                self.open_claim_window()  # a fresh window

        return commit

    def restore_alerts(self) -> None:
        """The LAST GAME calls of restored consoles stand as alerts again."""
        now = self.wall_time()
        for seat, console in enumerate(self.consoles):
            if console.last_game:
                self.raise_call("last_game", seat, now)
