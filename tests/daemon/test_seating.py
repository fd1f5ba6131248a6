"""Seating (issue #30): staff seat players between games; the journal keeps them with
each game and across restarts; a game in progress keeps its players."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firmware_bridge import messages as m
from tablectl.daemon import JournalRecorder
from tablectl.journal import Journal
from tablectl.seating import check_names, latest_seating
from tests.daemon.test_table import PIN, Rig
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

    assert rig.table.seating.seat(PLAYERS, by="Eri", via="mqtt") is None
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
    assert rig.table.seating.seat(PLAYERS, by="Eri", via="mqtt") is None
    await rig.start_hand()
    await rig.key(1, K.RIICHI)  # an event journalled: the game is under way
    first = journal.current_game()
    assert first is not None
    notes = len(journal.notes())

    why = rig.table.seating.seat(["Eto", "Fuji", "Goto", "Hara"], by="Eri", via="mqtt")
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
    assert rig.table.seating.seat(next_players, by="Kai", via="mqtt") is None
    await rig.confirm_all()  # the next game starts
    second = journal.current_game()
    assert second not in (None, first)
    assert journal.game(first).seats == ("E", "S", "W", "N")
    assert journal.game(second).seats == tuple(next_players)
    # Cleared: the config's names again, for the game that has not begun.
    assert rig.table.seating.seat(None, by="Kai", via="mqtt") is None
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


async def test_staff_seat_a_member_from_a_console_between_games_only(tmp_path: Path) -> None:
    players = tmp_path / "players.csv"
    players.write_text("member,name\n1024,Aoki Ken\n")
    journal = Journal.open(tmp_path / "j.sqlite3")
    recorder = JournalRecorder(journal, "t1", "jboy", None)
    rig = Rig("jboy", recorder=recorder, table_id="t1")
    rig.table.seating.players_path = players
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.RIICHI)  # the game is under way
    await rig.key(2, K.STAFF_CALL, K.DIGIT_6)
    assert rig.lines(2)[1] == "! between games only"
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # busts: GAME OVER
    assert rig.state.finished
    await rig.key(2, K.STAFF_CALL, K.DIGIT_6)
    assert rig.lines(2)[0] == "PIN?"
    await rig.type(2, PIN)
    await rig.key(2, K.OK)
    assert rig.lines(2)[0] == "MEMBER?"
    await rig.type(2, "99")
    await rig.key(2, K.OK)
    assert rig.lines(2)[1] == "! no member 99"
    await rig.key(2, K.STAFF_CALL, K.DIGIT_6)
    await rig.type(2, PIN)
    await rig.key(2, K.OK)
    await rig.type(2, "1024")
    await rig.key(2, K.OK)
    names = ["t1 guest 0", "t1 guest 1", "Aoki Ken", "t1 guest 3"]
    assert rig.table.snapshot()["names"] == names
    note = journal.notes()[-1]
    assert note.detail == {"action": "seat", "by": "staff at seat 2", "via": "console",
                           "names": names}  # fmt: skip
    await rig.confirm_all()  # the next game is theirs
    game = journal.current_game()
    assert game is not None and journal.game(game).seats == tuple(names)
    journal.close()


def test_the_tables_player_list_is_checked_when_the_config_is_loaded(tmp_path: Path) -> None:
    from tablectl.config import ConfigError, load_config

    players = tmp_path / "players.csv"
    players.write_text("1024,Aoki\n1024,Baba\n")
    config = tmp_path / "tablectl.toml"
    config.write_text(
        '[table]\nid = "t1"\ndevice = "sim://t1"\nrules = "jboy"\n'
        f'journal = "{tmp_path / "j.sqlite3"}"\n[staff]\nplayers = "players.csv"\n'
    )
    with pytest.raises(
        ConfigError, match=r"\[staff\] players: .*line 2: member 1024 is listed twice"
    ):
        load_config(config, check_files=False)
    players.write_text("1024,Aoki\n")
    assert load_config(config, check_files=False).staff.players == players


def test_a_seat_request_from_the_broker_reaches_the_daemon_checked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import logging

    from tablectl.mqtt_requests import StaffRequests

    requests = StaffRequests(
        "p/v1/t1/staff/ack", "p/v1/t1/staff/command", mode="broker-acl", secret=None,
        clock=lambda: 0.0, log=logging.getLogger("test"), table="t1",
    )  # fmt: skip
    seated: list[tuple[str, list[str] | None]] = []
    requests.on_seat = lambda by, names: seated.append((by, names))
    requests.on_command = lambda *args: pytest.fail(f"not a game command: {args}")
    requests.command(b'{"cmd":"seat","by":"Eri","names":["A","B","C","D"]}')
    requests.command(b'{"cmd":"seat","by":"Eri","names":null}')
    with caplog.at_level(logging.WARNING):
        requests.command(b'{"cmd":"seat","by":"Eri","names":"A,B,C,D"}')
        requests.command(b'{"cmd":"seat","by":"Eri","names":[1,2,3,4]}')
    assert seated == [("Eri", ["A", "B", "C", "D"]), ("Eri", None)]
    assert caplog.messages == ["[t1] staff seat ignored: 'names' must be a list of names"] * 2
