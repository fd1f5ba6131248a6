"""The dashboard's parlor model: MQTT v1 messages folded into tables, alerts and games."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tablectl.dashboard.model import (
    MAX_GAMES,
    ParlorModel,
    parse_topic,
    ranks,
    subscriptions,
)
from tests.mqtt_contract import check

NOW = 1_764_042_000.0


def state(table: str = "t1", **changes: Any) -> dict[str, Any]:
    """A table state as docs/mqtt.md (v1) shows it."""
    base: dict[str, Any] = {
        "v": 1,
        "table": table,
        "rules": "kenko",
        "phase": "play",
        "round": {"wind": "E", "number": 2},
        "dealer": 1,
        "honba": 1,
        "deposits": 1000,
        "scores": [25000, 32000, 18000, 24000],
        "riichi": [2],
        "tiles_left": 52,
        "finished": False,
        "conditions": None,
        "names": ["Aki", "Ben", "Chie", "Dai"],
        "link": "up",
        "clock": 1234,
        "game_id": "g1",
        "hands": 3,
        "last_hand": {
            "round": {"wind": "E", "number": 1},
            "honba": 0,
            "result": "ron",
            "winners": [1],
            "from": [3],
            "deltas": [-3900, 3900, 0, 0],
        },
        "alerts": [],
    }
    base.update(changes)
    return base


def put(model: ParlorModel, table: str, leaf: str, payload: Any, now: float = NOW) -> set[str]:
    raw = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
    return model.apply(f"tablectl/v1/{table}/{leaf}", raw, now)


def test_topics() -> None:
    assert subscriptions("tablectl") == [
        "tablectl/v1/+/availability",
        "tablectl/v1/+/state",
        "tablectl/v1/+/events",
        "tablectl/v1/+/games",
        "tablectl/v1/+/hands",
        "tablectl/v1/+/menu",
        "tablectl/ledger/v1/status",
    ]
    assert parse_topic("parlor/a", "parlor/a/v1/t1/state") == ("t1", "state")
    assert parse_topic("tablectl", "tablectl/t1/state") is None  # the old, unversioned tree
    assert parse_topic("tablectl", "tablectl/v1/t1/staff/ack") is None
    assert parse_topic("tablectl", "tablectl/v1/t 1/state") is None
    assert parse_topic("tablectl", "tablectl/v1/t1/seat") is None


def test_ranks_go_by_score_and_ties_by_seat_order() -> None:
    assert ranks([25000, 32000, 18000, 24000]) == [2, 1, 4, 3]
    assert ranks([25000, 25000, 25000, 25000]) == [1, 2, 3, 4]
    assert ranks([30000, 20000, 30000, 20000]) == [1, 3, 2, 4]
    assert ranks([35000, 35000, 35000]) == [1, 2, 3]


def test_a_state_becomes_a_card_with_winds_ranks_and_marks() -> None:
    model = ParlorModel()
    assert put(model, "t1", "state", state()) == {"table:t1"}
    card = model.view("table:t1")["table"]
    assert card["online"] is None
    seats = card["seats"]
    assert [s["wind"] for s in seats] == ["N", "E", "S", "W"]  # seat 1 deals
    assert [s["rank"] for s in seats] == [2, 1, 4, 3]
    assert [s["dealer"] for s in seats] == [False, True, False, False]
    assert [s["riichi"] for s in seats] == [False, False, True, False]
    assert [s["name"] for s in seats] == ["Aki", "Ben", "Chie", "Dai"]
    assert card["state"]["clock"] == 1234
    assert card["state"]["last_hand"]["winners"] == [1]
    assert card["state"]["last_hand"]["deltas"] == [-3900, 3900, 0, 0]


def test_sanma_and_no_names() -> None:
    model = ParlorModel()
    put(model, "s1", "state", state("s1", scores=[35000, 35000, 35000], dealer=0, names=None))
    seats = model.view("table:s1")["table"]["seats"]
    assert [s["wind"] for s in seats] == ["E", "S", "W"]
    assert [s["name"] for s in seats] == [None, None, None]
    assert [s["rank"] for s in seats] == [1, 2, 3]
    assert [s["riichi"] for s in seats] == [False, False, True]


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[1, 2]",
        json.dumps(state(scores="lots")),
        json.dumps(state(dealer=7)),
        json.dumps(state(v=2)),
        json.dumps(state(scores=[1e400, 0, 0, 0])).replace("Infinity", "1e999"),
        "\xff",
        "[" * 100000,
    ],
)
def test_a_bad_state_is_ignored_and_counted(payload: str) -> None:
    model = ParlorModel()
    put(model, "t1", "state", state())
    assert put(model, "t1", "state", payload) == set()
    assert model.ignored == 1
    assert model.view("table:t1")["table"]["state"]["scores"] == [25000, 32000, 18000, 24000]


def test_bad_fields_are_dropped_not_trusted() -> None:
    model = ParlorModel()
    put(
        model,
        "t1",
        "state",
        state(
            names=["a", "b"],
            riichi=[9, "x", 1, 1],
            link="sideways",
            phase=["play"],
            alerts=[{"id": "a1", "kind": "fault", "seat": 12, "text": "x" * 999}, "junk", {}],
        ),
    )
    card = model.view("table:t1")["table"]
    assert [s["name"] for s in card["seats"]] == [None] * 4
    assert [s["riichi"] for s in card["seats"]] == [False, True, False, False]
    assert card["state"]["link"] is None
    assert card["state"]["phase"] == ""
    [alert] = card["alerts"]
    assert alert["seat"] is None and len(alert["text"]) == 200


def test_availability_offline_derives_a_local_alert_until_online() -> None:
    model = ParlorModel()
    put(model, "t1", "state", state())
    assert put(model, "t1", "availability", "online") == {"table:t1"}
    assert model.view("table:t1")["table"]["alerts"] == []
    assert put(model, "t1", "availability", "offline", now=NOW + 5) == {"table:t1"}
    assert put(model, "t1", "availability", "offline", now=NOW + 9) == set()
    card = model.view("table:t1")["table"]
    assert card["online"] is False
    [alert] = card["alerts"]
    assert alert == {
        "id": "offline-t1",
        "table": "t1",
        "kind": "offline",
        "seat": None,
        "text": "",
        "since": NOW + 5,
        "local": True,
        "ack": None,
    }
    assert model.acknowledge("t1", "offline-t1", "Eri", NOW + 6) == {"table:t1"}
    assert model.find_alert("t1", "offline-t1")["ack"] == {"by": "Eri", "at": NOW + 6}
    put(model, "t1", "availability", "online")
    assert model.view("table:t1")["table"]["alerts"] == []
    put(model, "t1", "availability", "offline")
    assert model.find_alert("t1", "offline-t1")["ack"] is None  # a new outage, a new ack
    assert put(model, "t1", "availability", "maybe") == set()
    assert model.ignored == 1


def test_an_acknowledged_alert_shows_who_until_the_state_drops_it() -> None:
    model = ParlorModel()
    call = {"id": "a7", "kind": "staff_call", "seat": 2, "text": "", "since": NOW}
    fault = {"id": "a8", "kind": "fault", "seat": None, "text": "OVERHEAT 71C", "since": NOW + 1}
    put(model, "t1", "state", state(alerts=[call, fault]))
    assert model.acknowledge("t1", "a7", "Eri", NOW + 2) == {"table:t1"}
    assert model.acknowledge("t1", "zz", "Eri", NOW + 2) == set()
    assert model.acknowledge("t9", "a7", "Eri", NOW + 2) == set()
    alerts = model.view("table:t1")["table"]["alerts"]
    assert [(a["id"], a["ack"]) for a in alerts] == [
        ("a7", {"by": "Eri", "at": NOW + 2}),
        ("a8", None),
    ]
    assert alerts[1]["text"] == "OVERHEAT 71C" and alerts[1]["local"] is False
    put(model, "t1", "state", state(alerts=[call, fault]))
    assert model.find_alert("t1", "a7")["ack"] is not None  # still there: still acked
    put(model, "t1", "state", state(alerts=[fault]))
    assert model.find_alert("t1", "a7") is None
    assert model.tables["t1"].acks == {}
    put(model, "t1", "state", state(alerts=[call]))  # an id reused later is a new alert
    assert model.find_alert("t1", "a7")["ack"] is None


def finished_game(table: str = "t1", game_id: str = "g1") -> dict[str, Any]:
    """A finished M-League game as a table publishes it (docs/mqtt.md, v1)."""
    return {
        "table": table,
        "game_id": game_id,
        "rules": "mleague",
        "hands": 9,
        "final": {
            "scores": [41200, 28300, 19500, 11000],
            "ranking": [0, 1, 2, 3],
            "reason": "last_round",
            "result": [61.2, 8.3, -20.5, -49.0],
        },
    }


def money_game(table: str = "t1", game_id: str = "m1") -> dict[str, Any]:
    """A finished sanma-free game with its settlement in P (MQTT revision 3)."""
    return {
        "table": table,
        "game_id": game_id,
        "rules": "sanma-free",
        "hands": 6,
        "final": {
            "scores": [47150, 29450, 28400],
            "ranking": [0, 1, 2],
            "reason": "last_round",
            "result": [2150, -450, -1700],
            "money": {
                "chips": [3, -6, 3],
                "result": [2150, -450, -1700],
                "uma": [1000, 0, -1000],
                "chip_p": [300, -600, 300],
                "fee": [-300, -300, -300],
                "prizes": [300, 0, -300],
                "total": [3450, -1350, -3000],
            },
        },
    }


def test_a_game_with_money_shows_each_seats_p_and_chips() -> None:
    model = ParlorModel()
    game = money_game()
    check("tablectl/v1/t1/games", json.dumps({"v": 1, **game}).encode())
    put(model, "t1", "games", game)
    put(model, "t1", "games", finished_game(game_id="g1"))
    by_id = {g["game_id"]: g for g in model.view("games")["games"]}
    assert by_id["m1"]["money"] == {"chips": [3, -6, 3], "total": [3450, -1350, -3000]}
    assert by_id["g1"]["money"] is None  # a preset without money: its points alone
    # A settlement that is not one integer per seat is dropped, not trusted.
    for bad in ({"chips": [1, 2], "total": [0, 0, 0]}, {"chips": [0, 0, 0]}, [1, 2, 3],
                {"chips": [0, 0, 0], "total": [0, 0.5, 0]}):  # fmt: skip
        odd = money_game(game_id=f"bad{len(model.games)}")
        odd["final"]["money"] = bad
        put(model, "t1", "games", odd)
        assert model.games[odd["game_id"]]["money"] is None


def test_games_are_deduplicated_by_game_id_and_bounded() -> None:
    model = ParlorModel()
    put(model, "t1", "state", state(game_id="g1"))
    game = finished_game()
    assert put(model, "t1", "games", game) == {"games"}
    assert put(model, "t1", "games", game, now=NOW + 60) == set()
    [shown] = model.view("games")["games"]
    assert shown["names"] == ["Aki", "Ben", "Chie", "Dai"]
    assert shown["result"] == [61.2, 8.3, -20.5, -49.0]
    assert shown["at"] == NOW
    no_ranking = {**game, "game_id": "g2", "final": {"scores": [1, 3, 2, 0]}}
    put(model, "t2", "games", no_ranking)
    newest = model.view("games")["games"][0]
    assert newest["game_id"] == "g2" and newest["ranking"] == [1, 2, 0, 3]
    assert newest["names"] is None and newest["result"] is None
    for n in range(MAX_GAMES + 5):
        put(model, "t3", "games", {**game, "game_id": f"x{n}"})
    assert len(model.games) == MAX_GAMES
    assert "g1" not in model.games
    assert put(model, "t1", "games", {"game_id": "g9"}) == set()


def test_a_games_names_survive_the_next_games_first_state() -> None:
    # The daemon starts the next game as the last one ends: its first state can reach
    # the dashboard before the finished game does, which must still show the names.
    model = ParlorModel()
    put(model, "t1", "state", state(game_id="g1"))
    put(model, "t1", "state", state(game_id="g2", names=["Eri", "Fumi", "Gen", "Hana"]))
    put(model, "t1", "games", finished_game(game_id="g1"))
    [shown] = model.view("games")["games"]
    assert shown["names"] == ["Aki", "Ben", "Chie", "Dai"]
    for n in range(10):
        put(model, "t1", "state", state(game_id=f"n{n}"))
    assert len(model.tables["t1"].game_names) <= 4


def test_hands_collect_per_game_without_duplicates() -> None:
    model = ParlorModel()
    put(model, "t1", "state", state(game_id="g1"))

    def hand(number: int, game: str = "g1") -> dict[str, Any]:
        return {
            "table": "t1",
            "game_id": game,
            "hand": number,
            "round": {"wind": "E", "number": number},
            "honba": 0,
            "result": "tsumo",
            "winners": [0],
            "deltas": [3000, -1000, -1000, -1000],
            "scores": [28000, 24000, 24000, 24000],
        }

    assert put(model, "t1", "hands", hand(1)) == {"table:t1"}
    assert put(model, "t1", "hands", hand(1)) == set()
    put(model, "t1", "hands", hand(3))
    put(model, "t1", "hands", hand(2))
    put(model, "t1", "hands", {**hand(4), "chips": [6, -2, -2, -2]})
    shown = model.view("table:t1")["table"]["hands"]
    assert [h["hand"] for h in shown] == [1, 2, 3, 4]
    assert shown[0]["kind"] == "tsumo" and shown[0]["scores"][0] == 28000
    # Each seat's chips (MQTT revision 4); none from a table before it.
    assert shown[0]["chips"] is None and shown[3]["chips"] == [6, -2, -2, -2]
    put(model, "t1", "state", state(game_id="g2"))  # a new game starts: its own hands
    assert model.view("table:t1")["table"]["hands"] == []
    put(model, "t1", "hands", hand(1, "g2"))
    assert len(model.view("table:t1")["table"]["hands"]) == 1
    assert put(model, "t1", "hands", {"hand": 2}) == set()


def test_events_keep_a_short_ticker() -> None:
    model = ParlorModel()
    for n in range(12):
        put(model, "t1", "events", {"type": "riichi", "seat": n % 4, "scores": [1, 2, 3, 4]})
    events = model.view("table:t1")["table"]["events"]
    assert len(events) == 8 and events[-1] == {"type": "riichi", "seat": 3}


def test_snapshot_and_broker_flag() -> None:
    model = ParlorModel()
    put(model, "t2", "state", state("t2"))
    put(model, "t1", "availability", "offline")
    assert model.set_broker(True) == {"broker"}
    assert model.set_broker(True) == set()
    snap = model.snapshot()
    assert snap["broker"] is True
    assert [t["table"] for t in snap["tables"]] == ["t1", "t2"]
    assert snap["tables"][0]["state"] is None
    assert model.view("table:nope") == {"table": None, "id": "nope"}


def test_topics_outside_the_contract_are_ignored() -> None:
    model = ParlorModel(prefix="parlor")
    assert model.apply("tablectl/v1/t1/state", json.dumps(state()).encode(), NOW) == set()
    assert model.apply("parlor/v1/t1/state", json.dumps(state()).encode(), NOW) == {"table:t1"}
    assert model.ignored == 1


def test_a_hand_and_an_ack_by_the_table_as_the_contract_has_them() -> None:
    model = ParlorModel()
    taken = {"id": "a9", "kind": "fault", "seat": None, "text": "", "since": NOW, "acked_by": "Kai"}
    last = {"round": {"wind": "E", "number": 1}, "honba": 0, "result": "tsumo", "winners": [2]}
    put(model, "t1", "state", state(alerts=[taken], last_hand={**last, "deltas": [-1, -1, 3, -1]}))
    card = model.view("table:t1")["table"]
    assert card["state"]["last_hand"]["kind"] == "tsumo"
    assert card["state"]["last_hand"]["winners"] == [2]
    [alert] = card["alerts"]
    assert alert["ack"] == {"by": "Kai", "at": None} and "acked_by" not in alert
    hand = {"game_id": "g1", "hand": 1, **last, "scores": [24000, 24000, 28000, 24000]}
    assert put(model, "t1", "hands", hand) == {"table:t1"}


def test_the_fixtures_are_what_a_table_publishes() -> None:
    # The model is tested on payloads within the contract (docs/mqtt/*.schema.json).
    check("tablectl/v1/t1/state", json.dumps(state()).encode())


def test_faults_and_stalls_are_kept_as_a_short_history() -> None:
    model = ParlorModel()
    notes: list[dict[str, Any]] = [
        {"v": 1, "type": "fault", "seat": None, "code": "TILE_COUNT", "text": "wall 2 tile count"},
        {"v": 1, "type": "fault_cleared", "seat": None, "codes": ["TILE_COUNT"],
         "repeats": {"TILE_COUNT": 3}},
        {"v": 1, "type": "stalled", "seat": None, "phase": "play", "idle_s": 300.2},
        {"v": 1, "type": "stall_over", "seat": None, "stalled_s": 412.0},
    ]  # fmt: skip
    for n, note in enumerate(notes):
        check("tablectl/v1/t1/events", json.dumps(note).encode())
        put(model, "t1", "events", note, now=NOW + n)
    faults = model.view("table:t1")["table"]["faults"]
    assert [(f["type"], f["at"], f["text"]) for f in faults] == [
        ("fault", NOW, "TILE_COUNT: wall 2 tile count"),
        ("fault_cleared", NOW + 1, "TILE_COUNT (+3)"),
        ("stalled", NOW + 2, "play, 300 s"),
        ("stall_over", NOW + 3, "412 s"),
    ]
    for _ in range(30):
        put(model, "t1", "events", {"type": "fault", "seat": None, "code": "MOTOR_STALL"})
    assert len(model.view("table:t1")["table"]["faults"]) == 20
    stalled = {"id": "a3", "kind": "stalled", "seat": None, "text": "no progress for 300 s (play)",
               "since": NOW - 300, "acked_by": None}  # fmt: skip
    check("tablectl/v1/t1/state", json.dumps(state(alerts=[stalled])).encode())
    put(model, "t1", "state", state(alerts=[stalled]))
    [alert] = model.view("table:t1")["table"]["alerts"]
    assert (alert["kind"], alert["since"]) == ("stalled", NOW - 300)


def test_alerts_keep_the_tables_words_and_a_hand_its_own_winds_and_values() -> None:
    model = ParlorModel()
    call = {
        "id": "a1",
        "kind": "staff_call",
        "seat": 1,
        "text": "STAFF CALL",
        "since": NOW,
        "acked_by": None,
        "where": "South (Ben)",
        "words": "South (Ben): staff call",
    }
    old = {"id": "a2", "kind": "staff_call", "seat": 2, "text": "STAFF CALL", "since": NOW,
           "acked_by": None}  # fmt: skip
    payload = state(alerts=[call, old], dealer=2)  # the dealer moved on since the call
    check("tablectl/v1/t1/state", json.dumps(payload).encode())
    put(model, "t1", "state", payload)
    first, second = model.view("table:t1")["table"]["alerts"]
    assert (first["where"], first["words"]) == ("South (Ben)", "South (Ben): staff call")
    assert (second["where"], second["words"]) == (None, None)  # a table before revision 5
    assert first["params"] is None and second["params"] is None  # before revision 7
    # Revision 7: the same as values, which the page words in its language; a bad
    # seat or tray drops them (the page shows the words then).
    seat = {"seat": 1, "wind": "S", "player": "Ben"}
    trays = {"trays": [{"seat": 2, "wind": "W", "player": None, "tray": 24000, "score": 25000}]}
    tray = {**call, "id": "a3", "kind": "tray_mismatch", "seat": None, "where": None,
            "text": "TRAY 2:24000/25000", "params": trays}  # fmt: skip
    stall = {**call, "id": "a4", "kind": "stalled", "seat": None, "where": None,
             "params": {"phase": "play", "idle_s": 312.5}}  # fmt: skip
    bad = {**call, "id": "a5", "seat": 0, "params": {"trays": [{"seat": 7, "wind": "E"}]}}
    payload = state(alerts=[{**call, "params": seat}, tray, stall], dealer=2)
    check("tablectl/v1/t1/state", json.dumps(payload).encode())
    put(model, "t1", "state", {**payload, "alerts": [*payload["alerts"], bad]})
    shown = [a["params"] for a in model.view("table:t1")["table"]["alerts"]]
    assert shown == [seat, trays, {"phase": "play", "idle_s": 312.5}, None]
    hand = {
        "v": 1, "table": "t1", "game_id": "g1", "hand": 2, "round": {"wind": "E", "number": 2},
        "honba": 0, "result": "ron", "winners": [0], "from": [3],
        "deltas": [7700, 0, 0, -7700], "chips": [0, 0, 0, 0],
        "scores": [32700, 25000, 25000, 17300], "dealer": 1, "riichi": [0, 3],
        "values": [{"seat": 0, "han": 4, "fu": 30, "yakuman": 0, "points": 7700,
                    "yaku": ["riichi", "pinfu", "dora 2"]}],
    }  # fmt: skip
    check("tablectl/v1/t1/hands", json.dumps(hand).encode())
    put(model, "t1", "hands", hand)
    bad_values = {"values": [{"seat": 9, "han": 1}, "x"], "dealer": None, "riichi": "all"}
    put(
        model, "t1", "hands", {**hand, "hand": 3, **bad_values, "round": {"wind": "E", "number": 3}}
    )
    shown, bad = model.view("table:t1")["table"]["hands"]
    assert (shown["dealer"], shown["riichi"]) == (1, [0, 3])
    assert shown["values"] == [{"seat": 0, "han": 4, "fu": 30, "yakuman": 0, "points": 7700,
                                "yaku": ["riichi", "pinfu", "dora 2"]}]  # fmt: skip
    # Bad values are dropped; the hand's own dealer still follows from its number.
    assert (bad["dealer"], bad["riichi"], bad["values"]) == (2, [], [])


def test_the_staff_menu_comes_from_the_table_and_defaults_to_the_old_commands() -> None:
    model = ParlorModel()
    put(model, "t1", "state", state())
    menu = model.view("table:t1")["table"]["menu"]
    assert menu == {"rules_menu": [], "commands": ["undo", "new_game"]}
    commands = ["undo", "new_game", "abandon", "tray_override", "chombo", "false_call"]
    good = {"v": 1, "table": "t1", "rules_menu": ["kenko", "mleague"], "commands": commands}
    check("tablectl/v1/t1/menu", json.dumps(good).encode())
    assert put(model, "t1", "menu", good) == {"table:t1"}
    assert put(model, "t1", "menu", good) == set()  # retained, seen again at a reconnect
    assert model.view("table:t1")["table"]["menu"]["rules_menu"] == ["kenko", "mleague"]
    assert put(model, "t1", "menu", {"rules_menu": "kenko", "commands": []}) == set()
    assert model.ignored == 1


def test_the_ledgers_health_from_its_status_and_the_dashboards_reads() -> None:
    """Issue #30: the page says when the ledger service is offline or without its
    database (since when, kept while it stays in trouble), and when the dashboard's own
    reads of its database fail; each clears when it is over."""
    model = ParlorModel()
    topic = "tablectl/ledger/v1/status"

    def status(state: str, database: str, now: float) -> set[str]:
        payload = {"v": 1, "state": state, "instance": "a" * 32, "database": database}
        return model.apply(topic, json.dumps(payload).encode(), now)

    assert model.view("ledger") == {"ledger": {"state": None, "database": None,
        "trouble_since": None, "read_error": None, "read_since": None}}  # fmt: skip
    assert status("online", "up", NOW) == {"ledger"}
    assert model.snapshot()["ledger"]["trouble_since"] is None
    assert status("online", "down", NOW + 1) == {"ledger"}
    assert status("offline", "down", NOW + 2) == {"ledger"}
    assert model.ledger.trouble_since == NOW + 1  # in trouble since the database went
    assert status("offline", "down", NOW + 3) == set()  # the retained copy again
    assert status("online", "up", NOW + 4) == {"ledger"}
    assert model.ledger.trouble_since is None
    before = model.ignored
    assert model.apply(topic, b"offline", NOW) == set()
    assert model.apply(topic, b'{"state": "gone", "database": "up"}', NOW) == set()
    assert model.ignored == before + 2 and model.ledger.state == "online"

    assert model.ledger_read("ledger.sqlite3: no ledger database there", NOW) == {"ledger"}
    assert model.ledger_read("ledger.sqlite3: no ledger database there", NOW + 30) == set()
    assert model.ledger_read("ledger.sqlite3: disk I/O error", NOW + 60) == {"ledger"}
    assert model.ledger.read_since == NOW  # failing since the first failure
    assert model.ledger_read(None, NOW + 90) == {"ledger"}
    assert model.ledger.read_error is None and model.ledger.read_since is None
    assert model.ledger_read(None, NOW + 120) == set()
