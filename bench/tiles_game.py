"""A table that reads its tiles against a keyed one: what scoring costs at TSUMO, and what
a tile-aware game costs in journal bytes and memory.

Run from the repository root::

    .venv/bin/python bench/tiles_game.py [--presses 200] [--games 2]

**TSUMO to display.** The table controller (``tablectl.table.Table``) driven in this
process, no link (the link and pty add the same for both; ``bench/latency.py`` measures
them): five scripted hands (tests/tiles/kit.py layouts: ittsu, tanyao, chiitoitsu,
sanshoku, a value-tile hand), each dealt and played to the dealer's winning draw. One
sample is ``time.perf_counter_ns()`` just before the ``KeyPress(TSUMO)`` is handed to the
table to the ``SeatDisplay`` of the winner it posts: ``... OK?`` at a table that reads
every tile (the scorer: ``checks.win_context`` + ``scoring.score_win`` and the points),
``HAN?`` at the same table without the readers. CANCEL takes the win back between two
presses. ``--presses`` per hand and mode.

**A whole game.** hw_sim with its bots (seat readers: they play the tiles they hold) and
the daemon (``tablectl.daemon.Daemon``, journal on disk), one game per preset and mode,
each in its own process: ``tiles`` with the wall reader too (every hand tile-aware),
``keyed`` without it (the same bots; the daemon keys han, fu and tenpai). Reported: the
journal's event bytes (the JSON of every event) and file size, the number of events, and
the process's peak RSS (``ru_maxrss``: simulator, bots and daemon together).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: Dealer's 13 tiles and its winning second draw (it throws its first, 9s or 1z).
HANDS = (
    ("123m 456m 789m 123p 4p", "4p"),
    ("234m 567m 234p 678s 5s", "5s"),
    ("11m 22p 33s 44m 55p 66s 7z", "7z"),
    ("123m 123p 123s 789m 9p", "9p"),
    ("111z 234m 456p 789p 7s", "7s"),
)
PRESETS = ("tenhou", "sanma-free", "jboy")


async def _tsumo_samples(presses: int, reads_tiles: bool) -> list[int]:
    from firmware_bridge import messages as m
    from tablectl.console.tiles import TILE_CAPS
    from tests.daemon.test_tile_table import TileRig

    caps = TILE_CAPS if reads_tiles else m.Capability.WALL_TAKE_SENSORS
    samples: list[int] = []
    for hand, win in HANDS:
        first = "1z" if "9s" in hand or "7s" in hand else "9s"
        rig = TileRig(
            "tenhou", layout={"hands": {0: hand}, "draws": [first, "2z", "2z", "3z", win]}
        )
        await rig.up(caps)
        await rig.start_hand()
        if reads_tiles:
            await rig.discard(0)  # the discards are seen in the ponds
            await rig.go_round(1, 2, 3)
        else:
            for seat in (1, 2, 3):
                await rig.take(seat)  # the discards are inferred
        await rig.take(0)
        shown: list[int] = []
        posted = rig.table.post_command

        def post(msg: m.Message, shown: list[int] = shown, posted: Any = posted) -> None:
            entry = msg.line1.endswith("OK?") or msg.line1.startswith("HAN?")
            if isinstance(msg, m.SeatDisplay) and msg.seat == 0 and entry:
                shown.append(time.perf_counter_ns())
            posted(msg)

        rig.table.post_command = post
        for _ in range(presses):
            start = time.perf_counter_ns()
            await rig.key(0, m.Key.TSUMO)
            assert shown, rig.lines(0)
            samples.append(shown.pop() - start)
            await rig.key(0, m.Key.CANCEL)
    return samples


def _ms(samples: list[int]) -> dict[str, float]:
    ms = sorted(s / 1e6 for s in samples)
    qs = statistics.quantiles(ms, n=100, method="inclusive")
    return {"n": len(ms), "p50_ms": round(qs[49], 3), "p99_ms": round(qs[98], 3)}


async def _game(preset: str, mode: str, seed: int) -> dict[str, Any]:
    """One game in this process; the figures of :func:`main`'s child."""
    import firmware_bridge.link as link_mod
    from tests.sim.test_autoplay import play

    link_mod.LINK_TIMEOUT = 5.0
    link_mod.HANDSHAKE_TIMEOUT = 5.0
    readers = {"tile_reader": True, "seat_reader": True, "wall_reader": mode == "tiles"}
    with tempfile.TemporaryDirectory(prefix="tiles-game-") as tmp:
        await play(Path(tmp), preset, seed, **readers)
        events, event_bytes, size = _journal_figures(Path(tmp))
    return {
        "preset": preset,
        "mode": mode,
        "events": events,
        "event_bytes": event_bytes,
        "journal_file_bytes": size,
        "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def _journal_figures(directory: Path) -> tuple[int, int, int]:
    """Events, their JSON bytes and the file size of the one journal in ``directory``."""
    (path,) = directory.glob("journal-*.sqlite3")
    conn = sqlite3.connect(path)
    events, event_bytes = conn.execute("SELECT count(*), sum(length(event)) FROM events").fetchone()
    conn.close()
    return int(events), int(event_bytes), path.stat().st_size


def _child(preset: str, mode: str, seed: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", preset, mode, str(seed)],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Parse the options, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=200, help="TSUMO presses per hand")
    parser.add_argument("--games", type=int, default=1, help="seeds per preset and mode")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        preset, mode, seed = args.child
        print(json.dumps(asyncio.run(_game(preset, mode, int(seed)))))
        return
    if args.presses < 2 or args.games < 1:
        parser.error("--presses must be at least 2, --games at least 1")
    scored = asyncio.run(_tsumo_samples(args.presses, True))
    keyed = asyncio.run(_tsumo_samples(args.presses, False))
    games = [
        _child(preset, mode, seed)
        for preset in PRESETS
        for seed in range(1, args.games + 1)
        for mode in ("keyed", "tiles")
    ]
    s, k = _ms(scored), _ms(keyed)
    out = {
        "machine": common.machine(),
        "tsumo_to_display": {
            "scored": s,
            "keyed": k,
            "added_p50_ms": round(s["p50_ms"] - k["p50_ms"], 3),
            "added_p99_ms": round(s["p99_ms"] - k["p99_ms"], 3),
        },
        "games": games,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
