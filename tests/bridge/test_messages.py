"""Schema: golden byte vectors for every message, validation, schema hash."""

from __future__ import annotations

import dataclasses

import pytest

from firmware_bridge.codec import Flags, Frame, decode_packet, encode_frame
from firmware_bridge.errors import ProtocolError
from firmware_bridge.messages import (
    ALL_WALLS,
    MESSAGES,
    SCHEMA,
    SCHEMA_HASH,
    Ack,
    BuzzerCommand,
    BuzzerPattern,
    Capability,
    CentreDisplay,
    DiceResult,
    DiceRoll,
    Direction,
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
    decode_message,
    seat_reader_detail,
)

SAMPLES: dict[str, Message] = {
    "Ack": Ack(),
    "Hello": Hello(protocol_major=1, protocol_minor=0, schema_hash=0x12345678, session=0xBEEF,
                   resume_boot_id=0, rx_next=0, host_version="tablectl 0.1"),
    "HelloReply": HelloReply(
        protocol_major=1, protocol_minor=0, status=HelloStatus.OK, schema_hash=0x12345678,
        session=0xBEEF, boot_id=0xDEADBEEF, next_seq=7, firmware_version="fw 2.3.1", seats=4,
        capabilities=Capability.SEAT_CONSOLES | Capability.DICE | Capability.TILE_READER,
    ),
    "Heartbeat": Heartbeat(session=0xBEEF, uptime_ms=123456),
    "WallCommand": WallCommand(WallAction.SHUFFLE),
    "DiceRoll": DiceRoll(),
    "SeatDisplay": SeatDisplay(seat=2, line1="East 25000", line2="リーチ"),
    "SeatLamps": SeatLamps(seat=1, dealer=True, riichi=False),
    "CentreDisplay": CentreDisplay(round_wind=Wind.SOUTH, round_number=3, honba=2, deposits=1,
                                   tiles_left=69, dora=(4, 130), clock=90),
    "BuzzerCommand": BuzzerCommand(BuzzerPattern.DOUBLE_BEEP, 300),
    "FaultClear": FaultClear(FaultCode.TILE_COUNT),
    "StatusRequest": StatusRequest(),
    "TableReset": TableReset(),
    "WallStatus": WallStatus(wall=3, state=WallState.TILE_COUNT_ERROR, tiles_counted=33,
                             tiles_expected=34),
    "WallTake": WallTake(seat=0, position=135, tile=None),
    "DiceResult": DiceResult(5, 6),
    "KeyPress": KeyPress(seat=3, key=Key.TSUMO),
    "TrayTotals": TrayTotals((25000, 31000, -1200, 45200)),
    "Fault": Fault(FaultCode.MOTOR_STALL, 2, "wall 2 lift"),
    "TableStatus": TableStatus(walls=(WallState.DONE,) * 4, faults=(FaultCode.LID_OPEN,)),
    "WallLayout": WallLayout(wall=1, tiles=tuple(range(34))),
    "SeatTiles": SeatTiles(seat=2, zone=Zone.DISCARDS, tiles=(16, 52, 135, 0, 88)),
}  # fmt: skip

# name: (payload hex, whole frame hex). The frame for sample i uses seq=i and ack=3 when the
# flags carry them (see _frame_for). Hand-check one in docs/protocol.md; never regenerate
# these to make a test pass: a change here is a protocol change (bump the version).
GOLDEN: dict[str, tuple[str, str]] = {
    "Ack": ("", "030102020303660300"),
    "Hello": (
        "010078563412efbe00000000000c7461626c6563746c20302e31",
        "030104010301010778563412efbe01010101100c7461626c6563746c20302e31bd3500",
    ),
    "HelloReply": (
        "01000078563412efbeefbeadde0708667720322e332e31040d00",
        "03010401030201011778563412efbeefbeadde0708667720322e332e31040d03318800",
    ),
    "Heartbeat": ("efbe40e20100", "030102080303efbe40e201036afe00"),
    "WallCommand": ("01ff", "0a010304031001ff37fb00"),
    "DiceRoll": ("", "080103050311329c00"),
    "SeatDisplay": (
        "020a4561737420323530303009e383aae383bce38381",
        "1e0103060312020a4561737420323530303009e383aae383bce38381571900",
    ),
    "SeatLamps": ("010100", "080103070313010103860c00"),
    "CentreDisplay": ("01030201450204825a00", "0f010308031401030201450204825a03c80100"),
    "BuzzerCommand": ("022c01", "0b0103090315022c01779200"),
    "FaultClear": ("02", "0901030a0316020e1d00"),
    "StatusRequest": ("", "0801030b0317f5e700"),
    "TableReset": ("", "0801030c03188a9300"),
    "WallStatus": ("03052122", "0c01030d038003052122c57c00"),
    "WallTake": ("0087ff", "0601030e03810587ff6df700"),
    "DiceResult": ("0506", "0a01030f0382050663b300"),
    "KeyPress": ("0315", "0a01031003830315046d00"),
    "TrayTotals": (
        "04a86100001879000050fbffff90b00000",
        "09010311038404a86101031879010750fbffff90b0010388d600",
    ),
    "Fault": ("0102000b77616c6c2032206c696674", "08010312038501020f0b77616c6c2032206c69667453cd00"),
    "TableStatus": ("04040404040107", "0f010313038604040404040107a79100"),
    "WallLayout": (
        "0122000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021",
        "0801031403870122240102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20213fe600",
    ),
    "SeatTiles": ("0202051034870058", "0c0103150388020205103487045870b800"),
}  # fmt: skip

