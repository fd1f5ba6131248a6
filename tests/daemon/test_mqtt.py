"""TablePublisher against a real Mosquitto (see conftest.py), plus queue unit tests.

Every broker test reads what a *fresh* subscriber sees, because that is what the parlor
and Home Assistant see after they (re)start: retained values, not a live stream.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiomqtt import Client

import tablectl.mqtt_link as link_mod
import tablectl.mqtt_outbox as outbox_mod
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_settings import MqttSettings
from tests.helpers import assert_one_socket_without_nagle

if TYPE_CHECKING:
    from conftest import Broker

REPO = Path(__file__).resolve().parents[2]

STATE = {
    "round": {"wind": "E", "number": 2},
    "dealer": 1,
    "honba": 1,
    "deposits": 1000,
    "scores": [25000, 32000, 18000, 24000],
    "phase": "play",
}


@pytest.fixture(autouse=True)
def fast_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small delays, as bellows patches T_RX_ACK_INIT; ratios match production."""
    monkeypatch.setattr(link_mod, "RECONNECT_DELAY_MIN", 0.05)
    monkeypatch.setattr(link_mod, "RECONNECT_DELAY_MAX", 0.2)
    monkeypatch.setattr(link_mod, "PUBLISH_TIMEOUT", 2.0)
    monkeypatch.setattr(link_mod, "CLOSE_TIMEOUT", 2.0)


def _live_children() -> set[int]:
    """Pids of our child processes that still run (zombies are dead already)."""
    me = os.getpid()
    children = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # exited while we looked
        # Fields after the parenthesised command name: state, ppid, ...
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if int(ppid) == me and state != "Z":
            children.add(int(entry))
    return children


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Fail (after killing it) any broker or subprocess that outlives its test."""
    before = _live_children()
    yield
    leaked = _live_children() - before
    for pid in leaked:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    assert not leaked, f"test leaked child processes {sorted(leaked)}"


@pytest.fixture(autouse=True)
async def no_leaked_tasks() -> AsyncIterator[None]:
    """Fail a test that leaves a publisher (or any other) task running."""
    yield
    me = asyncio.current_task()
    leaked = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
    # aiomqtt's misc task ends one loop turn after its socket closes.
    for _ in range(3):
        if not leaked:
            break
        await asyncio.sleep(0)
        leaked = [t for t in leaked if not t.done()]
    for task in leaked:
        task.cancel()
    assert not leaked, f"test leaked tasks {leaked}"


def settings_for(broker: Broker, **overrides: Any) -> MqttSettings:
    """Publisher settings for ``broker`` with its credentials, if any."""
    values: dict[str, Any] = {
        "host": broker.host,
        "port": broker.port,
        "username": broker.username,
        "password": broker.password,
    }
    values.update(overrides)
    return MqttSettings(**values)


async def wait_until(
    predicate: Callable[[], bool],
    timeout: float = 5.0,  # noqa: ASYNC109 - a poll helper, the value is the point
) -> None:
    """Poll ``predicate`` on the loop (the publisher works meanwhile) until true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {predicate}")
        await asyncio.sleep(0.01)


def idle(publisher: TablePublisher) -> Callable[[], bool]:
    """True once the publisher is connected and has sent everything queued."""
    return lambda: publisher.connected and publisher.stats.queued == 0


async def retained(
    broker: Broker,
    pattern: str,
    expect: set[str],
    timeout: float = 3.0,  # noqa: ASYNC109 - a poll helper, the value is the point
) -> dict[str, bytes]:
    """Subscribe afresh to ``pattern`` and return the retained payloads of ``expect``."""
    got: dict[str, bytes] = {}
    async with Client(
        broker.host, broker.port, username=broker.username, password=broker.password
    ) as client:
        await client.subscribe(pattern, qos=1)
        async with asyncio.timeout(timeout):
            async for message in client.messages:
                if message.retain:
                    assert isinstance(message.payload, bytes)
                    got[str(message.topic)] = message.payload
                if expect <= set(got):
                    return got
    raise AssertionError("unreachable")  # the timeout raises first


