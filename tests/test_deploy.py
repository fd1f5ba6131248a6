"""The files a Pi is set up with (``deploy/``, docs/pi.md) are real and agree with each other
(issue 26): the example config loads with the daemon's own loader, the systemd unit passes
``systemd-analyze verify``, the udev rule has the fields the docs name, Mosquitto starts
with the broker snippet and its ACL lets each login write only where it should, and
docs/pi.md shows the files from ``deploy/`` instead of copies of them."""

from __future__ import annotations

import asyncio
import configparser
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

import aiomqtt
import pytest

from tablectl.cli import EXIT_CONFIG, build_parser
from tablectl.config import ConfigError, DaemonConfig, load_config
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_topics import TableTopics
from tests.helpers import find_executable, free_port, stop_process

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
CONFIG = DEPLOY / "tablectl.toml"
UNIT = DEPLOY / "tablectl.service"
DASHBOARD_UNIT = DEPLOY / "tablectl-dashboard.service"
UDEV = DEPLOY / "99-mahjong-table.rules"
BROKER_CONF = DEPLOY / "mosquitto" / "tablectl.conf"
ACL = DEPLOY / "mosquitto" / "tablectl.acl"
PI_DOC = ROOT / "docs" / "pi.md"
FILES = (CONFIG, UNIT, UDEV, BROKER_CONF, ACL)


def _require(name: str, package: str) -> str:
    """The executable ``name``; missing, the test skips, except under CI, where it fails."""
    path = find_executable(name)
    if path is None:
        reason = f"{name} not installed (apt-get install {package})"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must check the deploy files with it")
        pytest.skip(reason)
    return path


def _destination(path: Path) -> PurePosixPath:
    """Where a deploy file goes: its first line says, ``# /etc/...: what it is``."""
    match = re.match(r"# (/[^\s:]+)", path.read_text().splitlines()[0])
    assert match, f"{path.name}: the first line does not say where the file goes"
    return PurePosixPath(match.group(1))


def _unit() -> configparser.ConfigParser:
    # systemd allows a key more than once (it appends); this unit does not need it.
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str
    parser.read_string(UNIT.read_text())
    return parser


def _config() -> DaemonConfig:
    # check_files=False: ca_file names the parlor's CA certificate, on the Pi only.
    return load_config(CONFIG, check_files=False)


# -- the config -------------------------------------------------------------------------


def test_the_example_config_loads_with_the_daemons_loader() -> None:
    config = _config()
    assert config.table_id == "table-07"
    assert config.house_rules.players == 4
    assert config.seat_names is not None and len(config.seat_names) == 4
    assert config.mqtt is not None
    assert config.mqtt.tls and config.mqtt.ca_file == "/etc/tablectl/parlor-ca.pem"
    assert config.staff.socket is not None
    assert len(config.staff.rules_menu) == 3


def test_the_example_config_passes_every_check_on_a_pi(tmp_path: Path) -> None:
    # With every check on, the loader wants what a Pi has: the journal's folder (the unit's
    # StateDirectory), the socket's (its RuntimeDirectory) and the CA file. The same
    # config with those places moved under a temp root, and made there, must load.
    text = CONFIG.read_text()
    places = ("/var/lib/tablectl", "/run/tablectl", "/etc/tablectl")
    for place in places:
        assert place in text, place
        (tmp_path / place.lstrip("/")).mkdir(parents=True)
        text = text.replace(place, str(tmp_path / place.lstrip("/")))
    (tmp_path / "etc/tablectl/parlor-ca.pem").write_text("a CA certificate\n")
    config = tmp_path / "tablectl.toml"
    config.write_text(text)
    assert load_config(config).table_id == "table-07"
    (tmp_path / "etc/tablectl/parlor-ca.pem").unlink()
    with pytest.raises(ConfigError, match=r"ca_file: no file at .*/etc/tablectl/parlor-ca.pem"):
        load_config(config)


