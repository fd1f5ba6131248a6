"""Random CRC-valid frames thrown into a live host<->device link (the full link, not only
the codec): the links never raise, and every real event and command is delivered exactly
once, in order.

Without signing, frames that forge the session (:func:`is_forgery`: a version-1 frame that
is reliable, carries an ack or is a heartbeat, or a version-1 hello at the table) are left
out: only signing stops those, and with a key every frame goes in. The long run is
``bench/link_fuzz.py --frames 1000000`` (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.codec import MAX_PAYLOAD, SIGNATURE_LEN, Flags
from firmware_bridge.link import Role
from firmware_bridge.messages import MESSAGES
from firmware_bridge.testing import (
    FuzzReport,
    crc_valid_packet,
    fuzz_link,
    is_forgery,
    sample_messages,
)

KEY = bytes.fromhex("c3" * 32)
#: Small enough to keep the suite fast; HYPOTHESIS_PROFILE=long for more.
EXAMPLES = 300 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 25
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


#: The pair must come up and stay up, and cannot reconnect; the wall clock is not what is
#: tested here, so no stall of a loaded machine may end the handshake or the session
#: (tests/bridge/conftest.py). The fast retransmissions stay: the fuzz exercises them.
pytestmark = pytest.mark.usefixtures("patient_link")


_PAYLOADS = [m.to_bytes() for m in sample_messages()]


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    """A real message's payload, maybe with one byte changed (a hello of another version),
    or random bytes; maybe with 13 more bytes that can pass for a signature trailer."""
    if draw(st.booleans()):
        payload = bytearray(draw(st.sampled_from(_PAYLOADS)))
        if payload and draw(st.booleans()):
            payload[draw(st.integers(0, len(payload) - 1))] = draw(st.integers(0, 255))
    else:
        payload = bytearray(draw(st.binary(max_size=64)))
    if draw(st.booleans()):
        payload += draw(st.binary(min_size=SIGNATURE_LEN, max_size=SIGNATURE_LEN))
    return bytes(payload[:MAX_PAYLOAD])


#: Any CRC-valid frame: every message type and then some, any seq, ack, flags and version.
frames = st.builds(
    lambda version, flags, seq, ack, msg_type, payload: crc_valid_packet(
        bytes((version, flags, seq, ack, msg_type)) + payload
    ),
    version=st.sampled_from([1, 1, 1, 0, 2, 255]) | st.integers(0, 255),
    flags=st.sampled_from(
        [
            int(Flags.SYN),
            int(Flags.RELIABLE | Flags.ACK),
            int(Flags.ACK),
            int(Flags.SYN | Flags.SIGNED),
            0,
        ]
    )
    | st.integers(0, 255),  # fmt: skip
    seq=st.integers(0, 255),
    ack=st.integers(0, 255),
    msg_type=st.sampled_from(sorted(MESSAGES)) | st.integers(0, 255),
    payload=payloads(),
)
injections = st.lists(st.tuples(st.sampled_from(Role), frames), min_size=1, max_size=40)


def _check(report: FuzzReport) -> None:
    assert report.crashes == []
    assert report.exactly_once, report
    assert report.links_lost == 0
    for stats in (report.host, report.device):
        assert stats["handshakes"] == 1


def test_the_samples_cover_every_message() -> None:
    assert sorted(m.MSG_TYPE for m in sample_messages()) == sorted(MESSAGES)


@FUZZ
@given(injections)
def test_random_frames_into_an_unsigned_link(packets: list[tuple[Role, bytes]]) -> None:
    report = asyncio.run(fuzz_link(packets=packets, events=8))
    _check(report)
    assert report.packets + report.forgeries_skipped == len(packets)
    assert report.forgeries_skipped == sum(1 for role, p in packets if is_forgery(p, role))


@FUZZ
@given(injections)
def test_random_frames_into_a_signed_link(packets: list[tuple[Role, bytes]]) -> None:
    report = asyncio.run(fuzz_link(packets=packets, events=8, signing_key=KEY))
    _check(report)
    assert report.packets == len(packets) and report.forgeries_skipped == 0
    # Every injected frame the CRC let through was refused by version or signature.
    assert report.unverified_accepted == 0


@settings(max_examples=4 if EXAMPLES < 100 else 50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(seed=st.integers(0, 2**32 - 1), signed=st.booleans())
def test_link_fuzz_bounded(seed: int, signed: bool) -> None:
    """What bench/link_fuzz.py does with 10^6 frames, with a few hundred: random, mutated
    and replayed real frames, and garbage."""
    report = asyncio.run(fuzz_link(400, seed=seed, events=20, signing_key=KEY if signed else None))
    _check(report)
    assert report.packets == 400
    if signed:
        assert report.unverified_accepted == 0
        assert report.host["replay_dropped"] + report.device["replay_dropped"] > 0
