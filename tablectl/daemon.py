"""``tablectl run``: one table's daemon.

Wires the pieces together: the link to the table (firmware_bridge), the table controller
(:mod:`tablectl.table`), the journal (written before anything an event causes goes out),
the optional MQTT publisher, and a tick for claim windows and the game clock.  On start
the unfinished game in the journal is replayed through the rules core and the table
resumes where the hand stood.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import firmware_bridge
from firmware_bridge import (
    Delivery,
    Link,
    LinkDown,
    LinkEvent,
    LinkLost,
    LinkRefused,
    LinkUp,
    Role,
    TableRebooted,
)
from firmware_bridge import messages as m
from tablectl.config import DaemonConfig, load_rules_ref
from tablectl.console.screens import ShownScreens
from tablectl.console.staff import StaffGate
from tablectl.ctl import CtlServer
from tablectl.journal import Journal, JournalLock, LinkPosition, resume
from tablectl.mqtt_requests import STAFF_COMMANDS
from tablectl.rules import events as ev
from tablectl.rules.options import HouseRules
from tablectl.rules.state import Final, GameState, HandRecord
from tablectl.seating import latest_seating
from tablectl.table import CLAIM_WINDOW_S, Table
from tablectl.watchdog import StallWatch

if TYPE_CHECKING:
    from tablectl.mqtt import TablePublisher

log = logging.getLogger(__name__)

#: How often claim windows and the game clock are checked (a tenth of a human reaction).
TICK_S = 0.1
#: Most table events handled as one group, in one journal transaction.
GROUP_LIMIT = 32
#: Table events the stored link position may lag behind without a write of its own. With
#: a group's 31 more it stays under 248 (the link's 256 sequence numbers less its window
#: of 8), beyond which a stale position reads as an acknowledgement; and an fsync'd write
#: per 192 keys keeps a score-page press at about 190 bytes written (docs/performance.md).
POSITION_LAG_MAX = 192


class JournalRecorder:
    """Writes every accepted event to the journal; the write is durable when it returns,
    or, inside :meth:`handling`, when the block ends."""

    def __init__(
        self,
        journal: Journal,
        table_id: str,
        rules_ref: str,
        seats: tuple[str, ...] | None,
        *,
        game_id: str | None = None,
        clock: Callable[[], float] = time.time,
        position: Callable[[], LinkPosition | None] = lambda: None,
        flow: Callable[[], dict[str, Any] | None] = lambda: None,
    ) -> None:
        self.journal = journal
        self.table_id = table_id
        self.rules_ref = rules_ref
        self.seats = seats
        self.game_id = game_id
        self.clock = clock
        #: The link position to store with each event (after the table event being handled).
        self.position = position
        #: The position stored last (with an event or on its own).
        self.stored: LinkPosition | None = journal.link_position()
        #: The table controller's console state, stored with the position.
        self.flow = flow
        #: A cheap summary of the console state's durable part (no pages, messages or
        #: clock): when a group changes it, the group is journalled like an event.
        self.flow_key: Callable[[], Hashable] = lambda: None
        #: Events journalled in the current game (the stored flow names it).
        self.game_events = journal.game(game_id).event_count if game_id is not None else 0
        self._batch: list[ev.Event | None] | None = None
        #: Set when an event of the group failed: the flow is not stored with the group.
        self.flow_void = False

    def _flow_text(self) -> str | None:
        if self.flow_void:
            return None  # an event failed half-way: the consoles are not what was committed
        flow = self.flow()
        if flow is None or self.game_id is None:
            return None
        record = {"game_id": self.game_id, "events": self.game_events, "flow": flow}
        return json.dumps(record, separators=(",", ":"))

    def stored_flow(self) -> dict[str, Any] | None:
        """The console state stored for exactly the journal's current game and events."""
        text = self.journal.link_flow()
        if text is None or self.game_id is None:
            return None
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not isinstance(record, dict):
            return None
        if record.get("game_id") != self.game_id or record.get("events") != self.game_events:
            return None
        flow = record.get("flow")
        return flow if isinstance(flow, dict) else None

    @contextlib.contextmanager
    def handling(self) -> Iterator[None]:
        """Everything journalled inside (what a group of table events or one tick causes)
        goes in one transaction together with the link position and the console flow,
        durable when the block ends (one fsync, only if something was journalled).

        So after a crash the journal has all of it and the table does not resend those
        events, or none of it and the table does. Table events that journal nothing (a
        score page, a refused key) write nothing of their own: their position rides on the
        next commit, and after a crash the table, which had them acknowledged, does not
        send them again; nothing but a page or a message is lost with them. A key that
        changes what the consoles are doing (a prompt opened, a digit typed, a claim
        answered) changes the stored console flow, so its group is committed like an
        event's: a restarted daemon resumes exactly the consoles the table's
        acknowledged keys made, and the players' next keys mean what they meant. To keep
        the stored position within half the link's 8-bit sequence space of the table's
        (a stale one must never look like a new acknowledgement, not even after a power
        cut), it is written on its own, with an fsync, once it lags
        :data:`POSITION_LAG_MAX` events behind."""
        self._batch = []
        self.flow_void = False
        flow_before = self.flow_key()
        try:
            with self.journal.batch():
                yield
                position = self.position()
                journalled = bool(self._batch) or self.flow_key() != flow_before
                if position is not None and journalled:
                    self.journal.set_link_position(position, flow=self._flow_text())
                    self.stored = position
            if position is not None and not journalled and self._lags(position):
                self.journal.set_link_position(position, flow=self._flow_text())
                self.stored = position
        finally:
            self._batch = None

    def unit(self) -> contextlib.AbstractContextManager[None]:
        """One table event of a group: its writes in a savepoint of their own, so that an
        event that fails leaves the group's earlier events committed (see
        :meth:`Journal.unit`)."""
        return self.journal.unit()

    def _lags(self, position: LinkPosition) -> bool:
        stored = self.stored
        if stored is None or stored.boot_id != position.boot_id:
            return True
        return (position.rx_next - stored.rx_next) % 256 >= POSITION_LAG_MAX

    def game_started(self, rules: HouseRules, rules_ref: str | None = None) -> None:
        """Open a new game in the journal (with ``rules_ref``, staff changed the rules)."""
        if rules_ref is not None:
            self.rules_ref = rules_ref
        self.game_id = self.journal.start_game(
            self.table_id, self.rules_ref, self.seats, self.clock()
        )
        self.game_events = 0

    def seat_players(self, names: tuple[str, ...] | None) -> None:
        """Staff seated ``names`` (see :mod:`tablectl.seating`): the next game is theirs,
        and so is the current one while it has journalled no event."""
        self.seats = names
        if self.game_id is not None and self.game_events == 0:
            game = self.journal.game(self.game_id)
            if game.status == "playing":
                self.journal.set_game_seats(self.game_id, names)

    def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
        """Journal a note of the current game (durable with the unit being handled)."""
        self.journal.note(self.game_id, self.clock(), seat, kind, detail)
        if self._batch is not None:
            self._batch.append(None)  # makes the unit's commit an fsync'd one

    def game_abandoned(self) -> None:
        """Staff ended the game in progress: it stays in the journal as abandoned."""
        if self.game_id is not None:
            self.journal.abandon_game(self.game_id, self.clock())
        self.game_id = None
        self.game_events = 0

    def event_accepted(self, event: ev.Event, state: GameState) -> None:
        """Append ``event``; when it ended the game, the record goes in the same write."""
        if self.game_id is None:
            raise RuntimeError("an event was accepted before the game was started")
        final = state.final.as_dict() if state.finished and state.final is not None else None
        if self._batch is not None:  # the position goes in when the batch ends
            self.journal.append(self.game_id, event, self.clock(), final=final)
            self.game_events += 1
            self._batch.append(event)
            return
        position = self.position()
        self.journal.append(self.game_id, event, self.clock(), final=final, position=position)
        self.game_events += 1
        if position is not None:
            self.stored = position


