"""The dashboard's command-line and config settings, and its password hashes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tablectl.dashboard.auth import LoginThrottle, PasswordError, Sessions, hash_password
from tablectl.dashboard.settings import (
    DashboardSettings,
    SettingsError,
    is_loopback,
    load_settings,
    parse_broker,
    parse_listen,
)
from tablectl.dashboard.web import pick_language
from tablectl.mqtt_signing import RequestVerifier, new_secret


def test_broker_urls() -> None:
    assert parse_broker("mqtt://127.0.0.1:1883") == ("127.0.0.1", 1883, False)
    assert parse_broker("mqtt://broker.local") == ("broker.local", 1883, False)
    assert parse_broker("mqtts://broker.local") == ("broker.local", 8883, True)
    assert parse_broker("mqtt://[::1]:1884") == ("::1", 1884, False)
    for bad in (
        "http://x:1",
        "mqtt://",
        "mqtt://x:0",
        "mqtt://x:port",
        "mqtt://u:p@x:1883",
        "mqtt://x:1883/path",
        "127.0.0.1:1883",
    ):
        with pytest.raises(SettingsError):
            parse_broker(bad)


def test_listen_addresses() -> None:
    assert parse_listen("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_listen("[::1]:80") == ("::1", 80)
    assert parse_listen("localhost:9") == ("localhost", 9)
    for bad in ("8080", "host.local:80", "127.0.0.1:99999", "127.0.0.1:", ":80"):
        with pytest.raises(SettingsError):
            parse_listen(bad)
    assert is_loopback("127.0.0.2") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")


def test_beyond_loopback_needs_a_staff_password(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="needs a staff password"):
        load_settings("mqtt://127.0.0.1:1883", "0.0.0.0:8080", None)
    config = tmp_path / "dash.toml"
    password_hash = hash_password("correct horse", iterations=1000)
    config.write_text(f'[dashboard]\nstaff_password_hash = "{password_hash}"\n')
    settings = load_settings("mqtt://127.0.0.1:1883", "0.0.0.0:8080", str(config))
    assert settings.staff_hash is not None and settings.staff_hash.matches("correct horse")
    assert not settings.open_staff
    local = load_settings("mqtt://127.0.0.1:1883", None, None)
    assert (local.listen_host, local.listen_port, local.open_staff) == ("127.0.0.1", 8080, True)


def test_config_file(tmp_path: Path) -> None:
    config = tmp_path / "dash.toml"
    config.write_text(
        '[dashboard]\nbroker = "mqtts://broker.local:8884"\nlisten = "127.0.0.1:9000"\n'
        'prefix = "parlor"\nmqtt_username = "dashboard"\nmqtt_password = "pw"\n'
    )
    s = load_settings(None, None, str(config))
    assert (s.broker_host, s.broker_port, s.broker_tls) == ("broker.local", 8884, True)
    assert (s.listen_port, s.prefix, s.mqtt_username) == (9000, "parlor", "dashboard")
    assert load_settings("mqtt://other:1", None, str(config), "p2").broker_host == "other"
    assert s.ledger_poll_s == 30.0
    config.write_text("[dashboard]\nledger_poll_s = 2\n")
    assert load_settings("mqtt://other:1", None, str(config)).ledger_poll_s == 2.0
    for text, says in (
        ("[dashboard\n", "not valid TOML"),
        ("[dashboard]\nbrokr = 'x'\n", "unknown option"),
        ("[dashboard]\nlisten = 80\n", "must be a string"),
        ("[dashboard]\nstaff_password_hash = 'nope'\n", "staff_password_hash"),
        ("dashboard = 3\n", "must be a table"),
        ("[dashboard]\nledger_poll_s = '5'\n", "ledger_poll_s must be a number"),
        ("[dashboard]\nledger_poll_s = 0.5\n", "ledger_poll_s must be 1 to 3600 seconds"),
    ):
        config.write_text(text)
        with pytest.raises(SettingsError, match=says):
            load_settings("mqtt://127.0.0.1:1883", None, str(config))
    with pytest.raises(SettingsError, match="cannot read"):
        load_settings("mqtt://127.0.0.1:1883", None, str(tmp_path / "missing.toml"))
    # A device or a FIFO would be read for ever: refused at once, as every other config.
    os.mkfifo(tmp_path / "fifo")
    for device in ("/dev/zero", str(tmp_path / "fifo")):
        with pytest.raises(SettingsError, match="cannot read: not a regular file"):
            load_settings("mqtt://127.0.0.1:1883", None, device)
    with pytest.raises(SettingsError, match="no broker"):
        load_settings(None, None, None)


def test_command_secret(tmp_path: Path) -> None:
    config = tmp_path / "dash.toml"
    secret = new_secret()
    config.write_text(f'[dashboard]\ncommand_secret = "{secret}"\n')
    settings = load_settings("mqtt://127.0.0.1:1883", None, str(config))
    assert settings.command_secret == secret and secret not in repr(settings)
    assert load_settings("mqtt://127.0.0.1:1883", None, None).command_secret is None
    for bad in ("short", "x" * 40 + " y"):
        config.write_text(f'[dashboard]\ncommand_secret = "{bad}"\n')
        with pytest.raises(SettingsError, match=r"\[dashboard\] command_secret must be"):
            load_settings("mqtt://127.0.0.1:1883", None, str(config))


async def test_the_dashboard_signs_what_it_sends_to_a_table() -> None:
    from tablectl.dashboard.model import ParlorModel
    from tablectl.dashboard.mqtt_in import ParlorLink

    sent: list[tuple[str, bytes]] = []

    class Client:
        async def publish(self, topic: str, payload: str, qos: int) -> None:
            sent.append((topic, payload.encode()))

    secret = new_secret()
    for key in (secret, None):
        settings = DashboardSettings("127.0.0.1", 1883, command_secret=key)
        link = ParlorLink(settings, ParlorModel("tablectl"), lambda _: None, now=lambda: 1e9)
        link._client = Client()  # type: ignore[assignment]
        await link.publish_command("t1", "undo", "美香", None, 1e9)
        await link.publish_ack("t1", "a3", "Mika", 1e9)
    verifier = RequestVerifier(secret)
    (c_topic, command), (a_topic, ack), (_, plain), _ = sent
    assert c_topic == "tablectl/v1/t1/staff/command" and a_topic == "tablectl/v1/t1/staff/ack"
    assert verifier.check(c_topic, json.loads(command), 1e9) is None
    assert verifier.check(a_topic, json.loads(ack), 1e9) is None
    assert verifier.check(c_topic, json.loads(plain), 1e9) == "not signed"


def test_password_hash_and_sessions() -> None:
    with pytest.raises(PasswordError):
        hash_password("short")
    clock = [0.0]
    sessions = Sessions(now=lambda: clock[0])
    session = sessions.create("Eri", "staff")
    assert sessions.get(session.sid) is session and session.staff
    assert sessions.get("forged") is None and sessions.get(None) is None
    clock[0] += 13 * 3600
    assert sessions.get(session.sid) is None
    throttle = LoginThrottle(now=lambda: clock[0])
    for _ in range(5):
        assert not throttle.locked("10.0.0.9", "x")
        throttle.record("10.0.0.9", "x", False)
    assert throttle.locked("10.0.0.9", "y") and throttle.locked("10.0.0.8", "X")
    assert not throttle.locked("10.0.0.8", "y")  # another client, another name
    clock[0] += 61
    assert not throttle.locked("10.0.0.9", "x")


def test_language_from_accept_language() -> None:
    assert pick_language(None) == "en"
    assert pick_language("ja,en-US;q=0.9") == "ja"
    assert pick_language("ja-JP") == "ja"
    assert pick_language("fr-FR,ja;q=0.5,en;q=0.8") == "en"
    assert pick_language("de, fr") == "en"
    assert pick_language("en;q=0, ja;q=0.1") == "ja"


def test_the_daemon_side_never_imports_aiohttp() -> None:
    import subprocess
    import sys

    code = (
        "import sys, tablectl.cli, tablectl.daemon, tablectl.dashboard.settings;"
        "sys.exit('aiohttp' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
