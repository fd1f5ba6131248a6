"""A table's side of the parlor's ledger: send the finished games it holds until acknowledged.

The journal keeps every game the ledger must hear of in its outbox
(:mod:`tablectl.journal_ledger`), committed with the game's end, its undo or its abandon.
:class:`LedgerSync` sends them on the table's ``ledger`` topic while the link is up and a
ledger is online (its retained status says so; with no ledger in the parlor nothing is
sent, and the games wait in the journal):

* all of them when a ledger comes online (seen at every session's start, since the status
  is retained, and whenever the ledger restarts or reconnects), so a reconnect on either
  side sends every pending game again;
* a new one within :data:`POLL_INTERVAL` of its commit (the outbox is read through a
  read-only connection of its own, which sees committed rows only: nothing is sent that
  a crash could still take back);
* again every :data:`RESEND_AFTER` seconds while unacknowledged, at most
  :data:`IN_FLIGHT` at a time (a backlog of months does not flood the queue).

The ledger answers on the table's ``ledger/ack`` topic with the game id and revision it
stored; the acknowledgement is journalled and the game is not sent again unless it
changes. Topics and payloads: ``docs/mqtt.md``; the whole scheme: ``docs/ledger.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from tablectl.journal import Journal, JournalError
from tablectl.journal_ledger import PENDING_QUERY, PendingGame, pending
from tablectl.mqtt_outbox import Kind, Message, Outbox
from tablectl.mqtt_topics import versioned

__all__ = ["IN_FLIGHT", "POLL_INTERVAL", "RESEND_AFTER", "LedgerSync", "parse_ack", "parse_status"]

#: Seconds between reads of the journal's outbox while connected: how late a game that
#: just finished goes out at most (one indexed query on a handful of rows).
POLL_INTERVAL = 1.0
#: Seconds after which a game sent but not acknowledged is sent again in the same session
#: (a ledger that was down while the broker stayed up never saw it).
RESEND_AFTER = 60.0
#: Games sent and not yet acknowledged, at most: the rest wait for acknowledgements.
IN_FLIGHT = 100


def parse_ack(payload: bytes) -> tuple[str, int] | None:
    """``(game_id, revision)`` of a ledger acknowledgement, or None if it is not one."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    game_id, revision = data.get("game_id"), data.get("revision")
    if not isinstance(game_id, str) or not 0 < len(game_id) <= 64:
        return None
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        return None
    return game_id, revision


def parse_status(payload: bytes) -> str | None:
    """The ``instance`` of an ``online`` ledger status, or None (offline, or not one)."""
    try:
        data = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("state") != "online":
        return None
    instance = data.get("instance")
    return instance if isinstance(instance, str) and instance else None


class LedgerSync:
    """Sends one table's pending games to the ledger and journals its acknowledgements.

    Args:
        journal: The daemon's open journal: acknowledgements are written through it.
        topic: The table's ``ledger`` topic.
        outbox: The publisher's queue (games go in it as qos-1 messages, kept like games).
        log: Where to log; lines carry the table id as a ``[table]`` prefix.
        table: The table id.
        clock: Monotonic seconds, for :data:`RESEND_AFTER`.
    """

    def __init__(
        self,
        journal: Journal,
        topic: str,
        outbox: Outbox,
        log: logging.Logger,
        table: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._journal = journal
        self._topic = topic
        self._outbox = outbox
        self._log = log
        self._table = table
        self._clock = clock
        self._reader: sqlite3.Connection | None = None
        #: game id -> (revision, when) sent in this session.
        self._sent: dict[str, tuple[int, float]] = {}
        #: The online ledger's instance as last seen (None: no ledger online).
        self._ledger: str | None = None
        self._poke = asyncio.Event()
        self._read_failed = False
        #: Acknowledgements that took a game off the pending list.
        self.acknowledged = 0

    @property
    def path(self) -> Path:
        """The journal file the games are read from."""
        return self._journal.path

    def _pending(self) -> list[PendingGame]:
        """The committed pending games (an unreadable outbox is logged once and sent
        nothing: the games stay in the journal for the next try)."""
        try:
            if self._reader is None:
                uri = f"{self.path.resolve().as_uri()}?mode=ro"
                self._reader = sqlite3.connect(uri, uri=True, check_same_thread=False)
            rows = self._reader.execute(PENDING_QUERY).fetchall()
        except sqlite3.Error as exc:
            if not self._read_failed:
                self._read_failed = True
                self._log.warning(
                    "[%s] ledger: cannot read the journal's outbox: %s", self._table, exc
                )
            self.close()
            return []
        self._read_failed = False
        return pending(rows)

    def check(self) -> int:
        """Queue every pending game not sent in this session at its revision (or sent
        longer than :data:`RESEND_AFTER` ago); returns how many were queued."""
        if self._ledger is None:
            return 0
        now = self._clock()
        queued = 0
        for game in self._pending():
            sent = self._sent.get(game.game_id)
            if sent is not None and sent[0] == game.revision and now - sent[1] < RESEND_AFTER:
                continue
            if sent is None and len(self._sent) >= IN_FLIGHT:
                break
            try:
                payload = versioned(game.message())
            except (TypeError, ValueError):
                continue  # a damaged row; the ledger could not store it either
            self._outbox.enqueue(Message(self._topic, payload, 1, False, Kind.GAME))
            self._sent[game.game_id] = (game.revision, now)
            queued += 1
        return queued

    def poke(self) -> None:
        """Something may have been journalled for the ledger: look soon."""
        self._poke.set()

    async def session(self) -> None:
        """One broker session: send everything pending, then keep looking until cancelled
        (the link cancels it when the session ends)."""
        self._sent.clear()
        # The ledger's retained status comes again with this session's subscription.
        self._ledger = None
        while True:
            self.check()
            self._poke.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poke.wait(), POLL_INTERVAL)

    def on_ack(self, payload: bytes) -> None:
        """A message on the table's ``ledger/ack`` topic."""
        ack = parse_ack(payload)
        if ack is None:
            self._log.warning(
                "[%s] ledger: an acknowledgement that is not one; ignored", self._table
            )
            return
        game_id, revision = ack
        try:
            if self._journal.ledger_acknowledge(game_id, revision):
                self.acknowledged += 1
        except JournalError as exc:
            # Not acknowledged in the journal: the game is sent again, and the ledger,
            # which stores each game once, acknowledges it again.
            self._log.warning(
                "[%s] ledger: cannot journal an acknowledgement: %s", self._table, exc
            )
            return
        sent = self._sent.get(game_id)
        if sent is not None and sent[0] <= revision:
            del self._sent[game_id]

    def on_status(self, payload: bytes) -> None:
        """A message on the ledger's status topic: a ledger that came online (or another
        instance of it) gets every pending game again; one gone offline gets nothing."""
        instance = parse_status(payload)
        if instance == self._ledger:
            return  # the same status again (a retained copy on a new subscription)
        self._ledger = instance
        self._sent.clear()
        if instance is not None:
            self._log.info("[%s] ledger %s online", self._table, instance)
            self.poke()

    def close(self) -> None:
        """Close the read-only connection (reopened on the next read)."""
        if self._reader is not None:
            with contextlib.suppress(sqlite3.Error):
                self._reader.close()
            self._reader = None
