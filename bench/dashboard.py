"""Parlor dashboard: a table's state leaving its daemon to the page's DOM showing it.

Run from the repository root::

    .venv/bin/python bench/dashboard.py [--tables 20] [--human-s 60] [--bot-s 60] [--quick]

The parlor on one machine: Mosquitto on 127.0.0.1 (a free port, no persistence),
``tablectl dashboard`` as its own process, the page in headless Chromium (Selenium, the
options of tests/dashboard/conftest.py), and ``--tables`` simulated tables, each a
``SimTable`` with bots on every seat and an in-process ``Daemon`` (over ``sim://``,
presets rotating as in the other benchmarks) publishing to the broker with its real
``TablePublisher``. Two phases, on the same tables, dashboard and page:

* ``human`` (``--human-s``): the bots make one move a second (``BotTable.pace`` 1 s),
  a human table's pace: one take or discard per table per second;
* ``bot`` (``--bot-s``): the bots play as fast as the daemons answer (pace 0, as
  ``tablectl demo --fast``), all tables in this one process.

One sample is one change of what a table's card shows. When a state message leaves a
daemon, this process notes the time (``time.time()``) and the state's *key*: round,
honba, deposits, tiles left and scores, what the card shows of it. "Leaves" is the socket
write of the table's MQTT client that sends it; ``BrokerLink._send`` hands it to the
client a loop turn or two earlier (``client_wait_ms``: the load generator's own delay,
not counted). States the publisher coalesced before sending never leave and are not
samples. Consecutive states with one key are one change, timed from the first. In the
page a ``MutationObserver`` on the cards notes ``performance.timeOrigin +
performance.now()`` and each card's key whenever it differs from the last one seen for
that table. A change's latency is the first DOM time showing it or a newer change of the
same table; when a newer one showed first, the change is counted as *coalesced* (the
dashboard or the page drew only the newer one), timed at that moment. The browser's clock
is tied to this process's by a calibration (the execute_script round trip with the
smallest delay; the offset's uncertainty is half that delay), before and after the run,
and its times are converted before matching.

The tables' MQTT sockets have ``TCP_NODELAY`` (``TablePublisher``): before, a qos-0 event
followed by a state waited for the broker's delayed ACK (Nagle's algorithm), about 40 ms.

Also the dashboard process's CPU over each phase (utime + stime from /proc/PID/stat, as a
percentage of one core), its RSS (VmRSS) at the end of each phase and its peak (VmHWM),
the broker's CPU, the browser's (the driver's process tree: the page's share of the
machine) and this process's (the tables: the load generator, which shares the machine's
cores with everything else).

Prints one JSON object; exits 1 with one line when Mosquitto, the dashboard or Chromium
cannot be started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

import _common as common

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.mqtt_link import BrokerLink
from tablectl.mqtt_settings import MqttSettings

ROOT = Path(__file__).resolve().parents[1]
#: Seconds between two bot moves at a human table's pace.
HUMAN_PACE_S = 1.0
#: Seconds the tables play after the page shows them all, before the measuring starts.
SETTLE_S = 2.0
#: Seconds the page gets to show the last states after the bots stop.
DRAIN_S = 3.0
START_TIMEOUT_S = 30.0
#: The goals of issue 17.
GOAL_P99_MS = 250.0
GOAL_CPU_PCT = 5.0
CHROMIUM_OPTIONS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--window-size=1280,1200",
    "--lang=en-GB",
    "--no-first-run",
    "--disable-extensions",
)
#: The page side: a MutationObserver noting each card's shown key with a timestamp.
OBSERVER_JS = """
const bench = window.__bench = { records: [], last: new Map() };
const observer = new MutationObserver(() => {
  const t = performance.timeOrigin + performance.now();
  for (const card of document.querySelectorAll("#tables .card")) {
    const facts = card.querySelector(".facts");
    const scores = [...card.querySelectorAll(".seat .score")].map((n) => n.textContent);
    const shown = (facts ? facts.textContent : "") + "|" + scores.join(";");
    if (bench.last.get(card.dataset.table) !== shown) {
      bench.last.set(card.dataset.table, shown);
      bench.records.push([card.dataset.table, shown, t]);
    }
  }
});
observer.observe(document.getElementById("tables"),
  { childList: true, subtree: true, characterData: true });
