"""The tenhou.net/6 log of simulated tile games, read back by an independent reader:
hand by hand the same deltas, start scores and final scores as ``tablectl replay``, and
every seat's tiles consistent (dealt + drawn - discarded - melded = what it held)."""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any

import pytest

from tablectl.export import ExportError, export_text
from tablectl.replay import run_events
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules
from tablectl.tiles.ids import TileSet, kind, tile_set
from tests.export import tenhou6_reader as reader
from tests.export.test_golden import EVENTS
from tests.export.tilegame import Game, play

GAMES = [
    ("tenhou", 11),
    ("tenhou", 12),
    ("ariari", 21),
    ("ariari", 22),
    ("jboy", 31),
    ("jboy", 32),
    ("jboy-sanma", 41),
    ("jboy-sanma", 42),
    ("sanma-free", 51),
    ("sanma-free", 52),
    ("kenko", 61),
    ("mleague", 71),
    ("ema", 81),
    ("ema", 82),
    ("wrc", 91),
]


@functools.cache
def _tiles(preset: str) -> TileSet:
    return tile_set(load_rules(preset))


def _code(tile: int, preset: str) -> int:
    """The test's own tile numbering (11-47, 51-53 for red and gold fives)."""
    ts = _tiles(preset)
    k = kind(tile)
    if k >= 27:
        return 41 + k - 27
    if tile in ts.red or tile in ts.gold:
        return 51 + k // 9
    return 11 + 10 * (k // 9) + k % 9


def _exported(game: Game) -> reader.Game:
    rules = load_rules(game.preset)
    text = export_text("tenhou6", rules, [parse_event(e) for e in game.events])
    return reader.read(json.loads(text))


def _replayed(game: Game) -> dict[str, Any]:
    rules = load_rules(game.preset)
    events = [(n, parse_event(e)) for n, e in enumerate(game.events, 1)]
    out = run_events(rules, events).as_dict()
    assert out["rejected"] == []
    return out


@pytest.fixture(scope="module", params=GAMES, ids=[f"{p}-{s}" for p, s in GAMES])
def game(request: pytest.FixtureRequest) -> Game:
    preset, seed = request.param
    return play(preset, seed)


def test_each_hand_gives_the_replay_deltas(game: Game) -> None:
    log, replayed = _exported(game), _replayed(game)
    assert len(log.hands) == len(replayed["hands"]) > 0
    for hand, expected in zip(log.hands, replayed["hands"], strict=True):
        assert reader.table_deltas(hand, log.players) == expected["deltas"]
        wind = "ESWN".index(expected["round"]["wind"])
        assert hand.kyoku == 4 * wind + expected["round"]["number"] - 1
        assert hand.honba == expected["honba"]


def test_start_scores_follow_from_the_deltas_to_the_final_scores(game: Game) -> None:
    log, replayed = _exported(game), _replayed(game)
    players = log.players
    start = load_rules(game.preset).game.start_points
    scores = [start] * players
    for hand in log.hands:
        assert hand.scores == scores + [0] * (4 - players)
        scores = [s + d for s, d in zip(scores, reader.table_deltas(hand, players), strict=True)]
    assert scores == replayed["scores"]
    final = replayed["final"]
    assert final is not None
    assert log.sc is not None
    assert log.sc[0::2] == final["scores"] + [0] * (4 - players)


def test_every_seat_ends_with_the_tiles_it_held(game: Game) -> None:
    log = _exported(game)
    assert len(log.hands) == len(game.concealed)
    for number, (hand, held) in enumerate(zip(log.hands, game.concealed, strict=True), 1):
        for seat in range(log.players):
            expected = Counter(_code(t, game.preset) for t in held[seat])
            assert reader.concealed(hand.seats[seat]) == expected, (number, seat)


def test_every_call_takes_a_tile_its_source_put_out(game: Game) -> None:
    log = _exported(game)
    for hand in log.hands:
        for caller, source, tile in reader.calls(hand, log.players):
            assert source < log.players and source != caller, (caller, source)
            assert tile in reader.discarded(hand.seats[source]), (caller, source, tile)


def test_no_tile_shows_more_often_than_the_set_has_it(game: Game) -> None:
    log = _exported(game)
    ts = tile_set(load_rules(game.preset))
    in_set = Counter(_code(t, game.preset) for t in ts.ids)
    for hand in log.hands:
        seen = reader.every_tile(hand)
        assert seen.keys() <= reader.TILE_CODES
        assert all(seen[c] <= in_set[c] for c in seen), seen - in_set


def test_the_generated_games_cover_what_the_format_writes() -> None:
    """The games above must meet every kind of call, discard and result at least once."""
    seen: set[str] = set()
    for preset, seed in GAMES:
        for hand in _exported(play(preset, seed)).hands:
            seen.add(hand.name)
            if len(hand.details) > 1:
                seen.add("double ron")
            if hand.ura:
                seen.add("ura")
            for seat in hand.seats:
                for item in seat.takes + seat.discards:
                    text = str(item)
                    seen.update(letter for letter in "cpmakrf" if letter in text)
                    if item == 60:
                        seen.add("60")
    wanted = {"和了", "流局", "c", "p", "m", "a", "k", "r", "f", "60", "double ron", "ura"}
    assert wanted <= seen, wanted - seen


def _golden_with(change: dict[int, dict[str, Any] | None]) -> list[dict[str, Any]]:
    """The golden hand's events with some replaced (None: left out)."""
    out = []
    for index, event in enumerate(EVENTS):
        if index in change:
            if change[index] is not None:
                out.append(change[index])
        else:
            out.append(event)
    return out


BAD_GAMES = [
    (
        "no layout",
        _golden_with({1: None}),
        "hand 1 (E1): it was played without tile readers (no wall layout after the dice)",
    ),
    (
        "no dice",
        [{"type": "riichi", "seat": 1}, {"type": "draw", "tenpai": [1]}],
        "hand 1 (E1): it was played without tile readers (no dice and wall layout)",
    ),
    (
        "a layout that is not the set",
        _golden_with({1: {"type": "layout", "tiles": [0] * 136}}),
        "hand 1 (E1): the wall layout holds 136 tile ids that are not this preset's 136 tiles",
    ),
    (
        "a discard without its tile",
        _golden_with({4: {"type": "discard", "seat": 0}}),
        "hand 1 (E1): seat 0's discard has no tile id",
    ),
    (
        "a discard of a tile not held",
        _golden_with({4: {"type": "discard", "seat": 0, "tile": 5}}),
        "hand 1 (E1): a discard by seat 0: seat 0 does not hold tile 5 (2m)",
    ),
    (
        "a pon of two kinds",
        _golden_with({5: {"type": "call", "seat": 3, "kind": "pon", "from": 0, "tiles": [60, 65]}}),
        "hand 1 (E1): seat 3's pon of 7p, 7p, 8p is no pon",
    ),
    (
        "a pon without its tiles",
        _golden_with({5: {"type": "call", "seat": 3, "kind": "pon", "from": 0}}),
        "hand 1 (E1): seat 3's pon shows 0 of its own tiles, not 2",
    ),
    (
        "a chi that is no run",
        _golden_with(
            {12: {"type": "call", "seat": 2, "kind": "chi", "from": 1, "tiles": [64, 40]}}
        ),
        "hand 1 (E1): seat 2's chi of 7p, 8p, 2p is no chi",
    ),
    (
        "a take read as another tile",
        _golden_with({3: {"type": "take", "seat": 0, "tile": 70}}),
        "hand 1 (E1): seat 0 took position 66, where the layout has tile 66 (8p), but read"
        " tile 70 (9p)",
    ),
]


@pytest.mark.parametrize(
    ("events", "message"), [c[1:] for c in BAD_GAMES], ids=[c[0] for c in BAD_GAMES]
)
@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_a_hand_without_every_tile_is_refused_by_name(
    fmt: str, events: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ExportError) as caught:
        export_text(fmt, load_rules("tenhou"), [parse_event(e) for e in events])
    assert str(caught.value).startswith(message), str(caught.value)


def test_kantan_has_no_log_form() -> None:
    with pytest.raises(ExportError, match="kantan"):
        export_text("tenhou6", load_rules("kantan"), [])


def test_a_hand_in_progress_is_left_out() -> None:
    text = export_text("tenhou6", load_rules("tenhou"), [parse_event(e) for e in EVENTS[:-1]])
    assert json.loads(text)["log"] == []
    assert "sc" not in json.loads(text)


def test_a_hand_without_tiles_in_progress_does_not_stop_the_export() -> None:
    events = [*EVENTS, {"type": "dice", "dice": [1, 1]}, {"type": "deal"}]
    text = export_text("tenhou6", load_rules("tenhou"), [parse_event(e) for e in events])
    assert len(json.loads(text)["log"]) == 1


def test_a_corrected_result_is_exported_as_corrected() -> None:
    ron = EVENTS[-1]
    wrong = {"type": "ron", "from": 3, "winners": [{"seat": 0, "han": 1, "fu": 30}]}
    events = [*EVENTS[:-1], wrong, {"type": "undo"}, ron]
    text = export_text("tenhou6", load_rules("tenhou"), [parse_event(e) for e in events])
    assert json.loads(text)["log"][0][-1] == [
        "和了",
        [4900, 0, 0, -3900],
        [0, 3, 0, "40符2飜3900点"],
    ]
