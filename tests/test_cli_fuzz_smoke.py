"""The CLI and config fuzz benchmark (bench/cli_fuzz.py, issue 32) in a few hundred
invocations, so that the bench itself cannot rot: it finds every subcommand, runs, and
reports no traceback, hang, undocumented exit code or file touched outside the journal
folder. Its own checks are tested on made-up outcomes."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench" / "cli_fuzz.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_fuzz", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["cli_fuzz"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_short_fuzz_finds_nothing() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--invocations", "200", "--subprocesses", "6"]
        + ["--seed", "11", "--timeout", "1.5", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        cwd=ROOT,
    )
    summary = json.loads(done.stdout)
    assert (summary["invocations"], summary["subprocesses"]) == (206, 6)
    found = {k: summary[k] for k in ("tracebacks", "hangs", "undocumented_exit_codes")}
    found["files"] = summary["files_changed_outside_journal_folder"]
    assert found == {"tracebacks": 0, "hangs": 0, "undocumented_exit_codes": 0, "files": 0}, (
        json.dumps(summary["findings"], indent=1)[:4000]
    )
    assert summary["watched_places_changed"] == []
    assert done.returncode == 0, done.stderr[-2000:]
    # Every entry point and subcommand was tried.
    assert len(summary["per_command"]) == summary["commands"] >= 18


def test_every_subcommand_is_on_the_surface(bench: ModuleType) -> None:
    keys = {(entry, *leaf) for entry, leaf, _ in bench.surface()}
    assert {("tablectl", "run"), ("tablectl", "journal", "list"), ("conformance",)} <= keys
    assert ("hw_sim", "serve") in keys and ("hw_sim", "send") in keys


def test_the_checks_count_what_they_must(bench: ModuleType, tmp_path: Path) -> None:
    job = bench.Job(1, "tablectl", ("rules", "list"), ["rules", "list"], "empty", "file")
    err = 'Traceback (most recent call last):\n  File "x"\nValueError: x\nmore\n'
    result = bench._result(job, False, "done", 1, err, 0.1, [])
    assert result.traceback and result.stderr_lines == 4
    # U+2028 in an echoed argument does not end a line on a terminal.
    assert bench._result(job, False, "done", 2, "a\u2028b\n", 0.1, []).stderr_lines == 1
    summary = bench.summarise([result], [], 1.0, 0, bench.surface())
    assert summary["tracebacks"] == 1 and bench.failed(summary)

    (tmp_path / "state").mkdir()
    (tmp_path / "precious.txt").write_text("x")
    (tmp_path / "j.sqlite3").write_text("x")
    before = bench.snapshot(tmp_path)
    (tmp_path / "precious.txt").unlink()
    (tmp_path / "state" / "j.sqlite3").write_text("journal folder")
    (tmp_path / "j.sqlite3-wal").write_text("the named journal's own")
    (tmp_path / "stray").write_text("y")
    after = bench.snapshot(tmp_path)
    assert bench.changes(before, after, ["j.sqlite3"], tmp_path) == [
        "removed precious.txt",
        "created stray",
    ]
