"""The device library on a microcontroller: footprint, cost per frame, and the board under
fire (docs/hil.md, "The library on a microcontroller").

Run from the repository root (needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and
qemu-system-arm)::

    .venv/bin/python bench/mcu.py [--frames 2000] [--events 500] [--fuzz 5000] [--seed 0]

Prints one JSON object:

* ``footprint``: flash and RAM of the library alone (src/tfw_*.c with ``-Os``, per core:
  Cortex-M0+, M3, M4; ``arm-none-eabi-size``; it has no static data: its RAM is the
  ``tfw_link`` the port places) and of the whole MPS2 AN385 port (the map's sections:
  flash = .text + .ARM.exidx + .data's image; RAM = .data + .bss + .noinit + the stack
  budget + the seed word) at TFW_QUEUE 16, 32 (qemu.sh's) and 256 (the protocol's), with
  ``sizeof(tfw_link)`` and the stack's measured high-water mark.
* ``cost``: instructions per received frame and per posted event, measured on the emulated
  board under ``-icount shift=0`` (QEMU then advances the virtual clock one nanosecond per
  instruction, and the port's cycle counter, Timer0 at 25 MHz of that clock, ticks once
  every 40 instructions): a host link sends ``--frames`` SeatDisplay commands (each
  decoded, acknowledged and shown: the time in ``tfw_link_receive``), then the harness
  presses ``--events`` keys (each queued, encoded and written: the time in
  ``tfw_link_post``); the board's ``stats`` give the cycles. Then what that is on a
  48 MHz Cortex-M0+ and a 168 MHz Cortex-M4 at 115200 baud (1.3 and 1.0 cycles per
  instruction assumed: Thumb code from -Os, flash wait states not counted).
* ``fuzz``: ``--fuzz`` packets from ``firmware_bridge.testing.FrameFuzzer`` (random
  CRC-valid frames, mutated and replayed real ones, garbage), 64 KiB of noise without a
  delimiter, a flood of 2000 forged hellos, all thrown at the board's UART while a host
  holds a session; then the host vanishes. Passes when the board is still running, has
  dropped the session and stopped (``up 0``, motors stopped, HOST_SILENT latched), answers a
  new host's hello and the conformance checks ``hello``, ``commands`` and ``host_silent``.

Exits 1 if a figure misses its target (library < 8 KiB flash, port < 16 KiB RAM at a
queue of 16) or the fuzz does not pass.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from firmware_bridge import (  # noqa: E402
    Link,
    Role,
    conformance,  # noqa: E402
)
from firmware_bridge import messages as m  # noqa: E402
from firmware_bridge.codec import Flags, Frame, encode_frame  # noqa: E402
from firmware_bridge.endpoints import open_transport  # noqa: E402
from firmware_bridge.errors import LinkDown  # noqa: E402
from firmware_bridge.testing import FrameFuzzer  # noqa: E402
from tests.hil.board import board  # noqa: E402

FIRMWARE = ROOT / "firmware"
CORES = {
    "cortex-m0plus": ["-mcpu=cortex-m0plus", "-mthumb"],
    "cortex-m3": ["-mcpu=cortex-m3", "-mthumb"],
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb"],
}
QUEUES = (16, 32, 256)
INSTRUCTIONS_PER_CYCLE_TICK = 40  # 25 MHz Timer0, one instruction per virtual ns
BAUD = 115200
FLASH_TARGET, RAM_TARGET = 8 * 1024, 16 * 1024


def _run(*args: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=FIRMWARE)
    if done.returncode != 0:
        raise SystemExit(f"mcu: {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def library_size() -> dict[str, dict[str, int]]:
    """text/data/bss of src/tfw_codec.c and src/tfw_link.c per core."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for core, flags in CORES.items():
            objects = []
            for src in ("tfw_codec", "tfw_link"):
                obj = f"{tmp}/{core}-{src}.o"
                _run("arm-none-eabi-gcc", *flags, "-std=c99", "-Os", "-ffunction-sections",
                     "-Iinclude", "-c", f"src/{src}.c", "-o", obj)  # fmt: skip
                objects.append(obj)
            text = data = bss = 0
            for line in _run("arm-none-eabi-size", *objects).splitlines()[1:]:
                t, d, b = map(int, line.split()[:3])
                text, data, bss = text + t, data + d, bss + b
            out[core] = {"flash": text + data, "text": text, "data": data, "bss": bss}
    return out


