"""The daemon's configuration file (TOML), checked once at load time.

A config file looks like::

    [table]
    id = "table-3"
    device = "/dev/ttyUSB0"
    rules = "kenko"
    journal = "/var/lib/tablectl/journal.sqlite3"
    seat_names = ["East", "South", "West", "North"]

    [mqtt]                    # optional: no [mqtt] section, no MQTT
    host = "broker.local"

The ``[table]`` keys may also be written at the top level (not both).  Every problem
raises :class:`ConfigError` naming the file, the section, the key and what is allowed;
the rules preset is loaded here so that a broken rules file stops the daemon at start,
not at the first hand.  Relative paths (journal, rules file, CA file) are relative to
the config file's folder.  See ``docs/journal.md`` for the full format.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
import types
import typing
import urllib.parse
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from tablectl.console.staff import PinFormatError, PinHash
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.loader import (
    RulesConfigError,
    load_rules,
    preset_names,
    read_small_file,
    regular_file_problem,
)
from tablectl.rules.options import HouseRules
from tablectl.seating_players import PlayerListError, load_players

DEFAULT_JOURNAL = Path("/var/lib/tablectl/journal.sqlite3")
TABLE_KEYS = ("id", "device", "rules", "journal", "seat_names")
SECTIONS = ("table", "mqtt", "staff", "trays", "watchdog")
STAFF_KEYS = ("pin_hash", "socket", "rules_menu", "players")
TRAYS_KEYS = ("hold_next_hand",)
WATCHDOG_KEYS = ("stall_after_s",)
#: ``[watchdog] stall_after_s``: the default, and the longest allowed (0 turns it off).
STALL_AFTER_S = 300.0
STALL_AFTER_RANGE = (1.0, 86400.0)
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: Integer limits of the [mqtt] options (MQTT keepalive is a 16-bit field).
MQTT_RANGES = {"port": (1, 65535), "keepalive": (1, 65535)}
#: Seat names show on small console displays.
SEAT_NAME_MAX = 32
#: Longest string any key takes (a path: Linux's PATH_MAX).
TEXT_MAX = 4096
#: A Unix socket's path, in bytes, with room for the NUL the kernel wants after it.
SOCKET_PATH_MAX = 107
#: C0 and C1 control characters (NUL, ESC, newlines...) and Unicode's line and paragraph
#: separators: refused in every string, as they reach file names, a terminal, a console
#: display or the broker.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


#: Every key of the file, by section (``table`` also stands for the top level): what
#: the tests fill with hostile values, so a key added to a declaration here is covered.
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "table": TABLE_KEYS,
    "mqtt": tuple(f.name for f in fields(MqttSettings)),
    "staff": STAFF_KEYS,
    "trays": TRAYS_KEYS,
    "watchdog": WATCHDOG_KEYS,
}


class ConfigError(ValueError):
    """The config file is missing, not TOML, or holds a value that is not allowed."""


@dataclass(frozen=True, slots=True)
class StaffSettings:
    """The ``[staff]`` section: the staff PIN (its salted hash), the local admin socket
    (``tablectl ctl``) and the rules staff may pick for a new game on a console."""

    pin_hash: PinHash | None = None
    socket: Path | None = None
    rules_menu: tuple[str, ...] = ()
    #: The parlor's player list (docs/seating.md): staff seat members on a console.
    players: Path | None = None


@dataclass(frozen=True, slots=True)
class DaemonConfig:
    """The checked configuration of one table's daemon.

    ``rules`` is a preset name or an absolute rules-file path (what the journal records);
    ``house_rules`` is that rule set loaded.  ``mqtt`` is None when the file has no
    ``[mqtt]`` section.
    """

    source: Path
    table_id: str
    device: str
    rules: str
    house_rules: HouseRules
    journal: Path = DEFAULT_JOURNAL
    seat_names: tuple[str, ...] | None = None
    mqtt: MqttSettings | None = None
    staff: StaffSettings = StaffSettings()
    #: ``[trays] hold_next_hand``: no dice while the trays disagree with the scores.
    hold_next_hand: bool = True
    #: ``[watchdog] stall_after_s``: a hand in play without progress this long raises the
    #: ``stalled`` alert (tablectl/watchdog.py); None: no watchdog.
    stall_after_s: float | None = STALL_AFTER_S


def _did_you_mean(key: str, allowed: typing.Iterable[str]) -> str:
    # A low cutoff: config keys are short, so one wrong letter is a big share of them.
    hint = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.5)
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _where(source: Path, section: str | None, key: str) -> str:
    return f"{source}: [{section}] {key}" if section else f"{source}: {key}"


def _show(value: Any) -> str:
    """``value`` for a message: its repr, cut short (a hostile value may be megabytes)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}... ({len(text)} characters)"


