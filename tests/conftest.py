"""Options for the whole test run.

``--device URL`` (or the environment variable ``TABLECTL_DEVICE``) points the
hardware-in-the-loop tests (``tests/hil``) at a real table instead of a simulated one
started in another process; see docs/hil.md. The servers' fixtures (``postgres``,
``database``, ``mosquitto``) are in tests/servers.py."""

from __future__ import annotations

import pytest

#: The servers the tests start themselves (PostgreSQL, Mosquitto), for every folder.
pytest_plugins = ["tests.servers"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--device URL``: the table the hardware-in-the-loop tests run against."""
    parser.addoption(
        "--device",
        default=None,
        metavar="URL",
        help="run tests/hil against the table at URL (a serial port, socket://, usb://) "
        "instead of `python -m hw_sim serve` over TCP and over a pty",
    )
