"""The daemon config file: a good one loads; every broken one fails at load with a message
naming the file, the section, the key and what is allowed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tablectl.config import DEFAULT_JOURNAL, ConfigError, DaemonConfig, load_config
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.loader import load_rules

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
[table]
id = "parlor-3"
device = "/dev/ttyUSB0"
rules = "kenko"
journal = "data/journal.sqlite3"
seat_names = ["Aoi", "Ben", "Chie", "Dai"]

[mqtt]
host = "broker.local"
port = 8883
username = "table3"
password = "s3cret"
tls = true
ca_file = "ca.pem"
client_id = "parlor-3"
topic_prefix = "parlor/tables"
discovery_prefix = "homeassistant"
keepalive = 60
"""

MINIMAL = """\
id = "t1"
device = "sim://table"
rules = "jboy-sanma"
"""


def write(tmp_path: Path, text: str) -> Path:
    """Write ``text`` as the test's config file and return its path."""
    path = tmp_path / "tablectl.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_config_loads(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    (tmp_path / "data").mkdir()  # the journal's folder: the daemon makes no folders
    path = write(tmp_path, GOOD)
    config = load_config(path)
    assert config == DaemonConfig(
        source=path,
        table_id="parlor-3",
        device="/dev/ttyUSB0",
        rules="kenko",
        house_rules=load_rules("kenko"),
        journal=tmp_path / "data" / "journal.sqlite3",
        seat_names=("Aoi", "Ben", "Chie", "Dai"),
        mqtt=MqttSettings(
            host="broker.local",
            port=8883,
            username="table3",
            password="s3cret",
            tls=True,
            ca_file=str(tmp_path / "ca.pem"),
            client_id="parlor-3",
            topic_prefix="parlor/tables",
            discovery_prefix="homeassistant",
            keepalive=60,
        ),
    )


def test_top_level_keys_defaults_and_no_mqtt(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL))
    assert config.table_id == "t1" and config.device == "sim://table"
    assert config.house_rules.players == 3
    assert config.journal == DEFAULT_JOURNAL
    assert config.seat_names is None
    assert config.mqtt is None


def test_mqtt_defaults_come_from_the_settings_class(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL + '[mqtt]\nhost = "localhost"\n'))
    assert config.mqtt == MqttSettings(host="localhost")


@pytest.mark.parametrize(
    "device",
    [
        "/dev/ttyUSB0",
        "/dev/pts/3?baud=57600",
        "socket://192.168.1.20:5555",
        "usb://1209:7a11",
        "usb://1209:7A11?backend=loopback",
        "sim://",
        "sim://table",
        "socket://192.168.1.20:5555?signing_key=" + "ab" * 32,
        "/dev/ttyUSB0?baud=57600&signing_key=" + "AB" * 32,
    ],
)
def test_device_urls(tmp_path: Path, device: str) -> None:
    text = MINIMAL.replace('"sim://table"', f'"{device}"')
    assert load_config(write(tmp_path, text)).device == device


def test_a_parlor_rules_file_next_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "house.toml").write_text('extends = "kenko"\n[game]\ntime_limit_minutes = 70\n')
    config = load_config(write(tmp_path, MINIMAL.replace('"jboy-sanma"', '"house.toml"')))
    assert config.rules == str(tmp_path / "house.toml")
    assert config.house_rules.game.time_limit_minutes == 70


def test_the_example_in_the_docs_loads(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "journal.md").read_text(encoding="utf-8")
    match = re.search(r"```toml\n(# tablectl\.toml.*?)```", doc, re.S)
    assert match, "docs/journal.md shows a full tablectl.toml"
    # check_files=False: the example's journal folder is a Pi's, not this machine's.
    config = load_config(write(tmp_path, match.group(1)), check_files=False)
    assert config.mqtt is not None and config.seat_names is not None


