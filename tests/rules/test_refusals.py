"""Impossible or out-of-place input is refused with a stable code and changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.rules.core import step
from tablectl.rules.events import (
    EVENT_KEYS,
    EVENT_TYPES,
    EventFormatError,
    event_to_json,
    parse_event,
)
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.state import initial_state
from tests.helpers import play


def ron(frm: Any, *winners: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ron", "from": frm, "winners": list(winners)}


REFUSALS: list[tuple[str, str, list[dict[str, Any]], str]] = [
    ("1 han 20 fu by ron", "ariari", [ron(0, {"seat": 1, "han": 1, "fu": 20})], "impossible_fu"),
    ("3 han 20 fu by ron", "ariari", [ron(0, {"seat": 1, "han": 3, "fu": 20})], "impossible_fu"),
    (
        "1 han 20 fu tsumo",
        "ariari",
        [{"type": "tsumo", "seat": 1, "han": 1, "fu": 20}],
        "impossible_fu",
    ),
    ("25 fu under 2 han", "jboy", [ron(0, {"seat": 1, "han": 1, "fu": 25})], "impossible_fu"),
    ("fu 35", "kenko", [ron(0, {"seat": 1, "han": 2, "fu": 35})], "bad_fu"),
    ("fu 120", "kenko", [ron(0, {"seat": 1, "han": 2, "fu": 120})], "bad_fu"),
    ("fu 10", "kenko", [ron(0, {"seat": 1, "han": 2, "fu": 10})], "bad_fu"),
    ("fu missing", "kenko", [ron(0, {"seat": 1, "han": 2})], "fu_missing"),
    ("han 0", "ariari", [ron(0, {"seat": 1, "han": 0, "fu": 30})], "han_below_one"),
    # Issue 13 item 8: an empty "from" crashed the core (IndexError) and passed under kantan.
    ("no discarder", "jboy", [ron([], {"seat": 1, "han": 2, "fu": 30})], "no_discarder"),
    ("no discarder, kantan", "kantan", [ron([], {"seat": 1, "han": 2})], "no_discarder"),
    # Issue 13 round 2, 6a: an empty "winners" is refused like an empty "from".
    ("no winner", "jboy", [ron(1, *())], "no_winner"),
    ("no winner, kantan", "kantan", [ron([2], *())], "no_winner"),
    # Issue 13 round 2, 6b: a fu is range-checked where the preset ignores it too (the
    # fu scale of the standard table: 20, 25, 30 to 110 by tens). 6 han is a haneman
    # whatever the fu, sanma-free scores every hand at 30 fu (seed 003: 一律30符計算),
    # kantan has no fu at all (seed 004: 符計算無し) - and still no hand has 7 or -5 fu.
    ("fu 7 at 6 han", "tenhou", [ron(0, {"seat": 1, "han": 6, "fu": 7})], "bad_fu"),
    ("fu 7 in sanma-free", "sanma-free", [ron(0, {"seat": 1, "han": 2, "fu": 7})], "bad_fu"),
    ("fu -5 in kantan", "kantan", [ron([0], {"seat": 1, "han": 2, "fu": -5})], "bad_fu"),
    (
        "fu 7 tsumo at 5 han",
        "ariari",
        [{"type": "tsumo", "seat": 1, "han": 5, "fu": 7}],
        "bad_fu",
    ),
    ("han 14", "jboy", [ron(0, {"seat": 1, "han": 14})], "han_above_13"),
    ("han negative", "kantan", [ron(0, {"seat": 1, "han": -2})], "han_below_one"),
    ("yakuman 0 is not a yakuman", "ariari", [ron(0, {"seat": 1, "yakuman": 9})], "bad_yakuman"),
    (
        "discarder among winners",
        "ariari",
        [ron(1, {"seat": 1, "han": 2, "fu": 30})],
        "winner_is_discarder",
    ),
    ("seat 4 in four players", "ariari", [ron(0, {"seat": 4, "han": 2, "fu": 30})], "no_such_seat"),
    ("seat 3 in three players", "sanma-free", [ron(0, {"seat": 3, "han": 2})], "no_such_seat"),
    ("discarder seat -1", "ariari", [ron(-1, {"seat": 2, "han": 2, "fu": 30})], "no_such_seat"),
    ("riichi seat 5", "ariari", [{"type": "riichi", "seat": 5}], "no_such_seat"),
    (
        "winner twice",
        "ariari",
        [ron(0, {"seat": 1, "han": 2, "fu": 30}, {"seat": 1, "han": 2, "fu": 30})],
        "duplicate_seat",
    ),
    ("tenpai seat twice", "ariari", [{"type": "draw", "tenpai": [1, 1]}], "duplicate_seat"),
    (
        "several discarders outside kantan",
        "ariari",
        [ron([0, 2], {"seat": 1, "han": 2, "fu": 30})],
        "one_discarder",
    ),
    (
        "kantan winner listed twice for one discarder",
        "kantan",
        [ron([0], {"seat": 1, "han": 2}, {"seat": 1, "han": 1})],
        "duplicate_seat",
    ),
    (
        "kantan winner listed three times for two discarders",
        "kantan",
        [ron([0, 2], {"seat": 1, "han": 2}, {"seat": 1, "han": 1}, {"seat": 1, "han": 1})],
        "duplicate_seat",
    ),
    (
        "kantan one winner only",
        "kantan",
        [ron(0, {"seat": 1, "han": 2}, {"seat": 2, "han": 1})],
        "one_winner",
    ),
    (
        "nine terminals where not allowed",
        "jboy",
        [{"type": "abort", "reason": "nine_terminals"}],
        "abort_not_allowed",
    ),
    (
        "any abort in kenko",
        "kenko",
        [{"type": "abort", "reason": "four_winds"}],
        "abort_not_allowed",
    ),
    (
        "four kans abort in jboy",
        "jboy",
        [{"type": "abort", "reason": "four_kans"}],
        "abort_not_allowed",
    ),
    (
        "four riichi without four riichi",
        "ariari",
        [{"type": "abort", "reason": "four_riichi"}],
        "abort_condition",
    ),
    (
        "riichi twice",
        "ariari",
        [{"type": "riichi", "seat": 1}, {"type": "riichi", "seat": 1}],
        "already_riichi",
    ),
    ("time up without a clock", "ariari", [{"type": "time_up"}], "no_clock"),
    ("stop when not offered", "ariari", [{"type": "stop"}], "stop_not_allowed"),
    (
        "nagashi where there is none",
        "kenko",
        [{"type": "draw", "tenpai": [], "nagashi": [1]}],
        "nagashi_not_allowed",
    ),
    (
        "pao on a normal hand",
        "ariari",
        [ron(0, {"seat": 1, "han": 5, "pao": 2})],
        "pao_needs_yakuman",
    ),
    ("pao in kantan", "kantan", [ron(0, {"seat": 1, "yakuman": 1, "pao": 2})], "pao_not_allowed"),
    ("pao on oneself", "ariari", [ron(0, {"seat": 1, "yakuman": 1, "pao": 1})], "bad_pao"),
    ("pao seat missing", "ariari", [ron(0, {"seat": 1, "yakuman": 1, "pao": 7})], "no_such_seat"),
    ("start in the middle", "ariari", [{"type": "start", "rules": "ariari"}], "unexpected_start"),
    ("wall event without dice", "ariari", [{"type": "take", "seat": 0}], "no_wall"),
    ("tiles off without tiles", "ariari", [{"type": "tiles_off"}], "no_tiles"),
]


@pytest.mark.parametrize(
    ("preset", "events", "code"), [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS]
)
def test_refusal_code_and_state_unchanged(
    preset: str, events: list[dict[str, Any]], code: str
) -> None:
    state = initial_state(load_rules(preset))
    for obj in events[:-1]:
        state, effects = step(state, parse_event(obj))
        assert not any(type(e).__name__ == "Refusal" for e in effects)
    before = state
    after, effects = step(state, parse_event(events[-1]))
    assert after is before
    assert len(effects) == 1
    refusal = effects[0]
    assert refusal.code == code, refusal
    assert refusal.message


def test_replay_lists_refusals_with_line_numbers_and_goes_on() -> None:
    out = play(
        "ariari",
        ron(0, {"seat": 1, "han": 1, "fu": 20}),
        ron(0, {"seat": 1, "han": 1, "fu": 30}),
    )
    assert out["rejected"] == [
        {
            "line": 1,
            "code": "impossible_fu",
            "message": "seat 1: 20 fu cannot be won by ron (pinfu ron is 30 fu)",
        }
    ]
    assert len(out["hands"]) == 1


def test_riichi_under_1000_ariari_refused() -> None:
    # Seat 2 pays a sanbaiman (24000) and then a 1-han 30-fu ron: 25000 - 24000 - 1000 = 0.
    out = play("ariari", ron(2, {"seat": 1, "han": 11}), {"type": "riichi", "seat": 2})
    assert out["rejected"] == []
    out = play(
        "ariari",
        ron(2, {"seat": 1, "han": 11}),
        ron(2, {"seat": 3, "han": 1, "fu": 30}),
        {"type": "riichi", "seat": 2},
    )
    assert out["scores"][2] == 0
    assert out["rejected"][0]["code"] == "riichi_needs_points"
    assert out["kyoutaku"] == 0


def test_jboy_riichi_under_1000_is_a_dead_hand() -> None:
    out = play(
        "jboy",
        ron(2, {"seat": 1, "han": 11}),
        ron(2, {"seat": 3, "han": 1, "fu": 30}),
        {"type": "riichi", "seat": 2},
        ron(0, {"seat": 2, "han": 1, "fu": 30}),
        {"type": "draw", "tenpai": [2]},
    )
    assert [r["code"] for r in out["rejected"]] == ["dead_hand", "dead_hand"]
    assert out["kyoutaku"] == 0


def test_sanma_free_riichi_at_900_is_dead_and_busts_after_the_hand() -> None:
    # Seat 2: 30000 - 24000 (sanbaiman) - 4000 (3 han) - 1000 (1 han) - 500 (1-han tsumo).
    setup = [
        ron(2, {"seat": 1, "han": 11}),
        ron(2, {"seat": 0, "han": 3}),
        ron(2, {"seat": 0, "han": 1}),
        {"type": "tsumo", "seat": 1, "han": 1},
    ]
    out = play("sanma-free", *setup)
    assert out["scores"][2] == 500
    out = play(
        "sanma-free",
        *setup,
        {"type": "riichi", "seat": 2},
        {"type": "tsumo", "seat": 2, "han": 1},
        {"type": "draw", "tenpai": []},
    )
    assert [r["code"] for r in out["rejected"]] == ["dead_hand"]
    assert out["scores"][2] == 500  # no deposit was taken
    assert out["finished"] is True
    assert out["final"]["reason"] == "bust"


def test_bad_event_in_kenko_keeps_clock_state() -> None:
    out = play("kenko", {"type": "time_up"}, {"type": "time_up"}, ron(0, {"seat": 1, "han": 1}))
    assert out["rejected"][0]["code"] == "fu_missing"
    assert out["finished"] is False


SEAT = st.integers(-3, 6)
HAND = st.fixed_dictionaries(
    {"seat": SEAT},
    optional={
        "han": st.integers(-2, 20),
        "fu": st.integers(-10, 130),
        "yakuman": st.integers(-1, 8),
        "pao": SEAT,
    },
)
EVENT = st.one_of(
    st.builds(lambda f, w: {"type": "ron", "from": f, "winners": w},
              st.one_of(SEAT, st.lists(SEAT, max_size=4)), st.lists(HAND, max_size=4)),
    st.builds(lambda h: {"type": "tsumo", **h}, HAND),
    st.builds(lambda t, n: {"type": "draw", "tenpai": t, "nagashi": n},
              st.lists(SEAT, max_size=5), st.lists(SEAT, max_size=3)),
    st.builds(lambda s: {"type": "chombo", "seat": s}, SEAT),
    st.builds(lambda s: {"type": "false_call", "seat": s}, SEAT),
    st.builds(lambda s: {"type": "riichi", "seat": s}, SEAT),
    st.just({"type": "undo"}),
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(preset_names()), st.lists(EVENT, min_size=1, max_size=12))
def test_events_with_any_field_values_never_raise_out_of_the_core(
    preset: str, events: list[dict[str, Any]]
) -> None:
    state = initial_state(load_rules(preset))
    for raw in events:
        try:
            event = parse_event(raw)
        except EventFormatError:
            continue  # refused before the core: replay names the line
        before = state
        state, effects = step(state, event)
        if any(type(e).__name__ == "Refusal" for e in effects):
            assert state is before and len(effects) == 1


# Issue 13 round 2, 6c: unknown keys are refused, so every key the journal writes
# (events.event_to_json) must be one parse_event accepts.
EVERY_EVENT = [
    {"type": "start", "rules": "kenko"},
    {"type": "riichi", "seat": 1},
    {"type": "ron", "from": 0, "winners": [{"seat": 1, "han": 2, "fu": 30, "pao": 2}]},
    {"type": "ron", "from": [0, 2], "winners": [{"seat": 1, "yakuman": 2, "pao": 3}]},
    {"type": "tsumo", "seat": 1, "han": 3, "fu": 40, "pao": 0},
    {"type": "tsumo", "seat": 1, "yakuman": 1},
    {"type": "draw", "tenpai": [1], "nagashi": [2]},
    {"type": "abort", "reason": "four_winds"},
    {"type": "chombo", "seat": 0},
    {"type": "false_call", "seat": 0},
    {"type": "stop"},
    {"type": "time_up"},
    {"type": "undo"},
    {"type": "dice", "dice": [3, 4]},
    {"type": "layout", "tiles": list(range(136))},
    {"type": "tiles_off"},
    {"type": "tiles_off", "reason": "seat 1 discards reader"},
    {"type": "deal"},
    {"type": "take", "seat": 0, "pos": 12},
    {"type": "take", "seat": 0, "pos": 12, "tile": 40},
    {"type": "discard", "seat": 0},
    {"type": "discard", "seat": 0, "tile": 40},
    {"type": "call", "seat": 1, "kind": "pon", "from": 0},
    {"type": "call", "seat": 1, "kind": "pon", "from": 0, "tiles": [41, 42]},
    {"type": "kan", "seat": 1, "kind": "added"},
    {"type": "kan", "seat": 1, "kind": "closed", "tiles": [0, 1, 2, 3]},
    {"type": "north", "seat": 2},
    {"type": "north", "seat": 2, "tile": 108},
]


def test_every_event_type_is_covered() -> None:
    assert sorted({e["type"] for e in EVERY_EVENT}) == sorted(EVENT_TYPES)


@pytest.mark.parametrize("line", EVERY_EVENT, ids=lambda e: str(e["type"]))
def test_what_the_journal_writes_is_accepted(line: dict[str, Any]) -> None:
    event = parse_event(line)
    written = event_to_json(event)
    assert written == line
    assert set(written) <= set(EVENT_KEYS[written["type"]])
    assert parse_event(json.loads(json.dumps(written))) == event


@pytest.mark.parametrize("line", EVERY_EVENT, ids=lambda e: str(e["type"]))
def test_an_extra_key_is_refused_naming_it(line: dict[str, Any]) -> None:
    with pytest.raises(EventFormatError, match=r"unknown field 'note'.*allowed: type"):
        parse_event({**line, "note": "hello"})


def test_every_refusal_code_is_documented_in_replay_md() -> None:
    # Issue 13 round 2, 6d: one table in docs/replay.md lists every code, with an example.
    root = Path(__file__).resolve().parents[2]
    # The rules core (the tile tracker and checks among it) answers the replay; the
    # scorer's refusals reach it only as not_a_win.
    rules = root / "tablectl" / "rules"
    paths = [p for p in rules.glob("*.py") if p.name != "tilescoring.py"]
    source = "\n".join(p.read_text("utf-8") for p in paths)
    codes = set(re.findall(r'Refusal\(\s*"([a-z_0-9]+)"', source))
    codes |= set(re.findall(r'^[A-Z_]+ = "([a-z_0-9]+)"$', source, re.M))  # wall.py's codes
    assert len(codes) > 40
    doc = (root / "docs" / "replay.md").read_text("utf-8")
    table = doc[doc.index("## Refusal codes") :]
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z_0-9]+)` \|", table, re.M)}
    assert codes <= rows, sorted(codes - rows)
    assert rows <= codes, sorted(rows - codes)
