"""What every console flow stands on: the table's state, the phase machine and the rules
core, as one base class (:class:`ConsoleHost`) that the flow mixins and
:class:`tablectl.table.Table` share.

The flows (:mod:`.claim`, :mod:`.entry`, :mod:`.endings`, :mod:`.confirm`,
:mod:`.staffmenu`) handle the keys of their prompts (declared in :mod:`.prompts`) through
these helpers only: apply events through the rules core, refuse on a seat, open a prompt,
note something for staff, fire a phase trigger that exists from here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from firmware_bridge import messages as m
from tablectl.alerts import AlertBoard
from tablectl.console.model import Pending, SeatConsole, WinEntry, fit
from tablectl.console.prompts import PROMPTS
from tablectl.console.staff import StaffGate
from tablectl.rules import events as ev
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
)
from tablectl.rules.wall import implied_discarder

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
}


def tray_alert_text(trays: Sequence[int], scores: Sequence[int]) -> str:
    """The tray alert's text: each seat whose tray differs, as ``seat:tray/score``."""
    pairs = (f"{s}:{trays[s]}/{scores[s]}" for s in range(len(trays)) if trays[s] != scores[s])
    return "TRAY " + " ".join(pairs)


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


class ConsoleHost:
    """The state and helpers the console flows share (set up by ``Table.__init__``)."""

    rules: HouseRules
    rules_ref: str
    players: int
    state: GameState
    post_command: Callable[[m.Message], None]
    recorder: Recorder | None
    publisher: Publisher | None
    now: Callable[[], float]
    table_id: str
    claim_window_s: float
    new_games: bool
    consoles: list[SeatConsole]
    pending: Pending | None
    claim_deadline: float | None
    clock_started: float | None
    games_finished: int
    game_started: bool
    on_game_over: Callable[[Final], None] | None
    #: Called with each settled hand's record (the demo's plain output).
    on_hand_settled: Callable[[HandRecord], None] | None = None
    tray_mismatch: dict[int, int]
    tray_totals: tuple[int, ...] | None
    tray_override: bool
    hold_on_tray_mismatch: bool
    staff: StaffGate
    rules_menu: tuple[str, ...]
    load_rules: Callable[[str], HouseRules] | None
    state_model: Any
    machine: Any
    alerts: AlertBoard
    last_hand: dict[str, Any] | None
    wall_time: Callable[[], float]
    #: Per seat, what its display said when its hand zone disagreed with the tiles this
    #: hand (a keyed win entry shows it again: it says why the value is keyed).
    hand_misread: dict[int, str]
    #: Link sessions so far (each ``link_up``), and the one the last DiceRoll went out in:
    #: a HOST_SILENT fault tells of a session before the current one (see ``_fault``).
    sessions: int
    roll_session: int | None

    # What one flow asks of another (or of the table), resolved in :class:`Table`.

    async def _start_hand(self) -> None:
        raise NotImplementedError

    def _hand_settled(self, deltas: Sequence[int]) -> None:
        raise NotImplementedError

    def _show_final(self) -> None:
        raise NotImplementedError

    def _compare_trays(self) -> None:
        raise NotImplementedError

    async def _open_entry(self, kind: str, seats: list[int], discarders: tuple[int, ...]) -> None:
        raise NotImplementedError

    async def _close_claim(self) -> None:
        raise NotImplementedError

    async def _cancel_entry(self, seat: int) -> None:
        raise NotImplementedError

    async def open_scored_entry(
        self,
        kind_: str,
        seats: list[int],
        discarders: tuple[int, ...],
        trigger: str = "enter_result",
    ) -> None:
        raise NotImplementedError

    async def _entry_done(self, seat: int) -> None:
        raise NotImplementedError

    async def _confirm_prompt(self, seat: int, key: m.Key) -> None:
        raise NotImplementedError

    async def _prompt_key(self, seat: int, key: m.Key) -> None:
        raise NotImplementedError

    def _correction_unavailable(self) -> str | None:
        raise NotImplementedError

    async def _reopen_last_hand(self, seat: int | None, *, by: str) -> str | None:
        raise NotImplementedError

    async def new_game(
        self, rules_ref: str | None = None, *, by: str = "ctl", seat: int | None = None
    ) -> str | None:
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        raise NotImplementedError

    def game_result(self, final: Final) -> dict[str, Any]:
        raise NotImplementedError

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
        # The parlor sees every phase change, the end of a game included.
        self._publish_state()

    def _publish_state(self) -> None:
        """Send the parlor the table's state as it is now (retained: latest only)."""
        if self.publisher is not None:
            self.publisher.publish_state(self.snapshot())

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
                console.under = None
            if console.under is not None and phase not in PROMPTS[console.under[0]].phases:
                console.under = None  # the prompt the staff menu stands over is done with

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
                # events: a parlor follows scores, and a fast table makes ~70 takes a hand
                # (nor does the wall's layout: the parlor is not to see the tiles).
                if not isinstance(event, ev.Dice | ev.Layout | ev.Deal | ev.Take | ev.Discard):
                    payload = {**ev.event_to_json(event), "scores": list(new_state.scores)}
                    self.publisher.publish_event(payload)
                self.publisher.publish_state(self.snapshot())
            self._effects(effects)
        return None

    def _effects(self, effects: Sequence[Any]) -> None:
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
                            "scores": list(self.state.scores),
                        }
                    )
                self._hand_settled(effect.record.deltas)
                if self.on_hand_settled is not None:
                    self.on_hand_settled(effect.record)
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
        if isinstance(refusal, Refusal):
            text = SHORT_REFUSALS.get(refusal.code, refusal.message)
        else:
            text = refusal
        self.consoles[seat].message = fit("! " + text)
        log.info("[%s] seat %d refused: %s", self.table_id, seat, text)
        self.post_command(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100))

    def _implied_discard(self, actor: int) -> tuple[ev.Event, ...]:
        """Discards are not sensed (in a hand keyed in): the seat that drew has discarded
        once another acts. In a tile-aware hand, with the tile its pond shows."""
        wall = self.state.wall
        seat = None if wall is None else implied_discarder(wall, actor)
        if seat is None:
            return ()
        if self.state.tiles is not None:
            return self.implied_tiles(seat)
        return (ev.Discard(seat=seat),)

    def implied_tiles(self, seat: int) -> tuple[ev.Event, ...]:
        raise NotImplementedError

    def _open(self, seat: int, prompt: str, *, typed: str = "") -> None:
        """Put ``prompt`` on ``seat``'s display (a prompt only stands in its phases)."""
        spec = PROMPTS[prompt]
        if self.phase not in spec.phases:
            raise FlowError(f"prompt {prompt} opened in {self.phase}")
        console = self.consoles[seat]
        # A prompt opens with a clean second line; a caller that has something to say
        # there sets it after opening.
        console.prompt, console.typed, console.message = prompt, typed, ""

    def _note(self, kind: str, seat: int | None, detail: dict[str, Any] | None = None) -> None:
        """Journal and publish something staff may look up later."""
        detail = detail or {}
        if self.recorder is not None:
            self.recorder.note(kind, seat, detail)
        if self.publisher is not None:
            self.publisher.publish_event({"type": kind, "seat": seat, **detail})
        log.info("[%s] %s seat %s %s", self.table_id, kind, seat, detail)
        if self._alert_for_note(kind, seat, detail):
            self._publish_state()

    def _alert_for_note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> bool:
        """Raise or end the alert a note means for staff; True if the board changed."""
        before = self.alerts.as_list()
        now = self.wall_time()
        if kind == "staff_call":
            self.alerts.raise_alert("staff_call", seat, "STAFF CALL", now)
        elif kind == "last_game":
            if detail.get("on"):
                self.alerts.raise_alert("last_game", seat, "LAST GAME", now)
            else:
                self.alerts.resolve("last_game", seat)
        elif kind == "tray_mismatch":
            text = tray_alert_text(detail["trays"], detail["scores"])
            self.alerts.raise_alert("tray_mismatch", None, text, now)
        elif kind == "trays_match":
            self.alerts.resolve("tray_mismatch")
        return self.alerts.as_list() != before

    def acknowledge_alert(self, alert_id: str, by: str, *, via: str) -> str | None:
        """Staff member ``by`` acknowledged an alert (from the parlor's dashboard, or
        ``tablectl ctl``): journalled as a staff action and published. Returns why not,
        or None."""
        alert = self.alerts.acknowledge(alert_id, by)
        if alert is None:
            return f"no open alert {alert_id!r} to acknowledge"
        detail = {"action": "alert_ack", "alert": alert.id, "kind": alert.kind, "by": by}
        self._note("staff_action", alert.seat, {**detail, "via": via})
        self._publish_state()
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
            self._note("staff_refusals", None, {"count": sum(counts.values()), "reasons": counts})
        else:
            detail = {"action": action or "unknown", "by": by, "why": why or "", "via": "mqtt"}
            self._note("staff_refused", None, detail)

    def _entry(self, seat: int) -> WinEntry | None:
        if self.pending is None:
            return None
        return self.pending.entries.get(seat)
