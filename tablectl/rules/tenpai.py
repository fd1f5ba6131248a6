"""Tenpai as the preset counts it at an exhaustive draw (formal tenpai), whether a wait
has a yaku, whether a noten riichi may be declared, and the scorer.

Pure and deterministic.  The scorer (:func:`tablectl.rules.tilescoring.score_win`) is
looked up when first needed: importing it loads the ``mahjong`` package, which only a
table that reads its tiles needs.  :mod:`.tilescoring` builds on :mod:`.tileshapes` only,
never on this module, so the lookup is no circle.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import cast

from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.tileshapes import counts, waits
from tablectl.tiles.hand import HandScore, Meld, WinContext

__all__ = [
    "Scorer",
    "has_yaku",
    "noten_riichi_allowed",
    "scorer",
    "tenpai",
    "tenpai_waits",
]

Scorer = Callable[[HouseRules, WinContext], "HandScore | Refusal"]


def noten_riichi_allowed(house: HouseRules) -> bool:
    """A noten riichi is a bluff the preset allows, to be found at the exhaustive draw.

    Reading: a preset that punishes a noten riichi found at the draw
    (``riichi.noten_at_draw`` chombo or penalty_each: every parlor preset) lets it be
    declared (the table must not give the bluff away); one with no such rule (``none``:
    Tenhou, where the client refuses it) does not, and the table refuses it."""
    return house.riichi.noten_at_draw != "none"


def tenpai_waits(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> tuple[int, ...]:
    """The waits that make the hand tenpai under the preset's ``formal_tenpai``.

    ``yes``: every wait by shape.  ``not_all_four_own``: a wait on a kind the player holds
    all four of (concealed tiles and own melds) does not count.  ``open_hand_invalid``
    (sanma-free, no kuitan and no atozuke): an open hand counts only if it has a yaku on a
    ron of the wait (all its waits, without atozuke; any, with it); the winds matter there
    only."""
    shape = waits(house, concealed)
    mode = house.tiles.formal_tenpai
    if mode == "not_all_four_own":
        own = counts([*concealed, *(t for m in melds for t in m.tiles)])
        return tuple(k for k in shape if own[k] < 4)
    if mode == "open_hand_invalid" and shape and any(m.opened for m in melds):
        with_yaku = tuple(
            k
            for k in shape
            if has_yaku(house, concealed, melds, k, seat_wind=seat_wind, round_wind=round_wind)
        )
        if not house.tiles.atozuke and len(with_yaku) < len(shape):
            return ()
        return with_yaku
    return shape


def tenpai(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> bool:
    """The hand is tenpai as the preset counts it at an exhaustive draw (see
    :func:`tenpai_waits`)."""
    return bool(tenpai_waits(house, concealed, melds, seat_wind=seat_wind, round_wind=round_wind))


def _free_id(k: int, used: Iterable[int]) -> int:
    taken = set(used)
    for copy in range(4):
        if k * 4 + copy not in taken:
            return k * 4 + copy
    return k * 4


def has_yaku(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    wait: int,
    *,
    seat_wind: int = 0,
    round_wind: int = 0,
) -> bool:
    """A ron on kind ``wait`` would have a yaku (no riichi, no chance yaku, no dora).

    Uses :mod:`tablectl.rules.tilescoring` when it is there; otherwise the ``mahjong``
    package's calculator with the preset's kuitan (an approximation of the preset's
    scorer: its other readings do not change whether a hand has a yaku)."""
    win = _free_id(wait, [*concealed, *(t for m in melds for t in m.tiles)])
    score = scorer()
    if score is not None:
        players = house.players
        ctx = WinContext(
            seat=seat_wind % players,
            dealer=0,
            players=players,
            round_wind=round_wind,
            concealed=(*concealed, win),
            melds=tuple(melds),
            win_tile=win,
            tsumo=False,
        )
        return isinstance(score(house, ctx), HandScore)
    return _library_has_yaku(house, concealed, melds, win, seat_wind, round_wind)


def _library_has_yaku(
    house: HouseRules,
    concealed: Sequence[int],
    melds: Sequence[Meld],
    win: int,
    seat_wind: int,
    round_wind: int,
) -> bool:
    from mahjong.hand_calculating.hand import HandCalculator
    from mahjong.hand_calculating.hand_config import HandConfig, OptionalRules
    from mahjong.meld import Meld as LibMeld

    kinds = {
        "chi": LibMeld.CHI,
        "pon": LibMeld.PON,
        "open_kan": LibMeld.KAN,
        "closed_kan": LibMeld.KAN,
        "added_kan": LibMeld.SHOUMINKAN,
    }
    lib_melds = [
        LibMeld(meld_type=kinds[m.kind], tiles=list(m.tiles), opened=m.opened) for m in melds
    ]
    config = HandConfig(
        player_wind=27 + seat_wind,
        round_wind=27 + round_wind,
        options=OptionalRules(
            has_open_tanyao=house.tiles.kuitan, is_three_player=house.players == 3
        ),
    )
    tiles = [*concealed, win, *(t for m in melds for t in m.tiles)]
    result = HandCalculator.estimate_hand_value(tiles, win, melds=lib_melds, config=config)
    return result.error is None and bool(result.han)


@lru_cache(maxsize=1)
def scorer() -> Scorer | None:
    """``tablectl.rules.tilescoring.score_win`` if that module is there, else None (the value
    of a win is then not checked against the tiles).  Looked up once: a missing module
    would otherwise be searched for on disk at every win."""
    try:
        module = importlib.import_module("tablectl.rules.tilescoring")
    except ModuleNotFoundError as exc:
        if exc.name != "tablectl.rules.tilescoring":
            raise
        return None
    found = getattr(module, "score_win", None)
    return cast(Scorer, found) if callable(found) else None
