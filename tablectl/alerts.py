"""What a table needs from the parlor's staff, as a list the parlor's view can show.

Two sorts of alert:

* **calls** (``staff_call``, ``last_game``): a player asked for something. The alert
  stands until a staff member acknowledges it (from the dashboard or the table's admin
  socket), then it is gone.
* **conditions** (``fault``, ``tray_mismatch``, ``link_down``, ``stalled``): something is
  wrong for as long as it lasts. The alert stands until the condition ends; an
  acknowledgement only marks who is on it (``acked_by``), so staff still see that it is
  not fixed. ``since`` is when the condition began (for ``stalled``, the last progress).

Each alert carries ``where`` and ``words`` besides its short ``text``: the seat it is
about and what it says, in words fixed when it was raised ("South (Baba): staff call"),
so that a dealer moving on, or a player changing seats, does not change what staff read
(MQTT revision 5). Its ``params`` are the same facts as values, fixed with them (the
seat's wind letter and player, each tray and score: MQTT revision 7), so that a page in
another language words the alert itself. The caller, who knows the seats' winds and
names, writes them. The open calls, words and all, are what a restarted daemon raises
again (:meth:`AlertBoard.calls`, :meth:`AlertBoard.restore_call`).

Ids are short strings (``a1``, ``a2``, ...) unique within one daemon's life: the parlor's
view acknowledges by id, and an id never names two alerts. Time comes from the caller
(the daemon's wall clock), so this module does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, Literal

__all__ = [
    "CALLS",
    "CONDITIONS",
    "KINDS",
    "Alert",
    "AlertBoard",
    "AlertKind",
    "check_stored_call",
]

AlertKind = Literal["staff_call", "last_game", "fault", "tray_mismatch", "link_down", "stalled"]
#: Alerts that end when staff acknowledge them.
CALLS: Final = frozenset({"staff_call", "last_game"})
#: Alerts that end when what they report ends.
CONDITIONS: Final = frozenset({"fault", "tray_mismatch", "link_down", "stalled"})
KINDS: Final = CALLS | CONDITIONS


@dataclass(frozen=True, slots=True)
class Alert:
    """One thing staff must see: its id, what it is, the seat (or None for the table),
    a short text, when it was raised (Unix time) and who acknowledged it; ``where`` names
    the seat and its player and ``words`` says it all, both as they were when raised;
    ``params`` holds what they say as values (never changed in place: a new dict)."""

    id: str
    kind: AlertKind
    seat: int | None
    text: str
    since: float
    acked_by: str | None = None
    where: str | None = None
    words: str = ""
    params: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The published form (docs/mqtt/state.schema.json, ``alerts`` items)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "seat": self.seat,
            "text": self.text,
            "since": round(self.since, 3),
            "acked_by": self.acked_by,
            "where": self.where,
            "words": self.words or self.text,
            "params": dict(self.params or {}),
        }

    def stored(self) -> dict[str, Any]:
        """What a restarted daemon needs to raise this alert again as it was raised
        (:meth:`AlertBoard.restore_call`): everything but its id and acknowledgement."""
        return {
            "kind": self.kind,
            "seat": self.seat,
            "text": self.text,
            "since": round(self.since, 3),
            "where": self.where,
            "words": self.words,
            "params": dict(self.params or {}),
        }


def check_stored_call(data: Any) -> dict[str, Any]:
    """A call as :meth:`AlertBoard.calls` stored it, checked; raises ValueError saying
    what is wrong (a journal's stored flow is read back with it)."""
    if not isinstance(data, dict):
        raise ValueError(f"a stored call is an object, not {data!r}")
    kind, seat, text, since = (
        data.get("kind"),
        data.get("seat"),
        data.get("text"),
        data.get("since"),
    )
    where, words, params = data.get("where"), data.get("words"), data.get("params", {})
    if kind not in CALLS:
        raise ValueError(f"a stored call's kind: {kind!r}")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
        raise ValueError(f"a stored call's seat: {seat!r}")
    if isinstance(since, bool) or not isinstance(since, int | float):
        raise ValueError(f"a stored call's time: {since!r}")
    if not isinstance(text, str) or not isinstance(words, str) or not isinstance(params, dict):
        raise ValueError("a stored call's text and words are text, its params an object")
    if where is not None and not isinstance(where, str):
        raise ValueError(f"a stored call's where: {where!r}")
    return {"kind": kind, "seat": seat, "text": text, "since": float(since), "where": where,
            "words": words, "params": params}  # fmt: skip


class AlertBoard:
    """The open alerts of one table, oldest first."""

    def __init__(self) -> None:
        self._alerts: dict[str, Alert] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._alerts)

    def raise_alert(
        self,
        kind: AlertKind,
        seat: int | None,
        text: str,
        now: float,
        *,
        where: str | None = None,
        words: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Alert:
        """Raise an alert; an open one of the same kind and seat is kept, so a repeated
        call or a fault reported twice is one alert. Its words stay as first raised
        unless its text changed (a tray mismatch with other amounts): a staff call
        pressed again after the dealer moved still names the seat as it was."""
        if kind not in KINDS:
            raise ValueError(f"unknown alert kind {kind!r}")
        said = text if words is None else words
        for alert in self._alerts.values():
            if alert.kind == kind and alert.seat == seat:
                if alert.text != text:
                    self._alerts[alert.id] = replace(
                        alert, text=text, where=where, words=said, params=params
                    )
                return self._alerts[alert.id]
        alert = Alert(
            f"a{self._next}", kind, seat, text, now, where=where, words=said, params=params
        )
        self._next += 1
        self._alerts[alert.id] = alert
        return alert

    def resolve(self, kind: AlertKind, seat: int | None = None, *, any_seat: bool = False) -> bool:
        """A condition ended: drop its alert (every seat's with ``any_seat``); True if one
        was open."""
        gone = [
            a.id for a in self._alerts.values() if a.kind == kind and (any_seat or a.seat == seat)
        ]
        for alert_id in gone:
            del self._alerts[alert_id]
        return bool(gone)

    def acknowledge(self, alert_id: str, by: str) -> Alert | None:
        """Staff member ``by`` acknowledged ``alert_id``: a call ends, a condition is
        marked. Returns the alert as it was, or None for an id that is not open (already
        acknowledged elsewhere, or resolved meanwhile)."""
        alert = self._alerts.get(alert_id)
        if alert is None or alert.acked_by is not None:
            return None
        if alert.kind in CALLS:
            del self._alerts[alert_id]
        else:
            self._alerts[alert_id] = replace(alert, acked_by=by)
        return alert

    def calls(self) -> list[dict[str, Any]]:
        """The open calls (staff call, LAST GAME) in their stored form, oldest first: a
        restarted daemon raises them again with the words they were raised with."""
        return [a.stored() for a in self._alerts.values() if a.kind in CALLS]

    def restore_call(self, stored: dict[str, Any]) -> Alert:
        """Raise a call again from its :meth:`calls` form, checked by
        :func:`check_stored_call` (its words, params and time as they were)."""
        return self.raise_alert(
            stored["kind"],
            stored["seat"],
            stored["text"],
            stored["since"],
            where=stored["where"],
            words=stored["words"],
            params=dict(stored["params"]),
        )

    def seats(self, kind: AlertKind) -> list[int | None]:
        """The seats with an open alert of ``kind``, oldest first."""
        return [a.seat for a in self._alerts.values() if a.kind == kind]

    def as_list(self) -> list[dict[str, Any]]:
        """Every open alert in its published form, oldest first."""
        return [alert.as_dict() for alert in self._alerts.values()]
