"""Writing games to the journal: starts, accepted events, ends, notes, the link position.

:class:`GameWriter` turns each of the daemon's calls into one write of
:class:`~tablectl.journal_commit.GroupCommit` (its own transaction, or a part of the open
batch): an event and the end of the game it ends, with the game's record, are one write,
so no crash can leave a game over but unrecorded. Nothing here reads the clock: every
call that stamps a time takes ``now`` from the caller.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tablectl.journal_commit import GroupCommit
from tablectl.journal_file import JournalError
from tablectl.journal_ledger import STATE_ABANDONED, STATE_FINISHED, STATE_REOPENED, mark
from tablectl.journal_rows import (
    STATUS_FINISHED,
    STATUS_PLAYING,
    LinkPosition,
    rules_digest,
    seat_names,
)
from tablectl.rules.events import Event, Start, Undo, event_to_json
from tablectl.rules.loader import load_rules, preset_names

__all__ = ["GameWriter", "check_final", "check_now"]

log = logging.getLogger("tablectl.journal")


def write_position(
    conn: sqlite3.Connection, position: LinkPosition, flow: str | None = None
) -> None:
    conn.execute(
        "INSERT INTO link_position (id, boot_id, rx_next, flow) VALUES (1, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET boot_id = excluded.boot_id,"
        " rx_next = excluded.rx_next, flow = excluded.flow",
        (position.boot_id, position.rx_next, flow),
    )


def check_now(now: float) -> float:
    # A NaN or a string would sort and compare nonsensically in the records for ever.
    if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
        raise ValueError(f"now must be a finite number of seconds, got {now!r}")
    return float(now)


def check_final(final: dict[str, Any], seats: tuple[str, ...] | None) -> dict[str, Any]:
    """Validate a ``Final.as_dict()``-shaped mapping; returns a clean copy."""
    scores = final.get("scores")
    ranking = final.get("ranking")
    if not isinstance(scores, list | tuple) or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in scores
    ):
        raise ValueError(f"final['scores'] must be a list of integers, got {scores!r}")
    if not isinstance(ranking, list | tuple) or sorted(ranking) != list(range(len(scores))):
        raise ValueError(
            f"final['ranking'] must list every seat 0..{len(scores) - 1} once, got {ranking!r}"
        )
    if seats is not None and len(seats) != len(scores):
        raise ValueError(f"final has {len(scores)} scores but the game has {len(seats)} seats")
    out: dict[str, Any] = {
        "scores": list(scores),
        "ranking": list(ranking),
        "reason": str(final.get("reason", "")),
    }
    result = final.get("result")
    if result:
        if not isinstance(result, list | tuple) or len(result) != len(scores):
            raise ValueError(f"final['result'] must hold one number per seat, got {result!r}")
        out["result"] = [float(r) for r in result]
    money = final.get("money")
    if money is not None:
        out["money"] = check_money(money, len(scores))
    return out


#: The parts of a final's ``money`` (tablectl.rules.money.Money.as_dict), each per seat.
MONEY_PARTS = ("chips", "result", "uma", "chip_p", "fee", "prizes", "total")


def check_money(money: Any, players: int) -> dict[str, list[int]]:
    """Validate a final's ``money`` (each seat's chips and P); returns a clean copy.
    ``chips`` and ``total`` are required, the other parts kept where given."""
    if not isinstance(money, dict):
        raise ValueError(f"final['money'] must be an object or null, got {money!r}")
    out: dict[str, list[int]] = {}
    for part in MONEY_PARTS:
        values = money.get(part)
        if values is None and part not in ("chips", "total"):
            continue
        if (
            not isinstance(values, list | tuple)
            or len(values) != players
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        ):
            raise ValueError(
                f"final['money'][{part!r}] must hold one integer per seat, got {values!r}"
            )
        out[part] = list(values)
    return out


class GameWriter:
    """Writes one journal's games.

    Args:
        path: The journal file, named in every error.
        commit: The journal's connection; every call here is one of its writes.
    """

    def __init__(self, path: Path, commit: GroupCommit) -> None:
        self._path = path
        self._commit = commit

    def _row(self, conn: sqlite3.Connection, game_id: str) -> tuple[Any, ...]:
        row = conn.execute(
            "SELECT table_id, rules, seats, started_at, status FROM games WHERE game_id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            raise JournalError(f"{self._path}: no game {game_id!r} in the journal")
        return tuple(row)

    def start_game(
        self,
        table_id: str,
        rules_name: str,
        seats: Sequence[str] | None,
        now: float,
        *,
        game_id: str | None = None,
    ) -> str:
        """What :meth:`tablectl.journal.Journal.start_game` does (documented there)."""
        now = check_now(now)
        rules = load_rules(rules_name)
        if rules_name not in preset_names():
            # A parlor's own rules file: keep an absolute path so that resuming from
            # another working directory loads the same file.
            rules_name = str(Path(rules_name).resolve())
        seat_list = None if seats is None else [str(s) for s in seats]
        if seat_list is not None and len(seat_list) != rules.players:
            raise ValueError(
                f"{len(seat_list)} seat names for {rules.name!r}, a {rules.players}-player game"
            )
        game_id = game_id or uuid.uuid4().hex
        with self._commit.write() as conn:
            playing = conn.execute("SELECT game_id FROM games WHERE status = 'playing'").fetchone()
            if playing is not None:
                raise JournalError(
                    f"{self._path}: game {playing[0]} is still being played;"
                    " finish or abandon it before starting another"
                )
            if conn.execute("SELECT 1 FROM games WHERE game_id = ?", (game_id,)).fetchone():
                raise JournalError(f"{self._path}: game id {game_id!r} is already used")
            conn.execute(
                "INSERT INTO games (game_id, table_id, rules, rules_digest, seats, started_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    game_id,
                    table_id,
                    rules_name,
                    rules_digest(rules),
                    None if seat_list is None else json.dumps(seat_list, ensure_ascii=False),
                    now,
                ),
            )
        log.info("table %s: game %s started (%s)", table_id, game_id, rules_name)
        return game_id

    def append(
        self,
        game_id: str,
        event: Event,
        now: float,
        *,
        final: dict[str, Any] | None = None,
        position: LinkPosition | None = None,
    ) -> int:
        """What :meth:`tablectl.journal.Journal.append` does (documented there)."""
        now = check_now(now)
        if isinstance(event, Start):
            raise ValueError("'start' is not journalled: the preset is in the games table")
        text = json.dumps(event_to_json(event), ensure_ascii=False, separators=(",", ":"))
        with self._commit.write() as conn:
            table_id, rules, seats, started_at, status = self._row(conn, game_id)
            if status == STATUS_FINISHED and isinstance(event, Undo):
                # The result that ended the game is taken back: the game is played on. Its
                # events stay as they are; the record is the finished game's, so it goes
                # and is written again when the game ends again.
                conn.execute(
                    "UPDATE games SET status = 'playing', ended_at = NULL WHERE game_id = ?",
                    (game_id,),
                )
                conn.execute("DELETE FROM records WHERE game_id = ?", (game_id,))
                mark(conn, game_id, STATE_REOPENED, now)
                status = STATUS_PLAYING
            if status != STATUS_PLAYING:
                raise JournalError(f"{self._path}: game {game_id} is {status}; no more events")
            seq = int(
                conn.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE game_id = ?", (game_id,)
                ).fetchone()[0]
            )
            conn.execute(
                "INSERT INTO events (game_id, seq, at, event) VALUES (?, ?, ?, ?)",
                (game_id, seq, now, text),
            )
            if final is not None:
                self._finish(conn, game_id, final, now)
            if position is not None:
                write_position(conn, position)
        log.debug("table %s: game %s #%d %s", table_id, game_id, seq, text)
        if final is not None:
            log.info("table %s: game %s finished: %s", table_id, game_id, final.get("scores"))
        return seq

    def _finish(
        self, conn: sqlite3.Connection, game_id: str, final: dict[str, Any], now: float
    ) -> None:
        table_id, rules, seats_json, started_at, status = self._row(conn, game_id)
        if status != STATUS_PLAYING:
            raise JournalError(f"{self._path}: game {game_id} is already {status}")
        seats = (
            None if seats_json is None else seat_names(self._path, f"game {game_id}", seats_json)
        )
        clean = check_final(final, seats)
        conn.execute(
            "UPDATE games SET status = 'finished', ended_at = ? WHERE game_id = ?",
            (now, game_id),
        )
        conn.execute(
            "INSERT INTO records (game_id, table_id, rules, seats, started_at, finished_at, final)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (game_id, table_id, rules, seats_json, started_at, now, json.dumps(clean)),
        )
        mark(conn, game_id, STATE_FINISHED, now)

    def finish_game(self, game_id: str, final_dict: dict[str, Any], now: float) -> None:
        """Mark the game finished and write its record (``final_dict`` is
        ``Final.as_dict()``: scores, ranking, reason, result, money) in one transaction."""
        now = check_now(now)
        with self._commit.write() as conn:
            self._finish(conn, game_id, final_dict, now)
        log.info("game %s finished: %s", game_id, final_dict.get("scores"))

    def set_link_position(self, position: LinkPosition, *, flow: str | None = None) -> None:
        """What :meth:`tablectl.journal.Journal.set_link_position` does (documented there)."""
        with self._commit.write() as conn:
            write_position(conn, position, flow)

    def abandon_game(self, game_id: str, now: float) -> None:
        """End a game that will not be completed (players left): no record, no resume."""
        now = check_now(now)
        with self._commit.write() as conn:
            status = self._row(conn, game_id)[4]
            if status != STATUS_PLAYING:
                raise JournalError(f"{self._path}: game {game_id} is already {status}")
            conn.execute(
                "UPDATE games SET status = 'abandoned', ended_at = ? WHERE game_id = ?",
                (now, game_id),
            )
            mark(conn, game_id, STATE_ABANDONED, now)
        log.info("game %s abandoned", game_id)

    def set_game_seats(self, game_id: str, seats: Sequence[str] | None) -> None:
        """What :meth:`tablectl.journal.Journal.set_game_seats` does (documented there)."""
        text = None if seats is None else json.dumps(list(seats), ensure_ascii=False)
        with self._commit.write() as conn:
            done = conn.execute(
                "UPDATE games SET seats = ? WHERE game_id = ? AND status = 'playing'"
                " AND NOT EXISTS (SELECT 1 FROM events WHERE events.game_id = games.game_id)",
                (text, game_id),
            ).rowcount
        if done != 1:
            raise JournalError(f"{self._path}: game {game_id} has begun; its seats stay")

    def note(
        self,
        game_id: str | None,
        now: float,
        seat: int | None,
        kind: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """What :meth:`tablectl.journal.Journal.note` does (documented there)."""
        now = check_now(now)
        text = json.dumps(detail or {}, ensure_ascii=False, separators=(",", ":"))
        with self._commit.write() as conn:
            conn.execute(
                "INSERT INTO notes (game_id, at, seat, kind, detail) VALUES (?, ?, ?, ?, ?)",
                (game_id, now, seat, kind, text),
            )
