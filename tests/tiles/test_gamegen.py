"""Generated tile-aware games replay through ``tablectl replay`` with nothing rejected."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from tablectl.cli import main
from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import initial_state
from tablectl.rules.tiletracker import kuikae_kinds
from tablectl.tiles.ids import kind as kind_of
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


def test_a_kantan_game_holds_what_seed_004_allows() -> None:
    # Seed 50: a ron off two last discards at two values, a tile called again after its
    # chi (チーされた牌もポン出来る), swap calls (食い替え（現物も）可) and rons on waits
    # thrown before (フリテン無し): each refused under kantan's rules with those as elsewhere.
    game = generate_game("kantan", 50)
    assert replay(game.lines()).rejected == []
    kantan = load_rules("kantan")
    strict = replace(kantan, tiles=replace(kantan.tiles, kuikae=False, furiten=True))
    state = initial_state(kantan)
    found: Counter[str] = Counter()
    swap: tuple[int, tuple[int, ...]] | None = None
    for event in (ev.parse_event(e) for e in game.events[1:]):
        tiles = state.tiles
        if isinstance(event, ev.Ron) and event.each_discarder and len(set(event.winners)) > 1:
            found["each at its own value"] += 1
        if isinstance(event, ev.Call) and tiles is not None:
            called = tiles.seats[event.discarder].discards[-1].tile
            found["called again"] += any(m.called == called for s in tiles.seats for m in s.melds)
            own = [kind_of(t) for t in event.tiles]
            swap = (event.seat, kuikae_kinds(kind_of(called), own, event.kind == "chi"))
        elif isinstance(event, ev.Discard) and swap is not None and event.tile is not None:
            found["swap call"] += swap[0] == event.seat and kind_of(event.tile) in swap[1]
            swap = None
        _, effects = step(replace(state, rules=strict), event)
        found["furiten elsewhere"] += any(
            isinstance(e, Refusal) and e.code == "furiten" for e in effects
        )
        state, _ = step(state, event)
    assert all(found[k] for k in ("each at its own value", "called again", "swap call")), found
    assert found["furiten elsewhere"], found
