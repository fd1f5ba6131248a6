"""The dashboard's books: the parlor's ledger (finished games, the night's close) and its
player list (member numbers for seating).

The dashboard reads the ledger's database directly, with the ``[ledger]`` section of its
own config file (the same file ``tablectl ledger run --config`` reads, or one with the
same ``database``): ``tablectl ledger run`` writes it, the dashboard only reads it, each
read on a connection of its own in a worker thread (SQLite in WAL mode and PostgreSQL
both let a reader beside the writer). So the finished games survive a dashboard restart
and include those finished while it was down. The player list is ``[seating] players``.
No config, or no such section: no ledger (games from the broker only) or no member
numbers (names only). See docs/seating.md.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from tablectl.dashboard.model import MAX_GAMES, ParlorModel
from tablectl.dashboard.settings import DEFAULT_LEDGER_POLL_S
from tablectl.ledger.close import NightClose, close_night
from tablectl.ledger.db import DatabaseError, is_url, open_database
from tablectl.ledger.settings import LedgerSettings
from tablectl.ledger.settings import SettingsError as LedgerSettingsError
from tablectl.ledger.settings import load_settings as load_ledger_settings
from tablectl.ledger.store import LedgerStore
from tablectl.rules.loader import read_small_file
from tablectl.seating_players import PlayerList, PlayerListError, load_players

__all__ = ["Books", "BooksError", "DatabaseError", "follow_ledger", "load_books", "merge_games"]

#: Finished games the page lists (as many as the model keeps from the broker).
GAMES_SHOWN = MAX_GAMES

#: A ``postgresql://`` ledger without its driver.
NO_DRIVER = "a PostgreSQL ledger needs psycopg: pip install 'tablectl[postgres]'"

_log = logging.getLogger(__name__)


class BooksError(ValueError):
    """The ``[ledger]`` or ``[seating]`` section cannot be used (one line)."""


@dataclass
class Books:
    """The ledger's settings (None: no ledger) and the player list's path (None: none)."""

    ledger: LedgerSettings | None
    players_path: Path | None
    _players: PlayerList | None = None
    _players_mtime: float | None = None

    def players(self) -> PlayerList | None:
        """The player list, read again when the file changed (staff may edit it while
        the dashboard runs). Raises :class:`PlayerListError` while it is broken (read
        again at each use until it is fixed); a file gone keeps the last list read."""
        if self.players_path is None:
            return None
        try:
            mtime = os.stat(self.players_path).st_mtime
        except OSError:
            return self._players
        if mtime != self._players_mtime:
            self._players = load_players(self.players_path)
            self._players_mtime = mtime
        return self._players

    def _store(self) -> tuple[Any, LedgerStore]:
        assert self.ledger is not None
        try:
            db = open_database(self.ledger.database, create=False)
        except ImportError:
            raise DatabaseError(NO_DRIVER) from None
        return db, LedgerStore(db)

    def finished_games(self, limit: int = GAMES_SHOWN) -> list[dict[str, Any]]:
        """The ledger's last ``limit`` finished games, oldest first, in the dashboard
        model's form. Raises :class:`DatabaseError` when the database cannot be read."""
        db, _ = self._store()
        try:
            games = db.query(
                "SELECT table_id, game_id, rules, finished_at, final FROM ledger_games"
                " WHERE state = 'finished' ORDER BY finished_at DESC LIMIT ?",
                (limit,),
            )
            seats = db.query(
                "SELECT s.table_id, s.game_id, s.seat, s.player FROM ledger_seats s"
                " JOIN (SELECT table_id, game_id FROM ledger_games WHERE state = 'finished'"
                " ORDER BY finished_at DESC LIMIT ?) g"
                " ON g.table_id = s.table_id AND g.game_id = s.game_id",
                (limit,),
            )
        finally:
            db.close()
        names: dict[tuple[str, str], dict[int, str]] = {}
        for table, game, seat, player in seats:
            names.setdefault((str(table), str(game)), {})[int(seat)] = str(player)
        return [
            _game(str(t), str(g), str(r), float(at), f, names.get((str(t), str(g)), {}))
            for t, g, r, at, f in reversed(games)
        ]

    def close(self, day: date) -> NightClose:
        """The close of business day ``day``; raises :class:`DatabaseError`."""
        assert self.ledger is not None
        db, store = self._store()
        try:
            return close_night(store, day, self.ledger.cutoff_hour, self.ledger.zone())
        finally:
            db.close()

    async def finished_games_async(self) -> list[dict[str, Any]]:
        """:meth:`finished_games` in a worker thread (a PostgreSQL round trip must not
        hold up the page's stream)."""
        return await asyncio.to_thread(self.finished_games)


