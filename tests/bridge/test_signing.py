"""Frame signing: the signed wire format (golden vector), the MAVLink timestamp rules of
:class:`Signer`, and reading keys from configuration and URLs."""

from __future__ import annotations

import calendar
import hashlib
import hmac

import cobs.cobs as cobs
import pytest

from firmware_bridge.codec import (
    MAX_PAYLOAD,
    MAX_SIGNED_PAYLOAD,
    SIGNATURE_LEN,
    Flags,
    Frame,
    Signature,
    crc16,
    decode_packet,
    encode_frame,
)
from firmware_bridge.errors import FrameError
from firmware_bridge.messages import MESSAGES, Flags16, Int, ListOf, OptU16, Text, WireType
from firmware_bridge.signing import (
    DEVICE_LINK_ID,
    HOST_LINK_ID,
    NEW_STREAM_WINDOW,
    TICKS_PER_SECOND,
    Signer,
    Verdict,
    check_key,
    parse_key,
    sign_frame,
    split_signing_key,
    timestamp_at,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
#: 2026-01-01 00:00:00 UTC in 10 us units since 2015-01-01 UTC.
TS_2026 = 34_715_520_000_000
#: docs/protocol.md's worked example, KeyPress(seat=3, key=TSUMO) as reliable seq 16
#: acking 3, signed by the table (link id 1) with KEY at TS_2026.
SIGNED_EXAMPLE = Frame(Flags.RELIABLE | Flags.ACK, 0x10, 3, 0x83, b"\x03\x15")


def test_timestamp_epoch_is_mavlinks() -> None:
    assert timestamp_at(calendar.timegm((2015, 1, 1, 0, 0, 0))) == 0
    assert timestamp_at(calendar.timegm((2026, 1, 1, 0, 0, 0))) == TS_2026
    assert timestamp_at(0) == 0  # before the epoch: clamped, never negative


def test_golden_signed_frame() -> None:
    frame = sign_frame(SIGNED_EXAMPLE, KEY, DEVICE_LINK_ID, TS_2026)
    body = bytes.fromhex(
        "010b100383 0315"  # version 1, flags RELIABLE|ACK|SIGNED, seq 16, ack 3, type, payload
        "01 00e03cd6921f"  # link id 1, timestamp u48 little-endian
        "10c062d0c6c3"  # HMAC-SHA256(KEY, header payload link_id timestamp)[:6]
    )
    assert frame.body() == body
    assert crc16(body) == 0x7F96
    wire = encode_frame(frame)
    assert wire.hex() == "09010b1003830315010ee03cd6921f10c062d0c6c3967f00"
    assert decode_packet(wire) == frame
    # The MAC, computed here from scratch with the standard library.
    covered = bytes.fromhex("010b1003830315") + b"\x01" + TS_2026.to_bytes(6, "little")
    assert frame.signature is not None
    assert frame.signature.mac == hmac.new(KEY, covered, hashlib.sha256).digest()[:6]


def test_a_signed_frame_reads_as_trailing_payload_to_a_peer_without_signing() -> None:
    # A decoder that knows no SIGNED flag passes the CRC and finds 13 bytes after the
    # payload, which it ignores: what lets a signed hello reach old firmware and get an
    # unsigned answer (a clear refusal) instead of silence.
    wire = encode_frame(sign_frame(SIGNED_EXAMPLE, KEY, DEVICE_LINK_ID, TS_2026))
    body = bytes(cobs.decode(wire[:-1]))
    assert crc16(body[:-2]) == int.from_bytes(body[-2:], "little")
    assert body[5:7] == b"\x03\x15" and len(body[7:-2]) == SIGNATURE_LEN


def test_signed_frame_validation() -> None:
    sig = Signature(HOST_LINK_ID, 1, bytes(6))
    with pytest.raises(ValueError, match="SIGNED exactly when"):
        Frame(Flags.SIGNED, 0, 0, 0)
    with pytest.raises(ValueError, match="SIGNED exactly when"):
        Frame(Flags.NONE, 0, 0, 0, signature=sig)
    with pytest.raises(ValueError, match=f"at most {MAX_SIGNED_PAYLOAD}"):
        Frame(Flags.SIGNED, 0, 0, 0, bytes(MAX_SIGNED_PAYLOAD + 1), signature=sig)
    with pytest.raises(ValueError, match="timestamp"):
        Signature(0, 2**48, bytes(6))
    with pytest.raises(ValueError, match="mac"):
        Signature(0, 0, bytes(5))
    largest = Frame(Flags.SIGNED, 0, 0, 0, bytes(MAX_SIGNED_PAYLOAD), signature=sig)
    assert decode_packet(encode_frame(largest)) == largest


def test_a_signed_flag_without_room_for_a_signature_is_a_length_error() -> None:
    body = bytes((1, Flags.SIGNED, 0, 0, 0x03)) + bytes(SIGNATURE_LEN - 1)
    packet = bytes(cobs.encode(body + crc16(body).to_bytes(2, "little"))) + b"\x00"
    with pytest.raises(FrameError, match="signature") as info:
        decode_packet(packet)
    assert info.value.kind == "length"


def _max_size(wire: WireType) -> int:
    if isinstance(wire, Text):
        return 1 + wire.max_bytes
    if isinstance(wire, ListOf):
        return 1 + wire.max_len * _max_size(wire.item)
    if isinstance(wire, Int):
        return wire.size
    if isinstance(wire, Flags16 | OptU16):
        return 2
    return 1  # Bool, Enum8, Tile


def test_every_message_fits_a_signed_frame() -> None:
    largest = max(sum(_max_size(w) for _, w in cls.FIELDS) for cls in MESSAGES.values())
    assert largest <= MAX_SIGNED_PAYLOAD < MAX_PAYLOAD


class Clock:
    """A settable clock (Unix seconds)."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


T0 = calendar.timegm((2026, 1, 1, 0, 0, 0))


def test_timestamps_increase_by_at_least_one_per_frame() -> None:
    clock = Clock(T0)
    signer = Signer(KEY, HOST_LINK_ID, clock=clock)
    stamps = [signer.next_timestamp() for _ in range(3)]
    assert stamps == [TS_2026, TS_2026 + 1, TS_2026 + 2]  # faster than the clock: runs ahead
    clock.t -= 3600  # the clock steps back an hour: the timestamp does not
    assert signer.next_timestamp() == TS_2026 + 3
    clock.t = T0 + 1
    assert signer.next_timestamp() == TS_2026 + TICKS_PER_SECOND


def _pair(clock: Clock) -> tuple[Signer, Signer]:
    return Signer(KEY, HOST_LINK_ID, clock=clock), Signer(KEY, DEVICE_LINK_ID, clock=clock)


def test_verify_accepts_once_and_refuses_replays_forgeries_and_reflections() -> None:
    host, device = _pair(Clock(T0))
    frame = device.sign(SIGNED_EXAMPLE)
    assert host.verify(frame) is Verdict.OK
    assert host.verify(frame) is Verdict.REPLAY  # the same timestamp again
    assert host.verify(SIGNED_EXAMPLE) is Verdict.UNSIGNED
    forged = Frame(frame.flags, frame.seq, frame.ack, frame.msg_type, b"\x03\x14",
                   signature=frame.signature)  # fmt: skip
    assert host.verify(forged) is Verdict.BAD_SIGNATURE
    assert host.verify(sign_frame(SIGNED_EXAMPLE, OTHER_KEY, DEVICE_LINK_ID, TS_2026 + 9)) is (
        Verdict.BAD_SIGNATURE
    )
    # One of the host's own frames sent back at it: genuine, yet never accepted.
    assert host.verify(host.sign(SIGNED_EXAMPLE)) is Verdict.REPLAY
    assert host.verify(device.sign(SIGNED_EXAMPLE)) is Verdict.OK  # the next genuine one


def test_an_older_frame_of_the_same_link_id_is_a_replay() -> None:
    host, device = _pair(Clock(T0))
    first, second = device.sign(SIGNED_EXAMPLE), device.sign(SIGNED_EXAMPLE)
    assert host.verify(second) is Verdict.OK
    assert host.verify(first) is Verdict.REPLAY


def test_a_new_link_id_may_be_at_most_a_minute_behind() -> None:
    clock = Clock(T0)
    host = Signer(KEY, HOST_LINK_ID, clock=clock)
    old = sign_frame(SIGNED_EXAMPLE, KEY, DEVICE_LINK_ID, TS_2026 - NEW_STREAM_WINDOW - 1)
    assert host.verify(old) is Verdict.REPLAY
    recent = sign_frame(SIGNED_EXAMPLE, KEY, DEVICE_LINK_ID, TS_2026 - NEW_STREAM_WINDOW + 1)
    assert host.verify(recent) is Verdict.OK


def test_an_accepted_timestamp_ahead_of_ours_becomes_ours() -> None:
    # A table without a real-time clock learns the time from the host this way.
    device = Signer(KEY, DEVICE_LINK_ID, clock=Clock(T0 - 10**6))
    ahead = sign_frame(SIGNED_EXAMPLE, KEY, HOST_LINK_ID, TS_2026)
    assert device.verify(ahead) is Verdict.OK
    assert device.next_timestamp() == TS_2026 + 1


def test_keys_from_configuration() -> None:
    text = KEY.hex()
    assert parse_key(text) == KEY
    assert parse_key(f"  {text.upper()}\n") == KEY
    with pytest.raises(ValueError, match=r"64 hex digits \(32 bytes\), got 10 characters"):
        parse_key("0123456789")
    with pytest.raises(ValueError, match="character 3 is not one") as info:
        parse_key("00g" + "0" * 61)
    assert "00g" not in str(info.value)  # a key is a secret: errors never echo it
    with pytest.raises(ValueError, match="32 bytes, got 16"):
        check_key(bytes(16))
    with pytest.raises(TypeError, match="not a str"):
        check_key(text)


@pytest.mark.parametrize(
    ("url", "rest"),
    [
        ("socket://bridge.local:7711?signing_key={k}", "socket://bridge.local:7711"),
        ("/dev/ttyUSB0?baud=57600&signing_key={k}", "/dev/ttyUSB0?baud=57600"),
        ("sim://t1?signing_key={k}", "sim://t1"),
        ("usb://1209:7a11?signing_key={k}&backend=loopback", "usb://1209:7a11?backend=loopback"),
    ],
)
def test_the_key_is_taken_out_of_the_url(url: str, rest: str) -> None:
    assert split_signing_key(url.format(k=KEY.hex())) == (rest, KEY)


def test_urls_without_a_key_are_left_alone_and_bad_keys_are_named() -> None:
    assert split_signing_key("socket://h:1?x=1") == ("socket://h:1?x=1", None)
    with pytest.raises(ValueError, match="signing_key in the transport URL: a signing key is 64"):
        split_signing_key("socket://h:1?signing_key=abc")
    with pytest.raises(ValueError, match="given 2 times"):
        split_signing_key(f"socket://h:1?signing_key={KEY.hex()}&signing_key={KEY.hex()}")
