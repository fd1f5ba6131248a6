"""The message schema: one frozen dataclass per message, shared by the bridge and hw_sim.

Each message class has a stable ``MSG_TYPE`` byte and a ``DIRECTION``:

* ``0x00..0x0F`` link messages, both ways (Ack, Hello, HelloReply, Heartbeat);
* ``0x10..0x7F`` commands, host (Pi) to table;
* ``0x80..0xFF`` events, table to host.

The payload layout is the field order of the dataclass; each field's wire type is given with
``typing.Annotated`` (``seat: Annotated[int, U8(0, 3)]``), so the dataclass *is* the schema.
:data:`SCHEMA` is the canonical text of the whole schema and :data:`SCHEMA_HASH` its CRC-32,
exchanged in the hello so two builds that disagree on a layout notice it.

All integers are little-endian. Receivers ignore payload bytes after the last field they know
(room for minor-version additions at the end of a message).
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import typing
import zlib
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, TypeVar

from firmware_bridge.codec import PROTOCOL_MAJOR
from firmware_bridge.errors import ProtocolError

__all__ = [
    "ALL_WALLS",
    "MESSAGES",
    "PROTOCOL_MAJOR",
    "PROTOCOL_MINOR",
    "SCHEMA",
    "SCHEMA_HASH",
    "SEAT_READER_FAULT",
    "TILE_UNKNOWN",
    "Ack",
    "BuzzerCommand",
    "BuzzerPattern",
    "Capability",
    "CentreDisplay",
    "DiceResult",
    "DiceRoll",
    "Direction",
    "Fault",
    "FaultClear",
    "FaultCode",
    "Heartbeat",
    "Hello",
    "HelloReply",
    "HelloStatus",
    "Key",
    "KeyPress",
    "Message",
    "SeatDisplay",
    "SeatLamps",
    "SeatTiles",
    "StatusRequest",
    "TableReset",
    "TableStatus",
    "TrayTotals",
    "WallAction",
    "WallCommand",
    "WallLayout",
    "WallState",
    "WallStatus",
    "WallTake",
    "Wind",
    "Zone",
    "decode_message",
    "seat_reader_detail",
]

#: Bumped when something is added that old peers can ignore (a new message, a trailing field).
#: 1: signed frames (the SIGNED flag and its trailer) and HelloStatus.SIGNING_REQUIRED.
#: 2: the WALL_READER capability and its WallLayout event.
#: 3: the SEAT_READER capability and its SeatTiles event (sent only to 1.3 hosts).
PROTOCOL_MINOR = 3

#: ``WallCommand.wall`` value addressing all four walls at once.
ALL_WALLS = 0xFF
#: Tile byte meaning "the table did not read this tile".
TILE_UNKNOWN = 0xFF
#: Highest tile id: tiles are numbered 0..135 in the usual 136 format (kind = id // 4,
#: kinds 0-8 man 1-9, 9-17 pin, 18-26 sou, 27-33 E S W N haku hatsu chun).
TILE_MAX = 135


# --------------------------------------------------------------------------------------------
# Enums


class Direction(enum.Enum):
    """Who may send a message."""

    LINK = "link"  # both ways, handled by the link layer itself
    COMMAND = "command"  # host -> table
    EVENT = "event"  # table -> host


class HelloStatus(enum.IntEnum):
    """Whether the table accepted the host's hello."""

    OK = 0
    VERSION_MISMATCH = 1
    #: The table has a signing key and the hello was not signed with it (unsigned, signed
    #: with another key, or a timestamp it had seen): no session was opened.
    SIGNING_REQUIRED = 2


class Capability(enum.IntFlag):
    """Hardware the table reports in its hello reply."""

    NONE = 0
    SEAT_CONSOLES = 0x0001
    CENTRE_DISPLAY = 0x0002
    DICE = 0x0004
    TILE_READER = 0x0008
    TRAY_SENSORS = 0x0010
    BUZZER = 0x0020
    WALL_TAKE_SENSORS = 0x0040
    #: A reader in the lift reads every tile as the walls are raised: one
    #: :class:`WallLayout` per wall at each raise.
    WALL_READER = 0x0080
    #: Readers under each seat's hand, meld and discard zones: a :class:`SeatTiles`
    #: snapshot whenever a zone's tiles change.
    SEAT_READER = 0x0100


