"""All-last conditions: what each player needs to move up, at a hand that may be the last.

Pure, like the rest of the rules core. For every seat not in first place and every better
place it can still reach, the smallest hand (the smallest value in the preset's own
payment table) that gets it to that place or better: by ron off each other seat, and by
tsumo. A ron value is what the discarder pays, a tsumo value the winner's total, both
before honba and deposits (which the winner collects on top, and which are counted when
deciding the place). ``None`` where not even a single yakuman is enough.

Declaring riichi does not change a value: the stick goes to the table and comes back
with the deposits to the winner (it changes which hands reach the value, by one han).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from tablectl.rules.ending import ranking
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import (
    MAX_HAN,
    VALID_FU,
    HandValue,
    hand_value,
    ron_points,
    tsumo_payments,
)
from tablectl.rules.state import GameState

#: {seat: {place: {"ron": {discarder: value or None}, "tsumo": value or None}}}, places
#: and seats as strings (JSON object keys), place "1" = top.
Conditions = dict[str, dict[str, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Payment:
    """One entry of the payment table for one winner: what moves, before honba."""

    value: int
    #: Points each seat pays (the winner's own entry is 0).
    pays: tuple[int, ...]


def may_be_last_hand(state: GameState) -> bool:
    """Whether the hand in progress is, or may be, the game's last: all-last, the hand the
    clock made last, or a sudden-death hand (kantan from South 1, a West extension). A
    possible bust alone does not count."""
    if state.finished:
        return False
    game = state.rules.game
    last = {"east": 0, "east_south": 1}.get(game.length)
    if state.last_hand:
        return True
    if last is None:  # kantan: East, then sudden death from South 1 on
        return state.round_index >= 1
    if state.round_index > last:
        return True  # the extension (West) is sudden death
    return state.round_index == last and state.dealer == state.players - 1


@cache
def _values(rules: HouseRules, *, tsumo: bool) -> tuple[HandValue, ...]:
    """Every distinct hand value the preset's table accepts, up to one yakuman."""
    seen: dict[tuple[int, int, int], HandValue] = {}
    for han in range(1, MAX_HAN + 1):
        for fu in (*VALID_FU, None):
            value = hand_value(rules, han=han, fu=fu, tsumo=tsumo)
            if not isinstance(value, Refusal):
                seen.setdefault((value.base, value.han, value.yakuman), value)
    single = hand_value(rules, yakuman=1, tsumo=tsumo)
    assert not isinstance(single, Refusal)
    seen.setdefault((single.base, single.han, single.yakuman), single)
    return tuple(seen.values())


@cache
def _ron_values(rules: HouseRules, dealer: bool) -> tuple[int, ...]:
    """What a discarder may pay the dealer (or a non-dealer), smallest first."""
    return tuple(sorted({ron_points(rules, v, dealer=dealer) for v in _values(rules, tsumo=False)}))


@cache
def payment_table(
    rules: HouseRules, winner: int, dealer: int, discarder: int | None
) -> tuple[Payment, ...]:
    """The distinct payments of every entry of the table, smallest first: a ron off
    ``discarder``, or a tsumo when it is None."""
    if discarder is not None:
        return tuple(
            Payment(points, tuple(points if s == discarder else 0 for s in range(rules.players)))
            for points in _ron_values(rules, winner == dealer)
        )
    seen: dict[tuple[int, ...], Payment] = {}
    for value in _values(rules, tsumo=True):
        pays = tsumo_payments(rules, value, winner=winner, dealer=dealer)
        seen.setdefault(pays, Payment(sum(pays), pays))
    return tuple(sorted(seen.values(), key=lambda p: (p.value, p.pays)))


def _place_after(state: GameState, winner: int, payment: Payment, discarder: int | None) -> int:
    """The winner's place (1 = top) once ``payment`` and the honba and deposits moved."""
    scoring = state.rules.scoring
    honba = state.honba if state.rules.flow.honba else 0
    scores = list(state.scores)
    for seat, paid in enumerate(payment.pays):
        if seat == winner or (paid == 0 and discarder is not None):
            continue
        extra = honba * (scoring.honba_tsumo_each if discarder is None else scoring.honba_ron)
        scores[seat] -= paid + extra
        scores[winner] += paid + extra
    scores[winner] += state.kyoutaku
    return place_of(state.rules, scores, winner)


def place_of(rules: HouseRules, scores: Sequence[int], seat: int) -> int:
    """``seat``'s place (1 = top) as the conditions count it: under ``tie = "seat_order"``
    a tie goes to the earlier seat; under ``"share_uma"`` tied players share their places'
    uma, so a place is reached only alone (level with the seat above is the lower place)."""
    if rules.game.tie == "share_uma":
        return 1 + sum(
            1 for other, score in enumerate(scores) if other != seat and score >= scores[seat]
        )
    return ranking(scores).index(seat) + 1


def _smallest(state: GameState, winner: int, place: int, discarder: int | None) -> int | None:
    table = payment_table(state.rules, winner, state.dealer, discarder)
    # A bigger payment never gives a worse place: the first entry that reaches it, by
    # bisection (a Pi computes this at the start of every such hand).
    low, high = 0, len(table)
    while low < high:
        middle = (low + high) // 2
        if _place_after(state, winner, table[middle], discarder) <= place:
            high = middle
        else:
            low = middle + 1
    return table[low].value if low < len(table) else None


def conditions(state: GameState) -> Conditions | None:
    """The conditions at the hand in progress, or None when it cannot be the last."""
    if not may_be_last_hand(state):
        return None
    order = ranking(state.scores)
    out: Conditions = {}
    for seat in order[1:]:
        current = order.index(seat) + 1
        places: dict[str, dict[str, Any]] = {}
        for place in range(1, current):
            ron = {
                str(d): _smallest(state, seat, place, d) for d in range(state.players) if d != seat
            }
            tsumo = _smallest(state, seat, place, None)
            if tsumo is not None or any(v is not None for v in ron.values()):
                places[str(place)] = {"ron": ron, "tsumo": tsumo}
        out[str(seat)] = places
    return out


def tsumo_split(state: GameState, winner: int, value: int) -> str:
    """A tsumo value the way a parlor says it: ``1000-2000`` (non-dealers-dealer) or
    ``2000 ALL``."""
    for payment in payment_table(state.rules, winner, state.dealer, None):
        if payment.value == value:
            paid = sorted({p for s, p in enumerate(payment.pays) if s != winner})
            return f"{paid[0]} ALL" if len(paid) == 1 else f"{paid[0]}-{paid[-1]}"
    return str(value)
