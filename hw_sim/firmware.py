"""The simulated table firmware: the device end of the wire protocol.

:class:`SimFirmware` reacts to the host's commands like a table's microcontroller would
(docs/protocol.md) and reports what the players do:

* **walls**: ``WallCommand`` runs the motors (SHUFFLE: shuffling, building, raising; BUILD:
  building, raising; RAISE: raising; STOP) with durations scaled by ``speed`` (0 = instant)
  and reports every state with ``WallStatus``; a shuffle lays a new seeded permutation of
  the tiles into the walls (:class:`hw_sim.wall.PhysicalWall`); with a wall reader each
  raised wall's tiles go out as ``WallLayout`` before its DONE;
* **dice**: ``DiceRoll`` answers ``DiceResult`` from a seeded RNG;
* **consoles**: ``SeatDisplay`` and ``SeatLamps`` are stored per seat, ``CentreDisplay``
  and ``BuzzerCommand`` too, for the players (bots, scripts, the view) to read;
* **players**: :meth:`press` reports ``KeyPress``, :meth:`take` lifts tiles and reports
  ``WallTake`` (with the tile id when the table has a tile reader), :meth:`move_tray` moves
  point sticks and reports ``TrayTotals`` (tray sensors);
* **seat readers** (``seat_reader``): the tiles in every seat's hand, melds and pond
  (:class:`hw_sim.zones.TableZones`): takes, :meth:`discard`, :meth:`call` and
  :meth:`declare` move them, and every zone that changed is reported as ``SeatTiles`` (to
  a 1.3 host; after a ``TableStatus`` every zone; a shuffle empties them all);
* **faults**: latched until ``FaultClear``; ``StatusRequest`` answers ``TableStatus``;
  ``TableReset`` stops and clears; host silence stops the motors and latches
  ``HOST_SILENT``; :meth:`reboot` restarts with a new boot id.

Every message in and out is appended to :attr:`SimFirmware.transcript`, which is what the
reproducibility tests compare (same seed, same frames).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Literal

from firmware_bridge.errors import LinkDown, SendFailed, TransportClosed
from firmware_bridge.link import DeviceInfo, Link, LinkLost, LinkUp, Retained, Role
from firmware_bridge.messages import (
    ALL_WALLS,
    BuzzerCommand,
    BuzzerPattern,
    Capability,
    CentreDisplay,
    DiceResult,
    DiceRoll,
    Fault,
    FaultClear,
    FaultCode,
    Hello,
    Key,
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    SeatTiles,
    StatusRequest,
    TableReset,
    TableStatus,
    TrayTotals,
    WallAction,
    WallCommand,
    WallLayout,
    WallState,
    WallStatus,
    WallTake,
    Zone,
    seat_reader_detail,
)
from firmware_bridge.signing import check_key
from firmware_bridge.transport import Connector, Transport
from hw_sim.faults import BURST_KEYS, FaultLine, FaultPlan, parse_key, parse_zone
from hw_sim.wall import PhysicalWall
from hw_sim.zones import Place, TableZones

__all__ = [
    "BUILD_SECONDS",
    "DICE_SECONDS",
    "FIRMWARE_VERSION",
    "RAISE_SECONDS",
    "SHUFFLE_SECONDS",
    "Console",
    "SimFirmware",
]

_log = logging.getLogger(__name__)

FIRMWARE_VERSION = "hw_sim-1.0"
# Motor durations at speed 1 (s), close to a real automatic table's.
#: Tiles drop into the shuffler and are mixed.
SHUFFLE_SECONDS = 8.0
#: Stacks are built on the lifts.
BUILD_SECONDS = 4.0
#: The four walls rise through the table top.
RAISE_SECONDS = 3.0
#: The electronic dice spin before they show.
DICE_SECONDS = 1.0
#: Extra presses a stuck (chattering) key reports.
STUCK_REPEATS = 3
#: The first protocol minor whose hosts get ``SeatTiles`` (docs/protocol.md).
SEAT_TILES_MINOR = 3

Direction = Literal["rx", "tx"]


@dataclasses.dataclass(slots=True)
class Console:
    """What one seat's console shows. ``seq`` grows with every display change, table-wide,
    so readers can tell a fresh display from one they have seen."""

    line1: str = ""
    line2: str = ""
    dealer: bool = False
    riichi: bool = False
    seq: int = 0

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (control interface)."""
        return dataclasses.asdict(self)