def _string(where: str, value: Any, *, printable: bool = False) -> str:
    """A string of at most :data:`TEXT_MAX` characters without control characters;
    ``printable`` (names shown on displays) refuses every unprintable character too."""
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, got {_show(value)}")
    if len(value) > TEXT_MAX:
        raise ConfigError(f"{where} is {len(value)} characters long; at most {TEXT_MAX}")
    bad = CONTROL.search(value)
    if bad is not None:
        raise ConfigError(f"{where} holds the control character {bad.group()!r}")
    odd = next((c for c in value if not c.isprintable()), None) if printable else None
    if odd is not None:
        raise ConfigError(f"{where} holds the unprintable character {odd!r}")
    return value


def _check_device(where: str, url: str) -> str:
    """Check the transport URL's shape (the bridge opens it; this only catches typos)."""
    if "signing_key" in url:
        # Imported here: the bridge package costs every tablectl command ~80 ms to import.
        from firmware_bridge.signing import split_signing_key

        try:
            bare, key = split_signing_key(url)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if key is not None:
            _check_device(where, bare)  # messages then show the URL without the key
            return url
    allowed = (
        "allowed: a serial device path (/dev/ttyUSB0), socket://HOST:PORT, usb://VID:PID"
        " (hex) or sim://NAME"
    )
    try:
        parsed = urllib.parse.urlsplit(url)
    except ValueError:  # an unclosed "[" of an IPv6 host
        raise ConfigError(f"{where} is {_show(url)}; {allowed}") from None
    _check_device_options(where, url, parsed)
    if url.startswith("/"):
        return url
    if parsed.scheme == "socket":
        try:
            port = parsed.port
        except ValueError:
            port = None
        if not parsed.hostname or port is None or not 1 <= port <= 65535:
            raise ConfigError(
                f"{where} is {_show(url)}; socket:// needs a host and a port 1..65535"
            )
        return url
    if parsed.scheme == "usb":
        if not re.fullmatch(r"[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}", parsed.netloc):
            raise ConfigError(
                f"{where} is {_show(url)}; usb:// needs VID:PID in hex, e.g. 1209:7a11"
            )
        return url
    if parsed.scheme == "sim":
        return url
    raise ConfigError(f"{where} is {_show(url)}; {allowed}")


#: Query options each kind of device URL takes (the table speaks 8N1 on serial lines, so a
#: serial device takes only its speed).
DEVICE_OPTIONS = {"serial": ("baud",), "socket": (), "usb": ("backend",), "sim": ()}
#: Serial speeds a Pi's UART and USB-serial adapters support.
BAUD_RATES = (9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 921600, 1000000,
              1500000, 2000000, 3000000)  # fmt: skip


def _check_device_options(where: str, url: str, parsed: urllib.parse.SplitResult) -> None:
    kind = "serial" if url.startswith("/") else parsed.scheme
    allowed = DEVICE_OPTIONS.get(kind)
    if allowed is None or not parsed.query:
        return
    try:
        options = urllib.parse.parse_qs(parsed.query, strict_parsing=True)
    except ValueError:
        raise ConfigError(
            f"{where} is {_show(url)}; options are written ?name=value&name=value"
        ) from None
    for name, values in options.items():
        if name not in allowed:
            listed = ", ".join(allowed) if allowed else "none"
            raise ConfigError(
                f"{where}: unknown option {_show(name)}{_did_you_mean(name, allowed)} for a"
                f" {kind} device; allowed: {listed}"
            )
        if len(values) > 1:
            raise ConfigError(f"{where}: option {name!r} is given {len(values)} times")
    baud = options.get("baud", [None])[0]
    if baud is not None and (not baud.isdigit() or int(baud) not in BAUD_RATES):
        raise ConfigError(
            f"{where}: baud={_show(baud)}; allowed: {', '.join(str(b) for b in BAUD_RATES)}"
        )
    backend = options.get("backend", [None])[0]
    if backend is not None and backend != "loopback":
        raise ConfigError(f"{where}: backend={_show(backend)}; allowed: loopback (tests only)")


