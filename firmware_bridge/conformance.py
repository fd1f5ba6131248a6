"""Conformance checks for table firmware: play the host against a device, one named check
at a time, and say what docs/protocol.md requires that the device does not do.

Run against any transport URL (a serial port, ``socket://host:port``, ``usb://VID:PID``)::

    python -m firmware_bridge.conformance /dev/ttyACM0
    python -m firmware_bridge.conformance socket://127.0.0.1:7001 --json
    python -m firmware_bridge.conformance /dev/ttyACM0 --interactive   # checks needing a person

Unlike :class:`firmware_bridge.link.Link`, which hides the protocol's mechanics, the probe
here is a raw host: it writes frames itself (so it can withhold acks, repeat a frame,
send one out of order or a broken one) and sees every frame the device writes. It keeps
the session alive with heartbeats unless a check stops them.

Exit code 0 when nothing failed (skipped checks say why), 1 when a check failed, 2 when
the URL could not be opened or the arguments are wrong, 3 when nothing was checked (every
check asked for was skipped: a line on stderr says so). The report is one line per check
(``--json``: one object). ``--only CHECK`` runs the hello first when CHECK needs a session
(every check but hello does), and reports it too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from firmware_bridge.codec import Flags, Frame, FrameDecoder, encode_frame
from firmware_bridge.endpoints import open_transport
from firmware_bridge.errors import ProtocolError, TransportError
from firmware_bridge.messages import (
    PROTOCOL_MAJOR,
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
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    SeatTiles,
    StatusRequest,
    TableReset,
    TableStatus,
    WallAction,
    WallCommand,
    WallLayout,
    WallState,
    WallStatus,
    Wind,
    Zone,
    decode_message,
)
from firmware_bridge.stdio import run_guarded
from firmware_bridge.transport import Transport

WINDOW = 8
HEARTBEAT_S = 1.0
SILENCE_S = 3.0
#: How long a check waits for the device to answer something it must answer.
ANSWER_S = 2.0
#: A SHUFFLE of all walls until every wall is DONE: a real table's motors take ~15 s.
WALLS_S = 30.0
#: Retransmission: the first resend is due within the base RTO (0.2 s) and at most 1.6 s.
RESEND_S = 2.5
HOST_VERSION = "conformance"

M = TypeVar("M", bound=Message)


class CheckFailed(Exception):
    """The device does not do what the protocol requires (the message says what)."""


class CheckSkipped(Exception):
    """The check does not apply to this device, or needs a person (the message says why)."""


@dataclass
class Received:
    """A frame from the device with its decoded message (None if it did not decode)."""

    frame: Frame
    message: Message | None
    at: float


@dataclass
class CheckResult:
    """The outcome of one check."""

    name: str
    status: str  # "pass", "fail" or "skip"
    detail: str
    seconds: float


class Probe:
    """A raw host on one transport: frames out as the checks write them, every frame in
    recorded, reliable events acknowledged only while :attr:`auto_ack` is on."""

    def __init__(self, transport: Transport, url: str = "") -> None:
        self.transport = transport
        self.url = url
        #: The device closed the connection (a USB or TCP device that resets does).
        self.closed = False
        self.decoder = FrameDecoder()
        self.received: list[Received] = []
        self._arrived = asyncio.Event()
        self.session = 0
        self.reply: HelloReply | None = None
        self.tx_seq = 0
        self.rx_next = 0
        self.auto_ack = True
        self.heartbeats = True
        #: The session of the hello awaiting its reply (0: none).
        self._pending = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._t0 = time.monotonic()
        #: The reply of the session before a reconnect (its boot id, for resuming).
        self.reply_before: HelloReply | None = None

    async def start(self) -> None:
        """Start reading and heartbeating; opens the line with a lone delimiter."""
        self.transport.write(b"\x00")
        self._tasks = [
            asyncio.create_task(self._read(), name="conformance reader"),
            asyncio.create_task(self._beat(), name="conformance heartbeat"),
        ]

    async def reconnect(self, within: float) -> None:
        """Open the URL again after the device closed it (it reset); retries for
        ``within`` seconds. Raises CheckFailed if it cannot."""
        deadline = time.monotonic() + within
        while True:
            try:
                transport = await open_transport(self.url)
                break
            except TransportError as exc:
                if time.monotonic() >= deadline:
                    raise CheckFailed(f"cannot reopen {self.url} after the reset: {exc}") from None
                await asyncio.sleep(0.2)
        with contextlib.suppress(TransportError):
            await self.transport.close()
        self.transport, self.closed = transport, False
        self.decoder = FrameDecoder()
        self.session, self.reply_before, self.reply = 0, self.reply, None
        self.transport.write(b"\x00")
        self._tasks.append(asyncio.create_task(self._read(), name="conformance reader"))

    async def close(self) -> None:
        """Stop the tasks and close the transport."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, TransportError):
                await task
        with contextlib.suppress(TransportError):
            await self.transport.close()

    async def _read(self) -> None:
        while True:
            try:
                data = await self.transport.read()
            except TransportError:
                self.closed = True
                self._arrived.set()
                return
            for frame in self.decoder.feed(data):
                try:
                    message: Message | None = decode_message(frame.msg_type, frame.payload)
                except ProtocolError:
                    message = None
                self.received.append(Received(frame, message, time.monotonic()))
                if isinstance(message, HelloReply):
                    self._open(message)
                elif self.auto_ack and self._in_order_event(frame):
                    self.rx_next = (self.rx_next + 1) % 256
                    self.send_ack()
            self._arrived.set()

    def _open(self, reply: HelloReply) -> None:
        """The reply to the hello in flight opens its session here, before the frames
        read with it: a device resends its kept events right behind the reply, and they
        belong to the new session's numbering."""
        if reply.session != self._pending or reply.status is not HelloStatus.OK:
            return
        if reply.session != self.session:
            # A new session starts the numbering; a repeated hello's reply changes nothing.
            self.session, self.reply = reply.session, reply
            self.tx_seq, self.rx_next = 0, reply.next_seq

    def _in_order_event(self, frame: Frame) -> bool:
        return bool(frame.flags & Flags.RELIABLE) and frame.seq == self.rx_next and self.up

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            if self.heartbeats and self.up:
                uptime = int((time.monotonic() - self._t0) * 1000) & 0xFFFFFFFF
                self.send_unreliable(Heartbeat(session=self.session, uptime_ms=uptime))

    @property
    def up(self) -> bool:
        """A session is open."""
        return self.session != 0 and self.reply is not None

    # --- writing ---------------------------------------------------------------------

    def write(self, frame: Frame) -> None:
        """Write one frame as it is."""
        self.transport.write(encode_frame(frame))

    def send_unreliable(self, message: Message) -> None:
        """An unreliable frame (heartbeat, ack) carrying the current ``rx_next``."""
        self.write(Frame(Flags.ACK, 0, self.rx_next, message.MSG_TYPE, message.to_bytes()))

    def send_ack(self) -> None:
        """A bare Ack of everything in order so far."""
        self.send_unreliable(Ack())

    def command(self, message: Message, *, seq: int | None = None) -> int:
        """Send ``message`` as a reliable frame (the next seq unless ``seq`` is given);
        returns the seq used."""
        if seq is None:
            seq, self.tx_seq = self.tx_seq, (self.tx_seq + 1) % 256
        flags = Flags.RELIABLE | Flags.ACK
        self.write(Frame(flags, seq, self.rx_next, message.MSG_TYPE, message.to_bytes()))
        return seq

    # --- waiting -----------------------------------------------------------------------

    async def wait_for(
        self, predicate: Callable[[Received], bool], within: float, *, since: int = 0
    ) -> Received | None:
        """The first frame from index ``since`` on that matches, or None after ``within`` s
        (or at once when the device has closed the connection: nothing more can come)."""
        deadline = time.monotonic() + within
        index = since
        while True:
            while index < len(self.received):
                item = self.received[index]
                index += 1
                if predicate(item):
                    return item
            left = deadline - time.monotonic()
            if left <= 0 or self.closed:
                return None
            self._arrived.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._arrived.wait()

    def mark(self) -> int:
        """An index to wait from: frames received after this call."""
        return len(self.received)

    async def message(self, cls: type[M], within: float, *, since: int = 0) -> M | None:
        """The first message of type ``cls`` from ``since`` on."""
        item = await self.wait_for(lambda r: isinstance(r.message, cls), within, since=since)
        return None if item is None else item.message  # type: ignore[return-value]

    async def acked(self, seq: int, within: float = ANSWER_S, *, since: int = 0) -> bool:
        """Whether the device acknowledged the command ``seq`` (cumulative ack past it)."""

        def covers(item: Received) -> bool:
            frame = item.frame
            if not frame.flags & Flags.ACK or frame.flags & Flags.SYN:
                return False
            return 0 < (frame.ack - seq) % 256 <= WINDOW * 2

        return await self.wait_for(covers, within, since=since) is not None

    async def hello(
        self,
        *,
        session: int | None = None,
        resume_boot_id: int | None = None,
        rx_next: int | None = None,
        major: int = PROTOCOL_MAJOR,
    ) -> HelloReply | None:
        """Send a Hello (a new session unless ``session`` is given) and return the reply
        for it; an OK reply opens the session (``tx_seq`` 0, ``rx_next`` = next_seq)."""
        if session is None:
            session = random.randrange(1, 0x10000)
            while session == self.session:
                session = random.randrange(1, 0x10000)
        boot = self.reply.boot_id if resume_boot_id is None and self.reply else resume_boot_id
        hello = Hello(
            protocol_major=major,
            protocol_minor=PROTOCOL_MINOR,
            schema_hash=SCHEMA_HASH,
            session=session,
            resume_boot_id=boot or 0,
            rx_next=self.rx_next if rx_next is None else rx_next,
            host_version=HOST_VERSION,
        )
        since = self.mark()
        self._pending = session
        self.write(Frame(Flags.SYN, 0, 0, Hello.MSG_TYPE, hello.to_bytes()))
        try:
            reply = await self.message(HelloReply, ANSWER_S, since=since)
        finally:
            self._pending = 0
        return reply  # an OK reply for this hello opened its session as it was read


