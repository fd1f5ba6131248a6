"""Game control from the parlor's dashboard at the table (tablectl/console/staffmenu.py,
``StaffFlow.staff_command``): what a console's staff menu does, journalled and published
with the staff member's name."""

from __future__ import annotations

from firmware_bridge import messages as m
from tablectl.phases import HAND_PHASES
from tests.daemon.test_table import Rig
from tests.helpers import RecordingPublisher

BY = "Mika (parlor)"


def actions(publisher: RecordingPublisher) -> list[dict[str, object]]:
    return [e for e in publisher.events if e["type"] == "staff_action"]


async def test_chombo_and_false_call_from_the_parlor_name_the_seat_and_the_staff() -> None:
    publisher = RecordingPublisher()
    rig = Rig("jboy", publisher=publisher)
    await rig.up()
    assert await rig.table.staff_flow.staff_command("chombo", None, by=BY, seat=2) == "no hand now"
    await rig.start_hand()
    assert (
        await rig.table.staff_flow.staff_command("chombo", None, by=BY)
        == "chombo needs the seat it is for"
    )
    assert await rig.table.staff_flow.staff_command("false_call", None, by=BY, seat=1) is None
    assert actions(publisher)[-1] == {
        "type": "staff_action", "seat": None, "action": "false_call", "target": 1, "by": BY,
    }  # fmt: skip
    assert rig.table.phase in HAND_PHASES  # a false call leaves the hand going on
    before = list(rig.table.state.scores)
    assert await rig.table.staff_flow.staff_command("chombo", None, by=BY, seat=2) is None
    assert actions(publisher)[-1]["action"] == "chombo" and actions(publisher)[-1]["by"] == BY
    assert rig.table.state.scores[2] < before[2]
    assert rig.table.phase not in HAND_PHASES  # a chombo ends the hand


async def test_tray_override_and_abandon_from_the_parlor() -> None:
    publisher = RecordingPublisher()
    rig = Rig("jboy", publisher=publisher)
    await rig.up()
    await rig.start_hand()
    assert (
        await rig.table.staff_flow.staff_command("tray_override", None, by=BY) == "the trays agree"
    )
    await rig.send(m.TrayTotals(totals=(25000, 25000, 24000, 25000)))
    assert await rig.table.staff_flow.staff_command("tray_override", None, by=BY) is None
    assert rig.table.trays.override
    assert actions(publisher)[-1] == {
        "type": "staff_action", "seat": None, "action": "tray_override", "by": BY,
    }  # fmt: skip
    assert await rig.table.staff_flow.staff_command("abandon", "kenko", by=BY) is None
    action = actions(publisher)[-1]
    assert (action["action"], action["rules"], action["by"]) == ("new_game", "jboy", BY)
    assert action["abandoned"] is True and publisher.games[-1]["abandoned"] is True
    assert not rig.table.trays.override  # a new game: the trays are compared afresh
