"""The daemon with MQTT configured, against a real Mosquitto.

A parlor watching the broker sees the table's retained state, per-seat scores that match
the game's final scores, and the finished game, every message within the public contract
(docs/mqtt/*.schema.json); a staff member's signed acknowledgement from the parlor ends a
staff call and is journalled as a staff action; an unsigned, forged or replayed request is
refused, journalled and published as a refusal, and a flood of them is counted, not
journalled one by one.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import time
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

import tablectl.mqtt_refusals
from firmware_bridge.messages import Key
from hw_sim import SimTable
from tablectl.config import StaffSettings, config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.mqtt_settings import MqttSettings
from tablectl.mqtt_signing import sign
from tablectl.rules.loader import load_rules
from tests.mqtt_contract import check

SECRET = "parlor-test-secret-0123456789abcdefgh"


def signed(topic: str, payload: dict[str, Any]) -> bytes:
    """``payload`` signed for ``topic`` now, as the dashboard sends it."""
    return json.dumps({**payload, **sign(SECRET, topic, payload, time.time())}).encode()


async def test_daemon_publishes_state_scores_and_the_finished_game(
    mosquitto: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    house = load_rules("sanma-free")
    sim = SimTable(house, 3, max_games=1)
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, topic_prefix="parlor")
    config = config_for(
        url, "sanma-free", tmp_path / "journal.sqlite3", table_id="t9", mqtt=settings
    )
    games: list[dict[str, Any]] = []
    game_seen = asyncio.Event()
    received: dict[str, Any] = {}
    counts: collections.Counter[str] = collections.Counter()

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as watcher:
        await watcher.subscribe("parlor/v1/t9/#", qos=1)

        async def watch() -> None:
            async for message in watcher.messages:
                payload = message.payload
                text = payload.decode() if isinstance(payload, bytes | bytearray) else str(payload)
                assert isinstance(payload, bytes)
                received[str(message.topic)] = check(str(message.topic), payload)
                counts[str(message.topic).rsplit("/", 1)[-1]] += 1
                if str(message.topic) == "parlor/v1/t9/games":
                    games.append(json.loads(text))
                    game_seen.set()

        watcher_task = asyncio.create_task(watch())
        daemon = Daemon(config, claim_window_s=0.05, max_games=1)
        task = asyncio.create_task(daemon.run())
        try:
            async with asyncio.timeout(60):
                await sim.wait_games(1)
                done, _ = await asyncio.wait(
                    {watcher_task, asyncio.ensure_future(game_seen.wait())},
                    return_when=asyncio.FIRST_COMPLETED,
                )
                assert not watcher_task.done(), watcher_task.exception()
        finally:
            daemon.stop.set()
            await task
            await sim.close()
            watcher_task.cancel()
    final = games[0]["final"]
    assert games[0]["rules"] == "sanma-free"
    state = received["parlor/v1/t9/state"]
    assert state["finished"] is True and state["rules"] == "sanma-free"
    raw_scores = state["scores"]
    assert [received[f"parlor/v1/t9/seat/{s}/score"] for s in range(3)] == raw_scores
    # Raw scores plus the leftover deposits given to the top are the final scores.
    assert sum(final["scores"]) == sum(raw_scores) + state["deposits"]
    assert received["parlor/v1/t9/availability"] in ("online", "offline")
    menu = received["parlor/v1/t9/menu"]  # the dashboard's new-game menu
    assert menu["rules_menu"][0] == "sanma-free" and "chombo" in menu["commands"]

    assert counts["hands"] == games[0]["hands"]
    # The broker echoes the table's own retained messages, often after a newer state was
    # queued: an echo is not another client's overwrite (it was taken for one).
    assert "another MQTT client wrote" not in caplog.text


async def test_a_staff_ack_from_the_parlor_ends_a_staff_call(
    mosquitto: Any, tmp_path: Path
) -> None:
    sim = SimTable("jboy", 1, autoplay=False)
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, command_secret=SECRET)
    journal_path = tmp_path / "journal.sqlite3"
    staff = StaffSettings(rules_menu=("jboy", "kenko"))
    config = config_for(url, "jboy", journal_path, table_id="t4", mqtt=settings, staff=staff)
    states: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    menus: list[dict[str, Any]] = []

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as parlor:
        await parlor.subscribe("tablectl/v1/t4/#", qos=1)

        async def next_state(want: Any) -> dict[str, Any]:
            async with asyncio.timeout(10):
                async for message in parlor.messages:
                    assert isinstance(message.payload, bytes)
                    if str(message.topic).endswith("/staff/ack"):
                        continue  # our own, the bad one included
                    value = check(str(message.topic), message.payload)
                    if str(message.topic).endswith("/events"):
                        events.append(value)
                    if str(message.topic).endswith("/state"):
                        states.append(value)
                    if str(message.topic).endswith("/menu"):
                        menus.append(value)
                    if states and want(states[-1]):
                        return states[-1]
            raise AssertionError("unreachable")

        daemon = Daemon(config, claim_window_s=0.05)
        task = asyncio.create_task(daemon.run())
        try:
            await next_state(lambda s: s["link"] == "up")
            sim.press(2, Key.STAFF_CALL)
            sim.press(2, Key.DIGIT_0)
            called = await next_state(lambda s: s["alerts"])
            [alert] = called["alerts"]
            assert (alert["kind"], alert["seat"], alert["acked_by"]) == ("staff_call", 2, None)
            # Not an ack (signed, so the sender's bug): the table logs it, changes nothing.
            bad = signed("tablectl/v1/t4/staff/ack", {"alert": 5})
            await parlor.publish("tablectl/v1/t4/staff/ack", bad, qos=1)
            ack = {"alert": alert["id"], "by": "Mika", "at": 1764000000.0}
            wire = signed("tablectl/v1/t4/staff/ack", ack)
            check("tablectl/v1/t4/staff/ack", wire)
            await parlor.publish("tablectl/v1/t4/staff/ack", wire, qos=1)
            answered = await next_state(lambda s: not s["alerts"])
            assert answered["link"] == "up"
            # The note of the acknowledgement and the state without the alert are queued
            # together; the publisher sends its streams in turns.
            if not any(e["type"] == "staff_action" for e in events):
                await next_state(lambda s: any(e["type"] == "staff_action" for e in events))

            # Game control from the parlor: nothing to undo yet (refused, and said why),
            # rules that are not on the table's menu (a file on the board: refused), then
            # a new game under other rules from the menu.
            for command in ({"cmd": "undo", "by": "Mika"},
                            {"cmd": "new_game", "by": "Mika", "rules": "/etc/passwd"},
                            {"cmd": "new_game", "by": "Mika", "rules": "kenko"}):  # fmt: skip
                wire = signed("tablectl/v1/t4/staff/command", command)
                check("tablectl/v1/t4/staff/command", wire)
                await parlor.publish("tablectl/v1/t4/staff/command", wire, qos=1)
            await next_state(lambda s: s["rules"] == "kenko")
            # As above: the new game's note may follow its state.
            if not any(e["type"] == "staff_action" and e["action"] == "new_game" for e in events):
                await next_state(
                    lambda s: any(
                        e["type"] == "staff_action" and e["action"] == "new_game" for e in events
                    )
                )
            refused = [e for e in events if e["type"] == "staff_refused"]
            assert [(e["action"], e["by"]) for e in refused] == [
                ("undo", "Mika"), ("new_game", "Mika")
            ]  # fmt: skip
            menu = "are not on this table's menu (jboy, kenko)"
            assert refused[1]["why"] == f"rules '/etc/passwd' {menu}"
            # The menu puts the rules in play first, and the page hears it (retained).
            assert menus[0]["rules_menu"] == ["jboy", "kenko"]
            if menus[-1]["rules_menu"] != ["kenko", "jboy"]:
                await next_state(lambda s: menus[-1]["rules_menu"] == ["kenko", "jboy"])
            assert menus[-1]["rules_menu"] == ["kenko", "jboy"]
        finally:
            daemon.stop.set()
            await task
            await sim.close()
    acks = [e for e in events if e["type"] == "staff_action"]
    assert [(e["action"], e["by"]) for e in acks] == [
        ("alert_ack", "Mika"), ("new_game", "Mika (parlor)")
    ]  # fmt: skip
    assert acks[0]["alert"] == alert["id"] and acks[0]["via"] == "mqtt"
    with Journal.open(journal_path, readonly=True) as journal:
        notes = [n for n in journal.notes() if n.kind == "staff_action"]
    assert [(n.detail["action"], n.detail["by"]) for n in notes] == [
        ("alert_ack", "Mika"), ("new_game", "Mika (parlor)")
    ]  # fmt: skip


async def test_unsigned_forged_and_replayed_requests_are_refused_journalled_and_counted(
    mosquitto: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    # A short period, so the count of a flood comes within the test.
    monkeypatch.setattr(tablectl.mqtt_refusals, "PERIOD", 2.0)
    sim = SimTable("jboy", 1, autoplay=False)
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, command_secret=SECRET)
    journal_path = tmp_path / "journal.sqlite3"
    staff = StaffSettings(rules_menu=("jboy", "kenko"))
    config = config_for(url, "jboy", journal_path, table_id="t5", mqtt=settings, staff=staff)
    topic = "tablectl/v1/t5/staff/command"
    events: list[dict[str, Any]] = []
    states: list[dict[str, Any]] = []

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as parlor:
        await parlor.subscribe("tablectl/v1/t5/#", qos=1)

        async def until(want: Any) -> None:
            async with asyncio.timeout(20):
                async for message in parlor.messages:
                    assert isinstance(message.payload, bytes)
                    name = str(message.topic)
                    if name.endswith("/staff/command"):
                        continue  # ours
                    value = check(name, message.payload)
                    if name.endswith("/events"):
                        events.append(value)
                    if name.endswith("/state"):
                        states.append(value)
                    if want():
                        return

        def refusals() -> list[tuple[str, str]]:
            return [(e["action"], e["why"]) for e in events if e["type"] == "staff_refused"]

        daemon = Daemon(config, claim_window_s=0.05)
        task = asyncio.create_task(daemon.run())
        try:
            await until(lambda: bool(states) and states[-1]["link"] == "up")
            game = states[-1]["game_id"]
            # The attack of issue 32: one anonymous message abandoned the game.
            abandon = {"cmd": "new_game", "by": "Mika", "rules": "kenko"}
            await parlor.publish(topic, json.dumps(abandon), qos=1)
            await until(lambda: len(refusals()) == 1)
            assert refusals() == [("new_game", "not signed")]
            # Signed, it is done; the very same message again is a replay.
            wire = signed(topic, abandon)
            await parlor.publish(topic, wire, qos=1)
            await until(lambda: bool(states) and states[-1]["rules"] == "kenko")
            await parlor.publish(topic, wire, qos=1)
            await until(lambda: len(refusals()) == 2)
            assert refusals()[1] == ("new_game", "replayed (nonce already used)")
            assert states[-1]["rules"] == "kenko" and states[-1]["game_id"] != game

            # A flood of forged commands: five refusals a period one by one, the rest
            # counted in one note per period; every one of them accounted for.
            forged = json.loads(signed(topic, {"cmd": "undo", "by": "Mika"}))
            forged["sig"] = "0" * 64
            for _ in range(2000):
                await parlor.publish(topic, json.dumps(forged), qos=1)

            def accounted() -> int:
                counts = (e["count"] for e in events if e["type"] == "staff_refusals")
                return len(refusals()) + sum(counts)

            await until(lambda: accounted() == 2002)
        finally:
            daemon.stop.set()
            await task
            await sim.close()
    counted = [e for e in events if e["type"] == "staff_refusals"]
    assert all(e["reasons"] == {"bad signature": e["count"]} for e in counted)
    with Journal.open(journal_path, readonly=True) as journal:
        notes = journal.notes()
    one_by_one = [n for n in notes if n.kind == "staff_refused"]
    assert len(one_by_one) == len(refusals())
    # At most five a period (the flood took a few): tens of notes, not two thousand.
    assert len(one_by_one) <= 5 * len(counted) + 5
    assert len(one_by_one) + len(counted) < 60
    assert [n.detail for n in notes if n.kind == "staff_refusals"] == [
        {"count": e["count"], "reasons": e["reasons"]} for e in counted
    ]
    first = next(n for n in notes if n.kind == "staff_refused")
    assert first.detail == {"action": "new_game", "by": "Mika", "why": "not signed", "via": "mqtt"}
    actions = [n.detail["action"] for n in notes if n.kind == "staff_action"]
    assert actions == ["new_game"]
    # The daemon said at start how it takes staff requests, in one line.
    starts = [r.message for r in caplog.records if "MQTT staff requests:" in r.message]
    assert len(starts) == 1 and starts[0].startswith("[t5] MQTT staff requests: signed")
