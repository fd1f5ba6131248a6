"""Soak: seeded games under faults end with exactly the scores of the fault-free game.

Run from the repository root::

    .venv/bin/python bench/soak.py [--games 1000] [--first-seed 0] [--workers 2]
        [--unplug-every 50] [--kill-every 100] [--reboot-every 200]

Seed ``s`` plays preset ``s mod 10`` (``tablectl rules list`` order), one game per seed.
For every seed:

1. **Reference**: the fault-free game, ``SimTable(preset, seed, max_games=1)`` with the
   daemon in this process over ``sim://`` (claim window 0.05 s). It gives the final scores
   and ranking, and the simulator's event count at each hand's ``DiceResult`` (where each
   hand starts, in events the table sent).
2. **Faulty run**: the same seed with ``SimTable(..., faults=SPEC)`` on TCP loopback and
   the daemon as a real ``tablectl run`` process (its own journal). SPEC always has
   ``corrupt=0.01,drop=0.01`` (1 % of frames written by the table get a bit flipped, 1 %
   are lost, and the same for chunks it reads); the harness counts hands across the games
   of a worker and, every ``--unplug-every`` hands adds ``unplug@N`` (the cable is out for
   1 s: the TCP connection closes and none is accepted), every ``--reboot-every`` hands
   ``reboot@N`` (new boot id, displays forgotten), and every ``--kill-every`` hands the
   harness sends SIGKILL to the daemon when the table has sent N events and starts a new
   ``tablectl run`` on the same journal. N is a seeded point inside that hand (from the
   reference's hand starts).
3. The journal's record of the game (``tablectl records``) must have the reference's
   scores and ranking. Anything else (another score, no record, a timeout) is a mismatch.

With ``--workers W`` the seeds are split into W consecutive blocks, each run by a child
``soak.py`` (hands counted per block). Prints one JSON object: games, mismatches (each with
seed, preset and what differed), faults fired, link repairs and timing.

``--tiles`` runs the tile soak instead (``bench/_tilesoak.py``): games at a table that
reads every tile, with reader faults, misreads and bursts of random keys on a bot's seat
besides kill -9, unplugs and reboots (the ``--*-every`` periods then count games of a
block), checked for stalls and for
mismatches between the live table, the journal, its replay and the exports::

    .venv/bin/python bench/soak.py --tiles [--games 300] [--workers 2]
        [--kill-every 3] [--unplug-every 4] [--reboot-every 5] [--reader-every 2]
        [--misread-every 3] [--keys-every 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common as common
import _tilesoak as tilesoak

from firmware_bridge.messages import DiceResult, Message
from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.records import list_records
from tablectl.rules.loader import load_rules

LINE_FAULTS = "corrupt=0.01,drop=0.01"
GAME_TIMEOUT_S = 300.0
REFERENCE_TIMEOUT_S = 60.0


@dataclass
class Reference:
    """The fault-free game of one seed."""

    scores: list[int]
    ranking: list[int]
    hand_starts: list[int]
    events: int
    #: Each seat's P and net chips (issue #28; empty at a preset without money, as a
    #: record has them).
    p: list[int]
    chips: list[int]


@dataclass
class Schedule:
    """Hands counted across a worker's games, and every fault kind's period in hands."""

    periods: dict[str, int]
    hands_before: int = 0
    fired: dict[str, int] = field(default_factory=dict)

    def points(self, seed: int, ref: Reference) -> dict[str, list[int]]:
        """Event counts at which each fault kind fires in this game; advances the count."""
        hands = len(ref.hand_starts)
        bounds = [*ref.hand_starts, ref.events]
        out: dict[str, list[int]] = {}
        for kind, period in self.periods.items():
            points = []
            if period > 0:
                first = (self.hands_before // period + 1) * period  # global hand, 1-based
                for global_hand in range(first, self.hands_before + hands + 1, period):
                    local = global_hand - self.hands_before - 1
                    start, end = bounds[local], bounds[local + 1]
                    rng = random.Random(f"soak:{seed}:{kind}:{global_hand}")
                    points.append(start + rng.randrange(max(1, end - start)))
            out[kind] = points
        self.hands_before += hands
        return out


async def reference(preset: str, seed: int, tmp: Path) -> Reference:
    """Play the fault-free game of ``seed`` (daemon in this process, ``sim://``)."""
    house = load_rules(preset)
    sim = SimTable(house, seed, max_games=1)
    starts: list[int] = []

    def on_message(direction: str, msg: Message) -> None:
        if direction == "tx" and isinstance(msg, DiceResult):
            starts.append(sim.firmware.events_sent)

    sim.firmware.add_listener(on_message)
    url = await sim.start_sim(f"soak-ref-{seed}")
    results: list[dict[str, Any]] = []
    config = config_for(url, preset, tmp / f"ref-{seed}.sqlite3", table_id="soak-ref")
    daemon = Daemon(
        config,
        claim_window_s=common.FAST_CLAIM_S,
        max_games=1,
        on_game=lambda table, result: results.append(result),
    )
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(REFERENCE_TIMEOUT_S):
            await sim.wait_games(1)
        events = sim.firmware.events_sent
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    final = results[0]["final"]
    money = final.get("money") or {"total": [], "chips": []}
    return Reference(
        final["scores"], final["ranking"], starts, events, money["total"], money["chips"]
    )


async def faulty(
    preset: str, seed: int, points: dict[str, list[int]], tmp: Path, game_s: float
) -> dict[str, Any]:
    """The same seed under line faults, unplugs, reboots and kill -9; what the journal says."""
    spec = ",".join(
        [LINE_FAULTS]
        + [f"unplug@{n}" for n in points["unplug"]]
        + [f"reboot@{n}" for n in points["reboot"]]
    )
    sim = SimTable(load_rules(preset), seed, max_games=1, faults=spec)
    planned = len(sim.firmware.faults.one_shots)
    fw = sim.firmware
    port = await sim.start_tcp(0)
    journal = tmp / f"soak-{seed}.sqlite3"
    log = tmp / f"soak-{seed}.log"
    config = common.write_config(tmp, f"socket://127.0.0.1:{port}", preset, journal, f"soak-{seed}")
    kill_at = list(points["kill"])
    daemon = common.KilledDaemon(fw, config, log, kill_at)
    await daemon.start()
    start = time.perf_counter()
    error = None
    try:
        async with asyncio.timeout(game_s):
            await sim.wait_games(1)
    except (TimeoutError, RuntimeError) as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    finally:
        elapsed = time.perf_counter() - start
        await daemon.stop()
        await sim.close()
    records = []
    if journal.exists():
        with Journal.open(journal) as j:
            records = list_records(j)
    lines = fw.lines
    return {
        "error": error,
        "records": [(list(r.scores), list(r.ranking), list(r.p), list(r.chips)) for r in records],
        "elapsed_s": elapsed,
        "kills": daemon.kills,
        "one_shots_fired": planned - len(fw.faults.one_shots),
        "reboots": fw.boots - 1,
        "connections": len(lines),
        "frames_dropped": sum(line.stats.dropped for line in lines),
        "frames_flipped": sum(line.stats.flipped for line in lines),
        "rx_spoiled": sum(line.rx_spoiled for line in lines),
        "bot_stalls": sim.bots.stalls if sim.bots is not None else 0,
        "log": log,
    }


async def run_block(
    first: int,
    games: int,
    periods: dict[str, int],
    keep: Path | None,
    game_s: float = GAME_TIMEOUT_S,
    only: int | None = None,
) -> dict[str, Any]:
    """Seeds ``first .. first + games - 1`` in order, hands counted across them (with
    ``only``, just that seed's faulty run, with the faults it gets in the whole block)."""
    schedule = Schedule(periods)
    mismatches: list[dict[str, Any]] = []
    totals = {
        "kills": 0, "unplugs": 0, "reboots": 0, "connections": 0, "frames_dropped": 0,
        "frames_flipped": 0, "rx_spoiled": 0, "bot_stalls": 0,
    }  # fmt: skip
    hands = 0
    faulty_s = reference_s = 0.0
    for seed in range(first, first + games):
        preset = common.preset_for(seed)
        with tempfile.TemporaryDirectory(prefix="bench-soak-") as folder:
            tmp = Path(folder)
            t0 = time.perf_counter()
            ref = await reference(preset, seed, tmp)
            reference_s += time.perf_counter() - t0
            points = schedule.points(seed, ref)
            hands += len(ref.hand_starts)
            if only is not None and seed != only:
                continue
            got = await faulty(preset, seed, points, tmp, game_s)
            faulty_s += got["elapsed_s"]
            totals["kills"] += got["kills"]
            totals["reboots"] += got["reboots"]
            totals["unplugs"] += got["one_shots_fired"] - got["reboots"]
            for key in ("connections", "frames_dropped", "frames_flipped", "rx_spoiled"):
                totals[key] += got[key]
            totals["bot_stalls"] += got["bot_stalls"]
            expected = (ref.scores, ref.ranking, ref.p, ref.chips)
            if got["error"] is not None or got["records"] != [expected]:
                entry = {
                    "seed": seed,
                    "preset": preset,
                    "error": got["error"],
                    "expected": {
                        "scores": ref.scores,
                        "ranking": ref.ranking,
                        "p": ref.p,
                        "chips": ref.chips,
                    },
                    "got": got["records"],
                    "faults": points,
                    "kills": got["kills"],
                }
                if keep is not None:
                    common.keep_log(got["log"], keep / f"soak-{seed}-{preset}.log")
                mismatches.append(entry)
                print(f"soak: MISMATCH {json.dumps(entry)}", file=sys.stderr)
    return {
        "soak_games": games if only is None else 1,
        "soak_mismatches": len(mismatches),
        "hands": hands,
        "faulty_s": faulty_s,
        "reference_s": reference_s,
        **totals,
        "mismatches": mismatches,
    }


def _merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            if key in ("machine", "first_seed", "workers", "faults", "wall_s"):
                continue  # the block's settings, not figures to add up
            if isinstance(value, list):
                merged.setdefault(key, []).extend(value)
            elif isinstance(value, dict):
                into = merged.setdefault(key, {})
                for name, count in value.items():
                    into[name] = into.get(name, 0) + count
            elif isinstance(value, int | float):
                merged[key] = merged.get(key, 0) + value
    return merged


async def _in_workers(
    games: int,
    first_seed: int,
    workers: int,
    options: list[str],
    keep: Path | None,
    game_s: float,
) -> dict[str, Any]:
    """Run this script in ``workers`` child processes (``options`` say which soak), each a
    block of consecutive seeds from ``first_seed``; their figures merged."""
    sizes = [games // workers + (1 if i < games % workers else 0) for i in range(workers)]
    procs = []
    seed = first_seed
    for size in sizes:
        args = [
            sys.executable, __file__, *options, "--games", str(size), "--first-seed", str(seed),
            "--workers", "1", "--timeout", str(game_s),
        ]  # fmt: skip
        if keep is not None:
            args += ["--keep-logs", str(keep)]
        procs.append(await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE))
        seed += size
    outputs = [await p.communicate() for p in procs]
    return _merge([json.loads(out.decode().strip().splitlines()[-1]) for out, _ in outputs])


async def run(
    games: int,
    first_seed: int,
    periods: dict[str, int],
    workers: int = 1,
    keep: Path | None = None,
    game_s: float = GAME_TIMEOUT_S,
    only: int | None = None,
) -> dict[str, Any]:
    """The soak, in one block or in ``workers`` child processes; merged figures."""
    start = time.perf_counter()
    if workers <= 1:
        result = await run_block(first_seed, games, periods, keep, game_s, only)
    else:
        options = [
            "--unplug-every", str(periods["unplug"]), "--kill-every", str(periods["kill"]),
            "--reboot-every", str(periods["reboot"]),
        ]  # fmt: skip
        result = await _in_workers(games, first_seed, workers, options, keep, game_s)
    wall = time.perf_counter() - start
    return {
        "soak_games": result["soak_games"],
        "soak_mismatches": result["soak_mismatches"],
        "first_seed": first_seed,
        "workers": workers,
        "faults": {"line": LINE_FAULTS, **{f"{k}_every_hands": v for k, v in periods.items()}},
        "wall_s": round(wall, 1),
        **{k: v for k, v in result.items() if k not in ("soak_games", "soak_mismatches")},
    }


async def run_tiles(
    games: int,
    first_seed: int,
    periods: tilesoak.Periods,
    workers: int = 1,
    keep: Path | None = None,
    game_s: float = tilesoak.GAME_TIMEOUT_S,
    only: int | None = None,
) -> dict[str, Any]:
    """The tile soak, in one block or in ``workers`` child processes; merged figures."""
    start = time.perf_counter()
    if workers <= 1 or only is not None:
        result = await tilesoak.run_tile_block(first_seed, games, periods, keep, game_s, only)
    else:
        options = ["--tiles", *(f"--{kind}-every={n}" for kind, n in periods.as_dict().items())]
        result = await _in_workers(games, first_seed, workers, options, keep, game_s)
    return {
        "tile_games": result["tile_games"],
        "tile_stalls": result["tile_stalls"],
        "tile_mismatches": result["tile_mismatches"],
        "first_seed": first_seed,
        "workers": workers,
        "faults": {
            "line": tilesoak.LINE_FAULTS,
            **{f"{k}_every_games": v for k, v in periods.as_dict().items()},
        },
        "wall_s": round(time.perf_counter() - start, 1),
        **{k: v for k, v in result.items() if not k.startswith("tile_")},
    }


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiles", action="store_true", help="the tile soak (see above)")
    parser.add_argument("--games", type=int, default=None, help="default 1000 (tiles: 300)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    tiles = tilesoak.Periods()
    unit = "hands; --tiles: games (0: never)"
    parser.add_argument(
        "--unplug-every", type=int, help=f"{unit}; default 50, tiles {tiles.unplug}"
    )
    parser.add_argument("--kill-every", type=int, help=f"{unit}; default 100, tiles {tiles.kill}")
    parser.add_argument(
        "--reboot-every", type=int, help=f"{unit}; default 200, tiles {tiles.reboot}"
    )
    parser.add_argument("--reader-every", type=int, default=tiles.reader, help="--tiles: games")
    parser.add_argument("--misread-every", type=int, default=tiles.misread, help="--tiles: games")
    parser.add_argument(
        "--keys-every", type=int, default=tiles.keys, help="--tiles: games (random keys on a seat)"
    )
    parser.add_argument("--keep-logs", type=Path, help="copy daemon logs of mismatches here")
    parser.add_argument(
        "--timeout", type=float, default=GAME_TIMEOUT_S, help="s for one faulty game"
    )
    parser.add_argument(
        "--only", type=int, help="reproduce one seed: run only its faulty game (one worker)"
    )
    args = parser.parse_args()
    for name in ("games", "unplug_every", "kill_every", "reboot_every", "reader_every",
                 "misread_every", "keys_every"):  # fmt: skip
        value = getattr(args, name)
        if value is not None and value < 0:
            parser.error(f"--{name.replace('_', '-')} is {value}; 0 or more")
    if args.tiles:

        def given(value: int | None, default: int) -> int:
            return default if value is None else value

        periods_t = tilesoak.Periods(
            kill=given(args.kill_every, tiles.kill),
            unplug=given(args.unplug_every, tiles.unplug),
            reboot=given(args.reboot_every, tiles.reboot),
            reader=args.reader_every,
            misread=args.misread_every,
            keys=args.keys_every,
        )
        games = 300 if args.games is None else args.games
        result_t = asyncio.run(
            run_tiles(
                games,
                args.first_seed,
                periods_t,
                args.workers,
                args.keep_logs,
                args.timeout,
                args.only,
            )  # fmt: skip
        )
        print(json.dumps(common.rounded({"machine": common.machine(), **result_t}, 2), default=str))
        return
    periods = {
        "unplug": 50 if args.unplug_every is None else args.unplug_every,
        "kill": 100 if args.kill_every is None else args.kill_every,
        "reboot": 200 if args.reboot_every is None else args.reboot_every,
    }
    args.games = 1000 if args.games is None else args.games
    result = asyncio.run(
        run(
            args.games,
            args.first_seed,
            periods,
            args.workers,
            args.keep_logs,
            args.timeout,
            args.only,
        )  # fmt: skip
    )
    print(json.dumps(common.rounded({"machine": common.machine(), **result}, 2)))


if __name__ == "__main__":
    main()
