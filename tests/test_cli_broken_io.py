"""Every command-line entry point with a broken stdout (``> /dev/full``, a closed pipe) or
stdin that is not text answers in a line or two on stderr and an exit code, never a
traceback (issue 32). Every ``tablectl`` subcommand is found from the argparse parser, so
a new one is run here too (its ``--help``, and it must be given a sample below)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from firmware_bridge.stdio import EXIT_BROKEN_PIPE, EXIT_OUTPUT_LOST
from tablectl.cli import build_parser

TABLECTL = [sys.executable, "-m", "tablectl"]
BINARY = b"\xff\xfe\x00\x80\xc3(\n\x9f\x92\x96 not text\n"
#: Several subprocesses at once: each spends most of its second loading modules.
WORKERS = 4


def _leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """The word path of every subcommand that runs something (``("rules", "show")``)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*path, name))


LEAVES = sorted(_leaves(build_parser()))

#: Each subcommand as it is used, with output on stdout or a quick error (none may wait
#: for a table, a broker or a person). ``{j}`` is a journal with a finished game, ``{r}``
#: a replay file, ``{port}`` a closed port. Stdin is BINARY or nothing.
SAMPLES: dict[tuple[str, ...], list[list[str]]] = {
    ("replay",): [["replay", "{r}"], ["replay", "-"]],
    ("rules", "list"): [["rules", "list"]],
    ("rules", "show"): [["rules", "show", "kenko"], ["rules", "show", "kenko", "--json"]],
    ("journal", "export"): [["journal", "export", "--journal", "{j}"]],
    ("journal", "list"): [["journal", "list", "--journal", "{j}"]],
    ("journal", "notes"): [["journal", "notes", "--journal", "{j}"]],
    ("ledger", "close"): [
        ["ledger", "close", "--day", "2026-11-26", "--db", "{dir}/ledger.sqlite3"]
    ],
    ("ledger", "run"): [["ledger", "run", "--db", "{dir}/missing/l.sqlite3"]],
    ("records",): [["records", "--journal", "{j}"], ["records", "--journal", "{j}", "--csv"]],
    ("run",): [
        ["run", "--config", "{dir}/missing.toml"],
        ["run", "--check-config", "--config", "{dir}/missing.toml"],
    ],
    ("demo",): [["demo", "--fast", "--seed", "3"]],
    ("diagram",): [["diagram"], ["diagram", "--consoles"]],
    ("staff-pin",): [["staff-pin"]],
    ("bringup",): [["bringup", "socket://127.0.0.1:{port}", "--key-timeout", "0"]],
    ("dashboard",): [["dashboard", "--config", "{dir}/missing.toml"]],
    ("dashboard-password",): [["dashboard-password"]],
    ("ctl",): [["ctl", "status", "--socket", "{dir}/none.sock"]],
    ("mqtt-secret",): [["mqtt-secret"]],
}

#: The other entry points: the simulator and the conformance suite.
OTHERS: list[list[str]] = [
    [sys.executable, "-m", "hw_sim", "--help"],
    [sys.executable, "-m", "hw_sim", "serve", "--help"],
    [sys.executable, "-m", "hw_sim", "send", "{port}", '{{"cmd":"state"}}'],
    [sys.executable, "-m", "firmware_bridge.conformance", "--help"],
    [sys.executable, "-m", "firmware_bridge.conformance", "socket://127.0.0.1:{port}"],
]


@dataclass(frozen=True)
class Outcome:
    """One invocation: how it ended."""

    argv: tuple[str, ...]
    stdout: str  # "full", "closed" or "pipe"
    code: int
    err: str
    out: bytes


def _run(argv: list[str], stdout: str, stdin: bytes) -> Outcome:
    if stdout == "full":
        target = os.open("/dev/full", os.O_WRONLY)
    elif stdout == "closed":
        read, target = os.pipe()
        os.close(read)  # the reader went away before the first line (`| head -0`)
    else:
        read, target = os.pipe()
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            stdout=target if stdout != "pipe" else subprocess.PIPE,
            stderr=subprocess.PIPE,
            check=False,
            timeout=120,
        )
    finally:
        os.close(target)
        if stdout == "pipe":
            os.close(read)
    return Outcome(tuple(argv), stdout, done.returncode, done.stderr.decode(), done.stdout or b"")