async def retained_all(broker: Broker, pattern: str) -> dict[str, bytes]:
    """Every retained payload under ``pattern``, proving absence too.

    Mosquitto sends a subscription's retained messages right after its SUBACK, in the
    order of the SUBSCRIBEs; so once a retained sentinel, subscribed after ``pattern``,
    arrives, everything retained under ``pattern`` has arrived before it.
    """
    sentinel = "test/sentinel"
    got: dict[str, bytes] = {}
    async with Client(
        broker.host, broker.port, username=broker.username, password=broker.password
    ) as client:
        await client.publish(sentinel, b"end", qos=1, retain=True)
        await client.subscribe(pattern, qos=1)
        await client.subscribe(sentinel, qos=1)
        async with asyncio.timeout(3):
            async for message in client.messages:
                if str(message.topic) == sentinel:
                    return got
                if message.retain:
                    assert isinstance(message.payload, bytes)
                    got[str(message.topic)] = message.payload
    raise AssertionError("unreachable")  # the timeout raises first


# ------------------------------------------------------------------ no broker


def test_construct_without_loop_and_validate() -> None:
    """Construction does no I/O and needs no event loop; bad ids and seats are refused."""
    publisher = TablePublisher(MqttSettings("127.0.0.1"), "t-1", 4)
    publisher.publish_state(STATE)
    assert publisher.stats.queued == 5  # state + 4 seat scores
    assert not publisher.connected
    with pytest.raises(ValueError, match="table id"):
        TablePublisher(MqttSettings("127.0.0.1"), "t/1", 4)
    with pytest.raises(ValueError, match="seats"):
        TablePublisher(MqttSettings("127.0.0.1"), "t1", 5)


def test_queue_coalesces_state_and_drops_oldest_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded queue: state coalesces, events drop oldest-first, games survive longest."""
    monkeypatch.setattr(outbox_mod, "QUEUE_LIMIT", 3)
    publisher = TablePublisher(MqttSettings("127.0.0.1"), "t1", 4)

    for honba in range(5):
        publisher.publish_state({**STATE, "honba": honba})
    publisher.publish_game({"game": 1})
    for n in range(5):
        publisher.publish_event({"n": n})
    assert publisher.stats.dropped == 3  # events 0, 1, 2
    assert publisher.stats.queued == 3 + 5  # FIFO at its limit + state + 4 seat scores

    # Drain without a broker (private, to see order and content).
    sent = []
    while (message := publisher._outbox.take()) is not None:
        sent.append((message.topic, json.loads(message.payload)))
    fifo = [(t, p) for t, p in sent if t.endswith(("/games", "/events"))]
    retained = [(t, p) for t, p in sent if (t, p) not in fifo]
    assert fifo == [
        ("tablectl/v1/t1/games", {"v": 1, "game": 1}),
        ("tablectl/v1/t1/events", {"v": 1, "n": 3}),
        ("tablectl/v1/t1/events", {"v": 1, "n": 4}),
    ]
    assert retained[0] == (
        "tablectl/v1/t1/state",
        {"v": 1, **STATE, "honba": 4},
    )  # only the latest state
    assert retained[1:] == [
        (f"tablectl/v1/t1/seat/{n}/score", s) for n, s in enumerate(STATE["scores"])
    ]
    # The two streams take turns: events cannot hold back the state.
    assert sent[0][0] == "tablectl/v1/t1/state"
    assert [t.endswith(("/games", "/events")) for t, _ in sent[:6]] == [False, True] * 3

    # With nothing but games queued, the oldest game goes.
    for n in range(4):
        publisher.publish_game({"game": n})
    assert publisher.stats.dropped == 4
    assert [json.loads(m.payload) for m in publisher._outbox._fifo] == [
        {"v": 1, "game": n} for n in (1, 2, 3)
    ]


def test_unserialisable_payload_is_dropped_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A caller bug is logged and counted; it must not take the game down."""
    publisher = TablePublisher(MqttSettings("127.0.0.1"), "t1", 4)
    publisher.publish_event({"when": object()})
    assert publisher.stats.dropped == 1
    assert publisher.stats.queued == 0
    assert "not JSON-serialisable" in caplog.text


# ---------------------------------------------------------------- with broker