# --- the checks -----------------------------------------------------------------------

Check = Callable[[Probe], Awaitable[str]]
CHECKS: dict[str, Check] = {}
INTERACTIVE: set[str] = set()


def check(name: str, *, interactive: bool = False) -> Callable[[Check], Check]:
    """Register a check under ``name`` (run in the order registered)."""

    def register(func: Check) -> Check:
        CHECKS[name] = func
        if interactive:
            INTERACTIVE.add(name)
        return func

    return register


def _say(text: object) -> None:
    sys.stderr.write(f"conformance: {text}\n")


def _require(condition: bool, failure: str) -> None:
    if not condition:
        raise CheckFailed(failure)


async def _command_acked(probe: Probe, message: Message) -> int:
    since = probe.mark()
    seq = probe.command(message)
    _require(
        await probe.acked(seq, since=since),
        f"{type(message).__name__} (seq {seq}) was not acknowledged within {ANSWER_S:g} s",
    )
    return since


@check("hello")
async def check_hello(probe: Probe) -> str:
    """A Hello opens a session: the reply says OK, echoes the session, has a non-zero boot
    id, 3 or 4 seats, a firmware version, and this protocol major."""
    reply = await probe.hello(resume_boot_id=0, rx_next=0)
    _require(reply is not None, f"no HelloReply within {ANSWER_S:g} s of a Hello")
    assert reply is not None
    _require(reply.status is HelloStatus.OK, f"HelloReply status {reply.status.name}")
    _require(reply.protocol_major == PROTOCOL_MAJOR, f"protocol major {reply.protocol_major}")
    _require(reply.boot_id != 0, "boot id 0 (it must be random and non-zero)")
    _require(reply.firmware_version != "", "empty firmware version")
    if reply.protocol_minor == PROTOCOL_MINOR:
        _require(
            reply.schema_hash == SCHEMA_HASH,
            f"schema hash {reply.schema_hash:#010x} differs from the host's {SCHEMA_HASH:#010x}"
            f" at the same protocol version {reply.protocol_major}.{reply.protocol_minor}",
        )
    caps = Capability(reply.capabilities)
    return (
        f"firmware {reply.firmware_version!r}, protocol {reply.protocol_major}."
        f"{reply.protocol_minor}, boot id {reply.boot_id:#010x}, {reply.seats} seats, "
        f"capabilities {caps!r}"
    )


