"""tenhou.net's yaku ids (the mjlog ``yaku``/``yakuman`` attributes) and the names its
tenhou.net/6 JSON writes for them."""

from __future__ import annotations

__all__ = ["YAKU_IDS", "YAKU_NAMES", "YAKUMAN_HAN"]

#: The name of yaku id ``i`` as tenhou.net/6 writes it (before the ``(N飜)``).
YAKU_NAMES: tuple[str, ...] = (
    "門前清自摸和",
    "立直",
    "一発",
    "槍槓",
    "嶺上開花",
    "海底摸月",
    "河底撈魚",
    "平和",
    "断幺九",
    "一盃口",
    "自風 東",
    "自風 南",
    "自風 西",
    "自風 北",
    "場風 東",
    "場風 南",
    "場風 西",
    "場風 北",
    "役牌 白",
    "役牌 發",
    "役牌 中",
    "両立直",
    "七対子",
    "混全帯幺九",
    "一気通貫",
    "三色同順",
    "三色同刻",
    "三槓子",
    "対々和",
    "三暗刻",
    "小三元",
    "混老頭",
    "二盃口",
    "純全帯幺九",
    "混一色",
    "清一色",
    "人和",
    "天和",
    "地和",
    "大三元",
    "四暗刻",
    "四暗刻単騎",
    "字一色",
    "緑一色",
    "清老頭",
    "九蓮宝燈",
    "純正九蓮宝燈",
    "国士無双",
    "国士無双１３面",
    "大四喜",
    "小四喜",
    "四槓子",
    "ドラ",
    "裏ドラ",
    "赤ドラ",
)

#: The id of each name of :data:`YAKU_NAMES`.
YAKU_IDS: dict[str, int] = {name: i for i, name in enumerate(YAKU_NAMES)}

#: What a yakuman counts in :attr:`~tablectl.logs.game.Win.yaku`.
YAKUMAN_HAN = 13
