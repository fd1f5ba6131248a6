"""``python -m hw_sim``: run a simulated table for a daemon to talk to.

See ``python -m hw_sim --help`` and docs/simulator.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import sys
import textwrap
from pathlib import Path

from firmware_bridge.signing import parse_key
from firmware_bridge.stdio import OneLineParser, run_guarded
from hw_sim.control import COMMANDS, ControlServer
from hw_sim.faults import LINE_FAULTS, ONE_SHOT_FAULTS, TILE_FAULTS, FaultPlan
from hw_sim.playlog import Diverged, LogPlayer, preset_for
from hw_sim.scenario import ACTIONS, ScenarioError, run_scenario
from hw_sim.table import SimTable
from hw_sim.view import live
from tablectl.logs import LogError, LogGame, read_log
from tablectl.rules.loader import preset_names

DESCRIPTION = """\
A simulated automatic mahjong table that speaks the table wire protocol (docs/protocol.md):
walls with motors, dice, four seat consoles, the centre display, point-stick trays, and
players -- autoplay bots, a JSON Lines scenario, or you through the control interface.
"""


def _wrap(names: tuple[str, ...]) -> str:
    return textwrap.fill(", ".join(names), width=86, subsequent_indent="  ")


EPILOG = f"""\
endpoints (pick one; the daemon opens the printed URL):
  --pty              a pseudo-terminal; the daemon opens its /dev/pts/N path as a serial port
  --tcp PORT         socket://127.0.0.1:PORT (0 = any free port)
  (usb://VID:PID?backend=loopback and sim://NAME are in-process only: hw_sim.SimTable)

players:
  --autoplay (default) bots play every seat (--seats 0,2 for some), whole games, seeded:
  one seed = one reproducible game. --no-autoplay: nobody plays unless --scenario FILE
  or the control interface. Scenario actions (one JSON object a line):
  {_wrap(ACTIONS)}

control interface (--control PORT): JSON Lines over TCP on 127.0.0.1, one request a line:
  {{"cmd": "press", "seat": 1, "key": "RON"}}   {{"cmd": "take", "seat": 0}}   {{"cmd": "state"}}
  commands: {_wrap(COMMANDS)}
  client: python -m hw_sim send PORT '{{"cmd": "view"}}'

view: --view redraws the table (consoles, centre, dice, walls with break and dead wall)
on stdout as it changes.  Everything is described in docs/simulator.md.

faults (--faults SPEC, seeded by --fault-seed):
  line faults per frame: {", ".join(f"{n}=P" for n in LINE_FAULTS)}
  one-shot after N table events: {", ".join(f"{n}@N" for n in ONE_SHOT_FAULTS + TILE_FAULTS)}
  (unplug@N:SECONDS, stuck@N:SEAT:KEY, tray@N:SEAT, tilecount@N:WALL,
  reader@N:SEAT:ZONE and misread@N:SEAT with --tile-reader); random=K

examples:
  python -m hw_sim serve --pty --rules mleague --seed 7 --speed 0.2
  python -m hw_sim serve --tcp 7711 --control 7712 --no-autoplay
  python -m hw_sim serve --pty --faults drop=0.02,unplug@400:4,tilecount@2 --view
  python -m hw_sim send 7712 '{{"cmd": "press", "seat": 0, "key": "OK"}}'
  python -m hw_sim serve --tcp 0 --speed 0 --play-log game.mjlog   (daemon: tenhou preset)

presets: {", ".join(preset_names())}
"""


def _port(text: str) -> int:
    """A TCP port, 0..65535 (0: any free one)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, not {port}")
    return port


def _speed(text: str) -> float:
    """A speed factor: 0 (instant) or more, finite."""
    try:
        speed = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= speed < math.inf:
        raise argparse.ArgumentTypeError(f"the speed is 0 or more (0: instant), not {text}")
    return speed


def _seats(text: str) -> set[int]:
    try:
        seats = {int(s) for s in text.split(",") if s.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seats wants seat numbers like 0,2: {text!r}") from None
    if not seats or any(not 0 <= s <= 3 for s in seats):
        raise argparse.ArgumentTypeError(f"--seats wants seats 0..3: {text!r}")
    return seats


def _signing_key(text: str) -> bytes:
    try:
        return parse_key(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _DefaultRules(str):
    """The ``--rules`` nobody gave: a log played with ``--play-log`` brings its own."""

    __slots__ = ()


def build_parser() -> argparse.ArgumentParser:
    """The command line parser (``serve`` and ``send``)."""
    parser = OneLineParser(
        prog="python -m hw_sim",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser(
        "serve",
        help="run a simulated table",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = serve.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", action="store_true", help="serve on a new pty (path printed)")
    where.add_argument("--tcp", type=_port, metavar="PORT", help="serve socket://127.0.0.1:PORT")
    serve.add_argument(
        "--rules", default=_DefaultRules("ariari"), choices=preset_names(),
        help="house rules preset (default ariari; with --play-log the log's: tenhou)",
    )  # fmt: skip
    serve.add_argument("--seed", type=int, default=0, help="seed of walls, dice, boot ids, bots")
    serve.add_argument(
        "--speed", type=_speed, default=1.0,
        help="motor/dice durations x SPEED (1 real time, 0 instant; default 1)",
    )  # fmt: skip
    serve.add_argument("--autoplay", action=argparse.BooleanOptionalAction, default=True,
                       help="bots play (default: yes)")  # fmt: skip
    serve.add_argument("--seats", type=_seats, help="seats the bots play, e.g. 1,2,3 (default all)")
    serve.add_argument("--max-games", type=int, help="stop the bots after N games")
    serve.add_argument("--scenario", type=Path, metavar="FILE", help="run a JSON Lines scenario")
    serve.add_argument(
        "--play-log", type=Path, metavar="LOG",
        help="deal and play a tenhou.net game (mjlog XML or tenhou.net/6 JSON, .gz too) with "
        "every tile reader on; exit 0 once its last hand is confirmed, 1 where the daemon's "
        "table differs from the log",
    )  # fmt: skip
    serve.add_argument("--control", type=_port, metavar="PORT", help="control interface port")
    serve.add_argument("--faults", default="", metavar="SPEC", help="fault plan (see below)")
    serve.add_argument("--fault-seed", type=int, default=0, help="seed of the fault plan")
    serve.add_argument(
        "--tile-reader", action="store_true",
        help="a table that reads every tile: tile ids in WallTake, the wall reader, the seat "
        "readers (SeatTiles); the bots then play the tiles they hold",
    )  # fmt: skip
    serve.add_argument(
        "--wall-reader", action="store_true", help="report each raised wall's tiles (WallLayout)"
    )
    serve.add_argument("--trays", action="store_true", help="point-stick tray sensors")
    serve.add_argument("--view", action="store_true", help="live terminal view on stdout")
    serve.add_argument("--signing-key", type=_signing_key, metavar="HEX",
                       help="sign and require signed frames with this 32-byte key (64 hex "
                       "digits); the daemon's URL then needs ?signing_key=HEX")  # fmt: skip
    serve.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        help="logging level (default WARNING)",
    )
    send = sub.add_parser("send", help="send one control request and print the reply")
    send.add_argument("port", type=_port, help="the control interface port")
    send.add_argument("request", help='a JSON request, e.g. \'{"cmd": "state"}\'')
    send.add_argument("--host", default="127.0.0.1")
    return parser


def readers(args: argparse.Namespace) -> dict[str, bool]:
    """The table's tile readers: ``--tile-reader`` is a table that reads every tile (ids
    in the takes, the wall reader, the seat readers); ``--wall-reader`` alone adds only
    the wall reader."""
    return {
        "tile_reader": args.tile_reader,
        "wall_reader": args.wall_reader or args.tile_reader,
        "seat_reader": args.tile_reader,
    }


async def serve(args: argparse.Namespace) -> int:
    """Run the table until interrupted (or the bots' games / the scenario are done)."""
    try:
        plan = FaultPlan.parse(args.faults, args.fault_seed)
    except ValueError as exc:
        print(f"hw_sim: --faults: {exc}", file=sys.stderr)
        return 2
    game: LogGame | None = None
    if args.play_log is not None:
        try:
            game = read_log(args.play_log)
            given = not isinstance(args.rules, _DefaultRules)
            rules = args.rules if given else preset_for(game.rules)
        except LogError as exc:
            print(f"hw_sim: --play-log {args.play_log}: {exc}", file=sys.stderr)
            return 2
        args.autoplay, args.tile_reader = False, True
    else:
        rules = str(args.rules)
    tiles = readers(args)
    table = SimTable(
        rules,
        args.seed,
        speed=args.speed,
        autoplay=args.autoplay,
        seats=args.seats,
        max_games=args.max_games,
        tile_reader=tiles["tile_reader"],
        wall_reader=tiles["wall_reader"],
        seat_reader=tiles["seat_reader"],
        trays=args.trays,
        faults=plan,
        signing_key=args.signing_key,
    )
    try:
        player = None if game is None else LogPlayer(table, game)
    except (LogError, ValueError) as exc:
        print(f"hw_sim: --play-log {args.play_log}: {exc}", file=sys.stderr)
        return 2
    control: ControlServer | None = None
    view: asyncio.Task[None] | None = None
    lines: list[str] | None = None
    if args.scenario is not None:
        try:
            lines = args.scenario.read_text("utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            print(f"hw_sim: --scenario {args.scenario}: {reason}", file=sys.stderr)
            return 2
    try:
        if args.pty:
            path = await table.start_pty()
            print(f"hw_sim: serial port {path}  (the daemon's [table] device)", flush=True)
        else:
            port = await table.start_tcp(args.tcp)
            print(f"hw_sim: listening on socket://127.0.0.1:{port}", flush=True)
        if args.control is not None:
            control = await ControlServer(table, port=args.control).start()
            print(f"hw_sim: control interface on 127.0.0.1:{control.port}", flush=True)
        if args.view:
            view = asyncio.create_task(live(table))
        if lines is not None:
            count = await run_scenario(table, lines, str(args.scenario))
            print(f"hw_sim: scenario done ({count} actions)", flush=True)
        if player is not None:
            await player.run()
            print(f"hw_sim: {args.play_log}: {player.hands_played} hands played as the log"
                  " has them", flush=True)  # fmt: skip
            return 0
        if args.max_games is None or table.bots is None:
            await asyncio.Event().wait()  # serve until interrupted
        await table.run()
        print(f"hw_sim: {table.games_finished} games played", flush=True)
        return 0
    except ScenarioError as exc:
        print(f"hw_sim: {exc}", file=sys.stderr)
        return 1
    except Diverged as exc:
        print(f"hw_sim: {args.play_log}: the daemon's table left the log at {exc}",
              file=sys.stderr)  # fmt: skip
        return 1
    except OSError as exc:  # a port in use, no ptys left
        print(f"hw_sim: cannot serve: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        if view is not None:
            view.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await view
            print(table.render())
        if control is not None:
            await control.close()
        await table.close()


async def send(args: argparse.Namespace) -> int:
    """One control request; prints the reply (the ``text`` of a view as is)."""
    try:
        reader, writer = await asyncio.open_connection(args.host, args.port)
    except OSError as exc:
        why = "connection refused" if isinstance(exc, ConnectionRefusedError) else str(exc)
        print(
            f"hw_sim send: nothing answers on {args.host}:{args.port} ({why});"
            f" is 'hw_sim serve --control {args.port}' running?",
            file=sys.stderr,
        )
        return 2
    try:
        writer.write(args.request.encode() + b"\n")
        await writer.drain()
        line = await reader.readline()
    except OSError as exc:
        print(f"hw_sim send: {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    try:
        reply = json.loads(line)
    except ValueError:
        print(f"hw_sim send: {args.host}:{args.port} gave no JSON reply", file=sys.stderr)
        return 2
    if reply.get("ok") and "text" in reply:
        print(reply["text"], end="")
    else:
        print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m hw_sim``: a broken stdout is one line and an exit code
    (firmware_bridge.stdio)."""
    return run_guarded("hw_sim", lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "send":
        return asyncio.run(send(args))
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        return asyncio.run(serve(args))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
