"""Seating and the night's close in a real browser (issue #30): ``python -m tablectl
dashboard`` with a ledger database and a player list, a real Mosquitto, headless
Chromium. The test plays the table (see test_browser.py): it answers the seating the page
sent with the state a table would publish; and the ledger's banner when its database cannot
be read or the ledger service is offline."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tablectl.dashboard.auth import hash_password
from tablectl.ledger.db import open_database
from tablectl.ledger.store import LedgerStore, parse_message
from tests.dashboard.test_browser import PASSWORD, Dashboard, Tables, _click, _text, _wait
from tests.dashboard.test_model import state
from tests.helpers import Broker, free_port
from tests.ledger.test_ledger_store import message
from tests.mqtt_contract import validator


def test_staff_seat_two_players_from_the_page_and_close_the_night(
    browser: Any, mosquitto: Broker, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    # A game finished before the dashboard started: only the ledger has it.
    ledger = tmp_path / "ledger.sqlite3"
    store = LedgerStore(open_database(str(ledger)))
    store.setup()
    just_now = datetime.fromtimestamp(time.time() - 60, ZoneInfo("Asia/Tokyo"))
    payload = message("g0", finished=just_now.strftime("%Y-%m-%d %H:%M"))
    store.apply(parse_message("t1", payload), now=0.0)
    store.db.close()
    players = tmp_path / "players.csv"
    players.write_text("member,name\n1024,Aoki Ken\n")
    config = tmp_path / "dashboard.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
        f'[ledger]\ndatabase = "{ledger}"\ntimezone = "Asia/Tokyo"\ncutoff_hour = 6\n'
        f'[seating]\nplayers = "{players}"\n'
    )
    tables = Tables(mosquitto)
    tables.client.subscribe("tablectl/v1/+/staff/command", qos=1)
    dashboard = Dashboard(mosquitto, free_port(), config, tmp_path / "dashboard.log")
    try:
        tables.publish("t1", "availability", "online", retain=True)
        tables.publish("t1", "state", state("t1", phase="game_over", finished=True), retain=True)
        dashboard.start()
        browser.get(dashboard.url)
        _wait(browser, "the ledger's game", lambda d: "Doi" in _text(d, "#games"))
        browser.find_element(By.ID, "login-open").click()
        browser.find_element(By.ID, "login-user").send_keys("Eri")
        browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
        browser.find_element(By.ID, "login-submit").click()
        _wait(browser, "the login", lambda d: _text(d, "#who") == "Eri")
        _click(browser, "t1's card", '.card[data-table="t1"]')
        first = _wait(browser, "the seating form", lambda d: d.find_element(By.ID, "seat-input-0"))
        first.send_keys("1024")  # a member number from the player list
        browser.find_element(By.ID, "seat-input-1").send_keys("Chiba")  # a name
        browser.execute_script("window.confirm = () => true;")
        browser.find_element(By.ID, "seat-submit").click()
        seat = tables.next_command()  # on tablectl/v1/t1/staff/command
        assert seat["cmd"] == "seat" and seat["by"] == "Eri"
        names = ["Aoki Ken", "Chiba", "t1 guest 2", "t1 guest 3"]
        assert seat["names"] == names
        # The table takes it: its state and a staff action say so.
        tables.publish("t1", "state", state("t1", names=names, phase="idle"), retain=True)
        event = {"type": "staff_action", "seat": None, "action": "seat", "by": "Eri",
                 "via": "mqtt", "names": names}  # fmt: skip
        tables.publish("t1", "events", event)
        card = '.card[data-table="t1"]'
        _wait(browser, "the names on the card", lambda d: "Aoki Ken" in _text(d, card))
        assert "Chiba" in _text(browser, card)
        _wait(browser, "the table's answer", lambda d: "seated by Eri" in _text(d, "#seat-answer"))
        # The night's close, from the ledger.
        _wait(browser, "the close", lambda d: "Aoki" in _text(d, "#close-section"))
        link = browser.find_element(By.ID, "close-csv").get_attribute("href")
        day = (just_now - timedelta(hours=6)).date().isoformat()  # the cut-off hour
        assert link.endswith(f"/api/close.csv?day={day}")
        csv = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            " fetch(arguments[0]).then((r) => r.text()).then(done, (e) => done(String(e)));",
            link,
        )
        assert csv.splitlines()[1] == "player,Aoki,1,1,0,0,0,45000,55.0,,,"
        with pytest.raises(urllib.error.HTTPError, match="401"):
            urllib.request.urlopen(link, timeout=5)  # not without a staff session
        browser.save_screenshot(str(tmp_path / "seating.png"))
    finally:
        dashboard.stop()
        tables.close()


def test_the_page_says_when_the_ledger_cannot_be_read_or_is_offline(
    browser: Any, mosquitto: Broker, tmp_path: Path
) -> None:
    """Issue #30, bad input: a database that is down. The dashboard's own reads of the
    ledger's database fail (the file moved away), and the ledger service says it is
    offline: the page says each in words, in both languages, and clears when it is over."""
    ledger = tmp_path / "ledger.sqlite3"
    store = LedgerStore(open_database(str(ledger)))
    store.setup()
    store.db.close()
    config = tmp_path / "dashboard.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
        "ledger_poll_s = 1\n"  # read the ledger every second, not every 30
        f'[ledger]\ndatabase = "{ledger}"\n'
    )
    tables = Tables(mosquitto)
    dashboard = Dashboard(mosquitto, free_port(), config, tmp_path / "dashboard.log")
    banner = "#ledger-banner"
    status_topic = "tablectl/ledger/v1/status"
    status_schema = validator("ledger-status.schema.json")

    def ledger_status(state: str, database: str) -> None:
        status = {"v": 1, "state": state, "instance": "0" * 32, "database": database}
        status_schema.validate(status)
        sent = tables.client.publish(status_topic, json.dumps(status), qos=1, retain=True)
        sent.wait_for_publish(5)

    def shown(d: Any) -> bool:
        return bool(d.execute_script(f"return !document.querySelector('{banner}').hidden"))

    try:
        tables.publish("t1", "availability", "online", retain=True)
        tables.publish("t1", "state", state("t1"), retain=True)
        dashboard.start()
        browser.get(dashboard.url)
        _wait(browser, "t1's card", lambda d: "Aki" in _text(d, '.card[data-table="t1"]'))
        assert not shown(browser)

        moved = ledger.rename(tmp_path / "elsewhere.sqlite3")
        _wait(browser, "the unreadable ledger", shown)
        text = _text(browser, banner)
        assert re.fullmatch(
            r"The ledger's database cannot be read since \d\d:\d\d: .*no ledger database there\."
            r" Finished games and the close may be out of date\.",
            text,
        ), text
        _click(browser, "the language button", "#lang")
        _wait(browser, "the banner in Japanese",
              lambda d: "台帳のデータベースを読めません" in _text(d, banner))  # fmt: skip
        moved.rename(ledger)
        _wait(browser, "the banner gone", lambda d: not shown(d))

        # The ledger service stopped (its last will): the tables keep their games.
        ledger_status("offline", "up")
        _wait(browser, "the offline ledger", lambda d: "台帳サービスが停止" in _text(d, banner))
        _click(browser, "the language button", "#lang")
        _wait(browser, "the banner in English", lambda d: "offline" in _text(d, banner))
        assert re.fullmatch(
            r"The ledger is offline since \d\d:\d\d: the tables keep their finished games"
            r" until it is back\.",
            _text(browser, banner),
        ), _text(browser, banner)
        ledger_status("online", "down")
        _wait(browser, "the ledger without its database",
              lambda d: "cannot use its database" in _text(d, banner))  # fmt: skip
        ledger_status("online", "up")
        _wait(browser, "the banner gone again", lambda d: not shown(d))
    finally:
        dashboard.stop()
        tables.close()
