"""The C device library (firmware/): built with the system compiler (warnings as errors)
under AddressSanitizer and UBSan, its golden byte vectors, and the conformance suite
against its POSIX port over TCP and over a pty, with a script at its stdin playing the
person at the table."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import firmware_bridge.conformance as conformance
from firmware_bridge.transport import open_transport
from tests.bridge.test_messages import GOLDEN

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"
BUILD = FIRMWARE / "build-san"
SANITIZERS = ("ERROR: AddressSanitizer", "runtime error:", "ERROR: LeakSanitizer")

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")


@pytest.fixture(scope="module")
def built() -> Path:
    """``make -C firmware SANITIZE=1 BUILD=build-san``: both programs."""
    subprocess.run(
        ["make", "-s", "-C", str(FIRMWARE), "SANITIZE=1", "BUILD=build-san", "all"],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return BUILD


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
