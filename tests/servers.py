"""Servers the tests start themselves, shared by every test directory: a throwaway
PostgreSQL (``postgres``, one per test process; ``database``, a fresh ledger database on
SQLite and then on PostgreSQL) and a real Mosquitto (``mosquitto``). Registered once in
tests/conftest.py (``pytest_plugins``), so a test process that runs tests/ledger and
tests/parlor starts one PostgreSQL, not one per folder.

``postgres`` is a throwaway cluster (Debian's ``postgresql``: initdb and pg_ctl from
/usr/lib/postgresql/<version>/bin) in a temporary folder, on a free port of 127.0.0.1
only (no Unix socket), started once per test process and stopped after. initdb refuses
to run as root, so as root the cluster belongs to ``nobody`` (``runuser -u nobody``) in a
folder made for it in /tmp, which ``nobody`` can reach. Without PostgreSQL the tests that
need it skip, except under CI (``CI=true``), where they fail naming the install line.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Broker, free_port, missing_component, running_broker

INSTALL = "apt-get install -y postgresql"
#: Seconds pg_ctl waits for the server to start or stop.
PG_WAIT = 60


def _pg_program(name: str) -> str | None:
    """``name`` from the newest /usr/lib/postgresql/*/bin, else from PATH."""
    versions = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    return versions[-1] if versions else shutil.which(name)


@dataclass(frozen=True)
class Postgres:
    """A running throwaway PostgreSQL: its superuser ``ledger`` trusts loopback."""

    port: int
    host: str = "127.0.0.1"

    def url(self, database: str = "postgres") -> str:
        """A libpq URL to ``database`` on this server."""
        return f"postgresql://ledger@{self.host}:{self.port}/{database}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """One PostgreSQL server for this test process, stopped at its end."""
    initdb, pg_ctl = _pg_program("initdb"), _pg_program("pg_ctl")
    if initdb is None or pg_ctl is None:
        missing_component("PostgreSQL (initdb, pg_ctl)", INSTALL)
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "nobody", "--"] if as_root else []
    folder = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
    data, log = folder / "data", folder / "server.log"
    if as_root:
        os.chown(folder, *_nobody())
    port = free_port()

    def run(*argv: str) -> None:
        done = subprocess.run(
            [*prefix, *argv], check=False, capture_output=True, text=True, timeout=PG_WAIT + 30
        )
        if done.returncode != 0:
            detail = log.read_text() if log.exists() else ""
            pytest.fail(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}{detail}")

    try:
        # --no-sync and fsync=off: a throwaway cluster; durability is not under test here.
        run(initdb, "-D", str(data), "-U", "ledger", "--auth=trust", "-E", "UTF8",
            "--no-locale", "--no-sync")  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories=''"
            " -c fsync=off -c full_page_writes=off"
        )
        run(pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-t", str(PG_WAIT), "-w",
            "start")  # fmt: skip
        try:
            yield Postgres(port)
        finally:
            subprocess.run(
                [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                check=False,
                capture_output=True,
                timeout=PG_WAIT + 30,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _nobody() -> tuple[int, int]:
    import pwd

    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


@contextlib.contextmanager
def fresh_postgres_database(server: Postgres) -> Iterator[str]:
    """A new empty database on ``server`` (its URL), dropped after."""
    import psycopg

    name = f"ledger_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield server.url(name)
    finally:
        with psycopg.connect(server.url(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty ledger database: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "ledger.sqlite3")
        return
    server = request.getfixturevalue("postgres")
    with fresh_postgres_database(server) as url:
        yield url


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running anonymous Mosquitto on 127.0.0.1, stopped after the test."""
    yield from running_broker(tmp_path)