class WallAction(enum.IntEnum):
    """What a :class:`WallCommand` asks the wall motors to do."""

    SHUFFLE = 1
    BUILD = 2
    RAISE = 3
    STOP = 4


class WallState(enum.IntEnum):
    """State of one wall as reported by :class:`WallStatus`."""

    IDLE = 0
    SHUFFLING = 1
    BUILDING = 2
    RAISING = 3
    DONE = 4  # raised and ready to play
    TILE_COUNT_ERROR = 5  # counted != expected, see WallStatus.tiles_counted
    STOPPED = 6  # stopped by STOP, reset or host silence


class Wind(enum.IntEnum):
    """Round wind on the centre display."""

    EAST = 0
    SOUTH = 1
    WEST = 2
    NORTH = 3


class Key(enum.IntEnum):
    """Console keys. Digits have their own value so ``int(Key.DIGIT_7) == 7``."""

    DIGIT_0 = 0
    DIGIT_1 = 1
    DIGIT_2 = 2
    DIGIT_3 = 3
    DIGIT_4 = 4
    DIGIT_5 = 5
    DIGIT_6 = 6
    DIGIT_7 = 7
    DIGIT_8 = 8
    DIGIT_9 = 9
    RIICHI = 0x10
    PON = 0x11
    CHI = 0x12
    KAN = 0x13
    RON = 0x14
    TSUMO = 0x15
    TENPAI = 0x16
    NOTEN = 0x17
    OK = 0x20
    CANCEL = 0x21
    MENU = 0x22
    LAST_GAME = 0x23
    STAFF_CALL = 0x24


class Zone(enum.IntEnum):
    """A seat reader's zone (:class:`SeatTiles`)."""

    HAND = 0
    MELDS = 1
    DISCARDS = 2


#: ``Fault(TILE_READER).detail`` of a seat reader: this plus ``16 * seat + zone`` (0x100 +
#: 0x10 * seat + zone reads as 0x1SZ in hex); 0..3 name a wall's reader in the lift.
SEAT_READER_FAULT = 0x100


def seat_reader_detail(seat: int, zone: Zone) -> int:
    """The ``Fault(TILE_READER).detail`` naming the reader of ``seat``'s ``zone``."""
    if not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0..3, got {seat}")
    return SEAT_READER_FAULT + 16 * seat + int(Zone(zone))


class BuzzerPattern(enum.IntEnum):
    """Sound patterns of the table buzzer."""

    OFF = 0
    BEEP = 1
    DOUBLE_BEEP = 2
    LONG = 3
    ALARM = 4


class FaultCode(enum.IntEnum):
    """Faults the table reports; ``Fault.detail`` meaning is given per code."""

    MOTOR_STALL = 1  # detail: wall index 0..3, or 0xFF for the lift/shuffler
    TILE_COUNT = 2  # detail: wall index; see WallStatus for the counts
    DICE = 3  # detail: 0
    TILE_READER = 4  # detail: wall index, or seat_reader_detail(seat, zone)
    TRAY_SENSOR = 5  # detail: seat
    OVERHEAT = 6  # detail: temperature in degrees C
    LID_OPEN = 7  # detail: 0
    POWER = 8  # detail: supply voltage in 0.1 V
    EVENT_OVERFLOW = 9  # detail: events dropped because the host did not ack
    HOST_SILENT = 10  # detail: 0; motors were stopped because the host went silent
    INTERNAL = 0xFF  # detail: firmware specific


# --------------------------------------------------------------------------------------------
# Wire types: each knows how to check, encode, decode and describe one field.


class WireType:
    """Base of the field wire types used in ``Annotated[...]`` field annotations."""

    def check(self, value: Any, where: str) -> Any:
        """Validate ``value`` for a constructor; return it normalised. Raise ValueError."""
        raise NotImplementedError

    def encode(self, value: Any) -> bytes:
        """Bytes of an already checked ``value``."""
        raise NotImplementedError

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        """Read a value at ``pos``; return it and the new position. Raise ProtocolError."""
        raise NotImplementedError

    def describe(self) -> str:
        """Canonical text for the schema hash and the docs."""
        raise NotImplementedError


def _need(buf: bytes, pos: int, n: int) -> None:
    if pos + n > len(buf):
        raise ProtocolError(f"payload truncated: need {n} bytes at offset {pos}, have {len(buf)}")


