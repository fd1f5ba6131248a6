"""``python -m hw_sim serve --tcp 0 --play-log LOG`` against a real ``tablectl run``: the
simulator prints its URL first, plays the log, exits 0 once the last hand is confirmed,
and the daemon's journal exports the log's results (issue #29; the corpus is played
in-process by tests/sim/test_playlog.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tablectl.export import export_text
from tablectl.journal import Journal
from tablectl.logs import parse_tenhou6, read_log
from tablectl.logs.compare import differences
from tablectl.rules.loader import load_rules
from tests.helpers import stop_process
from tests.hil.serve import HW_SIM, serve

#: A two-hand game (a bust), the cheapest whole game of the corpus.
LOG = Path(__file__).parents[1] / "data/tenhou/mjlog/2017040900gm-00a9-0000-af5434e3.mjlog"
PLAY_TIMEOUT_S = 120


def test_play_log_against_tablectl_run(tmp_path: Path) -> None:
    proc, url = serve(
        ["--tcp", "0"], [*HW_SIM, "--speed", "0", "--log-level", "ERROR", "--play-log", str(LOG)]
    )
    journal = tmp_path / "journal.sqlite3"
    config = tmp_path / "tablectl.toml"
    config.write_text(f'id = "t1"\ndevice = "{url}"\nrules = "tenhou"\njournal = "{journal}"\n')
    daemon = subprocess.Popen(
        [sys.executable, "-m", "tablectl", "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        rc = proc.wait(timeout=PLAY_TIMEOUT_S)
        assert proc.stdout is not None
        rest = proc.stdout.read()
    finally:
        stop_process(proc)
        assert stop_process(daemon) == 0
    assert rc == 0, rest
    assert rest == f"hw_sim: {LOG}: 2 hands played as the log has them\n"
    with Journal.open(journal) as j:
        row = next(g for g in reversed(j.games()) if g.status == "finished")
        rules = load_rules(row.rules)
        text = export_text("tenhou6", rules, j.events(row.game_id), row.seats, ("", ""))
    assert differences(read_log(LOG), parse_tenhou6(text)) == []
