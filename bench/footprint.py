"""Footprint: the daemon's memory, start-up time and CPU time per hand.

Run from the repository root::

    .venv/bin/python bench/footprint.py [--games 1000] [--preset tenhou]

The daemon is a real ``tablectl run --config ...`` process whose device is the pty of a
simulated table (this process, bots on every seat, speed 0) playing ``--games`` games in
a row (one journal). Measured on the daemon process:

* ``start_to_display_s``: from spawning the process to the first ``SeatDisplay`` arriving
  at the simulated firmware (interpreter start, imports, journal open, link handshake,
  first hand set up);
* ``rss_mb_start``: VmRSS (``/proc/PID/status``) when that first display arrived;
  ``rss_mb_first_game`` after the first game; ``rss_mb_after`` after the last; the series
  after every 10 % of the games, ``rss_growth_mb`` = after - first game, and
  ``rss_growth_second_half_mb`` = after - at half the games (the steady state);
* ``cpu_ms_per_hand``: utime + stime (``/proc/PID/stat``) from the first display to the
  last game over, divided by the hands in the journal (one ``dice`` event per hand);
* ``frames_per_cpu_s``: frames through the daemon's link (counted at the simulator's end
  of the link, which sees the same frames) per second of the daemon's CPU time: what one
  core could carry if nothing else waited; and its multiple of a 115200-baud line's frame
  rate (the games themselves are lock-step, see docs/performance.md).

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

from firmware_bridge.messages import Message, SeatDisplay
from hw_sim import SimTable

SEED = 3
START_TIMEOUT_S = 30.0


async def run(games: int, preset: str) -> dict[str, Any]:
    """Play ``games`` games against one ``tablectl run`` process; the figures."""
    with tempfile.TemporaryDirectory(prefix="bench-footprint-") as folder:
        tmp = Path(folder)
        sim = SimTable(preset, SEED, max_games=games)
        url = await sim.start_pty()
        journal = tmp / "footprint.sqlite3"
        config = common.write_config(tmp, url, preset, journal, "footprint")
        first_display = asyncio.get_running_loop().create_future()

        def on_message(direction: str, msg: Message) -> None:
            if direction == "rx" and isinstance(msg, SeatDisplay) and not first_display.done():
                first_display.set_result(time.perf_counter())

        sim.firmware.add_listener(on_message)
        spawned = time.perf_counter()
        proc = await common.start_daemon(config, tmp / "footprint.log")
        series: list[list[float]] = []
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                displayed = await first_display
            rss_start = common.rss_mb(proc.pid)
            cpu_start = common.cpu_s(proc.pid)
            link = sim.firmware.link
            assert link is not None
            frames_start = link.stats.frames_in + link.stats.frames_out
            bytes_start = link.stats.bytes_in + link.stats.bytes_out
            play_start = time.perf_counter()
            step = max(1, games // 10)
            rss_first = 0.0
            for done in range(1, games + 1):
                async with asyncio.timeout(120):
                    await sim.wait_games(done)
                if done == 1:
                    rss_first = common.rss_mb(proc.pid)
                if done % step == 0 or done == games:
                    series.append([done, round(common.rss_mb(proc.pid), 2)])
            play_s = time.perf_counter() - play_start
            rss_after = common.rss_mb(proc.pid)
            cpu = common.cpu_s(proc.pid) - cpu_start
            frames = link.stats.frames_in + link.stats.frames_out - frames_start
            nbytes = link.stats.bytes_in + link.stats.bytes_out - bytes_start
        finally:
            await common.stop_daemon(proc)
            await sim.close()
        hands = common.journal_hands(journal)
    line_fps = common.LINE_BYTES_PER_S / (nbytes / frames)
    rss_values = [v for _, v in series]
    return {
        "rss_mb_start": round(rss_start, 2),
        "rss_mb_first_game": round(rss_first, 2),
        "rss_mb_after": round(rss_after, 2),
        "rss_growth_mb": round(rss_after - rss_first, 2),
        "rss_mb_max": round(max(rss_values + [rss_after]), 2),
        # Growth over the second half of the run: a steady state shows ~0 (the first games
        # warm caches up: SQLite's page cache, interned strings, the allocator's arenas).
        "rss_growth_second_half_mb": round(rss_after - rss_values[len(rss_values) // 2 - 1], 2)
        if len(rss_values) >= 2
        else None,
        "rss_series": series,
        "start_to_display_s": round(displayed - spawned, 3),
        "games": games,
        "hands": hands,
        "preset": preset,
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_hand": round(1000 * cpu / hands, 2),
        "play_s": round(play_s, 2),
        "games_per_s_two_processes": round(games / play_s, 3),
        "daemon_cpu_share": round(cpu / play_s, 3),
        "frames": frames,
        "frames_per_s": round(frames / play_s, 1),
        "frames_per_cpu_s": round(frames / cpu, 1),
        "line_frames_per_s": round(line_fps, 1),
        "line_rate_multiple_per_cpu_s": round(frames / cpu / line_fps, 2),
    }


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--preset", default="tenhou")
    args = parser.parse_args()
    result = asyncio.run(run(args.games, args.preset))
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    main()
