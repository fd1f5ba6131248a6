"""The parlor scale benchmark (bench/parlor_scale.py, issue 30 item 6) with three tables
for a few seconds, so that the bench itself cannot rot: real daemons' games recorded,
replayed by simulated tables through the product's publisher and journal outbox to a
real Mosquitto, ``tablectl ledger run`` and ``tablectl dashboard``; every game reaches
the ledger, and the tables' messages are valid against docs/mqtt and on the topics the
recorded daemons used. Its contract checker is tested on made-up messages."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "parlor_scale.py"


@pytest.fixture(scope="module")
def contract() -> ModuleType:
    path = ROOT / "bench" / "parlor_scale_contract.py"
    spec = importlib.util.spec_from_file_location("parlor_scale_contract", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(
    shutil.which("mosquitto") is None and not Path("/usr/sbin/mosquitto").exists(),
    reason="needs mosquitto (apt-get install mosquitto)",
)
def test_three_tables_send_every_game_to_the_ledger_as_a_daemon_would() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--tables", "3", "--human-s", "1", "--step-s", "1"]
        + ["--state-s", "0.01", "--rates", "20", "--presets", "kantan", "--no-browser"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    daemon = result["daemon_contract"]
    assert daemon["invalid"] == 0, daemon["violations"]
    assert {"state", "events", "hands", "games", "menu"} <= set(daemon["leaves"])
    (run,) = result["runs"]
    assert run["games_ended"] >= 3 + 3 + 10  # human, burst, about a second at 20/s
    assert run["lost"] == 0
    assert run["burst"]["acknowledged"] == 3
    assert run["human"]["ledger_lag"]["n"] == 3
    assert run["sustained"][0]["stored_per_s"] > 0
    tables = run["contract"]
    assert tables["invalid"] == 0, tables["violations"]
    assert tables["not_from_daemon"] == []
    assert {"state", "events", "hands", "games", "ledger", "ledger/ack"} <= set(tables["leaves"])
    assert set(run["human"]["cpu_pct"]) == {"broker", "ledger", "dashboard", "tables"}


def test_the_checker_counts_a_message_against_the_contract(contract: ModuleType) -> None:
    checker = contract.Contract(port=1)
    checker.note("tablectl/v1/t001/ledger/ack", b'{"v": 1, "game_id": "g1", "revision": 1}')
    checker.note("tablectl/v1/t001/ledger/ack", b'{"v": 1, "game_id": "g1", "revision": 0}')
    checker.note("tablectl/v1/t002/seat/3/score", b"25000")
    checker.note("tablectl/ledger/v1/status", b"{}")  # not a table topic
    assert checker.checked == 3
    assert checker.invalid == 1
    assert "ledger/ack" in checker.violations[0]
    assert checker.leaves() == {"ledger/ack", "seat/+/score"}
    assert checker.leaves({"t002"}) == {"seat/+/score"}
    summary = checker.summary({"seat/+/score"})
    assert summary["not_from_daemon"] == []
    assert checker.summary(set())["not_from_daemon"] == ["seat/+/score"]


def test_the_checker_checks_a_share_of_each_leaf(contract: ModuleType) -> None:
    checker = contract.Contract(port=1)
    for _ in range(contract.CHECKED_PER_LEAF + 5):
        checker.note("tablectl/v1/t001/ledger/ack", b"not json")
    assert checker.checked == contract.CHECKED_PER_LEAF
    assert checker.invalid == contract.CHECKED_PER_LEAF
    assert len(checker.violations) == contract.KEPT
    assert sum(checker.seen.values()) == contract.CHECKED_PER_LEAF + 5
