"""A small tenhou.net/6 JSON reader, written from the format's description for the tests
(it shares nothing with ``tablectl.export``).

What it knows of the format: ``log`` holds one array per hand: ``[kyoku, honba, sticks]``,
the four start scores, the dora and ura indicators, then per seat (always four; a
three-player log, whose ``rule.disp`` has 三, leaves the fourth empty) the 13 dealt tiles,
the takes and the discards, then the result: ``["和了", deltas, detail, ...]`` (one
``deltas, detail`` pair per winner, detail ``[winner, from, pao, points, yaku...]``) or a
draw's name with its deltas (an abort's name alone). Tiles: 11-19, 21-29, 31-39, 41-47,
51-53 for red fives. Takes: a tile drawn, or a call: ``c`` + called + own two (chi, from
the left), ``p``/``m`` before the called tile, standing first (from the left), second
(across) or last (from the right) among the pon's three or the kan's four tiles.
Discards, each answering the take at the same index: a tile, 60 for the tile just
drawn, ``r`` + either for the riichi tile, ``XXXXXXaXX`` for a closed kan, the pon's
string with ``k`` + the added tile at its marker for an added kan, ``f44`` for a north
pulled, 0 for no discard (after an open kan). A riichi stick is paid unless the
declaration tile itself is won on; the result's deltas leave the sticks out.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

RESULT_WIN = "和了"
DRAW_NAMES = ("流局", "全員聴牌", "全員不聴", "流し満貫")
ABORT_NAMES = ("九種九牌", "四風連打", "四家立直", "四槓散了", "三家和了")
TILE_CODES = {*range(11, 20), *range(21, 30), *range(31, 40), *range(41, 48), 51, 52, 53}
STICK = 1000


@dataclass
class SeatLog:
    """One seat's columns in one hand."""

    haipai: list[int]
    takes: list[Any]
    discards: list[Any]


@dataclass
class Hand:
    """One hand as read."""

    kyoku: int
    honba: int
    sticks: int
    scores: list[int]
    dora: list[int]
    ura: list[int]
    seats: list[SeatLog]
    name: str
    deltas: list[list[int]]
    details: list[list[Any]]


@dataclass
class Game:
    """A whole log as read."""

    players: int
    names: list[str]
    hands: list[Hand]
    sc: list[Any] | None


def _codes(text: str) -> list[int]:
    return [int(text[i : i + 2]) for i in range(0, len(text), 2)]


def read(obj: dict[str, Any]) -> Game:
    """Read a decoded tenhou.net/6 log, checking its shape as it goes."""
    assert set(obj) >= {"title", "name", "rule", "log"}, sorted(obj)
    players = 3 if "三" in obj["rule"]["disp"] else 4
    assert len(obj["name"]) == 4
    hands = []
    for raw in obj["log"]:
        assert len(raw) == 4 + 3 * 4 + 1, len(raw)
        kyoku, honba, sticks = raw[0]
        seats = [SeatLog(*raw[4 + 3 * s : 7 + 3 * s]) for s in range(4)]
        for seat in seats[players:]:
            assert seat == SeatLog([], [], []), seat
        assert all(len(seat.haipai) == 13 for seat in seats[:players])
        result = raw[-1]
        name = result[0]
        if name == RESULT_WIN:
            deltas = result[1::2]
            details = result[2::2]
        else:
            assert name in DRAW_NAMES + ABORT_NAMES, name
            deltas = [result[1]] if len(result) > 1 else []
            details = []
        hands.append(
            Hand(kyoku, honba, sticks, raw[1], raw[2], raw[3], seats, name, deltas, details)
        )
    return Game(players, obj["name"], hands, obj.get("sc"))


def _call_own(text: str) -> list[int]:
    """The caller's own tiles in a chi, pon or open kan string."""
    if text.startswith("c"):
        return _codes(text[3:])
    marker = re.search("[pm]", text)
    assert marker is not None and marker.start() % 2 == 0, text
    before, after = text[: marker.start()], text[marker.start() + 3 :]
    return _codes(before) + _codes(after)


