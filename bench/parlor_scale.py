"""Parlor scale: N tables against one broker, one ledger and one dashboard (issue 30 item 6).

Run from the repository root::

    .venv/bin/python bench/parlor_scale.py [--tables 100] [--sweep 20,50,100]
        [--human-s 60] [--step-s 10] [--db URL | --postgres] [--broker-nodelay]
        [--no-browser] [--markdown]

On this machine: Mosquitto on 127.0.0.1 (a free port, no persistence; Debian's default
``set_tcp_nodelay false`` unless ``--broker-nodelay``), ``tablectl ledger run`` and
``tablectl dashboard`` as their own processes, sharing one config file (``[ledger]``:
the dashboard reads the finished games from the ledger's database as in a parlor), the
page in headless Chromium, and ``--tables`` simulated tables in this process
(bench/parlor_scale_tables.py: each a real ``TablePublisher`` with its own MQTT
connection and a real journal with its ledger outbox, replaying a real game recorded
from a daemon at the start of the run). Every message on the table topics is checked
against docs/mqtt's schemas and its topic against those the recording daemons used
(bench/parlor_scale_contract.py). The ledger's database is SQLite in a folder on disk
(``synchronous=FULL``: an fsync per game), or ``--db postgresql://...``, or
``--postgres``: a throwaway PostgreSQL cluster on a free loopback port (initdb/pg_ctl
as in tests/ledger, fsync left on).

Human pace, per table: the recorded daemon's ``publish_state`` calls, one every
``--state-s`` seconds (2 s: a take or a discard), of which the publisher sends the
changed ones (about 0.30 state messages/s; 0.34 messages/s with the seat scores, events
and hands); 110-145 states a hand, so a hand every 4-5 minutes and a game every 15-50.
States are not compressed. Game ends are: at the true pace 100 tables end about 3 games
a minute, too few to time, so in the ``human`` phase every table also ends one game at
a random moment of the phase (``--human-s``, 60 s: about 35 times a parlor's game
rate), with the states going on at human pace.

Phases, one after the other, the states going on at human pace throughout:

* ``human``: as above; the dashboard's MQTT-to-page latency (bench/dashboard.py's
  method: a state leaving a table's MQTT socket to the card's DOM showing it), the ledger's
  lag (a game's end, journalled and published at the table, to the ledger's
  acknowledgement arriving at that table), and each process's CPU and RSS;
* ``burst``: every table ends a game at the same moment; the lag of each, and the write
  rate (games / time until the last acknowledgement);
* ``sustained``: games end at a fixed total rate (``--rates``, round robin over the
  tables) for ``--step-s`` each, rising until the ledger acknowledges less than 90% of
  the offered rate or its p99 lag passes 5 s: the saturation point.

CPU is utime + stime from /proc/PID/stat over each phase (% of one core), RSS is VmRSS
at the phase's end. ``tables`` is this process: the load generator, which shares the
machine's two cores with the rest.

Prints one JSON object (``--markdown``: also a table for docs/performance.md on stderr);
exits 1 with one line when a part of the parlor cannot be started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import logging
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import _common as common
import dashboard as page
from parlor_scale_contract import Contract
from parlor_scale_tables import Acks, GameScript, SimulatedTable, record_games

ROOT = Path(__file__).resolve().parents[1]
#: The recorded games (one each, tiles read): a hanchan with uma/oka, an east-only game,
#: a three-player game and a money preset (chips and P in the ledger).
PRESETS = ("tenhou", "kantan", "sanma-free", "mleague")
DEFAULT_RATES = (10, 25, 50, 100, 200, 400, 800)
#: The sustained run stops at a step whose p99 lag passes this, or ...
SATURATED_P99_S = 5.0
#: ... whose acknowledgements fall below this share of the games offered.
SATURATED_SHARE = 0.9
DRAIN_S = 30.0
PG_WAIT_S = 60


class CannotStart(page.CannotStart):
    """Part of the parlor did not come up."""


# --- the parlor's processes ------------------------------------------------------------


@contextlib.asynccontextmanager
async def mosquitto(folder: Path, nodelay: bool) -> AsyncIterator[tuple[int, int]]:
    """Mosquitto on 127.0.0.1 (anonymous, no persistence; ``nodelay``: its
    ``set_tcp_nodelay true``, off by default); yields (port, pid)."""
    exe = shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.access("/usr/sbin/mosquitto", os.X_OK) else None
    )
    if exe is None:
        raise CannotStart("mosquitto is not installed (apt-get install mosquitto)")
    port = page.free_port()
    config = folder / "mosquitto.conf"
    # As root, mosquitto would drop to user 'mosquitto', who cannot read the folder.
    config.write_text(
        f"listener {port} 127.0.0.1\npersistence false\nallow_anonymous true\n"
        f"log_dest stderr\nuser root\nset_tcp_nodelay {'true' if nodelay else 'false'}\n"
    )
    log = folder / "mosquitto.log"
    proc = await page._spawn([exe, "-c", str(config)], log)
    try:
        await page._wait_port(port, proc, "mosquitto", log)
        yield port, proc.pid
    finally:
        await common.stop_daemon(proc)


def write_config(folder: Path, database: str, broker_port: int) -> Path:
    """The one config file of the ledger and the dashboard (their ``[ledger]``)."""
    config = folder / "parlor.toml"
    config.write_text(
        f'[ledger]\ndatabase = {json.dumps(database)}\nbroker = "mqtt://127.0.0.1:{broker_port}"\n'
    )
    return config


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


@contextlib.asynccontextmanager
async def ledger(folder: Path, config: Path) -> AsyncIterator[int]:
    """``tablectl ledger run --config`` as its own process; yields its pid once its
    retained status says it is online."""
    log = folder / "ledger.log"
    argv = [sys.executable, "-m", "tablectl", "ledger", "run", "--config", str(config)]
    proc = await page._spawn(argv, log, _env())
    try:
        deadline = time.monotonic() + page.START_TIMEOUT_S
        while "online at" not in log.read_text(errors="replace"):
            if proc.returncode is not None:
                raise CannotStart(f"the ledger exited at start: {page._last_line(log)}")
            if time.monotonic() > deadline:
                raise CannotStart(f"the ledger did not come online: {page._last_line(log)}")
            await asyncio.sleep(0.05)
        yield proc.pid
    finally:
        await common.stop_daemon(proc)


@contextlib.asynccontextmanager
async def dashboard(folder: Path, config: Path, broker_port: int) -> AsyncIterator[tuple[str, int]]:
    """``tablectl dashboard --config`` (the ledger's database for its games); yields
    (page URL, pid)."""
    port = page.free_port()
    log = folder / "dashboard.log"
    argv = [sys.executable, "-m", "tablectl", "dashboard", "--config", str(config)]
    argv += ["--broker", f"mqtt://127.0.0.1:{broker_port}", "--listen", f"127.0.0.1:{port}"]
    proc = await page._spawn(argv, log, _env())
    url = f"http://127.0.0.1:{port}/"
    try:
        await page._wait_port(port, proc, "the dashboard", log)
        await asyncio.to_thread(page._get, url + "api/me")
        yield url, proc.pid
    finally:
        await common.stop_daemon(proc)


def _pg_program(name: str) -> str | None:
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return found[-1] if found else shutil.which(name)


@contextlib.contextmanager
def postgres() -> Iterator[tuple[str, int]]:
    """A throwaway PostgreSQL cluster on a free port of 127.0.0.1 (no Unix socket), as
    tests/ledger starts one but with fsync on; yields (URL, postmaster pid). As root the
    cluster belongs to ``nobody`` (initdb refuses root)."""
    initdb, pg_ctl = _pg_program("initdb"), _pg_program("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise CannotStart("PostgreSQL is not installed (apt-get install postgresql)")
    prefix = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="bench-parlor-pg-"))
    data, log = folder / "data", folder / "server.log"
    if prefix:
        import pwd

        entry = pwd.getpwnam("nobody")
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    port = page.free_port()

    def run(*argv: str) -> None:
        done = subprocess.run(
            [*prefix, *argv], check=False, capture_output=True, text=True, timeout=PG_WAIT_S + 30
        )
        if done.returncode != 0:
            raise CannotStart(f"{Path(argv[0]).name} failed: {done.stderr.strip()[-200:]}")

    try:
        run(initdb, "-D", str(data), "-U", "ledger", "--auth=trust", "-E", "UTF8", "--no-locale")
        options = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories=''"
        run(pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start")
        try:
            pid = int((data / "postmaster.pid").read_text().split()[0])
            yield f"postgresql://ledger@127.0.0.1:{port}/postgres", pid
        finally:
            subprocess.run(
                [*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"],
                check=False,
                capture_output=True,
                timeout=PG_WAIT_S + 30,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- measuring ---------------------------------------------------------------------------


class Probe:
    """CPU seconds of the measured processes (a database server with its children, the
    browser as its driver's tree) at one moment."""

    def __init__(self, pids: dict[str, int], trees: dict[str, int]) -> None:
        self.t = time.time()
        self.cpu = {name: _cpu(pid) for name, pid in pids.items()}
        self.cpu.update({name: page.tree_cpu_s(pid) for name, pid in trees.items()})

    def pct_since(self, start: Probe) -> dict[str, float]:
        """Each one's CPU since ``start``, as a percentage of one core."""
        wall = self.t - start.t
        return {n: round(100 * (self.cpu[n] - start.cpu[n]) / wall, 1) for n in self.cpu}


def _cpu(pid: int) -> float:
    with contextlib.suppress(OSError):
        return common.cpu_s(pid)
    return float("nan")


def rss(pids: dict[str, int], trees: dict[str, int]) -> dict[str, float]:
    """VmRSS (MiB) of each process (summed over a tree)."""
    out = {}
    for name, pid in pids.items():
        with contextlib.suppress(OSError):
            out[name] = round(common.rss_mb(pid), 1)
    for name, pid in trees.items():
        total = 0.0
        for member in page.descendants(pid):
            with contextlib.suppress(OSError):
                total += common.rss_mb(member)
        out[name] = round(total, 1)
    return out


def peaks(pids: dict[str, int]) -> dict[str, float]:
    """Peak RSS (VmHWM, MiB) of each process still running."""
    out = {}
    for name, pid in pids.items():
        with contextlib.suppress(OSError):
            out[name] = round(page.hwm_mb(pid), 1)
    return out


def lag_ms(lags: Sequence[float]) -> dict[str, Any]:
    """n, p50, p99 and max of lags (s) in milliseconds."""
    if not lags:
        return {"n": 0}
    ordered = sorted(lags)
    qs = statistics.quantiles(ordered, n=100, method="inclusive") if len(ordered) > 1 else None
    p50, p99 = (qs[49], qs[98]) if qs else (ordered[0], ordered[0])
    return {
        "n": len(ordered),
        "p50_ms": round(p50 * 1000, 1),
        "p99_ms": round(p99 * 1000, 1),
        "max_ms": round(ordered[-1] * 1000, 1),
    }


def page_ms(matched: page.Matched, start: float, end: float) -> dict[str, Any]:
    """The page's latencies of the state changes that left in ``[start, end)``."""
    samples = [s for s in matched.samples if start <= s.sent < end]
    out = page.summary_ms(samples)
    out["not_shown"] = sum(start <= s.t < end for s in matched.not_shown)
    return out


# --- the run ------------------------------------------------------------------------------


class Parlor:
    """The simulated tables and what they noted."""

    def __init__(self, scripts: Sequence[GameScript], count: int, port: int, folder: Path) -> None:
        self.acks = Acks()
        self.stop = asyncio.Event()
        rng = random.Random(count)
        self.tables = [
            SimulatedTable(
                f"t{i + 1:03d}",
                scripts[i % len(scripts)],
                port,
                folder / f"t{i + 1:03d}.sqlite3",
                self.acks,
                random.Random(rng.random()),
            )
            for i in range(count)
        ]
        self.streams: list[asyncio.Task[None]] = []

    async def start(self, state_s: float, ledger_online: bool) -> None:
        """Connect every table, wait for them (and the ledger's status), start playing."""
        for table in self.tables:
            table.start()
        deadline = time.monotonic() + page.START_TIMEOUT_S
        while not all(self._ready(t, ledger_online) for t in self.tables):
            if time.monotonic() > deadline:
                late = sum(not self._ready(t, ledger_online) for t in self.tables)
                raise CannotStart(f"{late} tables did not connect (or see the ledger)")
            await asyncio.sleep(0.1)
        self.streams = [asyncio.create_task(t.stream(state_s, self.stop)) for t in self.tables]

    @staticmethod
    def _ready(table: SimulatedTable, ledger_online: bool) -> bool:
        return table.publisher.connected and (not ledger_online or table.sync._ledger is not None)

    async def close(self) -> None:
        """Stop playing, flush and disconnect every table."""
        self.stop.set()
        await asyncio.gather(*self.streams, return_exceptions=True)
        await asyncio.gather(*(t.close() for t in self.tables), return_exceptions=True)

    async def drain(self, within: float) -> None:
        """Wait until every game ended so far is acknowledged (or ``within`` passes)."""
        deadline = time.monotonic() + within
        changed = self.acks.changed
        while self.acks.missing() and (left := deadline - time.monotonic()) > 0:
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), left)

    async def scatter(self, seconds: float) -> None:
        """Every table ends one game at a random moment of the next ``seconds``."""
        rng = random.Random(len(self.tables))
        moments = sorted((rng.uniform(0, seconds), t) for t in self.tables)
        start = time.monotonic()
        for at, table in moments:
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            table.end_game()
        await asyncio.sleep(max(0.0, start + seconds - time.monotonic()))

    async def offer(self, rate: float, seconds: float) -> None:
        """End games at ``rate`` per second in all, round robin over the tables."""
        start = time.monotonic()
        done = 0
        while (elapsed := time.monotonic() - start) < seconds:
            due = int(elapsed * rate) + 1
            while done < due:
                self.tables[done % len(self.tables)].end_game()
                done += 1
            await asyncio.sleep(min(0.01, 1 / rate))


