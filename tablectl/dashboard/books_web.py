"""The dashboard's seating and night's-close routes (aiohttp).

* ``POST /api/seat`` seats players at a table for its next game: ``{"table": "t1",
  "seats": ["1024", "Aoki", "", ...]}`` (a member number from the player list, a name,
  or empty for a guest), or ``{"table": "t1", "clear": true}`` (the table's own
  ``seat_names`` again). Published to the table as a ``seat`` command signed by the
  staff member; the table answers with a ``staff_action`` or ``staff_refused`` event.
* ``GET /api/close?day=YYYY-MM-DD`` the close of a business day from the ledger (JSON;
  without ``day``, the business day in progress); ``GET /api/close.csv?day=...`` the
  same as ``tablectl ledger close --csv``, as a download.

Staff only (a staff session; the POST also its CSRF token), like every staff action.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from aiohttp import web

from tablectl.dashboard.auth import Session
from tablectl.dashboard.books import Books, DatabaseError
from tablectl.dashboard.model import ParlorModel
from tablectl.seating import check_names
from tablectl.seating_players import guest_name
from tablectl.seating_players import resolve_seats as resolve_player_seats

__all__ = ["SeatSender", "add_books_routes", "guest_name"]

_log = logging.getLogger(__name__)

#: Publishes a seating: (table, staff name, names or None for the config's, time).
SeatSender = Callable[[str, str, list[str] | None, float], Awaitable[None]]


class _Staff(Protocol):
    """What the routes need of the dashboard's request handlers (web.py)."""

    model: ParlorModel

    def session(self, request: web.Request) -> Session | None: ...

    def staff_session(self, request: web.Request) -> Session: ...

    async def json_body(self, request: web.Request) -> dict[str, Any]: ...

    def now(self) -> float: ...


def resolve_seats(table: str, seats: list[Any], books: Books) -> list[str] | str:
    """The names for ``seats`` (member numbers looked up in the dashboard's player list,
    guests named), or why not."""
    no_list = "no player list is configured ([seating] players): give names"
    return resolve_player_seats(table, seats, books.players, no_list)


class _BooksRoutes:
    def __init__(self, dash: _Staff, books: Books, send_seat: SeatSender | None) -> None:
        self.dash = dash
        self.books = books
        self.send_seat = send_seat

    def staff(self, request: web.Request) -> Session:
        session = self.dash.session(request)
        if session is None or not session.staff:
            raise web.HTTPUnauthorized(text="log in as staff first")
        return session

    async def seat(self, request: web.Request) -> web.Response:
        body = await self.dash.json_body(request)
        session = self.dash.staff_session(request)
        table = body.get("table")
        if not isinstance(table, str):
            raise web.HTTPBadRequest(text="table is a string")
        state = self.dash.model.view(f"table:{table}").get("table")
        if state is None:
            raise web.HTTPNotFound(text=f"no table {table!r} has reported")
        names: list[str] | None = None
        if body.get("clear") is not True:
            seats = body.get("seats")
            if not isinstance(seats, list):
                raise web.HTTPBadRequest(text="seats is a list, one entry per seat")
            resolved = resolve_seats(table, seats, self.books)
            if isinstance(resolved, str):
                raise web.HTTPBadRequest(text=resolved)
            checked = check_names(resolved, len(state.get("seats") or seats))
            if isinstance(checked, str):
                raise web.HTTPBadRequest(text=checked)
            names = list(checked)
        if self.send_seat is None:
            raise web.HTTPServiceUnavailable(text="seating is not available here")
        try:
            await self.send_seat(table, session.user, names, round(self.dash.now(), 3))
        except Exception as exc:  # the link says why; the page shows it
            raise web.HTTPServiceUnavailable(text=f"not sent: {exc}") from None
        _log.info("%s seated %s at %s", session.user, names, table)
        return web.json_response({"ok": True, "names": names})

    def _day(self, request: web.Request) -> date:
        ledger = self.books.ledger
        assert ledger is not None
        text = request.query.get("day")
        if not text:
            now = datetime.now(ledger.zone()).astimezone(ledger.zone())
            return (now - timedelta(hours=ledger.cutoff_hour)).date()
        try:
            return date.fromisoformat(text)
        except ValueError:
            raise web.HTTPBadRequest(text=f"day {text!r}: expected YYYY-MM-DD") from None

    async def _close(self, request: web.Request) -> Any:
        self.staff(request)
        if self.books.ledger is None:
            raise web.HTTPNotFound(text="no ledger is configured ([ledger] database)")
        day = self._day(request)
        try:
            return await asyncio.to_thread(self.books.close, day)
        except DatabaseError as exc:
            raise web.HTTPServiceUnavailable(text=f"the ledger cannot be read: {exc}") from None

    async def close_json(self, request: web.Request) -> web.Response:
        night = await self._close(request)
        return web.json_response(night.as_dict(), headers={"Cache-Control": "no-store"})

    async def close_csv(self, request: web.Request) -> web.Response:
        night = await self._close(request)
        return web.Response(
            text=night.to_csv(),
            content_type="text/csv",
            headers={
                "Cache-Control": "no-store",
                "Content-Disposition": f'attachment; filename="close-{night.day}.csv"',
            },
        )


def add_books_routes(
    app: web.Application, dash: _Staff, books: Books, send_seat: SeatSender | None
) -> None:
    """Add the seating and close routes to the dashboard's ``app``."""
    routes = _BooksRoutes(dash, books, send_seat)
    app.router.add_post("/api/seat", routes.seat)
    app.router.add_get("/api/close", routes.close_json)
    app.router.add_get("/api/close.csv", routes.close_csv)
