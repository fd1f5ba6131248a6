"""The tenhou.net/6 log of real games, read back by an independent reader: hand by hand
the same deltas, start scores and final scores as ``tablectl replay``, every seat's tiles
those the rules core's tile tracker ended the hand with, the yaku adding up to the han
written; and what the exporter refuses."""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from typing import Any

import pytest

from tablectl.export import ExportError, export_text, game_log
from tablectl.export.tenhou_yaku import tenhou_yaku
from tablectl.replay import run_events
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules
from tablectl.tiles.ids import TileSet, kind, tile_set
from tests.export import tenhou6_reader as reader
from tests.export.games import GAME_IDS, Game, concealed, every_game, game_by_id, replayed
from tests.export.test_golden import EVENTS, TENHOU6

YAKU = re.compile(r"^(?P<name>[^()]+)\((?:(?P<han>\d+)飜|役満)\)$")
VALUE = re.compile(r"^(?:(?P<fu>\d+)符(?P<han>\d+)飜|(?P<limit>満貫|跳満|倍満|三倍満|役満))")


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


@functools.cache
def _exported(game: Game) -> reader.Game:
    text = export_text("tenhou6", load_rules(game.preset), game.parsed())
    return reader.read(json.loads(text))


@pytest.fixture(scope="module", params=GAME_IDS)
def game(request: pytest.FixtureRequest) -> Game:
    return game_by_id(request.param)


def test_each_hand_gives_the_replay_deltas(game: Game) -> None:
    log, expected_hands = _exported(game), replayed(game).hands
    assert len(log.hands) == len(expected_hands) > 0
    for hand, expected in zip(log.hands, expected_hands, strict=True):
        assert reader.table_deltas(hand, log.players) == expected["deltas"]
        wind = "ESWN".index(expected["round"]["wind"])
        assert hand.kyoku == 4 * wind + expected["round"]["number"] - 1
        assert hand.honba == expected["honba"]


def test_start_scores_follow_from_the_deltas_to_the_final_scores(game: Game) -> None:
    log, replay = _exported(game), replayed(game)
    players = log.players
    scores = [load_rules(game.preset).game.start_points] * players
    for hand in log.hands:
        assert hand.scores == scores + [0] * (4 - players)
        scores = [s + d for s, d in zip(scores, reader.table_deltas(hand, players), strict=True)]
    assert scores == list(replay.state.scores)
    final = replay.state.final
    if final is None:
        assert log.sc is None
    else:
        assert log.sc is not None
        assert log.sc[0::2] == list(final.scores) + [0] * (4 - players)


def test_every_seat_ends_with_the_tiles_it_held(game: Game) -> None:
    log, held = _exported(game), concealed(game)
    assert len(log.hands) == len(held)
    for number, (hand, tiles) in enumerate(zip(log.hands, held, strict=True), 1):
        for seat in range(log.players):
            expected = Counter(_code(t, game.preset) for t in tiles[seat])
            assert reader.concealed(hand.seats[seat]) == expected, (number, seat)


def test_every_call_takes_a_tile_its_source_put_out(game: Game) -> None:
    log = _exported(game)
    for hand in log.hands:
        for caller, source, tile in reader.calls(hand, log.players):
            assert source < log.players and source != caller, (caller, source)
            assert tile in reader.discarded(hand.seats[source]), (caller, source, tile)


def test_no_tile_shows_more_often_than_the_set_has_it(game: Game) -> None:
    log = _exported(game)
    in_set = Counter(_code(t, game.preset) for t in _tiles(game.preset).ids)
    for hand in log.hands:
        seen = reader.every_tile(hand)
        assert seen.keys() <= reader.TILE_CODES
        assert all(seen[c] <= in_set[c] for c in seen), seen - in_set


def test_each_win_lists_yaku_that_add_up_to_its_han(game: Game) -> None:
    for hand in _exported(game).hands:
        for detail in hand.details:
            value = VALUE.match(detail[3])
            assert value is not None, detail
            yaku = [YAKU.match(y) for y in detail[4:]]
            assert yaku and all(yaku), detail
            han = [int(y["han"]) for y in yaku if y and y["han"] is not None]
            if value["limit"] == "役満" and not han:
                continue  # a yakuman: every yaku listed as (役満)
            assert len(han) == len(yaku), detail
            if value["han"] is not None:
                assert sum(han) == int(value["han"]), detail
            else:
                assert sum(han) >= 5 or value["limit"] == "満貫", detail


def test_the_yaku_listed_make_the_han_entered(game: Game) -> None:
    """Read off the exporter's own record: each win's yaku strings against the han (or
    yakuman) the table entered for it."""
    log = game_log(load_rules(game.preset), game.parsed())
    wins = [win for hand in log.hands for win in hand.result.wins]
    for win in wins:
        assert win.score is not None, win
        strings = tenhou_yaku(log.rules, win.score, opened=win.opened, riichi=win.riichi)
        han = [YAKU.match(y) for y in strings]
        assert all(han), strings
        counted = sum(int(m["han"]) for m in han if m and m["han"] is not None)
        if win.hand.yakuman and all(y.endswith("(役満)") for y in strings):
            assert len(strings) >= win.hand.yakuman, (win.hand, strings)
        elif win.hand.yakuman:
            assert counted >= 13, (win.hand, strings)  # counted (kazoe) yakuman
        else:
            assert min(counted, 13) == win.hand.han, (win.hand, strings)


