"""A rules name that is neither a preset nor a file is named as the user gave it, by every
command that takes one, never as a path made of the working directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tablectl.rules.loader import RulesConfigError, load_rules
from tests.helpers import run_tablectl

UNKNOWN = "unknown preset 'nosuch'; known presets: ariari, "
HINT = ", or a path to a rules file"


def _run(cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_tablectl(*args, stdin=stdin, cwd=cwd)


@pytest.mark.parametrize(
    ("args", "stdin", "prefix"),
    [
        (("rules", "show", "nosuch"), "", "tablectl: "),
        (("demo", "--fast", "--rules", "nosuch"), "", "tablectl: "),
        (("replay", "--rules", "nosuch", "-"), "", "tablectl replay: -: --rules: "),
        (("replay", "-"), '{"type":"start","rules":"nosuch"}\n', "tablectl replay: -: line 1: "),
        (
            ("ctl", "new-game", "--rules", "nosuch", "--socket", "none.sock"),
            "",
            "tablectl ctl new-game: ",
        ),
        (("run", "--config", "table.toml"), "", "tablectl run: table.toml: rules: "),
    ],
    ids=["rules-show", "demo", "replay-rules", "replay-start", "ctl-new-game", "config"],
)
def test_an_unknown_rules_name_is_named_as_given(
    tmp_path: Path, args: tuple[str, ...], stdin: str, prefix: str
) -> None:
    (tmp_path / "table.toml").write_text(
        'id = "t1"\ndevice = "socket://127.0.0.1:1"\nrules = "nosuch"\n'
    )
    done = _run(tmp_path, *args, stdin=stdin)
    assert done.returncode in (2, 78), done.stderr
    assert done.stderr.startswith(prefix + UNKNOWN), done.stderr
    assert done.stderr.endswith(HINT + "\n") and done.stderr.count("\n") == 1
    assert str(tmp_path) not in done.stderr


def test_a_path_that_is_not_there_is_named_as_given(tmp_path: Path) -> None:
    done = _run(tmp_path, "rules", "show", "./house/nosuch")
    assert (done.returncode, done.stderr) == (
        2,
        "tablectl: ./house/nosuch: no rules file there (and no preset of that name)\n",
    )
    done = _run(tmp_path, "ctl", "new-game", "--rules", "house.toml", "--socket", "none.sock")
    assert (done.returncode, done.stderr) == (
        2,
        "tablectl ctl new-game: house.toml: cannot read rules file: no file there\n",
    )


def test_a_close_name_gets_a_hint() -> None:
    with pytest.raises(RulesConfigError, match=r"unknown preset 'kenk' \(did you mean 'kenko'\?\)"):
        load_rules("kenk")
