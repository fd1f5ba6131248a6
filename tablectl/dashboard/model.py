"""The parlor as the dashboard sees it: MQTT messages folded into tables, alerts, games.

Pure and synchronous (no network, no clock of its own: times are passed in), so every
rule is unit-testable. :meth:`ParlorModel.apply` takes one MQTT message (topic and raw
payload) and returns the keys of what changed, which the web layer pushes to the pages:

* ``"table:<t>"``: that table's card, its alerts or its hands;
* ``"games"``: the list of finished games;
* ``"broker"``: whether the dashboard is connected to the broker;
* ``"ledger"``: whether the parlor's ledger works (:mod:`tablectl.dashboard.ledger_health`).

The payloads come from the broker, where any client with write access could publish
anything: every field is checked for its type and bounded in size, and a message that
does not fit the contract (docs/mqtt.md, version 1) is ignored and counted.
"""

from __future__ import annotations

import json
import math
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from tablectl.dashboard.ledger_health import LEDGER_KEY, LedgerHealth
from tablectl.mqtt_topics import ledger_status_topic

__all__ = [
    "LEAVES",
    "ParlorModel",
    "TableView",
    "parse_topic",
    "ranks",
    "subscriptions",
]

#: The leaves of ``<p>/v1/<t>/<leaf>`` the dashboard reads.
LEAVES = ("availability", "state", "events", "games", "hands", "menu")
#: Events that answer a staff member's game control (kept with their details).
STAFF_ANSWERS = ("staff_action", "staff_refused", "correction")
#: The contract version in the topics.
VERSION = "v1"
#: Largest payload read (bytes); a table's state is about 1 KB.
MAX_PAYLOAD = 64 * 1024
#: Bounds that keep a noisy or hostile publisher from eating the dashboard's memory.
MAX_TABLES = 256
MAX_HANDS = 300
MAX_GAMES = 200
MAX_ALERTS = 32
MAX_EVENTS = 8
#: Fault history kept per table (the notes of :data:`FAULT_NOTES` as they arrived; the
#: whole history is in the journal: ``tablectl journal notes --faults``).
MAX_FAULTS = 20
FAULT_NOTES = ("fault", "fault_repeats", "fault_cleared", "stalled", "stall_over")
#: Games per table whose seat names are kept for their results (the current and the last).
GAME_NAMES_KEPT = 4
MAX_TEXT = 200
#: Table ids are topic levels: the table side allows this alphabet only.
_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Seat winds in order from the dealer.
WINDS = ("E", "S", "W", "N")
#: Alert kinds the table publishes; ``offline`` is the dashboard's own.
ALERT_KINDS = ("staff_call", "fault", "tray_mismatch", "link_down", "last_game", "stalled")
OFFLINE_KIND = "offline"
#: Game control a table takes from the page when it publishes no menu (before MQTT
#: revision 5).
OLD_COMMANDS = ("undo", "new_game")
#: Bounds of a staff menu and of a hand's winning values.
MAX_MENU = 32
MAX_VALUES = 8
MAX_YAKU = 24


def subscriptions(prefix: str) -> list[str]:
    """The topic filters the dashboard subscribes to under ``prefix``: every table's
    leaves and the ledger service's status."""
    return [f"{prefix}/{VERSION}/+/{leaf}" for leaf in LEAVES] + [ledger_status_topic(prefix)]


def parse_topic(prefix: str, topic: str) -> tuple[str, str] | None:
    """``(table, leaf)`` of a topic ``<prefix>/v1/<table>/<leaf>``, or ``None``."""
    head = f"{prefix}/{VERSION}/"
    if not topic.startswith(head):
        return None
    parts = topic[len(head) :].split("/")
    if len(parts) != 2 or parts[1] not in LEAVES or not _TABLE_ID.match(parts[0]):
        return None
    return parts[0], parts[1]


def ranks(scores: list[int | float]) -> list[int]:
    """Each seat's place (1 = first) by score; equal scores go by seat order."""
    order = sorted(range(len(scores)), key=lambda seat: (-scores[seat], seat))
    places = [0] * len(scores)
    for place, seat in enumerate(order, start=1):
        places[seat] = place
    return places


# --- checking payload fields -------------------------------------------------------------


