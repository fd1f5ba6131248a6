"""The ``tablectl`` command line."""

from __future__ import annotations

import argparse
import io
import json
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from datetime import datetime
from pathlib import Path
from typing import Any

from firmware_bridge.stdio import OneLineParser, read_stdin_line, run_guarded
from tablectl import stopping
from tablectl.config import DEFAULT_JOURNAL, ConfigError, load_config
from tablectl.journal import Journal, JournalError, export_game
from tablectl.jsonlines import bounded_lines
from tablectl.ledger.cli import add_parser as add_ledger_parser
from tablectl.records import format_table, list_records, to_csv, to_json
from tablectl.replay import ReplayFileError, replay
from tablectl.rules.loader import (
    RulesConfigError,
    load_rules,
    preset_names,
    regular_file_problem,
)
from tablectl.rules.options import SECTIONS, as_dict
from tablectl.stopping import EXIT_INTERRUPTED
from tablectl.version import __version__

EXIT_OK = 0
#: ``tablectl ctl``: the daemon refused the action (it says why).
EXIT_REFUSED = 1
EXIT_USAGE = 2
#: ``tablectl run``: the config or the journal is unusable and a restart will not mend it
#: (sysexits' EX_CONFIG; the systemd unit's RestartPreventExitStatus).
EXIT_CONFIG = 78

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    """Register a sub-command implementation under ``name``."""

    def register(func: Command) -> Command:
        _COMMANDS[name] = func
        return func

    return register


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return '"none"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@command("rules-list")
def _rules_list(args: argparse.Namespace) -> int:
    for name in preset_names():
        rules = load_rules(name)
        print(f"{name:<12} {rules.players}p  {rules.description}")
    return EXIT_OK


@command("rules-show")
def _rules_show(args: argparse.Namespace) -> int:
    rules = load_rules(args.name)
    if args.json:
        print(json.dumps(as_dict(rules), indent=2, ensure_ascii=False))
        return EXIT_OK
    resolved = as_dict(rules)
    print(f"# {rules.name}: {rules.description}")
    print("# every value resolved (presets extended, defaults filled in)")
    for section, cls in SECTIONS.items():
        print(f"\n[{section}]")
        for f in fields(cls):
            value = resolved[section][f.name]
            doc = f.metadata.get("doc", "")
            if value is None:
                print(f"# {f.name} is not set  # {doc}")
            else:
                print(f"{f.name} = {_toml_value(value)}  # {doc}")
    return EXIT_OK


