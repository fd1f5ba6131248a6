"""``tablectl ctl`` against a running daemon with bots playing on the simulated table:
status, a new game with other rules, abandon, and refusals, as staff would use it."""

from __future__ import annotations

import asyncio
import json
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from hw_sim import SimTable
from tablectl.config import StaffSettings, config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.rules.loader import load_rules

TIMEOUT_S = 60


def ctl(socket: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tablectl ctl`` as staff type it, in a process of its own."""
    code = "import sys; from tablectl.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, "ctl", *args, "--socket", str(socket)],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )


async def _until(predicate: Callable[[], bool]) -> None:
    """Poll: the daemon's state has no event to wait on from outside."""
    async with asyncio.timeout(TIMEOUT_S):
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def test_staff_drive_a_running_table_from_the_admin_socket(tmp_path: Path) -> None:
    socket = tmp_path / "ctl.sock"
    journal_path = tmp_path / "journal.sqlite3"
    sim = SimTable(load_rules("jboy"), 3, max_games=50)
    url = await sim.start_pty()
    staff = StaffSettings(socket=socket)
    daemon = Daemon(config_for(url, "jboy", journal_path, staff=staff), claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())
    try:
        await _until(
            lambda: daemon.table is not None and daemon.table.state.hands_played >= 1,
        )
        assert stat.S_IMODE(socket.stat().st_mode) == 0o660

        done = await asyncio.to_thread(ctl, socket, "status", "--json")
        assert done.returncode == 0, done.stderr
        status = json.loads(done.stdout)
        assert status["rules"] == "jboy" and status["phase"].startswith("table_")

        # For a person: the table, the phase, the round, each seat's score, the alerts.
        done = await asyncio.to_thread(ctl, socket, "status")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert 6 < len(lines) <= 12, done.stdout
        assert lines[0].startswith(f"table {status['table']}: jboy, game ")
        assert lines[1].startswith("phase: table_") and lines[1].endswith(", link up")
        assert re.fullmatch(
            r"round: (East|South|West|North) [1-4], honba \d+, deposits \d+(; \d+ tiles left)?",
            lines[2],
        ), lines[2]
        seats = [line.split() for line in lines[3:7]]
        assert [s[:2] for s in seats] == [["seat", str(n)] for n in range(4)]
        assert sorted(s[2] for s in seats) == ["E", "N", "S", "W"]
        assert all(s[3].lstrip("-").isdigit() for s in seats)
        assert lines[-1] == "alerts: none" or lines[-1].startswith("alerts: ")

        done = await asyncio.to_thread(ctl, socket, "new-game", "--rules", "kenko")
        assert (done.returncode, done.stdout.strip()) == (0, "tablectl ctl new-game: done")
        table = daemon.table
        assert table is not None and table.rules.name == "kenko"

        refused = await asyncio.to_thread(ctl, socket, "new-game", "--rules", "jboy-sanma")
        assert refused.returncode == 1
        assert refused.stderr.strip() == (
            "tablectl ctl new-game: refused: jboy-sanma is for 3 players; this table has 4"
        )
        # A name that is no preset and no file is named as typed, not as a path.
        unknown = await asyncio.to_thread(ctl, socket, "new-game", "--rules", "nosuch")
        assert unknown.returncode == 2
        assert unknown.stderr.startswith(
            "tablectl ctl new-game: unknown preset 'nosuch'; known presets: ariari,"
        )
        assert unknown.stderr.endswith(", or a path to a rules file\n")
        broken = tmp_path / "broken.toml"
        broken.write_text("[game\n")
        refused = await asyncio.to_thread(ctl, socket, "new-game", "--rules", str(broken))
        assert refused.returncode == 1 and f"{broken}: not valid TOML" in refused.stderr
        assert "Traceback" not in refused.stderr
        wrong = await asyncio.to_thread(ctl, socket, "undo", "--json")
        assert (wrong.returncode, wrong.stderr) == (
            2,
            "tablectl ctl undo: --json goes with status only\n",
        )

        await _until(lambda: table.state.hands_played >= 1)
        # An undo works until the next hand's dice; the bots roll at once, so it is
        # either done (and the bots enter the hand again) or refused with the reason.
        done = await asyncio.to_thread(ctl, socket, "undo")
        assert (done.returncode, done.stderr) in (
            (0, ""),
            (1, "tablectl ctl undo: refused: next hand begun\n"),
        ), done.stderr
        done = await asyncio.to_thread(ctl, socket, "abandon")
        assert done.returncode == 0, done.stderr
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    assert not socket.exists()
    with Journal.open(journal_path) as journal:
        games = journal.games()
        assert [(g.rules, g.status) for g in games[:3]] == [
            ("jboy", "abandoned"),
            ("kenko", "abandoned"),
            ("kenko", "playing"),
        ]
        actions = [n.detail for n in journal.notes() if n.kind == "staff_action"]
        assert [(a["rules"], a["abandoned"], a["by"]) for a in actions] == [
            ("kenko", True, "ctl"),
            ("kenko", True, "ctl"),
        ]
        assert all(len(a["scores"]) == 4 for a in actions)  # what each game stood at


def test_ctl_without_a_daemon_says_so_in_one_line(tmp_path: Path) -> None:
    done = ctl(tmp_path / "none.sock", "status")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"tablectl ctl status: {tmp_path / 'none.sock'}: no daemon socket there"
        " (is tablectl run running?)"
    )