def port_size(queue: int) -> dict[str, int]:
    """The AN385 port at ``queue``: flash and RAM from its ELF's sections."""
    build = "build-mps2-an385" if queue == 32 else f"build-mps2-an385-q{queue}"
    _run("make", "-s", "arm", f"QUEUE={queue}", f"ARM_BUILD={build}")
    elf = FIRMWARE / build / "tfw.elf"
    sections = {}
    for line in _run("arm-none-eabi-size", "-A", str(elf)).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith("."):
            sections[parts[0]] = int(parts[1])
    link = next(
        int(line.split()[1], 16)
        for line in _run("arm-none-eabi-nm", "-S", str(elf)).splitlines()
        if line.endswith(" R")
    )
    ram = sum(sections.get(s, 0) for s in (".data", ".bss", ".noinit", ".stack", ".entropy"))
    flash = sum(sections.get(s, 0) for s in (".text", ".ARM.exidx", ".data"))
    return {
        "queue": queue,
        "flash": flash,
        "ram": ram,
        "stack_budget": sections.get(".stack", 0),
        "noinit": sections.get(".noinit", 0),
        "bss": sections.get(".bss", 0),
        "retained_struct": link,
    }


async def _host(url: str) -> Link:
    link = Link(url, role=Role.HOST, name="bench")
    await link.start()
    async with asyncio.timeout(20):
        await link.wait_up()
    return link


async def cost(frames: int, events: int) -> dict[str, Any]:
    """Instructions per received frame and per posted event under -icount shift=0."""
    with board(qemu_args=("-icount", "shift=0")) as (url, harness):
        before = harness.stats()
        host = await _host(url)
        try:
            pending = [
                host.post(m.SeatDisplay(seat=i % 4, line1=f"S {25000 + i}", line2="RIICHI?"))
                for i in range(frames)
            ]
            async with asyncio.timeout(120):
                await asyncio.gather(*pending)
            mid = harness.stats()
            seen = 0

            async def count() -> None:
                nonlocal seen
                async for item in host.events():
                    if isinstance(item, m.KeyPress):
                        seen += 1
                        if seen == events:
                            return

            counter = asyncio.create_task(count())
            for _ in range(events):
                harness.type("press 1 0x20")
                await asyncio.sleep(0.002)  # a person's pace, so the window never fills
            try:
                async with asyncio.timeout(60):
                    await counter
            except TimeoutError:
                raise SystemExit(
                    f"mcu: {seen} of {events} key presses reached the host; the board:"
                    f" {harness.stats()}; the host: {host.stats}"
                ) from None
            after = harness.stats()
        finally:
            await host.close()
    rx_frames = mid["frames_in"] - before["frames_in"]
    per_frame = (mid["rx_cycles"] - before["rx_cycles"]) * INSTRUCTIONS_PER_CYCLE_TICK / rx_frames
    posts = after["posts"] - mid["posts"]
    per_event = (after["post_cycles"] - mid["post_cycles"]) * INSTRUCTIONS_PER_CYCLE_TICK / posts
    # The longest frame a SeatDisplay here makes on the wire: 8N1, 10 bits a byte.
    wire = len(m.SeatDisplay(seat=0, line1="S 25000", line2="RIICHI?").to_bytes()) + 5 + 2 + 2
    frame_s = wire * 10 / BAUD
    out: dict[str, Any] = {
        "method": "qemu -icount shift=0; Timer0 system-clock cycles x 40 = instructions",
        "frames_received": rx_frames,
        "instructions_per_received_frame": round(per_frame),
        "events_posted": posts,
        "instructions_per_posted_event": round(per_event),
        "seatdisplay_frame_bytes": wire,
        "frame_time_at_115200_us": round(frame_s * 1e6),
        "stack_used": after["stack_used"],
    }
    for name, hz, cpi in (("cortex-m0plus_48mhz", 48e6, 1.3), ("cortex-m4_168mhz", 168e6, 1.0)):
        frame_us = per_frame * cpi / hz * 1e6
        event_us = per_event * cpi / hz * 1e6
        out[name] = {
            "us_per_received_frame": round(frame_us, 1),
            "us_per_posted_event": round(event_us, 1),
            "cpu_share_at_line_rate_pct": round(100 * frame_us / (frame_s * 1e6), 2),
        }
    return out