BASE_TABLE = '[table]\nid = "t1"\ndevice = "sim://"\nrules = "kenko"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id = [", ["not valid TOML"]),
        ('device = "sim://"\nrules = "kenko"\n', ["[table] id is required"]),
        ('id = "t1"\nrules = "kenko"\n', ["[table] device is required"]),
        ('id = "t1"\ndevice = "sim://"\n', ["[table] rules is required"]),
        (BASE_TABLE.replace('"t1"', '"table 1"'), ["[table] id is 'table 1'", "A-Z a-z 0-9 _ -"]),
        (BASE_TABLE.replace('"t1"', '"' + "x" * 33 + '"'), ["[table] id", "1 to 32"]),
        (BASE_TABLE.replace('"t1"', "1"), ["[table] id must be a string, got 1"]),
        (MINIMAL.replace('"t1"', '"a/b"'), ["id is 'a/b'"]),
        (BASE_TABLE + "tabel_id = 1\n", ["unknown option in [table] 'tabel_id'", "allowed: id"]),
        (BASE_TABLE + "devise = 1\n", ["'devise' (did you mean 'device'?)"]),
        (MINIMAL + "seatnames = []\n", ["unknown key 'seatnames'", "did you mean 'seat_names'"]),
        (MINIMAL + "[mqq]\nhost = 'x'\n", ["unknown section [mqq]", "did you mean 'mqtt'"]),
        (MINIMAL + '[table]\nid = "t2"\n', ["'id' is given both at the top level and in [table]"]),
        ("table = 3\n", ["[table] must be a table of options"]),
        (BASE_TABLE.replace('"sim://"', '"COM3"'), ["[table] device is 'COM3'", "socket://"]),
        (BASE_TABLE.replace('"sim://"', '"socket://host"'), ["[table] device", "port 1..65535"]),
        (BASE_TABLE.replace('"sim://"', '"socket://h:70000"'), ["[table] device", "1..65535"]),
        (BASE_TABLE.replace('"sim://"', '"usb://xyz"'), ["[table] device", "VID:PID in hex"]),
        (BASE_TABLE.replace('"sim://"', '"tcp://h:1"'), ["[table] device is 'tcp://h:1'"]),
        (BASE_TABLE.replace('"sim://"', '"socket://[::1"'), ["[table] device is 'socket://[::1'"]),
        (
            BASE_TABLE.replace('"sim://"', '"socket://h:1?signing_key=0123"'),
            ["[table] device: signing_key in the transport URL", "64 hex digits", "got 4"],
        ),
        (
            BASE_TABLE.replace('"sim://"', f'"socket://h?signing_key={"cd" * 32}"'),
            ["[table] device is 'socket://h'", "port 1..65535"],  # the key is not shown
        ),
        (BASE_TABLE.replace('"kenko"', '"kenkoo"'), ["[table] rules", "did you mean 'kenko'"]),
        (BASE_TABLE.replace('"kenko"', '"missing.toml"'), ["[table] rules", "missing.toml"]),
        (BASE_TABLE.replace('"kenko"', "4"), ["[table] rules must be a string"]),
        (BASE_TABLE + "journal = ''\n", ["[table] journal must not be empty"]),
        (BASE_TABLE + "journal = 5\n", ["[table] journal must be a string"]),
        (BASE_TABLE + "seat_names = ['a', 'b']\n", ["[table] seat_names has 2 names", "4 players"]),
        (BASE_TABLE + "seat_names = 'abcd'\n", ["[table] seat_names must be a list of strings"]),
        (BASE_TABLE + "seat_names = ['a', 'b', 'c', '']\n", ["[table] seat_names", "1 to 32"]),
        (MINIMAL + "seat_names = ['a', 'b', 'c', 'd']\n", ["seat_names has 4", "3 players"]),
        (BASE_TABLE + "[mqtt]\nport = 1883\n", ["[mqtt] host is required"]),
        (BASE_TABLE + "[mqtt]\nhost = ''\n", ["[mqtt] host must not be empty"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nport = 0\n", ["[mqtt] port is 0", "1..65535"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nport = '1883'\n", ["[mqtt] port must be an integer"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nport = true\n", ["[mqtt] port must be an integer"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ntls = 1\n", ["[mqtt] tls must be true or false"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nkeepalive = 0\n", ["[mqtt] keepalive is 0"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nusername = 3\n", ["[mqtt] username must be a string"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nhostname = 'b'\n", ["unknown option in [mqtt]"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nkeep_alive = 5\n", ["did you mean 'keepalive'"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\npassword = 'p'\n", ["[mqtt] password is set but"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\nca_file = 'ca.pem'\n", ["[mqtt] ca_file", "tls = true"]),
        (
            BASE_TABLE + "[mqtt]\nhost = 'b'\ntls = true\nca_file = 'nope.pem'\n",
            ["[mqtt] ca_file: no file at"],
        ),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ntopic_prefix = 'a/#'\n", ["[mqtt] topic_prefix"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ndiscovery_prefix = '/ha'\n", ["discovery_prefix"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ncommands = 'on'\n", ["[mqtt] commands is 'on'"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ncommands = 'signed'\n", ["[mqtt] commands", "secret"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ncommand_secret = 'x'\n", ["[mqtt] command_secret"]),
        (BASE_TABLE + "[mqtt]\nhost = 'b'\ncommand_secret = 7\n", ["command_secret must be"]),
        (
            BASE_TABLE
            + "[mqtt]\nhost = 'b'\ncommands = 'off'\ncommand_secret = '"
            + "s" * 40
            + "'\n",
            ["[mqtt] command_secret is set but commands is 'off'"],
        ),
        (BASE_TABLE + "mqtt = 'broker'\n", ["unknown option in [table] 'mqtt'"]),
        (MINIMAL + "mqtt = 'broker'\n", ["[mqtt] must be a table of options"]),
    ],
)
def test_broken_configs_name_file_section_and_key(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for fragment in expected:
        assert fragment in message, message


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no config file there"):
        load_config(tmp_path / "nope.toml")
    # A name longer than the file system allows (NAME_MAX): one line, its name cut short.
    with pytest.raises(ConfigError, match=r"^'yyy.*\(\d+ characters\): cannot read .*too long"):
        load_config("y" * 100_000)
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="bin.toml: cannot read"):
        load_config(tmp_path / "bin.toml")
