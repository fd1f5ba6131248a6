"""Throughput: autoplayed games per second with no motor time, and the daemon's frame rate.

Run from the repository root::

    .venv/bin/python bench/throughput.py [--games-per-preset 3] [--presets all]

Like ``tablectl demo --fast`` (simulator speed 0, claim window 0.05 s): for each preset one
``SimTable`` with bots on every seat and one ``Daemon`` in this process play
``--games-per-preset`` games, once over the in-process pipe (``sim://``) and once over a
pty the daemon opens as its serial port. Seed ``i`` of preset number ``i`` (presets in
``tablectl rules list`` order). Wall time counts everything from opening the endpoint to
the last GAME OVER confirmed, for all presets together.

Frames the daemon handles: its link's ``frames_in + frames_out`` over the run (every
frame: events, commands, acks, heartbeats, hellos), divided by the wall time. A
115200-baud 8N1 line carries 11520 bytes/s, so ``11520 / mean frame size`` frames/s (the
mean over the same frames); ``line_rate_multiple`` is the daemon's rate over that. Both
sides share this process (and its one event loop), so the daemon's share is lower than
the figure says it could handle alone.

**Pipelined**: the daemon's capacity when the table does not wait for each answer. The
lock-step games above measure a request/response chain (a bot acts only once the display
shows the answer to its last action), so both sides mostly wait. Here the daemon is a
``tablectl run`` process on a pty (its real path, as in ``latency.py``) and the simulated
table, without bots, keeps up to ``PIPELINE`` score-page presses (DIGIT_0 on seats 1-3:
each changes one seat display and is not journalled) outstanding. Frames are the
simulator link's ``frames_in + frames_out`` (the daemon's frames seen from the other end),
over the wall time from the first press to the last display.

**Pipelined, with the C firmware as the table** (``pipelined_c``; ``--no-c-firmware``
skips it): the same presses, depth and daemon with the C device library's POSIX port
(``firmware/build/table-posix --pty``, built by ``make -C firmware``) in the simulator's
place, as a production table runs the C library on its microcontroller. The port makes
the presses itself (its ``burst`` hook: ``PIPELINE`` deep, seats 1-3 in turn) and counts
the frames and bytes at its end of the link, both ways; the daemon's CPU comes from
``/proc``. The Python simulator costs about as much per frame as the daemon, so with it
the run measures the two processes taking turns; with the C table it measures the daemon.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common
from _ctable import CTable, CTableError

from firmware_bridge.messages import Key, Message, SeatDisplay
from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.rules.loader import load_rules

GAME_TIMEOUT_S = 120
#: Presses outstanding at once in the pipelined run: the link's window of 8 several times
#: over, so the daemon always has work queued.
PIPELINE = 32
PIPELINED_PRESET = "tenhou"  # no game clock: a press changes exactly one display
PIPELINED_SEATS = (1, 2, 3)  # seat 0 is the dealer, prompted ROLL?


async def _play(preset: str, seed: int, games: int, transport: str, tmp: Path) -> dict[str, Any]:
    house = load_rules(preset)
    sim = SimTable(house, seed, max_games=games)
    start = time.perf_counter()
    if transport == "sim":
        url = await sim.start_sim(f"bench-{preset}-{seed}")
    else:
        url = await sim.start_pty()
    config = config_for(url, preset, tmp / f"{transport}-{preset}-{seed}.sqlite3", table_id="bench")
    daemon = Daemon(config, claim_window_s=common.FAST_CLAIM_S, max_games=games)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(GAME_TIMEOUT_S * games):
            await sim.wait_games(games)
        elapsed = time.perf_counter() - start
        assert daemon.link is not None
        stats = daemon.link.stats.as_dict()
        hands = sim.bots.hands_started if sim.bots is not None else 0
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    return {"elapsed_s": elapsed, "hands": hands, "stats": stats}


async def bench_transport(
    transport: str, presets: list[str], games: int, tmp: Path
) -> dict[str, Any]:
    """Every preset over one transport; games/s, hands/s and the daemon's frame rate."""
    total_s = 0.0
    frames = nbytes = hands = retransmits = 0
    for i, preset in enumerate(presets):
        got = await _play(preset, i, games, transport, tmp)
        total_s += got["elapsed_s"]
        hands += got["hands"]
        stats = got["stats"]
        frames += stats["frames_in"] + stats["frames_out"]
        nbytes += stats["bytes_in"] + stats["bytes_out"]
        retransmits += stats["retransmits"]
    mean_frame = nbytes / frames
    line_fps = common.LINE_BYTES_PER_S / mean_frame
    fps = frames / total_s
    return {
        "games": games * len(presets),
        "hands": hands,
        "elapsed_s": round(total_s, 2),
        "games_per_s": round(games * len(presets) / total_s, 3),
        "hands_per_s": round(hands / total_s, 2),
        "frames": frames,
        "frames_per_s": round(fps, 1),
        "bytes_per_s": round(nbytes / total_s, 1),
        "mean_frame_bytes": round(mean_frame, 2),
        "line_frames_per_s": round(line_fps, 1),
        "line_rate_multiple": round(fps / line_fps, 2),
        "retransmits": retransmits,
    }