def _ints(value: Any, players: int) -> bool:
    """Whether ``value`` is one whole number per seat."""
    return (
        isinstance(value, list)
        and len(value) == players
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    )


def _game(
    table: str, game: str, rules: str, at: float, final_text: Any, seats: dict[int, str]
) -> dict[str, Any]:
    """One ledger game as the dashboard model holds a finished game from the broker."""
    final = json.loads(final_text) if isinstance(final_text, str) else {}
    scores = final.get("scores") if isinstance(final, dict) else None
    scores = scores if isinstance(scores, list) else []
    players = len(scores)
    ranking = final.get("ranking")
    if not (isinstance(ranking, list) and sorted(ranking) == list(range(players))):
        ranking = sorted(range(players), key=lambda s: (-scores[s], s))
    result = final.get("result")
    money = final.get("money")
    if isinstance(money, dict):  # the page's form (model.py): net chips and total P
        money = {"chips": money.get("chips"), "total": money.get("total")}
        if not all(_ints(v, players) for v in money.values()):
            money = None
    return {
        "table": table,
        "game_id": game,
        "rules": rules[-40:],
        "hands": None,
        "scores": scores,
        "ranking": ranking,
        "reason": str(final.get("reason") or "")[:40],
        "result": result if isinstance(result, list) and len(result) == players else None,
        "money": money if isinstance(money, dict) else None,
        "names": [seats[s] for s in range(players)] if len(seats) == players else None,
        "at": at,
    }


def merge_games(model: ParlorModel, games: list[dict[str, Any]]) -> bool:
    """Add the ledger's ``games`` the model lacks (one game once, whichever way it came),
    keeping the newest :data:`~tablectl.dashboard.model.MAX_GAMES`; True if it changed."""
    before = list(model.games)
    merged = dict(model.games)
    for game in games:
        merged.setdefault(game["game_id"], game)
    ordered = sorted(merged.items(), key=lambda item: item[1]["at"])[-MAX_GAMES:]
    if [game_id for game_id, _ in ordered] == before:
        return False
    model.games.clear()
    model.games.update(ordered)
    return True


async def follow_ledger(
    books: Books,
    model: ParlorModel,
    notify: Callable[[set[str]], None],
    poll_s: float = DEFAULT_LEDGER_POLL_S,
    now: Callable[[], float] = time.time,
) -> None:
    """Read the ledger's finished games now and every ``poll_s``, into the model: a
    dashboard restarted, or down while games finished, lists them all. A database that
    cannot be read is logged once, tried again, and shown on the page (the model's
    ``ledger`` health) until a read works."""
    failing = False
    while True:
        try:
            games = await books.finished_games_async()
        except DatabaseError as exc:
            if not failing:
                _log.warning("the ledger cannot be read (tried again every %g s): %s",
                             poll_s, exc)  # fmt: skip
            failing = True
            notify(model.ledger_read(str(exc) or type(exc).__name__, now()))
        else:
            if failing:
                _log.info("the ledger can be read again")
            failing = False
            changed = model.ledger_read(None, now())
            if merge_games(model, games):
                changed.add("games")
            notify(changed)
        await asyncio.sleep(poll_s)


def load_books(config: str | None) -> Books:
    """The books the dashboard's config file names; raises :class:`BooksError`."""
    if config is None:
        return Books(None, None)
    try:
        raw = tomllib.loads(read_small_file(Path(config), "config file"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BooksError(f"{config}: cannot read: {exc}") from None
    ledger = None
    if "ledger" in raw:
        try:
            ledger = load_ledger_settings(config)
        except LedgerSettingsError as exc:
            raise BooksError(f"[ledger] {exc}") from None
        if is_url(ledger.database) and importlib.util.find_spec("psycopg") is None:
            raise BooksError(f"[ledger] database: {NO_DRIVER}")
    seating = raw.get("seating", {})
    if not isinstance(seating, dict) or set(seating) - {"players"}:
        raise BooksError(f"{config}: [seating] has one option, players (the player list)")
    players = seating.get("players")
    if players is not None and not isinstance(players, str):
        raise BooksError(f"{config}: [seating] players must be a file path")
    books = Books(ledger, None if players is None else Path(players))
    try:
        books.players()
    except PlayerListError as exc:
        raise BooksError(str(exc)) from None
    return books
