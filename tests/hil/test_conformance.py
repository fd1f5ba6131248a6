"""The firmware conformance suite against the simulator (it must pass), against devices
that break one rule each (the check for that rule must fail), and its command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import firmware_bridge.conformance as conformance
import firmware_bridge.link as link_mod
from firmware_bridge.messages import Key
from firmware_bridge.transport import open_transport
from hw_sim import SimTable


@asynccontextmanager
async def simulated(**patches: Any) -> AsyncIterator[tuple[SimTable, str]]:
    """A simulated table on TCP loopback, no bots."""
    sim = SimTable("tenhou", 1, autoplay=False)
    port = await sim.start_tcp()
    try:
        yield sim, f"socket://127.0.0.1:{port}"
    finally:
        await sim.close()


async def _run(url: str, **kwargs: Any) -> conformance.Report:
    transport = await open_transport(url)
    return await conformance.run_checks(transport, url, **kwargs)


def _statuses(report: conformance.Report) -> dict[str, str]:
    return {r.name: r.status for r in report.results}


async def test_the_simulator_passes_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    async with simulated() as (sim, url):
        # The technician: presses a key and the reset button when asked.
        def technician(text: object) -> None:
            if "press any key" in str(text):
                asyncio.get_running_loop().call_later(0.2, sim.press, 0, Key.OK)
            elif "reset button" in str(text):
                asyncio.get_running_loop().call_later(
                    0.2, lambda: asyncio.ensure_future(sim.firmware.reboot())
                )

        monkeypatch.setattr(conformance, "_say", technician)
        report = await _run(url, interactive=True)
    assert _statuses(report) == {name: "pass" for name in conformance.CHECKS}, report.lines()
    assert not report.failed


async def test_checks_needing_a_person_are_skipped_without_interactive() -> None:
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "key_press", "warm_reset"])
    assert _statuses(report) == {"hello": "pass", "key_press": "skip", "warm_reset": "skip"}
    assert "--interactive" in report.results[1].detail


async def test_a_device_that_never_resends_fails_retransmission(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The simulator shares the link code; with its retransmission timer pushed out of
    # reach it behaves like a firmware that forgot go-back-N.
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT", 60.0)
    monkeypatch.setattr(link_mod.Link, "_base_rto", lambda self: 60.0)
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "retransmission"])
    result = {r.name: r for r in report.results}["retransmission"]
    assert result.status == "fail" and "not resent" in result.detail
    assert report.failed


async def test_a_device_without_heartbeats_fails_heartbeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(link_mod, "HEARTBEAT_INTERVAL", 30.0)
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "heartbeat"])
    assert _statuses(report)["heartbeat"] == "fail"


async def test_a_device_that_acts_on_duplicates_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every received reliable frame is delivered, whatever its seq: duplicates act twice
    # and frames out of order are taken.
    real = link_mod.Link._on_frame

    def sloppy(self: link_mod.Link, frame: Any) -> None:
        if frame.flags & link_mod.Flags.RELIABLE and self._up:
            self._rx_next = frame.seq
        real(self, frame)

    monkeypatch.setattr(link_mod.Link, "_on_frame", sloppy)
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "duplicates", "ordering"])
    assert _statuses(report) == {"hello": "pass", "duplicates": "fail", "ordering": "fail"}


async def test_json_report_and_exit_codes() -> None:
    async with simulated() as (_, url):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "firmware_bridge.conformance", url, "--json",
            "--only", "hello", "--only", "commands",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate()
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert [r["name"] for r in report["results"]] == ["hello", "commands"]
    assert {r["status"] for r in report["results"]} == {"pass"} and report["failed"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["socket://127.0.0.1:1"], "cannot open socket://127.0.0.1:1"),
        (["gopher://x"], "unknown transport scheme"),
        (["socket://127.0.0.1:1", "--only", "nope"], "no check 'nope'"),
        ([], "the following arguments are required: url"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "firmware_bridge.conformance", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in proc.stderr
