"""The device the hardware-in-the-loop tests talk to: the table at ``--device URL`` (or
``TABLECTL_DEVICE``), or else ``python -m hw_sim serve`` in a process of its own, once over
TCP and once over a pty, as a table's firmware on another board would be."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from tests.helpers import build_firmware, stop_process
from tests.hil.serve import serve


def _c_table(endpoint: list[str]) -> tuple[subprocess.Popen[str], str]:
    """The C firmware's POSIX port (built with the sanitizers), serving ``endpoint``."""
    return serve(endpoint, [str(build_firmware() / "table-posix")])


@pytest.fixture(params=["tcp", "pty", "c-tcp", "c-pty"])
def device_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of the table under test: hw_sim, then the C firmware, over TCP and a pty."""
    given = request.config.getoption("--device") or os.environ.get("TABLECTL_DEVICE")
    if given:
        if request.param != "tcp":
            pytest.skip("one run against the given --device")
        yield given
        return
    endpoint = ["--tcp", "0"] if request.param.endswith("tcp") else ["--pty"]
    if request.param.startswith("c-"):
        proc, url = _c_table(endpoint)
    else:
        proc, url = serve(endpoint)
    try:
        yield url
    finally:
        stop_process(proc)