@pytest.fixture(scope="module")
def values(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("io")
    journal = folder / "journal.sqlite3"
    subprocess.run(
        [*TABLECTL, "demo", "--fast", "--json", "--journal", str(journal)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    replay = folder / "game.jsonl"
    replay.write_text('{"type":"start","rules":"kenko"}\n{"type":"draw","tenpai":[1]}\n')
    from tablectl.ledger.db import open_database
    from tablectl.ledger.store import LedgerStore

    store = LedgerStore(open_database(str(folder / "ledger.sqlite3")))
    store.setup()  # an empty ledger: its close is a header and no rows
    store.db.close()
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return {"j": str(journal), "r": str(replay), "dir": str(folder), "port": str(port)}


def _helps() -> list[list[str]]:
    helps = [[*TABLECTL, *leaf, "--help"] for leaf in LEAVES]
    return [*helps, [*TABLECTL, "--help"], [*TABLECTL, "--version"]]


def _samples(values: dict[str, str]) -> list[list[str]]:
    argvs = []
    for samples in SAMPLES.values():
        argvs += [[*TABLECTL, *(a.format(**values) for a in sample)] for sample in samples]
    return argvs + [[a.format(**values) for a in argv] for argv in OTHERS]


def _reads_stdin(argv: tuple[str, ...]) -> bool:
    if "--help" in argv:
        return False
    return "-" in argv or "staff-pin" in argv or "dashboard-password" in argv


def test_every_subcommand_has_a_sample() -> None:
    assert len(LEAVES) >= 14
    assert set(LEAVES) == set(SAMPLES), set(LEAVES) ^ set(SAMPLES)


def test_broken_stdout_and_binary_stdin_are_a_line_and_an_exit_code(
    values: dict[str, str],
) -> None:
    samples = _samples(values)
    # Binary stdin goes with /dev/full: a command reading stdin must refuse it before it
    # writes anything, one that does not must still report its lost output.
    jobs = [(argv, "full", BINARY) for argv in [*_helps(), *samples]]
    jobs += [(argv, "closed", b"") for argv in samples]
    with ThreadPoolExecutor(WORKERS) as pool:
        outcomes = list(pool.map(lambda job: _run(*job), jobs))
    problems = []
    for o in outcomes:
        lines = [line for line in o.err.splitlines() if line.strip()]
        why = []
        if "Traceback" in o.err or "Exception ignored" in o.err:
            why.append("a traceback")
        if len(lines) > 2:
            why.append(f"{len(lines)} lines on stderr")
        if o.stdout == "full" and o.code == 0:
            why.append("exit 0 with the output lost")
        if "cannot write the output" in o.err and o.code != EXIT_OUTPUT_LOST:
            why.append(f"exit {o.code} for lost output")
        if o.stdout == "closed" and o.code not in (EXIT_BROKEN_PIPE, 2, 78):
            why.append(f"exit {o.code} on a closed pipe")
        if o.stdout == "closed" and o.code == EXIT_BROKEN_PIPE and lines:
            why.append("not quiet on a closed pipe")
        if o.stdout == "full" and _reads_stdin(o.argv) and "UTF-8" not in o.err:
            why.append(f"binary stdin taken (exit {o.code})")
        if why:
            problems.append(f"{' '.join(o.argv[1:])} [{o.stdout}]: {', '.join(why)}: {o.err!r}")
    assert not problems, "\n".join(problems)


def test_lost_output_says_so_in_one_line() -> None:
    done = _run([*TABLECTL, "rules", "list"], "full", b"")
    assert (done.code, done.err) == (
        EXIT_OUTPUT_LOST,
        "tablectl: cannot write the output: No space left on device\n",
    )
    done = _run([*TABLECTL, "rules", "show", "kenko"], "closed", b"")
    assert (done.code, done.err) == (EXIT_BROKEN_PIPE, "")
    done = _run([*TABLECTL, "staff-pin"], "pipe", b"\xff1234\n")
    assert (done.code, done.err, done.out) == (2, "tablectl: stdin is not UTF-8 text\n", b"")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["-m", "tablectl", "replay"], "tablectl replay: error: the following arguments"),
        (["-m", "tablectl", "records", "--journal", "a", "--config", "b"], "not allowed with"),
        (["-m", "tablectl", "nosuch"], "tablectl: error: argument COMMAND: invalid choice"),
        (["-m", "hw_sim", "serve", "--pty", "--speed", "-1"], "the speed is 0 or more"),
        (["-m", "hw_sim", "serve", "--pty", "--speed", "inf"], "the speed is 0 or more"),
        (["-m", "hw_sim", "serve", "--pty", "--faults", "random=1000000"], "wants 0..1000"),
        (["-m", "hw_sim", "serve", "--pty", "--faults", "random=-1"], "wants 0..1000"),
    ],
)
def test_a_usage_mistake_is_one_line(argv: list[str], said: str) -> None:
    # argparse's own answer is its usage block and then the error: one line is the rule.
    done = subprocess.run(
        [sys.executable, *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and said in done.stderr, done.stderr
