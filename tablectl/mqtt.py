"""Live table state over MQTT, with Home Assistant discovery.

``TablePublisher`` sits between the daemon and the parlor's broker. The daemon calls the
plain (non-async) ``publish_*`` methods from the event-loop thread; they only put a message
into a bounded in-memory queue and return, so a slow, absent or restarting broker never
stalls a hand. ``run()`` is the only part that does I/O: it connects with aiomqtt,
announces the table (availability + discovery), drains the queue, and reconnects with
exponential backoff when the connection fails.

The publisher is composed of one object per job, each in its own module:

* :class:`~tablectl.mqtt_topics.TableTopics`: the table's topics, the payloads' encoding
  and what the table announces on connect;
* :class:`~tablectl.mqtt_outbox.Outbox`: the queue (retained topics coalesce and are
  re-sent after every connect; events and games keep their order in one FIFO of at most
  ``QUEUE_LIMIT`` messages, the oldest event dropped first when it is full) and the guard
  of the table's retained topics;
* :class:`~tablectl.mqtt_link.BrokerLink`: the connection, its backoff and shutdown;
* :class:`~tablectl.mqtt_requests.StaffRequests`: staff requests from the parlor
  (signatures, refusals), checked before the daemon sees them;
* :class:`~tablectl.mqtt_ledger.LedgerSync` (with :meth:`TablePublisher.attach_ledger`):
  the journal's finished games sent to the parlor's ledger until it acknowledges them.

Topics and payloads are documented in ``docs/mqtt.md``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tablectl.journal import Journal
from tablectl.mqtt_ledger import LedgerSync
from tablectl.mqtt_link import BrokerLink
from tablectl.mqtt_outbox import Kind, Message, Outbox
from tablectl.mqtt_requests import REQUESTS_OFF, STAFF_COMMANDS, StaffRequests
from tablectl.mqtt_settings import MqttSettings
from tablectl.mqtt_topics import CONTRACT_VERSION, MAX_SEATS, TableTopics, encode, versioned

__all__ = [
    "CONTRACT_VERSION",
    "MAX_SEATS",
    "REQUESTS_OFF",
    "STAFF_COMMANDS",
    "PublisherStats",
    "TablePublisher",
]

_log = logging.getLogger(__name__)


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
        self._topics = topics = TableTopics(settings, table_id, seats)
        self._table = table_id
        self._log = log = logger if logger is not None else _log
        self.availability_topic = topics.availability
        self.state_topic = topics.state
        self.events_topic = topics.events
        self.games_topic = topics.games
        self.hands_topic = topics.hands
        self.menu_topic = topics.menu
        #: Where the parlor's dashboard acknowledges an alert (the table subscribes).
        self.staff_ack_topic = topics.staff_ack
        #: Where the parlor's dashboard asks for game control (staff/command).
        self.staff_command_topic = topics.staff_command
        self._seat_topics = tuple(map(topics.seat_score, range(seats)))
        self._outbox = Outbox(log, table_id)
        self._requests = StaffRequests(
            topics.staff_ack,
            topics.staff_command,
            mode=settings.command_mode,
            secret=settings.command_secret,
            clock=clock,
            log=log,
            table=table_id,
        )
        self._link = BrokerLink(settings, topics, self._outbox, self._incoming, log)
        self._ledger: LedgerSync | None = None

    # ------------------------------------------------------------------ topics

    def seat_score_topic(self, seat: int) -> str:
        """The retained topic holding ``seat``'s score (seats count from 0, the first dealer)."""
        return self._topics.seat_score(seat)

    def discovery_topic(self, object_id: str) -> str:
        """Home Assistant discovery topic for one of this table's sensors."""
        return self._topics.discovery(object_id)

    def discovery_configs(self) -> dict[str, dict[str, Any]]:
        """Discovery topic -> config payload for every sensor of this table."""
        return self._topics.discovery_configs()

    # ------------------------------------------------------ staff requests

    @property
    def on_staff_ack(self) -> Callable[[str, str], None] | None:
        """Called with ``(alert_id, staff_name)`` for each well-formed acknowledgement
        (the daemon handles it like a table event); None: acknowledgements are ignored."""
        return self._requests.on_ack

    @on_staff_ack.setter
    def on_staff_ack(self, callback: Callable[[str, str], None] | None) -> None:
        self._requests.on_ack = callback

    @property
    def on_staff_command(self) -> Callable[[str, str, str | None, int | None], None] | None:
        """Called with ``(command, staff_name, rules or None, seat or None)`` for each
        well-formed command; None: commands are ignored."""
        return self._requests.on_command

    @on_staff_command.setter
    def on_staff_command(
        self, callback: Callable[[str, str, str | None, int | None], None] | None
    ) -> None:
        self._requests.on_command = callback

    @property
    def on_staff_seat(self) -> Callable[[str, list[str] | None], None] | None:
        """Called with ``(staff_name, names or None)`` for each well-formed ``seat``
        command (docs/seating.md); None: seating requests are ignored."""
        return self._requests.on_seat

    @on_staff_seat.setter
    def on_staff_seat(self, callback: Callable[[str, list[str] | None], None] | None) -> None:
        self._requests.on_seat = callback

    @property
    def on_staff_refused(self) -> Callable[[str, str, str], None] | None:
        """Called with ``(action, claimed staff name, why)`` for a staff request refused
        because it is not authenticated (``commands`` mode, signature, replay), for the
        first few of each period only (see :mod:`tablectl.mqtt_refusals`)."""
        return self._requests.on_refused

    @on_staff_refused.setter
    def on_staff_refused(self, callback: Callable[[str, str, str], None] | None) -> None:
        self._requests.on_refused = callback

    @property
    def on_staff_refusals_counted(self) -> Callable[[dict[str, int]], None] | None:
        """Called with ``{reason: count}`` after a period in which more were refused than
        ``on_staff_refused`` was told of."""
        return self._requests.on_refusals_counted

    @on_staff_refusals_counted.setter
    def on_staff_refusals_counted(self, callback: Callable[[dict[str, int]], None] | None) -> None:
        self._requests.on_refusals_counted = callback

    # ------------------------------------------------------------ the ledger

    def attach_ledger(self, journal: Journal) -> LedgerSync:
        """Send the finished games in ``journal``'s outbox to the parlor's ledger until it
        acknowledges them (docs/ledger.md). Call it before :meth:`run`."""
        topics = self._topics
        sync = LedgerSync(journal, topics.ledger, self._outbox, self._log, self._table)
        self._ledger = sync
        self._link.subscriptions = [topics.ledger_ack, topics.ledger_status]
        self._link.session_task = sync.session
        return sync

    def _incoming(self, topic: str, payload: bytes) -> None:
        """A message from the broker: a staff request, the ledger's, or one on a guarded
        topic."""
        topics, ledger = self._topics, self._ledger
        if topic == self.staff_ack_topic:
            self._requests.ack(payload)
        elif topic == self.staff_command_topic:
            self._requests.command(payload)
        elif ledger is not None and topic == topics.ledger_ack:
            ledger.on_ack(payload)
        elif ledger is not None and topic == topics.ledger_status:
            ledger.on_status(payload)
        else:
            self._outbox.check_retained(topic, payload)

    # --------------------------------------------------------- daemon-facing API

    def publish_state(self, state: dict[str, Any]) -> None:
        """Queue the table state (retained); replaces any state not yet sent.

        ``state`` is a plain JSON-able dict (round, dealer, honba, deposits, scores,
        phase). Its ``scores`` list, when present, also updates the per-seat score
        topics, each only when its value changed.
        """
        payload = self._encode_or_drop(state, "state")
        if payload is None:
            return
        outbox = self._outbox
        outbox.set_retained(self.state_topic, payload)
        scores = state.get("scores")
        if isinstance(scores, list | tuple):
            for topic, score in zip(self._seat_topics, scores, strict=False):
                outbox.set_retained(topic, encode(score))
        outbox.wake()

    def publish_event(self, event: dict[str, Any]) -> None:
        """Queue one table event (not retained, qos 0), in order after earlier events."""
        payload = self._encode_or_drop(event, "event")
        if payload is not None:
            self._outbox.enqueue(Message(self.events_topic, payload, 0, False, Kind.EVENT))

    def publish_game(self, result: dict[str, Any]) -> None:
        """Queue a finished game's result (not retained, qos 1: the parlor keeps it)."""
        payload = self._encode_or_drop(result, "game")
        if payload is not None:
            self._outbox.enqueue(Message(self.games_topic, payload, 1, False, Kind.GAME))
        if self._ledger is not None:
            self._ledger.poke()  # the game's end is in the journal's ledger outbox

    def publish_menu(self, menu: dict[str, Any]) -> None:
        """Queue what staff may ask of the table from the parlor (retained, latest only):
        its ``rules_menu`` and the ``commands`` it takes."""
        payload = self._encode_or_drop(menu, "menu")
        if payload is not None:
            self._outbox.set_retained(self.menu_topic, payload)
            self._outbox.wake()

    def publish_hand(self, hand: dict[str, Any]) -> None:
        """Queue a settled hand (not retained, qos 1, kept like a game: a parlor's list of
        a table's hands must not have holes)."""
        payload = self._encode_or_drop(hand, "hand")
        if payload is not None:
            self._outbox.enqueue(Message(self.hands_topic, payload, 1, False, Kind.GAME))

    def _encode_or_drop(self, value: dict[str, Any], what: str) -> bytes | None:
        """Encode now (the caller may mutate its dict later); refuse after close."""
        if self._link.closing:
            self._outbox.refused()
            return None
        try:
            return versioned(value)
        except (TypeError, ValueError):
            # A bug in the caller, but live monitoring must not take a game down with it.
            self._outbox.refused()
            self._log.exception("[%s] %s is not JSON-serialisable; dropped", self._table, what)
            return None

    @property
    def connected(self) -> bool:
        """Whether a session is up and the table announced (``online``, discovery)."""
        return self._link.connected

    @property
    def stats(self) -> PublisherStats:
        """A snapshot of the counters."""
        link, outbox = self._link, self._outbox
        return PublisherStats(
            published=link.published,
            dropped=outbox.dropped,
            reconnects=link.reconnects,
            connect_failures=link.connect_failures,
            queued=outbox.queued,
            connected=link.connected,
            overwritten=outbox.overwritten,
        )

    # ------------------------------------------------------------------- I/O

    async def __aenter__(self) -> TablePublisher:
        """Start ``run()`` as a task."""
        self._link.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close (flush, say ``offline``, disconnect)."""
        await self.close()

    async def run(self) -> None:
        """Connect, publish, and reconnect until ``close()``; run it as its own task."""
        await self._link.run()

    async def close(self) -> None:
        """Flush what is queued, publish ``offline`` (retained) and disconnect.

        Gives up after ``CLOSE_TIMEOUT`` seconds (broker down or slow) and cancels
        ``run()``; after ``close()`` the ``publish_*`` methods drop what they get.
        """
        self._requests.close()
        if self._ledger is not None:
            self._ledger.check()  # a game committed since the last look goes with the flush
        await self._link.close()
        if self._ledger is not None:
            self._ledger.close()
