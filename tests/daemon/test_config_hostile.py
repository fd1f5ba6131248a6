"""Every config key filled with hostile values (issue 32): ``tablectl run`` answers with
exit 0, 2 or 78, at most one line on stderr and no traceback, and removes, changes or
creates no file. The keys come from the config module's own declarations, so a key added
there is fuzzed here too."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.cli import main
from tablectl.config import CONFIG_KEYS, TEXT_MAX
from tests.helpers import TABLECTL

BASE: dict[str, dict[str, Any]] = {
    "table": {
        "id": "t1",
        "device": "socket://127.0.0.1:1",
        "rules": "jboy",
        "journal": "state/j.sqlite3",
        "seat_names": ["A", "B", "C", "D"],
    },
    "mqtt": {"host": "127.0.0.1", "tls": True},
    "staff": {"socket": "state/ctl.sock", "rules_menu": ["jboy", "kenko"]},
    "trays": {"hold_next_hand": True},
    "watchdog": {"stall_after_s": 300},
}


def test_the_base_config_is_good_and_every_key_is_fuzzed(tree: Path) -> None:
    assert _check(tree, BASE) == (0, [])
    assert {s: tuple(keys) for s, keys in CONFIG_KEYS.items()}.keys() == BASE.keys()


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        escaped = "".join(
            c if c.isprintable() and c not in '"\\' else f"\\U{ord(c):08x}" for c in value
        )
        return f'"{escaped}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def _toml(config: dict[str, dict[str, Any]]) -> str:
    return "".join(
        f"[{section}]\n" + "".join(f"{k} = {_toml_value(v)}\n" for k, v in keys.items())
        for section, keys in config.items()
    )


def _snapshot(root: Path) -> dict[str, tuple[int, int, int, int]]:
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st_ = os.lstat(path)
            found[path] = (st_.st_ino, st_.st_mode, st_.st_size, st_.st_mtime_ns)
    return found


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config's folder with the things a hostile value may name: a folder, a FIFO, a
    device of our own, someone's file, a symlink to /dev/null."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "state").mkdir()
    (root / "folder").mkdir()
    os.mkfifo(root / "fifo")
    if os.geteuid() == 0:
        os.mknod(root / "device", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    else:
        (root / "device").symlink_to("/dev/null")
    (root / "precious.txt").write_text("someone else's file\n")
    (root / "null-link").symlink_to("/dev/null")
    (root / "rules.toml").write_text('extends = "jboy"\nname = "\\u001b[2J"\n')
    return root


def _check(tree: Path, config: dict[str, dict[str, Any]]) -> tuple[int, list[str]]:
    path = tree / "tablectl.toml"
    path.write_text(_toml(config))
    before = _snapshot(tree)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", "--config", str(path), "--check-config"])
    after = _snapshot(tree)
    assert after == before, set(after.items()) ^ set(before.items())
    lines = err.getvalue().splitlines()
    assert code in (0, 2, 78), (code, lines)
    assert "Traceback" not in err.getvalue()
    return code, lines


PATHS = [
    "folder",
    "fifo",
    "device",
    "precious.txt",
    "null-link",
    "rules.toml",
    "tablectl.toml",
    "state/j.sqlite3",
    "missing/x",
    "/dev/null",
    "/dev/zero",
    "/",
    "x" * 300,
    "/" + "d/" * 3000,
]
HOSTILE_TEXT = st.one_of(
    st.sampled_from(PATHS),
    st.sampled_from(["", " ", "\x00", "\x1b[2J", "a\nb", "\u2028", "<script>", "x" * TEXT_MAX]),
    st.text(max_size=40),
    st.builds(lambda n: "y" * n, st.integers(TEXT_MAX, 3 * TEXT_MAX)),
    st.builds(lambda p, c: p + c, st.sampled_from(PATHS), st.characters(max_codepoint=0x9F)),
)
SCALARS = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.booleans(),
    st.floats(),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=12),
    st.dictionaries(st.text(max_size=5), SCALARS, max_size=3),
)
KEYS = st.sampled_from([(section, key) for section, keys in CONFIG_KEYS.items() for key in keys])


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=3))
def test_hostile_values_in_any_key_are_one_line_and_change_no_file(
    tree: Path, changes: list[tuple[tuple[str, str], Any]]
) -> None:
    config = {section: dict(keys) for section, keys in BASE.items()}
    for (section, key), value in changes:
        config[section][key] = value
    code, lines = _check(tree, config)
    assert len(lines) == (0 if code == 0 else 1), lines
    if code:
        assert lines[0].startswith(f"tablectl run: {tree / 'tablectl.toml'}"), lines
        # A value past TEXT_MAX is not echoed back whole (one within it may be, twice).
        assert len(lines[0]) < 2 * TEXT_MAX + 1000


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("table", "device", "/dev/ttyUSB0\x00"),
        ("table", "seat_names", ["A", "B", "\x1b[2J", "D"]),
        ("table", "rules", "rules.toml"),
        ("table", "journal", "fifo"),
        ("staff", "socket", "precious.txt"),
        ("mqtt", "password", "pass\x00word"),
    ],
)
def test_a_daemon_refuses_hostile_keys_in_one_line_and_78(
    tree: Path, section: str, key: str, value: Any
) -> None:
    # The real command in its own process, without --check-config.
    config = {s: dict(keys) for s, keys in BASE.items()}
    config[section][key] = value
    if section == "mqtt":
        config["mqtt"]["username"] = "table"
    path = tree / "tablectl.toml"
    path.write_text(_toml(config))
    before = _snapshot(tree)
    done = subprocess.run(
        [*TABLECTL, "run", "--config", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 78 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and f"[{section}] {key}" in done.stderr
    assert _snapshot(tree) == before
