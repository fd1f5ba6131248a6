"""Codec: CRC pin, COBS framing, check_packet semantics, stream decoder resync."""

from __future__ import annotations

import pytest

from firmware_bridge.codec import (
    MAX_BODY,
    MAX_PAYLOAD,
    MAX_WIRE,
    PROTOCOL_MAJOR,
    Flags,
    Frame,
    FrameDecoder,
    check_packet,
    crc16,
    decode_packet,
    encode_frame,
    encode_unsigned,
    resync_length,
)
from firmware_bridge.errors import FrameError


def ref_crc16(data: bytes) -> int:
    """Bit-by-bit CRC-16/CCITT-FALSE, independent of binascii."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def ref_cobs(data: bytes) -> bytes:
    """Textbook COBS encoder, independent of the cobs package."""
    out, block = bytearray(), bytearray()
    for b in data:
        if b == 0:
            out += bytes((len(block) + 1,)) + block
            block.clear()
        else:
            block.append(b)
            if len(block) == 254:
                out += b"\xff" + block
                block.clear()
    out += bytes((len(block) + 1,)) + block
    return bytes(out)


def test_crc_check_value_is_pinned() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert ref_crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff" * 300, bytes(range(256))])
def test_crc_matches_reference(data: bytes) -> None:
    assert crc16(data) == ref_crc16(data)


def test_worked_example_from_protocol_doc() -> None:
    # docs/protocol.md: KeyPress(seat=3, key=TSUMO) as seq 16, acking 3.
    frame = Frame(Flags.RELIABLE | Flags.ACK, seq=0x10, ack=3, msg_type=0x83, payload=b"\x03\x15")
    body = bytes.fromhex("01031003830315")
    assert frame.body() == body
    assert crc16(body) == 0x6D04
    wire = encode_frame(frame)
    assert wire == ref_cobs(body + b"\x04\x6d") + b"\x00"
    assert wire.hex() == "0a01031003830315046d00"


@pytest.mark.parametrize(
    ("flags", "seq", "ack", "msg_type", "payload"),
    [
        (Flags.RELIABLE | Flags.ACK, 0x10, 3, 0x83, b"\x03\x15"),  # the worked example
        (Flags.NONE, 0, 0, 0x00, b""),  # a bare ack before a session
        (Flags.ACK, 0, 255, 0x03, b"\x00\x00\x01\x00\x00\x00"),  # a heartbeat
        (Flags.RELIABLE, 255, 0, 0x12, bytes(range(MAX_PAYLOAD))),  # zeros and a full payload
        (Flags.SYN, 0, 0, 0x01, b"\x00" * 40),
    ],
)
def test_encoding_from_fields_gives_the_frames_bytes(
    flags: Flags, seq: int, ack: int, msg_type: int, payload: bytes
) -> None:
    wire = encode_unsigned(int(flags), seq, ack, msg_type, payload)
    assert wire == encode_frame(Frame(flags, seq, ack, msg_type, payload))
    assert decode_packet(wire) == Frame(flags, seq, ack, msg_type, payload)


@pytest.mark.parametrize(
    ("flags", "payload"), [(Flags.SIGNED, b""), (Flags.NONE, bytes(MAX_PAYLOAD + 1))]
)
def test_encoding_from_fields_refuses_signed_or_oversized_frames(
    flags: Flags, payload: bytes
) -> None:
    with pytest.raises(ValueError, match="unsigned frame"):
        encode_unsigned(int(flags), 0, 0, 0x12, payload)


def test_roundtrip_and_check_packet() -> None:
    frame = Frame(Flags.RELIABLE, seq=255, ack=0, msg_type=0x81, payload=b"\x00\x00\x01")
    wire = encode_frame(frame)
    assert b"\x00" not in wire[:-1] and wire[-1] == 0
    assert decode_packet(wire) == frame
    assert check_packet(wire) == len(wire)
    assert check_packet(wire + b"\x05\x06") == len(wire)
    assert check_packet(wire[:-1]) == 0  # need more
    assert check_packet(b"") == 0


def test_check_packet_resync_cases() -> None:
    good = encode_frame(Frame(Flags.NONE, 0, 0, 0x03, b"\x01\x00\x02\x00\x00\x00"))
    bad = bytearray(good)
    bad[3] ^= 0x40
    assert check_packet(bytes(bad)) == -1
    assert resync_length(bytes(bad) + good) == len(good)
    assert check_packet(b"\x00" + good) == -1  # a lone delimiter: skip it
    assert resync_length(b"\x00" + good) == 1
    assert check_packet(b"\x01" * MAX_WIRE) == -1  # no delimiter within a maximal frame
    assert resync_length(b"\x01" * 10) == 10


def test_largest_frame_fits_cap() -> None:
    frame = Frame(Flags.RELIABLE, 1, 2, 0x85, bytes(range(1, 256))[:MAX_PAYLOAD])
    wire = encode_frame(frame)
    assert len(wire) <= MAX_WIRE <= 256
    assert decode_packet(wire) == frame
    zeros = Frame(Flags.RELIABLE, 0, 0, 0x00, bytes(MAX_PAYLOAD))
    assert len(encode_frame(zeros)) <= MAX_WIRE
    with pytest.raises(ValueError, match="payload"):
        Frame(Flags.NONE, 0, 0, 0, bytes(MAX_PAYLOAD + 1))


@pytest.mark.parametrize(
    ("packet", "kind"),
    [
        (b"\x00", "empty"),
        (b"\x05\x01\x00", "cobs"),  # length code beyond the data
        (ref_cobs(b"\x01\x02\x03") + b"\x00", "length"),
        (ref_cobs(b"\x01" * (MAX_BODY + 1)) + b"\x00", "length"),
        (ref_cobs(b"\x01\x00\x00\x00\x03\x00\x00") + b"\x00", "crc"),
    ],
)
def test_decode_packet_errors(packet: bytes, kind: str) -> None:
    with pytest.raises(FrameError) as info:
        decode_packet(packet)
    assert info.value.kind == kind


def test_frame_field_validation() -> None:
    with pytest.raises(ValueError, match="seq"):
        Frame(Flags.NONE, 256, 0, 0)
    assert Frame(Flags.NONE, 0, 0, 0).version == PROTOCOL_MAJOR


def _frames(n: int) -> list[Frame]:
    return [Frame(Flags.RELIABLE | Flags.ACK, i % 256, (i * 7) % 256, 0x83, bytes((i % 4, 0x14)))
            for i in range(n)]  # fmt: skip


def test_decoder_byte_at_a_time_and_chunks() -> None:
    frames = _frames(50)
    stream = b"".join(encode_frame(f) for f in frames)
    dec = FrameDecoder()
    got = [f for b in stream for f in dec.feed(bytes((b,)))]
    assert got == frames
    dec2 = FrameDecoder()
    got2 = []
    for i in range(0, len(stream), 37):
        got2 += dec2.feed(stream[i : i + 37])
    assert got2 == frames
    assert dec2.pending == 0 and dec2.stats.frames == 50


def test_decoder_resyncs_after_noise_and_corruption() -> None:
    frames = _frames(3)
    wires = [encode_frame(f) for f in frames]
    corrupt = bytearray(wires[1])
    corrupt[2] ^= 0x01
    stream = b"\x13\x37garbage\x00" + wires[0] + bytes(corrupt) + b"\x00\x00" + wires[2]
    dec = FrameDecoder()
    assert dec.feed(stream) == [frames[0], frames[2]]
    # The leading garbage and the corrupted frame (CRC or COBS, depending on the bit).
    assert dec.stats.crc_errors + dec.stats.framing_errors == 2
    # Noise glued to the front of a frame costs that frame only (why senders lead with 0x00).
    dec = FrameDecoder()
    assert dec.feed(b"noise" + wires[0] + wires[1]) == [frames[1]]


def test_decoder_drops_overlong_noise_without_growing() -> None:
    dec = FrameDecoder()
    for _ in range(10):
        assert dec.feed(b"\x01" * 200) == []
        assert dec.pending < MAX_WIRE
    good = encode_frame(_frames(1)[0])
    assert dec.feed(b"\x00" + good) == _frames(1)
