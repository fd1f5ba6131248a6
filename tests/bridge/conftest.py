"""Bridge test fixtures: fast link timings, and a guard that fails tests leaking resources.

The leak guard (autouse) fails a test that leaves an asyncio task running, an fd open (pty,
socket, serial port) or a bridge I/O thread alive, after giving closes a moment to settle.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

import firmware_bridge.link as link_mod
import firmware_bridge.usb_transport as usb_mod

#: Fast timings for tests; the ratios between them match production.
FAST = {
    "HEARTBEAT_INTERVAL": 0.05,
    "LINK_TIMEOUT": 0.3,
    "RETRANSMIT_TIMEOUT": 0.01,
    "RETRANSMIT_TIMEOUT_MIN": 0.005,
    "RETRANSMIT_TIMEOUT_MAX": 0.08,
    "HELLO_INTERVAL": 0.02,
    "HANDSHAKE_TIMEOUT": 0.5,
    "RECONNECT_DELAY": 0.01,
    "RECONNECT_DELAY_MAX": 0.05,
}


@pytest.fixture(autouse=True)
def fast_timing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Patch the link's timing constants small, as bellows patches T_RX_ACK_INIT."""
    for name, value in FAST.items():
        monkeypatch.setattr(link_mod, name, value)
    monkeypatch.setattr(usb_mod, "USB_READ_TIMEOUT_MS", 10)
    yield


@pytest.fixture
def patient_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """A silence timeout and a handshake timeout (5 s) no stall of a loaded machine
    reaches, for tests whose pair must come up and stay up and that do not test silence
    detection or a hello left unanswered: both links share one event loop, so a 0.3 s
    stall of it (a loaded machine) silences the peer too, and the link judges the silence
    before the peer's next heartbeat reaches it ("no frame from the peer for 0.3 s", seen
    under the "everything" faults); a 0.5 s stall during the handshake likewise ends it
    before the reply already on the line is read ("no hello reply within 0.5 s", seen in
    the link fuzz tests). Nothing waits for these timeouts, so they cost no time."""
    monkeypatch.setattr(link_mod, "LINK_TIMEOUT", 5.0)
    monkeypatch.setattr(link_mod, "HANDSHAKE_TIMEOUT", 5.0)


#: Longer than any test waits (exchange() gives up after 30 s): a timer this long never fires.
NEVER = 3600.0


@pytest.fixture
def lossless_timing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retransmission, silence and handshake timers that cannot fire, for tests of a
    lossless line.

    With the fast timings a retransmission is due 5 to 80 ms after a send: on a loaded
    machine the event loop can stall that long before it reads the ack, so the peer resends
    a frame that had arrived and it is counted as a duplicate (the same for a link lost to
    a 0.3 s stall, or a handshake to a 0.5 s one). On a lossless line only such stalls can
    cause them, so a test asserting "no retransmission, no duplicate, one handshake" turns
    the timers off: then those counts say that every frame arrived once and first time,
    whatever the scheduler did, and a frame that really went missing stalls the exchange
    into its timeout and fails the test.
    """
    for name in ("RETRANSMIT_TIMEOUT", "RETRANSMIT_TIMEOUT_MIN", "RETRANSMIT_TIMEOUT_MAX",
                 "LINK_TIMEOUT", "HANDSHAKE_TIMEOUT"):  # fmt: skip
        monkeypatch.setattr(link_mod, name, NEVER)


def _open_fds() -> dict[int, str]:
    fds = {}
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the fd of the listdir itself, already closed
            fds[int(name)] = os.readlink(f"/proc/self/fd/{name}")
    return fds


def _bridge_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("firmware_bridge-")]


@pytest.fixture(autouse=True)
async def no_leaks() -> AsyncIterator[None]:
    """Fail the test if it leaks a task, an fd or a bridge thread."""
    before = _open_fds()
    yield
    me = asyncio.current_task()
    tasks: list[asyncio.Task[object]] = []
    fds: dict[int, str] = {}
    threads: list[threading.Thread] = []
    for _ in range(50):  # closes may finish a few loop iterations or thread joins later
        tasks = [t for t in asyncio.all_tasks() if t is not me and not t.done()]
        now = _open_fds()
        fds = {fd: path for fd, path in now.items() if before.get(fd) != path}
        threads = _bridge_threads()
        if not tasks and not fds and not threads:
            return
        await asyncio.sleep(0.01)
    for t in tasks:
        t.cancel()
    pytest.fail(f"test leaked tasks={tasks!r} fds={fds!r} threads={threads!r}")
