"""The two paths agree: for random complete hands, what the ``mahjong`` package pays for the
hand (its own ``HandResponse.cost``, the package called here directly with the preset's
options) equals what the rules core pays for the han/fu :func:`score_win` gives.

Every four-player preset with the standard table is drawn.  Where the preset's own code
changes the hand on purpose, the comparison says so:

* a seat-and-round wind pair worth 2 fu (jboy, mleague, wrc) and jboy's rinshan without
  tsumo fu: our fu is the package's less 2 raw fu, and the core pays what the package's
  own table pays at *our* han and fu;
* jboy's 60 fu and more (一翻くり上げ): the core pays one han more at half the fu,
  rounded up to 10, which is what the package's table pays for that han and fu;
* no multiple yakuman (ema, kenko): the core pays one yakuman where the package stacks.

Three-player presets and kantan have tables of their own (sanma-free's flat 30 fu,
kantan's rows): for them the core must accept every score made, and the han must be the
package's plus the preset's documented extras (tests/tiles/test_scoring.py has a case for
each).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mahjong.hand_calculating.fu import FuCalculator
from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, HandConstants, OptionalRules
from mahjong.hand_calculating.hand_response import HandResponse
from mahjong.hand_calculating.scores import ScoresCalculator
from mahjong.meld import Meld as PackageMeld

from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import hand_value, ron_points, tsumo_payments
from tablectl.rules.tilescoring import score_win, to_hand
from tablectl.tiles.hand import HandScore, WinContext
from tablectl.tiles.ids import tile_set
from tests.tiles.random_hands import random_win

STANDARD_4P = ("ariari", "tenhou", "mleague", "wrc", "ema", "kenko", "jboy")
OWN_TABLES = ("sanma-free", "jboy-sanma", "kantan")
PACKAGE_MELD = {"chi": "chi", "pon": "pon", "open_kan": "kan", "closed_kan": "kan",
                "added_kan": "shouminkan"}  # fmt: skip
RULES = {name: load_rules(name) for name in STANDARD_4P + OWN_TABLES}


def options(house: HouseRules) -> OptionalRules:
    """The package's options for a standard four-player preset, as a reader of the preset
    would set them (the package's red fives are ids 16/52/88: exactly the coloured fives
    of ariari, tenhou, mleague and jboy, whose gold 5p counts one dora like a red)."""
    coloured = tile_set(house).red | tile_set(house).gold
    assert not coloured or coloured == {16, 52, 88}
    return OptionalRules(
        has_open_tanyao=house.tiles.kuitan,
        has_aka_dora=bool(coloured),
        has_double_yakuman=False,
        kazoe_limit=(
            HandConstants.KAZOE_LIMITED
            if house.scoring.kazoe == "yakuman"
            else HandConstants.KAZOE_SANBAIMAN
        ),
        kiriage=house.scoring.kiriage,
    )


def package(house: HouseRules, ctx: WinContext) -> HandResponse:
    """The package's own value for the hand."""
    riichi = ctx.riichi or ctx.double_riichi
    config = HandConfig(
        is_tsumo=ctx.tsumo,
        is_riichi=riichi,
        is_daburu_riichi=ctx.double_riichi,
        is_ippatsu=ctx.ippatsu and not (ctx.chankan and not house.tiles.ippatsu_chankan),
        is_rinshan=ctx.rinshan,
        is_chankan=ctx.chankan,
        is_haitei=ctx.haitei,
        is_houtei=ctx.houtei,
        player_wind=27 + ctx.seat_wind,
        round_wind=27 + ctx.round_wind,
        options=options(house),
    )
    melds = [
        PackageMeld(meld_type=PACKAGE_MELD[m.kind], tiles=sorted(m.tiles), opened=m.opened)
        for m in ctx.melds
    ]
    tiles = [*ctx.concealed, *(t for m in ctx.melds for t in m.tiles)]
    return HandCalculator.estimate_hand_value(
        tiles, ctx.win_tile, melds=melds, dora_indicators=list(ctx.dora_indicators),
        ura_dora_indicators=list(ctx.ura_indicators), config=config,
    )  # fmt: skip


