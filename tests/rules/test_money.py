"""The parlor's money (docs/rules.md, "Money"): the ``[money]`` options, a hand's chips,
who pays them, and the settlement in P at the game's end.

The tables are worked examples: each row's figures are computed by hand in its comment.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.loader import RulesConfigError, load_rules, preset_names
from tablectl.rules.money import (
    chip_payments,
    chips_refusal,
    hand_chips,
    max_hand_chips,
    settle,
    whole_p,
    yakuman_chips,
)
from tablectl.rules.options import HouseRules, MoneyOptions
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameOver, HandSettled, initial_state
from tests.helpers import random_event

MONEY_PRESETS = ("sanma-free", "jboy", "jboy-sanma")


def play(preset: str, *lines: str) -> dict[str, Any]:
    """The replay output of ``lines`` after a start line of ``preset``."""
    text = [json.dumps({"type": "start", "rules": preset}), *lines]
    out: dict[str, Any] = json.loads(json.dumps(replay(text).as_dict()))
    return out


# --- the options --------------------------------------------------------------------


def test_presets_carry_the_seeds_money() -> None:
    sanma = load_rules("sanma-free").money
    assert (sanma.rate, sanma.uma, sanma.game_fee, sanma.fee_payer) == (
        50,
        (1000, 0, -1000),
        300,
        "each",
    )
    assert (sanma.chip_value, sanma.red_chips, sanma.gold_chips, sanma.fives_need_riichi) == (
        100,
        1,
        0,
        True,
    )
    assert (sanma.ippatsu_chips, sanma.ura_chips, sanma.kan_ura_chips) == (1, 1, 1)
    assert (sanma.yakuman_chips, sanma.yakuman_chips_each, sanma.kazoe_chips) == (10, False, False)
    assert (sanma.pao_pays_chips, sanma.bust_prize, sanma.renhou_chips) == (True, 300, "ordinary")
    for name in ("jboy", "jboy-sanma"):
        jboy = load_rules(name).money
        assert (jboy.rate, jboy.uma, jboy.game_fee, jboy.bust_prize) == (0, (), 0, 0)
        assert (jboy.chip_value, jboy.red_chips, jboy.gold_chips) == (100, 1, 1)
        assert not jboy.fives_need_riichi and not jboy.ippatsu_chips and not jboy.ura_chips
        assert (jboy.yakuman_chips, jboy.yakuman_chips_each, jboy.kazoe_chips) == (5, False, False)
        assert jboy.renhou_chips == "fives_only"


@pytest.mark.parametrize("name", preset_names())
def test_only_the_parlor_presets_have_money(name: str) -> None:
    money = load_rules(name).money
    assert money.enabled is (name in MONEY_PRESETS)
    if name not in MONEY_PRESETS:
        assert money == MoneyOptions()


def test_every_money_reading_is_commented_in_its_preset() -> None:
    from importlib import resources

    folder = resources.files("tablectl.rules.presets")
    for name in ("sanma-free", "jboy"):
        text = folder.joinpath(f"{name}.toml").read_text("utf-8")
        section = text[text.index("[money]") :]
        assert section.count("(reading)") >= 3, name


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("[money]\nrate = -1\n", ["[money] rate is -1", "at least 0"]),
        ('[money]\nrate = "0.5"\n', ["[money] rate", "must be an integer"]),
        ("[money]\numa = [1000, -1000]\n", ["[money] uma has 2 entries", "one per player (4)"]),
        ("[money]\numa = [1000, 0, 0, 0]\n", ["[money] uma must sum to 0, got 1000"]),
        ("[money]\nred_chips = 1\n", ["[money] red_chips is 1 but chip_value is 0"]),
        ("[money]\nyakuman_chips = 5\n", ["[money] yakuman_chips is 5 but chip_value is 0"]),
        ("[money]\nchip_value = 100\n", ["chip_value is 100 but nothing earns chips"]),
        (
            "[money]\nchip_value = 100\ngold_chips = 1\n",
            ["[money] gold_chips is 1", "gold_fives is empty"],
        ),
        (
            "[tiles]\nred_fives = []\n[money]\nchip_value = 100\nred_chips = 1\n",
            ["[money] red_chips is 1", "red_fives is empty"],
        ),
        ('[money]\nfee_payer = "loser"\n', ["[money] fee_payer is 'loser'", "'each', 'top'"]),
        ("[money]\nred_chips = 101\n", ["[money] red_chips is 101", "at most 100"]),
        ("[money]\nbust_prize = true\n", ["[money] bust_prize", "must be an integer"]),
        ("[money]\nchip_valu = 1\n", ["[money] 'chip_valu'", "did you mean 'chip_value'"]),
        ("[mony]\nrate = 50\n", ["unknown key 'mony'", "did you mean 'money'"]),
    ],
)
def test_bad_money_is_refused_in_one_line(tmp_path: Path, text: str, fragments: list[str]) -> None:
    path = tmp_path / "parlor.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(RulesConfigError) as info:
        load_rules(str(path))
    message = str(info.value)
    assert "\n" not in message
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message, message


def test_a_parlor_adds_money_to_a_preset(tmp_path: Path) -> None:
    path = tmp_path / "ours.toml"
    path.write_text(
        'extends = "tenhou"\n[money]\nrate = 100\numa = [2000, 1000, -1000, -2000]\n'
        'game_fee = 500\nfee_payer = "top"\n',
        "utf-8",
    )
    money = load_rules(str(path)).money
    assert money.enabled and not money.hand_chips
    assert (money.rate, money.game_fee, money.fee_payer) == (100, 500, "top")


# --- a hand's chips -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "riichi", "most"),
    [
        ("sanma-free", True, 23),  # 2 red fives + ippatsu + 4 ura + 16 kan-ura
        ("sanma-free", False, 0),  # リーチ赤: nothing without riichi
        ("jboy", True, 3),  # red 5m, red 5s, gold 5p
        ("jboy", False, 3),  # the fives count on any win
        ("jboy-sanma", False, 4),  # gold 5p, red 5p, two red 5s
        ("kenko", True, 0),  # no chips
    ],
)
def test_the_most_chips_a_hand_holds(preset: str, riichi: bool, most: int) -> None:
    assert max_hand_chips(load_rules(preset), riichi=riichi) == most


@pytest.mark.parametrize(
    ("preset", "counts", "chips"),
    [
        ("sanma-free", {"riichi": True, "red": 1, "ura": 2}, 3),
        ("sanma-free", {"riichi": True, "ippatsu": True, "red": 2, "ura": 1, "kan_ura": 4}, 8),
        ("sanma-free", {"riichi": False, "red": 2}, 0),  # リーチ赤
        ("sanma-free", {"riichi": False, "ura": 3, "ippatsu": True}, 0),  # no ura without riichi
        ("sanma-free", {"riichi": True, "red": 1, "renhou": True}, 1),  # renhou: ordinary
        ("jboy", {"riichi": False, "red": 2, "gold": 1}, 3),
        ("jboy", {"riichi": True, "red": 1, "ura": 4, "ippatsu": True}, 1),  # fives only
        ("jboy", {"riichi": False, "gold": 1, "renhou": True}, 1),  # 赤・金の祝儀のみ
        ("kenko", {"riichi": True, "red": 3, "ura": 2}, 0),
    ],
)
def test_hand_chips_from_what_the_tiles_show(
    preset: str, counts: dict[str, Any], chips: int
) -> None:
    assert hand_chips(load_rules(preset).money, **counts) == chips


SANMA_MONEY = load_rules("sanma-free").money


@pytest.mark.parametrize(
    ("money", "args", "chips"),
    [
        (SANMA_MONEY, {"yakuman": 1}, 10),  # 役満祝儀 1000P: 10 chips
        (SANMA_MONEY, {"yakuman": 2}, 10),  # ご祝儀は重複しません
        (SANMA_MONEY, {"yakuman": 1, "kazoe": True}, 0),  # 数え役満: ご祝儀はつきません
        (SANMA_MONEY, {"yakuman": 0}, 0),
        (replace(SANMA_MONEY, yakuman_chips_each=True), {"yakuman": 2}, 20),
        (replace(SANMA_MONEY, kazoe_chips=True), {"yakuman": 1, "kazoe": True}, 10),
        (load_rules("jboy").money, {"yakuman": 2}, 5),  # 御祝儀は増えません
        (load_rules("jboy").money, {"yakuman": 1, "renhou": True}, 0),  # 人和: fives only
        (SANMA_MONEY, {"yakuman": 1, "renhou": True}, 10),
        (MoneyOptions(), {"yakuman": 1}, 0),
    ],
)
def test_yakuman_chips(money: MoneyOptions, args: dict[str, Any], chips: int) -> None:
    assert yakuman_chips(money, **args) == chips


@pytest.mark.parametrize(
    ("players", "winner", "chips", "kwargs", "out"),
    [
        (3, 1, 2, {"discarder": None}, (-2, 4, -2)),  # tsumo: each other player
        (4, 0, 3, {"discarder": None}, (9, -3, -3, -3)),
        (4, 2, 3, {"discarder": 1}, (0, -3, 3, 0)),  # ron: the discarder
        (3, 0, 10, {"discarder": 2, "pao": 1}, (10, -10, 0)),  # pao ron: the pao player
        (3, 0, 10, {"discarder": None, "pao": 1}, (20, -20, 0)),  # pao tsumo: all of it
        (4, 0, 5, {"discarder": None, "pao": 2}, (15, 0, -15, 0)),
        (3, 0, 10, {"discarder": 2, "pao": 1, "pao_pays": False}, (10, 0, -10)),
        (3, 0, 0, {"discarder": 2}, (0, 0, 0)),
    ],
)
def test_who_pays_the_chips(
    players: int, winner: int, chips: int, kwargs: dict[str, Any], out: tuple[int, ...]
) -> None:
    assert chip_payments(players, winner, chips, **kwargs) == out
    assert sum(out) == 0


@pytest.mark.parametrize(
    ("preset", "chips", "riichi", "code"),
    [
        ("kenko", 0, True, "chips_not_allowed"),  # even 0: kenko has no chips
        ("jboy", -1, False, "bad_chips"),
        ("jboy", 4, False, "bad_chips"),  # three coloured fives
        ("jboy", 3, False, None),
        ("sanma-free", 1, False, "chips_need_riichi"),
        ("sanma-free", 0, False, None),
        ("sanma-free", 23, True, None),
        ("sanma-free", 24, True, "bad_chips"),
    ],
)
def test_an_entered_chip_count_is_checked(
    preset: str, chips: int, riichi: bool, code: str | None
) -> None:
    refusal = chips_refusal(load_rules(preset), 1, chips, riichi=riichi)
    assert (refusal.code if refusal else None) == code


# --- chips through the core ------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "lines", "chips"),
    [
        # sanma-free riichi ron with 2 ura: the discarder pays 2.
        (
            "sanma-free",
            [
                '{"type":"riichi","seat":2}',
                '{"type":"ron","from":0,"winners":[{"seat":2,"han":4,"chips":2}]}',
            ],
            [-2, 0, 2],
        ),
        # Double ron: each winner from the discarder.
        (
            "sanma-free",
            [
                '{"type":"riichi","seat":1}',
                '{"type":"riichi","seat":2}',
                '{"type":"ron","from":0,"winners":[{"seat":1,"han":2,"chips":1},'
                '{"seat":2,"han":3,"chips":3}]}',
            ],
            [-4, 1, 3],
        ),
        # jboy head bump: only the winner nearest the discarder wins, and earns chips.
        (
            "jboy",
            [
                '{"type":"ron","from":0,"winners":[{"seat":2,"han":2,"fu":30,"chips":1},'
                '{"seat":1,"han":2,"fu":30,"chips":2}]}'
            ],
            [-2, 2, 0, 0],
        ),
        # A yakuman tsumo: 10 from each; the entered chips (red, no riichi) are refused
        # elsewhere, so none here.
        ("sanma-free", ['{"type":"tsumo","seat":1,"yakuman":1}'], [-10, 20, -10]),
        # A double yakuman: still 10 (ご祝儀は重複しません).
        ("sanma-free", ['{"type":"tsumo","seat":1,"yakuman":2}'], [-10, 20, -10]),
        # Kazoe (13 han entered as han): no yakuman chips.
        ("sanma-free", ['{"type":"tsumo","seat":1,"han":13}'], [0, 0, 0]),
        # A pao tsumo: the pao player pays the chips of both others.
        ("sanma-free", ['{"type":"tsumo","seat":1,"yakuman":1,"pao":2}'], [0, 20, -20]),
        # A pao yakuman ron with the winner's riichi chips: the pao player pays them all.
        (
            "sanma-free",
            [
                '{"type":"riichi","seat":0}',
                '{"type":"ron","from":2,"winners":[{"seat":0,"yakuman":1,"pao":1,"chips":2}]}',
            ],
            [12, -12, 0],
        ),
        # jboy: 5 chips for a yakuman, plus the gold five entered.
        (
            "jboy",
            ['{"type":"ron","from":3,"winners":[{"seat":1,"yakuman":1,"chips":1}]}'],
            [0, 6, 0, -6],
        ),
        # Draws, chombo: no chips.
        ("sanma-free", ['{"type":"draw","tenpai":[1]}'], [0, 0, 0]),
        ("jboy", ['{"type":"chombo","seat":1}'], [0, 0, 0, 0]),
    ],
)
def test_a_hand_pays_its_chips(preset: str, lines: list[str], chips: list[int]) -> None:
    out = play(preset, *lines)
    assert out["rejected"] == []
    assert out["hands"][-1]["chips"] == chips


@pytest.mark.parametrize(
    ("preset", "line", "code"),
    [
        ("kenko", '{"type":"tsumo","seat":1,"han":3,"fu":30,"chips":1}', "chips_not_allowed"),
        (
            "kenko",
            '{"type":"ron","from":0,"winners":[{"seat":1,"han":3,"fu":30,"chips":0}]}',
            "chips_not_allowed",
        ),
        ("jboy", '{"type":"tsumo","seat":1,"han":3,"fu":30,"chips":4}', "bad_chips"),
        ("jboy", '{"type":"tsumo","seat":1,"han":3,"fu":30,"chips":-1}', "bad_chips"),
        ("sanma-free", '{"type":"tsumo","seat":1,"han":2,"chips":1}', "chips_need_riichi"),
        (
            "sanma-free",
            '{"type":"ron","from":0,"winners":[{"seat":1,"yakuman":1,"chips":1}]}',
            "chips_need_riichi",
        ),
    ],
)
def test_a_refused_chip_count_changes_nothing(preset: str, line: str, code: str) -> None:
    out = play(preset, line)
    assert [r["code"] for r in out["rejected"]] == [code]
    assert out["hands"] == []
    assert out["scores"] == list(initial_state(load_rules(preset)).scores)


def test_undo_takes_the_chips_back_with_the_hand() -> None:
    rules = load_rules("sanma-free")
    state = initial_state(rules)
    for event in (ev.Riichi(1), ev.Tsumo(ev.Hand(seat=1, han=3, chips=5))):
        state, _ = step(state, event)
    assert state.chips == (-5, 10, -5)
    state, effects = step(state, ev.Undo())
    assert state.chips == (0, 0, 0)
    assert any(type(e).__name__ == "HandUndone" for e in effects)
    state, _ = step(state, ev.Tsumo(ev.Hand(seat=1, han=3, chips=1)))
    assert state.chips == (-1, 2, -1)


def test_undo_of_the_last_hand_reopens_the_money() -> None:
    """The result that ended the game is undone: the final goes, and the corrected result
    settles the money again."""
    rules = load_rules("sanma-free")
    state = replace(initial_state(rules), scores=(30000, 2000, 58000))
    state, _ = step(state, ev.Ron((1,), (ev.Hand(seat=2, yakuman=1),)))
    assert state.final is not None and state.final.money is not None
    assert state.final.money.chips == (0, -10, 10)
    state, _ = step(state, ev.Undo())
    assert state.final is None and state.chips == (0, 0, 0)
    state, _ = step(state, ev.Ron((1,), (ev.Hand(seat=2, han=8),)))
    assert state.final is not None and state.final.money is not None
    assert state.final.money.chips == (0, 0, 0)


def test_a_riichi_under_1000_pays_the_bust_prize_at_zero_or_more() -> None:
    """sanma-free: 900点以下でリーチをした場合は、アガり放棄となり、その局の終了後にトビ扱い:
    seat 1 at 800 ends the game by the rules, not below zero, and pays the top 300P."""
    rules = load_rules("sanma-free")
    state = replace(initial_state(rules), scores=(30000, 800, 59200))
    state, effects = step(state, ev.Riichi(1))
    state, effects = step(state, ev.Draw(tenpai=()))
    assert state.finished and state.final is not None
    assert state.final.reason == "bust" and min(state.final.scores) >= 0
    money = state.final.money
    assert money is not None
    assert money.prizes == (0, -300, 300)


def test_the_final_carries_the_money_and_the_record_keeps_its_pinned_form() -> None:
    """Final.as_dict is the replay's final everywhere (MQTT game payload, demo): with
    ``money``. HandRecord.as_dict keeps the form the consoles' last hand pins; the replay
    adds ``chips`` to its hands."""
    rules = load_rules("sanma-free")
    state = replace(initial_state(rules), scores=(30000, 2000, 58000))
    state, effects = step(state, ev.Ron((1,), (ev.Hand(seat=2, yakuman=1),)))
    assert state.final is not None and state.final.money is not None
    assert state.final.as_dict()["money"] == state.final.money.as_dict()
    assert state.final.as_dict()["money"]["chips"] == [0, -10, 10]
    settled = [e for e in effects if isinstance(e, HandSettled)]
    assert "chips" not in settled[0].record.as_dict()
    assert settled[0].record.chips == (0, -10, 10)
    tenhou = load_rules("tenhou")
    state = replace(initial_state(tenhou), scores=(25000, 2000, 25000, 48000))
    state, _ = step(state, ev.Ron((1,), (ev.Hand(seat=2, yakuman=1),)))
    assert state.final is not None and state.final.as_dict()["money"] is None


def test_a_winner_with_chips_round_trips_through_json() -> None:
    event = ev.Ron((0,), (ev.Hand(seat=1, han=3, chips=2), ev.Hand(seat=2, yakuman=1, pao=0)))
    assert ev.parse_event(ev.event_to_json(event)) == event
    assert ev.event_to_json(ev.Tsumo(ev.Hand(seat=1, han=2, fu=30)))["type"] == "tsumo"
    assert "chips" not in ev.event_to_json(ev.Tsumo(ev.Hand(seat=1, han=2, fu=30)))


def test_final_money_is_null_without_money() -> None:
    out = play("tenhou", '{"type":"tsumo","seat":0,"yakuman":6}')
    assert out["finished"] and out["final"]["money"] is None


# --- the settlement in P --------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "p"),
    [
        (Fraction(25, 2), 13),
        (Fraction(-25, 2), -13),
        (Fraction(49, 4), 12),
        (Fraction(-49, 4), -12),
        (Fraction(0), 0),
        (Fraction(1, 2), 1),
        (Fraction(-1, 2), -1),
    ],
)
def test_p_is_rounded_half_away_from_zero(amount: Fraction, p: int) -> None:
    assert whole_p(amount) == p


def money_rules(tie: str = "seat_order", **money: Any) -> HouseRules:
    """Three players, the given ``[money]`` values."""
    base = load_rules("sanma-free")
    return replace(
        base,
        game=replace(base.game, tie=tie),  # type: ignore[arg-type]
        money=replace(MoneyOptions(), **money),
    )


def points(*thousands: float) -> list[Fraction]:
    return [Fraction(str(t)) * 1000 for t in thousands]


@pytest.mark.parametrize(
    ("rules", "args", "expected"),
    [
        # sanma-free's own money: result x 50P, uma 1000/0/-1000, 300P each, no chips.
        (
            load_rules("sanma-free"),
            {"result": points(41.0, -9.0, -32.0), "order": [0, 1, 2], "chips": [0, 0, 0]},
            {
                "result": (2050, -450, -1600),
                "uma": (1000, 0, -1000),
                "fee": (-300,) * 3,
                "total": (2750, -750, -2900),
            },
        ),
        # A result in 0.01 (a tied share): 16.67 x 50 = 833.5 -> 834; -33.33 -> -1666.5 -> -1667.
        (
            money_rules(rate=50),
            {"result": points(16.67, 16.67, -33.33), "order": [0, 1, 2], "chips": [0, 0, 0]},
            {"result": (834, 834, -1667), "total": (834, 834, -1667)},
        ),
        # 点ピン (100P per 1000) with chips at 200P: 3 chips = 600P.
        (
            money_rules(rate=100, chip_value=200, red_chips=1),
            {"result": points(30.0, -10.0, -20.0), "order": [0, 1, 2], "chips": [3, -1, -2]},
            {
                "result": (3000, -1000, -2000),
                "chip_p": (600, -200, -400),
                "total": (3600, -1200, -2400),
            },
        ),
        # The top alone pays the fee (トップ払い).
        (
            money_rules(game_fee=500, fee_payer="top"),
            {"result": points(20.0, -5.0, -15.0), "order": [1, 0, 2], "chips": [0, 0, 0]},
            {"fee": (0, -500, 0), "total": (0, -500, 0)},
        ),
        # Bust prize: seats 1 and 2 below zero each pay 300P to the top, seat 0.
        (
            money_rules(bust_prize=300),
            {"result": points(0, 0, 0), "order": [0, 2, 1], "chips": [0, 0, 0], "busted": [1, 2]},
            {"prizes": (600, -300, -300), "total": (600, -300, -300)},
        ),
        # share_uma: two tied tops share 1st and 2nd's uma (1000 + 0) / 2 = 500 each, the
        # bust prize (300 / 2 = 150 each) and the top's fee (500 / 2 = 250 each).
        (
            money_rules(
                tie="share_uma",
                uma=(1000, 0, -1000),
                bust_prize=300,
                game_fee=500,
                fee_payer="top",
            ),
            {
                "result": points(0, 0, 0),
                "order": [0, 1, 2],
                "chips": [0, 0, 0],
                "groups": [[0, 1], [2]],
                "busted": [2],
            },
            {
                "uma": (500, 500, -1000),
                "prizes": (150, 150, -300),
                "fee": (-250, -250, 0),
                "total": (400, 400, -1300),
            },
        ),
        # A three-way tie shares 1000 + 0 - 1000 = 0 each; an odd share rounds: a fee of
        # 301 between two tops is 150.5 -> 151 each.
        (
            money_rules(tie="share_uma", uma=(1000, 0, -1000)),
            {
                "result": points(0, 0, 0),
                "order": [0, 1, 2],
                "chips": [0, 0, 0],
                "groups": [[0, 1, 2]],
            },
            {"uma": (0, 0, 0)},
        ),
        (
            money_rules(tie="share_uma", game_fee=301, fee_payer="top"),
            {
                "result": points(0, 0, 0),
                "order": [2, 0, 1],
                "chips": [0, 0, 0],
                "groups": [[0, 1], [2]],
            },
            {"fee": (-151, 0, -151)},
        ),
    ],
)
def test_settlement_worked_examples(
    rules: HouseRules, args: dict[str, Any], expected: dict[str, tuple[int, ...]]
) -> None:
    kwargs = {"groups": [[p] for p in range(len(args["order"]))], "busted": [], **args}
    money = settle(rules, **kwargs)
    assert money is not None
    for part, value in expected.items():
        assert getattr(money, part) == value, part
    parts = zip(money.result, money.uma, money.chip_p, money.fee, money.prizes, strict=True)
    assert money.total == tuple(sum(p) for p in parts)


def test_no_money_no_settlement() -> None:
    assert (
        settle(
            load_rules("kenko"),
            result=points(1, -1, 0, 0),
            order=[0, 2, 3, 1],
            groups=[[0], [1], [2], [3]],
            chips=[0, 0, 0, 0],
            busted=[],
        )
        is None
    )


def test_without_result_points_the_rate_is_paid_on_the_score() -> None:
    """A preset with money but no uma or oka (ariari + a rate): the P of the result is
    paid on the final score less the start."""
    rules = load_rules("ariari")
    rules = replace(rules, money=replace(MoneyOptions(), rate=50))
    state = replace(initial_state(rules), scores=(25000, 25000, 2000, 48000))
    state, _ = step(state, ev.Ron((2,), (ev.Hand(seat=3, han=3, fu=30),)))
    assert state.final is not None and state.final.money is not None
    assert state.final.scores == (25000, 25000, -1900, 51900)
    assert state.final.money.result == (0, 0, -1345, 1345)  # -26.9 x 50, +26.9 x 50


def test_refusal_is_a_value() -> None:
    assert isinstance(chips_refusal(load_rules("kenko"), 0, 1, riichi=False), Refusal)


@pytest.mark.parametrize("preset", MONEY_PRESETS)
def test_chips_and_p_balance_in_many_games(preset: str) -> None:
    """Random games with random (valid) chip counts: every hand's chips sum to zero, the
    state's and the final's chips are the sum of the hands', and the P of the table sum
    to minus the game fees (the uma, the chips, the prize and, at a rate, the results
    all balance: sanma-free's results are whole 100s, 5P each at 50P per 1000)."""
    rules = load_rules(preset)
    rng = random.Random(f"money-{preset}")
    finished = 0
    with_chips = 0
    for _ in range(100):
        state = initial_state(rules)
        hands: list[tuple[int, ...]] = []
        for _ in range(600):
            obj = random_event(rng, rules)
            for hand in obj.get("winners", [obj] if obj["type"] == "tsumo" else []):
                riichi = hand["seat"] in state.riichi
                hand["chips"] = rng.randint(0, max_hand_chips(rules, riichi=riichi))
            state, effects = step(state, ev.parse_event(json.loads(json.dumps(obj))))
            assert not any(isinstance(e, Refusal) and "chips" in e.code for e in effects)
            hands += [e.record.chips for e in effects if isinstance(e, HandSettled)]
            if any(isinstance(e, GameOver) for e in effects):
                break
        assert all(sum(h) == 0 for h in hands)
        with_chips += sum(1 for h in hands if any(h))
        net = tuple(sum(h[s] for h in hands) for s in range(rules.players))
        assert state.chips == net
        if state.final is None:
            continue
        finished += 1
        money = state.final.money
        assert money is not None and money.chips == net
        assert sum(money.total) == -rules.money.game_fee * rules.players
        assert sum(money.prizes) == 0 and sum(money.uma) == 0
    assert finished >= 80 and with_chips >= 20
