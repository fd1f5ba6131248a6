"""Fuzzing the decoder: random and mutated bytes never raise beyond the documented errors,
and the decoder resynchronises on the next good frame.

A longer run (documented in docs/protocol.md):

    HYPOTHESIS_PROFILE=long .venv/bin/pytest tests/bridge/test_fuzz.py
"""

from __future__ import annotations

import contextlib
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.codec import (
    MAX_PAYLOAD,
    Flags,
    Frame,
    FrameDecoder,
    decode_packet,
    encode_frame,
)
from firmware_bridge.errors import FrameError, ProtocolError
from firmware_bridge.messages import MESSAGES, decode_message

settings.register_profile("default", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
settings.register_profile("long", max_examples=200_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

frames = st.builds(
    Frame,
    flags=st.sampled_from([Flags.NONE, Flags.ACK, Flags.RELIABLE | Flags.ACK, Flags.SYN]),
    seq=st.integers(0, 255),
    ack=st.integers(0, 255),
    msg_type=st.sampled_from(sorted(MESSAGES)) | st.integers(0, 255),
    payload=st.binary(max_size=MAX_PAYLOAD),
)

SENTINEL = Frame(Flags.RELIABLE | Flags.ACK, 42, 7, 0x83, b"\x02\x14")


@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data: bytes) -> None:
    dec = FrameDecoder()
    for frame in dec.feed(data):
        assert isinstance(frame, Frame)
    # Whatever came before, a delimiter plus a good frame comes through.
    assert dec.feed(b"\x00" + encode_frame(SENTINEL))[-1:] == [SENTINEL]


@given(st.binary(max_size=400))
def test_decode_packet_raises_only_frame_error(data: bytes) -> None:
    with contextlib.suppress(FrameError):
        decode_packet(data)


@given(st.integers(0, 255), st.binary(max_size=MAX_PAYLOAD))
def test_decode_message_raises_only_protocol_error(msg_type: int, payload: bytes) -> None:
    try:
        msg = decode_message(msg_type, payload)
    except ProtocolError:
        return
    # Whatever decodes re-encodes to a prefix of the input (trailing bytes are ignored).
    assert payload.startswith(msg.to_bytes())


@given(
    st.lists(frames, min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6),
    st.integers(1, 64),
)
def test_mutated_streams_resync(
    good: list[Frame], mutations: list[tuple[int, int]], chunk: int
) -> None:
    stream = bytearray(b"".join(encode_frame(f) for f in good))
    for pos, value in mutations:
        stream[pos % len(stream)] = value
    stream += b"\x00" + encode_frame(SENTINEL)
    dec = FrameDecoder()
    out: list[Frame] = []
    for i in range(0, len(stream), chunk):
        out += dec.feed(bytes(stream[i : i + chunk]))
    assert out[-1] == SENTINEL
    # Frames that survive are real frames (CRC-16 lets ~1/65536 random corruptions through,
    # which is why the link layer also checks seq and payload ranges).
    assert all(isinstance(f, Frame) for f in out)
    if not mutations:
        assert out == [*good, SENTINEL]
