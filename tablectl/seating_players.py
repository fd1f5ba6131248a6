"""The parlor's player list: member numbers and the names they seat at a table.

A small UTF-8 CSV file the parlor keeps (``[seating] players`` in the dashboard's
config), one member a line::

    # member,name
    1024,Aoki Ken
    1025,Baba Yui

A line may be blank or a ``#`` comment; a first line ``member,name`` is a header. Member
numbers are 1-8 digits, names 1-32 printable characters; each number and each name is
once in the list (a name is how the ledger's close tells players apart). A broken list
is refused whole, with one line naming the file, the line and what is wrong.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablectl.rules.loader import read_small_file

__all__ = [
    "MEMBER_DIGITS",
    "SEAT_NAME_MAX",
    "PlayerList",
    "PlayerListError",
    "guest_name",
    "load_players",
    "resolve_seats",
]

#: Longest member number (staff type it on a console's digit keys too).
MEMBER_DIGITS = 8
#: Longest player name (it shows on the dashboard's card and in the records).
SEAT_NAME_MAX = 32


class PlayerListError(ValueError):
    """A player list that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class PlayerList:
    """Member number -> name."""

    members: dict[str, str]

    def name(self, member: str) -> str | None:
        """The name of member ``member`` (leading zeros ignored), or None."""
        return self.members.get(member.lstrip("0") or "0")


def load_players(path: Path) -> PlayerList:
    """Read the player list at ``path``; raises :class:`PlayerListError` (one line)."""
    try:
        text = read_small_file(path, "player list")
    except OSError as exc:
        raise PlayerListError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PlayerListError(f"{path}: cannot read: {exc}") from None
    members: dict[str, str] = {}
    names: set[str] = set()
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in row]
        if number == 1 and [c.lower() for c in cells] == ["member", "name"]:
            continue
        where = f"{path}, line {number}"
        if len(cells) != 2:
            raise PlayerListError(f"{where}: expected 'member,name'")
        member, name = cells
        if not (member.isascii() and member.isdigit() and len(member) <= MEMBER_DIGITS):
            raise PlayerListError(f"{where}: a member number is 1-{MEMBER_DIGITS} digits")
        if not name or len(name) > SEAT_NAME_MAX or not name.isprintable():
            raise PlayerListError(f"{where}: a name is 1-{SEAT_NAME_MAX} printable characters")
        key = member.lstrip("0") or "0"
        if key in members:
            raise PlayerListError(f"{where}: member {member} is listed twice")
        if name in names:
            raise PlayerListError(f"{where}: the name {name!r} is listed twice")
        members[key] = name
        names.add(name)
    return PlayerList(members)


def guest_name(table: str, seat: int) -> str:
    """The name of a guest left unnamed in ``seat`` (like the ledger's chairs, one per
    table and seat: two unnamed guests never add up as one player)."""
    return f"{table} guest {seat}"


def resolve_seats(
    table: str,
    seats: Sequence[Any],
    players: Callable[[], PlayerList | None],
    no_list: str = "no player list is configured: give names",
) -> list[str] | str:
    """The names staff mean by ``seats``, one entry per seat as the dashboard's form and
    ``tablectl ctl seat`` take them: a member number (looked up in the list ``players``
    returns, read only when one is given; it may raise :class:`PlayerListError`), a name,
    or empty for a guest (:func:`guest_name`). Returns the names, or why not (one line;
    ``no_list`` when a member number is given and there is no list)."""
    names: list[str] = []
    found: PlayerList | None = None
    for seat, given in enumerate(seats):
        if not isinstance(given, str):
            return f"seat {seat}: a member number or a name"
        text = given.strip()
        if not text:
            names.append(guest_name(table, seat))
        elif text.isascii() and text.isdigit() and len(text) <= MEMBER_DIGITS:
            if found is None:
                try:
                    found = players()
                except PlayerListError as exc:
                    return f"the player list cannot be read: {exc}"
                if found is None:
                    return no_list
            name = found.name(text)
            if name is None:
                return f"seat {seat}: no member {text} in the player list"
            names.append(name)
        else:
            names.append(text)
    return names
