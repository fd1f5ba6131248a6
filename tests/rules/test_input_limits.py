"""Bad input to ``tablectl replay``, the rules loader and the config loader: one line with
the line number or the file, exit 2, never a traceback, a hang or the machine's memory.
With fuzzing (hypothesis) of random bytes, JSON and TOML, bounded for CI."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.config import ConfigError, load_config, parse_config
from tablectl.jsonlines import bounded_lines
from tablectl.replay import ReplayFileError, replay
from tablectl.rules.loader import RulesConfigError, load_rules
from tests.helpers import run_tablectl


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_tablectl(*args, stdin=stdin, timeout=30)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[" * 30000 + "]" * 30000, "line 1: not valid JSON: nested too deeply"),
        ("[" * 100000, "line 1: longer than 65536 characters"),
        ('{"type":"riichi","seat":' + "9" * 5000 + "}", "an integer of thousands of digits"),
        ('{"type":"riichi","seat":' + "9" * 40 + "}", "field 'seat' is out of range"),
        (
            '{"type":"start","rules":"/dev/zero"}',
            "line 1: /dev/zero: cannot read rules file: not a regular file",
        ),
        ('\n\n{"type":"start","rules":"nosuch"}', "line 3: unknown preset 'nosuch'"),
        ('{"type":"ron","from":0,"winners":[[[[[[[[[[]]]]]]]]]]}', "line 1:"),
    ],
)
def test_a_bad_replay_file_is_one_line_naming_the_line(
    tmp_path: Path, content: str, says: str
) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(content + "\n")
    done = (
        _cli("replay", "--rules", "jboy", str(path))
        if "start" not in content
        else _cli("replay", str(path))
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_a_fifo_or_a_device_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    kinds = {str(fifo): "a FIFO", "/dev/zero": "a character device", str(tmp_path): "a directory"}
    for path, kind in kinds.items():
        done = _cli("replay", "--rules", "jboy", path)
        assert (done.returncode, done.stderr) == (
            2,
            f"tablectl replay: {path}: not a regular file ({kind})\n",
        )


def test_replay_reads_standard_input() -> None:
    done = _cli("replay", "--rules", "jboy", "-", stdin='{"type":"riichi","seat":1}\n')
    assert done.returncode == 0
    assert json.loads(done.stdout)["rules"] == "jboy"


def test_a_line_without_end_is_not_read_whole() -> None:
    # 10 MB without a newline: refused after the first 64 KiB, not read into memory.
    class Endless(io.StringIO):
        def readline(self, size: int = -1) -> str:
            assert 0 < size <= 65537
            return "x" * size

    with pytest.raises(ReplayFileError, match="line 1: longer than"):
        replay(bounded_lines(Endless()), "jboy")


def test_deeply_nested_toml_in_a_rules_file_or_the_config(tmp_path: Path) -> None:
    deep = "x = " + "[" * 5000 + "1" + "]" * 5000 + "\n"
    rules = tmp_path / "deep.toml"
    rules.write_text(deep)
    with pytest.raises(RulesConfigError, match="nested too deeply"):
        load_rules(str(rules))
    config = tmp_path / "tablectl.toml"
    config.write_text(deep)
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_config(config)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 * 1024 * 1024))
    with pytest.raises(RulesConfigError, match="at most"):
        load_rules(str(big))
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config("/dev/zero")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_into_replay_raise_only_the_documented_error(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    with contextlib.suppress(ReplayFileError):
        replay(bounded_lines(io.StringIO(text)), "jboy")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
EVENT = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "riichi",
                "ron",
                "tsumo",
                "draw",
                "abort",
                "chombo",
                "undo",
                "take",
                "dice",
                "call",
                "kan",
                "stop",
                "start",
            ]
        )
    },
    optional={
        "seat": JSON,
        "from": JSON,
        "winners": JSON,
        "han": JSON,
        "fu": JSON,
        "tenpai": JSON,
        "dice": JSON,
        "pos": JSON,
        "kind": JSON,
        "rules": JSON,
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENT | JSON, max_size=12))
def test_random_json_events_into_replay_raise_only_the_documented_error(
    lines: list[object],
) -> None:
    text = "\n".join(json.dumps(line) for line in lines)
    with contextlib.suppress(ReplayFileError):
        replay(bounded_lines(io.StringIO(text)), "jboy")


TOML_VALUE = st.recursive(
    st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=8,
)
CONFIG = st.dictionaries(
    st.sampled_from(
        [
            "id",
            "device",
            "rules",
            "journal",
            "seat_names",
            "mqtt",
            "staff",
            "trays",
            "table",
            "bogus",
        ]
    ),
    TOML_VALUE | st.dictionaries(st.text(max_size=10), TOML_VALUE, max_size=4),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(CONFIG)
def test_random_config_documents_raise_only_config_errors(raw: dict[str, object]) -> None:
    with contextlib.suppress(ConfigError):
        parse_config(Path("/etc/tablectl/tablectl.toml"), raw)
