"""``tablectl ledger``: bad settings are one line and an exit code (a wrong PostgreSQL URL
78, its password never shown); ``close`` writes CSV; ``run`` as a real process stores a
game from the broker, acknowledges it, and on SIGTERM says offline and exits 0."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.cli import main as cli_main
from tests.helpers import TABLECTL, Broker, free_port

STATUS = "parlor/ledger/v1/status"
#: 2026-11-26 12:00 UTC: the 26th in any time zone within 11 hours of UTC.
NOON = datetime(2026, 11, 26, 12, tzinfo=UTC).timestamp()


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_a_wrong_postgresql_url_is_one_line_exit_78_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    unused_port = free_port()
    url = f"postgresql://ledger:hunter2@127.0.0.1:{unused_port}/ledger"
    assert cli_main(["ledger", "run", "--db", url]) == 78
    line = one_line(capsys)
    assert line.startswith(f"tablectl ledger run: postgresql://ledger:***@127.0.0.1:{unused_port}")
    assert "hunter2" not in line
    bad = "postgresql://ledger:hunter2@[nowhere/ledger"
    assert cli_main(["ledger", "close", "--day", "2026-11-26", "--db", bad]) == 78
    assert "hunter2" not in one_line(capsys)


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ("[ledger]\ncutoff_hour = 25\n", "cutoff_hour 25: must be 0 to 23"),
        ('[ledger]\ntimezone = "Mars/Olympus"\n', "not a known time zone"),
        ('[ledger]\ndatabase = "mysql://x/y"\n', "must start with postgresql://"),
        ('[ledger]\nbroker = "mqtt://x:70000"\n', "port must be a number"),
        ('[ledger]\nprefix = "a/+/b"\n', "prefix 'a/+/b'"),
        ("[ledger]\ncolour = 1\n", "unknown key 'colour'"),
        ("[ledger]\ncutoff_hour = true\n", "cutoff_hour must be an integer"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: str, why: str
) -> None:
    path = tmp_path / "ledger.toml"
    path.write_text(config)
    assert cli_main(["ledger", "close", "--day", "2026-11-26", "--config", str(path)]) == 2
    assert why in one_line(capsys)


def test_run_stores_a_game_acknowledges_it_and_stops_on_sigterm(
    mosquitto: Broker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "ledger.sqlite3"
    process = subprocess.Popen(
        [*TABLECTL, "ledger", "run", "--db", str(database), "--prefix", "parlor",
         "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        statuses, ack = asyncio.run(_one_game(mosquitto.port, process))
    finally:
        try:
            _out, err = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _out, err = process.communicate()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert ack == {"v": 1, "game_id": "g1", "revision": 1}
    assert [s["state"] for s in statuses] == ["online", "offline"]
    assert statuses[0]["database"] == "up"
    capsys.readouterr()
    code = cli_main(["ledger", "close", "--day", "2026-11-26", "--db", str(database), "--csv",
                     "--cutoff-hour", "0"])  # fmt: skip
    assert code == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[1:] == [
        "player,A,1,1,0,0,0,40000,,,,", "player,B,1,0,1,0,0,30000,,,,",
        "player,C,1,0,0,1,0,20000,,,,", "player,D,1,0,0,0,1,10000,,,,", "table,t1,1,,,,,,,,,",
    ]  # fmt: skip


async def _one_game(port: int, process: subprocess.Popen[str]) -> tuple[list[Any], Any]:
    """Wait for the ledger's online status, send it a game, wait for the ack, SIGTERM it,
    wait for its offline status."""
    statuses: list[Any] = []
    async with aiomqtt.Client("127.0.0.1", port) as client, asyncio.timeout(60):
        await client.subscribe(STATUS, qos=1)
        await client.subscribe("parlor/v1/t1/ledger/ack", qos=1)
        ack = None
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            data = json.loads(message.payload)
            if str(message.topic) == STATUS:
                statuses.append(data)
                if data["state"] == "offline":
                    break
                game = {
                    "v": 1, "table": "t1", "game_id": "g1", "revision": 1, "state": "finished",
                    "rules": "kenko", "seats": ["A", "B", "C", "D"], "started_at": NOON - 3600,
                    "finished_at": NOON, "final": {
                        "scores": [40000, 30000, 20000, 10000], "ranking": [0, 1, 2, 3],
                        "reason": "end"},
                }  # fmt: skip
                await client.publish("parlor/v1/t1/ledger", json.dumps(game), qos=1)
            else:
                ack = data
                process.send_signal(signal.SIGTERM)
    return statuses, ack
