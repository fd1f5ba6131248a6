"""What the tests of tests/export/test_other_tools.py need: the tile-aware demo games'
mjai exports, and the venvs of the outside tools that read them.

**The tools** each get a venv of their own under ``.venvs/`` at the repository's root
(gitignored), built on first use with this interpreter's ``venv`` and ``pip install`` of
the pinned requirement from PyPI, then reused: libriichi comes in the ``mjai`` wheel, which
pins ``mahjong~=1.2`` (tablectl has 2.x), and neither tool belongs in tablectl's own
environment.  A venv is built in a temporary folder and renamed when complete, under a lock
(pytest-xdist's workers share it).  When it cannot be built (no PyPI), the test is skipped
with the install line, or fails under CI (:func:`tests.helpers.missing_component`).

**The games** are ``tablectl demo --fast --tiles --rules PRESET --seed SEED`` for every
four-player preset and seeds 1-3, exported with ``tablectl journal export --format mjai``:
made once per test run (in the folder pytest's workers share, under a lock), several at a
time.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tablectl.rules.options import HouseRules
from tests.helpers import TABLECTL, missing_component

ROOT = Path(__file__).resolve().parents[2]
VENVS = ROOT / ".venvs"
VALIDATORS = Path(__file__).resolve().parent / "validators"

#: The four-player presets with tile-aware games and a log form, and the seeds played.
DEMO_PRESETS = ("ariari", "ema", "jboy", "kenko", "mleague", "tenhou", "wrc")
DEMO_SEEDS = (1, 2, 3)
#: How many demo games run at once (each waits on its simulator as much as it computes).
DEMO_PARALLEL = 6


def tool_python(name: str, requirement: str, module: str) -> Path:
    """The python of the venv ``.venvs/NAME`` holding ``requirement`` (built if missing),
    which must import ``module``."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    install = f"python3 -m venv .venvs/{name} && .venvs/{name}/bin/pip install '{requirement}'"
    VENVS.mkdir(exist_ok=True)
    with (VENVS / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not python.exists():
            building = VENVS / f".{name}.building"
            shutil.rmtree(building, ignore_errors=True)
            made = subprocess.run(
                [sys.executable, "-m", "venv", str(building)],
                capture_output=True,
                text=True,
                check=False,
            )
            if made.returncode == 0:
                made = subprocess.run(
                    [str(building / "bin" / "python"), "-m", "pip", "install", "-q", requirement],
                    capture_output=True,
                    text=True,
                    check=False,
                    timeout=600,
                )
            if made.returncode != 0:
                shutil.rmtree(building, ignore_errors=True)
                why = (made.stderr or made.stdout).strip().splitlines()[-1:] or ["?"]
                missing_component(f"{requirement} (its venv could not be built: {why[0]})", install)
            building.rename(venv)
    probe = subprocess.run(
        [str(python), "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        missing_component(f"{requirement} in .venvs/{name} (import {module} failed)", install)
    return python


def _demo_export(out: Path, preset: str, seed: int) -> Path:
    journal = out / f"{preset}-{seed}.sqlite3"
    export = out / f"{preset}-{seed}.mjai.jsonl"
    for args in (
        [
            "demo",
            "--fast",
            "--tiles",
            "--rules",
            preset,
            "--seed",
            str(seed),
            "--journal",
            str(journal),
        ],
        ["journal", "export", "--format", "mjai", "--journal", str(journal), "-o", str(export)],
    ):
        done = subprocess.run(
            [*TABLECTL, *args], capture_output=True, text=True, check=False, timeout=600
        )
        assert done.returncode == 0, f"tablectl {' '.join(args)}: {done.stderr[-2000:]}"
    return export


def demo_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    """The mjai export of each (preset, seed) demo game, made once per test run."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    out = shared / "demo-mjai"
    games = [(p, s) for p in DEMO_PRESETS for s in DEMO_SEEDS]
    paths = {g: out / f"{g[0]}-{g[1]}.mjai.jsonl" for g in games}
    out.mkdir(exist_ok=True)
    with (out / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (out / ".done").exists():
            with ThreadPoolExecutor(DEMO_PARALLEL) as pool:
                list(pool.map(lambda g: _demo_export(out, *g), games))
            (out / ".done").touch()
    return paths


def jansou_rules(rules: HouseRules) -> dict[str, Any]:
    """The fields of jansou's ``Rules`` that say what the preset ``rules`` say (jansou
    knows honba only as 0 or 100 a payer: the check works the honba out itself)."""
    scoring, tiles, wall, flow = rules.scoring, rules.tiles, rules.wall, rules.flow
    return {
        "player_count": rules.players,
        "starting_points": rules.game.start_points,
        "game_length": "E" if rules.game.length == "east" else "S",
        "honba_value": 100 if flow.honba else 0,
        "double_wind_fu": tiles.double_wind_pair_fu,
        "kiriage_mangan": scoring.kiriage,
        "kazoe_yakuman": scoring.kazoe == "yakuman",
        "multiple_yakuman": scoring.multiple_yakuman,
        "double_yakuman": False,
        "aka_dora": bool(tiles.red_fives or tiles.gold_fives),
        "kan_dora": wall.kan_dora != "none",
        "open_kan_indicator_immediate": wall.kan_dora == "immediate",
        "kuitan": tiles.kuitan,
        "kuikae_ban": not tiles.kuikae,
        "multiple_ron": flow.multiple_ron != "head_bump",
        "kokushi_ankan_chankan": wall.kokushi_closed_kan_ron,
        "abort_kyuushu_kyuuhai": "nine_terminals" in flow.abortive_draws,
        "abort_suufon_renda": "four_winds" in flow.abortive_draws,
        "abort_suucha_riichi": "four_riichi" in flow.abortive_draws,
        "abort_suukaikan": "four_kans" in flow.abortive_draws,
        "abort_sanchahou": "triple_ron" in flow.abortive_draws,
        "noten_penalty_pool": 3000 if scoring.tenpai_pool else 0,
        "nagashi_mangan": flow.nagashi != "none",
        "pao_daisangen": "daisangen" in scoring.pao,
        "pao_daisuushi": "daisuushii" in scoring.pao,
        "pao_suukantsu": "suukantsu" in scoring.pao,
    }
