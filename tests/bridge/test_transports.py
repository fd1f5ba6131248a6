"""Every transport carries a full hello, event and command exchange: serial over a pty, TCP on
loopback, USB through the loopback pyusb backend, and the in-process sim:// pair."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import TypeVar

import pytest
import usb.core

from firmware_bridge.endpoints import open_transport
from firmware_bridge.errors import TransportClosed, TransportError
from firmware_bridge.link import Link, LinkLost, LinkUp, Role
from firmware_bridge.messages import HelloReply, Key, KeyPress, SeatLamps, WallAction, WallCommand
from firmware_bridge.testing import collect_messages as collect
from firmware_bridge.testing import next_status as _next_status
from firmware_bridge.testing import test_device_info
from firmware_bridge.transport import (
    Connector,
    SimListener,
    TcpListener,
    Transport,
    open_pty,
    transport_pair,
)
from firmware_bridge.usb_loopback import LoopbackBackend, get_backend

_pids = itertools.count(0x7A00)
S = TypeVar("S")


async def next_status(link: Link, cls: type[S]) -> S:
    async with asyncio.timeout(5):
        return await _next_status(link, cls)


def _fixed(t: Transport) -> Connector:
    async def connect() -> Transport:
        return t

    return connect


async def full_exchange(
    host_target: str | Connector, device_connect: Connector, **kw: object
) -> Link:
    """Hello, then an event up and a command down, then a few of each concurrently."""
    device = Link(device_connect, role=Role.DEVICE, device_info=test_device_info())
    host = Link(host_target, role=Role.HOST, **kw)  # type: ignore[arg-type]
    async with device, host:
        async with asyncio.timeout(10):
            reply = await host.wait_up()
            assert isinstance(reply, HelloReply) and reply.boot_id == test_device_info().boot_id
            # device.send returns once the host has handled the event: consume alongside.
            got, _ = await asyncio.gather(collect(host, 1), device.send(KeyPress(1, Key.RON)))
            assert got == [KeyPress(1, Key.RON)]
            await host.send(WallCommand(WallAction.SHUFFLE))
            assert await collect(device, 1) == [WallCommand(WallAction.SHUFFLE)]
            evts = [KeyPress(i % 4, Key(i % 10)) for i in range(20)]
            cmds = [SeatLamps(i % 4, dealer=bool(i % 2)) for i in range(20)]

            async def send_all(link: Link, msgs: list) -> None:  # type: ignore[type-arg]
                for m in msgs:
                    await link.send(m)

            got = await asyncio.gather(
                collect(host, 20), collect(device, 20), send_all(device, evts), send_all(host, cmds)
            )
            assert got[0] == evts and got[1] == cmds
        assert host.stats.frames_in > 20 and host.stats.crc_errors == 0
    return host


async def test_serial_over_pty() -> None:
    master = await open_pty()
    try:
        host = await full_exchange(master.slave_path, _fixed(master))
        assert host.stats.reconnects == 0
    finally:
        await master.close()


async def test_serial_url_with_baud_and_missing_port() -> None:
    master = await open_pty()
    try:
        t = await open_transport(f"{master.slave_path}?baud=57600")
        t.write(b"ping\x00")
        async with asyncio.timeout(5):
            data = b""
            while not data.endswith(b"\x00"):
                data += await master.read()
        assert data == b"ping\x00"
        master.write(b"pong")
        async with asyncio.timeout(5):
            assert await t.read() == b"pong"
        await t.close()
        with pytest.raises(TransportClosed):
            await t.read()
    finally:
        await master.close()
    with pytest.raises(TransportError, match="ttyNOPE"):
        await open_transport("/dev/ttyNOPE")


async def test_serial_reconnects_after_the_port_vanishes() -> None:
    """The host reopens its serial port after the device side goes away and comes back."""
    masters: list[Transport] = []
    current: asyncio.Queue[Transport] = asyncio.Queue()

    async def device_connect() -> Transport:
        return await current.get()

    first = await open_pty()
    masters.append(first)
    current.put_nowait(first)
    paths = [first.slave_path]

    async def host_connect() -> Transport:
        return await open_transport(paths[-1])

    device = Link(device_connect, role=Role.DEVICE, device_info=test_device_info())
    host = Link(host_connect, role=Role.HOST)
    try:
        async with device, host:
            async with asyncio.timeout(10):
                await host.wait_up()
                # Unplug: the pty disappears (device link sees its transport end).
                await first.close()
                await next_status(host, LinkLost)
                second = await open_pty()
                masters.append(second)
                paths.append(second.slave_path)
                current.put_nowait(second)
                up = await next_status(host, LinkUp)
                assert not up.rebooted
                got, _ = await asyncio.gather(collect(host, 1), device.send(KeyPress(0, Key.OK)))
                assert got == [KeyPress(0, Key.OK)]
            assert host.stats.reconnects >= 1
    finally:
        for m in masters:
            await m.close()


async def test_tcp_loopback() -> None:
    async with TcpListener("127.0.0.1", 0) as listener:
        await full_exchange(f"socket://127.0.0.1:{listener.port}", listener.accept)


async def test_tcp_refused_and_bad_urls() -> None:
    async with TcpListener("127.0.0.1", 0) as listener:
        port = listener.port
    with pytest.raises(TransportError, match="socket://127.0.0.1"):
        await open_transport(f"socket://127.0.0.1:{port}")
    with pytest.raises(TransportError, match="host:port"):
        await open_transport("socket://nohost")
    with pytest.raises(TransportError, match="unknown transport scheme"):
        await open_transport("carrier-pigeon://table")
    with pytest.raises(TransportError, match="VID:PID"):
        await open_transport("usb://table")
    with pytest.raises(TransportError, match="no simulator"):
        await open_transport("sim://nobody")


async def test_usb_through_loopback_backend() -> None:
    backend = LoopbackBackend()
    pid = next(_pids)
    device = backend.add_device(0x1209, pid)
    # pyusb itself sees the fake device and its bulk endpoints.
    found = usb.core.find(idVendor=0x1209, idProduct=pid, backend=backend)
    assert found is not None
    eps = [ep.bEndpointAddress for ep in found.get_active_configuration()[(0, 0)]]
    assert eps == [0x01, 0x81]
    usb.util.dispose_resources(found)
    await full_exchange(f"usb://1209:{pid:04x}", device.accept, usb_backend=backend)


async def test_usb_url_selects_process_loopback_and_survives_unplug() -> None:
    backend = get_backend()
    pid = next(_pids)
    device = backend.add_device(0x1209, pid)
    dev_link = Link(device.accept, role=Role.DEVICE, device_info=test_device_info())
    host = Link(f"usb://1209:{pid:04x}?backend=loopback", role=Role.HOST)
    try:
        async with dev_link, host:
            async with asyncio.timeout(10):
                await host.wait_up()
                device.unplug()
                lost = await next_status(host, LinkLost)
                assert "usb://" in lost.reason or "transport" in lost.reason
                await asyncio.sleep(0.05)  # unplugged for a while: reconnects fail, then
                device.replug()
                await next_status(host, LinkUp)
                got, _ = await asyncio.gather(
                    collect(host, 1), dev_link.send(KeyPress(3, Key.STAFF_CALL))
                )
                assert got == [KeyPress(3, Key.STAFF_CALL)]
    finally:
        backend.remove_device(device)


async def test_usb_missing_device() -> None:
    with pytest.raises(TransportError, match="no such USB device"):
        await open_transport("usb://dead:beef", usb_backend=LoopbackBackend())


async def test_sim_listener_and_pair() -> None:
    with SimListener("bench-table") as listener:
        await full_exchange("sim://bench-table", listener.accept)
        with pytest.raises(TransportError, match="already listening"):
            SimListener("bench-table")
    a, b = transport_pair()
    a.write(b"xy")
    assert await b.read() == b"xy"
    await b.close()
    with pytest.raises(TransportClosed):
        await a.read()
    with pytest.raises(TransportClosed):
        a.write(b"z")
    with contextlib.suppress(TransportClosed):
        await a.close()


async def test_usb_without_libusb_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import usb.core

    def no_backend(**kwargs: object) -> None:
        raise usb.core.NoBackendError("No backend available")

    monkeypatch.setattr(usb.core, "find", no_backend)
    with pytest.raises(TransportError, match=r"needs the libusb library.*libusb-1.0-0"):
        await open_transport("usb://1209:7a11")
