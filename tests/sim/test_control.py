"""The control interface, scripted scenarios, the fault plan, the view and the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import firmware_bridge.link as link_mod
from firmware_bridge.link import Link, Role
from firmware_bridge.messages import Key, KeyPress, SeatDisplay, TrayTotals, WallTake
from hw_sim import SimTable
from hw_sim.__main__ import build_parser, main
from hw_sim.control import ControlServer
from hw_sim.faults import FaultPlan, OneShot
from hw_sim.scenario import ScenarioError, parse_scenario, run_scenario
from hw_sim.view import live
from tablectl.config import DaemonConfig
from tablectl.daemon import Daemon
from tablectl.rules.loader import load_rules
from tests.sim.test_firmware import expect, shuffle, table_and_host

REPO = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def client(port: int) -> AsyncIterator[Callable[[object], Awaitable[dict[str, Any]]]]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def ask(request: object) -> dict[str, Any]:
        line = request if isinstance(request, str) else json.dumps(request)
        writer.write(line.encode() + b"\n")
        await writer.drain()
        async with asyncio.timeout(5):
            reply: dict[str, Any] = json.loads(await reader.readline())
        return reply

    try:
        yield ask
    finally:
        writer.close()
        await writer.wait_closed()


async def test_control_interface() -> None:
    async with table_and_host(trays=True) as (table, host):
        server = await ControlServer(table).start()
        try:
            async with client(server.port) as ask:
                assert (await ask({"cmd": "press", "seat": 1, "key": "RON"}))["ok"]
                assert await expect(host, KeyPress) == [KeyPress(1, Key.RON)]
                reply = await ask({"cmd": "press", "seat": 2, "keys": ["3", "OK"]})
                assert reply == {"ok": True}
                assert await expect(host, KeyPress, 2) == [
                    KeyPress(2, Key.DIGIT_3),
                    KeyPress(2, Key.OK),
                ]
                await shuffle(host)
                reply = await ask({"cmd": "take", "seat": 3, "pos": 40, "count": 2})
                assert reply == {"ok": True, "take": {"seat": 3, "position": 40, "tile": None}}
                assert await expect(host, WallTake) == [WallTake(3, 40)]
                await host.send(SeatDisplay(0, "HAN? 2", "x"))
                state = await ask({"cmd": "state"})
                assert state["ok"] and state["walls"] == ["DONE"] * 4
                assert state["seats"][0]["line1"] == "HAN? 2"
                waited = await ask({"cmd": "wait", "seat": 0, "startswith": "HAN?"})
                assert waited == {"ok": True, "display": ["HAN? 2", "x"]}
                assert (await ask({"cmd": "displays"}))["displays"][0] == ["HAN? 2", "x"]
                assert (await ask({"cmd": "lamps"}))["lamps"][0] == {
                    "dealer": False,
                    "riichi": False,
                }
                assert "HAN? 2" in (await ask({"cmd": "view"}))["text"]
                dice = await ask({"cmd": "roll"})
                assert dice["ok"] and len(dice["dice"]) == 2
                reply = await ask({"cmd": "tray", "seat": 0, "delta": -1000})
                assert reply["trays"] == [24000, 25000, 25000, 25000]
                reply = await ask({"cmd": "fault", "kind": "tray", "args": [1]})
                assert reply["ok"] and "seat 1" in str(reply["result"])
                got = await expect(host, TrayTotals, 2)
                assert got[-1] == TrayTotals((24000, 24000, 25000, 25000))  # a misread stick
                for bad, error in [
                    ("not json", "Expecting value"),
                    ({"cmd": "jump"}, "unknown command"),
                    ({"cmd": "press", "seat": "one", "key": "OK"}, "integer"),
                    ({"cmd": "press", "seat": 0, "key": "JUMP"}, "unknown key"),
                    ({"cmd": "take", "seat": 0, "pos": 40}, "empty"),
                    ({"cmd": "wait", "seat": 0, "startswith": "NO", "timeout": 0.01}, "did not"),
                    ({"cmd": "fault", "kind": "meteor"}, "unknown fault"),
                    ({"cmd": "rules"}, "rules needs 'rules'"),
                    ({"cmd": "rules", "rules": "nosuch"}, "nosuch"),
                    ({"cmd": "rules", "rules": "sanma-free"}, "for 3 players"),
                ]:
                    reply = await ask(bad)
                    assert reply["ok"] is False and error in str(reply["error"]), bad
                assert table.house.name == "ariari"  # refused: nothing changed
                assert await ask({"cmd": "rules", "rules": "tenhou"}) == {
                    "ok": True,
                    "rules": "tenhou",
                }
                assert table.house.name == "tenhou" and table.follower.next_house is not None
        finally:
            await server.close()


def test_scenario_parsing() -> None:
    steps = parse_scenario(["# a comment", "", '{"press": {"seat": 0, "key": "OK"}}'])
    assert steps == [(3, "press", {"seat": 0, "key": "OK"})]
    with pytest.raises(ScenarioError, match="scenario:1: unknown action 'dance'"):
        parse_scenario(['{"dance": {}}'])
    with pytest.raises(ScenarioError, match="scenario:1: not valid JSON"):
        parse_scenario(["{"])
    with pytest.raises(ScenarioError, match="one action object"):
        parse_scenario(['{"press": {}, "take": {}}'])


async def test_a_scripted_hand_against_the_daemon(tmp_path: Path) -> None:
    """A JSON Lines scenario plays the deal and a dealer's tsumo through tablectl's daemon."""
    house = load_rules("tenhou")
    deal = [f'{{"take": {{"seat": {i % 4}}}}}' for i in range(16)]
    scenario = [
        '{"wait_display": {"seat": 0, "startswith": "ROLL?"}}',
        '{"press": {"seat": 0, "key": "OK"}}',
        '{"wait_dice": {}}',
        *deal,
        '{"wait_centre": {"tiles_left": 70}}',
        '{"take": {"seat": 0}}',
        '{"wait_centre": {"tiles_left": 69}}',
        '{"press": {"seat": 0, "key": "TSUMO"}}',
        '{"wait_display": {"seat": 0, "startswith": "HAN?"}}',
        '{"press": {"seat": 0, "keys": ["3", "OK"]}}',
        '{"wait_display": {"seat": 0, "startswith": "FU?"}}',
        '{"press": {"seat": 0, "keys": ["3", "0", "OK"]}}',
        *(f'{{"wait_display": {{"seat": {s}, "startswith": "CONFIRM"}}}}' for s in range(4)),
        *(f'{{"press": {{"seat": {s}, "key": "OK"}}}}' for s in range(4)),
        '{"wait_display": {"seat": 0, "startswith": "ROLL?"}}',
    ]
    async with SimTable(house, 5, autoplay=False) as table:
        url = await table.start_sim("scripted")
        config = DaemonConfig(
            source=Path("<test>"), table_id="t", device=url, rules="tenhou",
            house_rules=house, journal=tmp_path / "journal.sqlite3",
        )  # fmt: skip
        daemon = Daemon(config)
        task = asyncio.create_task(daemon.run())
        try:
            assert await run_scenario(table, scenario, "hand.jsonl") == len(scenario)
            assert daemon.table is not None
            assert daemon.table.state.scores == (31000, 23000, 23000, 23000)  # 2000 all
            assert table.scores() == [None, 23000, 23000, 23000]  # seat 0 is asked ROLL?
            with pytest.raises(ScenarioError, match="hand.jsonl:1: seat 2 line 1 starting"):
                await run_scenario(
                    table, ['{"wait_display": {"seat": 2, "startswith": "HAN?", "timeout": 0}}'],
                    "hand.jsonl",
                )  # fmt: skip
        finally:
            daemon.stop.set()
            await task


def test_fault_plan_spec() -> None:
    plan = FaultPlan.parse("corrupt=0.01, drop=0.02,dup=0.5,unplug@300:2,stuck@5:1:OK,tray@9", 3)
    assert (plan.corrupt, plan.drop, plan.dup) == (0.01, 0.02, 0.5)
    assert plan.one_shots == [
        OneShot(5, "stuck", ("1", "OK")), OneShot(9, "tray"), OneShot(300, "unplug", ("2",)),
    ]  # fmt: skip
    assert plan.due(9) == [OneShot(5, "stuck", ("1", "OK")), OneShot(9, "tray")]
    assert plan.due(9) == [] and len(plan.one_shots) == 1
    assert plan.describe() == "corrupt=0.01,drop=0.02,dup=0.5,unplug@300:2"
    assert FaultPlan.parse("reader@7:2:melds").one_shots == [OneShot(7, "reader", ("2", "melds"))]
    assert FaultPlan.parse("misread@7:2").one_shots == [OneShot(7, "misread", ("2",))]
    assert len(FaultPlan.parse("random=5", 1).one_shots) == 5
    assert FaultPlan.parse("random=5", 1) == FaultPlan.parse("random=5", 1)  # seeded
    for bad, error in [
        ("flood=0.1", "unknown line fault"),
        ("drop=2", r"\[0, 1\)"),
        ("drop=x", "not a probability"),
        ("meteor@3", "expected NAME=PROB"),
        ("unplug@soon", "not an event count"),
        ("stuck@3:1:JUMP", "unknown key"),
        ("reader@3:1:lid", "unknown zone"),
        ("reader@3:7", "not a seat"),
        ("misread@3:5", "not a seat"),
        ("misread@3:1:melds", "takes a seat"),
        ("random=x", "integer"),
    ]:
        with pytest.raises(ValueError, match=error):
            FaultPlan.parse(bad)


async def test_live_view_redraws() -> None:
    async with table_and_host("sanma-free", 2) as (table, host):
        out = io.StringIO()
        task = asyncio.create_task(live(table, out, fps=200))
        await asyncio.sleep(0.02)
        await host.send(SeatDisplay(1, "TENPAI?", "TENPAI / NOTEN"))
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        screens = out.getvalue().split("\x1b[H\x1b[2J")
        assert len(screens) >= 3 and "TENPAI?" in screens[-1] and "TENPAI?" not in screens[1]
        assert "seat 3" not in screens[-1]  # three players: three consoles, three walls
        assert "sanma-free  seed 2" in screens[-1]


def test_cli_help_documents_everything() -> None:
    parser = build_parser()
    text = parser.format_help()
    for word in ("--pty", "--tcp", "control interface", "faults", "scenario", "autoplay"):
        assert word in text, word
    serve = parser.parse_args(["serve", "--pty", "--seats", "1,2", "--faults", "drop=0.1"])
    assert serve.seats == {1, 2} and serve.speed == 1.0 and serve.rules == "ariari"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--pty", "--tcp", "1"])  # one endpoint
    assert serve.signing_key is None
    key = "9a" * 32
    assert parser.parse_args(["serve", "--pty", "--signing-key", key]).signing_key == bytes.fromhex(
        key
    )


def test_cli_refuses_a_bad_signing_key(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--pty", "--signing-key", "9a9a"])
    err = capsys.readouterr().err
    assert "argument --signing-key: a signing key is 64 hex digits (32 bytes), got 4" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "70000", '{"cmd": "state"}'],
        ["serve", "--tcp", "70000"],
        ["serve", "--tcp", "0", "--control", "-1"],
        ["serve", "--tcp", "0", "--log-level", "loud"],
    ],
)
def test_cli_refuses_a_bad_port_or_log_level(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Not an OverflowError traceback from connect() or bind().
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert (
        "a port is 0..65535" in err or "invalid choice: 'LOUD'" in err
    ) and "Traceback" not in err


async def test_cli_serves_tcp_and_control() -> None:
    """``python -m hw_sim serve`` in a subprocess: the daemon's endpoint and the control
    interface come up and answer."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hw_sim", "serve", "--tcp", "0", "--control", "0",
        "--no-autoplay", "--speed", "0", "--rules", "jboy-sanma",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            first = (await proc.stdout.readline()).decode()
            second = (await proc.stdout.readline()).decode()
        assert first.startswith("hw_sim: listening on socket://127.0.0.1:")
        tcp_port = int(first.rsplit(":", 1)[1])
        control_port = int(second.rsplit(":", 1)[1])
        async with Link(f"socket://127.0.0.1:{tcp_port}", role=Role.HOST) as host:
            async with asyncio.timeout(10):
                reply = await host.wait_up()
            assert getattr(reply, "seats", None) == 3
            async with client(control_port) as ask:
                state = await ask({"cmd": "state"})
                assert state["ok"] and state["link_up"] is True
                assert (await ask({"cmd": "press", "seat": 2, "key": "MENU"}))["ok"]
                assert await expect(host, KeyPress) == [KeyPress(2, Key.MENU)]
    finally:
        proc.terminate()
        await proc.wait()


