"""The dashboard in a real browser: a real Mosquitto, ``python -m tablectl dashboard`` in
another process, headless Chromium through Selenium. The test plays the tables: it
publishes their retained state, alerts, hands and games itself (docs/mqtt.md, v1).

Saves the page as a picture in the test's temp folder (to look at when it fails); the
pictures in docs/dashboard.md come from test_screenshots.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablectl.dashboard.auth import hash_password
from tests.dashboard.test_model import finished_game, money_game, state
from tests.helpers import Broker, free_port, stop_process
from tests.mqtt_contract import check

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "staff password"
#: The page must show an MQTT message within a second; a loaded CI machine gets slack.
LIVE_WITHIN_S = 3.0


class Tables:
    """The tables' side of the broker: publishes, and collects the staff's acks."""

    def __init__(self, broker: Broker) -> None:
        import paho.mqtt.client as mqtt

        self.acks: list[tuple[str, dict[str, Any]]] = []
        self.got_ack = threading.Event()
        self.commands: list[tuple[str, dict[str, Any]]] = []
        self.got_command = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="test-tables")
        self.client.on_message = self._on_message
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()
        self.client.subscribe("tablectl/v1/+/staff/#", qos=1)

    def _on_message(self, _client: Any, _userdata: Any, message: Any) -> None:
        # What the dashboard writes is held to the contract too.
        request = (message.topic, check(message.topic, message.payload))
        if message.topic.endswith("/staff/command"):
            self.commands.append(request)
            self.got_command.set()
        else:
            self.acks.append(request)
            self.got_ack.set()

    def next_command(self) -> dict[str, Any]:
        """The next game control the dashboard published (its topic checked)."""
        assert self.got_command.wait(5), "no command published"
        self.got_command.clear()
        topic, command = self.commands.pop(0)
        assert topic.endswith("/staff/command")
        return command

    def publish(self, table: str, leaf: str, payload: Any, retain: bool = False) -> float:
        """Publish what a table would (checked against the contract: the page is tested
        on messages a table can send) and wait for the broker to have it; the time it
        was sent."""
        if isinstance(payload, dict):
            payload = {"v": 1, **payload}
        raw = payload if isinstance(payload, str) else json.dumps(payload)
        topic = f"tablectl/v1/{table}/{leaf}"
        check(topic, raw.encode())
        info = self.client.publish(topic, raw, qos=1, retain=retain)
        info.wait_for_publish(5)
        return time.monotonic()

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


class Dashboard:
    """``python -m tablectl dashboard`` as a child process."""

    def __init__(self, broker: Broker, port: int, config: Path, log: Path) -> None:
        self.argv = [
            sys.executable,
            "-m",
            "tablectl",
            "dashboard",
            "--broker",
            f"mqtt://{broker.host}:{broker.port}",
            "--listen",
            f"127.0.0.1:{port}",
            "--config",
            str(config),
        ]
        self.url = f"http://127.0.0.1:{port}/"
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                self.argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the dashboard exited:\n{self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.url + "api/me", timeout=1) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        pytest.fail(f"the dashboard did not answer:\n{self.log.read_text()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        status = stop_process(process)
        if status is None:
            pytest.fail(f"the dashboard did not stop on SIGTERM:\n{self.log.read_text()}")
        assert status == 0, self.log.read_text()


@pytest.fixture
def rig(mosquitto: Broker, tmp_path: Path) -> Iterator[tuple[Tables, Dashboard]]:
    config = tmp_path / "dashboard.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
    )
    tables = Tables(mosquitto)
    dashboard = Dashboard(mosquitto, free_port(), config, tmp_path / "dashboard.log")
    try:
        yield tables, dashboard
    finally:
        dashboard.stop()
        tables.close()


def _wait(driver: Any, what: str, check: Any, timeout: float = 10.0) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def safe(d: Any) -> Any:
        try:
            return check(d)
        except (StaleElementReferenceException, WebDriverException):
            return False

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(safe)
    except Exception:
        pytest.fail(f"the page never showed {what}")


#: Click the first element matching the selector if it is shown (true), or do nothing
#: (false). The click runs just after the script returns: a click that opens a confirm()
#: would otherwise block the script, and WebDriver would dismiss the dialog.
_CLICK = """
const e = document.querySelector(arguments[0]);
if (!e || !e.getClientRects().length) return false;
setTimeout(() => e.click(), 0);
return true;
"""


def _click(driver: Any, what: str, css: str) -> None:
    """Click ``css`` once it is there, in one script for the reason of _READ: a find and
    then a click spanned a rebuild of a card for 10 s under load ("the page never
    showed p1's card", test_parlor_e2e), every try stale."""
    _wait(driver, what, lambda d: d.execute_script(_CLICK, css))


def _text(driver: Any, css: str) -> str:
    from selenium.webdriver.common.by import By

    found = driver.find_elements(By.CSS_SELECTOR, css)
    return found[0].text if found else ""


def test_the_page_shows_the_parlor_live(
    browser: Any, rig: tuple[Tables, Dashboard], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    tables, dashboard = rig
    t2_state = state(
        "t2",
        rules="mleague",
        dealer=0,
        scores=[31000, 22000, 27000, 20000],
        names=None,
        riichi=[],
        round={"wind": "S", "number": 3},
        honba=0,
        deposits=0,
        clock=None,
        tiles_left=31,
        game_id="g2",
        last_hand=None,
    )
    for table, payload in (("t1", state()), ("t2", t2_state)):
        tables.publish(table, "availability", "online", retain=True)
        tables.publish(table, "state", payload, retain=True)
    dashboard.start()
    browser.get(dashboard.url)

    # Both tables, with their seats.
    _wait(
        browser, "both tables", lambda d: _text(d, '[data-table="t2"] .seat[data-seat="0"] .score')
    )
    card = _text(browser, '.card[data-table="t1"]')
    assert "Aki" in card and "25,000" in card and "East 2" in card and "1 honba" in card
    assert "20:34" in card and "52 tiles left" in card and "kenko" in card
    assert "Ron South Ben" in card and "+3,900" in card  # the last hand: East 1's winds
    assert _text(browser, '[data-table="t1"] .seat[data-seat="1"] .rank') == "1st"
    assert browser.find_elements(By.CSS_SELECTOR, '[data-table="t1"] .seat.dealer[data-seat="1"]')
    assert browser.find_elements(By.CSS_SELECTOR, '[data-table="t1"] .seat.riichi[data-seat="2"]')
    assert "South 3" in _text(browser, '.card[data-table="t2"]')
    assert _text(browser, "#stream") == "live"

    # A changed score shows, within a second or so.
    sent = tables.publish("t1", "state", state(scores=[33000, 24000, 18000, 24000]), retain=True)
    _wait(
        browser,
        "the new score",
        lambda d: _text(d, '[data-table="t1"] .seat[data-seat="0"] .score') == "33,000",
    )
    assert time.monotonic() - sent < LIVE_WITHIN_S
    assert _text(browser, '[data-table="t1"] .seat[data-seat="0"] .rank') == "1st"

    # An alert appears; logged in, staff acknowledge it, and the table hears of it.
    call = {"id": "a7", "kind": "staff_call", "seat": 2, "text": "STAFF CALL",
            "since": time.time() - 95, "acked_by": None}  # fmt: skip
    fault = {
        "id": "a8",
        "kind": "fault",
        "seat": None,
        "text": "OVERHEAT 71C",
        "since": time.time(),
        "acked_by": None,
    }
    stalled_at = time.time() - 600  # the stall watchdog: the last progress 10 min ago
    stalled = {"id": "a9", "kind": "stalled", "seat": None, "text": "no progress for 300 s (play)",
               "since": stalled_at, "acked_by": None}  # fmt: skip
    alerts = [call, fault, stalled]
    tables.publish("t2", "state", {**t2_state, "alerts": alerts}, retain=True)
    _wait(browser, "the alert", lambda d: _text(d, 'li.alert[data-alert="a7"]'))
    since = f"stalled since {time.strftime('%H:%M', time.localtime(stalled_at))}"
    assert since in _text(browser, 'li.alert[data-alert="a9"]')
    assert since in _text(browser, '.card[data-table="t2"] .stalled-badge')
    alert_text = _text(browser, 'li.alert[data-alert="a7"]')
    assert "Staff call" in alert_text and "t2" in alert_text and "West" in alert_text
    assert "log in to acknowledge" in alert_text
    assert "OVERHEAT 71C" in _text(browser, 'li.alert[data-alert="a8"]')
    browser.find_element(By.ID, "login-open").click()
    browser.find_element(By.ID, "login-user").send_keys("Eri")
    browser.find_element(By.ID, "login-password").send_keys("wrong password")
    browser.find_element(By.ID, "login-submit").click()
    _wait(browser, "the login error", lambda d: "wrong password" in _text(d, "#login-error"))
    browser.find_element(By.ID, "login-password").clear()
    browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    button = _wait(
        browser,
        "the Acknowledge button",
        lambda d: d.find_element(By.CSS_SELECTOR, 'button.ack[data-alert="a7"]'),
    )
    button.click()
    assert tables.got_ack.wait(5), "no ack published"
    [(topic, ack)] = tables.acks
    assert topic == "tablectl/v1/t2/staff/ack"
    assert ack["alert"] == "a7" and ack["by"] == "Eri" and abs(ack["at"] - time.time()) < 30
    _wait(
        browser,
        "who acknowledged",
        lambda d: "acknowledged by Eri" in _text(d, 'li.alert[data-alert="a7"]'),
    )
    assert _text(browser, "#who") == "Eri"

    # The daemon dies: the broker's will says offline.
    tables.publish("t1", "availability", "offline", retain=True)
    _wait(
        browser,
        "t1 offline",
        lambda d: d.find_elements(By.CSS_SELECTOR, '.card.offline[data-table="t1"]'),
    )
    assert "OFFLINE" in _text(browser, '.card[data-table="t1"]')
    assert "Daemon offline" in _text(browser, 'li.alert[data-alert="offline-t1"]')

    # Hands so far (the tsumo earned chips) and a finished game.
    for number, (kind, winners, deltas, chips) in enumerate(
        [
            ("ron", [1], [-3900, 3900, 0, 0], [0, 0, 0, 0]),
            ("draw", [], [1500, -1500, 1500, -1500], [0, 0, 0, 0]),
            ("tsumo", [0], [8000, -4000, -2000, -2000], [3, -1, -1, -1]),
        ],
        start=1,
    ):
        hand = {
            "table": "t2",
            "game_id": "g2",
            "hand": number,
            "round": {"wind": "E", "number": number},
            "honba": 0,
            "result": kind,
            "winners": winners,
            "deltas": deltas,
            "chips": chips,
            "scores": [25000 + deltas[0], 25000 + deltas[1], 25000 + deltas[2], 25000 + deltas[3]],
        }
        tables.publish("t2", "hands", hand)
    game = finished_game("t3", "g0")
    tables.publish("t3", "games", game)
    tables.publish("t3", "games", game)  # qos 1 may deliver it twice
    _wait(
        browser,
        "the finished game",
        lambda d: d.find_elements(By.CSS_SELECTOR, '#games tr[data-game="g0"]'),
    )
    assert len(browser.find_elements(By.CSS_SELECTOR, "#games tbody tr")) == 1
    assert "+61.2" in _text(browser, '#games tr[data-game="g0"]')
    note = {"type": "fault", "seat": None, "code": "TILE_COUNT", "text": "wall 2 tile count"}
    tables.publish("t2", "events", note)
    _click(browser, "t2's card", '.card[data-table="t2"]')
    _wait(
        browser,
        "t2's hands",
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#hands tbody tr")) == 3,
    )
    _wait(browser, "t2's faults", lambda d: "TILE_COUNT: wall 2 tile count" in _text(d, "#faults"))
    assert "Tsumo" in _text(browser, '#hands tr[data-hand="3"]')
    screenshot = tmp_path / "dashboard.png"
    assert browser.save_screenshot(str(screenshot)), f"no screenshot saved to {screenshot}"

    # A hand's chips; a game settled in P (money) beside one in points alone.
    assert "+3 chips" in _text(browser, '#hands tr[data-hand="3"]')
    assert "chips" not in _text(browser, '#hands tr[data-hand="1"]')
    tables.publish("t4", "games", money_game("t4", "m0"))
    _wait(
        browser,
        "the game settled in P",
        lambda d: d.find_elements(By.CSS_SELECTOR, '#games tr[data-game="m0"]'),
    )
    assert " P" not in _text(browser, '#games tr[data-game="g0"]')  # no money: points alone
    money = [_text(browser, f'#games tr[data-game="m0"] li[data-seat="{s}"]') for s in range(3)]
    assert money[0].endswith("+3,450 P +3 chips") and money[1].endswith("-1,350 P -6 chips")

    # Japanese labels.
    browser.find_element(By.ID, "lang").click()
    _wait(browser, "Japanese labels", lambda d: _text(d, "h1") == "卓一覧")
    assert "南3局" in _text(browser, '.card[data-table="t2"]')
    browser.find_element(By.ID, "lang").click()
    _wait(browser, "English labels", lambda d: _text(d, "h1") == "Tables")

    # The dashboard restarts: the page reconnects by itself and is live again.
    dashboard.stop()
    _wait(browser, "the lost stream", lambda d: _text(d, "#stream") == "connecting")
    dashboard.start()
    _wait(browser, "the stream back", lambda d: _text(d, "#stream") == "live", timeout=20)
    tables.publish("t2", "state", {**t2_state, "scores": [12000, 22000, 27000, 39000]}, retain=True)
    _wait(
        browser,
        "a score after the restart",
        lambda d: _text(d, '[data-table="t2"] .seat[data-seat="3"] .score') == "39,000",
    )
    assert not browser.find_elements(By.CSS_SELECTOR, 'li.alert[data-alert="a7"]')
    # Sessions do not survive a restart: staff log in again.
    assert "log in to acknowledge" in _text(browser, 'li.alert[data-alert="offline-t1"]')


def test_an_update_redraws_only_its_tables_card(
    browser: Any, rig: tuple[Tables, Dashboard]
) -> None:
    """A busy parlor sends tens of updates a second, most about one table: the other cards
    stay the same elements (selected text, focus and the page's work are kept)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    tables, dashboard = rig
    for table in ("t1", "t2"):
        tables.publish(table, "availability", "online", retain=True)
        tables.publish(table, "state", state(table), retain=True)
    dashboard.start()
    browser.get(dashboard.url)
    score = '[data-table="t1"] .seat[data-seat="0"] .score'
    _wait(browser, "both tables", lambda d: _text(d, score) and _text(d, ".card[data-table=t2]"))
    t1 = browser.find_element(By.CSS_SELECTOR, '.card[data-table="t1"]')
    t2 = browser.find_element(By.CSS_SELECTOR, '.card[data-table="t2"]')
    tables.publish("t1", "state", state("t1", scores=[33000, 24000, 18000, 25000]), retain=True)
    _wait(browser, "t1's new score", lambda d: _text(d, score) == "33,000")
    assert t2.get_attribute("data-table") == "t2"  # the same element: not redrawn
    with pytest.raises(StaleElementReferenceException):
        t1.get_attribute("data-table")  # redrawn
    # A new language redraws every card.
    browser.find_element(By.ID, "lang").click()
    _wait(browser, "Japanese labels", lambda d: _text(d, "h1") == "卓一覧")
    with pytest.raises(StaleElementReferenceException):
        t2.get_attribute("data-table")


#: Whether a card's seat name shows whole (not cut with an ellipsis), and what share of
#: the grid's width the cards of its first row take.
_NAME_WHOLE = """
const name = document.querySelector(arguments[0]);
return name && name.scrollWidth <= name.clientWidth + 1 ? name.textContent : null;
"""
_ROW_SHARE = """
const grid = document.getElementById("tables");
const cards = [...grid.children];
const top = cards[0].getBoundingClientRect().top;
const row = cards.filter((c) => c.getBoundingClientRect().top === top);
const used = row.reduce((sum, c) => sum + c.getBoundingClientRect().width, 0);
return used / grid.getBoundingClientRect().width;
"""


def test_staff_read_words_values_and_act_from_a_wall_screen(
    browser: Any, rig: tuple[Tables, Dashboard]
) -> None:
    from selenium.webdriver.common.by import By

    tables, dashboard = rig
    # t1: no names, seat 1 deals and is in riichi: "East" with both marks beside it.
    call = {"id": "a3", "kind": "staff_call", "seat": 2, "text": "STAFF CALL",
            "since": time.time(), "acked_by": None, "where": "South (Chie)",
            "words": "South (Chie): staff call",
            "params": {"seat": 2, "wind": "S", "player": "Chie"}}  # fmt: skip
    tray = {"id": "a4", "kind": "tray_mismatch", "seat": None, "text": "TRAY 1:37300/38300",
            "since": time.time(), "acked_by": None, "where": None,
            "words": "Trays differ: East (Ben) tray 37,300, score 38,300",
            "params": {"trays": [{"seat": 1, "wind": "E", "player": "Ben", "tray": 37300,
                                  "score": 38300}]}}  # fmt: skip
    t1 = state(names=None, dealer=1, riichi=[1], alerts=[call, tray])
    tables.publish("t1", "availability", "online", retain=True)
    tables.publish("t1", "state", t1, retain=True)
    commands = ["undo", "new_game", "abandon", "tray_override", "chombo", "false_call"]
    menu = {"table": "t1", "rules_menu": ["kenko", "mleague"], "commands": commands}
    tables.publish("t1", "menu", menu, retain=True)
    tables.publish("t2", "state", state("t2"), retain=True)
    hand = {
        "table": "t1", "game_id": "g1", "hand": 1, "round": {"wind": "E", "number": 1},
        "honba": 0, "result": "ron", "winners": [2], "from": [3],
        "deltas": [0, 0, 7700, -7700], "chips": [0, 0, 0, 0],
        "scores": [25000, 25000, 32700, 17300], "dealer": 0, "riichi": [2],
        "values": [{"seat": 2, "han": 4, "fu": 30, "yakuman": 0, "points": 7700,
                    "yaku": ["riichi", "pinfu", "dora 2"]}],
    }  # fmt: skip
    dashboard.start()
    browser.set_window_size(1400, 900)
    browser.get(dashboard.url)
    east = '[data-table="t1"] .seat[data-seat="1"] .name'
    _wait(browser, "the whole seat name at 1400 px",
          lambda d: d.execute_script(_NAME_WHOLE, east) == "East")  # fmt: skip
    assert browser.find_elements(By.CSS_SELECTOR, '[data-table="t1"] .seat.dealer.riichi')
    assert browser.execute_script(_ROW_SHARE) > 0.9  # two cards use the width
    # The alerts say what the table said when it raised them, whoever deals now.
    alert = _text(browser, 'li.alert[data-alert="a3"]')
    assert "South (Chie): staff call" in alert and "West" not in alert
    assert "East (Ben) tray 37,300, score 38,300" in _text(browser, 'li.alert[data-alert="a4"]')
    # In Japanese, from the alerts' params (MQTT revision 7), not the table's English.
    _click(browser, "the language button", "#lang")
    call_row = 'li.alert[data-alert="a3"]'
    _wait(browser, "the call in Japanese",
          lambda d: "南 (Chie): スタッフ呼び出し" in _text(d, call_row))  # fmt: skip
    assert "staff call" not in _text(browser, call_row)
    assert re.fullmatch(r"\d+(秒|分)前", _text(browser, f"{call_row} .alert-since"))  # not "0s前"
    assert "点棒トレイ不一致: 東 (Ben) トレイ 37,300、点数 38,300" in _text(
        browser, 'li.alert[data-alert="a4"]'
    )
    _click(browser, "the language button", "#lang")
    _wait(browser, "English again", lambda d: "staff call" in _text(d, call_row))

    # The hand: its value and yaku, its winds (East 1: seat 0 dealt), its riichi.
    tables.publish("t1", "hands", hand)  # not retained: once the dashboard listens
    _click(browser, "t1's card", '.card[data-table="t1"]')
    row = '#hands tr[data-hand="1"]'
    _wait(browser, "the hand", lambda d: "4 han 30 fu 7,700" in _text(d, row))
    assert "Ron West (riichi, pinfu, dora 2)" not in _text(browser, row)
    assert "Ron West +7,700 4 han 30 fu 7,700 (riichi, pinfu, dora 2)" in _text(browser, row)
    winds = [_text(browser, f'{row} td[data-seat="{s}"] .hand-wind') for s in range(4)]
    assert winds == ["East", "South", "West", "North"]
    assert browser.find_elements(By.CSS_SELECTOR, f'{row} td[data-seat="2"] .riichi-mark')

    # Staff log in and act; each action asks first and goes to the table with their name.
    browser.find_element(By.ID, "login-open").click()
    browser.find_element(By.ID, "login-user").send_keys("Eri")
    browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    _wait(
        browser, "the staff actions", lambda d: d.find_element(By.ID, "cmd-chombo").is_displayed()
    )
    rules = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#cmd-rules option")]
    assert rules == ["same rules", "kenko", "mleague"]
    browser.find_element(By.CSS_SELECTOR, '#cmd-seat option[value="2"]').click()
    browser.find_element(By.ID, "cmd-chombo").click()
    question = _wait(browser, "the confirmation", lambda d: d.switch_to.alert)
    assert question.text == "Chombo for South on t1? The hand ends."  # seat 2 now
    question.dismiss()  # not sent
    browser.find_element(By.ID, "cmd-chombo").click()
    _wait(browser, "the confirmation", lambda d: d.switch_to.alert).accept()
    assert tables.next_command() | {"at": 0} == {"cmd": "chombo", "seat": 2, "by": "Eri", "at": 0}
    assert not tables.commands  # the dismissed one was not sent
    browser.find_element(By.CSS_SELECTOR, '#cmd-rules option[value="mleague"]').click()
    browser.find_element(By.ID, "cmd-new-game").click()
    _wait(browser, "the confirmation", lambda d: d.switch_to.alert).accept()
    command = tables.next_command()
    assert (command["cmd"], command["rules"], command["by"]) == ("new_game", "mleague", "Eri")
    for button, cmd in (("cmd-tray-override", "tray_override"), ("cmd-abandon", "abandon")):
        browser.find_element(By.ID, button).click()
        _wait(browser, "the confirmation", lambda d: d.switch_to.alert).accept()
        command = tables.next_command()
        assert (command["cmd"], command["by"], "seat" in command) == (cmd, "Eri", False)
    done = {"type": "staff_action", "seat": None, "action": "chombo", "target": 2,
            "by": "Eri (parlor)"}  # fmt: skip
    _wait(browser, "sent", lambda d: _text(d, "#cmd-answer").startswith("Sent to t1"))
    tables.publish("t1", "events", done)
    _wait(browser, "the table's answer",
          lambda d: _text(d, "#cmd-answer") == "t1: chombo done (Eri (parlor))")  # fmt: skip

    # A wall screen with six tables: the cards still use the width, the name is whole.
    for table in ("t3", "t4", "t5", "t6"):
        tables.publish(table, "state", state(table), retain=True)
    browser.set_window_size(1920, 1080)
    _wait(browser, "six tables", lambda d: len(d.find_elements(By.CSS_SELECTOR, ".card")) == 6)
    _wait(browser, "the whole name at 1920 px",
          lambda d: d.execute_script(_NAME_WHOLE, east) == "East")  # fmt: skip
    assert browser.execute_script(_ROW_SHARE) > 0.9
