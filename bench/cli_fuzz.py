"""Fuzz of the whole command-line and config surface (issue 32).

Run from the repository root::

    .venv/bin/python bench/cli_fuzz.py --invocations 10000 [--subprocesses 400] [--seed 0]
                                       [--workers 2] [--json]

Every entry point (each ``tablectl`` subcommand found from its argparse parser, so a new one
is fuzzed too; ``python -m hw_sim serve|send``; ``python -m firmware_bridge.conformance``)
is called with seeded hostile invocations: each option and positional of the subcommand
given a valid value or a hostile one (ESC, huge, unicode, lone surrogates, negative and
huge numbers, a folder, a FIFO, /dev/null, /dev/zero, /dev/full, a symlink loop, someone's
file, a missing folder, 0-byte, truncated and random-byte journals, journals with a deep or
non-JSON row, deep and binary replay files, rules files that are not TOML or nest too
deep), hostile config files (every key of ``tablectl.config.CONFIG_KEYS`` and of the
dashboard's section given NUL, ESC, huge, wrong-typed or path values, or a file that is not
TOML at all), hostile stdin (binary, empty, huge, /dev/zero) and a hostile stdout
(/dev/full, a closed pipe, /dev/null).

Most invocations run in-process in ``--workers`` long-lived worker processes (the main
function called with the argv, fds 0-2 pointed at the job's files): a new Python process
per invocation would take 0.3-0.5 s. A worker past its timeout is interrupted (SIGINT, as
Ctrl-C): a command that serves (the daemon, the dashboard, the simulator, a demo) must then
stop in one line; one that does not within the grace time is killed, restarted and counted
as a hang. ``--subprocesses`` more run as real ``python -m ...`` processes, for start-up and
the interpreter's last flush at exit.

Each worker has its own sandbox folder (its CWD), snapshotted before and after every
invocation: a file created, removed or changed there that the invocation did not name as
its journal or output (or in ``state/``, the journal folder of the generated configs) is a
finding. /dev, /, /var/lib and the checkout (git status) are compared before and after the
run. Prints a summary (``--json``: one JSON object) and exits 1 on any traceback, file
change outside the journal folder, hang or undocumented exit code. The bounded version runs
in the test suite (tests/test_cli_fuzz_smoke.py); the figures are in docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import math
import multiprocessing
import os
import random
import shutil
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from firmware_bridge import conformance  # noqa: E402
from hw_sim import __main__ as hw_sim_main  # noqa: E402
from tablectl import cli, stopping  # noqa: E402
from tablectl.config import CONFIG_KEYS  # noqa: E402
from tablectl.dashboard import settings as dashboard_settings  # noqa: E402
from tablectl.rules.loader import preset_names  # noqa: E402

#: The entry points: main function, parser, module for ``python -m``.
MAINS: dict[str, Callable[[list[str]], int]] = {
    "tablectl": cli.main,
    "hw_sim": hw_sim_main.main,
    "conformance": conformance.main,
}
MODULES = {"tablectl": "tablectl", "hw_sim": "hw_sim", "conformance": "firmware_bridge.conformance"}
PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "tablectl": cli.build_parser,
    "hw_sim": hw_sim_main.build_parser,
    "conformance": conformance._parser,
}

#: Exit codes every command may give (README, docs/pi.md): 0, 2 bad input, 74 output lost,
#: 130 stopped by Ctrl-C, 141 closed pipe. 1 and 3 only where documented.
EXIT_ANY = frozenset({0, 2, 74, 130, 141})
EXIT_MORE: dict[tuple[str, ...], frozenset[int]] = {
    ("tablectl", "run"): frozenset({78}),
    ("tablectl", "ctl"): frozenset({1}),  # the daemon refused
    ("tablectl", "bringup"): frozenset({1}),  # a check failed / no table answered
    ("tablectl", "dashboard"): frozenset({78}),  # the extra is not installed
    # no ledger database there / the database or its extra is unusable
    ("tablectl", "ledger"): frozenset({1, 78}),
    ("conformance",): frozenset({1, 3}),  # a check failed / nothing checked
    ("hw_sim", "send"): frozenset({1}),  # the request was refused
    ("hw_sim", "serve"): frozenset({1}),  # a scenario failed
}
#: Commands that serve or wait for a peer when their arguments are good: a timeout there is
#: a Ctrl-C they must answer, not a hang.
SERVING = {
    ("tablectl", "run"),
    ("tablectl", "demo"),
    ("tablectl", "dashboard"),
    ("tablectl", "ledger", "run"),
    ("tablectl", "bringup"),
    ("tablectl", "ctl"),
    ("hw_sim", "serve"),
    ("hw_sim", "send"),
    ("conformance",),
}
#: Folders of a sandbox whose changes are the commands' own: the generated configs'
#: journal folder, the outputs asked for, the config files written for a job.
OWN = ("state", "out", "conf")
#: Sidecars of a journal or an output file the command was given.
SIDECARS = ("", "-wal", "-shm", "-journal", ".lock", ".txt", ".json")
MAX_STDERR_LINES = 3
BINARY = b"\xff\xfe\x00\x80\xc3(\n\x9f\x92\x96 not text\n"


# --- the sandbox ----------------------------------------------------------------------------


def make_base(root: Path) -> Path:
    """A journal holding a finished game, made once by ``tablectl demo``."""
    base = root / "base"
    base.mkdir()
    journal = base / "good.sqlite3"
    subprocess.run(
        [sys.executable, "-m", "tablectl", "demo", "--fast", "--json", "--journal", str(journal)],
        check=True,
        capture_output=True,
        timeout=300,
        cwd=root,
    )
    with sqlite3.connect(journal) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    return journal


def _damaged(good: bytes, path: Path, event: str) -> None:
    path.write_bytes(good)
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(
            "UPDATE events SET event = ? WHERE seq = (SELECT MAX(seq) FROM events)", (event,)
        )


def make_fixtures(sandbox: Path, good_journal: Path) -> None:
    """(Re)build a sandbox: every hostile thing a value may name, relative to it."""
    if sandbox.exists():
        shutil.rmtree(sandbox)
    sandbox.mkdir(parents=True)
    for folder in (*OWN, "folder"):
        (sandbox / folder).mkdir()
    good = good_journal.read_bytes()
    (sandbox / "good.sqlite3").write_bytes(good)
    (sandbox / "trunc.sqlite3").write_bytes(good[: len(good) // 2])
    (sandbox / "zero.sqlite3").write_bytes(b"")
    (sandbox / "random.bin").write_bytes(random.Random(7).randbytes(4096))
    _damaged(good, sandbox / "deep.sqlite3", "[" * 100_000 + "]" * 100_000)
    _damaged(good, sandbox / "notjson.sqlite3", "not json {")
    _damaged(good, sandbox / "shape.sqlite3", '{"type": 7, "seat": "x"}')
    (sandbox / "game.jsonl").write_text(
        '{"type":"start","rules":"kenko"}\n{"type":"draw","tenpai":[1]}\n'
    )
    (sandbox / "deep.jsonl").write_text("[" * 200_000 + "]" * 200_000 + "\n")
    (sandbox / "long.jsonl").write_text('{"type":"' + "x" * 2_000_000 + '"}\n')
    (sandbox / "binary.jsonl").write_bytes(BINARY * 100)
    (sandbox / "esc.jsonl").write_text('{"type":"start","rules":"\\u001b[2J\\u0000"}\n')
    (sandbox / "rules.toml").write_text('extends = "jboy"\nname = "parlor"\n')
    (sandbox / "rules-esc.toml").write_text('extends = "jboy"\nname = "\\u001b[2J"\n')
    (sandbox / "rules-deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    (sandbox / "rules-bad.toml").write_text("extends = \n[[[\n")
    (sandbox / "precious.txt").write_text("someone else's file\n")
    os.mkfifo(sandbox / "fifo")
    (sandbox / "loop1").symlink_to("loop2")
    (sandbox / "loop2").symlink_to("loop1")
    (sandbox / "null-link").symlink_to("/dev/null")
    (sandbox / "zero-link").symlink_to("/dev/zero")


Snapshot = dict[str, tuple[str, int, int]]


def snapshot(root: Path) -> Snapshot:
    """Every path under ``root``: its kind, size and mtime (symlinks not followed)."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                kind = stat.filemode(st.st_mode)[0]
                found[os.path.relpath(path, root)] = (kind, st.st_size, st.st_mtime_ns)
    return found


