"""The firmware conformance suite against the simulator (it must pass), against devices
that break one rule each (the check for that rule must fail), and its command line."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

import firmware_bridge.conformance as conformance
import firmware_bridge.link as link_mod
import hw_sim.firmware as hw_firmware
from firmware_bridge.endpoints import open_transport
from firmware_bridge.messages import Key
from hw_sim import SimTable


@asynccontextmanager
async def simulated(prepare: Any = None) -> AsyncIterator[tuple[SimTable, str]]:
    """A simulated table on TCP loopback, no bots (``prepare(sim)`` runs before it starts)."""
    sim = SimTable("tenhou", 1, autoplay=False, wall_reader=True, seat_reader=True)
    if prepare is not None:
        prepare(sim)
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


@pytest.mark.parametrize("endpoint", ["sim", "usb"])
async def test_the_simulator_passes_in_process_and_over_the_fake_usb_bus(endpoint: str) -> None:
    sim = SimTable("tenhou", 1, autoplay=False)
    url = await (sim.start_sim() if endpoint == "sim" else sim.start_usb())
    try:
        report = await _run(url)
    finally:
        await sim.close()
    assert not report.failed, report.lines()
    assert {r.status for r in report.results} == {"pass", "skip"}


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


async def test_an_answer_resent_before_the_probe_acked_it_is_one_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A busy host acknowledges late (here 0.2 s, with the device resending after 20 ms):
    # the device resends its TableStatus, the same event (the same seq) again, which a
    # host's link drops; the checks count it once.  Seen once under load on a pty.
    real = conformance.Probe.send_ack

    def late(self: conformance.Probe) -> None:
        asyncio.get_running_loop().call_later(0.2, real, self)

    monkeypatch.setattr(conformance.Probe, "send_ack", late)
    monkeypatch.setattr(link_mod.Link, "_base_rto", lambda self: 0.02)
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "duplicates", "ordering"])
    assert _statuses(report) == {"hello": "pass", "duplicates": "pass", "ordering": "pass"}, (
        report.lines()
    )


# --- one broken device per check: the check for the rule it breaks must fail ------------


def _on_hello_wrapped(
    monkeypatch: pytest.MonkeyPatch, before: Any = None, rewrite: Any = None
) -> None:
    real = link_mod.Link._on_hello

    def wrapped(self: link_mod.Link, frame: Any) -> None:
        if before is not None:
            before(self)
        real(self, rewrite(frame) if rewrite is not None else frame)

    monkeypatch.setattr(link_mod.Link, "_on_hello", wrapped)


def _break_schema(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    def info(**fields: Any) -> link_mod.DeviceInfo:
        return link_mod.DeviceInfo(**fields, schema_hash=0x12345678)  # another message table

    mp.setattr(hw_firmware, "DeviceInfo", info)


def _break_repeated_hello(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    def forget(self: link_mod.Link) -> None:
        self._session = 0  # every hello opens a new session, even a repeated one

    _on_hello_wrapped(mp, before=forget)


def _break_version_check(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    def as_ours(frame: Any) -> Any:
        return dataclasses.replace(frame, payload=bytes([1]) + frame.payload[1:])

    _on_hello_wrapped(mp, rewrite=as_ours)


def _break_status(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = sim.firmware._handle

    async def handle(msg: Any) -> None:
        if type(msg).__name__ != "StatusRequest":  # acked, never answered
            await real(msg)

    mp.setattr(sim.firmware, "_handle", handle)


def _break_wrap(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = link_mod.Link._on_frame

    def on_frame(self: link_mod.Link, frame: Any) -> None:
        if frame.flags & link_mod.Flags.RELIABLE and frame.seq == 255:
            return  # an 8-bit counter that never wraps: seq 255 is never taken
        real(self, frame)

    mp.setattr(link_mod.Link, "_on_frame", on_frame)


def _break_burst(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = link_mod.Link._on_frame
    window: list[float] = []

    def on_frame(self: link_mod.Link, frame: Any) -> None:
        if frame.flags & link_mod.Flags.RELIABLE and frame.msg_type == 0x12:
            now = time.monotonic()
            window[:] = [t for t in window if now - t < 0.002]
            window.append(now)
            if len(window) > 4:
                return  # a receive buffer of 4 frames: the rest of a burst is lost
        real(self, frame)

    mp.setattr(link_mod.Link, "_on_frame", on_frame)


def _break_resync(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = link_mod.Link._on_frame

    def on_frame(self: link_mod.Link, frame: Any) -> None:
        if frame.version != 1:
            self._lose_session("confused by a frame of another version")
            return
        real(self, frame)

    mp.setattr(link_mod.Link, "_on_frame", on_frame)


def _break_resume(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    def forget(self: link_mod.Link) -> None:
        self._window.clear()  # unacked events forgotten at every new hello

    _on_hello_wrapped(mp, before=forget)


def _break_safe_state(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    mp.setattr(link_mod, "LINK_TIMEOUT", 600.0)  # never notices the host went silent


def _break_wall_reader(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = sim.firmware.emit
    held: list[Any] = []

    def emit(msg: Any) -> None:
        if type(msg).__name__ == "WallLayout":
            held.append(msg)  # read, but sent only after the wall's DONE
        elif type(msg).__name__ == "WallStatus" and held:
            real(msg)
            real(held.pop())
        else:
            real(msg)

    mp.setattr(sim.firmware, "emit", emit)


def _break_seat_reader(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    real = sim.firmware.report_zones

    def report_zones(places: Any) -> None:
        real([p for p in places if p[1] != 1])  # the meld zones' readers are never polled

    mp.setattr(sim.firmware, "report_zones", report_zones)


def _break_warm_reset(mp: pytest.MonkeyPatch, sim: SimTable) -> None:
    mp.setattr(link_mod.Link, "unacked", lambda self: None)  # RAM cleared by the reset


#: Each check, the device that breaks its rule, and what the failure must say (so a check
#: that fails for another reason, or only when a long deadline runs out, is caught).
BROKEN = {
    "hello": (_break_schema, "schema hash 0x12345678 differs"),
    "hello_repeated": (_break_repeated_hello, "was not acknowledged within 2 s"),
    "version_mismatch": (_break_version_check, "status OK, expected VERSION_MISMATCH"),
    "commands": (_break_status, "no TableStatus after a StatusRequest"),
    "sequence_wraparound": (_break_wrap, "seq 255 unacked 2 s after it was sent"),
    "burst": (_break_burst, "unacked 2 s after it was sent"),
    "malformed_frames": (_break_resync, "was not acknowledged within 2 s"),
    "resume": (_break_resume, "the unacked event is"),
    "host_silent": (_break_safe_state, "still no heartbeat with session 0"),
    "wall_reader": (_break_wall_reader, "DONE before their WallLayout"),
    "seat_reader": (_break_seat_reader, "8 SeatTiles of 12"),
    "warm_reset": (_break_warm_reset, "the unacknowledged event was lost in the reset"),
}


def test_every_check_has_a_device_that_fails_it() -> None:
    covered = {"retransmission", "heartbeat", "duplicates", "ordering", "key_press", *BROKEN}
    assert covered == set(conformance.CHECKS)


@pytest.mark.parametrize("name", list(BROKEN))
async def test_a_device_breaking_one_rule_fails_its_check(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    breaker, why = BROKEN[name]
    async with simulated(lambda sim: breaker(monkeypatch, sim)) as (sim, url):

        def technician(text: object) -> None:
            if "reset button" in str(text):
                asyncio.get_running_loop().call_later(
                    0.2, lambda: asyncio.ensure_future(sim.firmware.reboot())
                )

        monkeypatch.setattr(conformance, "_say", technician)
        only = ["hello", name] if name != "hello" else ["hello"]
        report = await _run(url, only=only, interactive=True)
    result = {r.name: r for r in report.results}[name]
    assert result.status == "fail" and why in result.detail, report.lines()
    if name != "hello":
        assert _statuses(report)["hello"] == "pass", report.lines()


async def test_a_wait_ends_when_the_device_closes_its_connection() -> None:
    # A device that resets over USB or TCP closes its connection: nothing more can come,
    # so a wait (here of an hour) ends then, not at its deadline. (It used to run out the
    # 30 s warm_reset allows before the probe opened the connection again.)
    async with simulated() as (sim, url):
        probe = conformance.Probe(await open_transport(url), url)
        await probe.start()
        try:
            waiting = asyncio.ensure_future(probe.wait_for(lambda r: False, 3600.0))
            await asyncio.sleep(0.2)
            await sim.firmware.reboot()  # the TCP server drops its client
            assert await asyncio.wait_for(waiting, 30.0) is None  # (a hang guard)
            assert probe.closed
        finally:
            await probe.close()


async def test_resume_judges_what_follows_the_reply_to_each_hello(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The device's retransmission timer fires just before it reads each hello (what a
    # loaded host or device makes likely: its timeout is 25 ms at least), so a copy of
    # the unacked event written in the old session is read after the hello was sent. It
    # is no resend in the new session; the check must look past the reply for those.
    def resend_window(self: link_mod.Link) -> None:
        for out in self._window:
            self._transmit(out)

    _on_hello_wrapped(monkeypatch, before=resend_window)
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "resume"])
    assert _statuses(report) == {"hello": "pass", "resume": "pass"}, report.lines()


async def test_a_console_whose_keys_never_arrive_fails_key_press(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(conformance, "_say", lambda text: None)  # nobody presses anything
    monkeypatch.setattr(conformance.Probe, "message", _impatient(conformance.Probe.message))
    async with simulated() as (_, url):
        report = await _run(url, only=["hello", "key_press"], interactive=True)
    assert _statuses(report) == {"hello": "pass", "key_press": "fail"}


def _impatient(real: Any) -> Any:
    async def message(self: Any, cls: Any, within: float, *, since: int = 0) -> Any:
        return await real(self, cls, min(within, 1.0), since=since)

    return message


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


async def _cli(url: str, *args: str) -> tuple[int | None, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "firmware_bridge.conformance", url, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


async def test_only_one_check_runs_the_hello_first() -> None:
    # As docs/hil.md shows it: `--only resume` alone, which needs the hello's session.
    async with simulated() as (_, url):
        code, out, err = await _cli(url, "--only", "resume")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:2]] == [["PASS", "hello"], ["PASS", "resume"]]
    assert lines[2] == f"{url}: 2 passed, 0 failed, 0 skipped"


async def test_a_run_that_checked_nothing_says_so_and_fails() -> None:
    async with simulated() as (_, url):
        code, out, err = await _cli(url, "--only", "key_press", "--only", "warm_reset")
        as_json = await _cli(url, "--only", "key_press", "--json")
    assert code == 3
    assert out.splitlines()[-1] == f"{url}: 1 passed, 0 failed, 2 skipped"
    assert err == (
        "conformance: nothing was checked: every check asked for was skipped (see why above)\n"
    )
    assert as_json[0] == 3 and json.loads(as_json[1])["checked_nothing"] is True


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
