"""The parlor's night end to end (issue #30, "Done when"), on a SQLite ledger and again on
a real PostgreSQL one.

One Mosquitto; two tables, each a simulated table with bots (``hw_sim.SimTable`` over
TCP, in this process, so the test says when the bots play) driven by a ``tablectl run``
process: p1 plays sanma-free (result, uma, chips, a game fee and P), p2 jboy (chips, no
fee); ``tablectl ledger run`` on the database and ``tablectl dashboard`` with a staff
login, a player list and the ledger, both reading one parlor config file.

Staff log in and seat players on both tables through the dashboard's HTTP routes (what
the page posts): member numbers from the player list, names and guests. Each table plays
a game; staff seat other players (two of them change tables); each plays another. Then
``tablectl ledger close --day D`` (JSON and CSV) per player and per table equals the sum
of the two tables' own ``tablectl records`` (games, places, scores, results, chips, P,
fees), the dashboard's close is the same (``/api/close``, the CSV download, and the
page's close view in headless Chromium after a staff login), and each table's journal
holds the seatings with who made them.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import aiomqtt
import pytest

from hw_sim import SimTable
from tablectl.cli import main as cli_main
from tablectl.dashboard.auth import hash_password
from tablectl.journal import Journal
from tablectl.mqtt_signing import new_secret
from tests.dashboard.test_browser import PASSWORD, Dashboard, _click, _wait
from tests.helpers import Broker, free_port, stop_process
from tests.ledger.test_close_records import sum_of_records

ROOT = Path(__file__).resolve().parents[2]
SECRET = new_secret()
STAFF = "Eri"
PLAYERS = "member,name\n1024,Aoki Ken\n1025,Doi Mai\n"
#: What staff type per seat (a member number, a name, or nothing: a guest), and the names
#: the dashboard makes of it, for each table's first and second game.
SEATINGS: dict[str, list[tuple[list[str], list[str]]]] = {
    "p1": [
        (["1024", "Baba", ""], ["Aoki Ken", "Baba", "p1 guest 2"]),
        (["Baba", "1025", "Fujii"], ["Baba", "Doi Mai", "Fujii"]),
    ],
    "p2": [
        (["Chiba", "1025", "Eto", ""], ["Chiba", "Doi Mai", "Eto", "p2 guest 3"]),
        (["Chiba", "Eto", "1024", ""], ["Chiba", "Eto", "Aoki Ken", "p2 guest 3"]),
    ],
}
#: Seconds the whole night may take (it takes about 10 on a quiet 2-CPU machine).
NIGHT_S = 60


def business_day() -> tuple[int, str]:
    """A cut-off hour twelve hours from now (UTC) and the business day in progress: the
    night cannot straddle the cut-off, whenever the test runs."""
    now = datetime.now(UTC)
    cutoff = (now.hour + 12) % 24
    return cutoff, (now - timedelta(hours=cutoff)).date().isoformat()


def spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m tablectl ARGV`` in the background, its output appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tablectl", *argv],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
        )  # fmt: skip


async def until(check: Callable[[], bool]) -> None:
    """Wait until ``check()`` is true, looking every 20 ms (the night's timeout bounds
    every wait)."""
    while True:
        if check():
            return
        await asyncio.sleep(0.02)


class NightTable:
    """A simulated table with bots that play only when told, and its daemon."""

    def __init__(self, table_id: str, rules: str, seed: int, broker: Broker, folder: Path):
        self.id = table_id
        self.rules = rules
        # No games yet: the bots wait (at the first game's ROLL?) until play() asks.
        self.sim = SimTable(rules, seed, max_games=0)
        self.folder = folder
        self.broker = broker
        self.journal = folder / f"{table_id}.sqlite3"
        self.log = folder / f"{table_id}.log"
        self.daemon: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        await self.sim.start_tcp(0)
        config = self.folder / f"{self.id}.toml"
        config.write_text(
            f'[table]\nid = "{self.id}"\ndevice = "{self.sim.url}"\nrules = "{self.rules}"\n'
            f'journal = "{self.journal}"\n'
            f'[mqtt]\nhost = "{self.broker.host}"\nport = {self.broker.port}\nkeepalive = 5\n'
            f'command_secret = "{SECRET}"\n'
        )
        self.daemon = spawn(["run", "--config", str(config)], self.log)

    async def play(self, games: int) -> None:
        """The bots play ``games`` more games and stop at the next one's ROLL?: between
        games, where staff may seat players."""
        bots = self.sim.bots
        assert bots is not None
        bots.max_games = bots.games_finished + games
        await bots.run()

    def delivered(self) -> int:
        """Games the ledger acknowledged (none pending)."""
        if not self.journal.exists():
            return 0
        try:
            with Journal.open(self.journal, readonly=True) as journal:
                pending = journal.query("SELECT 1 FROM ledger_outbox WHERE revision > acked")
                acked = journal.query("SELECT COUNT(*) FROM ledger_outbox")[0][0]
        except sqlite3.Error:
            return 0
        return 0 if pending else int(acked)

    async def stop(self) -> None:
        """SIGTERM the daemon (it must exit 0), then close the simulated table."""
        if self.daemon is not None:
            status = stop_process(self.daemon)
            assert status == 0, self.log.read_text()
            self.daemon = None
        await self.sim.close()


@dataclass
class Parlor:
    """The night's servers and the staff member's dashboard session."""

    day: str
    tables: dict[str, NightTable]
    dashboard: Dashboard
    http: aiohttp.ClientSession
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    csrf: str = ""
    #: What the night is doing, for the message of one that stalls.
    doing: str = "starting"

    def stalled(self) -> str:
        """Where the night stalled: what it was doing, each table's consoles and the
        end of each daemon's log."""
        lines = [f"the night stalled while {self.doing}"]
        for table in self.tables.values():
            log = table.log.read_text(errors="replace").splitlines()[-5:]
            lines += [f"-- {table.id}", table.sim.render(), *log]
        return "\n".join(lines)

    async def login(self) -> None:
        """Log in as staff (the page's login form's request); keep the CSRF token."""
        body = {"user": STAFF, "password": PASSWORD}
        async with self.http.post(self.dashboard.url + "api/login", json=body) as answer:
            assert answer.status == 200, await answer.text()
            self.csrf = (await answer.json())["csrf"]

    async def seat(self, table: str, seats: list[str]) -> list[str]:
        """Seat players at ``table`` as the page does, once the dashboard knows the
        table; the names the dashboard sent, after the table took them."""
        heard = len(self.answers.get(table, []))
        headers = {"X-CSRF-Token": self.csrf}
        body = {"table": table, "seats": seats}
        while True:
            async with self.http.post(
                self.dashboard.url + "api/seat", json=body, headers=headers
            ) as answer:
                if answer.status != 404:  # 404: the table has not reported yet
                    assert answer.status == 200, await answer.text()
                    names: list[str] = (await answer.json())["names"]
                    break
            await asyncio.sleep(0.05)
        await until(lambda: len(self.answers.get(table, [])) > heard)
        event = self.answers[table][-1]
        assert (event["type"], event["by"], event["names"]) == ("staff_action", STAFF, names)
        return names

    async def dashboard_close(self, suffix: str) -> str:
        """The dashboard's close of the day: ``/api/close`` (JSON) or ``.csv``."""
        url = f"{self.dashboard.url}api/close{suffix}?day={self.day}"
        async with self.http.get(url) as answer:
            assert answer.status == 200, await answer.text()
            return await answer.text()


