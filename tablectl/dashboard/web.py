"""The dashboard's web side (aiohttp): the page, its assets, the live stream and the
staff's actions.

Routes:

* ``GET /`` the page (``lang`` from ``Accept-Language``), ``GET /static/...`` its assets;
* ``GET /events`` Server-Sent Events: a ``snapshot`` when a page connects, then an
  ``update`` per changed table, the finished games or the broker link;
* ``GET /api/me`` who the browser is logged in as, and its CSRF token;
* ``POST /api/login``, ``POST /api/logout``;
* ``POST /api/ack`` acknowledge an alert (a staff session and its CSRF token).

Every POST wants a JSON body (a cross-site form cannot send one without a CORS preflight,
which this server never grants), an ``Origin`` of this server when the browser sends one,
and, for ``/api/ack``, the session's token in ``X-CSRF-Token``; the session cookie is
``HttpOnly`` and ``SameSite=Strict``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import resource
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

from aiohttp import web

from firmware_bridge.ratelog import RateLimitedLog
from tablectl.dashboard.auth import STAFF, VIEWER, LoginThrottle, Session, Sessions
from tablectl.dashboard.books import Books
from tablectl.dashboard.books_web import SeatSender, add_books_routes
from tablectl.dashboard.guard import guard_app
from tablectl.dashboard.model import ParlorModel
from tablectl.dashboard.settings import DashboardSettings, is_loopback

__all__ = ["Hub", "make_app", "pick_language"]

_log = logging.getLogger(__name__)

COOKIE = "tablectl_dash"
#: A comment line on an idle stream this often (s), so proxies and phones keep it open.
KEEPALIVE_S = 15.0
#: What the browser waits before reconnecting a dropped stream (ms).
RETRY_MS = 1000
#: Longest staff user name kept (it goes into the table's journal).
MAX_USER = 40
LANGUAGES = ("en", "ja")
AckSender = Callable[[str, str, str, float], Awaitable[None]]


class CommandSender(Protocol):
    """Publishes game control: table, command, staff name, rules or None, time, and the
    seat a chombo or false call is for."""

    async def __call__(
        self, table: str, cmd: str, by: str, rules: str | None, at: float, *, seat: int | None
    ) -> None:
        """Send it (raises when it cannot)."""


#: Game control staff may ask of a table from the page (docs/mqtt.md, staff/command):
#: what a console's staff menu does.
COMMANDS = ("undo", "new_game", "abandon", "tray_override", "chombo", "false_call")
#: The commands that name a seat.
SEAT_COMMANDS = ("chombo", "false_call")
#: Longest rules name accepted (a preset name or a rules file on the table's board).
MAX_RULES = 255
#: Live streams open at once, at most: in all, and from one client address. Each holds a
#: file descriptor for as long as the page is open; beyond these, 503 and Retry-After.
MAX_STREAMS = 256
MAX_STREAMS_PER_CLIENT = 8
#: What a refused stream is told to wait before it tries again (s).
STREAM_RETRY_AFTER_S = 10

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
        " connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


def pick_language(header: str | None) -> str:
    """``ja`` or ``en``: the first of them by preference in an ``Accept-Language``."""
    best, best_q = "en", -1.0
    for index, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        primary = tag.strip().lower().split("-")[0]
        # Earlier entries win ties: subtract a little per position.
        score = q - index * 1e-6
        if primary in LANGUAGES and q > 0 and score > best_q:
            best, best_q = primary, score
    return best


@dataclass(eq=False)
class _Listener:
    dirty: set[str] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class Hub:
    """Fans the model's changes out to every open stream, coalescing per stream."""

    def __init__(self) -> None:
        self.listeners: set[_Listener] = set()
        self.closing = asyncio.Event()

    def notify(self, keys: set[str]) -> None:
        """Mark ``keys`` changed for every stream."""
        if not keys:
            return
        for listener in self.listeners:
            listener.dirty |= keys
            listener.wake.set()

    def close(self) -> None:
        """End every stream (the server is shutting down)."""
        self.closing.set()
        for listener in self.listeners:
            listener.wake.set()


