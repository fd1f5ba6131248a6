"""The pictures in docs/dashboard.md, taken in headless Chromium from a parlor the test
plays (as test_browser.py does): three tables with seated players, their alerts, a table's
hands, its staff actions, games in the ledger and the night's close, the ledger's banner,
and the page in Japanese.

Runs only with ``TABLECTL_UPDATE_SCREENSHOT=1`` (it writes into docs/, and a test run
leaves the checkout as it found it; the suite's browser tests check the same page):

    TABLECTL_UPDATE_SCREENSHOT=1 .venv/bin/pytest tests/dashboard/test_screenshots.py

Each picture is cropped to what its part of docs/dashboard.md describes, and must stay
under ``MAX_PNG_BYTES`` so the repository does not grow much with each new picture.
"""

from __future__ import annotations

import base64
import json
import os
import time
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

pytestmark = pytest.mark.skipif(
    os.environ.get("TABLECTL_UPDATE_SCREENSHOT") != "1",
    reason="writes docs/*.png: only with TABLECTL_UPDATE_SCREENSHOT=1",
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
MAX_PNG_BYTES = 250_000
TOKYO = ZoneInfo("Asia/Tokyo")
CUTOFF_HOUR = 6

#: The document's rectangle around the elements matching the selectors (those shown), with
#: a margin; the page's full width when asked, for the overview.
_CLIP = """
const [selectors, margin, fullWidth] = arguments;
const rects = selectors.flatMap((s) => [...document.querySelectorAll(s)])
  .filter((e) => e.getClientRects().length).map((e) => e.getBoundingClientRect());
if (!rects.length) return null;
const left = fullWidth ? 0 : Math.max(0, Math.min(...rects.map((r) => r.left)) - margin);
const right = fullWidth ? document.documentElement.clientWidth
  : Math.min(document.documentElement.clientWidth, Math.max(...rects.map((r) => r.right)) + margin);
const top = Math.max(0, Math.min(...rects.map((r) => r.top)) - margin);
const bottom = Math.max(...rects.map((r) => r.bottom)) + margin;
return {x: left + scrollX, y: top + scrollY, width: right - left, height: bottom - top, scale: 1};
"""


#: Resolves once the fonts are loaded and two frames are drawn: the page redraws what an
#: update changed in the next frame, so the second one shows it painted.
_SETTLED = """
const done = arguments[0];
document.fonts.ready.then(() => requestAnimationFrame(() => requestAnimationFrame(done)));
"""


def _shoot(driver: Any, name: str, *selectors: str, full_width: bool = False) -> int:
    """Save the part of the page around ``selectors`` as docs/NAME; its size in bytes."""
    driver.execute_async_script(_SETTLED)
    clip = driver.execute_script(_CLIP, list(selectors), 8, full_width)
    assert clip, f"nothing of {selectors} is shown for {name}"
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "clip": clip, "captureBeyondViewport": True}
    )
    data = base64.b64decode(shot["data"])
    assert len(data) < MAX_PNG_BYTES, f"{name}: {len(data)} bytes; crop it or shrink the window"
    (DOCS / name).write_bytes(data)
    return len(data)


def _rows(driver: Any, css: str) -> int:
    from selenium.webdriver.common.by import By

    return len(driver.find_elements(By.CSS_SELECTOR, css))


def _business_day_start(now: datetime) -> datetime:
    start = now.replace(hour=CUTOFF_HOUR, minute=0, second=0, microsecond=0)
    return start if now >= start else start - timedelta(days=1)


def _ledger_game(
    table: str, game_id: str, rules: str, seats: list[str], finished: float, final: dict[str, Any]
) -> bytes:
    """A table's ledger message for a finished game (docs/mqtt.md, "ledger")."""
    return json.dumps(
        {
            "v": 1,
            "table": table,
            "game_id": game_id,
            "revision": 1,
            "state": "finished",
            "rules": rules,
            "seats": seats,
            "started_at": finished - 55 * 60,
            "finished_at": finished,
            "final": final,
        }  # fmt: skip
    ).encode()


