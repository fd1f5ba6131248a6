"""What aiohttp leaves open to a hostile client: a deadline for a request's headers
(slowloris), and one log line for a malformed request instead of a traceback.

aiohttp has no header timeout: a connection that sends a header byte every few seconds
stays open as long as it likes (1,000 of them held a dashboard's file descriptors past
65 s). :func:`start_site` serves the app through :class:`HeaderDeadline`, which closes a
connection whose request headers are not complete :data:`HEADER_TIMEOUT_S` after its
first byte (or after it opened); the app's :func:`headers_done` middleware says when they
are. A malformed request (``BadStatusLine`` and the like) is logged by aiohttp with a
traceback; :class:`BadRequestFilter` makes it one line, and a flood one line a minute.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from firmware_bridge.ratelog import RateLimitedLog

#: A request's headers must be complete this long after its first byte (s).
HEADER_TIMEOUT_S = 5.0

_log = logging.getLogger(__name__)
_GUARDS = web.AppKey("header_guards", dict)


class HeaderDeadline(asyncio.Protocol):
    """Wraps aiohttp's protocol for one connection: a timer runs from the connection's
    start, and again from the first byte after each request, until the app has the
    request's headers; when it fires the connection is closed."""

    def __init__(
        self,
        inner: asyncio.Protocol,
        guards: dict[asyncio.BaseTransport, HeaderDeadline],
        timeout_s: float,
        ratelog: RateLimitedLog,
    ) -> None:
        self.inner = inner
        self.guards = guards
        self.timeout_s = timeout_s
        self.ratelog = ratelog
        self.transport: asyncio.Transport | None = None
        self.in_request = False
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Arm the timer for the first request."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.guards[transport] = self
        self._arm()
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """A byte after a request (keep-alive) starts the next request's deadline."""
        if not self.in_request and self._timer is None:
            self._arm()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        """As aiohttp does."""
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """Disarm and forget the connection."""
        self._disarm()
        if self.transport is not None:
            self.guards.pop(self.transport, None)
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        """As aiohttp does."""
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        """As aiohttp does."""
        self.inner.resume_writing()

    def request_started(self) -> None:
        """The app has a request's headers: no deadline while it is handled."""
        self.in_request = True
        self._disarm()

    def request_ended(self) -> None:
        """The next request's deadline starts with its first byte."""
        self.in_request = False

    def _arm(self) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self.timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport is None or self.in_request:
            return
        peer = self.transport.get_extra_info("peername")
        self.ratelog.warning(
            "connections closed for slow headers",
            "closed a connection from %s: no complete request headers in %g s",
            peer[0] if isinstance(peer, tuple) else peer,
            self.timeout_s,
        )
        self.transport.abort()


@web.middleware
async def headers_done(request: web.Request, handler: Any) -> web.StreamResponse:
    """Tells the connection's :class:`HeaderDeadline` that a request's headers are in."""
    guard = request.app[_GUARDS].get(request.transport)
    if guard is not None:
        guard.request_started()
    try:
        response: web.StreamResponse = await handler(request)
        return response
    finally:
        if guard is not None:
            guard.request_ended()


def guard_app(app: web.Application) -> None:
    """Prepare ``app`` for :func:`start_site` (before the app is frozen)."""
    app[_GUARDS] = {}
    app.middlewares.append(headers_done)


async def start_site(
    runner: web.AppRunner,
    host: str,
    port: int,
    *,
    header_timeout_s: float = HEADER_TIMEOUT_S,
) -> asyncio.Server:
    """Serve ``runner``'s app (prepared by :func:`guard_app`) on ``host:port`` with a
    header deadline per connection; the caller closes the server before the runner."""
    server = runner.server
    assert server is not None, "runner.setup() first"
    guards = runner.app[_GUARDS]
    ratelog = RateLimitedLog(_log)
    loop = asyncio.get_running_loop()
    return await loop.create_server(
        lambda: HeaderDeadline(server(), guards, header_timeout_s, ratelog), host, port
    )


class BadRequestFilter(logging.Filter):
    """On the ``aiohttp.server`` logger: a malformed request becomes one WARNING line
    (``bad HTTP request from ADDRESS: what``), at most one a minute per kind with a count,
    instead of an ERROR with a traceback."""

    def __init__(self, ratelog: RateLimitedLog | None = None) -> None:
        super().__init__()
        self.ratelog = ratelog or RateLimitedLog(_log)

    def filter(self, record: logging.LogRecord) -> bool:
        """Let every other record through unchanged."""
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, HttpProcessingError):
            return True
        peer = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
        what = " ".join(str(exc.message or type(exc).__name__).split())[:200]
        self.ratelog.warning(
            "bad HTTP requests",
            "bad HTTP request from %s: %s: %s",
            peer,
            type(exc).__name__,
            what,
        )
        return False


def install_bad_request_filter() -> BadRequestFilter:
    """Put a :class:`BadRequestFilter` on aiohttp's server logger (once per process)."""
    logger = logging.getLogger("aiohttp.server")
    for existing in logger.filters:
        if isinstance(existing, BadRequestFilter):
            return existing
    bad = BadRequestFilter()
    logger.addFilter(bad)
    return bad
