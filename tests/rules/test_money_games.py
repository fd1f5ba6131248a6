"""The two worked games of docs/rules.md, "Money", as golden replays.

Each ``tests/rules/games/money/<preset>.jsonl`` is replayed and compared with its
``.expected.json`` whole; the figures the doc computes by hand are asserted here one by
one as well, so that a regenerated golden cannot drift from the doc unnoticed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablectl.replay import replay

GAMES = Path(__file__).parent / "games" / "money"


def play(preset: str) -> dict[str, Any]:
    lines = (GAMES / f"{preset}.jsonl").read_text("utf-8").splitlines()
    out: dict[str, Any] = json.loads(json.dumps(replay(lines).as_dict()))
    return out


@pytest.mark.parametrize("preset", ["sanma-free", "jboy"])
def test_money_game_matches_golden(preset: str) -> None:
    expected = json.loads((GAMES / f"{preset}.expected.json").read_text("utf-8"))
    out = play(preset)
    assert out["rejected"] == []
    assert out["finished"] is True
    assert out == expected


def test_sanma_free_worked_game_by_hand() -> None:
    out = play("sanma-free")
    assert [(h["deltas"], h["chips"]) for h in out["hands"]] == [
        ([-2000, 3000, -1000], [-2, 4, -2]),  # E1 riichi tsumo, ura + red: 2 from each
        ([32000, -16000, -16000], [10, -10, 0]),  # E2 pao ron: the pao player pays 10
        ([0, 16000, -16000], [0, 2, -2]),  # E3 riichi baiman ron, 2 ura: the discarder
    ]
    final = out["final"]
    assert final["scores"] == [60000, 33000, -3000]
    assert final["reason"] == "bust"
    assert final["result"] == [35.0, -1.0, -34.0]  # 箱下精算なし: -3000 settles as 0
    assert final["money"] == {
        "chips": [8, -4, -4],
        "result": [1750, -50, -1700],
        "uma": [1000, 0, -1000],
        "chip_p": [800, -400, -400],
        "fee": [-300, -300, -300],
        "prizes": [300, 0, -300],
        "total": [3550, -750, -3700],
    }


def test_jboy_worked_game_by_hand() -> None:
    out = play("jboy")
    assert [h["chips"] for h in out["hands"]] == [
        [6, -2, -2, -2],  # dealer tsumo, red 5m + gold 5p: 2 from each
        [0, -1, 1, 0],  # ron, a red 5s: 1 from the discarder
        [3, 0, 0, -3],  # riichi haneman ron, all three coloured fives
        [3, -1, -1, -1],  # mangan tsumo, the gold 5p: cold game
    ]
    final = out["final"]
    assert final["scores"] == [56700, 15600, 20600, 7100]
    assert final["reason"] == "cold_game"
    assert final["money"]["chips"] == [12, -4, -2, -6]
    assert final["money"]["total"] == [1200, -400, -200, -600]
    assert final["money"]["result"] == [0, 0, 0, 0]  # jboy states no rate
