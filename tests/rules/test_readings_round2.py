"""Worked examples of the readings settled after the first implementation (RULES.md,
"Readings settled after the first implementation"), each with the rule text it follows."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from tablectl.rules.core import step
from tablectl.rules.ending import finish, tied_groups, to_ten_points
from tablectl.rules.events import parse_event
from tablectl.rules.loader import RulesConfigError, load_rules, preset_names
from tablectl.rules.state import GameOver, GameState, initial_state
from tests.helpers import play, random_event


def state_with(preset: str, scores: tuple[int, ...], **changes: Any) -> GameState:
    rules = load_rules(preset)
    assert sum(scores) + changes.get("kyoutaku", 0) == rules.game.start_points * rules.players
    return replace(initial_state(rules), scores=scores, **changes)


# --- 1. tied final places share uma -----------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "scores", "kyoutaku", "final_scores", "result"),
    [
        # M-League: 同着の場合は順位点を分ける. 1st and 2nd tied: (+50 + +10) / 2 each.
        ("mleague", (35000, 35000, 20000, 10000), 0, None, [35.0, 35.0, -20.0, -50.0]),
        # Three tied for 1st share (+50 +10 -10) / 3 = 16.666..., equally: issue 13 round 2,
        # "their final.result values are equal where only uma separates them". 3.3 + 16.67
        # each, to ten points; equal shares win over the last 0.01 of the sum (docs/rules.md).
        ("mleague", (33300, 33300, 33300, 100), 0, None, [19.97, 19.97, 19.97, -59.9]),
        # WRC (uma +15/+5/-5/-15, "modified for ties"): 2nd and 3rd share (5 - 5) / 2.
        ("wrc", (40000, 30000, 30000, 20000), 0, None, [25.0, 0.0, 0.0, -25.0]),
        ("wrc", (30000,) * 4, 0, None, [0.0] * 4),
        # EMA RCR: three tied for 1st share (15 + 5 - 5) / 3 = 5 each.
        ("ema", (35000, 35000, 35000, 15000), 0, None, [10.0, 10.0, 10.0, -30.0]),
        # EMA: tied players also share the riichi bets left on the table at the end.
        (
            "ema",
            (44500, 44500, 16000, 14000),
            1000,
            [45000, 45000, 16000, 14000],
            [25.0, 25.0, -19.0, -31.0],
        ),
        # Tenhou: 同点は起家に近い方が上位 - seat order, uma not shared.
        ("tenhou", (25000,) * 4, 0, None, [35.0, 5.0, -15.0, -25.0]),
    ],
)
def test_tied_places(
    preset: str,
    scores: tuple[int, ...],
    kyoutaku: int,
    final_scores: list[int] | None,
    result: list[float],
) -> None:
    final = finish(state_with(preset, scores, kyoutaku=kyoutaku), "last_round")
    # The ranking among tied players stays by seat order.
    assert list(final.ranking) == sorted(range(4), key=lambda s: (-final.scores[s], s))
    assert list(final.scores) == (final_scores or list(scores))
    assert list(final.result) == result
    assert abs(sum(final.result)) < 0.01 + 1e-9


def test_leftover_sticks_never_break_a_tie() -> None:
    # Issue 13 round 2, worked example. EMA RCR 2016: riichi bets left at the end go to the
    # winner, shared by players tied for first, and tied players share the uma of the
    # places they hold (RULES.md: "Tied final places share the uma of the places they
    # occupy"). 36000 x 3 / 10000 with 2000 on the table: the three are tied for 1st
    # before the sticks, and stay tied: (15 + 5 - 5) / 3 = 5 uma and 2000 / 3 each.
    final = finish(state_with("ema", (36000, 36000, 36000, 10000), kyoutaku=2000), "last_round")
    assert final.ranking == (0, 1, 2, 3)
    # Whole points of the 2000 on each tied top's table score; the result has the exact
    # share: 6 + 5 + 0.667 = 11.67 each, and 10 - 30 - 15 = -35 for seat 3.
    assert final.scores == (36666, 36666, 36666, 10000)
    assert final.result == (11.67, 11.67, 11.67, -35.0)
    assert abs(sum(final.result)) < 0.01 + 1e-9


@pytest.mark.parametrize(
    ("preset", "scores", "kyoutaku", "result"),
    [
        # M-League (同着の場合は順位点を分ける), a two-way tie for 1st with 1000 left on the
        # table: the sticks are shared, 500 each, the place was decided before them.
        ("mleague", (34500, 34500, 20000, 10000), 1000, [35.0, 35.0, -20.0, -50.0]),
        # Three-way: 1000 / 3 and (+50 +10 -10) / 3 on 33000 each: 3 + 0.333 + 16.667 = 20.
        ("mleague", (33000, 33000, 33000, 0), 1000, [20.0, 20.0, 20.0, -60.0]),
        # WRC 2015 5.7.4: the bets left at the end are lost; the tie is still shared.
        ("wrc", (35000, 35000, 25000, 24000), 1000, [15.0, 15.0, -10.0, -21.0]),
    ],
)
def test_tied_tops_with_sticks_left_get_equal_results(
    preset: str, scores: tuple[int, ...], kyoutaku: int, result: list[float]
) -> None:
    final = finish(state_with(preset, scores, kyoutaku=kyoutaku), "last_round")
    assert list(final.result) == result
    lost = kyoutaku / 1000 if preset == "wrc" else 0
    assert abs(sum(final.result) + lost) < 0.01 + 1e-9


def test_seat_order_tie_gives_the_sticks_to_the_first_seat_only() -> None:
    # Tenhou: 同点は起家に近い方が上位; 終了時の供託はトップ取り: the top is seat 0 alone.
    final = finish(state_with("tenhou", (30000, 30000, 20000, 19000), kyoutaku=1000), "x")
    assert final.ranking == (0, 1, 2, 3)
    assert final.scores == (31000, 30000, 20000, 19000)
    assert list(final.result) == [41.0, 10.0, -20.0, -31.0]


def test_tied_groups_and_rounding_to_ten_points() -> None:
    scores = (30000, 20000, 30000, 20000)
    assert tied_groups(scores, (0, 2, 1, 3)) == [[0, 1], [2, 3]]
    assert to_ten_points(Fraction(50000, 3)) == 16670
    assert to_ten_points(Fraction(-50000, 3)) == -16670
    assert to_ten_points(Fraction(-20000, 3)) == -6670
    assert to_ten_points(Fraction(1000, 4)) == 250
    assert to_ten_points(Fraction(25)) == 30  # half away from zero


# --- 2. chombo penalties after ranking and uma ------------------------------------------


@pytest.mark.parametrize("preset", ["mleague", "wrc", "ema"])
def test_chombo_penalty_never_changes_a_place(preset: str) -> None:
    # M-League: チョンボは20000点相当の罰符 (-20.0 after the game); WRC: penalties are
    # applied to the overall score, after uma; EMA RCR 2016: chombo is -20 from the final
    # score, after the rank bonus. Seat 0 is top on the table and stays 1st.
    rules = load_rules(preset)
    start = rules.game.start_points
    scores = (start + 15000, start + 5000, start - 5000, start - 15000)
    state = state_with(preset, scores, final_penalties=(20000, 0, 0, 0))
    final = finish(state, "last_round")
    clean = finish(state_with(preset, scores), "last_round")
    assert final.ranking == clean.ranking == (0, 1, 2, 3)
    assert final.scores == scores
    assert final.penalties == (20000, 0, 0, 0)
    assert final.result[0] == round(clean.result[0] - 20, 1)
    assert final.result[1:] == clean.result[1:]
    assert final.as_dict()["penalties"] == [20000, 0, 0, 0]


def test_penalty_without_result_points_comes_off_the_score_after_ranking() -> None:
    rules = load_rules("kenko")
    custom = replace(rules, penalties=replace(rules.penalties, chombo="final"))
    state = replace(
        initial_state(custom),
        scores=(30000, 29000, 21000, 20000),
        final_penalties=(2000, 0, 0, 0),
    )
    final = finish(state, "time_up")
    assert final.ranking == (0, 1, 2, 3)  # 28000 < 29000 on paper, still 1st
    assert final.scores == (28000, 29000, 21000, 20000)


# --- 3. kyoutaku on a multiple ron ------------------------------------------------------

EMA_DOUBLE_RON = [
    # E1: seat 3 declares riichi and is tenpai at the draw; the stick stays on the table.
    {"type": "riichi", "seat": 3},
    {"type": "draw", "tenpai": [3]},
    # E2 (dealer seat 1), 1 honba: seats 1 and 2 declare riichi, then both ron seat 0.
    {"type": "riichi", "seat": 1},
    {"type": "riichi", "seat": 2},
    {
        "type": "ron",
        "from": 0,
        "winners": [{"seat": 2, "han": 3, "fu": 30}, {"seat": 1, "han": 1, "fu": 30}],
    },
]


def test_ema_multiple_ron_own_stick_back_rest_to_nearest() -> None:
    # EMA RCR 2016 (multiple ron): each winner gets the counters from the discarder; a
    # winner whose riichi stick is on the table in this hand takes it back; the other
    # sticks go to the winner nearest the discarder in turn order (seat 1 here).
    out = play("ema", *EMA_DOUBLE_RON)
    hand = out["hands"][-1]
    assert hand["winners"] == [1, 2]
    # Seat 1 (dealer): 1500 + 300 + seat 3's stick and its own = +3800, less its stick.
    # Seat 2: 3900 + 300 + its own stick back, less its stick.
    assert hand["deltas"] == [-6000, 2800, 4200, 0]
    assert out["kyoutaku"] == 0


def test_nearest_takes_every_stick() -> None:
    rules = load_rules("ema")
    nearest = replace(rules, flow=replace(rules.flow, multiple_ron_deposits="nearest"))
    state = initial_state(nearest)
    for line in EMA_DOUBLE_RON:
        state, _ = step(state, parse_event(line))
    # After E1 (29000, 29000, 29000, 32000) and 1000 on the table; seat 1 takes all 3000.
    assert state.scores == (23000, 29000 + 1800 + 3000 - 1000, 29000 + 4200 - 1000, 32000)


# --- 4. kenko chombo returns every deposit of the hand ----------------------------------


def test_kenko_chombo_returns_riichi_and_false_call_deposits() -> None:
    # kenko (seed 002): その際、積み場は増えず、その局に出た供託は出した人に返す.
    out = play(
        "kenko",
        {"type": "riichi", "seat": 2},
        {"type": "draw", "tenpai": [2]},  # E1: this stick stays (an earlier hand's)
        {"type": "false_call", "seat": 3},  # E2: a 1000 false-call deposit
        {"type": "riichi", "seat": 1},
        {"type": "discard", "seat": 1},
        {"type": "chombo", "seat": 0},
    )
    chombo = out["hands"][-1]
    assert chombo["result"] == "chombo"
    # 3000 to each; the false call and the riichi stick went out and came back.
    assert chombo["deltas"] == [-9000, 3000, 3000, 3000]
    assert out["kyoutaku"] == 1000  # the E1 stick stays on the table
    assert out["scores"] == [24000 - 9000, 24000 + 3000, 27000 + 3000, 24000 + 3000]


def test_jboy_chombo_returns_only_riichi_sticks() -> None:
    # J-BOY (seed 001): リーチ棒はリーチ者に戻り - the false-call 罰符 stays on the table.
    out = play(
        "jboy",
        {"type": "false_call", "seat": 3},
        {"type": "riichi", "seat": 1},
        {"type": "discard", "seat": 1},
        {"type": "chombo", "seat": 0},
    )
    assert out["hands"][-1]["deltas"] == [-9000, 3000, 3000, 2000]
    assert out["kyoutaku"] == 1000


# --- 5. ariari nagashi mangan flows like a win ------------------------------------------


def where(out: dict[str, Any]) -> tuple[str, int, int]:
    return out["round"]["wind"], out["round"]["number"], out["honba"]


NOTEN = {"type": "draw", "tenpai": []}


@pytest.mark.parametrize(
    ("preset", "nagashi", "tenpai", "deltas", "after"),
    [
        # ariari (seed 000): 流局時にマンガンのアガリ扱いとなり積み棒もアガリ点に加算（親の場合は
        # 連荘）. E2 1 honba, seat 2 (not the dealer): 2000/4000 + 100 each; the deal
        # passes and the honba are cleared, as after any non-dealer win.
        ("ariari", [2], [], [-2100, -4100, 8300, -2100], ("E", 3, 0)),
        # ... even when the dealer was tenpai.
        ("ariari", [2], [1], [-2100, -4100, 8300, -2100], ("E", 3, 0)),
        # The dealer's nagashi: 4000 all + 100 each, the dealer repeats with honba +1.
        ("ariari", [1], [], [-4100, 12300, -4100, -4100], ("E", 2, 2)),
        # Tenhou: 連荘は親のテンパイに依る - a draw like any other, honba +1; and
        # tenhou.net/man pays nagashi mangan as the mangan alone: no honba (2000/4000).
        ("tenhou", [2], [], [-2000, -4000, 8000, -2000], ("E", 3, 2)),
    ],
)
def test_nagashi_flow(
    preset: str,
    nagashi: list[int],
    tenpai: list[int],
    deltas: list[int],
    after: tuple[str, int, int],
) -> None:
    first = NOTEN if preset == "ariari" else {"type": "draw", "tenpai": [1]}
    out = play(preset, first, {"type": "draw", "tenpai": tenpai, "nagashi": nagashi})
    assert out["hands"][0]["round"]["number"] == 1
    assert (out["hands"][1]["round"]["number"], out["hands"][1]["honba"]) == (2, 1)
    assert out["hands"][1]["deltas"] == deltas
    assert where(out) == after


@pytest.mark.parametrize(
    ("preset", "deltas"),
    [
        # ariari (seed 000): 積み棒もアガリ点に加算 - E1 2 honba, seat 2: 4000 from the dealer
        # (seat 0), 2000 from the others, + 200 each.
        ("ariari", [-4200, -2200, 8600, -2200]),
        # Tenhou (tenhou.net/man, 流し満貫): the mangan alone; the riichi stick stays.
        ("tenhou", [-4000, -2000, 8000, -2000]),
        # jboy (seed 001: 流し満貫は流局後成立) - a draw, and no honba on it (reading);
        # M-League (reading, RULES.md makes only ariari's nagashi a win): the same.
        ("jboy", [-4000, -2000, 8000, -2000]),
        ("mleague", [-4000, -2000, 8000, -2000]),
    ],
)
def test_nagashi_honba_only_where_the_text_adds_it(preset: str, deltas: list[int]) -> None:
    rules = load_rules(preset)
    state = replace(initial_state(rules), scores=(24000, 25000, 25000, 25000), kyoutaku=1000)
    state = replace(state, honba=2)
    state, _ = step(state, parse_event({"type": "draw", "tenpai": [], "nagashi": [2]}))
    assert state.hands_played == 1
    before = (24000, 25000, 25000, 25000)
    assert [b - a for a, b in zip(before, state.scores, strict=True)] == deltas
    # The riichi stick on the table is no part of a nagashi payment in any preset.
    assert state.kyoutaku == 1000


def test_sanma_free_nagashi_baiman_without_honba() -> None:
    # sanma-free (seed 003): 流し満貫は3人麻雀では倍満; honba not stated (reading: none).
    # E1 1 honba, seat 1 (non-dealer): baiman 4000/8000 tsumo-son, no +1000 each.
    rules = load_rules("sanma-free")
    state = replace(initial_state(rules), honba=1)
    state, _ = step(state, parse_event({"type": "draw", "tenpai": [], "nagashi": [1]}))
    assert state.scores == (30000 - 8000, 30000 + 12000, 30000 - 4000)


# --- 6. final rounding: the top makes the sum zero --------------------------------------


@pytest.mark.parametrize(
    ("preset", "scores", "result"),
    [
        # J-BOY (seed 001): 百点単位は四捨五入. Each seat but the top on its own:
        # 31500 -> 32000 -> +2; 14600 -> 15000 -> -15; 13900 -> 14000 -> -16; the top
        # gets what makes zero (+29, where rounding it too would give +30: a sum of +1).
        ("jboy", (40000, 31500, 14600, 13900), [29.0, 2.0, -15.0, -16.0]),
        ("jboy", (25500, 25500, 24500, 24500), [14.0, -4.0, -5.0, -5.0]),
        # jboy-sanma (35000/40000, 箱下計算無し): -7000 settles as 0 -> -40.
        ("jboy-sanma", (60000, 52000, -7000), [28.0, 12.0, -40.0]),
        # Tenhou rounds the same way (終了時の得点は1000点未満を四捨五入).
        ("tenhou", (25500, 25500, 24500, 24500), [34.0, 6.0, -15.0, -25.0]),
    ],
)
def test_rounded_results_sum_to_zero(
    preset: str, scores: tuple[int, ...], result: list[float]
) -> None:
    final = finish(state_with(preset, scores), "last_round")
    assert list(final.result) == result
    assert abs(sum(final.result)) < 1e-9


@pytest.mark.parametrize("preset", preset_names())
def test_results_before_penalties_sum_to_zero_in_many_games(preset: str) -> None:
    rules = load_rules(preset)
    rng = random.Random(f"zero-sum-{preset}")
    finished = 0
    for _ in range(120):
        state = initial_state(rules)
        for _ in range(600):
            event = parse_event(json.loads(json.dumps(random_event(rng, rules))))
            state, effects = step(state, event)
            if any(isinstance(e, GameOver) for e in effects):
                break
        if state.final is None:
            continue
        finished += 1
        final = state.final
        lost = state.kyoutaku if rules.game.leftover_deposits == "lost" else 0
        if final.result:
            penalties = final.penalties or (0,) * rules.players
            before = [r + p / 1000 for r, p in zip(final.result, penalties, strict=True)]
            # Zero, less the riichi sticks WRC declares lost at the end; a share among
            # three tied tops is rounded to 0.01, so the sum may miss zero by 0.01 there.
            tops = sum(1 for s in range(rules.players) if state.scores[s] == max(state.scores))
            slack = 0.01 if rules.game.tie == "share_uma" and tops == 3 else 0.0
            assert abs(sum(before) + lost / 1000) < slack + 1e-6, (final, lost)
        assert list(final.ranking) == sorted(
            range(rules.players), key=lambda s: (-_table_score(state, s), s)
        )
    assert finished >= 100


def _table_score(state: GameState, seat: int) -> int:
    """The final table score before penalties taken from it (presets without results)."""
    assert state.final is not None
    penalty = state.final.penalties[seat] if state.final.penalties and not state.final.result else 0
    return state.final.scores[seat] + penalty


# --- 7. Tenhou's West round: the dealer repeat first ------------------------------------


def west(scores: tuple[int, ...], dealer: int = 0) -> GameState:
    return state_with("tenhou", scores, round_index=2, dealer=dealer, extension=True)


def test_tenhou_west_dealer_repeat_goes_on_past_30000() -> None:
    # Tenhou (kobalab / tenhou.net/man, サドンデス): 親の連荘+子の3万点超えが同時に発生した
    # 場合は連荘を優先する.
    state, effects = step(
        west((27000, 29000, 24000, 20000)), parse_event({"type": "draw", "tenpai": [0, 1]})
    )
    assert not state.finished
    assert (state.round_index, state.dealer, state.honba) == (2, 0, 1)
    assert state.scores[1] == 30500


def test_tenhou_west_dealer_top_with_30000_stops() -> None:
    # 親がテンパイかつ30000点以上のトップ目ならテンパイヤメが成立して終局 - in any West hand.
    state, _ = step(
        west((29000, 28500, 22000, 20500)), parse_event({"type": "draw", "tenpai": [0, 1]})
    )
    assert state.final is not None and state.final.reason == "all_last_top"


def test_tenhou_west_ends_when_the_deal_passes_with_30000() -> None:
    state, _ = step(
        west((27000, 29000, 24000, 20000)), parse_event({"type": "draw", "tenpai": [1]})
    )
    assert state.final is not None and state.final.reason == "extension_end"


# --- the loader names replaced options ----------------------------------------------------


def test_replaced_option_is_named(tmp_path: Any) -> None:
    path = tmp_path / "old.toml"
    path.write_text('extends = "ariari"\n[flow]\nnagashi_counts_as_win = true\n', "utf-8")
    with pytest.raises(RulesConfigError, match="nagashi_flow"):
        load_rules(str(path))


def test_tie_option_is_named_tie(tmp_path: Any) -> None:
    # RULES.md, "Readings settled after the first implementation": Needs an option:
    # `tie = "seat_order" | "share_uma"`.
    assert load_rules("mleague").game.tie == "share_uma"
    assert load_rules("tenhou").game.tie == "seat_order"
    path = tmp_path / "old.toml"
    path.write_text('extends = "wrc"\n[game]\ntie_break = "seat_order"\n', "utf-8")
    with pytest.raises(RulesConfigError, match=r"tie_break was replaced by tie"):
        load_rules(str(path))
