"""The game records (記録表): every finished game with its final scores and ranking, and
where the preset settles in P each seat's chips, P and the game fee it paid.

Records live in the journal file (the ``records`` table), written by
:meth:`tablectl.journal.Journal.finish_game` in the same transaction that marks the game
finished, so a record cannot be lost while its game is marked over.  The table copies the
table id, preset and seat names so that records stay readable if old events are ever pruned.

This module reads them back and writes them out for people (:func:`format_table`) and for
spreadsheets and scripts (:func:`to_csv`, :func:`to_json`).  Dates are ISO 8601 with the
UTC offset, in the local time zone unless ``tz`` is given.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from tablectl.journal import Journal, JournalError

#: Seats in the CSV: four columns each for names, scores, ranks, result points, chips, P
#: and fees; a three-player game leaves the fourth empty so every row has the same
#: columns, and a preset without money leaves chips, P and fees empty.
CSV_SEATS = 4
CSV_HEADER = (
    ["date", "table", "preset", "game"]
    + [f"seat{i}" for i in range(CSV_SEATS)]
    + [f"score{i}" for i in range(CSV_SEATS)]
    + [f"rank{i}" for i in range(CSV_SEATS)]
    + [f"result{i}" for i in range(CSV_SEATS)]
    + [f"chips{i}" for i in range(CSV_SEATS)]
    + [f"p{i}" for i in range(CSV_SEATS)]
    + [f"fee{i}" for i in range(CSV_SEATS)]
)


@dataclass(frozen=True, slots=True)
class Record:
    """One finished game.

    ``ranking`` lists seats best first (as the rules core's ``Final.ranking``);
    :attr:`ranks` gives each seat's place instead.  ``result`` holds the result points
    (uma/oka, in thousands) per seat, or is empty when the rules have none. ``chips`` and
    ``p`` are each seat's net chips and its P (the settlement in points of account,
    docs/rules.md "Money"), ``fees`` the game fee each seat paid (positive, as the
    ledger's close counts it; its P already include it), all empty for a preset without
    money.
    """

    game_id: str
    table_id: str
    preset: str
    seats: tuple[str, ...] | None
    started_at: float
    finished_at: float
    scores: tuple[int, ...]
    ranking: tuple[int, ...]
    result: tuple[float, ...]
    reason: str
    #: Seats that called LAST GAME in this game (and did not take it back).
    last_game: tuple[int, ...] = ()
    chips: tuple[int, ...] = ()
    p: tuple[int, ...] = ()
    fees: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        """Number of seats in the game."""
        return len(self.scores)

    @property
    def ranks(self) -> tuple[int, ...]:
        """Each seat's final place, 1 for the top."""
        places = [0] * self.players
        for place, seat in enumerate(self.ranking, start=1):
            places[seat] = place
        return tuple(places)

    def date(self, tz: tzinfo | None = None) -> str:
        """When the game finished, ISO 8601 to the second with the UTC offset."""
        when = datetime.fromtimestamp(self.finished_at, tz)
        if tz is None:
            when = when.astimezone()  # attach the local offset so the text is unambiguous
        return when.isoformat(timespec="seconds")

    def as_dict(self, tz: tzinfo | None = None) -> dict[str, Any]:
        """JSON-ready form (the objects of :func:`to_json`)."""
        return {
            "date": self.date(tz),
            "table": self.table_id,
            "preset": self.preset,
            "game": self.game_id,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "seats": None if self.seats is None else list(self.seats),
            "scores": list(self.scores),
            "ranking": list(self.ranking),
            "ranks": list(self.ranks),
            "result": list(self.result) if self.result else None,
            "reason": self.reason,
            "last_game": list(self.last_game),
            "chips": list(self.chips) if self.p else None,
            "p": list(self.p) if self.p else None,
            "fees": list(self.fees) if self.fees else None,
        }


def _since_seconds(since: float | datetime | None) -> float:
    if since is None:
        return float("-inf")
    if isinstance(since, datetime):
        return since.timestamp()
    return float(since)


def _last_game_calls(journal: Journal, game_id: str) -> tuple[int, ...]:
    """The seats whose last LAST GAME note in the game turned it on."""
    calls: dict[int, bool] = {}
    for note in journal.notes(game_id):
        if note.kind == "last_game" and note.seat is not None:
            calls[note.seat] = bool(note.detail.get("on"))
    return tuple(sorted(seat for seat, on in calls.items() if on))


def _money(money: Any) -> dict[str, tuple[int, ...]]:
    """A stored final's ``money`` as the record's ``chips``, ``p`` and ``fees`` (none:
    empty). The settlement stores a fee as a negative part of the total; the record
    says what each seat paid."""
    if money is None:
        return {}
    return {
        "chips": tuple(int(c) for c in money["chips"]),
        "p": tuple(int(p) for p in money["total"]),
        "fees": tuple(-int(f) for f in money.get("fee", ())),
    }


def list_records(journal: Journal, since: float | datetime | None = None) -> list[Record]:
    """The finished games, oldest first; ``since`` (epoch seconds or a datetime) keeps
    those that finished at or after it."""
    rows = journal.query(
        "SELECT game_id, table_id, rules, seats, started_at, finished_at, final FROM records"
        " WHERE finished_at >= ? ORDER BY finished_at, rowid",
        (_since_seconds(since),),
    )
    out = []
    for game_id, table_id, rules, seats, started_at, finished_at, final_text in rows:
        where = f"record of game {game_id}"
        final = journal.decode(where, final_text)
        try:
            record = Record(
                game_id=game_id,
                table_id=table_id,
                preset=rules,
                seats=None if seats is None else journal.seat_names(where, seats),
                started_at=started_at,
                finished_at=finished_at,
                scores=tuple(final["scores"]),
                ranking=tuple(final["ranking"]),
                result=tuple(final.get("result") or ()),
                reason=str(final.get("reason", "")),
                last_game=_last_game_calls(journal, game_id),
                **_money(final.get("money")),
            )
        except (ValueError, KeyError, TypeError, RecursionError):
            raise JournalError(f"{journal.path}: {where} is unreadable") from None
        out.append(record)
    return out


def format_result(value: float, *, sign: bool = False) -> str:
    """A result in points: one decimal, or two where a shared uma needs them (19.97, not
    20.0, so tied players read equal and the table still sums up)."""
    text = f"{value:+.2f}" if sign else f"{value:.2f}"
    return text[:-1] if text.endswith("0") else text


def _cells(values: Sequence[Any]) -> list[str]:
    padded = [str(v) for v in values[:CSV_SEATS]]
    return padded + [""] * (CSV_SEATS - len(padded))


def to_csv(records: Sequence[Record], tz: tzinfo | None = None) -> str:
    """CSV with :data:`CSV_HEADER`: one row per game, seat columns by seat number."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for rec in records:
        writer.writerow(
            [rec.date(tz), rec.table_id, rec.preset, rec.game_id]
            + _cells(rec.seats or ())
            + _cells(rec.scores)
            + _cells(rec.ranks)
            + _cells([format_result(r) for r in rec.result])
            + _cells(rec.chips)
            + _cells(rec.p)
            + _cells(rec.fees)
        )
    return buffer.getvalue()


def to_json(records: Sequence[Record], tz: tzinfo | None = None) -> str:
    """A JSON array of :meth:`Record.as_dict` objects."""
    return json.dumps([r.as_dict(tz) for r in records], ensure_ascii=False, indent=2) + "\n"


def format_table(records: Sequence[Record], tz: tzinfo | None = None) -> str:
    """A readable table for the terminal: one line per game, seats in seat order with
    their score and place (and their result, chips, game fee and P where the preset has
    them)."""
    if not records:
        return "no finished games\n"
    lines = []
    for rec in records:
        names = rec.seats or tuple(f"seat {i}" for i in range(rec.players))
        seats = []
        for seat in range(rec.players):
            extra = f" {format_result(rec.result[seat], sign=True)}" if rec.result else ""
            if rec.p:
                fee = f" fee {rec.fees[seat]}" if rec.fees and rec.fees[seat] else ""
                extra += f" {rec.chips[seat]:+d} chips{fee} {rec.p[seat]:+d}P"
            last = " LAST" if seat in rec.last_game else ""
            seats.append(f"{names[seat]} {rec.scores[seat]} #{rec.ranks[seat]}{extra}{last}")
        date = rec.date(tz)[:16].replace("T", " ")
        lines.append(
            f"{date}  {rec.table_id:<8} {rec.preset:<10} {rec.game_id[:8]}  " + " | ".join(seats)
        )
    return "\n".join(lines) + "\n"
