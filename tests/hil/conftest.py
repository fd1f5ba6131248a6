"""The device the hardware-in-the-loop tests talk to: the table at ``--device URL`` (or
``TABLECTL_DEVICE``), or else ``python -m hw_sim serve`` in a process of its own, once over
TCP and once over a pty, as a table's firmware on another board would be."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

SERVE_TIMEOUT_S = 15.0


def _serve(endpoint: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hw_sim", "serve", *endpoint, "--no-autoplay", "--speed", "0",
         "--log-level", "ERROR"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
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


@pytest.fixture(params=["tcp", "pty"])
def device_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of the table under test."""
    given = request.config.getoption("--device") or os.environ.get("TABLECTL_DEVICE")
    if given:
        if request.param != "tcp":
            pytest.skip("one run against the given --device")
        yield given
        return
    endpoint = ["--tcp", "0"] if request.param == "tcp" else ["--pty"]
    proc, url = _serve(endpoint)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