def _sse(event: str, data: Any) -> bytes:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return f"event: {event}\ndata: {text}\n\n".encode()


class _Dashboard:
    """The request handlers and the state they share."""

    def __init__(
        self,
        settings: DashboardSettings,
        model: ParlorModel,
        hub: Hub,
        send_ack: AckSender,
        now: Callable[[], float],
        send_command: CommandSender | None = None,
    ) -> None:
        self.settings = settings
        self.model = model
        self.hub = hub
        self.send_ack = send_ack
        self.send_command = send_command
        self.now = now
        self.sessions = Sessions()
        self.throttle = LoginThrottle()
        self.max_streams = min(MAX_STREAMS, stream_limit())
        #: Open streams per client address.
        self.streams: collections.Counter[str] = collections.Counter()
        self.ratelog = RateLimitedLog(_log)
        self.page = (
            resources.files("tablectl.dashboard")
            .joinpath("static/index.html")
            .read_text(encoding="utf-8")
        )

    # -- who is asking --------------------------------------------------------------------

    def session(self, request: web.Request) -> Session | None:
        return self.sessions.get(request.cookies.get(COOKIE))

    def open_staff(self, request: web.Request) -> bool:
        """No staff password: staff actions for anyone on this machine, through a Host
        that names loopback (a DNS-rebinding page names its own host)."""
        if not self.settings.open_staff or not is_loopback(request.remote or ""):
            return False
        host = request.host.rsplit(":", 1)[0].strip("[]")
        return is_loopback(host)

    def may_view(self, request: web.Request) -> bool:
        if self.settings.view_hash is None:
            return True
        return self.session(request) is not None or self.open_staff(request)

    @staticmethod
    def same_origin(request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser's cross-site request (they all send Origin on POST)
        return origin in (f"http://{request.host}", f"https://{request.host}")

    async def json_body(self, request: web.Request) -> dict[str, Any]:
        if not self.same_origin(request):
            raise web.HTTPForbidden(text="cross-origin request refused")
        if request.content_type != "application/json":
            raise web.HTTPUnsupportedMediaType(text="send application/json")
        if (request.content_length or 0) > 4096:
            raise web.HTTPRequestEntityTooLarge(
                max_size=4096, actual_size=request.content_length or 0
            )
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="not JSON") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="expected a JSON object")
        return body

    # -- handlers -------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.Response:
        lang = pick_language(request.headers.get("Accept-Language"))
        text = self.page.replace('lang="en"', f'lang="{lang}"', 1)
        return web.Response(
            text=text, content_type="text/html", headers={"Cache-Control": "no-store"}
        )

    async def me(self, request: web.Request) -> web.Response:
        session = self.session(request)
        if session is None and self.open_staff(request):
            session = self.sessions.create("staff", STAFF)
        body: dict[str, Any] = {
            "user": None,
            "staff": False,
            "csrf": None,
            "may_view": self.may_view(request),
            "login_needed": not self.settings.open_staff,
            "view_login": self.settings.view_hash is not None,
        }
        if session is not None:
            body.update(user=session.user, staff=session.staff, csrf=session.csrf)
        response = web.json_response(body, headers={"Cache-Control": "no-store"})
        if session is not None:
            self.set_cookie(response, session)
        return response

    @staticmethod
    def set_cookie(response: web.StreamResponse, session: Session) -> None:
        response.set_cookie(COOKIE, session.sid, httponly=True, samesite="Strict", path="/")

    async def login(self, request: web.Request) -> web.Response:
        body = await self.json_body(request)
        user = body.get("user")
        password = body.get("password")
        if not isinstance(user, str) or not isinstance(password, str) or len(password) > 256:
            raise web.HTTPBadRequest(text="user and password are strings")
        user = " ".join(user.split())[:MAX_USER]
        if not user:
            raise web.HTTPBadRequest(text="a user name is needed (it is journalled with acks)")
        address = request.remote or ""
        if self.throttle.locked(address, user):
            raise web.HTTPTooManyRequests(text="too many wrong passwords; wait a minute")
        role = None
        if self.open_staff(request):
            role = STAFF
        else:
            for candidate, pin_hash in (
                (STAFF, self.settings.staff_hash),
                (VIEWER, self.settings.view_hash),
            ):
                if pin_hash is not None and await asyncio.to_thread(pin_hash.matches, password):
                    role = candidate
                    break
            self.throttle.record(address, user, role is not None)
        if role is None:
            _log.warning("wrong dashboard password for %r from %s", user, request.remote)
            raise web.HTTPUnauthorized(text="wrong password")
        self.sessions.drop(request.cookies.get(COOKIE))
        session = self.sessions.create(user, role)
        _log.info("%s logged in as %s from %s", user, role, request.remote)
        response = web.json_response({"user": user, "staff": session.staff, "csrf": session.csrf})
        self.set_cookie(response, session)
        return response

    async def logout(self, request: web.Request) -> web.Response:
        await self.json_body(request)
        self.sessions.drop(request.cookies.get(COOKIE))
        response = web.json_response({"ok": True})
        response.del_cookie(COOKIE, path="/")
        return response

    def staff_session(self, request: web.Request) -> Session:
        """The logged-in staff member's session for a staff action (CSRF token checked)."""
        session = self.session(request)
        if session is None or not session.staff:
            raise web.HTTPUnauthorized(text="log in as staff first")
        if request.headers.get("X-CSRF-Token") != session.csrf:
            raise web.HTTPForbidden(text="missing or wrong CSRF token")
        return session

    async def command(self, request: web.Request) -> web.Response:
        """Game control for a table (what a console's staff menu does): published to the
        table with the logged-in staff member's name, which the table journals; it answers
        with a staff_action, correction or staff_refused event."""
        body = await self.json_body(request)
        session = self.staff_session(request)
        table, cmd, rules = body.get("table"), body.get("cmd"), body.get("rules")
        if not isinstance(table, str) or cmd not in COMMANDS:
            raise web.HTTPBadRequest(text=f"table is a string and cmd one of {', '.join(COMMANDS)}")
        seat = body.get("seat")
        if cmd not in SEAT_COMMANDS:
            seat = None
        elif isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
            raise web.HTTPBadRequest(text=f"{cmd} needs seat, a seat number 0-3")
        if rules in ("", None) or cmd != "new_game":
            rules = None
        elif not isinstance(rules, str) or len(rules) > MAX_RULES or not rules.isprintable():
            raise web.HTTPBadRequest(text=f"rules: a preset name of at most {MAX_RULES} characters")
        if self.model.view(f"table:{table}").get("table") is None:
            raise web.HTTPNotFound(text=f"no table {table!r} has reported")
        if self.send_command is None:
            raise web.HTTPServiceUnavailable(text="game control is not available here")
        try:
            await self.send_command(
                table, cmd, session.user, rules, round(self.now(), 3), seat=seat
            )
        except Exception as exc:  # the link says why; the page shows it
            raise web.HTTPServiceUnavailable(text=f"not sent: {exc}") from None
        _log.info("%s asked %s of %s (rules %s, seat %s)", session.user, cmd, table, rules, seat)
        return web.json_response({"ok": True})

    async def ack(self, request: web.Request) -> web.Response:
        body = await self.json_body(request)
        session = self.staff_session(request)
        table, alert_id = body.get("table"), body.get("alert")
        if not isinstance(table, str) or not isinstance(alert_id, str):
            raise web.HTTPBadRequest(text="table and alert are strings")
        alert = self.model.find_alert(table, alert_id)
        if alert is None:
            raise web.HTTPNotFound(text="no such alert (already gone?)")
        at = round(self.now(), 3)
        if not alert["local"]:
            try:
                await self.send_ack(table, alert_id, session.user, at)
            except Exception as exc:  # the link says why; the page shows it
                raise web.HTTPServiceUnavailable(text=f"not sent: {exc}") from None
        _log.info("%s acknowledged %s on %s", session.user, alert_id, table)
        self.hub.notify(self.model.acknowledge(table, alert_id, session.user, at))
        return web.json_response({"ok": True})

    def stream_refusal(self, address: str) -> str | None:
        """Why a new stream from ``address`` is refused now, or None."""
        if self.streams.total() >= self.max_streams:
            return f"{self.max_streams} live streams open"
        if self.streams[address] >= MAX_STREAMS_PER_CLIENT:
            return f"{MAX_STREAMS_PER_CLIENT} live streams open from {address}"
        return None

    async def events(self, request: web.Request) -> web.StreamResponse:
        if not self.may_view(request):
            raise web.HTTPUnauthorized(text="log in first")
        address = request.remote or ""
        refusal = self.stream_refusal(address)
        if refusal is not None:
            self.ratelog.warning("live streams refused", "live stream refused: %s", refusal)
            raise web.HTTPServiceUnavailable(
                text=f"busy: {refusal}; try again later",
                headers={"Retry-After": str(STREAM_RETRY_AFTER_S)},
            )
        self.streams[address] += 1
        try:
            return await self.stream(request)
        finally:
            self.streams[address] -= 1
            if self.streams[address] <= 0:
                del self.streams[address]

    async def stream(self, request: web.Request) -> web.StreamResponse:
        """The live stream itself: a snapshot, then updates until the page goes."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        listener = _Listener()
        self.hub.listeners.add(listener)
        try:
            await response.write(f"retry: {RETRY_MS}\n\n".encode())
            await response.write(_sse("snapshot", self.model.snapshot()))
            while not self.hub.closing.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(listener.wake.wait(), KEEPALIVE_S)
                listener.wake.clear()
                if self.hub.closing.is_set():
                    break
                keys, listener.dirty = listener.dirty, set()
                if not keys:
                    await response.write(b": keepalive\n\n")
                for key in sorted(keys):
                    await response.write(_sse("update", self.model.view(key)))
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.hub.listeners.discard(listener)
        return response


def stream_limit() -> int:
    """Live streams the process's file descriptor limit leaves room for: half of it, so
    that the page, the API and the broker link always have descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_STREAMS if soft == resource.RLIM_INFINITY else max(1, soft // 2)


async def _headers(_request: web.Request, response: web.StreamResponse) -> None:
    """Security headers on every response, streams included (set before they start)."""
    response.headers.update(_SECURITY_HEADERS)


def make_app(
    settings: DashboardSettings,
    model: ParlorModel,
    hub: Hub,
    send_ack: AckSender,
    now: Callable[[], float] = time.time,
    send_command: CommandSender | None = None,
    books: Books | None = None,
    send_seat: SeatSender | None = None,
) -> web.Application:
    """The aiohttp application serving ``model`` (``send_ack`` publishes an ack,
    ``send_command`` game control; without it the page offers none; ``books`` and
    ``send_seat``: seating and the night's close, :mod:`tablectl.dashboard.books_web`)."""
    dash = _Dashboard(settings, model, hub, send_ack, now, send_command)
    app = web.Application(client_max_size=16 * 1024)
    app.on_response_prepare.append(_headers)
    guard_app(app)
    static = resources.files("tablectl.dashboard").joinpath("static")
    app.router.add_get("/", dash.index)
    app.router.add_static("/static/", str(static))
    app.router.add_get("/events", dash.events)
    app.router.add_get("/api/me", dash.me)
    app.router.add_post("/api/login", dash.login)
    app.router.add_post("/api/logout", dash.logout)
    app.router.add_post("/api/ack", dash.ack)
    app.router.add_post("/api/command", dash.command)
    add_books_routes(app, dash, books or Books(None, None), send_seat)

    async def on_shutdown(_app: web.Application) -> None:
        hub.close()

    app.on_shutdown.append(on_shutdown)
    return app