@check("hello_repeated")
async def check_hello_repeated(probe: Probe) -> str:
    """The same Hello again (its reply was lost) gets the same reply; no new session: the
    commands' sequence numbers carry on."""
    first = probe.reply
    assert first is not None
    await _command_acked(probe, StatusRequest())
    again = await probe.hello(session=probe.session)
    _require(again is not None, "no reply to a repeated Hello")
    assert again is not None
    _require(again.boot_id == first.boot_id, "the boot id changed on a repeated Hello")
    _require(again.status is HelloStatus.OK, f"status {again.status.name}")
    await _command_acked(probe, StatusRequest())
    return "same reply, the session carries on"


@check("version_mismatch")
async def check_version_mismatch(probe: Probe) -> str:
    """A Hello of another protocol major is refused with VERSION_MISMATCH, and the
    current session is left as it was."""
    session = probe.session
    reply = await probe.hello(major=PROTOCOL_MAJOR + 1)
    _require(reply is not None, "no HelloReply to a Hello of another protocol major")
    assert reply is not None
    _require(
        reply.status is HelloStatus.VERSION_MISMATCH,
        f"status {reply.status.name}, expected VERSION_MISMATCH",
    )
    _require(probe.session == session, "the probe's session changed")
    await _command_acked(probe, StatusRequest())
    return "refused with VERSION_MISMATCH; the session carried on"


