"""Alerts for the parlor's staff (tablectl/alerts.py, docs/mqtt.md "State"): what raises
them, what ends them, and acknowledgements."""

from __future__ import annotations

import json

import pytest

from firmware_bridge import messages as m
from firmware_bridge.messages import Key as K
from tablectl.alerts import AlertBoard
from tests.daemon.test_table import Rig
from tests.helpers import RecordingPublisher


def test_a_repeated_alert_is_one_alert_and_ids_are_never_reused() -> None:
    board = AlertBoard()
    first = board.raise_alert("staff_call", 2, "STAFF CALL", 100.0)
    assert board.raise_alert("staff_call", 2, "STAFF CALL", 105.0) == first
    other = board.raise_alert("staff_call", 1, "STAFF CALL", 106.0)
    assert (first.id, other.id) == ("a1", "a2")
    assert board.acknowledge("a1", "Mika") == first
    again = board.raise_alert("staff_call", 2, "STAFF CALL", 110.0)
    assert again.id == "a3" and again.since == 110.0
    with pytest.raises(ValueError, match="unknown alert kind"):
        board.raise_alert("fire", None, "", 0.0)


def test_a_call_ends_when_acknowledged_a_condition_only_when_it_ends() -> None:
    board = AlertBoard()
    call = board.raise_alert("last_game", 0, "LAST GAME", 1.0)
    fault = board.raise_alert("fault", None, "MOTOR_STALL: wall 2", 2.0)
    assert board.acknowledge(call.id, "Mika") is not None
    assert board.acknowledge(fault.id, "Mika") is not None
    assert [(a["kind"], a["acked_by"]) for a in board.as_list()] == [("fault", "Mika")]
    assert board.acknowledge(fault.id, "Ren") is None  # already on it
    assert board.acknowledge("a99", "Ren") is None
    assert board.resolve("fault") and len(board) == 0
    assert not board.resolve("fault")


async def test_the_table_raises_and_ends_each_alert_and_publishes_it() -> None:
    publisher = RecordingPublisher()
    rig = Rig("jboy", publisher=publisher, wall_time=lambda: 1_764_000_000.0)
    await rig.up()
    await rig.start_hand()

    def kinds() -> list[tuple[str, int | None, str | None]]:
        return [(a["kind"], a["seat"], a["acked_by"]) for a in publisher.states[-1]["alerts"]]

    await rig.key(2, K.STAFF_CALL, K.DIGIT_0)
    assert kinds() == [("staff_call", 2, None)]
    await rig.key(1, K.LAST_GAME)
    assert kinds()[-1] == ("last_game", 1, None)
    await rig.key(1, K.LAST_GAME)  # called off
    assert kinds() == [("staff_call", 2, None)]
    await rig.send(m.TrayTotals(totals=(25000, 25000, 24000, 25000)))
    assert kinds()[-1] == ("tray_mismatch", None, None)
    assert publisher.states[-1]["alerts"][-1]["text"] == "TRAY 2:24000/25000"
    await rig.send(m.TrayTotals(totals=(25000, 25000, 25000, 25000)))
    assert kinds() == [("staff_call", 2, None)]
    await rig.send(m.Fault(code=m.FaultCode.MOTOR_STALL, text="wall 2 stuck"))
    assert kinds()[-1] == ("fault", None, None)
    assert publisher.states[-1]["phase"] == "fault"
    await rig.key(0, K.OK)  # cleared at the table
    assert kinds() == [("staff_call", 2, None)]
    await rig.table.link_lost()
    assert kinds()[-1] == ("link_down", None, None)
    assert publisher.states[-1]["link"] == "down"
    await rig.table.link_up(rebooted=False)
    assert kinds() == [("staff_call", 2, None)] and publisher.states[-1]["link"] == "up"

    alert_id = publisher.states[-1]["alerts"][0]["id"]
    assert rig.table.acknowledge_alert(alert_id, "Mika", via="mqtt") is None
    assert kinds() == []
    assert publisher.events[-1] == {
        "type": "staff_action", "seat": 2, "action": "alert_ack", "alert": alert_id,
        "kind": "staff_call", "by": "Mika", "via": "mqtt",
    }  # fmt: skip
    why = rig.table.acknowledge_alert(alert_id, "Ren", via="mqtt")
    assert why == f"no open alert {alert_id!r} to acknowledge"


async def test_an_open_staff_call_survives_a_daemon_restart() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.start_hand()
    await rig.key(3, K.STAFF_CALL, K.DIGIT_0)
    await rig.key(0, K.LAST_GAME)
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    assert snapshot["staff_calls"] == [3]
    assert [(c["kind"], c["seat"]) for c in snapshot["calls"]] == [("staff_call", 3),
                                                                   ("last_game", 0)]  # fmt: skip
    after = Rig("jboy", state=rig.table.state)
    after.table.restore_flow(snapshot)
    kinds = [(a["kind"], a["seat"]) for a in after.table.alerts.as_list()]
    assert kinds == [("staff_call", 3), ("last_game", 0)]
    # A flow stored before the calls kept their words (seats only) still restores them.
    old = {k: v for k, v in snapshot.items() if k != "calls"}
    before = Rig("jboy", state=rig.table.state)
    before.table.restore_flow(old)
    kinds = [(a["kind"], a["seat"]) for a in before.table.alerts.as_list()]
    assert kinds == [("staff_call", 3), ("last_game", 0)]