async def listen(
    broker: Broker, answers: dict[str, list[dict[str, Any]]], ready: asyncio.Event
) -> None:
    """The tables' answers to seatings (their ``seat`` staff events), as the page hears
    them."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe("tablectl/v1/+/events", qos=1)
        ready.set()
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            event = json.loads(message.payload)
            if event.get("action") == "seat":
                answers.setdefault(str(message.topic).split("/")[2], []).append(event)


@pytest.fixture
def parlor_config(tmp_path: Path, database: str) -> tuple[Path, str]:
    """The parlor's one config file (dashboard, ledger, player list) and the day."""
    cutoff, day = business_day()
    players = tmp_path / "players.csv"
    players.write_text(PLAYERS)
    config = tmp_path / "parlor.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
        f'command_secret = "{SECRET}"\n'
        f'[ledger]\ndatabase = "{database}"\ntimezone = "UTC"\ncutoff_hour = {cutoff}\n'
        f'[seating]\nplayers = "{players}"\n'
    )
    return config, day


@contextlib.asynccontextmanager
async def night(broker: Broker, folder: Path, config: Path, day: str) -> AsyncIterator[Parlor]:
    """The ledger, the dashboard and the two tables running, staff not yet logged in;
    each process must stop cleanly after."""
    ledger_log = folder / "ledger.log"
    broker_url = f"mqtt://{broker.host}:{broker.port}"
    ledger = spawn(["ledger", "run", "--config", str(config), "--broker", broker_url], ledger_log)
    dashboard = Dashboard(broker, free_port(), config, folder / "dashboard.log")
    tables = {
        "p1": NightTable("p1", "sanma-free", 1, broker, folder),
        "p2": NightTable("p2", "jboy", 1, broker, folder),
    }
    answers: dict[str, list[dict[str, Any]]] = {}
    ready = asyncio.Event()
    listener = asyncio.create_task(listen(broker, answers, ready))
    try:
        await asyncio.to_thread(dashboard.start)
        await ready.wait()
        for table in tables.values():
            await table.start()
        jar = aiohttp.CookieJar(unsafe=True)  # the session cookie of 127.0.0.1
        async with aiohttp.ClientSession(cookie_jar=jar) as http:
            yield Parlor(day, tables, dashboard, http, answers)
    finally:
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
        for table in tables.values():
            await table.stop()
        await asyncio.to_thread(dashboard.stop)
        assert stop_process(ledger) == 0, ledger_log.read_text()


