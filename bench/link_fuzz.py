"""Long fuzz of the full link: frames thrown at a live host Link and device Link.

Run from the repository root::

    .venv/bin/python bench/link_fuzz.py --frames 1000000 [--mode both|signed|unsigned]
                                        [--seed 0] [--events N]

A host-role ``firmware_bridge.Link`` and a device-role one run back to back over the
in-process pair with the production timings, the device sending real events and the host
real commands the whole time. Into both directions of that line go ``--frames`` packets from
``firmware_bridge.testing.FrameFuzzer``: random CRC-valid frames (any version, flags, seq,
ack, type; real or random payloads, signature trailers), real frames off the wire mutated
(bits flipped with or without a fixed CRC, cut short) or replayed unchanged, and garbage.
Without signing, forgeries only signing can stop (``is_forgery``) are replaced by others.

Prints one JSON object: per mode the packets, seconds, packets/s, crashes (exceptions out
of either link; must be 0), whether every real event and command was delivered exactly
once in order, and the links' drop counters; then the machine. Exits 1 if any mode
crashed, lost the session or lost a real message. The bounded version runs in the test
suite (tests/bridge/test_link_fuzz.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import _common as common

from firmware_bridge.testing import FuzzReport, fuzz_link

#: The shared key of the signed mode (a benchmark, not a secret).
KEY = bytes.fromhex("6c696e6b2066757a7a2062656e6368206b657920" + "00" * 12)
COUNTERS = (
    "crc_errors", "framing_errors", "decode_errors", "unknown_messages", "duplicates_dropped",
    "out_of_order_dropped", "wrong_version_dropped", "stray_handshakes_dropped",
    "unsigned_dropped", "bad_signature_dropped", "replay_dropped", "refusals", "retransmits",
)  # fmt: skip


def summary(report: FuzzReport) -> dict[str, Any]:
    """The figures of one mode."""
    return {
        "frames": report.packets,
        "crc_valid": report.crc_valid,
        "forgeries_replaced": report.forgeries_skipped,
        "seconds": round(report.seconds, 1),
        "frames_per_s": round(report.frames_per_s),
        "crashes": len(report.crashes),
        "crash_messages": report.crashes[:5],
        "events": report.events,
        "commands": report.commands,
        "exactly_once": report.exactly_once,
        "links_lost": report.links_lost,
        "unverified_accepted": report.unverified_accepted if report.signing else None,
        "host": {k: report.host[k] for k in COUNTERS if report.host.get(k)},
        "device": {k: report.device[k] for k in COUNTERS if report.device.get(k)},
    }


async def run(frames: int, seed: int, events: int, modes: list[str]) -> dict[str, Any]:
    """Fuzz each mode in turn."""
    out: dict[str, Any] = {}
    for mode in modes:
        key = KEY if mode == "signed" else None
        report = await fuzz_link(frames, seed=seed, signing_key=key, events=events, batch=64)
        out[mode] = summary(report)
    return out


def main() -> int:
    """Parse the options, run, print the JSON; 1 if anything went wrong."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000, help="packets per mode")
    parser.add_argument("--mode", choices=("both", "signed", "unsigned"), default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--events", type=int, help="real events (and as many commands); default frames/50"
    )
    args = parser.parse_args()
    if args.frames < 1:
        parser.error(f"--frames must be at least 1, got {args.frames}")
    events = args.events if args.events is not None else max(args.frames // 50, 10)
    modes = ["unsigned", "signed"] if args.mode == "both" else [args.mode]
    result = asyncio.run(run(args.frames, args.seed, events, modes))
    result["machine"] = common.machine()
    print(json.dumps(result))
    bad = [
        mode
        for mode in modes
        if result[mode]["crashes"] or not result[mode]["exactly_once"] or result[mode]["links_lost"]
    ]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
