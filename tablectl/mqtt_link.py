"""A table's connection to the parlor's broker: connect, announce, pump, reconnect.

:class:`BrokerLink` is the only part of the publisher that does I/O. It connects with
aiomqtt (last will ``offline``), announces the table (availability and discovery,
:class:`~tablectl.mqtt_topics.TableTopics`), subscribes to the topics the table guards and
listens to, sends what the :class:`~tablectl.mqtt_outbox.Outbox` holds, hands each incoming
message to its owner, and reconnects with exponential backoff and jitter when the
connection fails. ``close()`` flushes, says ``offline`` and disconnects within
``CLOSE_TIMEOUT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import ssl
from collections.abc import Awaitable, Callable

from aiomqtt import Client, MqttError, Will
from aiomqtt.exceptions import MqttConnectError  # not re-exported by aiomqtt 2.x

from tablectl.mqtt_outbox import Kind, Message, Outbox
from tablectl.mqtt_settings import MqttSettings
from tablectl.mqtt_topics import OFFLINE, TableTopics

__all__ = [
    "CLOSE_TIMEOUT",
    "PUBLISH_TIMEOUT",
    "RECONNECT_DELAY_MAX",
    "RECONNECT_DELAY_MIN",
    "RECONNECT_FACTOR",
    "RECONNECT_JITTER",
    "BrokerLink",
]

#: First reconnect delay (s): a broker restart takes about a second.
RECONNECT_DELAY_MIN = 0.5
#: Longest reconnect delay (s): a broker down for hours is not hammered by every table.
RECONNECT_DELAY_MAX = 30.0
#: Growth of the delay after each failed attempt.
RECONNECT_FACTOR = 2.0
#: Up to this fraction is added at random, so a parlor's tables do not reconnect in step.
RECONNECT_JITTER = 0.25
#: Wait (s) for CONNACK / PUBACK; longer than this the link is as good as dead.
PUBLISH_TIMEOUT = 10.0
#: At shutdown, time (s) to flush the queue and say ``offline`` before giving up.
CLOSE_TIMEOUT = 5.0


class BrokerLink:
    """The connection of one table to its broker, kept up until :meth:`close`.

    Args:
        settings: Broker address, credentials and TLS.
        topics: The table's topics and what it announces on them.
        outbox: What to send; the link takes from it and tells it what happened.
        on_message: Called with ``(topic, payload)`` for each message from the broker on
            a subscribed topic.
        log: Where to log; lines carry the table id as a ``[table]`` prefix.
    """

    def __init__(
        self,
        settings: MqttSettings,
        topics: TableTopics,
        outbox: Outbox,
        on_message: Callable[[str, bytes], None],
        log: logging.Logger,
    ) -> None:
        self._settings = settings
        self._topics = topics
        self._table = topics.table_id
        self._outbox = outbox
        self._on_message = on_message
        self._log = log
        self._client_id = settings.client_id or f"tablectl-{topics.table_id}"
        # asyncio.Event binds to a loop only when first awaited, so it is safe here.
        self._closing = asyncio.Event()
        self._tls_context: ssl.SSLContext | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._own_task: asyncio.Task[None] | None = None
        self._offline_sent = False
        #: Whether a session is up and the table announced on it.
        self.connected = False
        #: Messages the broker accepted (including availability and discovery).
        self.published = 0
        #: Successful connections after the first one.
        self.reconnects = 0
        #: Connection attempts or sessions that ended in an error.
        self.connect_failures = 0
        #: More topics to subscribe to in every session (the ledger's acknowledgements).
        self.subscriptions: list[str] = []
        #: Run beside the pump in every session once the table is announced, cancelled
        #: when the session ends (the ledger's resends).
        self.session_task: Callable[[], Awaitable[None]] | None = None

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closing.is_set()

    def start(self) -> None:
        """Start :meth:`run` as a task of its own (ended by :meth:`close`)."""
        self._own_task = asyncio.create_task(self.run(), name=f"tablectl-mqtt-{self._table}")

    async def run(self) -> None:
        """Connect, publish, and reconnect until :meth:`close`; run it as its own task."""
        if self._run_task is not None:
            msg = "TablePublisher.run() is already running"
            raise RuntimeError(msg)
        self._run_task = asyncio.current_task()
        delay = RECONNECT_DELAY_MIN
        ever_connected = False
        last_error: str | None = None
        try:
            while not self._closing.is_set():
                try:
                    client = await self._make_client()
                    async with client:
                        self._offline_sent = False
                        if ever_connected:
                            self.reconnects += 1
                        ever_connected = True
                        self._log.info(
                            "[%s] MQTT connected to %s:%d",
                            self._table,
                            self._settings.host,
                            self._settings.port,
                        )
                        delay, last_error = RECONNECT_DELAY_MIN, None
                        try:
                            await self._serve(client)
                        finally:
                            self.connected = False
                except MqttError as exc:
                    last_error = self._log_failure(exc, last_error)
                except (OSError, ssl.SSLError) as exc:
                    # Reading the CA file failed: a config problem, but it may be fixed
                    # (or the file may appear) without restarting the daemon.
                    last_error = self._log_failure(exc, last_error)
                except Exception as exc:
                    # A bug here must not end monitoring for the rest of the day.
                    self.connect_failures += 1
                    self._log.exception("[%s] MQTT publisher failed: %s", self._table, exc)
                if self._closing.is_set():
                    break
                # Jitter needs no crypto-grade randomness; this is the daemon, not the core.
                await self._sleep_unless_closing(delay * (1 + random.random() * RECONNECT_JITTER))
                delay = min(delay * RECONNECT_FACTOR, RECONNECT_DELAY_MAX)
        finally:
            self.connected = False
            self._run_task = None

    async def close(self) -> None:
        """Flush what is queued, publish ``offline`` (retained) and disconnect.

        Gives up after ``CLOSE_TIMEOUT`` seconds (broker down or slow) and cancels
        :meth:`run`.
        """
        self._closing.set()
        self._outbox.wake()
        tasks = {t for t in (self._run_task, self._own_task) if t is not None and not t.done()}
        if not tasks:
            return
        _done, pending = await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT)
        if pending:
            self._log.warning("[%s] MQTT close timed out; cancelling", self._table)
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)
        if self._own_task is not None and self._own_task.done():
            task, self._own_task = self._own_task, None
            if not task.cancelled() and task.exception() is not None:
                self._log.error("[%s] MQTT task failed: %r", self._table, task.exception())

    def _log_failure(self, exc: BaseException, last_error: str | None) -> str:
        """Log a failed connection once per distinct error, so outages do not flood logs."""
        self.connect_failures += 1
        text = f"{type(exc).__name__}: {exc}"
        if text == last_error:
            self._log.debug("[%s] MQTT still failing: %s", self._table, text)
        elif isinstance(exc, MqttConnectError):
            # The broker refused us (credentials, client id, ACL): a human must act.
            self._log.error(
                "[%s] MQTT broker %s:%d refused the connection: %s; retrying",
                self._table,
                self._settings.host,
                self._settings.port,
                exc,
            )
        else:
            self._log.warning(
                "[%s] MQTT connection to %s:%d failed: %s; retrying",
                self._table,
                self._settings.host,
                self._settings.port,
                text,
            )
        return text

    def _tls(self) -> ssl.SSLContext:
        s = self._settings
        context = ssl.create_default_context(cafile=s.ca_file)
        if s.certfile is not None:
            # A client certificate: the broker knows the table by it (Mosquitto's
            # require_certificate / use_identity_as_username).
            context.load_cert_chain(s.certfile, s.keyfile)
        return context

    async def _make_client(self) -> Client:
        s = self._settings
        tls_context = None
        if s.tls:
            if self._tls_context is None:
                # Loading the CA bundle and the certificate reads files: off the event loop.
                self._tls_context = await asyncio.to_thread(self._tls)
            tls_context = self._tls_context
        return Client(
            s.host,
            s.port,
            username=s.username,
            password=s.password,
            identifier=self._client_id,
            # Retained, so a table whose daemon died shows offline to late subscribers too.
            will=Will(self._topics.availability, OFFLINE, qos=1, retain=True),
            keepalive=s.keepalive,
            timeout=PUBLISH_TIMEOUT,
            tls_context=tls_context,
            # Small messages that a parlor watches live: with Nagle's algorithm a state
            # sent right after a qos-0 event waited ~40 ms for the broker's delayed ACK.
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )

    async def _sleep_unless_closing(self, delay: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), delay)

    async def _serve(self, client: Client) -> None:
        """One connected session: pump the queue until closing or the link fails.

        The pump and a disconnect watcher run side by side, so a dead link is noticed
        at once even while a qos-1 publish waits for its PUBACK.
        """
        pump = asyncio.create_task(self._pump(client))
        watcher = asyncio.create_task(self._watch(client))
        try:
            done, _pending = await asyncio.wait(
                {pump, watcher}, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            await self._stop_tasks(pump, watcher)
            if not self._offline_sent:
                # Cancelled (close timed out or the daemon is going down): the clean
                # disconnect that follows suppresses the will, so say offline ourselves.
                with contextlib.suppress(MqttError, TimeoutError):
                    await asyncio.wait_for(
                        client.publish(self._topics.availability, OFFLINE, qos=1, retain=True),
                        1.0,
                    )
            raise
        await self._stop_tasks(pump, watcher)
        self._outbox.requeue_inflight()
        if pump in done:
            pump.result()  # returns after closing; raises MqttError if a publish failed
        else:
            watcher.result()  # raises MqttError: the connection is gone

    @staticmethod
    async def _stop_tasks(*tasks: asyncio.Task[None]) -> None:
        for task in tasks:
            task.cancel()
        await asyncio.wait(tasks)

    async def _watch(self, client: Client) -> None:
        """Hand each message on a subscribed topic over; raise ``MqttError`` when the
        connection drops."""
        async for message in client.messages:
            payload = message.payload
            if not isinstance(payload, bytes | bytearray):
                continue
            self._on_message(str(message.topic), bytes(payload))
        msg = "message iterator ended"
        raise MqttError(msg)

    async def _send(self, client: Client, message: Message) -> None:
        if message.retain:
            self._outbox.remember_echo(message)
        await client.publish(message.topic, message.payload, message.qos, message.retain)
        self.published += 1

    async def _pump(self, client: Client) -> None:
        """Announce the table, re-send retained state, then drain the queue."""
        topics, outbox = self._topics, self._outbox
        announced = topics.announcement()
        outbox.announce(announced)
        # Listening before saying online: a dashboard may send a staff request the
        # moment it sees the table, and the broker drops one nobody subscribed to yet.
        await client.subscribe([(topics.staff_ack, 1), (topics.staff_command, 1)])
        for topic, payload in announced.items():
            await self._send(client, Message(topic, payload, 1, True, Kind.RETAINED))
        # Guard them: on a broker without ACLs anyone may overwrite a retained topic.
        await client.subscribe([(topic, 1) for topic in topics.guarded(announced)])
        if self.subscriptions:
            await client.subscribe([(topic, 1) for topic in self.subscriptions])
        outbox.resend_retained()
        # Only now: "connected" promises that the table is announced on the broker.
        self.connected = True
        if self.session_task is not None:
            session = asyncio.create_task(self._session(self.session_task))
            try:
                await self._drain(client)
            finally:
                session.cancel()
                await asyncio.wait({session})
        else:
            await self._drain(client)

    async def _session(self, task: Callable[[], Awaitable[None]]) -> None:
        """The session task; its failure is logged, not the end of the session."""
        try:
            await task()
        except Exception:
            self._log.exception("[%s] MQTT session task failed", self._table)

    async def _drain(self, client: Client) -> None:
        """Send what is queued until closing, then say offline."""
        outbox, topics = self._outbox, self._topics
        while True:
            message = outbox.take()
            if message is None:
                if self._closing.is_set():
                    break
                await outbox.wait()
                continue
            outbox.sending(message)
            await self._send(client, message)
            outbox.sent(message)
        offline = Message(topics.availability, OFFLINE.encode(), 1, True, Kind.RETAINED)
        await self._send(client, offline)
        self._offline_sent = True