async def test_retained_state_reaches_late_subscriber(mosquitto: Broker) -> None:
    """State and availability are retained, so a subscriber arriving later gets them."""
    async with TablePublisher(settings_for(mosquitto), "t1", 4) as publisher:
        publisher.publish_state({**STATE, "phase": "deal"})
        publisher.publish_state(STATE)
        await wait_until(idle(publisher))
        got = await retained(
            mosquitto, "tablectl/v1/t1/#", {"tablectl/v1/t1/state", "tablectl/v1/t1/availability"}
        )
        assert json.loads(got["tablectl/v1/t1/state"]) == {"v": 1, **STATE}
        assert got["tablectl/v1/t1/availability"] == b"online"
    # close() says offline, retained
    got = await retained(mosquitto, "tablectl/v1/t1/availability", {"tablectl/v1/t1/availability"})
    assert got["tablectl/v1/t1/availability"] == b"offline"
    assert publisher.stats.dropped == 0


async def test_the_tables_socket_sends_at_once(mosquitto: Broker) -> None:
    """TCP_NODELAY: a state sent right after an event does not wait for the broker's
    delayed ACK (Nagle's algorithm cost the parlor's page ~40 ms a state)."""
    async with TablePublisher(settings_for(mosquitto), "t1", 4) as publisher:
        await wait_until(idle(publisher))
        assert_one_socket_without_nagle(mosquitto.port)


async def test_per_seat_score_topics(mosquitto: Broker) -> None:
    """Each seat's score is its own retained topic, updated when it changes."""
    async with TablePublisher(settings_for(mosquitto), "t1", 4) as publisher:
        publisher.publish_state(STATE)
        publisher.publish_state({**STATE, "scores": [25000, 32000, 10000, 32000]})
        await wait_until(idle(publisher))
        seats = {f"tablectl/v1/t1/seat/{n}/score" for n in range(4)}
        got = await retained(mosquitto, "tablectl/v1/t1/seat/+/score", seats)
        assert [int(got[f"tablectl/v1/t1/seat/{n}/score"]) for n in range(4)] == [
            25000,
            32000,
            10000,
            32000,
        ]


async def test_events_and_games_keep_order(mosquitto: Broker) -> None:
    """Events and games are live (not retained) and arrive in the order published."""
    async with (
        Client(mosquitto.host, mosquitto.port) as sub,
        TablePublisher(settings_for(mosquitto), "t1", 4) as publisher,
    ):
        await sub.subscribe("tablectl/v1/t1/events", qos=1)
        await sub.subscribe("tablectl/v1/t1/games", qos=1)
        for n in range(20):
            publisher.publish_event({"type": "dahai", "n": n})
        publisher.publish_game({"final": [1, 2, 3, 4]})
        received = []
        async with asyncio.timeout(3):
            async for message in sub.messages:
                assert not message.retain
                assert isinstance(message.payload, bytes)
                received.append((str(message.topic), json.loads(message.payload)))
                if len(received) == 21:
                    break
        assert received[:20] == [
            ("tablectl/v1/t1/events", {"v": 1, "type": "dahai", "n": n}) for n in range(20)
        ]
        assert received[20] == ("tablectl/v1/t1/games", {"v": 1, "final": [1, 2, 3, 4]})


async def test_home_assistant_discovery(mosquitto: Broker) -> None:
    """Retained discovery configs: one score sensor per seat, plus round and phase."""
    settings = settings_for(mosquitto, topic_prefix="parlor", discovery_prefix="ha")
    async with TablePublisher(settings, "t7", 4) as publisher:
        await wait_until(idle(publisher))
    # The same table, now set up for sanma: its fourth seat sensor must go away.
    async with TablePublisher(settings, "t7", 3) as publisher:
        await wait_until(idle(publisher))
        got = await retained_all(mosquitto, "ha/#")
    objects = ["seat0_score", "seat1_score", "seat2_score", "round", "phase"]
    assert set(got) == {f"ha/sensor/tablectl_t7/{o}/config" for o in objects}
    configs = {o: json.loads(got[f"ha/sensor/tablectl_t7/{o}/config"]) for o in objects}
    for seat in range(3):
        config = configs[f"seat{seat}_score"]
        assert config["unique_id"] == f"tablectl_t7_seat{seat}_score"
        assert config["state_topic"] == f"parlor/v1/t7/seat/{seat}/score"
        assert config["unit_of_measurement"] == "pts"
    for config in configs.values():
        assert config["availability_topic"] == "parlor/v1/t7/availability"
        assert config["device"]["identifiers"] == ["tablectl_t7"]
        assert {"name", "manufacturer", "model"} <= set(config["device"])
    assert configs["round"]["state_topic"] == "parlor/v1/t7/state"
    assert "value_json.round" in configs["round"]["value_template"]
    assert configs["phase"]["value_template"] == "{{ value_json.phase }}"
    assert len({c["unique_id"] for c in configs.values()}) == len(configs)


