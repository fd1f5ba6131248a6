"""The mjai log of real games: every line has an mjai event's shape, each seat's tsumo /
dahai / call sequence holds together and ends with the tiles the rules core's tile tracker
ended the hand with, and the deltas give ``tablectl replay``'s hand by hand."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any

import pytest

from tablectl.export import export_text
from tablectl.rules.loader import load_rules
from tablectl.tiles.ids import TileSet, kind, tile_set
from tests.export.games import GAME_IDS, Game, concealed, game_by_id, generated, replayed

#: The games of the mjai tests: those of both formats, and kantan's (mjai only).
MJAI_IDS = [*GAME_IDS, "kantan-7", "kantan-8"]

TILE = re.compile(r"^(?:[1-9][mps]|5[mps]r|[ESWNPFC])$")
STICK = 1000

#: Every event type and its keys besides "type": the kind of value each holds.
SHAPES: dict[str, dict[str, str]] = {
    "start_game": {"names": "names", "kyoku_first": "int", "aka_flag": "bool"},
    "start_kyoku": {
        "bakaze": "wind",
        "kyoku": "int",
        "honba": "int",
        "kyotaku": "int",
        "oya": "seat",
        "dora_marker": "tile",
        "scores": "ints",
        "tehais": "tehais",
    },
    "tsumo": {"actor": "seat", "pai": "tile"},
    "dahai": {"actor": "seat", "pai": "tile", "tsumogiri": "bool"},
    "chi": {"actor": "seat", "target": "seat", "pai": "tile", "consumed": "tiles2"},
    "pon": {"actor": "seat", "target": "seat", "pai": "tile", "consumed": "tiles2"},
    "daiminkan": {"actor": "seat", "target": "seat", "pai": "tile", "consumed": "tiles3"},
    "ankan": {"actor": "seat", "consumed": "tiles4"},
    "kakan": {"actor": "seat", "pai": "tile", "consumed": "tiles3"},
    "nukidora": {"actor": "seat", "pai": "north"},
    "reach": {"actor": "seat"},
    "reach_accepted": {"actor": "seat"},
    "dora": {"dora_marker": "tile"},
    "hora": {"actor": "seat", "target": "seat", "deltas": "ints", "ura_markers": "tiles"},
    "ryukyoku": {"deltas": "ints"},
    "end_kyoku": {},
    "end_game": {},
}


def _valid(value: Any, what: str, players: int) -> bool:
    def tiles(n: int | None) -> bool:
        return (
            isinstance(value, list)
            and (n is None or len(value) == n)
            and all(isinstance(t, str) and TILE.match(t) for t in value)
        )

    checks = {
        "int": lambda: isinstance(value, int) and not isinstance(value, bool),
        "bool": lambda: isinstance(value, bool),
        "seat": lambda: value in range(players),
        "wind": lambda: value in ("E", "S", "W", "N"),
        "tile": lambda: isinstance(value, str) and bool(TILE.match(value)),
        "north": lambda: value == "N",
        "names": lambda: isinstance(value, list) and len(value) == players,
        "ints": lambda: (
            isinstance(value, list)
            and len(value) == players
            and all(isinstance(v, int) for v in value)
        ),
        "tehais": lambda: (
            isinstance(value, list)
            and len(value) == players
            and all(isinstance(h, list) and len(h) == 13 for h in value)
            and all(TILE.match(t) for h in value for t in h)
        ),
        "tiles": lambda: tiles(None),
        "tiles2": lambda: tiles(2),
        "tiles3": lambda: tiles(3),
        "tiles4": lambda: tiles(4),
    }
    return checks[what]()


@functools.cache
def _tiles(preset: str) -> TileSet:
    return tile_set(load_rules(preset))


def _name(tile: int, preset: str) -> str:
    """The test's own mjai tile name."""
    ts = _tiles(preset)
    k = kind(tile)
    if k >= 27:
        return "ESWNPFC"[k - 27]
    red = "r" if tile in ts.red or tile in ts.gold else ""
    return f"{k % 9 + 1}{'mps'[k // 9]}{red}"


