"""Scoring a win (tablectl/rules/tilescoring.py): golden hands with known values.

Hands are written as the concealed tiles before the win, then the winning tile
(tests/tiles/tilestr.py: ``0`` a red five, ``g`` a gold one).  Unless a row says
otherwise the winner is seat 1 (south) against dealer 0 in the east round, by ron.

``PUBLISHED``: worked hands of the ``mahjong`` package's own tests
(MahjongRepository/mahjong, tests/hand_calculating/tests_yaku_calculation.py) and the
standard rule-book cases (pinfu tsumo 20 fu, chiitoitsu 25 fu, closed ron 30 and 40 fu,
kan fu), scored under tenhou.  ``PRESETS``: one row per yaku, fu or dora rule the presets
read differently, with the fu arithmetic in the comment.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import hand_value, ron_points
from tablectl.rules.tilescoring import (
    FOUR_TILE_CHIITOITSU,
    LOCAL_YAKU,
    YAKU_NAMES,
    compact,
    score_win,
    to_hand,
)
from tablectl.tiles.hand import HandScore
from tests.tiles.tilestr import Tiles, kinds, win

RULES = {
    name: load_rules(name)
    for name in ("tenhou", "ariari", "jboy", "jboy-sanma", "kenko", "sanma-free", "kantan",
                 "mleague", "wrc", "ema")
}  # fmt: skip


def score(preset: str | HouseRules, hand: str, tile: str, **kw: Any) -> HandScore | Refusal:
    house = RULES[preset] if isinstance(preset, str) else preset
    return score_win(house, win(house, hand, tile, **kw))


def score_row(preset: str | HouseRules, row: tuple[str, str, dict[str, Any]]) -> Any:
    hand, tile, kw = row
    return score(preset, hand, tile, **kw)


def hs(han: int, fu: int | None, *yaku: str, yakuman: int = 0) -> HandScore:
    return HandScore(han=han, fu=fu, yakuman=yakuman, yaku=yaku)


PUBLISHED = [
    # riichi tsumo pinfu: 20 fu, no tsumo fu (the package's doctest; 700/1300)
    ("234789m1234566p", "6p", {"tsumo": True, "riichi": True},
     hs(3, 20, "tsumo", "riichi", "pinfu")),
    # the same by ron: pinfu 30 fu
    ("234789m1234566p", "6p", {}, hs(1, 30, "pinfu")),
    # 30 + the 444s set completed by ron (counted open, 2) = 32 -> 40 (test_is_riichi)
    ("12344s234456m66p", "4s", {"riichi": True}, hs(1, 40, "riichi")),
    # by tsumo: 20 + closed 444s 4 + tsumo 2 = 26 -> 30 (test_is_tsumo)
    ("12344s234456m66p", "4s", {"tsumo": True}, hs(1, 30, "tsumo")),
    # closed kan of simples 16: 30 + 16 + 333s by ron 2 + 555s 4 + chun pair 2 = 54 -> 60
    ("567p33555s77z", "3s", {"riichi": True, "melds": [("closed_kan", "4444s")]},
     hs(1, 60, "riichi")),
    # rinshan on a closed kan: 20 + 16 + tsumo 2 = 38 -> 40 (test_is_rinshan)
    ("23s234456m66p", "1s", {"tsumo": True, "rinshan": True,
                             "melds": [("closed_kan", "4444s")]},
     hs(2, 40, "tsumo", "rinshan")),
    # 123p 678p 77p: kanchan (or tanki) 2: 30 + 2 = 32 -> 40 (test_hands_calculation)
    ("1236778p678s456m", "7p", {"riichi": True}, hs(1, 40, "riichi")),
    # ryanmen on 23s, pair 99s: pinfu ron 30 fu (test_hands_calculation)
    ("2399s123456m456p", "1s", {}, hs(1, 30, "pinfu")),
    # chiitoitsu: 25 fu, not rounded (test_is_chitoitsu_hand)
    ("113355s113355m1p", "1p", {}, hs(2, 25, "chiitoitsu")),
    # open tanyao: 20 + tanki 2 = 22 -> 30
    ("567p345s678s2p", "2p", {"melds": [("chi", "234m")]}, hs(1, 30, "tanyao")),
    # dora: indicator 4p makes the 55p pair two dora
    ("123m567m234p67s55p", "8s", {"dora": "4p"}, hs(3, 30, "pinfu", "dora 2")),
    # red five: 0p is one more han
    ("123m406p123s67s99p", "8s", {"riichi": True}, hs(3, 30, "riichi", "pinfu", "red 1")),
    # ura dora count only with riichi
    ("123m567m234p67s55p", "8s", {"ura": "4p"}, hs(1, 30, "pinfu")),
    ("123m567m234p67s55p", "8s", {"ura": "4p", "riichi": True},
     hs(4, 30, "riichi", "pinfu", "ura 2")),
    # thirteen-wait kokushi: a single yakuman in every preset
    ("19m19p19s1234567z", "1m", {}, hs(0, None, "kokushi 13-wait", yakuman=1)),
    # suuankou tanki by tsumo: single too
    ("111m333p555s777z2z", "2z", {"tsumo": True}, hs(0, None, "suuankou tanki", yakuman=1)),
]  # fmt: skip


@pytest.mark.parametrize(("hand", "tile", "kw", "expected"), PUBLISHED)
def test_published_hands(hand: str, tile: str, kw: dict[str, Any], expected: HandScore) -> None:
    assert score("tenhou", hand, tile, **kw) == expected


# A dealer in the east round with an east pair: 30 + pair 4 + closed 999m 8 = 42 -> 50;
# with a 2-fu double-wind pair 40.
DOUBLE_WIND = ("999m234p567p34s11z", "2s", {"seat": 0, "riichi": True})
# Rinshan on a closed kan of 4s: 20 + kan 16 + closed 555p 4 + tsumo 2 = 42 -> 50;
# without the tsumo fu 40.
RINSHAN = ("234m67m555p99p", "8m",
           {"melds": [("closed_kan", "4444s")], "tsumo": True, "rinshan": True})  # fmt: skip
# Chankan right after riichi: riichi, ippatsu, chankan, pinfu.
CHANKAN = ("123m567m234p67s55p", "8s", {"riichi": True, "ippatsu": True, "chankan": True})
# Renhou on a pinfu-only hand; and on a hand worth more than mangan by itself:
# chinitsu 6 + tanyao 1 + ryanpeikou 3 + pinfu 1 = 11.
RENHOU = ("123m567m234p67s55p", "8s", {"renhou": True})
RENHOU_BIG = ("2233445566778s", "8s", {"renhou": True})
# Daisangen (haku called, hatsu and chun concealed) and tsuuiisou: two yakuman.
TWO_YAKUMAN = ("666z777z111z2z", "2z", {"melds": [("pon", "555z")]})
# 14 han by itself: chinitsu, tanyao, ryanpeikou, pinfu, riichi, tsumo, ippatsu.
KAZOE = ("2233445566778s", "8s", {"riichi": True, "tsumo": True, "ippatsu": True})
# Open tanyao: pon of 2p, tanki on 8s; 20 + 2 + 2 = 24 -> 30.
KUITAN = ("567p345s678s8s", "8s", {"melds": [("pon", "222p")]})
# Three-player hands (pins, sous, honours, 1m and 9m only).
PINFU_3P = ("123p456p789s23s99s", "1s", {"tsumo": True, "riichi": True})
NUKI = ("123p456p789p23s99s", "1s", {"riichi": True, "north_count": 2, "dora": "3z"})
NORTH_PON = ("123p456p78s99s", "9s", {"melds": [("pon", "444z")]})
NORTH_PAIR = ("123p456p789s23s44z", "1s", {"riichi": True})
NORTH_PAIR_EAST_SET = ("111z44z123p456p78s", "9s", {"riichi": True})
TWO_CLOSED_KANS = ("234p678p5s", "5s", {"riichi": True,
                                          "melds": [("closed_kan", "1111p"),
                                                    ("closed_kan", "9999s")]})  # fmt: skip
CHIITOI_3P = ("11335599s1199p1z", "1z", {})
COLOURED_3P = ("111m4g6p345s00s78s", "9s", {"riichi": True})
# Waits 1p 4p 7p with a haku pair: on 1p ittsu; on 4p or 7p no yaku. 30 + pair 2 -> 40.
ATOZUKE = ("23456789p345s55z", "1p", {})
# Kantan: no pinfu, no ippatsu, no ura; tsumo counts with calls.
OPEN_TSUMO = ("567p345s678s9p", "9p", {"melds": [("chi", "123m")], "tsumo": True})
PINFU_ONLY = ("123m567m234p67s99p", "8s", {})
# Seven pairs with four of a kind as two (4枚使いの七対子): a single 7z beside 1111p;
# sanma-free 3 han (seed 003: 3翻役), kantan 2 (seed 004: 七対子 2, ※4枚使い有り), refused
# elsewhere (ariari, seed 000: チートイツの4枚使いは認めない).
FOUR_PAIRS = ("1111p22p55s99s11z7z", "7z", {})
FOUR_PAIRS_TANYAO = ("2222m33m44m66p77p8s", "8s", {})
# Seed 003's compound form (シャボとのチートイツの単騎待ち): 9s makes seven pairs beside
# 999s, 1z or 2z the meld hand 123p 123p 999s (iipeikou, chanta, the wind).
COMPOUND = "112233p999s11z22z"
# Complete both ways: 11p 123p 123p 567s 567s or seven pairs with 1111p; the meld hand's
# ryanpeikou (3) ties sanma-free's 3 and beats kantan's 2.
BOTH_WAYS = ("1111p223p556677s", "3p", {})
# Kantan's local yaku (seed 004, 手役一覧). Isshoku sanjun: 123m three times, 3 han in
# place of iipeikou; the ron on 3m leaves the triplet reading (111m 222m 333m) sanrenkou
# alone (the 333m ronned counts open: no sanankou), 2 han.
SANJUN = ("11122233m456p99s", "3m", {})
# The same runs with a tanki: the triplet reading is sanankou 2 + sanrenkou 2, more than
# isshoku sanjun's 3.
SANRENKOU_CLOSED = ("111222333m456p9s", "9s", {})
# Sanrenkou counts open (2 han): 222m called, 333m 444m concealed, and no other yaku.
SANRENKOU_OPEN = ("333444m567p9s", "9s", {"melds": [("pon", "222m")]})
# Isshoku sanjun does not (一色三順 3→×): a chi of 123m and 123m 123m concealed.
SANJUN_OPEN = ("112233m456p9s", "9s", {"melds": [("chi", "123m")]})
# The yakuman: four identical runs (read as 111m 222m 333m 123m the package sees
# sanankou), open too; four triplets in a row, open too; with suuankou tanki they are one
# yakuman (kantan's single row).
YONJUN = ("111122223333m9s", "9s", {})
YONJUN_OPEN = ("123123123m9s", "9s", {"melds": [("chi", "123m")]})
SUURENKOU_OPEN = ("22233344m99s", "4m", {"melds": [("pon", "555m")]})
SUURENKOU_SUUANKOU = ("111222333444m9s", "9s", {})
# Kantan's yakuman count with calls (※鳴きがあっても成立): chuuren with 234m called (closed
# only elsewhere: tenhou reads chinitsu 5 han, 20 + closed 111m and 999m 8 each = 36 ->
# 40 fu); riichi and double riichi on an open hand.
OPEN_CHUUREN = ("1115678999m", "5m", {"melds": [("chi", "234m")]})
OPEN_RIICHI = (*OPEN_TSUMO[:2], {"melds": [("chi", "123m")]})

PRESETS = [
    ("ariari", *DOUBLE_WIND, hs(1, 50, "riichi")),
    ("tenhou", *DOUBLE_WIND, hs(1, 50, "riichi")),
    ("jboy", *DOUBLE_WIND, hs(1, 40, "riichi")),
    ("mleague", *DOUBLE_WIND, hs(1, 40, "riichi")),
    ("wrc", *DOUBLE_WIND, hs(1, 40, "riichi")),
    ("ariari", *RINSHAN, hs(2, 50, "tsumo", "rinshan")),
    ("jboy", *RINSHAN, hs(2, 40, "tsumo", "rinshan")),
    ("ariari", *CHANKAN, hs(4, 30, "riichi", "ippatsu", "chankan", "pinfu")),
    ("jboy", *CHANKAN, hs(3, 30, "riichi", "chankan", "pinfu")),
    ("tenhou", *RENHOU, hs(1, 30, "pinfu")),
    ("jboy", *RENHOU, hs(8, None, "renhou")),
    ("wrc", *RENHOU, hs(5, None, "renhou")),
    ("ema", *RENHOU, hs(5, None, "renhou")),
    ("wrc", *RENHOU_BIG, hs(11, 30, "pinfu", "tanyao", "ryanpeikou", "chinitsu")),
    ("tenhou", *TWO_YAKUMAN, hs(0, None, "daisangen", "tsuuiisou", yakuman=2)),
    ("ariari", *TWO_YAKUMAN, hs(0, None, "daisangen", "tsuuiisou", yakuman=2)),
    ("kenko", *TWO_YAKUMAN, hs(0, None, "daisangen", "tsuuiisou", yakuman=1)),
    ("ema", *TWO_YAKUMAN, hs(0, None, "daisangen", "tsuuiisou", yakuman=1)),
    ("tenhou", *KAZOE, hs(14, 20, "tsumo", "riichi", "ippatsu", "pinfu", "tanyao",
                          "ryanpeikou", "chinitsu")),
    ("tenhou", *KUITAN, hs(1, 30, "tanyao")),
    ("tenhou", *PINFU_3P, hs(3, 20, "tsumo", "riichi", "pinfu")),
    # sanma-free: no tsumo pinfu (tsumo only), every hand 30 fu
    ("sanma-free", *PINFU_3P, hs(2, 30, "tsumo", "riichi")),
    # sanma-free: each pulled north is a dora, and the west indicator makes them dora again
    ("sanma-free", *NUKI, hs(8, 30, "riichi", "pinfu", "ittsu", "dora 2", "north 2")),
    # jboy-sanma: north is a value tile (open: 20 + honour pon 4 = 24 -> 30) ...
    ("jboy-sanma", *NORTH_PON, hs(1, 30, "north")),
    # ... and its pair is worth 2 fu and no pinfu: 30 + 2 = 32 -> 40
    ("jboy-sanma", *NORTH_PAIR, hs(1, 40, "riichi")),
    ("sanma-free", *NORTH_PAIR, hs(2, 30, "riichi", "pinfu")),
    # the round wind set still counts: 30 + closed east set 8 + north pair 2 = 40
    ("jboy-sanma", *NORTH_PAIR_EAST_SET, hs(2, 40, "riichi", "round east")),
    # sanma-free: a closed kan adds 1 han, once for two
    ("sanma-free", *TWO_CLOSED_KANS, hs(2, 30, "riichi", "closed kan")),
    ("sanma-free", *CHIITOI_3P, hs(2, 30, "chiitoitsu")),
    # jboy-sanma's two red 5s (ids 88, 89) and its gold 5p: one dora each
    # (30 + closed 111m 8 = 38 -> 40)
    ("jboy-sanma", *COLOURED_3P, hs(4, 40, "riichi", "red 2", "gold 1")),
    ("tenhou", *ATOZUKE, hs(2, 40, "ittsu")),
    ("sanma-free", *ATOZUKE[:2], {"riichi": True}, hs(3, 30, "riichi", "ittsu")),
    ("tenhou", *CHANKAN, hs(4, 30, "riichi", "ippatsu", "chankan", "pinfu")),
    ("kantan", *CHANKAN[:2], {"riichi": True, "ippatsu": True, "ura": "4p"}, hs(1, None, "riichi")),
    ("kantan", *OPEN_TSUMO, hs(1, None, "tsumo")),
    ("kantan", *TWO_YAKUMAN, hs(0, None, "daisangen", "tsuuiisou", yakuman=1)),
    ("sanma-free", *FOUR_PAIRS, hs(3, 30, "4-tile chiitoitsu")),
    ("sanma-free", *FOUR_PAIRS[:2], {"tsumo": True, "riichi": True},
     hs(5, 30, "tsumo", "4-tile chiitoitsu", "riichi")),
    ("kantan", *FOUR_PAIRS, hs(2, None, "4-tile chiitoitsu")),
    ("kantan", *FOUR_PAIRS_TANYAO, hs(3, None, "4-tile chiitoitsu", "tanyao")),
    # the package's yakuman tests on the pairs: all honours with four east
    ("kantan", "1111z22z33z44z55z6z", "6z", {}, hs(0, None, "tsuuiisou", yakuman=1)),
    ("sanma-free", COMPOUND, "9s", {}, hs(3, 30, "4-tile chiitoitsu")),
    ("sanma-free", COMPOUND, "1z", {}, hs(4, 30, "iipeikou", "round east", "chanta")),
    ("sanma-free", *BOTH_WAYS, hs(3, 30, "ryanpeikou")),
    ("kantan", *BOTH_WAYS, hs(3, None, "ryanpeikou")),
    ("tenhou", *SANJUN, hs(1, 40, "iipeikou")),
    ("kantan", *SANJUN, hs(3, None, "isshoku sanjun")),
    # by tsumo 333m is concealed too: sanankou and sanrenkou (5) beat isshoku sanjun (4)
    ("kantan", *SANJUN[:2], {"tsumo": True}, hs(5, None, "tsumo", "sanankou", "sanrenkou")),
    ("kantan", *SANRENKOU_CLOSED, hs(4, None, "sanankou", "sanrenkou")),
    ("kantan", *SANRENKOU_OPEN, hs(2, None, "sanrenkou")),
    ("kantan", *SANJUN_OPEN[:2], {**SANJUN_OPEN[2], "tsumo": True}, hs(1, None, "tsumo")),
    ("kantan", *YONJUN, hs(0, None, "isshoku yonjun", yakuman=1)),
    ("kantan", *YONJUN_OPEN, hs(0, None, "isshoku yonjun", yakuman=1)),
    ("kantan", *SUURENKOU_OPEN, hs(0, None, "suurenkou", yakuman=1)),
    ("kantan", *SUURENKOU_SUUANKOU, hs(0, None, "suuankou tanki", "suurenkou", yakuman=1)),
    ("tenhou", *SUURENKOU_SUUANKOU, hs(0, None, "suuankou tanki", yakuman=1)),
    ("kantan", *OPEN_CHUUREN, hs(0, None, "chuuren", yakuman=1)),
    ("tenhou", *OPEN_CHUUREN, hs(5, 40, "chinitsu")),
    ("kantan", *OPEN_RIICHI[:2], {**OPEN_RIICHI[2], "riichi": True}, hs(1, None, "riichi")),
    ("kantan", *OPEN_RIICHI[:2], {**OPEN_RIICHI[2], "riichi": True, "double_riichi": True},
     hs(2, None, "double riichi")),
    # tenhou is a yakuman whatever the reading; the one with isshoku yonjun names both
    ("kantan", *YONJUN[:2], {"seat": 0, "tsumo": True, "tenhou": True},
     hs(0, None, "tenhou", "isshoku yonjun", yakuman=1)),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "hand", "tile", "kw", "expected"), PRESETS)
def test_preset_readings(
    preset: str, hand: str, tile: str, kw: dict[str, Any], expected: HandScore
) -> None:
    assert score(preset, hand, tile, **kw) == expected


REFUSED = [
    ("tenhou", "123m456p789s1133z", "5z", {}, "not_complete", "1 tile(s) away"),
    ("tenhou", "123m567m234p678s9p", "9p", {}, "no_yaku", "ron without riichi"),
    ("tenhou", *OPEN_TSUMO, "no_yaku", "open hand without yaku"),
    ("sanma-free", *KUITAN, "no_yaku", "kuitan is off"),
    ("sanma-free", *NORTH_PON, "no_yaku", "open hand"),
    ("sanma-free", "123p567p789s123s9p", "9p", {"north_count": 2}, "no_yaku", "dora are not"),
    ("sanma-free", *ATOZUKE, "atozuke", "a win on 4p would have no yaku"),
    ("kantan", *PINFU_ONLY, "no_yaku", "pinfu does not count"),
    ("tenhou", "567p345s678s9p", "9p", {"melds": [("pon", "111m")], "riichi": True},
     "bad_context", "riichi on an open hand"),
    ("ariari", *OPEN_RIICHI[:2], {**OPEN_RIICHI[2], "riichi": True}, "bad_context",
     "riichi on an open hand"),
    ("tenhou", *PINFU_ONLY[:2], {"ippatsu": True}, "bad_context", "ippatsu without riichi"),
    ("tenhou", *PINFU_ONLY[:2], {"rinshan": True, "tsumo": True}, "bad_context", "after a kan"),
    ("tenhou", *PINFU_ONLY[:2], {"north_count": 1}, "bad_context", "pulls no norths"),
    ("tenhou", *PINFU_ONLY[:2], {"seat": 0, "renhou": True}, "bad_context", "renhou"),
    *[(preset, *FOUR_PAIRS, "not_complete", "seven different pairs")
      for preset in ("ariari", "tenhou", "jboy", "jboy-sanma", "kenko", "mleague", "wrc",
                     "ema")],
    ("sanma-free", "1111z222z333z44z6z", "6z", {}, "not_complete",
     "seven pairs (four of a kind as two)"),
    ("tenhou", *SANRENKOU_OPEN, "no_yaku", "open hand without yaku"),
    ("kantan", *SANJUN_OPEN, "no_yaku", "open hand without yaku"),
    # 3p completes ryanpeikou or the four-tile chiitoitsu, 4s 111p 222p 123p 33p 444s,
    # which has no yaku: no ron without riichi (no atozuke).
    ("sanma-free", "11112222333p44s", "3p", {}, "atozuke", "a win on 4s would have no yaku"),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "hand", "tile", "kw", "code", "says"), REFUSED)
def test_refusals(
    preset: str, hand: str, tile: str, kw: dict[str, Any], code: str, says: str
) -> None:
    result = score(preset, hand, tile, **kw)
    assert isinstance(result, Refusal), result
    assert (result.code, says in result.message) == (code, True), result


def test_tiles_outside_the_set_or_twice_are_refused() -> None:
    house = RULES["sanma-free"]
    ctx = win(house, "123p456p789p23s99s", "1s", riichi=True)
    manzu_five = replace(ctx, concealed=(*ctx.concealed[:-2], 16, ctx.win_tile))
    twice = replace(ctx, concealed=(*ctx.concealed[:-2], ctx.win_tile, ctx.win_tile))
    short = replace(ctx, concealed=ctx.concealed[1:])
    for bad, says in ((manzu_five, "not in this preset's set: [16]"),
                      (twice, "more than once"), (short, "13 concealed tiles")):  # fmt: skip
        result = score_win(house, bad)
        assert isinstance(result, Refusal)
        assert (result.code, says in result.message) == ("bad_tiles", True), result


def test_renhou_as_yakuman() -> None:
    house = RULES["tenhou"]
    yakuman = replace(house, tiles=replace(house.tiles, renhou="yakuman"))
    assert score_row(yakuman, RENHOU) == hs(0, None, "renhou", yakuman=1)


@pytest.mark.parametrize(
    ("preset", "kazoe_base"), [("tenhou", 8000), ("kenko", 6000), ("ema", 6000)]
)
def test_counted_han_go_to_the_core_as_13(preset: str, kazoe_base: int) -> None:
    result = score_row(preset, KAZOE)
    assert isinstance(result, HandScore) and result.han == 14
    hand = to_hand(result, seat=1)
    assert (hand.han, hand.fu, hand.yakuman) == (13, 20, 0)
    value = hand_value(RULES[preset], han=hand.han, fu=hand.fu, tsumo=True)
    assert not isinstance(value, Refusal) and value.base == kazoe_base


@pytest.mark.parametrize(
    ("score_", "hand"),
    [
        (hs(3, 40, "riichi"), (3, 40, 0)),
        (hs(0, None, "kokushi", yakuman=2), (0, None, 2)),
        (hs(4, 130, "sankantsu"), (4, 110, 0)),
        (hs(8, None, "renhou"), (8, None, 0)),
    ],
)
def test_to_hand(score_: HandScore, hand: tuple[int, int | None, int]) -> None:
    made = to_hand(score_, seat=2, pao=1)
    assert (made.seat, made.pao) == (2, 1)
    assert (made.han, made.fu, made.yakuman) == hand


def test_the_display_names_fit_the_line() -> None:
    local = (name for name, _, _ in LOCAL_YAKU.values())
    assert all(len(name) <= 20 for name in (*YAKU_NAMES.values(), FOUR_TILE_CHIITOITSU, *local))


def test_the_helper_notation() -> None:
    assert kinds("406p") == [(12, ""), (13, "red"), (14, "")]
    tiles = Tiles(RULES["jboy-sanma"])
    assert tiles.take("00sg5p") == (88, 89, 52, 54)  # 53 is jboy-sanma's red 5p
    assert compact(tiles.take("19m1z")) == "19m1z"


def test_a_sanma_free_mangan_pays_from_the_core() -> None:
    """End to end: tiles to the core's payment (nuki and ittsu make 8 han: baiman)."""
    house = RULES["sanma-free"]
    result = score_row(house, NUKI)
    assert isinstance(result, HandScore)
    hand = to_hand(result, seat=1)
    value = hand_value(house, han=hand.han, fu=hand.fu)
    assert not isinstance(value, Refusal)
    assert ron_points(house, value, dealer=False) == 16000
