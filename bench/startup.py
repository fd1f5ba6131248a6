"""Start-up: from spawning ``tablectl run`` to the first display on the table.

Run from the repository root::

    .venv/bin/python bench/startup.py [--starts 5] [--preset tenhou]

Each start is a fresh ``tablectl run --config ...`` process (new journal) whose device is
the pty of a simulated table in this process; the time runs from the spawn to the first
``SeatDisplay`` arriving at the simulated firmware (interpreter start, imports, config and
journal, link handshake, the first hand set up), then the daemon is stopped.

Two ways, because Python's bytecode cache decides a third of it:

* ``warm`` (the headline, ``start_to_display_s``): the modules' bytecode is cached, as on
  a Pi where pip compiled the installed package. The cache goes to a temporary
  ``PYTHONPYCACHEPREFIX`` (the source tree is not touched), filled by one start that is
  not counted;
* ``cold``: no bytecode cache (``PYTHONDONTWRITEBYTECODE=1``, as in the CI and
  development containers here): every module of the project is compiled at each start.

Also the import of ``tablectl.daemon`` alone in a fresh interpreter (warm), and which
optional modules a started daemon without a broker loaded (none is expected: the MQTT
client, pyserial's USB backend, the ``mahjong`` package load only when needed).

Prints one JSON object; the times are medians of ``--starts``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common

from firmware_bridge.messages import Message, SeatDisplay
from hw_sim import SimTable

START_TIMEOUT_S = 30.0
IMPORT_PROBE = (
    "import sys, time; t = time.perf_counter(); import tablectl.daemon; "
    "print(time.perf_counter() - t); "
    "print(','.join(m for m in ('aiomqtt', 'paho', 'serial', 'usb', 'mahjong', 'hypothesis')"
    " if m in sys.modules))"
)


async def one_start(tmp: Path, preset: str, index: int, env: dict[str, str]) -> float:
    """Seconds from spawning one daemon (environment ``env``) to its first seat display."""
    sim = SimTable(preset, index)
    url = await sim.start_pty()
    config = common.write_config(tmp, url, preset, tmp / f"start{index}.sqlite3", f"s{index}")
    first = asyncio.get_running_loop().create_future()

    def on_message(direction: str, msg: Message) -> None:
        if direction == "rx" and isinstance(msg, SeatDisplay) and not first.done():
            first.set_result(time.perf_counter())

    sim.firmware.add_listener(on_message)
    spawned = time.perf_counter()
    proc = await common.start_daemon(config, tmp / f"start{index}.log", env)
    try:
        async with asyncio.timeout(START_TIMEOUT_S):
            displayed: float = await first
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return displayed - spawned


def import_probe(env: dict[str, str]) -> tuple[float, list[str]]:
    """The import time of tablectl.daemon in a fresh interpreter, and optional modules it
    pulled in."""
    out = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE], check=True, capture_output=True, text=True, env=env
    ).stdout.splitlines()
    return float(out[0]), [m for m in out[1].split(",") if m]


def environments(cache: Path) -> dict[str, dict[str, str]]:
    """The child environments: ``warm`` with a bytecode cache in ``cache``, ``cold``
    without one."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    warm = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
    warm["PYTHONPYCACHEPREFIX"] = str(cache)
    return {"warm": warm, "cold": {**base, "PYTHONDONTWRITEBYTECODE": "1"}}


async def run(starts: int, preset: str) -> dict[str, Any]:
    """``starts`` daemon starts each way and as many import probes; the figures."""
    out: dict[str, Any] = {"starts": starts, "preset": preset}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        tmp = Path(folder)
        envs = environments(tmp / "pycache")
        await one_start(tmp, preset, 99, envs["warm"])  # fills the bytecode cache
        for name, env in envs.items():
            times = [await one_start(tmp, preset, i, env) for i in range(starts)]
            probes = [import_probe(env) for _ in range(starts)]
            out[name] = {
                "start_to_display_s": round(statistics.median(times), 3),
                "start_to_display_all_s": [round(t, 3) for t in times],
                "import_daemon_s": round(statistics.median(p[0] for p in probes), 3),
                "optional_modules_loaded": sorted({m for p in probes for m in p[1]}),
            }
    out["start_to_display_s"] = out["warm"]["start_to_display_s"]
    out["start_to_display_cold_s"] = out["cold"]["start_to_display_s"]
    return out


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--preset", default="tenhou")
    args = parser.parse_args()
    if args.starts < 1:
        parser.error("--starts must be at least 1")
    result = asyncio.run(run(args.starts, args.preset))
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    main()