def concealed(seat: SeatLog) -> Counter[int]:
    """The seat's concealed tiles at the end of the hand: the dealt tiles, plus every
    draw, less every discard, the own tiles of every call, kans and norths. Fails on a
    tile given away that the seat did not hold."""
    hand = Counter(seat.haipai)

    def give(code: int, why: Any) -> None:
        assert hand[code] > 0, f"{why}: {code} is not held ({sorted(hand.elements())})"
        hand[code] -= 1

    for index in range(max(len(seat.takes), len(seat.discards))):
        take = seat.takes[index] if index < len(seat.takes) else None
        if isinstance(take, int):
            hand[take] += 1
        elif isinstance(take, str):
            for code in _call_own(take):
                give(code, take)
        if index >= len(seat.discards):
            continue
        out = seat.discards[index]
        if isinstance(out, str) and out.startswith("r"):
            out = int(out[1:])
        if out == 60:
            assert isinstance(take, int), (index, seat.takes, seat.discards)
            give(take, "tsumogiri")
        elif isinstance(out, int) and out != 0:
            give(out, "discard")
        elif out == 0:
            assert isinstance(take, str) and "m" in take, (index, take)
        elif out == "f44":
            give(44, out)
        elif "a" in out:
            assert out.index("a") == 6 and len(out) == 9, out
            for code in _codes(out.replace("a", "")):
                give(code, out)
        else:
            assert "k" in out and len(out) == 9, out
            at = out.index("k")
            give(int(out[at + 1 : at + 3]), out)
    return +hand


def riichi_paid(hand: Hand, seat: int) -> bool:
    """The seat declared riichi and its stick went on the table."""
    discards = hand.seats[seat].discards
    declared = [i for i, d in enumerate(discards) if isinstance(d, str) and d.startswith("r")]
    if not declared:
        return False
    won_on = any(d[1] == seat and d[0] != seat for d in hand.details)
    return not (won_on and declared[-1] == len(discards) - 1)


def table_deltas(hand: Hand, players: int) -> list[int]:
    """What each seat gained or lost in the hand, riichi sticks included."""
    total = [0] * players
    for deltas in hand.deltas:
        assert len(deltas) == 4 and all(d == 0 for d in deltas[players:]), deltas
        total = [t + d for t, d in zip(total, deltas, strict=False)]
    return [t - (STICK if riichi_paid(hand, s) else 0) for s, t in enumerate(total)]


def every_tile(hand: Hand) -> Counter[int]:
    """Every tile the hand shows: dealt, drawn and the indicators."""
    seen: Counter[int] = Counter(hand.dora + hand.ura)
    for seat in hand.seats:
        seen.update(seat.haipai)
        seen.update(t for t in seat.takes if isinstance(t, int))
    return seen


def discarded(seat: SeatLog) -> list[int]:
    """The tiles the seat put out (a tsumogiri resolved to the tile drawn, a north pulled
    counted), in order."""
    out = []
    for index, item in enumerate(seat.discards):
        code = item
        if isinstance(code, str) and code.startswith("r"):
            code = int(code[1:])
        if code == 60:
            code = seat.takes[index]
        if code == "f44":
            code = 44
        if isinstance(code, int) and code != 0:
            out.append(code)
    return out


def calls(hand: Hand, players: int) -> list[tuple[int, int, int]]:
    """Every chi, pon and open kan as (caller, the seat called from, the tile called)."""
    out = []
    for seat in range(players):
        for take in hand.seats[seat].takes:
            if not isinstance(take, str):
                continue
            if take.startswith("c"):
                out.append((seat, (seat + 3) % 4, int(take[1:3])))
                continue
            at = re.search("[pm]", take)
            assert at is not None, take
            # The marker first: from the left; second: across; last: from the right.
            relative = {0: 3, 2: 2}.get(at.start(), 1)
            out.append((seat, (seat + relative) % 4, int(take[at.start() + 1 : at.start() + 3])))
    return out
