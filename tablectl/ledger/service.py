"""``tablectl ledger run``: the parlor's ledger service on the broker.

:class:`LedgerService` connects to the parlor's broker, says it is online on the ledger's
status topic (retained, with a fresh ``instance`` per process and the last will
``offline``), listens to every table's ``ledger`` topic, stores each game (once, by table,
game id and revision: :class:`~tablectl.ledger.store.LedgerStore`) and acknowledges it on
the table's ``ledger/ack`` topic once it is committed. A table that sees the ledger come
online sends it every game it holds unacknowledged, so a ledger that was down, or a broker
restarted, loses nothing. A database that fails is retried with the next message; the
status says ``"database": "down"`` meanwhile, and nothing is acknowledged, so the tables
keep their games. See docs/ledger.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import socket
import ssl
import time
import uuid
from collections.abc import Callable

from aiomqtt import Client, MqttError, Will

from tablectl.ledger.db import DatabaseError, open_database
from tablectl.ledger.settings import LedgerSettings
from tablectl.ledger.store import LedgerStore, MessageError, parse_message
from tablectl.mqtt_topics import CONTRACT_VERSION, encode, ledger_status_topic

__all__ = ["LedgerService"]

_log = logging.getLogger("tablectl.ledger")

RECONNECT_DELAY_MIN = 0.5
RECONNECT_DELAY_MAX = 30.0
#: Wait (s) for CONNACK / PUBACK.
PUBLISH_TIMEOUT = 10.0


class LedgerService:
    """The ledger on the broker, until :meth:`stop`.

    Args:
        settings: The broker, the prefix and the database.
        now: Unix time, stamped on each stored game.
    """

    def __init__(self, settings: LedgerSettings, *, now: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.now = now
        self.instance = uuid.uuid4().hex
        self.status_topic = ledger_status_topic(settings.prefix)
        self._store: LedgerStore | None = None
        self._stop = asyncio.Event()
        self._client: Client | None = None
        self.database_up = True
        #: Counters: games stored, copies already held, refused messages, db failures.
        self.stored = 0
        self.duplicates = 0
        self.refused = 0
        self.db_failures = 0
        #: Set once subscribed and announced (tests wait on it).
        self.online = asyncio.Event()

    # ------------------------------------------------------------------ database

    def open_store(self) -> LedgerStore:
        """Open the database and create the ledger's tables (raises DatabaseError)."""
        store = LedgerStore(open_database(self.settings.database))
        try:
            store.setup()
        except BaseException:
            store.db.close()
            raise
        return store

    def set_store(self, store: LedgerStore) -> None:
        """Use ``store`` (opened by the caller, who reports its failure) from now on."""
        self._store = store

    def _store_game(self, table: str, payload: bytes) -> tuple[str, int] | None:
        """Parse and store one message (in a worker thread); the game id and revision to
        acknowledge, or None (refused, or the database failed)."""
        try:
            message = parse_message(table, payload)
        except MessageError as exc:
            self.refused += 1
            _log.warning("table %s: refused a ledger message: %s", table, exc)
            return None
        try:
            if self._store is None:
                self._store = self.open_store()
            outcome = self._store.apply(message, self.now())
        except DatabaseError as exc:
            self.db_failures += 1
            if self.database_up:
                _log.error("the ledger database failed: %s; the tables keep their games", exc)
            self.database_up = False
            if self._store is not None:
                self._store.db.close()
                self._store = None
            return None
        self.database_up = True
        if outcome == "stored":
            self.stored += 1
            _log.info(
                "table %s: game %s revision %d %s stored",
                table,
                message.game_id,
                message.revision,
                message.state,
            )
        else:
            self.duplicates += 1
            if outcome == "conflict":
                _log.warning(
                    "table %s: game %s revision %d arrived with other results than the"
                    " ones held; kept the held ones",
                    table,
                    message.game_id,
                    message.revision,
                )
        return message.game_id, message.revision

    # ---------------------------------------------------------------------- MQTT

    def _status(self, state: str) -> bytes:
        return encode(
            {
                "v": CONTRACT_VERSION,
                "state": state,
                "instance": self.instance,
                "database": "up" if self.database_up else "down",
            }
        )

    def _make_client(self, tls: ssl.SSLContext | None) -> Client:
        s = self.settings
        return Client(
            s.broker_host,
            s.broker_port,
            username=s.mqtt_username,
            password=s.mqtt_password,
            identifier=f"tablectl-ledger-{self.instance[:8]}",
            keepalive=30,
            timeout=PUBLISH_TIMEOUT,
            tls_context=tls,
            will=Will(self.status_topic, self._status("offline"), qos=1, retain=True),
            # The ack follows the PUBACK of the game at once: with Nagle's algorithm it
            # waited ~40 ms for the broker's delayed ACK, a game at a time.
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )

    async def run(self) -> None:
        """Serve until :meth:`stop`; reconnect to the broker after any failure."""
        s = self.settings
        tls = None
        if s.broker_tls:
            tls = await asyncio.to_thread(ssl.create_default_context, cafile=s.ca_file)
        if self._store is None:
            try:
                self._store = await asyncio.to_thread(self.open_store)
            except DatabaseError as exc:
                # Serve anyway: the status says the database is down, nothing is
                # acknowledged, and each message tries it again.
                self.database_up = False
                _log.error("the ledger database failed: %s; the tables keep their games", exc)
        delay = RECONNECT_DELAY_MIN
        logged = False
        while not self._stop.is_set():
            try:
                async with self._make_client(tls) as client:
                    self._client = client
                    delay, logged = RECONNECT_DELAY_MIN, False
                    await self._serve(client)
            except MqttError as exc:
                if not logged:
                    _log.warning("broker %s:%d: %s; retrying", s.broker_host, s.broker_port, exc)
                    logged = True
            finally:
                self._client = None
                self.online.clear()
            if self._stop.is_set():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay * (1 + random.random() / 4))
            delay = min(delay * 2, RECONNECT_DELAY_MAX)
        if self._store is not None:
            self._store.db.close()
            self._store = None

    async def _serve(self, client: Client) -> None:
        prefix = self.settings.prefix
        await client.subscribe(f"{prefix}/v{CONTRACT_VERSION}/+/ledger", qos=1)
        await client.publish(self.status_topic, self._status("online"), qos=1, retain=True)
        _log.info("ledger %s online at %s", self.instance, self.settings.broker_host)
        self.online.set()
        reader = asyncio.create_task(self._read(client))
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reader.cancel()
            stopper.cancel()
            await asyncio.wait({reader, stopper})
        if self._stop.is_set():
            await client.publish(self.status_topic, self._status("offline"), qos=1, retain=True)
        else:
            reader.result()  # raises the MqttError that ended the session

    async def _read(self, client: Client) -> None:
        prefix = f"{self.settings.prefix}/v{CONTRACT_VERSION}/"
        async for message in client.messages:
            topic = str(message.topic)
            payload = message.payload
            if not topic.startswith(prefix) or not isinstance(payload, bytes | bytearray):
                continue
            table = topic[len(prefix) :].split("/", 1)[0]
            was_up = self.database_up
            ack = await asyncio.to_thread(self._store_game, table, bytes(payload))
            if self.database_up != was_up:
                await client.publish(self.status_topic, self._status("online"), qos=1, retain=True)
            if ack is not None:
                game_id, revision = ack
                body = {"v": CONTRACT_VERSION, "game_id": game_id, "revision": revision}
                await client.publish(f"{prefix}{table}/ledger/ack", json.dumps(body), qos=1)
        msg = "message iterator ended"
        raise MqttError(msg)

    def stop(self) -> None:
        """End :meth:`run` (it says offline first when connected)."""
        self._stop.set()
