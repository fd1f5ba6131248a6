"""Scripted tile-aware hands for the game-log tests: what the generated games
(tests/tiles/gamegen.py) never or seldom play, with chosen tiles (tests/tiles/kit.py).

Every event goes through the rules core as it is made (``Table.ok``), so each hand is a
legal one: a win is complete and entered at the scorer's value.  Three games:

* tenhou: nine terminals, four winds, four riichi (the sticks stay on the table), a
  double ron collecting them with three honba, a triple ron (an abort), a dealer's tsumo
  entered, taken back and entered again, four kans, a nagashi mangan;
* ariari: a chombo after a riichi stick went out, then a daisangen ronned with pao;
* ema: a tenpai dealer's exhaustive draw, then three winners on one discard (one of them
  in riichi) with the honba paid to each.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tablectl.rules import events as ev
from tablectl.rules import tiletrack
from tests.tiles.kit import Table, play_out

#: Thirteen tiles with nine or more terminal and honour kinds, and a 5p to deal in.
TERMINALS_AND_5P = "5p 19m 19p 19s 1234z 67z"
#: Three hands waiting on 5p with a yaku (tanyao; pinfu too for the first and third).
WAITING_ON_5P = ("234m 678m 234s 88s 34p", "345m 567m 345s 22s 46p", "456m 678m 456s 77s 67p")


def _start(table: Table, **layout: Any) -> None:
    """Dice, a layout dealing the hands given (the dealer the core says), the deal."""
    table.start(dealer=table.state.dealer, **layout)


def _ron(table: Table, frm: int, *winners: int) -> ev.Ron:
    """A ron off ``frm`` by ``winners``, each at the scorer's value."""
    return ev.Ron((frm,), tuple(table.value(w, tsumo=False, discarder=frm) for w in winners))


def _tsumogiri_round(table: Table, seats: range | list[int]) -> None:
    for seat in seats:
        table.tsumogiri(seat)


