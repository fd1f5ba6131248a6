"""``tablectl ctl status`` for a person: the daemon's status object in a few lines.

The full object (``--json``) has everything staff tools need; a person at the Pi wants
the table, where the game stands, the scores and what needs attention. The status comes
from another process, so every value is read defensively: a field missing or of another
shape is shown as ``?``, never a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["format_status"]

WINDS = {"E": "East", "S": "South", "W": "West", "N": "North"}
SEAT_WINDS = "ESWN"


def _clean(value: Any) -> str:
    """``value`` as text with control characters escaped: a seat name holding ESC must
    not drive the operator's terminal."""
    text = str(value)
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _round(status: Mapping[str, Any]) -> str:
    round_ = status.get("round")
    if isinstance(round_, Mapping):
        wind = WINDS.get(str(round_.get("wind")), _clean(round_.get("wind", "?")))
        text = f"{wind} {_clean(round_.get('number', '?'))}"
    else:
        text = "?"
    text += f", honba {_clean(status.get('honba', '?'))}"
    text += f", deposits {_clean(status.get('deposits', '?'))}"
    if status.get("tiles_left") is not None:
        text += f"; {_clean(status['tiles_left'])} tiles left"
    return text


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _seats(status: Mapping[str, Any]) -> list[str]:
    scores = status.get("scores")
    if not isinstance(scores, list) or not scores:
        return ["seats: ?"]
    names = status.get("names")
    if not isinstance(names, list) or len(names) != len(scores):
        names = None
    dealer = status.get("dealer")
    riichi = _list(status.get("riichi"))
    prompts = _list(status.get("prompts"))
    mismatch = status.get("tray_mismatch")
    players = len(scores)
    name_width = max((len(_clean(n)) for n in names), default=0) if names else 0
    lines = []
    for seat, score in enumerate(scores):
        wind = SEAT_WINDS[(seat - dealer) % players] if isinstance(dealer, int) else "?"
        line = f"  seat {seat}  {wind}"
        if names is not None:
            line += f"  {_clean(names[seat]):<{name_width}}"
        line += f"  {_clean(score):>6}"
        notes = []
        if seat in riichi:
            notes.append("riichi")
        if isinstance(mismatch, Mapping) and str(seat) in mismatch:
            notes.append(f"tray {_clean(mismatch[str(seat)])}")
        if seat < len(prompts) and prompts[seat]:
            notes.append(f"at {_clean(prompts[seat])}")
        if notes:
            line += "  " + ", ".join(notes)
        lines.append(line)
    return lines


def _alerts(status: Mapping[str, Any]) -> list[str]:
    alerts = status.get("alerts")
    if not isinstance(alerts, list) or not alerts:
        return ["alerts: none"]
    lines = [f"alerts: {len(alerts)}"]
    for alert in alerts:
        if not isinstance(alert, Mapping):
            lines.append(f"  {_clean(alert)}")
            continue
        seat = alert.get("seat")
        where = "table" if seat is None else f"seat {_clean(seat)}"
        line = f"  {_clean(alert.get('kind', '?'))} ({where}): {_clean(alert.get('text', ''))}"
        if alert.get("acked_by"):
            line += f" [acknowledged by {_clean(alert['acked_by'])}]"
        lines.append(line)
    return lines


def format_status(status: Any) -> str:
    """The daemon's ``status`` object as a short summary, one fact a line."""
    if not isinstance(status, Mapping):
        return f"status: {_clean(status)}\n"
    link = status.get("link")
    if isinstance(link, Mapping):
        link_text = "link up" if link.get("up") else "link down"
        if link.get("refused"):
            link_text += f" (refused: {_clean(link['refused'])})"
    else:
        link_text = f"link {_clean(link)}"
    lines = [
        f"table {_clean(status.get('table', '?'))}: {_clean(status.get('rules', '?'))},"
        f" game {_clean(status.get('game_id') or 'none')}",
        f"phase: {_clean(status.get('phase', '?'))}, {link_text}",
        f"round: {_round(status)}",
        *_seats(status),
    ]
    if status.get("finished"):
        lines.append("the game is over")
    locked = status.get("staff_locked_s")
    if isinstance(locked, int | float) and locked > 0:
        lines.append(f"staff actions locked for {locked:g} s (wrong PINs)")
    lines.extend(_alerts(status))
    return "\n".join(lines) + "\n"
