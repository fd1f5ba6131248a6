"""Nothing lost between the tables and the ledger, with a real Mosquitto.

Each table here is what the daemon runs, in this process: a journal, a
:class:`~tablectl.mqtt.TablePublisher` with the ledger attached, and games played into
the journal through the rules core (random legal events, as the journal tests play them).
The ledger is the real service (:class:`~tablectl.ledger.service.LedgerService`) on
SQLite or on PostgreSQL. The ledger stopped while three games finish on two tables, then
started: all three arrive, once each; the broker restarted mid-game: the same; an undo or
an abandon after a game reached the ledger updates it there; a ledger whose database is
down acknowledges nothing, and the next one gets the game at once. The night's close
against the tables' records: test_close_records.py, with these tables and this ledger.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

import tablectl.mqtt_ledger
from tablectl.journal import Journal
from tablectl.ledger.db import open_database
from tablectl.ledger.service import LedgerService
from tablectl.ledger.settings import LedgerSettings
from tablectl.ledger.store import LedgerStore
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.core import step
from tablectl.rules.events import Event, Undo, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state
from tests.helpers import Broker, random_event
from tests.mqtt_contract import validator

PREFIX = "parlor"
#: A business day's evening: every game here finishes on 2026-11-26 after 18:00 UTC.
EVENING = datetime.fromisoformat("2026-11-26T18:00:00+00:00").timestamp()
SCHEMAS = {
    "ledger": validator("ledger.schema.json"),
    "ack": validator("ledger-ack.schema.json"),
    "status": validator("ledger-status.schema.json"),
}


def checked(kind: str, payload: Any) -> dict[str, Any]:
    """``payload`` decoded, after checking it against the contract's schema."""
    assert isinstance(payload, bytes)
    data = json.loads(payload)
    errors = list(SCHEMAS[kind].iter_errors(data))
    assert not errors, f"{kind}: {errors[0].message}"
    assert isinstance(data, dict)
    return data


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables look at their outbox every 50 ms instead of every second."""
    monkeypatch.setattr(tablectl.mqtt_ledger, "POLL_INTERVAL", 0.05)


def play(state: GameState, rng: random.Random) -> list[tuple[Event, GameState]]:
    """Random legal events from ``state`` until the game is over."""
    rules = state.rules
    out = []
    while not state.finished:
        event = parse_event(random_event(rng, rules))
        new_state, effects = step(state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue
        state = new_state
        out.append((event, state))
    return out


class Table:
    """One table in this process: journal, publisher with the ledger attached, games."""

    def __init__(
        self, folder: Path, table_id: str, port: int, seats: list[str], preset: str
    ) -> None:
        self.table_id = table_id
        self.journal = Journal.open(folder / f"{table_id}.sqlite3")
        settings = MqttSettings(host="127.0.0.1", port=port, topic_prefix=PREFIX)
        self.publisher = TablePublisher(settings, table_id, 4)
        self.sync = self.publisher.attach_ledger(self.journal)
        self.seats = seats
        self.preset = preset
        self.rules = load_rules(preset)
        self.clock = EVENING
        self.state: GameState | None = None
        self.game_id: str | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self.publisher.run())

    async def close(self) -> None:
        await self.publisher.close()
        self.journal.close()

    def now(self) -> float:
        self.clock += 60.0
        return self.clock

    def begin(self) -> None:
        self.game_id = self.journal.start_game(self.table_id, self.preset, self.seats, self.now())
        self.state = initial_state(self.rules)

    def play_to_end(self, seed: int, *, stop_before_end: bool = False) -> None:
        """Journal a random game's events (as the daemon does: the final with the event
        that ends the game), optionally all but the last."""
        assert self.state is not None and self.game_id is not None
        events = play(self.state, random.Random(seed))
        if stop_before_end:
            events = events[:-1]
        with self.journal.batch():
            for event, state in events:
                final = state.final.as_dict() if state.finished and state.final else None
                self.journal.append(self.game_id, event, self.now(), final=final)
                self.state = state
        self.publisher.publish_game({"table": self.table_id, "game_id": self.game_id})

    def game(self, seed: int) -> str:
        self.begin()
        self.play_to_end(seed)
        assert self.game_id is not None
        return self.game_id

    def undo(self) -> None:
        assert self.state is not None and self.game_id is not None
        state, effects = step(self.state, Undo())
        assert not any(isinstance(e, Refusal) for e in effects)
        self.journal.append(self.game_id, Undo(), self.now())
        self.state = state

    def abandon(self) -> None:
        assert self.game_id is not None
        self.journal.abandon_game(self.game_id, self.now())

    def pending(self) -> list[tuple[Any, ...]]:
        return self.journal.query(
            "SELECT game_id, revision FROM ledger_outbox WHERE revision > acked"
        )


class Ledger:
    """The ledger service, started and stopped at will, on one database."""

    def __init__(self, database: str, port: int) -> None:
        self.settings = LedgerSettings(database=database, broker_port=port, prefix=PREFIX)
        self.service: LedgerService | None = None
        self._task: asyncio.Task[None] | None = None
        self.stored = 0

    async def start(self) -> None:
        self.service = LedgerService(self.settings)
        self._task = asyncio.create_task(self.service.run())
        async with asyncio.timeout(10):
            await self.service.online.wait()

    async def stop(self) -> None:
        assert self.service is not None and self._task is not None
        self.service.stop()
        await self._task
        self.stored += self.service.stored

    def games(self) -> list[tuple[str, str, int, str]]:
        store = LedgerStore(open_database(self.settings.database))
        try:
            return store.games()
        finally:
            store.db.close()


async def until(check: Callable[[], bool | Awaitable[bool]], within: float = 15.0) -> None:
    """Wait until ``check()`` is true, looking every 20 ms."""
    async with asyncio.timeout(within):
        while True:
            result = check()
            if isinstance(result, Awaitable):
                result = await result
            if result:
                return
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def tables(tmp_path: Path, port: int) -> AsyncIterator[tuple[Table, Table]]:
    # mleague settles with result points (uma, oka), kenko in points only.
    t1 = Table(tmp_path, "t1", port, ["Aoki", "Baba", "Chiba", "Doi"], "mleague")
    t2 = Table(tmp_path, "t2", port, ["Eto", "Aoki", "Fujii", "Goto"], "kenko")
    t1.start()
    t2.start()
    try:
        yield t1, t2
    finally:
        await t1.close()
        await t2.close()


class Watcher:
    """Records what the tables send on their ledger topics, the ledger's
    acknowledgements and its status, each checked against the contract's schema."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sent: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        self.statuses: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def _run(self) -> None:
        async with aiomqtt.Client("127.0.0.1", self.port) as client:
            await client.subscribe(f"{PREFIX}/v1/+/ledger/#", qos=1)
            await client.subscribe(f"{PREFIX}/ledger/v1/status", qos=1)
            self.ready.set()
            async for message in client.messages:
                topic = str(message.topic)
                if topic.endswith("/status"):
                    self.statuses.append(checked("status", message.payload))
                elif topic.endswith("/ack"):
                    self.acks.append(checked("ack", message.payload))
                else:
                    self.sent.append(checked("ledger", message.payload))

    async def __aenter__(self) -> Watcher:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(10):
            await self.ready.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def test_the_ledger_stopped_while_three_games_finish_gets_each_once(
    mosquitto: Broker, tmp_path: Path, database: str
) -> None:
    ledger = Ledger(database, mosquitto.port)
    await ledger.start()
    await ledger.stop()  # it was online once: its status is offline now, not absent
    async with Watcher(mosquitto.port) as watcher, tables(tmp_path, mosquitto.port) as (t1, t2):
        await until(lambda: t1.publisher.connected and t2.publisher.connected)
        ids = {("t1", t1.game(1)), ("t2", t2.game(2)), ("t1", t1.game(3))}
        await asyncio.sleep(0.3)  # several polls: nothing goes out with no ledger online
        assert watcher.sent == []
        assert len(t1.pending()) == 2 and len(t2.pending()) == 1
        await ledger.start()
        await until(lambda: not t1.pending() and not t2.pending())
        await ledger.stop()
        assert {(t, g) for t, g, _r, _s in ledger.games()} == ids
        assert {(r, s) for _t, _g, r, s in ledger.games()} == {(1, "finished")}
        assert ledger.stored == 3
        # The ledger online again: nothing is pending, nothing is sent, nothing doubles.
        sent = len(watcher.sent)
        await ledger.start()
        await asyncio.sleep(0.3)
        await ledger.stop()
        assert len(watcher.sent) == sent
        assert ledger.stored == 3
        assert len(ledger.games()) == 3
        assert [s["state"] for s in watcher.statuses][-2:] == ["online", "offline"]
        assert len(watcher.acks) == 3