def _shape(found: Snapshot) -> dict[str, tuple[str, int]]:
    """A snapshot without the times: equal in two sandboxes built alike."""
    return {path: (kind, size) for path, (kind, size, _) in found.items()}


def changes(before: Snapshot, after: Snapshot, named: list[str], root: Path) -> list[str]:
    """What changed outside the sandbox's own folders and the files the job named."""
    allowed = set()
    for name in named:
        with contextlib.suppress(ValueError, OSError):
            rel = os.path.relpath(os.path.normpath(root / name), root)
            allowed.update(rel + suffix for suffix in SIDECARS)
    found = []
    for path in sorted(set(before) | set(after)):
        if path.split(os.sep, 1)[0] in OWN or path in allowed:
            continue
        if path not in after:
            found.append(f"removed {path}")
        elif path not in before:
            found.append(f"created {path}")
        elif before[path] != after[path] and before[path][0] != "d":
            found.append(f"changed {path}")
    return found


# --- hostile values ---------------------------------------------------------------------------

PATHS = [
    "folder",
    "fifo",
    "loop1",
    "null-link",
    "zero-link",
    "precious.txt",
    "missing/x",
    "zero.sqlite3",
    "random.bin",
    "trunc.sqlite3",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/",
    "",
    "-",
    "x" * 300,
    "d/" * 3000 + "x",
]
TEXTS = [
    "\x1b[2J",
    "\x1b]0;owned\x07",
    "a\nb",
    "\r",
    "\u202e\u2028\ufeff",
    "\U0001f004" * 50,
    "\udcff\udcfe",  # bytes that were not UTF-8 in argv, as Python hands them over
    "y" * 100_000,
    " ",
    "%s%n{}",
    "--",
    "-h",
    "--version",
    "<script>alert(1)</script>",
    "../../../../etc/passwd",
]
NUMBERS = [
    "-1",
    "0",
    "-0",
    "1e309",
    "nan",
    "inf",
    "-inf",
    "99999999999999999999999999",
    "-9223372036854775809",
    "0x10",
    "1_000",
    "٣",
    "65536",
    "3.5",
]
JOURNALS = [
    "good.sqlite3",
    "deep.sqlite3",
    "notjson.sqlite3",
    "shape.sqlite3",
    "trunc.sqlite3",
    "zero.sqlite3",
    "random.bin",
    "fifo",
    "folder",
    "loop1",
    "null-link",
    "/dev/zero",
    "missing/x.sqlite3",
]
REPLAYS = ["game.jsonl", "deep.jsonl", "long.jsonl", "binary.jsonl", "esc.jsonl", "-"]
RULES = [*preset_names(), "rules.toml", "rules-esc.toml", "rules-deep.toml", "rules-bad.toml"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PORT = _closed_port()


def valid_value(dest: str, rng: random.Random) -> str | None:
    """A value that makes sense for an option or positional named ``dest`` (None: any)."""
    choices: dict[str, list[str]] = {
        "file": REPLAYS,
        "name": RULES,
        "rules": RULES,
        "journal": JOURNALS,
        "game": ["", "g", "0", "zzzz"],
        "url": [
            f"socket://127.0.0.1:{PORT}",
            "/dev/null",
            "/dev/zero",
            "fifo",
            "usb://0000:0000",
            "sim://x",
            "socket://[::1",
        ],
        "socket": ["state/none.sock", "fifo", "precious.txt", "folder", "x" * 200],
        "output": ["out/o.txt", "-", "folder", "missing/x", "/dev/full", "/dev/null"],
        "report": ["out/report", "folder/", "missing/r"],
        "since": ["2024-05-01", "2024-13-45", "yesterday", "2024-05-01T25:00"],
        "broker": [f"mqtt://127.0.0.1:{PORT}", "mqtt://", "http://x", "mqtts://127.0.0.1:0"],
        "listen": ["127.0.0.1:0", "0.0.0.0:80", "127.0.0.1:99999", ":"],
        "prefix": ["tablectl", "#", "a/+/b", ""],
        "port": [str(PORT), "0", "-1", "70000"],
        "request": ['{"cmd":"state"}', "{", "[]", '"x"'],
        "host": ["127.0.0.1", "::1", "no-such-host.invalid"],
        "seed": ["0", "3", "-5"],
        "games": ["1", "0", "-1"],
        "key_timeout": ["0.1", "0", "-1", "4000"],
        "motor_timeout": ["0.1", "0", "nan"],
        "tcp": ["0", "-1", "70000"],
        "faults": ["drop=0.5", "unplug@4:2", "bogus", "random=1000000"],
        "scenario": REPLAYS,
        "signing_key": ["00" * 32, "zz", "00"],
        "log_level": ["WARNING", "loud", "DEBUG"],
        "only": ["hello", "nope"],
        "seats": ["0,2", "9", ",", "a"],
        "max_games": ["1", "0", "-3"],
        "speed": ["0", "-1", "nan"],
        "control": ["0", "-1"],
        "fault_seed": ["1", "-1"],
        "config": ["conf/{cfg}", "missing.toml"],
        "db": ["out/ledger.sqlite3", "folder", "missing/l.sqlite3", "postgresql://u@127.0.0.1:1/d"],
        "day": ["2026-11-26", "2026-02-30", "tonight"],
        "cutoff_hour": ["6", "24", "-1"],
    }
    values = choices.get(dest)
    return None if values is None else rng.choice(values)


def hostile_value(rng: random.Random) -> str:
    """Any hostile argv value."""
    family = rng.choice((PATHS, TEXTS, NUMBERS, JOURNALS, REPLAYS, RULES))
    value = rng.choice(family)
    if rng.random() < 0.1:
        value += rng.choice(TEXTS)[:50]
    return value


# --- hostile configs ------------------------------------------------------------------------

BASE: dict[str, dict[str, Any]] = {
    "table": {
        "id": "t1",
        "device": f"socket://127.0.0.1:{PORT}",
        "rules": "jboy",
        "journal": "state/j.sqlite3",
        "seat_names": ["A", "B", "C", "D"],
    },
    "mqtt": {"host": "127.0.0.1", "port": PORT, "tls": False},
    "staff": {"socket": "state/ctl.sock", "rules_menu": ["jboy", "kenko"]},
    "trays": {"hold_next_hand": True},
}
DASHBOARD_KEYS = sorted(getattr(dashboard_settings, "_KEYS", ()))
SCALARS: list[Any] = [
    *PATHS[:-2],
    "\x00",
    "dev\x00ice",
    "socket://[::1",
    f"socket://127.0.0.1:{PORT}",
    "\x1b[2J",
    "a\nb",
    "\u2028",
    "x" * 5000,
    "y" * 70_000,
    -1,
    0,
    2**63 - 1,
    -(2**63),
    10**40,
    True,
    False,
    float("nan"),
    float("inf"),
    -0.0,
    1.5,
]


def toml_value(value: Any, rng: random.Random) -> str:
    """``value`` in TOML; strings sometimes with raw control characters (not TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        if rng.random() < 0.1:
            return '"' + value.replace("\\", "").replace('"', "") + '"'  # raw, maybe invalid
        escaped = "".join(
            c if c.isprintable() and c not in '"\\' else f"\\U{ord(c):08x}"
            for c in value
            if not 0xD800 <= ord(c) <= 0xDFFF
        )
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v, rng) for v in value) + "]"
    return "{" + ", ".join(f'"{k}" = {toml_value(v, rng)}' for k, v in value.items()) + "}"


def hostile_config_value(rng: random.Random) -> Any:
    """A scalar, a list or a table of hostile values."""
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(SCALARS)
    if roll < 0.8:
        return [rng.choice(SCALARS) for _ in range(rng.randrange(0, 6))]
    if roll < 0.9:
        return {rng.choice(["a", "", "\x1b"]): rng.choice(SCALARS)}
    return rng.choice(JOURNALS)


def hostile_config(rng: random.Random) -> bytes:
    """A config file: the base with 1-3 keys hostile, or a file that is no config at all."""
    roll = rng.random()
    if roll < 0.04:
        return rng.choice(
            [
                b"",
                BINARY,
                b"[table]\nid = " + b"[" * 5000 + b"]" * 5000,
                b"[table]\nid = {a={b=" + b"{c=" * 3000,
                b"[table]\nid = 'a'\nid = 'b'\n",
                b"[[table]]\n",
                b"table = 5\n",
                b"[nope]\nx = 1\n",
                b"\xef\xbb\xbf[table]\n",
            ]
        )
    config = {section: dict(keys) for section, keys in BASE.items()}
    keys = [(s, k) for s, ks in CONFIG_KEYS.items() for k in ks]
    keys += [("dashboard", k) for k in DASHBOARD_KEYS]
    for _ in range(rng.randrange(0 if roll < 0.1 else 1, 4)):
        section, key = rng.choice(keys)
        if rng.random() < 0.05:
            config.pop(section, None)
            continue
        config.setdefault(section, {})[key] = hostile_config_value(rng)
    if rng.random() < 0.03:
        config["table"]["typo_" + rng.choice(["id", "jurnal"])] = 1
    text = "".join(
        f"[{section}]\n" + "".join(f"{k} = {toml_value(v, rng)}\n" for k, v in keys_.items())
        for section, keys_ in config.items()
    )
    return text.encode("utf-8", "surrogatepass")


# --- jobs ------------------------------------------------------------------------------------


@dataclass
class Job:
    """One invocation: the entry point, its argv, what stdin and stdout are, and the files
    written for it first (its config)."""

    n: int
    entry: str
    leaf: tuple[str, ...]
    argv: list[str]
    stdin: str  # empty | binary | huge | text | zero | null
    stdout: str  # file | full | closed | null
    files: dict[str, bytes] = field(default_factory=dict)
    named: list[str] = field(default_factory=list)

    @property
    def serving(self) -> bool:
        """Whether the command may serve or wait for a peer with these arguments."""
        key = (self.entry, *self.leaf)
        if key == ("tablectl", "run") and "--check-config" in self.argv:
            return False
        return key in SERVING

    def label(self) -> str:
        """The command line, cut short for a report."""
        words = [MODULES[self.entry], *self.argv]
        text = " ".join(w if len(w) < 40 else f"{w[:20]!r}...({len(w)})" for w in words)
        return f"{text} <{self.stdin} >{self.stdout}"


@dataclass
class Result:
    """How one invocation ended."""

    n: int
    label: str
    key: str
    subprocess: bool
    outcome: str  # done | served | hang
    code: int | None
    traceback: bool
    stderr_lines: int
    stderr_head: str
    seconds: float
    changes: list[str]


def _leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[Any, ...]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for action in subs:
        for name, child in action.choices.items():
            yield from _leaves(child, (*path, name))


def surface() -> list[tuple[str, tuple[str, ...], argparse.ArgumentParser]]:
    """Every (entry point, subcommand, its parser), from the parsers themselves."""
    found = []
    for entry, build in PARSERS.items():
        for leaf, parser in _leaves(build()):
            found.append((entry, leaf, parser))
    return found


def _value(action: argparse.Action, rng: random.Random, hostile: float) -> str:
    if rng.random() >= hostile:
        if action.choices and not isinstance(action, argparse._SubParsersAction):
            return str(rng.choice(list(action.choices)))
        value = valid_value(action.dest, rng)
        if value is not None:
            return value
    return hostile_value(rng)


def make_job(
    n: int,
    rng: random.Random,
    targets: list[tuple[str, tuple[str, ...], argparse.ArgumentParser]],
) -> Job:
    """One seeded hostile invocation of a random subcommand."""
    entry, leaf, parser = rng.choice(targets)
    hostile = rng.choice((0.1, 0.3, 0.7))
    argv = list(leaf)
    named: list[str] = []
    files: dict[str, bytes] = {}
    if rng.random() < 0.03:
        argv.append(rng.choice(["--help", "-h", "--bogus", "--version"]))
    options = [a for a in parser._actions if a.option_strings and a.dest not in ("help", "version")]
    positionals = [a for a in parser._actions if not a.option_strings]
    words: list[str] = []
    for action in options:
        if rng.random() > 0.35:
            continue
        words.append(rng.choice(action.option_strings))
        if action.nargs != 0:
            value = _value(action, rng, hostile)
            words.append(value)
            if action.dest in ("journal", "output", "report", "db"):
                named.append(value)
    for action in positionals:
        if action.nargs == "?" and rng.random() < 0.4:
            continue
        words.append(_value(action, rng, hostile))
    if rng.random() < 0.05:
        words.append(hostile_value(rng))  # one too many
    if rng.random() < 0.05 and words:
        del words[rng.randrange(len(words))]  # one too few
    if rng.random() < 0.3:
        rng.shuffle(words)
    if (
        (entry, *leaf) == ("tablectl", "run")
        and rng.random() < 0.9
        and "--check-config" not in words
    ):
        words.append("--check-config")  # the daemon itself a tenth of the time
    if "--config" in parser._option_string_actions and rng.random() < 0.8:
        words = [w for w in words if w != "--config" and not w.startswith("conf/")]
        words += ["--config", "conf/{cfg}"]
    argv += words
    cfg = f"c{n}.toml"
    if any("{cfg}" in w for w in argv):
        argv = [w.replace("{cfg}", cfg) for w in argv]
        files[f"conf/{cfg}"] = hostile_config(rng)
        named += _config_names(files[f"conf/{cfg}"])
    argv = [w.replace("\x00", "") for w in argv]  # no NUL in a real argv
    stdin = rng.choice(("empty", "binary", "huge", "text", "zero", "null"))
    stdout = rng.choice(("file", "file", "full", "closed", "null"))
    return Job(n, entry, leaf, argv, stdin, stdout, files, named)


def _config_names(data: bytes) -> list[str]:
    """The journal and socket a config names: the daemon's own files."""
    import tomllib

    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return []
    names = []
    for section, key in (("table", "journal"), ("staff", "socket")):
        value = raw.get(section, {}).get(key) if isinstance(raw.get(section), dict) else None
        if isinstance(value, str) and "\x00" not in value:
            names.append(value)
    return names


# --- running a job in-process ------------------------------------------------------------------

STDIN_DATA = {
    "empty": b"",
    "binary": BINARY,
    "huge": b"1234" * 600_000,
    "text": b"1234\n",
}


def _stdin_fd(kind: str, scratch: Path) -> int:
    if kind in ("zero", "null"):
        return os.open(f"/dev/{kind}", os.O_RDONLY)
    path = scratch / "stdin"
    path.write_bytes(STDIN_DATA[kind])
    return os.open(path, os.O_RDONLY)


def _stdout_fd(kind: str, scratch: Path) -> int:
    if kind == "full":
        return os.open("/dev/full", os.O_WRONLY)
    if kind == "null":
        return os.open("/dev/null", os.O_WRONLY)
    if kind == "closed":
        read, write = os.pipe()
        os.close(read)
        return write
    return os.open(scratch / "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)


def _reset_process_state() -> None:
    """What one command leaves in a process that the next must not inherit."""
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    stopping._state.requested = None
    stopping.release()
    signal.signal(signal.SIGINT, signal.default_int_handler)


def run_in_process(job: Job, sandbox: Path, scratch: Path, err: io.TextIOWrapper) -> Result:
    """``job`` through its main function in this process, fds 0-2 pointed at its files."""
    for rel, data in job.files.items():
        (sandbox / rel).write_bytes(data)
    before = snapshot(sandbox)
    fds = [_stdin_fd(job.stdin, scratch), _stdout_fd(job.stdout, scratch)]
    err_fd = os.open(scratch / "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    saved = [os.dup(0), os.dup(1), os.dup(2)]
    real = sys.stdin, sys.stdout, sys.stderr
    err.flush()
    for target, fd in enumerate((*fds, err_fd)):
        os.dup2(fd, target)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = err
    started = time.monotonic()
    code: int | None
    try:
        code = MAINS[job.entry](job.argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        # What a real process would print and exit 1 with.
        traceback.print_exc(file=err)
        code = 1
    seconds = time.monotonic() - started
    with contextlib.suppress(Exception):
        err.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the command left buffered goes nowhere
    os.close(devnull)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    for target, fd in enumerate(saved):
        os.dup2(fd, target)
        os.close(fd)
    for fd in (*fds, err_fd):
        os.close(fd)
    sys.stdin, sys.stdout, sys.stderr = real
    _reset_process_state()
    text = (scratch / "stderr").read_text("utf-8", "replace")
    found = changes(before, snapshot(sandbox), job.named, sandbox)
    return _result(job, False, "done", code, text, seconds, found)


def _result(
    job: Job, sub: bool, outcome: str, code: int | None, err: str, seconds: float, found: list[str]
) -> Result:
    # Only "\n" ends a line on a terminal (str.splitlines also splits at U+2028 and others,
    # which a hostile argument echoed back may hold).
    lines = [line for line in err.split("\n") if line.strip()]
    return Result(
        n=job.n,
        label=job.label(),
        key=" ".join((MODULES[job.entry], *job.leaf)),
        subprocess=sub,
        outcome=outcome,
        code=code,
        traceback="Traceback" in err or "Exception ignored" in err,
        stderr_lines=len(lines),
        stderr_head=err[:400],
        seconds=round(seconds, 4),
        changes=found,
    )


def _clean_own(sandbox: Path) -> None:
    for folder in OWN:
        for entry in (sandbox / folder).iterdir():
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def worker(conn: Connection, sandbox: Path, scratch: Path, good: Path) -> None:
    """A long-lived worker: runs the jobs it is sent in-process, one at a time."""
    os.chdir(sandbox)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    err = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
        line_buffering=True,
    )  # fmt: skip
    pristine = snapshot(sandbox)
    while True:
        try:
            job = conn.recv()
            if job is None:
                return
            result = run_in_process(job, sandbox, scratch, err)
            _clean_own(sandbox)
            if snapshot(sandbox) != pristine:
                make_fixtures(sandbox, good)
                os.chdir(sandbox)
                pristine = snapshot(sandbox)
            conn.send(result)
        except KeyboardInterrupt:
            continue  # a Ctrl-C meant for a command that had just ended


# --- the pool ------------------------------------------------------------------------------------


@dataclass
class _Slot:
    index: int
    sandbox: Path
    scratch: Path
    process: Any = None
    conn: Connection | None = None
    job: Job | None = None
    deadline: float = 0.0
    interrupted: bool = False
    started: float = 0.0


class Pool:
    """``size`` worker processes, each restarted when it hangs."""

    def __init__(self, root: Path, good: Path, size: int, timeout: float, grace: float) -> None:
        self.good = good
        self.timeout = timeout
        self.grace = grace
        self.context = multiprocessing.get_context("fork")
        self.slots = []
        for i in range(size):
            slot = _Slot(i, root / f"w{i}", root / f"scratch{i}")
            slot.scratch.mkdir()
            self.slots.append(slot)
            self._start(slot)

    def _start(self, slot: _Slot) -> None:
        make_fixtures(slot.sandbox, self.good)
        parent, child = self.context.Pipe()
        slot.process = self.context.Process(
            target=worker, args=(child, slot.sandbox, slot.scratch, self.good), daemon=True
        )
        slot.process.start()
        child.close()
        slot.conn = parent

    def _hung(self, slot: _Slot) -> Result:
        assert slot.job is not None
        slot.process.kill()
        slot.process.join()
        err = ""
        with contextlib.suppress(OSError):
            err = (slot.scratch / "stderr").read_text("utf-8", "replace")
        result = _result(slot.job, False, "hang", None, err, time.monotonic() - slot.started, [])
        self._start(slot)
        return result

    def run(self, jobs: list[Job], report: Callable[[Result], None]) -> None:
        """Every job, each on the first free worker; ``report`` gets each result."""
        pending = list(reversed(jobs))
        busy: dict[Connection, _Slot] = {}
        while pending or busy:
            for slot in self.slots:
                if slot.job is None and pending:
                    slot.job = pending.pop()
                    slot.started = time.monotonic()
                    slot.deadline = slot.started + self.timeout
                    slot.interrupted = False
                    assert slot.conn is not None
                    slot.conn.send(slot.job)
                    busy[slot.conn] = slot
            now = time.monotonic()
            ready = wait(list(busy), timeout=max(0.0, min(s.deadline for s in busy.values()) - now))
            for conn in ready:
                slot = busy.pop(conn)  # type: ignore[arg-type]
                try:
                    result: Result = conn.recv()  # type: ignore[union-attr]
                except (EOFError, OSError):
                    result = self._hung(slot)  # died
                    result.outcome = "died"
                if slot.interrupted and result.outcome == "done":
                    result.outcome = "served"
                slot.job = None
                report(result)
            now = time.monotonic()
            for conn, slot in list(busy.items()):
                if now < slot.deadline:
                    continue
                assert slot.job is not None
                if slot.job.serving and not slot.interrupted:
                    os.kill(slot.process.pid, signal.SIGINT)
                    slot.interrupted = True
                    slot.deadline = now + self.grace
                    continue
                del busy[conn]
                report(self._hung(slot))
                slot.job = None

    def close(self) -> None:
        """Stop every worker."""
        for slot in self.slots:
            with contextlib.suppress(OSError):
                assert slot.conn is not None
                slot.conn.send(None)
            slot.process.join(5)
            if slot.process.is_alive():
                slot.process.kill()


# --- subprocesses -------------------------------------------------------------------------------


def run_subprocess(job: Job, sandbox: Path, scratch: Path, timeout: float, grace: float) -> Result:
    """``job`` as a real ``python -m ...`` process."""
    for rel, data in job.files.items():
        (sandbox / rel).write_bytes(data)
    before = snapshot(sandbox)
    stdin = _stdin_fd(job.stdin, scratch)
    stdout = _stdout_fd(job.stdout, scratch)
    started = time.monotonic()
    with open(scratch / "stderr", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", MODULES[job.entry], *job.argv],
            stdin=stdin,
            stdout=stdout,
            stderr=err,
            cwd=sandbox,
        )
        os.close(stdin)
        os.close(stdout)
        outcome = "done"
        try:
            code: int | None = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            outcome = "served" if job.serving else "hang"
            proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                outcome, code = "hang", None
    seconds = time.monotonic() - started
    text = (scratch / "stderr").read_text("utf-8", "replace")
    found = changes(before, snapshot(sandbox), job.named, sandbox)
    _clean_own(sandbox)
    return _result(job, True, outcome, code, text, seconds, found)


# --- the watched places outside the sandboxes -------------------------------------------------


def _listing(path: str) -> set[str]:
    try:
        return set(os.listdir(path))
    except OSError:
        return set()


def watched() -> dict[str, set[str]]:
    """The names in the system places a command could wrongly touch, and the checkout."""
    places = {p: _listing(p) for p in ("/dev", "/", "/var/lib", "/etc", "/var/lib/tablectl")}
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    places["checkout"] = set(status.splitlines())
    return places


def watched_changes(before: dict[str, set[str]], after: dict[str, set[str]]) -> list[str]:
    """What appeared or went in the watched places."""
    found = []
    for place, names in before.items():
        found += [f"{place}: created {n}" for n in sorted(after[place] - names)]
        found += [f"{place}: removed {n}" for n in sorted(names - after[place])]
    return found


# --- the run --------------------------------------------------------------------------------------


def allowed_codes(result: Result) -> frozenset[int]:
    """The documented exit codes of the command ``result`` ran."""
    words = tuple(result.key.split())
    entry = {v: k for k, v in MODULES.items()}[words[0]]
    key = (entry, *words[1:])
    more: frozenset[int] = frozenset()
    for prefix, codes in EXIT_MORE.items():
        if key[: len(prefix)] == prefix:
            more |= codes
    return EXIT_ANY | more


def fuzz(
    invocations: int, subprocesses: int, seed: int, workers: int, timeout: float
) -> dict[str, Any]:
    """Run the fuzz; the summary."""
    rng = random.Random(seed)
    targets = surface()
    jobs = [make_job(n, rng, targets) for n in range(invocations + subprocesses)]
    sub_jobs, jobs = jobs[:subprocesses], jobs[subprocesses:]
    results: list[Result] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cli-fuzz-") as tmp:
        root = Path(tmp)
        good = make_base(root)
        os.chdir(root)
        before = watched()
        pool = Pool(root, good, workers, timeout, grace=max(5.0, 2 * timeout))
        try:
            pool.run(jobs, results.append)
        finally:
            pool.close()
        lock = threading.Lock()
        for i in range(workers):
            make_fixtures(root / f"s{i}", good)
            (root / f"sscratch{i}").mkdir()
        free = list(range(workers))
        pristine = _shape(snapshot(root / "s0"))

        def one(job: Job) -> Result:
            with lock:
                i = free.pop()
            try:
                result = run_subprocess(
                    job, root / f"s{i}", root / f"sscratch{i}", timeout * 3, grace=10.0
                )
                if _shape(snapshot(root / f"s{i}")) != pristine:
                    make_fixtures(root / f"s{i}", good)
                return result
            finally:
                with lock:
                    free.append(i)

        with ThreadPoolExecutor(workers) as threads:
            results += list(threads.map(one, sub_jobs))
        os.chdir(REPO)
        outside = watched_changes(before, watched())
    return summarise(results, outside, time.monotonic() - started, seed, targets)


def summarise(
    results: list[Result],
    outside: list[str],
    seconds: float,
    seed: int,
    targets: list[tuple[str, tuple[str, ...], argparse.ArgumentParser]],
) -> dict[str, Any]:
    """The counts, and the findings listed (a few of each kind)."""
    tracebacks = [r for r in results if r.traceback]
    # A command that served until its Ctrl-C may log as it serves.
    wordy = [r for r in results if r.stderr_lines > MAX_STDERR_LINES and r.outcome != "served"]
    hangs = [r for r in results if r.outcome in ("hang", "died")]
    changed = [r for r in results if r.changes]
    codes = Counter(r.code for r in results if r.code is not None)
    odd = [r for r in results if r.code is not None and r.code not in allowed_codes(r)]

    def listed(found: list[Result]) -> list[dict[str, Any]]:
        seen: dict[str, dict[str, Any]] = {}
        for r in found:
            if r.key not in seen:
                seen[r.key] = {**asdict(r), "count": 0}
            seen[r.key]["count"] += 1
        return list(seen.values())

    return {
        "seed": seed,
        "commands": len(targets),
        "invocations": len(results),
        "in_process": sum(not r.subprocess for r in results),
        "subprocesses": sum(r.subprocess for r in results),
        "seconds": round(seconds, 1),
        "tracebacks": len(tracebacks),
        "not_one_line": len(wordy),
        "hangs": len(hangs),
        "served_until_ctrl_c": sum(r.outcome == "served" for r in results),
        "files_changed_outside_journal_folder": sum(len(r.changes) for r in changed),
        "watched_places_changed": outside,
        "undocumented_exit_codes": len(odd),
        "exit_codes": {str(k): v for k, v in sorted(codes.items())},
        "per_command": dict(sorted(Counter(r.key for r in results).items())),
        "findings": {
            "tracebacks": listed(tracebacks),
            "not_one_line": listed(wordy),
            "hangs": listed(hangs),
            "file_changes": listed(changed),
            "undocumented_exit_codes": listed(odd),
        },
    }


def failed(summary: dict[str, Any]) -> bool:
    """Whether the run found anything that must not be."""
    return bool(
        summary["tracebacks"]
        or summary["hangs"]
        or summary["files_changed_outside_journal_folder"]
        or summary["watched_places_changed"]
        or summary["undocumented_exit_codes"]
    )


def print_summary(summary: dict[str, Any]) -> None:
    """The summary for people."""
    for key in (
        "invocations", "in_process", "subprocesses", "commands", "seconds", "tracebacks",
        "not_one_line", "hangs", "served_until_ctrl_c", "files_changed_outside_journal_folder",
        "undocumented_exit_codes",
    ):  # fmt: skip
        print(f"{key:<40} {summary[key]}")
    print(f"{'watched places changed':<40} {summary['watched_places_changed'] or 0}")
    print(f"{'exit codes':<40} {summary['exit_codes']}")
    for kind, found in summary["findings"].items():
        for f in found:
            print(f"\n{kind} x{f['count']} ({f['key']}): {f['label'][:300]}")
            print(f"  exit {f['code']} ({f['outcome']}); {f['changes'] or ''}")
            print("  " + f["stderr_head"].strip().replace("\n", "\n  ")[:400])


def main() -> int:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--invocations", type=int, default=10_000, help="in-process (default 10000)"
    )
    parser.add_argument(
        "--subprocesses", type=int, default=400, help="real processes (default 400)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=2.0, help="s before a Ctrl-C (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    summary = fuzz(args.invocations, args.subprocesses, args.seed, args.workers, args.timeout)
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print_summary(summary)
    return 1 if failed(summary) else 0


if __name__ == "__main__":
    sys.exit(main())
