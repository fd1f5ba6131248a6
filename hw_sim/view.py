"""The terminal view of a simulated table: plain text, redrawn with two ANSI codes.

:func:`render` draws the four seat consoles (two display lines and the dealer/riichi lamps)
around the centre display, then the dice, wall motors, faults, trays and link, then the
walls: each seat's wall as its owner sees it from the right end (stack 0) to the left, top
row over bottom row, as in docs/wall.md. Marks: a digit = taken by that seat, ``o`` live,
``#`` dead wall, ``D`` revealed dora indicator, ``|`` the break, ``.`` no wall raised.
A table with seat readers adds each seat's hand, melds and pond as the readers see them.

:func:`live` keeps a terminal up to date (home + clear, then the picture) whenever the table
changes, at most ``fps`` times a second. No curses: it works in any terminal and in logs.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Protocol, TextIO

from firmware_bridge.messages import CentreDisplay, WallState, Zone
from hw_sim.wall import tile_name

if TYPE_CHECKING:
    from hw_sim.firmware import Console, SimFirmware
    from hw_sim.players import WallFollower

__all__ = ["Viewed", "live", "render"]

_WIDTH = 78
_BOX = 22  # a console box: 20 characters and two borders
_WINDS = ("East", "South", "West", "North")
_CLEAR = "\x1b[H\x1b[2J"


def _lamps(console: Console) -> str:
    return f"[{'D' if console.dealer else ' '}] [{'R' if console.riichi else ' '}]"


def _box(seat: int, console: Console) -> list[str]:
    """Three lines: the seat's title with its lamps, then its two display lines."""
    return [
        f"seat {seat} {_lamps(console)}".ljust(_BOX),
        f"|{console.line1[:20]:<20}|",
        f"|{console.line2[:20]:<20}|",
    ]


def _centre(centre: CentreDisplay | None) -> list[str]:
    if centre is None:
        return ["(centre display blank)", "", ""]
    clock = "--:--" if centre.clock is None else f"{centre.clock // 60}:{centre.clock % 60:02d}"
    dora = " ".join(tile_name(t) for t in centre.dora) or "-"
    return [
        f"{_WINDS[centre.round_wind]} {centre.round_number}  honba {centre.honba}",
        f"deposits {centre.deposits}  left {centre.tiles_left}",
        f"dora {dora}  clock {clock}",
    ]


def _place(left: str, mid: str, right: str) -> str:
    return (left.ljust(_BOX) + "   " + mid.center(_WIDTH - 2 * _BOX - 6) + "   " + right).rstrip()