def test_the_files_agree_with_each_other() -> None:
    config = _config()
    service = _unit()["Service"]
    argv = shlex.split(service["ExecStart"])
    # The unit runs the venv docs/pi.md installs, with the config where its header says.
    assert argv[0] == "/opt/tablectl/bin/tablectl"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "run"
    assert PurePosixPath(args.config) == _destination(CONFIG)
    # The device is the udev rule's symlink, in a group the daemon's user is in.
    serial_rule = _udev_rules()[0]
    assert config.device == "/dev/" + serial_rule["SYMLINK"][1]
    assert serial_rule["GROUP"][1] in service["SupplementaryGroups"].split()
    # The journal lives in the one folder the unit lets the daemon write.
    state_dir = PurePosixPath("/var/lib") / service["StateDirectory"]
    assert PurePosixPath(config.journal).parent == state_dir
    assert str(state_dir) in service["ReadWritePaths"].split()
    # The admin socket is in the unit's RuntimeDirectory.
    assert config.staff.socket is not None
    assert (
        PurePosixPath(config.staff.socket).parent
        == PurePosixPath("/run") / (service["RuntimeDirectory"])
    )
    # systemd stops restarting on the daemon's "config or journal unusable" exit.
    assert service["RestartPreventExitStatus"].split() == [str(EXIT_CONFIG)]
    assert service["User"] == "tablectl"


# -- the systemd unit -------------------------------------------------------------------


@pytest.mark.parametrize("unit_file", [UNIT, DASHBOARD_UNIT], ids=lambda path: path.name)
def test_the_unit_passes_systemd_analyze_verify(tmp_path: Path, unit_file: Path) -> None:
    analyze = _require("systemd-analyze", "systemd")
    # verify checks that ExecStart's program exists and is executable on this machine; the
    # venv of docs/pi.md is on the Pi, not here. A copy of the unit whose ExecStart names a
    # stand-in executable (same arguments) is verified instead; test_the_files_agree_with_
    # each_other checks the real ExecStart.
    stand_in = tmp_path / "tablectl"
    stand_in.write_text("#!/bin/sh\nexit 0\n")
    stand_in.chmod(0o755)
    text = unit_file.read_text()
    real = "ExecStart=/opt/tablectl/bin/tablectl "
    assert text.count(real) == 1
    unit = tmp_path / unit_file.name
    unit.write_text(text.replace(real, f"ExecStart={stand_in} "))
    done = subprocess.run(
        [analyze, "verify", str(unit)], check=False, capture_output=True, text=True, timeout=60
    )
    # verify exits 0 on an unknown key or a value it cannot parse, only warning about it on
    # stderr, naming the file: any line about the unit fails the test.
    about_unit = [line for line in done.stderr.splitlines() if unit_file.name in line]
    assert done.returncode == 0, done.stderr
    assert about_unit == [], done.stderr


def test_systemd_analyze_verify_catches_a_broken_unit(tmp_path: Path) -> None:
    """The check above can fail: a typo in a key is reported."""
    analyze = _require("systemd-analyze", "systemd")
    unit = tmp_path / UNIT.name
    unit.write_text(
        UNIT.read_text()
        .replace("ExecStart=/opt/tablectl/bin/tablectl", "ExecStart=/bin/true")
        .replace("RestartSec=", "RestartSecs=")
    )
    done = subprocess.run(
        [analyze, "verify", str(unit)], check=False, capture_output=True, text=True, timeout=60
    )
    assert "RestartSecs" in done.stderr


# -- the udev rule ----------------------------------------------------------------------

_UDEV_PAIR = re.compile(r'\s*([A-Z]+(?:\{[A-Za-z_]+\})?)(==|!=|\+=|-=|:=|=)"([^"]*)"\s*(,|$)')


