"""``tablectl run`` refuses a journal it cannot use, in one line and with exit 78 (the
systemd unit's RestartPreventExitStatus), instead of a traceback and a restart loop."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import TABLECTL, free_port

EXIT_CONFIG = 78


def _config(tmp_path: Path, journal: Path) -> Path:
    # A table nobody answers for: the daemon waits for it, retrying, for ever.
    path = tmp_path / "tablectl.toml"
    path.write_text(
        f'id = "t1"\ndevice = "socket://127.0.0.1:{free_port()}"\nrules = "jboy"\n'
        f'journal = "{journal}"\n'
    )
    return path


def _run(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TABLECTL, "run", "--config", str(config)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x01" * 600), "not a journal"),
        (lambda p: p.write_text("hello, I am a text file\n" * 100), "not a journal"),
        (lambda p: None, "does not exist; create it"),
    ],
    ids=["truncated", "foreign", "missing-folder"],
)
def test_a_journal_that_cannot_be_used_stops_the_daemon_in_one_line(
    tmp_path: Path, make: object, says: str
) -> None:
    journal = tmp_path / "state" / "journal.sqlite3"
    if says != "does not exist; create it":
        journal.parent.mkdir()
        make(journal)  # type: ignore[operator]
    done = _run(_config(tmp_path, journal))
    assert done.returncode == EXIT_CONFIG
    lines = [line for line in done.stderr.splitlines() if "tablectl run:" in line]
    assert len(lines) == 1 and says in lines[0] and str(journal) in lines[0]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "state").exists() or says != "does not exist; create it"


def test_a_second_daemon_on_the_same_journal_refuses(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    config = _config(tmp_path, journal)
    first = subprocess.Popen(
        [*TABLECTL, "run", "--config", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not journal.exists():  # the first daemon holds the lock before it opens this
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.05)
        done = _run(config)
        assert done.returncode == EXIT_CONFIG
        assert f"another tablectl (pid {first.pid}) is using this journal" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        first.terminate()
        first.wait(timeout=30)


async def test_a_table_that_wants_signing_is_refused_and_retried_not_fatal(tmp_path: Path) -> None:
    import asyncio

    from hw_sim import SimTable
    from tablectl.config import config_for
    from tablectl.daemon import Daemon

    sim = SimTable("jboy", 1, signing_key=bytes(range(32)))
    port = await sim.start_tcp()
    daemon = Daemon(config_for(f"socket://127.0.0.1:{port}", "jboy", tmp_path / "j.sqlite3"))
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(30):
            while daemon.refused is None:  # noqa: ASYNC110
                assert not task.done(), task
                await asyncio.sleep(0.05)
        assert "sign" in daemon.refused
        await asyncio.sleep(1.0)
        assert not task.done()  # still there, retrying
    finally:
        daemon.stop.set()
        await task
        await sim.close()


async def test_a_second_daemon_on_the_same_serial_port_refuses(tmp_path: Path) -> None:
    import asyncio

    from hw_sim import SimTable
    from tablectl.config import config_for
    from tablectl.daemon import Daemon

    sim = SimTable("jboy", 1, max_games=1)
    url = await sim.start_pty()
    daemon = Daemon(config_for(url, "jboy", tmp_path / "first.sqlite3"), claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(30):
            while daemon.table is None or daemon.table.phase == "offline":  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        config = tmp_path / "second.toml"
        config.write_text(
            f'id = "t2"\ndevice = "{url}"\nrules = "jboy"\n'
            f'journal = "{tmp_path / "second.sqlite3"}"\n'
        )
        done = await asyncio.to_thread(_run, config)
        assert done.returncode == EXIT_CONFIG
        assert done.stderr == (
            f"tablectl run: {url}: another process holds this port (another tablectl on the"
            " same table?); stop it first\n"
        )
    finally:
        daemon.stop.set()
        await task
        await sim.close()


async def test_a_password_without_tls_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import asyncio

    from tablectl.config import config_for
    from tablectl.daemon import Daemon
    from tablectl.mqtt_settings import MqttSettings

    mqtt = MqttSettings(host="127.0.0.1", port=free_port(), username="t", password="secret")
    config = config_for(
        f"socket://127.0.0.1:{free_port()}", "jboy", tmp_path / "j.sqlite3", mqtt=mqtt
    )
    daemon = Daemon(config)
    task = asyncio.create_task(daemon.run())
    await asyncio.sleep(0.5)
    daemon.stop.set()
    await task
    warnings = [r.getMessage() for r in caplog.records if "clear text" in r.getMessage()]
    assert warnings == [
        "[sim] the MQTT password goes to 127.0.0.1 in clear text: set tls = true in [mqtt]"
    ]
