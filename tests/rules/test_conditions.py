"""All-last conditions, each scenario checked against an independent brute force: every
entry of the payment table applied through the rules core's own settlement (``step``),
and the smallest that gets the player to the place."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.conditions import conditions, may_be_last_hand
from tablectl.rules.core import step
from tablectl.rules.ending import ranking
from tablectl.rules.loader import load_rules
from tablectl.rules.scoring import MAX_HAN, VALID_FU
from tablectl.rules.state import GameState, HandSettled, initial_state


def at(preset: str, scores: tuple[int, ...], **changes: Any) -> GameState:
    rules = load_rules(preset)
    kyoutaku = changes.get("kyoutaku", 0)
    assert sum(scores) + kyoutaku == rules.game.start_points * rules.players
    return replace(initial_state(rules), scores=scores, **changes)


def all_last(preset: str, scores: tuple[int, ...], **changes: Any) -> GameState:
    rules = load_rules(preset)
    last = {"east": 0, "east_south": 1}.get(rules.game.length, 1)
    return at(preset, scores, round_index=last, dealer=rules.players - 1, **changes)


def _hands() -> list[dict[str, Any]]:
    hands: list[dict[str, Any]] = [{"yakuman": 1}]
    for han in range(1, MAX_HAN + 1):
        hands.append({"han": han})
        hands += [{"han": han, "fu": fu} for fu in VALID_FU]
    return hands


def brute_force(state: GameState, seat: int, place: int, discarder: int | None) -> int | None:
    """The smallest value, over every hand the core accepts, that puts ``seat`` at
    ``place`` or better, found by settling each through ``step``."""
    rules = state.rules
    honba = state.honba if rules.flow.honba else 0
    best: int | None = None
    for hand in _hands():
        entry = {"seat": seat, **hand}
        event = (
            ev.Tsumo(ev.Hand(**entry))
            if discarder is None
            else ev.Ron(discarders=(discarder,), winners=(ev.Hand(**entry),))
        )
        after, effects = step(state, event)
        settled = [e.record for e in effects if isinstance(e, HandSettled)]
        if not settled:
            continue  # refused: not in this preset's table
        deltas = settled[0].deltas
        order = after.final.ranking if after.final is not None else ranking(after.scores)
        reached = order.index(seat) + 1
        if rules.game.tie == "share_uma":
            # Tied players share their places' uma: level with the seat above is the
            # lower place (M-League, WRC, EMA; RULES.md "Readings settled").
            scores = after.final.scores if after.final is not None else after.scores
            reached = 1 + sum(1 for s, v in enumerate(scores) if s != seat and v >= scores[seat])
        if reached > place:
            continue
        if discarder is None:
            value = deltas[seat] - state.kyoutaku
            value -= rules.scoring.honba_tsumo_each * honba * (rules.players - 1)
        else:
            value = -deltas[discarder] - rules.scoring.honba_ron * honba
        best = value if best is None else min(best, value)
    return best


def check_against_brute_force(state: GameState) -> dict[str, Any]:
    found = conditions(state)
    assert found is not None
    order = ranking(state.scores)
    assert set(found) == {str(s) for s in order[1:]}
    for seat in order[1:]:
        current = order.index(seat) + 1
        for place in range(1, current):
            expected_ron = {
                str(d): brute_force(state, seat, place, d)
                for d in range(state.players)
                if d != seat
            }
            expected_tsumo = brute_force(state, seat, place, None)
            reachable = expected_tsumo is not None or any(
                v is not None for v in expected_ron.values()
            )
            if not reachable:
                assert str(place) not in found[str(seat)]
                continue
            assert found[str(seat)][str(place)] == {"ron": expected_ron, "tsumo": expected_tsumo}
    return found


SCENARIOS = {
    # Standard table, no kiriage (Tenhou), South 4, 2 honba.
    "standard": ("tenhou", (33000, 23000, 24000, 20000), {"honba": 2}),
    # Kiriage: 30 fu 4 han and 60 fu 3 han pay a mangan (ariari).
    "kiriage": ("ariari", (29000, 21700, 26100, 23200), {}),
    # jboy: 60 fu and more score one han up at half the fu; honba 1500 per stick.
    "jboy_60_fu": ("jboy", (31000, 27400, 22800, 18800), {"honba": 1}),
    # sanma-free: the flat 30-fu table, 500-each 1-han tsumo, tsumo-son, 3 players.
    "sanma_flat": ("sanma-free", (41000, 26000, 23000), {"honba": 1}),
    # jboy-sanma: the standard table with tsumo-son for three.
    "tsumo_son": ("jboy-sanma", (44000, 31000, 30000), {}),
    # A tie decided by seat order: seat 1 level with seat 0 is still below it.
    "tie_by_seat_order": ("tenhou", (30000, 26000, 22000, 22000), {}),
    # A tie shares the uma (M-League): seat 2 level with seat 1 shares 2nd and 3rd, so
    # reaching 2nd takes more than drawing level, even for the earlier seat.
    "tie_shares_uma": ("mleague", (30000, 26000, 22000, 22000), {}),
    # Deposits and honba on the table: the winner collects both.
    "deposits_and_honba": ("wrc", (36000, 31000, 29000, 22000), {"honba": 3, "kyoutaku": 2000}),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_conditions_match_the_brute_force(name: str) -> None:
    preset, scores, changes = SCENARIOS[name]
    check_against_brute_force(all_last(preset, scores, **changes))


def test_kantan_from_south_1_with_its_own_table() -> None:
    # kantan (seed 004): sudden death from South 1; its fixed table, no fu, no honba.
    state = at("kantan", (31000, 24000, 23000, 22000), round_index=1, dealer=0)
    found = check_against_brute_force(state)
    assert found["1"]["1"]["tsumo"] is not None


def test_worked_example_tenhou_all_last() -> None:
    # South 4, 2 honba, seat 3 deals; seat 2 is 9000 behind seat 0. By ron off seat 0 a
    # 4500 turns it (24000 + 5100 > 33000 - 5100; 3900 would tie, and a tie goes to seat
    # 0); off anyone else it takes a haneman (8000 + 600 falls 400 short).
    found = check_against_brute_force(all_last("tenhou", (33000, 23000, 24000, 20000), honba=2))
    assert found["2"]["1"] == {"ron": {"0": 4500, "1": 12000, "3": 12000}, "tsumo": 7200}


def test_only_when_the_hand_may_be_the_last() -> None:
    assert conditions(at("tenhou", (25000,) * 4)) is None  # East 1
    assert conditions(at("tenhou", (25000,) * 4, round_index=1, dealer=2)) is None  # South 3
    assert may_be_last_hand(at("tenhou", (25000,) * 4, round_index=2, dealer=0))  # West
    assert may_be_last_hand(at("kenko", (25000,) * 4, last_hand=True))  # time up
    assert not may_be_last_hand(at("kantan", (25000,) * 4))  # East: not yet sudden death
    assert may_be_last_hand(at("kantan", (25000,) * 4, round_index=1, dealer=2))


def test_nobody_can_move_up_is_an_empty_object_and_the_leader_is_absent() -> None:
    found = conditions(all_last("wrc", (120000, 0, 0, 0)))
    assert found is not None and "0" not in found
    assert found["1"] == {}  # 2nd already; 1st is out of reach even with a yakuman
    assert "2" in found["2"] and "1" not in found["2"]  # any win off seat 0 passes seat 1


def test_the_replay_output_carries_the_conditions() -> None:
    lines = [json.dumps(e) for e in ([{"type": "start", "rules": "tenhou"}]
             + [{"type": "draw", "tenpai": []}] * 7)]  # fmt: skip
    out = replay(lines).as_dict()
    assert out["round"] == {"wind": "S", "number": 4}
    assert out["conditions"] is not None and set(out["conditions"]) == {"1", "2", "3"}
    early = replay(lines[:3]).as_dict()
    assert early["conditions"] is None


def test_a_shared_place_is_not_reached_by_drawing_level() -> None:
    # M-League shares the uma of tied places (RULES.md, "Readings settled": tie =
    # "share_uma"). Seat 0 is 4000 behind seat 1: a 2000 ron off seat 1 leaves both at
    # 26000. Under Tenhou's seat order that tie is 1st for seat 0 (the earlier seat);
    # under M-League it is a shared 1st and 2nd, so 1st takes more.
    shared = check_against_brute_force(all_last("mleague", (24000, 28000, 26000, 22000)))
    by_seat = check_against_brute_force(all_last("tenhou", (24000, 28000, 26000, 22000)))
    # Seat 0 (earliest) level with seat 1 at 26000 each after a 2000 ron off seat 1.
    assert by_seat["0"]["1"]["ron"]["1"] == 2000
    assert shared["0"]["1"]["ron"]["1"] > 2000
