"""Scripted players: a JSON Lines scenario of physical actions, run against the table.

One action per line (blank lines and lines starting with ``#`` are skipped); each line is
an object with one key, the action, whose value holds its arguments::

    {"wait_walls": "DONE"}                                  every wall reports DONE
    {"wait_display": {"seat": 0, "startswith": "ROLL?"}}    wait for a prompt (timeout 10 s)
    {"press": {"seat": 0, "key": "OK"}}                     press a key (name or digit)
    {"press": {"seat": 2, "keys": ["3", "OK"]}}             several keys
    {"wait_dice": {}}                                       a DiceResult was sent
    {"take": {"seat": 0}}                                   take what comes next (the wall
                                                            tracker knows: block or tile)
    {"take": {"seat": 1, "pos": 88, "count": 4}}            take from a given position
    {"wait_centre": {"tiles_left": 118}}                    the centre display shows that
    {"discard": {"seat": 0}}                                a person discarded (tells bots)
    {"roll": {}}                                            the dice button
    {"tray": {"seat": 2, "delta": -1000}}                   move sticks
    {"fault": "unplug"}  /  {"fault": {"kind": "unplug", "args": ["2"]}}
    {"sleep": 0.5}                                          seconds

Every ``wait_*`` takes an optional ``timeout`` (s, default 10). A failing line raises
:class:`ScenarioError` naming the line number and what was expected.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from firmware_bridge.messages import WallState
from hw_sim.control import execute
from tablectl.jsonlines import JsonLineError, json_lines

if TYPE_CHECKING:
    from hw_sim.table import SimTable

__all__ = ["ACTIONS", "ScenarioError", "parse_scenario", "run_scenario"]

_log = logging.getLogger(__name__)

ACTIONS = (
    "press", "take", "discard", "roll", "tray", "fault", "sleep",
    "wait_display", "wait_centre", "wait_walls", "wait_dice",
)  # fmt: skip
DEFAULT_TIMEOUT = 10.0


class ScenarioError(Exception):
    """A scenario line is malformed or its expectation was not met in time."""


def parse_scenario(lines: Iterable[str], source: str = "scenario") -> list[tuple[int, str, Any]]:
    """Parse scenario lines into ``(line number, action, arguments)``; raises ScenarioError."""
    out: list[tuple[int, str, Any]] = []
    try:
        for number, text, obj in json_lines(lines):
            if not isinstance(obj, dict) or len(obj) != 1:
                raise ScenarioError(f"{source}:{number}: expected one action object, got {text}")
            ((action, args),) = obj.items()
            if action not in ACTIONS:
                raise ScenarioError(
                    f"{source}:{number}: unknown action {action!r}; actions: {', '.join(ACTIONS)}"
                )
            out.append((number, action, args))
    except JsonLineError as exc:
        raise ScenarioError(f"{source}:{exc.number}: {exc.reason}") from None
    return out


async def _wait(table: SimTable, args: Any, what: str, predicate: Any) -> None:
    timeout = float(args.get("timeout", DEFAULT_TIMEOUT)) if isinstance(args, dict) else 10.0
    if not await table.firmware.wait_for(predicate, timeout):
        raise ScenarioError(f"{what} did not happen within {timeout:g} s")


async def run_step(table: SimTable, action: str, args: Any) -> None:
    """Run one scenario action (see the module doc)."""
    fw = table.firmware
    if action == "sleep":
        await asyncio.sleep(float(args))
    elif action == "fault":
        kind, extra = (args, []) if isinstance(args, str) else (args["kind"], args.get("args", []))
        await table.inject(kind, *(str(a) for a in extra))
    elif action == "wait_display":
        seat, prefix = int(args["seat"]), str(args.get("startswith", ""))
        await _wait(
            table, args, f"seat {seat} line 1 starting with {prefix!r}",
            lambda: fw.consoles[seat].line1.startswith(prefix),
        )  # fmt: skip
    elif action == "wait_centre":
        want = {k: v for k, v in args.items() if k != "timeout"}
        await _wait(
            table, args, f"centre display {want}",
            lambda: fw.centre is not None
            and all(getattr(fw.centre, k) == v for k, v in want.items()),
        )  # fmt: skip
    elif action == "wait_walls":
        state = WallState[args if isinstance(args, str) else args.get("state", "DONE")]
        await _wait(
            table, args, f"every wall {state.name}",
            lambda: all(w == state for w in fw.walls[: fw.players]),
        )  # fmt: skip
    elif action == "wait_dice":
        seen = fw.dice_count if not isinstance(args, dict) or "count" not in args else 0
        count = int(args["count"]) if isinstance(args, dict) and "count" in args else seen + 1
        await _wait(table, args, "a dice result", lambda: fw.dice_count >= count)
    else:
        await execute(table, action, dict(args) if isinstance(args, dict) else {})


async def run_scenario(table: SimTable, lines: Iterable[str], source: str = "scenario") -> int:
    """Run a whole scenario; returns the number of actions done. Raises ScenarioError."""
    steps = parse_scenario(lines, source)
    for number, action, args in steps:
        _log.info("%s:%d: %s %s", source, number, action, args)
        try:
            await run_step(table, action, args)
        except ScenarioError as exc:
            raise ScenarioError(f"{source}:{number}: {exc}") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ScenarioError(f"{source}:{number}: {action}: {exc}") from None
    return len(steps)
