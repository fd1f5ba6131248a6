"""A table's MQTT topics and payloads: the public contract's names and bytes.

:class:`TableTopics` knows every topic of one table (``<prefix>/v1/<table>/...``) and what
the table announces on each connection (availability and Home Assistant discovery);
:func:`encode` and :func:`versioned` give the bytes of a payload. Nothing here does I/O or
keeps state that changes: the queue (:mod:`tablectl.mqtt_outbox`) and the connection
(:mod:`tablectl.mqtt_link`) use it. Topics and payloads are documented in ``docs/mqtt.md``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tablectl.mqtt_settings import MqttSettings
from tablectl.version import __version__

__all__ = [
    "CONTRACT_VERSION",
    "MAX_SEATS",
    "OFFLINE",
    "ONLINE",
    "TableTopics",
    "encode",
    "ledger_status_topic",
    "versioned",
]

#: Availability payloads; they are Home Assistant's defaults, so discovery need not set them.
ONLINE = "online"
OFFLINE = "offline"
#: Discovery of seats beyond the table's count is removed (4 covers yonma and sanma).
MAX_SEATS = 4
#: Table ids become topic levels and HA node ids, whose alphabet is this.
_TABLE_ID = re.compile(r"^[A-Za-z0-9_-]+$")
#: The version of the public contract (docs/mqtt.md, docs/mqtt/*.schema.json): a topic
#: level (``<prefix>/v1/<table>/...``) and the ``v`` of every JSON payload. A change that
#: could break a consumer gets a new version, published beside the old one for a while.
CONTRACT_VERSION = 1


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON; keeps kanji readable on the wire."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def versioned(value: dict[str, Any]) -> bytes:
    """A JSON payload of the contract: ``value`` with the contract's ``v`` first.

    Raises TypeError or ValueError when ``value`` is not JSON-serialisable."""
    return encode({"v": CONTRACT_VERSION, **value})


def ledger_status_topic(topic_prefix: str) -> str:
    """The parlor ledger's status topic (retained ``online``/``offline``): outside the
    tables' ``<prefix>/v1/<table>`` levels, so no table id can clash with it."""
    return f"{topic_prefix}/ledger/v{CONTRACT_VERSION}/status"


class TableTopics:
    """The topics of one table and what it announces on them.

    Args:
        settings: The topic and discovery prefixes.
        table_id: Letters, digits, ``_`` and ``-`` only: it becomes a topic level and a
            Home Assistant node id (ValueError otherwise).
        seats: 1 to :data:`MAX_SEATS` (ValueError otherwise); one score topic per seat.
    """

    def __init__(self, settings: MqttSettings, table_id: str, seats: int) -> None:
        if not _TABLE_ID.match(table_id):
            msg = f"table id {table_id!r} must use only letters, digits, '_' and '-'"
            raise ValueError(msg)
        if not 1 <= seats <= MAX_SEATS:
            msg = f"seats must be 1..{MAX_SEATS}, not {seats}"
            raise ValueError(msg)
        self.table_id = table_id
        self.seats = seats
        self._discovery_prefix = settings.discovery_prefix
        self._base = base = f"{settings.topic_prefix}/v{CONTRACT_VERSION}/{table_id}"
        self.availability = f"{base}/availability"
        self.state = f"{base}/state"
        self.events = f"{base}/events"
        self.games = f"{base}/games"
        self.hands = f"{base}/hands"
        #: What staff may ask of the table from the parlor (retained: its rules menu).
        self.menu = f"{base}/menu"
        #: Where the parlor's dashboard acknowledges an alert (the table subscribes).
        self.staff_ack = f"{base}/staff/ack"
        #: Where the parlor's dashboard asks for game control (staff/command).
        self.staff_command = f"{base}/staff/command"
        #: The table's finished games for the parlor's ledger, and its acknowledgements.
        self.ledger = f"{base}/ledger"
        self.ledger_ack = f"{base}/ledger/ack"
        self.ledger_status = ledger_status_topic(settings.topic_prefix)

    def seat_score(self, seat: int) -> str:
        """The retained topic holding ``seat``'s score (seats count from 0, the first dealer)."""
        return f"{self._base}/seat/{seat}/score"

    def discovery(self, object_id: str) -> str:
        """Home Assistant discovery topic for one of this table's sensors."""
        return f"{self._discovery_prefix}/sensor/tablectl_{self.table_id}/{object_id}/config"

    def discovery_configs(self) -> dict[str, dict[str, Any]]:
        """Discovery topic -> config payload for every sensor of this table."""
        table = self.table_id
        device = {
            "identifiers": [f"tablectl_{table}"],
            "name": f"Mahjong table {table}",
            "manufacturer": "tablectl",
            "model": "Riichi automatic table controller",
            "sw_version": __version__,
        }
        common = {"availability_topic": self.availability, "device": device}
        configs: dict[str, dict[str, Any]] = {}
        for seat in range(self.seats):
            object_id = f"seat{seat}_score"
            configs[self.discovery(object_id)] = {
                "name": f"Seat {seat} score",
                "unique_id": f"tablectl_{table}_{object_id}",
                "object_id": f"tablectl_{table}_{object_id}",
                "state_topic": self.seat_score(seat),
                "unit_of_measurement": "pts",
                "state_class": "measurement",
                "icon": "mdi:counter",
                **common,
            }
        # The round as "E1" when the daemon sends {"wind": "E", "number": 1}; the rest of
        # the state (honba, deposits, dealer, ...) rides along as attributes.
        round_template = (
            "{% set r = value_json.round %}{{ r.wind ~ r.number if r is mapping else r }}"
        )
        for object_id, name, template in (
            ("round", "Round", round_template),
            ("phase", "Phase", "{{ value_json.phase }}"),
        ):
            configs[self.discovery(object_id)] = {
                "name": name,
                "unique_id": f"tablectl_{table}_{object_id}",
                "object_id": f"tablectl_{table}_{object_id}",
                "state_topic": self.state,
                "value_template": template,
                "json_attributes_topic": self.state,
                "icon": "mdi:mahjong",
                **common,
            }
        return configs

    def announcement(self) -> dict[str, bytes]:
        """What the table publishes (retained) on every connect, in order: ``online``,
        each sensor's discovery config, and an empty config removing each sensor left
        from a table with more seats."""
        announced = {self.availability: ONLINE.encode()}
        for topic, config in self.discovery_configs().items():
            announced[topic] = encode(config)
        for seat in range(self.seats, MAX_SEATS):
            announced[self.discovery(f"seat{seat}_score")] = b""
        return announced

    def guarded(self, announced: dict[str, bytes]) -> list[str]:
        """The retained topics this table owns and puts back when others overwrite them:
        those it ``announced``, those of its state and its staff menu."""
        return [*announced, self.state, *map(self.seat_score, range(self.seats)), self.menu]