"""
NOW_JS = "return performance.timeOrigin + performance.now();"
#: What a card shows of a state (app.js, English): "East 1 · 0 honba · deposits 1,000
#: · 52 tiles left" (tiles and a game clock only when the state has them).
_FACTS = re.compile(
    r"^(?:(East|South|West|North) (\d+)|–) · (\d+) honba · deposits ([\d,.]+)"
    r"(?: · (\d+) tiles left)?"
)
_WINDS = {"East": "E", "South": "S", "West": "W", "North": "N"}

Key = tuple[Any, ...]


class CannotStart(Exception):
    """Part of the parlor (broker, dashboard, browser, tables) did not come up."""


# --- keys: what a card shows of a state ------------------------------------------------


def state_key(state: dict[str, Any]) -> Key:
    """The key of a state payload: round, honba, deposits, tiles left, scores."""
    rnd = state.get("round")
    where = (rnd["wind"], rnd["number"]) if isinstance(rnd, dict) else None
    tiles = state.get("tiles_left")
    return (
        where,
        int(state.get("honba") or 0),
        float(state.get("deposits") or 0),
        tiles if isinstance(tiles, int) else None,
        tuple(float(s) for s in state.get("scores") or ()),
    )


def dom_key(shown: str) -> Key | None:
    """The key of what the observer saw on a card (``facts|score;score;...``), or None
    when the card shows no state."""
    facts, _, scores = shown.partition("|")
    found = _FACTS.match(facts)
    if found is None:
        return None
    wind, number, honba, deposits, tiles = found.groups()
    try:
        values = tuple(float(s.replace(",", "")) for s in scores.split(";"))
    except ValueError:
        return None
    return (
        (_WINDS[wind], int(number)) if wind else None,
        int(honba),
        float(deposits.replace(",", "")),
        int(tiles) if tiles else None,
        values,
    )


# --- matching what left the daemons with what the page showed ---------------------------


@dataclass(frozen=True)
class Sent:
    """A state message leaving a daemon: its table, key, the time it was written to the
    socket and the time the publisher handed it to its MQTT client (epoch s)."""

    table: str
    key: Key
    t: float
    handed: float = 0.0


@dataclass(frozen=True)
class Shown:
    """A card showing a key, at a time (epoch s, on this process's clock)."""

    table: str
    key: Key | None
    t: float


@dataclass(frozen=True)
class Sample:
    """One change of a card: when it left the daemon and how long until the DOM showed
    it (or a newer change, then ``coalesced``)."""

    table: str
    sent: float
    latency: float
    coalesced: bool


@dataclass
class Matched:
    """The samples, and what could not be matched."""

    samples: list[Sample] = field(default_factory=list)
    #: Changes never shown (nor anything newer of their table).
    not_shown: list[Sent] = field(default_factory=list)
    #: Cards showing a key no earlier state of that table had.
    unmatched: int = 0


def changes(sent: Sequence[Sent]) -> list[Sent]:
    """Per table, consecutive states with one key folded into the first of them."""
    last: dict[str, Key] = {}
    out: list[Sent] = []
    for item in sorted(sent, key=lambda s: s.t):
        if last.get(item.table) != item.key:
            last[item.table] = item.key
            out.append(item)
    return out


def match(sent: Sequence[Sent], shown: Sequence[Shown], slack: float = 0.0) -> Matched:
    """Time every change in ``sent`` by the first of ``shown`` with its table showing it or
    a newer change. A card's key is taken for the newest change of that key that left at
    most ``slack`` seconds after the card showed it (the clock offset's uncertainty)."""
    result = Matched()
    by_table: dict[str, list[Sent]] = {}
    for change in changes(sent):
        by_table.setdefault(change.table, []).append(change)
    done = dict.fromkeys(by_table, 0)
    for seen in sorted(shown, key=lambda s: s.t):
        if seen.key is None:
            continue  # a card before its table's first state (availability came first)
        table = by_table.get(seen.table, [])
        found = next(
            (
                i
                for i in range(len(table) - 1, -1, -1)
                if table[i].key == seen.key and table[i].t <= seen.t + slack
            ),
            None,
        )
        if found is None:
            result.unmatched += 1
            continue
        for i in range(done[seen.table], found + 1):
            result.samples.append(
                Sample(seen.table, table[i].t, seen.t - table[i].t, coalesced=i < found)
            )
        done[seen.table] = max(done[seen.table], found + 1)
    for name, table in by_table.items():
        result.not_shown.extend(table[done[name] :])
    return result


def summary_ms(samples: Sequence[Sample]) -> dict[str, Any]:
    """p50/p99/max/mean of the samples' latencies in milliseconds, and the coalesced."""
    ms = common.summary_us([round(s.latency * 1e9) for s in samples])
    out: dict[str, Any] = {"n": ms["n"]}
    for name in ("p50", "p99", "max", "mean"):
        if f"{name}_us" in ms:
            out[f"{name}_ms"] = round(ms[f"{name}_us"] / 1000, 1)
    out["coalesced"] = sum(s.coalesced for s in samples)
    return out


# --- the parlor's processes --------------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def hwm_mb(pid: int) -> float:
    """Peak resident set size (VmHWM) of ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (a browser's renderer, GPU and utility
    processes under its driver)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children.get(current, []))
    return out


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and its descendants alive now."""
    total = 0.0
    for member in descendants(pid):
        with contextlib.suppress(OSError):
            total += common.cpu_s(member)
    return total


def _last_line(log: Path) -> str:
    lines = log.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else "no output"


async def _wait_port(port: int, proc: asyncio.subprocess.Process, what: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.returncode is not None:
            raise CannotStart(f"{what} exited at start: {_last_line(log)}")
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise CannotStart(f"{what} did not listen on 127.0.0.1:{port}") from None
            await asyncio.sleep(0.05)
            continue
        writer.close()
        return


async def _spawn(argv: list[str], log: Path, env: dict[str, str] | None = None) -> Any:
    with log.open("ab") as handle:
        try:
            return await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=handle, stderr=handle, env=env
            )
        except OSError as exc:
            raise CannotStart(f"cannot run {argv[0]}: {exc.strerror or exc}") from None


@contextlib.asynccontextmanager
async def mosquitto(folder: Path) -> AsyncIterator[tuple[int, int]]:
    """Mosquitto on 127.0.0.1 (anonymous, no persistence); yields (port, pid)."""
    exe = shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.access("/usr/sbin/mosquitto", os.X_OK) else None
    )
    if exe is None:
        raise CannotStart("mosquitto is not installed (apt-get install mosquitto)")
    port = free_port()
    config = folder / "mosquitto.conf"
    # As root, mosquitto would drop to user 'mosquitto', who cannot read the folder.
    config.write_text(
        f"listener {port} 127.0.0.1\npersistence false\nallow_anonymous true\n"
        "log_dest stderr\nuser root\n"
    )
    log = folder / "mosquitto.log"
    proc = await _spawn([exe, "-c", str(config)], log)
    try:
        await _wait_port(port, proc, "mosquitto", log)
        yield port, proc.pid
    finally:
        await common.stop_daemon(proc)