async def run(
    count: int,
    scripts: Sequence[GameScript],
    args: argparse.Namespace,
    database: str | None,
    db_pid: int | None,
    daemon_leaves: set[str],
) -> dict[str, Any]:
    """One parlor of ``count`` tables through the three phases; every table message
    checked against the contract and its topics against the recorded daemons'."""
    sent: list[page.Sent] = []
    ledger_dir = Path(tempfile.mkdtemp(prefix="bench-parlor-ledger-", dir=args.ledger_dir))
    try:
        with tempfile.TemporaryDirectory(prefix="bench-parlor-", dir=page.scratch()) as folder:
            tmp = Path(folder)
            async with (
                mosquitto(tmp, args.broker_nodelay) as (port, broker_pid),
                Contract(port) as contract,
            ):
                db = database or str(ledger_dir / "ledger.sqlite3")
                config = write_config(tmp, db, port)
                async with contextlib.AsyncExitStack() as services:
                    # Both at once: each is a Python start-up of a second or two.
                    ledger_pid, (url, dash_pid) = await asyncio.gather(
                        services.enter_async_context(ledger(tmp, config)),
                        services.enter_async_context(dashboard(tmp, config, port)),
                    )
                    pids = {"broker": broker_pid, "ledger": ledger_pid, "dashboard": dash_pid}
                    pids["tables"] = os.getpid()
                    trees = {"postgres": db_pid} if db_pid else {}
                    with contextlib.ExitStack() as stack:
                        driver = None
                        if not args.no_browser:
                            driver = stack.enter_context(page.chromium())
                            await asyncio.to_thread(driver.get, url)
                            await asyncio.to_thread(driver.execute_script, page.OBSERVER_JS)
                            trees["browser"] = driver.service.process.pid
                        stack.enter_context(page.timed_states(sent))
                        out = await _phases(
                            count, scripts, args, tmp, port, pids, trees, driver, sent, contract
                        )
                # After the tables closed: their last messages were counted too.
                out["contract"] = contract.summary(daemon_leaves)
                return out
    finally:
        shutil.rmtree(ledger_dir, ignore_errors=True)


