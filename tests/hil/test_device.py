"""A table in another process (or at ``--device URL``): the firmware conformance checks,
and the daemon driving it through a kill -9."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest

import firmware_bridge.conformance as conformance
from firmware_bridge.endpoints import open_transport
from tablectl.journal import Journal, JournalNotReady
from tests.hil.daemon import daemon_config, start_daemon, until_up
from tests.hil.serve import HW_SIM, serve


# The C firmware's port runs the whole suite, the checks needing a person included, in
# tests/hil/test_c_firmware.py; here its run without them would only repeat that.
@pytest.mark.parametrize("device_url", ["tcp", "pty"], indirect=True)
async def test_the_device_passes_the_conformance_checks(device_url: str) -> None:
    transport = await open_transport(device_url)
    report = await conformance.run_checks(transport, device_url)
    assert not report.failed, "\n".join(report.lines())
    statuses = {r.name: r.status for r in report.results}
    assert all(statuses[n] == "skip" for n in conformance.INTERACTIVE)
    assert sum(s == "pass" for s in statuses.values()) == len(conformance.CHECKS) - len(
        conformance.INTERACTIVE
    )


def test_the_daemon_drives_the_device_through_a_kill_9(device_url: str, tmp_path: Path) -> None:
    config, log, socket = (
        daemon_config(tmp_path, device_url),
        tmp_path / "daemon.log",
        tmp_path / "ctl.sock",
    )
    first = start_daemon(config, log)
    try:
        status = until_up(socket, first, log)
        assert status["phase"].startswith("table_") and status["rules"] == "tenhou"
        assert "ROLL?" in status["prompts"]  # the dealer is asked to roll the dice
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    second = start_daemon(config, log)
    try:
        status = until_up(socket, second, log)
        assert status["link"]["up"] and status["link"]["refused"] is None
    finally:
        second.terminate()
        assert second.wait(timeout=15) == 0, log.read_text()
    journal = Journal.open(tmp_path / "journal.sqlite3", readonly=True)
    try:
        assert len(journal.games()) == 1  # the restarted daemon took the game up again
    finally:
        journal.close()
    assert "resuming game" in log.read_text()


@pytest.mark.parametrize("endpoint", [["--tcp", "0"], ["--pty"]], ids=["tcp", "pty"])
def test_the_daemon_plays_whole_games_against_a_table_in_another_process(
    endpoint: list[str], tmp_path: Path
) -> None:
    # The simulator's bots play (a real table would need four people: this one runs
    # against `python -m hw_sim serve` only), the daemon in its own process keeps score.
    bots = ["--rules", "kenko", "--seed", "7", "--autoplay", "--max-games", "2", "--speed", "0"]
    table, url = serve(endpoint, [*HW_SIM, *bots, "--log-level", "ERROR"])
    config, log = daemon_config(tmp_path, url), tmp_path / "daemon.log"
    config.write_text(config.read_text().replace('"tenhou"', '"kenko"'), "utf-8")
    daemon = start_daemon(config, log)
    try:
        deadline = time.monotonic() + 120
        finished: list[Any] = []
        while time.monotonic() < deadline and len(finished) < 2:
            assert daemon.poll() is None, log.read_text()
            time.sleep(0.5)
            if not (tmp_path / "journal.sqlite3").exists():
                continue
            try:
                journal = Journal.open(tmp_path / "journal.sqlite3", readonly=True)
            except JournalNotReady:
                continue  # the daemon is creating it
            try:
                finished = [g for g in journal.games() if g.status == "finished"]
            finally:
                journal.close()
        assert len(finished) >= 2, log.read_text()
    finally:
        daemon.terminate()
        daemon.wait(timeout=15)
        table.terminate()
        table.wait(timeout=15)