def _real_frames() -> list[bytes]:
    """Real host frames for the fuzzer to mutate and replay."""
    commands = [
        m.SeatDisplay(seat=1, line1="S 25000", line2=""),
        m.StatusRequest(),
        m.DiceRoll(),
        m.Hello(1, 3, m.SCHEMA_HASH, 0x1234, 0, 0, "bench"),
    ]
    return [
        encode_frame(Frame(Flags.SYN if isinstance(c, m.Hello) else Flags.RELIABLE, i, 0,
                           c.MSG_TYPE, c.to_bytes()))
        for i, c in enumerate(commands)
    ]  # fmt: skip


async def fuzz(packets: int, seed: int) -> dict[str, Any]:
    """The board under noise, floods, forgeries and a vanishing host."""
    rng = random.Random(seed)
    fuzzer = FrameFuzzer(rng)
    real = _real_frames()
    with board() as (url, harness):
        host = await _host(url)
        # A second writer on the line (it never reads, so the host sees all the board
        # says): what it sends reaches the board's UART between the host's frames.
        line = os.open(url, os.O_WRONLY | os.O_NOCTTY)
        try:
            start = time.monotonic()
            for i in range(0, packets, 64):
                chunk = b"".join(fuzzer.packet(real) for _ in range(min(64, packets - i)))
                await asyncio.to_thread(os.write, line, chunk)
                with contextlib.suppress(LinkDown):  # a forged hello took the session
                    host.post_nowait(m.StatusRequest())
            noise = bytes(rng.randrange(1, 256) for _ in range(65536))  # no delimiter
            await asyncio.to_thread(os.write, line, noise + b"\x00")
            flood = [
                encode_frame(Frame(Flags.SYN, 0, 0, m.Hello.MSG_TYPE, m.Hello(
                    rng.choice((1, 2)), 3, m.SCHEMA_HASH, rng.randrange(1, 0x10000), 0, 0, "x"
                ).to_bytes()))
                for _ in range(2000)
            ]  # fmt: skip
            await asyncio.to_thread(os.write, line, b"".join(flood))
            fired_s = time.monotonic() - start
            # The board works through what is still queued in the pty and QEMU (it reads
            # a byte at a time) before it answers on the harness UART.
            during = harness.stats(timeout=600)
            drained_s = time.monotonic() - start
        finally:
            os.close(line)
            await host.close()  # the host vanishes: no goodbye, no more frames
        deadline = time.monotonic() + 15
        gone = harness.stats()
        while gone["up"] and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            gone = harness.stats()
        shown = harness.ask("stats", "stats:")
        transport = await open_transport(url)
        report = await conformance.run_checks(
            transport, url, only=["hello", "commands", "host_silent"]
        )
        final = harness.stats()
    checks = {r.name: r.status for r in report.results}
    ok = not gone["up"] and not report.failed and all(s == "pass" for s in checks.values())
    return {
        "packets": packets,
        "noise_bytes": len(noise),
        "forged_hellos": len(flood),
        "seconds_to_write": round(fired_s, 1),
        "seconds_until_the_board_answered": round(drained_s, 1),
        "board_bad_frames": during["bad_frames"],
        "board_frames_in": during["frames_in"],
        "board_events_dropped": final["events_dropped"],
        "session_dropped_after_host_vanished": not gone["up"],
        "stats_after_host_vanished": shown[-1],
        "checks_after": checks,
        "warm_resets": final["warm_resets"],
        "stack_used": final["stack_used"],
        "passed": ok and final["warm_resets"] == 0,
    }


def main() -> int:
    """Parse the options, measure, print the JSON; 1 if a target or the fuzz failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=2000, help="SeatDisplay commands")
    parser.add_argument("--events", type=int, default=500, help="key presses")
    parser.add_argument("--fuzz", type=int, default=5000, help="fuzzer packets (0: none)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.frames, args.events) < 1 or args.fuzz < 0:
        parser.error("--frames and --events need at least 1, --fuzz 0 or more")
    result: dict[str, Any] = {
        "footprint": {
            "library": library_size(),
            "port": [port_size(q) for q in QUEUES],
        },
        "cost": asyncio.run(cost(args.frames, args.events)),
    }
    if args.fuzz:
        result["fuzz"] = asyncio.run(fuzz(args.fuzz, args.seed))
    print(json.dumps(result, indent=2))
    library_ok = all(v["flash"] < FLASH_TARGET for v in result["footprint"]["library"].values())
    q16 = result["footprint"]["port"][0]
    fuzz_ok = result.get("fuzz", {"passed": True})["passed"]
    return 0 if library_ok and q16["ram"] < RAM_TARGET and fuzz_ok else 1


if __name__ == "__main__":
    sys.exit(main())
