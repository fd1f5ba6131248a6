"""The public MQTT contract as the tests check it: every payload against its JSON Schema
in docs/mqtt/, chosen by the topic's leaf (``<prefix>/v1/<table>/<leaf>``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "mqtt"

#: Topic (after ``<prefix>/v1/<table>/``) -> schema file.
_LEAVES = {
    "state": "state.schema.json",
    "events": "event.schema.json",
    "games": "game.schema.json",
    "hands": "hand.schema.json",
    "menu": "menu.schema.json",
    "availability": "availability.schema.json",
    "staff/ack": "staff-ack.schema.json",
    "staff/command": "staff-command.schema.json",
    "ledger": "ledger.schema.json",
    "ledger/ack": "ledger-ack.schema.json",
}
_SEAT_SCORE = re.compile(r"^seat/[0-3]/score$")
_TOPIC = re.compile(r"^(?P<prefix>.+)/v1/(?P<table>[A-Za-z0-9_-]+)/(?P<leaf>.+)$")


def validator(name: str) -> Draft202012Validator:
    """The validator of ``docs/mqtt/<name>`` (the schema itself checked first)."""
    schema = json.loads((SCHEMAS / name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


_VALIDATORS = {leaf: validator(name) for leaf, name in _LEAVES.items()}
_SEAT_VALIDATOR = validator("seat-score.schema.json")


def check(topic: str, payload: bytes) -> dict[str, Any] | Any:
    """Check one published message; return its decoded payload. Raises AssertionError
    naming the topic and every violation."""
    match = _TOPIC.match(topic)
    assert match is not None, f"{topic}: not in the v1 layout <prefix>/v1/<table>/<leaf>"
    leaf = match["leaf"]
    if leaf == "availability":
        value: Any = payload.decode()
        checker = _VALIDATORS[leaf]
    else:
        value = json.loads(payload)
        checker = _SEAT_VALIDATOR if _SEAT_SCORE.match(leaf) else _VALIDATORS.get(leaf)
    assert checker is not None, f"{topic}: a topic the contract does not list"
    errors = sorted(checker.iter_errors(value), key=lambda e: list(e.path))
    assert not errors, f"{topic}: " + "; ".join(
        f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:5]
    )
    if isinstance(value, dict) and not leaf.startswith("staff/"):
        assert value.get("table", match["table"]) == match["table"], f"{topic}: table differs"
    return value