def _jboy_final(scores: list[int], result: list[float], chips: list[int]) -> dict[str, Any]:
    """A jboy game's final settled in P: 50 P a point of result, 100 P a chip, 600 P a
    seat for the game."""
    ranking = sorted(range(4), key=lambda s: -scores[s])
    chip_p = [100 * c for c in chips]
    fee = [-600] * 4
    result_p = [round(r * 50) for r in result]
    return {
        "scores": scores,
        "ranking": ranking,
        "reason": "last_round",
        "result": result,
        "money": {"chips": chips, "result": result_p, "uma": [0, 0, 0, 0], "chip_p": chip_p,
                  "fee": fee, "prizes": [0, 0, 0, 0],
                  "total": [r + c + f for r, c, f in zip(result_p, chip_p, fee, strict=True)]},
    }  # fmt: skip


T1_NAMES = ["Aoki Ken", "Baba", "Chiba Rei", "Doi"]
T2_NAMES = ["Endo", "Fujii Mao", "Goto", "Hara"]
T3_NAMES = ["Ito", "Sato", "Kondo", "Mori Yu"]


def _ledger(path: Path) -> None:
    """The night so far: two games at t1 and one at t3, finished in this business day."""
    now = datetime.now(TOKYO)
    start = _business_day_start(now).timestamp()
    store = LedgerStore(open_database(str(path)))
    store.setup()
    for table, game_id, seats, minutes_ago, final in (
        ("t1", "t1-0418", ["Aoki Ken", "Baba", "Chiba Rei", "Noda"], 130,
         _jboy_final([41200, 28300, 19500, 11000], [51.2, 8.3, -20.5, -39.0], [4, -1, 0, -3])),
        ("t3", "t3-0211", T3_NAMES, 75,
         _jboy_final([22100, 36400, 30000, 11500], [-7.9, 46.4, 10.0, -48.5], [-2, 5, 0, -3])),
        ("t1", "t1-0419", ["Aoki Ken", "Baba", "Chiba Rei", "Doi"], 20,
         _jboy_final([18300, 24700, 45100, 11900], [-11.7, 4.7, 55.1, -48.1], [-1, 0, 3, -2])),
    ):  # fmt: skip
        finished = max(start + 60, time.time() - minutes_ago * 60)
        payload = _ledger_game(table, game_id, "jboy", seats, finished, final)
        store.apply(parse_message(table, payload), now=0.0)
    store.db.close()


def _alerts() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """t1's staff call (North: Baba, t1's dealer is seat 2) and t2's tray mismatch and
    fault, as tables of MQTT revision 7 raise them."""
    now = time.time()
    call = {"id": "a12", "kind": "staff_call", "seat": 1, "text": "STAFF CALL",
            "since": now - 140, "acked_by": None, "where": "North (Baba)",
            "words": "North (Baba): staff call",
            "params": {"seat": 1, "wind": "N", "player": "Baba"}}  # fmt: skip
    tray = {"id": "a3", "kind": "tray_mismatch", "seat": None, "text": "TRAY 3:23300/24300",
            "since": now - 50, "acked_by": None, "where": None,
            "words": "Trays differ: North (Hara) tray 23,300, score 24,300",
            "params": {"trays": [{"seat": 3, "wind": "N", "player": "Hara", "tray": 23300,
                                  "score": 24300}]}}  # fmt: skip
    fault = {"id": "a4", "kind": "fault", "seat": None, "text": "LIFT 2: wall did not rise",
             "since": now - 400, "acked_by": "Eri", "where": None,
             "words": "LIFT 2: wall did not rise", "params": {"codes": ["LIFT"]}}  # fmt: skip
    return [call], [tray, fault]


def _hands() -> list[dict[str, Any]]:
    """t1's game so far (jboy): a ron with riichi, a draw, a dealer's tsumo with chips."""
    return [
        {"table": "t1", "game_id": "t1-0420", "hand": 1, "round": {"wind": "E", "number": 1},
         "honba": 0, "result": "ron", "winners": [2], "from": [3],
         "deltas": [0, 0, 8700, -7700], "chips": [0, 0, 1, -1],
         "scores": [25000, 25000, 33700, 17300], "dealer": 0, "riichi": [2],
         "values": [{"seat": 2, "han": 4, "fu": 30, "yakuman": 0, "points": 7700,
                     "yaku": ["riichi", "pinfu", "red five", "dora 1"]}]},
        {"table": "t1", "game_id": "t1-0420", "hand": 2, "round": {"wind": "E", "number": 2},
         "honba": 0, "result": "draw", "winners": [], "from": [],
         "deltas": [1500, 1500, -1500, -1500], "chips": [0, 0, 0, 0],
         "scores": [26500, 26500, 32200, 15800], "dealer": 1, "riichi": []},
        {"table": "t1", "game_id": "t1-0420", "hand": 3, "round": {"wind": "E", "number": 2},
         "honba": 1, "result": "tsumo", "winners": [1], "from": [],
         "deltas": [-4100, 12300, -4100, -4100], "chips": [-1, 3, -1, -1],
         "scores": [22400, 38800, 28100, 11700], "dealer": 1, "riichi": [1],
         "values": [{"seat": 1, "han": 3, "fu": 40, "yakuman": 0, "points": 12000,
                     "yaku": ["riichi", "menzen tsumo", "ippatsu"]}]},
    ]  # fmt: skip


