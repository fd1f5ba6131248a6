"""Pure frame codec: bytes in, frames out. No I/O, no clock, no asyncio.

Wire format (see docs/protocol.md)::

    frame on the wire = COBS(body) 0x00
    body              = version:u8 flags:u8 seq:u8 ack:u8 msg_type:u8 payload:0..246 crc:u16le
    signed body       = version flags seq ack msg_type payload:0..233
                        link_id:u8 timestamp:u48le mac:6 crc:u16le      (flags has SIGNED)
    crc               = CRC-16/CCITT-FALSE over every body byte before it

The decoder follows Klipper's ``check_packet``: :func:`check_packet` says how many bytes of
the buffer it used (``0`` need more, ``-1`` resync, ``n`` = frame length) and
:class:`FrameDecoder` is the small stream helper that feeds bytes and yields frames.
"""

from __future__ import annotations

import binascii
import enum
import logging
from dataclasses import dataclass

import cobs.cobs as _cobs

from firmware_bridge.errors import FrameError

__all__ = [
    "DELIMITER",
    "HEADER_LEN",
    "MAC_LEN",
    "MAX_BODY",
    "MAX_PAYLOAD",
    "MAX_WIRE",
    "MAX_SIGNED_PAYLOAD",
    "PROTOCOL_MAJOR",
    "SIGNATURE_LEN",
    "TIMESTAMP_MAX",
    "DecoderStats",
    "Flags",
    "Frame",
    "FrameDecoder",
    "Signature",
    "check_packet",
    "crc16",
    "decode_packet",
    "encode_frame",
    "resync_length",
    "signing_input",
]

_log = logging.getLogger(__name__)

#: Protocol major version, the first body byte of every frame. The header layout below never
#: changes between versions, so a peer can always read the version and refuse politely.
PROTOCOL_MAJOR = 1
#: Frame delimiter. COBS guarantees it never occurs inside a frame, so resync = skip to it.
DELIMITER = 0x00
#: version, flags, seq, ack, msg_type.
HEADER_LEN = 5
CRC_LEN = 2
#: Largest body: 253 bytes COBS-encode with exactly one overhead byte, so a whole frame with
#: its delimiter fits in 255 bytes, one u8 length for an MCU's buffer.
MAX_BODY = 253
MAX_PAYLOAD = MAX_BODY - HEADER_LEN - CRC_LEN
#: Largest frame on the wire, delimiter included.
MAX_WIRE = MAX_BODY + 2
#: The signature trailer of a SIGNED frame: link id u8, timestamp u48, MAC 6 bytes (the
#: 13 bytes of a MAVLink v2 signature), between the payload and the CRC.
SIGNATURE_LEN = 13
MAC_LEN = 6
TIMESTAMP_MAX = 2**48 - 1
#: Largest payload of a signed frame (every message of the schema fits).
MAX_SIGNED_PAYLOAD = MAX_PAYLOAD - SIGNATURE_LEN


class Flags(enum.IntFlag):
    """Bits of the frame ``flags`` byte."""

    NONE = 0
    #: The frame carries a message that consumes ``seq`` and must be acknowledged.
    RELIABLE = 0x01
    #: The ``ack`` field is valid: the sender expects the peer's ``seq == ack`` next.
    ACK = 0x02
    #: Handshake frame (Hello / HelloReply): starts a session, ``seq`` and ``ack`` unused.
    SYN = 0x04
    #: A :class:`Signature` trailer sits between the payload and the CRC. Inside the CRC on
    #: purpose: a peer that knows nothing of signing still passes the CRC and reads the
    #: trailer as payload bytes after the fields it knows, which it ignores.
    SIGNED = 0x08


#: Flags bytes seen so far as Flags values: an IntFlag built by a call costs a
#: microsecond per frame, and building all 256 at import costs milliseconds of start-up.
_FLAGS_BY_BYTE: dict[int, Flags] = {}
_SIGNED_BIT = int(Flags.SIGNED)


