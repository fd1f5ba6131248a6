"""``undo``: a mis-entered hand result is taken back and entered again (issue 11)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.replay import replay
from tablectl.rules.core import step
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.state import HandSettled, initial_state
from tests.helpers import random_event

PRESETS = preset_names()
RESULTS = ("ron", "tsumo", "draw", "abort", "chombo")


def _run(preset: str, *events: dict[str, Any]) -> dict[str, Any]:
    lines = [json.dumps({"type": "start", "rules": preset})]
    lines += [json.dumps(e) for e in events]
    return replay(lines).as_dict()


def _game_state(out: dict[str, Any]) -> dict[str, Any]:
    keys = ("scores", "round", "dealer", "honba", "kyoutaku", "finished", "final", "hands")
    return {k: out[k] for k in keys}


RIICHI = {"type": "riichi", "seat": 1}
#: Earlier in the hand: a riichi and a false call (by a seat the result does not name).
HAND = [RIICHI, {"type": "false_call", "seat": 1}]

# (preset, the result that was entered, the result it should have been)
CORRECTIONS = [
    (
        "kenko",
        {"type": "ron", "from": 0, "winners": [{"seat": 2, "han": 2, "fu": 40}]},
        {"type": "ron", "from": 0, "winners": [{"seat": 2, "han": 3, "fu": 40}]},
    ),
    (
        "ariari",
        {"type": "tsumo", "seat": 0, "han": 1, "fu": 30},
        {"type": "tsumo", "seat": 2, "han": 1, "fu": 30},
    ),
    ("jboy", {"type": "draw", "tenpai": [1]}, {"type": "draw", "tenpai": [1, 2]}),
    ("tenhou", {"type": "abort", "reason": "nine_terminals"}, {"type": "draw", "tenpai": []}),
    ("jboy-sanma", {"type": "chombo", "seat": 2}, {"type": "tsumo", "seat": 1, "han": 4, "fu": 30}),
    ("kantan", {"type": "tsumo", "seat": 0, "han": 2}, {"type": "draw", "tenpai": [0]}),
    ("sanma-free", {"type": "draw", "tenpai": [1]}, {"type": "chombo", "seat": 0}),
]


@pytest.mark.parametrize(("preset", "wrong", "right"), CORRECTIONS)
def test_undo_then_the_right_result_equals_the_right_result(
    preset: str, wrong: dict[str, Any], right: dict[str, Any]
) -> None:
    corrected = _run(preset, *HAND, wrong, {"type": "undo"}, right)
    direct = _run(preset, *HAND, right)
    assert corrected["rejected"] == direct["rejected"] == []
    assert _game_state(corrected) == _game_state(direct)


@pytest.mark.parametrize(("preset", "wrong", "right"), CORRECTIONS)
def test_undo_goes_back_to_just_before_the_result(
    preset: str, wrong: dict[str, Any], right: dict[str, Any]
) -> None:
    # The riichi stick and the false call of the same hand stay; the hand leaves "hands".
    undone = _run(preset, *HAND, wrong, {"type": "undo"})
    before = _run(preset, *HAND)
    assert undone["rejected"] == []
    assert _game_state(undone) == _game_state(before)
    assert undone["kyoutaku"] >= 1000  # the riichi stick is on the table again


@pytest.mark.parametrize(
    ("events", "code"),
    [
        ([], "nothing_to_undo"),
        ([RIICHI], "nothing_to_undo"),
        ([{"type": "draw", "tenpai": []}, {"type": "undo"}], "nothing_to_undo"),
        ([{"type": "draw", "tenpai": []}, RIICHI], "next_hand_started"),
        ([{"type": "draw", "tenpai": []}, {"type": "dice", "dice": [3, 4]}], "next_hand_started"),
    ],
)
def test_undo_is_refused_with_a_stable_code(events: list[dict[str, Any]], code: str) -> None:
    out = _run("jboy", *events, {"type": "undo"})
    assert [r["code"] for r in out["rejected"]] == [code]
    assert _game_state(out) == _game_state(_run("jboy", *events))


def _game_ending_ron() -> list[dict[str, Any]]:
    # Seat 0 deals into a yakuman and busts: the game is over.
    return [{"type": "ron", "from": 0, "winners": [{"seat": 1, "yakuman": 2}]}]


def test_an_undo_reopens_the_game_its_result_had_ended() -> None:
    ended = _run("jboy", *_game_ending_ron())
    assert ended["finished"] is True
    reopened = _run("jboy", *_game_ending_ron(), {"type": "undo"})
    assert reopened["finished"] is False and reopened["final"] is None
    assert reopened["hands"] == [] and reopened["scores"] == [25000] * 4
    again = _run("jboy", *_game_ending_ron(), {"type": "undo"}, *_game_ending_ron())
    assert _game_state(again) == _game_state(ended)


def test_the_all_last_stop_is_undone_with_its_result() -> None:
    # Tenhou's all-last dealer may stop after a win; the win and the stop go back.
    # Seat 1 goes ahead in East 1, six noten draws lead to South 4, and the dealer (seat
    # 3) wins without reaching the top, so it may choose to stop.
    ahead = {"type": "ron", "from": 2, "winners": [{"seat": 1, "han": 4, "fu": 30}]}
    to_south_4 = [ahead, *[{"type": "draw", "tenpai": []}] * 6]
    win = {"type": "tsumo", "seat": 3, "han": 1, "fu": 30}
    stopped = _run("ariari", *to_south_4, win, {"type": "stop"})
    assert stopped["rejected"] == [] and stopped["finished"] is True
    undone = _run("ariari", *to_south_4, win, {"type": "stop"}, {"type": "undo"})
    assert undone["finished"] is False
    assert _game_state(undone) == _game_state(_run("ariari", *to_south_4))


def test_the_clock_running_out_after_a_result_survives_its_undo() -> None:
    result = {"type": "draw", "tenpai": []}
    out = _run("kenko", result, {"type": "time_up"}, {"type": "undo"}, result)
    direct = _run("kenko", {"type": "time_up"}, result)
    assert out["rejected"] == []
    assert _game_state(out) == _game_state(direct)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), st.randoms(use_true_random=False), st.integers(5, 80))
def test_undoing_and_reentering_every_result_changes_nothing(
    preset: str, rng: random.Random, count: int
) -> None:
    rules = load_rules(preset)
    events = [random_event(rng, rules) for _ in range(count)]
    state = initial_state(rules)
    with_undos: list[dict[str, Any]] = []
    for event in events:
        state, effects = step(state, parse_event(event))
        with_undos.append(event)
        if any(isinstance(e, HandSettled) for e in effects):
            with_undos += [{"type": "undo"}, event]  # taken back and entered again
    plain = _run(preset, *events)
    corrected = _run(preset, *with_undos)
    assert _game_state(corrected) == _game_state(plain)
    # Every undo and every result entered again was accepted.
    assert [r["code"] for r in corrected["rejected"]] == [r["code"] for r in plain["rejected"]]