async def bench_pipelined(presses: int, tmp: Path, idle_s: float = 10.0) -> dict[str, Any]:
    """Score-page presses kept ``PIPELINE`` deep to a ``tablectl run`` process on a pty."""
    sim = SimTable(PIPELINED_PRESET, 1, autoplay=False)
    url = await sim.start_pty()
    config = common.write_config(tmp, url, PIPELINED_PRESET, tmp / "pipe.sqlite3", "pipe")
    proc = await common.start_daemon(config, tmp / "pipelined.log")
    fw = sim.firmware
    answered = asyncio.Event()
    count = {"displays": 0}

    def on_message(direction: str, msg: Message) -> None:
        if direction == "rx" and isinstance(msg, SeatDisplay):
            count["displays"] += 1
            answered.set()

    try:
        await common.wait_ready(sim, PIPELINED_SEATS)
        fw.add_listener(on_message)
        assert fw.link is not None
        before = fw.link.stats.as_dict()
        cpu_before = common.cpu_s(proc.pid)
        table_cpu_before = time.process_time()
        written_before = common.write_bytes(proc.pid)
        sent = 0
        start = time.perf_counter()
        async with asyncio.timeout(max(60.0, presses / 100)):
            while count["displays"] < presses:
                while sent < presses and sent - count["displays"] < PIPELINE:
                    sim.press(PIPELINED_SEATS[sent % len(PIPELINED_SEATS)], Key.DIGIT_0)
                    sent += 1
                answered.clear()
                await answered.wait()
        elapsed = time.perf_counter() - start
        daemon_cpu = common.cpu_s(proc.pid) - cpu_before
        table_cpu = time.process_time() - table_cpu_before
        after = fw.link.stats.as_dict()
        await asyncio.sleep(1.0)  # the last presses' writes, if any, reach the disk
        written = common.write_bytes(proc.pid) - written_before
        idle_before = common.write_bytes(proc.pid)
        await asyncio.sleep(idle_s)  # an idle table: heartbeats and ticks only
        idle_written = common.write_bytes(proc.pid) - idle_before
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    frames = sum(after[k] - before[k] for k in ("frames_in", "frames_out"))
    nbytes = sum(after[k] - before[k] for k in ("bytes_in", "bytes_out"))
    mean_frame = nbytes / frames
    line_fps = common.LINE_BYTES_PER_S / mean_frame
    return {
        "presses": presses,
        "elapsed_s": round(elapsed, 3),
        "presses_per_s": round(presses / elapsed, 1),
        "frames": frames,
        "frames_per_s": round(frames / elapsed, 1),
        "mean_frame_bytes": round(mean_frame, 2),
        "line_frames_per_s": round(line_fps, 1),
        "line_rate_multiple": round(frames / elapsed / line_fps, 2),
        "daemon_cpu_share": round(daemon_cpu / elapsed, 2),
        # The simulated table runs in this process: when its share nears 1 while the
        # daemon's does not, the table is what limits the measured rate.
        "table_cpu_share": round(table_cpu / elapsed, 2),
        # What the daemon would carry with a core to itself: the measured multiple over
        # its CPU share (frames per daemon CPU-second against the line's frames/s).
        "line_rate_multiple_daemon_bound": round(frames / max(daemon_cpu, 1e-9) / line_fps, 1),
        "daemon_cpu_us_per_press": round(daemon_cpu / presses * 1e6, 1),
        "journal_bytes_per_press": round(written / presses, 1),
        "idle_s": idle_s,
        "idle_bytes_written": idle_written,
        "retransmits": after["retransmits"] - before["retransmits"],
    }


#: Presses before the measured burst with the C table (the daemon's caches and the pty).
C_WARMUP = 500