#: Pinned: the schema text changed if this fails. Bump PROTOCOL_MINOR (additions) or
#: PROTOCOL_MAJOR (incompatible change), update docs/protocol.md, then the pin.
PINNED_SCHEMA_HASH = 0x8E81F2C3


def _frame_for(index: int, msg: Message) -> Frame:
    if isinstance(msg, Hello | HelloReply):
        return Frame(Flags.SYN, 0, 0, msg.MSG_TYPE, msg.to_bytes())
    if msg.DIRECTION is Direction.LINK:
        return Frame(Flags.ACK, 0, 3, msg.MSG_TYPE, msg.to_bytes())
    return Frame(Flags.RELIABLE | Flags.ACK, index, 3, msg.MSG_TYPE, msg.to_bytes())


def test_every_message_has_a_golden_vector() -> None:
    assert {type(m) for m in SAMPLES.values()} == set(MESSAGES.values())
    assert set(GOLDEN) == set(SAMPLES)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_golden_vectors(name: str) -> None:
    index = list(SAMPLES).index(name)
    msg = SAMPLES[name]
    payload_hex, frame_hex = GOLDEN[name]
    assert msg.to_bytes().hex() == payload_hex
    frame = _frame_for(index, msg)
    assert encode_frame(frame).hex() == frame_hex
    decoded = decode_packet(bytes.fromhex(frame_hex))
    assert decoded == frame
    assert decode_message(decoded.msg_type, decoded.payload) == msg


def test_schema_hash_is_pinned() -> None:
    assert SCHEMA_HASH == PINNED_SCHEMA_HASH, SCHEMA


def test_type_ranges_and_directions() -> None:
    for msg_type, cls in MESSAGES.items():
        if msg_type < 0x10:
            assert cls.DIRECTION is Direction.LINK
        elif msg_type < 0x80:
            assert cls.DIRECTION is Direction.COMMAND
        else:
            assert cls.DIRECTION is Direction.EVENT


def test_keys_cover_the_console() -> None:
    names = {k.name for k in Key}
    assert {f"DIGIT_{d}" for d in range(10)} <= names
    assert {"RIICHI", "PON", "CHI", "KAN", "RON", "TSUMO", "TENPAI", "NOTEN", "OK", "CANCEL",
            "MENU", "LAST_GAME", "STAFF_CALL"} <= names  # fmt: skip
    assert all(int(Key[f"DIGIT_{d}"]) == d for d in range(10))


def test_messages_are_frozen_and_hashable() -> None:
    msg = KeyPress(seat=1, key=Key.PON)
    with pytest.raises(AttributeError):
        msg.seat = 2  # type: ignore[misc]
    assert hash(msg) == hash(KeyPress(1, Key.PON))


def test_constructor_normalises_ints_and_lists() -> None:
    msg = KeyPress(seat=0, key=0x14)  # type: ignore[arg-type]
    assert msg.key is Key.RON
    cd = CentreDisplay(Wind.EAST, 1, 0, 0, 70, dora=[5, 6])  # type: ignore[arg-type]
    assert cd.dora == (5, 6)
    assert WallCommand(WallAction.BUILD).wall == ALL_WALLS


