"""Who sits at a table: staff seat players for the next game, between games only.

Seat names start as the table config's ``seat_names``; staff change them from the
parlor's dashboard (a ``seat`` request on ``.../staff/command``) while no game is in
progress: at GAME OVER, or before the next game journalled its first event. A game in
progress keeps its players, and a request then is refused with one line (published as
``staff_refused``). Each change is journalled as a staff action (``action`` ``seat``,
``names``, ``by``), which is also how a restarted daemon finds the names again
(:func:`latest_seating`). The journal keeps each game's names with the game, so the
records and the parlor's ledger count players, not chairs. See docs/seating.md.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablectl.seating_players import (
    SEAT_NAME_MAX,
    PlayerList,
    PlayerListError,
    guest_name,
    load_players,
    resolve_seats,
)

if TYPE_CHECKING:
    from tablectl.console.core import TableCore
    from tablectl.console.hand import HandFlow
    from tablectl.journal import Journal

__all__ = ["SEAT_NAME_MAX", "Seating", "check_names", "latest_seating"]

log = logging.getLogger("tablectl.seating")

#: The journalled staff action that seats players.
SEAT_ACTION = "seat"


def check_names(names: object, players: int) -> tuple[str, ...] | str:
    """``names`` as seat names for ``players`` seats, or why they are not (one line)."""
    if not isinstance(names, list | tuple) or len(names) != players:
        return f"seating needs {players} names, one per seat"
    checked: list[str] = []
    for seat, given in enumerate(names):
        name = given.strip() if isinstance(given, str) else ""
        if not name:
            return f"seat {seat} has no name"
        if len(name) > SEAT_NAME_MAX or not name.isprintable():
            return f"seat {seat}: a name is 1-{SEAT_NAME_MAX} printable characters"
        checked.append(name)
    if len(set(checked)) != len(checked):
        return "one player cannot sit in two seats"
    return tuple(checked)


def latest_seating(journal: Journal, players: int) -> tuple[str, ...] | None:
    """The names staff seated last at this table, or None for the config's (staff never
    seated anyone, cleared the seating, or it no longer fits: a preset with another
    number of players)."""
    rows = journal.query(
        "SELECT detail FROM notes WHERE kind = 'staff_action'"
        " AND json_valid(detail) AND json_extract(detail, '$.action') = ?"
        " ORDER BY id DESC LIMIT 1",
        (SEAT_ACTION,),
    )
    if not rows:
        return None
    try:
        names = json.loads(rows[0][0]).get("names")
    except (ValueError, AttributeError):
        return None
    checked = check_names(names, players)
    return checked if isinstance(checked, tuple) else None


class Seating:
    """Seats players at one table between games (see the module doc)."""

    def __init__(
        self,
        core: TableCore,
        hand: HandFlow,
        config_names: Sequence[str] | None,
        players_path: Path | None = None,
    ) -> None:
        self.core = core
        self.hand = hand
        #: The config's names: what a cleared seating goes back to.
        self.config_names = None if config_names is None else tuple(config_names)
        #: The parlor's player list (``[staff] players``): member numbers on a console.
        self.players_path = players_path

    def unavailable(self) -> str | None:
        """Why players cannot change seats now, or None between games."""
        core = self.core
        if core.state.finished or not self.hand.game_started:
            return None
        events = getattr(core.recorder, "game_events", None)
        if events == 0 or (events is None and core.state.hands_played == 0):
            return None  # the next game has not journalled anything yet
        return (
            f"a game is in progress (hand {core.state.hands_played + 1}): "
            "players change seats between games"
        )

    def seat(self, names: Sequence[str] | None, *, by: str, via: str) -> str | None:
        """Seat ``names`` (None: back to the config's names) for the next game, or the
        game about to start; returns why not, changing nothing, or None."""
        core = self.core
        checked: tuple[str, ...] | None = None
        if names is not None:
            result = check_names(list(names), core.players)
            if isinstance(result, str):
                return result
            checked = result
        why = self.unavailable()
        if why is not None:
            return why
        shown = checked if checked is not None else self.config_names
        detail: dict[str, Any] = {
            "action": SEAT_ACTION,
            "by": by,
            "via": via,
            "names": None if checked is None else list(checked),
        }
        core.note("staff_action", None, detail)
        core.seat_names = shown
        seat = getattr(core.recorder, "seat_players", None)
        if seat is not None:
            seat(shown)
        core.publish_state()
        return None

    def seat_entries(self, entries: Sequence[str] | None, *, by: str, via: str) -> str | None:
        """Seat players as staff typed them, one entry per seat (``tablectl ctl seat``): a
        member number of the table's player list (``[staff] players``), a name, or empty
        for a guest; None: the config's names again. Returns why not, changing nothing,
        or None."""
        if entries is None:
            return self.seat(None, by=by, via=via)
        if len(entries) != self.core.players:
            return f"seating needs {self.core.players} entries, one per seat"
        why = self.unavailable()  # a game in play: say so before any member is looked up
        if why is not None:
            return why
        no_list = "no player list is configured ([staff] players): give names"
        names = resolve_seats(self.core.table_id, entries, self._players, no_list)
        if isinstance(names, str):
            return names
        return self.seat(names, by=by, via=via)

    def _players(self) -> PlayerList | None:
        """The table's player list, read afresh (staff may have edited it)."""
        return None if self.players_path is None else load_players(self.players_path)

    def seat_member(self, seat: int, member: str, *, by: str) -> str | None:
        """Seat member number ``member`` of the player list in ``seat``, the other seats
        keeping their players (unnamed ones become guests, ``<table> guest <seat>``);
        returns why not (short: it shows on a console), or None."""
        if self.players_path is None:
            return "no player list"
        try:
            players = load_players(self.players_path)
        except PlayerListError as exc:
            log.warning("[%s] the player list cannot be used: %s", self.core.table_id, exc)
            return "player list broken"
        name = players.name(member)
        if name is None:
            return f"no member {member}"
        current = self.core.seat_names
        names = [
            current[s] if current is not None else guest_name(self.core.table_id, s)
            for s in range(self.core.players)
        ]
        names[seat] = name
        why = self.seat(names, by=by, via="console")
        if why is not None and why.startswith("a game is in progress"):
            return "between games only"
        if why == "one player cannot sit in two seats":
            return "seated elsewhere"
        return why