class Daemon:
    """One table: link, controller, journal and MQTT, until ``stop`` is set."""

    def __init__(
        self,
        config: DaemonConfig,
        *,
        claim_window_s: float | None = CLAIM_WINDOW_S,
        new_games: bool = True,
        max_games: int | None = None,
        on_game: Callable[[Table, dict[str, Any]], None] | None = None,
        on_hand: Callable[[Table, HandRecord], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        stop_at: Callable[[int, LinkPosition | None], bool] | None = None,
    ) -> None:
        """``monotonic`` times the claim windows, the game clock, the staff lock-out and
        the stall watchdog: a test that needs the same frames from the same seed gives one
        that stands still (the seat displays show the game clock). ``claim_window_s``
        None: no claim deadline, a window closes on its answers (bots on every seat).

        ``stop_at`` (the demo's fast-forward) is asked before each table event, with the
        events journalled in the game and the link position handled so far; when it says
        True the daemon stops there with :class:`StoppedAt`, leaving that event and those
        after it unacknowledged, for the next daemon on the table."""
        self.config = config
        self.monotonic = monotonic
        self.claim_window_s = claim_window_s
        self.new_games = new_games
        self.max_games = max_games
        self.on_game = on_game
        self.on_hand = on_hand
        self.stop_at = stop_at
        self.stop = asyncio.Event()
        self.table: Table | None = None
        self.link: Link | None = None
        self._lock = asyncio.Lock()
        self._handling: firmware_bridge.LinkPosition | None = None
        self._held: list[m.Message] | None = None
        self._games_over = 0
        #: Why the table's hello was refused (a protocol or signing mismatch), while it is.
        self.refused: str | None = None
        #: The screens the seats were sent, to tell which one a key was pressed on, and
        #: the seat of the key being handled (its displays are that seat's own doing).
        self.screens = ShownScreens()
        self._key_seat: int | None = None
        #: The stall watchdog (None when the config turns it off), checked every tick.
        self.watch: StallWatch | None = None

    @contextlib.contextmanager
    def _holding(self, acknowledge: Callable[[], None] | None = None) -> Iterator[None]:
        """Keep the commands posted inside until the block ends without an error (after
        the journal batch inside it committed): nothing goes out before it is on disk.

        ``acknowledge`` is called then too, just before the last command is posted, so
        that the last frame carries the ack: a table reads the commands first and then
        the ack that frees its window, and its next events, sent then, carry its own ack
        (acked first, a C firmware sent its queued events at once and a bare Ack after
        the commands, one frame more per group)."""
        self._held = []
        try:
            yield
            held = self._held
        finally:
            self._held = None
        for msg in held[:-1]:
            self._send(msg)
        if acknowledge is not None:
            acknowledge()
        for msg in held[-1:]:
            self._send(msg)

    def _post(self, msg: m.Message) -> None:
        if isinstance(msg, m.SeatDisplay):
            self.screens.made(msg.seat, msg.line1, own=self._key_seat == msg.seat)
        if self._held is not None:
            self._held.append(msg)
            return
        self._send(msg)

    def _send(self, msg: m.Message) -> None:
        link = self.link
        try:
            if link is None:
                raise LinkDown("no link yet")
            link.post_nowait(msg)
        except LinkDown:
            # Displays are re-sent in full after the reconnect; nothing else to do now.
            log.debug("[%s] not sent while the link is down: %s", self.config.table_id, msg)
            if isinstance(msg, m.SeatDisplay):
                self.screens.unsent(msg.seat)
            return
        if isinstance(msg, m.SeatDisplay):
            self.screens.posted(msg.seat, link.session, link.posted_count)

    async def run(self) -> None:
        """Run until :attr:`stop` is set (or ``max_games`` games have finished)."""
        config = self.config
        lock = JournalLock(config.journal).acquire()
        try:
            check_device_free(config.device)
        except BaseException:
            lock.release()
            raise
        try:
            await self._run_locked(config)
        finally:
            lock.release()

    async def _run_locked(self, config: DaemonConfig) -> None:
        journal = Journal.open(config.journal, preallocate_log=True)
        resumed = resume(journal)
        rules = resumed.rules if resumed is not None else config.house_rules
        # A game resumed from the journal goes on with the rules it started with, which
        # staff may have chosen on the table rather than in the config.
        rules_ref = journal.game(resumed.game_id).rules if resumed is not None else config.rules
        # Players staff seated stay seated across restarts, until staff seat others.
        seated = latest_seating(journal, rules.players)
        recorder = JournalRecorder(
            journal,
            config.table_id,
            rules_ref,
            seated if seated is not None else config.seat_names,
            game_id=resumed.game_id if resumed is not None else None,
        )
        publisher: TablePublisher | None = None
        if config.mqtt is not None:
            # Imported here: aiomqtt and paho cost ~40 ms of start-up, and a table without
            # a parlor broker never needs them.
            from tablectl.mqtt import TablePublisher

            if config.mqtt.password is not None and not config.mqtt.tls:
                log.warning(
                    "[%s] the MQTT password goes to %s in clear text: set tls = true in [mqtt]",
                    config.table_id,
                    config.mqtt.host,
                )

            publisher = TablePublisher(config.mqtt, config.table_id, rules.players)
            publisher.attach_ledger(journal)
            anonymous = config.mqtt.username is None and config.mqtt.certfile is None
            trusting = config.mqtt.command_mode == "broker-acl" and anonymous
            log.log(logging.WARNING if trusting else logging.INFO, "[%s] %s",
                    config.table_id, config.mqtt.command_mode_line())  # fmt: skip
        stored = recorder.stored
        self.link = Link(
            config.device,
            role=Role.HOST,
            name=config.table_id,
            resume=None if stored is None else firmware_bridge.LinkPosition(*stored),
        )
        recorder.position = self._link_position
        table = Table(
            rules,
            post=self._post,
            recorder=recorder,
            publisher=publisher,
            now=self.monotonic,
            table_id=config.table_id,
            state=resumed.state if resumed is not None else None,
            claim_window_s=self.claim_window_s,
            new_games=self.new_games,
            on_game_over=self._game_over,
            rules_ref=rules_ref,
            staff=StaffGate(config.staff.pin_hash, self.monotonic),
            rules_menu=config.staff.rules_menu or (config.rules,),
            load_rules=load_rules_ref,
            hold_on_tray_mismatch=config.hold_next_hand,
            seat_names=config.seat_names,
            seated=seated,
        )
        # Staff seat members of the parlor's player list from a console (STAFF 6).
        table.seating.players_path = config.staff.players
        if self.on_hand is not None:
            on_hand = self.on_hand
            table.on_hand_settled = lambda record: on_hand(table, record)
        self.table = table
        if publisher is not None:
            menu_publisher = publisher

            def publish_menu() -> None:
                # The page's new-game menu: only these rules are taken from the network.
                # Retained: the link sends it again at every (re)connect of the broker.
                menu_publisher.publish_menu(
                    {
                        "table": config.table_id,
                        "rules_menu": list(table.rules_menu),
                        "commands": list(STAFF_COMMANDS),
                    }
                )

            table.staff_flow.on_menu_changed = publish_menu
            publish_menu()
        if config.stall_after_s is not None:
            # Progress: an event journalled, a console moved on, another game.
            self.watch = StallWatch(
                table.core,
                lambda: (recorder.game_id, recorder.game_events, table.flow_key()),
                config.stall_after_s,
                self.monotonic,
            )
        recorder.flow = table.flow_snapshot
        recorder.flow_key = table.flow_key
        flow = recorder.stored_flow() if resumed is not None else None
        if flow is not None:
            try:
                table.restore_flow(flow)
            except ValueError as exc:
                log.warning("[%s] stored console state not used: %s", config.table_id, exc)
        if resumed is not None:
            log.info(
                "[%s] resuming game %s at %s %d",
                config.table_id,
                resumed.game_id,
                resumed.state.wind,
                resumed.state.dealer + 1,
            )
        tasks: list[asyncio.Task[Any]] = []
        ctl = None
        if config.staff.socket is not None:
            ctl = CtlServer(config.staff.socket, lambda req: self._admin(table, recorder, req))
        try:
            if ctl is not None:
                await ctl.start()
            async with self.link:
                if publisher is not None:
                    requests: asyncio.Queue[ParlorRequest] = asyncio.Queue(maxsize=ACK_QUEUE_MAX)
                    publisher.on_staff_ack = lambda alert, by: self._queue_request(
                        requests, ParlorRequest("ack", alert, by, None)
                    )
                    publisher.on_staff_command = lambda cmd, by, rules, seat: self._queue_request(
                        requests, ParlorRequest(cmd, None, by, rules, seat=seat)
                    )
                    publisher.on_staff_seat = lambda by, names: self._queue_request(
                        requests, ParlorRequest("seat", None, by, None, names=names)
                    )
                    publisher.on_staff_refused = lambda action, by, why: self._queue_request(
                        requests, ParlorRequest("refused", None, by, None, action, why)
                    )
                    publisher.on_staff_refusals_counted = lambda counts: self._queue_request(
                        requests, ParlorRequest("refusals", None, "?", None, counts=counts)
                    )
                    tasks.append(asyncio.create_task(publisher.run()))
                    tasks.append(
                        asyncio.create_task(self._parlor_requests(table, recorder, requests))
                    )
                core = [
                    asyncio.create_task(self._ticker(table, recorder)),
                    asyncio.create_task(self._consume(table, recorder)),
                ]
                tasks.extend(core)
                stopped = asyncio.create_task(self.stop.wait())
                tasks.append(stopped)
                await asyncio.wait([stopped, *core], return_when=asyncio.FIRST_COMPLETED)
                for task in core:
                    failure = task.exception() if task.done() and not task.cancelled() else None
                    if failure is not None:
                        # Handling failed (a journal write, a bug): the state in memory may
                        # be ahead of the journal. Stop; the next start resumes from it.
                        raise failure
        finally:
            if ctl is not None:
                await ctl.close()
            if publisher is not None:
                # First: flush what the parlor has not seen yet (the last game) and say
                # offline; close() ends the publisher's own task.
                await publisher.close()
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            journal.close()

    async def _admin(
        self, table: Table, recorder: JournalRecorder, req: dict[str, Any]
    ) -> dict[str, Any]:
        """One ``tablectl ctl`` request, handled like a table event: under the lock, in
        one journal transaction, its commands sent once that committed."""
        cmd = req["cmd"]
        async with self._lock:
            if cmd == "status":
                link = {"up": table.phase != "offline", "refused": self.refused}
                return {"ok": True, "status": {**table.status(), "link": link}}
            with self._one_unit(recorder):
                if cmd == "seat":
                    failure = table.seating.seat_entries(req["seats"], by="ctl", via="ctl")
                else:
                    failure = await table.staff_flow.staff_command(cmd, req.get("rules"), by="ctl")
                table.refresh()
        return {"ok": False, "error": failure} if failure else {"ok": True}

    def _link_position(self) -> LinkPosition | None:
        """Where the link stands for the journal: after the last table event that the
        table controller has started handling (under the lock), None before the first.

        Not ``link.position`` itself: that moves as soon as ``_consume`` receives an event,
        while it may still wait for the lock the ticker holds; an event the ticker journals
        then must not claim the waiting one as handled."""
        position = self._handling
        if position is None or position.boot_id == 0:
            return None
        return LinkPosition(position.boot_id, position.rx_next)

    def _game_over(self, final: Final) -> None:
        table = self.table
        assert table is not None
        self._games_over += 1
        if self.max_games is not None and self._games_over >= self.max_games:
            table.new_games = False  # the last game: do not open another in the journal
        if self.on_game is not None:
            self.on_game(table, table.game_result(final))

    def _queue_request(self, requests: asyncio.Queue[ParlorRequest], req: ParlorRequest) -> None:
        """A request from the parlor's staff (the MQTT task): handled by
        :meth:`_parlor_requests` under the lock, like a table event. A flood beyond the
        queue is dropped with a warning."""
        try:
            requests.put_nowait(req)
        except asyncio.QueueFull:
            log.warning("[%s] staff %s from %s dropped: too many waiting",
                        self.config.table_id, req.kind, req.by)  # fmt: skip

    async def _parlor_requests(
        self, table: Table, recorder: JournalRecorder, requests: asyncio.Queue[ParlorRequest]
    ) -> None:
        """Acknowledgements and game control from the parlor's staff, each handled like
        ``tablectl ctl``'s (journalled as staff actions; a refusal is published)."""
        while True:
            kind, alert, by, rules, action, why, counts, seat, names = await requests.get()
            if kind in ("refused", "refusals"):
                # Not authenticated: nothing happens at the table but a note staff may
                # look up (journalled, published); the publisher limits how many.
                async with self._lock:
                    with self._one_unit(recorder):
                        table.note_parlor_refusal(action, by, why, counts)
                continue
            async with self._lock:
                with self._one_unit(recorder):
                    if kind == "ack":
                        why = table.acknowledge_alert(str(alert), by, via="mqtt")
                    elif kind == "seat":
                        why = table.seating.seat(names, by=by, via="mqtt")
                        if why is not None:
                            table.refuse_staff_request(kind, by, why)
                    else:
                        if rules is not None and rules not in table.rules_menu:
                            # From the network only the rules staff may pick on a
                            # console: never a path on this board (a probe of its files).
                            menu = ", ".join(table.rules_menu)
                            why = f"rules {rules!r} are not on this table's menu ({menu})"
                        else:
                            why = await table.staff_flow.staff_command(
                                kind, rules, by=f"{by} (parlor)", seat=seat
                            )
                        if why is not None:
                            table.refuse_staff_request(kind, by, why)
                    table.refresh()
            if why is not None:
                log.info("[%s] staff %s from %s: %s", self.config.table_id, kind, by, why)

    async def _ticker(self, table: Table, recorder: JournalRecorder) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            async with self._lock:
                with self._one_unit(recorder):
                    await table.tick()
                    table.fault_flow.report_counted()
                    if self.watch is not None:
                        self.watch.check()

    @contextlib.contextmanager
    def _one_unit(self, recorder: JournalRecorder) -> Iterator[None]:
        """Handle one table event or one tick as a unit: what it journals commits in one
        transaction with the link position, the commands it causes go out after that, and
        if it fails the link acknowledges nothing more (what was not journalled stays with
        the table for the next daemon, see :meth:`run`)."""
        try:
            with self._holding(), recorder.handling():
                yield
        except BaseException as exc:
            if self.link is not None and not isinstance(exc, asyncio.CancelledError):
                self.link.hold_acks()
            raise

    async def _consume(self, table: Table, recorder: JournalRecorder) -> None:
        assert self.link is not None
        async for group in self.link.batches(GROUP_LIMIT):
            async with self._lock:
                await self._handle_group(table, recorder, group)
            if self.max_games is not None and table.games_finished >= self.max_games:
                self.stop.set()
                return

    async def _handle_group(
        self, table: Table, recorder: JournalRecorder, group: list[Delivery]
    ) -> None:
        """Group commit: the table events that arrived together are handled in one journal
        transaction, each in a savepoint of its own; the group's position and console flow
        go in once, then the commit (one fsync, if anything was journalled), then the
        acknowledgement and the group's commands.

        An event that fails rolls back alone: the events before it are committed, their
        commands sent and acknowledged; it and everything after it are not acknowledged
        (the table resends them to the next daemon), and the daemon stops with the error.

        The acknowledgement is given after the commit, with the group's last command, so
        that its frame carries it instead of an Ack frame of its own (see :meth:`_holding`).
        """
        link = self.link
        assert link is not None
        before = self._handling
        handled: Delivery | None = None
        failure: Exception | None = None

        def acknowledge() -> None:  # once committed: with the last held command
            if handled is not None:
                link.acknowledge(handled)

        try:
            with self._holding(acknowledge), recorder.handling():
                assert self._held is not None
                for delivery in group:
                    if self._stops_before(recorder, delivery):
                        failure = StoppedAt(recorder.game_events, self._link_position())
                        break
                    if delivery.position is not None:
                        self._handling = delivery.position
                    if delivery.item is None:  # an undecodable frame: nothing to do
                        handled = delivery
                        continue
                    mark = len(self._held)
                    try:
                        with recorder.unit():
                            if not self._stale(table, delivery):
                                item = delivery.item
                                self._key_seat = item.seat if isinstance(item, m.KeyPress) else None
                                try:
                                    await self._dispatch(table, item)
                                finally:
                                    self._key_seat = None
                    except Exception as exc:
                        del self._held[mark:]  # its commands never go out
                        positions = [d.position for d in group if d is handled]
                        self._handling = positions[0] if positions else before
                        recorder.flow_void = True
                        failure = exc
                        break
                    handled = delivery
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                link.hold_acks()
            raise
        if failure is not None:
            link.hold_acks()
            raise failure

    def _stops_before(self, recorder: JournalRecorder, delivery: Delivery) -> bool:
        """``stop_at`` says to stop before this table event."""
        if self.stop_at is None or delivery.position is None:
            return False
        return self.stop_at(recorder.game_events, self._link_position())

    async def _dispatch(self, table: Table, item: LinkEvent) -> None:
        """Hand one item from the link to the table controller."""
        if isinstance(item, LinkUp):
            self.refused = None
            log.info("[%s] table up (rebooted: %s)", self.config.table_id, item.rebooted)
            peer = item.peer
            caps = peer.capabilities if isinstance(peer, m.HelloReply) else None
            await table.link_up(rebooted=item.rebooted, capabilities=caps)
        elif isinstance(item, LinkLost):
            log.warning("[%s] link lost: %s", self.config.table_id, item.reason)
            await table.link_lost()
        elif isinstance(item, TableRebooted):
            log.warning("[%s] the table rebooted", self.config.table_id)
        elif isinstance(item, LinkRefused):
            # No session, so nothing can be shown on the table: the log and `tablectl ctl
            # status` say it; the link keeps retrying with backoff.
            self.refused = item.reason
            log.error("[%s] the table was refused: %s; retrying", self.config.table_id, item.reason)
        elif isinstance(item, m.Message):
            await table.handle(item)

    def _stale(self, table: Table, delivery: Delivery) -> bool:
        """A key pressed on another screen than its seat shows now: refused, not handled
        (tablectl/console/screens.py)."""
        key, session, acked = delivery.item, delivery.session, delivery.peer_acked
        if not isinstance(key, m.KeyPress) or session is None or acked is None:
            return False
        stale = self.screens.stale(key.seat, session, acked)
        if stale is None or not 0 <= key.seat < table.players:
            return False
        table.keys.drop_stale(key.seat, key.key, *stale)
        table.refresh()
        return True


#: Staff requests from the parlor waiting for the table (more are dropped).
ACK_QUEUE_MAX = 64


class ParlorRequest(NamedTuple):
    """A request from the parlor's dashboard for the table, or the news that one was
    refused unauthenticated (``kind`` "refused": ``action`` and ``why``; "refusals":
    ``counts`` of reasons, for those refused beyond the journalled few)."""

    kind: str  # "ack", a staff command (mqtt_requests.STAFF_COMMANDS), "refused", "refusals"
    alert: str | None
    by: str
    rules: str | None
    action: str | None = None
    why: str | None = None
    counts: dict[str, int] | None = None
    #: The seat a chombo or false call is for.
    seat: int | None = None
    names: list[str] | None = None  # "seat": the players (None: the config's names)


class StoppedAt(Exception):
    """The daemon stopped where its ``stop_at`` said: after ``events`` events of the game
    and the table events up to ``position``."""

    def __init__(self, events: int, position: LinkPosition | None) -> None:
        super().__init__(f"stopped after {events} events at {position}")
        self.events = events
        self.position = position


class DeviceBusy(Exception):
    """Another process has the table's serial port open (pyserial's exclusive flock)."""


def check_device_free(device: str) -> None:
    """Refuse to start on a serial port another process holds: a second daemon on one
    table would take frames from the first. A port that is not there yet (the table is
    off or unplugged) is fine: the link waits for it."""
    if not device.startswith("/"):
        return
    path = device.split("?", 1)[0]
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return  # absent or not ours to open now: the link says so as it retries
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise DeviceBusy(
            f"{path}: another process holds this port (another tablectl on the same table?);"
            " stop it first"
        ) from None
    finally:
        os.close(fd)  # closing lets go of the probe's lock
