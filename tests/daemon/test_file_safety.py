"""Nothing ``tablectl run`` does removes, truncates or creates a file it does not own
(issue 32): a ``[staff] socket`` naming an existing path is refused, never unlinked; the
journal is a regular file or absent, never a device, a FIFO or a symlink to one. Each
refusal is one line and exit 78."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tablectl.cli import main
from tablectl.ctl import CtlError, CtlServer
from tablectl.journal import Journal
from tests.helpers import TABLECTL, free_port

EXIT_CONFIG = 78
ROOT = os.geteuid() == 0


def _config(
    folder: Path, journal: str, *, socket_path: str | None = None, device: str = ""
) -> Path:
    # A table nobody answers for: a daemon that got past its checks would wait for ever.
    device = device or f"socket://127.0.0.1:{free_port()}"
    text = f'id = "t1"\ndevice = {_toml(device)}\nrules = "jboy"\njournal = {_toml(journal)}\n'
    if socket_path is not None:
        text += f"[staff]\nsocket = {_toml(socket_path)}\n"
    path = folder / "tablectl.toml"
    path.write_text(text)
    return path


def _toml(text: str) -> str:
    return (
        '"'
        + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)
        + '"'
    )


def _journal_with_a_game(path: Path) -> bytes:
    with Journal.open(path) as journal:
        journal.start_game("t1", "jboy", None, 1_700_000_000.0)
    return path.read_bytes()


def _run(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, list[str]]:
    code = main(["run", "--config", str(config)])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("tablectl run:")]


def _device(folder: Path) -> Path:
    """A character device of our own (/dev/null's numbers) when root may make one, else a
    symlink to /dev/null: either way /dev/null itself is never at risk."""
    path = folder / "null"
    if ROOT:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        path.symlink_to("/dev/null")
    return path


def test_a_socket_at_the_journals_path_is_refused_and_the_journal_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = tmp_path / "j.sqlite3"
    before = _journal_with_a_game(journal)
    for name in ("j.sqlite3", "j.sqlite3.lock", "j.sqlite3-wal", "tablectl.toml"):
        code, lines = _run(capsys, _config(tmp_path, str(journal), socket_path=name))
        assert code == EXIT_CONFIG and len(lines) == 1, lines
        assert "[staff] socket" in lines[0] and "needs a path of its own" in lines[0]
    assert journal.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.sqlite3", "tablectl.toml"]


def test_the_reported_case_in_a_real_daemon(tmp_path: Path) -> None:
    # The repro end to end: exit 1 with a traceback, and the journal gone.
    journal = tmp_path / "j.sqlite3"
    before = _journal_with_a_game(journal)
    config = _config(tmp_path, "j.sqlite3", socket_path="j.sqlite3")
    done = subprocess.run(
        [*TABLECTL, "run", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == EXIT_CONFIG and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1
    assert journal.read_bytes() == before


@pytest.mark.parametrize("kind", ["regular file", "device", "folder", "symlink"])
def test_a_socket_path_holding_something_else_is_refused_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "thing"
    if kind == "regular file":
        target.write_text("precious\n")
    elif kind == "device":
        target = _device(tmp_path)
    elif kind == "folder":
        target.mkdir()
    else:
        (tmp_path / "precious").write_text("precious\n")
        target.symlink_to(tmp_path / "precious")
    found = os.lstat(target)
    code, lines = _run(capsys, _config(tmp_path, "j.sqlite3", socket_path=str(target)))
    assert code == EXIT_CONFIG and len(lines) == 1, lines
    assert "something else is at" in lines[0]
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode, after.st_size) == (
        found.st_ino,
        found.st_mode,
        found.st_size,
    )
    assert not (tmp_path / "j.sqlite3").exists()  # refused before anything was opened


@pytest.mark.parametrize(
    ("make_path", "says"),
    [
        (lambda tmp: str(tmp / "missing" / "ctl.sock"), "does not exist"),
        (lambda tmp: str(tmp / ("s" * 120)), "a Unix socket's path is at most 107"),
    ],
    ids=["missing-folder", "too-long"],
)
def test_a_socket_path_that_cannot_be_bound_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_path: Any, says: str
) -> None:
    code, lines = _run(capsys, _config(tmp_path, "j.sqlite3", socket_path=make_path(tmp_path)))
    assert code == EXIT_CONFIG and len(lines) == 1 and says in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tablectl.toml"]


def test_a_device_holding_a_nul_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines = _run(capsys, _config(tmp_path, "j.sqlite3", device="/dev/ttyUSB0\x00x"))
    assert code == EXIT_CONFIG and len(lines) == 1
    assert "device holds the control character '\\x00'" in lines[0]


@pytest.mark.parametrize("journal", ["/dev/zero", "null-link", "device", "fifo", "folder"])
def test_a_journal_that_is_not_a_regular_file_is_refused_before_it_is_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], journal: str
) -> None:
    if journal == "null-link":
        (tmp_path / journal).symlink_to("/dev/null")
    elif journal == "device":
        journal = str(_device(tmp_path))
    elif journal == "fifo":
        os.mkfifo(tmp_path / journal)
    elif journal == "folder":
        (tmp_path / journal).mkdir()
    config = _config(tmp_path, journal)
    dev_before = set(os.listdir("/dev"))
    tree_before = sorted(os.listdir(tmp_path))
    code, lines = _run(capsys, config)
    assert code == EXIT_CONFIG and len(lines) == 1, lines
    assert ": journal: " in lines[0] and "the journal must be a regular file" in lines[0]
    assert set(os.listdir("/dev")) <= dev_before  # no /dev/zero-journal, no /dev/zero.lock
    assert sorted(os.listdir(tmp_path)) == tree_before


def test_the_journal_refuses_a_device_even_without_the_config_check(tmp_path: Path) -> None:
    # The daemon run from code (the demo, tests) has no config file to check it first.
    from tablectl.journal import JournalError, JournalLock

    link = tmp_path / "j.sqlite3"
    link.symlink_to("/dev/null")
    with pytest.raises(JournalError, match="a character device"):
        JournalLock(link).acquire()
    with pytest.raises(JournalError, match="a character device"):
        Journal.open(link)
    assert sorted(os.listdir(tmp_path)) == ["j.sqlite3"]


def test_the_lock_file_is_never_a_link_to_someone_elses(tmp_path: Path) -> None:
    from tablectl.journal import JournalError, JournalLock

    precious = tmp_path / "precious"
    precious.write_text("keep me\n")
    (tmp_path / "j.sqlite3.lock").symlink_to(precious)
    with pytest.raises(JournalError, match="cannot use it as the lock file: a symlink"):
        JournalLock(tmp_path / "j.sqlite3").acquire()
    assert precious.read_text() == "keep me\n"


async def _nothing(request: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True}


def test_the_server_replaces_only_a_stale_socket_and_removes_only_its_own(tmp_path: Path) -> None:
    path = tmp_path / "ctl.sock"

    async def scenario() -> None:
        # A stale socket (its daemon was killed): replaced.
        with socket.socket(socket.AF_UNIX) as old:
            old.bind(str(path))
        server = CtlServer(path, _nothing)
        await server.start()
        # A second daemon on a live socket: refused, and the first one's socket stays.
        second = CtlServer(path, _nothing)
        with pytest.raises(CtlError, match="another daemon answers"):
            await second.start()
        await second.close()
        assert path.is_socket()
        await server.close()
        assert not path.exists()
        # The socket was replaced by something else while the server ran: not removed.
        server = CtlServer(path, _nothing)
        await server.start()
        path.unlink()
        path.write_text("someone else's\n")
        await server.close()
        assert path.read_text() == "someone else's\n"

    asyncio.run(scenario())


def test_the_server_refuses_a_path_that_is_not_a_socket(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    path.write_text("a journal\n")

    async def scenario() -> None:
        server = CtlServer(path, _nothing)
        with pytest.raises(CtlError, match="something else is there, not a socket"):
            await server.start()
        await server.close()

    asyncio.run(scenario())
    assert path.read_text() == "a journal\n"
