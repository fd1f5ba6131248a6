"""The ``mahjong`` package loads only with the scorer: a daemon whose table does not read
tiles, and the tile ids and shapes, never import it (docs/tiles.md, "Scoring")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import sys, tablectl.daemon, tablectl.tiles, tablectl.tiles.ids, tablectl.tiles.hand;"
    " print('mahjong' in sys.modules); import tablectl.rules.tilescoring;"
    " print('mahjong' in sys.modules)"
)


def test_only_the_scorer_loads_mahjong() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.stdout.split() == ["False", "True"]


TABLE_PROBE = """
import asyncio, sys
from firmware_bridge import messages as m
from tablectl.console.tiles import TILE_CAPS
from tablectl.rules.loader import load_rules
from tablectl.table import Table

async def main(caps):
    table = Table(load_rules("tenhou"), post=lambda _: None, now=lambda: 0.0)
    await table.link_up(rebooted=False, capabilities=caps)
    print("tablectl.rules.tilescoring" in sys.modules, "mahjong" in sys.modules)

asyncio.run(main(%s))
"""


def test_the_daemon_loads_the_scorer_when_a_tile_reading_table_connects() -> None:
    def probe(caps: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", TABLE_PROBE % caps], cwd=ROOT, capture_output=True,
            text=True, check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        return done.stdout.split()

    assert probe("m.Capability.WALL_READER | m.Capability.WALL_TAKE_SENSORS") == ["False"] * 2
    assert probe("TILE_CAPS") == ["True", "True"]
