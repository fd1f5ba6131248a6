"""The parlor's money at a table without tile readers (docs/console.md, "Money"): the
``CHIPS?`` step of a keyed win, the winner's line, the chips on the score page and the P
at ``GAME OVER``, and staff corrections taking chips back with the hand."""

from __future__ import annotations

import json

from firmware_bridge import messages as m
from tablectl.console.model import LINE, WinEntry
from tablectl.console.prompts import Prompt
from tablectl.console.wins import win_value
from tests.daemon.test_table import Rig

K = m.Key


async def riichi_ron(rig: Rig, winner: int = 1, discarder: int = 2) -> None:
    """Seat ``winner`` declares riichi (its stick taken) and rons ``discarder``'s discard."""
    await rig.up()
    await rig.start_hand()
    await rig.take(winner)
    await rig.key(winner, K.RIICHI)
    await rig.take(discarder)
    assert winner in rig.state.riichi
    await rig.key(winner, K.RON)
    for seat in range(rig.players):
        if seat not in (winner, discarder):
            await rig.key(seat, K.CANCEL)
    assert rig.lines(winner)[0] == "HAN?"


async def test_a_riichi_winner_enters_chips_the_discarder_pays_them() -> None:
    rig = Rig("sanma-free")
    await riichi_ron(rig)
    await rig.type(1, "3")
    await rig.key(1, K.OK)  # flat 30 fu: no FU?
    assert rig.lines(1) == ("CHIPS?", "OK ALONE: NONE")
    await rig.type(1, "2")
    assert rig.lines(1)[0] == "CHIPS? 2"
    await rig.key(1, K.OK)
    assert rig.state.chips == (0, 2, -2)
    assert rig.table.phase == "table_settlement"
    last = rig.table.core.last_hand
    assert last is not None
    won, paid = last["deltas"][1], last["deltas"][2]  # the riichi stick back with the win
    assert rig.lines(1) == ("CONFIRM 3 HAN", f"+{won} = {rig.state.scores[1]} +2")
    assert rig.lines(2) == ("CONFIRM", f"{paid} = {rig.state.scores[2]} -2")
    assert rig.lines(0) == ("CONFIRM", f"0 = {rig.state.scores[0]}")
    await rig.confirm_all()
    # The score page shows each seat's chips during the game.
    assert rig.lines(1)[1] == "CHIPS +2" and rig.lines(2)[1] == "CHIPS -2"
    assert rig.lines(0)[1] == "CHIPS +0"


async def test_ok_with_nothing_typed_is_no_chips() -> None:
    rig = Rig("sanma-free")
    await riichi_ron(rig)
    await rig.type(1, "1")
    await rig.key(1, K.OK)
    await rig.key(1, K.OK)
    assert rig.table.phase == "table_settlement"
    assert rig.state.chips == (0, 0, 0)
    assert rig.lines(1)[0] == "CONFIRM 1 HAN" and rig.lines(1)[1].endswith(" +0")


async def test_an_absurd_chip_count_is_refused_and_changes_nothing() -> None:
    rig = Rig("sanma-free")
    await riichi_ron(rig)
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    await rig.type(1, "999")  # two digits at most: 99
    assert rig.lines(1)[0] == "CHIPS? 99"
    before = rig.state
    await rig.key(1, K.OK)
    assert rig.lines(1) == ("CHIPS?", "! at most 23 chips")
    assert rig.state is before and rig.table.phase == "table_result_entry"
    await rig.type(1, "23")  # four red, ippatsu, four ura, sixteen kan-ura at most: 23
    await rig.key(1, K.OK)
    assert rig.state.chips == (0, 23, -23)


async def test_no_chips_asked_where_the_winner_cannot_earn_any() -> None:
    # sanma-free: only a riichi win earns chips; ariari has none at all.
    for preset in ("sanma-free", "ariari"):
        rig = Rig(preset)
        await rig.up()
        await rig.start_hand()
        await rig.key(1, K.RON)
        for seat in range(2, rig.players):
            await rig.key(seat, K.CANCEL)
        await rig.type(1, "5")
        await rig.key(1, K.OK)
        assert rig.table.phase == "table_settlement", preset
        assert rig.state.chips == (0,) * rig.players
    assert rig.lines(1) == ("CONFIRM", "+8000 = 33000")  # ariari: no chips shown


