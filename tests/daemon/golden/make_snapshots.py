"""Write the flow-snapshot goldens (docs/journal.md, "Golden flow snapshots").

Only to be run deliberately, when what the flow snapshot stores is meant to change (a new
field, with its restore of the old form): a refactor must leave the goldens as they are.
Run from the repository root::

    TABLECTL_REGEN_GOLDEN=1 .venv/bin/python -m tests.daemon.golden.make_snapshots

Without the variable it refuses, so that no test run or habit rewrites them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

from tests.daemon.golden.storm import STORMS, dump, golden_name, record

HERE = Path(__file__).resolve().parent


async def main() -> int:
    """Run every storm of :data:`STORMS` and write its golden file."""
    if os.environ.get("TABLECTL_REGEN_GOLDEN") != "1":
        print("make_snapshots: set TABLECTL_REGEN_GOLDEN=1 to rewrite the goldens", file=sys.stderr)
        return 2
    logging.disable(logging.WARNING)  # the storms' refusals and faults are expected
    for old in HERE.glob("*-*-*-*.json"):
        old.unlink()
    total = 0
    for preset, seed, tiles, calm, steps in STORMS:
        golden = await record(preset, seed, tiles, calm, steps)
        path = HERE / golden_name(preset, seed, tiles, calm)
        path.write_text(dump(golden), "utf-8")
        total += path.stat().st_size
        print(f"{path.name}: {len(golden['points'])} snapshots, {path.stat().st_size} bytes")
    print(f"{len(STORMS)} files, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
