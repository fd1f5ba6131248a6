"""Write a golden journal file: ``tablectl demo --fast`` killed with SIGKILL in the middle of
a hand, so that the file holds an unfinished hand with its stored console flow, exactly as
the daemon left it (the database and its write-ahead log, gzipped: the log is preallocated
and mostly zeros). Beside it, what today's code resumes it to (``<name>.json``).

Only to be run deliberately (docs/journal.md, "Golden flow snapshots")::

    TABLECTL_REGEN_GOLDEN=1 .venv/bin/python -m tests.daemon.golden.make_journal NAME \\
        --rules tenhou --seed 7 --events 150 [--tiles]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from firmware_bridge import messages as m
from tablectl.console.tiles import TILE_CAPS
from tests.daemon.golden.resume import resume_table, summary
from tests.daemon.golden.storm import canonical

HERE = Path(__file__).resolve().parent


def events_in(path: Path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0


def kill_mid_hand(args: argparse.Namespace, path: Path) -> list[str]:
    """Run the demo on ``path``, kill it once the journal holds ``--events`` events, and
    keep the file (gzipped); returns the demo's command line."""
    command = [sys.executable, "-m", "tablectl.cli", "demo", "--fast", "--rules", args.rules]
    command += ["--seed", str(args.seed), "--journal", str(path)]
    command += ["--tiles"] if args.tiles else []
    demo = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while events_in(path) < args.events and time.monotonic() < deadline:
        time.sleep(0.01)  # another process writes it: polling is the only way to watch
    demo.send_signal(signal.SIGKILL)
    demo.wait()
    for suffix in ("", "-wal"):
        data = Path(f"{path}{suffix}").read_bytes()
        (HERE / f"{args.name}.sqlite3{suffix}.gz").write_bytes(gzip.compress(data, 9, mtime=0))
    return command


def unpacked(name: str, path: Path) -> Path:
    """The committed golden unpacked at ``path``: the database and its log, not the killed
    process's shared-memory index, so that it resumes as the test resumes it."""
    for suffix in ("", "-wal"):
        packed = (HERE / f"{name}.sqlite3{suffix}.gz").read_bytes()
        Path(f"{path}{suffix}").write_bytes(gzip.decompress(packed))
    return path


async def resumed_record(path: Path, caps: m.Capability, command: list[str]) -> dict[str, Any]:
    """What today's code resumes the journal at ``path`` to."""
    resumed = await resume_table(path, "demo", caps)
    try:
        return {
            "made_by": " ".join(["tablectl", *command[3:-2], "--journal", "PATH"]),
            "game_id": resumed.recorder.game_id,
            "events": resumed.recorder.game_events,
            "capabilities": int(caps),
            "flow": resumed.flow,
            "resumed": summary(resumed.table),
        }
    finally:
        resumed.journal.close()


def main() -> int:
    """Make the golden journal ``NAME`` and its record."""
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--rules", default="tenhou")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--events", type=int, default=150)
    parser.add_argument("--tiles", action="store_true")
    args = parser.parse_args()
    if os.environ.get("TABLECTL_REGEN_GOLDEN") != "1":
        print("make_journal: set TABLECTL_REGEN_GOLDEN=1 to rewrite a golden", file=sys.stderr)
        return 2
    caps = TILE_CAPS if args.tiles else m.Capability.WALL_READER
    with tempfile.TemporaryDirectory() as tmp:
        command = kill_mid_hand(args, Path(tmp) / "journal.sqlite3")
        copy = unpacked(args.name, Path(tmp) / "copy.sqlite3")
        record = asyncio.run(resumed_record(copy, caps, command))
    (HERE / f"{args.name}.json").write_text(canonical(record) + "\n", "utf-8")
    print(json.dumps(record["resumed"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
