"""One hand written out by hand, in both formats, to the character.

Tenhou preset (red 5m, 5p, 5s are ids 16, 52, 88). The layout puts tile id p at wall
position p, but for ids 0 (1m) and 66 (8p), which trade places. With dice 3+4 the draw
starts at position 82 (seat 2's wall after seven stacks, docs/wall.md) and the deal gives
seat 0 positions 82-85, 98-101, 46-49 and 62, seat 1 86-89, 34-37, 50-53, 63, seat 2
90-93, 38-41, 54-57, 64, seat 3 94-97, 42-45, 58-61, 65: every seat six pairs and a
single, tenpai for seven pairs. The live wall goes on at 66, 67, 0, 1, ...; the dora
indicator is position 76 (2s), its ura 77 (2s).

Seat 0 draws 1m (0, at position 66) and discards 7p (62), waiting on 1m; seat 3 pons it
with 60, 61 (a pon from the player on its right: the marker stands last, ``2727p27``)
and discards 8p (65); seat 0 draws 8p (67) and declares riichi with it; seat 1 draws 8p
(66, at position 0) and discards 7p (63); seat 2 chis it with 6p (56) and 8p (64),
discards 2p (40); seat 3 draws 1m (1) and discards it; seat 0 rons: riichi, seven pairs,
dora 2 (3s3s), ura 2: 7 han, the dealer's haneman 18000, plus its own stick back.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablectl.export import export_text
from tablectl.export.mjai import tile_name
from tablectl.export.tenhou6 import tile_code
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules
from tablectl.tiles.ids import tile_set

LAYOUT = [66, *range(1, 66), 0, *range(67, 136)]

EVENTS: list[dict[str, Any]] = [
    {"type": "dice", "dice": [3, 4]},
    {"type": "layout", "tiles": LAYOUT},
    {"type": "deal"},
    {"type": "take", "seat": 0, "pos": 66, "tile": 0},
    {"type": "discard", "seat": 0, "tile": 62},
    {"type": "call", "seat": 3, "kind": "pon", "from": 0, "tiles": [60, 61]},
    {"type": "discard", "seat": 3, "tile": 65},
    {"type": "take", "seat": 0, "tile": 67},
    {"type": "riichi", "seat": 0},
    {"type": "discard", "seat": 0, "tile": 67},
    {"type": "take", "seat": 1},
    {"type": "discard", "seat": 1, "tile": 63},
    {"type": "call", "seat": 2, "kind": "chi", "from": 1, "tiles": [64, 56]},
    {"type": "discard", "seat": 2, "tile": 40},
    {"type": "take", "seat": 3, "pos": 1},
    {"type": "discard", "seat": 3, "tile": 1},
    {"type": "ron", "from": 3, "winners": [{"seat": 0, "han": 7, "fu": 25}]},
]

TENHOU6 = {
    "title": ["tablectl", "golden"],
    "name": ["A", "B", "C", "D"],
    "rule": {"disp": "南喰赤", "aka": 1, "aka51": 1, "aka52": 1, "aka53": 1},
    "log": [
        [
            [0, 0, 0],
            [25000, 25000, 25000, 25000],
            [32],
            [32],
            [23, 23, 24, 24, 27, 33, 33, 34, 34, 37, 37, 38, 38],
            [11, 28],
            [27, "r60"],
            [19, 19, 21, 21, 24, 24, 25, 52, 27, 34, 34, 35, 53],
            [28],
            [27],
            [21, 21, 22, 22, 25, 25, 26, 26, 28, 35, 35, 36, 36],
            ["c272628"],
            [22],
            [22, 22, 23, 23, 26, 26, 27, 27, 28, 36, 36, 37, 37],
            ["2727p27", 11],
            [28, 60],
            [
                "和了",
                [19000, 0, 0, -18000],
                [0, 3, 0, "跳満18000点", "立直(1飜)", "七対子(2飜)", "ドラ(2飜)", "裏ドラ(2飜)"],
            ],
        ]
    ],
}

MJAI = [
    {"type": "start_game", "names": ["A", "B", "C", "D"], "kyoku_first": 0, "aka_flag": True},
    {
        "type": "start_kyoku",
        "bakaze": "E",
        "kyoku": 1,
        "honba": 0,
        "kyotaku": 0,
        "oya": 0,
        "dora_marker": "2s",
        "scores": [25000, 25000, 25000, 25000],
        "tehais": [
            ["3p", "3p", "4p", "4p", "7p", "3s", "3s", "4s", "4s", "7s", "7s", "8s", "8s"],
            ["9m", "9m", "1p", "1p", "4p", "4p", "5pr", "5p", "7p", "4s", "4s", "5sr", "5s"],
            ["1p", "1p", "2p", "2p", "5p", "5p", "6p", "6p", "8p", "5s", "5s", "6s", "6s"],
            ["2p", "2p", "3p", "3p", "6p", "6p", "7p", "7p", "8p", "6s", "6s", "7s", "7s"],
        ],
    },
    {"type": "tsumo", "actor": 0, "pai": "1m"},
    {"type": "dahai", "actor": 0, "pai": "7p", "tsumogiri": False},
    {"type": "pon", "actor": 3, "target": 0, "pai": "7p", "consumed": ["7p", "7p"]},
    {"type": "dahai", "actor": 3, "pai": "8p", "tsumogiri": False},
    {"type": "tsumo", "actor": 0, "pai": "8p"},
    {"type": "reach", "actor": 0},
    {"type": "dahai", "actor": 0, "pai": "8p", "tsumogiri": True},
    {"type": "reach_accepted", "actor": 0},
    {"type": "tsumo", "actor": 1, "pai": "8p"},
    {"type": "dahai", "actor": 1, "pai": "7p", "tsumogiri": False},
    {"type": "chi", "actor": 2, "target": 1, "pai": "7p", "consumed": ["6p", "8p"]},
    {"type": "dahai", "actor": 2, "pai": "2p", "tsumogiri": False},
    {"type": "tsumo", "actor": 3, "pai": "1m"},
    {"type": "dahai", "actor": 3, "pai": "1m", "tsumogiri": True},
    {
        "type": "hora",
        "actor": 0,
        "target": 3,
        "deltas": [19000, 0, 0, -18000],
        "ura_markers": ["2s"],
    },
    {"type": "end_kyoku"},
    {"type": "end_game"},
]


def _export(fmt: str, events: list[dict[str, Any]] = EVENTS) -> str:
    parsed = [parse_event(e) for e in events]
    return export_text(fmt, load_rules("tenhou"), parsed, "ABCD", ("tablectl", "golden"))


def test_the_hand_as_tenhou6() -> None:
    text = _export("tenhou6")
    assert text.endswith("\n") and text.count("\n") == 1
    assert json.loads(text) == TENHOU6


def test_the_hand_as_mjai() -> None:
    lines = _export("mjai").splitlines()
    assert [json.loads(line) for line in lines] == MJAI


def test_riichi_declared_after_its_discard_marks_the_same_tile() -> None:
    # The table may report the riichi just after the declaration tile is discarded.
    events = list(EVENTS)
    at = events.index({"type": "riichi", "seat": 0})
    events[at], events[at + 1] = events[at + 1], events[at]
    assert json.loads(_export("tenhou6", events)) == TENHOU6
    assert [json.loads(line) for line in _export("mjai", events).splitlines()] == MJAI


TILE_NAMES = [
    # preset, tile id, tenhou.net/6 code, mjai name
    ("tenhou", 0, 11, "1m"),
    ("tenhou", 16, 51, "5mr"),
    ("tenhou", 17, 15, "5m"),
    ("tenhou", 52, 52, "5pr"),
    ("tenhou", 88, 53, "5sr"),
    ("tenhou", 107, 39, "9s"),
    ("tenhou", 108, 41, "E"),
    ("tenhou", 120, 44, "N"),
    ("tenhou", 124, 45, "P"),
    ("tenhou", 128, 46, "F"),
    ("tenhou", 135, 47, "C"),
    ("kenko", 16, 15, "5m"),
    ("jboy", 52, 52, "5pr"),  # gold, written as red
    ("jboy-sanma", 52, 52, "5pr"),  # gold
    ("jboy-sanma", 53, 52, "5pr"),  # red
    ("jboy-sanma", 89, 53, "5sr"),  # the second red 5s
    ("jboy-sanma", 90, 35, "5s"),
]


@pytest.mark.parametrize(("preset", "tile", "code", "name"), TILE_NAMES)
def test_tile_names(preset: str, tile: int, code: int, name: str) -> None:
    tiles = tile_set(load_rules(preset))
    assert (tile_code(tile, tiles), tile_name(tile, tiles)) == (code, name)
