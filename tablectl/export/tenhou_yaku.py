"""A win's yaku as tenhou.net/6 lists them: ``"立直(1飜)"``, ``"ドラ(2飜)"``, ``"大三元(役満)"``.

The scorer (:mod:`tablectl.rules.tilescoring`) names yaku in short English
(:data:`~tablectl.rules.tilescoring.YAKU_NAMES`) and its dora as ``"dora 2"``; this module
gives each tenhou.net's Japanese name and its han: a yaku's han closed or open as the
``mahjong`` package counts them (the scorer's source), a dora's the count in its name.
They are listed in tenhou.net's yaku order; ``裏ドラ(0飜)`` is listed for a riichi hand
without ura dora, as tenhou.net does, other dora only when there are some.
"""

from __future__ import annotations

from tablectl.rules.options import HouseRules
from tablectl.tiles.hand import HandScore

__all__ = ["TENHOU_YAKU", "tenhou_yaku"]

#: The scorer's yaku names: (tenhou.net's name, han closed, han open), in tenhou.net's
#: order.  0 open: closed only, unless a preset's own code adds it to an open hand
#: (kantan's tsumo and riichi), where it counts its closed han.  Names tenhou.net does not
#: have (its rules have no such yaku) are the usual Japanese ones.
TENHOU_YAKU: dict[str, tuple[str, int, int]] = {
    "tsumo": ("門前清自摸和", 1, 0),
    "riichi": ("立直", 1, 0),
    "open riichi": ("開立直", 2, 0),
    "ippatsu": ("一発", 1, 0),
    "chankan": ("槍槓", 1, 1),
    "rinshan": ("嶺上開花", 1, 1),
    "haitei": ("海底摸月", 1, 1),
    "houtei": ("河底撈魚", 1, 1),
    "pinfu": ("平和", 1, 0),
    "tanyao": ("断幺九", 1, 1),
    "iipeikou": ("一盃口", 1, 0),
    "seat east": ("自風 東", 1, 1),
    "seat south": ("自風 南", 1, 1),
    "seat west": ("自風 西", 1, 1),
    "seat north": ("自風 北", 1, 1),
    "round east": ("場風 東", 1, 1),
    "round south": ("場風 南", 1, 1),
    "round west": ("場風 西", 1, 1),
    "round north": ("場風 北", 1, 1),
    # jboy-sanma: the north is a value tile whatever the winds.
    "north": ("役牌 北", 1, 1),
    "haku": ("役牌 白", 1, 1),
    "hatsu": ("役牌 發", 1, 1),
    "chun": ("役牌 中", 1, 1),
    "double riichi": ("両立直", 2, 0),
    "double open riichi": ("両開立直", 3, 0),
    "chiitoitsu": ("七対子", 2, 0),
    "chanta": ("混全帯幺九", 2, 1),
    "ittsu": ("一気通貫", 2, 1),
    "sanshoku": ("三色同順", 2, 1),
    "sanshoku doukou": ("三色同刻", 2, 2),
    "sankantsu": ("三槓子", 2, 2),
    "toitoi": ("対々和", 2, 2),
    "sanankou": ("三暗刻", 2, 2),
    "shousangen": ("小三元", 2, 2),
    "honroutou": ("混老頭", 2, 2),
    "ryanpeikou": ("二盃口", 3, 0),
    # The local yaku (``tiles.local_yaku``), at kantan's han.
    "isshoku sanjun": ("一色三順", 3, 0),
    "sanrenkou": ("三連刻", 2, 2),
    "junchan": ("純全帯幺九", 3, 2),
    "honitsu": ("混一色", 3, 2),
    "chinitsu": ("清一色", 6, 5),
    "nagashi": ("流し満貫", 5, 5),
    "renhou": ("人和", 5, 0),
    "tenhou": ("天和", 13, 0),
    "chiihou": ("地和", 13, 0),
    "daisangen": ("大三元", 13, 13),
    "suuankou": ("四暗刻", 13, 0),
    "suuankou tanki": ("四暗刻単騎", 26, 0),
    "tsuuiisou": ("字一色", 13, 13),
    "ryuuiisou": ("緑一色", 13, 13),
    "chinroutou": ("清老頭", 13, 13),
    "chuuren": ("九蓮宝燈", 13, 0),
    "junsei chuuren": ("純正九蓮宝燈", 26, 0),
    "kokushi": ("国士無双", 13, 0),
    "kokushi 13-wait": ("国士無双１３面", 26, 0),
    "daisuushii": ("大四喜", 26, 26),
    "shousuushii": ("小四喜", 13, 13),
    "suukantsu": ("四槓子", 13, 13),
    "daisharin": ("大車輪", 13, 0),
    "daichisei": ("大七星", 13, 0),
    "isshoku yonjun": ("一色四順", 13, 13),
    "suurenkou": ("四連刻", 13, 13),
    "paarenchan": ("八連荘", 13, 13),
    "sashikomi": ("差し込み", 13, 0),
}
#: The scorer's dora (``"dora 2"``): tenhou.net's name.  A gold five is written as a red
#: one in the log, so its dora count as red dora too.
DORA_NAMES = {
    "dora": "ドラ",
    "ura": "裏ドラ",
    "red": "赤ドラ",
    "gold": "赤ドラ",
    "north": "抜きドラ",
}
#: sanma-free's han for a closed kan (its ``tiles.closed_kan_bonus_han``).
CLOSED_KAN = ("closed kan", "暗槓")
#: A four-tile chiitoitsu, at the preset's ``tiles.four_tile_chiitoitsu_han``; listed
#: where tenhou.net lists 七対子.
FOUR_TILE_CHIITOITSU = ("4-tile chiitoitsu", "四枚使い七対子")
URA = "裏ドラ"
_ORDER = [name for name, _, _ in TENHOU_YAKU.values()]
_ORDER.insert(_ORDER.index("七対子") + 1, FOUR_TILE_CHIITOITSU[1])
_ORDER += [*dict.fromkeys(DORA_NAMES.values()), CLOSED_KAN[1]]


