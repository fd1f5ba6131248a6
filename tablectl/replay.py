"""``tablectl replay``: run a JSON Lines event file through the rules core.

The input and output formats are a contract that scripts outside the project rely on;
see ``docs/replay.md``.  Reading the file is the only I/O here; the core stays pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tablectl.jsonlines import JsonLineError, json_lines
from tablectl.rules import walltrack
from tablectl.rules.conditions import conditions
from tablectl.rules.core import step
from tablectl.rules.events import Event, EventFormatError, Start, parse_event
from tablectl.rules.loader import RulesConfigError, load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, HandRecord, HandSettled, HandUndone, initial_state


class ReplayFileError(ValueError):
    """The replay file is malformed; the message names the line."""


@dataclass
class ReplayResult:
    """The state after a replay, with the hands played and the refused events."""

    rules: HouseRules
    state: GameState
    hands: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The replay contract's output object."""
        state = self.state
        out: dict[str, Any] = {
            "rules": self.rules.name,
            "scores": list(state.scores),
            "round": state.round_dict(),
            "dealer": state.dealer,
            "honba": state.honba,
            "kyoutaku": state.kyoutaku,
            "finished": state.finished,
            "final": state.final.as_dict() if state.final else None,
            "hands": self.hands,
            "rejected": self.rejected,
            "conditions": conditions(state),
        }
        wall = walltrack.summary(state)
        if wall is not None:
            out["wall"] = wall
        return out


def hand_dict(record: HandRecord) -> dict[str, Any]:
    """A ``hands`` entry: :meth:`HandRecord.as_dict` with the hand's per-seat ``chips``."""
    return {**record.as_dict(), "chips": list(record.chips)}


def parse_lines(lines: Iterable[str]) -> list[tuple[int, Event]]:
    """Parse JSON Lines into (line number, event) pairs; blank and ``#`` lines are skipped."""
    parsed: list[tuple[int, Event]] = []
    try:
        for line in json_lines(lines):
            try:
                parsed.append((line.number, parse_event(line.value)))
            except EventFormatError as exc:
                raise ReplayFileError(f"line {line.number}: {exc}") from exc
    except JsonLineError as exc:
        raise ReplayFileError(str(exc)) from exc
    return parsed


def run_events(rules: HouseRules, events: Iterable[tuple[int, Event]]) -> ReplayResult:
    """Feed events through the core; refused events are listed, never fatal."""
    result = ReplayResult(rules=rules, state=initial_state(rules))
    for number, event in events:
        state, effects = step(result.state, event)
        result.state = state
        for effect in effects:
            if isinstance(effect, Refusal):
                result.rejected.append({"line": number, **effect.as_dict()})
            elif isinstance(effect, HandSettled):
                result.hands.append(hand_dict(effect.record))
            elif isinstance(effect, HandUndone):
                result.hands.pop()
    return result


def replay(lines: Iterable[str], rules_ref: str | None = None) -> ReplayResult:
    """Replay a file's lines under ``rules_ref`` or the file's own ``start`` line.

    Raises :class:`ReplayFileError` for a malformed file and
    :class:`~tablectl.rules.loader.RulesConfigError` for an unknown or broken preset.
    """
    events = parse_lines(lines)
    where = "--rules"
    if events and isinstance(events[0][1], Start):
        number, first = events[0]
        events = events[1:]
        if rules_ref is None and isinstance(first, Start):
            rules_ref = first.rules
            where = f"line {number}"
    if rules_ref is None:
        raise ReplayFileError(
            "line 1: no rule set: give --rules PRESET or start the file with"
            ' {"type":"start","rules":"PRESET"}'
        )
    try:
        rules = load_rules(rules_ref)
    except RulesConfigError as exc:
        raise ReplayFileError(f"{where}: {exc}") from exc
    return run_events(rules, events)