@command("replay")
def _replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if args.file == "-":
            # Strict UTF-8 whatever the locale (which may make stdin carry bad bytes on
            # as lone surrogates): a file that is not text is refused as such.
            stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="strict")
            result = replay(bounded_lines(stdin), args.rules)
        elif (problem := regular_file_problem(path)) is not None:
            print(f"tablectl replay: {path}: {problem}", file=sys.stderr)
            return EXIT_USAGE
        else:
            with path.open(encoding="utf-8") as handle:
                result = replay(bounded_lines(handle), args.rules)
    except OSError as exc:
        print(f"tablectl replay: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except UnicodeDecodeError:
        print(f"tablectl replay: {path} is not UTF-8 text", file=sys.stderr)
        return EXIT_USAGE
    except ReplayFileError as exc:
        print(f"tablectl replay: {path}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(result.as_dict(), ensure_ascii=False))
    return EXIT_OK


class _CliError(Exception):
    """A usage or file problem in a journal/records command: printed, exit status 2."""


def _journal_path(args: argparse.Namespace) -> Path:
    """The journal named by --journal, by the config file of --config, or the default."""
    if args.journal:
        return Path(args.journal)
    if args.config:
        try:
            return load_config(args.config, check_files=False).journal
        except ConfigError as exc:
            raise _CliError(str(exc)) from exc
    return DEFAULT_JOURNAL


def _open_journal(args: argparse.Namespace) -> Journal:
    try:
        # create=False: a mistyped path is an error, not a new empty journal.
        return Journal.open(_journal_path(args), readonly=True)
    except JournalError as exc:
        raise _CliError(str(exc)) from exc


def _emit(text: str, output: str | None) -> None:
    """Print ``text`` or write it to the -o file."""
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise _CliError(f"cannot write {output}: {exc.strerror}") from exc


def _reports_errors(name: str) -> Callable[[Command], Command]:
    """Turn the journal commands' expected failures into a message and exit status 2."""

    def wrap(func: Command) -> Command:
        def run(args: argparse.Namespace) -> int:
            try:
                return func(args)
            except (_CliError, JournalError) as exc:
                print(f"tablectl {name}: {exc}", file=sys.stderr)
                return EXIT_USAGE

        run.__doc__ = func.__doc__
        return run

    return wrap


@command("journal-export")
@_reports_errors("journal export")
def _journal_export(args: argparse.Namespace) -> int:
    """Write one game as replay JSON Lines (default: the last game), or as a tenhou.net/6
    or mjai log (default: the last finished game)."""
    with _open_journal(args) as journal:
        if args.format == "replay":
            game_id = args.game or journal.last_game()
            if game_id is None:
                raise _CliError(f"{journal.path}: the journal holds no games")
            text = export_game(journal, game_id)
        else:
            text = _game_log(journal, args.game, args.format)
    _emit(text, args.output)
    return EXIT_OK


def _game_log(journal: Journal, game: str | None, fmt: str) -> str:
    """One game of the journal as a tenhou.net/6 or mjai log (docs/tiles.md)."""
    from tablectl.export import ExportError, export_text

    if game is None:
        finished = [g for g in journal.games() if g.status == "finished"]
        if not finished:
            raise _CliError(f"{journal.path}: the journal holds no finished game; name one")
        row = finished[-1]
    else:
        row = journal.game(game)
    try:
        rules = load_rules(row.rules)
    except RulesConfigError as exc:
        raise _CliError(f"game {row.game_id}: cannot load its rules {row.rules!r}: {exc}") from exc
    title = (f"{row.table_id} {rules.name}", _when(row.started_at))
    try:
        return export_text(fmt, rules, journal.events(row.game_id), row.seats, title)
    except ExportError as exc:
        raise _CliError(f"game {row.game_id}: {exc}") from exc


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts).astimezone().strftime("%Y-%m-%d %H:%M")


@command("journal-list")
@_reports_errors("journal list")
def _journal_list(args: argparse.Namespace) -> int:
    """One line per game in the journal, oldest first."""
    with _open_journal(args) as journal:
        games = journal.games()
    if args.json:
        rows = [
            {
                "game": g.game_id,
                "table": g.table_id,
                "preset": g.rules,
                "seats": None if g.seats is None else list(g.seats),
                "started_at": g.started_at,
                "ended_at": g.ended_at,
                "status": g.status,
                "events": g.event_count,
            }
            for g in games
        ]
        print(json.dumps(rows, ensure_ascii=False))
        return EXIT_OK
    if not games:
        print("no games in the journal")
        return EXIT_OK
    print(f"{'game':<32}  {'table':<10} {'preset':<12} {'started':<16}  {'events':>6}  status")
    for g in games:
        print(
            f"{g.game_id:<32}  {g.table_id:<10} {g.rules:<12} {_when(g.started_at):<16}"
            f"  {g.event_count:>6}  {g.status}"
        )
    return EXIT_OK


@command("journal-notes")
@_reports_errors("journal notes")
def _journal_notes(args: argparse.Namespace) -> int:
    """The journal's notes, oldest first: every one, or the fault history (--faults)."""
    from tablectl.fault_history import FAULT_KINDS, format_notes, notes_json

    with _open_journal(args) as journal:
        game_id = journal.game(args.game).game_id if args.game else None
        notes = journal.notes(game_id)
    if args.faults:
        notes = [n for n in notes if n.kind in FAULT_KINDS]
    _emit(notes_json(notes) if args.json else format_notes(notes), None)
    return EXIT_OK


@command("records")
@_reports_errors("records")
def _records(args: argparse.Namespace) -> int:
    """The game records as a table, CSV or JSON."""
    since = None
    if args.since:
        try:
            since = datetime.fromisoformat(args.since)
        except ValueError as exc:
            raise _CliError(f"--since {args.since!r}: expected a date like 2024-05-01") from exc
        if since.tzinfo is None:
            since = since.astimezone()  # a bare date means local time, as the table shows
    with _open_journal(args) as journal:
        records = list_records(journal, since)
    if args.csv:
        text = to_csv(records)
    elif args.json:
        text = to_json(records)
    else:
        text = format_table(records)
    _emit(text, args.output)
    return EXIT_OK


def _add_journal_source(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--journal", metavar="PATH", help=f"journal file (default {DEFAULT_JOURNAL})"
    )
    group.add_argument("--config", metavar="PATH", help="the daemon's config file: use its journal")


@command("diagram")
def _diagram(args: argparse.Namespace) -> int:
    if args.consoles:
        from tablectl.console.diagram import flows_mermaid

        sys.stdout.write(flows_mermaid())
        return EXIT_OK
    from tablectl.phases import mermaid

    print(mermaid())
    return EXIT_OK


@command("demo")
def _demo(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from tablectl.demo import DemoInterrupted, ResumeError, journal_in_use, run_demo

    # The daemon's and the simulator's warnings (a reboot between games, a stalled bot)
    # are for a table's log, not for the screen of someone watching.
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if args.games < 1:
        print("tablectl demo: --games must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    load_rules(args.rules)  # a bad preset fails here with a clear message
    journal = Path(args.journal) if args.journal else None
    if journal is not None and not args.resume:
        why = journal_in_use(journal)
        if why is not None:
            print(f"tablectl demo: {why}", file=sys.stderr)
            return EXIT_USAGE
    try:
        asyncio.run(
            run_demo(
                args.rules,
                args.seed,
                args.games,
                fast=args.fast,
                as_json=args.json,
                journal=journal,
                tiles=args.tiles,
            )
        )
    except DemoInterrupted as exc:
        print("tablectl demo: stopped", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("tablectl demo: stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (JournalError, ResumeError) as exc:
        print(f"tablectl demo: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


@command("run")
def _run(args: argparse.Namespace) -> int:
    """Run the table daemon until SIGTERM or Ctrl-C, which at any moment (the modules
    loading, the journal opening, the link connecting) end it with the journal closed
    and exit 0."""
    # console_main holds SIGTERM from its first line; main() called directly has not.
    # Held until the process ends: released, a signal after the journal closed would
    # still end the process by it.
    stopping.hold(signal.SIGTERM, signal.SIGINT)
    return _run_daemon(args)


def _run_daemon(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from tablectl.config import ConfigError, load_config
    from tablectl.ctl import CtlError
    from tablectl.daemon import Daemon, DeviceBusy

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # transitions logs every state entry at INFO: too chatty for a table's log.
    logging.getLogger("transitions").setLevel(logging.WARNING)
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"tablectl run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.check_config:
        print(f"tablectl run: {config.source}: the config is good")
        return EXIT_OK

    if stopping.requested() is not None:
        return EXIT_OK  # stopped before anything was opened

    async def main() -> None:
        daemon = Daemon(config)
        loop = asyncio.get_running_loop()
        # Thread-safe: the handler runs between two bytecodes of this very loop, which
        # may be waiting in select() and must be woken.
        with stopping.forwarded(lambda _: loop.call_soon_threadsafe(daemon.stop.set)):
            await daemon.run()

    try:
        asyncio.run(main())
    except (JournalError, DeviceBusy, CtlError) as exc:
        # Restarting cannot mend a journal: say so once and let systemd stop here
        # (RestartPreventExitStatus=78 in docs/pi.md).
        print(f"tablectl run: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    return EXIT_OK


@command("staff-pin")
def _staff_pin(args: argparse.Namespace) -> int:
    """Print the config line for a staff PIN read from the terminal (twice) or stdin."""
    import getpass

    from tablectl.console.staff import PinFormatError, check_pin_text, hash_pin

    if sys.stdin.isatty():
        pin = getpass.getpass("staff PIN (4 to 8 digits): ")
        if getpass.getpass("again: ") != pin:
            print("tablectl staff-pin: the two PINs differ; nothing printed", file=sys.stderr)
            return EXIT_USAGE
    else:
        pin = read_stdin_line(64).strip()
    try:
        check_pin_text(pin)
    except PinFormatError as exc:
        print(f"tablectl staff-pin: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print("[staff]")
    print(f'pin_hash = "{hash_pin(pin)}"')
    return EXIT_OK


@command("dashboard")
def _dashboard(args: argparse.Namespace) -> int:
    """Serve the parlor's live web page from the broker's table topics."""
    import asyncio
    import logging

    from tablectl.dashboard.settings import SettingsError, load_settings

    name = "tablectl dashboard"
    # The extra first: without it no option or config would make the command work.
    try:
        from tablectl.dashboard.server import serve
    except ImportError as exc:
        print(
            f"{name} needs the dashboard extra ({exc.name or 'aiohttp'} is not installed):"
            " pip install 'tablectl[dashboard]'",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    from tablectl.dashboard.books import BooksError, load_books

    try:
        settings = load_settings(args.broker, args.listen, args.config, args.prefix)
        books = load_books(args.config)
    except (SettingsError, BooksError) as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        asyncio.run(serve(settings, books=books))
    except OSError as exc:
        where = f"{settings.listen_host}:{settings.listen_port}"
        print(f"{name}: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return EXIT_OK


@command("ledger")
def _ledger(args: argparse.Namespace) -> int:
    """The parlor's ledger: ``run`` the service, ``close`` a business day."""
    from tablectl.ledger.cli import main as ledger_main

    return ledger_main(args)


@command("dashboard-password")
def _dashboard_password(args: argparse.Namespace) -> int:
    """Print the config line for a dashboard password read from the terminal or stdin."""
    import getpass

    from tablectl.dashboard.auth import PasswordError, hash_password

    name = "tablectl dashboard-password"
    if sys.stdin.isatty():
        password = getpass.getpass("dashboard password: ")
        if getpass.getpass("again: ") != password:
            print(f"{name}: the two passwords differ; nothing printed", file=sys.stderr)
            return EXIT_USAGE
    else:
        password = read_stdin_line(300).rstrip("\r\n")
    try:
        line = hash_password(password)
    except PasswordError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    key = "view_password_hash" if args.view else "staff_password_hash"
    print("[dashboard]")
    print(f'{key} = "{line}"')
    return EXIT_OK


@command("mqtt-secret")
def _mqtt_secret(args: argparse.Namespace) -> int:
    """Print a new secret for signed staff requests, as the config line both ends take."""
    from tablectl.mqtt_signing import new_secret

    print("# in the tables' [mqtt] and the dashboard's [dashboard] section")
    print(f'command_secret = "{new_secret()}"')
    return EXIT_OK


@command("ctl")
def _ctl(args: argparse.Namespace) -> int:
    """Ask the running daemon for its status, an abandon, a new game, an undo or the
    players for the next game."""
    from tablectl.ctl import CtlError, request
    from tablectl.status_text import format_status

    name = f"tablectl ctl {args.action}"
    socket_path = Path(args.socket) if args.socket else None
    if socket_path is None:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        socket_path = config.staff.socket
        if socket_path is None:
            print(f"{name}: {config.source} sets no [staff] socket", file=sys.stderr)
            return EXIT_USAGE
    payload: dict[str, Any] = {"cmd": args.action}
    if args.action == "new-game":
        if not args.rules:
            print(f"{name}: --rules NAME is required (a preset or a rules file)", file=sys.stderr)
            return EXIT_USAGE
        rules = args.rules
        if rules not in preset_names():
            if not Path(rules).exists():
                # Neither a preset nor a file: the loader says so here, naming it as given
                # (the daemon would only see the absolute path made of it).
                try:
                    load_rules(rules)
                except RulesConfigError as exc:
                    print(f"{name}: {exc}", file=sys.stderr)
                    return EXIT_USAGE
            rules = str(Path(rules).resolve())  # the daemon runs elsewhere: no relative paths
        payload["rules"] = rules
    elif args.rules:
        print(f"{name}: --rules goes with new-game only", file=sys.stderr)
        return EXIT_USAGE
    if args.action == "seat":
        if args.clear == bool(args.players):
            print(
                f"{name}: give one entry per seat (a member number, a name, or - for a guest),"
                " or --clear for the table's own seat names",
                file=sys.stderr,
            )
            return EXIT_USAGE
        # "-" is a guest: an empty word is awkward to type in a shell.
        payload["seats"] = None if args.clear else ["" if p == "-" else p for p in args.players]
    elif args.players or args.clear:
        print(f"{name}: players and --clear go with seat only", file=sys.stderr)
        return EXIT_USAGE
    if args.json and args.action != "status":
        print(f"{name}: --json goes with status only", file=sys.stderr)
        return EXIT_USAGE
    try:
        reply = request(socket_path, payload)
    except CtlError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not reply.get("ok"):
        print(f"{name}: refused: {reply.get('error', 'no reason given')}", file=sys.stderr)
        return EXIT_REFUSED
    if args.action == "status" and args.json:
        print(json.dumps(reply.get("status"), indent=1, sort_keys=True))
    elif args.action == "status":
        sys.stdout.write(format_status(reply.get("status")))
    else:
        print(f"{name}: done")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = OneLineParser(
        prog="tablectl", description="Controller for Japanese riichi-mahjong automatic tables."
    )
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p_replay = sub.add_parser("replay", help="replay a JSON Lines event file through the rules")
    p_replay.add_argument("file", help="JSON Lines file, one event per line; - for stdin")
    p_replay.add_argument("--rules", help="preset name or rules file (overrides a start line)")
    p_replay.set_defaults(handler="replay")

    p_rules = sub.add_parser("rules", help="list and show the house rule presets")
    rules_sub = p_rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    rules_sub.add_parser("list", help="the shipped presets").set_defaults(handler="rules-list")
    p_show = rules_sub.add_parser("show", help="every resolved value of a preset or file")
    p_show.add_argument("name", help="preset name or path to a rules TOML file")
    p_show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    p_show.set_defaults(handler="rules-show")

    p_journal = sub.add_parser("journal", help="read the crash-proof game journal")
    journal_sub = p_journal.add_subparsers(dest="journal_command", required=True, metavar="ACTION")
    p_export = journal_sub.add_parser(
        "export", help="a game as replay JSON Lines, or a tenhou.net/6 or mjai log"
    )
    p_export.add_argument(
        "game",
        nargs="?",
        help="game id or a unique prefix (default: the last game; the last finished one"
        " for tenhou6 and mjai)",
    )
    _add_journal_source(p_export)
    p_export.add_argument(
        "--format",
        choices=("replay", "tenhou6", "mjai"),
        default="replay",
        help="replay JSON Lines (default), tenhou.net/6 JSON or mjai JSON Lines",
    )
    p_export.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p_export.set_defaults(handler="journal-export")
    p_list = journal_sub.add_parser("list", help="the games in the journal")
    _add_journal_source(p_list)
    p_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_list.set_defaults(handler="journal-list")
    p_notes = journal_sub.add_parser(
        "notes", help="what staff may look up: faults, stalls, staff actions, calls"
    )
    p_notes.add_argument("game", nargs="?", help="only this game (id or a unique prefix)")
    _add_journal_source(p_notes)
    p_notes.add_argument(
        "--faults", action="store_true", help="only the fault history: faults, clears, stalls"
    )
    p_notes.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_notes.set_defaults(handler="journal-notes")

    p_records = sub.add_parser("records", help="the records of finished games")
    _add_journal_source(p_records)
    fmt = p_records.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="CSV, one row per game")
    fmt.add_argument("--json", action="store_true", help="a JSON array, one object per game")
    p_records.add_argument("--since", metavar="DATE", help="games finished on or after DATE")
    p_records.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p_records.set_defaults(handler="records")
    p_run = sub.add_parser("run", help="run the table daemon")
    p_run.add_argument(
        "--config",
        default="/etc/tablectl/tablectl.toml",
        help="the daemon's TOML config file (default: %(default)s)",
    )
    p_run.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p_run.add_argument(
        "--check-config",
        action="store_true",
        help="check the config (every key, the paths it names) and exit, opening nothing",
    )
    p_run.set_defaults(handler="run")

    p_demo = sub.add_parser(
        "demo", help="the simulator and the daemon together, autoplaying games you can watch"
    )
    p_demo.add_argument("--rules", default="ariari", help="preset name or rules file")
    p_demo.add_argument("--seed", type=int, default=1, help="one seed = one reproducible game")
    p_demo.add_argument("--games", type=int, default=1, help="how many games to play")
    p_demo.add_argument("--fast", action="store_true", help="no motor time, no pauses")
    p_demo.add_argument(
        "--json", action="store_true", help="print each finished game as one JSON line"
    )
    p_demo.add_argument("--journal", help="keep the journal in this file (default: temporary)")
    p_demo.add_argument(
        "--resume", action="store_true", help="play on a game in progress in --journal"
    )
    p_demo.add_argument(
        "--tiles",
        action="store_true",
        help="a table that reads every tile: scored wins, and every seat's tiles in the view",
    )
    p_demo.set_defaults(handler="demo")

    p_diagram = sub.add_parser("diagram", help="print the table's phase machine (mermaid)")
    p_diagram.add_argument(
        "--consoles", action="store_true", help="the seat console flows instead (mermaid)"
    )
    p_diagram.set_defaults(handler="diagram")

    p_pin = sub.add_parser("staff-pin", help="print the [staff] pin_hash line for a staff PIN")
    p_pin.set_defaults(handler="staff-pin")

    p_bringup = sub.add_parser(
        "bringup", help="check every sensor and actuator of a table, with a technician"
    )
    p_bringup.add_argument(
        "url", help="the table: a serial port, socket://HOST:PORT, usb://VID:PID"
    )
    p_bringup.add_argument("--report", metavar="PREFIX", help="write PREFIX.txt and PREFIX.json")
    p_bringup.add_argument(
        "--key-timeout", type=float, default=30.0, help="s to wait for each key or answer"
    )
    p_bringup.add_argument(
        "--motor-timeout", type=float, default=60.0, help="s to wait for each wall's motors"
    )
    p_bringup.set_defaults(handler="bringup")

    p_dash = sub.add_parser("dashboard", help="serve a live web page of every table for staff")
    p_dash.add_argument("--broker", metavar="URL", help="the parlor broker, mqtt://HOST:PORT")
    p_dash.add_argument(
        "--listen", metavar="HOST:PORT", help="where to serve the page (default 127.0.0.1:8080)"
    )
    p_dash.add_argument("--config", metavar="FILE", help="TOML file with a [dashboard] section")
    p_dash.add_argument("--prefix", help="the tables' topic prefix (default tablectl)")
    p_dash.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p_dash.set_defaults(handler="dashboard")

    add_ledger_parser(sub)

    p_dpw = sub.add_parser(
        "dashboard-password", help="print the [dashboard] hash line for a password (stdin)"
    )
    p_dpw.add_argument(
        "--view", action="store_true", help="the password to view the page, not the staff one"
    )
    p_dpw.set_defaults(handler="dashboard-password")

    p_sec = sub.add_parser(
        "mqtt-secret", help="print a new command_secret line (tables' [mqtt] and [dashboard])"
    )
    p_sec.set_defaults(handler="mqtt-secret")

    p_ctl = sub.add_parser("ctl", help="staff actions on the running daemon (Unix socket)")
    p_ctl.add_argument("action", choices=("status", "abandon", "new-game", "undo", "seat"))
    p_ctl.add_argument(
        "players",
        nargs="*",
        help="seat: one entry per seat, seat 0 first: a member number, a name, or - (a guest)",
    )
    p_ctl.add_argument("--rules", help="new-game: a preset name or a rules file")
    p_ctl.add_argument(
        "--clear", action="store_true", help="seat: the table's own seat names again"
    )
    p_ctl.add_argument(
        "--config", default="/etc/tablectl/tablectl.toml", help="the daemon's config (its socket)"
    )
    p_ctl.add_argument("--socket", help="the daemon's socket, instead of reading --config")
    p_ctl.add_argument(
        "--json", action="store_true", help="status: the whole status object as JSON"
    )
    p_ctl.set_defaults(handler="ctl")
    return parser


@command("bringup")
def _bringup(args: argparse.Namespace) -> int:
    """Walk a technician through every sensor and actuator of the table at URL."""
    import asyncio

    from tablectl.bringup import Timeouts, run_bringup, write_report
    from tablectl.config import _check_device

    name = "tablectl bringup"
    try:
        url = _check_device("URL", args.url)
    except ConfigError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for option in ("key_timeout", "motor_timeout"):
        if not 0 < getattr(args, option) <= 3600:
            print(f"{name}: --{option.replace('_', '-')} must be 0..3600 s", file=sys.stderr)
            return EXIT_USAGE
    timeouts = Timeouts(key=args.key_timeout, confirm=args.key_timeout, motors=args.motor_timeout)
    try:
        report = asyncio.run(run_bringup(url, lambda line: print(line, flush=True), timeouts))
    except TimeoutError:
        print(f"{name}: no table answered at {url} within 15 s", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    print(report.text(), end="")
    if args.report:
        try:
            text, data = write_report(report, Path(args.report))
        except OSError as exc:
            print(f"{name}: cannot write the report: {exc.strerror}", file=sys.stderr)
            return EXIT_REFUSED
        print(f"report: {text} and {data}")
    return EXIT_OK if report.passed else EXIT_REFUSED


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tablectl`` console script: a broken stdout or stdin that is
    not text is one line and an exit code (firmware_bridge.stdio), as any bad input."""
    return run_guarded("tablectl", lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.handler != "run":
        # Only the daemon turns a SIGTERM into a clean stop; any other command ends by it
        # as it always did (one that came while the modules loaded acts now).
        stopping.release()
    try:
        return _COMMANDS[args.handler](args)
    except KeyboardInterrupt:
        # Ctrl-C before a command's own handling of it (while its modules load).
        print(f"tablectl {args.handler}: stopped", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RulesConfigError as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
