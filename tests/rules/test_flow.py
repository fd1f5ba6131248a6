"""Game flow: dealer repeats, honba, deposits, abortive draws and every way a game ends."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tablectl.rules.ending import finish
from tablectl.rules.loader import load_rules
from tablectl.rules.state import initial_state
from tests.helpers import play

NOTEN = {"type": "draw", "tenpai": []}


def ron(frm: Any, *winners: dict[str, Any]) -> dict[str, Any]:
    return {"type": "ron", "from": frm, "winners": list(winners)}


def pass_hand(dealer: int, players: int = 4, **hand: Any) -> dict[str, Any]:
    """A small non-dealer win (1 han 30 fu by the next seat) that moves the dealer on."""
    return ron((dealer + 2) % players, {"seat": (dealer + 1) % players, "han": 1, "fu": 30, **hand})


def to_all_last(players: int = 4) -> list[dict[str, Any]]:
    """Events that bring a game from East 1 to the last hand of South."""
    return [pass_hand(i % players, players) for i in range(2 * players - 1)]


def to_all_last_behind() -> list[dict[str, Any]]:
    """Like :func:`to_all_last`, with seat 1 well ahead so the last dealer is not top."""
    return [ron(3, {"seat": 1, "han": 3, "fu": 30}), *(pass_hand(i % 4) for i in range(1, 7))]


def where(out: dict[str, Any]) -> tuple[str, int, int, int]:
    return out["round"]["wind"], out["round"]["number"], out["dealer"], out["honba"]


@pytest.mark.parametrize(
    ("preset", "events", "expected"),
    [
        ("ariari", [{"type": "tsumo", "seat": 0, "han": 1, "fu": 30}], ("E", 1, 0, 1)),
        ("ariari", [{"type": "draw", "tenpai": [0]}], ("E", 2, 1, 1)),
        ("jboy", [{"type": "draw", "tenpai": [0]}], ("E", 2, 1, 1)),
        ("kenko", [{"type": "draw", "tenpai": [0]}], ("E", 1, 0, 1)),
        ("sanma-free", [{"type": "draw", "tenpai": [0]}], ("E", 1, 0, 1)),
        ("kenko", [NOTEN], ("E", 2, 1, 1)),
        ("kantan", [{"type": "tsumo", "seat": 0, "han": 1}], ("E", 2, 1, 0)),
        ("kantan", [{"type": "draw", "tenpai": [0]}], ("E", 2, 1, 0)),
        ("ariari", [NOTEN, NOTEN, pass_hand(2)], ("E", 4, 3, 0)),
        ("ariari", [{"type": "abort", "reason": "four_winds"}], ("E", 2, 1, 1)),
        ("tenhou", [{"type": "abort", "reason": "four_winds"}], ("E", 1, 0, 1)),
        ("sanma-free", [{"type": "abort", "reason": "four_kans"}], ("E", 2, 1, 1)),
        ("ariari", [pass_hand(0), pass_hand(1), pass_hand(2), pass_hand(3)], ("S", 1, 0, 0)),
        ("sanma-free", [pass_hand(0, 3), pass_hand(1, 3), pass_hand(2, 3)], ("S", 1, 0, 0)),
        # A chombo replays the hand: same dealer, same honba.
        ("jboy", [NOTEN, {"type": "chombo", "seat": 2}], ("E", 2, 1, 1)),
        # ariari: a dealer's chombo counts as a draw the dealer loses ...
        ("ariari", [{"type": "chombo", "seat": 0}], ("E", 2, 1, 1)),
        # ... except the all-last dealer's, which is replayed.
        ("ariari", [*to_all_last(), {"type": "chombo", "seat": 3}], ("S", 4, 3, 0)),
        # Double ron with the dealer among the winners: the dealer repeats.
        (
            "ariari",
            [ron(1, {"seat": 2, "han": 1, "fu": 30}, {"seat": 0, "han": 1, "fu": 30})],
            ("E", 1, 0, 1),
        ),
        # Triple ron is an abortive draw in ariari: dealer passes, honba +1.
        ("ariari", [ron(0, *({"seat": s, "han": 1, "fu": 30} for s in (1, 2, 3)))], ("E", 2, 1, 1)),
        # ariari: a dealer's nagashi mangan repeats the dealer.
        ("ariari", [{"type": "draw", "tenpai": [], "nagashi": [0]}], ("E", 1, 0, 1)),
    ],
)
def test_next_hand(preset: str, events: list[dict[str, Any]], expected: tuple[Any, ...]) -> None:
    out = play(preset, *events)
    assert out["rejected"] == []
    assert not out["finished"]
    assert where(out) == expected


def test_triple_ron_is_recorded_as_abort() -> None:
    out = play(
        "ariari",
        {"type": "riichi", "seat": 0},
        ron(0, *({"seat": s, "han": 1, "fu": 30} for s in (1, 2, 3))),
    )
    assert out["hands"][0]["result"] == "abort"
    assert out["hands"][0]["reason"] == "triple_ron"
    # The riichi declaration tile dealt in: no deposit.
    assert out["kyoutaku"] == 0 and out["scores"] == [25000] * 4


def test_abort_leaves_riichi_sticks_on_the_table() -> None:
    out = play(
        "ariari",
        *({"type": "riichi", "seat": s} for s in range(4)),
        {"type": "abort", "reason": "four_riichi"},
    )
    assert out["rejected"] == []
    assert out["kyoutaku"] == 4000
    assert out["hands"][0]["deltas"] == [-1000] * 4


@pytest.mark.parametrize(
    ("preset", "events", "finished", "reason"),
    [
        # Below 0 ends; exactly 0 continues.
        ("ariari", [ron(3, {"seat": 0, "yakuman": 1})], True, "bust"),
        (
            "ariari",
            [ron(2, {"seat": 1, "han": 11}), ron(2, {"seat": 3, "han": 1, "fu": 30})],
            False,
            None,
        ),
        ("kenko", [ron(3, {"seat": 0, "yakuman": 1})], False, None),
        ("mleague", [ron(3, {"seat": 0, "yakuman": 1})], False, None),
        ("jboy", [{"type": "tsumo", "seat": 1, "yakuman": 1}], True, "cold_game"),
        ("jboy-sanma", [ron(2, {"seat": 1, "yakuman": 1})], False, None),
        (
            "jboy-sanma",
            [
                ron(2, {"seat": 1, "yakuman": 1}),
                ron(0, {"seat": 2, "han": 1, "fu": 30}),
                ron(0, {"seat": 1, "han": 3, "fu": 30}),
            ],
            True,
            "cold_game",
        ),
        (
            "sanma-free",
            [
                {"type": "tsumo", "seat": 1, "yakuman": 1},
                ron(2, {"seat": 1, "han": 5}),
                ron(2, {"seat": 1, "han": 1}),
                ron(2, {"seat": 1, "han": 1}),
            ],
            True,
            "cold_game",
        ),
        # kantan East: a winner 60000+ ahead of 2nd ends the game.
        ("kantan", [{"type": "tsumo", "seat": 1, "yakuman": 1}], True, "cold_game"),
        # All-last: the dealer who wins into the top must stop (ariari, jboy).
        (
            "ariari",
            [*to_all_last(), {"type": "tsumo", "seat": 3, "han": 3, "fu": 30}],
            True,
            "all_last_top",
        ),
        (
            "jboy",
            [*to_all_last(), {"type": "tsumo", "seat": 3, "han": 3, "fu": 30}],
            True,
            "all_last_top",
        ),
        # ariari's all-last dealer may stop in any place after a win.
        (
            "ariari",
            [*to_all_last_behind(), ron(2, {"seat": 3, "han": 1, "fu": 30}), {"type": "stop"}],
            True,
            "dealer_stop",
        ),
        # A non-dealer win in all-last ends an East+South game (no West round).
        ("ariari", [*to_all_last(), pass_hand(3)], True, "last_round"),
        ("kenko", [*to_all_last(), pass_hand(3)], True, "last_round"),
        # kenko: the all-last dealer noten at a draw ends; tenpai continues.
        ("kenko", [*to_all_last(), NOTEN], True, "last_round"),
        ("kenko", [*to_all_last(), {"type": "draw", "tenpai": [3]}], False, None),
        # sanma-free: tenpai-yame.
        (
            "sanma-free",
            [*to_all_last(3), {"type": "draw", "tenpai": [2]}, {"type": "stop"}],
            True,
            "dealer_stop",
        ),
        # kenko clock: the hand in progress when time is up is the last.
        ("kenko", [{"type": "time_up"}], False, None),
        ("kenko", [{"type": "time_up"}, {"type": "draw", "tenpai": [0]}], True, "time_up"),
    ],
)
def test_game_end(
    preset: str, events: list[dict[str, Any]], finished: bool, reason: str | None
) -> None:
    out = play(preset, *events)
    assert out["rejected"] == []
    assert out["finished"] is finished
    assert (out["final"] or {}).get("reason") == reason


def test_jboy_has_no_second_place_stop() -> None:
    out = play(
        "jboy", *to_all_last_behind(), ron(2, {"seat": 3, "han": 1, "fu": 30}), {"type": "stop"}
    )
    assert [r["code"] for r in out["rejected"]] == ["stop_not_allowed"]
    assert not out["finished"] and where(out) == ("S", 4, 3, 1)


def test_ariari_dealer_may_go_on_after_the_offer() -> None:
    out = play("ariari", *to_all_last_behind(), ron(2, {"seat": 3, "han": 1, "fu": 30}), NOTEN)
    assert out["finished"]  # the draw after continuing passes the last dealer: game over
    assert out["final"]["reason"] == "last_round"
    assert len(out["hands"]) == 9


def test_tenhou_west_extension_until_someone_reaches_30000() -> None:
    out = play("tenhou", *[NOTEN] * 8)
    assert not out["finished"] and where(out)[:3] == ("W", 1, 0)
    out = play("tenhou", *[NOTEN] * 8, ron(0, {"seat": 1, "han": 3, "fu": 30}))
    assert out["finished"] and out["final"]["reason"] == "extension_end"
    out = play("tenhou", *[NOTEN] * 12)
    assert out["finished"] and out["final"]["reason"] == "extension_end"


def test_tenhou_all_last_top_dealer_ends_only_with_30000() -> None:
    # Everyone at 25000 except small moves: the S4 dealer wins 1000 and is top at 26000.
    out = play("tenhou", *[NOTEN] * 7, {"type": "draw", "tenpai": [3]})
    assert not out["finished"]  # top but below 30000: the dealer goes on


def test_kantan_sudden_death_and_west_bonus_pot() -> None:
    east = [NOTEN] * 4
    out = play("kantan", *east, {"type": "tsumo", "seat": 1, "han": 1})
    assert out["finished"] and out["final"]["reason"] == "sudden_death"
    # In South a winner who is not sole top does not end the game.
    out = play(
        "kantan",
        {"type": "tsumo", "seat": 2, "han": 3},
        *[NOTEN] * 3,
        {"type": "tsumo", "seat": 1, "han": 1},
    )
    assert not out["finished"]
    # Eight draws bring West 1, which adds a 1000 bonus pot; West 2 adds 2000 more.
    out = play("kantan", *[NOTEN] * 8)
    assert where(out)[:2] == ("W", 1) and out["kyoutaku"] == 1000
    out = play("kantan", *[NOTEN] * 9)
    assert where(out)[:2] == ("W", 2) and out["kyoutaku"] == 3000
    out = play("kantan", *[NOTEN] * 9, {"type": "tsumo", "seat": 3, "han": 1})
    assert out["finished"] and out["final"]["scores"][3] == 25000 + 1500 + 3000
    # A tenpai player who is sole top at a draw from South on ends it.
    out = play("kantan", *east, {"type": "draw", "tenpai": [2]})
    assert out["finished"] and out["final"]["ranking"][0] == 2


def test_leftover_deposits_to_the_top_and_ties_by_seat_order() -> None:
    out = play(
        "ariari", *[NOTEN] * 7, {"type": "riichi", "seat": 3}, {"type": "draw", "tenpai": [3]}
    )
    assert out["finished"]
    # Seat 3 got 3000 tenpai, paid 1000 deposit: 27000 and top; the stick goes back to it.
    assert out["scores"] == [24000, 24000, 24000, 27000]
    assert out["kyoutaku"] == 1000
    assert out["final"]["scores"] == [24000, 24000, 24000, 28000]
    assert out["final"]["ranking"] == [3, 0, 1, 2]
    out = play("ariari", *[NOTEN] * 8)
    assert out["final"]["ranking"] == [0, 1, 2, 3]


def test_kenko_final_sum_check_takes_the_excess_from_the_top() -> None:
    rules = load_rules("kenko")
    state = replace(initial_state(rules), scores=(40000, 30000, 20000, 12000))
    final = finish(state, "time_up")
    assert final.scores == (38000, 30000, 20000, 12000)
    state = replace(initial_state(rules), scores=(40000, 30000, 20000, 9000))
    assert finish(state, "time_up").scores == (40000, 30000, 20000, 9000)


def test_result_points_with_uma_and_oka() -> None:
    out = play("jboy", *[NOTEN] * 8)
    # Equal scores rank by seat (jboy: seat order); (25000 - 30000)/1000, + 20 oka for 1st.
    assert out["final"]["ranking"] == [0, 1, 2, 3]
    assert out["final"]["result"] == [15.0, -5.0, -5.0, -5.0]


def test_game_over_refuses_more_events() -> None:
    out = play("ariari", *[NOTEN] * 8, NOTEN)
    assert [r["code"] for r in out["rejected"]] == ["game_over"]
