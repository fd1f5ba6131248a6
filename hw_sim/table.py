"""SimTable: one simulated table -- firmware, walls, players -- on one host endpoint.

See :mod:`hw_sim` for the public API summary and docs/simulator.md for the endpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import reprlib
from collections.abc import Sequence
from typing import Any

from firmware_bridge import usb_loopback
from firmware_bridge.errors import TransportClosed, TransportError
from firmware_bridge.messages import CentreDisplay, Key, WallState, WallTake
from firmware_bridge.transport import (
    Connector,
    PtyTransport,
    SimListener,
    TcpListener,
    Transport,
    open_pty,
)
from hw_sim.faults import FaultPlan, parse_key
from hw_sim.firmware import Console, SimFirmware
from hw_sim.players import BotTable, WallFollower
from hw_sim.view import render
from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.tiles.ids import tile_set

__all__ = ["DEFAULT_USB_ID", "SimTable"]

_log = logging.getLogger(__name__)

#: pid.codes test VID and the pid hw_sim uses by default for ``usb://``.
DEFAULT_USB_ID = (0x1209, 0x7A11)


class _PtyPort(Transport):
    """One host session's view of the persistent pty: closing it keeps the pty (and its
    path) alive, like a UART whose far end comes and goes."""

    def __init__(self, pty: PtyTransport) -> None:
        self._pty = pty
        self.url = pty.url
        self._closed = False

    async def read(self) -> bytes:
        if self._closed:
            raise TransportClosed(f"{self.url}: closed")
        return await self._pty.read()

    def write(self, data: bytes) -> None:
        if self._closed:
            raise TransportClosed(f"{self.url}: closed")
        self._pty.write(data)

    async def close(self) -> None:
        self._closed = True

    @property
    def is_closed(self) -> bool:
        return self._closed or self._pty.is_closed


class SimTable:
    """A simulated automatic table (firmware, physical wall, consoles, trays, players).

    ``rules`` is a preset name or a loaded :class:`HouseRules`; ``seed`` fixes the shuffles,
    dice, boot ids and the bots' choices (one seed = one reproducible game against a
    deterministic daemon). ``speed`` scales motor durations (0 = instant, 1 = real time).
    ``autoplay`` starts bots for ``seats`` (default all); ``max_games`` stops them after
    that many games. ``tile_reader``, ``wall_reader`` and ``seat_reader`` give the table
    those readers (tile ids in ``WallTake``; each raised wall's ``WallLayout``; every seat
    zone's ``SeatTiles``, and then the bots play the tiles they hold). The shuffles lay
    out the preset's set (``tablectl.tiles.ids.tile_set``). ``faults`` is a
    :class:`FaultPlan` or its spec string. ``signing_key``
    (32 bytes) makes the table sign its frames and require signed ones (the daemon's URL
    then needs ``?signing_key=HEX``).

    Start exactly one host endpoint (``start_pty``, ``start_tcp``, ``start_sim`` or
    ``start_usb``), then ``await run()`` or ``await wait_games(n)``; ``await close()``.
    """

    def __init__(
        self,
        rules: str | HouseRules = "ariari",
        seed: int = 0,
        *,
        speed: float = 0.0,
        autoplay: bool = True,
        seats: set[int] | None = None,
        max_games: int | None = None,
        tile_reader: bool = False,
        wall_reader: bool = False,
        seat_reader: bool = False,
        trays: bool = False,
        faults: FaultPlan | str | None = None,
        name: str = "hw_sim",
        stall_timeout: float = 10.0,
        signing_key: bytes | None = None,
    ) -> None:
        self.house = load_rules(rules) if isinstance(rules, str) else rules
        self.seed = seed
        plan = FaultPlan.parse(faults, seed) if isinstance(faults, str) else faults
        self.firmware = SimFirmware(
            players=self.house.players,
            seed=seed,
            speed=speed,
            tile_reader=tile_reader,
            wall_reader=wall_reader,
            seat_reader=seat_reader,
            tile_ids=tile_set(self.house).ids,
            trays=trays,
            start_points=self.house.game.start_points,
            faults=plan,
            name=name,
            signing_key=signing_key,
        )
        self.firmware.unplug_hook = self._unplug  # type: ignore[method-assign]
        self.follower = WallFollower(self.house, self.firmware)
        self._games = 0
        #: Length of the firmware transcript when each game's GAME OVER was confirmed (what
        #: the daemon sends after that, e.g. the next game's shuffle, is not that game's).
        self.game_marks: list[int] = []
        self._games_changed: asyncio.Event | None = None
        self.bots: BotTable | None = None
        if autoplay:
            self.bots = BotTable(
                self.firmware,
                self.house,
                seed=seed,
                seats=seats,
                follower=self.follower,
                max_games=max_games,
                stall_timeout=stall_timeout,
                on_game_over=self._on_game_over,
            )
        #: The URL the daemon opens (after a start_* call).
        self.url: str | None = None
        self._endpoint: str | None = None
        self._pty: PtyTransport | None = None
        self._tcp: TcpListener | None = None
        self._sim: SimListener | None = None
        self._usb: usb_loopback.LoopbackDevice | None = None
        self._unplugged: asyncio.Event | None = None
        self._bots_task: asyncio.Task[None] | None = None

    # ---------------------------------------------------------------------------------------
    # Endpoints (one per table, like the one port of a real board)

    def _claim(self, kind: str) -> None:
        if self._endpoint is not None:
            raise RuntimeError(f"this table already listens on {self._endpoint} ({self.url})")
        self._endpoint = kind

    async def _begin(self, accept: Connector) -> None:
        self._unplugged = asyncio.Event()
        self._unplugged.set()  # set = plugged in
        self._games_changed = asyncio.Event()
        unplugged = self._unplugged

        async def connect() -> Transport:
            await unplugged.wait()  # an unplugged cable accepts nobody
            return await accept()

        await self.firmware.start(connect)
        if self.bots is not None:
            self._bots_task = asyncio.create_task(self.bots.run(), name="hw_sim bots")

    async def start_pty(self) -> str:
        """Serve on a new pseudo-terminal; returns the path the daemon opens as a serial
        port (``/dev/pts/N``)."""
        self._claim("pty")
        pty = self._pty = await open_pty()

        async def accept() -> Transport:
            if pty.is_closed:
                raise TransportError(f"{pty.url}: closed")
            return _PtyPort(pty)

        self.url = pty.slave_path
        await self._begin(accept)
        return pty.slave_path

    async def start_tcp(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Serve ``socket://host:port`` (``port=0`` picks a free one); returns the port."""
        self._claim("tcp")
        self._tcp = await TcpListener(host, port).start()
        self.url = f"socket://{host}:{self._tcp.port}"
        await self._begin(self._tcp.accept)
        return self._tcp.port

    async def start_sim(self, name: str = "hw_sim") -> str:
        """Serve the in-process ``sim://name``; returns that URL."""
        self._claim("sim")
        self._sim = SimListener(name)
        self.url = f"sim://{name}"
        await self._begin(self._sim.accept)
        return self.url

    async def start_usb(self, vid: int = DEFAULT_USB_ID[0], pid: int = DEFAULT_USB_ID[1]) -> str:
        """Plug a fake USB device into this process's pyusb loopback backend; returns
        ``usb://VID:PID?backend=loopback`` (in-process only: the bus is not shared)."""
        self._claim("usb")
        self._usb = usb_loopback.get_backend().add_device(vid, pid)
        self.url = f"usb://{vid:04x}:{pid:04x}?backend=loopback"
        await self._begin(self._usb.accept)
        return self.url

    async def _unplug(self, seconds: float) -> None:
        """Pull the cable for ``seconds`` in the way the endpoint allows."""
        _log.warning("unplugging %s for %.2f s", self.url, seconds)
        assert self._unplugged is not None
        line = self.firmware.line
        if self._endpoint == "pty":
            if line is not None:  # a UART: the line just goes silent
                line.pause()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(seconds)
            if line is not None:
                line.resume()
            return
        self._unplugged.clear()
        if self._endpoint == "usb" and self._usb is not None:
            self._usb.unplug()
        elif line is not None:
            await line.close()  # the socket / in-process pipe ends; the host notices
        try:
            await asyncio.sleep(seconds)
        finally:
            if self._endpoint == "usb" and self._usb is not None:
                self._usb.replug()
            self._unplugged.set()

    # ---------------------------------------------------------------------------------------
    # Running

    def _on_game_over(self, games: int) -> None:
        self._games = games
        self.game_marks.append(len(self.firmware.transcript))
        if self._games_changed is not None:
            self._games_changed.set()

    @property
    def games_finished(self) -> int:
        """Games whose GAME OVER every bot confirmed."""
        return self.bots.games_finished if self.bots is not None else 0

    async def wait_games(self, n: int) -> int:
        """Wait until ``n`` games are over (wrap in ``asyncio.timeout``); returns the count.
        Raises RuntimeError without bots, or if the bots stopped before."""
        if self.bots is None or self._games_changed is None:
            raise RuntimeError("wait_games needs autoplay and a started endpoint")
        while self.games_finished < n:
            if self._bots_task is not None and self._bots_task.done():
                self._bots_task.result()
                raise RuntimeError(f"the bots stopped after {self.games_finished} games")
            self._games_changed.clear()
            waiter = asyncio.ensure_future(self._games_changed.wait())
            tasks: set[asyncio.Future[Any]] = {waiter}
            if self._bots_task is not None:
                tasks.add(self._bots_task)
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
        return self.games_finished

    async def run(self) -> None:
        """Run until the bots finished their ``max_games`` (forever without a cap or
        without bots: cancel it, or call :meth:`close` from elsewhere)."""
        if self._bots_task is not None:
            await self._bots_task
        else:
            await asyncio.Event().wait()

    async def close(self) -> None:
        """Stop the bots, the firmware and the endpoint. Idempotent."""
        if self.bots is not None:
            self.bots.stop()
        if self._bots_task is not None:
            self._bots_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._bots_task
        await self.firmware.close()
        if self._tcp is not None:
            await self._tcp.close()
        if self._sim is not None:
            self._sim.close()
        if self._usb is not None:
            usb_loopback.get_backend().remove_device(self._usb)
        if self._pty is not None:
            await self._pty.close()

    async def __aenter__(self) -> SimTable:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---------------------------------------------------------------------------------------
    # Reading the table

    @property
    def consoles(self) -> list[Console]:
        """Each seat's console (line1, line2, dealer and riichi lamps)."""
        return self.firmware.consoles[: self.house.players]

    @property
    def displays(self) -> list[tuple[str, str]]:
        """Each seat's two display lines."""
        return [(c.line1, c.line2) for c in self.consoles]

    @property
    def lamps(self) -> list[tuple[bool, bool]]:
        """Each seat's (dealer, riichi) lamps."""
        return [(c.dealer, c.riichi) for c in self.consoles]

    @property
    def centre(self) -> CentreDisplay | None:
        """What the centre display shows (None before the daemon drew it)."""
        return self.firmware.centre

    @property
    def trays(self) -> list[int]:
        """Points in each seat's stick tray."""
        return list(self.firmware.trays)

    @property
    def dice(self) -> tuple[int, int] | None:
        """The last dice result."""
        return self.firmware.dice

    @property
    def walls(self) -> list[WallState]:
        """Each wall's motor state."""
        return list(self.firmware.walls)

    def scores(self) -> list[int | None]:
        """Scores as the seat displays show them (``E 25000``), None where a prompt shows."""
        out: list[int | None] = []
        for line1, _ in self.displays:
            parts = line1.split()
            ok = len(parts) == 2 and parts[0] in "ESWN" and parts[1].lstrip("-").isdigit()
            out.append(int(parts[1]) if ok else None)
        return out

    # ---------------------------------------------------------------------------------------
    # Acting (people, scripts, the control interface)

    def press(self, seat: int, key: Key | str) -> None:
        """Press ``key`` (a :class:`Key` or its name, e.g. ``"RON"``, ``"7"``) at ``seat``."""
        self.firmware.press(seat, parse_key(key) if isinstance(key, str) else key)

    def take(self, seat: int, pos: int | None = None, count: int = 1) -> WallTake:
        """``seat`` takes from the wall: with ``pos`` the ``count`` tiles from there, without
        it whatever the wall tracker says comes next (a deal block or one tile). Kantan's
        take right after a call is the stand-in: it goes among the seat's melds."""
        if pos is None:
            positions = self.follower.expected_take(seat)
            if positions is None:
                raise ValueError(
                    f"seat {seat} has no take due by the wall tracker (none, or its tiles"
                    " were already lifted); give a position"
                )
        else:
            positions = tuple(range(pos, pos + count)) if count > 1 else (pos,)
        return self.firmware.take(seat, positions, self.follower.take_zone(seat))

    def discard(self, seat: int, tile: int | None = None) -> int | None:
        """A person at ``seat`` discarded (tells the bots). With seat readers the tile
        moves from the hand to the pond (default: the tile taken last) and is returned;
        without them the table senses nothing and ``tile`` must be None."""
        moved = None
        if self.firmware.zones is not None:
            moved = self.firmware.discard(seat, tile)
        elif tile is not None:
            raise ValueError("this table has no seat readers: a discard names no tile")
        self.follower.announce_discard(seat)
        return moved

    def meld(self, seat: int, tiles: list[int], discarder: int | None = None) -> int | None:
        """A person at ``seat`` lays ``tiles`` from the hand among the melds (seat readers
        only): with ``discarder``, a call of that seat's last discard (press the call key
        first); without, a closed kan, an added tile or a north. Returns the called tile.
        Kantan: the called tile stays in the discarder's pond (the stand-in is the seat's
        next take, which goes among its melds)."""
        if discarder is None:
            self.firmware.declare(seat, tiles)
            return None
        if self.house.wall.own_walls:
            zones = self.firmware.zones
            called = None if zones is None else zones.last_discard(discarder)
            if called is None:
                raise ValueError(f"seat {discarder} has no discard to call")
            self.firmware.declare(seat, tiles)
            return called
        return self.firmware.call(seat, discarder, tiles)

    def next_dice(self, dice: Sequence[int]) -> int:
        """Throw ``dice`` (two values 1..6) at the next roll that has none given yet,
        instead of seeded ones; returns how many throws wait. A bad pair raises
        ValueError and changes nothing."""
        pair = tuple(dice)
        if (
            len(pair) != 2
            or not all(isinstance(d, int) and not isinstance(d, bool) for d in pair)
            or not all(1 <= d <= 6 for d in pair)
        ):
            raise ValueError(f"dice are two values 1..6, got {reprlib.repr(list(pair))}")
        self.firmware.planned_dice.append((pair[0], pair[1]))
        return len(self.firmware.planned_dice)

    def next_layout(self, tiles: Sequence[int]) -> int:
        """Build the walls of the next shuffle that has no layout given yet from ``tiles``
        (the tile id at each position, docs/wall.md), instead of a seeded shuffle; returns
        how many layouts wait. A layout that is not the preset's set, each id once, raises
        ValueError and changes nothing."""
        if not all(isinstance(t, int) and not isinstance(t, bool) for t in tiles):
            raise ValueError("a layout is a list of tile ids (integers)")
        try:
            return self.firmware.wall.plan(tiles)
        except ValueError as exc:
            raise ValueError(f"{self.house.name}: {exc}") from None

    def use_rules(self, rules: str | HouseRules) -> HouseRules:
        """The daemon plays ``rules`` (a preset name or loaded rules) from its next hand on:
        staff started a new game with them (``tablectl ctl new-game --rules``, the
        dashboard). The bots and the wall follower take them up at the next dice. Raises
        ValueError for unknown rules or another number of players."""
        house = load_rules(rules) if isinstance(rules, str) else rules
        if house.players != self.house.players:
            raise ValueError(
                f"{house.name} is for {house.players} players; this table has {self.house.players}"
            )
        self.house = house
        self.follower.use_rules(house)
        if self.bots is not None:
            self.bots.use_rules(house)
        return house

    def roll(self) -> tuple[int, int]:
        """The dice button: roll and report ``DiceResult`` (as if the host asked)."""
        return self.firmware.roll_dice()

    async def inject(self, fault: str, *args: str) -> str:
        """Inject a fault now: ``unplug [s]``, ``reboot``, ``stuck [seat [key]]``,
        ``tray [seat]``, ``tilecount [wall]``, ``reader [seat [zone]]``, ``misread
        [seat]``, ``keys [seat [count]]``, ``corrupt|drop|dup [p]``."""
        return await self.firmware.inject(fault, *args)

    def render(self) -> str:
        """The terminal view of the table (:func:`hw_sim.view.render`) under a header with
        the table's rules, seed, endpoint and speed."""
        fw = self.firmware
        games = f"  games {self.games_finished}" if self.bots is not None else ""
        header = (
            f"hw_sim  {self.house.name}  seed {self.seed}  {self.url or 'no endpoint'}"
            f"  speed {fw.speed:g}{games}"
        )
        return render(fw, self.follower, header=header)
