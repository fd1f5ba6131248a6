"""Settlement: hand values (han/fu or yakuman) to payments, under a preset's tables.

Everything here is a pure function of the rules and the numbers given.  Amounts are in
points; a list of *deltas* has one entry per seat and sums to zero unless money comes
from outside (kantan's West bonus pot) or goes to the table (deposits).

>>> from tablectl.rules.options import HouseRules
>>> rules = HouseRules()
>>> value = hand_value(rules, han=3, fu=30)
>>> value.base, ron_points(rules, value, dealer=False), ron_points(rules, value, dealer=True)
(960, 3900, 5800)
>>> tsumo_payments(rules, value, winner=1, dealer=0)
(2000, 0, 1000, 1000)
"""

from __future__ import annotations

from dataclasses import dataclass

from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal

MANGAN = 2000
#: The most han a hand is entered with: 13 and more count as yakuman (kazoe).
MAX_HAN = 13
LIMITS = ((5, 2000), (6, 3000), (8, 4000), (11, 6000), (13, 8000))
VALID_FU = (20, 25, *range(30, 111, 10))

# Kantan's fixed table (seed 004): rows by han; 13+ han and every yakuman share the last row.
KANTAN_RON = (
    (1, 1500),
    (2, 3000),
    (3, 6000),
    (4, 12000),
    (6, 18000),
    (8, 24000),
    (11, 36000),
    (13, 48000),
)
KANTAN_TSUMO_EACH = (
    (1, 500),
    (2, 1000),
    (3, 2000),
    (4, 4000),
    (6, 6000),
    (8, 8000),
    (11, 12000),
    (13, 16000),
)

# sanma-free (seed 003): every hand is 30 fu; 1/2/3 han read as base 250/500/1000.
FLAT_30FU_BASE = {1: 250, 2: 500, 3: 1000}


@dataclass(frozen=True, slots=True)
class HandValue:
    """A checked hand value.

    ``base`` is the basic points (fu x 2^(han+2), capped by the limits); ``yakuman`` is the
    number of yakuman paid (0 for a normal hand); ``han`` and ``fu`` are the values after
    the preset's readings (kazoe, jboy's 60-fu rule) for the record.
    """

    han: int
    fu: int | None
    yakuman: int
    base: int