@check("heartbeat")
async def check_heartbeat(probe: Probe) -> str:
    """The device sends a Heartbeat every second carrying the current session."""
    since = probe.mark()
    await asyncio.sleep(2.6)
    beats = [
        r.message
        for r in probe.received[since:]
        if isinstance(r.message, Heartbeat) and not r.frame.flags & Flags.RELIABLE
    ]
    _require(len(beats) >= 2, f"{len(beats)} heartbeats in 2.6 s (one a second expected)")
    sessions = {b.session for b in beats if isinstance(b, Heartbeat)}
    _require(sessions == {probe.session}, f"heartbeat sessions {sessions}, not {probe.session}")
    return f"{len(beats)} heartbeats in 2.6 s with session {probe.session}"


def _commands(seats: int) -> list[Message]:
    return [
        *(SeatDisplay(seat=s, line1=f"SEAT {s}", line2="CONFORMANCE") for s in range(seats)),
        *(SeatLamps(seat=s, dealer=s == 0, riichi=False) for s in range(seats)),
        CentreDisplay(Wind.EAST, 1, 0, 0, 136, (), None),
        BuzzerCommand(pattern=BuzzerPattern.OFF, duration_ms=0),
        FaultClear(code=FaultCode.HOST_SILENT),
        WallCommand(action=WallAction.STOP, wall=0xFF),
        StatusRequest(),
        TableReset(),
    ]


@check("commands")
async def check_commands(probe: Probe) -> str:
    """Every command type is acknowledged; StatusRequest is answered with TableStatus and
    DiceRoll (with the dice capability) with DiceResult."""
    assert probe.reply is not None
    commands = _commands(probe.reply.seats)
    for message in commands:
        since = await _command_acked(probe, message)
        if isinstance(message, StatusRequest):
            status = await probe.message(TableStatus, ANSWER_S, since=since)
            _require(status is not None, "no TableStatus after a StatusRequest")
    said = f"{len(commands)} commands of {len({type(c) for c in commands})} types acknowledged"
    if Capability.DICE in Capability(probe.reply.capabilities):
        since = await _command_acked(probe, DiceRoll())
        dice = await probe.message(DiceResult, 5.0, since=since)
        _require(dice is not None, "no DiceResult within 5 s of a DiceRoll")
        said += f"; dice rolled {dice.die1}+{dice.die2}" if dice else ""
    return said


@check("wall_reader")
async def check_wall_reader(probe: Probe) -> str:
    """With the capability WALL_READER: after a SHUFFLE of all walls, each wall's
    WallLayout (34 tiles a wall at four seats, 36 at three) comes before that wall's
    DONE, and no tile id is in two places. Without it: nothing to check."""
    assert probe.reply is not None
    if Capability.WALL_READER not in Capability(probe.reply.capabilities):
        return "no WALL_READER capability: nothing to check"
    seats = probe.reply.seats
    per = 34 if seats == 4 else 36
    layouts: dict[int, tuple[int, ...]] = {}
    done: set[int] = set()
    late: set[int] = set()

    def follow(item: Received) -> bool:
        message = item.message
        if isinstance(message, WallLayout):
            layouts[message.wall] = message.tiles
        elif isinstance(message, WallStatus) and message.state is WallState.DONE:
            if message.wall not in layouts:
                late.add(message.wall)
            done.add(message.wall)
        return len(done) >= seats

    since = await _command_acked(probe, WallCommand(action=WallAction.SHUFFLE, wall=0xFF))
    finished = await probe.wait_for(follow, WALLS_S, since=since)
    _require(finished is not None, f"walls DONE {sorted(done)} of {seats} after {WALLS_S:g} s")
    _require(not late, f"wall(s) {sorted(late)} DONE before their WallLayout")
    sizes = {w: len(t) for w, t in layouts.items()}
    _require(set(sizes.values()) == {per}, f"layout sizes {sizes}, expected {per} a wall")
    tiles = [t for w in sorted(layouts) for t in layouts[w]]
    _require(len(set(tiles)) == len(tiles), "a tile id appears in two places of the layouts")
    return f"{len(layouts)} walls of {per} tiles read before their DONE"