@contextlib.asynccontextmanager
async def dashboard(folder: Path, broker_port: int) -> AsyncIterator[tuple[str, int]]:
    """``tablectl dashboard`` as its own process; yields (page URL, pid)."""
    port = free_port()
    log = folder / "dashboard.log"
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    broker = f"mqtt://127.0.0.1:{broker_port}"
    argv = [sys.executable, "-m", "tablectl", "dashboard", "--broker", broker]
    argv += ["--listen", f"127.0.0.1:{port}"]
    proc = await _spawn(argv, log, env)
    url = f"http://127.0.0.1:{port}/"
    try:
        await _wait_port(port, proc, "the dashboard", log)
        await asyncio.to_thread(_get, url + "api/me")
        yield url, proc.pid
    finally:
        await common.stop_daemon(proc)


def _get(url: str) -> None:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            answer.read()
    except OSError as exc:
        raise CannotStart(f"the dashboard did not answer {url}: {exc}") from None


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium driven by Selenium (Debian's chromium and chromium-driver)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        raise CannotStart(
            "chromium or chromedriver is not installed (apt-get install chromium chromium-driver)"
        )
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise CannotStart("selenium is not installed (pip install -e '.[dev]')") from None
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in CHROMIUM_OPTIONS:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-GB,en"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except WebDriverException as exc:
        raise CannotStart(f"chromium did not start: {exc.msg}") from None
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def calibrate(driver: Any, rounds: int = 30) -> tuple[float, float]:
    """The browser's clock minus this process's (s), from the execute_script round trip
    with the smallest delay; and half that delay (the offset's uncertainty)."""
    best = (0.0, float("inf"))
    for _ in range(rounds):
        t0 = time.time()
        browser = float(driver.execute_script(NOW_JS)) / 1000
        t1 = time.time()
        if t1 - t0 < best[1]:
            best = (browser - (t0 + t1) / 2, t1 - t0)
    return best[0], best[1] / 2


