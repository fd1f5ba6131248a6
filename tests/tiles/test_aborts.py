"""The nine-terminals and four-winds abortive draws checked against the tiles
(docs/tiles.md, "Checks"): a tile-aware hand aborts only when its tiles make the draw; a
keyed hand is taken at its word, as before."""

from __future__ import annotations

import pytest

from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules, preset_names
from tests.tiles.kit import Table

#: Seat 0 deals; the other seats hold anything.
OTHERS = {
    1: "123m 456m 789m 23p 55s",
    2: "234s 678s 345p 678p 9m",
    3: "2233m 44p 66p 88s 77s 3z",
}


def test_only_ariari_and_tenhou_have_these_aborts() -> None:
    # Seed 000: 途中流局(九種九牌/四家立直/三家和了/四槓散了/四風連打)あり; Tenhou's 途中流局.
    # Every other preset plays on: the tile checks below only ever run for these two.
    for reason in ("nine_terminals", "four_winds"):
        having = {p for p in preset_names() if reason in load_rules(p).flow.abortive_draws}
        assert having == {"ariari", "tenhou"}, reason


@pytest.mark.parametrize("preset", ["tenhou", "ariari"])
@pytest.mark.parametrize(
    ("hand", "draw", "code", "needle"),
    [
        ("19m 19p 19s 1234z 234m", "5m", None, ""),  # ten kinds
        ("19m 19p 19s 123z 2345m", "6m", None, ""),  # exactly nine
        ("19m 19p 19s 12z 23456m", "3z", None, ""),  # the drawn tile is the ninth
        ("19m 19p 19s 12z 23456m", "7m", "too_few_terminals", "holds 8 different"),
        ("11m 99m 19p 19s 12z 234m", "1z", "too_few_terminals", "1m 9m 1p 9p 1s 9s 1z 2z"),
    ],
    ids=["ten kinds", "nine kinds", "ninth drawn", "eight kinds", "pairs count once"],
)
def test_nine_terminals_on_the_dealers_first_draw(
    preset: str, hand: str, draw: str, code: str | None, needle: str
) -> None:
    t = Table(preset)
    t.start(hands={0: hand, **OTHERS}, draws=[draw])
    t.take(0)
    if code is None:
        t.ok(ev.Abort("nine_terminals"))
        out = t.replayed()
        assert out["rejected"] == [] and out["hands"][-1]["reason"] == "nine_terminals"
        return
    refusal = t.refused(ev.Abort("nine_terminals"), code)
    assert needle in refusal.message and "nine terminals needs 9" in refusal.message
    t.discard(0, draw)  # the hand goes on


def test_nine_terminals_counts_the_declarers_tiles_not_the_dealers() -> None:
    t = Table("ariari")
    t.start(hands={0: "19m 19p 19s 1234z 234m", 1: "19m 19p 19s 12z 23456m"}, draws=["5m", "7m"])
    t.turn(0, "5m")
    t.take(1)
    refusal = t.refused(ev.Abort("nine_terminals"), "too_few_terminals")
    assert refusal.message.startswith("seat 1 holds 8")


def test_a_keyed_hand_is_taken_at_its_word() -> None:
    # Wall sensors but no layout: the tiles are unknown, the wall alone judges the abort.
    t = Table("ariari")
    t.ok(ev.Dice((3, 4)), ev.Deal(), ev.Take(0), ev.Abort("nine_terminals"))
    assert t.replayed()["hands"][-1]["reason"] == "nine_terminals"


FOUR_WINDS_HANDS = {
    0: "1z 4z 5z 123m 456m 789p 1s",
    1: "1z 4z 5z 123p 456p 789m 2s",
    2: "1z 4z 5z 234s 567s 44m 56p",
    3: "2z 4z 5z 345s 678s 77m 89p",
}


@pytest.mark.parametrize("preset", ["tenhou", "ariari"])
@pytest.mark.parametrize(
    ("discards", "code", "needle"),
    [
        (["4z", "4z", "4z", "4z"], None, ""),
        (["1z", "1z", "1z", "2z"], "not_same_wind", "seat 3 2z"),
        (["5z", "5z", "5z", "5z"], "not_same_wind", "seat 0 5z"),  # haku is no wind
        (["1s", "2s", "5p", "8p"], "not_same_wind", "seat 2 5p"),
    ],
    ids=["four norths", "south last", "four haku", "no winds"],
)
def test_four_winds_after_the_first_four_discards(
    preset: str, discards: list[str], code: str | None, needle: str
) -> None:
    t = Table(preset)
    t.start(hands=FOUR_WINDS_HANDS)
    for seat, name in enumerate(discards):
        t.turn(seat, name)
    if code is None:
        t.ok(ev.Abort("four_winds"))
        assert t.replayed()["hands"][-1]["reason"] == "four_winds"
        return
    refusal = t.refused(ev.Abort("four_winds"), code)
    assert needle in refusal.message and "same wind from every seat" in refusal.message
    t.take(0)  # the hand goes on


def test_four_winds_keyed_is_taken_at_its_word() -> None:
    t = Table("tenhou")
    t.ok(ev.Dice((3, 4)), ev.Deal())
    for seat in range(4):
        t.ok(ev.Take(seat), ev.Discard(seat))
    t.ok(ev.Abort("four_winds"))
    assert t.replayed()["hands"][-1]["reason"] == "four_winds"


def test_the_wall_speaks_first() -> None:
    # After a pon neither abort is possible, whatever the tiles: the wall's abort_not_met.
    t = Table("tenhou")
    t.start(hands={**FOUR_WINDS_HANDS, 1: "11z 4z 5z 123p 456p 789m"})
    t.turn(0, "1z")
    t.call(1, "pon", 0, "11z")
    t.discard(1, "4z")
    for seat in (2, 3, 0):
        t.turn(seat, "4z")
    t.refused(ev.Abort("four_winds"), "abort_not_met")
