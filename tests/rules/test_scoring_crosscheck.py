"""The payment tables against a second implementation: the ``mahjong`` package's
``ScoresCalculator`` (github.com/MahjongRepository/mahjong), for every han/fu pair the
project accepts, dealer and non-dealer, ron and tsumo, three and four players, kiriage on
and off, kazoe yakuman and sanbaiman, one to three yakuman.

What the package cannot express is listed in ``HOUSE_VARIANTS`` with the rule it comes from,
and a test checks that exactly those cases differ, so a new difference fails. Honba are
not compared: every preset states its own (300/100, jboy's 1500/500, sanma-free's 1000
from each payer), where the package has 300/100 and 200 for a three-player ron."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from mahjong.constants import EAST, SOUTH
from mahjong.hand_calculating.hand_config import HandConfig, OptionalRules
from mahjong.hand_calculating.scores import ScoresCalculator

from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import MAX_HAN, VALID_FU, hand_value, ron_points, tsumo_payments

DEALER, NON_DEALER = 0, 1


def variant(players: int, kiriage: bool, kazoe: str, **scoring: Any) -> HouseRules:
    """Tenhou's standard table with the given players, kiriage and kazoe."""
    base = load_rules("tenhou")
    return replace(
        base,
        game=replace(base.game, players=players),
        scoring=replace(base.scoring, kiriage=kiriage, kazoe=kazoe, **scoring),
    )


def theirs(han: int, fu: int, *, dealer: bool, tsumo: bool, rules: HouseRules) -> dict[str, int]:
    """The package's payments: ``main`` (the discarder, or the dealer / each payer on a
    tsumo) and ``additional`` (each non-dealer on a non-dealer's tsumo)."""
    options = OptionalRules(
        kiriage=rules.scoring.kiriage,
        kazoe_limit=(
            HandConfig.KAZOE_LIMITED
            if rules.scoring.kazoe == "yakuman"
            else HandConfig.KAZOE_SANBAIMAN
        ),
        has_double_yakuman=rules.scoring.multiple_yakuman,
        is_three_player=rules.players == 3,
    )
    config = HandConfig(is_tsumo=tsumo, player_wind=EAST if dealer else SOUTH, options=options)
    result = ScoresCalculator.calculate_scores(han=han, fu=fu, config=config)
    return {"main": result["main"], "additional": result["additional"]}


def ours(rules: HouseRules, han: int, fu: int | None, *, dealer: bool, tsumo: bool,
         yakuman: int = 0) -> dict[str, int] | None:  # fmt: skip
    """This project's payments in the package's terms; None when the entry is refused."""
    value = hand_value(rules, han=han, fu=fu, yakuman=yakuman, tsumo=tsumo)
    if isinstance(value, Refusal):
        return None
    if not tsumo:
        return {"main": ron_points(rules, value, dealer=dealer), "additional": 0}
    winner = DEALER if dealer else NON_DEALER
    pays = tsumo_payments(rules, value, winner=winner, dealer=DEALER)
    if dealer:
        return {"main": pays[1], "additional": pays[1]}
    return {"main": pays[DEALER], "additional": pays[2]}


VARIANTS = {
    f"{players}p-{'kiriage' if kiriage else 'plain'}-{kazoe}": variant(players, kiriage, kazoe)
    for players in (4, 3)
    for kiriage in (False, True)
    for kazoe in ("yakuman", "sanbaiman")
}
CASES = [
    (name, han, fu, dealer, tsumo)
    for name in VARIANTS
    for han in range(1, MAX_HAN + 1)
    for fu in VALID_FU
    for dealer in (True, False)
    for tsumo in (False, True)
]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_accepted_han_fu_pays_what_the_package_says(name: str) -> None:
    rules = VARIANTS[name]
    compared = refused = 0
    for _, han, fu, dealer, tsumo in (c for c in CASES if c[0] == name):
        mine = ours(rules, han, fu, dealer=dealer, tsumo=tsumo)
        if mine is None:
            refused += 1
            # Only hands that cannot exist are refused (see IMPOSSIBLE below).
            assert (fu, han < 2, tsumo) in IMPOSSIBLE or (fu == 20 and not tsumo), (han, fu)
            continue
        compared += 1
        assert mine == theirs(han, fu, dealer=dealer, tsumo=tsumo, rules=rules), (
            name, han, fu, "dealer" if dealer else "non-dealer", "tsumo" if tsumo else "ron",
        )  # fmt: skip
    assert compared > 400 and refused > 0


#: (fu, under 2 han, tsumo) combinations no hand can have: 20 fu is pinfu tsumo (2 han at
#: least: pinfu and menzen tsumo), 25 fu is chiitoitsu (2 han at least).
IMPOSSIBLE = {(20, True, True), (25, True, False), (25, True, True)}


@pytest.mark.parametrize("players", [4, 3])
@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize(("dealer", "tsumo"), [(True, False), (False, False), (True, True),
                                               (False, True)])  # fmt: skip
def test_yakuman_counts_pay_what_the_package_says(
    players: int, count: int, dealer: bool, tsumo: bool
) -> None:
    rules = variant(players, False, "yakuman", multiple_yakuman=True)
    mine = ours(rules, 0, None, dealer=dealer, tsumo=tsumo, yakuman=count)
    config = HandConfig(
        is_tsumo=tsumo,
        player_wind=EAST if dealer else SOUTH,
        options=OptionalRules(has_double_yakuman=True, is_three_player=players == 3),
    )
    result = ScoresCalculator.calculate_scores(13 * count, 0, config, is_yakuman=True)
    assert mine == {"main": result["main"], "additional": result["additional"]}


#: Readings the package has no option for: each is a house rule of a preset, with the
#: rule text it comes from, and differs from the package exactly where listed.
HOUSE_VARIANTS: dict[str, dict[str, Any]] = {
    # J-BOY (seed 001): 60符以上は一翻くり上げ - 60 fu and more score one han up at half the fu.
    "jboy_fu_60_plus": {"preset": "jboy", "differs": lambda han, fu: fu >= 60 and han <= 3},
    # sanma-free (seed 003): 符計算なし, every hand below mangan is scored as 30 fu.
    "sanma_free_flat_30fu": {"preset": "sanma-free", "differs": lambda han, fu: han <= 4},
    # kantan (seed 004): its own fixed table by han, no fu at all.
    "kantan_table": {"preset": "kantan", "differs": lambda han, fu: True},
}


@pytest.mark.parametrize("name", list(HOUSE_VARIANTS))
def test_house_variants_differ_from_the_package_exactly_where_documented(name: str) -> None:
    spec = HOUSE_VARIANTS[name]
    rules = load_rules(spec["preset"])
    plain = variant(rules.players, rules.scoring.kiriage, rules.scoring.kazoe)
    differing, expected = set(), set()
    for han in range(1, MAX_HAN):
        for fu in VALID_FU:
            for dealer in (True, False):
                mine = ours(rules, han, fu, dealer=dealer, tsumo=False)
                if mine is None or ours(plain, han, fu, dealer=dealer, tsumo=False) is None:
                    continue
                if mine != theirs(han, fu, dealer=dealer, tsumo=False, rules=plain):
                    differing.add((han, fu))
                if spec["differs"](han, fu):
                    expected.add((han, fu))
    # Where the variant's rule applies the payment may still coincide (a mangan either
    # way); where it does not apply, nothing may differ.
    assert differing <= expected
    assert differing, f"{name}: no difference found; the variant is not in effect"
