"""The device library's bare-metal port on an emulated Cortex-M (``firmware/qemu.sh``): the
board, its table UART's pty (the link) and its harness UART, where a test types what a
person at the table would do and reads the board's answers."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import termios
import time
import tty
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers import FIRMWARE, missing_component, stop_process

#: What the board needs on this machine (Debian's packages).
INSTALL = "apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
QEMU_SH = FIRMWARE / "qemu.sh"
START_S = 120.0  # the first start builds the port


def require_toolchain() -> None:
    """The Arm toolchain with newlib, and QEMU's Arm boards; without them,
    :func:`tests.helpers.missing_component` (a skip, a failure under CI)."""
    gcc = shutil.which("arm-none-eabi-gcc")
    if gcc is None or shutil.which("qemu-system-arm") is None or shutil.which("make") is None:
        missing_component("the Arm toolchain or QEMU", INSTALL)
    libc = subprocess.run(
        [gcc, "-mcpu=cortex-m3", "-mthumb", "-print-file-name=libc.a"],
        capture_output=True, text=True, timeout=30, check=False,
    ).stdout.strip()  # fmt: skip
    if not os.path.isabs(libc):  # gcc echoes the bare name when it has no such file
        missing_component("newlib for arm-none-eabi", INSTALL)


class Harness:
    """The board's second UART, as the person at the table uses it: one line per action
    (``press 0 0x20``, ``take 1 40``, ``reset``, ``show``, ``stats``), the board's answers
    read back line by line."""

    def __init__(self, pty: str) -> None:
        self.fd = os.open(pty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.fd, termios.TCSANOW)
        self._buffer = b""
        self.seen: list[str] = []

    def close(self) -> None:
        """Close the pty."""
        os.close(self.fd)

    def type(self, line: str) -> None:
        """Type one line."""
        os.write(self.fd, line.encode() + b"\n")

    def readline(self, timeout: float = 30.0) -> str:
        """The board's next line (waiting up to ``timeout`` seconds for it)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], left)[0]:
                raise TimeoutError(f"the board said nothing more; it said {self.seen[-10:]}")
            try:
                self._buffer += os.read(self.fd, 4096)
            except BlockingIOError:
                continue
        line, self._buffer = self._buffer.split(b"\n", 1)
        text = line.decode(errors="replace")
        self.seen.append(text)
        return text

    def until(self, pattern: str, timeout: float = 30.0) -> re.Match[str]:
        """Read lines until one matches ``pattern``; its match."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.readline(max(0.0, deadline - time.monotonic())))
            if found:
                return found

    def ask(self, line: str, until: str, timeout: float = 30.0) -> list[str]:
        """Type ``line`` (a question: ``show``, ``stats``); the board's answer, from its
        first line (``show:``, ``stats:``) to the one starting with ``until``, within
        ``timeout`` seconds. Until the board has said anything, the question is asked again
        every 1.5 s: QEMU drops what the board writes to a pty until it has seen it opened
        (it looks once a second)."""
        prefix = until.split(":", maxsplit=1)[0] + ":"
        self._drain()  # an answer to an earlier question asked twice is not this one's
        deadline = time.monotonic() + timeout
        self.type(line)
        out: list[str] = []
        while True:
            left = max(0.0, deadline - time.monotonic())
            try:
                got = self.readline(left if self.seen else min(1.5, left))
            except TimeoutError:
                if self.seen or time.monotonic() >= deadline:
                    raise
                self.type(line)
                continue
            if out or got.startswith(prefix):
                out.append(got)
            if got.startswith(until):
                return out

    def _drain(self) -> None:
        """Read (into :attr:`seen`) whatever the board has said already."""
        while True:
            try:
                self.readline(0)
            except TimeoutError:
                return

    def show(self) -> dict[int, str]:
        """Each seat display's first line, as the board shows it now."""
        lines = self.ask("show", "show: end")
        seats = (re.match(r"show: seat (\d) ([^\t]*)", line) for line in lines)
        return {int(s.group(1)): s.group(2) for s in seats if s}

    def stats(self, timeout: float = 30.0) -> dict[str, int]:
        """The board's counters (the ``stats`` line)."""
        words = self.ask("stats", "stats:", timeout)[-1].split()[1:]
        return dict(zip(words[::2], map(int, words[1::2]), strict=True))


@contextmanager
def board(
    env: dict[str, str] | None = None, qemu_args: tuple[str, ...] = ()
) -> Iterator[tuple[str, Harness]]:
    """``firmware/qemu.sh`` running: the table UART's pty and the harness; the board is
    stopped (SIGTERM) at the end."""
    require_toolchain()
    args = [str(QEMU_SH), *(["--", *qemu_args] if qemu_args else [])]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + START_S
    while len(lines) < 2 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
    ptys = [re.search(r"/dev/pts/\d+", line) for line in lines]
    if len(ptys) < 2 or not all(ptys):
        stop_process(proc)
        raise AssertionError(f"firmware/qemu.sh printed no ptys: {lines}")
    harness = Harness(ptys[1].group(0))  # type: ignore[union-attr]
    try:
        yield ptys[0].group(0), harness  # type: ignore[union-attr]
    finally:
        harness.close()
        stop_process(proc)


def elf(build: str = "build-mps2-an385") -> Path:
    """The port's ELF in ``build`` (under firmware/)."""
    return FIRMWARE / build / "tfw.elf"