class Int(WireType):
    """Fixed-size little-endian integer with an inclusive range and optional extra values."""

    def __init__(
        self, size: int, signed: bool, lo: int, hi: int, extra: tuple[int, ...] = ()
    ) -> None:
        self.size, self.signed, self.lo, self.hi, self.extra = size, signed, lo, hi, extra

    def _ok(self, value: int) -> bool:
        return self.lo <= value <= self.hi or value in self.extra

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{where} must be an int, got {type(value).__name__}")
        if not self._ok(value):
            raise ValueError(f"{where} must be in {self._range()}, got {value}")
        return int(value)

    def encode(self, value: Any) -> bytes:
        return int(value).to_bytes(self.size, "little", signed=self.signed)

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, self.size)
        value = int.from_bytes(buf[pos : pos + self.size], "little", signed=self.signed)
        if not self._ok(value):
            raise ProtocolError(f"value {value} at offset {pos} outside {self._range()}")
        return value, pos + self.size

    def _range(self) -> str:
        extra = "".join(f",{x:#x}" for x in self.extra)
        return f"[{self.lo}..{self.hi}{extra}]"

    def describe(self) -> str:
        return f"{'i' if self.signed else 'u'}{self.size * 8}{self._range()}"


def U8(lo: int = 0, hi: int = 0xFF, extra: tuple[int, ...] = ()) -> Int:  # noqa: N802
    """Unsigned byte in ``lo..hi`` (plus ``extra`` values)."""
    return Int(1, False, lo, hi, extra)


def U16(lo: int = 0, hi: int = 0xFFFF) -> Int:  # noqa: N802
    """Unsigned 16-bit little-endian integer."""
    return Int(2, False, lo, hi)


def U32(lo: int = 0, hi: int = 0xFFFFFFFF) -> Int:  # noqa: N802
    """Unsigned 32-bit little-endian integer."""
    return Int(4, False, lo, hi)


def I32() -> Int:  # noqa: N802
    """Signed 32-bit little-endian integer (two's complement)."""
    return Int(4, True, -(2**31), 2**31 - 1)


class Bool(WireType):
    """One byte, 0 or 1."""

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be a bool, got {type(value).__name__}")
        return value

    def encode(self, value: Any) -> bytes:
        return b"\x01" if value else b"\x00"

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 1)
        if buf[pos] > 1:
            raise ProtocolError(f"bool at offset {pos} is {buf[pos]}, must be 0 or 1")
        return buf[pos] == 1, pos + 1

    def describe(self) -> str:
        return "bool"


class Enum8(WireType):
    """One byte holding a member of an ``IntEnum``."""

    def __init__(self, cls: type[enum.IntEnum]) -> None:
        self.cls = cls

    def check(self, value: Any, where: str) -> Any:
        if type(value) is self.cls:
            return value  # already a member: calling the enum again costs a microsecond
        try:
            return self.cls(value)
        except ValueError:
            raise ValueError(f"{where} must be a {self.cls.__name__}, got {value!r}") from None

    def encode(self, value: Any) -> bytes:
        return bytes((int(value),))

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 1)
        try:
            return self.cls(buf[pos]), pos + 1
        except ValueError:
            raise ProtocolError(f"{buf[pos]} is not a {self.cls.__name__}") from None

    def describe(self) -> str:
        return f"u8:{self.cls.__name__}"


class Flags16(WireType):
    """Two bytes holding an ``IntFlag``; unknown bits are kept on decode (newer peers)."""

    def __init__(self, cls: type[enum.IntFlag]) -> None:
        self.cls = cls

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, int) or not 0 <= int(value) <= 0xFFFF:
            raise ValueError(f"{where} must be a {self.cls.__name__}, got {value!r}")
        return self.cls(value)

    def encode(self, value: Any) -> bytes:
        return int(value).to_bytes(2, "little")

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 2)
        return self.cls(int.from_bytes(buf[pos : pos + 2], "little")), pos + 2

    def describe(self) -> str:
        return f"u16:{self.cls.__name__}"


