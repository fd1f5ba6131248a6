"""The C firmware's POSIX port (``firmware/build/table-posix``) as the table in a benchmark.

Not a benchmark itself. A production table's side of the link is a microcontroller
running the C device library (firmware/), not the Python simulator: with this peer the
benchmarks measure the daemon against a table that costs next to nothing per frame.

The port's stdin plays the people at the table; its benchmark hooks (``burst``, ``timed
take``, ``show``: firmware/port/posix.c) answer on its stdout and time on its side of the
link, so the pipe to this process is never inside a measured interval.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware"
#: The optimised build (``make -C firmware``), not the sanitizer build the tests use.
BINARY = FIRMWARE / "build" / "table-posix"
_URL = re.compile(r"(socket://\S+|/dev/pts/\d+)")


class CTableError(RuntimeError):
    """The C table could not be built, started, or did not answer as its hooks promise."""


def build() -> Path:
    """``make -C firmware`` (a no-op when up to date); the port's path."""
    if shutil.which("cc") is None or shutil.which("make") is None:
        raise CTableError("no C compiler or make: the C firmware peer needs `make -C firmware`")
    done = subprocess.run(
        ["make", "-s", "-C", str(FIRMWARE), "all"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise CTableError(f"make -C firmware failed: {done.stderr.strip()[-500:]}")
    return BINARY


@dataclass(frozen=True, slots=True)
class Burst:
    """What one ``burst`` reported: presses answered, time, frames and bytes at the table's
    end (both ways), and each press's round trip in microseconds."""

    ended: str
    presses: int
    answered: int
    elapsed_s: float
    frames: int
    nbytes: int
    samples_ns: list[int]


class CTable:
    """One ``table-posix --pty`` process; :meth:`start` gives the pty to open."""

    def __init__(self, seats: int = 4) -> None:
        self.seats = seats
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self._io = asyncio.Lock()

    async def start(self) -> str:
        """Build if needed, start the port on a pty, return its device path."""
        binary = await asyncio.to_thread(build)
        self.proc = await asyncio.create_subprocess_exec(
            str(binary), "--pty", "--seats", str(self.seats),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        line = await self._line(10.0)
        found = _URL.search(line)
        if not found:
            raise CTableError(f"table-posix did not name its pty: {line!r}")
        self.url = found.group(1)
        return self.url

    async def close(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL)."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            async with asyncio.timeout(5):
                await proc.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()

    async def _line(self, within: float) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        async with asyncio.timeout(within):
            raw = await self.proc.stdout.readline()
        if not raw:
            raise CTableError("table-posix ended")
        return raw.decode(errors="replace").rstrip("\n")

    def _say(self, text: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")

    async def show(self) -> tuple[tuple[int, int, int], list[tuple[str, str]]]:
        """(dice rolled so far, die 1, die 2) and every seat's (line 1, line 2)."""
        async with self._io:
            self._say("show")
            dice = (0, 0, 0)
            lines: list[tuple[str, str]] = []
            while True:
                line = await self._line(5.0)
                if line == "show: end":
                    return dice, lines
                if line.startswith("show: dice "):
                    a, b, c = line.split()[2:5]
                    dice = (int(a), int(b), int(c))
                elif line.startswith("show: seat "):
                    text = line.split(" ", 3)[3] if line.count(" ") >= 3 else ""
                    line1, _, line2 = text.partition("\t")
                    lines.append((line1, line2))

    def press(self, seat: int, key: int) -> None:
        """A player presses ``key`` on console ``seat`` (not timed)."""
        self._say(f"press {seat} {key}")

    async def burst(self, count: int, depth: int, key: int, seats: Sequence[int]) -> Burst:
        """``count`` presses of ``key`` on ``seats`` in turn, at most ``depth`` waiting for
        their display; timed and counted by the table."""
        async with self._io:
            self._say(f"burst {count} {depth} {key} " + " ".join(str(s) for s in seats))
            head = await self._line(max(60.0, count / 100))
            if not head.startswith("burst: "):
                raise CTableError(f"unexpected answer to burst: {head!r}")
            words = head.split()
            if words[1] == "refused":
                raise CTableError(head)
            fields = dict(zip(words[2::2], (int(w) for w in words[3::2]), strict=True))
            samples: list[int] = []
            while (line := await self._line(10.0)) != "burst: end":
                samples.extend(int(us) * 1000 for us in line.split()[1:])
        return Burst(
            ended=words[1],
            presses=fields["presses"],
            answered=fields["answered"],
            elapsed_s=fields["elapsed_us"] / 1e6,
            frames=fields["frames_in"] + fields["frames_out"],
            nbytes=fields["bytes_in"] + fields["bytes_out"],
            samples_ns=samples,
        )

    async def timed_take(self, seat: int, position: int, within: float = 10.0) -> int:
        """``seat`` takes at ``position``; nanoseconds until the next centre display."""
        async with self._io:
            self._say(f"timed take {seat} {position}")
            line = await self._line(within)
        if not line.startswith("timed: take us "):
            raise CTableError(f"unexpected answer to a timed take: {line!r}")
        return int(line.split()[-1]) * 1000

    async def wait_for(self, ready: object, within: float = 30.0) -> list[tuple[str, str]]:
        """Poll the displays until ``ready(lines)`` is true; the lines then."""
        assert callable(ready)
        async with asyncio.timeout(within):
            while True:
                _, lines = await self.show()
                if ready(lines):
                    return lines
                await asyncio.sleep(0.02)
