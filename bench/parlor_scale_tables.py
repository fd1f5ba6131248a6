"""Simulated tables for bench/parlor_scale.py: a real daemon's messages, replayed by many.

Not a benchmark itself. Two steps:

* :func:`record_games`: real games, each a ``SimTable`` with bots on every seat reading
  their tiles and an in-process ``Daemon`` at bot speed (as bench/dashboard.py's), with
  every call the daemon makes of its ``TablePublisher`` noted (state, event, hand, game,
  menu: the dicts as the daemon built them) and the game's ledger message read back from
  its journal's outbox (:data:`~tablectl.journal_ledger.PENDING_QUERY`). A game takes
  about 2 s to record.
* :class:`SimulatedTable`: one table of the parlor: a real ``TablePublisher`` with its
  own MQTT connection, a real journal with its ledger outbox and ``attach_ledger``
  (``LedgerSync``: the outbox protocol, acknowledgements journalled), fed a recorded game
  over and over. Only the table id and the game id change; the encoders, topics, qos and
  retain flags are the publisher's own, so what leaves is what a daemon sends.

A table ends a game as the daemon does: the game and its record go into the journal in
one transaction (which queues it in the ledger outbox), then ``publish_game``, which
also pokes the ledger sync to send it. The lag of a game is from that moment to its
acknowledgement reaching the table (``LedgerSync.on_ack``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import _common as common

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.journal_ledger import PENDING_QUERY, pending
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_ledger import parse_ack
from tablectl.mqtt_settings import MqttSettings

#: What the daemon publishes, by ``TablePublisher.publish_<kind>``.
KINDS = ("state", "event", "hand", "game", "menu")
#: Players the simulated tables seat (a parlor's regulars; the close adds them up).
PLAYERS = tuple(f"Player {n:03d}" for n in range(1, 401))
RECORD_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class GameScript:
    """One recorded game: what its daemon published, in order, and its ledger record."""

    rules: str
    players: int
    #: ``(kind, payload)`` as handed to the publisher, the menu excluded.
    messages: tuple[tuple[str, dict[str, Any]], ...]
    menu: dict[str, Any]
    #: The record's final (scores, ranking, reason, result, money), as journalled.
    final: dict[str, Any]

    @property
    def states(self) -> int:
        """State messages in the game."""
        return sum(kind == "state" for kind, _ in self.messages)

    @property
    def hands(self) -> int:
        """Hands in the game."""
        return sum(kind == "hand" for kind, _ in self.messages)


@contextlib.contextmanager
def _noted(calls: dict[int, list[tuple[str, dict[str, Any]]]], connect: bool) -> Iterator[None]:
    """Note every ``publish_*`` call by publisher; without ``connect`` the publishers
    never dial their broker."""

    def wrap(kind: str) -> Any:
        original = getattr(TablePublisher, f"publish_{kind}")

        def publish(self: TablePublisher, value: dict[str, Any]) -> None:
            calls.setdefault(id(self), []).append((kind, copy.deepcopy(value)))
            original(self, value)

        return publish

    async def offline(_self: TablePublisher) -> None:
        await asyncio.Event().wait()

    with contextlib.ExitStack() as stack:
        for kind in KINDS:
            stack.enter_context(mock.patch.object(TablePublisher, f"publish_{kind}", wrap(kind)))
        if not connect:
            stack.enter_context(mock.patch.object(TablePublisher, "run", offline))
        yield


async def _record_one(preset: str, seed: int, folder: Path, port: int) -> tuple[str, Path, Daemon]:
    sim = SimTable(preset, seed, max_games=1, tile_reader=True, wall_reader=True, seat_reader=True)
    url = await sim.start_sim(f"record-{preset}-{seed}")
    journal = folder / f"record-{preset}-{seed}.sqlite3"
    settings = MqttSettings(host="127.0.0.1", port=port, client_id=f"record-{seed}")
    config = config_for(url, preset, journal, table_id=f"daemon-{preset}", mqtt=settings)
    daemon = Daemon(config, claim_window_s=common.FAST_CLAIM_S)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(RECORD_TIMEOUT_S):
            await sim.wait_games(1)
    finally:
        daemon.stop.set()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(15):
                await task
        await sim.close()
    return preset, journal, daemon


async def record_games(
    presets: Sequence[str], folder: Path, port: int | None = None
) -> list[GameScript]:
    """One real game per preset (bots reading their tiles, bot speed), as published;
    the daemons (``daemon-<preset>``) publish to Mosquitto on ``port`` if given."""
    if len(set(presets)) != len(presets):
        raise ValueError("one game per preset: a preset is named twice")
    calls: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    scripts = []
    with _noted(calls, connect=port is not None):
        recorded = await asyncio.gather(
            *(
                _record_one(preset, seed + 1, folder, port or 9)
                for seed, preset in enumerate(presets)
            )
        )
    for preset, journal_path, _daemon in recorded:
        with Journal.open(journal_path, create=False, readonly=True) as journal:
            games = pending(journal.query(PENDING_QUERY))
        if len(games) != 1 or games[0].final is None:
            raise RuntimeError(f"recording {preset}: {len(games)} finished games in the outbox")
        published = next(
            (c for c in calls.values() if any(k == "menu" for k, _ in c) and _rules(c) == preset),
            None,
        )
        if published is None:
            raise RuntimeError(f"recording {preset}: the daemon published nothing")
        menu = next(v for k, v in published if k == "menu")
        messages = tuple((k, v) for k, v in published if k != "menu")
        # Up to the game's end only: what follows is the next game's shuffle.
        end = max(i for i, (k, _) in enumerate(messages) if k == "game")
        players = len(games[0].final["scores"])
        scripts.append(GameScript(preset, players, messages[: end + 1], menu, games[0].final))
    return scripts


def _rules(published: list[tuple[str, dict[str, Any]]]) -> str | None:
    return next((v.get("rules") for k, v in published if k == "state"), None)


# --- the simulated table ----------------------------------------------------------------


@dataclass
class Acks:
    """Every game a simulated table ended and when its acknowledgement came back."""

    #: (table, game id) -> time.time() of the game's end (journalled, published).
    ended: dict[tuple[str, str], float] = field(default_factory=dict)
    #: (table, game id) -> time.time() of its acknowledgement at the table.
    acked: dict[tuple[str, str], float] = field(default_factory=dict)
    #: Set at each acknowledgement.
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def lags(self, start: float, end: float) -> list[float]:
        """Lags (s) of the games that ended in ``[start, end)`` and were acknowledged."""
        return [
            self.acked[key] - t
            for key, t in self.ended.items()
            if start <= t < end and key in self.acked
        ]

    def acked_between(self, start: float, end: float) -> int:
        """Acknowledgements that reached the tables in ``[start, end)``."""
        return sum(start <= t < end for t in self.acked.values())

    def ended_between(self, start: float, end: float) -> int:
        """Games ended in ``[start, end)``."""
        return sum(start <= t < end for t in self.ended.values())

    def missing(self) -> int:
        """Games ended and not (yet) acknowledged."""
        return sum(key not in self.acked for key in self.ended)


class SimulatedTable:
    """One parlor table: a daemon's publisher and journal outbox, fed a recorded game.

    Args:
        table_id: The table's id (a topic level).
        script: The recorded game it plays, over and over.
        broker_port: Mosquitto on 127.0.0.1.
        journal: The table's journal file (created).
        acks: Where game ends and acknowledgements are noted.
        rng: Where the table starts in its game and whom it seats.
    """

    def __init__(
        self,
        table_id: str,
        script: GameScript,
        broker_port: int,
        journal: Path,
        acks: Acks,
        rng: random.Random,
    ) -> None:
        self.table_id = table_id
        self.script = script
        self.acks = acks
        self.rng = rng
        settings = MqttSettings(host="127.0.0.1", port=broker_port, client_id=f"sim-{table_id}")
        self.publisher = TablePublisher(settings, table_id, script.players)
        self.journal = Journal.open(journal)
        self.sync = self.publisher.attach_ledger(self.journal)
        received = self.sync.on_ack

        def on_ack(payload: bytes) -> None:
            received(payload)
            ack = parse_ack(payload)
            if ack is not None:
                acks.acked.setdefault((table_id, ack[0]), time.time())
                acks.changed.set()

        # The publisher looks the handler up on the instance for every message.
        self.sync.on_ack = on_ack  # type: ignore[method-assign]
        self.task: asyncio.Task[None] | None = None
        self.position = rng.randrange(len(script.messages))
        self.game_id = uuid.uuid4().hex
        self.seats = self._seat()

    def _seat(self) -> list[str]:
        return self.rng.sample(PLAYERS, self.script.players)

    def start(self) -> None:
        """Connect (the publisher's own task) and say what staff may ask of it."""
        self.task = asyncio.create_task(self.publisher.run())
        self.publisher.publish_menu(self._own(self.script.menu))

    def _own(self, value: dict[str, Any]) -> dict[str, Any]:
        out = dict(value, table=self.table_id)
        if "game_id" in out:
            out["game_id"] = self.game_id
        if "names" in out:
            out["names"] = self.seats
        return out

    def step(self) -> str:
        """Publish the next message of the recorded game (a state, event or hand; its
        end: the game journalled and published); returns its kind."""
        kind, value = self.script.messages[self.position]
        self.position = (self.position + 1) % len(self.script.messages)
        if kind == "game":
            self.end_game(value)
        elif kind == "state":
            self.publisher.publish_state(self._own(value))
        elif kind == "event":
            self.publisher.publish_event(dict(value))
        elif kind == "hand":
            self.publisher.publish_hand(self._own(value))
        return kind

    async def stream(self, state_s: float, stop: asyncio.Event) -> None:
        """Play the recorded game at a state every ``state_s`` seconds (what a human
        table publishes between two states goes with the next one) until ``stop``."""
        while not stop.is_set():
            if self.step() == "state":
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), state_s)

    def end_game(self, result: dict[str, Any] | None = None) -> None:
        """The current game ends: journalled with its record (queued for the ledger in the
        same transaction), then published (``result``: the recorded game message, default
        the script's); the next one gets a new id and players."""
        now = time.time()
        game_id = self.game_id
        self.journal.start_game(self.table_id, self.script.rules, self.seats, now, game_id=game_id)
        self.journal.finish_game(game_id, self.script.final, now)
        self.acks.ended[(self.table_id, game_id)] = time.time()
        self.publisher.publish_game(self._own(result or self.script.messages[-1][1]))
        self.game_id = uuid.uuid4().hex
        self.seats = self._seat()

    async def close(self) -> None:
        """Flush, say offline, disconnect; close the journal."""
        await self.publisher.close()
        if self.task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        self.journal.close()