async def test_chips_without_riichi_and_the_yakuman_chips_follow_from_the_entry() -> None:
    # jboy: red and gold fives earn chips on any win; a yakuman adds its 5 chips.
    rig = Rig("jboy", new_games=False)
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.RON)
    await rig.key(2, K.CANCEL)
    await rig.key(3, K.CANCEL)
    await rig.key(1, K.MENU, K.OK)  # YAKUMAN x1, then PAO?
    assert rig.lines(1)[0] == "PAO?"
    await rig.key(1, K.OK)
    assert rig.lines(1) == ("CHIPS?", "+5 FOR YAKUMAN")
    await rig.type(1, "4")
    await rig.key(1, K.OK)
    assert rig.lines(1) == ("CHIPS?", "! at most 3 chips")
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    assert rig.state.chips == (-7, 7, 0, 0)
    # Seat 0 went bust: GAME OVER, and jboy settles the chips alone in P (100P a chip).
    final = rig.state.final
    assert final is not None and final.money is not None
    assert final.money.total == (-700, 700, 0, 0)
    assert rig.lines(1) == ("GAME OVER", "#1 57000 +700P")
    assert rig.lines(0) == ("GAME OVER", "#4 -7000 -700P")
    await rig.confirm_all()  # no new game here: the score page keeps the P
    assert rig.lines(1) == ("S 57000", "#1 +700P")


async def test_cancel_at_chips_clears_then_goes_back_to_the_value() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.RON)
    await rig.key(2, K.CANCEL)
    await rig.key(3, K.CANCEL)
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    await rig.type(1, "30")
    await rig.key(1, K.OK)
    await rig.type(1, "1")
    await rig.key(1, K.CANCEL)
    assert rig.lines(1)[0] == "CHIPS?"
    await rig.key(1, K.CANCEL)
    assert rig.lines(1)[0] == "HAN?"
    entry = rig.table.core.entry(1)
    assert entry is not None and (entry.han, entry.fu, entry.chips) == (0, None, None)


async def test_a_correction_takes_the_chips_back_with_the_hand() -> None:
    rig = Rig("sanma-free")
    await riichi_ron(rig)
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    await rig.type(1, "3")
    await rig.key(1, K.OK)
    assert rig.state.chips == (0, 3, -3)
    await rig.key(0, K.CANCEL)  # the result is wrong
    assert rig.lines(1) == ("HAN?", "AGAIN")
    assert rig.state.chips == (0, 0, 0)
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    await rig.type(1, "1")
    await rig.key(1, K.OK)
    assert rig.state.chips == (0, 1, -1)


async def test_a_restart_at_chips_keeps_what_was_entered() -> None:
    rig = Rig("sanma-free")
    await riichi_ron(rig)
    await rig.type(1, "2")
    await rig.key(1, K.OK)
    await rig.type(1, "4")
    flow = json.loads(json.dumps(rig.table.flow_snapshot()))
    again = Rig("sanma-free", state=rig.state)
    again.table.restore_flow(flow)
    await again.up()
    assert again.lines(1)[0] == "CHIPS? 4"
    await again.key(1, K.OK)
    assert again.state.chips == (0, 4, -4)


async def test_the_winner_line_shows_han_and_fu_and_the_total_stays_on_line_2() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.start_hand()
    await rig.key(2, K.RON)
    await rig.key(1, K.CANCEL)
    await rig.key(3, K.CANCEL)
    await rig.type(2, "4")
    await rig.key(2, K.OK)
    await rig.type(2, "110")
    await rig.key(2, K.OK, K.DIGIT_3, K.OK)
    assert rig.lines(2) == ("CONFIRM 4 HAN 110 FU", f"+8000 = {rig.state.scores[2]} +3")
    await rig.send(m.TrayTotals(totals=(25000,) * 4))  # the winner's sticks not moved yet
    assert rig.lines(2)[0] == "CONFIRM !TRAY 25000"
    await rig.send(m.TrayTotals(totals=rig.state.scores))
    assert rig.lines(2)[0] == "CONFIRM 4 HAN 110 FU"
    await rig.confirm_all()
    assert rig.lines(2) == (f"S {rig.state.scores[2]}", "CHIPS +3")  # seat 1 deals now


def test_a_winner_value_fits_after_the_prompt() -> None:
    values = [
        win_value(WinEntry(seat=0, han=3, fu=40)),
        win_value(WinEntry(seat=0, han=4, fu=110)),
        win_value(WinEntry(seat=0, han=12, fu=40)),
        win_value(WinEntry(seat=0, yakuman=2)),
        win_value(WinEntry(seat=0, han=2, fu=30), fu_counts=False),
    ]
    assert values == ["3 HAN 40 FU", "4 HAN 110 FU", "12 HAN", "YAKUMAN x2", "2 HAN"]
    assert all(len(f"{Prompt.CONFIRM} {v}") <= LINE for v in values)
