"""``ABORT?`` opens with nothing chosen (issue 29: random keys on a bot's seat).

A win taken back at ``OK?`` left that prompt's page (0) as the console's choice; the
seat's MENU then OK at ``ABORT?`` looked 0 up in the abort menu, and the KeyError stopped
the daemon.
"""

from __future__ import annotations

from tests.daemon.test_tile_table import K, started, tsumo_layout


async def test_ok_at_abort_with_nothing_chosen_declares_nothing() -> None:
    rig = await started(tsumo_layout())
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    await rig.key(0, K.TSUMO, K.CANCEL)  # OK? (its first page chosen), the win taken back
    await rig.key(0, K.MENU, K.OK)
    assert rig.lines(0)[0] == "ABORT?" and rig.table.phase == "table_playing_turn"
    await rig.key(0, K.DIGIT_1)
    assert rig.lines(0)[0].startswith("ABORT? ")  # a reason chosen now, as before
