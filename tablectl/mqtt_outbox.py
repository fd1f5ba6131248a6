"""What a table has to send to the broker, kept in memory while the link is down or busy.

:class:`Outbox` is the queue between the daemon's ``publish_*`` calls (which must never
wait) and the connection (:mod:`tablectl.mqtt_link`), which takes one message at a time:

* retained topics (state, per-seat scores) coalesce: only the latest value of each is
  kept, and all of them are re-sent after every (re)connect;
* events and finished games keep their order in one FIFO of at most ``QUEUE_LIMIT``
  messages; when it is full the oldest *event* is dropped (games are dropped only when
  nothing but games is queued) and the drop is counted;
* the table's retained topics are guarded: a value another client wrote there (a broker
  without ACLs) is put back, while the broker's late echo of the table's own value is not
  taken for an overwrite.
"""

from __future__ import annotations

import asyncio
import collections
import enum
import logging
from dataclasses import dataclass

__all__ = ["ECHOES", "QUEUE_LIMIT", "Kind", "Message", "Outbox"]

#: Bound on queued events and games: an outage of days must not eat the Pi's memory.
QUEUE_LIMIT = 1000
#: Own payloads per retained topic recognised when the broker echoes them back late.
ECHOES = 8


class Kind(enum.Enum):
    """What a queued message is, which decides how it is dropped and retried."""

    RETAINED = "retained"  # latest value kept in a map; re-sent on every connect
    EVENT = "event"  # FIFO, dropped first when the queue is full
    GAME = "game"  # FIFO, qos 1, dropped only when nothing else can be (games, hands)


@dataclass(frozen=True, slots=True)
class Message:
    """One outgoing MQTT message."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    kind: Kind


class Outbox:
    """The queue of one table's outgoing messages (see the module's docstring).

    Not thread-safe: use it from the event loop's thread. Construction needs no loop.

    Args:
        log: Where to log a full queue and an overwritten topic.
        table: The table id, the ``[table]`` prefix of those lines.
    """

    def __init__(self, log: logging.Logger, table: str) -> None:
        self._log = log
        self._table = table
        self._limit = QUEUE_LIMIT
        #: The latest payload per retained topic.
        self._retained: dict[str, bytes] = {}
        #: What the table announced on connect (availability, discovery): also ours to
        #: guard, though not part of the state that changes.
        self._announced: dict[str, bytes] = {}
        #: Retained topics to (re-)send, in order (a dict as an ordered set).
        self._dirty: dict[str, None] = {}
        #: Per retained topic, the last payloads this table sent: the broker echoes each
        #: of them back, often after a newer one was queued, and an echo is not an
        #: overwrite.
        self._echoes: dict[str, collections.deque[bytes]] = {}
        self._retained_turn = False
        self._fifo: collections.deque[Message] = collections.deque()
        self._inflight: Message | None = None
        # asyncio.Event binds to a loop only when first awaited, so it is safe here.
        self._wakeup = asyncio.Event()
        self._drop_logged = False
        self._overwrite_logged: set[str] = set()
        #: Events/games dropped because the queue was full, or refused (:meth:`refused`).
        self.dropped = 0
        #: Times another client wrote one of the table's retained topics.
        self.overwritten = 0

    @property
    def queued(self) -> int:
        """Messages waiting now: FIFO, changed retained topics, and one being sent."""
        return len(self._fifo) + len(self._dirty) + (self._inflight is not None)

    # --------------------------------------------------------------- filling

    def set_retained(self, topic: str, payload: bytes) -> None:
        """Queue ``payload`` as the retained value of ``topic``, replacing one not yet
        sent; nothing is queued when the topic holds that value already. Call
        :meth:`wake` after a group of these."""
        if self._retained.get(topic) == payload:
            return  # unchanged: the broker already holds (or will get) this value
        self._retained[topic] = payload
        self._dirty[topic] = None

    def enqueue(self, message: Message) -> None:
        """Queue an event or a game after the ones before it (trimmed to the limit)."""
        self._fifo.append(message)
        self._trim()
        self._wakeup.set()

    def refused(self) -> None:
        """Count a message refused before it was queued (not JSON, or after close)."""
        self.dropped += 1

    def wake(self) -> None:
        """Wake the sender waiting in :meth:`wait` (something was queued, or closing)."""
        self._wakeup.set()

    def _trim(self) -> None:
        """Drop the oldest events (games only as a last resort) down to the limit."""
        while len(self._fifo) > self._limit:
            victim = next((m for m in self._fifo if m.kind is Kind.EVENT), self._fifo[0])
            self._fifo.remove(victim)
            self.dropped += 1
            if not self._drop_logged:
                # Once per backlog, not once per message: an outage would flood the log.
                self._drop_logged = True
                self._log.warning(
                    "[%s] MQTT queue full (%d); dropping oldest events", self._table, self._limit
                )

    # --------------------------------------------------------------- sending

    def take(self) -> Message | None:
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
            return Message(topic, payload, 1, True, Kind.RETAINED)
        return None

    async def wait(self) -> None:
        """Wait until something is queued (or :meth:`wake` is called)."""
        self._wakeup.clear()
        await self._wakeup.wait()

    def sending(self, message: Message) -> None:
        """``message`` (from :meth:`take`) is being sent: it still counts as queued, and
        goes back to the queue if the link fails first (:meth:`requeue_inflight`)."""
        self._inflight = message

    def sent(self, message: Message) -> None:
        """The broker has ``message``."""
        self._inflight = None
        if message.kind is not Kind.RETAINED:
            self._drop_logged = False

    def requeue_inflight(self) -> None:
        """Put back a FIFO message whose publish failed; retained ones are re-sent anyway."""
        message, self._inflight = self._inflight, None
        if message is not None and message.kind is not Kind.RETAINED:
            self._fifo.appendleft(message)
            self._trim()

    def announce(self, announced: dict[str, bytes]) -> None:
        """A session starts with publishing ``announced`` (topic -> retained payload):
        guarded from now on like the state."""
        self._announced = announced

    def resend_retained(self) -> None:
        """Queue every retained topic again: the broker may have lost its retained store
        (restart without persistence)."""
        self._dirty = dict.fromkeys(self._retained)

    # ------------------------------------------------------------- guarding

    def remember_echo(self, message: Message) -> None:
        """Note a retained payload about to be sent: its echo is not an overwrite."""
        echoes = self._echoes.setdefault(message.topic, collections.deque(maxlen=ECHOES))
        echoes.append(message.payload)

    def check_retained(self, topic: str, payload: bytes) -> None:
        """A message on one of our retained topics: another client's value (on a broker
        without ACLs) is replaced by ours; our own echo changes nothing."""
        truth = self._retained.get(topic, self._announced.get(topic))
        if truth is None or payload == truth or payload in self._echoes.get(topic, ()):
            return
        self.overwritten += 1
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
