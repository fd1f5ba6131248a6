"""The night's close: per player and per table, the finished games of one business day.

A parlor's day runs past midnight: business day ``D`` with cut-off hour ``H`` is from
``D H:00`` to ``D+1 H:00`` in the parlor's time zone (a game belongs to the day in which
it finished). Per player: games, how many times in each place, score, result points,
chips, fees paid and P; per table: games and fees. Each is the plain sum of the games'
seats as the tables recorded them, so it equals the sum of ``tablectl records`` of the
tables over the same hours. Chips, fees and P are None where no game had money.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

from tablectl.ledger.store import LedgerStore
from tablectl.records import format_result

__all__ = ["NightClose", "PlayerClose", "TableClose", "business_day", "close_night"]

MAX_PLACES = 4


@dataclass
class PlayerClose:
    """One player's night."""

    player: str
    games: int = 0
    #: Times first, second, third, fourth.
    places: list[int] = field(default_factory=lambda: [0] * MAX_PLACES)
    score: int = 0
    result: float | None = None
    chips: int | None = None
    fees: int | None = None
    p: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "player": self.player,
            "games": self.games,
            "places": list(self.places),
            "score": self.score,
            "result": None if self.result is None else round(self.result, 2),
            "chips": self.chips,
            "fees": self.fees,
            "p": self.p,
        }


@dataclass
class TableClose:
    """One table's night: its games and the fees its players paid."""

    table: str
    games: int = 0
    fees: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"table": self.table, "games": self.games, "fees": self.fees}


@dataclass
class NightClose:
    """The close of one business day."""

    day: date
    start: datetime
    end: datetime
    players: list[PlayerClose]
    tables: list[TableClose]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``tablectl ledger close --json``)."""
        return {
            "day": self.day.isoformat(),
            "from": self.start.isoformat(timespec="seconds"),
            "to": self.end.isoformat(timespec="seconds"),
            "players": [p.as_dict() for p in self.players],
            "tables": [t.as_dict() for t in self.tables],
        }

    def to_json(self) -> str:
        """The close as JSON text."""
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_csv(self) -> str:
        """One row per player, then one per table (``kind`` tells them apart); a
        spreadsheet sums any column."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(
            ["kind", "name", "games", "first", "second", "third", "fourth", "score", "result",
             "chips", "fees", "p"]
        )  # fmt: skip
        for p in self.players:
            writer.writerow(
                ["player", p.player, p.games, *p.places, p.score, _cell_result(p.result),
                 _cell(p.chips), _cell(p.fees), _cell(p.p)]
            )  # fmt: skip
        for t in self.tables:
            writer.writerow(
                ["table", t.table, t.games, "", "", "", "", "", "", "", _cell(t.fees), ""]
            )
        return buffer.getvalue()

    def to_text(self) -> str:
        """A readable summary for the terminal."""
        lines = [
            f"business day {self.day} ({self.start:%Y-%m-%d %H:%M} to {self.end:%Y-%m-%d %H:%M})"
        ]
        if not self.players:
            return lines[0] + ": no finished games\n"
        lines.append(
            f"{'player':<20} games  1st 2nd 3rd 4th    score   result  chips   fees       P"
        )
        for p in self.players:
            lines.append(
                f"{p.player[:20]:<20} {p.games:>5} "
                + " ".join(f"{n:>3}" for n in p.places)
                + f" {p.score:>8} {_cell_result(p.result):>8} {_cell(p.chips):>6}"
                f" {_cell(p.fees):>6} {_cell(p.p):>7}"
            )
        lines.append(f"{'table':<20} games   fees")
        lines.extend(f"{t.table[:20]:<20} {t.games:>5} {_cell(t.fees):>6}" for t in self.tables)
        return "\n".join(lines) + "\n"


def _cell(value: int | None) -> str:
    return "" if value is None else str(value)


def _cell_result(value: float | None) -> str:
    return "" if value is None else format_result(round(value, 2))


def _add(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


def business_day(day: date, cutoff_hour: int, tz: tzinfo | None) -> tuple[datetime, datetime]:
    """The start and end of business day ``day`` (local midnight + ``cutoff_hour``);
    ``tz`` None is the machine's local time zone."""
    start = datetime.combine(day, time(cutoff_hour), tz)
    end = datetime.combine(day + timedelta(days=1), time(cutoff_hour), tz)
    if tz is None:
        start, end = start.astimezone(), end.astimezone()
    return start, end


def close_night(
    store: LedgerStore, day: date, cutoff_hour: int, tz: tzinfo | None = None
) -> NightClose:
    """The close of business day ``day`` from the games in ``store``."""
    start, end = business_day(day, cutoff_hour, tz)
    players: dict[str, PlayerClose] = {}
    tables: dict[str, TableClose] = {}
    games: set[tuple[str, str]] = set()
    for table_id, game_id, player, place, score, result, chips, fee, p in store.seats_between(
        start.timestamp(), end.timestamp()
    ):
        row = players.setdefault(player, PlayerClose(player))
        row.games += 1
        row.places[int(place) - 1] += 1
        row.score += int(score)
        if result is not None:
            row.result = (row.result or 0.0) + float(result)
        row.chips = _add(row.chips, chips)
        row.fees = _add(row.fees, fee)
        row.p = _add(row.p, p)
        table = tables.setdefault(table_id, TableClose(table_id))
        if (table_id, game_id) not in games:
            games.add((table_id, game_id))
            table.games += 1
        table.fees = _add(table.fees, fee)
    return NightClose(
        day=day,
        start=start,
        end=end,
        players=sorted(players.values(), key=lambda r: r.player),
        tables=sorted(tables.values(), key=lambda r: r.table),
    )