def test_the_games_cover_what_the_format_writes() -> None:
    """The games above must meet every kind of call, discard and result at least once."""
    seen: set[str] = set()
    for game in every_game():
        for hand in _exported(game).hands:
            seen.add(hand.name)
            if len(hand.details) > 1:
                seen.add("double ron")
            if any(d[2] != d[0] for d in hand.details):
                seen.add("pao")
            if any(str(y).endswith("(役満)") for d in hand.details for y in d[4:]):
                seen.add("yakuman")
            if hand.ura:
                seen.add("ura")
            for seat in hand.seats:
                for item in seat.takes + seat.discards:
                    text = str(item)
                    seen.update(letter for letter in "cpmakrf" if letter in text)
                    if item == 60:
                        seen.add("60")
    wanted = {
        *reader.ABORT_NAMES, "和了", "流局", "流し満貫", "全員不聴", "c", "p", "m", "a", "k", "r",
        "f", "60", "double ron", "pao", "yakuman", "ura",
    }  # fmt: skip
    assert wanted <= seen, wanted - seen


def _golden_with(extra: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The golden hand's events with ``extra[i]`` put before event ``i``."""
    out = []
    for index, event in enumerate(EVENTS):
        if index in extra:
            out.append(extra[index])
        out.append(event)
    return out


REFUSED = [
    ("a layout that is not the set", 1, {"type": "layout", "tiles": [0] * 136}),
    ("a discard without its tile", 4, {"type": "discard", "seat": 0}),
    ("a discard of a tile not held", 4, {"type": "discard", "seat": 0, "tile": 5}),
    ("a pon of two kinds", 5, {"type": "call", "seat": 3, "kind": "pon", "from": 0,
                               "tiles": [60, 65]}),
    ("a pon without its tiles", 5, {"type": "call", "seat": 3, "kind": "pon", "from": 0}),
    ("a chi that is no run", 12, {"type": "call", "seat": 2, "kind": "chi", "from": 1,
                                  "tiles": [64, 40]}),
    ("a take read as another tile", 3, {"type": "take", "seat": 0, "tile": 70}),
    ("a ron on a tile that does not win", 14, {"type": "ron", "from": 2,
                                               "winners": [{"seat": 0, "han": 1, "fu": 30}]}),
    ("a ron at the wrong value", 16, {"type": "ron", "from": 3,
                                      "winners": [{"seat": 0, "han": 2, "fu": 40}]}),
]  # fmt: skip


@pytest.mark.parametrize(("at", "bad"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_an_event_the_core_refuses_is_skipped_as_in_a_replay(
    fmt: str, at: int, bad: dict[str, Any]
) -> None:
    rules = load_rules("tenhou")
    events = _golden_with({at: bad})
    replay = run_events(rules, [(n, parse_event(e)) for n, e in enumerate(events, 1)])
    assert [r["line"] for r in replay.as_dict()["rejected"]] == [at + 1]
    with_bad = export_text(fmt, rules, [parse_event(e) for e in events], "ABCD")
    assert with_bad == export_text(fmt, rules, [parse_event(e) for e in EVENTS], "ABCD")


WITHOUT_TILES = [
    (
        "no layout",
        [e for e in EVENTS if e["type"] != "layout"],
        "hand 1 (E1): it was played without tile readers (no wall layout after the dice);"
        " tenhou.net/6 and mjai logs need every tile",
    ),
    (
        "no dice",
        [{"type": "riichi", "seat": 1}, {"type": "draw", "tenpai": [1]}],
        "hand 1 (E1): it was played without tile readers (no dice and wall layout);"
        " tenhou.net/6 and mjai logs need every tile",
    ),
]


@pytest.mark.parametrize(
    ("events", "message"), [c[1:] for c in WITHOUT_TILES], ids=[c[0] for c in WITHOUT_TILES]
)
@pytest.mark.parametrize("fmt", ["tenhou6", "mjai"])
def test_a_hand_without_tiles_is_refused_by_name(
    fmt: str, events: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(ExportError) as caught:
        export_text(fmt, load_rules("tenhou"), [parse_event(e) for e in events])
    assert str(caught.value) == message


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


def test_a_result_taken_back_and_entered_again_is_written_once() -> None:
    ron = EVENTS[-1]
    events = [*EVENTS, {"type": "undo"}, ron]
    text = export_text(
        "tenhou6", load_rules("tenhou"), [parse_event(e) for e in events], "ABCD",
        ("tablectl", "golden"),
    )  # fmt: skip
    assert json.loads(text) == TENHOU6
