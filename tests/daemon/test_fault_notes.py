"""Every fault is logged once and journalled as a note; a fault reported again while it
stands is counted, not repeated; staff read the history back with ``tablectl journal
notes`` (issue 29 item 5)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge import messages as m
from firmware_bridge.messages import Key as K
from tablectl.cli import main
from tablectl.daemon import JournalRecorder
from tablectl.journal import Journal
from tests.daemon.test_mqtt_contract import CheckedPublisher
from tests.daemon.test_table import Rig

#: The walls of a TableStatus (what they say does not matter here).
WALLS = (m.WallState.DONE,) * 4


def _fault_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal.open(tmp_path / "journal.sqlite3")


async def _rig(journal: Journal, publisher: CheckedPublisher | None = None) -> Rig:
    recorder = JournalRecorder(journal, "t1", "jboy", None)
    rig = Rig("jboy", recorder=recorder, publisher=publisher)
    await rig.up()
    await rig.start_hand()
    return rig


async def test_a_tile_count_fault_is_logged_and_journalled_once(
    journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    publisher = CheckedPublisher("table", 4)  # what it publishes meets the MQTT contract
    rig = await _rig(journal, publisher)
    tile_count = m.WallStatus(wall=2, state=m.WallState.TILE_COUNT_ERROR)
    with caplog.at_level(logging.INFO):
        await rig.send(tile_count)
        for _ in range(3):  # the table says it again (a reconnect, a status answer)
            await rig.send(tile_count)
        await rig.send(m.TableStatus(walls=WALLS, faults=(m.FaultCode.TILE_COUNT,)))
    assert _fault_lines(caplog) == ["[table] fault TILE_COUNT: wall 2 tile count"]
    notes = [(n.kind, n.detail) for n in journal.notes()]
    assert notes == [("fault", {"code": "TILE_COUNT", "text": "wall 2 tile count"})]
    assert publisher.seen["events"][-1] == {
        "v": 1, "type": "fault", "seat": None, "code": "TILE_COUNT", "text": "wall 2 tile count",
    }  # fmt: skip
    await rig.key(0, K.OK)  # staff fixed the wall
    cleared = journal.notes()[-1]
    assert (cleared.kind, cleared.detail) == (
        "fault_cleared", {"codes": ["TILE_COUNT"], "repeats": {"TILE_COUNT": 3}},
    )  # fmt: skip
    await rig.send(tile_count)  # a new fault after the clear: logged and noted again
    assert [n.kind for n in journal.notes()] == ["fault", "fault_cleared", "fault"]


async def test_a_latched_fault_and_host_silent_are_noted_once_each(
    journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    rig = await _rig(journal)
    with caplog.at_level(logging.INFO):
        await rig.send(
            m.TableStatus(walls=WALLS, faults=(m.FaultCode.MOTOR_STALL, m.FaultCode.HOST_SILENT))
        )
        await rig.send(m.Fault(code=m.FaultCode.HOST_SILENT, text=""))
    assert _fault_lines(caplog) == [
        "[table] fault MOTOR_STALL (held latched by the table)",
        "[table] fault HOST_SILENT: the table stopped its motors while we were away",
    ]
    details = [n.detail for n in journal.notes()]
    assert details == [
        {"code": "MOTOR_STALL", "text": "", "latched": True},
        {"code": "HOST_SILENT", "text": "the table stopped its motors while we were away"},
    ]


async def test_staff_read_the_fault_history_back(
    journal: Journal, capsys: pytest.CaptureFixture[str]
) -> None:
    rig = await _rig(journal)
    await rig.key(2, K.STAFF_CALL, K.DIGIT_0)
    await rig.send(m.Fault(code=m.FaultCode.MOTOR_STALL, text="wall 1 stuck"))
    await rig.key(1, K.OK)
    journal.close()
    path = str(journal.path)
    assert main(["journal", "notes", "--journal", path, "--faults"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["time", "game", "seat", "kind", "what"]
    assert [line.split(None, 5)[4:] for line in lines[1:]] == [
        ["fault", "MOTOR_STALL: wall 1 stuck"],
        ["fault_cleared", "cleared MOTOR_STALL"],
    ]
    assert main(["journal", "notes", "--journal", path, "--json"]) == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    assert [r["kind"] for r in rows] == ["staff_call", "fault", "fault_cleared"]
    assert rows[1]["code"] == "MOTOR_STALL" and rows[1]["game"] is not None
    assert main(["journal", "notes", "nope", "--journal", path]) == 2
    assert capsys.readouterr().err.strip().endswith("no game 'nope' in the journal")


async def test_host_silent_of_every_lost_session_is_answered_once_and_counted(
    journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    rig = await _rig(journal)
    await rig.table.link_lost()
    await rig.table.link_up(rebooted=False)
    del rig.sent[:]
    silent = m.Fault(code=m.FaultCode.HOST_SILENT, text="host silent: motors stopped")
    with caplog.at_level(logging.INFO):
        for _ in range(15):  # what a 120 s unplug brought: one per session lost meanwhile
            await rig.send(silent)
        rig.table.fault_flow.report_counted()
        rig.table.fault_flow.report_counted()  # nothing more to say
    assert _fault_lines(caplog) == ["[table] fault HOST_SILENT: host silent: motors stopped"]
    assert sum(isinstance(x, m.FaultClear) for x in rig.sent) == 1
    counted = [r.getMessage() for r in caplog.records if "more times" in r.getMessage()]
    assert counted == [
        "[table] HOST_SILENT came 14 more times (one for each session the table lost while we"
        " were away): answered once"
    ]
    notes = [(n.kind, n.detail) for n in journal.notes()]
    assert notes[-2:] == [
        ("fault", {"code": "HOST_SILENT", "text": "host silent: motors stopped"}),
        ("fault_repeats", {"code": "HOST_SILENT", "count": 14}),
    ]
    await rig.table.link_lost()
    await rig.table.link_up(rebooted=False)
    await rig.send(silent)  # the next outage: answered and noted again
    assert [n.kind for n in journal.notes()][-1] == "fault"
