"""Live table state over MQTT, with Home Assistant discovery.

``TablePublisher`` sits between the daemon and the parlor's broker. The daemon calls the
plain (non-async) ``publish_*`` methods from the event-loop thread; they only put a message
into a bounded in-memory queue and return, so a slow, absent or restarting broker never
stalls a hand. ``run()`` is the only part that does I/O: it connects with aiomqtt,
announces the table (availability + discovery), drains the queue, and reconnects with
exponential backoff when the connection fails.

Queue policy:

* retained topics (state, per-seat scores) coalesce: only the latest value of each is
  kept, and all of them are re-published after every (re)connect;
* events and finished games keep their order in one FIFO of at most ``QUEUE_LIMIT``
  messages; when it is full the oldest *event* is dropped (games are dropped only when
  nothing but games is queued) and the drop is counted in ``stats.dropped``.

Topics and payloads are documented in ``docs/mqtt.md``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import json
import logging
import random
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiomqtt import Client, MqttError, Will
from aiomqtt.exceptions import MqttConnectError  # not re-exported by aiomqtt 2.x

from tablectl import mqtt_refusals
from tablectl.mqtt_settings import MqttSettings
from tablectl.mqtt_signing import RequestVerifier
from tablectl.version import __version__

__all__ = ["PublisherStats", "TablePublisher"]

_log = logging.getLogger(__name__)

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
#: Bound on queued events and games: an outage of days must not eat the Pi's memory.
QUEUE_LIMIT = 1000

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
#: Own payloads per retained topic recognised when the broker echoes them back late.
ECHOES = 8
#: Game control the parlor's dashboard may ask of a table (as ``tablectl ctl`` does).
STAFF_COMMANDS = ("undo", "new_game")
#: Largest staff request decoded (an ack or a command is well under 1 KiB).
STAFF_REQUEST_MAX = 4096
#: Longest staff name accepted in an acknowledgement (it is journalled and shown).
STAFF_NAME_MAX = 64
#: Why a table in ``commands = "off"`` mode refuses every staff request.
REQUESTS_OFF = "this table takes no staff requests over MQTT (no command_secret in [mqtt])"


def _staff_name(by: object) -> bool:
    """Whether ``by`` may name a staff member (it is journalled and shown)."""
    return isinstance(by, str) and 0 < len(by) <= STAFF_NAME_MAX and by.isprintable()


class _Kind(enum.Enum):
    """What a queued message is, which decides how it is dropped and retried."""

    RETAINED = "retained"  # latest value kept in a map; re-sent on every connect
    EVENT = "event"  # FIFO, dropped first when the queue is full
    GAME = "game"  # FIFO, qos 1, dropped only when nothing else can be (games, hands)


@dataclass(frozen=True, slots=True)
class _Message:
    """One outgoing MQTT message."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    kind: _Kind


@dataclass(frozen=True, slots=True)
class PublisherStats:
    """A snapshot of the publisher's counters.

    Attributes:
        published: Messages the broker accepted (including availability and discovery).
        dropped: Events/games dropped because the queue was full, or refused because
            they could not be encoded as JSON or arrived after ``close()``.
        reconnects: Successful connections after the first one.
        connect_failures: Connection attempts or sessions that ended in an error.
        queued: Messages waiting now (FIFO plus changed retained topics).
        connected: Whether a broker session is up and the table announced on it
            (``online`` and discovery published).
        overwritten: Times another client wrote one of the table's retained topics and
            the table put its value back (a broker without ACLs).
    """

    published: int
    dropped: int
    reconnects: int
    connect_failures: int
    queued: int
    connected: bool
    overwritten: int = 0