async def test_the_broker_restarted_mid_game_loses_and_doubles_nothing(
    mosquitto: Broker, tmp_path: Path, database: str
) -> None:
    ledger = Ledger(database, mosquitto.port)
    await ledger.start()
    async with tables(tmp_path, mosquitto.port) as (t1, t2):
        await until(lambda: t1.publisher.connected and t2.publisher.connected)
        first = t1.game(1)
        await until(lambda: not t1.pending())
        t1.begin()
        t1.play_to_end(2, stop_before_end=True)
        t2.begin()
        t2.play_to_end(3, stop_before_end=True)
        mosquitto.stop()
        await until(lambda: not t1.publisher.connected)
        # Both games end while the broker is down.
        t1.play_to_end(2)
        t2.play_to_end(3)
        assert len(t1.pending()) == 1 and len(t2.pending()) == 1
        mosquitto.start()
        await until(lambda: not t1.pending() and not t2.pending(), within=30)
        await ledger.stop()
    games = ledger.games()
    assert len(games) == 3 and {g for _t, g, _r, _s in games} >= {first}
    assert ledger.stored == 3


async def test_an_undo_or_abandon_after_the_ledger_has_the_game_updates_it(
    mosquitto: Broker, tmp_path: Path, database: str
) -> None:
    ledger = Ledger(database, mosquitto.port)
    await ledger.start()
    async with tables(tmp_path, mosquitto.port) as (t1, _t2):
        game = t1.game(4)
        await until(lambda: ledger.games() == [("t1", game, 1, "finished")])
        t1.undo()  # staff take back the hand that ended it: the game plays on
        await until(lambda: ledger.games() == [("t1", game, 2, "reopened")])
        t1.play_to_end(5)
        await until(lambda: ledger.games() == [("t1", game, 3, "finished")])
        final = json.loads(t1.journal.query("SELECT final FROM records")[0][0])
        t1.undo()
        t1.abandon()
        await until(lambda: ledger.games() == [("t1", game, 5, "abandoned")])
        await until(lambda: not t1.pending())
    await ledger.stop()
    assert final["scores"] != [25000] * 4


async def test_a_ledger_whose_database_is_down_leaves_the_games_with_the_tables(
    mosquitto: Broker, tmp_path: Path
) -> None:
    folder = tmp_path / "not-yet"
    ledger = Ledger(str(folder / "ledger.sqlite3"), mosquitto.port)
    async with Watcher(mosquitto.port) as watcher, tables(tmp_path, mosquitto.port) as (t1, _t2):
        await ledger.start()
        game = t1.game(6)
        await until(lambda: len(watcher.sent) == 1)
        await asyncio.sleep(0.3)
        assert watcher.acks == [] and t1.pending() == [(game, 1)]
        assert watcher.statuses[-1]["database"] == "down"
        await ledger.stop()
        folder.mkdir()
        # Another instance comes online: the table sends again at once, not a minute later.
        await ledger.start()
        await until(lambda: not t1.pending())
        await ledger.stop()
    assert ledger.games() == [("t1", game, 1, "finished")]
