"""``tablectl bringup URL``: a technician at a new or repaired table checks every sensor and
actuator it reports, one at a time.

The tool is the host (stop the daemon first). It reads the table's capabilities from the
hello and walks through what they name: each key on each seat console, each seat display
and its lamps, the centre display, the buzzer, the dice, each wall's motors, each wall's
take sensor (and the tile reader), each seat's tray. It says what to do on the terminal
and on the seat's own display, shows what arrived, and ends with a report of every item:
``ok``, ``failed`` (the technician said no, or the table reported an error), ``missing``
(nothing arrived in time) or ``skipped``. The report is printed and, with ``--report
PREFIX``, written as ``PREFIX.txt`` and ``PREFIX.json``.

What the technician confirms (a display, a lamp, the buzzer) is answered on the seat's
console: OK for yes, CANCEL for no; so the keys are checked first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from firmware_bridge import Link, LinkEvent, Role
from firmware_bridge import messages as m

#: Every key of a seat console, in the order the technician presses them.
KEYS: tuple[m.Key, ...] = tuple(m.Key)
TAKE_LABEL = "TAKE WALL"


@dataclass
class Item:
    """One thing checked: what, its outcome and what arrived."""

    part: str
    status: str  # "ok", "failed", "missing" or "skipped"
    detail: str = ""


@dataclass
class Timeouts:
    """How long the tool waits, in seconds."""

    key: float = 30.0
    confirm: float = 30.0
    motors: float = 60.0
    dice: float = 10.0


@dataclass
class Report:
    """The whole bring-up: the table's hello and every item."""

    url: str
    firmware: str = ""
    capabilities: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every item that was checked is ok."""
        return all(i.status in ("ok", "skipped") for i in self.items)

    def text(self) -> str:
        """The report as text: a header, one line per item, a summary."""
        lines = [
            f"bring-up of {self.url}: firmware {self.firmware}",
            f"capabilities: {', '.join(self.capabilities) or 'none'}",
        ]
        lines += [f"{i.status.upper():8} {i.part:28} {i.detail}".rstrip() for i in self.items]
        counts = {s: sum(i.status == s for i in self.items) for s in ("ok", "failed", "missing")}
        lines.append(
            f"{counts['ok']} ok, {counts['failed']} failed, {counts['missing']} missing"
            f" of {len(self.items)}"
        )
        return "\n".join(lines) + "\n"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "url": self.url,
            "firmware": self.firmware,
            "capabilities": self.capabilities,
            "passed": self.passed,
            "items": [asdict(i) for i in self.items],
        }


class Bringup:
    """The walk through one table (see the module docstring)."""

    def __init__(
        self,
        link: Link,
        url: str,
        say: Callable[[str], None],
        timeouts: Timeouts | None = None,
    ) -> None:
        self.link = link
        self.say = say
        self.timeouts = timeouts or Timeouts()
        self.report = Report(url)
        self._inbox: asyncio.Queue[m.Message] = asyncio.Queue()
        self.seats = 4
        self.caps = m.Capability(0)

    async def run(self) -> Report:
        """Walk through everything the table reports; the report."""
        pump = asyncio.create_task(self._pump(), name="bringup events")
        try:
            reply = await self.link.wait_up()
            assert isinstance(reply, m.HelloReply)
            self.seats, self.caps = reply.seats, m.Capability(reply.capabilities)
            self.report.firmware = reply.firmware_version
            self.report.capabilities = [c.name for c in m.Capability if c in self.caps and c.name]
            self.say(f"table up: firmware {reply.firmware_version}, {reply.seats} seats")
            await self.link.send(m.TableReset())
            steps = (
                (m.Capability.SEAT_CONSOLES, self._keys, "keys"),
                (m.Capability.SEAT_CONSOLES, self._displays, "seat displays and lamps"),
                (m.Capability.CENTRE_DISPLAY, self._centre, "centre display"),
                (m.Capability.BUZZER, self._buzzer, "buzzer"),
                (m.Capability.DICE, self._dice, "dice"),
                (None, self._walls, "walls"),
                (m.Capability.WALL_TAKE_SENSORS, self._takes, "take sensors"),
                (m.Capability.TRAY_SENSORS, self._trays, "trays"),
            )
            for capability, step, name in steps:
                if capability is None or capability in self.caps:
                    await step()
                else:
                    self._record(name, "skipped", f"the table does not report {capability.name}")
            await self.link.send(m.TableReset())
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
        return self.report

    async def _pump(self) -> None:
        item: LinkEvent
        async for item in self.link.events():
            if isinstance(item, m.Message):
                await self._inbox.put(item)

    def _record(self, part: str, status: str, detail: str = "") -> None:
        self.report.items.append(Item(part, status, detail))
        self.say(f"{status.upper():8} {part} {detail}".rstrip())

    async def _next(self, accept: Callable[[m.Message], bool], within: float) -> m.Message | None:
        """The next message ``accept`` takes (others are looked at and dropped)."""
        deadline = time.monotonic() + within
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                async with asyncio.timeout(left):
                    message = await self._inbox.get()
            except TimeoutError:
                return None
            if accept(message):
                return message

    async def _show(self, seat: int, line1: str, line2: str = "") -> None:
        await self.link.send(m.SeatDisplay(seat=seat, line1=line1[:20], line2=line2[:20]))

    async def _confirm(self, seat: int, part: str, question: str) -> None:
        """Ask the technician, on ``seat``'s console, whether ``question`` holds."""
        self.say(f"{part}: {question}? OK on seat {seat} for yes, CANCEL for no")
        answer = await self._next(
            lambda msg: (
                isinstance(msg, m.KeyPress)
                and msg.seat == seat
                and msg.key in (m.Key.OK, m.Key.CANCEL)
            ),
            self.timeouts.confirm,
        )
        if answer is None:
            self._record(part, "missing", "no answer")
        elif isinstance(answer, m.KeyPress) and answer.key is m.Key.OK:
            self._record(part, "ok", "seen")
        else:
            self._record(part, "failed", "the technician said no")

    async def _keys(self) -> None:
        for seat in range(self.seats):
            for index, key in enumerate(KEYS, start=1):
                part = f"seat {seat} key {key.name}"
                await self._show(seat, f"PRESS {key.name}", f"KEY {index}/{len(KEYS)}")
                self.say(f"seat {seat}: press {key.name}")
                wrong: list[str] = []

                def matches(
                    msg: m.Message, seat: int = seat, key: m.Key = key, wrong: list[str] = wrong
                ) -> bool:
                    if isinstance(msg, m.KeyPress) and msg.seat == seat and msg.key is not key:
                        wrong.append(msg.key.name)
                    return isinstance(msg, m.KeyPress) and msg.seat == seat and msg.key is key

                got = await self._next(matches, self.timeouts.key)
                extra = f" (also arrived: {', '.join(wrong)})" if wrong else ""
                if got is None:
                    self._record(part, "missing", "nothing arrived" + extra)
                else:
                    self._record(part, "ok", ("arrived" + extra).strip())
            await self._show(seat, "KEYS DONE")

    async def _displays(self) -> None:
        for seat in range(self.seats):
            await self._show(seat, f"DISPLAY SEAT {seat}", "LAMPS ON: OK=SEEN")
            await self.link.send(m.SeatLamps(seat=seat, dealer=True, riichi=True))
            await self._confirm(
                seat,
                f"seat {seat} display and lamps",
                f"does seat {seat} show DISPLAY SEAT {seat} with both lamps lit",
            )
            await self.link.send(m.SeatLamps(seat=seat, dealer=False, riichi=False))
            await self._show(seat, "")

    async def _centre(self) -> None:
        await self.link.send(m.CentreDisplay(m.Wind.SOUTH, 4, 8, 3, 88, (), 1234))
        await self._show(0, "CENTRE: S4 8 3 88", "20:34? OK=SEEN")
        await self._confirm(
            0,
            "centre display",
            "does the centre show South 4, 8 honba, 3 sticks, 88 tiles and 20:34",
        )

    async def _buzzer(self) -> None:
        await self._show(0, "BUZZER BEEPS?", "OK=HEARD")
        await self.link.send(m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=500))
        await self._confirm(0, "buzzer", "did the buzzer beep")

    async def _dice(self) -> None:
        await self.link.send(m.DiceRoll())
        got = await self._next(lambda msg: isinstance(msg, m.DiceResult), self.timeouts.dice)
        if isinstance(got, m.DiceResult):
            self._record("dice", "ok", f"rolled {got.die1}+{got.die2}")
        else:
            self._record("dice", "missing", "no DiceResult")

    async def _walls(self) -> None:
        for wall in range(self.seats):
            for action in (m.WallAction.SHUFFLE, m.WallAction.RAISE):
                part = f"wall {wall} {action.name.lower()}"
                await self.link.send(m.WallCommand(action=action, wall=wall))
                seen: list[str] = []

                def finished(msg: m.Message, wall: int = wall, seen: list[str] = seen) -> bool:
                    if not isinstance(msg, m.WallStatus) or msg.wall != wall:
                        return False
                    seen.append(msg.state.name)
                    return msg.state in (m.WallState.DONE, m.WallState.TILE_COUNT_ERROR)

                got = await self._next(finished, self.timeouts.motors)
                states = " -> ".join(seen)
                if not isinstance(got, m.WallStatus):
                    self._record(part, "missing", f"not done; seen: {states or 'nothing'}")
                elif got.state is m.WallState.TILE_COUNT_ERROR:
                    self._record(
                        part,
                        "failed",
                        f"{states}: {got.tiles_counted} tiles of {got.tiles_expected}",
                    )
                else:
                    self._record(part, "ok", states)

    async def _takes(self) -> None:
        reader = m.Capability.TILE_READER in self.caps
        for wall in range(self.seats):
            seat = wall
            await self._show(seat, f"{TAKE_LABEL} {wall}", "ANY TILE")
            self.say(f"seat {seat}: take any tile from wall {wall}")

            def from_wall(msg: m.Message, wall: int = wall) -> bool:
                return isinstance(msg, m.WallTake) and msg.position // 34 == wall

            got = await self._next(from_wall, self.timeouts.key)
            if not isinstance(got, m.WallTake):
                self._record(f"wall {wall} take sensor", "missing", "no WallTake")
                continue
            self._record(f"wall {wall} take sensor", "ok", f"position {got.position}")
            if reader:
                status = "ok" if got.tile is not None else "missing"
                self._record(f"wall {wall} tile reader", status, f"tile {got.tile}")

    async def _trays(self) -> None:
        for seat in range(self.seats):
            await self._show(seat, "MOVE A STICK", "IN YOUR TRAY")
            self.say(f"seat {seat}: move a point stick into or out of the tray")
            got = await self._next(lambda msg: isinstance(msg, m.TrayTotals), self.timeouts.key)
            if isinstance(got, m.TrayTotals):
                self._record(f"seat {seat} tray", "ok", f"totals {list(got.totals)}")
            else:
                self._record(f"seat {seat} tray", "missing", "no TrayTotals")


def write_report(report: Report, prefix: Path) -> tuple[Path, Path]:
    """Write ``PREFIX.txt`` and ``PREFIX.json``; their paths."""
    text, data = prefix.with_suffix(".txt"), prefix.with_suffix(".json")
    text.write_text(report.text(), "utf-8")
    data.write_text(json.dumps(report.as_dict(), indent=1) + "\n", "utf-8")
    return text, data


async def run_bringup(
    url: str,
    say: Callable[[str], None],
    timeouts: Timeouts | None = None,
    *,
    up_within: float = 15.0,
) -> Report:
    """Open a host link to ``url`` and walk through the table. Raises TimeoutError if the
    table does not answer the hello within ``up_within`` seconds."""
    link = Link(url, role=Role.HOST, name="bringup", host_version="tablectl-bringup")
    await link.start()
    try:
        async with asyncio.timeout(up_within):
            await link.wait_up()
        return await Bringup(link, url, say, timeouts).run()
    finally:
        await link.close()
