"""What the parlor reads of a table in words: its alerts' seats and players, and each
settled hand's winning values (MQTT revision 5, docs/mqtt.md).

Pure: the table's core passes in what it knows (the dealer, the names, the win entry)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from tablectl.console.model import Pending
from tablectl.rules import events as ev
from tablectl.rules.state import WINDS

__all__ = [
    "SEAT_WIND_WORDS",
    "call_words",
    "seat_params",
    "seat_words",
    "tray_alert_params",
    "tray_alert_words",
    "win_values",
]

#: Seat winds in words, from the dealer's.
SEAT_WIND_WORDS = ("East", "South", "West", "North")
#: What a seat's call alert says after its seat's words.
_CALL_WORDS = {"staff_call": "staff call", "last_game": "last game"}


def seat_words(seat: int, dealer: int, players: int, names: Sequence[str] | None) -> str:
    """A seat as staff say it: its wind from ``dealer`` and its player, ``South (Baba)``
    (the wind alone where the table has no names)."""
    wind = SEAT_WIND_WORDS[(seat - dealer) % players]
    name = names[seat] if names is not None else None
    return f"{wind} ({name})" if name and name != wind else wind


def seat_params(
    seat: int, dealer: int, players: int, names: Sequence[str] | None
) -> dict[str, Any]:
    """A seat as an alert's params give it (MQTT revision 7): its number, its wind
    letter from ``dealer`` and its player (None where the table has no name), the facts
    :func:`seat_words` puts in English."""
    name = names[seat] if names is not None else None
    wind = WINDS[(seat - dealer) % players]  # a letter: the page words it in its language
    return {"seat": seat, "wind": wind, "player": name or None}


def call_words(kind: Literal["staff_call", "last_game"], where: str) -> tuple[str, str]:
    """A player's call alert: its short text (``STAFF CALL``) and its words
    (``South (Baba): staff call``)."""
    return kind.upper().replace("_", " "), f"{where}: {_CALL_WORDS[kind]}"


def tray_alert_words(
    trays: Sequence[int], scores: Sequence[int], dealer: int, names: Sequence[str] | None
) -> str:
    """The tray alert in words: each seat whose tray differs, named as :func:`seat_words`
    does, with both amounts."""
    pairs = (
        f"{seat_words(s, dealer, len(trays), names)} tray {trays[s]:,}, score {scores[s]:,}"
        for s in range(len(trays))
        if trays[s] != scores[s]
    )
    return "Trays differ: " + "; ".join(pairs)


def tray_alert_params(
    trays: Sequence[int], scores: Sequence[int], dealer: int, names: Sequence[str] | None
) -> dict[str, Any]:
    """The tray alert's params: each seat whose tray differs (:func:`seat_params`) with
    its tray and its score, what :func:`tray_alert_words` says."""
    players = len(trays)
    return {
        "trays": [
            {**seat_params(s, dealer, players, names), "tray": trays[s], "score": scores[s]}
            for s in range(players)
            if trays[s] != scores[s]
        ]
    }


def win_values(event: ev.Event, pending: Pending | None) -> list[dict[str, Any]]:
    """Each winning hand of ``event`` as entered (han, fu, yakuman), with the points and
    yaku where the table read the tiles (``pending``'s scored win entries)."""
    if isinstance(event, ev.Ron):
        hands: Sequence[ev.Hand] = event.winners
    elif isinstance(event, ev.Tsumo):
        hands = (event.hand,)
    else:
        return []
    entries = pending.entries if pending is not None else {}
    nth: dict[int, int] = {}
    out: list[dict[str, Any]] = []
    for hand in hands:
        value: dict[str, Any] = {
            "seat": hand.seat, "han": hand.han, "fu": hand.fu, "yakuman": hand.yakuman,
        }  # fmt: skip
        entry = entries.get(hand.seat)
        if entry is not None and entry.scored:
            # Kantan's ron off several discarders lists the winner once per discarder.
            index = nth[hand.seat] = nth.get(hand.seat, -1) + 1
            scored = entry.each[index] if entry.each and index < len(entry.each) else entry
            value["points"], value["yaku"] = scored.points, list(scored.yaku)
        out.append(value)
    return out
