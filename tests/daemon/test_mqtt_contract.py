"""The public MQTT contract (docs/mqtt.md, docs/mqtt/*.schema.json): every message a
table publishes, through the real publisher's encoding, checked against its schema during
whole games of every preset with faults, staff calls, tray mismatches, link drops,
restarts, corrections, abandoned games and acknowledgements from the parlor."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablectl.alerts import KINDS
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.loader import load_rules, preset_names
from tests.mqtt_contract import check
from tests.storm import KeyStorm


class CheckedPublisher:
    """The table's publisher (no broker): each message is taken off its queue as a broker
    connection would take it, and checked against the contract."""

    def __init__(self, table_id: str, seats: int) -> None:
        self.inner = TablePublisher(MqttSettings(host="127.0.0.1"), table_id, seats)
        self.seen: dict[str, list[Any]] = {}

    def _drain(self) -> None:
        while (message := self.inner._outbox.take()) is not None:
            value = check(message.topic, message.payload)
            leaf = message.topic.split("/v1/", 1)[1].split("/", 1)[1]
            self.seen.setdefault(leaf, []).append(value)

    def publish_state(self, state: dict[str, Any]) -> None:
        self.inner.publish_state(state)
        self._drain()

    def publish_event(self, event: dict[str, Any]) -> None:
        self.inner.publish_event(event)
        self._drain()

    def publish_game(self, result: dict[str, Any]) -> None:
        self.inner.publish_game(result)
        self._drain()

    def publish_hand(self, hand: dict[str, Any]) -> None:
        self.inner.publish_hand(hand)
        self._drain()


@pytest.mark.parametrize("preset", preset_names())
async def test_every_message_of_stormy_games_meets_the_contract(preset: str) -> None:
    players = load_rules(preset).players
    publisher = CheckedPublisher("table", players)
    storm = KeyStorm(preset, 7, publisher=publisher)
    stats = await storm.run(4000)
    seen = publisher.seen
    assert stats.hands and stats.faults and stats.link_drops and stats.restarts
    assert {"state", "events", "hands"} <= set(seen)
    assert {f"seat/{n}/score" for n in range(players)} <= set(seen)
    # What the storm did reached the parlor: each kind of alert, acknowledged ones, the
    # public phases, and the hands with the scores after them.
    kinds = {a["kind"] for s in seen["state"] for a in s["alerts"]}
    # The storm drives a Table without the daemon's stall watchdog: tests/daemon/
    # test_watchdog.py checks its alert against the contract.
    assert kinds >= KINDS - {"last_game", "stalled"}, kinds
    assert any(a["acked_by"] for s in seen["state"] for a in s["alerts"])
    actions = {e.get("action") for e in seen["events"] if e["type"] == "staff_action"}
    assert "alert_ack" in actions
    assert {s["link"] for s in seen["state"]} == {"up", "down"}
    assert all(h["hand"] >= 1 for h in seen["hands"])
    # Revision 4: each hand with each seat's chips (zeros where the preset has none).
    assert all(len(h["chips"]) == players for h in seen["hands"])
    if not load_rules(preset).money.chip_value:
        assert not any(any(h["chips"]) for h in seen["hands"])


async def test_abandoned_and_finished_games_meet_the_contract() -> None:
    publisher = CheckedPublisher("table", 4)
    storm = KeyStorm("kantan", 3, publisher=publisher)
    await storm.run(6000)
    games = publisher.seen.get("games", [])
    assert games, "the storm finished or abandoned no game"
    assert all(g["game_id"] is None or isinstance(g["game_id"], str) for g in games)


def test_a_payload_outside_the_contract_is_caught() -> None:
    # The check can fail: an internal phase name, an extra key, a missing one.
    good = {
        "v": 1, "table": "t1", "rules": "jboy", "phase": "play",
        "round": {"wind": "E", "number": 1}, "dealer": 0, "honba": 0, "deposits": 0,
        "scores": [25000] * 4, "riichi": [], "tiles_left": 70, "finished": False,
        "conditions": None, "names": None, "link": "up", "clock": None, "game_id": None,
        "hands": 0, "last_hand": None, "alerts": [],
    }  # fmt: skip
    check("tablectl/v1/t1/state", json.dumps(good).encode())
    for bad in (
        {**good, "phase": "table_playing_turn"},
        {**good, "extra": 1},
        {k: v for k, v in good.items() if k != "alerts"},
        {**good, "alerts": [{"id": "x", "kind": "fire"}]},
    ):
        with pytest.raises(AssertionError):
            check("tablectl/v1/t1/state", json.dumps(bad).encode())
    with pytest.raises(AssertionError, match="v1 layout"):
        check("tablectl/t1/state", json.dumps(good).encode())
    with pytest.raises(AssertionError):
        check("tablectl/v1/t1/events", b'{"v": 1, "type": "riichi", "seat": 2}')  # no scores