def harvest(driver: Any) -> list[list[Any]]:
    """Every record the page's observer made so far (taken in chunks)."""
    out: list[list[Any]] = []
    while True:
        chunk = driver.execute_script("return window.__bench.records.splice(0, 20000);")
        if not chunk:
            return out
        out.extend(chunk)


async def _page_shows(driver: Any, tables: Sequence[Table]) -> None:
    """Wait until the page is live and shows a state on every table's card."""
    script = (
        "return [document.getElementById('stream').textContent,"
        " document.querySelectorAll('#tables .card .facts').length];"
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    seen: list[Any] = []
    while time.monotonic() < deadline:
        for table in tables:
            if table.task.done():
                why = table.task.exception() if not table.task.cancelled() else "cancelled"
                raise CannotStart(f"{table.daemon.config.table_id}'s daemon stopped: {why}")
        seen = await asyncio.to_thread(driver.execute_script, script)
        if seen[0] == "live" and seen[1] >= len(tables):
            return
        await asyncio.sleep(0.2)
    raise CannotStart(f"the page did not show {len(tables)} tables (badge, cards: {seen})")


def scratch() -> str | None:
    """Where the tables' journals go: tmpfs when there is one. Twenty daemons share this
    process's event loop, and each journal commit's fsync (milliseconds on a busy disk)
    would hold all of them up: the load, not the dashboard, would be measured."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


# --- the tables ---------------------------------------------------------------------------


@contextlib.contextmanager
def timed_states(sent: list[Sent]) -> Iterator[None]:
    """Note each state message as it leaves a table's daemon: the publisher hands it to
    its MQTT client (``handed``), whose next socket write sends it (``t``)."""
    import paho.mqtt.client as paho

    original_send = BrokerLink._send
    original_write = paho.Client.loop_write
    waiting: dict[int, list[tuple[str, Key, float]]] = {}

    async def send(self: BrokerLink, client: Any, message: Any) -> None:
        if message.topic == self._topics.state:
            state = json.loads(message.payload)
            noted = (str(state.get("table")), state_key(state), time.time())
            waiting.setdefault(id(client._client), []).append(noted)
        await original_send(self, client, message)

    def loop_write(self: paho.Client) -> Any:
        noted = waiting.pop(id(self), None)
        if noted:
            now = time.time()
            sent.extend(Sent(table, key, now, handed) for table, key, handed in noted)
        return original_write(self)

    with (
        mock.patch.object(BrokerLink, "_send", send),
        mock.patch.object(paho.Client, "loop_write", loop_write),
    ):
        yield


@dataclass
class Table:
    """One simulated table with bots and its in-process daemon."""

    sim: SimTable
    daemon: Daemon
    task: asyncio.Task[None]


async def start_tables(count: int, broker_port: int, folder: Path, tag: str) -> list[Table]:
    """``count`` tables at a human pace, each publishing to the broker."""
    tables: list[Table] = []
    for index in range(count):
        preset = common.preset_for(index)
        table_id = f"t{index + 1:02d}"
        sim = SimTable(preset, index)
        assert sim.bots is not None
        sim.bots.pace = HUMAN_PACE_S
        url = await sim.start_sim(f"{tag}-{table_id}")
        settings = MqttSettings(host="127.0.0.1", port=broker_port, client_id=f"{tag}-{table_id}")
        config = config_for(
            url, preset, folder / f"{table_id}.sqlite3", table_id=table_id, mqtt=settings
        )
        daemon = Daemon(config, claim_window_s=common.FAST_CLAIM_S)
        tables.append(Table(sim, daemon, asyncio.create_task(daemon.run())))
    return tables


async def stop_tables(tables: Sequence[Table]) -> None:
    """Stop every daemon and its table."""
    for table in tables:
        table.daemon.stop.set()
    for table in tables:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(15):
                await table.task
        await table.sim.close()


def set_pace(tables: Sequence[Table], pace: float) -> None:
    """Seconds between two bot moves on every table (0: bot speed)."""
    for table in tables:
        assert table.sim.bots is not None
        table.sim.bots.pace = pace


# --- the run --------------------------------------------------------------------------


@dataclass
class Probe:
    """CPU seconds of the processes measured, and the wall clock, at one moment."""

    t: float
    cpu: dict[str, float]

    @classmethod
    def take(cls, pids: dict[str, int], browser: int) -> Probe:
        """Read them now (``browser``: the driver, whose process tree is the browser)."""
        cpu = {name: common.cpu_s(pid) for name, pid in pids.items()}
        cpu["browser"] = tree_cpu_s(browser)
        return cls(time.time(), cpu)

    def pct_since(self, start: Probe) -> dict[str, float]:
        """Each process's CPU since ``start`` as a percentage of one core."""
        wall = self.t - start.t
        return {
            name: round(100 * (self.cpu[name] - start.cpu[name]) / wall, 2) for name in self.cpu
        }


def phase_figures(
    name: str, start: Probe, end: Probe, matched: Matched, sent: Sequence[Sent], tables: int
) -> dict[str, Any]:
    """One phase's figures from the samples whose change left in it."""

    def inside(t: float) -> bool:
        return start.t <= t < end.t

    samples = [s for s in matched.samples if inside(s.sent)]
    wall = end.t - start.t
    messages = [s for s in sent if inside(s.t)]
    waits = common.summary_us([round((s.t - s.handed) * 1e9) for s in messages])
    cpu = end.pct_since(start)
    return {
        "phase": name,
        "seconds": round(wall, 1),
        "state_messages_per_s": round(len(messages) / wall, 1),
        "changes_per_s_per_table": round(len(samples) / wall / tables, 2),
        "latency": summary_ms(samples),
        "not_shown": sum(inside(s.t) for s in matched.not_shown),
        # Before the samples start: from the publisher's hand-over to the socket write.
        "client_wait_ms": {
            k[:-3]: round(v / 1000, 2) for k, v in waits.items() if k in ("p50_us", "p99_us")
        },
        "dashboard_cpu_pct": cpu["dashboard"],
        "broker_cpu_pct": cpu["broker"],
        "tables_cpu_pct": cpu["tables"],
        "browser_cpu_pct": cpu["browser"],
    }


async def run(tables: int, human_s: float, bot_s: float) -> dict[str, Any]:
    """Start the parlor, run both phases, match, and return the figures."""
    sent: list[Sent] = []
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-", dir=scratch()) as folder:
        tmp = Path(folder)
        async with (
            mosquitto(tmp) as (broker_port, broker_pid),
            dashboard(tmp, broker_port) as (url, dash_pid),
        ):
            with chromium() as driver:
                await asyncio.to_thread(driver.get, url)
                await asyncio.to_thread(driver.execute_script, OBSERVER_JS)
                pids = {"dashboard": dash_pid, "broker": broker_pid, "tables": os.getpid()}
                browser = driver.service.process.pid
                with timed_states(sent):
                    parlor = await start_tables(tables, broker_port, tmp, f"bench{os.getpid()}")
                    try:
                        await _page_shows(driver, parlor)
                        await asyncio.sleep(SETTLE_S)
                        offset, slack = await asyncio.to_thread(calibrate, driver)
                        human0 = Probe.take(pids, browser)
                        await asyncio.sleep(human_s)
                        human1 = Probe.take(pids, browser)
                        rss_human = common.rss_mb(dash_pid)
                        set_pace(parlor, 0.0)
                        await asyncio.sleep(bot_s)
                        bot1 = Probe.take(pids, browser)
                        rss_bot = common.rss_mb(dash_pid)
                        for table in parlor:
                            assert table.sim.bots is not None
                            table.sim.bots.stop()
                        await asyncio.sleep(DRAIN_S)
                        records = await asyncio.to_thread(harvest, driver)
                        offset_after, slack_after = await asyncio.to_thread(calibrate, driver)
                        hwm = hwm_mb(dash_pid)
                    finally:
                        await stop_tables(parlor)
    shown = [Shown(t, dom_key(text), ms / 1000 - offset) for t, text, ms in records]
    matched = match(sent, shown, slack + 0.001)
    human = phase_figures("human", human0, human1, matched, sent, tables)
    bot = phase_figures("bot", human1, bot1, matched, sent, tables)
    p99s = [p["latency"].get("p99_ms") for p in (human, bot)]
    return {
        "tables": tables,
        "human_p50_ms": human["latency"].get("p50_ms"),
        "human_p99_ms": human["latency"].get("p99_ms"),
        "bot_p50_ms": bot["latency"].get("p50_ms"),
        "bot_p99_ms": bot["latency"].get("p99_ms"),
        "bot_coalesced": bot["latency"]["coalesced"],
        "human_cpu_pct": human["dashboard_cpu_pct"],
        "bot_cpu_pct": bot["dashboard_cpu_pct"],
        "rss_mb_human": round(rss_human, 1),
        "rss_mb_bot": round(rss_bot, 1),
        "rss_mb_peak": round(hwm, 1),
        "goal_p99_met": all(p is not None and p < GOAL_P99_MS for p in p99s),
        "goal_cpu_met": human["dashboard_cpu_pct"] < GOAL_CPU_PCT,
        "phases": {"human": human, "bot": bot},
        "unmatched_dom_changes": matched.unmatched,
        "clock": {
            "offset_ms": round(offset * 1000, 2),
            "uncertainty_ms": round(slack * 1000, 2),
            "drift_ms": round((offset_after - offset) * 1000, 2),
            "uncertainty_after_ms": round(slack_after * 1000, 2),
        },
    }


def main() -> None:
    """Parse the sizes, run, print JSON (one line on stderr and exit 1 if the parlor
    cannot start)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--human-s", type=float, default=60.0, help="seconds at human pace")
    parser.add_argument("--bot-s", type=float, default=60.0, help="seconds at bot speed")
    parser.add_argument("--quick", action="store_true", help="10 s per phase")
    args = parser.parse_args()
    # The tables' teardown logs each lost link; only errors are worth a line here.
    logging.basicConfig(level=logging.ERROR, format="%(name)s: %(message)s")
    if args.tables < 1 or args.human_s <= 0 or args.bot_s <= 0:
        parser.error("--tables, --human-s and --bot-s must be positive")
    if args.quick:
        args.human_s = args.bot_s = 10.0
    try:
        result = asyncio.run(run(args.tables, args.human_s, args.bot_s))
    except CannotStart as exc:
        print(f"bench/dashboard.py: {exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
