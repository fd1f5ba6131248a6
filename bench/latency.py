"""Key press to display latency, end to end through pty, bridge and daemon.

Run from the repository root::

    .venv/bin/python bench/latency.py [--presses 10000] [--games 3]

The simulated table (``hw_sim``, this process, no bots) serves a pty; the daemon runs in
its own process (``tablectl run --config ...`` whose ``device`` is that pty). Seats 1-3
press DIGIT_0 in turn (it cycles the seat's score page, so every press changes that seat's
display; seat 0 is the dealer and shows ``ROLL?``). One sample is ``time.perf_counter_ns()``
just before ``SimTable.press`` posts the ``KeyPress`` to the arrival of that seat's
``SeatDisplay`` at the simulated firmware (its command listener, called once the command
took effect). One press at a time: the next press goes once the display of the last one
arrived. A DIGIT_0 press is not a rules event, so it is not journalled (no fsync).

The floor: the same simulator, pty and measurement with ``bench/echo_peer.py`` in the
daemon's place (a host ``Link`` that answers each KeyPress with a SeatDisplay at once).

The journalled path: autoplayed games (bots, same pty set-up, daemon in its own process);
one sample is a ``WallTake`` leaving the simulator (its transmit listener, just after the
frame was written) to the next ``CentreDisplay`` arriving, when nothing else was sent in
between. A take is a rules event: the daemon appends it to the journal (SQLite,
``synchronous=FULL``, an fsync) before it sends the display. Its floor
(``journalled_floor_us``): the echo's p99 plus one fsync of the journal's disk (the median
of 200 timed 4 KiB write + fsync of a file in the journal's directory, this same run);
``journalled_ratio`` is the journalled take's p99 over that floor.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common

from firmware_bridge.messages import CentreDisplay, Key, Message, SeatDisplay, WallTake
from hw_sim import SimTable

PRESET = "tenhou"  # no game clock: a press changes exactly one display
SEED = 1
SEATS = (1, 2, 3)
WARMUP = 200
READY_TIMEOUT_S = 30.0


async def _press_loop(sim: SimTable, n: int) -> list[int]:
    """Press DIGIT_0 ``n`` times (after a warm-up); round trips in nanoseconds."""
    fw = sim.firmware
    loop = asyncio.get_running_loop()
    waiting: dict[str, Any] = {"seat": -1, "fut": None}

    def on_message(direction: str, msg: Message) -> None:
        if direction != "rx" or not isinstance(msg, SeatDisplay):
            return
        fut = waiting["fut"]
        if fut is not None and msg.seat == waiting["seat"] and not fut.done():
            fut.set_result(time.perf_counter_ns())

    fw.add_listener(on_message)
    samples: list[int] = []
    try:
        for i in range(WARMUP + n):
            seat = SEATS[i % len(SEATS)]
            fut: asyncio.Future[int] = loop.create_future()
            waiting["seat"], waiting["fut"] = seat, fut
            start = time.perf_counter_ns()
            sim.press(seat, Key.DIGIT_0)
            async with asyncio.timeout(10):
                end = await fut
            if i >= WARMUP:
                samples.append(end - start)
    finally:
        waiting["fut"] = None
    return samples


async def bench_echo(n: int) -> dict[str, Any]:
    """The floor: a bare echo host on the same pty."""
    sim = SimTable(PRESET, SEED, autoplay=False)
    url = await sim.start_pty()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("echo_peer.py")), url
    )
    try:
        if not await sim.firmware.wait_for(lambda: sim.firmware.link_up, READY_TIMEOUT_S):
            raise RuntimeError("the echo peer did not connect")
        samples = await _press_loop(sim, n)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return common.summary_us(samples)


async def bench_daemon(n: int, tmp: Path) -> dict[str, Any]:
    """DIGIT_0 through the daemon (``tablectl run``, its own process)."""
    sim = SimTable(PRESET, SEED, autoplay=False)
    url = await sim.start_pty()
    config = common.write_config(tmp, url, PRESET, tmp / "latency.sqlite3", "latency")
    proc = await common.start_daemon(config, tmp / "latency.log")
    try:
        await common.wait_ready(sim, SEATS, READY_TIMEOUT_S)
        samples = await _press_loop(sim, n)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return common.summary_us(samples)


async def bench_journalled(games: int, tmp: Path) -> dict[str, Any]:
    """WallTake (journalled) to the CentreDisplay it causes, in autoplayed games."""
    sim = SimTable(PRESET, SEED, max_games=games)
    url = await sim.start_pty()
    journal = tmp / "journalled.sqlite3"
    config = common.write_config(tmp, url, PRESET, journal, "journalled")
    samples: list[int] = []
    pending: dict[str, int | None] = {"t": None}

    def on_message(direction: str, msg: Message) -> None:
        now = time.perf_counter_ns()
        if direction == "tx":
            pending["t"] = now if isinstance(msg, WallTake) else None
        elif isinstance(msg, CentreDisplay) and pending["t"] is not None:
            samples.append(now - pending["t"])
            pending["t"] = None

    sim.firmware.add_listener(on_message)
    proc = await common.start_daemon(config, tmp / "journalled.log")
    try:
        async with asyncio.timeout(120 * games):
            await sim.wait_games(games)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return {"games": games, **common.summary_us(samples)}


#: fsyncs timed for the floor of a journalled take.
FSYNC_SAMPLES = 200


def bench_fsync(folder: Path, samples: int = FSYNC_SAMPLES) -> dict[str, float]:
    """One 4 KiB write and fsync of a file in ``folder`` (the journal's disk), timed
    ``samples`` times: what one durable commit costs at the least."""
    path = folder / "fsync.probe"
    block = b"\x5a" * 4096
    times: list[int] = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for i in range(samples):
            os.pwrite(fd, block, (i % 16) * 4096)
            t0 = time.perf_counter_ns()
            os.fsync(fd)
            times.append(time.perf_counter_ns() - t0)
    finally:
        os.close(fd)
        path.unlink()
    return common.summary_us(times)


async def run(presses: int, games: int) -> dict[str, Any]:
    """All three measurements; the figures the issue asks for at the top."""
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as folder:
        tmp = Path(folder)
        echo = await bench_echo(presses)
        daemon = await bench_daemon(presses, tmp)
        journalled = await bench_journalled(games, tmp) if games else None
        fsync = bench_fsync(tmp)
    # The floor of a journalled take: the echo's round trip plus one fsync of the
    # journal's disk (its median), measured in this same run.
    floor = echo["p99_us"] + fsync["p50_us"]
    out = {
        "latency_p50_us": daemon["p50_us"],
        "latency_p99_us": daemon["p99_us"],
        "latency_max_us": daemon["max_us"],
        "echo_p50_us": echo["p50_us"],
        "echo_p99_us": echo["p99_us"],
        "echo_max_us": echo["max_us"],
        "latency_ratio": round(daemon["p99_us"] / echo["p99_us"], 2),
        "latency_ratio_p50": round(daemon["p50_us"] / echo["p50_us"], 2),
        "presses": presses,
        "daemon": daemon,
        "echo": echo,
        "journalled_take": journalled,
        "fsync": fsync,
        "journalled_floor_us": round(floor, 1),
    }
    if journalled and journalled.get("n"):
        out["journalled_p50_us"] = journalled["p50_us"]
        out["journalled_p99_us"] = journalled["p99_us"]
        out["journalled_ratio"] = round(journalled["p99_us"] / floor, 2)
    return out


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10000)
    parser.add_argument("--games", type=int, default=3, help="autoplayed games (journalled)")
    args = parser.parse_args()
    result = asyncio.run(run(args.presses, args.games))
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
