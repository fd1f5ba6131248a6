"""The ``mahjong`` package loads only with the scorer: a daemon whose table does not read
tiles, and the tile ids and shapes, never import it (docs/tiles.md, "Scoring")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import sys, tablectl.daemon, tablectl.tiles, tablectl.tiles.ids, tablectl.tiles.hand;"
    " print('mahjong' in sys.modules); import tablectl.tiles.scoring;"
    " print('mahjong' in sys.modules)"
)


def test_only_the_scorer_loads_mahjong() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.stdout.split() == ["False", "True"]