def _check_seat_names(where: str, value: Any, players: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {_show(value)}")
    for name in value:
        if not name.strip() or len(name) > SEAT_NAME_MAX:
            raise ConfigError(f"{where}: {_show(name)} must be 1 to {SEAT_NAME_MAX} characters")
        _string(where, name, printable=True)
    if len(value) != players:
        raise ConfigError(f"{where} has {len(value)} names; the rules are for {players} players")
    return tuple(value)


def _check_rules(where: str, value: Any, folder: Path) -> tuple[str, HouseRules]:
    ref = _string(where, value, printable=True)
    if ref not in preset_names():
        path = Path(ref)
        if path.suffix == ".toml" or "/" in ref:
            ref = str(path if path.is_absolute() else (folder / path).resolve())
    try:
        return ref, load_rules(ref)
    except RulesConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _section(source: Path, raw: dict[str, Any], name: str, keys: tuple[str, ...]) -> dict[str, Any]:
    section = raw.get(name, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{source}: [{name}] must be a table of options")
    for key in section:
        if key not in keys:
            raise ConfigError(
                f"{source}: unknown option in [{name}] {key!r}{_did_you_mean(key, keys)};"
                f" allowed: {', '.join(keys)}"
            )
    return section


def _check_staff(source: Path, raw: dict[str, Any], folder: Path, players: int) -> StaffSettings:
    section = _section(source, raw, "staff", STAFF_KEYS)
    pin_hash = None
    if "pin_hash" in section:
        where = _where(source, "staff", "pin_hash")
        try:
            pin_hash = PinHash.parse(_string(where, section["pin_hash"]))
        except PinFormatError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    socket = (
        _path(_where(source, "staff", "socket"), section["socket"], folder)
        if ("socket" in section)
        else None
    )
    menu: list[str] = []
    if "rules_menu" in section:
        where = _where(source, "staff", "rules_menu")
        value = section["rules_menu"]
        if not isinstance(value, list) or not 1 <= len(value) <= 10:
            raise ConfigError(f"{where} must be a list of 1 to 10 presets or rules files")
        for item in value:
            ref, rules = _check_rules(where, item, folder)
            if rules.players != players:
                raise ConfigError(
                    f"{where}: {item!r} is for {rules.players} players; the table has {players}"
                )
            menu.append(ref)
    player_list = None
    if "players" in section:
        where = _where(source, "staff", "players")
        player_list = _path(where, section["players"], folder)
        try:
            load_players(player_list)  # a broken list is refused now, not at a console
        except PlayerListError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return StaffSettings(
        pin_hash=pin_hash, socket=socket, rules_menu=tuple(menu), players=player_list
    )


def _check_trays(source: Path, raw: dict[str, Any]) -> bool:
    section = _section(source, raw, "trays", TRAYS_KEYS)
    value = section.get("hold_next_hand", True)
    if not isinstance(value, bool):
        raise ConfigError(f"{_where(source, 'trays', 'hold_next_hand')} must be true or false")
    return value


def _check_watchdog(source: Path, raw: dict[str, Any]) -> float | None:
    section = _section(source, raw, "watchdog", WATCHDOG_KEYS)
    value = section.get("stall_after_s", STALL_AFTER_S)
    low, high = STALL_AFTER_RANGE
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (value == 0 or low <= value <= high):
        raise ConfigError(
            f"{_where(source, 'watchdog', 'stall_after_s')} is {_show(value)}; allowed: seconds"
            f" from {low:g} to {high:g}, or 0 for no watchdog"
        )
    return float(value) or None


def load_rules_ref(ref: str) -> HouseRules:
    """The rules ``ref`` names (a preset, or a rules file given by its absolute path), for
    a new game staff start on a running table; raises ValueError saying why not."""
    if ref not in preset_names() and not Path(ref).is_absolute():
        raise ValueError(
            f"{ref!r} is not a preset ({', '.join(preset_names())}) or an absolute path"
        )
    return load_rules(ref)


def _path(where: str, value: Any, folder: Path) -> Path:
    text = _string(where, value)
    if not text:
        raise ConfigError(f"{where} must not be empty")
    path = Path(text).expanduser()
    return path if path.is_absolute() else folder / path


def _mode(where: str, path: Path, *, follow: bool = True) -> int | None:
    """The file type and mode at ``path`` (None when nothing is there), looked at
    without opening anything."""
    try:
        found = os.stat(path) if follow else os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise ConfigError(f"{where}: {path}: {exc.strerror or exc}") from None
    return found.st_mode


def _check_folder(where: str, path: Path) -> None:
    """``path``'s folder exists: nothing in the daemon makes folders."""
    mode = _mode(where, path.parent)
    if mode is None or not stat.S_ISDIR(mode):
        raise ConfigError(
            f"{where}: {path}: the folder {path.parent} does not exist; create it, owned by"
            " the daemon's user (the systemd unit's StateDirectory= does)"
        )


def _check_file(where: str, path: Path) -> None:
    """A file the daemon reads (a TLS certificate or key) is a regular file there."""
    problem = regular_file_problem(path)
    if problem == "no file there":
        raise ConfigError(f"{where}: no file at {path}")
    if problem is not None:
        raise ConfigError(f"{where}: {path}: {problem}")


def _check_journal(where: str, path: Path) -> None:
    """The journal is a regular file or not there yet, in a folder that exists: never a
    folder, a FIFO, a device or a symlink to one."""
    _check_folder(where, path)
    problem = regular_file_problem(path, absent_ok=True)
    if problem is not None:
        raise ConfigError(
            f"{where}: {path}: {problem}; the journal must be a regular file, or not there yet"
        )


def _check_socket(where: str, path: Path, taken: dict[Path, str]) -> None:
    """The admin socket's path fits a Unix socket, lies in a folder that exists, names
    none of the daemon's other files (``taken``) and holds nothing but, at most, a
    socket (a stale one, replaced at start; a live one makes the start fail)."""
    size = len(os.fsencode(path))
    if size > SOCKET_PATH_MAX:
        raise ConfigError(
            f"{where}: {_show(str(path))} is {size} bytes long; a Unix socket's path is"
            f" at most {SOCKET_PATH_MAX}"
        )
    _check_folder(where, path)
    real = Path(os.path.realpath(path))
    for other, what in taken.items():
        if real == Path(os.path.realpath(other)):
            raise ConfigError(f"{where}: {path} is {what}; the socket needs a path of its own")
    mode = _mode(where, path, follow=False)
    if mode is not None and not stat.S_ISSOCK(mode):
        raise ConfigError(
            f"{where}: something else is at {path} (not a socket); the socket needs a path"
            " of its own"
        )


def _check_serial(where: str, device: str) -> None:
    """A serial port is a character device, or not there yet (the table is unplugged)."""
    if not device.startswith("/"):
        return
    path = Path(device.split("?", 1)[0])
    mode = _mode(where, path)
    if mode is not None and not stat.S_ISCHR(mode):
        raise ConfigError(f"{where}: {path} is not a serial port (not a character device)")


def _describe(tp: Any) -> str:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        return " or ".join(_describe(a) for a in typing.get_args(tp) if a is not type(None))
    return {bool: "true or false", int: "an integer", str: "a string"}.get(tp, str(tp))


def _mqtt_value(where: str, tp: Any, value: Any) -> Any:
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        # Optional fields: TOML has no null, so "absent" is written by omitting the key.
        tp = next(a for a in typing.get_args(tp) if a is not type(None))
    ok = (
        isinstance(value, bool)
        if tp is bool
        else isinstance(value, tp) and not isinstance(value, bool)
    )
    if not ok:
        raise ConfigError(f"{where} must be {_describe(tp)}, got {_show(value)}")
    return _string(where, value) if isinstance(value, str) else value


def _check_prefix(where: str, value: str) -> None:
    if not value or value.startswith("/") or value.endswith("/") or re.search(r"[+#\0]", value):
        raise ConfigError(
            f"{where} is {_show(value)}; it must be a non-empty MQTT topic without wildcards"
            " (+, #) or a leading or trailing /"
        )


def _check_mqtt(source: Path, raw: Any, folder: Path, check_files: bool = True) -> MqttSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [mqtt] must be a table of options")
    hints = typing.get_type_hints(MqttSettings)
    names = [f.name for f in fields(MqttSettings)]
    for key in raw:
        if key not in names:
            raise ConfigError(
                f"{source}: unknown option in [mqtt] {key!r}{_did_you_mean(key, names)};"
                f" allowed: {', '.join(names)}"
            )
    kwargs: dict[str, Any] = {}
    for f in fields(MqttSettings):
        where = _where(source, "mqtt", f.name)
        if f.name not in raw:
            if f.default is MISSING and f.default_factory is MISSING:
                raise ConfigError(f"{where} is required ({_describe(hints[f.name])})")
            continue
        value = _mqtt_value(where, hints[f.name], raw[f.name])
        if f.name in MQTT_RANGES:
            low, high = MQTT_RANGES[f.name]
            if not low <= value <= high:
                raise ConfigError(f"{where} is {value}; allowed: {low}..{high}")
        kwargs[f.name] = value
    where = _where(source, "mqtt", "host")
    if "host" in kwargs and not kwargs["host"].strip():
        raise ConfigError(f"{where} must not be empty")
    for key in ("topic_prefix", "discovery_prefix"):
        if key in kwargs:
            _check_prefix(_where(source, "mqtt", key), kwargs[key])
    if "password" in kwargs and "username" not in kwargs:
        raise ConfigError(f"{_where(source, 'mqtt', 'password')} is set but username is not")
    if "ca_file" in kwargs:
        where = _where(source, "mqtt", "ca_file")
        if not kwargs.get("tls", False):
            raise ConfigError(f"{where} is set but tls is false; set tls = true to use it")
        ca_path = _path(where, kwargs["ca_file"], folder)
        if check_files:
            _check_file(where, ca_path)
        kwargs["ca_file"] = str(ca_path)
    if "keyfile" in kwargs and "certfile" not in kwargs:
        raise ConfigError(f"{_where(source, 'mqtt', 'keyfile')} is set but certfile is not")
    for key in ("certfile", "keyfile"):
        if key in kwargs:
            where = _where(source, "mqtt", key)
            if not kwargs.get("tls", False):
                raise ConfigError(f"{where} is set but tls is false; set tls = true to use it")
            file_path = _path(where, kwargs[key], folder)
            if check_files:
                _check_file(where, file_path)
            kwargs[key] = str(file_path)
    try:
        return MqttSettings(**kwargs)
    except (TypeError, ValueError) as exc:  # the settings class's own checks
        raise ConfigError(f"{source}: [mqtt] {exc}") from exc


def parse_config(source: Path, raw: dict[str, Any], *, check_files: bool = True) -> DaemonConfig:
    """Check an already decoded TOML document; ``source`` names it in errors and anchors
    relative paths. ``check_files=False`` (commands that only read the journal) does not
    require the files only the daemon opens (TLS certificates) to exist here."""
    folder = source.parent
    allowed_top = [*TABLE_KEYS, *SECTIONS]
    for key, value in raw.items():
        if key in allowed_top:
            continue
        if isinstance(value, dict):
            raise ConfigError(
                f"{source}: unknown section [{key}]{_did_you_mean(key, SECTIONS)};"
                f" allowed: {', '.join(f'[{s}]' for s in SECTIONS)}"
            )
        raise ConfigError(
            f"{source}: unknown key {key!r}{_did_you_mean(key, allowed_top)};"
            f" allowed: {', '.join(TABLE_KEYS)} (at the top level or in [table])"
        )
    table: dict[str, Any] = {}
    section_of: dict[str, str | None] = {}
    if "table" in raw:
        if not isinstance(raw["table"], dict):
            raise ConfigError(f"{source}: [table] must be a table of options")
        for key, value in raw["table"].items():
            if key not in TABLE_KEYS:
                raise ConfigError(
                    f"{source}: unknown option in [table] {key!r}{_did_you_mean(key, TABLE_KEYS)};"
                    f" allowed: {', '.join(TABLE_KEYS)}"
                )
            table[key] = value
            section_of[key] = "table"
    for key in TABLE_KEYS:
        if key in raw:
            if key in table:
                raise ConfigError(
                    f"{source}: {key!r} is given both at the top level and in [table]; keep one"
                )
            table[key] = raw[key]
            section_of[key] = None

    def where(key: str) -> str:
        return _where(source, section_of.get(key, "table"), key)

    for key in ("id", "device", "rules"):
        if key not in table:
            raise ConfigError(f"{where(key)} is required")
    table_id = _string(where("id"), table["id"])
    if not TABLE_ID.fullmatch(table_id):
        raise ConfigError(
            f"{where('id')} is {_show(table_id)}; allowed: 1 to 32 characters from A-Z a-z 0-9 _ -"
        )
    device = _check_device(where("device"), _string(where("device"), table["device"]))
    rules_ref, house_rules = _check_rules(where("rules"), table["rules"], folder)
    journal = (
        _path(where("journal"), table["journal"], folder) if "journal" in table else DEFAULT_JOURNAL
    )
    if check_files:
        _check_serial(where("device"), device)
        if "journal" in table:
            _check_journal(where("journal"), journal)
    seat_names = (
        _check_seat_names(where("seat_names"), table["seat_names"], house_rules.players)
        if "seat_names" in table
        else None
    )
    mqtt = _check_mqtt(source, raw["mqtt"], folder, check_files) if "mqtt" in raw else None
    staff = _check_staff(source, raw, folder, house_rules.players)
    if check_files and staff.socket is not None:
        taken = {source: "the config file", journal: "the journal"}
        for suffix, what in (("-wal", "write-ahead log"), ("-shm", "shared memory"),
                             (".lock", "lock")):  # fmt: skip
            taken[Path(f"{journal}{suffix}")] = f"the journal's {what} file"
        _check_socket(_where(source, "staff", "socket"), staff.socket, taken)
    hold_next_hand = _check_trays(source, raw)
    stall_after_s = _check_watchdog(source, raw)
    return DaemonConfig(
        source=source,
        table_id=table_id,
        device=device,
        rules=rules_ref,
        house_rules=house_rules,
        journal=journal,
        seat_names=seat_names,
        mqtt=mqtt,
        staff=staff,
        hold_next_hand=hold_next_hand,
        stall_after_s=stall_after_s,
    )


def load_config(path: str | Path, *, check_files: bool = True) -> DaemonConfig:
    """Read and check the config file at ``path``; raises :class:`ConfigError`.
    ``check_files`` as in :func:`parse_config`."""
    source = Path(path)
    try:
        there = source.exists()
    except OSError as exc:  # a name longer than the file system allows
        why = exc.strerror
        raise ConfigError(f"{_show(str(source))}: cannot read the config file: {why}") from None
    if not there:
        raise ConfigError(f"{source}: no config file there")
    try:
        text = read_small_file(source, "config file")
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the config file: {exc.strerror}") from exc
    except ValueError as exc:
        raise ConfigError(f"{source}: cannot read the config file: {exc}") from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{source}: not valid TOML: nested too deeply") from None
    return parse_config(source, raw, check_files=check_files)


def config_for(
    device: str,
    rules: str,
    journal: Path,
    *,
    table_id: str = "sim",
    mqtt: MqttSettings | None = None,
    staff: StaffSettings | None = None,
) -> DaemonConfig:
    """A configuration made in code rather than read from a file (the demo, tests and
    benchmarks, which run the daemon against a simulated table)."""
    return DaemonConfig(
        source=Path("<code>"),
        table_id=table_id,
        device=device,
        rules=rules,
        house_rules=load_rules(rules),
        journal=journal,
        mqtt=mqtt,
        staff=staff if staff is not None else StaffSettings(),
    )