class Tile(WireType):
    """A tile id 0..135; with ``optional`` the byte 0xFF means unknown (``None``)."""

    def __init__(self, optional: bool = False) -> None:
        self.optional = optional

    def check(self, value: Any, where: str) -> Any:
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TILE_MAX:
            allowed = "0..135 or None" if self.optional else "0..135"
            raise ValueError(f"{where} must be a tile id {allowed}, got {value!r}")
        return value

    def encode(self, value: Any) -> bytes:
        return bytes((TILE_UNKNOWN if value is None else value,))

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 1)
        b = buf[pos]
        if b == TILE_UNKNOWN and self.optional:
            return None, pos + 1
        if b > TILE_MAX:
            raise ProtocolError(f"tile id {b} at offset {pos} is not 0..135")
        return b, pos + 1

    def describe(self) -> str:
        return "tile?" if self.optional else "tile"


class OptU16(WireType):
    """Unsigned 16-bit value 0..65534, or ``None`` sent as 0xFFFF."""

    def check(self, value: Any, where: str) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 0xFFFF:
            raise ValueError(f"{where} must be 0..65534 or None, got {value!r}")
        return value

    def encode(self, value: Any) -> bytes:
        return int(0xFFFF if value is None else value).to_bytes(2, "little")

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 2)
        v = int.from_bytes(buf[pos : pos + 2], "little")
        return (None if v == 0xFFFF else v), pos + 2

    def describe(self) -> str:
        return "u16?"


class Text(WireType):
    """UTF-8 text: a u8 byte count then the bytes; at most ``max_chars`` code points and
    ``max_bytes`` encoded bytes. No NUL characters (C firmware may keep NUL-terminated copies).
    """

    def __init__(self, max_chars: int, max_bytes: int) -> None:
        self.max_chars, self.max_bytes = max_chars, max_bytes

    def check(self, value: Any, where: str) -> Any:
        if not isinstance(value, str):
            raise TypeError(f"{where} must be a str, got {type(value).__name__}")
        if "\x00" in value:
            raise ValueError(f"{where} must not contain NUL")
        if len(value) > self.max_chars or len(value.encode()) > self.max_bytes:
            raise ValueError(
                f"{where} is {len(value)} characters / {len(value.encode())} UTF-8 bytes, "
                f"at most {self.max_chars} / {self.max_bytes}"
            )
        return value

    def encode(self, value: Any) -> bytes:
        raw = str(value).encode()
        return bytes((len(raw),)) + raw

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 1)
        n = buf[pos]
        if n > self.max_bytes:
            raise ProtocolError(f"text of {n} bytes exceeds {self.max_bytes}")
        _need(buf, pos + 1, n)
        try:
            text = buf[pos + 1 : pos + 1 + n].decode()
        except UnicodeDecodeError as exc:
            raise ProtocolError(f"text at offset {pos} is not UTF-8: {exc}") from None
        if len(text) > self.max_chars or "\x00" in text:
            raise ProtocolError(f"text at offset {pos} breaks the {self.describe()} limits")
        return text, pos + 1 + n

    def describe(self) -> str:
        return f"text[{self.max_chars}c,{self.max_bytes}b]"


class ListOf(WireType):
    """A u8 count then that many items; a tuple in Python. ``exact`` fixes nothing, it only
    bounds the count to ``min_len..max_len``."""

    def __init__(self, item: WireType, max_len: int, min_len: int = 0) -> None:
        self.item, self.max_len, self.min_len = item, max_len, min_len

    def check(self, value: Any, where: str) -> Any:
        if isinstance(value, str | bytes) or not isinstance(value, tuple | list):
            raise TypeError(f"{where} must be a tuple, got {type(value).__name__}")
        if not self.min_len <= len(value) <= self.max_len:
            raise ValueError(
                f"{where} has {len(value)} items, must have {self.min_len}..{self.max_len}"
            )
        return tuple(self.item.check(v, f"{where}[{i}]") for i, v in enumerate(value))

    def encode(self, value: Any) -> bytes:
        return bytes((len(value),)) + b"".join(self.item.encode(v) for v in value)

    def decode(self, buf: bytes, pos: int) -> tuple[Any, int]:
        _need(buf, pos, 1)
        n = buf[pos]
        if not self.min_len <= n <= self.max_len:
            raise ProtocolError(f"list of {n} items, must have {self.min_len}..{self.max_len}")
        pos += 1
        items = []
        for _ in range(n):
            v, pos = self.item.decode(buf, pos)
            items.append(v)
        return tuple(items), pos

    def describe(self) -> str:
        return f"list[{self.min_len}..{self.max_len}]<{self.item.describe()}>"


# --------------------------------------------------------------------------------------------
# Message base and registry