def core_pays(house: HouseRules, ctx: WinContext, score: HandScore) -> dict[str, int]:
    """The core's payment for ``score`` in the package's terms (``main``, ``additional``)."""
    hand = to_hand(score, ctx.seat)
    value = hand_value(house, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=ctx.tsumo)
    assert not isinstance(value, Refusal), (score, value)
    dealer = ctx.seat == ctx.dealer
    if not ctx.tsumo:
        return {"main": ron_points(house, value, dealer=dealer), "additional": 0}
    pays = tsumo_payments(house, value, winner=ctx.seat, dealer=ctx.dealer)
    others = [pays[s] for s in range(house.players) if s not in (ctx.seat, ctx.dealer)]
    if dealer:
        return {"main": others[0], "additional": others[0]}
    return {"main": pays[ctx.dealer], "additional": others[0]}


def table_pays(
    house: HouseRules, ctx: WinContext, han: int, fu: int, yakuman: bool = False
) -> dict[str, int]:
    """The package's own table at a given han and fu (or 13 han per yakuman)."""
    config = HandConfig(is_tsumo=ctx.tsumo, player_wind=27 + ctx.seat_wind, options=options(house))
    cost = ScoresCalculator.calculate_scores(han=han, fu=fu, config=config, is_yakuman=yakuman)
    return {"main": cost["main"], "additional": cost["additional"]}


def theirs_pays(response: HandResponse) -> dict[str, int]:
    assert response.cost is not None
    return {"main": response.cost["main"], "additional": response.cost["additional"]}


def check_standard(name: str, ctx: WinContext) -> None:
    house = RULES[name]
    ours = score_win(house, ctx)
    theirs = package(house, ctx)
    if isinstance(ours, Refusal):
        assert ours.code == "no_yaku", ours
        assert theirs.error == HandCalculator.ERR_NO_YAKU, (ours, theirs.error)
        return
    assert theirs.error is None, (ours, theirs.error)
    assert theirs.han is not None and theirs.fu is not None
    if ours.yakuman:
        stacked = theirs.han // 13
        assert ours.yakuman == (stacked if house.scoring.multiple_yakuman else 1)
        assert core_pays(house, ctx, ours) == table_pays(
            house, ctx, 13 * ours.yakuman, 0, yakuman=True
        )
        return
    assert ours.han == theirs.han, (ours, theirs.yaku)
    reasons = {d["reason"] for d in theirs.fu_details or []}
    preset_fu = (
        FuCalculator.DOUBLE_VALUED_PAIR in reasons and house.tiles.double_wind_pair_fu == 2
    ) or (ctx.rinshan and not house.tiles.rinshan_tsumo_fu and FuCalculator.TSUMO in reasons)
    assert ours.fu is not None
    if preset_fu:
        assert theirs.fu - 10 <= ours.fu <= theirs.fu
    else:
        assert ours.fu == theirs.fu, (ours, theirs.fu_details)
    han, fu = ours.han, ours.fu
    if house.scoring.fu_60_plus == "one_han_up" and fu >= 60 and han < 5:
        expected = table_pays(house, ctx, han + 1, -(-fu // 20) * 10)
    elif preset_fu:
        expected = table_pays(house, ctx, han, fu)
    else:
        expected = theirs_pays(theirs)
    assert core_pays(house, ctx, ours) == expected, (ours, theirs.han, theirs.fu)


@pytest.mark.parametrize("name", STANDARD_4P)
@settings(max_examples=400, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_package_cost_equals_the_core_payment(name: str, seed: int) -> None:
    check_standard(name, random_win(random.Random(seed), RULES[name]))


@pytest.mark.parametrize("name", OWN_TABLES)
@settings(max_examples=300, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1))
def test_own_tables_accept_every_score(name: str, seed: int) -> None:
    house = RULES[name]
    ctx = random_win(random.Random(seed), house)
    ours = score_win(house, ctx)
    if isinstance(ours, Refusal):
        assert ours.code in ("no_yaku", "atozuke"), ours
        return
    hand = to_hand(ours, ctx.seat)
    value = hand_value(house, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=ctx.tsumo)
    assert not isinstance(value, Refusal), (ours, value)
    if ours.yakuman:
        assert ours.fu is None and ours.han == 0
    elif house.scoring.table == "kantan":
        assert ours.fu is None
    elif house.scoring.table == "flat_30fu":
        assert ours.fu == 30