CHILD = """
import asyncio, sys
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_settings import MqttSettings

async def main() -> None:
    settings = MqttSettings("127.0.0.1", int(sys.argv[1]), keepalive=2)
    publisher = TablePublisher(settings, "t9", 4)
    publisher.publish_state({"phase": "play"})
    await publisher.run()

asyncio.run(main())
"""


async def test_last_will_marks_killed_daemon_offline(mosquitto: Broker) -> None:
    """A daemon killed with SIGKILL shows ``offline`` (retained) via its last will."""
    topic = "tablectl/v1/t9/availability"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(mosquitto.port), env=env, cwd=REPO
    )
    try:
        async with Client(mosquitto.host, mosquitto.port) as sub:
            await sub.subscribe(topic, qos=1)
            async with asyncio.timeout(5):
                async for message in sub.messages:
                    if message.payload == b"online":
                        break
        child.send_signal(signal.SIGKILL)
        await child.wait()
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()

    # The broker publishes the will when it notices: at once for a closed socket, after
    # 1.5 x keepalive (3 s here) for a silent one. Ask afresh until it is there.
    deadline = time.monotonic() + 4
    while True:
        got = await retained(mosquitto, topic, {topic})
        if got[topic] == b"offline" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    assert got[topic] == b"offline"


async def test_broker_restart_reconnects_and_republishes(mosquitto: Broker) -> None:
    """Broker down: publish calls return without waiting; broker back: latest state, and
    the staff menu (published once, at the daemon's start)."""
    menu = {"table": "t1", "rules_menu": ["kenko"], "commands": ["undo", "new_game"]}
    async with TablePublisher(settings_for(mosquitto), "t1", 4) as publisher:
        publisher.publish_menu(menu)
        publisher.publish_state({**STATE, "honba": 0})
        await wait_until(idle(publisher))

        await asyncio.to_thread(mosquitto.stop)
        await wait_until(lambda: not publisher.connected)
        # The publish calls are plain functions: they cannot wait for the broker. Here
        # they run with the broker down, and everything they queued is still held.
        assert not inspect.iscoroutinefunction(publisher.publish_state)
        assert not inspect.iscoroutinefunction(publisher.publish_event)
        for honba in range(1, 200):
            publisher.publish_state({**STATE, "honba": honba})
            publisher.publish_event({"type": "tick", "honba": honba})
            if honba % 50 == 0:
                await asyncio.sleep(0.05)  # let reconnect attempts fail meanwhile
        assert publisher.stats.connect_failures >= 1
        assert publisher.stats.dropped == 0 and publisher.stats.queued >= 199

        await asyncio.to_thread(mosquitto.start)  # same port; its retained store is empty
        await wait_until(idle(publisher))
        assert publisher.stats.reconnects == 1
        got = await retained(mosquitto, "tablectl/v1/t1/state", {"tablectl/v1/t1/state"})
        assert json.loads(got["tablectl/v1/t1/state"])["honba"] == 199
        got = await retained(
            mosquitto, "tablectl/v1/t1/availability", {"tablectl/v1/t1/availability"}
        )
        assert got["tablectl/v1/t1/availability"] == b"online"
        got = await retained(mosquitto, "tablectl/v1/t1/menu", {"tablectl/v1/t1/menu"})
        assert json.loads(got["tablectl/v1/t1/menu"]) == {"v": 1, **menu}


