"""``tablectl ledger run`` and ``tablectl ledger close``: the ledger's command line.

Bad input (a setting, a day, a database that cannot be reached) is one line on stderr and
an exit code: 2 for a usage mistake, 78 (EX_CONFIG) for a database or broker setting that
a restart will not mend, 1 for a close asked of a database that has no ledger in it.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from typing import Any

from tablectl.ledger.db import DatabaseError, describe, is_url, open_database
from tablectl.ledger.settings import LedgerSettings, SettingsError, load_settings

__all__ = ["EXIT_CONFIG", "add_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_CONFIG = 78
EXIT_INTERRUPTED = 130
NAME = "tablectl ledger"


def _say(line: str) -> None:
    """One line on stderr: what was wrong."""
    sys.stderr.write(line + "\n")


def add_parser(sub: Any) -> None:
    """Add ``ledger`` (with ``run`` and ``close``) to the ``tablectl`` sub-commands."""
    p_ledger = sub.add_parser("ledger", help="the parlor's ledger of every table's games")
    ledger_sub = p_ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--config", metavar="FILE", help="TOML file with a [ledger] section")
        parser.add_argument(
            "--db",
            metavar="PATH|URL",
            help="SQLite file or postgresql:// URL (/var/lib/tablectl/ledger.sqlite3)",
        )
        parser.add_argument(
            "--cutoff-hour", type=int, metavar="H", help="the business day starts at H:00 (6)"
        )

    p_run = ledger_sub.add_parser("run", help="store the tables' games from the broker")
    common(p_run)
    p_run.add_argument("--broker", metavar="URL", help="mqtt://HOST:PORT (127.0.0.1:1883)")
    p_run.add_argument("--prefix", help="the tables' topic prefix (default tablectl)")
    p_run.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p_run.set_defaults(handler="ledger", ledger_command="run")

    p_close = ledger_sub.add_parser("close", help="the night's close of one business day")
    common(p_close)
    p_close.add_argument("--day", required=True, metavar="YYYY-MM-DD", help="the business day")
    form = p_close.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help="CSV: a row per player and per table")
    form.add_argument("--json", action="store_true", help="JSON")
    p_close.set_defaults(handler="ledger", ledger_command="close")
    p_ledger.set_defaults(handler="ledger")


def _settings(args: argparse.Namespace) -> LedgerSettings:
    return load_settings(
        args.config,
        database=args.db,
        broker=getattr(args, "broker", None),
        prefix=getattr(args, "prefix", None),
        cutoff_hour=args.cutoff_hour,
    )


def main(args: argparse.Namespace) -> int:
    """Run ``tablectl ledger ACTION``; returns the exit code."""
    try:
        settings = _settings(args)
    except SettingsError as exc:
        _say(f"{NAME}: {exc}")
        return EXIT_USAGE
    if is_url(settings.database):
        try:
            import psycopg  # noqa: F401 (only whether it is there)
        except ImportError:
            _say(
                f"{NAME}: a PostgreSQL database needs the postgres extra (psycopg is not"
                " installed): pip install 'tablectl[postgres]'"
            )
            return EXIT_CONFIG
    if args.ledger_command == "close":
        return _close(args, settings)
    return _run(args, settings)


def _close(args: argparse.Namespace, settings: LedgerSettings) -> int:
    from tablectl.ledger.close import close_night
    from tablectl.ledger.store import LedgerStore

    try:
        day = date.fromisoformat(args.day)
    except ValueError:
        _say(f"{NAME} close: --day {args.day!r}: expected a date as YYYY-MM-DD")
        return EXIT_USAGE
    try:
        db = open_database(settings.database, create=False)
    except DatabaseError as exc:
        _say(f"{NAME} close: {exc}")
        return EXIT_CONFIG if is_url(settings.database) else EXIT_FAILED
    try:
        store = LedgerStore(db)
        try:
            night = close_night(store, day, settings.cutoff_hour, settings.zone())
        except DatabaseError as exc:
            where = describe(settings.database)
            _say(f"{NAME} close: {where}: not a ledger database ({exc})")
            return EXIT_FAILED
    finally:
        db.close()
    if args.csv:
        sys.stdout.write(night.to_csv())
    elif args.json:
        sys.stdout.write(night.to_json())
    else:
        sys.stdout.write(night.to_text())
    return EXIT_OK


def _run(args: argparse.Namespace, settings: LedgerSettings) -> int:
    import asyncio
    import logging
    import signal

    from tablectl.ledger.service import LedgerService

    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    service = LedgerService(settings)
    try:
        # Opened before the broker: a wrong URL or an unwritable file is said at once.
        service.set_store(service.open_store())
    except DatabaseError as exc:
        _say(f"{NAME} run: {exc}")
        return EXIT_CONFIG

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, service.stop)
        await service.run()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    return EXIT_OK