def _num(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _text(value: Any, limit: int = MAX_TEXT) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _fault_text(kind: str, data: dict[str, Any]) -> str:
    """What a fault or stall note says, short (the page labels its kind)."""
    if kind == "fault":
        code, said = _text(data.get("code"), 32) or "?", _text(data.get("text")) or ""
        return f"{code}: {said}" if said else code
    if kind == "fault_repeats":
        return f"{_text(data.get('code'), 32) or '?'} x{_int(data.get('count'))}"
    if kind == "fault_cleared":
        raw_codes, raw_repeats = data.get("codes"), data.get("repeats")
        codes: list[Any] = raw_codes if isinstance(raw_codes, list) else []
        repeats: dict[Any, Any] = raw_repeats if isinstance(raw_repeats, dict) else {}
        names = [_text(c, 32) or "?" for c in codes[:16]]
        return ", ".join(
            f"{c} (+{_int(repeats.get(c))})" if _int(repeats.get(c)) else c for c in names
        )
    seconds = _num(data.get("idle_s" if kind == "stalled" else "stalled_s"))
    phase = _text(data.get("phase"), 32) if kind == "stalled" else None
    shown = "" if seconds is None else f"{int(seconds)} s"
    return f"{phase}, {shown}" if phase else shown


def _nums(value: Any, seats: int = 4) -> list[int | float] | None:
    if not isinstance(value, list) or not 2 <= len(value) <= seats:
        return None
    out = [_num(v) for v in value]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _ints(value: Any, players: int) -> list[int] | None:
    """One integer per seat (chips, P), or None."""
    if not isinstance(value, list) or len(value) != players:
        return None
    out = [_int(v) for v in value]
    return None if any(v is None for v in out) else out  # type: ignore[return-value]


def _money(value: Any, players: int) -> dict[str, list[int]] | None:
    """A finished game's settlement in P (``final.money``, MQTT revision 3): each seat's
    net ``chips`` and ``total`` P; None for a preset without money or a bad one."""
    if not isinstance(value, dict):
        return None
    chips, total = _ints(value.get("chips"), players), _ints(value.get("total"), players)
    if chips is None or total is None:
        return None
    return {"chips": chips, "total": total}


def _seats(value: Any, players: int) -> list[int]:
    if not isinstance(value, list):
        return []
    return sorted({v for v in value if _int(v) is not None and 0 <= v < players})


def _round(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    wind, number = value.get("wind"), _int(value.get("number"))
    if wind not in WINDS or number is None:
        return None
    return {"wind": wind, "number": number}


def _win_values(value: Any, players: int) -> list[dict[str, Any]]:
    """Each winner's han, fu, yakuman (and points and yaku where the tiles were read) of
    a ``hands`` message (MQTT revision 5); empty before it or for a bad list."""
    out: list[dict[str, Any]] = []
    for raw in value[:MAX_VALUES] if isinstance(value, list) else []:
        if not isinstance(raw, dict):
            continue
        seat, han, yakuman = _int(raw.get("seat")), _int(raw.get("han")), _int(raw.get("yakuman"))
        if seat is None or not 0 <= seat < players or han is None or yakuman is None:
            continue
        shown: dict[str, Any] = {"seat": seat, "han": han, "fu": _int(raw.get("fu")),
                                 "yakuman": yakuman, "points": _int(raw.get("points"))}  # fmt: skip
        yaku = raw.get("yaku")
        if isinstance(yaku, list):
            shown["yaku"] = [_text(y, 40) for y in yaku[:MAX_YAKU] if isinstance(y, str)]
        out.append(shown)
    return out


def _hand_result(value: Any, players: int) -> dict[str, Any] | None:
    """A settled hand's summary (``last_hand`` of the state, or a ``hands`` message)."""
    if not isinstance(value, dict):
        return None
    # The replay form of a hand (docs/replay.md): its "result" is shown as the kind.
    kind = _text(value.get("result"), 32)
    if kind is None:
        return None
    deltas = _nums(value.get("deltas"))
    winners = value.get("winners")
    round_ = _round(value.get("round"))
    dealer = _int(value.get("dealer"))
    if (dealer is None or not 0 <= dealer < players) and round_ is not None:
        # A hand's number is its dealer's seat + 1 (the rules core's HandRecord): a
        # table before revision 5 still gives the hand's own winds.
        dealer = round_["number"] - 1 if round_["number"] <= players else None
    return {
        "round": round_,
        "dealer": dealer,
        "riichi": _seats(value.get("riichi"), players),
        "values": _win_values(value.get("values"), players),
        "honba": _int(value.get("honba")) or 0,
        "kind": kind,
        "winners": _seats(winners, players),
        "deltas": deltas if deltas is not None and len(deltas) == players else None,
        # Each seat's chip change (MQTT revision 4); None from a table before it.
        "chips": _ints(value.get("chips"), players),
    }


def _seat_params(value: Any, players: int) -> dict[str, Any] | None:
    """A seat as an alert's params give it (MQTT revision 7): seat, wind letter, player."""
    if not isinstance(value, dict):
        return None
    seat, wind = _int(value.get("seat")), value.get("wind")
    if seat is None or not 0 <= seat < players or wind not in WINDS:
        return None
    return {"seat": seat, "wind": wind, "player": _text(value.get("player"), 40)}


def _alert_params(value: Any, players: int) -> dict[str, Any] | None:
    """An alert's params (MQTT revision 7), what the page words in its own language:
    the seat of a call, each differing tray, a fault's codes, a stall's phase; None
    before revision 7 or for a bad one (the page shows the table's words then)."""
    if not isinstance(value, dict):
        return None
    out: dict[str, Any] = {}
    seat = _seat_params(value, players)
    if seat is not None:
        out.update(seat)
    trays = value.get("trays")
    if isinstance(trays, list):
        kept = []
        for raw in trays[:players]:
            entry = _seat_params(raw, players)
            if entry is None:
                return None
            tray, score = _int(raw.get("tray")), _int(raw.get("score"))
            if tray is None or score is None:
                return None
            kept.append({**entry, "tray": tray, "score": score})
        out["trays"] = kept
    codes = value.get("codes")
    if isinstance(codes, list):
        out["codes"] = [c[:32] for c in codes[:16] if isinstance(c, str)]
    phase, idle = _text(value.get("phase"), 32), _num(value.get("idle_s"))
    if phase is not None and idle is not None:
        out.update(phase=phase, idle_s=idle)
    return out


def _decode(payload: bytes) -> Any:
    if len(payload) > MAX_PAYLOAD:
        return None
    try:
        return json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


# --- the model ---------------------------------------------------------------------------


@dataclass
class TableView:
    """One table: what its retained topics and its hands say, and the staff's acks."""

    table: str
    #: ``True`` online, ``False`` offline, ``None`` not heard yet.
    online: bool | None = None
    #: The last valid state, checked field by field (``None`` before the first one).
    state: dict[str, Any] | None = None
    #: The hands of the game in ``hands_game`` (by hand number).
    hands: dict[int, dict[str, Any]] = field(default_factory=dict)
    hands_game: str | None = None
    #: Acks sent or seen for the table's alerts: alert id -> {"by", "at"}.
    acks: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: When the daemon went offline (unix time), for the derived alert.
    offline_since: float | None = None
    #: The last few events, newest last, for a ticker.
    events: list[dict[str, Any]] = field(default_factory=list)
    #: The table's latest faults and stalls, newest last: ``{"type", "at", "text"}``.
    faults: list[dict[str, Any]] = field(default_factory=list)
    #: The seats' names of the last few games, by game id: a game's result may arrive
    #: after the first state of the next game.
    game_names: dict[str, list[str | None]] = field(default_factory=dict)
    #: What staff may ask of the table (its ``menu`` topic): ``rules_menu`` and
    #: ``commands``; None before the table published one.
    menu: dict[str, list[str]] | None = None

    def offline_alert_id(self) -> str:
        """The id of the dashboard's own "daemon offline" alert for this table."""
        return f"offline-{self.table}"

    def alerts(self) -> list[dict[str, Any]]:
        """The table's alerts staff must see, the derived offline one first."""
        out: list[dict[str, Any]] = []
        if self.online is False:
            alert_id = self.offline_alert_id()
            out.append(
                {
                    "id": alert_id,
                    "table": self.table,
                    "kind": OFFLINE_KIND,
                    "seat": None,
                    "text": "",
                    "since": self.offline_since,
                    "local": True,
                    "ack": self.acks.get(alert_id),
                }
            )
        for alert in (self.state or {}).get("alerts", []):
            ack = self.acks.get(alert["id"])
            if ack is None and alert["acked_by"]:
                ack = {"by": alert["acked_by"], "at": None}
            shown = {k: v for k, v in alert.items() if k != "acked_by"}
            out.append({**shown, "table": self.table, "local": False, "ack": ack})
        return out

    def as_json(self) -> dict[str, Any]:
        """The table as the page shows it (seats with wind, rank, dealer and riichi marks)."""
        state = self.state
        seats: list[dict[str, Any]] = []
        if state is not None:
            scores = state["scores"]
            players = len(scores)
            places = ranks(scores)
            names = state["names"]
            for seat in range(players):
                seats.append(
                    {
                        "seat": seat,
                        "wind": WINDS[(seat - state["dealer"]) % players],
                        "name": names[seat] if names else None,
                        "score": scores[seat],
                        "rank": places[seat],
                        "dealer": seat == state["dealer"],
                        "riichi": seat in state["riichi"],
                    }
                )
        return {
            "table": self.table,
            "online": self.online,
            "state": None if state is None else {k: v for k, v in state.items() if k != "alerts"},
            "seats": seats,
            "alerts": self.alerts(),
            "hands": [self.hands[n] for n in sorted(self.hands)],
            "hands_game": self.hands_game,
            "events": self.events,
            "faults": self.faults,
            "menu": self.menu or {"rules_menu": [], "commands": list(OLD_COMMANDS)},
        }


class ParlorModel:
    """Every table, alert and finished game the broker told the dashboard about."""

    def __init__(self, prefix: str = "tablectl") -> None:
        self.prefix = prefix
        self.tables: dict[str, TableView] = {}
        #: Finished games by game id, oldest first (bounded by ``MAX_GAMES``).
        self.games: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.broker_connected = False
        #: The ledger service's status and the dashboard's own reads of its database.
        self.ledger = LedgerHealth()
        #: Messages that did not fit the contract and were ignored.
        self.ignored = 0

    # -- input ----------------------------------------------------------------------------

    def apply(self, topic: str, payload: bytes, now: float) -> set[str]:
        """Fold one MQTT message in; the keys of what changed (empty if nothing did)."""
        if topic == ledger_status_topic(self.prefix):
            changed_ledger = self.ledger.status(payload, now)
            if changed_ledger is None:
                self.ignored += 1
                return set()
            return changed_ledger
        where = parse_topic(self.prefix, topic)
        if where is None:
            self.ignored += 1
            return set()
        table_id, leaf = where
        if table_id not in self.tables and len(self.tables) >= MAX_TABLES:
            self.ignored += 1
            return set()
        table = self.tables.get(table_id) or TableView(table_id)
        if leaf == "availability":
            changed = self._availability(table, payload, now)
        else:
            data = _decode(payload)
            if leaf == "state":
                changed = self._state(table, data)
            elif leaf == "hands":
                changed = self._hand(table, data)
            elif leaf == "games":
                changed = self._game(table, data, now)
            elif leaf == "menu":
                changed = self._menu(table, data)
            else:
                changed = self._event(table, data, now)
        if changed is None:
            self.ignored += 1
            return set()
        if changed and table_id not in self.tables:
            self.tables[table_id] = table
        return changed

    def set_broker(self, connected: bool) -> set[str]:
        """Record whether the dashboard's own broker link is up."""
        if connected == self.broker_connected:
            return set()
        self.broker_connected = connected
        return {"broker"}

    def ledger_read(self, error: str | None, now: float) -> set[str]:
        """Record whether the dashboard's last read of the ledger's database worked."""
        return self.ledger.read(error, now)

    def _availability(self, table: TableView, payload: bytes, now: float) -> set[str] | None:
        text = payload.decode("utf-8", "replace").strip()
        if text not in ("online", "offline"):
            return None
        online = text == "online"
        if table.online == online:
            return set()
        table.online = online
        offline_id = table.offline_alert_id()
        table.acks.pop(offline_id, None)  # a new outage wants a new acknowledgement
        table.offline_since = None if online else now
        return {f"table:{table.table}"}

    def _state(self, table: TableView, data: Any) -> set[str] | None:
        state = self._check_state(table.table, data)
        if state is None:
            return None
        table.state = state
        live = {a["id"] for a in state["alerts"]} | {table.offline_alert_id()}
        for alert_id in list(table.acks):
            if alert_id not in live:
                del table.acks[alert_id]  # the table dropped it: forget the ack too
        game = state["game_id"]
        if game is not None and state["names"] is not None:
            table.game_names.pop(game, None)  # re-inserted: the newest game last
            table.game_names[game] = state["names"]
            while len(table.game_names) > GAME_NAMES_KEPT:
                del table.game_names[next(iter(table.game_names))]
        if game is not None and game != table.hands_game:
            table.hands = {}
            table.hands_game = game
        return {f"table:{table.table}"}

    @staticmethod
    def _check_state(table_id: str, data: Any) -> dict[str, Any] | None:
        if not isinstance(data, dict) or data.get("v", 1) != 1:
            return None
        scores = _nums(data.get("scores"))
        dealer = _int(data.get("dealer"))
        if scores is None or dealer is None or not 0 <= dealer < len(scores):
            return None
        players = len(scores)
        names = data.get("names")
        if not (
            isinstance(names, list)
            and len(names) == players
            and all(isinstance(n, str | None) for n in names)
        ):
            names = None
        else:
            names = [n[:40] if isinstance(n, str) else None for n in names]
        alerts: list[dict[str, Any]] = []
        raw_alerts = data.get("alerts")
        for raw in raw_alerts if isinstance(raw_alerts, list) else []:
            if not isinstance(raw, dict) or len(alerts) >= MAX_ALERTS:
                continue
            alert_id, kind = _text(raw.get("id"), 64), _text(raw.get("kind"), 32)
            if not alert_id or not kind:
                continue
            seat = _int(raw.get("seat"))
            alerts.append(
                {
                    "id": alert_id,
                    "kind": kind,
                    "seat": seat if seat is not None and 0 <= seat < players else None,
                    "text": _text(raw.get("text")) or "",
                    "since": _num(raw.get("since")),
                    # Set by the table once staff acknowledged it (from any dashboard).
                    "acked_by": _text(raw.get("acked_by"), 40),
                    # The seat and player, and what it says, in words fixed when it was
                    # raised (MQTT revision 5; None before it: the page names the seat).
                    "where": _text(raw.get("where"), 80),
                    "words": _text(raw.get("words")),
                    # The same as values, for the page to word (MQTT revision 7).
                    "params": _alert_params(raw.get("params"), players),
                }
            )
        phase = _text(data.get("phase"), 32)
        link = data.get("link")
        return {
            "table": table_id,
            "rules": _text(data.get("rules"), 40) or "",
            "phase": phase or "",
            "round": _round(data.get("round")),
            "dealer": dealer,
            "honba": _int(data.get("honba")) or 0,
            "deposits": _num(data.get("deposits")) or 0,
            "scores": scores,
            "riichi": _seats(data.get("riichi"), players),
            "tiles_left": _int(data.get("tiles_left")),
            "finished": data.get("finished") is True,
            "names": names,
            "link": link if link in ("up", "down") else None,
            "clock": _num(data.get("clock")),
            "game_id": _text(data.get("game_id"), 64),
            "hands": _int(data.get("hands")),
            "last_hand": _hand_result(data.get("last_hand"), players),
            "alerts": alerts,
        }

    @staticmethod
    def _menu(table: TableView, data: Any) -> set[str] | None:
        if not isinstance(data, dict):
            return None
        rules, commands = data.get("rules_menu"), data.get("commands")
        if not isinstance(rules, list) or not isinstance(commands, list):
            return None
        menu = {
            "rules_menu": [r[:255] for r in rules[:MAX_MENU] if isinstance(r, str) and r],
            "commands": [c for c in commands[:MAX_MENU] if isinstance(c, str) and len(c) <= 32],
        }
        if menu == table.menu:
            return set()
        table.menu = menu
        return {f"table:{table.table}"}

    def _hand(self, table: TableView, data: Any) -> set[str] | None:
        if not isinstance(data, dict):
            return None
        number = _int(data.get("hand"))
        game = _text(data.get("game_id"), 64)
        scores = _nums(data.get("scores"))
        if number is None or not game or scores is None:
            return None
        result = _hand_result(data, len(scores))
        if result is None:
            return None
        if game != table.hands_game:
            table.hands = {}
            table.hands_game = game
        hand = {"hand": number, **result, "scores": scores}
        if table.hands.get(number) == hand:
            return set()  # qos 1: the same hand twice
        table.hands[number] = hand
        while len(table.hands) > MAX_HANDS:
            del table.hands[min(table.hands)]
        return {f"table:{table.table}"}

    def _game(self, table: TableView, data: Any, now: float) -> set[str] | None:
        if not isinstance(data, dict):
            return None
        game = _text(data.get("game_id"), 64)
        final = data.get("final")
        if not game or not isinstance(final, dict):
            return None
        scores = _nums(final.get("scores"))
        if scores is None:
            return None
        if game in self.games:
            return set()  # qos 1 and re-sends after a reconnect: one game, once
        players = len(scores)
        ranking = final.get("ranking")
        if not (isinstance(ranking, list) and sorted(ranking) == list(range(players))):
            ranking = sorted(range(players), key=lambda s: (-scores[s], s))
        result = _nums(final.get("result"))
        names = table.game_names.get(game)
        self.games[game] = {
            "table": table.table,
            "game_id": game,
            "rules": _text(data.get("rules"), 40) or "",
            "hands": _int(data.get("hands")),
            "scores": scores,
            "ranking": ranking,
            "reason": _text(final.get("reason"), 40) or "",
            "result": result if result is not None and len(result) == players else None,
            "money": _money(final.get("money"), players),
            "names": names,
            "at": now,
        }
        while len(self.games) > MAX_GAMES:
            self.games.popitem(last=False)
        return {"games"}

    def _event(self, table: TableView, data: Any, now: float) -> set[str] | None:
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            return None
        event: dict[str, Any] = {"type": data["type"][:32]}
        seat = _int(data.get("seat"))
        if seat is not None:
            event["seat"] = seat
        if event["type"] in STAFF_ANSWERS:
            # The table's answer to game control from the page: shown to staff.
            for key in ("action", "by", "why"):
                text = _text(data.get(key), 200)
                if text is not None:
                    event[key] = text
        if event["type"] in FAULT_NOTES:
            kept = {"type": event["type"], "at": now, "text": _fault_text(event["type"], data)}
            table.faults = [*table.faults, kept][-MAX_FAULTS:]
        table.events = [*table.events, event][-MAX_EVENTS:]
        return {f"table:{table.table}"}

    # -- staff ----------------------------------------------------------------------------

    def find_alert(self, table_id: str, alert_id: str) -> dict[str, Any] | None:
        """The live alert ``alert_id`` of ``table_id`` (with its ack), or ``None``."""
        table = self.tables.get(table_id)
        if table is None:
            return None
        return next((a for a in table.alerts() if a["id"] == alert_id), None)

    def acknowledge(self, table_id: str, alert_id: str, by: str, at: float) -> set[str]:
        """Mark a live alert acknowledged by ``by``; it shows so until the table drops it
        (the derived offline alert: until the table comes back)."""
        if self.find_alert(table_id, alert_id) is None:
            return set()
        self.tables[table_id].acks[alert_id] = {"by": by, "at": at}
        return {f"table:{table_id}"}

    # -- output ---------------------------------------------------------------------------

    def view(self, key: str) -> dict[str, Any]:
        """The JSON for one change key (see the module docstring)."""
        if key == "games":
            return {"games": list(reversed(self.games.values()))}
        if key == "broker":
            return {"broker": self.broker_connected}
        if key == LEDGER_KEY:
            return {"ledger": self.ledger.as_json()}
        table_id = key.removeprefix("table:")
        table = self.tables.get(table_id)
        return {"table": table.as_json() if table else None, "id": table_id}

    def snapshot(self) -> dict[str, Any]:
        """Everything, for a page that just connected."""
        return {
            "broker": self.broker_connected,
            "tables": [self.tables[t].as_json() for t in sorted(self.tables)],
            "games": list(reversed(self.games.values())),
            "ledger": self.ledger.as_json(),
        }
