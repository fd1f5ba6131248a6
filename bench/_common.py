"""Helpers shared by the end-to-end benchmarks (latency, throughput, footprint, soak).

Not a benchmark itself. The scripts in ``bench/`` import it as ``_common`` (``python
bench/X.py`` puts ``bench/`` first on ``sys.path``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hw_sim import SimTable
from tablectl.rules.loader import preset_names

#: Presets in the order games rotate through them (seed ``s`` plays ``PRESETS[s % 10]``).
PRESETS: tuple[str, ...] = tuple(preset_names())
#: 115200 baud, 8N1: ten bit times per byte.
LINE_BYTES_PER_S = 115200 / 10
#: Claim window with bots, as ``tablectl demo --fast``.
FAST_CLAIM_S = 0.05
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def preset_for(seed: int) -> str:
    """The preset a seeded game plays when presets rotate."""
    return PRESETS[seed % len(PRESETS)]


def summary_us(samples_ns: Sequence[int]) -> dict[str, float]:
    """p50/p99/max (and mean) in microseconds of nanosecond samples."""
    us = sorted(s / 1000 for s in samples_ns)
    if not us:
        return {"n": 0}
    qs = statistics.quantiles(us, n=100, method="inclusive") if len(us) > 1 else [us[0]] * 99
    return {
        "n": len(us),
        "p50_us": round(qs[49], 1),
        "p99_us": round(qs[98], 1),
        "max_us": round(us[-1], 1),
        "mean_us": round(statistics.fmean(us), 1),
    }


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ""
    with contextlib.suppress(OSError):
        load = Path("/proc/loadavg").read_text().split()[0]
    return {
        "nproc": os.cpu_count(),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "kernel": platform.release(),
        # The 1-minute load when the run ended: anything but this run shows above ~1.
        "loadavg_1min": float(load) if load else None,
    }


def write_config(folder: Path, device: str, preset: str, journal: Path, table_id: str) -> Path:
    """A ``tablectl run`` config file for one table."""
    config = folder / f"{table_id}.toml"
    config.write_text(
        f'[table]\nid = "{table_id}"\ndevice = "{device}"\n'
        f'rules = "{preset}"\njournal = "{journal}"\n'
    )
    return config


async def start_daemon(
    config: Path, log: Path, env: dict[str, str] | None = None
) -> asyncio.subprocess.Process:
    """``tablectl run --config CONFIG`` as a child process (output appended to ``log``;
    ``env``: the child's whole environment, default this process's)."""
    with log.open("ab") as handle:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tablectl.cli", "run", "--config", str(config),
            stdout=handle, stderr=handle, env=env,
        )  # fmt: skip


async def stop_daemon(proc: asyncio.subprocess.Process | None, grace_s: float = 10.0) -> None:
    """SIGTERM (a clean stop), then SIGKILL if it does not end within ``grace_s``."""
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGTERM)
    try:
        async with asyncio.timeout(grace_s):
            await proc.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


class KilledDaemon:
    """``tablectl run --config CONFIG`` that is sent SIGKILL right after the table
    (``firmware``) has sent each event number of ``kill_at``, and started again on the
    same journal: the soaks' kill -9. :attr:`kills` counts the kills made."""

    def __init__(self, firmware: Any, config: Path, log: Path, kill_at: list[int]) -> None:
        self.firmware, self.config, self.log = firmware, config, log
        self.kill_at = kill_at
        self.kills = 0
        self.proc: asyncio.subprocess.Process | None = None
        self._restart = asyncio.Event()
        self._restarter: asyncio.Task[None] | None = None

    def _on_message(self, direction: str, msg: object) -> None:
        while direction == "tx" and self.kill_at and self.firmware.events_sent >= self.kill_at[0]:
            self.kill_at.pop(0)
            if self.proc is not None and self.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()  # SIGKILL, right after the table sent that event
                    self.kills += 1
                    self._restart.set()

    async def _restarts(self) -> None:
        while True:
            await self._restart.wait()
            self._restart.clear()
            if self.proc is not None:
                await self.proc.wait()
            self.proc = await start_daemon(self.config, self.log)

    async def start(self) -> None:
        """Start the daemon and watch the table's events for the kill points."""
        self.firmware.add_listener(self._on_message)
        self.proc = await start_daemon(self.config, self.log)
        self._restarter = asyncio.create_task(self._restarts())

    async def stop(self) -> None:
        """No more restarts; the daemon stopped (SIGTERM, see :func:`stop_daemon`)."""
        if self._restarter is not None:
            self._restarter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._restarter
        await stop_daemon(self.proc)


async def wait_ready(sim: SimTable, seats: Sequence[int], within: float = 30.0) -> None:
    """Wait until the daemon drove the table to its first prompt: the dealer (seat 0)
    shows ``ROLL?`` and ``seats`` show something."""
    fw = sim.firmware

    def ready() -> bool:
        return (
            fw.link_up
            and fw.consoles[0].line1.startswith("ROLL?")
            and all(fw.consoles[s].line1 for s in seats)
        )

    if not await fw.wait_for(ready, within):
        raise RuntimeError(f"the table did not come up: {sim.displays}")


def rss_mb(pid: int) -> float:
    """Resident set size (VmRSS) of ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (``/proc/PID/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def write_bytes(pid: int) -> int:
    """Bytes ``pid`` caused to be sent to storage so far (``write_bytes`` in /proc/PID/io:
    what reaches the disk, the SD card's wear, not what it wrote to the page cache)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def journal_hands(path: Path) -> int:
    """Hands played in a journal: one ``dice`` event starts each hand."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
        row = conn.execute('SELECT count(*) FROM events WHERE event LIKE \'{"type":"dice"%\'')
        return int(row.fetchone()[0])


def rounded(value: Any, digits: int = 3) -> Any:
    """Round floats inside nested dicts/lists for printing."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v, digits) for v in value]
    return value


def cpu_probe_us(rounds: int = 2000) -> float:
    """Microseconds one round of a fixed CPython workload takes here (dict, str and int
    work, like the daemon's). Run on a Pi, the ratio of the two probes turns this
    machine's per-press CPU into the Pi's without an estimate."""

    def workload() -> int:
        table: dict[str, int] = {}
        for i in range(1000):
            table[str(i)] = i * 2
        return sum(table.values())

    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(rounds // 3):
            workload()
        best = min(best, (time.perf_counter() - t0) / (rounds // 3))
    return round(best * 1e6, 1)


def keep_log(log: Path, to: Path) -> None:
    """Copy a daemon's log to ``to`` (a soak's ``--keep-logs``: the games that failed)."""
    to.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(log, to)
