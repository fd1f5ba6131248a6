"""Start a table program in a process of its own and read the URL it prints."""

from __future__ import annotations

import re
import subprocess
import sys
import time

SERVE_TIMEOUT_S = 15.0
HW_SIM = [sys.executable, "-m", "hw_sim", "serve"]
HW_SIM_OPTIONS = ["--no-autoplay", "--speed", "0", "--log-level", "ERROR"]


def serve(
    endpoint: list[str], program: list[str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start ``program`` (default: ``python -m hw_sim serve`` without bots) on
    ``endpoint``; the process and the URL it printed."""
    command = [*HW_SIM, *endpoint, *HW_SIM_OPTIONS] if program is None else [*program, *endpoint]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        found = re.search(r"(socket://\S+|/dev/pts/\d+)", line)
        if found:
            return proc, found.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"hw_sim serve {endpoint} printed no URL")
