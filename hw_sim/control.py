"""The control interface: JSON Lines over TCP on 127.0.0.1, for scripts and people.

Each request is one JSON object on one line, each reply too (``{"ok": true, ...}`` or
``{"ok": false, "error": "..."}``). Try it with ``nc 127.0.0.1 PORT`` or
``python -m hw_sim send PORT '{"cmd": "state"}'``.

==========================================================  ==================================
request                                                     does
==========================================================  ==================================
``{"cmd": "press", "seat": 1, "key": "RON"}``               press a key (name or digit)
``{"cmd": "press", "seat": 1, "keys": ["3", "OK"]}``        press several keys in order
``{"cmd": "take", "seat": 0}``                              take what the wall tracker says
                                                            comes next (a deal block or 1)
``{"cmd": "take", "seat": 0, "pos": 88, "count": 4}``       take ``count`` tiles from ``pos``
``{"cmd": "discard", "seat": 0}``                           a person at seat 0 discarded
                                                            (tells the bots; with seat
                                                            readers ``"tile": 52`` names
                                                            it, default the last taken)
``{"cmd": "meld", "seat": 1, "tiles": [53, 54], "from": 0}``  seat readers: lay tiles among
                                                            the melds (``from``: calling
                                                            that seat's last discard)
``{"cmd": "roll"}``                                         the dice button (``DiceResult``)
``{"cmd": "rules", "rules": "tenhou"}``                     the daemon plays these rules from
                                                            its next hand (staff changed them)
``{"cmd": "tray", "seat": 2, "delta": -1000}``              move sticks in a tray
``{"cmd": "next_dice", "dice": [3, 4]}``                    the next roll throws these (one
                                                            pair per hand; repeat to queue)
``{"cmd": "next_layout", "tiles": [52, 7, ...]}``           the next shuffle builds the walls
                                                            with these ids at positions 0..
                                                            (136 or 108: the preset's set)
``{"cmd": "state"}``                                        displays, lamps, centre, dice,
                                                            walls, faults, trays, link, games
``{"cmd": "displays"}`` / ``{"cmd": "lamps"}``              just those
``{"cmd": "view"}``                                         the terminal view as text
``{"cmd": "fault", "kind": "unplug", "args": ["2"]}``       inject a fault (see hw_sim.faults)
``{"cmd": "wait", "seat": 1, "startswith": "HAN?"}``        wait (``timeout`` s, default 10)
                                                            until a display line 1 starts so
==========================================================  ==================================
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import reprlib
from typing import TYPE_CHECKING, Any

from firmware_bridge.messages import Zone

if TYPE_CHECKING:
    from hw_sim.table import SimTable

__all__ = ["COMMANDS", "ControlServer", "execute", "table_state"]

_log = logging.getLogger(__name__)

#: Commands :func:`execute` understands.
COMMANDS = (
    "press", "take", "discard", "meld", "roll", "rules", "tray", "state", "displays", "lamps",
    "view", "fault", "wait", "next_dice", "next_layout",
)  # fmt: skip
#: Longest line a client may send (bytes): requests are small.
MAX_LINE = 64 * 1024


def table_state(table: SimTable) -> dict[str, Any]:
    """Everything the table shows, JSON-ready."""
    fw = table.firmware
    centre = fw.centre
    return {
        "seats": [c.as_dict() for c in table.consoles],
        "centre": None
        if centre is None
        else {
            "round_wind": centre.round_wind.name,
            "round_number": centre.round_number,
            "honba": centre.honba,
            "deposits": centre.deposits,
            "tiles_left": centre.tiles_left,
            "dora": list(centre.dora),
            "clock": centre.clock,
        },
        "dice": list(fw.dice) if fw.dice else None,
        "walls": [w.name for w in fw.walls[: fw.players]],
        "faults": sorted(code.name for code in fw.latched),
        "trays": list(fw.trays),
        "buzzer": fw.buzzer.pattern.name,
        "link_up": fw.link_up,
        "boot_id": fw.boot_id,
        "events_sent": fw.events_sent,
        "games_finished": table.games_finished,
        "url": table.url,
        "zones": None
        if fw.zones is None
        else [
            {zone.name.lower(): list(fw.zones.tiles(seat, zone)) for zone in Zone}
            for seat in range(fw.players)
        ],
    }


#: What a tray holds at most (a whole game's points and then some); a request beyond it
#: is a typo, not a table.
MAX_TRAY = 1_000_000


def _int(args: dict[str, Any], name: str, low: int | None = None, high: int | None = None) -> int:
    value = args.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{name!r} must be an integer, got {reprlib.repr(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name!r} is {value}; allowed: {low}..{high}")
    return value


def _seat(table: SimTable, args: dict[str, Any]) -> int:
    return _int(args, "seat", 0, table.house.players - 1)


async def execute(table: SimTable, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one control command on ``table``; returns the reply's payload (without "ok").

    Raises ValueError (or KeyError/TypeError) for a bad request; callers report it.
    """
    if cmd == "press":
        seat = _seat(table, args)
        keys = args.get("keys", [args.get("key")])
        if (
            not isinstance(keys, list)
            or not keys
            or not all(isinstance(k, str | int) for k in keys)
        ):
            raise ValueError("press needs 'key' or a list 'keys'")
        for key in keys:
            table.press(seat, str(key))
        return {}
    if cmd == "take":
        seat = _seat(table, args)
        pos = None if args.get("pos") is None else _int(args, "pos", 0, 135)
        count = _int(args, "count", 1, 4) if "count" in args else 1
        msg = table.take(seat, pos, count)
        return {"take": {"seat": msg.seat, "position": msg.position, "tile": msg.tile}}
    if cmd == "discard":
        seat = _seat(table, args)
        tile = None if args.get("tile") is None else _int(args, "tile", 0, 135)
        moved = table.discard(seat, tile)
        return {} if moved is None else {"tile": moved}
    if cmd == "meld":
        seat = _seat(table, args)
        tiles = args.get("tiles")
        if (
            not isinstance(tiles, list)
            or not 1 <= len(tiles) <= 4
            or not all(isinstance(t, int) and not isinstance(t, bool) for t in tiles)
        ):
            raise ValueError(
                f"'tiles' must be a list of 1 to 4 tile ids, got {reprlib.repr(tiles)}"
            )
        source = (
            None if args.get("from") is None else _int(args, "from", 0, table.house.players - 1)
        )
        return {"called": table.meld(seat, tiles, source)}
    if cmd == "roll":
        return {"dice": list(table.roll())}
    if cmd == "rules":
        name = args.get("rules")
        if not isinstance(name, str) or not name:
            raise ValueError("rules needs 'rules': a preset name or a rules file")
        return {"rules": table.use_rules(name).name}
    if cmd == "tray":
        seat = _seat(table, args)
        delta = _int(args, "delta", -MAX_TRAY, MAX_TRAY)
        if not 0 <= table.trays[seat] + delta <= MAX_TRAY:
            raise ValueError(f"tray {seat} would hold {table.trays[seat] + delta}; 0..{MAX_TRAY}")
        table.firmware.move_tray(seat, delta)
        return {"trays": table.trays}
    if cmd == "next_dice":
        dice = args.get("dice")
        if not isinstance(dice, list):
            raise ValueError(f"'dice' must be a list of two values 1..6, got {reprlib.repr(dice)}")
        return {"queued": table.next_dice(dice)}
    if cmd == "next_layout":
        tiles = args.get("tiles")
        if not isinstance(tiles, list):
            raise ValueError(f"'tiles' must be a list of tile ids, got {reprlib.repr(tiles)}")
        return {"queued": table.next_layout(tiles)}
    if cmd == "state":
        return table_state(table)
    if cmd == "displays":
        return {"displays": [list(d) for d in table.displays]}
    if cmd == "lamps":
        return {"lamps": [{"dealer": d, "riichi": r} for d, r in table.lamps]}
    if cmd == "view":
        return {"text": table.render()}
    if cmd == "fault":
        kind = args.get("kind")
        if not isinstance(kind, str):
            raise ValueError("fault needs 'kind'")
        extra = [str(a) for a in args.get("args", [])]
        return {"result": await table.inject(kind, *extra)}
    if cmd == "wait":
        seat = _seat(table, args)
        prefix = str(args.get("startswith", ""))
        timeout = args.get("timeout", 10.0)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise ValueError(f"'timeout' must be a number of seconds, got {reprlib.repr(timeout)}")
        if not 0 <= timeout <= 600:
            raise ValueError(f"'timeout' is {timeout}; allowed: 0..600")
        ok = await table.firmware.wait_for(
            lambda: table.displays[seat][0].startswith(prefix), timeout
        )
        if not ok:
            raise ValueError(f"seat {seat} line 1 did not start with {prefix!r} in {timeout:g} s")
        return {"display": list(table.displays[seat])}
    raise ValueError(f"unknown command {cmd!r}; commands: {', '.join(COMMANDS)}")