#: Each row of the page's two close tables, as the cells' text, by one script (the page
#: redraws while tables report).
_CLOSE_ROWS = """
return Array.from(document.querySelectorAll("#close-section table.close tbody tr"),
  (tr) => Array.from(tr.cells, (td) => td.innerText.trim()));
"""


def page_close(driver: Any, url: str) -> dict[str, list[str]]:
    """Log in on the page as staff and read its night's close: each row's cells by its
    first (the player or the table)."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    _click(driver, "the login button", "#login-open")
    driver.find_element(By.ID, "login-user").send_keys(STAFF)
    driver.find_element(By.ID, "login-password").send_keys(PASSWORD)
    _click(driver, "the login form's button", "#login-submit")
    rows = _wait(driver, "the close", lambda d: d.execute_script(_CLOSE_ROWS), timeout=20)
    return {row[0]: row[1:] for row in rows}


def on_the_page(player: dict[str, Any]) -> list[str]:
    """A player's figures of the close as the page writes them (en-US thousands; the
    result with one decimal, compared apart)."""
    places = "/".join(map(str, player["places"]))
    money = [f"{player[k]:,}" if player[k] is not None else "" for k in ("chips", "fees", "p")]
    return [str(player["games"]), places, f"{player['score']:,}", *money]


def run_cli(argv: list[str]) -> str:
    """``tablectl ARGV`` in this process: its stdout (exit 0 checked)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(argv) == 0, argv
    return out.getvalue()


async def test_the_parlors_night_closes_as_the_tables_recorded_it(
    mosquitto: Broker, tmp_path: Path, parlor_config: tuple[Path, str], browser: Any
) -> None:
    # parlor_config names the database: a SQLite file, then a PostgreSQL one.
    config, day = parlor_config
    async with night(mosquitto, tmp_path, config, day) as parlor:
        try:
            async with asyncio.timeout(NIGHT_S):
                await parlor.login()
                for game in range(2):
                    for table_id, seatings in SEATINGS.items():
                        parlor.doing = f"seating {table_id} for game {game + 1}"
                        typed, names = seatings[game]
                        assert await parlor.seat(table_id, typed) == names
                    parlor.doing = f"playing game {game + 1}"
                    await asyncio.gather(*(t.play(1) for t in parlor.tables.values()))
                parlor.doing = "waiting for the ledger's acknowledgements"
                await until(lambda: sum(t.delivered() for t in parlor.tables.values()) == 4)
        except TimeoutError:
            pytest.fail(parlor.stalled())
        records: list[dict[str, Any]] = []
        for table in parlor.tables.values():
            records += json.loads(run_cli(["records", "--journal", str(table.journal),
                                           "--json"]))  # fmt: skip
            with Journal.open(table.journal, readonly=True) as journal:
                seated = [
                    (n.detail["by"], n.detail["via"], n.detail["names"])
                    for n in journal.notes()
                    if n.kind == "staff_action" and n.detail.get("action") == "seat"
                ]
            assert seated == [(STAFF, "mqtt", names) for _typed, names in SEATINGS[table.id]]
        from_dashboard = json.loads(await parlor.dashboard_close(""))
        csv_download = await parlor.dashboard_close(".csv")
        page = await asyncio.to_thread(page_close, browser, parlor.dashboard.url)
    # Each game with the players seated for it.
    assert [(r["table"], r["seats"]) for r in records] == [
        (table_id, names) for table_id, seatings in SEATINGS.items() for _, names in seatings
    ]
    close = ["ledger", "close", "--day", day, "--config", str(config)]
    night_close = json.loads(run_cli([*close, "--json"]))
    # The dashboard's close is the same figures, and its CSV the command's.
    assert from_dashboard == night_close
    text = run_cli([*close, "--csv"])
    assert csv_download == text
    players, tables = sum_of_records(records)
    got = {p.pop("player"): p for p in night_close["players"]}
    assert got == players
    assert {t.pop("table"): t for t in night_close["tables"]} == tables
    # Money in every column: sanma-free's fee and P, and chips somewhere in the night.
    assert tables["p1"]["fees"] == 2 * 3 * 300 and tables["p2"]["fees"] == 0
    assert got["Aoki Ken"]["games"] == got["Doi Mai"]["games"] == 2  # one at each table
    assert any(row["chips"] for row in got.values())
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(text)) if r["kind"] == "player"}
    assert {
        name: [
            int(row[k])
            for k in ("games", "first", "second", "third", "fourth", "score", "chips", "fees", "p")
        ]  # fmt: skip
        for name, row in rows.items()
    } == {
        name: [p["games"], *p["places"], p["score"], p["chips"], p["fees"], p["p"]]
        for name, p in players.items()
    }
    # The page's close view writes the same figures.
    for name, player in players.items():
        games, places, score, result, *money = page[name]
        assert [games, places, score, *money] == on_the_page(player), name
        assert float(result) == round(player["result"], 2), name  # 19.97 as the CLI writes it
    for table_id, table in tables.items():
        assert page[table_id] == [str(table["games"]), f"{table['fees']:,}"]
