"""The reliable link: sequence numbers, acks, retransmission, hello, heartbeat, reconnect.

One :class:`Link` class serves both ends of the wire:

* ``Role.HOST`` (the Pi daemon) opens the transport, sends :class:`Hello`, checks the reply,
  and reopens the transport with backoff whenever the link drops;
* ``Role.DEVICE`` (hw_sim, or a Python model of the firmware) answers hellos with its
  :class:`DeviceInfo`, keeps unacknowledged events across host reconnects, and reports host
  silence upward so the firmware can stop its motors.

Only the hello exchange can refuse a peer (another protocol major version, or signing one
end requires and the other cannot meet); the host then reports :class:`LinkRefused` and
keeps retrying with backoff. Mid-session, a frame that makes no sense there (another
version, a stray handshake, a bad or missing signature) is counted in :class:`LinkStats`,
logged once per kind and dropped. With a ``signing_key`` every frame is signed and
verified (:mod:`firmware_bridge.signing`).

The daemon's API is ``async for event in link.events()`` and ``await link.send(command)``;
see docs/protocol.md for the rules implemented here. Timing constants are module globals,
read at use time, so tests patch them small.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import enum
import logging
import random
import typing
from collections.abc import AsyncGenerator
from typing import Any, Final

from firmware_bridge.codec import (
    PROTOCOL_MAJOR,
    Flags,
    Frame,
    FrameDecoder,
    encode_frame,
    encode_unsigned,
)
from firmware_bridge.endpoints import connector_for
from firmware_bridge.errors import (
    LinkDown,
    ProtocolError,
    SendFailed,
    TransportClosed,
    TransportError,
)
from firmware_bridge.messages import (
    MESSAGES,
    PROTOCOL_MINOR,
    SCHEMA_HASH,
    Ack,
    Capability,
    Direction,
    Heartbeat,
    Hello,
    HelloReply,
    HelloStatus,
    Message,
    decode_message,
)
from firmware_bridge.ratelog import RateLimitedLog
from firmware_bridge.signing import (
    DEVICE_LINK_ID,
    HOST_LINK_ID,
    Signer,
    Verdict,
    check_key,
    split_signing_key,
)
from firmware_bridge.transport import Connector, Transport

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "HEARTBEAT_INTERVAL",
    "HELLO_INTERVAL",
    "LINK_TIMEOUT",
    "MAX_RETRANSMITS",
    "RECONNECT_DELAY",
    "RECONNECT_DELAY_MAX",
    "RETRANSMIT_TIMEOUT",
    "RETRANSMIT_TIMEOUT_MAX",
    "RETRANSMIT_TIMEOUT_MIN",
    "WINDOW",
    "DeviceInfo",
    "Link",
    "LinkEvent",
    "LinkLost",
    "Delivery",
    "LinkPosition",
    "LinkRefused",
    "LinkStats",
    "LinkUp",
    "RefusalKind",
    "Retained",
    "Role",
    "TableRebooted",
]

_log = logging.getLogger(__name__)

# Timing and sizing. Defaults are for a 115200-baud UART or full-speed USB; tests patch them.
#: Both sides send a heartbeat this often (s): ~1 Hz is cheap and bounds silence detection.
HEARTBEAT_INTERVAL = 1.0
#: Silence (s) after which the link is down: three missed heartbeats, not one unlucky frame.
LINK_TIMEOUT = 3.0
#: Retransmission timeout (s) until the round trip has been measured: a few 255-byte
#: frames at 115200 baud plus MCU latency. Then it follows the measured round trip
#: (RFC 6298: smoothed RTT + 4 x its variation), as Klipper's serial queue does.
RETRANSMIT_TIMEOUT = 0.2
#: The measured timeout never goes below this (s): scheduling jitter on a busy Pi.
RETRANSMIT_TIMEOUT_MIN = 0.025
#: The timeout doubles per retransmission up to this (s), so a busy peer is not flooded.
RETRANSMIT_TIMEOUT_MAX = 1.6
#: Retransmissions of one frame before giving up with SendFailed (~11 s with the defaults).
MAX_RETRANSMITS = 8
#: Reliable frames in flight per direction: bounds MCU RAM; must stay < 128 for 8-bit seqs.
WINDOW = 8
#: The host repeats its hello this often (s) until a reply comes.
HELLO_INTERVAL = 0.5
#: The host reopens the transport if no hello reply arrives within this (s).
HANDSHAKE_TIMEOUT = 5.0
#: First wait (s) before reopening a transport; doubles per failure up to the maximum.
RECONNECT_DELAY = 0.25
#: Longest wait (s) between reconnect attempts: a replugged table is found within this.
RECONNECT_DELAY_MAX = 5.0
#: Events a device keeps for the host at most (in flight + queued), like a firmware buffer.
DEVICE_QUEUE_MAX = 256


class Role(enum.Enum):
    """Which end of the wire a :class:`Link` plays."""

    HOST = "host"
    DEVICE = "device"


@dataclasses.dataclass(frozen=True, slots=True)
class DeviceInfo:
    """What a device-role link says about itself in :class:`HelloReply`."""

    firmware_version: str
    #: Random non-zero id chosen at power-up (see :meth:`new_boot_id`).
    boot_id: int
    seats: int = 4
    capabilities: Capability = (
        Capability.SEAT_CONSOLES
        | Capability.CENTRE_DISPLAY
        | Capability.DICE
        | Capability.BUZZER
        | Capability.WALL_TAKE_SENSORS
    )
    #: Overridable only to test version handling.
    protocol_major: int = PROTOCOL_MAJOR
    protocol_minor: int = PROTOCOL_MINOR
    schema_hash: int = SCHEMA_HASH

    @staticmethod
    def new_boot_id(rng: random.Random | None = None) -> int:
        """A random non-zero 32-bit boot id."""
        return (rng or random.SystemRandom()).randrange(1, 2**32)


@dataclasses.dataclass(frozen=True, slots=True)
class LinkPosition:
    """Host role: how far the consumer has handled the table's events.

    ``rx_next`` is the sequence number after the last handled event of boot ``boot_id``.
    The daemon journals it with every event it journals and passes it back as
    ``Link(resume=...)`` after a restart: the first hello then acks exactly what the last
    daemon handled, so the table neither resends it (no duplicate) nor drops the rest.
    """

    boot_id: int
    rx_next: int


@dataclasses.dataclass(frozen=True, slots=True)
class Retained:
    """Device role: the events a firmware keeps across a warm reset (watchdog, brown-out),
    unacknowledged by the host, with the boot id and sequence numbers they were sent with.

    Table firmware keeps its event queue in RAM that a reset does not clear (a no-init
    section); hw_sim does the same by passing :meth:`Link.unacked` to the next boot's link.
    The first hello of the new boot says which of them the host already handled.
    """

    boot_id: int
    events: tuple[tuple[int, Message], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class LinkUp:
    """A session started. ``peer`` is the HelloReply (host role) or the Hello (device role)."""

    peer: HelloReply | Hello
    session: int
    rebooted: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class LinkLost:
    """The session ended (silence, unplug, no acks). Device role: stop the motors now."""

    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class TableRebooted:
    """Host role: the table answered with a new boot id, so its state is gone: resync."""

    old_boot_id: int
    new_boot_id: int


class RefusalKind(enum.Enum):
    """Why the hello exchange refused a table (see :class:`LinkRefused`)."""

    #: The two ends speak different protocol major versions: one of them must be updated.
    VERSION = "version"
    #: One end requires signed frames and the other cannot sign with the same key (it has
    #: none, another one, or firmware that predates signing).
    SIGNING = "signing"


@dataclasses.dataclass(frozen=True, slots=True)
class LinkRefused:
    """Host role: the hello exchange refused the table, so no session opened.

    ``reason`` is one sentence for logs and displays, naming what the table speaks and what
    this host speaks (or which end lacks the signing key). The link does not stop: it logs
    the reason once, closes the transport and retries with backoff (``RECONNECT_DELAY``
    doubling up to ``RECONNECT_DELAY_MAX``). :meth:`Link.events` yields this again only when
    the reason changes, and :class:`LinkUp` once a session opens; :attr:`Link.refused` is
    the current refusal (None once up).
    """

    reason: str
    kind: RefusalKind


#: What ``Link.events()`` yields: wire messages from the peer, or link status changes.
LinkEvent = Message | LinkUp | LinkLost | TableRebooted | LinkRefused


@dataclasses.dataclass(slots=True)
class LinkStats:
    """Counters readable by the daemon as ``link.stats`` (a live object; copy to snapshot)."""

    frames_in: int = 0
    frames_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    crc_errors: int = 0
    framing_errors: int = 0
    retransmits: int = 0
    duplicates_dropped: int = 0
    out_of_order_dropped: int = 0
    decode_errors: int = 0
    unknown_messages: int = 0
    reconnects: int = 0
    handshakes: int = 0
    links_lost: int = 0
    send_failures: int = 0
    #: Hello exchanges refused: by the table's reply or by us (host), hellos answered with a
    #: refusal (device).
    refusals: int = 0
    #: Mid-session frames of another protocol version (frame byte or hello payload), dropped.
    wrong_version_dropped: int = 0
    #: Handshake frames outside a handshake (a reply to no hello of ours, a hello at the
    #: host), dropped.
    stray_handshakes_dropped: int = 0
    #: With signing: frames without a signature, dropped.
    unsigned_dropped: int = 0
    #: With signing: frames whose MAC does not match (forged, or another key), dropped.
    bad_signature_dropped: int = 0
    #: With signing: genuine frames seen before (timestamp not above the last accepted from
    #: its link id) or sent back at their sender, dropped.
    replay_dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict (for logs, MQTT, JSON)."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, slots=True)
class _Received:
    """A message from the table on its way to the consumer (host role), with what to ack
    once the consumer has handled it."""

    msg: Message | None
    session: int
    boot_id: int
    rx_after: int
    #: This side's messages of the session the peer had acknowledged when it sent the
    #: frame (see :attr:`Delivery.peer_acked`).
    peer_acked: int = 0


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Delivery:
    """One item of a group from :meth:`Link.batches`: a message from the table or a
    status change, with the link position after it (messages; None for status changes).

    ``item`` is None for a frame that could not be decoded: it has no effect but takes a
    sequence number, so it is acknowledged in its turn like the others.
    """

    item: LinkEvent | None
    position: LinkPosition | None
    received: _Received | None = dataclasses.field(default=None, repr=False)

    @property
    def peer_acked(self) -> int | None:
        """How many of the messages this side posted in the session (:attr:`Link.posted_count`
        counts them) the peer had acknowledged when it sent this message: the table had
        those commands, and no later one, when a key was pressed. None for a status
        change. A frame the peer had to send again carries the ack of its resending, so
        the count may be later than the first sending, never earlier."""
        return None if self.received is None else self.received.peer_acked

    @property
    def session(self) -> int | None:
        """The session the message came in (:attr:`Link.session`); None for a status
        change."""
        return None if self.received is None else self.received.session


@dataclasses.dataclass(slots=True, eq=False)
class _Outgoing:
    msg: Message
    payload: bytes
    #: Completed on the ack; None for :meth:`Link.post_nowait` (nobody waits for it).
    future: asyncio.Future[None] | None
    seq: int = -1
    #: When it was first sent (loop time), for round-trip samples.
    sent_at: float = 0.0
    #: Sent more than once: its ack says nothing about the round trip (Karn's rule).
    resent: bool = False


class _Dropped(Exception):
    """Internal: the current session/transport must end; the message is the reason."""


_CLOSED: Final = object()
_SYN = int(Flags.SYN)
_ACK = int(Flags.ACK)
_RELIABLE = int(Flags.RELIABLE)
_SEQ_MOD = 256
_HALF = 128


def _consume_exception(fut: asyncio.Future[None]) -> None:
    # post() callers may never await the future; do not let asyncio log "never retrieved".
    if not fut.cancelled():
        fut.exception()


class Link:
    """A reliable, self-healing message link over a byte transport.

    ``connect`` is a transport URL (see :func:`firmware_bridge.endpoints.open_transport`) or
    a :data:`Connector` called for every (re)connection. ``role`` picks the end; a device
    needs ``device_info``. ``name`` prefixes log lines (one table id per daemon).

    ``signing_key`` (32 bytes), or ``signing_key=HEX`` in the URL's query (64 hex digits;
    taken out before the transport sees the URL), turns frame authentication on: every
    frame this end sends is signed, every frame it receives must be signed with the same
    key, and a peer that cannot sign is refused at the hello. Off by default.

    Use ``async with Link(...) as link:`` or ``await link.start()`` / ``await link.close()``.
    """

    def __init__(
        self,
        connect: str | Connector,
        *,
        role: Role = Role.HOST,
        device_info: DeviceInfo | None = None,
        host_version: str = "tablectl",
        name: str = "table",
        usb_backend: Any = None,
        resume: LinkPosition | None = None,
        retained: Retained | None = None,
        signing_key: bytes | None = None,
    ) -> None:
        if role is Role.DEVICE and device_info is None:
            raise ValueError("a device-role Link needs device_info")
        if resume is not None and role is not Role.HOST:
            raise ValueError("only a host-role Link resumes from a handled position")
        if retained is not None and role is not Role.DEVICE:
            raise ValueError("only a device-role Link retains events across a reset")
        url_key = None
        if isinstance(connect, str):
            connect, url_key = split_signing_key(connect)
        if signing_key is not None:
            signing_key = check_key(signing_key)
            if url_key is not None:
                raise ValueError("the signing key is given both in the URL and as signing_key=")
        key = signing_key if signing_key is not None else url_key
        self._signer = (
            None
            if key is None
            else Signer(key, HOST_LINK_ID if role is Role.HOST else DEVICE_LINK_ID)
        )
        self.role = role
        self.name = name
        self.device_info = device_info
        self.host_version = host_version[:16]
        self._connect: Connector = (
            connector_for(connect, usb_backend=usb_backend) if isinstance(connect, str) else connect
        )
        self._stats = LinkStats()
        self._decoder = FrameDecoder()
        self._events: asyncio.Queue[object] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._fatal: BaseException | None = None
        self._refused: LinkRefused | None = None
        # Kinds of dropped frames already logged: each is logged once, then only counted.
        self._logged_drops: set[str] = set()
        # Frames that arrive whole but cannot be used: the first of each kind is logged,
        # then a count once a minute (a noisy or hostile line cannot fill the log).
        self._ratelog = RateLimitedLog(_log, prefix=f"{self.name}: ")
        self._rng = random.Random()
        # Connection state.
        self._transport: Transport | None = None
        # Encoded frames waiting for this loop iteration's write (see _flush).
        self._out = bytearray()
        self._flush_scheduled = False
        self._wake = asyncio.Event()
        self._up_event = asyncio.Event()
        self._drop_reason: str | None = None
        self._last_reason = "not connected yet"
        self._t0 = 0.0
        self._last_rx = 0.0
        self._next_heartbeat = 0.0
        # Session state.
        self._up = False
        self._was_up = False
        self._session = 0
        self._peer: HelloReply | Hello | None = None
        self._last_boot_id = 0
        self._hello_next: float | None = None
        self._hello_deadline: float | None = None
        self._rx_next = 0
        # Host role: the sequence number after the last event the consumer has *handled*.
        # Acks carry this, so an event the daemon received but had not yet handled (and
        # journalled) when it died is still unacked, and the table resends it.
        self._rx_handled = 0
        self._handled_pos = resume or LinkPosition(0, 0)
        if resume is not None:
            self._last_boot_id = resume.boot_id
            self._rx_next = self._rx_handled = resume.rx_next
        self._retained = retained
        self._acks_held = False
        self._ack_pending = False
        self._tx_next = 0
        #: Reliable messages posted in this session, and how many of them the peer acked
        #: (they go out and are acked in the order they were posted).
        self._posted = 0
        self._acked = 0
        self._window: collections.deque[_Outgoing] = collections.deque()
        self._queue: collections.deque[_Outgoing] = collections.deque()
        self._rto = RETRANSMIT_TIMEOUT
        self._rto_deadline: float | None = None
        #: When the timer task looks next (it is woken early only for an earlier deadline).
        self._timer_at = float("inf")
        self._retries = 0
        # Round-trip estimate (s): smoothed RTT and its mean deviation; None until measured.
        self._srtt: float | None = None
        self._rttvar = 0.0

    # ---------------------------------------------------------------------------------------
    # Public API

    async def start(self) -> None:
        """Start connecting in the background; returns at once (see :meth:`wait_up`)."""
        if self._task is not None:
            return
        if self._closed:
            raise LinkDown(f"{self.name}: link closed")
        self._t0 = asyncio.get_running_loop().time()
        self._task = asyncio.create_task(self._run(), name=f"firmware_bridge.link {self.name}")

    async def close(self) -> None:
        """Stop the link, close the transport, fail pending sends with :class:`LinkDown` and
        end :meth:`events`. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._flush()  # the last acks and commands, before the transport goes
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_all(LinkDown(f"{self.name}: link closed"))
        self._events.put_nowait(_CLOSED)
        self._up_event.set()
        self._ratelog.flush()
        _log.info("%s: link closed, stats %s", self.name, self.stats.as_dict())

    async def __aenter__(self) -> Link:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def events(self) -> AsyncGenerator[LinkEvent, None]:
        """Yield messages from the peer and link status changes, in order, until closed.

        Status changes are :class:`LinkUp`, :class:`LinkLost`, :class:`TableRebooted` and
        :class:`LinkRefused` (the table was refused at the hello; the link retries). Raises
        only if the link task itself crashed (a bug), with that exception. Meant for one
        consumer.
        """
        while True:
            item = await self._events.get()
            if item is _CLOSED:
                self._events.put_nowait(_CLOSED)  # later iterators end too
                return
            if isinstance(item, BaseException):
                self._events.put_nowait(item)
                raise item
            if isinstance(item, _Received):
                if item.session != self._session:
                    # Received before the current handshake began and not handled since:
                    # that hello asked the table to resend it, so it comes again.
                    continue
                self._handled_pos = LinkPosition(item.boot_id, item.rx_after)
                if item.msg is None:
                    self._handled(item)
                    continue
                try:
                    yield item.msg
                finally:
                    # Back here (or closed) only once the consumer has handled the message,
                    # unless it said it failed (hold_acks): then the table keeps it.
                    if not self._acks_held:
                        self._handled(item)
                continue
            yield typing.cast(LinkEvent, item)

    async def batches(self, limit: int = 32) -> AsyncGenerator[list[Delivery], None]:
        """Like :meth:`events`, but a group at a time: the next item and what has already
        arrived behind it, up to ``limit`` items, without waiting for more.

        Nothing is acknowledged by resuming the generator: the consumer calls
        :meth:`acknowledge` with the last delivery whose effects are durable (acks are
        cumulative), once the group is committed. Meant for one consumer, instead of
        :meth:`events`.
        """
        while True:
            raw = [await self._events.get()]
            while len(raw) < limit and not self._events.empty():
                raw.append(self._events.get_nowait())
            group: list[Delivery] = []
            end: object = None
            for item in raw:
                if item is _CLOSED or isinstance(item, BaseException):
                    self._events.put_nowait(item)  # later iterators end (or fail) too
                    end = item
                    break
                if isinstance(item, _Received):
                    if item.session != self._session:
                        continue  # the current hello asked the table to resend it
                    position = LinkPosition(item.boot_id, item.rx_after)
                    self._handled_pos = position
                    group.append(Delivery(item.msg, position, item))
                else:
                    group.append(Delivery(typing.cast(LinkEvent, item), None))
            if group:
                yield group
            if end is _CLOSED:
                return
            if isinstance(end, BaseException):
                raise end

    def acknowledge(self, delivery: Delivery) -> None:
        """Host role: the effects of ``delivery`` and of everything before it are durable;
        acknowledge them (unless :meth:`hold_acks` was called)."""
        if delivery.received is not None:
            self._handled(delivery.received)

    async def send(self, msg: Message) -> None:
        """Send ``msg`` and return once the peer acknowledged it.

        Host role raises :class:`LinkDown` at once if the link is not up, or if it drops
        before the ack (delivery unknown), and :class:`SendFailed` after ``MAX_RETRANSMITS``.
        Device role queues while no host is connected and retransmits after a reconnect.
        Cancelling the caller does not recall a message already queued.
        """
        await self.post(msg)

    def post(self, msg: Message) -> asyncio.Future[None]:
        """Queue ``msg`` without waiting; the returned future completes like :meth:`send`."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        fut.add_done_callback(_consume_exception)
        self._enqueue(msg, fut)
        return fut

    def post_nowait(self, msg: Message) -> None:
        """Queue ``msg`` like :meth:`post` for a caller that never waits for its ack (a
        display command, a key event): no future, so none to complete and no callback to
        run per message. It raises as :meth:`post` does."""
        self._enqueue(msg, None)

    def _enqueue(self, msg: Message, fut: asyncio.Future[None] | None) -> None:
        want = Direction.COMMAND if self.role is Role.HOST else Direction.EVENT
        if not isinstance(msg, Message) or msg.DIRECTION is not want:
            raise TypeError(
                f"a {self.role.value} link sends {want.value} messages, not {type(msg).__name__}"
            )
        if self._fatal is not None:
            raise self._fatal
        if self._closed:
            raise LinkDown(f"{self.name}: link closed")
        if self.role is Role.HOST and not self._up:
            raise LinkDown(f"{self.name}: link to the table is down ({self._last_reason})")
        if self.role is Role.DEVICE and len(self._queue) + len(self._window) >= DEVICE_QUEUE_MAX:
            raise SendFailed(f"{self.name}: {DEVICE_QUEUE_MAX} events waiting for the host")
        self._queue.append(_Outgoing(msg, msg.to_bytes(), fut))
        self._posted += 1
        self._pump()

    async def wait_up(self) -> HelloReply | Hello:
        """Wait until a session is up and return the peer's hello (reply). Wrap it in
        ``asyncio.timeout()``: a refused table (:attr:`refused`) keeps it waiting while the
        link retries. Raises :class:`LinkDown` if the link is closed."""
        while True:
            if self._fatal is not None:
                raise self._fatal
            if self._closed:
                raise LinkDown(f"{self.name}: link closed")
            if self._up and self._peer is not None:
                return self._peer
            self._up_event.clear()
            await self._up_event.wait()

    @property
    def posted_count(self) -> int:
        """Host role: messages posted since the session began. The last one posted is the
        ``posted_count``-th; the peer had it when a delivery's ``peer_acked`` reaches it."""
        return self._posted

    @property
    def session(self) -> int:
        """The current (or last) session's id, as :class:`LinkUp` gave it."""
        return self._session

    @property
    def is_up(self) -> bool:
        """True while a session is established."""
        return self._up

    @property
    def refused(self) -> LinkRefused | None:
        """Host role: why the last hello exchange refused the table, while it keeps doing
        so (the link retries with backoff); None once a session is up, or before any."""
        return self._refused

    @property
    def signing(self) -> bool:
        """True if frames are signed and verified (a signing key was given)."""
        return self._signer is not None

    @property
    def peer(self) -> HelloReply | Hello | None:
        """The peer's Hello/HelloReply of the current (or last) session."""
        return self._peer

    @property
    def boot_id(self) -> int:
        """Host role: the table's last seen boot id (0 before the first session)."""
        return self._last_boot_id

    def hold_acks(self) -> None:
        """Host role: the consumer failed while handling an event (its journal write did
        not commit, say): acknowledge nothing from now on, not even that event when the
        ``events()`` generator is closed. The table keeps what was not acknowledged and
        resends it to the next process, which resumes from the journal."""
        self._acks_held = True

    @property
    def position(self) -> LinkPosition:
        """Host role: the position after the event the consumer is handling (or handled
        last); journal it with whatever that event changed (see :class:`LinkPosition`)."""
        return self._handled_pos

    def unacked(self) -> Retained:
        """Device role: the events not yet acknowledged (in flight, then queued), for the
        next boot's ``Link(retained=...)``; their futures are left pending."""
        queued = tuple((-1, out.msg) for out in self._queue)
        if self._retained is not None:  # no hello since the last reset: still that boot's
            return Retained(self._retained.boot_id, self._retained.events + queued)
        in_flight = tuple((out.seq, out.msg) for out in self._window)
        info = self.device_info
        return Retained(info.boot_id if info is not None else 0, in_flight + queued)

    @property
    def stats(self) -> LinkStats:
        """Live counters (frames, CRC errors, retransmits, duplicates, reconnects...)."""
        self._stats.crc_errors = self._decoder.stats.crc_errors
        self._stats.framing_errors = self._decoder.stats.framing_errors
        return self._stats

    # ---------------------------------------------------------------------------------------
    # Connection loop

    async def _run(self) -> None:
        delay = RECONNECT_DELAY
        opened_before = False
        failures = 0
        try:
            while not self._closed:
                try:
                    transport = await self._connect()
                except (TransportError, OSError) as exc:
                    # Warn once per outage, not every retry of a table left unplugged.
                    level = logging.DEBUG if failures else logging.WARNING
                    failures += 1
                    self._last_reason = str(exc)
                    _log.log(level, "%s: cannot open transport: %s (retry in %.2f s)",
                             self.name, exc, delay)  # fmt: skip
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RECONNECT_DELAY_MAX)
                    continue
                failures = 0
                if opened_before:
                    self._stats.reconnects += 1
                opened_before = True
                _log.info("%s: transport %s open", self.name, transport.url)
                try:
                    reason, was_up = await self._serve(transport)
                finally:
                    self._transport = None
                    await transport.close()
                self._session_down(reason, was_up)
                if was_up:
                    delay = RECONNECT_DELAY
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_DELAY_MAX)
        except Exception as exc:  # a bug: surface it to the consumer instead of hanging
            _log.exception("%s: link task crashed", self.name)
            self._fatal = exc
            self._fail_all(LinkDown(f"{self.name}: link task crashed: {exc!r}"))
            self._events.put_nowait(exc)
            self._up_event.set()

    async def _serve(self, transport: Transport) -> tuple[str, bool]:
        """Run one transport until it must be dropped; returns (reason, session_was_up)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._transport = transport
        self._out.clear()  # frames for the previous transport never go to this one
        self._decoder.reset()
        self._drop_reason = None
        self._last_rx = now
        self._next_heartbeat = now
        self._was_up = False
        # A lone delimiter first: it ends whatever half frame the peer's decoder holds.
        with contextlib.suppress(TransportClosed):
            transport.write(b"\x00")
        if self.role is Role.HOST:
            self._start_handshake(now)
        else:
            self._rx_next = 0
        # Two plain tasks rather than a TaskGroup: Python 3.11's TaskGroup leaves the parent
        # task marked as cancelling when a child fails during __aexit__.
        reader = asyncio.create_task(self._reader(transport), name=f"{self.name} reader")
        timers = asyncio.create_task(self._timers(), name=f"{self.name} timers")
        try:
            done, _ = await asyncio.wait({reader, timers}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reader.cancel()
            timers.cancel()
            await asyncio.gather(reader, timers, return_exceptions=True)
        reason = "session ended"
        for task in done:
            exc = task.exception()
            if not isinstance(exc, _Dropped):
                raise exc if exc is not None else AssertionError("session task returned")
            reason = str(exc)
        return reason, self._was_up

    def _session_down(self, reason: str, was_up: bool) -> None:
        """After a transport ended: forget the session, tell the consumer."""
        self._last_reason = reason
        if self.role is Role.HOST:
            self._fail_all(LinkDown(f"{self.name}: link went down before the ack: {reason}"))
        if self._up or was_up:
            self._lose_session(reason)
        else:
            _log.info("%s: transport dropped: %s", self.name, reason)

    def _lose_session(self, reason: str) -> None:
        was_up = self._up
        self._up = False
        self._session = 0 if self.role is Role.DEVICE else self._session
        self._rto_deadline = None
        self._retries = 0
        if self.role is Role.HOST:
            self._fail_all(LinkDown(f"{self.name}: link went down before the ack: {reason}"))
        if was_up:
            self._stats.links_lost += 1
            _log.warning("%s: link lost: %s; stats %s", self.name, reason, self.stats.as_dict())
            self._events.put_nowait(LinkLost(reason))

    def _fail_all(self, exc: BaseException) -> None:
        for out in (*self._window, *self._queue):
            if out.future is not None and not out.future.done():
                out.future.set_exception(exc)
        self._window.clear()
        self._queue.clear()
        self._rto_deadline = None

    async def _reader(self, transport: Transport) -> None:
        while True:
            try:
                data = await transport.read()
            except TransportClosed as exc:
                raise _Dropped(f"transport closed: {exc}") from None
            self._stats.bytes_in += len(data)
            for frame in self._decoder.feed(data):
                self._on_frame(frame)
            if self._ack_pending:
                self._schedule_flush()  # the ack rides on whatever this turn sends
            if self._drop_reason is not None:
                raise _Dropped(self._drop_reason)

    async def _timers(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            next_at = self._on_tick(loop.time())
            self._timer_at = next_at
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(next_at):
                    await self._wake.wait()

    def _on_tick(self, now: float) -> float:
        """Do whatever is due at ``now``; return when to look again."""
        if self._drop_reason is not None:
            raise _Dropped(self._drop_reason)
        deadlines = []
        # Silence.
        silent_at = self._last_rx + LINK_TIMEOUT
        if now >= silent_at and self._up:
            reason = f"no frame from the peer for {LINK_TIMEOUT:g} s"
            if self.role is Role.HOST:
                raise _Dropped(reason)
            self._lose_session(reason)  # a UART has no connection: keep it, await a hello
        if self._up:
            deadlines.append(max(silent_at, now + 1e-3))
        # Heartbeat.
        if now >= self._next_heartbeat:
            session = self._session if self._up else 0
            uptime = int((now - self._t0) * 1000) & 0xFFFFFFFF
            self._send_unreliable(Heartbeat(session=session, uptime_ms=uptime))
            self._next_heartbeat = now + HEARTBEAT_INTERVAL
        deadlines.append(self._next_heartbeat)
        # Handshake (host).
        if self.role is Role.HOST and not self._up and self._hello_deadline is not None:
            if now >= self._hello_deadline:
                raise _Dropped(f"no hello reply within {HANDSHAKE_TIMEOUT:g} s")
            if self._hello_next is not None and now >= self._hello_next:
                self._send_hello()
                self._hello_next = now + HELLO_INTERVAL
            deadlines.extend(d for d in (self._hello_next, self._hello_deadline) if d is not None)
        # Retransmission.
        if self._up and self._window and self._rto_deadline is not None:
            if now >= self._rto_deadline:
                self._retransmit_due(now)
            if self._rto_deadline is not None:
                deadlines.append(self._rto_deadline)
        return min(deadlines)

    def _retransmit_due(self, now: float) -> None:
        head = self._window[0]
        if self._retries >= MAX_RETRANSMITS:
            reason = (
                f"no ack for {type(head.msg).__name__} (seq {head.seq}) after "
                f"{MAX_RETRANSMITS} retransmissions"
            )
            if self.role is Role.HOST:
                self._stats.send_failures += 1
                if head.future is not None and not head.future.done():
                    head.future.set_exception(SendFailed(f"{self.name}: {reason}"))
                raise _Dropped(reason)
            self._lose_session(reason)  # device keeps the events for the next session
            return
        self._retries += 1
        self._rto = min(self._rto * 2, RETRANSMIT_TIMEOUT_MAX)
        self._rto_deadline = now + self._rto
        _log.debug("%s: retransmitting %d frames from seq %d (try %d)",
                   self.name, len(self._window), head.seq, self._retries)  # fmt: skip
        for out in self._window:
            self._stats.retransmits += 1
            out.resent = True
            self._transmit(out)

    # ---------------------------------------------------------------------------------------
    # Sending

    def _write(self, frame: Frame) -> None:
        """Encode ``frame`` (signed, with a key) and queue it for this loop iteration's one
        write (see _flush)."""
        if self._transport is None:
            return
        if self._signer is not None:
            frame = self._signer.sign(frame)
        self._queue_out(encode_frame(frame))

    def _write_fields(self, flags: int, seq: int, ack: int, msg_type: int, payload: bytes) -> None:
        """:meth:`_write` of ``Frame(flags, seq, ack, msg_type, payload)``; unsigned, the
        frame is encoded from the fields without building one (every command or event
        sent, and every ack, comes this way)."""
        if self._signer is not None:
            self._write(Frame(Flags(flags), seq, ack, msg_type, payload))
        elif self._transport is not None:
            self._queue_out(encode_unsigned(flags, seq, ack, msg_type, payload))

    def _queue_out(self, data: bytes) -> None:
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("%s: tx %s", self.name, data.hex())
        self._out += data
        self._stats.frames_out += 1
        self._stats.bytes_out += len(data)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        if not self._flush_scheduled:
            self._flush_scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        """Write every frame queued since the last flush in one call.

        Frames produced while handling one event (its ack, the displays it changed, a
        heartbeat) leave in one write: one syscall and, on USB, one transfer instead of
        one per frame. The pty profile of the daemon had a third of its time in write().
        Runs at the next turn of the event loop, so no frame waits for anything else.

        An ack still owed here goes out as an Ack frame: none of this turn's frames
        carried it. (Acks are owed by the reader and by :meth:`_handled`; deferring the
        bare Ack to here lets the commands or events the same turn produces carry it.)
        """
        if self._ack_pending and self._up:
            self._send_unreliable(Ack())
        self._flush_scheduled = False
        data, self._out = bytes(self._out), bytearray()
        transport = self._transport
        if transport is None or not data:
            return
        try:
            transport.write(data)
        except TransportClosed as exc:
            self._drop_reason = f"transport closed: {exc}"
            self._wake.set()

    def _ack_fields(self) -> tuple[int, int]:
        if self._up:
            self._ack_pending = False
            return _ACK, self._rx_handled if self.role is Role.HOST else self._rx_next
        return 0, 0

    def _send_unreliable(self, msg: Message) -> None:
        flags, ack = self._ack_fields()
        self._write_fields(flags, 0, ack, msg.MSG_TYPE, msg.to_bytes())

    def _transmit(self, out: _Outgoing) -> None:
        flags, ack = self._ack_fields()
        self._write_fields(flags | _RELIABLE, out.seq, ack, out.msg.MSG_TYPE, out.payload)

    def _pump(self) -> None:
        """Move queued messages into the window while there is room, and send them."""
        if not self._up:
            return
        now = asyncio.get_running_loop().time()
        while self._queue and len(self._window) < WINDOW:
            out = self._queue.popleft()
            out.seq = self._tx_next
            out.sent_at = now
            self._tx_next = (self._tx_next + 1) % _SEQ_MOD
            self._window.append(out)
            self._transmit(out)
        if self._window and self._rto_deadline is None:
            self._rto = self._base_rto()
            self._rto_deadline = now + self._rto
            # Under a steady flow each ack clears the deadline and the next send sets a
            # later one; the timer, already due at the earlier one, then looks again.
            # Waking it for every send cost a timeout context per command.
            if self._rto_deadline < self._timer_at:
                self._wake.set()

    # ---------------------------------------------------------------------------------------
    # Receiving

    def _on_frame(self, frame: Frame) -> None:
        if _log.isEnabledFor(logging.DEBUG):
            _log.debug("%s: rx %s", self.name, encode_frame(frame).hex())
        self._stats.frames_in += 1
        now = asyncio.get_running_loop().time()
        if frame.version != PROTOCOL_MAJOR:
            if self._signer is None:
                self._last_rx = now
            self._on_foreign_version(frame)
            return
        if self._signer is not None:
            verdict = self._signer.verify(frame)
            if verdict is not Verdict.OK:
                self._on_unverified(frame, verdict)
                return
        # With signing only verified frames are life: a forger must not keep a dead peer
        # looking alive (the table would not stop its motors when the host is gone).
        self._last_rx = now
        flags = int(frame.flags)  # int bit tests: IntFlag's & runs Python code
        if flags & _SYN:
            if self.role is Role.DEVICE and frame.msg_type == Hello.MSG_TYPE:
                self._on_hello(frame)
            elif self.role is Role.HOST and frame.msg_type == HelloReply.MSG_TYPE:
                self._on_hello_reply(frame, Verdict.OK)
            else:
                self._count_drop(
                    "stray_handshakes_dropped",
                    f"a handshake frame of type {frame.msg_type:#04x}, which the "
                    f"{self.role.value} never receives",
                )
            return
        if not self._up:
            return  # no session: nothing to ack against; the peer will hello or time out
        if flags & _ACK:
            self._on_ack(frame.ack)
        if not flags & _RELIABLE:
            if frame.msg_type == Heartbeat.MSG_TYPE:
                self._on_heartbeat(frame)
            return
        distance = (frame.seq - self._rx_next) % _SEQ_MOD
        if distance == 0:
            self._rx_next = (self._rx_next + 1) % _SEQ_MOD
            # A host acks a new event once it is handled (_handled): an Ack now would
            # repeat the last position and tell the table nothing.
            self._ack_pending = self._ack_pending or self.role is Role.DEVICE
            self._deliver(frame)
            return
        self._ack_pending = True
        if distance >= _HALF:
            self._stats.duplicates_dropped += 1
        else:
            self._stats.out_of_order_dropped += 1

    def _deliver(self, frame: Frame) -> None:
        msg = self._decode(frame)
        if self.role is Role.HOST:
            # Undeliverable frames still pass through the queue so that acks stay in order.
            self._events.put_nowait(
                _Received(msg, self._session, self._last_boot_id, self._rx_next, self._acked)
            )
        elif msg is not None:
            self._events.put_nowait(msg)

    def _decode(self, frame: Frame) -> Message | None:
        try:
            msg = decode_message(frame.msg_type, frame.payload)
        except ProtocolError as exc:
            if frame.msg_type not in MESSAGES:
                self._stats.unknown_messages += 1
                self._ratelog.warning("frames of unknown type",
                                      "%s: ignoring unknown message type %#04x (newer peer?)",
                                      self.name, frame.msg_type)  # fmt: skip
            else:
                self._stats.decode_errors += 1
                self._ratelog.warning("frames with a bad payload",
                                      "%s: bad payload for type %#04x: %s",
                                      self.name, frame.msg_type, exc)  # fmt: skip
            return None
        want = Direction.EVENT if self.role is Role.HOST else Direction.COMMAND
        if msg.DIRECTION is not want:
            self._stats.decode_errors += 1
            self._ratelog.warning("frames from the wrong side", "%s: %s must not come from the %s",
                                  self.name, type(msg).__name__,
                                  "table" if self.role is Role.HOST else "host")  # fmt: skip
            return None
        return msg

    def _handled(self, received: _Received) -> None:
        """The consumer is done with ``received``: acknowledge it (and all before it), or,
        while the link is down, remember it for the next hello."""
        if received.session != self._session or self._acks_held:
            return  # a handshake began since: its hello asked for it again
        self._rx_handled = received.rx_after
        if self._up:
            self._ack_pending = True
            self._schedule_flush()

    def _on_ack(self, ack: int) -> None:
        if self._apply_ack(ack):
            self._pump()

    def _apply_ack(self, ack: int, *, timed: bool = True) -> bool:
        """Complete the in-flight messages that ``ack`` covers; True if any were.

        ``timed=False`` for the ack a resuming Hello carries: those frames were sent before
        the link went down, so the time since is the downtime, not a round trip."""
        if not self._window:
            return False
        done = (ack - self._window[0].seq) % _SEQ_MOD
        if done == 0 or done > len(self._window):
            return False  # nothing new, or a stale/garbled ack
        self._acked += done
        for _ in range(done):
            out = self._window.popleft()
            if out.future is not None and not out.future.done():
                out.future.set_result(None)
        if timed and not out.resent:
            self._sample_rtt(asyncio.get_running_loop().time() - out.sent_at)
        self._retries = 0
        self._rto = self._base_rto()
        self._rto_deadline = None
        return True

    def _sample_rtt(self, rtt: float) -> None:
        """Fold one round trip (send to ack of a frame sent once) into the estimate."""
        if self._srtt is None:
            self._srtt, self._rttvar = rtt, rtt / 2
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self._srtt - rtt)
            self._srtt = 0.875 * self._srtt + 0.125 * rtt

    def _base_rto(self) -> float:
        """The retransmission timeout before any backoff (see ``RETRANSMIT_TIMEOUT``)."""
        if self._srtt is None:
            return RETRANSMIT_TIMEOUT
        rto = self._srtt + 4 * self._rttvar
        return min(max(rto, RETRANSMIT_TIMEOUT_MIN), RETRANSMIT_TIMEOUT_MAX)

    @property
    def retransmit_timeout(self) -> float:
        """The current retransmission timeout (s) before backoff, from the measured RTT."""
        return self._base_rto()

    def _on_heartbeat(self, frame: Frame) -> None:
        try:
            hb = Heartbeat.from_bytes(frame.payload)
        except ProtocolError as exc:
            self._stats.decode_errors += 1
            self._ratelog.warning("bad heartbeats", "%s: bad heartbeat: %s", self.name, exc)
            return
        if self.role is Role.HOST and hb.session != self._session:
            self._drop_reason = (
                f"table dropped session {self._session:#06x} (now {hb.session:#06x}): "
                "it timed us out or rebooted"
            )

    def _count_drop(self, counter: str, what: str) -> None:
        """Count a dropped frame in ``stats.<counter>``; log the first of each kind only, so
        a noisy or hostile line cannot flood the log."""
        setattr(self._stats, counter, getattr(self._stats, counter) + 1)
        if counter not in self._logged_drops:
            self._logged_drops.add(counter)
            _log.warning("%s: dropped %s; further ones are only counted in stats.%s",
                         self.name, what, counter)  # fmt: skip

    def _handshaking(self) -> bool:
        """Host role: a hello of ours is waiting for its reply."""
        return self.role is Role.HOST and not self._up and self._hello_deadline is not None

    def _on_foreign_version(self, frame: Frame) -> None:
        if self.role is Role.HOST:
            if self._handshaking() and (
                frame.flags & Flags.SYN or frame.msg_type == HelloReply.MSG_TYPE
            ):
                self._refuse_version(frame.version)
            else:
                self._count_drop("wrong_version_dropped",
                                 f"a frame of protocol version {frame.version} mid-session "
                                 "(stray or forged)")  # fmt: skip
            return
        if frame.flags & Flags.SYN and frame.msg_type == Hello.MSG_TYPE:
            self._stats.wrong_version_dropped += 1  # _refuse_hello logs it
            self._refuse_hello(frame, HelloStatus.VERSION_MISMATCH, "")
        else:
            what = f"a frame of protocol version {frame.version} (stray or forged)"
            self._count_drop("wrong_version_dropped", what)

    def _on_unverified(self, frame: Frame, verdict: Verdict) -> None:
        """A frame that failed the signature check: dropped and counted. At the hello it
        still explains a refusal, but it can never open a session."""
        counter, what = {
            Verdict.UNSIGNED: ("unsigned_dropped", "an unsigned frame"),
            Verdict.BAD_SIGNATURE: ("bad_signature_dropped", "a frame with a bad signature"),
            Verdict.REPLAY: ("replay_dropped", "a replayed frame (a timestamp seen before)"),
        }[verdict]
        self._count_drop(counter, f"{what}, type {frame.msg_type:#04x}")
        if not frame.flags & Flags.SYN:
            return
        if self.role is Role.HOST and frame.msg_type == HelloReply.MSG_TYPE:
            # An old reply sent again proves nothing about this handshake: ignore it.
            if self._handshaking() and verdict is not Verdict.REPLAY:
                self._on_hello_reply(frame, verdict)
        elif self.role is Role.DEVICE and frame.msg_type == Hello.MSG_TYPE:
            # Say why, so a host without our key (or with a clock behind ours: our signed
            # answer gives it our time) can tell its operator; the current session, if
            # any, goes on untouched.
            why = {
                Verdict.UNSIGNED: "it is not signed",
                Verdict.BAD_SIGNATURE: "its signature does not match our key",
                Verdict.REPLAY: "its timestamp is one we have seen",
            }[verdict]
            self._refuse_hello(frame, HelloStatus.SIGNING_REQUIRED, why)

    def _refuse_version(self, theirs: int) -> None:
        self._refuse(
            RefusalKind.VERSION,
            f"the table speaks protocol {theirs}.x and this host speaks {PROTOCOL_MAJOR}.x: "
            "update the " + ("host software" if theirs > PROTOCOL_MAJOR else "table firmware"),
        )

    def _refuse(self, kind: RefusalKind, reason: str) -> None:
        """Host role: no session with this table. Say so once (and again only if the reason
        changes), drop the transport and let the reconnect backoff retry."""
        self._stats.refusals += 1
        refusal = LinkRefused(reason, kind)
        if refusal != self._refused:
            _log.error("%s: table refused: %s (retrying, every %g s at most)",
                       self.name, reason, RECONNECT_DELAY_MAX)  # fmt: skip
            self._events.put_nowait(refusal)
        self._refused = refusal
        self._hello_next = None
        self._drop_reason = f"refused: {reason}"
        self._wake.set()

    def _signing_refusal(self, verdict: Verdict, status: HelloStatus) -> str:
        """Why a hello exchange failed on signing, from what we sent and what came back."""
        if status is HelloStatus.SIGNING_REQUIRED:
            if self._signer is None:
                return ("the table requires signed frames and this host has no signing key: "
                        "add signing_key=HEX (the table's key) to the table's URL")  # fmt: skip
            if verdict is Verdict.OK:
                # The reply is genuine, so the keys match: our timestamp was one the table
                # had seen. verify() moved our clock up to the table's; the next hello passes.
                return ("the table took our signed hello for a replay: our signing clock was "
                        "behind the table's; the next hello carries the table's time")  # fmt: skip
            return ("the table requires signed frames and refused our signature: "
                    "its signing key differs from this host's")  # fmt: skip
        if verdict is Verdict.UNSIGNED:
            return ("the table answers unsigned (it has no signing key, or firmware older than "
                    "signing) and this host requires signed frames")  # fmt: skip
        return ("the table's reply is not signed with this host's key: "
                "the two signing keys differ")  # fmt: skip

    # ---- handshake, host side

    def _start_handshake(self, now: float) -> None:
        old = self._session
        while self._session in (0, old):
            self._session = self._rng.randrange(1, 0x10000)
        self._up = False
        self._hello_next = now
        self._hello_deadline = now + HANDSHAKE_TIMEOUT

    def _send_hello(self) -> None:
        hello = Hello(
            protocol_major=PROTOCOL_MAJOR,
            protocol_minor=PROTOCOL_MINOR,
            schema_hash=SCHEMA_HASH,
            session=self._session,
            resume_boot_id=self._last_boot_id,
            # What the consumer handled, not what arrived: events still waiting in our
            # queue are dropped at the new session and the table resends them, so none
            # is lost if this process dies before handling them.
            rx_next=self._rx_handled,
            host_version=self.host_version,
        )
        self._write(Frame(Flags.SYN, 0, 0, Hello.MSG_TYPE, hello.to_bytes()))

    def _on_hello_reply(self, frame: Frame, verdict: Verdict) -> None:
        """A HelloReply; ``verdict`` is the signature check's (OK without signing). Only a
        verified reply to our current hello opens a session; others may refuse the table
        during our handshake, and are counted and dropped at any other time."""
        major = frame.payload[0] if frame.payload else PROTOCOL_MAJOR
        if major != PROTOCOL_MAJOR:
            if self._handshaking():
                self._refuse_version(major)
            else:
                self._count_drop("wrong_version_dropped", f"a hello reply of protocol {major}")
            return
        try:
            reply = HelloReply.from_bytes(frame.payload)
        except ProtocolError as exc:
            if self._handshaking():
                self._stats.decode_errors += 1
                self._ratelog.warning(
                    "bad hello replies", "%s: bad hello reply: %s", self.name, exc
                )
            else:
                self._count_drop("stray_handshakes_dropped", f"a malformed hello reply ({exc})")
            return
        if not self._handshaking() or reply.session != self._session:
            if not (self._up and reply.session == self._session):  # not a late copy of ours
                self._count_drop("stray_handshakes_dropped",
                                 f"a hello reply to no hello of ours (session "
                                 f"{reply.session:#06x})")  # fmt: skip
            return
        if reply.status is HelloStatus.VERSION_MISMATCH:
            self._refuse_version(reply.protocol_major)
            return
        if reply.status is HelloStatus.SIGNING_REQUIRED or verdict is not Verdict.OK:
            self._refuse(RefusalKind.SIGNING, self._signing_refusal(verdict, reply.status))
            return
        if reply.schema_hash != SCHEMA_HASH:
            # Expected across minor versions (an older table: log it quietly); with the
            # same version it means two builds disagree on a layout, a bug.
            same = (reply.protocol_major, reply.protocol_minor) == (PROTOCOL_MAJOR, PROTOCOL_MINOR)
            _log.log(
                logging.WARNING if same else logging.INFO,
                "%s: table schema hash %#010x differs from ours %#010x (protocol %d.%d vs "
                "%d.%d): messages added in a newer minor version will be ignored",
                self.name, reply.schema_hash, SCHEMA_HASH, reply.protocol_major,
                reply.protocol_minor, PROTOCOL_MAJOR, PROTOCOL_MINOR,
            )  # fmt: skip
        old_boot = self._last_boot_id
        rebooted = old_boot not in (0, reply.boot_id)
        self._last_boot_id = reply.boot_id
        self._rx_next = reply.next_seq
        self._rx_handled = reply.next_seq
        self._tx_next = 0
        self._posted = self._acked = 0
        self._retries = 0
        self._rto = self._base_rto()
        self._rto_deadline = None
        self._hello_next = self._hello_deadline = None
        self._peer = reply
        self._refused = None
        self._up = self._was_up = True
        self._stats.handshakes += 1
        _log.info("%s: link up: firmware %s, protocol %d.%d, boot id %#010x, %d seats, %s%s",
                  self.name, reply.firmware_version, reply.protocol_major, reply.protocol_minor,
                  reply.boot_id, reply.seats, reply.capabilities.name or "no capabilities",
                  " (table rebooted)" if rebooted else "")  # fmt: skip
        if rebooted:
            self._events.put_nowait(TableRebooted(old_boot, reply.boot_id))
        self._events.put_nowait(LinkUp(reply, self._session, rebooted))
        self._up_event.set()
        self._wake.set()
        self._pump()

    # ---- handshake, device side

    def _on_hello(self, frame: Frame) -> None:
        info = self.device_info
        assert info is not None
        major = frame.payload[0] if frame.payload else 0
        if major != info.protocol_major:
            self._stats.wrong_version_dropped += 1  # _refuse_hello logs it
            self._refuse_hello(frame, HelloStatus.VERSION_MISMATCH, "")
            return
        try:
            hello = Hello.from_bytes(frame.payload)
        except ProtocolError as exc:
            self._count_drop("decode_errors", f"a malformed hello ({exc})")
            return
        if self._up and hello.session == self._session:
            self._send_reply(hello.session, HelloStatus.OK)  # our reply was lost
            return
        if self._up:
            self._lose_session("host started a new session")
        if hello.resume_boot_id == info.boot_id:
            # The host kept what it received before the drop.
            self._apply_ack(hello.rx_next, timed=False)
        self._requeue_retained(hello)
        self._session = hello.session
        self._rx_next = 0
        self._peer = hello
        self._send_reply(hello.session, HelloStatus.OK)
        self._up = self._was_up = True
        self._stats.handshakes += 1
        _log.info("%s: host %s opened session %#06x", self.name, hello.host_version, hello.session)
        self._events.put_nowait(LinkUp(hello, hello.session))
        self._up_event.set()
        # Resend what is in flight right away (the host may have missed it), then the queue.
        self._retries = 0
        self._rto = self._base_rto()
        self._rto_deadline = asyncio.get_running_loop().time() + self._rto
        for out in self._window:
            out.resent = True
            self._transmit(out)
        self._pump()
        self._wake.set()

    def _requeue_retained(self, hello: Hello) -> None:
        """First hello after a warm reset: queue the previous boot's unacked events (new
        sequence numbers), without those the host says it handled already."""
        retained, self._retained = self._retained, None
        if retained is None:
            return
        events = list(retained.events)
        if hello.resume_boot_id == retained.boot_id and events and events[0][0] >= 0:
            handled = (hello.rx_next - events[0][0]) % _SEQ_MOD
            in_flight = sum(1 for seq, _ in events if seq >= 0)
            if handled <= in_flight:
                del events[:handled]
        if events:
            _log.info("%s: %d events kept across the reset", self.name, len(events))
        for _, msg in reversed(events):
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            fut.add_done_callback(_consume_exception)
            self._queue.appendleft(_Outgoing(msg, msg.to_bytes(), fut))

    def _refuse_hello(self, frame: Frame, status: HelloStatus, why: str) -> None:
        """Device role: answer a hello with a refusal (``why`` says what was wrong with its
        signature); the current session goes on. Logged once per status."""
        info = self.device_info
        assert info is not None
        major = frame.payload[0] if frame.payload else frame.version
        if frame.version != info.protocol_major or major != info.protocol_major:
            status = HelloStatus.VERSION_MISMATCH
            theirs = frame.version if frame.version != info.protocol_major else major
            why = f"it speaks protocol {theirs}, we speak {info.protocol_major}"
        self._stats.refusals += 1
        if f"refuse {status.name}" not in self._logged_drops:
            self._logged_drops.add(f"refuse {status.name}")
            _log.error("%s: refusing a host's hello (%s): %s; further refusals are only "
                       "counted in stats.refusals", self.name, status.name, why)  # fmt: skip
        # The session field of a v1 hello, so its sender can tell the answer is for it.
        session = int.from_bytes(frame.payload[6:8], "little") if len(frame.payload) >= 8 else 0
        self._send_reply(session, status)

    def _send_reply(self, session: int, status: HelloStatus) -> None:
        info = self.device_info
        assert info is not None
        next_seq = self._window[0].seq if self._window else self._tx_next
        reply = HelloReply(
            protocol_major=info.protocol_major,
            protocol_minor=info.protocol_minor,
            status=status,
            schema_hash=info.schema_hash,
            session=session,
            boot_id=info.boot_id,
            next_seq=next_seq,
            firmware_version=info.firmware_version,
            seats=info.seats,
            capabilities=info.capabilities,
        )
        self._write(Frame(Flags.SYN, 0, 0, HelloReply.MSG_TYPE, reply.to_bytes()))
