"""The parlor end to end: two simulated tables (``python -m hw_sim serve`` with bots)
played by two ``tablectl run`` daemons, a real Mosquitto, ``tablectl dashboard`` and the
page in headless Chromium. The page shows both tables; their scores change as hands
settle; a staff call pressed at a table appears as an alert and, acknowledged by a
logged-in staff member, is gone from the page and journalled at the table; a daemon
killed with SIGKILL shows as offline (the broker's last will); the page comes back by
itself after the dashboard restarts."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablectl.dashboard.auth import hash_password
from tablectl.journal import Journal
from tablectl.mqtt_signing import new_secret
from tests.dashboard.test_browser import PASSWORD, Dashboard, _click, _wait
from tests.helpers import Broker, free_port, stop_process
from tests.hil.serve import serve

ROOT = Path(__file__).resolve().parents[2]
#: Bot tables at this speed settle a hand every second or so: live, yet watchable.
SPEED = "0.02"
#: The parlor's secret, in the tables' and the dashboard's configs: staff requests signed.
SECRET = new_secret()


class ParlorTable:
    """One simulated table with bots and its daemon, publishing to the broker."""

    def __init__(self, table_id: str, rules: str, seed: int, broker: Broker, folder: Path):
        self.id = table_id
        self.control_port = free_port()
        self.sim, url = serve(
            ["--tcp", "0"],
            [sys.executable, "-m", "hw_sim", "serve", "--rules", rules, "--seed", str(seed),
             "--speed", SPEED, "--control", str(self.control_port), "--log-level", "ERROR"],
        )  # fmt: skip
        self.journal = folder / f"{table_id}.sqlite3"
        self.config = folder / f"{table_id}.toml"
        self.config.write_text(
            f'[table]\nid = "{table_id}"\ndevice = "{url}"\nrules = "{rules}"\n'
            f'journal = "{self.journal}"\nseat_names = ["Aki", "Ben", "Chie", "Dai"]\n'
            f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\nkeepalive = 5\n'
            f'command_secret = "{SECRET}"\n'
        )
        self.log = folder / f"{table_id}.log"
        self.daemon: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.daemon = subprocess.Popen(
                [sys.executable, "-m", "tablectl", "run", "--config", str(self.config)],
                cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )  # fmt: skip

    def press(self, seat: int, *keys: str) -> None:
        """Keys at a seat's console, through the simulator's control interface."""
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=5) as conn:
            command = {"cmd": "press", "seat": seat, "keys": list(keys)}
            conn.sendall(json.dumps(command).encode() + b"\n")
            answer = conn.makefile().readline()
        assert json.loads(answer).get("ok"), answer

    def kill(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGKILL)
            self.daemon.wait()

    def stop(self) -> None:
        if self.daemon is not None and self.daemon.poll() is None:
            stop_process(self.daemon)
        self.sim.kill()
        self.sim.wait()


@pytest.fixture
def parlor(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[list[ParlorTable], Dashboard]]:
    tables = [
        ParlorTable("p1", "jboy", 3, mosquitto, tmp_path),
        ParlorTable("p2", "mleague", 4, mosquitto, tmp_path),
    ]
    config = tmp_path / "dashboard.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
        f'command_secret = "{SECRET}"\n'
    )
    dashboard = Dashboard(mosquitto, free_port(), config, tmp_path / "dashboard.log")
    try:
        for table in tables:
            table.start()
        dashboard.start()
        yield tables, dashboard
    finally:
        dashboard.stop()
        for table in tables:
            table.stop()


#: The visible text of the first element matching each selector, "" for none (or one not
#: shown), read by one script: the live tables rebuild their cards many times a second,
#: and a read made of WebDriver calls (find, then .text, per element) spans a rebuild and
#: fails as stale. Under load the eight of the scores never got through: 31 tries in 10 s,
#: every one stale, and "the page never showed the scores". A script runs between two
#: renders, so it sees one page.
_READ = """
return arguments[0].map((css) => {
  const e = document.querySelector(css);
  return e && e.getClientRects().length ? e.innerText.trim() : "";
});
"""


def _texts(driver: Any, *css: str) -> list[str]:
    return list(driver.execute_script(_READ, list(css)))


def _text(driver: Any, css: str) -> str:
    return _texts(driver, css)[0]


def _scores(driver: Any, table: str) -> list[str]:
    card = f'[data-table="{table}"]'
    return _texts(driver, *(f'{card} .seat[data-seat="{n}"] .score' for n in range(4)))


def test_two_tables_a_staff_call_a_killed_daemon_and_a_dashboard_restart(
    parlor: tuple[list[ParlorTable], Dashboard], browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    (p1, p2), dashboard = parlor
    browser.get(dashboard.url)
    for table in ("p1", "p2"):
        _wait(browser, f"table {table}", lambda d, t=table: all(_scores(d, t)), timeout=30)
    _wait(browser, "the seats' names", lambda d: "Aki" in _text(d, '.card[data-table="p1"]'))

    # Hands settle: the scores move.
    first = _wait(browser, "the scores", lambda d: {t: _scores(d, t) for t in ("p1", "p2")})
    for table in ("p1", "p2"):
        _wait(
            browser, f"{table}'s scores moving",
            lambda d, t=table: _scores(d, t) != first[t] and all(_scores(d, t)), timeout=60,
        )  # fmt: skip

    # A staff call at p1's West seat reaches the page; staff acknowledge it from there.
    p1.press(2, "STAFF_CALL", "0")
    alert_css = 'li.alert.kind-staff_call[data-table="p1"]'
    _wait(browser, "the staff call", lambda d: _text(d, alert_css), timeout=20)
    _wait(browser, "the seat", lambda d: "Chie" in _text(d, alert_css))
    _click(browser, "the login button", "#login-open")
    browser.find_element(By.ID, "login-user").send_keys("Eri")
    browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
    _click(browser, "the login form's button", "#login-submit")
    _click(browser, "the Acknowledge button", f"{alert_css} button.ack")
    _wait(browser, "the staff call gone", lambda d: not _text(d, alert_css), timeout=20)

    # Game control from the page: staff ask p1 to take its last hand back. The bots play
    # on, so the table may already have rolled the next dice: either way it answers.
    _click(browser, "p1's card", '.card[data-table="p1"]')
    _click(browser, "the undo button", "#cmd-undo")
    _wait(browser, "the confirmation", lambda d: d.switch_to.alert.accept() or True)
    _wait(
        browser, "the table's answer",
        lambda d: any(s in _text(d, "#cmd-answer") for s in ("p1: undo done", "p1 refused undo")),
        timeout=20,
    )  # fmt: skip
    undone = "done" in _text(browser, "#cmd-answer")

    # A daemon killed shows as offline (the broker publishes its will at once).
    p2.kill()
    _wait(
        browser, "p2 offline",
        lambda d: "OFFLINE" in _text(d, '.card[data-table="p2"]').upper(), timeout=20,
    )  # fmt: skip
    _wait(browser, "the daemon-offline alert", lambda d: _text(d, 'li.alert[data-table="p2"]'))

    # The dashboard restarts: the page reconnects by itself and p1 is still live.
    dashboard.stop()
    _wait(browser, "the lost stream", lambda d: _text(d, "#stream") == "connecting")
    dashboard.start()
    _wait(browser, "the stream back", lambda d: _text(d, "#stream") == "live", timeout=20)
    before = _wait(browser, "p1's scores", lambda d: _scores(d, "p1"))
    _wait(browser, "p1 live after the restart", lambda d: _scores(d, "p1") != before, timeout=60)

    p1.stop()
    with Journal.open(p1.journal, readonly=True) as journal:
        notes = journal.notes()
    acks = [n.detail for n in notes if n.kind == "staff_action"]
    assert [(a["action"], a["by"], a["via"]) for a in acks] == [("alert_ack", "Eri", "mqtt")]
    corrections = [n.detail["by"] for n in notes if n.kind == "correction"]
    assert corrections == (["Eri (parlor)"] if undone else [])
