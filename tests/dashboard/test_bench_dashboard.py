"""bench/dashboard.py, so that it cannot rot: how it matches what left the tables with
what the page showed (worked examples), that a card's text and a state give one key, and
the whole measurement in a tiny parlor (2 tables, 2 s per phase; no timing is asserted).

The tiny run needs Mosquitto, Chromium and chromedriver, and skips without them except
under CI (``CI=true``), where it fails, as the other browser tests do.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.helpers import require_chromium, require_executable

ROOT = Path(__file__).resolve().parents[2]


def _load_bench() -> ModuleType:
    # The bench scripts import their helpers as ``_common`` (bench/ first on sys.path).
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_dashboard", ROOT / "bench/dashboard.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
A, B, C = ("a",), ("b",), ("c",)


def _sent(*items: tuple[str, tuple[str], float]) -> list[Any]:
    return [bench.Sent(table, key, t) for table, key, t in items]


def _shown(*items: tuple[str, tuple[str] | None, float]) -> list[Any]:
    return [bench.Shown(table, key, t) for table, key, t in items]


# sent, shown, slack -> samples (table, latency ms, coalesced), not shown, unmatched
MATCHES = [
    pytest.param(
        _sent(("t1", A, 1.0), ("t1", B, 2.0)),
        _shown(("t1", A, 1.1), ("t1", B, 2.05)),
        0.0,
        [("t1", 100, False), ("t1", 50, False)],
        0,
        0,
        id="each change shown",
    ),
    pytest.param(
        _sent(("t1", A, 1.0), ("t1", B, 1.01), ("t1", C, 1.02)),
        _shown(("t1", C, 1.1)),
        0.0,
        [("t1", 100, True), ("t1", 90, True), ("t1", 80, False)],
        0,
        0,
        id="older changes coalesced into the newest shown",
    ),
    pytest.param(
        _sent(("t1", A, 1.0), ("t1", A, 1.5), ("t1", B, 2.0)),
        _shown(("t1", A, 1.2), ("t1", B, 2.1)),
        0.0,
        [("t1", 200, False), ("t1", 100, False)],
        0,
        0,
        id="states with one key are one change, timed from the first",
    ),
    pytest.param(
        _sent(("t1", A, 1.0), ("t1", B, 2.0)),
        _shown(("t1", A, 1.1)),
        0.0,
        [("t1", 100, False)],
        1,
        0,
        id="the last change never shown",
    ),
    pytest.param(
        _sent(("t1", A, 1.0)),
        _shown(("t1", C, 1.1), ("t1", A, 0.5), ("t1", A, 1.2)),
        0.0,
        [("t1", 200, False)],
        0,
        2,
        id="a key never sent, and one shown before it left, are unmatched",
    ),
    pytest.param(
        _sent(("t1", A, 1.0)),
        _shown(("t1", A, 0.999)),
        0.002,
        [("t1", -1, False)],
        0,
        0,
        id="within the clock's slack",
    ),
    pytest.param(
        _sent(("t1", A, 1.0), ("t1", B, 2.0), ("t1", A, 3.0)),
        _shown(("t1", A, 1.1), ("t1", B, 2.1), ("t1", A, 3.1)),
        0.0,
        [("t1", 100, False), ("t1", 100, False), ("t1", 100, False)],
        0,
        0,
        id="a key seen again (a new game) is the newest change with it",
    ),
    pytest.param(
        _sent(("t1", A, 1.0), ("t2", A, 1.0), ("t1", B, 2.0)),
        _shown(("t2", A, 1.3), ("t1", B, 2.1), ("t1", None, 0.5)),
        0.0,
        [("t2", 300, False), ("t1", 1100, True), ("t1", 100, False)],
        0,
        0,
        id="tables apart; a card without a state is no observation",
    ),
]


@pytest.mark.parametrize(("sent", "shown", "slack", "samples", "not_shown", "unmatched"), MATCHES)
def test_match(
    sent: list[Any],
    shown: list[Any],
    slack: float,
    samples: list[tuple[str, int, bool]],
    not_shown: int,
    unmatched: int,
) -> None:
    result = bench.match(sent, shown, slack)
    got = [(s.table, round(s.latency * 1000), s.coalesced) for s in result.samples]
    assert got == samples
    assert len(result.not_shown) == not_shown
    assert result.unmatched == unmatched


ROUND_E1 = {"wind": "E", "number": 1}
# what the page's observer read off a card (facts|scores), the state it shows
KEYS = [
    (
        "East 1 · 0 honba · deposits 0 · 70 tiles left|25,000;25,000;25,000;25,000",
        {
            "round": ROUND_E1,
            "honba": 0,
            "deposits": 0,
            "tiles_left": 70,
            "scores": [25000, 25000, 25000, 25000],
        },
    ),
    (
        "South 3 · 2 honba · deposits 1,000 · 12 tiles left · clock 41:07|35,000;41,300;23,700",
        {
            "round": {"wind": "S", "number": 3},
            "honba": 2,
            "deposits": 1000,
            "tiles_left": 12,
            "clock": 2467,
            "scores": [35000, 41300, 23700],
        },
    ),
    (
        "West 4 · 1 honba · deposits 0|-2,000;52,000;30,000;20,000",
        {
            "round": {"wind": "W", "number": 4},
            "honba": 1,
            "deposits": 0,
            "tiles_left": None,
            "scores": [-2000, 52000, 30000, 20000],
        },
    ),
]


@pytest.mark.parametrize(("shown", "state"), KEYS)
def test_a_card_and_its_state_have_one_key(shown: str, state: dict[str, Any]) -> None:
    assert bench.dom_key(shown) == bench.state_key(state)


@pytest.mark.parametrize(
    ("shown", "state"),
    [
        (KEYS[0][0], {**KEYS[0][1], "tiles_left": 69}),
        (KEYS[0][0], {**KEYS[0][1], "scores": [26000, 24000, 25000, 25000]}),
        (KEYS[0][0], {**KEYS[0][1], "honba": 1}),
        (KEYS[0][0], {**KEYS[0][1], "round": {"wind": "E", "number": 2}}),
    ],
)
def test_a_card_showing_another_state_has_another_key(shown: str, state: dict[str, Any]) -> None:
    assert bench.dom_key(shown) != bench.state_key(state)


def test_a_card_without_a_state_has_no_key() -> None:
    assert bench.dom_key("|") is None


async def test_the_measurement_in_a_tiny_parlor() -> None:
    require_executable("mosquitto")
    require_chromium()
    try:
        result = await bench.run(2, 2.0, 2.0)
    except bench.CannotStart as exc:
        # Everything it needs is installed: a part that does not come up is a failure.
        pytest.fail(str(exc))
    for name in ("human", "bot"):
        phase = result["phases"][name]
        assert phase["latency"]["n"] > 0, phase
        assert phase["state_messages_per_s"] > 0, phase
    # Every card the page drew showed a state that had left a table.
    assert result["unmatched_dom_changes"] == 0
    assert result["rss_mb_peak"] > 0
