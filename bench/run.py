"""All end-to-end benchmarks in a row; one JSON object with the headline figures.

Run from the repository root::

    .venv/bin/python bench/run.py --quick     # a short version of each, under two minutes
    .venv/bin/python bench/run.py             # the full sizes (long: see docs/performance.md)

Sizes (full / ``--quick``): latency 10,000 / 2,000 DIGIT_0 presses each against the daemon
and the echo floor, plus 3 / 1 autoplayed games for the journalled take, each again with
the C firmware as the table (and 1,500 / 300 journalled takes); throughput 3 / 1
games per preset (all ten / five presets) in process and over a pty, and 20,000 / 3,000
pipelined score-page presses from the simulator and from the C firmware; footprint 1,000 / 10
games against one ``tablectl run`` process; soak 1,000 / 3 seeded games under faults (the
quick soak fires the one-shot faults more often, every 6 / 5 / 12 hands for unplug /
kill -9 / reboot, so that each kind happens, and gives a game 45 s); dashboard 20 tables,
60 / 10 s at human pace then as many at bot speed (it needs Mosquitto and Chromium;
without them its figures are null and ``details.dashboard.error`` says why).

The headline keys are the issue's: ``latency_p99_us``, ``echo_p99_us``, ``latency_ratio``,
``games_per_s``, ``line_rate_multiple``, ``rss_mb_start``, ``rss_mb_after``,
``start_to_display_s``, ``soak_games``, ``soak_mismatches``, and the parlor dashboard's
``dashboard_human_p99_ms``, ``dashboard_bot_p99_ms``, ``dashboard_human_cpu_pct``,
``dashboard_rss_mb``; each benchmark's own JSON is under ``details``. Keys ending in ``_c``
are measured with the C firmware's POSIX port as the table (``make -C firmware``; without
a C compiler they are None and ``details.throughput.pipelined_c.error`` says why).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import _common as common
import dashboard
import footprint
import latency
import soak
import startup
import throughput

#: A Raspberry Pi 4 (Cortex-A72, 1.5 GHz) runs this daemon's CPython code about this many
#: times slower than the machine the figures come from: an estimate, see
#: docs/performance.md ("A Pi-class board") for how it was derived.
PI_FACTOR = 4.5

QUICK = {
    "presses": 2000,
    "latency_games": 1,
    "games_per_preset": 1,
    "presets": ["ariari", "jboy-sanma", "kantan", "mleague", "tenhou"],
    "pipelined_presses": 3000,
    "c_takes": 300,
    "footprint_games": 10,
    "soak_games": 3,
    "soak_periods": {"unplug": 6, "kill": 5, "reboot": 12},
    "soak_timeout": 45.0,
    "soak_workers": 1,
    "idle_s": 10.0,
    "starts": 5,
    "dashboard_tables": 20,
    "dashboard_phase_s": 10.0,
}
FULL = {
    "presses": 10000,
    "latency_games": 3,
    "games_per_preset": 3,
    "presets": list(common.PRESETS),
    "pipelined_presses": 20000,
    "c_takes": 1500,
    "footprint_games": 1000,
    "soak_games": 1000,
    "soak_periods": {"unplug": 50, "kill": 100, "reboot": 200},
    "soak_timeout": soak.GAME_TIMEOUT_S,
    "soak_workers": 2,
    "idle_s": 60.0,
    "starts": 5,
    "dashboard_tables": 20,
    "dashboard_phase_s": 60.0,
}


def run(sizes: dict[str, Any]) -> dict[str, Any]:
    """Each benchmark in turn (its own event loop); the merged result."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    lat = asyncio.run(latency.run(sizes["presses"], sizes["latency_games"], sizes["c_takes"]))
    timings["latency_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    thr = asyncio.run(
        throughput.run(
            sizes["games_per_preset"],
            sizes["presets"],
            sizes["pipelined_presses"],
            sizes["idle_s"],
        )
    )
    timings["throughput_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    foot = asyncio.run(footprint.run(sizes["footprint_games"], "tenhou"))
    timings["footprint_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    start = asyncio.run(startup.run(sizes["starts"], "tenhou"))
    timings["startup_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    soaked = asyncio.run(
        soak.run(
            sizes["soak_games"],
            0,
            sizes["soak_periods"],
            sizes["soak_workers"],
            game_s=sizes["soak_timeout"],
        )
    )
    timings["soak_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    phase_s = sizes["dashboard_phase_s"]
    try:
        dash = asyncio.run(dashboard.run(sizes["dashboard_tables"], phase_s, phase_s))
    except dashboard.CannotStart as exc:
        dash = {"error": str(exc)}
    timings["dashboard_s"] = time.perf_counter() - t0
    pipelined = thr["pipelined"] or {}
    pipelined_c = thr["pipelined_c"] or {}
    cpu_us = pipelined.get("daemon_cpu_us_per_press")
    return {
        "latency_p99_us": lat["latency_p99_us"],
        "echo_p99_us": lat["echo_p99_us"],
        "latency_ratio": lat["latency_ratio"],
        "games_per_s": thr["games_per_s"],
        "line_rate_multiple": thr["line_rate_multiple"],
        "line_rate_multiple_pipelined": thr["line_rate_multiple_pipelined"],
        "line_rate_multiple_daemon_bound": pipelined.get("line_rate_multiple_daemon_bound"),
        "line_rate_multiple_pipelined_c": thr["line_rate_multiple_pipelined_c"],
        "line_rate_multiple_daemon_bound_c": pipelined_c.get("line_rate_multiple_daemon_bound"),
        "daemon_cpu_us_per_press": cpu_us,
        "daemon_cpu_us_per_press_c": pipelined_c.get("daemon_cpu_us_per_press"),
        "pi_estimate_cpu_us_per_press": round(cpu_us * PI_FACTOR, 1) if cpu_us else None,
        "pi_estimate_factor": PI_FACTOR,
        "cpu_probe_us": common.cpu_probe_us(),
        "journal_bytes_per_press": pipelined.get("journal_bytes_per_press"),
        "idle_bytes_written": pipelined.get("idle_bytes_written"),
        "idle_s": pipelined.get("idle_s"),
        "journalled_p50_us": lat.get("journalled_p50_us"),
        "journalled_p99_us": lat.get("journalled_p99_us"),
        "journalled_floor_us": lat["journalled_floor_us"],
        "journalled_ratio": lat.get("journalled_ratio"),
        "echo_p99_us_c": lat.get("echo_p99_us_c"),
        "latency_p99_us_c": lat.get("latency_p99_us_c"),
        "journalled_p50_us_c": lat.get("journalled_p50_us_c"),
        "journalled_p99_us_c": lat.get("journalled_p99_us_c"),
        "journalled_floor_us_c": lat.get("journalled_floor_us_c"),
        "journalled_ratio_c": lat.get("journalled_ratio_c"),
        "fsync_p50_us": lat["fsync"]["p50_us"],
        "rss_mb_start": foot["rss_mb_start"],
        "rss_mb_after": foot["rss_mb_after"],
        "start_to_display_s": start["start_to_display_s"],
        "start_to_display_cold_s": start["start_to_display_cold_s"],
        "soak_games": soaked["soak_games"],
        "soak_mismatches": soaked["soak_mismatches"],
        "dashboard_human_p99_ms": dash.get("human_p99_ms"),
        "dashboard_bot_p99_ms": dash.get("bot_p99_ms"),
        "dashboard_human_cpu_pct": dash.get("human_cpu_pct"),
        "dashboard_rss_mb": dash.get("rss_mb_peak"),
        "machine": common.machine(),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "details": {
            "latency": lat,
            "throughput": thr,
            "footprint": foot,
            "startup": start,
            "soak": common.rounded(soaked, 2),
            "dashboard": dash,
        },
    }


def main() -> None:
    """Parse ``--quick``, run everything, print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short sizes (under 2 minutes)")
    args = parser.parse_args()
    print(json.dumps(run(QUICK if args.quick else FULL)))


if __name__ == "__main__":
    main()
