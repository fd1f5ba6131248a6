"""Deterministic misbehaving transports for tests and hw_sim fault injection.

:class:`FaultyTransport` wraps any :class:`Transport`. Faults apply to what *this* end writes
(one ``write`` is one frame for a :class:`~firmware_bridge.link.Link`), so wrapping both ends
of a pair injects faults in both directions. Randomness comes from a seeded
``random.Random``, so a failing run repeats with the same seed::

    host_end, device_end = transport_pair()
    host_t = FaultyTransport(host_end, seed=1, drop=0.2, flip=0.05, byte_at_a_time=True)
    device_t = FaultyTransport(device_end, seed=2, drop=0.2, delay=0.002)

A :class:`FaultyTransport` is also a tap on the wire: ``capture=True`` records what went on
the line, and :meth:`FaultyTransport.inject` puts a forger's bytes on it.

:class:`FaultyConnector` does the same for every transport a connector opens (reconnects),
and :func:`link_pair` builds a host link and a device link back to back.

:class:`FrameFuzzer` makes random, mutated and replayed frames (CRC-valid or not) and
:func:`fuzz_link` throws them into a live host/device link pair: the bounded version runs in
the test suite, ``bench/link_fuzz.py`` the long one. :func:`is_forgery` tells which frames
only signing can stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import time
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import cobs.cobs as _cobs

from firmware_bridge.codec import (
    MAX_PAYLOAD,
    PROTOCOL_MAJOR,
    SIGNATURE_LEN,
    Flags,
    crc16,
    decode_packet,
)
from firmware_bridge.errors import BridgeError, FrameError, ProtocolError, TransportClosed
from firmware_bridge.link import DeviceInfo, Link, LinkEvent, LinkLost, Role
from firmware_bridge.messages import (
    PROTOCOL_MINOR,
    SCHEMA_HASH,
    Ack,
    BuzzerCommand,
    BuzzerPattern,
    Capability,
    CentreDisplay,
    DiceResult,
    DiceRoll,
    Fault,
    FaultClear,
    FaultCode,
    Heartbeat,
    Hello,
    HelloReply,
    HelloStatus,
    Key,
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    SeatTiles,
    StatusRequest,
    TableReset,
    TableStatus,
    TrayTotals,
    WallAction,
    WallCommand,
    WallLayout,
    WallState,
    WallStatus,
    WallTake,
    Wind,
    Zone,
)
from firmware_bridge.transport import Connector, Transport, transport_pair

__all__ = [
    "FaultStats",
    "FaultyConnector",
    "FaultyTransport",
    "FrameFuzzer",
    "FuzzReport",
    "collect_messages",
    "crc_valid_packet",
    "fuzz_link",
    "is_forgery",
    "link_pair",
    "next_status",
    "sample_messages",
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
    links = _links_over(host_t, dev_t, device_info=device_info, wait=wait, signing_key=signing_key)
    async with links as pair:
        yield pair


@contextlib.asynccontextmanager
async def _links_over(
    host_t: Transport,
    dev_t: Transport,
    *,
    device_info: DeviceInfo | None,
    wait: bool,
    signing_key: bytes | None,
) -> AsyncIterator[tuple[Link, Link]]:
    """Host and device links on the two ends of one pair, which cannot reconnect."""
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


# --------------------------------------------------------------------------------------------
# Fuzzing a live link


def sample_messages() -> tuple[Message, ...]:
    """One message of every type, with ordinary field values: what the fuzzer starts from."""
    caps = Capability.SEAT_CONSOLES | Capability.CENTRE_DISPLAY | Capability.DICE
    return (
        Ack(),
        Hello(PROTOCOL_MAJOR, PROTOCOL_MINOR, SCHEMA_HASH, 0x1234, 0, 0, "tablectl"),
        HelloReply(
            PROTOCOL_MAJOR,
            PROTOCOL_MINOR,
            HelloStatus.OK,
            SCHEMA_HASH,
            0x1234,
            0x0B007001,
            0,
            "sim-1.0",
            4,
            caps,
        ),  # fmt: skip
        Heartbeat(0x1234, 1000),
        WallCommand(WallAction.SHUFFLE),
        DiceRoll(),
        SeatDisplay(1, "ROLL?", "25000"),
        SeatLamps(0, dealer=True),
        CentreDisplay(Wind.EAST, 1, 0, 0, 70, (5,), 300),
        BuzzerCommand(BuzzerPattern.BEEP, 100),
        FaultClear(FaultCode.DICE),
        StatusRequest(),
        TableReset(),
        WallStatus(0, WallState.DONE, 34, 34),
        WallTake(2, 77, 101),
        DiceResult(3, 4),
        KeyPress(1, Key.RON),
        TrayTotals((25000, 25000, 25000, 25000)),
        Fault(FaultCode.MOTOR_STALL, 1, "wall 1"),
        TableStatus((WallState.IDLE,) * 4, ()),
        WallLayout(1, tuple(range(34, 68))),
        SeatTiles(3, Zone.MELDS, (108, 109, 110, 111)),
    )


def crc_valid_packet(body: bytes) -> bytes:
    """``body`` (header and payload, no CRC) with its CRC, COBS-encoded and delimited: a
    packet every decoder passes to its link, whatever the body says."""
    return bytes(_cobs.encode(body + crc16(body).to_bytes(2, "little"))) + b"\x00"


def is_forgery(packet: bytes, toward: Role) -> bool:
    """True if ``packet``, arriving unsigned at a ``toward``-role link in session, can act
    on that session: what only signing stops (docs/protocol.md, "Threat model"). That is a
    version-1 frame that is reliable (it may take the next ``seq``: displace a real event or
    command), carries an ack (it may complete frames the peer never received), is a
    heartbeat (a foreign session ends ours), or is a version-1 hello at the device (it
    opens a new session). Everything else a link must shrug off without signing."""
    try:
        frame = decode_packet(packet)
    except FrameError:
        return False
    if frame.version != PROTOCOL_MAJOR:
        return False
    if frame.flags & Flags.SYN:
        if toward is Role.DEVICE and frame.msg_type == Hello.MSG_TYPE:
            try:
                return Hello.from_bytes(frame.payload).protocol_major == PROTOCOL_MAJOR
            except ProtocolError:
                return False
        return False
    return bool(frame.flags & (Flags.RELIABLE | Flags.ACK)) or frame.msg_type == Heartbeat.MSG_TYPE


class FrameFuzzer:
    """Packets to throw at a live link, drawn from a seeded ``random.Random``:

    * random frames with a valid CRC: any version, flags, seq, ack and type, with a real
      message's payload (sometimes with one byte changed: a hello of another version, a
      reply of another session) or random bytes, and with the ``SIGNED`` flag a trailer;
    * mutations of real frames: bits flipped (the CRC then fails), bits flipped with the
      CRC fixed up (a forger's edit), cut short, or sent again unchanged (a replay);
    * garbage bytes.

    Every packet ends with a delimiter, so none merges with a real frame.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._payloads = [(m.MSG_TYPE, m.to_bytes()) for m in sample_messages()]

    def random_frame(self) -> bytes:
        """A CRC-valid frame with random header fields and payload."""
        rng = self.rng
        version = PROTOCOL_MAJOR if rng.random() < 0.6 else rng.randrange(256)
        flags = rng.randrange(256)
        if rng.random() < 0.6:
            msg_type, real = rng.choice(self._payloads)
            payload = bytearray(real)
            if payload and rng.random() < 0.5:
                payload[rng.randrange(len(payload))] = rng.randrange(256)
        else:
            msg_type = rng.randrange(256)
            size = rng.choice((0, 1, 2, 6, SIGNATURE_LEN, rng.randrange(MAX_PAYLOAD + 1)))
            payload = bytearray(rng.randbytes(size))
        if flags & Flags.SIGNED and rng.random() < 0.8:
            payload += rng.randbytes(SIGNATURE_LEN)  # a trailer that can pass for one
        header = bytes((version, flags, rng.randrange(256), rng.randrange(256), msg_type))
        return crc_valid_packet(header + bytes(payload[:MAX_PAYLOAD]))

    def mutated(self, real: bytes) -> bytes:
        """``real`` (one whole packet off the wire) changed, or replayed unchanged."""
        rng = self.rng
        choice = rng.random()
        if choice < 0.25:
            return real
        try:
            body = bytearray(_cobs.decode(real[:-1]))
        except _cobs.DecodeError:
            return real
        if choice < 0.55 or len(body) <= 2:
            for _ in range(rng.randrange(1, 4)):
                bit = rng.randrange(len(body) * 8)
                body[bit // 8] ^= 1 << (bit % 8)
            return bytes(_cobs.encode(bytes(body))) + b"\x00"
        if choice < 0.85:
            content = body[:-2]
            for _ in range(rng.randrange(1, 4)):
                bit = rng.randrange(len(content) * 8)
                content[bit // 8] ^= 1 << (bit % 8)
            return crc_valid_packet(bytes(content))
        return bytes(_cobs.encode(bytes(body[: rng.randrange(len(body))]))) + b"\x00"

    def garbage(self) -> bytes:
        """Random bytes (any value, delimiters included), then a delimiter."""
        return self.rng.randbytes(self.rng.randrange(1, 300)) + b"\x00"

    def packet(self, real: list[bytes]) -> bytes:
        """One packet of any kind; ``real`` are recent real packets to mutate or replay."""
        choice = self.rng.random()
        if choice < 0.5 or (choice < 0.85 and not real):
            return self.random_frame()
        if choice < 0.85:
            return self.mutated(self.rng.choice(real))
        return self.garbage()


@dataclasses.dataclass(slots=True)
class FuzzReport:
    """What :func:`fuzz_link` sent and what the two links made of it."""

    signing: bool = False
    #: Packets injected, both directions together.
    packets: int = 0
    #: Of those, packets with a valid CRC: they reach the link layer.
    crc_valid: int = 0
    #: Without signing: generated packets not sent because only signing stops them
    #: (:func:`is_forgery`).
    forgeries_skipped: int = 0
    #: With signing: CRC-valid injected packets the links did not reject (must be 0).
    unverified_accepted: int = 0
    events: int = 0
    commands: int = 0
    #: Every real event reached the host and every real command the device, once, in order.
    exactly_once: bool = False
    #: Exceptions raised by the links (their tasks, events() or sends): must be none.
    crashes: list[str] = dataclasses.field(default_factory=list)
    links_lost: int = 0
    seconds: float = 0.0
    host: dict[str, int] = dataclasses.field(default_factory=dict)
    device: dict[str, int] = dataclasses.field(default_factory=dict)

    @property
    def frames_per_s(self) -> float:
        """Injected packets per second of the whole run."""
        return self.packets / self.seconds if self.seconds else 0.0


_REJECTED = ("wrong_version_dropped", "unsigned_dropped", "bad_signature_dropped", "replay_dropped")
#: Real messages in flight at most per direction while fuzzing (the device queue is bounded).
_FUZZ_IN_FLIGHT = 32


def _split_packets(chunks: list[bytes]) -> list[bytes]:
    return [p + b"\x00" for chunk in chunks for p in chunk.split(b"\x00") if p]


async def fuzz_link(
    frames: int = 0,
    *,
    seed: int = 0,
    signing_key: bytes | None = None,
    events: int = 100,
    packets: list[tuple[Role, bytes]] | None = None,
    batch: int = 32,
    settle_s: float = 60.0,
) -> FuzzReport:
    """Throw ``frames`` fuzzer packets (:class:`FrameFuzzer`, seeded) into a live host/device
    link pair over the in-process pair, half towards each end, while the device sends
    ``events`` real events and the host as many real commands; or the given ``packets``
    (``(towards, bytes)``) instead of generated ones. Without ``signing_key``, forgeries
    (:func:`is_forgery`) are left out, since nothing but signing stops them: generated ones
    are replaced by others (``frames`` packets go in either way), given ones are skipped.

    Never raises for what the links do: the report says whether anything crashed and whether
    every real message was delivered exactly once, in order (within ``settle_s`` seconds of
    the last packet).
    """
    rng = random.Random(seed)
    fuzzer = FrameFuzzer(rng)
    report = FuzzReport(signing=signing_key is not None)
    valid = {Role.HOST: 0, Role.DEVICE: 0}
    host_end, device_end = transport_pair()
    host_t = FaultyTransport(host_end, capture=True)
    dev_t = FaultyTransport(device_end, capture=True)
    # What goes towards the host is put on the line at the device's end, and vice versa.
    line = {Role.HOST: dev_t, Role.DEVICE: host_t}
    sent_events = [WallTake(i % 4, i % 136, (i * 7) % 136) for i in range(events)]
    sent_commands = [SeatDisplay(i % 4, f"cmd {i}", "x" * (i % 20)) for i in range(events)]
    got_events: list[Message] = []
    got_commands: list[Message] = []
    in_flight = {Role.HOST: 0, Role.DEVICE: 0}
    futures: list[asyncio.Future[None]] = []

    async def consume(link: Link, into: list[Message]) -> None:
        try:
            async for item in link.events():
                if isinstance(item, Message):
                    into.append(item)
                elif isinstance(item, LinkLost):
                    report.links_lost += 1
        except Exception as exc:  # the report says so; the caller decides
            report.crashes.append(f"{link.role.value} events(): {exc!r}")

    def post(link: Link, msg: Message) -> None:
        role = link.role
        in_flight[role] += 1
        fut = link.post(msg)
        futures.append(fut)

        def done(f: asyncio.Future[None]) -> None:
            in_flight[role] -= 1
            if not f.cancelled() and f.exception() is not None:
                report.crashes.append(f"{role.value} send: {f.exception()!r}")

        fut.add_done_callback(done)

    def next_packets() -> list[tuple[Role, bytes]]:
        real = {
            Role.HOST: _split_packets(dev_t.captured)[-64:],
            Role.DEVICE: _split_packets(host_t.captured)[-64:],
        }
        dev_t.captured[:-4] = []
        host_t.captured[:-4] = []
        out = []
        for _ in range(batch):
            toward = Role.HOST if rng.random() < 0.5 else Role.DEVICE
            source = real[toward] + real[Role.DEVICE if toward is Role.HOST else Role.HOST]
            out.append((toward, fuzzer.packet(source)))
        return out

    start = time.perf_counter()
    async with _links_over(host_t, dev_t, device_info=None, wait=True, signing_key=signing_key) as (
        host,
        device,
    ):
        consumers = [
            asyncio.create_task(consume(host, got_events)),
            asyncio.create_task(consume(device, got_commands)),
        ]
        given = list(packets) if packets is not None else None
        cursor = 0

        def more() -> bool:
            return cursor < len(given) if given is not None else report.packets < frames

        n_events = n_commands = 0
        try:
            while more() or n_events < events or n_commands < events:
                if n_events < events and in_flight[Role.DEVICE] < _FUZZ_IN_FLIGHT:
                    post(device, sent_events[n_events])
                    n_events += 1
                if n_commands < events and in_flight[Role.HOST] < _FUZZ_IN_FLIGHT:
                    post(host, sent_commands[n_commands])
                    n_commands += 1
                if given is not None:
                    chunk = given[cursor : cursor + batch]
                    cursor += len(chunk)
                elif more():
                    chunk = next_packets()
                else:
                    chunk = []
                out: dict[Role, list[bytes]] = {Role.HOST: [], Role.DEVICE: []}
                for toward, packet in chunk:
                    if given is None and not more():
                        break
                    if signing_key is None and is_forgery(packet, toward):
                        report.forgeries_skipped += 1
                        continue
                    report.packets += 1
                    with contextlib.suppress(FrameError):
                        decode_packet(packet)
                        valid[toward] += 1
                    out[toward].append(packet)
                for toward, data in out.items():
                    if data:
                        line[toward].inject(b"".join(data))
                # Let both links read what was injected; when only real traffic is left,
                # wait for its acks without spinning.
                await asyncio.sleep(0 if chunk else 0.0005)
            async with asyncio.timeout(settle_s):
                await asyncio.gather(*futures, return_exceptions=True)
                while len(got_events) < events or len(got_commands) < events:  # noqa: ASYNC110
                    await asyncio.sleep(0.001)
        except (BridgeError, TimeoutError) as exc:
            report.crashes.append(f"driver: {exc!r}")
        finally:
            report.seconds = time.perf_counter() - start
            report.host = host.stats.as_dict()
            report.device = device.stats.as_dict()
            for task in consumers:
                task.cancel()
            await asyncio.gather(*consumers, return_exceptions=True)
    report.events, report.commands = n_events, n_commands
    report.crc_valid = valid[Role.HOST] + valid[Role.DEVICE]
    report.exactly_once = got_events == sent_events and got_commands == sent_commands
    if signing_key is not None:
        rejected = {
            role: sum(stats[k] for k in _REJECTED)
            for role, stats in ((Role.HOST, report.host), (Role.DEVICE, report.device))
        }
        report.unverified_accepted = sum(valid[r] - rejected[r] for r in valid)
    return report