async def bench_pipelined_c(presses: int, tmp: Path) -> dict[str, Any]:
    """Score-page presses kept ``PIPELINE`` deep by the C firmware's POSIX port to a
    ``tablectl run`` process on its pty."""
    table = CTable()
    try:
        url = await table.start()
    except CTableError as exc:
        await table.close()
        return {"error": str(exc)}
    config = common.write_config(tmp, url, PIPELINED_PRESET, tmp / "pipe-c.sqlite3", "pipe-c")
    proc = await common.start_daemon(config, tmp / "pipelined-c.log")
    try:
        await table.wait_for(
            lambda lines: (
                lines[0][0].startswith("ROLL?") and all(lines[s][0] for s in PIPELINED_SEATS)
            )
        )
        await table.burst(C_WARMUP, PIPELINE, Key.DIGIT_0, PIPELINED_SEATS)
        cpu_before = common.cpu_s(proc.pid)
        burst = await table.burst(presses, PIPELINE, Key.DIGIT_0, PIPELINED_SEATS)
        daemon_cpu = common.cpu_s(proc.pid) - cpu_before
    finally:
        await common.stop_daemon(proc)
        await table.close()
    if burst.ended != "done":
        return {"error": f"the burst {burst.ended} after {burst.answered} of {presses} presses"}
    elapsed = burst.elapsed_s
    mean_frame = burst.nbytes / burst.frames
    line_fps = common.LINE_BYTES_PER_S / mean_frame
    return {
        "presses": presses,
        "elapsed_s": round(elapsed, 3),
        "presses_per_s": round(presses / elapsed, 1),
        "frames": burst.frames,
        "frames_per_s": round(burst.frames / elapsed, 1),
        "mean_frame_bytes": round(mean_frame, 2),
        "line_frames_per_s": round(line_fps, 1),
        "line_rate_multiple": round(burst.frames / elapsed / line_fps, 2),
        "daemon_cpu_share": round(daemon_cpu / elapsed, 2),
        "line_rate_multiple_daemon_bound": round(
            burst.frames / max(daemon_cpu, 1e-9) / line_fps, 1
        ),
        "daemon_cpu_us_per_press": round(daemon_cpu / presses * 1e6, 1),
        # Each press's round trip (press to its display) with PIPELINE presses queued.
        "press_round_trip": common.summary_us(burst.samples_ns),
    }


async def run(
    games_per_preset: int,
    presets: list[str],
    presses: int,
    idle_s: float = 10.0,
    c_firmware: bool = True,
) -> dict[str, Any]:
    """Both transports and the pipelined runs; the pty games are the headline games/s,
    the pipelined run with the C firmware as the table the headline capacity."""
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as folder:
        tmp = Path(folder)
        in_process = pty = None
        if games_per_preset:
            in_process = await bench_transport("sim", presets, games_per_preset, tmp)
            pty = await bench_transport("pty", presets, games_per_preset, tmp)
        pipelined = await bench_pipelined(presses, tmp, idle_s) if presses else None
        pipelined_c = await bench_pipelined_c(presses, tmp) if presses and c_firmware else None
    c_ok = pipelined_c is not None and "error" not in pipelined_c
    return {
        "games_per_s": pty["games_per_s"] if pty else None,
        "games_per_s_in_process": in_process["games_per_s"] if in_process else None,
        "line_rate_multiple": pty["line_rate_multiple"] if pty else None,
        "line_rate_multiple_pipelined": pipelined["line_rate_multiple"] if pipelined else None,
        "line_rate_multiple_pipelined_c": pipelined_c["line_rate_multiple"] if c_ok else None,
        "presets": presets,
        "in_process": in_process,
        "pty": pty,
        "pipelined": pipelined,
        "pipelined_c": pipelined_c,
    }


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-preset", type=int, default=3)
    parser.add_argument(
        "--presets", default="all", help="comma-separated preset names (default: all ten)"
    )
    parser.add_argument(
        "--presses", type=int, default=20000, help="pipelined presses (0: skip that run)"
    )
    parser.add_argument(
        "--idle-s", type=float, default=10.0, help="seconds of idle after the presses"
    )
    parser.add_argument(
        "--no-c-firmware", action="store_true", help="skip the pipelined run with the C table"
    )
    args = parser.parse_args()
    if args.games_per_preset < 0 or args.presses < 0 or args.idle_s < 0:
        parser.error("sizes must not be negative")
    presets = list(common.PRESETS) if args.presets == "all" else args.presets.split(",")
    result = asyncio.run(
        run(args.games_per_preset, presets, args.presses, args.idle_s, not args.no_c_firmware)
    )
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    main()
