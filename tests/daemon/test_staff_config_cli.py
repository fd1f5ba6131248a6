"""The [staff] and [trays] config sections, ``tablectl staff-pin`` and ``tablectl ctl``'s
bad input: one line naming what is wrong, an exit code, nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tablectl.config import ConfigError, load_config
from tablectl.console.staff import PinHash, hash_pin
from tests.helpers import run_tablectl

TABLE = 'id = "t1"\ndevice = "/dev/ttyUSB0"\nrules = "jboy"\n'
HASH = hash_pin("2468", iterations=1000)


def _config(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "tablectl.toml"
    path.write_text(TABLE + extra)
    return path


def test_a_staff_section_loads(tmp_path: Path) -> None:
    path = _config(
        tmp_path,
        f'[staff]\npin_hash = "{HASH}"\nsocket = "run/ctl.sock"\n'
        'rules_menu = ["jboy", "kenko"]\n[trays]\nhold_next_hand = false\n',
    )
    (tmp_path / "run").mkdir()  # the socket's folder: the daemon makes no folders
    config = load_config(path)
    assert config.staff.pin_hash == PinHash.parse(HASH)
    assert config.staff.socket == tmp_path / "run" / "ctl.sock"
    assert config.staff.rules_menu == ("jboy", "kenko")
    assert config.hold_next_hand is False
    assert load_config(_config(tmp_path, "")).hold_next_hand is True


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('[staff]\npin_hash = "1234"\n', "[staff] pin_hash: a staff PIN hash looks like"),
        ('[staff]\npin = "1234"\n', "unknown option in [staff] 'pin' (did you mean 'pin_hash'?)"),
        ("[staff]\nrules_menu = []\n", "[staff] rules_menu must be a list of 1 to 10"),
        (
            '[staff]\nrules_menu = ["jboy-sanma"]\n',
            "'jboy-sanma' is for 3 players; the table has 4",
        ),
        ('[staff]\nrules_menu = ["nosuch"]\n', "[staff] rules_menu"),
        ('[trays]\nhold_next_hand = "yes"\n', "[trays] hold_next_hand must be true or false"),
        ("[trays]\nhold = true\n", "unknown option in [trays] 'hold'"),
    ],
)
def test_a_broken_staff_or_trays_section_says_what_is_wrong(
    tmp_path: Path, extra: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=None) as caught:
        load_config(_config(tmp_path, extra))
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(tmp_path / "tablectl.toml"))


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_tablectl(*args, stdin=stdin)


def test_staff_pin_prints_a_config_line_that_loads(tmp_path: Path) -> None:
    done = _cli("staff-pin", stdin="4711\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[staff]\npin_hash = ")
    path = tmp_path / "tablectl.toml"
    path.write_text(TABLE + done.stdout)
    pin_hash = load_config(path).staff.pin_hash
    assert pin_hash is not None and pin_hash.matches("4711")


@pytest.mark.parametrize(
    ("args", "stdin", "line"),
    [
        (("staff-pin",), "12\n", "tablectl staff-pin: a staff PIN has 4 to 8 digits, not 2"),
        (("staff-pin",), "12ab\n", "tablectl staff-pin: a staff PIN is digits only"),
        (
            ("ctl", "new-game", "--socket", "/nonexistent/ctl.sock"),
            "",
            "tablectl ctl new-game: --rules NAME is required (a preset or a rules file)",
        ),
        (
            ("ctl", "undo", "--rules", "kenko", "--socket", "/x"),
            "",
            "tablectl ctl undo: --rules goes with new-game only",
        ),
        (
            ("ctl", "status", "--config", "/nonexistent/tablectl.toml"),
            "",
            "tablectl ctl status: /nonexistent/tablectl.toml: no config file there",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], stdin: str, line: str) -> None:
    done = _cli(*args, stdin=stdin)
    assert done.returncode == 2
    assert done.stderr.startswith(line)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_ctl_on_a_config_without_a_socket_says_so(tmp_path: Path) -> None:
    path = _config(tmp_path, "")
    done = _cli("ctl", "status", "--config", str(path))
    assert (done.returncode, done.stderr) == (
        2,
        f"tablectl ctl status: {path} sets no [staff] socket\n",
    )


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("/dev/ttyUSB0?baud=fast", "device: baud='fast'; allowed: 9600,"),
        ("/dev/ttyUSB0?baud=12345", "device: baud='12345'"),
        ("/dev/ttyUSB0?parity=E", "unknown option 'parity' for a serial device; allowed: baud"),
        ("/dev/ttyUSB0?baud=9600&baud=115200", "option 'baud' is given 2 times"),
        ("socket://10.0.0.5:4000?timeout=3", "unknown option 'timeout' for a socket device"),
        ("usb://1a86:7523?backend=libusb0", "backend='libusb0'; allowed: loopback"),
    ],
)
def test_device_url_options_are_checked_at_load(tmp_path: Path, device: str, message: str) -> None:
    path = tmp_path / "tablectl.toml"
    path.write_text(f'id = "t1"\ndevice = "{device}"\nrules = "jboy"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert message in str(caught.value)


def test_reading_commands_do_not_need_the_daemon_s_certificate_files(tmp_path: Path) -> None:
    path = _config(tmp_path, '[mqtt]\nhost = "b"\ntls = true\nca_file = "/nonexistent/ca.pem"\n')
    with pytest.raises(ConfigError, match="no file at /nonexistent/ca.pem"):
        load_config(path)
    assert load_config(path, check_files=False).mqtt is not None


@pytest.mark.parametrize(
    ("mqtt", "message"),
    [
        ('certfile = "c.pem"\n', "[mqtt] certfile is set but tls is false"),
        ('tls = true\nkeyfile = "k.pem"\n', "[mqtt] keyfile is set but certfile is not"),
        ('tls = true\ncertfile = "nope.pem"\n', "[mqtt] certfile: no file at"),
    ],
)
def test_client_certificate_settings_are_checked(tmp_path: Path, mqtt: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_config(tmp_path, f'[mqtt]\nhost = "b"\n{mqtt}'))
    assert message in str(caught.value)


def test_client_certificate_paths_are_resolved(tmp_path: Path) -> None:
    (tmp_path / "c.pem").write_text("x")
    (tmp_path / "k.pem").write_text("x")
    config = load_config(
        _config(tmp_path, '[mqtt]\nhost = "b"\ntls = true\ncertfile = "c.pem"\nkeyfile = "k.pem"\n')
    )
    assert config.mqtt is not None
    assert (config.mqtt.certfile, config.mqtt.keyfile) == (
        str(tmp_path / "c.pem"),
        str(tmp_path / "k.pem"),
    )