async def test_the_state_names_the_seats_and_carries_the_last_hand() -> None:
    publisher = RecordingPublisher()
    rig = Rig("jboy", publisher=publisher, seat_names=["Aki", "Ben", "Chie", "Dai"])
    await rig.up()
    await rig.start_hand()
    assert publisher.states[-1]["names"] == ["Aki", "Ben", "Chie", "Dai"]
    assert publisher.states[-1]["last_hand"] is None
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # PAO?, CHIPS?
    [hand] = publisher.hands
    assert hand["hand"] == 1 and hand["result"] == "tsumo"
    assert hand["scores"] == list(rig.table.state.scores)
    assert publisher.states[-1]["last_hand"]["result"] == "tsumo"


async def test_a_staff_call_from_a_seat_answering_a_prompt_is_not_lost() -> None:
    publisher = RecordingPublisher()
    rig = Rig(publisher=publisher, wall_time=lambda: 1_764_000_000.0)
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.MENU, K.DIGIT_1, K.OK)  # nine terminals: every seat asked to CONFIRM
    assert rig.lines(2)[0] == "CONFIRM"
    await rig.key(2, K.STAFF_CALL, K.DIGIT_0)
    alerts = publisher.states[-1]["alerts"] if publisher.states else []
    assert [(a["kind"], a["seat"]) for a in alerts] == [("staff_call", 2)]
    assert rig.lines(2)[0] == "CONFIRM"  # and the seat still has its hand to confirm


async def test_alerts_name_the_seat_and_player_in_words_fixed_when_raised() -> None:
    publisher = RecordingPublisher()
    rig = Rig("jboy", publisher=publisher, seat_names=["Aki", "Ben", "Chie", "Dai"])
    await rig.up()
    await rig.start_hand()

    def words() -> list[tuple[str, str | None, str]]:
        return [(a["kind"], a["where"], a["words"]) for a in publisher.states[-1]["alerts"]]

    await rig.key(1, K.STAFF_CALL, K.DIGIT_0)
    assert words() == [("staff_call", "South (Ben)", "South (Ben): staff call")]
    await rig.take(1)
    await rig.key(1, K.TSUMO, K.DIGIT_3, K.OK, K.DIGIT_3, K.DIGIT_0, K.OK, K.OK)
    await rig.confirm_all()
    assert rig.table.state.dealer == 1  # Ben deals now: his seat is East
    hand = publisher.hands[-1]  # the hand keeps its own dealer; keyed: no points nor yaku
    assert (hand["dealer"], hand["riichi"]) == (0, [])
    assert hand["values"] == [{"seat": 1, "han": 3, "fu": 30, "yakuman": 0}]
    await rig.key(1, K.STAFF_CALL, K.DIGIT_0)  # pressed again: the same alert, same words
    await rig.key(3, K.LAST_GAME)
    assert words() == [
        ("staff_call", "South (Ben)", "South (Ben): staff call"),
        ("last_game", "West (Dai)", "West (Dai): last game"),
    ]
    scores = rig.table.state.scores
    await rig.send(m.TrayTotals(totals=(scores[0], scores[1], scores[2] - 1000, scores[3])))
    tray = publisher.states[-1]["alerts"][-1]
    assert tray["text"] == f"TRAY 2:{scores[2] - 1000}/{scores[2]}"  # the old field, kept
    assert tray["where"] is None
    assert (
        tray["words"]
        == f"Trays differ: South (Chie) tray {scores[2] - 1000:,}, score {scores[2]:,}"
    )
    # The same as values, for a page in another language (MQTT revision 7).
    alerts = publisher.states[-1]["alerts"]
    assert [a["params"] for a in alerts] == [
        {"seat": 1, "wind": "S", "player": "Ben"},
        {"seat": 3, "wind": "W", "player": "Dai"},
        {"trays": [{"seat": 2, "wind": "S", "player": "Chie", "tray": scores[2] - 1000,
                    "score": scores[2]}]},
    ]  # fmt: skip

    # A daemon restarted now (Ben deals) raises the calls again as they were raised.
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    after = Rig("jboy", state=rig.table.state, seat_names=["Aki", "Ben", "Chie", "Dai"])
    after.table.restore_flow(snapshot)
    restored = [a for a in after.table.alerts.as_list() if a["kind"] != "tray_mismatch"]
    assert [(a["where"], a["words"], a["params"]["wind"]) for a in restored] == [
        ("South (Ben)", "South (Ben): staff call", "S"),
        ("West (Dai)", "West (Dai): last game", "W"),
    ]
    since = {a["kind"]: a["since"] for a in alerts}
    assert [a["since"] for a in restored] == [since["staff_call"], since["last_game"]]