@check("seat_reader")
async def check_seat_reader(probe: Probe) -> str:
    """With the capability SEAT_READER: a StatusRequest is answered with its TableStatus
    and then one SeatTiles for every zone of every seat (seat by seat; HAND, MELDS,
    DISCARDS), no tile id in two places. Without it: nothing to check."""
    assert probe.reply is not None
    if Capability.SEAT_READER not in Capability(probe.reply.capabilities):
        return "no SEAT_READER capability: nothing to check"
    want = [(seat, zone) for seat in range(probe.reply.seats) for zone in Zone]
    got: list[SeatTiles] = []
    status: list[TableStatus] = []

    def follow(item: Received) -> bool:
        message = item.message
        if isinstance(message, TableStatus):
            status.append(message)
        elif isinstance(message, SeatTiles) and status:
            got.append(message)
        return len(got) >= len(want)

    since = await _command_acked(probe, StatusRequest())
    finished = await probe.wait_for(follow, ANSWER_S, since=since)
    _require(bool(status), "no TableStatus after a StatusRequest")
    _require(
        finished is not None,
        f"{len(got)} SeatTiles of {len(want)} (every zone of every seat) within "
        f"{ANSWER_S:g} s of the TableStatus",
    )
    places = [(m.seat, m.zone) for m in got]
    _require(
        places == want,
        "zones reported as "
        + ", ".join(f"{s}:{z.name}" for s, z in places)
        + "; expected seat by seat, HAND, MELDS, DISCARDS",
    )
    tiles = [t for m in got for t in m.tiles]
    _require(len(set(tiles)) == len(tiles), "a tile id appears in two zones")
    return (
        f"{len(got)} zones of {probe.reply.seats} seats after the TableStatus, {len(tiles)} tiles"
    )


async def _unacked_status(probe: Probe) -> Received:
    """Ask for a TableStatus with automatic acks off; the frame that carried it."""
    probe.auto_ack = False
    since = probe.mark()
    probe.command(StatusRequest())
    item = await probe.wait_for(lambda r: isinstance(r.message, TableStatus), ANSWER_S, since=since)
    _require(item is not None, "no TableStatus after a StatusRequest")
    assert item is not None
    _require(bool(item.frame.flags & Flags.RELIABLE), "TableStatus was not sent reliably")
    return item


def _in_order_end(probe: Probe, seq: int, since: int) -> int:
    """One past the last event seq received from index ``since`` on without a gap
    from ``seq``."""
    seen = {r.frame.seq for r in probe.received[since:] if r.frame.flags & Flags.RELIABLE}
    end = seq
    while end in seen:
        end = (end + 1) % 256
    return end


def _same_event(seq: int) -> Callable[[Received], bool]:
    return lambda r: bool(r.frame.flags & Flags.RELIABLE) and r.frame.seq == seq


@check("retransmission")
async def check_retransmission(probe: Probe) -> str:
    """An event the host does not acknowledge is sent again (go-back-N, within the RTO
    of at most 1.6 s), and no more once it is acknowledged."""
    try:
        first = await _unacked_status(probe)
        seq = first.frame.seq
        again = await probe.wait_for(_same_event(seq), RESEND_S, since=probe.mark())
        _require(again is not None, f"event seq {seq} not resent within {RESEND_S:g} s unacked")
        assert again is not None
        waited = again.at - first.at
        # Acknowledge it and whatever came after it in order (with seat readers, the
        # snapshots that follow a TableStatus), so no backlog slows the next checks.
        probe.rx_next = _in_order_end(probe, seq, probe.received.index(first))
        probe.auto_ack = True
        probe.send_ack()
        await asyncio.sleep(0.1)  # a resend already on the wire may still arrive
        late = await probe.wait_for(_same_event(seq), RESEND_S, since=probe.mark())
        _require(late is None, f"event seq {seq} still resent after it was acknowledged")
        return f"resent after {waited * 1000:.0f} ms; quiet once acknowledged"
    finally:
        probe.auto_ack = True


def _events(probe: Probe, since: int, kind: type[Message]) -> dict[int, Received]:
    """The device's events of type ``kind`` received since ``since``, one per sequence
    number: a retransmission (the probe's ack was late, as on a busy host) is the same
    event again, not another answer."""
    return {r.frame.seq: r for r in probe.received[since:] if isinstance(r.message, kind)}


@check("duplicates")
async def check_duplicates(probe: Probe) -> str:
    """A command received twice (the device's ack was lost, the host resent it) is
    acknowledged again and acted on once."""
    since = probe.mark()
    seq = probe.command(StatusRequest())
    probe.command(StatusRequest(), seq=seq)
    _require(await probe.acked(seq, since=since), f"seq {seq} not acknowledged")
    await asyncio.sleep(0.5)
    answers = _events(probe, since, TableStatus)
    _require(len(answers) == 1, f"{len(answers)} TableStatus for one StatusRequest sent twice")
    return "a repeated command was answered once"


