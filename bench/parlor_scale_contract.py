"""What bench/parlor_scale.py's tables send, checked against the public MQTT contract.

Not a benchmark itself. :class:`Contract` subscribes to every table topic on the broker
(``<prefix>/v1/#``) and checks the messages against their JSON Schemas in docs/mqtt/ (the
tests' own checker, tests/mqtt_contract.py), the first :data:`CHECKED_PER_LEAF` of each
kind of topic (checking all of them would make the load generator the bottleneck). It also
counts the topics' leaves (``state``, ``events``, ``seat/+/score``...) so that the leaves a
real daemon published while its game was recorded can be compared with the simulated
tables' (the same, plus ``ledger``, which a daemon sends only to an online ledger).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from aiomqtt import Client, MqttError

ROOT = Path(__file__).resolve().parents[1]
#: Messages checked against their schema per leaf, at most.
CHECKED_PER_LEAF = 300
#: Violations kept (the first ones; the rest are counted).
KEPT = 10
_TOPIC = re.compile(r"^[^/]+/v1/(?P<table>[A-Za-z0-9_-]+)/(?P<leaf>.+)$")
_SEAT = re.compile(r"^seat/\d+/score$")


def _checker() -> ModuleType:
    """tests/mqtt_contract.py, loaded from its file (bench/ is not a package of tests/)."""
    path = ROOT / "tests" / "mqtt_contract.py"
    spec = importlib.util.spec_from_file_location("mqtt_contract", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def leaf_of(topic: str) -> tuple[str, str] | None:
    """(table, leaf) of a table topic, seat numbers folded into ``seat/+/score``."""
    found = _TOPIC.match(topic)
    if found is None:
        return None
    leaf = found["leaf"]
    return found["table"], "seat/+/score" if _SEAT.match(leaf) else leaf


class Contract:
    """Every message on the broker's table topics, counted and checked.

    Args:
        port: Mosquitto on 127.0.0.1.
        prefix: The tables' topic prefix.
    """

    def __init__(self, port: int, prefix: str = "tablectl") -> None:
        self.port = port
        self.prefix = prefix
        self._check = _checker().check
        #: (table, leaf) -> messages seen.
        self.seen: Counter[tuple[str, str]] = Counter()
        self._per_leaf: Counter[str] = Counter()
        #: Messages seen on table topics, all leaves.
        self.total = 0
        self.checked = 0
        self.invalid = 0
        self.violations: list[str] = []
        self._ready = asyncio.Event()
        self._noted = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def note(self, topic: str, payload: bytes) -> None:
        """Count one message and check it if its leaf has not had its share."""
        where = leaf_of(topic)
        if where is None:
            return
        self.seen[where] += 1
        self.total += 1
        self._noted.set()
        self._per_leaf[where[1]] += 1
        if self._per_leaf[where[1]] > CHECKED_PER_LEAF:
            return
        self.checked += 1
        try:
            self._check(topic, payload)
        except (AssertionError, ValueError) as exc:
            self.invalid += 1
            if len(self.violations) < KEPT:
                self.violations.append(str(exc).splitlines()[0][:300])

    def leaves(self, tables: set[str] | None = None) -> set[str]:
        """The leaves seen (of ``tables`` only, if given)."""
        return {leaf for table, leaf in self.seen if tables is None or table in tables}

    async def wait_for(self, leaf: str, tables: int, within: float = 10.0) -> bool:
        """Wait until ``tables`` tables sent on ``leaf`` (False: ``within`` passed)."""
        deadline = asyncio.get_running_loop().time() + within
        while sum(name == leaf for _, name in self.seen) < tables:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return False
            self._noted.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._noted.wait(), left)
        return True

    async def _listen(self) -> None:
        async with Client("127.0.0.1", self.port, identifier="bench-contract") as client:
            await client.subscribe(f"{self.prefix}/v1/#", qos=1)
            self._ready.set()
            async for message in client.messages:
                if isinstance(message.payload, bytes | bytearray):
                    self.note(str(message.topic), bytes(message.payload))

    async def __aenter__(self) -> Contract:
        """Subscribe (returns once subscribed)."""
        self._task = asyncio.create_task(self._listen())
        done, _ = await asyncio.wait(
            {self._task, asyncio.create_task(self._ready.wait())},
            return_when=asyncio.FIRST_COMPLETED,
        )
        if self._task in done:
            self._task.result()  # raises why it could not subscribe
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Unsubscribe."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, MqttError):
                await self._task

    def summary(self, daemon_leaves: set[str]) -> dict[str, Any]:
        """The figures: checked, invalid (with the first violations), and the leaves the
        tables sent that the recorded daemon did not."""
        return {
            "messages": sum(self.seen.values()),
            "checked": self.checked,
            "invalid": self.invalid,
            "violations": self.violations,
            "leaves": sorted(self.leaves()),
            # The ledger writes ledger/ack; a daemon sends on ledger to an online ledger only.
            "not_from_daemon": sorted(self.leaves() - daemon_leaves - {"ledger", "ledger/ack"}),
        }
