"""Deterministic misbehaving transports for tests and hw_sim fault injection.

:class:`FaultyTransport` wraps any :class:`Transport`. Faults apply to what *this* end writes
(one ``write`` is one frame for a :class:`~firmware_bridge.link.Link`), so wrapping both ends
of a pair injects faults in both directions. Randomness comes from a seeded
``random.Random``, so a failing run repeats with the same seed::

    host_end, device_end = transport_pair()
    host_t = FaultyTransport(host_end, seed=1, drop=0.2, flip=0.05, byte_at_a_time=True)
    device_t = FaultyTransport(device_end, seed=2, drop=0.2, delay=0.002)

A :class:`FaultyTransport` is also a tap on the wire: ``capture=True`` records what went on
the line, and :meth:`FaultyTransport.inject` puts a forger's bytes on it
(:func:`crc_valid_packet` makes any body a frame every decoder passes on).

:class:`FaultyConnector` does the same for every transport a connector opens (reconnects),
and :func:`link_pair` builds a host link and a device link back to back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import cobs.cobs as _cobs

from firmware_bridge.codec import crc16
from firmware_bridge.errors import TransportClosed
from firmware_bridge.link import DeviceInfo, Link, LinkEvent, Role
from firmware_bridge.messages import Message
from firmware_bridge.transport import Connector, Transport, transport_pair

__all__ = [
    "FaultStats",
    "FaultyConnector",
    "FaultyTransport",
    "collect_messages",
    "crc_valid_packet",
    "link_pair",
    "next_status",
    "test_device_info",
]


@dataclasses.dataclass(slots=True)
class FaultStats:
    """What a :class:`FaultyTransport` did to the traffic."""

    writes: int = 0
    dropped: int = 0
    flipped: int = 0
    held: int = 0
    injected: int = 0


class FaultyTransport(Transport):
    """A transport wrapper that drops, corrupts, delays, chunks and pauses traffic.

    * ``drop``: probability that one write (frame) vanishes;
    * ``flip``: probability that one random bit of a write is inverted;
    * ``delay`` (+ up to ``jitter``) seconds before a write reaches the peer; order is kept,
      as on a real wire;
    * ``byte_at_a_time``: ``read()`` returns one byte per call;
    * :meth:`pause` / :meth:`resume`: stop all traffic in both directions of this end,
      dropping it (an unplugged cable) or holding it until resume (a stalled USB hub);
    * ``capture``: keep every write that went on the line in :attr:`captured` (a tap);
    * :meth:`inject`: put bytes on the line as if this end had written them (a forger).
    """

    def __init__(
        self,
        inner: Transport,
        *,
        seed: int = 0,
        drop: float = 0.0,
        flip: float = 0.0,
        delay: float = 0.0,
        jitter: float = 0.0,
        byte_at_a_time: bool = False,
        capture: bool = False,
    ) -> None:
        self.inner = inner
        self.url = f"faulty+{inner.url}"
        self.rng = random.Random(seed)
        self.drop, self.flip, self.delay, self.jitter = drop, flip, delay, jitter
        self.byte_at_a_time = byte_at_a_time
        self.stats = FaultStats()
        self.capture = capture
        #: With ``capture``: what this end put on the line, one entry per write (the reader
        #: may clear it).
        self.captured: list[bytes] = []
        self._rx_buf = bytearray()
        self._paused = False
        self._pause_drops = True
        self._held_tx: list[bytes] = []
        self._held_rx = bytearray()
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._last_due = 0.0
        self._handles: set[asyncio.TimerHandle] = set()

    def pause(self, *, drop: bool = True) -> None:
        """Stop traffic through this end (``drop=False``: hold it until :meth:`resume`)."""
        self._paused = True
        self._pause_drops = drop
        self._resumed.clear()

    def resume(self) -> None:
        """Let traffic flow again; held writes go out first."""
        self._paused = False
        self._resumed.set()
        held, self._held_tx = self._held_tx, []
        for data in held:
            self._on_line(data)

    def inject(self, data: bytes) -> None:
        """Put ``data`` on the line towards the peer as if this end had written it: a forger
        (or a noisy neighbour) on the wire. No fault applies; the order with this end's own
        writes is kept. Whole frames stay whole: each write of a link is whole frames."""
        if self.inner.is_closed:
            raise TransportClosed(f"{self.url}: closed")
        self.stats.injected += 1
        self._forward(bytes(data))

    def write(self, data: bytes) -> None:
        if self.inner.is_closed:
            raise TransportClosed(f"{self.url}: closed")
        self.stats.writes += 1
        if self._paused:
            if not self._pause_drops:
                self.stats.held += 1
                self._held_tx.append(bytes(data))
            return
        if self.drop and self.rng.random() < self.drop:
            self.stats.dropped += 1
            return
        if self.flip and data and self.rng.random() < self.flip:
            buf = bytearray(data)
            bit = self.rng.randrange(len(buf) * 8)
            buf[bit // 8] ^= 1 << (bit % 8)
            data = bytes(buf)
            self.stats.flipped += 1
        self._on_line(data)

    def _on_line(self, data: bytes) -> None:
        if self.capture:
            self.captured.append(bytes(data))
        self._forward(data)

    def _forward(self, data: bytes) -> None:
        if not self.delay and not self.jitter:
            self.inner.write(data)
            return
        loop = asyncio.get_running_loop()
        due = max(loop.time() + self.delay + self.rng.random() * self.jitter, self._last_due)
        self._last_due = due
        handle: asyncio.TimerHandle | None = None

        def deliver() -> None:
            assert handle is not None
            self._handles.discard(handle)
            with contextlib.suppress(TransportClosed):
                self.inner.write(data)

        handle = loop.call_at(due, deliver)
        self._handles.add(handle)

    async def read(self) -> bytes:
        while True:
            if not self._rx_buf:
                data = await self.inner.read()
                if self._paused:
                    if not self._pause_drops:
                        self._held_rx += data
                    continue
                if self._held_rx:
                    data, self._held_rx = bytes(self._held_rx) + data, bytearray()
                self._rx_buf += data
            if self.byte_at_a_time:
                out = bytes(self._rx_buf[:1])
                del self._rx_buf[:1]
            else:
                out = bytes(self._rx_buf)
                self._rx_buf.clear()
            return out

    async def close(self) -> None:
        for handle in self._handles:
            handle.cancel()
        self._handles.clear()
        await self.inner.close()

    @property
    def is_closed(self) -> bool:
        return self.inner.is_closed


class FaultyConnector:
    """Wraps a connector so every transport it opens is a :class:`FaultyTransport`.

    Each connection gets seed ``seed + n``; :attr:`current` is the latest wrapper (to pause
    it), :attr:`fail_next` makes the next N connection attempts raise TransportClosed.
    """

    def __init__(self, connect: Connector, *, seed: int = 0, **faults: Any) -> None:
        self._connect = connect
        self._seed = seed
        self._faults = faults
        self.count = 0
        self.current: FaultyTransport | None = None
        self.fail_next = 0

    async def __call__(self) -> Transport:
        if self.fail_next > 0:
            self.fail_next -= 1
            raise TransportClosed("FaultyConnector: injected connection failure")
        inner = await self._connect()
        self.current = FaultyTransport(inner, seed=self._seed + self.count, **self._faults)
        self.count += 1
        return self.current


def test_device_info(boot_id: int = 0x0B00_7001, **kw: Any) -> DeviceInfo:
    """A :class:`DeviceInfo` with a fixed boot id, for reproducible tests."""
    return DeviceInfo(firmware_version=kw.pop("firmware_version", "sim-1.0"), boot_id=boot_id, **kw)


test_device_info.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


@contextlib.asynccontextmanager
async def link_pair(
    *,
    device_info: DeviceInfo | None = None,
    host_faults: dict[str, Any] | None = None,
    device_faults: dict[str, Any] | None = None,
    wait: bool = True,
    signing_key: bytes | None = None,
) -> AsyncIterator[tuple[Link, Link]]:
    """A started host link and device link over an in-process pair, optionally faulty.

    ``host_faults``/``device_faults`` are :class:`FaultyTransport` keyword arguments for what
    each side writes. With ``wait`` the context is entered once the session is up. With
    ``signing_key`` both ends sign and verify every frame.
    """
    host_end, device_end = transport_pair()
    host_t: Transport = FaultyTransport(host_end, **host_faults) if host_faults else host_end
    dev_t: Transport = FaultyTransport(device_end, **device_faults) if device_faults else device_end
    host_used = device_used = False

    async def connect_host() -> Transport:
        nonlocal host_used
        if host_used:
            raise TransportClosed("link_pair: the in-process pair cannot reconnect")
        host_used = True
        return host_t

    async def connect_device() -> Transport:
        nonlocal device_used
        if device_used:
            raise TransportClosed("link_pair: the in-process pair cannot reconnect")
        device_used = True
        return dev_t

    device = Link(
        connect_device,
        role=Role.DEVICE,
        device_info=device_info or test_device_info(),
        signing_key=signing_key,
    )
    host = Link(connect_host, role=Role.HOST, signing_key=signing_key)
    await device.start()
    await host.start()
    try:
        if wait:
            await host.wait_up()
            await device.wait_up()
        yield host, device
    finally:
        await host.close()
        await device.close()
        await host_t.close()
        await dev_t.close()


S = TypeVar("S")


async def collect_messages(
    link: Link, n: int, seen: list[LinkEvent] | None = None
) -> list[Message]:
    """The next ``n`` wire messages from ``link.events()``; status events (LinkUp, LinkLost,
    TableRebooted) are appended to ``seen`` if given. Returns early if the link closes."""
    out: list[Message] = []
    async with contextlib.aclosing(link.events()) as stream:
        async for event in stream:
            if isinstance(event, Message):
                out.append(event)
                if len(out) == n:
                    break
            elif seen is not None:
                seen.append(event)
    return out


async def next_status(link: Link, cls: type[S]) -> S:
    """The next event of type ``cls`` from ``link.events()``, skipping everything else.
    Wrap in ``asyncio.timeout()``; raises LookupError if the link closes first."""
    async with contextlib.aclosing(link.events()) as stream:
        async for event in stream:
            if isinstance(event, cls):
                return event
    raise LookupError(f"events() ended before a {cls.__name__}")


def crc_valid_packet(body: bytes) -> bytes:
    """``body`` (header and payload, no CRC) with its CRC, COBS-encoded and delimited: a
    packet every decoder passes to its link, whatever the body says."""
    return bytes(_cobs.encode(body + crc16(body).to_bytes(2, "little"))) + b"\x00"
