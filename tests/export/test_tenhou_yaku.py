"""The scorer's yaku as tenhou.net/6 lists them: names in Japanese, han closed or open as
the ``mahjong`` package counts them, dora by count."""

from __future__ import annotations

import pytest
from mahjong.hand_calculating.yaku_config import YakuConfig

from tablectl.export.tenhou_yaku import FOUR_TILE_CHIITOITSU, TENHOU_YAKU, tenhou_yaku
from tablectl.rules import tilescoring as scoring
from tablectl.rules.loader import load_rules
from tablectl.rules.tilescoring import YAKU_NAMES
from tablectl.tiles.hand import HandScore


def _package_han() -> dict[int, tuple[int, int]]:
    config = YakuConfig()
    found = [getattr(config, name) for name in dir(config)]
    return {y.yaku_id: (y.han_closed, y.han_open) for y in found if hasattr(y, "yaku_id")}


@pytest.mark.parametrize("yaku_id", sorted(YAKU_NAMES))
def test_every_yaku_of_the_scorer_has_its_name_and_the_packages_han(yaku_id: int) -> None:
    name = YAKU_NAMES[yaku_id]
    assert name in TENHOU_YAKU
    _, closed, open_ = TENHOU_YAKU[name]
    if yaku_id == 117:
        return  # renhou as a yakuman: listed as 人和(役満), its han never written
    assert (closed, open_) == _package_han()[yaku_id]


CASES = [
    # preset, yaku, opened, riichi, listed
    ("tenhou", ("tsumo", "riichi", "pinfu", "dora 2"), False, True,
     ["門前清自摸和(1飜)", "立直(1飜)", "平和(1飜)", "ドラ(2飜)", "裏ドラ(0飜)"]),
    ("tenhou", ("riichi", "ippatsu", "ura 1", "red 1"), False, True,
     ["立直(1飜)", "一発(1飜)", "裏ドラ(1飜)", "赤ドラ(1飜)"]),
    ("tenhou", ("haku", "chanta", "honitsu"), True, False,
     ["役牌 白(1飜)", "混全帯幺九(1飜)", "混一色(2飜)"]),
    ("tenhou", ("haku", "chanta", "honitsu"), False, False,
     ["役牌 白(1飜)", "混全帯幺九(2飜)", "混一色(3飜)"]),
    ("tenhou", ("chinitsu", "ittsu", "sanshoku"), True, False,
     ["一気通貫(1飜)", "三色同順(1飜)", "清一色(5飜)"]),
    ("tenhou", ("seat east", "round east", "toitoi"), True, False,
     ["自風 東(1飜)", "場風 東(1飜)", "対々和(2飜)"]),
    ("jboy", ("tanyao", "red 1", "gold 1"), True, False, ["断幺九(1飜)", "赤ドラ(2飜)"]),
    ("jboy-sanma", ("north", "toitoi", "north 2"), True, False,
     ["役牌 北(1飜)", "対々和(2飜)", "抜きドラ(2飜)"]),
    ("sanma-free", ("chun", "closed kan"), True, False, ["役牌 中(1飜)", "暗槓(1飜)"]),
    # a four-tile chiitoitsu has the preset's han, listed where 七対子 would be
    ("sanma-free", ("4-tile chiitoitsu", "riichi", "honitsu"), False, True,
     ["立直(1飜)", "四枚使い七対子(3飜)", "混一色(3飜)", "裏ドラ(0飜)"]),
    ("kantan", ("4-tile chiitoitsu",), False, False, ["四枚使い七対子(2飜)"]),
    # kantan counts tsumo and riichi on an open hand (its own code adds them).
    ("kantan", ("tsumo", "riichi", "tanyao"), True, True,
     ["門前清自摸和(1飜)", "立直(1飜)", "断幺九(1飜)", "裏ドラ(0飜)"]),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "yaku", "opened", "riichi", "listed"), CASES)
def test_a_score_as_tenhou_lists_it(
    preset: str, yaku: tuple[str, ...], opened: bool, riichi: bool, listed: list[str]
) -> None:
    score = HandScore(han=0, fu=30, yaku=yaku)
    assert tenhou_yaku(load_rules(preset), score, opened=opened, riichi=riichi) == listed


def test_the_local_yaku_have_their_names_and_kantans_han() -> None:
    for name, closed, open_ in scoring.LOCAL_YAKU.values():
        assert TENHOU_YAKU[name][1:] == (closed, open_)


def test_the_four_tile_chiitoitsu_is_the_scorers() -> None:
    assert FOUR_TILE_CHIITOITSU[0] == scoring.FOUR_TILE_CHIITOITSU


def test_a_flat_renhou_has_the_han_of_its_limit() -> None:
    # jboy: renhou is a flat baiman, whatever the hand's own yaku (its seed).
    score = HandScore(han=8, fu=None, yaku=("renhou",))
    assert tenhou_yaku(load_rules("jboy"), score, opened=False, riichi=False) == ["人和(8飜)"]


def test_yakuman_are_listed_without_han() -> None:
    score = HandScore(han=0, fu=None, yakuman=2, yaku=("tsuuiisou", "daisangen"))
    listed = tenhou_yaku(load_rules("ariari"), score, opened=True, riichi=False)
    assert listed == ["大三元(役満)", "字一色(役満)"]