def _round_up(points: int) -> int:
    return -(-points // 100) * 100


def _row(table: tuple[tuple[int, int], ...], han: int) -> int:
    value = table[0][1]
    for lowest, points in table:
        if han >= lowest:
            value = points
    return value


def _limit_base(han: int) -> int:
    base = 0
    for lowest, points in LIMITS:
        if han >= lowest:
            base = points
    return base


def hand_value(
    rules: HouseRules,
    *,
    han: int = 0,
    fu: int | None = None,
    yakuman: int = 0,
    tsumo: bool = False,
) -> HandValue | Refusal:
    """Check a hand's han/fu (or yakuman count) and compute its value under ``rules``.

    Refusal codes: ``bad_yakuman``, ``han_below_one``, ``han_above_13``, ``fu_missing``,
    ``bad_fu`` (a fu off the scale, even where the preset ignores fu: 5 han and up,
    sanma-free's flat 30 fu, kantan's table), ``impossible_fu`` (20 fu by ron, 20 fu at
    1 han, 25 fu under 2 han, where fu counts).
    """
    scoring = rules.scoring
    if yakuman:
        if yakuman < 1 or yakuman > 6:
            return Refusal("bad_yakuman", f"a yakuman count must be 1 to 6, got {yakuman}")
        counted = yakuman if scoring.multiple_yakuman else 1
        return HandValue(han=13 * counted, fu=None, yakuman=counted, base=8000 * counted)
    if han < 1:
        return Refusal("han_below_one", f"a winning hand has at least 1 han, got {han}")
    if han > MAX_HAN:
        return Refusal("han_above_13", f"enter 13 han for 13 and more (counted yakuman), got {han}")
    fu_matters = scoring.table == "standard" and han < 5
    if fu_matters and fu is None:
        return Refusal("fu_missing", f"{han} han needs its fu under this preset")
    if fu is not None and fu not in VALID_FU:
        # Checked even where the fu is ignored: a value no hand can have is a slip.
        ignored = "" if fu_matters else " (or omitted: this hand's fu does not count here)"
        return Refusal("bad_fu", f"fu must be 20, 25 or 30 to 110 by tens{ignored}, got {fu}")
    if fu is not None and fu_matters:
        if fu == 20 and not tsumo:
            return Refusal("impossible_fu", "20 fu cannot be won by ron (pinfu ron is 30 fu)")
        if fu == 20 and han < 2:
            return Refusal("impossible_fu", "20 fu needs at least 2 han (pinfu tsumo)")
        if fu == 25 and han < 2:
            return Refusal("impossible_fu", "25 fu (chiitoitsu) needs at least 2 han")
    if han >= 13:
        if scoring.kazoe == "yakuman":
            return HandValue(han=han, fu=fu, yakuman=1, base=8000)
        return HandValue(han=han, fu=fu, yakuman=0, base=6000)
    if scoring.table == "flat_30fu" and han <= 3:
        return HandValue(han=han, fu=30, yakuman=0, base=FLAT_30FU_BASE[han])
    if scoring.table != "standard" or han >= 5:
        return HandValue(han=han, fu=fu, yakuman=0, base=_limit_base(max(han, 5)))
    assert fu is not None
    if scoring.fu_60_plus == "one_han_up" and fu >= 60:
        # jboy's 一翻くり上げ: one han more at half the fu, rounded up to the next 10.
        han, fu = han + 1, -(-fu // 20) * 10
    base = fu * 2 ** (han + 2)
    if scoring.kiriage and base == 1920:
        base = MANGAN
    return HandValue(han=han, fu=fu, yakuman=0, base=min(base, MANGAN) if han < 5 else MANGAN)


def ron_points(rules: HouseRules, value: HandValue, *, dealer: bool) -> int:
    """What the discarder pays for a ron, before honba."""
    if rules.scoring.table == "kantan":
        return 48000 * max(value.yakuman, 1) if value.yakuman else _row(KANTAN_RON, value.han)
    return _round_up(value.base * (6 if dealer else 4))


def tsumo_payments(
    rules: HouseRules, value: HandValue, *, winner: int, dealer: int
) -> tuple[int, ...]:
    """What each seat pays on a tsumo by ``winner`` (the winner's own entry is 0), before honba.

    Three players: with ``tsumo_son`` the payers pay what they would in four players and
    the absent north's share is lost; without it, that share is split between the payers.
    """
    players = rules.players
    scoring = rules.scoring
    pays = [0] * players
    if scoring.table == "kantan":
        each = (
            16000 * max(value.yakuman, 1) if value.yakuman else _row(KANTAN_TSUMO_EACH, value.han)
        )
        return tuple(0 if s == winner else each for s in range(players))
    if scoring.one_han_tsumo_each is not None and value.han == 1 and not value.yakuman:
        return tuple(0 if s == winner else scoring.one_han_tsumo_each for s in range(players))
    for seat in range(players):
        if seat == winner:
            continue
        doubled = dealer in (winner, seat)
        pays[seat] = _round_up(value.base * (2 if doubled else 1))
    if players == 3 and not scoring.tsumo_son:
        absent_share = _round_up(value.base * (2 if winner == dealer else 1))
        half = _round_up(absent_share // 2)
        pays = [p + half if s != winner else 0 for s, p in enumerate(pays)]
    return tuple(pays)


def tenpai_payments(rules: HouseRules, tenpai: frozenset[int]) -> tuple[int, ...]:
    """Deltas of the noten payments at an exhaustive draw (all or none tenpai: nothing)."""
    players = rules.players
    count = len(tenpai)
    if count in (0, players):
        return (0,) * players
    table = rules.scoring.tenpai_table
    if table:
        gets, pays = table[count - 1]
    else:
        pool = rules.scoring.tenpai_pool
        gets, pays = pool // count, pool // (players - count)
    return tuple(gets if seat in tenpai else -pays for seat in range(players))


def chombo_deltas(rules: HouseRules, seat: int, dealer: int) -> tuple[int, ...]:
    """Deltas of a chombo payment by ``seat`` (nothing for ``final`` and ``none``)."""
    players = rules.players
    penalties = rules.penalties
    deltas = [0] * players
    if penalties.chombo == "each":
        for other in range(players):
            if other != seat:
                deltas[other] = penalties.chombo_amount
    elif penalties.chombo == "mangan":
        # Paid as a mangan tsumo by the offender: the dealer receives (or pays) double.
        for other in range(players):
            if other != seat:
                deltas[other] = 4000 if dealer in (seat, other) else 2000
    deltas[seat] = -sum(deltas)
    return tuple(deltas)


def nagashi_payments(rules: HouseRules, seat: int, dealer: int) -> tuple[int, ...]:
    """What each seat pays for a nagashi mangan (or baiman) by ``seat``, before honba."""
    han = 8 if rules.flow.nagashi == "baiman" else 5
    value = HandValue(han=han, fu=None, yakuman=0, base=_limit_base(han))
    if rules.scoring.table == "kantan":  # pragma: no cover - kantan has no nagashi
        return (0,) * rules.players
    return tsumo_payments(rules, value, winner=seat, dealer=dealer)


def nearest_in_turn(players: int, discarder: int, seats: list[int]) -> list[int]:
    """``seats`` ordered by turn order after ``discarder`` (head-bump order)."""
    return sorted(seats, key=lambda s: (s - discarder) % players)
