"""The C device library (firmware/): built with the system compiler (warnings as errors)
under AddressSanitizer and UBSan, its golden byte vectors, and the conformance suite
against its POSIX port over TCP and over a pty, with a script at its stdin playing the
person at the table."""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import firmware_bridge.conformance as conformance
from firmware_bridge import Link, Role
from firmware_bridge import messages as m
from firmware_bridge.endpoints import open_transport
from tests.bridge.test_messages import GOLDEN
from tests.helpers import build_firmware

SANITIZERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")


@pytest.fixture(scope="module")
def built() -> Path:
    """``make -C firmware SANITIZE=1 BUILD=build-san``: both programs."""
    return build_firmware()


def test_the_golden_byte_vectors_agree(built: Path) -> None:
    done = subprocess.run(
        [str(built / "test-golden")], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # One C vector for each Python one (tests/bridge/test_messages.py): none left out.
    assert done.stdout.startswith(f"ok: {len(GOLDEN)} golden frames"), done.stdout
    assert not any(s in done.stderr for s in SANITIZERS), done.stderr


@asynccontextmanager
async def c_table(built: Path, endpoint: list[str]) -> AsyncIterator[tuple[Any, str]]:
    proc = await asyncio.create_subprocess_exec(
        str(built / "table-posix"), *endpoint,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    line = (await asyncio.wait_for(proc.stdout.readline(), 10)).decode()
    found = re.search(r"(socket://\S+|/dev/pts/\d+)", line)
    assert found, line
    try:
        yield proc, found.group(1)
    finally:
        if proc.returncode is None:
            # (If it is gone already, the test's own error says more than terminate's.)
            proc.terminate()
        _, err = await proc.communicate()
        text = err.decode(errors="replace")
        assert not any(s in text for s in SANITIZERS), text


@pytest.mark.parametrize("endpoint", [["--tcp", "0"], ["--pty"]], ids=["tcp", "pty"])
async def test_the_c_firmware_passes_every_check(
    built: Path, endpoint: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with c_table(built, endpoint) as (proc, url):

        def person(text: object) -> None:
            assert proc.stdin is not None
            if "press any key" in str(text):
                proc.stdin.write(b"press 0 0x20\n")  # OK on seat 0
            elif "reset button" in str(text):
                proc.stdin.write(b"reset\n")

        monkeypatch.setattr(conformance, "_say", person)
        transport = await open_transport(url)
        report = await conformance.run_checks(transport, url, interactive=True)
    statuses = {r.name: r.status for r in report.results}
    assert statuses == {name: "pass" for name in conformance.CHECKS}, report.lines()


def test_bad_arguments_get_one_line_and_exit_2(built: Path) -> None:
    for args in (["--tcp", "x"], [], ["--pty", "--tcp", "1"], ["--seats", "5", "--pty"]):
        done = subprocess.run(
            [str(built / "table-posix"), *args], capture_output=True, text=True, timeout=10,
            check=False,
        )  # fmt: skip
        assert done.returncode == 2, args
        assert len(done.stderr.strip().splitlines()) == 1 and "usage" in done.stderr


async def _echo_host(url: str, stop: asyncio.Event) -> None:
    """A host that answers each key press with its seat's display and each take with a
    centre display, as a daemon would, with nothing else in the way."""
    async with Link(url, role=Role.HOST, name="echo") as link:

        async def answer() -> None:
            async for item in link.events():
                if isinstance(item, m.KeyPress):
                    link.post_nowait(m.SeatDisplay(seat=item.seat, line1="S 25000", line2=""))
                elif isinstance(item, m.WallTake):
                    link.post_nowait(
                        m.CentreDisplay(m.Wind.EAST, 1, 0, 0, item.position % 70, (), None)
                    )

        task = asyncio.create_task(answer())
        await stop.wait()
        task.cancel()


async def _ask(proc: Any, line: str, until: str) -> list[str]:
    """Write one line to the port's stdin; its stdout lines up to one starting with
    ``until``."""
    proc.stdin.write(line.encode() + b"\n")
    out = []
    while True:
        got = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().rstrip("\n")
        assert got, f"table-posix ended while answering {line!r}: {out}"
        out.append(got)
        if got.startswith(until):
            return out


async def test_the_benchmark_hooks_time_presses_and_takes_against_a_host(built: Path) -> None:
    async with c_table(built, ["--tcp", "0"]) as (proc, url):
        stop = asyncio.Event()
        host = asyncio.create_task(_echo_host(url, stop))
        try:
            for _ in range(200):  # until the host has a session and has shown seat 1
                shown = await _ask(proc, "show", "show: end")
                if shown[2].startswith("show: seat 1 S 25000"):
                    break
                proc.stdin.write(b"press 1 0\n")
                await asyncio.sleep(0.05)
            assert shown[0] == "show: dice 0 0 0" and len(shown) == 6, shown
            out = await _ask(proc, "burst 60 8 0 1 2 3", "burst: end")
            words = out[0].split()
            fields = dict(zip(words[2::2], map(int, words[3::2]), strict=True))
            assert words[:2] == ["burst:", "done"]
            assert fields["presses"] == fields["answered"] == 60
            # At least each press and its display, each frame at least 8 bytes on the wire.
            assert fields["frames_out"] >= 60 and fields["frames_in"] >= 60
            assert fields["bytes_out"] >= 8 * fields["frames_out"]
            samples = [int(us) for line in out[1:-1] for us in line.split()[1:]]
            assert len(samples) == 60 and all(us > 0 for us in samples)
            taken = await _ask(proc, "timed take 1 40", "timed:")
            assert re.fullmatch(r"timed: take us \d+", taken[-1]), taken
            for bad in ("burst 0 8 0 1", "burst 5 8 0 7", "burst 5 0 0 1"):
                assert (await _ask(proc, bad, "burst:"))[-1].startswith("burst: refused"), bad
        finally:
            stop.set()
            await host
