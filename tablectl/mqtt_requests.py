"""Staff requests that reach a table over MQTT: checked here before the daemon sees them.

The parlor's dashboard acknowledges alerts (``.../staff/ack``) and asks for game control
(``.../staff/command``: ``undo``, ``new_game``, ``abandon``, ``tray_override``, ``chombo``,
``false_call``, ``seat``). :class:`StaffRequests` authenticates each
request as the table's ``commands`` mode says (:mod:`tablectl.mqtt_signing`), refuses the
unauthenticated ones at a bounded rate (:mod:`tablectl.mqtt_refusals`), checks the fields
of the rest (one warning naming what was wrong, nothing else happens) and hands the good
ones to the daemon through its callbacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

from tablectl import mqtt_refusals
from tablectl.mqtt_signing import RequestVerifier

__all__ = [
    "REQUESTS_OFF",
    "SEAT_COMMANDS",
    "STAFF_COMMANDS",
    "STAFF_NAME_MAX",
    "STAFF_REQUEST_MAX",
    "StaffRequests",
]

#: Game control the parlor's dashboard may ask of a table: what ``tablectl ctl`` and the
#: staff menu of a console do, and seating players for the next game.
STAFF_COMMANDS = ("undo", "new_game", "abandon", "tray_override", "chombo", "false_call", "seat")
#: The commands that name the seat they are for (``seat``).
SEAT_COMMANDS = ("chombo", "false_call")
#: Largest staff request decoded (an ack or a command is well under 1 KiB).
STAFF_REQUEST_MAX = 4096
#: Longest staff name accepted in an acknowledgement (it is journalled and shown).
STAFF_NAME_MAX = 64
#: Why a table in ``commands = "off"`` mode refuses every staff request.
REQUESTS_OFF = "this table takes no staff requests over MQTT (no command_secret in [mqtt])"


def _staff_name(by: object) -> bool:
    """Whether ``by`` may name a staff member (it is journalled and shown)."""
    return isinstance(by, str) and 0 < len(by) <= STAFF_NAME_MAX and by.isprintable()


class StaffRequests:
    """Takes one table's staff requests from the broker.

    Args:
        ack_topic, command_topic: The table's two request topics (a signature covers
            the topic, so a request signed for one is refused on the other).
        mode: The ``commands`` mode (:data:`tablectl.mqtt_settings.COMMAND_MODES`).
        secret: The shared secret of the ``signed`` mode.
        clock: Unix time, to check a signed request's timestamp against.
        log: Where to log; lines carry ``table`` as a ``[table]`` prefix.
    """

    def __init__(
        self,
        ack_topic: str,
        command_topic: str,
        *,
        mode: str,
        secret: str | None,
        clock: Callable[[], float],
        log: logging.Logger,
        table: str,
    ) -> None:
        self._ack_topic = ack_topic
        self._command_topic = command_topic
        self._mode = mode
        self._verifier = (
            RequestVerifier(secret) if mode == "signed" and secret is not None else None
        )
        self._clock = clock
        self._log = log
        self._table = table
        self._refusals = mqtt_refusals.RefusalLimiter(mqtt_refusals.BURST, mqtt_refusals.PERIOD)
        self._refusal_timer: asyncio.TimerHandle | None = None
        #: Called with ``(alert_id, staff_name)`` for each well-formed acknowledgement;
        #: None: acknowledgements are ignored.
        self.on_ack: Callable[[str, str], None] | None = None
        #: Called with ``(command, staff_name, rules or None, seat or None)`` for each
        #: well-formed command; None: commands are ignored.
        self.on_command: Callable[[str, str, str | None, int | None], None] | None = None
        #: Called with ``(staff_name, names or None)`` for each well-formed ``seat``
        #: command (the table checks the names); None: seating is ignored.
        self.on_seat: Callable[[str, list[str] | None], None] | None = None
        #: Called with ``(action, claimed staff name, why)`` for a request refused because
        #: it is not authenticated, for the first few of each period only.
        self.on_refused: Callable[[str, str, str], None] | None = None
        #: Called with ``{reason: count}`` after a period in which more were refused than
        #: ``on_refused`` was told of.
        self.on_refusals_counted: Callable[[dict[str, int]], None] | None = None

    def ack(self, payload: bytes) -> None:
        """An acknowledgement from the parlor's dashboard: checked here (one warning
        naming what was wrong, nothing else happens), then handed to the daemon."""
        ack = self._request("ack", payload)
        if ack is None:
            return
        alert = ack.get("alert")
        if not (isinstance(alert, str) and 0 < len(alert) <= 16):
            self._log.warning("[%s] staff ack ignored: no alert id in %.80r", self._table, payload)
            return
        if self.on_ack is not None:
            self.on_ack(alert, ack["by"])

    def command(self, payload: bytes) -> None:
        """Game control from the parlor's dashboard (``undo``, ``new_game`` with optional
        ``rules``, ``abandon``, ``tray_override``, ``chombo`` and ``false_call`` with the
        ``seat`` they are for, ``seat`` with the next game's player ``names``): checked
        here, then handed to the daemon, which refuses
        what the table cannot do now (published as a ``staff_refused`` event)."""
        command = self._request("command", payload)
        if command is None:
            return
        cmd, rules, seat = command.get("cmd"), command.get("rules"), command.get("seat")
        if cmd not in STAFF_COMMANDS:
            self._log.warning(
                "[%s] staff command ignored: 'cmd' must be one of %s",
                self._table,
                ", ".join(STAFF_COMMANDS),
            )
            return
        if cmd == "seat":
            names = command.get("names")
            if names is not None and not (
                isinstance(names, list) and all(isinstance(n, str) for n in names)
            ):
                self._log.warning("[%s] staff seat ignored: 'names' must be a list of names",
                                  self._table)  # fmt: skip
                return
            if self.on_seat is not None:
                self.on_seat(command["by"], names)
            return
        if rules is not None and not (isinstance(rules, str) and 0 < len(rules) <= 255):
            self._log.warning("[%s] staff command ignored: 'rules' must name rules", self._table)
            return
        if cmd in SEAT_COMMANDS:
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
                self._log.warning(
                    "[%s] staff command ignored: %s needs 'seat', a seat number 0-3",
                    self._table,
                    cmd,
                )
                return
        else:
            seat = None
        if self.on_command is not None:
            self.on_command(cmd, command["by"], rules, seat)

    def close(self) -> None:
        """End the open refusals' period without handing its count to the daemon (which
        is going down): the count is still logged."""
        self._end_period(report=False)

    def _request(self, what: str, payload: bytes) -> dict[str, Any] | None:
        """A request, authenticated as the ``commands`` mode says and decoded with its
        ``by`` checked; None for anything else (refused, see :meth:`_refuse`, or after
        one warning naming what was wrong)."""
        topic = self._ack_topic if what == "ack" else self._command_topic
        request: dict[str, Any] | None = None
        if len(payload) > STAFF_REQUEST_MAX:
            problem = f"{len(payload)} bytes (at most {STAFF_REQUEST_MAX})"
        else:
            try:
                decoded = json.loads(payload)
            except (ValueError, RecursionError):
                decoded = None
            request = decoded if isinstance(decoded, dict) else None
            problem = "not a JSON object"
        if self._mode != "broker-acl":
            # Before anything else is said about it: an unauthenticated request gets one
            # rate-limited refusal, never a log line per message.
            if self._mode == "off":
                why: str | None = REQUESTS_OFF
            elif request is None:
                why = problem
            else:
                assert self._verifier is not None
                why = self._verifier.check(topic, request, self._clock())
            if why is not None:
                self._refuse(what, request, why)
                return None
        if request is None:
            self._log.warning("[%s] staff %s ignored: %s", self._table, what, problem)
            return None
        if not _staff_name(request.get("by")):
            self._log.warning(
                "[%s] staff %s ignored: 'by' must name the staff member (1-%d characters)",
                self._table,
                what,
                STAFF_NAME_MAX,
            )
            return None
        return request

    def _refuse(self, what: str, request: dict[str, Any] | None, why: str) -> None:
        """An unauthenticated staff request: the first few of a period are logged and
        handed to the daemon (journalled, published as ``staff_refused``); the rest are
        counted and reported once, when the period ends."""
        request = request or {}
        cmd = request.get("cmd")
        action = "alert_ack" if what == "ack" else cmd if cmd in STAFF_COMMANDS else "unknown"
        by = request["by"] if _staff_name(request.get("by")) else "?"
        now = self._clock()
        started = self._refusals.open_since
        if started is not None and now - started >= self._refusals.period:
            self._end_period()
        if not self._refusals.admit(why, now):
            return
        self._log.warning("[%s] staff %s refused (%s from %r): %s",
                          self._table, what, action, by, why)  # fmt: skip
        if self._refusal_timer is None:
            with contextlib.suppress(RuntimeError):  # no loop: the next refusal ends it
                self._refusal_timer = asyncio.get_running_loop().call_later(
                    self._refusals.period, self._end_period
                )
        if self.on_refused is not None:
            self.on_refused(action, by, why)

    def _end_period(self, report: bool = True) -> None:
        """Close the refusals' period: one warning and, with ``report``, one callback
        for the refusals it counted without handing them over."""
        if self._refusal_timer is not None:
            self._refusal_timer.cancel()
            self._refusal_timer = None
        counts = self._refusals.close()
        if not counts:
            return
        self._log.warning(
            "[%s] %d more staff requests refused in %g s: %s",
            self._table,
            sum(counts.values()),
            self._refusals.period,
            "; ".join(f"{why} x{n}" for why, n in counts.items()),
        )
        if report and self.on_refusals_counted is not None:
            self.on_refusals_counted(counts)