async def test_cli_serves_a_signed_table() -> None:
    """``serve --signing-key HEX``: a host with the key plays, one without is refused."""
    key = "3c" * 32
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "hw_sim", "serve", "--tcp", "0", "--no-autoplay", "--speed", "0",
        "--signing-key", key,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            first = (await proc.stdout.readline()).decode()
        url = first.rsplit(" ", 1)[1].strip()
        async with Link(f"{url}?signing_key={key}", role=Role.HOST) as host:
            async with asyncio.timeout(10):
                await host.wait_up()
            assert host.signing and host.stats.unsigned_dropped == 0
        async with Link(url, role=Role.HOST) as keyless:
            async with asyncio.timeout(10):
                while keyless.refused is None:  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
            assert "this host has no signing key" in keyless.refused.reason
    finally:
        proc.terminate()
        await proc.wait()


@pytest.fixture(autouse=True)
def _real_link_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI subprocess heartbeats at the real 1 Hz: the in-test host must not give up
    # after the fast 0.3 s.
    monkeypatch.setattr(link_mod, "LINK_TIMEOUT", 5.0)


@pytest.mark.parametrize(
    ("request_", "says"),
    [
        ({"cmd": "take", "seat": 0, "pos": 10, "count": -5}, "'count' is -5; allowed: 1..4"),
        ({"cmd": "take", "seat": 0, "pos": 999}, "'pos' is 999; allowed: 0..135"),
        ({"cmd": "tray", "seat": 2, "delta": 10**14}, "'delta' is 100000000000000"),
        ({"cmd": "tray", "seat": 2, "delta": -30000}, "tray 2 would hold -5000"),
        ({"cmd": "press", "seat": 7, "key": "OK"}, "'seat' is 7; allowed: 0..3"),
        ({"cmd": "press", "seat": True, "key": "OK"}, "'seat' must be an integer"),
        ({"cmd": "wait", "seat": 0, "timeout": 1e9}, "'timeout' is 1000000000.0"),
        ({"cmd": "wait", "seat": 0, "timeout": "soon"}, "'timeout' must be a number"),
    ],
)
async def test_control_requests_out_of_range_are_refused_and_change_nothing(
    request_: dict[str, Any], says: str
) -> None:
    from hw_sim.control import execute

    table = SimTable("jboy", 1, autoplay=False, trays=True)
    trays = list(table.trays)
    sent = table.firmware.events_sent
    args = {k: v for k, v in request_.items() if k != "cmd"}
    with pytest.raises(ValueError, match=re.escape(says)):
        await execute(table, request_["cmd"], args)
    assert table.trays == trays and table.firmware.events_sent == sent
