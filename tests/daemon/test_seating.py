"""Seating (issue #30): staff seat players between games; the journal keeps them with
each game and across restarts; a game in progress keeps its players."""

from __future__ import annotations

import json
from pathlib import Path

from firmware_bridge import messages as m
from tablectl.daemon import JournalRecorder
from tablectl.journal import Journal
from tablectl.seating import check_names, latest_seating
from tests.daemon.test_table import Rig
from tests.helpers import RecordingPublisher
from tests.mqtt_contract import check

K = m.Key
PLAYERS = ["Aoki", "Ben", "Chie", "Dai"]


def _rig(journal: Journal, publisher: RecordingPublisher) -> Rig:
    seats = latest_seating(journal, 4)
    recorder = JournalRecorder(journal, "t1", "jboy", seats or ("E", "S", "W", "N"))
    return Rig(
        "jboy",
        recorder=recorder,
        publisher=publisher,
        seat_names=("E", "S", "W", "N"),
        seated=seats,
    )


async def _game_over(rig: Rig) -> None:
    """The dealer's triple yakuman busts the others in hand 1: GAME OVER."""
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)
    assert rig.state.finished


async def test_players_seated_before_the_first_event_own_the_game_and_stay_seated(
    tmp_path: Path,
) -> None:
    journal = Journal.open(tmp_path / "j.sqlite3")
    publisher = RecordingPublisher()
    rig = _rig(journal, publisher)
    await rig.up()  # the first game is opened in the journal, nothing played yet
    game = journal.current_game()
    assert game is not None and journal.game(game).seats == ("E", "S", "W", "N")

    assert rig.table.seat_players(PLAYERS, by="Eri", via="mqtt") is None
    assert journal.game(game).seats == tuple(PLAYERS)
    assert publisher.states[-1]["names"] == PLAYERS
    note = journal.notes()[-1]
    assert note.kind == "staff_action"
    assert note.detail == {"action": "seat", "by": "Eri", "via": "mqtt", "names": PLAYERS}
    check("p/v1/t1/events", json.dumps({"v": 1, **publisher.events[-1]}).encode())
    check("p/v1/t1/staff/command", b'{"cmd":"seat","by":"Eri","names":["Aoki","Ben","Chie","Dai"]}')

    await _game_over(rig)
    record = journal.query("SELECT seats FROM records WHERE game_id = ?", (game,))
    assert record == [('["Aoki", "Ben", "Chie", "Dai"]',)]

    # Across a restart: the journal says who is seated.
    journal.close()
    journal = Journal.open(tmp_path / "j.sqlite3")
    assert latest_seating(journal, 4) == tuple(PLAYERS)
    restarted = _rig(journal, RecordingPublisher())
    assert restarted.table.snapshot()["names"] == PLAYERS
    journal.close()


async def test_a_game_in_progress_keeps_its_players_and_game_over_seats_the_next(
    tmp_path: Path,
) -> None:
    journal = Journal.open(tmp_path / "j.sqlite3")
    publisher = RecordingPublisher()
    rig = _rig(journal, publisher)
    await rig.up()
    assert rig.table.seat_players(PLAYERS, by="Eri", via="mqtt") is None
    await rig.start_hand()
    await rig.key(1, K.RIICHI)  # an event journalled: the game is under way
    first = journal.current_game()
    assert first is not None
    notes = len(journal.notes())

    why = rig.table.seat_players(["Eto", "Fuji", "Goto", "Hara"], by="Eri", via="mqtt")
    assert why == "a game is in progress (hand 1): players change seats between games"
    assert rig.table.snapshot()["names"] == PLAYERS
    assert len(journal.notes()) == notes  # nothing journalled
    assert journal.game(first).seats == tuple(PLAYERS)


async def test_game_over_seats_the_next_game_and_the_finished_one_keeps_its_own(
    tmp_path: Path,
) -> None:
    journal = Journal.open(tmp_path / "j.sqlite3")
    rig = _rig(journal, RecordingPublisher())
    await rig.up()
    first = journal.current_game()
    assert first is not None
    await _game_over(rig)
    next_players = ["Eto", "Fuji", "Goto", "Hara"]
    assert rig.table.seat_players(next_players, by="Kai", via="mqtt") is None
    await rig.confirm_all()  # the next game starts
    second = journal.current_game()
    assert second not in (None, first)
    assert journal.game(first).seats == ("E", "S", "W", "N")
    assert journal.game(second).seats == tuple(next_players)
    # Cleared: the config's names again, for the game that has not begun.
    assert rig.table.seat_players(None, by="Kai", via="mqtt") is None
    assert journal.game(second).seats == ("E", "S", "W", "N")
    assert latest_seating(journal, 4) is None
    journal.close()


def test_bad_seating_is_one_line() -> None:
    assert check_names(["A", "B", "C"], 4) == "seating needs 4 names, one per seat"
    assert check_names(["A", "B", " ", "D"], 4) == "seat 2 has no name"
    assert check_names(["A", "B", "A", "D"], 4) == "one player cannot sit in two seats"
    assert check_names(["A", "B", "x" * 33, "D"], 4) == (
        "seat 2: a name is 1-32 printable characters"
    )
    assert check_names([" Aoki ", "B", "C"], 3) == ("Aoki", "B", "C")
