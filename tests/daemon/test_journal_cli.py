"""`tablectl journal export|list` and `tablectl records` as an operator uses them."""

from __future__ import annotations

import csv
import io
import json
import random
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

import tablectl.journal as journal_mod
from tablectl.cli import main
from tablectl.journal import Journal
from tablectl.replay import ReplayResult, hand_dict
from tablectl.rules.core import step
from tablectl.rules.events import Riichi, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import HandSettled, initial_state
from tests.helpers import random_event

T0 = 1_714_500_000.0


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process; returns (exit status, stdout, stderr)."""
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def play(
    journal: Journal, preset: str, seed: int, start: float, *, to_end: bool = True
) -> dict[str, Any]:
    """Journal a random game as the daemon does; returns the live replay output."""
    rules = load_rules(preset)
    rng = random.Random(seed)
    game_id = journal.start_game("t1", preset, ["A", "B", "C", "D"][: rules.players], start)
    live = ReplayResult(rules=rules, state=initial_state(rules))
    now = start
    while not live.state.finished and (to_end or live.state.hands_played < 3):
        event = parse_event(random_event(rng, rules))
        state, effects = step(live.state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue
        live.state = state
        live.hands += [hand_dict(e.record) for e in effects if isinstance(e, HandSettled)]
        now += 30
        journal.append(game_id, event, now, final=state.final.as_dict() if state.final else None)
    return {"game_id": game_id, **live.as_dict()}


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    """A journal with two finished games and one in progress."""
    path = tmp_path / "journal.sqlite3"
    with Journal.open(path) as journal:
        play(journal, "kenko", 1, T0)
        play(journal, "jboy-sanma", 2, T0 + 10_000)
        play(journal, "mleague", 3, T0 + 20_000, to_end=False)
    return path


def test_export_the_last_game_and_replay_it(
    journal_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Journal.open(journal_path) as journal:
        games = journal.games()
    code, out, err = run(["journal", "export", "--journal", str(journal_path)], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == '{"type":"start","rules":"mleague"}'
    assert len(out.splitlines()) == games[-1].event_count + 1
    # An exported finished game, replayed by the CLI, gives the live game's output.
    live = play_again("kenko", 1)
    target = tmp_path / "game.jsonl"
    code, _, err = run(
        [
            "journal",
            "export",
            games[0].game_id[:6],
            "--journal",
            str(journal_path),
            "-o",
            str(target),
        ],
        capsys,
    )
    assert code == 0, err
    code, out, err = run(["replay", str(target)], capsys)
    assert code == 0, err
    assert json.loads(out) == live


def play_again(preset: str, seed: int) -> dict[str, Any]:
    """The live output of the game that ``play(journal, preset, seed, ...)`` journalled."""
    rules = load_rules(preset)
    rng = random.Random(seed)
    live = ReplayResult(rules=rules, state=initial_state(rules))
    while not live.state.finished:
        state, effects = step(live.state, parse_event(random_event(rng, rules)))
        if any(isinstance(e, Refusal) for e in effects):
            continue
        live.state = state
        live.hands += [hand_dict(e.record) for e in effects if isinstance(e, HandSettled)]
    return live.as_dict()


def test_list_games(journal_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["journal", "list", "--journal", str(journal_path)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["game", "table", "preset"]
    assert [line.split()[-1] for line in lines[1:]] == ["finished", "finished", "playing"]
    code, out, _ = run(["journal", "list", "--json", "--journal", str(journal_path)], capsys)
    rows = json.loads(out)
    assert [r["preset"] for r in rows] == ["kenko", "jboy-sanma", "mleague"]
    assert rows[1]["seats"] == ["A", "B", "C"]


def test_records_table_csv_json(
    journal_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["records", "--journal", str(journal_path)], capsys)
    assert code == 0, err
    assert len(out.splitlines()) == 2 and "kenko" in out and "jboy-sanma" in out
    code, out, err = run(["records", "--csv", "--journal", str(journal_path)], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["preset"] for r in rows] == ["kenko", "jboy-sanma"]
    assert rows[1]["seat3"] == "" and rows[1]["seat2"] == "C"
    target = tmp_path / "records.json"
    code, out, err = run(
        ["records", "--json", "--journal", str(journal_path), "-o", str(target)], capsys
    )
    assert code == 0 and out == "", err
    data = json.loads(target.read_text(encoding="utf-8"))
    assert [d["preset"] for d in data] == ["kenko", "jboy-sanma"]
    code, out, _ = run(
        ["records", "--json", "--since", "2100-01-01", "--journal", str(journal_path)], capsys
    )
    assert code == 0 and json.loads(out) == []


def test_config_names_the_journal(
    journal_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "tablectl.toml"
    config.write_text(
        f'id = "t1"\ndevice = "sim://"\nrules = "kenko"\njournal = "{journal_path.name}"\n'
    )
    code, out, err = run(["records", "--csv", "--config", str(config)], capsys)
    assert code == 0, err
    assert len(out.splitlines()) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["journal", "list", "--journal", "{tmp}/none.sqlite3"], "none.sqlite3: no journal file"),
        (["records", "--journal", "{tmp}/none.sqlite3"], "none.sqlite3: no journal file"),
        (["journal", "export", "zzz", "--journal", "{journal}"], "no game 'zzz'"),
        (["records", "--config", "{tmp}/none.toml"], "none.toml: no config file there"),
        (["records", "--since", "yesterday", "--journal", "{journal}"], "--since 'yesterday'"),
        (["records", "--journal", "{tmp}/garbage"], "garbage: not a journal"),
        (["records", "--journal", "{journal}", "-o", "{tmp}/no/such/dir/x"], "cannot write"),
    ],
)
def test_errors_go_to_stderr_with_status_2(
    journal_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    (tmp_path / "garbage").write_bytes(b"\x00garbage" * 200)
    args = [a.format(tmp=tmp_path, journal=journal_path) for a in args]
    code, out, err = run(args, capsys)
    assert code == 2 and out == ""
    assert message in err and err.startswith("tablectl ")


def test_an_empty_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "j.sqlite3"
    Journal.open(path).close()
    code, _, err = run(["journal", "export", "--journal", str(path)], capsys)
    assert code == 2 and "holds no games" in err
    code, out, _ = run(["journal", "list", "--journal", str(path)], capsys)
    assert code == 0 and out == "no games in the journal\n"
    code, out, _ = run(["records", "--journal", str(path)], capsys)
    assert code == 0 and out == "no finished games\n"


@pytest.mark.parametrize("command", [["journal", "list"], ["records"], ["journal", "export"]])
def test_reading_a_journal_the_daemon_is_creating(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    """`tablectl records` as the daemon first starts: the file exists, in WAL mode, and the
    schema's transaction is not committed yet. One line saying so, not "no such table"."""
    path = tmp_path / "j.sqlite3"
    in_schema, finish = threading.Event(), threading.Event()
    create_v1 = journal_mod.MIGRATIONS[1]

    def held_v1(conn: sqlite3.Connection) -> None:
        create_v1(conn)
        in_schema.set()
        finish.wait(10)

    monkeypatch.setitem(journal_mod.MIGRATIONS, 1, held_v1)
    daemon = threading.Thread(target=lambda: Journal.open(path).close())
    daemon.start()
    try:
        assert in_schema.wait(10)
        code, out, err = run([*command, "--journal", str(path)], capsys)
    finally:
        finish.set()
        daemon.join()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "no journal in it yet" in err and str(path) in err
    code, out, err = run([*command, "--journal", str(path)], capsys)  # created: readable
    assert code == (2 if command[-1] == "export" else 0) and "no journal in it yet" not in err


def test_an_empty_file_is_no_journal_yet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # What a reader sees in the instant after the daemon's sqlite3.connect() made the file.
    path = tmp_path / "j.sqlite3"
    path.touch()
    code, out, err = run(["journal", "list", "--journal", str(path)], capsys)
    assert code == 2 and out == "" and "no journal in it yet" in err


def test_journal_and_config_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    # main answers argparse's usage errors as a return code, like every other refusal.
    assert main(["records", "--journal", "a", "--config", "b"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_export_while_a_game_is_being_written(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon keeps its journal open; an export reads alongside it (WAL readers)."""
    with Journal.open(journal_path) as daemon:
        current = daemon.current_game()
        assert current is not None
        daemon.append(current, Riichi(seat=0), T0 + 99_999)
        code, out, err = run(["journal", "export", "--journal", str(journal_path)], capsys)
        assert code == 0, err
        assert out.splitlines()[-1] == '{"type":"riichi","seat":0}'
