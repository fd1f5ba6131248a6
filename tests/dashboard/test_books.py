"""The dashboard's books (issue #30): finished games from the ledger across a restart,
seating from the page with the parlor's player list, the night's close as JSON and CSV."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tablectl.dashboard.auth import hash_password
from tablectl.dashboard.books import Books, BooksError, follow_ledger, load_books
from tablectl.dashboard.model import ParlorModel
from tablectl.dashboard.settings import DashboardSettings, PinHash
from tablectl.dashboard.web import Hub, make_app
from tablectl.ledger.close import close_night
from tablectl.ledger.db import open_database
from tablectl.ledger.settings import LedgerSettings
from tablectl.ledger.store import LedgerStore, parse_message
from tablectl.seating_players import PlayerListError, load_players
from tests.dashboard.test_model import state
from tests.ledger.test_ledger_store import message

STAFF_PW = "staff password"
MONEY = {
    "chips": [3, -1, -1, -1], "result": [0, 0, 0, 0], "uma": [0, 0, 0, 0],
    "chip_p": [0, 0, 0, 0], "fee": [-300, -300, -300, -300], "prizes": [0, 0, 0, 0],
    "total": [1200, 100, -500, -1000],
}  # fmt: skip


def _ledger(path: Path, *games: bytes) -> LedgerSettings:
    store = LedgerStore(open_database(str(path)))
    store.setup()
    for payload in games:
        store.apply(parse_message(json.loads(payload)["table"], payload), now=0.0)
    store.db.close()
    return LedgerSettings(database=str(path), timezone="Asia/Tokyo")


def _game_message(game_id: str, table: str = "t1") -> bytes:
    payload = json.loads(message(game_id, table=table))
    return json.dumps(
        {"v": 1, "table": table, "game_id": game_id, "rules": "kenko", "hands": 9,
         "abandoned": False, "scores": payload["final"]["scores"], "final": payload["final"]}
    ).encode()  # fmt: skip


async def test_a_restarted_dashboard_lists_the_ledgers_games_once_each(tmp_path: Path) -> None:
    # g1 was seen live before the restart; g2 finished while the dashboard was down.
    ledger = _ledger(
        tmp_path / "ledger.sqlite3",
        message("g1", finished="2026-11-26 21:00"),
        message("g2", table="t2", finished="2026-11-26 22:00", seats=["Eto", "F", "G", "H"],
                money=MONEY),
    )  # fmt: skip
    books = Books(ledger, None)
    model = ParlorModel()  # the restarted dashboard: nothing in memory
    notified: list[set[str]] = []
    changed = asyncio.Event()

    def notify(keys: set[str]) -> None:
        notified.append(keys)
        changed.set()

    task = asyncio.create_task(follow_ledger(books, model, notify))
    try:
        async with asyncio.timeout(10):
            await changed.wait()
        games = model.snapshot()["games"]
        assert [(g["table"], g["game_id"]) for g in games] == [("t2", "g2"), ("t1", "g1")]
        assert games[0]["names"] == ["Eto", "F", "G", "H"]
        assert games[0]["money"] == {"chips": [3, -1, -1, -1], "total": [1200, 100, -500, -1000]}
        assert games[1]["money"] is None
        assert games[1]["scores"] == [45000, 30000, 15000, 10000]
        assert games[1]["result"] == [55.0, 10.0, -25.0, -40.0]
        # The broker brings g1 again (qos 1 after a reconnect): still once.
        model.apply("tablectl/v1/t1/state", json.dumps(state(game_id="g1")).encode(), 1.0)
        model.apply("tablectl/v1/t1/games", _game_message("g1"), 2.0)
        assert [g["game_id"] for g in model.snapshot()["games"]] == ["g2", "g1"]
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert notified == [{"games"}]


def test_the_player_list_is_read_and_a_broken_one_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "players.csv"
    path.write_text("member,name\n# the regulars\n1024,Aoki Ken\n\n0077,Baba Yui\n")
    players = load_players(path)
    assert players.name("1024") == "Aoki Ken" and players.name("77") == "Baba Yui"
    assert players.name("9") is None
    for text, why in (
        ("1024,Aoki\n1024,Baba\n", "line 2: member 1024 is listed twice"),
        ("1,Aoki\n2,Aoki\n", "line 2: the name 'Aoki' is listed twice"),
        ("x1,Aoki\n", "line 1: a member number is 1-8 digits"),
        ("1,Aoki,extra\n", "line 1: expected 'member,name'"),
    ):
        path.write_text(text)
        with pytest.raises(PlayerListError, match=why):
            load_players(path)
    config = tmp_path / "dash.toml"
    config.write_text(f'[seating]\nplayers = "{path}"\n')
    with pytest.raises(BooksError, match="expected 'member,name'"):
        load_books(str(config))


class Rig:
    """A dashboard app with books and a fake seat sender."""

    def __init__(self, books: Books) -> None:
        staff = PinHash.parse(hash_password(STAFF_PW, iterations=1000))
        settings = DashboardSettings("127.0.0.1", 1883, staff_hash=staff)
        self.model = ParlorModel()
        self.hub = Hub()
        self.seated: list[tuple[str, str, list[str] | None]] = []
        self.app = make_app(
            settings, self.model, self.hub, self.ack, now=lambda: 1000.0, books=books,
            send_seat=self.seat,
        )  # fmt: skip

    async def ack(self, table: str, alert: str, by: str, at: float) -> None:
        raise AssertionError("no ack here")

    async def seat(self, table: str, by: str, names: list[str] | None, at: float) -> None:
        self.seated.append((table, by, names))


async def _staff(rig: Rig) -> tuple[TestClient[Any, Any], dict[str, str]]:
    client = TestClient(TestServer(rig.app, host="127.0.0.1"))
    await client.start_server()
    login = await client.post("/api/login", json={"user": "Eri", "password": STAFF_PW})
    return client, {"X-CSRF-Token": (await login.json())["csrf"]}


async def test_staff_seat_members_names_and_guests_from_the_page(tmp_path: Path) -> None:
    players = tmp_path / "players.csv"
    players.write_text("1024,Aoki Ken\n1025,Baba Yui\n")
    rig = Rig(Books(None, players))
    rig.model.apply("tablectl/v1/t1/state", json.dumps(state()).encode(), 1.0)
    client, token = await _staff(rig)
    try:
        seat = {"table": "t1", "seats": ["1024", "Chiba", "", "01025"]}
        assert (await client.post("/api/seat", json=seat)).status == 403  # no CSRF token
        answer = await client.post("/api/seat", json=seat, headers=token)
        assert answer.status == 200, await answer.text()
        clear = await client.post("/api/seat", json={"table": "t1", "clear": True}, headers=token)
        assert clear.status == 200
        assert rig.seated == [
            ("t1", "Eri", ["Aoki Ken", "Chiba", "t1 guest 2", "Baba Yui"]),
            ("t1", "Eri", None),
        ]
        for body, status, why in (
            ({"table": "t1", "seats": ["9999", "a", "b", "c"]}, 400,
             "seat 0: no member 9999 in the player list"),
            ({"table": "t1", "seats": ["Aoki Ken", "1024", "b", "c"]}, 400,
             "one player cannot sit in two seats"),
            ({"table": "t1", "seats": ["a", "b", "c"]}, 400, "seating needs 4 names, one per seat"),
            ({"table": "t9", "seats": ["a", "b", "c", "d"]}, 404, "no table 't9' has reported"),
        ):  # fmt: skip
            refused = await client.post("/api/seat", json=body, headers=token)
            assert (refused.status, await refused.text()) == (status, why)
        assert len(rig.seated) == 2
    finally:
        await client.close()


async def test_the_nights_close_from_the_ledger_as_json_and_csv(tmp_path: Path) -> None:
    ledger = _ledger(
        tmp_path / "ledger.sqlite3",
        message("g1", finished="2026-11-26 21:00"),
        message("g2", table="t2", finished="2026-11-27 02:00"),  # past midnight: same day
        message("g3", finished="2026-11-27 07:00"),  # the next business day
    )
    rig = Rig(Books(ledger, None))
    anonymous = TestClient(TestServer(rig.app, host="127.0.0.1"))
    await anonymous.start_server()
    try:
        assert (await anonymous.get("/api/close?day=2026-11-26")).status == 401
    finally:
        await anonymous.close()
    client, _ = await _staff(rig)
    try:
        night = await client.get("/api/close?day=2026-11-26")
        assert night.status == 200
        body = await night.json()
        assert [(p["player"], p["games"]) for p in body["players"]][:1] == [("Aoki", 2)]
        assert [(t["table"], t["games"]) for t in body["tables"]] == [("t1", 1), ("t2", 1)]
        csv = await client.get("/api/close.csv?day=2026-11-26")
        assert csv.headers["Content-Disposition"] == 'attachment; filename="close-2026-11-26.csv"'
        store = LedgerStore(open_database(ledger.database, create=False))
        try:
            expected = close_night(store, date(2026, 11, 26), 6, ledger.zone()).to_csv()
        finally:
            store.db.close()
        assert await csv.text() == expected
        bad = await client.get("/api/close?day=yesterday")
        assert (bad.status, await bad.text()) == (400, "day 'yesterday': expected YYYY-MM-DD")
    finally:
        await client.close()


def test_a_broken_seating_or_ledger_section_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tablectl.cli import main

    players = tmp_path / "players.csv"
    players.write_text("1,Aoki\n1,Baba\n")
    for section, why in (
        (f'[seating]\nplayers = "{players}"\n', "line 2: member 1 is listed twice"),
        ("[seating]\nplayer = 'x'\n", "[seating] has one option, players"),
        ("[ledger]\ncutoff_hour = 30\n", "[ledger] cutoff_hour 30: must be 0 to 23"),
    ):
        config = tmp_path / "dash.toml"
        config.write_text(section)
        argv = ["dashboard", "--broker", "mqtt://127.0.0.1:1", "--config", str(config)]
        assert main(argv) == 2
        [line] = capsys.readouterr().err.splitlines()
        assert line.startswith("tablectl dashboard: ") and why in line, line
