"""Wall tracking through the rules core and `tablectl replay`."""

from __future__ import annotations

from typing import Any

from tests.helpers import play

DICE = {"type": "dice", "dice": [3, 4]}
DEAL = {"type": "deal"}


def take(seat: int, **kw: Any) -> dict[str, Any]:
    return {"type": "take", "seat": seat, **kw}


def discard(seat: int) -> dict[str, Any]:
    return {"type": "discard", "seat": seat}


def go_around(first: int, count: int, players: int = 4) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(count):
        seat = (first + i) % players
        out += [take(seat), discard(seat)]
    return out


def test_replay_reports_the_wall_of_the_hand_in_progress() -> None:
    out = play("ariari", DICE, DEAL, take(0))
    assert out["rejected"] == []
    wall = out["wall"]
    assert wall["dead"] == 14 and wall["kans"] == 0
    assert wall["live_left"] == 136 - 14 - 53
    assert len(wall["dora_indicators"]) == 1


def test_a_whole_hand_to_the_exhaustive_draw() -> None:
    # 136 - 14 dead - 52 dealt = 70 live draws.
    events = [DICE, DEAL, *go_around(0, 70)]
    out = play("ariari", *events, {"type": "draw", "tenpai": [1]})
    assert out["rejected"] == []
    assert out["hands"][0]["result"] == "draw"
    assert "wall" not in out  # the hand is over
    early = play("ariari", *events[:-2], {"type": "draw", "tenpai": [1]})
    assert early["rejected"][0]["code"] == "wall_not_exhausted"


def test_tsumo_must_follow_the_winners_draw() -> None:
    out = play(
        "ariari",
        DICE,
        DEAL,
        take(0),
        discard(0),
        take(1),
        {"type": "tsumo", "seat": 2, "han": 1, "fu": 30},
        {"type": "tsumo", "seat": 1, "han": 1, "fu": 30},
    )
    assert [r["code"] for r in out["rejected"]] == ["out_of_turn"]
    assert out["hands"][0]["winners"] == [1]


def test_take_out_of_turn_and_dead_wall_take_are_refused() -> None:
    out = play("ariari", DICE, DEAL, take(0), discard(0), take(2))
    assert out["rejected"][0]["code"] == "out_of_turn"
    assert out["wall"]["live_left"] == 136 - 14 - 53


def test_ron_off_the_last_discard_and_riichi_deposit_timing() -> None:
    out = play(
        "ariari",
        DICE,
        DEAL,
        take(0),
        {"type": "riichi", "seat": 0},
        discard(0),
        {"type": "ron", "from": 0, "winners": [{"seat": 2, "han": 2, "fu": 30}]},
    )
    assert out["rejected"] == []
    # The declaration tile dealt in: no deposit.
    assert out["scores"] == [23000, 25000, 27000, 25000]
    out = play(
        "ariari",
        DICE,
        DEAL,
        take(0),
        {"type": "riichi", "seat": 0},
        discard(0),
        take(1),
        discard(1),
        {"type": "ron", "from": 1, "winners": [{"seat": 2, "han": 2, "fu": 30}]},
    )
    assert out["rejected"] == []
    assert out["scores"] == [24000, 23000, 28000, 25000]


def test_kan_rinshan_and_dora() -> None:
    out = play("ariari", DICE, DEAL, take(0), {"type": "kan", "seat": 0, "kind": "closed"}, take(0))
    assert out["rejected"] == []
    assert out["wall"]["kans"] == 1 and out["wall"]["dead"] == 14
    assert len(out["wall"]["dora_indicators"]) == 2


def test_dice_again_mid_hand_is_refused() -> None:
    out = play("ariari", DICE, DEAL, DICE)
    assert out["rejected"][0]["code"] == "dice_in_hand"


def test_kantan_own_walls_18_discards_then_draw() -> None:
    events = [DICE, DEAL]
    for _ in range(18):
        for seat in range(4):
            events += [take(seat), discard(seat)]
    out = play("kantan", *events[:-2], {"type": "draw", "tenpai": []})
    assert out["rejected"][0]["code"] == "wall_not_exhausted"
    out = play("kantan", *events, {"type": "draw", "tenpai": [2]})
    assert out["rejected"] == [] and out["hands"][0]["result"] == "draw"