@functools.cache
def _lines(game: Game) -> list[dict[str, Any]]:
    text = export_text("mjai", load_rules(game.preset), game.parsed())
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module", params=MJAI_IDS)
def game(request: pytest.FixtureRequest) -> Game:
    return game_by_id(request.param)


def test_every_line_has_the_shape_of_its_event(game: Game) -> None:
    rules = load_rules(game.preset)
    players = rules.players
    lines = _lines(game)
    assert lines[0]["type"] == "start_game" and lines[-1]["type"] == "end_game"
    for line in lines:
        shape = SHAPES[line["type"]]
        if rules.wall.own_walls and line["type"] in ("chi", "pon"):
            shape = {**shape, "stand_in": "tile"}
        assert set(line) == {"type", *shape}, line
        for key, what in shape.items():
            assert _valid(line[key], what, players), (key, line)


def _hands(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    hands: list[list[dict[str, Any]]] = []
    for line in lines[1:-1]:
        if line["type"] == "start_kyoku":
            hands.append([])
        hands[-1].append(line)
    return hands


class _Seats:
    """Each seat's concealed tiles and what it must do next, as the lines go by."""

    def __init__(self, start: dict[str, Any], kantan: bool = False) -> None:
        self.held = [Counter(tehai) for tehai in start["tehais"]]
        # Kantan: a call takes another seat's last discard, on the caller's own turn.
        self.kantan = kantan
        self.last: list[str | None] = [None] * len(self.held)
        # "wait": to draw or call; "drawn": holds a drawn tile; "called": after chi/pon;
        # "kan": owes a tsumo of the replacement tile.
        self.state = ["wait"] * len(self.held)
        self.state[start["oya"]] = "wait"
        self.drawn: list[str | None] = [None] * len(self.held)
        self.open: tuple[int, str] | None = None
        # The seat that has said reach, then the seat whose riichi tile is out.
        self.reaching: int | None = None
        self.declared: int | None = None

    def give(self, seat: int, tiles: list[str]) -> None:
        for tile in tiles:
            assert self.held[seat][tile] > 0, (seat, tile, self.held[seat])
            self.held[seat][tile] -= 1

    def line(self, line: dict[str, Any], previous: dict[str, Any]) -> None:
        kind_, seat = line["type"], line.get("actor")
        declared = self.declared
        if declared is not None and kind_ != "dora":
            # The riichi tile is out: its stick goes on the table, unless it is won on.
            assert kind_ in ("reach_accepted", "hora"), (declared, line)
            self.declared = None
        if kind_ == "tsumo":
            assert self.state[seat] in ("wait", "kan"), (line, self.state)
            self.held[seat][line["pai"]] += 1
            self.state[seat], self.drawn[seat] = "drawn", line["pai"]
        elif kind_ == "dahai":
            assert self.state[seat] in ("drawn", "called"), (line, self.state)
            if line["tsumogiri"]:
                assert self.state[seat] == "drawn" and line["pai"] == self.drawn[seat], line
            self.give(seat, [line["pai"]])
            self.state[seat], self.open = "wait", (seat, line["pai"])
            self.last[seat] = line["pai"]
            if self.reaching == seat:
                self.declared, self.reaching = seat, None
        elif kind_ in ("chi", "pon") and self.kantan:
            # The called tile stays the target's last discard; the stand-in is no take.
            assert self.state[seat] == "wait" and line["target"] != seat, (line, self.state)
            assert self.last[line["target"]] == line["pai"], (line, self.last)
            self.give(seat, line["consumed"])
            self.state[seat] = "called"
        elif kind_ in ("chi", "pon", "daiminkan"):
            assert self.open == (line["target"], line["pai"]), (line, self.open)
            self.give(seat, line["consumed"])
            self.state[seat] = "kan" if kind_ == "daiminkan" else "called"
            self.open = None
        elif kind_ in ("ankan", "kakan", "nukidora"):
            assert self.state[seat] == "drawn", (line, self.state)
            self.give(seat, line["consumed"] if kind_ == "ankan" else [line["pai"]])
            self.state[seat] = "kan"
            self.open = (seat, line["pai"]) if kind_ != "ankan" else None
        elif kind_ == "reach":
            assert self.state[seat] == "drawn", line
            self.reaching = seat
        elif kind_ == "reach_accepted":
            assert seat == declared and previous["type"] in ("dahai", "dora"), (previous, line)
        if previous["type"] == "reach":
            assert kind_ == "dahai" and seat == previous["actor"], (previous, line)


def test_each_seats_tiles_hold_together_to_the_end_of_the_hand(game: Game) -> None:
    hands, held = _hands(_lines(game)), concealed(game)
    kantan = load_rules(game.preset).wall.own_walls
    assert len(hands) == len(held)
    for lines, tiles in zip(hands, held, strict=True):
        seats = _Seats(lines[0], kantan)
        for previous, line in zip(lines, lines[1:], strict=False):
            seats.line(line, previous)
        assert lines[-1]["type"] == "end_kyoku"
        for seat, own in enumerate(tiles):
            expected = Counter(_name(t, game.preset) for t in own)
            assert +seats.held[seat] == expected, seat


def test_deltas_and_reach_sticks_give_the_replay_deltas(game: Game) -> None:
    rules = load_rules(game.preset)
    replay = replayed(game)
    hands = _hands(_lines(game))
    assert len(hands) == len(replay.hands)
    scores = [rules.game.start_points] * rules.players
    for lines, expected in zip(hands, replay.hands, strict=True):
        assert lines[0]["scores"] == scores
        total = [0] * rules.players
        for line in lines:
            if "deltas" in line:
                total = [t + d for t, d in zip(total, line["deltas"], strict=True)]
            if line["type"] == "reach_accepted":
                total[line["actor"]] -= STICK
        assert total == expected["deltas"]
        scores = [s + d for s, d in zip(scores, total, strict=True)]
    assert scores == list(replay.state.scores)


def test_kantan_calls_off_last_discards_with_their_stand_ins() -> None:
    """Kantan's calls are written where they are made, on the caller's turn, off another
    seat's last discard (not always the discard just made), with the stand-in from the
    caller's wall; a winner in riichi shows no ura indicators (kantan has no ura dora)."""
    lines = _lines(game_by_id("kantan-7"))
    calls = [line for line in lines if line["type"] in ("chi", "pon")]
    assert calls and all(TILE.match(c["stand_in"]) for c in calls)
    previous = [lines[lines.index(c) - 1] for c in calls]
    assert any(
        p["type"] == "dahai" and p["actor"] != c["target"]
        for p, c in zip(previous, calls, strict=True)
    )
    assert all(line["ura_markers"] == [] for line in lines if line["type"] == "hora")


def test_a_three_player_game_is_written_with_three_seats() -> None:
    lines = _lines(generated("sanma-free", 51))
    start = next(line for line in lines if line["type"] == "start_kyoku")
    assert len(start["tehais"]) == len(start["scores"]) == 3
    assert any(line["type"] == "nukidora" for line in lines)


def test_a_kan_dora_never_stands_between_a_draw_and_its_discard(game: Game) -> None:
    """A ``dora`` between a seat's ``tsumo`` and its ``dahai`` clears the seat's candidates
    in a reader that feeds the log to libriichi line by line, which then refuses the
    discard: a kan's dora is written before the replacement draw (turned at once, as a
    closed kan's always is) or after the discard (an open kan's, turned after it)."""
    kans = ("daiminkan", "ankan", "kakan")
    immediate = load_rules(game.preset).wall.kan_dora == "immediate"
    types = [line["type"] for line in _lines(game)]
    for i, event in enumerate(types[:-2]):
        assert (event, types[i + 1]) != ("tsumo", "dora"), (i, types[i - 1 : i + 3])
        if event in kans and types[i + 1] in ("dora", "tsumo"):
            rest = types[i + 1 : i + 3]
            at_once = immediate or event == "ankan"
            assert rest == (["dora", "tsumo"] if at_once else ["tsumo", "dahai"]), (i, rest)
