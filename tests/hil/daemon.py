"""A ``tablectl run`` daemon in its own process, on a table at a URL, as the HIL tests
start it: its config, the process, and its status over the staff socket."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

#: How long a daemon may take to bring its table up (an emulated board included).
START_S = 30.0


def daemon_config(tmp_path: Path, url: str) -> Path:
    """A tenhou table's config in ``tmp_path`` for the table at ``url``: its journal is
    ``journal.sqlite3`` and its staff socket ``ctl.sock`` beside it."""
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nid = "hil"\ndevice = "{url}"\nrules = "tenhou"\n'
        f'journal = "{tmp_path / "journal.sqlite3"}"\n'
        f'[staff]\nsocket = "{tmp_path / "ctl.sock"}"\n',
        "utf-8",
    )
    return config


def start_daemon(config: Path, log: Path) -> subprocess.Popen[bytes]:
    """``tablectl run --config CONFIG``, its output appended to ``log``."""
    with log.open("ab") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "tablectl.cli", "run", "--config", str(config)],
            stdout=handle,
            stderr=handle,
        )


def daemon_status(socket: Path) -> dict[str, Any] | None:
    """``tablectl ctl status --json`` over ``socket``; None while the daemon does not answer."""
    done = subprocess.run(
        [sys.executable, "-m", "tablectl.cli", "ctl", "status", "--json", "--socket", str(socket)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return json.loads(done.stdout) if done.returncode == 0 else None


def until_up(socket: Path, proc: subprocess.Popen[bytes], log: Path) -> dict[str, Any]:
    """The daemon's status once its link to the table is up; fails with its log if it
    exits first or takes longer than :data:`START_S`."""
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text("utf-8", "replace")
        status = daemon_status(socket) if socket.exists() else None
        if status is not None and status["link"]["up"]:
            return status
        time.sleep(0.2)
    raise AssertionError(f"the daemon did not bring the table up:\n{log.read_text()}")
