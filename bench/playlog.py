"""Real tenhou.net games at the simulated table: how many hands a second the simulator
and the daemon play, and whether every game of the corpus scores as its log.

Run from the repository root::

    .venv/bin/python bench/playlog.py [--format mjlog|tenhou6] [--journals disk|memory]

Every game of tests/data/tenhou (34 mjlogs, or the 31 tenhou.net/6 logs) is dealt and
played by ``hw_sim.playlog.LogPlayer`` against the daemon (``tablectl.daemon.Daemon``)
in this process, over ``sim://``, at speed 0 with every tile reader on, one game after
the other (tests/sim/test_playlog.py's ``play``, which the suite runs on the hard-case
games only).  Each game's journal export (tenhou.net/6) is compared with its log
(``tablectl.logs.compare.differences``).  ``--journals disk`` keeps the journals under
the system's temporary directory (the daemon syncs every commit, as on a table),
``memory`` under /dev/shm.

Prints one JSON object: games, hands, the wall time and the process CPU time, hands per
second, and every game that differed (the exit status is 1 then).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "tenhou"


async def _run(fmt: str, journals: str) -> dict[str, Any]:
    import firmware_bridge.link as link_mod
    from hw_sim.playlog import Diverged
    from tablectl.logs import read_log
    from tablectl.logs.compare import differences
    from tests.sim.test_playlog import play

    # One event loop runs both ends: a loaded machine's stall must not end the link.
    link_mod.LINK_TIMEOUT = 5.0
    link_mod.HANDSHAKE_TIMEOUT = 5.0
    suffix = ".mjlog" if fmt == "mjlog" else ".json"
    paths = sorted((CORPUS / fmt).glob(f"*{suffix}"))
    base = "/dev/shm" if journals == "memory" else None
    failed: dict[str, list[str]] = {}
    hands = 0
    start, cpu = time.perf_counter(), time.process_time()
    with tempfile.TemporaryDirectory(prefix="bench-playlog-", dir=base) as tmp:
        for path in paths:
            game = read_log(path)
            try:
                table = await play(game, Path(tmp) / f"{path.stem}.sqlite3", path.stem)
            except Diverged as exc:
                failed[path.stem] = [str(exc)]
                continue
            hands += len(game.hands)
            found = differences(game, table)
            if found:
                failed[path.stem] = found
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "format": fmt,
        "journals": journals,
        "games": len(paths),
        "hands": hands,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "hands_per_s": round(hands / wall, 2),
        "ms_per_hand": round(1000 * wall / max(hands, 1), 1),
        "differed": failed,
    }


def main() -> int:
    """Play the corpus, print the figures; 1 if a game differed from its log."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--format", choices=("mjlog", "tenhou6"), default="mjlog")
    parser.add_argument("--journals", choices=("disk", "memory"), default="disk")
    args = parser.parse_args()
    result = asyncio.run(_run(args.format, args.journals))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 1 if result["differed"] else 0


if __name__ == "__main__":
    sys.exit(main())
