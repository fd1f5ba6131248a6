"""The mjai export read by other tools, as written: Mortal's libriichi (the PyPI wheel
``mjai``, in its own venv) loads every tile-aware demo game of every four-player preset,
and jansou (an engine independent of tablectl, in its own venv) replays each with every
action legal and scores every win, under the preset's rules, as the log's deltas say.
See docs/tiles.md, "Game logs", and tests/export/other_tools.py for the venvs and games."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tablectl.export import export_text
from tablectl.rules.loader import load_rules
from tests.export.games import generated
from tests.export.other_tools import (
    DEMO_PRESETS,
    DEMO_SEEDS,
    VALIDATORS,
    demo_exports,
    jansou_rules,
    tool_python,
)

#: The first test waits for the 21 demo games and the two venvs (see other_tools.py).
pytestmark = pytest.mark.timeout(1800)

GAMES = [(p, s) for p in DEMO_PRESETS for s in DEMO_SEEDS]
IDS = [f"{p}-{s}" for p, s in GAMES]
LIBRIICHI = ("mjai-0.2.1", "mjai==0.2.1", "mjai.mlibriichi.state")
JANSOU = ("jansou-0.14.0", "jansou==0.14.0", "jansou.io.replay")


def _run(python: Path, script: str, *args: str) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [str(python), str(VALIDATORS / script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    return {r["file"]: r for r in reports}


def libriichi(*paths: Path) -> dict[str, dict[str, Any]]:
    """libriichi's verdict on each mjai log: its ``validate_logs`` and ``line_by_line``
    readings, None where it is accepted."""
    return _run(tool_python(*LIBRIICHI), "libriichi_check.py", *map(str, paths))


def jansou(tmp_path: Path, games: dict[Path, str]) -> dict[str, dict[str, Any]]:
    """jansou's replay of each mjai log under its preset: decisions replayed, wins scored,
    errors."""
    specs = []
    for path, preset in games.items():
        rules = load_rules(preset)
        specs.append(
            {
                "file": str(path),
                "rules": jansou_rules(rules),
                "honba_ron": rules.scoring.honba_ron,
                "honba_tsumo_each": rules.scoring.honba_tsumo_each,
                "honba_to": rules.flow.multiple_ron_bonus,
            }
        )
    spec = tmp_path / "jansou-spec.json"
    spec.write_text(json.dumps(specs), encoding="utf-8")
    return _run(tool_python(*JANSOU), "jansou_check.py", str(spec))


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], Path]:
    return demo_exports(tmp_path_factory)


@pytest.fixture(scope="module")
def libriichi_reports(exports: dict[tuple[str, int], Path]) -> dict[str, dict[str, Any]]:
    return libriichi(*exports.values())


@pytest.fixture(scope="module")
def jansou_reports(
    exports: dict[tuple[str, int], Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    return jansou(tmp_path_factory.mktemp("jansou"), {path: g[0] for g, path in exports.items()})


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_libriichi_loads_the_export_as_its_log_checker_does(
    game: tuple[str, int],
    exports: dict[tuple[str, int], Path],
    libriichi_reports: dict[str, dict[str, Any]],
) -> None:
    assert libriichi_reports[str(exports[game])]["validate_logs"] is None


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_libriichi_loads_the_export_line_by_line(
    game: tuple[str, int],
    exports: dict[tuple[str, int], Path],
    libriichi_reports: dict[str, dict[str, Any]],
) -> None:
    assert libriichi_reports[str(exports[game])]["line_by_line"] is None


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_jansou_replays_the_export_and_scores_every_win_as_written(
    game: tuple[str, int],
    exports: dict[tuple[str, int], Path],
    jansou_reports: dict[str, dict[str, Any]],
) -> None:
    report = jansou_reports[str(exports[game])]
    assert report["errors"] == []
    assert report["decisions"] > 0


def test_a_reach_accepted_before_a_call_is_read_as_libriichi_writes_it(
    libriichi_reports: dict[str, dict[str, Any]],
) -> None:
    """The one place the line-by-line reading keeps the candidates (see
    validators/libriichi_check.py) does occur in the demo games, and they pass."""
    assert sum(r["reach_then_call"] for r in libriichi_reports.values()) >= 1


def test_the_demo_games_have_wins_kans_and_riichi(
    exports: dict[tuple[str, int], Path], jansou_reports: dict[str, dict[str, Any]]
) -> None:
    """The games are worth checking: wins to score, kans whose dora the order concerns."""
    text = "".join(p.read_text(encoding="utf-8") for p in exports.values())
    assert sum(r["wins"] for r in jansou_reports.values()) >= 100
    for event in ('"kakan"', '"ankan"', '"daiminkan"', '"reach_accepted"', '"dora"'):
        assert event in text, event


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_libriichi_refuses_a_tile_the_seat_does_not_hold(
    exports: dict[tuple[str, int], Path], tmp_path: Path
) -> None:
    lines = _lines(exports[("tenhou", 1)])
    start = next(i for i, e in enumerate(lines) if e["type"] == "start_kyoku")
    held = set(lines[start]["tehais"][lines[start]["oya"]])
    first = next(i for i, e in enumerate(lines) if e["type"] == "dahai")
    lines[first]["pai"] = next(t for t in ("1m", "9p", "E", "C", "5s") if t not in held)
    lines[first]["tsumogiri"] = False
    report = libriichi(_write(tmp_path / "bad.jsonl", lines))
    (verdict,) = report.values()
    assert verdict["validate_logs"] and verdict["line_by_line"]
    assert f"line {first + 1}:" in verdict["validate_logs"]


def test_a_dora_between_the_rinshan_draw_and_the_discard_fails_line_by_line(
    exports: dict[tuple[str, int], Path], tmp_path: Path
) -> None:
    """The order libriichi's own arena writes (kan, rinshan tsumo, dora, dahai) passes its
    log checker and fails the line-by-line reading: why the export writes another."""
    for path in exports.values():
        lines = _lines(path)
        at = [
            i
            for i in range(len(lines) - 3)
            if lines[i]["type"] in ("kakan", "daiminkan")
            and lines[i + 1]["type"] == "tsumo"
            and lines[i + 2]["type"] == "dahai"
            and lines[i + 3]["type"] == "dora"
        ]
        if at:
            break
    else:
        pytest.fail("no open kan with its dora after the discard in the demo games")
    i = at[0]
    lines[i + 2], lines[i + 3] = lines[i + 3], lines[i + 2]
    (verdict,) = libriichi(_write(tmp_path / "arena-order.jsonl", lines)).values()
    assert verdict["validate_logs"] is None
    assert verdict["line_by_line"] and "cannot discard" in verdict["line_by_line"]


def test_jansou_catches_a_win_the_deltas_overstate(
    exports: dict[tuple[str, int], Path], tmp_path: Path
) -> None:
    lines = _lines(exports[("ema", 1)])
    hora = next(e for e in lines if e["type"] == "hora" and e["actor"] != e["target"])
    hora["deltas"][hora["actor"]] += 1000
    hora["deltas"][hora["target"]] -= 1000
    path = _write(tmp_path / "overstated.jsonl", lines)
    (report,) = jansou(tmp_path, {path: "ema"}).values()
    assert any("jansou scores" in e for e in report["errors"]), report


def test_kantan_is_refused_by_both_as_the_docs_say(tmp_path: Path) -> None:
    """docs/tiles.md: no standard mjai engine plays kantan's calls off a last discard that
    is not the discard just made, so its log is for reading, not review."""
    game = generated("kantan", 7)
    path = tmp_path / "kantan.jsonl"
    path.write_text(export_text("mjai", load_rules("kantan"), game.parsed()), encoding="utf-8")
    (verdict,) = libriichi(path).values()
    assert "not the last kawa tile" in (verdict["validate_logs"] or "")
    (report,) = jansou(tmp_path, {path: "kantan"}).values()
    assert report["errors"] and "ReplayError" in report["errors"][0]
