"""Runs the dashboard: the broker link and the web server in one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from aiohttp import web

from tablectl.dashboard.books import Books, follow_ledger
from tablectl.dashboard.guard import install_bad_request_filter, start_site
from tablectl.dashboard.model import ParlorModel
from tablectl.dashboard.mqtt_in import ParlorLink
from tablectl.dashboard.settings import DashboardSettings
from tablectl.dashboard.web import Hub, make_app

__all__ = ["serve"]

_log = logging.getLogger(__name__)

#: Time (s) open streams get to end when the dashboard stops.
SHUTDOWN_TIMEOUT = 3.0


async def serve(
    settings: DashboardSettings, ready: asyncio.Event | None = None, books: Books | None = None
) -> None:
    """Serve until SIGTERM or SIGINT; raises ``OSError`` when the port cannot be bound."""
    model = ParlorModel(settings.prefix)
    hub = Hub()
    link = ParlorLink(settings, model, hub.notify)
    books = books or Books(None, None)
    app = make_app(
        settings,
        model,
        hub,
        link.publish_ack,
        send_command=link.publish_command,
        books=books,
        send_seat=link.publish_seat,
    )
    install_bad_request_filter()
    runner = web.AppRunner(app, shutdown_timeout=SHUTDOWN_TIMEOUT, access_log=None)
    await runner.setup()
    site: asyncio.Server | None = None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    link_task: asyncio.Task[None] | None = None
    ledger_task: asyncio.Task[None] | None = None
    try:
        site = await start_site(runner, settings.listen_host, settings.listen_port)
        link_task = asyncio.create_task(link.run())
        if books.ledger is not None:
            ledger_task = asyncio.create_task(
                follow_ledger(books, model, hub.notify, settings.ledger_poll_s)
            )
        _log.info(
            "dashboard on http://%s:%s/ (broker %s:%s)",
            settings.listen_host,
            settings.listen_port,
            settings.broker_host,
            settings.broker_port,
        )
        _log.info(
            "staff requests to the tables: %s",
            "signed (command_secret)"
            if settings.command_secret is not None
            else 'unsigned (only tables with commands = "broker-acl" take them)',
        )
        if ready is not None:
            ready.set()
        await stop.wait()
    finally:
        for task in (link_task, ledger_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if site is not None:
            site.close()
        await runner.cleanup()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