def _default_capabilities(
    tile_reader: bool, trays: bool, wall_reader: bool, seat_reader: bool
) -> Capability:
    caps = (
        Capability.SEAT_CONSOLES
        | Capability.CENTRE_DISPLAY
        | Capability.DICE
        | Capability.BUZZER
        | Capability.WALL_TAKE_SENSORS
    )
    if tile_reader:
        caps |= Capability.TILE_READER
    if trays:
        caps |= Capability.TRAY_SENSORS
    if wall_reader:
        caps |= Capability.WALL_READER
    if seat_reader:
        caps |= Capability.SEAT_READER
    return caps


class SimFirmware:
    """The simulated microcontroller of one table (see the module doc).

    ``seed`` fixes the boot ids, the shuffles and the dice; ``speed`` scales the motor and
    dice durations (1 = real time, 0 = instant). ``tile_reader`` puts the tile id in every
    ``WallTake``; ``wall_reader`` reports each raised wall's tiles (``WallLayout``, docs/
    protocol.md, "The wall reader"); ``seat_reader`` keeps every seat's zones and reports
    them (``SeatTiles``, "The seat readers"). ``tile_ids`` is the set the shuffles lay
    out (default: every id of a 136 or 108 set). With ``signing_key`` (32 bytes) the link
    signs and verifies every frame and refuses hosts without that key (docs/protocol.md,
    "Signing"). Connect it to a host endpoint with :meth:`start` (a device-side
    :data:`Connector`, e.g. ``SimListener(name).accept``).
    """

    def __init__(
        self,
        *,
        players: int = 4,
        seed: int = 0,
        speed: float = 0.0,
        tile_reader: bool = False,
        wall_reader: bool = False,
        seat_reader: bool = False,
        tile_ids: Sequence[int] | None = None,
        trays: bool = False,
        start_points: int = 25000,
        faults: FaultPlan | None = None,
        name: str = "hw_sim",
        signing_key: bytes | None = None,
    ) -> None:
        if players not in (3, 4):
            raise ValueError(f"players must be 3 or 4, got {players}")
        if speed < 0:
            raise ValueError(f"speed must be >= 0, got {speed}")
        self.signing_key = None if signing_key is None else check_key(signing_key)
        self.players = players
        self.seed = seed
        self.speed = speed
        self.name = name
        self.capabilities = _default_capabilities(tile_reader, trays, wall_reader, seat_reader)
        self.faults = faults or FaultPlan(seed=seed)
        self._boot_rng = random.Random(f"boot:{seed}")
        self._dice_rng = random.Random(f"dice:{seed}")
        self._fault_rng = random.Random(f"fault-choices:{seed}")
        self.wall = PhysicalWall(players, random.Random(f"wall:{seed}"), tile_ids)
        #: The seat zones (with seat readers; None without).
        self.zones: TableZones | None = TableZones(players) if seat_reader else None
        #: Seat readers with a latched fault: they report nothing until FaultClear.
        self.dead_readers: set[Place] = set()
        #: Seats whose hand reader misreads (the ``misread`` fault) until the next shuffle.
        self.misread_hands: set[int] = set()
        #: The protocol minor of the host's last Hello (None: none since power-up).
        self.host_minor: int | None = None
        self.boot_id = DeviceInfo.new_boot_id(self._boot_rng)
        self.boots = 1
        # Console and motor state (reset by a reboot).
        self.consoles = [Console() for _ in range(4)]
        self.centre: CentreDisplay | None = None
        self.buzzer: BuzzerCommand = BuzzerCommand(BuzzerPattern.OFF)
        self.walls: list[WallState] = [WallState.IDLE] * 4
        self.latched: set[FaultCode] = set()
        self.dice: tuple[int, int] | None = None
        #: DiceResults sent so far (readers wait for it to grow).
        self.dice_count = 0
        #: Dice given for the next throws, first one first (instead of seeded ones).
        self.planned_dice: deque[tuple[int, int]] = deque()
        #: Point-stick trays, seat order (physical: they survive a reboot).
        self.trays = [start_points] * players
        self._tray_misread: tuple[int, int] | None = None
        self._tile_count_error: int | None = None
        self._stuck: tuple[int, Key] | None = None
        #: Every message through the link: ("rx", command) and ("tx", event), in order.
        self.transcript: list[tuple[Direction, Message]] = []
        self.events_sent = 0
        self.link_up = False
        self._overflow_dropped = 0
        #: Events the players caused while a reset was under way (sent once it is done).
        self._held: list[Message] | None = None
        self._display_seq = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._listeners: list[Callable[[Direction, Message], None]] = []
        self._connector: Connector | None = None
        self._connections = 0
        #: The current host connection's fault wrapper (pause it to "unplug" a UART).
        self.line: FaultLine | None = None
        #: Every host connection's fault wrapper so far (their counters tell what was done).
        self.lines: list[FaultLine] = []
        self.link: Link | None = None
        self._consumer: asyncio.Task[None] | None = None
        self._motor: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._closed = False

    # ---------------------------------------------------------------------------------------
    # Lifecycle

    async def start(self, connector: Connector) -> None:
        """Start the device link on ``connector`` (called again for every host connection)."""
        self._connector = connector
        await self._start_link()

    async def _connect(self) -> Transport:
        assert self._connector is not None
        inner = await self._connector()
        self._connections += 1
        self.line = self.faults.line(inner, self._connections)
        self.lines.append(self.line)
        return self.line

    async def _start_link(self, retained: Retained | None = None) -> None:
        info = DeviceInfo(
            firmware_version=FIRMWARE_VERSION,
            boot_id=self.boot_id,
            seats=self.players,
            capabilities=self.capabilities,
        )
        # A reboot keeps the key (it is configuration), not the timestamps: a new boot's
        # link starts from the clock, as a firmware starts from its stored timestamp.
        self.link = Link(
            self._connect,
            role=Role.DEVICE,
            device_info=info,
            name=self.name,
            retained=retained,
            signing_key=self.signing_key,
        )
        await self.link.start()
        self._consumer = asyncio.create_task(
            self._consume(self.link), name=f"hw_sim {self.name} firmware"
        )

    async def _stop_link(self) -> None:
        self._cancel_motor()
        link, self.link = self.link, None
        consumer, self._consumer = self._consumer, None
        if link is not None:
            await link.close()
        if consumer is not None:
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer
        self.link_up = False
        self.line = None

    async def close(self) -> None:
        """Stop everything (link, motors, timers). Idempotent."""
        self._closed = True
        await self._stop_link()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._wake()

    async def reboot(self) -> None:
        """Reset the firmware (watchdog, brown-out): new boot id, motors stopped, displays,
        lamps, faults and dice forgotten. The physical tiles and sticks stay where they are,
        and so do the events the host has not acknowledged: firmware keeps its event queue
        in RAM a reset does not clear (docs/protocol.md, "warm reset")."""
        _log.warning("%s: firmware reboot", self.name)
        retained = self.link.unacked() if self.link is not None else None
        self._held = []
        await self._stop_link()
        self.boot_id = DeviceInfo.new_boot_id(self._boot_rng)
        self.boots += 1
        self.consoles = [Console() for _ in range(4)]
        self.centre = None
        self.buzzer = BuzzerCommand(BuzzerPattern.OFF)
        self.walls = [WallState.IDLE] * 4
        self.latched = set()
        self.dice = None
        self._bump_display()
        held, self._held = self._held, None
        if not self._closed and self._connector is not None:
            await self._start_link(retained)
            for msg in held:
                self.emit(msg)

    # ---------------------------------------------------------------------------------------
    # Observation

    def add_listener(self, callback: Callable[[Direction, Message], None]) -> None:
        """Call ``callback(direction, message)`` for every message in or out (in order)."""
        self._listeners.append(callback)

    async def wait_for(self, predicate: Callable[[], bool], within: float | None = None) -> bool:
        """Wait until ``predicate()`` is true; it is checked at every change of the table.

        Returns False if ``within`` seconds pass first (or the firmware closes).
        """
        loop = asyncio.get_running_loop()
        deadline = None if within is None else loop.time() + within
        while not predicate():
            if self._closed:
                return False
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.append(fut)
            try:
                if deadline is None:
                    await fut
                else:
                    async with asyncio.timeout_at(deadline):
                        await fut
            except TimeoutError:
                return predicate()
            finally:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(fut)
        return True

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    def _bump_display(self) -> int:
        self._display_seq += 1
        return self._display_seq

    @property
    def display_seq(self) -> int:
        """Grows with every display, lamp or centre change."""
        return self._display_seq

    def _record(self, direction: Direction, msg: Message) -> None:
        self.transcript.append((direction, msg))
        for callback in self._listeners:
            callback(direction, msg)

    # ---------------------------------------------------------------------------------------
    # Events to the host

    def emit(self, msg: Message) -> None:
        """Send an event to the host (queued by the link while no host is connected)."""
        link = self.link
        if link is None:
            if self._held is not None:
                self._held.append(msg)
            else:
                _log.info("%s: firmware stopped, %s lost", self.name, type(msg).__name__)
            return
        try:
            link.post_nowait(msg)
        except SendFailed:
            # The device queue is full: drop, count, and say so once the host drains it.
            self._overflow_dropped += 1
            self.latched.add(FaultCode.EVENT_OVERFLOW)
            return
        except LinkDown:
            return
        self.events_sent += 1
        self._record("tx", msg)
        self._wake()
        for shot in self.faults.due(self.events_sent):
            self._spawn(self._fire(shot.kind, shot.args), f"fault {shot.kind}")

    def _spawn(self, coro: Coroutine[Any, Any, object], what: str) -> None:
        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(
            coro, name=f"hw_sim {what}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ---------------------------------------------------------------------------------------
    # What players do

    def press(self, seat: int, key: Key) -> None:
        """A player presses ``key`` on console ``seat``."""
        self._check_seat(seat)
        self.emit(KeyPress(seat, key))
        if self._stuck is not None and self._stuck == (seat, key):
            self._stuck = None
            _log.warning("%s: key %s of seat %d is stuck: %d extra presses",
                         self.name, key.name, seat, STUCK_REPEATS)  # fmt: skip
            for _ in range(STUCK_REPEATS):
                self.emit(KeyPress(seat, key))

    def take(self, seat: int, positions: Sequence[int], into: Zone = Zone.HAND) -> WallTake:
        """``seat`` lifts the tiles at ``positions`` (a deal block or one tile): one
        ``WallTake`` for the first position, with its tile id if the table reads tiles.
        With seat readers they go to the seat's hand, or ``into`` its melds (kantan's
        stand-in for a called tile, which never joins the hand)."""
        self._check_seat(seat)
        if not positions:
            raise ValueError("a take needs at least one position")
        tiles = self.wall.take(seat, positions)
        tile = tiles[0] if self.capabilities & Capability.TILE_READER else None
        msg = WallTake(seat, positions[0], tile)
        self.emit(msg)
        if self.zones is not None:
            self.report_zones(self.zones.take(seat, tiles, into))
        return msg

    def put_back(self, seat: int, positions: Sequence[int]) -> None:
        """``seat`` puts the tiles it lifted from ``positions`` back in the wall (a take
        the daemon refused counts them in nobody's hand). The take sensors report lifts
        only, so no event; with seat readers the zones that held them are reported."""
        self._check_seat(seat)
        tiles = [self.wall.tile_at(p) for p in positions if not self.wall.present(p)]
        self.wall.put_back(positions)
        if self.zones is not None:
            self.report_zones(self.zones.put_back(seat, tiles))

    def discard(self, seat: int, tile: int | None = None) -> int:
        """``seat`` discards ``tile`` (default: the tile it took last) from its hand to its
        pond; the seat readers report both zones. Needs seat readers."""
        zones = self._zones_for(seat)
        if tile is None:
            hand = zones.hand(seat)
            if not hand:
                raise ValueError(f"seat {seat} has no tile in its hand to discard")
            tile = hand[-1]
        self.report_zones(zones.discard(seat, tile))
        return tile

    def call(self, seat: int, discarder: int, own: Sequence[int]) -> int:
        """``seat`` calls ``discarder``'s last discard with its ``own`` tiles (2 for chi
        and pon, 3 for an open kan); returns the called tile. Needs seat readers."""
        called, changed = self._zones_for(seat).call(seat, discarder, own)
        self.report_zones(changed)
        return called

    def declare(self, seat: int, tiles: Sequence[int]) -> None:
        """``seat`` lays ``tiles`` from its hand among its melds: a closed kan's four, the
        tile added to a pon, a pulled north. Needs seat readers."""
        self.report_zones(self._zones_for(seat).declare(seat, tiles))

    def _zones_for(self, seat: int) -> TableZones:
        self._check_seat(seat)
        if self.zones is None:
            raise ValueError("this table has no seat readers: tiles in the zones are not kept")
        return self.zones

    def report_zones(self, places: Sequence[Place]) -> None:
        """Send the snapshot of each zone in ``places`` (seat readers, to a 1.3 host;
        a reader with a latched fault stays silent)."""
        zones = self.zones
        if zones is None or (self.host_minor is not None and self.host_minor < SEAT_TILES_MINOR):
            return
        for seat, zone in places:
            if (seat, zone) in self.dead_readers:
                continue
            tiles = zones.tiles(seat, zone)
            if zone is Zone.HAND and seat in self.misread_hands and tiles:
                # Its first tile read as another copy of the same kind (id ^ 1 is one in
                # every set): a red five as a plain one, say. Ids are not kinds.
                tiles = (tiles[0] ^ 1, *tiles[1:])
            self.emit(SeatTiles(seat, zone, tiles))

    def move_tray(self, seat: int, delta: int) -> None:
        """``seat`` adds ``delta`` points of sticks to its tray (negative: takes them out).
        With tray sensors the table reports the new totals."""
        self._check_seat(seat)
        if seat >= self.players:
            raise ValueError(f"no tray for seat {seat} at a {self.players}-player table")
        self.trays[seat] += delta
        self.report_trays()

    def report_trays(self) -> None:
        """Send ``TrayTotals`` (tray sensors only); a pending misread spoils this report."""
        if not self.capabilities & Capability.TRAY_SENSORS:
            return
        totals = list(self.trays)
        if self._tray_misread is not None:
            seat, error = self._tray_misread
            self._tray_misread = None
            totals[seat] += error
            _log.warning("%s: tray of seat %d misread by %+d", self.name, seat, error)
        self.emit(TrayTotals(tuple(totals)))

    def raise_fault(self, code: FaultCode, detail: int = 0, text: str = "") -> None:
        """Latch ``code`` and report it (a fault button in the control interface)."""
        self.latched.add(code)
        self.emit(Fault(code, detail, text[:40]))

    def _check_seat(self, seat: int) -> None:
        if not 0 <= seat < self.players:
            raise ValueError(f"no seat {seat}: seats are 0..{self.players - 1}")

    # ---------------------------------------------------------------------------------------
    # Faults on demand

    async def inject(self, kind: str, *args: str) -> str:
        """Inject a fault now (kinds of :mod:`hw_sim.faults`); returns what was done."""
        return await self._fire(kind, args)

    async def _fire(self, kind: str, args: Sequence[str]) -> str:
        rng = self._fault_rng
        if kind == "unplug":
            seconds = float(args[0]) if args else 1.0
            await self.unplug(seconds)
            return f"unplugged for {seconds:g} s"
        if kind == "reboot":
            await self.reboot()
            return f"rebooted, boot id {self.boot_id:#010x}"
        if kind == "stuck":
            seat = int(args[0]) if args else rng.randrange(self.players)
            key = parse_key(args[1]) if len(args) > 1 else Key.DIGIT_0
            self._stuck = (seat, key)
            self.press(seat, key)
            return f"key {key.name} of seat {seat} stuck"
        if kind == "tray":
            seat = int(args[0]) if args else rng.randrange(self.players)
            self._tray_misread = (seat, -1000)
            self.report_trays()
            return f"tray of seat {seat} misreads one 1000 stick"
        if kind == "misread":
            seat = int(args[0]) if args else rng.randrange(self.players)
            self._check_seat(seat)
            if self.zones is None:
                return "no seat readers: nothing to misread"
            # The reader knows nothing of it: no fault, only what it reports from now on.
            self.misread_hands.add(seat)
            self.report_zones([(seat, Zone.HAND)])
            return f"seat {seat} hand reader misreads until the next shuffle"
        if kind == "reader":
            seat = int(args[0]) if args else rng.randrange(self.players)
            zone = parse_zone(args[1]) if len(args) > 1 else Zone(rng.randrange(len(Zone)))
            self._check_seat(seat)
            if self.zones is None:
                return "no seat readers: nothing to fail"
            self.dead_readers.add((seat, zone))
            text = f"seat {seat} {zone.name.lower()} reader"
            self.raise_fault(FaultCode.TILE_READER, seat_reader_detail(seat, zone), text)
            return f"{text} failed"
        if kind == "keys":
            seat = int(args[0]) if args else rng.randrange(self.players)
            self._check_seat(seat)
            count = int(args[1]) if len(args) > 1 else BURST_KEYS
            keys = [rng.choice(list(Key)) for _ in range(count)]
            for key in keys:
                self.press(seat, key)
            return f"seat {seat} pressed {' '.join(k.name for k in keys)}"
        if kind == "tilecount":
            wall = int(args[0]) if args else rng.randrange(self.players)
            self._tile_count_error = wall
            return f"wall {wall} will count one tile short at its next raise"
        if kind in ("corrupt", "drop", "dup"):
            prob = float(args[0]) if args else 0.05
            setattr(self.faults, kind, prob)
            if self.line is not None:
                setattr(self.line, "flip" if kind == "corrupt" else kind, prob)
            return f"{kind} probability {prob:g}"
        raise ValueError(f"unknown fault {kind!r}")

    async def unplug(self, seconds: float) -> None:
        """Pull the host cable for ``seconds``: nothing passes either way, then it is back.
        (The endpoint decides what that means: silence on a UART, a closed socket or USB
        device; :class:`hw_sim.table.SimTable` overrides the hook.)"""
        await self.unplug_hook(seconds)

    async def unplug_hook(self, seconds: float) -> None:
        """Default unplug: the line goes silent (a UART has no connection to lose)."""
        line = self.line
        if line is None:
            return
        line.pause()
        try:
            await asyncio.sleep(seconds)
        finally:
            line.resume()

    # ---------------------------------------------------------------------------------------
    # Commands from the host

    async def _consume(self, link: Link) -> None:
        async for item in link.events():
            if isinstance(item, LinkUp):
                self.link_up = True
                if isinstance(item.peer, Hello):
                    self.host_minor = item.peer.protocol_minor
                if self._overflow_dropped:
                    dropped, self._overflow_dropped = self._overflow_dropped, 0
                    self.emit(Fault(FaultCode.EVENT_OVERFLOW, min(dropped, 0xFFFF)))
                self._wake()
            elif isinstance(item, LinkLost):
                self._host_lost(item.reason)
            elif isinstance(item, Message):
                # Listeners hear a command once it took effect (display_seq already moved).
                self.transcript.append(("rx", item))
                try:
                    await self._handle(item)
                except (LinkDown, TransportClosed):  # pragma: no cover - closing
                    return
                for callback in self._listeners:
                    callback("rx", item)
                self._wake()

    def _host_lost(self, reason: str) -> None:
        """Host silent (or replaced): stop the motors, keep displays, latch HOST_SILENT;
        the fault is queued and reaches the host when it is back."""
        self.link_up = False
        _log.warning("%s: host lost (%s): motors stopped", self.name, reason)
        self._stop_motors()
        self.latched.add(FaultCode.HOST_SILENT)
        self.emit(Fault(FaultCode.HOST_SILENT, 0, "host silent: motors stopped"))
        self._wake()

    async def _handle(self, msg: Message) -> None:
        match msg:
            case WallCommand(action=action, wall=wall):
                await self._wall_command(action, wall)
            case DiceRoll():
                await self._roll()
            case SeatDisplay(seat=seat, line1=line1, line2=line2):
                console = self.consoles[seat]
                console.line1, console.line2 = line1, line2
                console.seq = self._bump_display()
            case SeatLamps(seat=seat, dealer=dealer, riichi=riichi):
                console = self.consoles[seat]
                console.dealer, console.riichi = dealer, riichi
                console.seq = self._bump_display()
            case CentreDisplay():
                self.centre = msg
                self._bump_display()
            case BuzzerCommand():
                self.buzzer = msg
            case FaultClear(code=code):
                self.latched.discard(code)
                if code is FaultCode.TILE_READER and self.dead_readers:
                    # Mended: each reader reports what lies on it now.
                    mended, self.dead_readers = sorted(self.dead_readers), set()
                    self.report_zones(mended)
                if code is FaultCode.TILE_COUNT:
                    self.walls = [
                        WallState.IDLE if s is WallState.TILE_COUNT_ERROR else s for s in self.walls
                    ]
            case StatusRequest():
                self.emit(TableStatus(tuple(self.walls), tuple(sorted(self.latched))[:16]))
                if self.zones is not None:
                    self.report_zones(self.zones.all_places())
            case TableReset():
                self._cancel_motor()
                self.walls = [WallState.IDLE] * 4
                for console in self.consoles:
                    console.line1 = console.line2 = ""
                    console.dealer = console.riichi = False
                    console.seq = self._bump_display()
                self.centre = None
                self.buzzer = BuzzerCommand(BuzzerPattern.OFF)
            case _:  # pragma: no cover - the link delivers commands only
                _log.warning("%s: ignoring %r", self.name, msg)

    async def _roll(self) -> None:
        if self.speed:
            await asyncio.sleep(DICE_SECONDS * self.speed)
        self.roll_dice()

    def roll_dice(self) -> tuple[int, int]:
        """Throw the dice now (the host's ``DiceRoll``, or the dice button) and report it."""
        if self.planned_dice:
            die1, die2 = self.planned_dice.popleft()
        else:
            die1, die2 = self._dice_rng.randint(1, 6), self._dice_rng.randint(1, 6)
        self.dice = (die1, die2)
        self.dice_count += 1
        self.emit(DiceResult(die1, die2))
        return die1, die2

    # ---- motors

    def _walls_for(self, wall: int) -> list[int]:
        if wall == ALL_WALLS:
            return list(range(self.players))
        return [wall] if wall < self.players else []

    async def _wall_command(self, action: WallAction, wall: int) -> None:
        walls = self._walls_for(wall)
        if action is WallAction.STOP:
            self._stop_motors()  # one motor run drives every moving wall: stop them all
            return
        self._cancel_motor()
        run = self._run_motors(action, walls, reshuffle=wall == ALL_WALLS)
        if self.speed == 0:
            # Instant motors: every state is reported at once, in order, before the next
            # command is looked at (keeps the frames of a seeded game identical).
            await run
            return
        self._motor = asyncio.get_running_loop().create_task(run, name=f"hw_sim {self.name} motors")

    async def _run_motors(self, action: WallAction, walls: list[int], *, reshuffle: bool) -> None:
        phases = {
            WallAction.SHUFFLE: (
                (WallState.SHUFFLING, SHUFFLE_SECONDS),
                (WallState.BUILDING, BUILD_SECONDS),
                (WallState.RAISING, RAISE_SECONDS),
            ),
            WallAction.BUILD: (
                (WallState.BUILDING, BUILD_SECONDS),
                (WallState.RAISING, RAISE_SECONDS),
            ),
            WallAction.RAISE: ((WallState.RAISING, RAISE_SECONDS),),
        }[action]
        if action is WallAction.SHUFFLE and reshuffle:
            if self.zones is not None:
                # The players push every tile into the table before it shuffles; the
                # tiles that come up next are read right.
                self.report_zones(self.zones.clear())
                self.misread_hands.clear()
            self.wall.shuffle()
        expected = self.wall.per_wall
        for state, seconds in phases:
            for w in walls:
                self.walls[w] = state
                self.emit(WallStatus(w, state, 0, expected))
            self._wake()
            if self.speed:
                await asyncio.sleep(seconds * self.speed)
        for w in walls:
            counted = self.wall.count(w)
            if self._tile_count_error == w:
                self._tile_count_error = None
                counted = max(counted - 1, 0)
            if counted != expected:
                self.walls[w] = WallState.TILE_COUNT_ERROR
                self.emit(WallStatus(w, WallState.TILE_COUNT_ERROR, counted, expected))
                self.latched.add(FaultCode.TILE_COUNT)
                self.emit(Fault(FaultCode.TILE_COUNT, w, f"wall {w}: {counted} of {expected}"))
            else:
                if self.capabilities & Capability.WALL_READER:
                    # The reader in the lift saw every tile of this wall go up.
                    start = w * expected
                    self.emit(WallLayout(w, tuple(self.wall.tiles[start : start + expected])))
                self.walls[w] = WallState.DONE
                self.emit(WallStatus(w, WallState.DONE, counted, expected))
        self._wake()

    def _cancel_motor(self) -> None:
        if self._motor is not None and not self._motor.done():
            self._motor.cancel()
        self._motor = None

    def _stop_motors(self) -> None:
        moving = (WallState.SHUFFLING, WallState.BUILDING, WallState.RAISING)
        self._cancel_motor()
        for w in range(self.players):
            if self.walls[w] in moving:
                self.walls[w] = WallState.STOPPED
                self.emit(WallStatus(w, WallState.STOPPED, 0, self.wall.per_wall))
