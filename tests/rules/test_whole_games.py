"""Each preset plays a whole game script from the first hand to the game's end.

The expected outputs are golden files; the ariari game was checked hand by hand (the
nine settlements and the final scores [24800, 23300, 27400, 24500]).  Regenerate a golden
file only after checking the difference by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablectl.replay import replay
from tablectl.rules.loader import preset_names

GAMES = Path(__file__).parent / "games"


@pytest.mark.parametrize("preset", preset_names())
def test_whole_game_matches_golden(preset: str) -> None:
    lines = (GAMES / f"{preset}.jsonl").read_text("utf-8").splitlines()
    out = replay(lines).as_dict()
    expected = json.loads((GAMES / f"{preset}.expected.json").read_text("utf-8"))
    assert out["rules"] == preset
    assert out["rejected"] == []
    assert out["finished"] is True
    assert out["hands"][0]["round"] == {"wind": "E", "number": 1}
    assert json.loads(json.dumps(out)) == expected


def test_ariari_game_by_hand() -> None:
    lines = (GAMES / "ariari.jsonl").read_text("utf-8").splitlines()
    out = replay(lines).as_dict()
    assert [h["deltas"] for h in out["hands"]] == [
        [-1000, 3000, 0, -2000],  # E1: 2h30 ron 2000 + seat 0's riichi stick
        [2000, -1000, -1000, -1000],  # E2: riichi, 1 tenpai
        [2300, -1300, 0, 0],  # E3 1 honba: 1000 + 300 + the stick
        [-1000, 0, 0, 0],  # E4: riichi, then triple ron abort (dealer passes)
        [0, 0, 0, 0],  # S1: all noten
        [0, 0, 0, 0],  # S2: four kans abort
        [0, -2400, 3400, 0],  # S3 3 honba: dealer 1500 + 900 + the stick
        [-2500, 0, 0, 2500],  # S3 4 honba: 1h40 1300 + 1200
        [0, 0, 0, 0],  # S4: all noten, the last dealer passes: game over
    ]
    assert out["final"] == {
        "scores": [24800, 23300, 27400, 24500],
        "ranking": [2, 0, 3, 1],
        "reason": "last_round",
        "money": None,  # ariari has no money
    }
    assert all(h["chips"] == [0, 0, 0, 0] for h in out["hands"])
