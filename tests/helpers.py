"""Helpers shared by the tests (importable as ``tests.helpers``)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tablectl.replay import replay


def play(preset: str, *events: dict[str, Any]) -> dict[str, Any]:
    """Replay ``events`` under ``preset`` and return the replay output object."""
    lines = [json.dumps(e) for e in events]
    return replay(lines, preset).as_dict()


HANDS_4 = [(1, 30), (1, 40), (2, 25), (2, 30), (2, 20), (3, 30), (3, 60), (4, 30), (1, 110)]


def random_hand(rng: Any, seat: int, *, tsumo: bool) -> dict[str, Any]:
    """A plausible winning hand value for ``seat`` (han/fu, a limit hand or a yakuman)."""
    roll = rng.random()
    if roll < 0.05:
        return {"seat": seat, "yakuman": 1}
    if roll < 0.25:
        return {"seat": seat, "han": rng.randint(5, 13)}
    han, fu = rng.choice(HANDS_4)
    if not tsumo and fu == 20:
        fu = 30
    return {"seat": seat, "han": han, "fu": fu}


def random_event(rng: Any, rules: Any, *, legal_only: bool = True) -> dict[str, Any]:
    """One event that the rules should accept in most states (or, rarely, a bad one)."""
    players = rules.players
    seats = list(range(players))
    kind = rng.random()
    if not legal_only and kind < 0.05:
        return rng.choice(
            [
                {"type": "ron", "from": 0, "winners": [{"seat": 0, "han": 1, "fu": 30}]},
                {"type": "tsumo", "seat": players, "han": 2, "fu": 30},
                {"type": "ron", "from": 1, "winners": [{"seat": 2, "han": 1, "fu": 20}]},
                {"type": "abort", "reason": "nine_terminals"},
                {"type": "stop"},
                {"type": "riichi", "seat": -1},
            ]
        )
    if kind < 0.15:
        return {"type": "riichi", "seat": rng.choice(seats)}
    if kind < 0.45:
        discarder = rng.choice(seats)
        others = [s for s in seats if s != discarder]
        count = 1 if rng.random() < 0.9 else 2
        winners = rng.sample(others, count)
        if rules.flow.multiple_ron == "every_discarder":
            winners = winners[:1]
            discarders = [s for s in seats if s != winners[0]]
            frm: Any = rng.sample(discarders, rng.randint(1, 2))
        else:
            frm = discarder
        return {
            "type": "ron",
            "from": frm,
            "winners": [random_hand(rng, w, tsumo=False) for w in winners],
        }
    if kind < 0.65:
        return {"type": "tsumo", **random_hand(rng, rng.choice(seats), tsumo=True)}
    if kind < 0.92:
        tenpai = [s for s in seats if rng.random() < 0.4]
        return {"type": "draw", "tenpai": tenpai}
    if kind < 0.95 and rules.flow.abortive_draws:
        return {"type": "abort", "reason": rng.choice(rules.flow.abortive_draws)}
    if kind < 0.97:
        return {"type": "false_call", "seat": rng.choice(seats)}
    if kind < 0.98:
        return {"type": "chombo", "seat": rng.choice(seats)}
    return {"type": "stop"}


class RecordingPublisher:
    """A stand-in for the MQTT publisher that keeps what the table hands it, in order."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.games: list[dict[str, Any]] = []
        self.hands: list[dict[str, Any]] = []

    def publish_state(self, state: dict[str, Any]) -> None:
        """Keep a state."""
        self.states.append(state)

    def publish_event(self, event: dict[str, Any]) -> None:
        """Keep an event."""
        self.events.append(event)

    def publish_game(self, result: dict[str, Any]) -> None:
        """Keep a game's result."""
        self.games.append(result)

    def publish_hand(self, hand: dict[str, Any]) -> None:
        """Keep a settled hand."""
        self.hands.append(hand)


# --- a real Mosquitto on 127.0.0.1 (tests/daemon, tests/dashboard) ---------------------

#: How long a broker may take to start listening; it takes ~50 ms, CI can be slow.
BROKER_START_TIMEOUT = 10.0


