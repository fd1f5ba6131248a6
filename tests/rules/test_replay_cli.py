"""`tablectl replay` as a script outside the project uses it: the stable contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tablectl.cli import main

GAME = """\
{"type":"start","rules":"kenko"}
# East 1
{"type":"riichi","seat":2}

{"type":"ron","from":0,"winners":[{"seat":2,"han":2,"fu":40}]}
{"type":"draw","tenpai":[1]}
"""


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_output_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(GAME)
    code, out, err = run(["replay", str(path)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert out.count("\n") == 1
    assert set(result) >= {
        "rules",
        "scores",
        "round",
        "dealer",
        "honba",
        "kyoutaku",
        "finished",
        "final",
        "hands",
        "rejected",
    }
    assert result["rules"] == "kenko"
    assert result["scores"] == [21400, 28000, 26600, 24000]
    assert result["round"] == {"wind": "E", "number": 2}
    assert result["dealer"] == 1 and result["honba"] == 1 and result["kyoutaku"] == 0
    assert result["finished"] is False and result["final"] is None
    assert result["hands"][0] == {
        "round": {"wind": "E", "number": 1},
        "honba": 0,
        "result": "ron",
        "deltas": [-2600, 0, 2600, 0],
        "winners": [2],
        "from": [0],
        "chips": [0, 0, 0, 0],  # kenko has no chips: always there, all zeros
    }
    assert result["rejected"] == []


def test_rules_flag_overrides_start_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(GAME)
    code, out, _ = run(["replay", str(path), "--rules", "jboy"], capsys)
    assert code == 0
    assert json.loads(out)["rules"] == "jboy"


def test_refused_events_still_exit_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text('{"type":"ron","from":1,"winners":[{"seat":1,"han":1,"fu":30}]}\n')
    code, out, _ = run(["replay", str(path), "--rules", "ariari"], capsys)
    assert code == 0
    assert json.loads(out)["rejected"][0] == {
        "line": 1,
        "code": "winner_is_discarder",
        "message": "seat 1 cannot ron its own discard",
    }


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ('{"type":"start","rules":"ariari"}\n{"type":"ron",\n', "line 2: not valid JSON"),
        ('{"type":"start","rules":"ariari"}\n\n{"type":"dance"}\n', "line 3: unknown event type"),
        ('{"type":"start","rules":"ariari"}\n{"type":"riichi"}\n', "line 2: missing field 'seat'"),
        (
            '{"type":"start","rules":"ariari"}\n{"type":"riichi","seat":"1"}\n',
            "line 2: field 'seat' must be an integer",
        ),
        (
            '{"type":"start","rules":"ariari"}\n{"type":"riichi","seat":true}\n',
            "line 2: field 'seat' must be an integer",
        ),
        (
            '{"type":"start","rules":"ariari"}\n{"type":"draw","tenpai":3}\n',
            "line 2: field 'tenpai' must be a list",
        ),
        (
            '{"type":"start","rules":"ariari"}\n{"type":"ron","from":0,"winners":{}}\n',
            "line 2: field 'winners' must be a list of hands",
        ),
        # Issue 13 round 2, 6c: a misspelt key is not an ordinary draw.
        (
            '{"type":"start","rules":"ariari"}\n{"type":"draw","tenpai":[1],"nagsahi":[2]}\n',
            "line 2: unknown field 'nagsahi' in 'draw' event (did you mean 'nagashi'?);"
            " allowed: type, tenpai, nagashi",
        ),
        (
            '{"type":"start","rules":"ariari"}\n'
            '{"type":"ron","from":0,"winners":[{"seat":1,"han":2,"fu":30,"dora":1}]}\n',
            "line 2: unknown field 'dora' in winners[0];"
            " allowed: seat, han, fu, yakuman, pao, chips",
        ),
        (
            '{"type":"start","rules":"ariari"}\n{"type":"abort","reason":"boredom"}\n',
            "line 2: field 'reason' must be one of",
        ),
        ("[1, 2]\n", "line 1: an event must be a JSON object"),
        ('{"type":"riichi","seat":1}\n', "no rule set"),
        ('{"type":"start","rules":"nosuch"}\n', "unknown preset 'nosuch'"),
    ],
)
def test_malformed_file_exits_2_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    code, out, err = run(["replay", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert fragment in err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["replay", str(tmp_path / "nope.jsonl"), "--rules", "ariari"], capsys)
    assert code == 2 and "no file there" in err


def test_replaying_twice_gives_the_same_output(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    path.write_text(GAME)
    cmd = [sys.executable, "-m", "tablectl.cli", "replay", str(path)]
    first = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    second = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert first == second and json.loads(first)["rules"] == "kenko"


def test_rules_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["rules", "list"], capsys)
    assert code == 0 and "sanma-free" in out and "kantan" in out
    code, out, _ = run(["rules", "show", "jboy-sanma"], capsys)
    assert code == 0
    assert "players = 3" in out and "honba_ron = 1500" in out
    code, out, _ = run(["rules", "show", "kantan", "--json"], capsys)
    assert json.loads(out)["scoring"]["table"] == "kantan"
    code, _, err = run(["rules", "show", "kenk"], capsys)
    assert code == 2 and "did you mean 'kenko'" in err


def test_empty_winners_is_a_refusal_not_a_malformed_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 13 round 2, 6a: docs/replay.md documents no_winner for "a ron with no
    # winner"; an empty list is refused by the core like an empty "from" (no_discarder),
    # and the replay goes on (exit 0).
    path = tmp_path / "game.jsonl"
    path.write_text(
        '{"type":"start","rules":"ariari"}\n'
        '{"type":"ron","from":0,"winners":[]}\n'
        '{"type":"ron","from":[],"winners":[{"seat":1,"han":2,"fu":30}]}\n'
        '{"type":"draw","tenpai":[1]}\n'
    )
    code, out, err = run(["replay", str(path)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert [(r["line"], r["code"]) for r in result["rejected"]] == [
        (2, "no_winner"),
        (3, "no_discarder"),
    ]
    assert len(result["hands"]) == 1