@pytest.mark.parametrize(
    "build",
    [
        lambda: KeyPress(seat=4, key=Key.OK),
        lambda: KeyPress(seat=0, key=0x99),  # type: ignore[arg-type]
        lambda: WallCommand(WallAction.RAISE, wall=4),
        lambda: SeatDisplay(0, "x" * 21),
        lambda: SeatDisplay(0, "リ" * 21),
        lambda: SeatDisplay(0, "a\x00b"),
        lambda: WallTake(seat=0, position=136),
        lambda: WallTake(seat=0, position=0, tile=136),
        lambda: DiceResult(0, 7),
        lambda: CentreDisplay(Wind.EAST, 5, 0, 0, 70),
        lambda: CentreDisplay(Wind.EAST, 1, 0, 0, 70, dora=(1,) * 6),
        lambda: CentreDisplay(Wind.EAST, 1, 0, 0, 70, clock=0xFFFF),
        lambda: TrayTotals((1, 2)),
        lambda: TrayTotals((2**31, 0, 0, 0)),
        lambda: SeatLamps(0, dealer=1),  # type: ignore[arg-type]
        lambda: TableStatus(walls=(WallState.IDLE,) * 3),
        lambda: Hello(1, 0, 0, 0, 0, 0, ""),
        lambda: WallLayout(0, tuple(range(33))),
        lambda: WallLayout(0, tuple(range(37))),
        lambda: WallLayout(0, (136,) + tuple(range(33))),
        lambda: WallLayout(4, tuple(range(34))),
        lambda: SeatTiles(4, Zone.HAND, ()),
        lambda: SeatTiles(0, 3, ()),  # type: ignore[arg-type]
        lambda: SeatTiles(0, Zone.HAND, (136,)),
        lambda: SeatTiles(0, Zone.HAND, (None,)),  # type: ignore[arg-type]
        lambda: SeatTiles(0, Zone.HAND, tuple(range(136)) + (0,)),
    ],
)
def test_constructor_rejects_out_of_range(build: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        build()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("msg_type", "payload"),
    [
        (0x7F, b""),  # unknown command
        (0x83, b"\x03"),  # truncated
        (0x83, b"\x04\x15"),  # seat 4
        (0x83, b"\x00\x99"),  # no such key
        (0x12, b"\x00\x03ab"),  # text longer than the payload
        (0x12, b"\x00\x02\xff\xfe\x00"),  # not UTF-8
        (0x13, b"\x00\x02\x00"),  # bool 2
        (0x84, b"\x05" + bytes(20)),  # five seats
        (0x87, b"\x00\x21" + bytes(33)),  # a wall of 33 tiles
        (0x87, b"\x00\x22" + bytes(33) + b"\x88"),  # tile id 136
        (0x87, b"\x00\x22" + bytes(33)),  # truncated
        (0x88, b"\x00\x03\x00"),  # no zone 3
        (0x88, b"\x04\x00\x00"),  # seat 4
        (0x88, b"\x00\x00\x01\xff"),  # an unread tile is not reported, never 0xFF
        (0x88, b"\x00\x02\x03\x01\x02"),  # truncated
        (0x88, b"\x00\x02\x89" + bytes(137)),  # more tiles than a set has
    ],
)
def test_decode_rejects_bad_payloads(msg_type: int, payload: bytes) -> None:
    with pytest.raises(ProtocolError):
        decode_message(msg_type, payload)


def test_trailing_bytes_are_ignored_for_minor_versions() -> None:
    assert decode_message(0x83, b"\x01\x20\xaa\xbb") == KeyPress(1, Key.OK)


def test_wall_layout_of_a_three_player_wall() -> None:
    layout = WallLayout(wall=2, tiles=tuple(range(100, 136)))
    assert len(layout.to_bytes()) == 38
    assert decode_message(0x87, layout.to_bytes()) == layout
    assert Capability.WALL_READER == 0x80


@pytest.mark.parametrize(
    ("tiles", "wire_bytes"),
    [((), 12), (tuple(range(14)), 26), (tuple(range(24)), 36), (tuple(range(136)), 148)],
)
def test_seat_tiles_sizes_on_the_wire(tiles: tuple[int, ...], wire_bytes: int) -> None:
    # docs/protocol.md's frame budget: 12 wire bytes plus one a tile.
    msg = SeatTiles(seat=1, zone=Zone.HAND, tiles=tiles)
    frame = Frame(Flags.RELIABLE | Flags.ACK, 1, 1, msg.MSG_TYPE, msg.to_bytes())
    assert len(encode_frame(frame)) == wire_bytes
    assert decode_message(0x88, msg.to_bytes()) == msg
    assert Capability.SEAT_READER == 0x100 and int(Zone.DISCARDS) == 2


@pytest.mark.parametrize(
    ("seat", "zone", "detail"),
    [(0, Zone.HAND, 0x100), (1, Zone.DISCARDS, 0x112), (3, Zone.MELDS, 0x131)],
)
def test_a_seat_readers_fault_names_seat_and_zone(seat: int, zone: Zone, detail: int) -> None:
    assert seat_reader_detail(seat, zone) == detail


def test_unknown_capability_bits_survive() -> None:
    reply = SAMPLES["HelloReply"]
    raw = bytearray(reply.to_bytes())
    raw[-1] |= 0x80  # a capability from a newer firmware
    decoded = HelloReply.from_bytes(bytes(raw))
    assert int(decoded.capabilities) & 0x8000


def test_decoding_builds_the_same_message_as_the_constructor() -> None:
    # from_bytes sets the decoded fields directly (no second check): that is only right
    # while every dataclass field is a wire field and decode normalises like check.
    for cls in MESSAGES.values():
        assert [f.name for f in dataclasses.fields(cls)] == [name for name, _ in cls.FIELDS]
    for name, message in SAMPLES.items():
        decoded = type(message).from_bytes(message.to_bytes())
        assert decoded == message, name
        rebuilt = type(message)(**{f: getattr(decoded, f) for f, _ in message.FIELDS})
        assert rebuilt == decoded and hash(rebuilt) == hash(decoded), name