@check("ordering")
async def check_ordering(probe: Probe) -> str:
    """A command that arrives before the one it follows is dropped (not acknowledged, not
    acted on); once the missing one comes, both are taken in order."""
    since = probe.mark()
    first = probe.tx_seq
    probe.command(StatusRequest(), seq=(first + 1) % 256)
    await asyncio.sleep(0.5)
    early = [r for r in probe.received[since:] if isinstance(r.message, TableStatus)]
    _require(not early, "a command out of order was acted on")
    jumped = [
        r
        for r in probe.received[since:]
        if r.frame.flags & Flags.ACK and not r.frame.flags & Flags.SYN and r.frame.ack != first
    ]
    _require(not jumped, f"the ack moved past seq {first} before it arrived")
    probe.command(StatusRequest())  # seq `first`
    probe.command(StatusRequest())  # seq first + 1, sent again as go-back-N would
    _require(await probe.acked((first + 1) % 256, since=since), "the pair was not acknowledged")
    await asyncio.sleep(0.3)
    answers = _events(probe, since, TableStatus)
    _require(len(answers) == 2, f"{len(answers)} TableStatus for two StatusRequests")
    return "dropped out of order, taken in order"


async def _send_windowed(probe: Probe, messages: Sequence[Message], within: float) -> None:
    """Send ``messages`` keeping at most WINDOW unacknowledged: all acknowledged within
    ``within`` s, and each within ANSWER_S of being sent. The probe never resends, so a
    command the device lost is never acknowledged: the failure is known once its ack is
    overdue (a host resends after at most 1.6 s), not only at the end of ``within``."""
    deadline = time.monotonic() + within
    outstanding: list[tuple[int, int, float]] = []

    async def settle(seq: int, since: int, sent: float) -> None:
        due = min(deadline, sent + ANSWER_S)
        left = due - time.monotonic()
        if not (left > 0 and await probe.acked(seq, left, since=since)):
            late = f"{within:g} s after the first" if due == deadline else f"{ANSWER_S:g} s"
            raise CheckFailed(f"seq {seq} unacked {late} after it was sent")

    for message in messages:
        while len(outstanding) >= WINDOW:
            await settle(*outstanding.pop(0))
        since, sent = probe.mark(), time.monotonic()
        outstanding.append((probe.command(message), since, sent))
    for item in outstanding:
        await settle(*item)


@check("sequence_wraparound")
async def check_sequence_wraparound(probe: Probe) -> str:
    """300 commands in a row: the 8-bit sequence numbers wrap and every one is acked."""
    lamps = [SeatLamps(seat=0, dealer=bool(i % 2), riichi=False) for i in range(300)]
    start = time.monotonic()
    await _send_windowed(probe, lamps, 30.0)
    elapsed_ms = (time.monotonic() - start) * 1000
    return f"300 commands acknowledged through the wrap in {elapsed_ms:.0f} ms"


@check("burst")
async def check_burst(probe: Probe) -> str:
    """A burst of 64 display commands, as fast as the window allows, all acknowledged."""
    assert probe.reply is not None
    seats = probe.reply.seats
    lines = [SeatDisplay(seat=i % seats, line1=f"BURST {i}", line2="") for i in range(64)]
    start = time.monotonic()
    await _send_windowed(probe, lines, 10.0)
    elapsed = time.monotonic() - start
    return f"64 commands in {elapsed * 1000:.0f} ms ({64 / elapsed:.0f}/s)"


@check("malformed_frames")
async def check_malformed_frames(probe: Probe) -> str:
    """Garbage, a bad CRC, an oversize run without a delimiter and a frame of another
    version are ignored; the session carries on and the next command is taken."""
    good = encode_frame(
        Frame(Flags.RELIABLE | Flags.ACK, probe.tx_seq, probe.rx_next, StatusRequest.MSG_TYPE)
    )
    bad_crc = bytearray(good)
    bad_crc[-2] = 0x5A if bad_crc[-2] != 0x5A else 0xA5  # the CRC's high byte, never 0x00
    probe.transport.write(b"\x13\x37garbage\x00")
    probe.transport.write(bytes(bad_crc))
    probe.transport.write(b"\x55" * 300 + b"\x00")
    probe.write(Frame(Flags.RELIABLE, probe.tx_seq, 0, StatusRequest.MSG_TYPE, version=2))
    await asyncio.sleep(0.3)
    since = await _command_acked(probe, StatusRequest())
    status = await probe.message(TableStatus, ANSWER_S, since=since)
    _require(status is not None, "no TableStatus after the malformed frames")
    session = probe.session
    beat = await probe.message(Heartbeat, 2.0, since=since)
    _require(beat is not None and beat.session == session, "the session did not survive")
    return "ignored; the link carried on"


def _after_reply(probe: Probe, since: int) -> int:
    """The index just past the reply, received from ``since`` on, that opened the current
    session (the probe has one: the caller's hello was answered OK)."""
    for index in range(since, len(probe.received)):
        message = probe.received[index].message
        if isinstance(message, HelloReply) and message.session == probe.session:
            return index + 1
    raise CheckFailed("the reply that opened the session was not received")  # pragma: no cover


