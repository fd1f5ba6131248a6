"""Chips counted from the tiles (tablectl/rules/tilechips.py) and through the rules core:
a hand with tiles earns the chips its tiles show, and a count given with it must be that.

Each row's expected counts are worked out by hand from the notation (tests/tiles/tilestr.py:
``0`` a red five, ``g`` a gold one); the scorer's own dora lines cross-check the same tiles.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules
from tablectl.rules.tilechips import ChipTiles, count_tiles
from tablectl.rules.tilescoring import score_win
from tablectl.tiles.hand import HandScore
from tests.tiles.kit import Table
from tests.tiles.random_hands import random_win
from tests.tiles.tilestr import win

RIICHI = {"riichi": True}

# (preset, hand before the win, winning tile, win() keywords, what the tiles show, chips)
ROWS: list[tuple[str, str, str, dict[str, Any], ChipTiles, int]] = [
    # sanma-free: a red 5p in a riichi ron, the ura indicator 3p makes the two 4p dora.
    ("sanma-free", "234p 406p 789s 11z 99p", "9p", {**RIICHI, "ura": "3p"},
     ChipTiles(riichi=True, red=1, ura=2), 3),
    # the same hand without riichi: no ura indicators count, and リーチ赤: no chips at all.
    ("sanma-free", "234p 406p 789s 11z 99p", "9p", {"ura": "3p"},
     ChipTiles(riichi=False, red=1), 0),
    # two reds (5p, 5s), ippatsu, a kan-ura: the second ura indicator 8s makes the 9s dora.
    ("sanma-free", "406p0s67s99s11z123p", "1z", {**RIICHI, "ippatsu": True, "ura": "1m8s"},
     ChipTiles(riichi=True, red=2, kan_ura=2, ippatsu=True), 5),
    # sanma-free: 1m shows 9m; a red five in a pon (a riichi winner never has one: no chips
    # there, but a closed kan of 5s holds the red one and counts).
    ("sanma-free", "99m234p678p11z", "1z", {**RIICHI, "ura": "1m",
                                           "melds": [("closed_kan", "0555s")]},
     ChipTiles(riichi=True, red=1, ura=2), 3),
    # pulled norths count under an ura indicator that makes the north dora (west).
    ("sanma-free", "234p678p789s99m1z", "1z", {**RIICHI, "ura": "3z", "north_count": 2},
     ChipTiles(riichi=True, ura=2), 2),
    # jboy: red 5m and the gold 5p earn chips on any win; dora indicators earn none.
    ("jboy", "406m g67p 234s 789s 5z", "5z", {"dora": "4m"},
     ChipTiles(riichi=False, red=1, gold=1), 2),
    # jboy: riichi, ura and ippatsu earn no chips there; the red 5s in a pon does.
    ("jboy", "123m 456p 11z 789s", "1z", {**RIICHI, "ippatsu": True, "ura": "3p",
                                          "melds": [("pon", "055s")]},
     ChipTiles(riichi=True, red=1, ura=1, ippatsu=True), 1),
    # jboy renhou (baiman): the red and gold fives alone.
    ("jboy", "406m g67p 234s 789s 5z", "5z", {"renhou": True},
     ChipTiles(riichi=False, red=1, gold=1, renhou=True), 2),
    # tenhou has red fives but no chips.
    ("tenhou", "406m 406p 406s 789s 1z", "1z", {**RIICHI, "ura": "3p"},
     ChipTiles(riichi=True, red=3, ura=1), 0),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "hand", "tile", "kw", "shown", "chips"), ROWS)
def test_chips_counted_from_the_tiles(
    preset: str, hand: str, tile: str, kw: dict[str, Any], shown: ChipTiles, chips: int
) -> None:
    rules = load_rules(preset)
    ctx = win(rules, hand, tile, **kw)
    found = count_tiles(rules, ctx)
    assert found == shown
    assert found.chips(rules) == chips
    # The scorer counts the same tiles as dora: its red, gold and ura lines agree.
    score = score_win(rules, ctx)
    if isinstance(score, HandScore) and not ctx.renhou:  # renhou adds no other han
        lines = dict(y.rsplit(" ", 1) for y in score.yaku if y[-1].isdigit())
        assert int(lines.get("red", 0)) == found.red
        assert int(lines.get("gold", 0)) == found.gold
        assert int(lines.get("ura", 0)) == found.ura + found.kan_ura


def test_kantan_a_red_five_left_in_the_river_is_not_the_winners() -> None:
    rules = load_rules("kantan")
    ctx = win(rules, "123m 789p 11z 99s", "1z", melds=[("pon", "055p")], **RIICHI)
    called = ctx.melds[0].tiles[0]
    river = ctx.__class__(**{**_fields(ctx), "melds": (_in_river(ctx.melds[0], called),)})
    assert count_tiles(rules, ctx).red == 1
    assert count_tiles(rules, river).red == 0


def _fields(ctx: Any) -> dict[str, Any]:
    return {name: getattr(ctx, name) for name in ctx.__dataclass_fields__}


def _in_river(meld: Any, called: int) -> Any:
    return meld.__class__(kind=meld.kind, tiles=meld.tiles, called=called, in_river=True)


def test_the_text_names_what_the_tiles_show() -> None:
    assert ChipTiles(riichi=True, red=1, ura=2, ippatsu=True).text() == "red 1, ura 2, ippatsu"
    assert ChipTiles(riichi=False, gold=1).text() == "gold 1, no riichi"
    assert ChipTiles(riichi=True).text() == "nothing"


# --- through the rules core -------------------------------------------------------------

# sanma-free: seat 0 (the dealer) declares riichi on its first discard and tsumos the 1z
# on its next draw (ippatsu), with a red 5p; the first ura indicator is 3p (its 4p are two
# dora: the 234p and the 406p each hold one).
SANMA_HANDS = {
    0: "234p 406p 789s 111s 1z",
    1: "111p 999p 88s 789s 67z",
    2: "123s 567s 666p 77z 1z 9m",
}


def _riichi_tsumo(preset: str, hands: dict[int, str], ura: str) -> Table:
    t = Table(preset)
    t.start(hands=hands, draws=["5z", "5z", "6z", "1z"], dora=["1m"], ura=[ura])
    t.riichi(0, "5z")
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.take(0)
    return t


def test_a_riichi_tsumo_earns_the_chips_its_tiles_show() -> None:
    t = _riichi_tsumo("sanma-free", SANMA_HANDS, "3p")
    hand = t.value(0, tsumo=True, discarder=None)
    shown = 1 + 2 + 1  # red, ura, ippatsu
    t.ok(ev.Tsumo(hand))
    assert t.state.chips == (shown * 2, -shown, -shown)
    assert t.replayed()["hands"][-1]["chips"] == [shown * 2, -shown, -shown]


@pytest.mark.parametrize(("given", "code"), [(3, "chips_mismatch"), (5, "chips_mismatch"),
                                             (4, None), (-1, "bad_chips")])  # fmt: skip
def test_a_count_given_with_a_tile_win_must_be_the_tiles(given: int, code: str | None) -> None:
    t = _riichi_tsumo("sanma-free", SANMA_HANDS, "3p")
    value = t.value(0, tsumo=True, discarder=None)
    hand = ev.Hand(seat=0, han=value.han, fu=value.fu, chips=given)
    if code is None:
        t.ok(ev.Tsumo(hand))
        assert t.state.chips == (8, -4, -4)
        return
    refusal = t.refused(ev.Tsumo(hand), code)
    if code == "chips_mismatch":
        assert refusal.message == (
            f"seat 0 claims {given} chips; the tiles show 4 (red 1, ura 2, ippatsu)"
        )


def test_jboy_a_ron_with_red_and_gold_fives_is_paid_by_the_discarder() -> None:
    t = Table("jboy")
    hands = {
        # tanyao on 5s (2s 8s); jboy's only coloured 5p is the gold one: the kit's "0p"
        0: "406m 067p 234s 678s 5s",
        1: "111p 999p 88s 789s 67z",
        2: "123s 567s 666p 77z 1z 9m",
        3: "147m 258p 369s 1z 2z 3z 4z",
    }
    t.start(hands=hands, draws=["6z", "7z", "9m", "5s"])
    t.tsumogiri(0)
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.tsumogiri(3)
    t.ok(t.ron(0, 3))
    assert t.state.chips == (2, 0, 0, -2)
    assert t.replayed()["hands"][-1]["chips"] == [2, 0, 0, -2]


@pytest.mark.parametrize("preset", ["sanma-free", "jboy", "jboy-sanma"])
def test_random_wins_count_the_fives_and_ura_the_scorer_counts(preset: str) -> None:
    # Seeded random wins (tests/tiles/random_hands.py: calls, kans, norths, riichi with
    # ura and kan-ura indicators): the scorer's red, gold and ura lines count the same.
    rules = load_rules(preset)
    rng = random.Random(f"chips:{preset}")
    compared = 0
    for _ in range(150):
        ctx = random_win(rng, rules)
        score = score_win(rules, ctx)
        if not isinstance(score, HandScore) or score.yakuman or ctx.renhou:
            continue  # no yaku, or a hand whose dora the scorer does not list
        found = count_tiles(rules, ctx)
        lines = dict(y.rsplit(" ", 1) for y in score.yaku if y[-1].isdigit())
        shown = (int(lines.get("red", 0)), int(lines.get("gold", 0)), int(lines.get("ura", 0)))
        assert shown == (found.red, found.gold, found.ura + found.kan_ura), ctx
        assert found.ippatsu == ctx.ippatsu and found.riichi == (ctx.riichi or ctx.double_riichi)
        compared += 1
    assert compared > 50