class Message:
    """Base of every wire message. Subclasses are frozen dataclasses registered by type."""

    __slots__ = ()
    MSG_TYPE: ClassVar[int]
    DIRECTION: ClassVar[Direction]
    FIELDS: ClassVar[tuple[tuple[str, WireType], ...]] = ()

    def __post_init__(self) -> None:
        name = type(self).__name__
        for field, wire in self.FIELDS:
            value = wire.check(getattr(self, field), f"{name}.{field}")
            object.__setattr__(self, field, value)

    def to_bytes(self) -> bytes:
        """The payload bytes of this message (without frame header and CRC)."""
        return b"".join(wire.encode(getattr(self, field)) for field, wire in self.FIELDS)

    @classmethod
    def from_bytes(cls, payload: bytes) -> typing.Self:
        """Decode a payload; raises :class:`ProtocolError` if it does not fit the schema.
        Trailing bytes after the known fields are ignored (minor-version additions)."""
        pos = 0
        # Each wire type's decode checks and normalises exactly as its check does, so the
        # message is built without running the checks a second time (every frame in).
        message = object.__new__(cls)
        for field, wire in cls.FIELDS:
            value, pos = wire.decode(payload, pos)
            object.__setattr__(message, field, value)
        return message

    @classmethod
    def describe(cls) -> str:
        """Canonical one-line description used in :data:`SCHEMA`."""
        fields = " ".join(f"{f}:{w.describe()}" for f, w in cls.FIELDS)
        return f"{cls.MSG_TYPE:#04x} {cls.__name__} {cls.DIRECTION.value}: {fields}".rstrip()


#: Every message class by its type byte.
MESSAGES: dict[int, type[Message]] = {}

M = TypeVar("M", bound=type[Message])


def _message(msg_type: int, direction: Direction) -> Callable[[M], M]:
    ranges = {
        Direction.LINK: range(0x00, 0x10),
        Direction.COMMAND: range(0x10, 0x80),
        Direction.EVENT: range(0x80, 0x100),
    }

    def register(cls: M) -> M:
        if msg_type not in ranges[direction]:
            raise ValueError(f"{cls.__name__}: type {msg_type:#04x} outside {direction} range")
        if msg_type in MESSAGES:
            raise ValueError(f"{cls.__name__}: type {msg_type:#04x} already used")
        # Each field's own annotation is evaluated, not the class's whole MRO (which
        # typing.get_type_hints does, at a third of this module's import time).
        namespace = sys.modules[cls.__module__].__dict__
        fields = []
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            hint = eval(f.type, namespace) if isinstance(f.type, str) else f.type  # noqa: S307
            meta = getattr(hint, "__metadata__", ())
            wires = [m for m in meta if isinstance(m, WireType)]
            if len(wires) != 1:
                raise TypeError(f"{cls.__name__}.{f.name} needs one Annotated wire type")
            fields.append((f.name, wires[0]))
        cls.MSG_TYPE = msg_type
        cls.DIRECTION = direction
        cls.FIELDS = tuple(fields)
        MESSAGES[msg_type] = cls
        return cls

    return register


def decode_message(msg_type: int, payload: bytes) -> Message:
    """Decode a payload by its type byte. Raises :class:`ProtocolError` for an unknown type or
    a payload that does not fit the schema."""
    cls = MESSAGES.get(msg_type)
    if cls is None:
        raise ProtocolError(f"unknown message type {msg_type:#04x}")
    return cls.from_bytes(payload)


_SEAT = U8(0, 3)
_SEAT_TEXT = Text(20, 60)

# --------------------------------------------------------------------------------------------
# Link messages


@_message(0x00, Direction.LINK)
@dataclasses.dataclass(frozen=True, slots=True)
class Ack(Message):
    """Ack-only frame: nothing to say but the frame's ``ack`` field."""


@_message(0x01, Direction.LINK)
@dataclasses.dataclass(frozen=True, slots=True)
class Hello(Message):
    """Host opens a session. The first two payload bytes stay the protocol version forever."""

    protocol_major: Annotated[int, U8()]
    protocol_minor: Annotated[int, U8()]
    schema_hash: Annotated[int, U32()]
    #: Random non-zero id of this session; the table echoes it in replies and heartbeats.
    session: Annotated[int, U16(1, 0xFFFF)]
    #: Boot id of the table the host talked to before (0: none); if it equals the table's
    #: current boot id, ``rx_next`` acknowledges the events received before the drop.
    resume_boot_id: Annotated[int, U32()]
    #: The next event seq the host expects (only meaningful when resuming).
    rx_next: Annotated[int, U8()]
    host_version: Annotated[str, Text(16, 16)]