def _consoles(fw: SimFirmware) -> list[str]:
    """The table from above: seat 2 across, seat 3 left, seat 1 right, seat 0 at the front
    (three players: no seat 3)."""
    boxes = [_box(s, fw.consoles[s]) for s in range(fw.players)]
    blank = [""] * 3
    pad = " " * (_BOX + 3 + (_WIDTH - 2 * _BOX - 6 - _BOX) // 2)
    lines = [(pad + line).rstrip() for line in boxes[2]]
    left = boxes[3] if fw.players == 4 else blank
    centre = _centre(fw.centre)
    lines += [_place(left[i], centre[i], boxes[1][i]) for i in range(3)]
    lines += [(pad + line).rstrip() for line in boxes[0]]
    return lines


def _status(fw: SimFirmware) -> list[str]:
    dice = "-" if fw.dice is None else f"{fw.dice[0]}+{fw.dice[1]}={sum(fw.dice)}"
    walls = " ".join(WallState(s).name for s in fw.walls[: fw.players])
    faults = ",".join(sorted(code.name for code in fw.latched)) or "none"
    link = "up" if fw.link_up else "down"
    trays = " ".join(str(t) for t in fw.trays)
    return [
        f"dice {dice}   walls {walls}",
        f"faults {faults}   trays {trays}   link {link}   boot {fw.boot_id:#010x}"
        f"   events {fw.events_sent}",
    ]


def _wall_picture(fw: SimFirmware, follower: WallFollower | None) -> list[str]:
    wall = fw.wall
    raised = any(s in (WallState.DONE,) for s in fw.walls) or bool(wall.taken)
    state = follower.state if follower is not None else None
    dead: set[int] = set()
    dora: set[int] = set()
    break_stack: int | None = None
    title = "walls (each from its right end):  digit taken by  o live  # dead  D dora  | break"
    if state is not None:
        dead = set(state.dead_wall)
        dora = set(state.dora_indicators)
        break_stack = state.break_stack
        if state.break_seat is not None:
            first = state.dice[0] + state.dice[1]
            head = (
                f"dealer seat {state.dealer}, dice {first}: break in seat {state.break_seat}'s"
                f" wall after stack {first - 1}; live {state.live_left}, next: seat"
                f" {state.turn} {state.phase}"
            )
        else:
            head = (
                f"dealer seat {state.dealer}: every seat draws from its own wall;"
                f" live {state.live_left}, next: seat {state.turn} {state.phase}"
            )
    else:
        head = "no hand tracked" if raised else "walls down"
    per = wall.per_wall // 2
    lines = [title, head]
    for seat in range(fw.players):
        for level, name in ((0, "top   "), (1, "bottom")):
            cells = []
            for k in range(per):
                stack = seat * per + k
                pos = 2 * stack + level
                if not raised:
                    mark = "."
                elif pos in wall.taken:
                    mark = str(wall.taken[pos])
                elif pos in dora:
                    mark = "D"
                elif pos in dead:
                    mark = "#"
                else:
                    mark = "o"
                sep = "|" if break_stack is not None and stack + 1 == break_stack else " "
                cells.append(mark + sep)
            tag = f"seat {seat} {seat * per:>2}-{seat * per + per - 1:<2}" if level == 0 else ""
            lines.append(f"{tag:<13}{name} " + "".join(cells).rstrip())
    return lines


def _zones(fw: SimFirmware) -> list[str]:
    """Each seat's hand, melds and pond, by tile name (seat readers only)."""
    zones = fw.zones
    if zones is None:
        return []
    lines = ["-" * _WIDTH, "tiles (seat readers):  hand | melds | pond"]
    for seat in range(fw.players):
        parts = [" ".join(tile_name(t) for t in zones.tiles(seat, z)) or "-" for z in Zone]
        lines.append(f"seat {seat}  " + " | ".join(parts))
    return lines


def render(fw: SimFirmware, follower: WallFollower | None = None, *, header: str = "") -> str:
    """The whole picture of the table as text (no ANSI codes)."""
    lines = [header or f"hw_sim {fw.name}", "-" * _WIDTH]
    lines += _consoles(fw)
    lines.append("-" * _WIDTH)
    lines += _status(fw)
    lines.append("-" * _WIDTH)
    lines += _wall_picture(fw, follower)
    lines += _zones(fw)
    return "\n".join(lines) + "\n"


class Viewed(Protocol):
    """What :func:`live` reads of a table (:class:`hw_sim.table.SimTable`): the firmware
    whose changes it waits for, and the picture it draws."""

    @property
    def firmware(self) -> SimFirmware:
        """The simulated firmware."""
        ...

    def render(self) -> str:
        """The whole view as text."""
        ...


async def live(table: Viewed, out: TextIO | None = None, fps: float = 10.0) -> None:
    """Redraw the view on ``out`` (stdout) whenever the table changes; runs until cancelled."""
    stream = out or sys.stdout
    fw = table.firmware
    seen: tuple[int, int, int] = (-1, -1, -1)

    def mark() -> tuple[int, int, int]:
        return (fw.display_seq, fw.events_sent, len(fw.transcript))

    while True:
        if mark() != seen:
            seen = mark()
            stream.write(_CLEAR + table.render())
            stream.flush()
        await asyncio.sleep(1.0 / fps)  # throttle: a game changes the table hundreds of times
        await fw.wait_for(lambda last=seen: mark() != last)  # type: ignore[misc]