def flags_of(byte: int) -> Flags:
    """The :class:`Flags` of a flags byte (each value built once)."""
    flags = _FLAGS_BY_BYTE.get(byte)
    if flags is None:
        flags = _FLAGS_BY_BYTE[byte] = Flags(byte)
    return flags


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xor-out).

    >>> hex(crc16(b"123456789"))
    '0x29b1'
    """
    return binascii.crc_hqx(data, 0xFFFF)


@dataclass(frozen=True, slots=True)
class Signature:
    """The trailer of a SIGNED frame, laid out as MAVLink v2's: who signed (``link_id``),
    when (``timestamp``, 10 us units since 2015-01-01 UTC, strictly increasing per link id)
    and the first 6 bytes of the HMAC-SHA256 (``mac``). See :mod:`firmware_bridge.signing`."""

    link_id: int
    timestamp: int
    mac: bytes

    def __post_init__(self) -> None:
        if not 0 <= self.link_id <= 0xFF:
            raise ValueError(f"Signature.link_id must be 0..255, got {self.link_id}")
        if not 0 <= self.timestamp <= TIMESTAMP_MAX:
            raise ValueError(f"Signature.timestamp must be 0..2**48-1, got {self.timestamp}")
        if len(self.mac) != MAC_LEN:
            raise ValueError(f"Signature.mac must be {MAC_LEN} bytes, got {len(self.mac)}")

    def to_bytes(self) -> bytes:
        """The 13 trailer bytes: ``link_id u8, timestamp u48le, mac[6]``."""
        return bytes((self.link_id,)) + self.timestamp.to_bytes(6, "little") + self.mac

    @classmethod
    def from_bytes(cls, data: bytes) -> Signature:
        """Read the 13 trailer bytes (the caller checked the length)."""
        return cls(data[0], int.from_bytes(data[1:7], "little"), bytes(data[7:SIGNATURE_LEN]))


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded frame: header fields, the raw message payload and, when ``flags`` has
    ``SIGNED``, its :class:`Signature` (set exactly when the flag is)."""

    flags: Flags
    seq: int
    ack: int
    msg_type: int
    payload: bytes = b""
    version: int = PROTOCOL_MAJOR
    signature: Signature | None = None

    def __post_init__(self) -> None:
        # Written out rather than looped: every frame in and out passes here.
        if not (
            0 <= self.seq <= 0xFF
            and 0 <= self.ack <= 0xFF
            and 0 <= self.msg_type <= 0xFF
            and 0 <= self.version <= 0xFF
        ):
            for name in ("seq", "ack", "msg_type", "version"):
                value = getattr(self, name)
                if not 0 <= value <= 0xFF:
                    raise ValueError(f"Frame.{name} must be 0..255, got {value}")
        flags = int(self.flags)
        if not 0 <= flags <= 0xFF:
            raise ValueError(f"Frame.flags must fit in a byte, got {self.flags!r}")
        if bool(flags & _SIGNED_BIT) != (self.signature is not None):
            raise ValueError("Frame.flags has SIGNED exactly when the frame has a signature")
        limit = MAX_PAYLOAD if self.signature is None else MAX_SIGNED_PAYLOAD
        if len(self.payload) > limit:
            raise ValueError(f"payload is {len(self.payload)} bytes, at most {limit}")

    def body(self) -> bytes:
        """The body without CRC: ``version flags seq ack msg_type payload [signature]``."""
        head = bytes((self.version, int(self.flags), self.seq, self.ack, self.msg_type))
        if self.signature is None:
            return head + self.payload
        return head + self.payload + self.signature.to_bytes()


def signing_input(frame: Frame, link_id: int, timestamp: int) -> bytes:
    """The bytes a signature's MAC covers: the header (with ``SIGNED`` set) and the payload
    of ``frame``, then ``link_id`` and ``timestamp`` as in the trailer. MAVLink also covers
    its CRC; ours comes after the trailer and covers it, so it is left out here."""
    head = bytes(
        (frame.version, int(frame.flags | Flags.SIGNED), frame.seq, frame.ack, frame.msg_type)
    )
    return head + frame.payload + bytes((link_id,)) + timestamp.to_bytes(6, "little")


def encode_frame(frame: Frame) -> bytes:
    """Encode ``frame`` for the wire: ``COBS(body + crc16le) + b"\\x00"``."""
    body = frame.body()
    body += crc16(body).to_bytes(2, "little")
    return bytes(_cobs.encode(body)) + b"\x00"


def encode_unsigned(flags: int, seq: int, ack: int, msg_type: int, payload: bytes) -> bytes:
    """What ``encode_frame(Frame(flags, seq, ack, msg_type, payload))`` gives for an
    unsigned frame of this protocol version, without building (and checking) the Frame:
    the link's path for every frame it sends, with fields it made itself."""
    body = bytes((PROTOCOL_MAJOR, flags, seq, ack, msg_type)) + payload
    if flags & _SIGNED_BIT or len(payload) > MAX_PAYLOAD:
        raise ValueError(f"not an unsigned frame of at most {MAX_PAYLOAD} payload bytes")
    body += crc16(body).to_bytes(2, "little")
    return bytes(_cobs.encode(body)) + b"\x00"


