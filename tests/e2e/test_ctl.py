"""``tablectl ctl`` against a running daemon with bots playing on the simulated table:
status, a new game with other rules, abandon, and refusals, as staff would use it."""

from __future__ import annotations

import asyncio
import json
import re
import resource
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hw_sim import SimTable
from tablectl.cli import main
from tablectl.config import StaffSettings, config_for
from tablectl.ctl import request
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.rules.loader import load_rules
from tests.helpers import run_tablectl

TIMEOUT_S = 60


def ctl(socket: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tablectl ctl`` as staff type it, in a process of its own."""
    return run_tablectl("ctl", *args, "--socket", str(socket), timeout=30)


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
        games = table.games_finished
        # An undo works until the next hand's dice; the bots roll at once, so it is
        # either done (and the bots enter the hand again) or refused with the reason:
        # "next hand begun", or "nothing to correct" once that hand ended the game and
        # the next game began (a loaded run saw the fast bots bust out of kenko first).
        done = await asyncio.to_thread(ctl, socket, "undo")
        outcome = (done.returncode, done.stderr)
        if outcome == (1, "tablectl ctl undo: refused: nothing to correct\n"):
            assert table.games_finished > games, "nothing to correct in the game being played"
        else:
            assert outcome in (
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
        actions = [n.detail for n in journal.notes() if n.kind == "staff_action"]
        assert [(a["rules"], a["by"]) for a in actions] == [("kenko", "ctl"), ("kenko", "ctl")]
        # The bots play fast: a game may end by itself (a bust) before a command reaches it,
        # which then abandons nothing (its note says so) and the finished game stays
        # finished; a game a command did abandon is journalled as abandoned.
        ended = [
            rules
            for rules, action in zip(("jboy", "kenko"), actions, strict=True)
            if action["abandoned"]
        ]
        assert [(g.rules, g.status) for g in games if g.status != "finished"] == [
            *((rules, "abandoned") for rules in ended),
            ("kenko", "playing"),
        ]
        assert all(len(a["scores"]) == 4 for a in actions if a["abandoned"])  # where it stood


async def test_staff_seat_players_from_the_command_line_between_games_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tablectl ctl seat`` (issue #30): members of the table's player list, names and
    guests for the next game, with the dashboard's refusals (an unknown member, a game in
    play) as one line and exit 1. In this process (the command's ``main`` in a thread):
    the daemon and the table's simulator are the real ones, no bots (the test rolls)."""
    socket = tmp_path / "ctl.sock"
    journal_path = tmp_path / "journal.sqlite3"
    players = tmp_path / "players.csv"
    players.write_text("member,name\n1024,Aoki Ken\n")
    sim = SimTable(load_rules("jboy"), 3, autoplay=False)
    url = await sim.start_pty()
    staff = StaffSettings(socket=socket, players=players)
    daemon = Daemon(config_for(url, "jboy", journal_path, staff=staff), claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())

    async def seat(*args: str) -> tuple[int, str]:
        code = await asyncio.to_thread(main, ["ctl", "seat", *args, "--socket", str(socket)])
        out, err = capsys.readouterr()
        return code, (out + err).strip()

    try:
        await _until(lambda: daemon.table is not None and daemon.table.phase == "table_walls_up")
        table = daemon.table
        assert table is not None
        refused = "tablectl ctl seat: refused: "
        assert await seat("99", "Chiba", "-", "-") == (
            1, refused + "seat 0: no member 99 in the player list"
        )  # fmt: skip
        assert await seat("1024", "Chiba", "-") == (
            1, refused + "seating needs 4 entries, one per seat"
        )  # fmt: skip
        assert await seat("1024", "1024", "-", "-") == (
            1, refused + "one player cannot sit in two seats"
        )  # fmt: skip
        # What the command checks, the socket checks too (another client may write it).
        for bad in (
            {"cmd": "seat"},
            {"cmd": "seat", "seats": [1, 2]},
            {"cmd": "undo", "seats": None},
        ):
            reply = await asyncio.to_thread(request, socket, bad)
            assert reply["ok"] is False and "'seats'" in reply["error"], reply
        assert await seat("1024", "Chiba", "-", "-") == (0, "tablectl ctl seat: done")
        names = ("Aoki Ken", "Chiba", "sim guest 2", "sim guest 3")
        assert table.core.seat_names == names
        sim.press(0, "OK")  # the dealer rolls: the game is in play
        await _until(lambda: table.seating.unavailable() is not None)
        assert await seat("--clear") == (
            1, refused + "a game is in progress (hand 1): players change seats between games"
        )  # fmt: skip
        assert table.core.seat_names == names
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    with Journal.open(journal_path) as journal:
        [game] = journal.games()
        assert game.seats == names  # the game not yet begun is the seated players'
        seatings = [n.detail for n in journal.notes() if n.kind == "staff_action"]
        assert seatings == [{"action": "seat", "by": "ctl", "via": "ctl", "names": list(names)}]


def test_ctl_without_a_daemon_says_so_in_one_line(tmp_path: Path) -> None:
    done = ctl(tmp_path / "none.sock", "status")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"tablectl ctl status: {tmp_path / 'none.sock'}: no daemon socket there"
        " (is tablectl run running?)"
    )


