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

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.rules.loader import load_rules

GAME_TIMEOUT_S = 120


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


async def run(games_per_preset: int, presets: list[str]) -> dict[str, Any]:
    """Both transports; the pty figures are the headline ones (the daemon's real path)."""
    with tempfile.TemporaryDirectory(prefix="bench-throughput-") as folder:
        tmp = Path(folder)
        in_process = await bench_transport("sim", presets, games_per_preset, tmp)
        pty = await bench_transport("pty", presets, games_per_preset, tmp)
    return {
        "games_per_s": pty["games_per_s"],
        "games_per_s_in_process": in_process["games_per_s"],
        "line_rate_multiple": pty["line_rate_multiple"],
        "presets": presets,
        "in_process": in_process,
        "pty": pty,
    }


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-preset", type=int, default=3)
    parser.add_argument(
        "--presets", default="all", help="comma-separated preset names (default: all ten)"
    )
    args = parser.parse_args()
    presets = list(common.PRESETS) if args.presets == "all" else args.presets.split(",")
    result = asyncio.run(run(args.games_per_preset, presets))
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    main()
