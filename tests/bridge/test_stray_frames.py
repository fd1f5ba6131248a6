"""Stray frames in a healthy session, and refusals at the hello (issue #12, the link part).

A CRC-valid frame of another protocol version, or a stray hello reply, used to end the link
for good (``VersionMismatch``, the daemon exited). Mid-session such frames are now counted,
logged once per kind and dropped; only the hello exchange refuses a table, and then the host
says so once, reports :class:`LinkRefused` and keeps retrying.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

import pytest

from firmware_bridge.codec import Flags
from firmware_bridge.errors import LinkDown
from firmware_bridge.link import Link, LinkEvent, LinkRefused, LinkUp, RefusalKind, Role
from firmware_bridge.messages import (
    PROTOCOL_MINOR,
    SCHEMA_HASH,
    DiceRoll,
    Heartbeat,
    Hello,
    HelloReply,
    HelloStatus,
    Key,
    KeyPress,
)
from firmware_bridge.testing import (
    FaultyTransport,
    collect_messages,
    crc_valid_packet,
    link_pair,
    next_status,
    test_device_info,
)
from firmware_bridge.transport import SimListener
from tests.bridge.test_link import exchange

_names = itertools.count()
CAPS = test_device_info().capabilities


def packet(version: int, flags: int, msg_type: int, payload: bytes, seq: int = 0) -> bytes:
    return crc_valid_packet(bytes((version, flags, seq, 0, msg_type)) + payload)


def reply(major: int = 1, status: HelloStatus = HelloStatus.OK, session: int = 0x4321) -> bytes:
    return HelloReply(major, 0, status, SCHEMA_HASH, session, 0x0B007001, 0, "fw", 4,
                      CAPS).to_bytes()  # fmt: skip


def hello(major: int = 1, session: int = 0x4321) -> bytes:
    return Hello(major, PROTOCOL_MINOR, SCHEMA_HASH, session, 0, 0, "intruder").to_bytes()


HB = Heartbeat(0x4321, 5).to_bytes()
KEY = KeyPress(0, Key.TSUMO).to_bytes()

WRONG, STRAY = "wrong_version_dropped", "stray_handshakes_dropped"
SYN, DATA = Flags.SYN, Flags.RELIABLE | Flags.ACK

#: (towards, stray frame, the counter it lands in): every kind of frame that broke or
#: could break a healthy session before, and its cousins.
STRAYS: dict[str, tuple[Role, bytes, str]] = {
    "v2 SYN hello reply": (Role.HOST, packet(2, SYN, 0x02, reply(2)), WRONG),
    "v2 SYN heartbeat": (Role.HOST, packet(2, SYN, 0x03, HB), WRONG),
    "v2 SYN, no payload": (Role.HOST, packet(2, SYN, 0x01, b""), WRONG),
    "v2 data frame": (Role.HOST, packet(2, DATA, 0x83, KEY), WRONG),
    "v2 hello reply without SYN": (Role.HOST, packet(2, Flags.NONE, 0x02, reply(2)), WRONG),
    "hello reply of protocol 2": (Role.HOST, packet(1, SYN, 0x02, reply(2)), WRONG),
    "hello reply of protocol 0": (Role.HOST, packet(1, SYN, 0x02, reply(0)), WRONG),
    "version-mismatch reply, other session": (
        Role.HOST, packet(1, SYN, 0x02, reply(1, HelloStatus.VERSION_MISMATCH)), STRAY
    ),
    "ok reply, other session": (Role.HOST, packet(1, SYN, 0x02, reply()), STRAY),
    "malformed hello reply": (Role.HOST, packet(1, SYN, 0x02, reply()[:9]), STRAY),
    "hello at the host": (Role.HOST, packet(1, SYN, 0x01, hello()), STRAY),
    "v2 hello at the device": (Role.DEVICE, packet(2, SYN, 0x01, hello(2)), WRONG),
    "hello of protocol 2 at the device": (Role.DEVICE, packet(1, SYN, 0x01, hello(2)), WRONG),
    "v2 data frame at the device": (Role.DEVICE, packet(2, Flags.RELIABLE, 0x11, b""), WRONG),
    "hello reply at the device": (Role.DEVICE, packet(1, SYN, 0x02, reply()), STRAY),
    "malformed hello at the device": (
        Role.DEVICE, packet(1, SYN, 0x01, hello()[:5]), "decode_errors"
    ),
}  # fmt: skip


@pytest.mark.usefixtures("patient_link")
@pytest.mark.parametrize("kind", list(STRAYS))
async def test_a_stray_frame_mid_session_is_counted_logged_once_and_dropped(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    toward, stray, counter = STRAYS[kind]
    async with link_pair(host_faults={"seed": 1}, device_faults={"seed": 2}) as (host, device):
        await exchange(host, device, 10)
        target, receiver = (device, host) if toward is Role.HOST else (host, device)
        line = target._transport
        assert isinstance(line, FaultyTransport)
        caplog.clear()
        logged = []
        with caplog.at_level(logging.WARNING, logger="firmware_bridge.link"):
            for _ in range(3):
                line.inject(stray)
                await exchange(host, device, 10)  # the session carries on, nothing lost
                logged.append([r.getMessage() for r in caplog.records])
        assert getattr(receiver.stats, counter) == 3
        assert host.is_up and device.is_up
        for link in (host, device):
            assert link.stats.links_lost == 0 and link.stats.handshakes == 1
        assert host.refused is None
        # Logged for the first frame, only counted after: strays cannot flood the log.
        assert logged[0] and logged[0] == logged[1] == logged[2]
        assert any(f"stats.{counter}" in m or "refusing a host's hello" in m for m in logged[0])


@pytest.mark.usefixtures("patient_link")
async def test_strays_of_every_kind_in_one_session_lose_nothing() -> None:
    async with link_pair(host_faults={"seed": 3}, device_faults={"seed": 4}) as (host, device):
        for toward, stray, _ in STRAYS.values():
            line = (device if toward is Role.HOST else host)._transport
            assert isinstance(line, FaultyTransport)
            line.inject(stray)
        await exchange(host, device, 30)
        counted = {counter for _, _, counter in STRAYS.values()}
        for role, link in ((Role.HOST, host), (Role.DEVICE, device)):
            sent = sum(1 for toward, _, _ in STRAYS.values() if toward is role)
            if role is Role.HOST:
                sent += device.stats.refusals  # the table's answers to the stray hellos
            assert sum(getattr(link.stats, c) for c in counted) == sent
        assert device.stats.refusals == 2
        assert host.stats.links_lost == device.stats.links_lost == 0


async def test_a_table_of_another_protocol_is_refused_at_the_hello_and_retried(
    caplog: pytest.LogCaptureFixture,
) -> None:
    name = f"refuse{next(_names)}"
    with SimListener(name) as listener:
        old = Link(listener.accept, role=Role.DEVICE,
                   device_info=test_device_info(protocol_major=2))  # fmt: skip
        host = Link(f"sim://{name}", role=Role.HOST)
        seen: list[LinkEvent] = []
        with caplog.at_level(logging.INFO, logger="firmware_bridge.link"):
            async with old, host:
                async with asyncio.timeout(5):
                    refusal = await next_status(host, LinkRefused)
                    while host.stats.refusals < 3:  # noqa: ASYNC110
                        await asyncio.sleep(0.01)
                assert refusal.kind is RefusalKind.VERSION
                assert "table speaks protocol 2.x and this host speaks 1.x" in refusal.reason
                assert "update the host software" in refusal.reason
                assert host.refused == refusal and not host.is_up
                assert host.stats.reconnects >= 2  # retried, never gave up
                with pytest.raises(LinkDown, match="protocol 2.x"):
                    await host.send(DiceRoll())
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.05):
                        await host.wait_up()  # waits: does not raise
                await old.close()
                # The table is updated: the same link comes up on its own.
                new = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info())
                async with new:
                    async with asyncio.timeout(5):
                        await host.wait_up()
                        got, _ = await asyncio.gather(
                            collect_messages(host, 1, seen), new.send(KeyPress(1, Key.OK))
                        )
                    assert got == [KeyPress(1, Key.OK)]
                    assert host.refused is None
        assert [type(e) for e in seen] == [LinkUp]
        # One clear line for all the refusals, naming both versions.
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        refused = [m for m in errors if "table refused" in m]
        assert len(refused) == 1, errors
        assert "protocol 2.x" in refused[0] and "1.x" in refused[0] and "retrying" in refused[0]


async def test_the_refusal_is_one_event_until_the_reason_changes() -> None:
    name = f"refuse{next(_names)}"
    with SimListener(name) as listener:
        device = Link(listener.accept, role=Role.DEVICE,
                      device_info=test_device_info(protocol_major=0))  # fmt: skip
        host = Link(f"sim://{name}", role=Role.HOST)
        seen: list[LinkEvent] = []
        async with device, host:
            consumer = asyncio.ensure_future(collect_messages(host, 1, seen))
            async with asyncio.timeout(5):
                while host.stats.refusals < 3:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0.01)
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
        assert seen == [host.refused]
        assert host.refused is not None and "update the table firmware" in host.refused.reason
