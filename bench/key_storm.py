"""Long mode of the console storm: random keys from every seat in every phase, across
all ten presets, with the invariants checked after every step (docs/performance.md).

Run from the repository root::

    .venv/bin/python bench/key_storm.py --keys 1000000     # the figure in the docs
    .venv/bin/python bench/key_storm.py --keys 20000       # a quick look

Each preset gets the same share of keys, in storms of ``--steps`` steps with seeds 0,
1, 2, ... (one seed is one reproducible storm: ``KeyStorm(preset, seed).run(steps)``).
Prints one JSON object: keys, steps, hands and games played, restarts, link drops, faults,
staff actions, replay checks, crashes (an exception out of the table) and invariant
failures, each failure with its preset, seed and step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's tablectl, and the storm of tests/storm.py

import _common as common  # noqa: E402

from tests.storm import InvariantBroken, KeyStorm  # noqa: E402


async def run(keys: int, steps: int) -> dict[str, Any]:
    """Storms over every preset until each has had ``keys / 10`` keys."""
    share = keys // len(common.PRESETS)
    totals: dict[str, Any] = {
        "keys": 0,
        "steps": 0,
        "hands": 0,
        "games": 0,
        "restarts": 0,
        "link_drops": 0,
        "faults": 0,
        "staff_actions": 0,
        "refusals": 0,
        "replay_checks": 0,
        "storms": 0,
        "crashes": 0,
        "inconsistencies": 0,
        "failures": [],
    }
    phases: dict[str, int] = {}
    started = time.perf_counter()
    for preset in common.PRESETS:
        seed = 0
        done = 0
        while done < share:
            storm = KeyStorm(preset, seed)
            try:
                stats = await storm.run(steps)
            except InvariantBroken as exc:
                cause = exc.__cause__
                kind = "inconsistencies" if isinstance(cause, InvariantBroken) else "crashes"
                totals[kind] += 1
                totals["failures"].append(str(exc)[:300])
                stats = storm.stats
            for key in ("keys", "steps", "restarts", "link_drops", "faults", "staff_actions"):
                totals[key] += getattr(stats, key)
            totals["refusals"] += stats.refusals
            totals["replay_checks"] += stats.replay_checks
            totals["games"] += stats.games
            totals["hands"] += sum(
                1
                for _ref, events, _status in storm.journal.games
                for e in events
                if type(e).__name__ in ("Ron", "Tsumo", "Draw", "Abort", "Chombo")
            )
            for phase, count in stats.phases.items():
                phases[phase] = phases.get(phase, 0) + count
            totals["storms"] += 1
            done += stats.keys
            seed += 1
    elapsed = time.perf_counter() - started
    totals["seconds"] = round(elapsed, 1)
    totals["keys_per_s"] = round(totals["keys"] / elapsed)
    totals["steps_in_phase"] = dict(sorted(phases.items()))
    totals["machine"] = common.machine()
    return totals


def main() -> None:
    """Parse the sizes, run, print one JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000, help="keys in all (default 10^6)")
    parser.add_argument("--steps", type=int, default=5000, help="steps per storm (one seed)")
    args = parser.parse_args()
    if args.keys < 1 or args.steps < 1:
        parser.error("--keys and --steps must be positive")
    print(json.dumps(asyncio.run(run(args.keys, args.steps))))


if __name__ == "__main__":
    main()