@_message(0x02, Direction.LINK)
@dataclasses.dataclass(frozen=True, slots=True)
class HelloReply(Message):
    """Table answers a hello. The first two payload bytes stay the protocol version forever."""

    protocol_major: Annotated[int, U8()]
    protocol_minor: Annotated[int, U8()]
    status: Annotated[HelloStatus, Enum8(HelloStatus)]
    schema_hash: Annotated[int, U32()]
    session: Annotated[int, U16()]
    #: Random non-zero id chosen at power-up; a new value means the table rebooted.
    boot_id: Annotated[int, U32(1, 0xFFFFFFFF)]
    #: Seq of the first event the table will (re)send in this session.
    next_seq: Annotated[int, U8()]
    firmware_version: Annotated[str, Text(16, 16)]
    seats: Annotated[int, U8(3, 4)]
    capabilities: Annotated[Capability, Flags16(Capability)]


@_message(0x03, Direction.LINK)
@dataclasses.dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sent by both sides every HEARTBEAT_INTERVAL; carries the current session (0: none)."""

    session: Annotated[int, U16()]
    uptime_ms: Annotated[int, U32()]


# --------------------------------------------------------------------------------------------
# Commands: host -> table


@_message(0x10, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class WallCommand(Message):
    """Drive the wall motors of one wall (0..3) or of all walls (``ALL_WALLS``)."""

    action: Annotated[WallAction, Enum8(WallAction)]
    wall: Annotated[int, U8(0, 3, extra=(ALL_WALLS,))] = ALL_WALLS


@_message(0x11, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class DiceRoll(Message):
    """Spin the electronic dice; the table answers with :class:`DiceResult`."""


@_message(0x12, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class SeatDisplay(Message):
    """Two lines of UTF-8 text on one seat's console (each <= 20 characters, <= 60 bytes)."""

    seat: Annotated[int, _SEAT]
    line1: Annotated[str, _SEAT_TEXT] = ""
    line2: Annotated[str, _SEAT_TEXT] = ""


