"""Scoring a win from its tiles (issue 16): hands per second and the time per call.

Run from the repository root::

    .venv/bin/python bench/tiles_scoring.py [--hands 3000] [--seed 1]

For every preset, ``--hands`` random complete hands (tests/tiles/random_hands.py: sets
and a pair with calls and kans, seven pairs, thirteen orphans; riichi, tsumo or ron, dora
indicators, pulled norths) are drawn first, then each is scored once with
:func:`tablectl.rules.tilescoring.score_win`: hands per second, the p50/p99/max per call in
ms, and how many were refused (no yaku, sanma-free's atozuke).  About a third of random
hands have no yaku; a refusal costs a package call like a score.  The per-call figures
include whatever else the machine runs (a busy shared machine shows as a long tail); the
``best_of_3`` figures time each hand three times and keep the fastest: the scorer's own
cost per hand.  The load average is printed with them.

The first call's cost, in a fresh interpreter (bytecode cached): importing the scorer
(the ``mahjong`` package with it) and the first ``score_win``, the median of
``--starts`` spawns.  The target is that scoring adds no more than 20 ms to the
key-to-display path on this machine.  Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's tablectl, and the hands of tests/tiles

import _common as common  # noqa: E402

from tablectl.rules.loader import load_rules, preset_names  # noqa: E402
from tablectl.rules.refusal import Refusal  # noqa: E402
from tests.tiles.random_hands import random_win  # noqa: E402

FIRST_CALL = """
import json, random, time
t0 = time.perf_counter()
from tablectl.rules.tilescoring import score_win
t1 = time.perf_counter()
from tablectl.rules.loader import load_rules
from tests.tiles.random_hands import random_win
house = load_rules("tenhou")
ctx = random_win(random.Random(0), house)
t2 = time.perf_counter()
score_win(house, ctx)
t3 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1000, "first_call_ms": (t3 - t2) * 1000}))
"""


def per_preset(hands: int, seed: int) -> dict[str, dict[str, float]]:
    """Per preset: hands/s, p50/p99/max ms per call, refusals by code."""
    from tablectl.rules.tilescoring import score_win

    out: dict[str, dict[str, float]] = {}
    for name in preset_names():
        house = load_rules(name)
        rng = random.Random(seed)
        wins = [random_win(rng, house) for _ in range(hands)]
        score_win(house, wins[0])  # the preset's options are built once
        samples: list[int] = []
        refused: dict[str, int] = {}
        start = time.perf_counter()
        for ctx in wins:
            t0 = time.perf_counter_ns()
            result = score_win(house, ctx)
            samples.append(time.perf_counter_ns() - t0)
            if isinstance(result, Refusal):
                refused[result.code] = refused.get(result.code, 0) + 1
        total = time.perf_counter() - start
        best = [min(_timed(score_win, house, ctx) for _ in range(3)) for ctx in wins]
        us, best_us = common.summary_us(samples), common.summary_us(best)
        out[name] = {
            "hands_per_s": round(hands / total),
            "p50_ms": round(us["p50_us"] / 1000, 3),
            "p99_ms": round(us["p99_us"] / 1000, 3),
            "max_ms": round(us["max_us"] / 1000, 3),
            "best_of_3_p99_ms": round(best_us["p99_us"] / 1000, 3),
            "best_of_3_max_ms": round(best_us["max_us"] / 1000, 3),
            **{f"refused_{code}": n for code, n in sorted(refused.items())},
        }
    return out


def _timed(fn: Callable[..., object], *args: object) -> int:
    t0 = time.perf_counter_ns()
    fn(*args)
    return time.perf_counter_ns() - t0


def first_call(starts: int) -> dict[str, float]:
    """Median import and first-call ms over ``starts`` fresh interpreters."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = []
    for _ in range(starts + 1):  # the first spawn fills the bytecode cache
        done = subprocess.run(
            [sys.executable, "-c", FIRST_CALL], env=env, cwd=ROOT, capture_output=True,
            text=True, check=True,
        )  # fmt: skip
        runs.append(json.loads(done.stdout))
    runs = runs[1:]
    return {
        key: round(statistics.median(r[key] for r in runs), 2)
        for key in ("import_ms", "first_call_ms")
    }


def main() -> None:
    """Parse, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    if args.hands < 1 or args.starts < 1:
        parser.error("--hands and --starts must be at least 1")
    cold = first_call(args.starts)
    presets = per_preset(args.hands, args.seed)
    print(json.dumps({
        "machine": common.machine(),
        "loadavg_1min": round(os.getloadavg()[0], 2),
        "hands": args.hands,
        "first": cold,
        "presets": presets,
        "p99_ms_max": max(p["p99_ms"] for p in presets.values()),
        "hands_per_s_min": min(p["hands_per_s"] for p in presets.values()),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