@check("resume")
async def check_resume(probe: Probe) -> str:
    """A new session that resumes (same boot id, ``rx_next`` before an unacked event) gets
    that event again first; one whose ``rx_next`` covers it does not."""
    try:
        item = await _unacked_status(probe)
        seq = item.frame.seq
        since = probe.mark()
        reply = await probe.hello(rx_next=seq)
        _require(reply is not None and reply.status is HelloStatus.OK, "resume hello refused")
        assert reply is not None
        _require(reply.next_seq == seq, f"next_seq {reply.next_seq}, the unacked event is {seq}")
        # Unacknowledged, the event is resent every retransmission timeout (25 ms at least)
        # in whatever session the device is in: a copy read after a hello was sent may have
        # been written before the device read that hello (a loaded host or device takes
        # longer than that between the two). The device writes in order, so what it sent
        # in the new session is exactly what follows its reply to the hello.
        again = await probe.wait_for(
            lambda r: isinstance(r.message, TableStatus) and r.frame.seq == seq,
            ANSWER_S,
            since=_after_reply(probe, since),
        )
        _require(again is not None, "the unacked event was not sent again in the new session")
        since = probe.mark()
        reply = await probe.hello(rx_next=(seq + 1) % 256)
        _require(reply is not None and reply.status is HelloStatus.OK, "second hello refused")
        await asyncio.sleep(0.5)
        new_session = probe.received[_after_reply(probe, since) :]
        stale = [r for r in new_session if isinstance(r.message, TableStatus)]
        _require(not stale, "an event the hello acknowledged was sent again")
        return f"event seq {seq} resent to the resuming session, dropped once acknowledged"
    finally:
        probe.auto_ack = True
        probe.send_ack()


@check("host_silent")
async def check_host_silent(probe: Probe) -> str:
    """With the host silent for 3 s the device drops the session (heartbeats with session
    0) and stops the motors; after the next Hello it reports Fault HOST_SILENT."""
    await _command_acked(probe, WallCommand(action=WallAction.SHUFFLE, wall=0xFF))
    probe.heartbeats = False
    since, quiet_from = probe.mark(), time.monotonic()
    try:
        dropped = await probe.wait_for(
            lambda r: isinstance(r.message, Heartbeat) and r.message.session == 0,
            SILENCE_S + 2.0,
            since=since,
        )
        _require(dropped is not None, "still no heartbeat with session 0 after 5 s of silence")
        assert dropped is not None
        silent_for = dropped.at - quiet_from
    finally:
        probe.heartbeats = True
    since = probe.mark()
    reply = await probe.hello()
    _require(reply is not None and reply.status is HelloStatus.OK, "no session after silence")
    fault = await probe.wait_for(
        lambda r: isinstance(r.message, Fault) and r.message.code is FaultCode.HOST_SILENT,
        ANSWER_S,
        since=since,
    )
    _require(fault is not None, "no Fault HOST_SILENT after the host came back")
    since = await _command_acked(probe, StatusRequest())
    status = await probe.message(TableStatus, ANSWER_S, since=since)
    _require(status is not None, "no TableStatus")
    assert status is not None
    moving = {WallState.SHUFFLING, WallState.BUILDING, WallState.RAISING}
    _require(not moving & set(status.walls), f"walls still moving: {status.walls}")
    await _command_acked(probe, FaultClear(code=FaultCode.HOST_SILENT))
    return f"session dropped after ~{silent_for:.1f} s; motors stopped; HOST_SILENT reported"


@check("key_press", interactive=True)
async def check_key_press(probe: Probe) -> str:
    """A key pressed on seat 0's console arrives as a KeyPress."""
    _say("press any key on the console of seat 0 (30 s)")
    key = await probe.message(KeyPress, 30.0, since=probe.mark())
    _require(key is not None, "no KeyPress within 30 s")
    assert key is not None
    return f"seat {key.seat} pressed {key.key.name}"