@_message(0x13, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class SeatLamps(Message):
    """The dealer and riichi lamps of one seat."""

    seat: Annotated[int, _SEAT]
    dealer: Annotated[bool, Bool()] = False
    riichi: Annotated[bool, Bool()] = False


@_message(0x14, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class CentreDisplay(Message):
    """Everything the centre display shows."""

    round_wind: Annotated[Wind, Enum8(Wind)]
    round_number: Annotated[int, U8(1, 4)]
    honba: Annotated[int, U8()]
    #: Riichi deposits (1000-point sticks) waiting on the table.
    deposits: Annotated[int, U8()]
    tiles_left: Annotated[int, U8(0, 136)]
    #: Dora indicator tiles, in the order they were revealed.
    dora: Annotated[tuple[int, ...], ListOf(Tile(), 5)] = ()
    #: Seconds shown on the clock, or None for no clock.
    clock: Annotated[int | None, OptU16()] = None


@_message(0x15, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class BuzzerCommand(Message):
    """Sound the buzzer with ``pattern`` for ``duration_ms`` (0 with OFF stops it)."""

    pattern: Annotated[BuzzerPattern, Enum8(BuzzerPattern)]
    duration_ms: Annotated[int, U16()] = 0


@_message(0x16, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class FaultClear(Message):
    """Acknowledge a latched fault so the table may resume."""

    code: Annotated[FaultCode, Enum8(FaultCode)]


@_message(0x17, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class StatusRequest(Message):
    """Ask for a :class:`TableStatus` event (used after a reconnect to resync)."""


@_message(0x18, Direction.COMMAND)
@dataclasses.dataclass(frozen=True, slots=True)
class TableReset(Message):
    """Stop all motors, walls to IDLE, clear displays, lamps and buzzer."""


# --------------------------------------------------------------------------------------------
# Events: table -> host


@_message(0x80, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class WallStatus(Message):
    """State of one wall. With TILE_COUNT_ERROR the counts say what went wrong."""

    wall: Annotated[int, _SEAT]
    state: Annotated[WallState, Enum8(WallState)]
    tiles_counted: Annotated[int, U8()] = 0
    tiles_expected: Annotated[int, U8()] = 0


@_message(0x81, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class WallTake(Message):
    """A tile left the wall. ``position`` = wall * 34 + stack * 2 + (0 top, 1 bottom);
    ``tile`` is the id read by the tile reader, or None without one."""

    seat: Annotated[int, _SEAT]
    position: Annotated[int, U8(0, TILE_MAX)]
    tile: Annotated[int | None, Tile(optional=True)] = None


@_message(0x82, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class DiceResult(Message):
    """The two dice after a :class:`DiceRoll` (or the dice button)."""

    die1: Annotated[int, U8(1, 6)]
    die2: Annotated[int, U8(1, 6)]


@_message(0x83, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class KeyPress(Message):
    """A key on a seat console was pressed."""

    seat: Annotated[int, _SEAT]
    key: Annotated[Key, Enum8(Key)]


@_message(0x84, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class TrayTotals(Message):
    """Point-stick tray totals per seat (seat order), in points."""

    totals: Annotated[tuple[int, ...], ListOf(I32(), 4, min_len=3)]


@_message(0x85, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class Fault(Message):
    """A fault was raised; it stays latched until :class:`FaultClear`."""

    code: Annotated[FaultCode, Enum8(FaultCode)]
    detail: Annotated[int, U16()] = 0
    text: Annotated[str, Text(40, 80)] = ""


@_message(0x86, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class TableStatus(Message):
    """Answer to :class:`StatusRequest`: every wall's state and the latched faults."""

    walls: Annotated[tuple[WallState, ...], ListOf(Enum8(WallState), 4, min_len=4)]
    faults: Annotated[tuple[FaultCode, ...], ListOf(Enum8(FaultCode), 16)] = ()


@_message(0x87, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class WallLayout(Message):
    """The tiles of one raised wall, read in the lift (capability ``WALL_READER``), sent
    once per wall at every raise, before that wall's ``WallStatus`` DONE.

    ``tiles[i]`` lies at position ``wall * len(tiles) + i`` (docs/wall.md): 34 tiles a
    wall at a four-player table, 36 at a three-player one."""

    wall: Annotated[int, _SEAT]
    tiles: Annotated[tuple[int, ...], ListOf(Tile(), 36, min_len=34)]


@_message(0x88, Direction.EVENT)
@dataclasses.dataclass(frozen=True, slots=True)
class SeatTiles(Message):
    """What the reader under one of a seat's zones sees (capability ``SEAT_READER``): a
    snapshot of the tile ids in that zone, sent whenever it changed and settled, and
    after a ``TableStatus`` for every zone of every seat.

    Tiles the zone held before keep their place and newly seen ones are appended, so the
    discard zone lists the discards in the order they were made (docs/protocol.md, "The
    seat readers"). Sent only in a session whose Hello has ``protocol_minor >= 3``."""

    seat: Annotated[int, _SEAT]
    zone: Annotated[Zone, Enum8(Zone)]
    tiles: Annotated[tuple[int, ...], ListOf(Tile(), TILE_MAX + 1)] = ()


def _schema_text() -> str:
    lines = [
        f"protocol {PROTOCOL_MAJOR}",
        "ints little-endian",
        "frame v|flags|seq|ack|type|payload|crc16le",
        "signed frame v|flags+0x08|seq|ack|type|payload|link_id|ts48le|hmac_sha256[:6]|crc16le",
    ]
    enums: tuple[type[enum.IntEnum] | type[enum.IntFlag], ...] = (
        HelloStatus, Capability, WallAction, WallState, Wind, Key, BuzzerPattern, FaultCode,
        Zone,
    )  # fmt: skip
    for enum_cls in enums:
        members = ",".join(f"{m.name}={m.value}" for m in enum_cls)
        lines.append(f"enum {enum_cls.__name__}: {members}")
    lines.extend(MESSAGES[t].describe() for t in sorted(MESSAGES))
    return "\n".join(lines) + "\n"


#: Canonical description of the whole schema (enums and message layouts).
SCHEMA = _schema_text()
#: CRC-32 of :data:`SCHEMA`, exchanged in Hello/HelloReply.
SCHEMA_HASH = zlib.crc32(SCHEMA.encode())
