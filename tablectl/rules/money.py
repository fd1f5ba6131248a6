"""The parlor's money: the chips (祝儀) of a hand and the game's settlement in P.

Pure functions of the rules and the numbers given, in two parts (docs/rules.md, "Money"):

- a winning hand's chips: :func:`hand_chips` counts them from what the tiles show (a
  table that reads its tiles gives the counts of red and gold fives, ura and kan-ura dora
  and the ippatsu; tile ids stay in :mod:`tablectl.tiles`), :func:`yakuman_chips` adds
  the yakuman chips of the hand's value, :func:`chips_refusal` checks a count a winner
  entered, and :func:`chip_payments` says who pays them;
- the game's end: :func:`settle` turns the result points, the places, the chips and the
  busted seats into each seat's P.

A chip is a count; its worth in P is ``money.chip_value``. Every P is a whole number.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tablectl.rules.options import HouseRules, MoneyOptions
from tablectl.rules.refusal import Refusal

#: One ura indicator makes at most four tiles of the hand dora (there are four of a kind;
#: a pulled north counts as a north, and a hand and its pulled norths hold at most four).
DORA_PER_INDICATOR = 4
#: Kan-ura indicators: one per kan, four kans at most.
KAN_URA_INDICATORS = 4


def max_hand_chips(rules: HouseRules, *, riichi: bool = True) -> int:
    """The most chips (besides the yakuman chips) a winning hand can earn under ``rules``:
    every coloured five of the set in the hand, the ippatsu, four ura dora and sixteen
    kan-ura dora (four under each of four kan indicators). Without riichi only the fives
    count, and only where they earn chips on any win. A count entered above this is a
    slip (``bad_chips``): sanma-free 23 with riichi, 0 without; jboy 3, jboy-sanma 4."""
    money = rules.money
    tiles = rules.tiles
    gold = len(tiles.gold_fives)
    # As tablectl.tiles.ids.tile_set deals them: one red per suit named, more to make up
    # red_count.
    red = max(tiles.red_count - gold, len(tiles.red_fives))
    fives = red * money.red_chips + gold * money.gold_chips
    if not riichi:
        return 0 if money.fives_need_riichi else fives
    return (
        fives
        + money.ippatsu_chips
        + DORA_PER_INDICATOR * money.ura_chips
        + DORA_PER_INDICATOR * KAN_URA_INDICATORS * money.kan_ura_chips
    )


def hand_chips(
    money: MoneyOptions,
    *,
    riichi: bool,
    ippatsu: bool = False,
    red: int = 0,
    gold: int = 0,
    ura: int = 0,
    kan_ura: int = 0,
    renhou: bool = False,
) -> int:
    """The chips a winning hand earns besides the yakuman chips, from what it holds:
    ``red`` and ``gold`` fives among the winner's tiles, ``ura`` dora under the first
    indicator and ``kan_ura`` under the kans' indicators, the ``ippatsu``. Ippatsu, ura
    and kan-ura exist only in riichi and are not counted without it; the fives are not
    either where ``fives_need_riichi``. A renhou under ``renhou_chips = "fives_only"``
    (jboy) earns its fives alone.

    >>> from tablectl.rules.loader import load_rules
    >>> hand_chips(load_rules("sanma-free").money, riichi=True, red=1, ura=2)
    3
    >>> hand_chips(load_rules("sanma-free").money, riichi=False, red=1)
    0
    >>> hand_chips(load_rules("jboy").money, riichi=False, red=1, gold=1)
    2
    """
    fives = 0
    if riichi or not money.fives_need_riichi:
        fives = red * money.red_chips + gold * money.gold_chips
    if not riichi or (renhou and money.renhou_chips == "fives_only"):
        return fives
    return (
        fives
        + (money.ippatsu_chips if ippatsu else 0)
        + ura * money.ura_chips
        + kan_ura * money.kan_ura_chips
    )


def yakuman_chips(
    money: MoneyOptions, *, yakuman: int, kazoe: bool = False, renhou: bool = False
) -> int:
    """The yakuman chips of a win paid as ``yakuman`` yakuman (0 for a normal hand):
    once per hand, or once per yakuman under ``yakuman_chips_each``; none for a kazoe
    yakuman (13 han counted as one) unless ``kazoe_chips``; none for a renhou counted as a
    yakuman (``tiles.renhou = "yakuman"``, and no other yakuman in the hand) under
    ``renhou_chips = "fives_only"``."""
    if yakuman <= 0 or not money.yakuman_chips:
        return 0
    if kazoe and not money.kazoe_chips:
        return 0
    if renhou and money.renhou_chips == "fives_only":
        return 0
    return money.yakuman_chips * (yakuman if money.yakuman_chips_each else 1)


def chips_refusal(rules: HouseRules, seat: int, chips: int, *, riichi: bool) -> Refusal | None:
    """Whether a winner's entered chip count (besides the yakuman chips) is refused:
    ``chips_not_allowed`` where the preset has no chips a hand earns, ``bad_chips`` for a
    negative count or one above :func:`max_hand_chips`, ``chips_need_riichi`` for chips
    on a win without riichi where only riichi earns them (sanma-free)."""
    money = rules.money
    if not money.hand_chips:
        return Refusal(
            "chips_not_allowed",
            f"{rules.name} has no chips a hand earns; seat {seat}'s win takes no chip count",
        )
    if chips < 0:
        return Refusal("bad_chips", f"seat {seat}: a chip count is 0 or more, got {chips}")
    most = max_hand_chips(rules, riichi=riichi)
    if not riichi and most == 0 and chips:
        return Refusal(
            "chips_need_riichi",
            f"seat {seat} won without riichi: under {rules.name} only a riichi win earns chips",
        )
    if chips > most:
        return Refusal(
            "bad_chips",
            f"seat {seat}: {chips} chips is more than any hand earns here (at most {most})",
        )
    return None


def chip_payments(
    players: int,
    winner: int,
    chips: int,
    *,
    discarder: int | None,
    pao: int | None = None,
    pao_pays: bool = True,
) -> tuple[int, ...]:
    """Each seat's chip change for one winner's ``chips``: on a ron (``discarder``) the
    discarder pays them, on a tsumo each other player pays the same count; with a pao
    player who pays chips (``pao_pays``), the pao player pays all of it instead (on a
    tsumo the count for each other player).

    >>> chip_payments(3, 1, 2, discarder=None)
    (-2, 4, -2)
    >>> chip_payments(3, 1, 10, discarder=0, pao=2)
    (0, 10, -10)
    """
    out = [0] * players
    payers = [discarder] if discarder is not None else [s for s in range(players) if s != winner]
    for payer in payers:
        who = pao if pao is not None and pao_pays else payer
        out[who] -= chips
        out[winner] += chips
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Money:
    """A game's settlement in P, per seat. Each part is what it adds to the seat's P (the
    fee is 0 or negative): ``total = result + uma + chip_p + fee + prizes``. ``chips`` is
    the seat's net chip count, ``chip_p`` its worth."""

    chips: tuple[int, ...]
    result: tuple[int, ...]
    uma: tuple[int, ...]
    chip_p: tuple[int, ...]
    fee: tuple[int, ...]
    prizes: tuple[int, ...]
    total: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the replay's ``final.money``)."""
        return {
            "chips": list(self.chips),
            "result": list(self.result),
            "uma": list(self.uma),
            "chip_p": list(self.chip_p),
            "fee": list(self.fee),
            "prizes": list(self.prizes),
            "total": list(self.total),
        }


