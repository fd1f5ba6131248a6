"""Firmware bridge benchmark: codec throughput and link round trip.

Run from the repository root::

    .venv/bin/python bench/bridge_bench.py [--frames 20000] [--round-trips 2000]

Prints one JSON object: encode and decode frames/s for a typical event frame, and the
send-to-ack round trip of ``Link.send`` (p50/p99, microseconds) over the in-process pair and
over a pty opened as a serial port (the real pyserial-asyncio-fast path).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from typing import Any

from firmware_bridge.codec import Flags, Frame, FrameDecoder, encode_frame
from firmware_bridge.link import Link, Role
from firmware_bridge.messages import SeatDisplay, WallTake
from firmware_bridge.testing import test_device_info
from firmware_bridge.transport import Connector, Transport, open_pty, transport_pair


def bench_codec(n: int) -> dict[str, float]:
    """Encode and decode ``n`` WallTake frames; frames per second each way."""
    msg = WallTake(seat=2, position=77, tile=101)
    payload = msg.to_bytes()
    frames = [
        Frame(Flags.RELIABLE | Flags.ACK, i % 256, (i * 3) % 256, msg.MSG_TYPE, payload)
        for i in range(n)
    ]
    start = time.perf_counter()
    wire = b"".join(encode_frame(f) for f in frames)
    encode_s = time.perf_counter() - start
    decoder = FrameDecoder()
    start = time.perf_counter()
    got = 0
    for i in range(0, len(wire), 4096):  # realistic read sizes
        got += len(decoder.feed(wire[i : i + 4096]))
    decode_s = time.perf_counter() - start
    assert got == n
    return {"encode_frames_per_s": n / encode_s, "decode_frames_per_s": n / decode_s}


def _fixed(t: Transport) -> Connector:
    async def connect() -> Transport:
        return t

    return connect


async def _round_trips(
    host_connect: str | Connector, device_connect: Connector, n: int
) -> dict[str, float]:
    device = Link(device_connect, role=Role.DEVICE, device_info=test_device_info())
    host = Link(host_connect, role=Role.HOST)
    async with device, host:
        async with asyncio.timeout(10):
            await host.wait_up()

        async def drain() -> None:  # the device side consumes commands like hw_sim would
            async for _ in device.events():
                pass

        consumer = asyncio.create_task(drain())
        samples = []
        cmd = SeatDisplay(seat=1, line1="Round trip", line2="25000")
        for _ in range(n):
            start = time.perf_counter()
            await host.send(cmd)
            samples.append((time.perf_counter() - start) * 1e6)
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        retransmits = host.stats.retransmits
    qs = statistics.quantiles(samples, n=100)
    return {"p50_us": qs[49], "p99_us": qs[98], "n": n, "retransmits": retransmits}


async def bench_link(n: int) -> dict[str, Any]:
    """Round trip of ``Link.send`` over the in-process pair and over a pty."""
    a, b = transport_pair("bench")
    pair = await _round_trips(_fixed(a), _fixed(b), n)
    master = await open_pty()
    try:
        pty = await _round_trips(master.slave_path, _fixed(master), n)
    finally:
        await master.close()
    return {"pair": pair, "pty": pty}


def main() -> None:
    """Run both benchmarks and print the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20000)
    parser.add_argument("--round-trips", type=int, default=2000)
    args = parser.parse_args()
    result = {
        "codec": bench_codec(args.frames),
        "link_round_trip": asyncio.run(bench_link(args.round_trips)),
    }
    for section in result.values():
        for key, value in section.items():
            if isinstance(value, float):
                section[key] = round(value, 1)
    for sub in result["link_round_trip"].values():
        for key, value in sub.items():
            if isinstance(value, float):
                sub[key] = round(value, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
