"""A furiten riichi found at the exhaustive draw (docs/tiles.md, "Checks"): sanma-free's
フリテンリーチは流局時チョンボ (``riichi.furiten_at_draw = "chombo"``), found from the tiles;
every other preset, and a keyed hand, draws as before."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tablectl.rules import events as ev
from tablectl.rules import tileshapes
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.tiletrack import expected_draw, furiten_riichi
from tests.tiles.kit import Table, play_out

#: Seat 0 deals; seats 1 and 2 are far from tenpai.  Seat 0's hand is each script's.
OTHERS = {1: "111p 999p 88s 789s 67z", 2: "123s 567s 666p 77z 1z 9m"}
#: Tenpai on 1s 4s.
READY = "123p 456p 789s 11s 23s"


#: Drawing 1s then 2s, seat 0 throws 4s before it waits on it, then declares on 1s 4s.
THROWS_4S = {0: "123p 456p 789s 1s 3s 4s 9m", **OTHERS}


def _throw_4s_then_riichi(t: Table) -> None:
    t.turn(0, "4s")
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.riichi(0, "9m")


def _wait_thrown_before(t: Table) -> None:
    t.start(hands=THROWS_4S, draws=["1s", None, None, "2s"])
    _throw_4s_then_riichi(t)


def _north_pulled_before(t: Table) -> None:
    # A 4z tanki; the drawn 4z pulled as nuki dora (a discard, seed 003), then riichi.
    t.start(hands={0: "123p 456p 789s 111s 4z", **OTHERS}, draws=["4z"], rinshan=["9m"])
    t.take(0)
    t.ok(ev.North(0, t.tile(0, "4z")))
    t.riichi(0, "9m")


def _wait_let_pass_after(t: Table) -> None:
    # Riichi on 1s 4s, not furiten; then seat 1's 4s is not ronned: furiten from then on.
    t.start(hands={0: READY, **OTHERS}, draws=["9m", "4s"])
    t.riichi(0, "9m")
    t.tsumogiri(1)


def _own_win_thrown_after(t: Table) -> None:
    # Riichi on 1s 4s, then its own 4s drawn and thrown instead of a tsumo.
    t.start(hands={0: READY, **OTHERS}, draws=["9m", None, None, "4s"])
    t.riichi(0, "9m")
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.tsumogiri(0)


#: (name, script, the waits it was furiten on when it declared).
SCRIPTS: list[tuple[str, Callable[[Table], None], str]] = [
    ("a wait thrown before the riichi", _wait_thrown_before, "4s"),
    ("a north pulled before a riichi on north", _north_pulled_before, "4z"),
    ("a wait let pass after the riichi", _wait_let_pass_after, "nothing"),
    ("its own winning tile thrown after the riichi", _own_win_thrown_after, "nothing"),
]


#: jboy-sanma (furiten_at_draw = "none") pulls no norths.
CASES = [
    pytest.param(preset, script, waits, id=f"{preset}: {name}")
    for preset in ("sanma-free", "jboy-sanma")
    for name, script, waits in SCRIPTS
    if preset == "sanma-free" or script is not _north_pulled_before
]


@pytest.mark.parametrize(("preset", "script", "waits"), CASES)
def test_a_riichi_found_furiten_at_the_draw(
    preset: str, script: Callable[[Table], None], waits: str
) -> None:
    t = Table(preset)
    script(t)
    assert tileshapes.kinds_text(t.seat(0).riichi_furiten) == waits
    furiten = waits != "nothing"
    play_out(t)
    draw = expected_draw(t.state)
    assert draw is not None and 0 in draw.tenpai
    assert furiten_riichi(t.state) == ((0,) if furiten else ())
    t.ok(draw)
    hand = t.replayed()["hands"][-1]
    if preset == "sanma-free" and furiten:
        # 5000 from the riichi seat to each other player; its stick comes back.
        assert hand["result"] == "chombo" and hand["reason"] == "furiten_riichi"
        assert hand["seats"] == [0] and hand["deltas"] == [-10000, 5000, 5000]
    else:
        assert hand["result"] == "draw" and 0 in hand["tenpai"]


def test_only_sanma_free_makes_a_furiten_riichi_a_chombo() -> None:
    chombo = {p for p in preset_names() if load_rules(p).riichi.furiten_at_draw == "chombo"}
    assert chombo == {"sanma-free"}


def test_a_furiten_riichi_may_still_win_by_tsumo() -> None:
    # ダマでフリテンツモはOK; the seed punishes a furiten riichi at the draw only.
    t = Table("sanma-free")
    t.start(hands=THROWS_4S, draws=["1s", None, None, "2s", None, None, "1s"])
    _throw_4s_then_riichi(t)
    assert t.seat(0).riichi_furiten
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.take(0)
    t.ok(t.tsumo(0))
    assert t.replayed()["hands"][-1]["result"] == "tsumo"


def test_a_noten_and_a_furiten_riichi_in_one_hand() -> None:
    t = Table("sanma-free")
    t.start(hands={0: READY, **OTHERS}, draws=["4s", "9m"])
    t.riichi(0, "4s")  # its winning tile, as the declaration tile: furiten
    t.riichi(1, "9m")  # a bluff: seat 1 is far from tenpai
    play_out(t)
    draw = expected_draw(t.state)
    assert draw is not None
    t.ok(draw)
    hand = t.replayed()["hands"][-1]
    assert hand["reason"] == "noten_and_furiten_riichi" and hand["seats"] == [0, 1]


def test_a_keyed_hand_is_taken_at_its_word() -> None:
    # No layout: nothing says the riichi was furiten; the draw is what the keys say.
    t = Table("sanma-free")
    t.ok(ev.Riichi(0), ev.Draw(tenpai=(0,)))
    hand = t.replayed()["hands"][-1]
    assert hand["result"] == "draw" and hand["tenpai"] == [0]