def _han(rules: HouseRules, score: HandScore, name: str, opened: bool) -> tuple[str, int]:
    """tenhou.net's name of one of the scorer's entries, and its han."""
    # The entries whose han are a preset option, not the package's.
    preset_han = {
        CLOSED_KAN[0]: (CLOSED_KAN[1], rules.tiles.closed_kan_bonus_han),
        FOUR_TILE_CHIITOITSU[0]: (FOUR_TILE_CHIITOITSU[1], rules.tiles.four_tile_chiitoitsu_han),
    }
    if name in preset_han:
        return preset_han[name]
    if name in TENHOU_YAKU:
        tenhou, closed, open_ = TENHOU_YAKU[name]
        if name == "renhou" and not score.yakuman:
            return tenhou, score.han  # a flat limit hand, alone in the list
        return tenhou, open_ if opened and open_ else closed
    dora, _, count = name.rpartition(" ")
    if dora in DORA_NAMES and count.isdigit():
        return DORA_NAMES[dora], int(count)
    return name, 0


def tenhou_yaku(rules: HouseRules, score: HandScore, *, opened: bool, riichi: bool) -> list[str]:
    """The result strings of a win the scorer read as ``score``: ``"名(N飜)"`` each, or
    ``"名(役満)"`` for a yakuman's.  ``opened``: the hand has an open meld; ``riichi``: the
    winner is in riichi (so ura dora are listed, 0 or more)."""
    if score.yakuman:
        names = [_han(rules, score, name, opened)[0] for name in score.yaku]
        return [f"{name}(役満)" for name in sorted(names, key=_rank)]
    han: dict[str, int] = {}
    for name in score.yaku:
        tenhou, count = _han(rules, score, name, opened)
        han[tenhou] = han.get(tenhou, 0) + count
    if riichi:
        han.setdefault(URA, 0)
    return [f"{name}({han[name]}飜)" for name in sorted(han, key=_rank)]


def _rank(name: str) -> int:
    return _ORDER.index(name) if name in _ORDER else len(_ORDER)