def tenhou_game() -> list[dict[str, Any]]:
    """E1 three times aborted, its double ron; E2's triple ron, a corrected tsumo, four
    kans, nagashi."""
    t = Table("tenhou")
    # E1: the dealer's nine terminals on its first draw.
    _start(t, hands={0: "19m 19p 19s 1234z 234m"})
    t.take(0)
    t.ok(ev.Abort("nine_terminals"))
    # E1 1 honba: every seat's first discard is the east wind.
    hands = {
        0: "1z 123m 456m 789p 11s 9s",
        1: "1z 123p 456p 789m 22s 8s",
        2: "1z 234s 567s 44m 55p 66p",
        3: "1z 345s 678s 77m 88p 99p",
    }
    _start(t, hands=hands)
    for seat in range(4):
        t.turn(seat, "1z")
    t.ok(ev.Abort("four_winds"))
    # E1 2 honba: four riichi, each declared with the tile drawn in hand.
    hands = {
        0: "123m 456m 789m 123p 9p",
        1: "123m 456m 789m 456p 9p",
        2: "123s 456s 789s 123p 9s",
        3: "123s 456s 789s 456p 1z",
    }
    _start(t, hands=hands, draws=["2z", "3z", "4z", "5z"])
    for seat in range(4):
        t.take(seat)
        t.ok(ev.Riichi(seat))
        t.discard(seat, "2345z"[seat] + "z")
    t.ok(ev.Abort("four_riichi"))
    # E1 3 honba, four sticks: seats 1 and 2 ron the dealer's 5p; seat 1, the nearer,
    # takes the honba and the sticks.
    _start(t, hands={0: TERMINALS_AND_5P, 1: WAITING_ON_5P[0], 2: WAITING_ON_5P[1]})
    t.turn(0, "5p")
    t.ok(_ron(t, 0, 1, 2))
    # E2: three seats ron the dealer's 5p: an abort.
    _start(t, hands={1: TERMINALS_AND_5P, 2: WAITING_ON_5P[0], 3: WAITING_ON_5P[1],
                     0: WAITING_ON_5P[2]})  # fmt: skip
    t.turn(1, "5p")
    t.ok(_ron(t, 1, 2, 3, 0))
    # E2 1 honba: the dealer's tsumo, entered, taken back and entered again.
    _start(t, hands={1: "123m 456m 789m 234p 5p"}, draws=["7z", "7z", "7z", "7z", "5p"])
    _tsumogiri_round(t, [1, 2, 3, 0])
    t.take(1)
    t.ok(t.tsumo(1), ev.Undo(), t.tsumo(1))
    # E2 2 honba: two closed kans each by seats 1 and 2: four kans, an abort.
    _start(t, hands={1: "1111m 2222m 34567p", 2: "3333m 4444m 34567s"}, draws=["7z", "6z"])
    for seat, kinds in ((1, "12"), (2, "34")):
        t.take(seat)
        drawn = t.seat(seat).drawn
        for k in kinds:
            four = tuple(x for x in t.seat(seat).concealed if x // 4 == int(k) - 1)
            t.ok(ev.Kan(seat, "closed", four))
            t.take(seat)
        assert drawn is not None
        t.ok(ev.Discard(seat, drawn))
    t.ok(ev.Abort("four_kans"))
    # E2 3 honba: the dealer draws and discards only terminals and honours: nagashi.
    simples = {
        0: "22m 33m 44m 55p 66p 77p 8s",
        1: "234m 345p 456s 678s 8p",
        2: "567m 678p 234s 22s 33p",
        3: "678m 88m 44p 55s 66s 77s",
    }
    orphans = ["1m", "9m", "1p", "9p", "1s", "9s", "1z", "2z", "3z", "4z", "5z", "6z", "7z"]
    # The dealer's 18 draws, every fourth; the others' are left to the rest.
    draws = [x for o in [*orphans, *orphans[:5]] for x in (o, None, None, None)]
    _start(t, hands=simples, draws=draws)
    play_out(t)
    expected = tiletrack.expected_draw(t.state)
    assert expected is not None and expected.nagashi == (1,), expected
    t.ok(expected)
    return t.lines[1:]


def ariari_game() -> list[dict[str, Any]]:
    """E1: a chombo after seat 2's riichi; E1 again: seat 1's daisangen ronned off seat 2,
    seat 0 responsible (pao) for feeding the third dragon."""
    t = Table("ariari")
    _start(t, hands={2: "123m 456m 789m 123p 9p"}, draws=["7z", "7z", "2z", "3z"])
    _tsumogiri_round(t, [0, 1])
    t.take(2)
    t.ok(ev.Riichi(2))
    t.discard(2, "2z")
    t.take(3)
    t.ok(ev.Chombo(3))
    hands = {
        0: "7z 111m 999m 111s 99s 1p",
        1: "55z 66z 77z 234m 8s 1p 9p 1s",
        2: "5z 22p 33p 44p 222m 333m",
        3: "6z 666p 777p 888p 567m",
    }
    _start(t, hands=hands, draws=["2z", "3z", "4z", "2z", "3z", "4z", "2z", "3z", "8s"])
    _tsumogiri_round(t, [0, 1])
    t.turn(2, "5z")
    t.call(1, "pon", 2, "55z")
    t.discard(1, "1p")
    t.tsumogiri(2)
    t.turn(3, "6z")
    t.call(1, "pon", 3, "66z")
    t.discard(1, "9p")
    _tsumogiri_round(t, [2, 3])
    t.turn(0, "7z")
    t.call(1, "pon", 0, "77z")
    t.discard(1, "1s")
    t.turn(2, "8s")
    (win,) = _ron(t, 2, 1).winners
    assert win.yakuman == 1, win
    t.ok(ev.Ron((2,), (replace(win, pao=0),)))
    return t.lines[1:]


def ema_game() -> list[dict[str, Any]]:
    """E1: played out, the dealer tenpai; E1 1 honba: seats 1 (in riichi), 2 and 3 ron the
    dealer's 5p, each paid the honba."""
    t = Table("ema")
    _start(t, hands={0: "123m 456m 789m 123p 9p"})
    play_out(t)
    expected = tiletrack.expected_draw(t.state)
    assert expected is not None and 0 in expected.tenpai, expected
    t.ok(expected)
    hands = {0: TERMINALS_AND_5P, 1: WAITING_ON_5P[0], 2: WAITING_ON_5P[1], 3: WAITING_ON_5P[2]}
    _start(t, hands=hands, draws=["5z", "5z", "5z", "5z", "2z"])
    t.tsumogiri(0)
    t.take(1)
    t.ok(ev.Riichi(1))
    t.discard(1, "5z")
    _tsumogiri_round(t, [2, 3])
    t.turn(0, "5p")
    t.ok(_ron(t, 0, 1, 2, 3))
    return t.lines[1:]


#: Each scripted game by name: its preset and how to play it.
SCRIPTED = {
    "tenhou-scripted": ("tenhou", tenhou_game),
    "ariari-scripted": ("ariari", ariari_game),
    "ema-scripted": ("ema", ema_game),
}
