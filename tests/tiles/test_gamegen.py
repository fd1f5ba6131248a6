"""Generated tile-aware games replay through ``tablectl replay`` with nothing rejected."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tablectl.cli import main
from tablectl.replay import replay
from tests.tiles.gamegen import generate_game

PRESETS = [
    "tenhou",
    "ariari",
    "jboy",
    "jboy-sanma",
    "kenko",
    "sanma-free",
    "kantan",
    "mleague",
    "wrc",
    "ema",
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_generated_game_replays_with_nothing_rejected(preset: str, seed: int) -> None:
    game = generate_game(preset, seed)
    assert game.state is not None and game.state.finished
    out = replay(game.lines()).as_dict()
    assert out["rejected"] == []
    assert out["finished"] and out["final"]["scores"] == list(game.state.final.scores)  # type: ignore[union-attr]
    assert len(out["hands"]) == game.state.hands_played
    assert game.events[1]["type"] == "dice" and game.events[2]["type"] == "layout"


def test_the_command_line_rejects_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for preset in ("tenhou", "sanma-free", "kantan"):
        path = tmp_path / f"{preset}.jsonl"
        generate_game(preset, 7, max_hands=3).write(path)
        assert main(["replay", str(path)]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["rejected"] == [] and len(result["hands"]) == 3


def test_the_same_seed_gives_the_same_game() -> None:
    first = generate_game("jboy-sanma", 5, max_hands=2)
    assert first.lines() == generate_game("jboy-sanma", 5, max_hands=2).lines()
    assert first.lines() != generate_game("jboy-sanma", 6, max_hands=2).lines()


def test_the_games_hold_every_kind_of_event() -> None:
    kinds: Counter[str] = Counter()
    for preset in ("tenhou", "sanma-free", "kantan"):
        for seed in (1, 2):
            for event in generate_game(preset, seed).events:
                kinds[event["type"] + ":" + str(event.get("kind", ""))] += 1
    for kind in (
        "deal:", "take:", "discard:", "call:chi", "call:pon", "call:kan", "kan:closed",
        "kan:added", "north:", "riichi:", "ron:", "tsumo:", "draw:",
    ):  # fmt: skip
        assert kinds[kind], kind