async def test_auth_wrong_password_logs_and_retries_right_one_works(
    mosquitto_auth: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """A refused login is an ERROR in the log and is retried; the right one publishes."""
    caplog.set_level(logging.DEBUG, logger="tablectl.mqtt")
    wrong = settings_for(mosquitto_auth, password="wrong")
    async with TablePublisher(wrong, "t1", 4) as publisher:
        await wait_until(lambda: publisher.stats.connect_failures >= 3)
        assert not publisher.connected
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, "repeats of the same failure are logged at DEBUG only"
    assert "refused" in errors[0].getMessage()
    assert "[t1]" in errors[0].getMessage()

    async with TablePublisher(settings_for(mosquitto_auth), "t1", 4) as publisher:
        publisher.publish_state(STATE)
        await wait_until(idle(publisher))
        got = await retained(mosquitto_auth, "tablectl/v1/t1/state", {"tablectl/v1/t1/state"})
        assert json.loads(got["tablectl/v1/t1/state"]) == {"v": 1, **STATE}


async def test_cancelled_run_still_says_offline(mosquitto: Broker) -> None:
    """Cancelling run() (no close()) disconnects cleanly, so it publishes offline itself."""
    publisher = TablePublisher(settings_for(mosquitto), "t1", 4)
    task = asyncio.create_task(publisher.run())
    await wait_until(idle(publisher))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    got = await retained(mosquitto, "tablectl/v1/t1/availability", {"tablectl/v1/t1/availability"})
    assert got["tablectl/v1/t1/availability"] == b"offline"


async def test_close_without_broker_is_prompt(unused_port: int) -> None:
    """No broker at all: run() keeps retrying quietly and close() returns at once."""
    publisher = TablePublisher(MqttSettings("127.0.0.1", unused_port), "t1", 4)
    async with publisher:
        publisher.publish_state(STATE)
        await wait_until(lambda: publisher.stats.connect_failures >= 2)
        start = time.monotonic()
    assert time.monotonic() - start < 0.5
    publisher.publish_event({"late": True})  # after close: dropped, not queued
    assert publisher.stats.dropped == 1


async def test_tls_missing_ca_file_is_retried(
    tmp_path: Path, unused_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """With ``tls`` and a missing CA file the failure is logged and retried, not raised."""
    settings = MqttSettings("127.0.0.1", unused_port, tls=True, ca_file=str(tmp_path / "no.pem"))
    async with TablePublisher(settings, "t1", 4) as publisher:
        await wait_until(lambda: publisher.stats.connect_failures >= 2)
    assert "FileNotFoundError" in caplog.text


async def test_retained_topics_overwritten_by_another_client_are_put_back(
    mosquitto: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    """On a broker without ACLs anyone may write the table's retained topics: a fake
    ``offline``, a fake discovery config or a fake score is replaced by the table's own."""
    discovery = "homeassistant/sensor/tablectl_t1/seat0_score/config"
    async with TablePublisher(settings_for(mosquitto), "t1", 4) as publisher:
        publisher.publish_state(STATE)
        await wait_until(idle(publisher))
        truth = await retained(mosquitto, "#", {discovery, "tablectl/v1/t1/seat/2/score"})
        async with Client(mosquitto.host, mosquitto.port) as intruder:
            await intruder.publish("tablectl/v1/t1/availability", b"offline", qos=1, retain=True)
            await intruder.publish(discovery, b'{"name": "pwned"}', qos=1, retain=True)
            await intruder.publish("tablectl/v1/t1/seat/2/score", b"99999", qos=1, retain=True)
        await wait_until(lambda: publisher.stats.overwritten >= 3)
        await wait_until(idle(publisher))
        got = await retained_all(mosquitto, "#")
        assert got["tablectl/v1/t1/availability"] == b"online"
        assert got[discovery] == truth[discovery]
        assert got["tablectl/v1/t1/seat/2/score"] == truth["tablectl/v1/t1/seat/2/score"]
        # Our own publishes echo back without being taken for an intrusion.
        publisher.publish_state({**STATE, "scores": [1, 2, 3, 4]})
        await wait_until(idle(publisher))
        await asyncio.sleep(0.2)
        assert publisher.stats.overwritten == 3
    assert sum("another MQTT client wrote" in r.message for r in caplog.records) == 3


async def test_tls_with_a_client_certificate(mosquitto_tls: Broker) -> None:
    """A broker that requires client certificates takes the table with its certfile and
    keyfile, and not without them."""
    tls = mosquitto_tls.tls_dir
    assert tls is not None
    with_cert = settings_for(
        mosquitto_tls,
        tls=True,
        ca_file=str(tls / "ca.pem"),
        certfile=str(tls / "client.pem"),
        keyfile=str(tls / "client.key"),
    )
    async with TablePublisher(with_cert, "t1", 4) as publisher:
        publisher.publish_state(STATE)
        await wait_until(idle(publisher), timeout=10)
    without = settings_for(mosquitto_tls, tls=True, ca_file=str(tls / "ca.pem"))
    async with TablePublisher(without, "t2", 4) as publisher:
        await wait_until(lambda: publisher.stats.connect_failures >= 1, timeout=10)
        assert not publisher.connected


def test_staff_requests_from_the_broker_are_checked_before_the_daemon_sees_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A table that trusts its broker's ACL (test_mqtt_signing.py: the other modes).
    settings = MqttSettings(host="127.0.0.1", commands="broker-acl")
    publisher = TablePublisher(settings, "t1", 4)
    acks: list[tuple[str, str]] = []
    commands: list[tuple[str, str, str | None, int | None]] = []
    publisher.on_staff_ack = lambda alert, by: acks.append((alert, by))
    publisher.on_staff_command = lambda cmd, by, rules, seat: commands.append(
        (cmd, by, rules, seat)
    )
    for bad in (b"not json", b"[1]", b'{"alert": "a1"}', b'{"alert": 5, "by": "Mika"}',
                b'{"alert": "a1", "by": "' + b"x" * 65 + b'"}', b'{"alert": "a1", "by": "\\n"}',
                b'{"alert": "a1", "by": "Mika", "pad": "' + b"x" * 5000 + b'"}',
                b"[" * 100_000):  # fmt: skip
        publisher._requests.ack(bad)
    for bad in (b'{"cmd": "rm", "by": "Mika"}', b'{"cmd": "undo"}',
                b'{"cmd": "new_game", "by": "Mika", "rules": 7}',
                b'{"cmd": "chombo", "by": "Mika"}',
                b'{"cmd": "false_call", "by": "Mika", "seat": 4}',
                b'{"cmd": "chombo", "by": "Mika", "seat": true}'):  # fmt: skip
        publisher._requests.command(bad)
    assert acks == [] and commands == []
    assert caplog.text.count("ignored") == 14
    assert "chombo needs 'seat', a seat number 0-3" in caplog.text
    publisher._requests.ack(b'{"alert": "a1", "by": "Mika", "at": 1.5}')
    publisher._requests.command(b'{"cmd": "new_game", "by": "Mika", "rules": "kenko"}')
    publisher._requests.command(b'{"cmd": "undo", "by": "Mika", "seat": 2}')
    publisher._requests.command(b'{"cmd": "chombo", "by": "Mika", "seat": 2}')
    publisher._requests.command(b'{"cmd": "tray_override", "by": "Mika"}')
    assert acks == [("a1", "Mika")]
    assert commands == [
        ("new_game", "Mika", "kenko", None),
        ("undo", "Mika", None, None),  # a seat only for the commands that take one
        ("chombo", "Mika", None, 2),
        ("tray_override", "Mika", None, None),
    ]


async def test_a_staff_request_sent_when_the_table_says_online_reaches_it(
    mosquitto: Broker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table listens for staff requests before it says ``online``: a dashboard
    that sends one the moment it sees the table (a seating, the first thing staff do
    at a table just started) is heard. The table used to announce itself first and
    subscribe after: a request in between was dropped by the broker, no subscriber,
    and the page waited for an answer that never came (tests/parlor, with the daemon
    busy starting on a loaded machine). The table here dwells after its ``online``, as
    a busy one does, so the order decides."""
    send = link_mod.BrokerLink._send

    async def slow_after_online(self: Any, client: Any, message: Any) -> None:
        await send(self, client, message)
        if message.payload == b"online":
            await asyncio.sleep(0.3)

    monkeypatch.setattr(link_mod.BrokerLink, "_send", slow_after_online)
    settings = settings_for(mosquitto, commands="broker-acl")
    commands: list[str] = []
    async with Client(mosquitto.host, mosquitto.port) as staff:
        await staff.subscribe("tablectl/v1/t1/availability", qos=1)
        async with TablePublisher(settings, "t1", 4) as publisher:
            publisher.on_staff_command = lambda cmd, by, rules, seat: commands.append(cmd)
            async with asyncio.timeout(5):
                async for message in staff.messages:
                    if message.payload == b"online":
                        break
            await staff.publish(
                "tablectl/v1/t1/staff/command",
                json.dumps({"cmd": "undo", "by": "Mika", "at": time.time()}),
                qos=1,
            )
            await wait_until(lambda: bool(commands))
    assert commands == ["undo"]