def _udev_rules() -> list[dict[str, tuple[str, str]]]:
    """Each rule line of the file as {key: (operator, value)}; every character accounted
    for, so a stray quote or a missing comma fails."""
    rules = []
    for number, line in enumerate(UDEV.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pairs: dict[str, tuple[str, str]] = {}
        position = 0
        while position < len(line):
            match = _UDEV_PAIR.match(line, position)
            assert match, f"line {number}: cannot read {line[position:]!r}"
            key, operator, value, _ = match.groups()
            assert key not in pairs, f"line {number}: {key} twice"
            pairs[key] = (operator, value)
            position = match.end()
        rules.append(pairs)
    return rules


def test_the_udev_rule_has_the_fields_the_docs_name() -> None:
    serial, usb = _udev_rules()
    hex_id = re.compile(r"[0-9a-f]{4}")
    assert serial["SUBSYSTEM"] == ("==", "tty")
    assert serial["ATTRS{idVendor}"][0] == "==" and hex_id.fullmatch(serial["ATTRS{idVendor}"][1])
    assert serial["ATTRS{idProduct}"][0] == "=="
    assert hex_id.fullmatch(serial["ATTRS{idProduct}"][1])
    assert serial["SYMLINK"] == ("+=", "mahjong-table")
    assert serial["GROUP"] == ("=", "dialout")
    assert serial["MODE"] == ("=", "0660")
    # The raw-USB line: the same board, the same group and mode, no symlink.
    assert usb["SUBSYSTEM"] == ("==", "usb")
    assert usb["ATTR{idVendor}"] == serial["ATTRS{idVendor}"]
    assert usb["ATTR{idProduct}"] == serial["ATTRS{idProduct}"]
    assert usb["GROUP"] == serial["GROUP"]
    assert usb["MODE"] == serial["MODE"]
    assert "SYMLINK" not in usb


# -- the broker: Mosquitto with the snippet and the ACL ---------------------------------

BROKER_PASSWORDS = {"table-07": "t7-secret", "dashboard": "dash-secret", "ledger": "l-secret"}
# The snippet's values that name the Pi's files or port; the test's stand-ins replace
# them, every other line is used as it is.
REPLACED = ("listener", "certfile", "keyfile", "password_file", "acl_file")


class ParlorBroker:
    """Mosquitto on 127.0.0.1 with deploy/mosquitto/tablectl.conf (ports and file paths
    swapped for the test's) and deploy/mosquitto/tablectl.acl as they are."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.ca = folder / "broker.crt"
        self.log = folder / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        mosquitto = _require("mosquitto", "mosquitto")
        passwd = _require("mosquitto_passwd", "mosquitto")
        openssl = _require("openssl", "openssl")
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-subj", "/CN=parlor-broker", "-addext", "subjectAltName=IP:127.0.0.1",
             "-keyout", "broker.key", "-out", "broker.crt"],
            cwd=self.folder, check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        for user, password in BROKER_PASSWORDS.items():
            subprocess.run(
                [passwd, "-b", *(["-c"] if user == "table-07" else []), "passwd", user, password],
                cwd=self.folder,
                check=True,
                capture_output=True,
                timeout=60,
            )
        shutil.copy(ACL, self.folder / "tablectl.acl")
        values = {
            "listener": f"{self.port} 127.0.0.1",
            "certfile": str(self.ca),
            "keyfile": str(self.folder / "broker.key"),
            "password_file": str(self.folder / "passwd"),
            "acl_file": str(self.folder / "tablectl.acl"),
        }
        lines, seen = [], set()
        for line in BROKER_CONF.read_text().splitlines():
            key = line.split(" ", 1)[0]
            if key in values:
                # One value (a listener: a port and maybe an address): Mosquitto reads
                # the rest of the line as part of the value, a trailing comment too.
                words = 3 if key == "listener" else 2
                assert len(line.split()) <= words, f"the snippet's {key} line: {line!r}"
                seen.add(key)
            lines.append(f"{key} {values[key]}" if key in values else line)
        assert seen == set(REPLACED), f"the snippet lacks {set(REPLACED) - seen}"
        # What the Pi's /etc/mosquitto/mosquitto.conf does around the snippet, for a test:
        # no persistence, the log here, no dropping to user mosquitto (tmp is not theirs).
        config = self.folder / "mosquitto.conf"
        config.write_text(
            "persistence false\nlog_dest stderr\nuser root\n" + "\n".join(lines) + "\n"
        )
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [mosquitto, "-c", str(config)], stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        deadline = time.monotonic() + 10
        while True:
            if self.process.poll() is not None:
                self.process = None
                pytest.fail(f"mosquitto refused the snippet:\n{self.log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"mosquitto did not listen:\n{self.log.read_text()}")
                time.sleep(0.01)  # polling a port that cannot announce itself

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            stop_process(process, timeout=5)

    def client(self, user: str) -> aiomqtt.Client:
        """A TLS client logged in as ``user``, checking the broker's certificate."""
        context = ssl.create_default_context(cafile=str(self.ca))
        return aiomqtt.Client(
            "127.0.0.1",
            self.port,
            username=user,
            password=BROKER_PASSWORDS[user],
            identifier=f"test-{user}",
            tls_context=context,
        )


@pytest.fixture
def parlor_broker(tmp_path: Path) -> Iterator[ParlorBroker]:
    """Mosquitto running the deploy snippet and ACL, stopped after the test."""
    broker = ParlorBroker(tmp_path)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


async def _until(client: aiomqtt.Client, topic: str, payload: bytes) -> dict[str, bytes]:
    """Every message ``client`` gets, until ``payload`` arrives on ``topic``."""
    got: dict[str, bytes] = {}
    async with asyncio.timeout(10):
        async for message in client.messages:
            body = bytes(message.payload)
            if str(message.topic) == topic and body == payload:
                return got
            got[str(message.topic)] = body
    raise AssertionError("the message stream ended")


async def test_the_acl_confines_each_login(parlor_broker: ParlorBroker) -> None:
    config = _config()
    assert config.mqtt is not None
    assert config.mqtt.username == "table-07"
    # The topics the daemon's own publisher uses for this table, from the example config.
    table = TablePublisher(config.mqtt, config.table_id, seats=config.house_rules.players)
    seat_scores = [table.seat_score_topic(seat) for seat in range(config.house_rules.players)]
    retained = [table.availability_topic, table.state_topic, *seat_scores, table.menu_topic]
    written = [
        *retained,
        table.events_topic,
        table.games_topic,
        table.hands_topic,
        *table.discovery_configs(),
    ]
    staff = [table.staff_ack_topic, table.staff_command_topic]
    other_table = table.state_topic.replace(config.table_id, "table-08")
    end = b"end"

    async with parlor_broker.client("dashboard") as dash, parlor_broker.client("table-07") as me:
        await dash.subscribe([("tablectl/#", 1), ("homeassistant/#", 1)])
        # The table reads back its retained topics and its staff topics.
        await me.subscribe([(topic, 1) for topic in [*retained, *table.discovery_configs()]])
        await me.subscribe([(topic, 1) for topic in staff])

        # The table writes its own topics; not another table's, not its own staff topics.
        for topic in [*written, other_table, *staff]:
            await me.publish(topic, topic.encode(), qos=1)
        await me.publish(table.state_topic, end, qos=1)
        seen = await _until(dash, table.state_topic, end)
        assert set(seen) == set(written)
        # Its own writes came back on the topics it guards; drain them up to the marker.
        await _until(me, table.state_topic, end)

        # The dashboard writes a table's staff topics, and nothing else of it.
        for topic in [table.state_topic, *seat_scores, *staff]:
            await dash.publish(topic, b"from the dashboard", qos=1)
        await dash.publish(table.staff_ack_topic, end, qos=1)
        seen = await _until(me, table.staff_ack_topic, end)
        assert set(seen) == set(staff)


async def test_the_acl_lets_a_table_and_the_ledger_exchange_games_only(
    parlor_broker: ParlorBroker,
) -> None:
    config = _config()
    assert config.mqtt is not None
    topics = TableTopics(config.mqtt, config.table_id, config.house_rules.players)
    other = topics.ledger.replace(config.table_id, "table-08")
    end = b"end"
    async with parlor_broker.client("ledger") as ledger, parlor_broker.client("table-07") as me:
        await ledger.subscribe([("tablectl/#", 1)])
        await me.subscribe([(topics.ledger_ack, 1), (topics.ledger_status, 1)])
        # The table sends its games, not another table's, and no acknowledgement.
        for topic in (topics.ledger, other, topics.ledger_ack, topics.ledger_status):
            await me.publish(topic, b"from the table", qos=1)
        await me.publish(topics.ledger, end, qos=1)
        assert set(await _until(ledger, topics.ledger, end)) == {topics.ledger}
        # The ledger acknowledges and says it is online; it writes nothing else.
        for topic in (topics.ledger_ack, topics.ledger_status, topics.ledger, topics.state):
            await ledger.publish(topic, b"from the ledger", qos=1)
        await ledger.publish(topics.ledger_ack, end, qos=1)
        seen = await _until(me, topics.ledger_ack, end)
        assert set(seen) == {topics.ledger_ack, topics.ledger_status}


# -- docs/pi.md shows the files from deploy/ --------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_pi_doc_installs_the_file_from_deploy(path: Path) -> None:
    doc = PI_DOC.read_text()
    relative = path.relative_to(ROOT).as_posix()
    destination = _destination(path)
    assert f"]({'../' + relative})" in doc, f"docs/pi.md does not link {relative}"
    assert str(destination) in doc
    installs = [
        line
        for line in doc.splitlines()
        if line.startswith("sudo install ") and f" {relative} " in line
    ]
    assert installs, f"docs/pi.md has no `sudo install ... {relative} DIR` line"
    assert any(line.split()[-1].rstrip("/") == str(destination.parent) for line in installs)


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_pi_doc_holds_no_copy_of_the_file(path: Path) -> None:
    doc_lines = {line.strip() for line in PI_DOC.read_text().splitlines()}
    content = [
        line.strip()
        for line in path.read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#") and not line.startswith("[")
    ]
    copied = [line for line in content if line in doc_lines]
    assert copied == [], f"docs/pi.md repeats {path.name}: {copied}"