class ControlServer:
    """Serves :func:`execute` as JSON Lines on ``host:port`` (``port=0``: a free one)."""

    def __init__(self, table: SimTable, host: str = "127.0.0.1", port: int = 0) -> None:
        self.table = table
        self.host, self.port = host, port
        self._server: asyncio.Server | None = None
        self._clients: set[asyncio.Task[None]] = set()

    async def start(self) -> ControlServer:
        """Start listening; :attr:`port` is then the real port."""
        self._server = await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_LINE)
        self.port = self._server.sockets[0].getsockname()[1]
        _log.info("control interface on %s:%d", self.host, self.port)
        return self

    async def close(self) -> None:
        """Stop listening and drop the clients."""
        if self._server is not None:
            self._server.close()
        for task in list(self._clients):
            task.cancel()
        for task in list(self._clients):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._clients.add(task)
        try:
            while True:
                try:
                    line = await reader.readline()
                except (ValueError, ConnectionError):
                    break
                if not line:
                    break
                if not line.strip():
                    continue
                reply = await self.handle_line(line.decode("utf-8", "replace"))
                writer.write((json.dumps(reply) + "\n").encode())
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self._clients.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()

    async def handle_line(self, line: str) -> dict[str, Any]:
        """One request line to one reply object."""
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
                raise ValueError('a request is a JSON object with a "cmd" string')
            payload = await execute(self.table, request["cmd"], request)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            return {"ok": False, "error": str(exc)}
        return {"ok": True, **payload}