def test_take_the_docs_pictures(browser: Any, mosquitto: Broker, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    ledger = tmp_path / "ledger.sqlite3"
    _ledger(ledger)
    players = tmp_path / "players.csv"
    players.write_text("member,name\n1024,Aoki Ken\n1031,Baba\n1187,Chiba Rei\n1202,Ito\n")
    config = tmp_path / "dashboard.toml"
    config.write_text(
        f'[dashboard]\nstaff_password_hash = "{hash_password(PASSWORD, iterations=1000)}"\n'
        f'[ledger]\ndatabase = "{ledger}"\ntimezone = "Asia/Tokyo"\n'
        f"cutoff_hour = {CUTOFF_HOUR}\n"
        f'[seating]\nplayers = "{players}"\n'
    )
    t1_alerts, t2_alerts = _alerts()
    t1 = state("t1", rules="jboy", names=T1_NAMES, dealer=2, round={"wind": "E", "number": 3},
               honba=0, deposits=1000, scores=[22400, 38800, 27100, 11700], riichi=[0],
               tiles_left=38, clock=1975, game_id="t1-0420", hands=3,
               last_hand={"round": {"wind": "E", "number": 2}, "honba": 1, "result": "tsumo",
                          "winners": [1], "from": [], "deltas": [-4100, 12300, -4100, -4100]},
               alerts=t1_alerts)  # fmt: skip
    t2 = state("t2", rules="mleague", names=T2_NAMES, dealer=0, round={"wind": "S", "number": 1},
               honba=2, deposits=0, scores=[31500, 20200, 24000, 24300], riichi=[],
               tiles_left=61, clock=None, game_id="t2-0377", hands=6, phase="dealing",
               last_hand={"round": {"wind": "E", "number": 4}, "honba": 1, "result": "ron",
                          "winners": [0], "from": [1], "deltas": [5100, -5100, 0, 0]},
               alerts=t2_alerts)  # fmt: skip
    t3 = state("t3", rules="jboy", names=T3_NAMES, phase="idle", finished=True,
               scores=[22100, 36400, 30000, 11500], riichi=[], honba=0, deposits=0,
               dealer=3, round={"wind": "S", "number": 4}, tiles_left=None, clock=None,
               game_id="t3-0211", hands=11, last_hand=None)  # fmt: skip
    menu_commands = ["undo", "new_game", "abandon", "tray_override", "chombo", "false_call"]
    tables = Tables(mosquitto)
    dashboard = Dashboard(mosquitto, free_port(), config, tmp_path / "dashboard.log")
    sizes: dict[str, int] = {}
    try:
        for table, payload, rules_menu in (
            ("t1", t1, ["jboy", "jboy-sanma", "kenko"]),
            ("t2", t2, ["mleague", "kenko"]),
            ("t3", t3, ["jboy", "jboy-sanma"]),
        ):
            tables.publish(table, "availability", "online", retain=True)
            tables.publish(table, "state", payload, retain=True)
            menu = {"table": table, "rules_menu": rules_menu, "commands": menu_commands}
            tables.publish(table, "menu", menu, retain=True)
        dashboard.start()
        # The parlor's clock, whatever the machine's: the page's times are Tokyo's, as the close's.
        browser.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Asia/Tokyo"})
        browser.set_window_size(1920, 1080)
        browser.get(dashboard.url)
        _wait(browser, "three tables", lambda d: _rows(d, ".card") == 3)
        _wait(browser, "the ledger's games", lambda d: _rows(d, "#games tbody tr") == 3)
        for hand in _hands():  # not retained: once the dashboard listens
            tables.publish("t1", "hands", hand)
        browser.find_element(By.ID, "login-open").click()
        browser.find_element(By.ID, "login-user").send_keys("Eri")
        browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
        browser.find_element(By.ID, "login-submit").click()
        _wait(browser, "the login", lambda d: _text(d, "#who") == "Eri")
        _wait(browser, "the close", lambda d: "Aoki Ken" in _text(d, "#close-section"))
        assert "North (Baba): staff call" in _text(browser, 'li.alert[data-alert="a12"]')
        assert "Aoki Ken" in _text(browser, '.card[data-table="t1"]')

        # The overview at a wall screen's width: alerts, the cards, the finished games.
        sizes["dashboard.png"] = _shoot(
            browser, "dashboard.png", "header.top", "#alerts-section", "#tables-section",
            "#games-section", full_width=True,
        )  # fmt: skip

        # A table's staff actions: chombo for a seat, asked first, the table's answer.
        _click(browser, "t1's card", '.card[data-table="t1"]')
        row = '#hands tr[data-hand="1"]'
        _wait(browser, "t1's hands", lambda d: "4 han 30 fu" in _text(d, row))
        browser.find_element(By.CSS_SELECTOR, '#cmd-seat option[value="3"]').click()
        browser.find_element(By.ID, "cmd-chombo").click()
        question = _wait(browser, "the confirmation", lambda d: d.switch_to.alert)
        assert question.text == "Chombo for South Doi on t1? The hand ends."
        question.accept()
        command = tables.next_command()
        assert (command["cmd"], command["seat"], command["by"]) == ("chombo", 3, "Eri")
        done = {"type": "staff_action", "seat": None, "action": "chombo", "target": 3,
                "by": "Eri (parlor)"}  # fmt: skip
        tables.publish("t1", "events", done)
        _wait(browser, "the table's answer",
              lambda d: _text(d, "#cmd-answer") == "t1: chombo done (Eri (parlor))")  # fmt: skip
        browser.find_element(By.CSS_SELECTOR, '#cmd-rules option[value="kenko"]').click()
        browser.find_element(By.ID, "seat-input-0").send_keys("1202")
        browser.find_element(By.ID, "seat-input-3").send_keys("Sato")
        browser.execute_script("document.activeElement.blur();")
        sizes["dashboard-staff.png"] = _shoot(browser, "dashboard-staff.png", "#detail")

        # The night's close (staff): per player and per table, with the CSV link.
        browser.find_element(By.ID, "detail-close").click()
        sizes["dashboard-close.png"] = _shoot(
            browser, "dashboard-close.png", "#games-section", "#close-section"
        )

        # The ledger's banner, for everyone who sees the page.
        status = {"v": 1, "state": "offline", "instance": "0" * 32, "database": "up"}
        tables.client.publish(
            "tablectl/ledger/v1/status", json.dumps(status), qos=1, retain=True
        ).wait_for_publish(5)
        _wait(browser, "the banner", lambda d: "offline" in _text(d, "#ledger-banner"))
        browser.execute_script("scrollTo(0, 0);")
        sizes["dashboard-ledger.png"] = _shoot(
            browser, "dashboard-ledger.png", "header.top", "#ledger-banner", full_width=True
        )
        status["state"] = "online"
        tables.client.publish(
            "tablectl/ledger/v1/status", json.dumps(status), qos=1, retain=True
        ).wait_for_publish(5)
        _wait(browser, "the banner gone", lambda d: not _text(d, "#ledger-banner"))

        # The page in Japanese, at a 1400 px screen, t1's hands open.
        browser.set_window_size(1400, 1000)
        _click(browser, "the language button", "#lang")
        _wait(browser, "Japanese labels", lambda d: _text(d, "h1") == "卓一覧")
        _click(browser, "t1's card", '.card[data-table="t1"]')
        _wait(browser, "t1's hands in Japanese", lambda d: "4翻30符" in _text(d, "#hands"))
        assert "北 (Baba): スタッフ呼び出し" in _text(browser, 'li.alert[data-alert="a12"]')
        sizes["dashboard-ja.png"] = _shoot(
            browser, "dashboard-ja.png", "header.top", "#alerts-section", "#tables-section",
            "#detail", full_width=True,
        )  # fmt: skip
    finally:
        dashboard.stop()
        tables.close()
    print(", ".join(f"{name} {size / 1000:.0f} KB" for name, size in sizes.items()))