async def _phases(
    count: int,
    scripts: Sequence[GameScript],
    args: argparse.Namespace,
    tmp: Path,
    port: int,
    pids: dict[str, int],
    trees: dict[str, int],
    driver: Any,
    sent: list[page.Sent],
    contract: Contract,
) -> dict[str, Any]:
    parlor = Parlor(scripts, count, port, tmp)
    out: dict[str, Any] = {"tables": count}
    try:
        await parlor.start(args.state_s, ledger_online=True)
        if driver is not None:
            await _page_shows(driver, count)
            offset, slack = await asyncio.to_thread(page.calibrate, driver)
            await asyncio.sleep(page.SETTLE_S)
        acks = parlor.acks

        # human: states at human pace, a game end per table somewhere in the phase.
        p0, m0 = Probe(pids, trees), contract.total
        await parlor.scatter(args.human_s)
        p1, m1 = Probe(pids, trees), contract.total
        human_rss = rss(pids, trees)
        await parlor.drain(DRAIN_S)
        out["human"] = {
            "seconds": round(p1.t - p0.t, 1),
            "states_per_s": round(sum(p0.t <= s.t < p1.t for s in sent) / (p1.t - p0.t), 1),
            # Every table topic: states, seat scores, events, hands, games, ledger, acks.
            "messages_per_s": round((m1 - m0) / (p1.t - p0.t), 1),
            "games": acks.ended_between(p0.t, p1.t),
            "ledger_lag": lag_ms(acks.lags(p0.t, p1.t)),
            "cpu_pct": p1.pct_since(p0),
            "rss_mb": human_rss,
        }

        # burst: every table ends a game at once.
        b0 = Probe(pids, trees)
        for table in parlor.tables:
            table.end_game()
        await parlor.drain(DRAIN_S)
        b1 = Probe(pids, trees)
        burst_acks = [t for k, t in acks.acked.items() if acks.ended[k] >= b0.t]
        last = max(burst_acks, default=b1.t)
        out["burst"] = {
            "games": count,
            "acknowledged": len(burst_acks),
            "all_in_s": round(last - b0.t, 2),
            "games_per_s": round(len(burst_acks) / max(last - b0.t, 1e-6), 1),
            "ledger_lag": lag_ms(acks.lags(b0.t, b1.t)),
            "cpu_pct": b1.pct_since(b0),
        }

        # sustained: a rising offered rate until the ledger falls behind.
        steps = []
        s_start = time.time()
        for rate in args.rates:
            s0 = Probe(pids, trees)
            await parlor.offer(rate, args.step_s)
            s1 = Probe(pids, trees)
            acked = acks.acked_between(s0.t, s1.t)
            lags = acks.lags(s0.t, s1.t)
            # A game not acknowledged by the step's end counts at least that late.
            behind = [
                s1.t - t for k, t in acks.ended.items() if s0.t <= t < s1.t and k not in acks.acked
            ]
            step = {
                "offered_per_s": rate,
                "stored_per_s": round(acked / (s1.t - s0.t), 1),
                "ledger_lag": lag_ms(lags + behind),
                "unacknowledged_at_end": len(behind),
                "cpu_pct": s1.pct_since(s0),
                "rss_mb": rss(pids, trees),
            }
            steps.append(step)
            p99 = step["ledger_lag"].get("p99_ms", 0) / 1000
            if step["stored_per_s"] < SATURATED_SHARE * rate or p99 > SATURATED_P99_S:
                break
        await parlor.drain(DRAIN_S * 2)
        s_end = time.time()
        out["sustained"] = steps
        out["saturation_games_per_s"] = max((s["stored_per_s"] for s in steps), default=None)
        out["lost"] = acks.missing()
        out["games_ended"] = len(acks.ended)
        if driver is not None:
            await asyncio.sleep(page.DRAIN_S)
            records = await asyncio.to_thread(page.harvest, driver)
            shown = [page.Shown(t, page.dom_key(x), ms / 1000 - offset) for t, x, ms in records]
            matched = page.match(sent, shown, slack + 0.001)
            out["human"]["page"] = page_ms(matched, p0.t, p1.t)
            out["burst"]["page"] = page_ms(matched, b0.t, b1.t)
            out["sustained_page"] = page_ms(matched, s_start, s_end)
            out["page_unmatched"] = matched.unmatched
        out["rss_mb_peak"] = peaks(pids)
    finally:
        await parlor.close()
    return out


