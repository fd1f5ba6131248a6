"""The dashboard's settings: the command line's ``--broker`` and ``--listen``, and its
TOML config file (``[dashboard]``). No third-party imports: ``tablectl dashboard`` checks
its input before it imports aiohttp or aiomqtt.

Config file (every key optional; the command line wins over the file)::

    [dashboard]
    broker = "mqtt://127.0.0.1:1883"     # mqtts:// for TLS (system CA store or ca_file)
    listen = "127.0.0.1:8080"
    prefix = "tablectl"
    mqtt_username = "dashboard"
    mqtt_password = "..."
    ca_file = "/etc/tablectl/parlor-ca.pem"
    staff_password_hash = "pbkdf2_sha256$..."   # tablectl dashboard-password
    view_password_hash = "pbkdf2_sha256$..."    # tablectl dashboard-password --view
    command_secret = "..."                      # tablectl mqtt-secret (the tables' too)
    ledger_poll_s = 30                          # how often the ledger's games are read
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablectl.console.staff import PinHash
from tablectl.dashboard.auth import PasswordError, check_password_hash
from tablectl.mqtt_settings import parse_broker_url
from tablectl.mqtt_signing import secret_problem
from tablectl.rules.loader import read_small_file

__all__ = [
    "DEFAULT_LISTEN",
    "DashboardSettings",
    "SettingsError",
    "is_loopback",
    "load_settings",
    "parse_broker",
    "parse_listen",
]

DEFAULT_LISTEN = "127.0.0.1:8080"
DEFAULT_PREFIX = "tablectl"
_KEYS = {
    "broker",
    "listen",
    "prefix",
    "mqtt_username",
    "mqtt_password",
    "ca_file",
    "staff_password_hash",
    "view_password_hash",
    "command_secret",
    "ledger_poll_s",
}
#: How often the ledger's database is read by default (s): a game the broker did not bring
#: the dashboard (it reached the ledger later) shows within this; and the setting's bounds.
DEFAULT_LEDGER_POLL_S = 30.0
LEDGER_POLL_RANGE = (1.0, 3600.0)


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class DashboardSettings:
    """Everything ``tablectl dashboard`` needs to run.

    Attributes:
        broker_host, broker_port, broker_tls: the parlor's broker.
        mqtt_username, mqtt_password: the dashboard's broker login (``None``: anonymous).
        ca_file: PEM bundle to verify a TLS broker; ``None`` uses the system store.
        prefix: first level of the table topics.
        listen_host, listen_port: where the web page is served.
        staff_hash: the staff password (``None``: staff actions from loopback only).
        view_hash: a password to view the page at all (``None``: anyone who reaches it).
        command_secret: what staff requests to the tables are signed with (``None``:
            sent unsigned, for tables in ``commands = "broker-acl"``); not in the repr.
        ledger_poll_s: how often the ledger's database is read (its finished games, and
            whether it can be read at all), with a ``[ledger]`` section.
    """

    broker_host: str
    broker_port: int
    broker_tls: bool = False
    mqtt_username: str | None = None
    mqtt_password: str | None = None
    ca_file: str | None = None
    prefix: str = DEFAULT_PREFIX
    listen_host: str = "127.0.0.1"
    listen_port: int = 8080
    staff_hash: PinHash | None = None
    view_hash: PinHash | None = None
    command_secret: str | None = field(default=None, repr=False)
    ledger_poll_s: float = DEFAULT_LEDGER_POLL_S

    @property
    def open_staff(self) -> bool:
        """Whether staff actions need no login (no staff password, loopback only)."""
        return self.staff_hash is None


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is on the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _port(where: str, text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise SettingsError(f"{where}: the port must be a number from 1 to 65535, not {text!r}")
    return int(text)


def parse_broker(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``
    (:func:`tablectl.mqtt_settings.parse_broker_url`)."""
    try:
        return parse_broker_url(url, f"--broker {url!r}")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def parse_listen(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``HOST:PORT`` or ``[IPv6]:PORT``; the host must be an address
    or ``localhost`` (a name could resolve to anything)."""
    where = f"--listen {text!r}"
    match = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\w+)|([^:\[\]]+):(\w+)", text)
    if match is None:
        raise SettingsError(f"{where}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    host = match.group(1) or match.group(3)
    port = _port(where, match.group(2) or match.group(4))
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise SettingsError(f"{where}: the host must be an IP address or localhost") from None
    return host, port


def _read_file(path: Path) -> dict[str, Any]:
    try:
        # A regular file only: /dev/zero or a FIFO would be read for ever.
        raw = tomllib.loads(read_small_file(path, "config file"))
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "not TOML"
        raise SettingsError(f"{path}: not valid TOML: {reason}") from None
    except ValueError as exc:  # not a regular file, too big, not UTF-8
        raise SettingsError(f"{path}: cannot read: {exc}") from None
    section = raw.get("dashboard", {})
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [dashboard] must be a table of options")
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise SettingsError(f"{path}: unknown option in [dashboard]: {unknown[0]!r}")
    for key, value in section.items():
        if key == "ledger_poll_s":
            low, high = LEDGER_POLL_RANGE
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SettingsError(f"{path}: [dashboard] ledger_poll_s must be a number")
            if not low <= value <= high:
                raise SettingsError(
                    f"{path}: [dashboard] ledger_poll_s must be {low:g} to {high:g} seconds"
                )
        elif not isinstance(value, str):
            raise SettingsError(f"{path}: [dashboard] {key} must be a string")
    return section


def load_settings(
    broker: str | None, listen: str | None, config: str | None, prefix: str | None = None
) -> DashboardSettings:
    """Settings from the command line and the config file; raises :class:`SettingsError`.

    Refuses to listen on anything but loopback without a staff password: the page would
    offer staff actions to whoever reaches the port.
    """
    section: dict[str, Any] = _read_file(Path(config)) if config else {}
    where_file = f"{config}: [dashboard]"
    broker_url = broker or section.get("broker")
    if not broker_url:
        raise SettingsError("no broker: give --broker mqtt://HOST:PORT (or broker in --config)")
    host, port, tls = parse_broker(broker_url)
    listen_host, listen_port = parse_listen(listen or section.get("listen") or DEFAULT_LISTEN)
    hashes: dict[str, PinHash | None] = {}
    for key in ("staff_password_hash", "view_password_hash"):
        text = section.get(key)
        try:
            hashes[key] = check_password_hash(text) if text else None
        except PasswordError as exc:
            raise SettingsError(f"{where_file} {key}: {exc}") from None
    if hashes["staff_password_hash"] is None and not is_loopback(listen_host):
        raise SettingsError(
            f"--listen {listen_host}: listening beyond this machine needs a staff password"
            " (staff_password_hash in the [dashboard] section of --config; make one with"
            " 'tablectl dashboard-password')"
        )
    topic_prefix = prefix or section.get("prefix") or DEFAULT_PREFIX
    if (
        topic_prefix.startswith("/")
        or topic_prefix.endswith("/")
        or re.search(r"[+#\0]", topic_prefix)
    ):
        raise SettingsError(f"--prefix {topic_prefix!r}: a topic without wildcards or edge slashes")
    username = section.get("mqtt_username")
    if section.get("mqtt_password") and not username:
        raise SettingsError(f"{where_file} mqtt_password is set but mqtt_username is not")
    secret = section.get("command_secret")
    problem = None if secret is None else secret_problem(secret)
    if problem is not None:
        raise SettingsError(f"{where_file} command_secret {problem}")
    return DashboardSettings(
        broker_host=host,
        broker_port=port,
        broker_tls=tls,
        mqtt_username=username,
        mqtt_password=section.get("mqtt_password"),
        ca_file=section.get("ca_file"),
        prefix=topic_prefix,
        listen_host=listen_host,
        listen_port=listen_port,
        staff_hash=hashes["staff_password_hash"],
        view_hash=hashes["view_password_hash"],
        command_secret=secret,
        ledger_poll_s=float(section.get("ledger_poll_s", DEFAULT_LEDGER_POLL_S)),
    )