def _low_file_limit() -> None:
    """In the daemon's process: a file descriptor limit a flood can reach."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_LIMIT, FILE_LIMIT))


#: The daemon's file descriptor limit, and the idle connections opened per round: more
#: than it can hold (issue #32: 345 idle connections under ulimit -n 256 killed it).
FILE_LIMIT, FLOOD = 64, 150


async def _flood_round(socket: Path) -> int:
    """Open up to FLOOD idle connections, hold them a moment, close them; return how many
    were opened (the daemon refuses those over its limit at once, with a line)."""
    opened: list[asyncio.StreamWriter] = []
    for _ in range(FLOOD):
        try:
            opened.append((await asyncio.open_unix_connection(str(socket)))[1])
        except OSError:
            break  # the listen backlog is full: a connect that would wait
    await asyncio.sleep(0.3)
    for writer in opened:
        writer.close()
    return len(opened)


async def test_idle_admin_connections_beyond_the_file_limit_do_not_stop_the_game(
    tmp_path: Path,
) -> None:
    socket = tmp_path / "ctl.sock"
    journal = tmp_path / "journal.sqlite3"
    sim = SimTable(load_rules("jboy"), 5, max_games=50)
    port = await sim.start_tcp(0)
    config = tmp_path / "tablectl.toml"
    config.write_text(
        f'[table]\nid = "flood"\ndevice = "socket://127.0.0.1:{port}"\nrules = "jboy"\n'
        f'journal = "{journal}"\n[staff]\nsocket = "{socket}"\n'
    )
    log = tmp_path / "daemon.log"
    with log.open("ab") as handle:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tablectl.cli", "run", "--config", str(config),
            stdout=handle, stderr=handle, preexec_fn=_low_file_limit,
        )  # fmt: skip
    try:
        await _until(socket.exists)
        await _until(lambda: sim.games_finished >= 1)
        games_before, opened = sim.games_finished, 0
        async with asyncio.timeout(TIMEOUT_S):
            # Through at least two game starts (where the daemon opens the rules files).
            while sim.games_finished < games_before + 2 and proc.returncode is None:
                opened += await _flood_round(socket)
        assert proc.returncode is None, log.read_text()[-3000:]
        assert opened > FILE_LIMIT
        done = await asyncio.to_thread(ctl, socket, "status", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["rules"] == "jboy"
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await proc.wait()
        await sim.close()
    text = log.read_text()
    assert "Traceback" not in text and "Too many open files" not in text, text[-3000:]
    refused = [line for line in text.splitlines() if "connection refused" in line]
    assert 1 <= len(refused) <= 2, refused  # the first, and the count at close
    assert len(text.splitlines()) < 60