async def _page_shows(driver: Any, count: int) -> None:
    script = (
        "return [document.getElementById('stream').textContent,"
        " document.querySelectorAll('#tables .card .facts').length];"
    )
    deadline = time.monotonic() + page.START_TIMEOUT_S * 2
    seen: list[Any] = []
    while time.monotonic() < deadline:
        seen = await asyncio.to_thread(driver.execute_script, script)
        if seen[0] == "live" and seen[1] >= count:
            return
        await asyncio.sleep(0.2)
    raise CannotStart(f"the page did not show {count} tables (badge, cards: {seen})")


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Record the games, then run each parlor size of the sweep."""
    with tempfile.TemporaryDirectory(prefix="bench-parlor-rec-", dir=page.scratch()) as rec:
        async with page.mosquitto(Path(rec)) as (port, _pid), Contract(port) as daemons:
            scripts = await record_games(args.presets, Path(rec), port)
            # The daemons' last messages (their games) on their way through the broker.
            await daemons.wait_for("games", len(scripts))
    # What real daemons published on their table topics during their games.
    daemon_leaves = daemons.leaves()
    out: dict[str, Any] = {
        "games": [
            {"rules": s.rules, "players": s.players, "states": s.states, "hands": s.hands}
            for s in scripts
        ],
        "state_s": args.state_s,
        "broker_nodelay": args.broker_nodelay,
        "daemon_contract": daemons.summary(daemon_leaves),
        "runs": [],
    }
    with contextlib.ExitStack() as stack:
        database, db_pid = args.db, None
        if args.postgres:
            database, db_pid = stack.enter_context(postgres())
        out["database"] = "postgresql" if database else "sqlite"
        for count in args.sweep:
            try:
                out["runs"].append(await run(count, scripts, args, database, db_pid, daemon_leaves))
            except page.CannotStart as exc:
                if not out["runs"]:
                    raise
                # A larger parlor would not start either; keep what the smaller ones gave.
                out["runs"].append({"tables": count, "error": str(exc)})
                break
    return out


def markdown(result: dict[str, Any]) -> str:
    """The figures as a table for docs/performance.md."""
    head = (
        "| tables | states/s | page p99 human / ledger max (ms) | lag p50/p99 human (ms) "
        "| burst: all in (s), lag p99 (ms) | saturation (games/s) "
        "| CPU % human: broker / ledger / dashboard / tables "
        "| RSS MiB: broker / ledger / dashboard |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in result["runs"]:
        if "error" in r:
            lines.append(f"| {r['tables']} | {r['error']} |")
            continue
        h, b = r["human"], r["burst"]
        cpu, mem = h["cpu_pct"], r["rss_mb_peak"]
        shown = (h.get("page", {}), r.get("sustained_page", {}))
        page_p = " / ".join(str(p.get("p99_ms", "-")) for p in shown)
        lines.append(
            f"| {r['tables']} | {h['states_per_s']} | {page_p} "
            f"| {h['ledger_lag'].get('p50_ms')} / {h['ledger_lag'].get('p99_ms')} "
            f"| {b['all_in_s']}, {b['ledger_lag'].get('p99_ms')} | {r['saturation_games_per_s']} "
            f"| {cpu['broker']} / {cpu['ledger']} / {cpu['dashboard']} / {cpu['tables']} "
            f"| {mem.get('broker')} / {mem.get('ledger')} / {mem.get('dashboard')} |"
        )
    return "\n".join(lines)


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def main() -> None:
    """Parse, run, print JSON (one line on stderr and exit 1 if the parlor cannot start)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=100, help="one parlor of this size")
    parser.add_argument("--sweep", type=_sizes, help="sizes to run one after the other: 20,50,100")
    parser.add_argument("--human-s", type=float, default=60.0, help="the human phase (s)")
    parser.add_argument("--state-s", type=float, default=2.0, help="s between a table's states")
    parser.add_argument("--step-s", type=float, default=10.0, help="each sustained rate (s)")
    parser.add_argument("--rates", type=_sizes, default=list(DEFAULT_RATES), help="games/s")
    parser.add_argument("--presets", type=lambda t: t.split(","), default=list(PRESETS))
    db = parser.add_mutually_exclusive_group()
    db.add_argument("--db", metavar="URL", help="the ledger's database (default SQLite on disk)")
    db.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL cluster")
    parser.add_argument("--ledger-dir", help="where the SQLite ledger goes (default: $TMPDIR)")
    parser.add_argument(
        "--broker-nodelay", action="store_true", help="Mosquitto's set_tcp_nodelay true"
    )
    parser.add_argument("--no-browser", action="store_true", help="no Chromium, no page figures")
    parser.add_argument("--markdown", action="store_true", help="also a table on stderr")
    args = parser.parse_args()
    if args.human_s <= 0 or args.state_s <= 0 or args.step_s <= 0 or args.tables < 1:
        parser.error("--tables, --human-s, --state-s and --step-s must be positive")
    args.sweep = args.sweep or [args.tables]
    logging.basicConfig(level=logging.ERROR, format="%(name)s: %(message)s")
    try:
        result = asyncio.run(main_async(args))
    except page.CannotStart as exc:
        print(f"bench/parlor_scale.py: {exc}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"machine": common.machine(), **result}))
    if args.markdown:
        print(markdown(result), file=sys.stderr)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
