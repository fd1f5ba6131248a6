"""Daemon test fixtures: a real Mosquitto broker on 127.0.0.1 for the MQTT tests.

``mosquitto`` is an anonymous broker, ``mosquitto_auth`` one that wants a password. Each
runs on a free port with its own temp config, is up (port accepting) before the test
starts, and is stopped after it, even when the test fails. Without Mosquitto installed
the tests skip, except under CI (``CI=true``), where they fail: CI must test MQTT.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: How long a broker may take to start listening; it takes ~50 ms, CI can be slow.
BROKER_START_TIMEOUT = 10.0


def _find(name: str) -> str | None:
    """``name`` on PATH, or in /usr/sbin (the Debian package's place, not on users' PATH)."""
    found = shutil.which(name)
    if found is None and os.access(f"/usr/sbin/{name}", os.X_OK):
        found = f"/usr/sbin/{name}"
    return found


def _require(name: str) -> str:
    path = _find(name)
    if path is None:
        reason = f"{name} not installed (apt-get install mosquitto)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must run the MQTT tests against a real broker")
        pytest.skip(reason)
    return path


def free_port() -> int:
    """A port nobody listens on now (the kernel's pick for port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _broker(tmp_path: Path, **kwargs: object) -> Iterator[Broker]:
    broker = Broker(_require("mosquitto"), tmp_path, free_port(), **kwargs)  # type: ignore[arg-type]
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def unused_port() -> int:
    """A free TCP port on 127.0.0.1 where nothing listens."""
    return free_port()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running anonymous Mosquitto on 127.0.0.1, stopped after the test."""
    yield from _broker(tmp_path)


def make_certificates(folder: Path) -> None:
    """A throw-away CA, a server certificate for 127.0.0.1 and a client certificate."""
    openssl = shutil.which("openssl")
    if openssl is None:
        if os.environ.get("CI") == "true":
            pytest.fail("openssl not installed; CI must test TLS client certificates")
        pytest.skip("openssl not installed")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.pem")  # fmt: skip
    for name, extra in (("server", "subjectAltName=IP:127.0.0.1"), ("client", "")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}",
            "-keyout", f"{name}.key", "-out", f"{name}.csr")  # fmt: skip
        ext = folder / f"{name}.ext"
        ext.write_text(extra + "\n" if extra else "basicConstraints=CA:FALSE\n")
        sign = ["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2"]
        run("x509", "-req", "-in", f"{name}.csr", *sign, "-out", f"{name}.pem",
            "-extfile", str(ext))  # fmt: skip


@pytest.fixture
def mosquitto_tls(tmp_path: Path) -> Iterator[Broker]:
    """A running Mosquitto on a TLS listener that wants a client certificate."""
    tls_dir = tmp_path / "tls"
    tls_dir.mkdir()
    make_certificates(tls_dir)
    yield from _broker(tmp_path, tls_dir=tls_dir)


@pytest.fixture
def mosquitto_auth(tmp_path: Path) -> Iterator[Broker]:
    """A running Mosquitto that accepts only user ``table`` with password ``s3cret``."""
    password_file = tmp_path / "passwd"
    subprocess.run(
        [_require("mosquitto_passwd"), "-b", "-c", str(password_file), "table", "s3cret"],
        check=True,
        capture_output=True,
    )
    yield from _broker(tmp_path, username="table", password="s3cret", password_file=password_file)