def whole_p(amount: Fraction) -> int:
    """``amount`` to the whole P, half away from zero: +12.5 is 13 and -12.5 is -13, so
    results equal and opposite stay equal and opposite in P."""
    whole = int(abs(amount) + Fraction(1, 2))
    return whole if amount >= 0 else -whole


def settle(
    rules: HouseRules,
    *,
    result: Sequence[Fraction],
    order: Sequence[int],
    groups: Sequence[Sequence[int]],
    chips: Sequence[int],
    busted: Sequence[int],
) -> Money | None:
    """Each seat's P at the game's end, or None where the preset has no money.

    ``result`` is each seat's result in points (the final result points, penalties taken;
    for a preset without result points the final score less the start), ``order`` the
    seats best first and ``groups`` the places that share (tied places under
    ``tie = "share_uma"``, each place alone otherwise), ``chips`` each seat's net chips,
    ``busted`` the seats that pay the bust prize.

    - result at the rate: result points x ``rate`` / 1000, to the whole P half away from
      zero (:func:`whole_p`);
    - uma: ``money.uma`` by place; the places of a group share theirs equally;
    - chips: the net count x ``chip_value``;
    - fee: ``game_fee`` from each seat, or from the top alone (tied tops share it);
    - prizes: each busted seat pays ``bust_prize`` to the top (tied tops share it).

    A share that is not whole P is rounded like the result (only under ``share_uma``).
    """
    money = rules.money
    if not money.enabled:
        return None
    players = len(order)
    top = [order[place] for place in groups[0]]
    uma = [0] * players
    if money.uma:
        for places in groups:
            share = Fraction(sum(money.uma[p] for p in places), len(places))
            for place in places:
                uma[order[place]] = whole_p(share)
    fee = [0] * players
    if money.fee_payer == "each":
        fee = [-money.game_fee] * players
    else:
        for seat in top:
            fee[seat] = -whole_p(Fraction(money.game_fee, len(top)))
    prizes = [0] * players
    payers = [s for s in busted if s not in top] if money.bust_prize else []
    for seat in payers:
        prizes[seat] -= money.bust_prize
    for seat in top:
        prizes[seat] += whole_p(Fraction(money.bust_prize * len(payers), len(top)))
    from_result = [whole_p(r * money.rate / 1000) for r in result]
    chip_p = [c * money.chip_value for c in chips]
    total = [sum(parts) for parts in zip(from_result, uma, chip_p, fee, prizes, strict=True)]
    return Money(
        chips=tuple(chips),
        result=tuple(from_result),
        uma=tuple(uma),
        chip_p=tuple(chip_p),
        fee=tuple(fee),
        prizes=tuple(prizes),
        total=tuple(total),
    )