def _encode(value: Any) -> bytes:
    """Compact UTF-8 JSON; keeps kanji readable on the wire."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


class TablePublisher:
    """Publishes one table's live state, events and games to MQTT.

    Construction does no I/O and needs no running event loop. Run ``run()`` as its own
    task (or use ``async with publisher:``, which does that) and ``await close()`` at
    shutdown. The ``publish_*`` methods are not thread-safe: call them from the loop's
    thread, as the daemon does.

    Args:
        settings: Broker address, credentials and topic prefixes.
        table_id: This table's id; letters, digits, ``_`` and ``-`` only, because it
            becomes a topic level and a Home Assistant node id.
        seats: Number of seats (4, or 3 for sanma); one score sensor per seat.
        logger: Where to log; defaults to this module's logger. Messages carry the
            table id as a ``[table]`` prefix.
        clock: Unix time, to check a signed request's timestamp against.
    """

    def __init__(
        self,
        settings: MqttSettings,
        table_id: str,
        seats: int,
        *,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not _TABLE_ID.match(table_id):
            msg = f"table id {table_id!r} must use only letters, digits, '_' and '-'"
            raise ValueError(msg)
        if not 1 <= seats <= MAX_SEATS:
            msg = f"seats must be 1..{MAX_SEATS}, not {seats}"
            raise ValueError(msg)
        self._settings = settings
        self._table = table_id
        self._seats = seats
        self._log = logger if logger is not None else _log
        self._base = base = f"{settings.topic_prefix}/v{CONTRACT_VERSION}/{table_id}"
        self.availability_topic = f"{base}/availability"
        self.state_topic = f"{base}/state"
        self.events_topic = f"{base}/events"
        self.games_topic = f"{base}/games"
        self.hands_topic = f"{base}/hands"
        #: Where the parlor's dashboard acknowledges an alert (the table subscribes).
        self.staff_ack_topic = f"{base}/staff/ack"
        #: Where the parlor's dashboard asks for game control (undo, a new game).
        self.staff_command_topic = f"{base}/staff/command"
        #: Called with ``(alert_id, staff_name)`` for each well-formed acknowledgement
        #: (the daemon handles it like a table event); None: acknowledgements are ignored.
        self.on_staff_ack: Callable[[str, str], None] | None = None
        #: Called with ``(command, staff_name, rules or None)`` for each well-formed
        #: command; None: commands are ignored.
        self.on_staff_command: Callable[[str, str, str | None], None] | None = None
        #: Called with ``(action, claimed staff name, why)`` for a staff request refused
        #: because it is not authenticated (``commands`` mode, signature, replay), for
        #: the first few of each period only (see :mod:`tablectl.mqtt_refusals`).
        self.on_staff_refused: Callable[[str, str, str], None] | None = None
        #: Called with ``{reason: count}`` after a period in which more were refused
        #: than ``on_staff_refused`` was told of.
        self.on_staff_refusals_counted: Callable[[dict[str, int]], None] | None = None
        self._clock = clock
        self._mode = settings.command_mode
        self._verifier = (
            RequestVerifier(settings.command_secret)
            if self._mode == "signed" and settings.command_secret is not None
            else None
        )
        self._refusals = mqtt_refusals.RefusalLimiter(mqtt_refusals.BURST, mqtt_refusals.PERIOD)
        self._refusal_timer: asyncio.TimerHandle | None = None
        self._client_id = settings.client_id or f"tablectl-{table_id}"
        # Queue: latest payload per retained topic, the changed ones (dict = ordered set),
        # and the FIFO of events and games.
        self._retained: dict[str, bytes] = {}
        #: What the table announced on connect (availability, discovery): also ours to
        #: guard, though not part of the state that changes.
        self._announced: dict[str, bytes] = {}
        self._dirty: dict[str, None] = {}
        self._overwritten = 0
        self._overwrite_logged: set[str] = set()
        #: Per retained topic, the last payloads this table sent: the broker echoes each
        #: of them back, often after a newer one was queued, and an echo is not an
        #: overwrite.
        self._echoes: dict[str, collections.deque[bytes]] = {}
        self._retained_turn = False
        self._fifo: collections.deque[_Message] = collections.deque()
        self._inflight: _Message | None = None
        self._queue_limit = QUEUE_LIMIT
        # asyncio.Event binds to a loop only when first awaited, so it is safe here.
        self._wakeup = asyncio.Event()
        self._closing = asyncio.Event()
        self._tls_context: ssl.SSLContext | None = None
        self._run_task: asyncio.Task[None] | None = None
        self._own_task: asyncio.Task[None] | None = None
        self._connected = False
        self._offline_sent = False
        self._drop_logged = False
        self._published = 0
        self._dropped = 0
        self._reconnects = 0
        self._connect_failures = 0

    # ------------------------------------------------------------------ topics

    def seat_score_topic(self, seat: int) -> str:
        """The retained topic holding ``seat``'s score (seats count from 0, the first dealer)."""
        return f"{self._base}/seat/{seat}/score"

    def discovery_topic(self, object_id: str) -> str:
        """Home Assistant discovery topic for one of this table's sensors."""
        return f"{self._settings.discovery_prefix}/sensor/tablectl_{self._table}/{object_id}/config"

    def discovery_configs(self) -> dict[str, dict[str, Any]]:
        """Discovery topic -> config payload for every sensor of this table."""
        device = {
            "identifiers": [f"tablectl_{self._table}"],
            "name": f"Mahjong table {self._table}",
            "manufacturer": "tablectl",
            "model": "Riichi automatic table controller",
            "sw_version": __version__,
        }
        common = {"availability_topic": self.availability_topic, "device": device}
        configs: dict[str, dict[str, Any]] = {}
        for seat in range(self._seats):
            object_id = f"seat{seat}_score"
            configs[self.discovery_topic(object_id)] = {
                "name": f"Seat {seat} score",
                "unique_id": f"tablectl_{self._table}_{object_id}",
                "object_id": f"tablectl_{self._table}_{object_id}",
                "state_topic": self.seat_score_topic(seat),
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
            configs[self.discovery_topic(object_id)] = {
                "name": name,
                "unique_id": f"tablectl_{self._table}_{object_id}",
                "object_id": f"tablectl_{self._table}_{object_id}",
                "state_topic": self.state_topic,
                "value_template": template,
                "json_attributes_topic": self.state_topic,
                "icon": "mdi:mahjong",
                **common,
            }
        return configs

    # --------------------------------------------------------- daemon-facing API

    def publish_state(self, state: dict[str, Any]) -> None:
        """Queue the table state (retained); replaces any state not yet sent.

        ``state`` is a plain JSON-able dict (round, dealer, honba, deposits, scores,
        phase). Its ``scores`` list, when present, also updates the per-seat score
        topics, each only when its value changed.
        """
        payload = self._encode_or_drop({"v": CONTRACT_VERSION, **state}, "state")
        if payload is None:
            return
        self._set_retained(self.state_topic, payload)
        scores = state.get("scores")
        if isinstance(scores, list | tuple):
            for seat, score in enumerate(scores[: self._seats]):
                self._set_retained(self.seat_score_topic(seat), _encode(score))
        self._wakeup.set()

    def publish_event(self, event: dict[str, Any]) -> None:
        """Queue one table event (not retained, qos 0), in order after earlier events."""
        payload = self._encode_or_drop({"v": CONTRACT_VERSION, **event}, "event")
        if payload is not None:
            self._enqueue(_Message(self.events_topic, payload, 0, False, _Kind.EVENT))

    def publish_game(self, result: dict[str, Any]) -> None:
        """Queue a finished game's result (not retained, qos 1: the parlor keeps it)."""
        payload = self._encode_or_drop({"v": CONTRACT_VERSION, **result}, "game")
        if payload is not None:
            self._enqueue(_Message(self.games_topic, payload, 1, False, _Kind.GAME))

    def publish_hand(self, hand: dict[str, Any]) -> None:
        """Queue a settled hand (not retained, qos 1, kept like a game: a parlor's list of
        a table's hands must not have holes)."""
        payload = self._encode_or_drop({"v": CONTRACT_VERSION, **hand}, "hand")
        if payload is not None:
            self._enqueue(_Message(self.hands_topic, payload, 1, False, _Kind.GAME))

    @property
    def connected(self) -> bool:
        """Whether a session is up and the table announced (``online``, discovery)."""
        return self._connected

    @property
    def stats(self) -> PublisherStats:
        """A snapshot of the counters."""
        queued = len(self._fifo) + len(self._dirty) + (self._inflight is not None)
        return PublisherStats(
            published=self._published,
            dropped=self._dropped,
            reconnects=self._reconnects,
            connect_failures=self._connect_failures,
            queued=queued,
            connected=self._connected,
            overwritten=self._overwritten,
        )

    # ------------------------------------------------------------------ queue

    def _encode_or_drop(self, value: dict[str, Any], what: str) -> bytes | None:
        """Encode now (the caller may mutate its dict later); refuse after close."""
        if self._closing.is_set():
            self._dropped += 1
            return None
        try:
            return _encode(value)
        except (TypeError, ValueError):
            # A bug in the caller, but live monitoring must not take a game down with it.
            self._dropped += 1
            self._log.exception("[%s] %s is not JSON-serialisable; dropped", self._table, what)
            return None

    def _set_retained(self, topic: str, payload: bytes) -> None:
        if self._retained.get(topic) == payload:
            return  # unchanged: the broker already holds (or will get) this value
        self._retained[topic] = payload
        self._dirty[topic] = None

    def _enqueue(self, message: _Message) -> None:
        self._fifo.append(message)
        self._trim()
        self._wakeup.set()

    def _trim(self) -> None:
        """Drop the oldest events (games only as a last resort) down to the limit."""
        while len(self._fifo) > self._queue_limit:
            victim = next((m for m in self._fifo if m.kind is _Kind.EVENT), self._fifo[0])
            self._fifo.remove(victim)
            self._dropped += 1
            if not self._drop_logged:
                # Once per backlog, not once per message: an outage would flood the log.
                self._drop_logged = True
                self._log.warning(
                    "[%s] MQTT queue full (%d); dropping oldest events",
                    self._table,
                    self._queue_limit,
                )

    def _take(self) -> _Message | None:
        """The next message to send: FIFO messages and changed retained topics take turns,
        so a steady stream of events cannot hold back the table's state."""
        self._retained_turn = not self._retained_turn
        if self._fifo and not (self._retained_turn and self._dirty):
            return self._fifo.popleft()
        if self._dirty:
            topic = next(iter(self._dirty))
            del self._dirty[topic]
            payload = self._retained.get(topic, self._announced.get(topic, b""))
            # qos 1: the PUBACK says the broker stored it, so "idle" means "retained".
            return _Message(topic, payload, 1, True, _Kind.RETAINED)
        return None

    def _guarded(self) -> list[str]:
        """The retained topics this table owns and puts back when others overwrite them."""
        return [*self._announced, self.state_topic, *map(self.seat_score_topic, range(self._seats))]

    def _check_retained(self, topic: str, payload: bytes) -> None:
        """A message on one of our retained topics: another client's value (on a broker
        without ACLs) is replaced by ours; our own echo changes nothing."""
        truth = self._retained.get(topic, self._announced.get(topic))
        if truth is None or payload == truth or payload in self._echoes.get(topic, ()):
            return
        self._overwritten += 1
        if topic not in self._overwrite_logged:
            self._overwrite_logged.add(topic)
            self._log.warning(
                "[%s] another MQTT client wrote %s; putting the table's value back"
                " (give the broker an ACL: docs/mqtt.md)",
                self._table,
                topic,
            )
        self._dirty[topic] = None
        self._wakeup.set()

    def _requeue_inflight(self) -> None:
        """Put back a FIFO message whose publish failed; retained ones are re-sent anyway."""
        message, self._inflight = self._inflight, None
        if message is not None and message.kind is not _Kind.RETAINED:
            self._fifo.appendleft(message)
            self._trim()

    # ------------------------------------------------------------------- I/O

    async def __aenter__(self) -> TablePublisher:
        """Start ``run()`` as a task."""
        self._own_task = asyncio.create_task(self.run(), name=f"tablectl-mqtt-{self._table}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close (flush, say ``offline``, disconnect)."""
        await self.close()

    async def run(self) -> None:
        """Connect, publish, and reconnect until ``close()``; run it as its own task."""
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
                            self._reconnects += 1
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
                            self._connected = False
                except MqttError as exc:
                    last_error = self._log_failure(exc, last_error)
                except (OSError, ssl.SSLError) as exc:
                    # Reading the CA file failed: a config problem, but it may be fixed
                    # (or the file may appear) without restarting the daemon.
                    last_error = self._log_failure(exc, last_error)
                except Exception as exc:
                    # A bug here must not end monitoring for the rest of the day.
                    self._connect_failures += 1
                    self._log.exception("[%s] MQTT publisher failed: %s", self._table, exc)
                if self._closing.is_set():
                    break
                # Jitter needs no crypto-grade randomness; this is the daemon, not the core.
                await self._sleep_unless_closing(delay * (1 + random.random() * RECONNECT_JITTER))
                delay = min(delay * RECONNECT_FACTOR, RECONNECT_DELAY_MAX)
        finally:
            self._connected = False
            self._run_task = None

    async def close(self) -> None:
        """Flush what is queued, publish ``offline`` (retained) and disconnect.

        Gives up after ``CLOSE_TIMEOUT`` seconds (broker down or slow) and cancels
        ``run()``; after ``close()`` the ``publish_*`` methods drop what they get.
        """
        self._closing.set()
        self._wakeup.set()
        self._end_refusal_period(report=False)
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
        self._connect_failures += 1
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
            will=Will(self.availability_topic, OFFLINE, qos=1, retain=True),
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
                        client.publish(self.availability_topic, OFFLINE, qos=1, retain=True),
                        1.0,
                    )
            raise
        await self._stop_tasks(pump, watcher)
        self._requeue_inflight()
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
        """Watch the table's own retained topics (see :meth:`_check_retained`); raise
        ``MqttError`` when the connection drops."""
        async for message in client.messages:
            payload = message.payload
            if not isinstance(payload, bytes | bytearray):
                continue
            if str(message.topic) == self.staff_ack_topic:
                self._staff_ack(bytes(payload))
            elif str(message.topic) == self.staff_command_topic:
                self._staff_command(bytes(payload))
            else:
                self._check_retained(str(message.topic), bytes(payload))
        msg = "message iterator ended"
        raise MqttError(msg)

    def _staff_request(self, what: str, payload: bytes) -> dict[str, Any] | None:
        """A request from the parlor's dashboard, authenticated as the ``commands`` mode
        says and decoded with its ``by`` checked; None for anything else (refused, see
        :meth:`_refuse`, or after one warning naming what was wrong)."""
        topic = self.staff_ack_topic if what == "ack" else self.staff_command_topic
        request: dict[str, Any] | None = None
        if len(payload) > STAFF_REQUEST_MAX:
            problem = f"{len(payload)} bytes (at most {STAFF_REQUEST_MAX})"
        else:
            try:
                decoded = json.loads(payload)
            except (ValueError, RecursionError):
                decoded = None
            request = decoded if isinstance(decoded, dict) else None
            problem = "not a JSON object"
        if self._mode != "broker-acl":
            # Before anything else is said about it: an unauthenticated request gets one
            # rate-limited refusal, never a log line per message.
            if self._mode == "off":
                why: str | None = REQUESTS_OFF
            elif request is None:
                why = problem
            else:
                assert self._verifier is not None
                why = self._verifier.check(topic, request, self._clock())
            if why is not None:
                self._refuse(what, request, why)
                return None
        if request is None:
            self._log.warning("[%s] staff %s ignored: %s", self._table, what, problem)
            return None
        if not _staff_name(request.get("by")):
            self._log.warning(
                "[%s] staff %s ignored: 'by' must name the staff member (1-%d characters)",
                self._table,
                what,
                STAFF_NAME_MAX,
            )
            return None
        return request

    def _refuse(self, what: str, request: dict[str, Any] | None, why: str) -> None:
        """An unauthenticated staff request: the first few of a period are logged and
        handed to the daemon (journalled, published as ``staff_refused``); the rest are
        counted and reported once, when the period ends."""
        request = request or {}
        cmd = request.get("cmd")
        action = "alert_ack" if what == "ack" else cmd if cmd in STAFF_COMMANDS else "unknown"
        by = request["by"] if _staff_name(request.get("by")) else "?"
        now = self._clock()
        started = self._refusals.open_since
        if started is not None and now - started >= self._refusals.period:
            self._end_refusal_period()
        if not self._refusals.admit(why, now):
            return
        self._log.warning("[%s] staff %s refused (%s from %r): %s",
                          self._table, what, action, by, why)  # fmt: skip
        if self._refusal_timer is None:
            with contextlib.suppress(RuntimeError):  # no loop: the next refusal ends it
                self._refusal_timer = asyncio.get_running_loop().call_later(
                    self._refusals.period, self._end_refusal_period
                )
        if self.on_staff_refused is not None:
            self.on_staff_refused(action, by, why)

    def _end_refusal_period(self, report: bool = True) -> None:
        """Close the refusals' period: one warning and, with ``report``, one callback
        for the refusals it counted without handing them over."""
        if self._refusal_timer is not None:
            self._refusal_timer.cancel()
            self._refusal_timer = None
        counts = self._refusals.close()
        if not counts:
            return
        self._log.warning(
            "[%s] %d more staff requests refused in %g s: %s",
            self._table,
            sum(counts.values()),
            self._refusals.period,
            "; ".join(f"{why} x{n}" for why, n in counts.items()),
        )
        if report and self.on_staff_refusals_counted is not None:
            self.on_staff_refusals_counted(counts)

    def _staff_ack(self, payload: bytes) -> None:
        """An acknowledgement from the parlor's dashboard: checked here (one warning
        naming what was wrong, nothing else happens), then handed to the daemon."""
        ack = self._staff_request("ack", payload)
        if ack is None:
            return
        alert = ack.get("alert")
        if not (isinstance(alert, str) and 0 < len(alert) <= 16):
            self._log.warning("[%s] staff ack ignored: no alert id in %.80r", self._table, payload)
            return
        if self.on_staff_ack is not None:
            self.on_staff_ack(alert, ack["by"])

    def _staff_command(self, payload: bytes) -> None:
        """Game control from the parlor's dashboard (``undo``, ``new_game`` with optional
        ``rules``): checked here, then handed to the daemon, which refuses what the table
        cannot do now (published as a ``staff_refused`` event)."""
        command = self._staff_request("command", payload)
        if command is None:
            return
        cmd, rules = command.get("cmd"), command.get("rules")
        if cmd not in STAFF_COMMANDS:
            self._log.warning(
                "[%s] staff command ignored: 'cmd' must be one of %s",
                self._table,
                ", ".join(STAFF_COMMANDS),
            )
            return
        if rules is not None and not (isinstance(rules, str) and 0 < len(rules) <= 255):
            self._log.warning("[%s] staff command ignored: 'rules' must name rules", self._table)
            return
        if self.on_staff_command is not None:
            self.on_staff_command(cmd, command["by"], rules)

    async def _send(self, client: Client, message: _Message) -> None:
        if message.retain:
            echoes = self._echoes.setdefault(message.topic, collections.deque(maxlen=ECHOES))
            echoes.append(message.payload)
        await client.publish(message.topic, message.payload, message.qos, message.retain)
        self._published += 1

    async def _pump(self, client: Client) -> None:
        """Announce the table, re-send retained state, then drain the queue."""
        announced = {self.availability_topic: ONLINE.encode()}
        for topic, config in self.discovery_configs().items():
            announced[topic] = _encode(config)
        for seat in range(self._seats, MAX_SEATS):
            # An empty retained config removes a sensor left from a table with more seats.
            announced[self.discovery_topic(f"seat{seat}_score")] = b""
        self._announced = announced
        for topic, payload in announced.items():
            await self._send(client, _Message(topic, payload, 1, True, _Kind.RETAINED))
        # Guard them: on a broker without ACLs anyone may overwrite a retained topic.
        await client.subscribe([(topic, 1) for topic in self._guarded()])
        await client.subscribe([(self.staff_ack_topic, 1), (self.staff_command_topic, 1)])
        # The broker may have lost its retained store (restart without persistence).
        self._dirty = dict.fromkeys(self._retained)
        # Only now: "connected" promises that the table is announced on the broker.
        self._connected = True
        while True:
            message = self._take()
            if message is None:
                if self._closing.is_set():
                    break
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            self._inflight = message
            await self._send(client, message)
            self._inflight = None
            if message.kind is not _Kind.RETAINED:
                self._drop_logged = False
        offline = _Message(self.availability_topic, OFFLINE.encode(), 1, True, _Kind.RETAINED)
        await self._send(client, offline)
        self._offline_sent = True