def stop_process(process: subprocess.Popen[Any], timeout: float = 10.0) -> int | None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; reaped either way. Returns the exit
    status after SIGTERM, or None if it had to be killed."""
    process.terminate()
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def find_executable(name: str) -> str | None:
    """``name`` on PATH, or in /usr/sbin (the Debian package's place, not on users' PATH)."""
    found = shutil.which(name)
    if found is None and os.access(f"/usr/sbin/{name}", os.X_OK):
        found = f"/usr/sbin/{name}"
    return found


def missing_component(what: str, install: str) -> NoReturn:
    """A test needs ``what``, which is not there: skip with the reason and the ``install``
    line, except under CI (``CI=true``), where the test fails: CI must run every test."""
    reason = f"{what} not installed ({install})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run this test, .ci/run installs it", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


#: The Debian package of each system program a test runs.
PACKAGE_OF = {
    "mosquitto": "mosquitto",
    "mosquitto_passwd": "mosquitto",
    "openssl": "openssl",
    "cc": "gcc",
    "make": "make",
}


def require_executable(name: str) -> str:
    """The path of the program ``name``; without it, :func:`missing_component`."""
    path = find_executable(name)
    if path is None:
        missing_component(name, f"apt-get install -y {PACKAGE_OF.get(name, name)}")
    return path


def require_chromium() -> tuple[str, str]:
    """Chromium and its driver (Debian's chromium and chromium-driver): their paths;
    without either, :func:`missing_component`."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        missing_component("chromium or chromedriver", "apt-get install -y chromium chromium-driver")
    return binary, driver


#: The C device library (firmware/).
FIRMWARE = Path(__file__).resolve().parents[1] / "firmware"


def build_firmware() -> Path:
    """``make -C firmware SANITIZE=1 BUILD=build-san all``: the folder with table-posix and
    test-golden, built under AddressSanitizer and UBSan.

    Test processes (pytest-xdist's workers) build one at a time, under a lock in the build
    folder: two compilers writing one binary, or one rewriting it while another test runs
    it, would break both. After the first build, make finds everything up to date."""
    require_executable("cc")
    require_executable("make")
    build = FIRMWARE / "build-san"
    build.mkdir(exist_ok=True)
    with (build / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["make", "-s", "-C", str(FIRMWARE), "SANITIZE=1", "BUILD=build-san", "all"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, f"make -C firmware failed:\n{done.stdout}{done.stderr}"
    return build


#: ``tablectl`` as a command: the CLI's ``main`` in this interpreter, so the checkout under
#: test runs (not whatever ``tablectl`` script is first on PATH).
TABLECTL = [
    sys.executable,
    "-c",
    "import sys; from tablectl.cli import main; sys.exit(main(sys.argv[1:]))",
]


def run_tablectl(
    *args: str, stdin: str = "", cwd: Path | None = None, timeout: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run ``tablectl ARGS`` to its end: its exit code, stdout and stderr as text."""
    return subprocess.run(
        [*TABLECTL, *args],
        input=stdin,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def free_port() -> int:
    """A port nobody listens on now (the kernel's pick for port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sockets_to(port: int) -> list[socket.socket]:
    """This process's TCP sockets connected to ``port`` on loopback (duplicates)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            sock = socket.socket(fileno=os.dup(int(fd)))
            try:
                if sock.type == socket.SOCK_STREAM and sock.getpeername()[1] == port:
                    found.append(sock)
                    continue
            except (OSError, IndexError, TypeError):
                pass
            sock.close()
    return found


def assert_one_socket_without_nagle(port: int) -> None:
    """This process has one TCP connection to ``port``, and it sends at once
    (``TCP_NODELAY``: no wait for the peer's delayed ACK)."""
    sockets = sockets_to(port)
    try:
        assert len(sockets) == 1
        assert sockets[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
    finally:
        for sock in sockets:
            sock.close()


@dataclass
class Broker:
    """One Mosquitto process on 127.0.0.1:``port``; stop and start it at will."""

    executable: str
    workdir: Path
    port: int
    username: str | None = None
    password: str | None = None
    password_file: Path | None = None
    #: A folder with ca.pem, server.pem and server.key: a TLS listener that requires a
    #: client certificate signed by that CA.
    tls_dir: Path | None = None
    process: subprocess.Popen[bytes] | None = None

    host = "127.0.0.1"

    @property
    def log(self) -> Path:
        return self.workdir / "mosquitto.log"

    def start(self) -> None:
        """Start the broker and wait until its port accepts connections."""
        assert self.process is None, "broker already running"
        lines = [
            f"listener {self.port} {self.host}",
            # Retained messages vanish with a restart: the publisher must re-send them.
            "persistence false",
            "log_dest stderr",
            # As root, mosquitto would drop to user 'mosquitto', who cannot read tmp_path.
            "user root",
        ]
        if self.tls_dir is not None:
            lines += [
                f"cafile {self.tls_dir / 'ca.pem'}",
                f"certfile {self.tls_dir / 'server.pem'}",
                f"keyfile {self.tls_dir / 'server.key'}",
                "require_certificate true",
            ]
        if self.password_file is None:
            lines.append("allow_anonymous true")
        else:
            lines += ["allow_anonymous false", f"password_file {self.password_file}"]
        config = self.workdir / "mosquitto.conf"
        config.write_text("\n".join(lines) + "\n")
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [self.executable, "-c", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        deadline = time.monotonic() + BROKER_START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                self.process = None
                pytest.fail(f"mosquitto exited at start:\n{self.log.read_text()}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"mosquitto did not listen on {self.port}:\n{self.log.read_text()}")
                time.sleep(0.01)

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL) and reap it."""
        process, self.process = self.process, None
        if process is not None:
            stop_process(process, timeout=5)


def running_broker(tmp_path: Path, **kwargs: object) -> Iterator[Broker]:
    """Start a Broker on a free port in ``tmp_path``; stop it when the generator ends."""
    broker = Broker(require_executable("mosquitto"), tmp_path, free_port(), **kwargs)  # type: ignore[arg-type]
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


def journal_events(path: Path) -> int:
    """Events journalled so far in the journal at ``path`` (0 while it does not exist yet
    or is being created)."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0
