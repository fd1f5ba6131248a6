"""SIGTERM (systemd's stop) at any moment of ``tablectl run``: while its modules load,
the journal opens, the link connects or a game is played, it ends with exit 0, the
journal closed and readable, and nothing on stderr but log lines."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tablectl.journal import Journal
from tests.helpers import stop_process
from tests.hil.serve import HW_SIM, serve

# Seconds after the start at which the signal is sent. They only spread the moment over
# the start-up (loading, journal, link, first hands); the assertions hold for any moment.
MOMENTS = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0]


@pytest.fixture(scope="module")
def table_url() -> Iterator[str]:
    """A simulated table with bots playing, for every daemon of the module in turn."""
    proc, url = serve(["--tcp", "0"], [*HW_SIM, "--speed", "0", "--log-level", "ERROR"])
    try:
        yield url
    finally:
        stop_process(proc)


def _block_sigterm() -> None:
    # The child starts with SIGTERM blocked: one sent before tablectl's first line (while
    # the interpreter itself starts, which no Python code can guard) waits until
    # tablectl holds it, so "at once" means "the moment tablectl begins", on a loaded
    # machine too. A later one arrives as it would from systemd.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


@pytest.mark.parametrize("moment", MOMENTS)
def test_sigterm_at_any_moment_is_a_clean_stop(
    tmp_path: Path, table_url: str, moment: float
) -> None:
    journal_path = tmp_path / "journal.sqlite3"
    with Journal.open(journal_path):
        pass  # there from the start: even a stop before it is opened must leave it whole
    config = tmp_path / "tablectl.toml"
    config.write_text(
        f'id = "t1"\ndevice = "{table_url}"\nrules = "jboy"\njournal = "{journal_path}"\n'
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "tablectl", "run", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_block_sigterm,  # noqa: PLW1509 (no threads started by this test)
    )
    try:
        time.sleep(moment)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()  # SIGTERM is blocked or held there: it would outlive the test
            process.wait()
    assert process.returncode == 0, err
    assert "Traceback" not in err and out == ""
    assert all(" INFO " in line or " WARNING " in line for line in err.splitlines()), err
    with sqlite3.connect(journal_path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with Journal.open(journal_path, readonly=True) as journal:
        assert all(g.status in ("playing", "finished") for g in journal.games())
