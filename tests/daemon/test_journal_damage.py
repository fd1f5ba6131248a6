"""A damaged journal is named, never a traceback or a hang (issue 32): any row (nested too
deeply, not JSON, the wrong shape, huge) gives one line naming the game and the row, exit
78 from ``run``; a FIFO, a device or a folder is refused before it is opened; an empty
file is refused, not adopted as a new journal."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tablectl.cli import main
from tablectl.journal import Journal, JournalError
from tablectl.rules.events import Riichi
from tests.helpers import TABLECTL, free_port

T0 = 1_700_000_000.0
#: What a damaged row may hold instead of its JSON.
DAMAGE: dict[str, Any] = {
    "deep": "[" * 200_000 + "]" * 200_000,
    "deep-object": '{"type":"riichi","seat":' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}",
    "not-json": "{riichi}",
    "wrong-shape": "[1, 2, 3]",
    "wrong-event": '{"type":"riichi","seat":"east"}',
    "a-number": 42,
    "a-blob": b"\xff\xfe\x00",
    "huge": '{"type":"riichi","seat":1,"x":"' + "x" * 1_000_000 + '"}',
}


def _journal(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game = journal.start_game("t1", "jboy", ["A", "B", "C", "D"], T0)
        journal.append(game, Riichi(seat=1), T0 + 1)
    return path, game


def _damage(path: Path, sql: str, value: Any) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql, (value,))
    conn.close()


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(list(args))
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("tablectl")]


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_event_row_names_the_game_and_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path, game = _journal(tmp_path)
    _damage(path, "UPDATE events SET event = ?", DAMAGE[damage])
    code, lines = _cli(capsys, "journal", "export", "--journal", str(path))
    assert code == 2 and len(lines) == 1, lines
    assert f"{path}: game {game} event #1 is unreadable" in lines[0]
    assert len(lines[0]) < 300
    with Journal.open(path, readonly=True) as journal, pytest.raises(JournalError, match="#1"):
        journal.events(game)


@pytest.mark.parametrize("damage", ["deep", "not-json", "huge"])
def test_the_daemon_stops_on_a_damaged_game_in_one_line_and_78(tmp_path: Path, damage: str) -> None:
    path, game = _journal(tmp_path)
    _damage(path, "UPDATE events SET event = ?", DAMAGE[damage])
    config = tmp_path / "tablectl.toml"
    config.write_text(
        f'id = "t1"\ndevice = "socket://127.0.0.1:{free_port()}"\nrules = "jboy"\n'
        f'journal = "{path}"\n'
    )
    done = subprocess.run(
        [*TABLECTL, "run", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 78 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("tablectl run:")]
    assert len(lines) == 1 and f"game {game} event #1 is unreadable" in lines[0]


@pytest.mark.parametrize("damage", ["deep", "not-json", "wrong-shape", "a-number", "huge"])
def test_damaged_seats_records_and_notes_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path, game = _journal(tmp_path)
    with Journal.open(path) as journal:
        journal.finish_game(game, {"scores": [1, 2, 3, 4], "ranking": [3, 2, 1, 0]}, T0 + 2)
        journal.note(game, T0 + 2, 0, "last_game", {"on": True})
    value = DAMAGE[damage]
    for sql, command, says in (
        ("UPDATE records SET final = ?", "records", f"record of game {game}"),
        ("UPDATE notes SET detail = ?", "records", f"game {game} note 'last_game'"),
        ("UPDATE games SET seats = ?", "journal list", f"game {game} seat names"),
    ):
        copy = tmp_path / f"{command.replace(' ', '-')}-{sql.split()[1]}.sqlite3"
        copy.write_bytes(path.read_bytes())
        _damage(copy, sql, value)
        code, lines = _cli(capsys, *command.split(), "--journal", str(copy))
        assert code == 2 and len(lines) == 1, (sql, lines)
        assert says in lines[0] and "unreadable" in lines[0], lines


def _fifo(tmp_path: Path) -> str:
    os.mkfifo(tmp_path / "fifo")
    return str(tmp_path / "fifo")


@pytest.mark.parametrize(
    "make",
    [_fifo, lambda tmp: "/dev/zero", str],
    ids=["fifo", "device", "folder"],
)
@pytest.mark.parametrize(
    "command", [["journal", "list"], ["journal", "export"], ["records"]], ids=" ".join
)
def test_a_journal_that_is_not_a_file_is_refused_at_once(
    tmp_path: Path, make: Any, command: list[str]
) -> None:
    # A subprocess with a timeout: on the old code a FIFO hung these commands for ever.
    target = make(tmp_path)
    done = subprocess.run(
        [*TABLECTL, *command, "--journal", target],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "not a regular file" in done.stderr, done.stderr


def test_a_config_or_rules_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)
    for args in (["journal", "list", "--config", fifo], ["rules", "show", fifo]):
        done = subprocess.run(
            [*TABLECTL, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "not a regular file (a FIFO)" in done.stderr


def test_an_empty_file_is_refused_not_adopted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "j.sqlite3"
    empty.touch()
    with pytest.raises(JournalError, match="an empty file"):
        Journal.open(empty)
    with pytest.raises(JournalError, match="an empty file"):
        Journal.open(empty, readonly=True)
    code, lines = _cli(capsys, "journal", "list", "--journal", str(empty))
    assert code == 2 and len(lines) == 1 and "an empty file (0 bytes)" in lines[0]
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.sqlite3"]
    # Only an absent path makes a new journal.
    empty.unlink()
    Journal.open(empty).close()
    assert empty.stat().st_size > 0
