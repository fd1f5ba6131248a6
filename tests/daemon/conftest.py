"""Daemon test fixtures: a real Mosquitto broker on 127.0.0.1 for the MQTT tests.

``mosquitto`` is an anonymous broker, ``mosquitto_auth`` one that wants a password. Each
runs on a free port with its own temp config, is up (port accepting) before the test
starts, and is stopped after it, even when the test fails. Without Mosquitto (or openssl)
installed the tests skip, except under CI (``CI=true``), where they fail naming the install
line: CI must test MQTT.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import (  # noqa: F401 (Broker: test_mqtt.py imports it from here)
    Broker,
    free_port,
    require_executable,
    running_broker,
)


@pytest.fixture
def unused_port() -> int:
    """A free TCP port on 127.0.0.1 where nothing listens."""
    return free_port()


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running anonymous Mosquitto on 127.0.0.1, stopped after the test."""
    yield from running_broker(tmp_path)


def make_certificates(folder: Path) -> None:
    """A throw-away CA, a server certificate for 127.0.0.1 and a client certificate."""
    openssl = require_executable("openssl")

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
    yield from running_broker(tmp_path, tls_dir=tls_dir)


@pytest.fixture
def mosquitto_auth(tmp_path: Path) -> Iterator[Broker]:
    """A running Mosquitto that accepts only user ``table`` with password ``s3cret``."""
    password_file = tmp_path / "passwd"
    subprocess.run(
        [require_executable("mosquitto_passwd"), "-b", "-c", str(password_file), "table", "s3cret"],
        check=True,
        capture_output=True,
    )
    yield from running_broker(
        tmp_path, username="table", password="s3cret", password_file=password_file
    )
