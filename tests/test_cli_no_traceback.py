"""Every command-line entry point answers bad input with one line on stderr and an exit
code, never a Python traceback (issue 12). Run by ``make test`` like every test."""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import socket
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import tablectl
from tablectl.cli import build_parser
from tests.helpers import TABLECTL, free_port


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Broken inputs of every kind, made once."""
    folder = tmp_path_factory.mktemp("bad")
    made: dict[str, str] = {"dir": str(folder)}

    def put(name: str, data: bytes | str) -> str:
        path = folder / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        made[name.split(".", maxsplit=1)[0]] = str(path)
        return str(path)

    put("garbage.sqlite3", b"SQLite format 3\x00" + b"\x07" * 3000)
    put("text.sqlite3", "not a database\n" * 50)
    put("deep.toml", "x = " + "[" * 5000 + "]" * 5000 + "\n")
    put("bad.toml", "[table\nid=")
    put("baddevice.toml", 'id = "t"\ndevice = "/dev/ttyUSB0?baud=fast"\nrules = "jboy"\n')
    put("nested.jsonl", "[" * 30000 + "]" * 30000 + "\n")
    put("digits.jsonl", '{"type":"riichi","seat":' + "9" * 5000 + "}\n")
    put("zero.jsonl", '{"type":"start","rules":"/dev/zero"}\n')
    put("notjson.jsonl", "{riichi}\n")
    put("binary.jsonl", b"\xff\xfe\x00\x01")
    fifo = folder / "fifo"
    os.mkfifo(fifo)
    made["fifo"] = str(fifo)
    return made


def _tablectl(*args: str) -> list[str]:
    return [*TABLECTL, *args]


def _hw_sim(*args: str) -> list[str]:
    return [sys.executable, "-m", "hw_sim", *args]


CASES: list[tuple[str, list[str], int]] = [
    ("replay", ["replay", "--rules", "jboy", "{nested}"], 2),
    ("replay", ["replay", "--rules", "jboy", "{digits}"], 2),
    ("replay", ["replay", "{zero}"], 2),
    ("replay", ["replay", "--rules", "jboy", "{notjson}"], 2),
    ("replay", ["replay", "--rules", "jboy", "{binary}"], 2),
    ("replay", ["replay", "--rules", "jboy", "{fifo}"], 2),
    ("replay", ["replay", "--rules", "jboy", "/dev/zero"], 2),
    ("replay", ["replay", "--rules", "nosuch", "{notjson}"], 2),
    ("rules-list", ["rules", "list", "--bogus"], 2),
    ("rules-show", ["rules", "show", "nosuch"], 2),
    ("rules-show", ["rules", "show", "{deep}"], 2),
    ("rules-show", ["rules", "show", "/dev/zero"], 2),
    ("journal-export", ["journal", "export", "--journal", "{garbage}"], 2),
    ("journal-export", ["journal", "export", "--journal", "{dir}/missing.sqlite3"], 2),
    ("journal-export", ["journal", "export", "--format", "tenhou5", "--journal", "{text}"], 2),
    ("journal-export", ["journal", "export", "--format", "mjai", "--journal", "{garbage}"], 2),
    ("journal-list", ["journal", "list", "--journal", "{text}"], 2),
    ("journal-list", ["journal", "list", "--config", "{deep}"], 2),
    ("journal-notes", ["journal", "notes", "--journal", "{garbage}"], 2),
    ("journal-notes", ["journal", "notes", "nope", "--faults", "--journal", "{text}"], 2),
    ("records", ["records", "--journal", "{garbage}"], 2),
    ("records", ["records", "--since", "yesterday-ish", "--journal", "{text}"], 2),
    ("run", ["run", "--config", "{deep}"], 78),
    ("run", ["run", "--config", "{bad}"], 78),
    ("run", ["run", "--config", "{baddevice}"], 78),
    ("run", ["run", "--config", "{dir}/missing.toml"], 78),
    ("demo", ["demo", "--games", "0"], 2),
    ("demo", ["demo", "--rules", "nosuch"], 2),
    ("demo", ["demo", "--seed", "x"], 2),
    ("diagram", ["diagram", "--bogus"], 2),
    ("staff-pin", ["staff-pin"], 2),
    ("ctl", ["ctl", "status", "--socket", "{dir}/none.sock"], 2),
    ("ctl", ["ctl", "reboot"], 2),
    ("bringup", ["bringup", "gopher://x"], 2),
    ("bringup", ["bringup", "socket://127.0.0.1:1", "--motor-timeout", "-1"], 2),
    ("bringup", ["bringup"], 2),
    ("dashboard", ["dashboard"], 2),
    ("dashboard", ["dashboard", "--broker", "http://127.0.0.1:1883"], 2),
    ("dashboard", ["dashboard", "--broker", "mqtt://127.0.0.1:99999"], 2),
    ("dashboard", ["dashboard", "--broker", "mqtt://127.0.0.1:1883", "--listen", "nowhere"], 2),
    (
        "dashboard",
        ["dashboard", "--broker", "mqtt://127.0.0.1:1883", "--listen", "0.0.0.0:8080"],
        2,
    ),
    ("dashboard", ["dashboard", "--broker", "mqtt://127.0.0.1:1883", "--config", "{bad}"], 2),
    ("dashboard", ["dashboard", "--broker", "mqtt://127.0.0.1:1883", "--config", "{deep}"], 2),
    ("dashboard", ["dashboard", "--config", "{dir}/missing.toml"], 2),
    ("dashboard-password", ["dashboard-password"], 2),
    ("dashboard-password", ["dashboard-password", "--bogus"], 2),
    ("mqtt-secret", ["mqtt-secret", "--bogus"], 2),
    ("ledger", ["ledger", "close", "--day", "tonight", "--db", "{dir}/l.sqlite3"], 2),
    ("ledger", ["ledger", "close", "--day", "2026-11-26", "--db", "{dir}/missing.sqlite3"], 1),
    ("ledger", ["ledger", "close", "--day", "2026-11-26", "--db", "{garbage}"], 1),
    ("ledger", ["ledger", "close", "--day", "2026-11-26", "--cutoff-hour", "24"], 2),
    ("ledger", ["ledger", "run", "--config", "{deep}"], 2),
    ("ledger", ["ledger", "run", "--db", "postgresql://ledger:pw@127.0.0.1:1/x"], 78),
    ("ledger", ["ledger", "run", "--db", "{dir}/missing/l.sqlite3"], 78),
]


@pytest.mark.parametrize(("command", "args", "code"), CASES)
def test_tablectl_bad_input_is_one_line_and_an_exit_code(
    files: dict[str, str], command: str, args: list[str], code: int
) -> None:
    argv = [a.format(**files) for a in args]
    done = subprocess.run(
        _tablectl(*argv), input="12\n", capture_output=True, text=True, check=False, timeout=60
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    # argparse's own errors print the usage line first, then one line with the error.
    if lines and lines[0].startswith("usage:"):
        lines = [line for line in lines if not line.startswith(("usage:", " "))]
    assert len(lines) == 1, done.stderr


def _handlers(parser: argparse.ArgumentParser) -> set[str]:
    found = {parser.get_default("handler")} - {None}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= _handlers(child)
    return found


def test_every_tablectl_command_is_covered_above() -> None:
    handlers = _handlers(build_parser())
    assert len(handlers) >= 11
    assert handlers <= {command for command, _, _ in CASES}, handlers - {c for c, _, _ in CASES}


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_demo_stops_cleanly_on_ctrl_c(sig: signal.Signals, code: int) -> None:
    process = subprocess.Popen(
        _tablectl("demo"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # The banner is printed once the demo's signal handlers are in: signal then, not
        # after a guessed delay (a loaded machine took more than 2 s to get there). The
        # 60 s only bound a demo that never starts.
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        banner = process.stdout.readline() if ready else ""
        assert banner == "tablectl demo: ariari, seed 1; Ctrl-C to quit\n"
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == code
    assert err == "tablectl demo: stopped\n"


def test_a_ctrl_c_while_the_command_loads_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The console script's entry point: the interrupt lands while tablectl.cli loads.
    class Loading(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "tablectl.cli", Loading("tablectl.cli"))
    assert tablectl.console_main() == 130
    assert capsys.readouterr().err == "tablectl: stopped\n"


def test_demo_output_to_a_pipe_is_plain_lines_and_each_seed_replays_its_game() -> None:
    done = subprocess.run(
        _tablectl("demo", "--fast", "--seed", "5"), capture_output=True, text=True, check=True
    )
    assert "\x1b" not in done.stdout
    assert len(done.stdout) < 5000 and done.stdout.count("\n") >= 3
    two = subprocess.run(
        _tablectl("demo", "--fast", "--json", "--games", "2", "--seed", "5"),
        capture_output=True,
        text=True,
        check=True,
    )
    games = [json.loads(line) for line in two.stdout.splitlines()]
    assert [g["seed"] for g in games] == [5, 6]
    again = subprocess.run(
        _tablectl("demo", "--fast", "--json", "--seed", "6"),
        capture_output=True,
        text=True,
        check=True,
    )
    replayed = json.loads(again.stdout)
    assert replayed.pop("game_id") != games[1].pop("game_id")  # each run journals anew
    assert replayed == games[1]


def test_demo_refuses_a_journal_with_a_game_in_progress(tmp_path: Path) -> None:
    from tablectl.journal import Journal

    path = tmp_path / "table.sqlite3"
    with Journal.open(path) as journal:
        journal.start_game("table-7", "kenko", None, 1_700_000_000.0)
    done = subprocess.run(
        _tablectl("demo", "--fast", "--journal", str(path)),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr == (
        f"tablectl demo: {path}: table 'table-7' has a game in progress there (kenko, 0"
        " events); give --resume to play it on, or another file\n"
    )


HW_SIM_CASES = [
    (["send", "{port}", '{{"cmd":"state"}}'], 2, "nothing answers on 127.0.0.1"),
    (["serve", "--tcp", "{busy}"], 2, "cannot serve"),
    (["serve", "--tcp", "0", "--scenario", "/nonexistent.jsonl"], 2, "--scenario"),
    (["serve", "--tcp", "0", "--faults", "unplug@x"], 2, "--faults"),
    (["serve", "--tcp", "0", "--rules", "nosuch"], 2, "nosuch"),
    (["bogus"], 2, "invalid choice"),
]


@pytest.mark.parametrize(("args", "code", "says"), HW_SIM_CASES)
def test_hw_sim_bad_input_is_one_line_and_an_exit_code(
    args: list[str], code: int, says: str
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        values = {"port": free_port(), "busy": busy.getsockname()[1]}
        argv = [a.format(**values) for a in args]
        done = subprocess.run(
            _hw_sim(*argv), capture_output=True, text=True, check=False, timeout=60
        )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    if lines and lines[0].startswith("usage:"):
        lines = [line for line in lines if not line.startswith(("usage:", " "))]
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_demo_of_a_preset_with_money_prints_the_games_p() -> None:
    """Issue #28: the last line of a money preset's demo game says its chips and P, as the
    game's final has them."""
    args = ("demo", "--fast", "--rules", "sanma-free", "--seed", "7")
    lines = subprocess.run(_tablectl(*args), capture_output=True, text=True, check=True)
    as_json = subprocess.run(_tablectl(*args, "--json"), capture_output=True, text=True, check=True)
    money = json.loads(as_json.stdout)["final"]["money"]
    last = lines.stdout.splitlines()[-1]
    assert last.endswith(f", chips {money['chips']}, P {money['total']}"), last