@check("warm_reset", interactive=True)
async def check_warm_reset(probe: Probe) -> str:
    """After a warm reset (the reset button) the device has a new boot id and still sends
    the event it had not had acknowledged. A device that closes its connection when it
    resets (USB re-enumerates, a TCP server drops its client) is opened again."""
    item = await _unacked_status(probe)
    assert probe.reply is not None
    boot = probe.reply.boot_id
    _say("press the table's reset button now (30 s)")
    since = probe.mark()
    probe.heartbeats = False
    try:
        # A device that closes its connection when it resets ends this wait at once.
        dropped = await probe.wait_for(
            lambda r: isinstance(r.message, Heartbeat) and r.message.session == 0,
            30.0,
            since=since,
        )
        if probe.closed:
            await probe.reconnect(30.0)
        else:
            _require(dropped is not None, "the device never dropped the session")
    finally:
        probe.heartbeats = True
    since = probe.mark()
    reply = await probe.hello(resume_boot_id=boot, rx_next=item.frame.seq)
    _require(reply is not None and reply.status is HelloStatus.OK, "no session after the reset")
    assert reply is not None
    _require(reply.boot_id != boot, "the boot id did not change: was it reset?")
    again = await probe.message(TableStatus, ANSWER_S, since=since)
    probe.auto_ack = True
    probe.send_ack()
    _require(again is not None, "the unacknowledged event was lost in the reset")
    return f"new boot id {reply.boot_id:#010x}; the unacked event came first"


# --- running -----------------------------------------------------------------------------


@dataclass
class Report:
    """Every check's result, and what the device said of itself."""

    url: str
    results: list[CheckResult] = field(default_factory=list)
    #: The checks asked for (empty: all); a prerequisite run for them is not one.
    asked: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether any check failed."""
        return any(r.status == "fail" for r in self.results)

    @property
    def checked_nothing(self) -> bool:
        """Whether every check asked for was skipped: a pass of nothing is no pass."""
        asked = [r for r in self.results if not self.asked or r.name in self.asked]
        return all(r.status == "skip" for r in asked)

    def lines(self) -> list[str]:
        """One line per check, then a summary."""
        out = [f"{r.status.upper():4} {r.name:20} {r.detail}" for r in self.results]
        counts = {s: sum(r.status == s for r in self.results) for s in ("pass", "fail", "skip")}
        out.append(
            f"{self.url}: {counts['pass']} passed, {counts['fail']} failed, "
            f"{counts['skip']} skipped"
        )
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        results = [asdict(r) for r in self.results]
        return {
            "url": self.url,
            "failed": self.failed,
            "checked_nothing": self.checked_nothing,
            "results": results,
        }


async def run_checks(
    transport: Transport,
    url: str,
    *,
    interactive: bool = False,
    only: Sequence[str] = (),
) -> Report:
    """Run the checks (all, or ``only`` these, after the hello when they need a session)
    against the device on ``transport``."""
    report = Report(url, asked=tuple(only))
    wanted = set(only)
    if wanted and wanted != {"hello"}:
        wanted.add("hello")  # every other check runs in the session the hello opens
    probe = Probe(transport, url)
    await probe.start()
    try:
        for name, func in CHECKS.items():
            started = time.monotonic()
            if wanted and name not in wanted:
                continue
            try:
                if name in INTERACTIVE and not interactive:
                    raise CheckSkipped("needs a person at the table: run with --interactive")
                if name != "hello" and not probe.up:
                    raise CheckSkipped("no session: the hello check failed")
                detail, status = await func(probe), "pass"
            except CheckFailed as exc:
                detail, status = str(exc), "fail"
            except CheckSkipped as exc:
                detail, status = str(exc), "skip"
            report.results.append(CheckResult(name, status, detail, time.monotonic() - started))
    finally:
        await probe.close()
    return report


#: Exit code of a run in which every check asked for was skipped.
EXIT_NOTHING_CHECKED = 3


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting: one line, exit 2."""

    def error(self, message: str) -> Any:
        raise _ArgumentError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m firmware_bridge.conformance",
        description="Check a table's firmware against docs/protocol.md.",
    )
    parser.add_argument("url", help="the device: a serial port, socket://host:port, usb://VID:PID")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--interactive", action="store_true", help="also run the checks that need a person"
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="CHECK", help="run only this check"
    )
    return parser


async def _main(args: argparse.Namespace) -> int:
    try:
        transport = await open_transport(args.url)
    except (TransportError, OSError, ValueError) as exc:
        _say(f"cannot open {args.url}: {exc}")
        return 2
    report = await run_checks(transport, args.url, interactive=args.interactive, only=args.only)
    out = json.dumps(report.as_dict()) if args.json else "\n".join(report.lines())
    sys.stdout.write(out + "\n")
    if report.failed:
        return 1
    if report.checked_nothing:
        _say("nothing was checked: every check asked for was skipped (see why above)")
        return EXIT_NOTHING_CHECKED
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, report; the exit code (a broken stdout is one line
    and an exit code too: firmware_bridge.stdio)."""
    return run_guarded("conformance", lambda: _cli(argv))


def _cli(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except _ArgumentError as exc:
        _say(exc)
        return 2
    unknown = [name for name in args.only if name not in CHECKS]
    if unknown:
        _say(f"no check {unknown[0]!r}; checks: {', '.join(CHECKS)}")
        return 2
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