def decode_packet(packet: bytes) -> Frame:
    """Decode one complete packet (COBS bytes, optionally ending with the delimiter).

    Raises :class:`FrameError` (and nothing else) when the packet is not a valid frame.
    """
    if packet.endswith(b"\x00"):
        packet = packet[:-1]
    if not packet:
        raise FrameError("empty", "empty packet (lone delimiter)")
    if len(packet) > MAX_WIRE - 1:
        raise FrameError("length", f"packet of {len(packet)} bytes exceeds {MAX_WIRE - 1}")
    try:
        body = bytes(_cobs.decode(packet))
    except _cobs.DecodeError as exc:
        raise FrameError("cobs", f"bad COBS encoding: {exc}") from None
    if len(body) < HEADER_LEN + CRC_LEN:
        raise FrameError("length", f"body of {len(body)} bytes is shorter than a header")
    if len(body) > MAX_BODY:
        raise FrameError("length", f"body of {len(body)} bytes exceeds {MAX_BODY}")
    got = int.from_bytes(body[-CRC_LEN:], "little")
    want = crc16(body[:-CRC_LEN])
    if got != want:
        raise FrameError("crc", f"CRC mismatch: frame says {got:#06x}, body gives {want:#06x}")
    flags = _FLAGS_BY_BYTE.get(body[1]) or flags_of(body[1])
    payload = body[HEADER_LEN:-CRC_LEN]
    signature = None
    if body[1] & _SIGNED_BIT:
        if len(payload) < SIGNATURE_LEN:
            raise FrameError(
                "length",
                f"SIGNED frame has {len(payload)} bytes after its header, "
                f"fewer than its {SIGNATURE_LEN}-byte signature",
            )
        signature = Signature.from_bytes(payload[-SIGNATURE_LEN:])
        payload = payload[:-SIGNATURE_LEN]
    return Frame(
        version=body[0],
        flags=flags,
        seq=body[2],
        ack=body[3],
        msg_type=body[4],
        payload=payload,
        signature=signature,
    )


def check_packet(buf: bytes | bytearray | memoryview) -> int:
    """Klipper-style check of the start of ``buf``.

    Returns ``0`` when more bytes are needed, ``n > 0`` when ``buf[:n]`` is one valid frame
    (delimiter included), ``-1`` when the bytes up to the next delimiter are garbage: the
    caller drops them through that delimiter (:func:`resync_length`) and tries again.
    A lone delimiter also gives ``-1``; senders may emit one to flush a receiver.
    """
    end = bytes(buf[:MAX_WIRE]).find(b"\x00")
    if end < 0:
        return -1 if len(buf) >= MAX_WIRE else 0
    try:
        decode_packet(bytes(buf[: end + 1]))
    except FrameError:
        return -1
    return end + 1


def resync_length(buf: bytes | bytearray | memoryview) -> int:
    """How many bytes to drop after ``check_packet`` returned ``-1``: through the next
    delimiter, or the whole buffer when there is none."""
    end = bytes(buf).find(b"\x00")
    return len(buf) if end < 0 else end + 1


@dataclass(slots=True)
class DecoderStats:
    """Counters kept by :class:`FrameDecoder`."""

    frames: int = 0
    crc_errors: int = 0
    framing_errors: int = 0
    bytes_dropped: int = 0


class FrameDecoder:
    """Stream helper: feed arbitrary chunks, get whole frames back.

    Never raises on bad input: garbage is counted in :attr:`stats` and skipped up to the next
    delimiter, so the decoder resynchronises on the next good frame.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self.stats = DecoderStats()

    def feed(self, data: bytes) -> list[Frame]:
        """Add ``data`` and return the frames it completed, oldest first."""
        buf = self._buf
        buf += data
        frames: list[Frame] = []
        start = 0
        while True:
            end = buf.find(0, start)
            if end < 0:
                if len(buf) - start >= MAX_WIRE:
                    # No delimiter within a maximal frame: this can only be noise. Keep
                    # nothing, the rest of this noise fails the CRC once a delimiter comes.
                    drop = len(buf) - start
                    self.stats.framing_errors += 1
                    self.stats.bytes_dropped += drop
                    _log.debug("dropping %d bytes without delimiter", drop)
                    start = len(buf)
                break
            packet = bytes(buf[start : end + 1])
            start = end + 1
            try:
                frame = decode_packet(packet)
            except FrameError as exc:
                if exc.kind != "empty":
                    if exc.kind == "crc":
                        self.stats.crc_errors += 1
                    else:
                        self.stats.framing_errors += 1
                    self.stats.bytes_dropped += len(packet)
                    _log.debug("bad frame (%s): %s", exc, packet.hex())
                continue
            self.stats.frames += 1
            frames.append(frame)
        del buf[:start]
        return frames

    @property
    def pending(self) -> int:
        """Bytes buffered while waiting for a delimiter."""
        return len(self._buf)

    def reset(self) -> None:
        """Forget any partial frame (after a reconnect the old bytes mean nothing)."""
        self._buf.clear()
