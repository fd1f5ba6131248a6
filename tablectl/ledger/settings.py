"""The ledger's settings: its command line and its TOML config file (``[ledger]``).

Config file (every key optional; the command line wins over the file)::

    [ledger]
    database = "/var/lib/tablectl/ledger.sqlite3"   # or postgresql://user@host/db
    broker = "mqtt://127.0.0.1:1883"                # mqtts:// for TLS
    prefix = "tablectl"                             # the tables' topic prefix
    mqtt_username = "ledger"
    mqtt_password = "..."
    ca_file = "/etc/tablectl/parlor-ca.pem"
    cutoff_hour = 6                                 # the business day starts at 06:00
    timezone = "Asia/Tokyo"                         # default: the machine's

No third-party imports: a bad setting is refused before aiomqtt or psycopg load.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tablectl.ledger.db import is_url
from tablectl.mqtt_settings import parse_broker_url
from tablectl.rules.loader import read_small_file

__all__ = ["DEFAULT_DATABASE", "LedgerSettings", "SettingsError", "load_settings"]

#: Beside the table daemon's default journal (a ledger on a table's Pi, or its own box).
DEFAULT_DATABASE = "/var/lib/tablectl/ledger.sqlite3"
DEFAULT_BROKER = "mqtt://127.0.0.1:1883"
DEFAULT_PREFIX = "tablectl"
#: A parlor open until the small hours closes its day at 06:00 by default.
DEFAULT_CUTOFF_HOUR = 6
_KEYS = {
    "database",
    "broker",
    "prefix",
    "mqtt_username",
    "mqtt_password",
    "ca_file",
    "cutoff_hour",
    "timezone",
}
_PREFIX = re.compile(r"^[A-Za-z0-9_/-]{1,100}$")


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it and says why."""


@dataclass(frozen=True)
class LedgerSettings:
    """Everything ``tablectl ledger`` needs.

    Attributes:
        database: A SQLite file path, or a ``postgresql://`` URL.
        broker_host, broker_port, broker_tls: the parlor's broker.
        mqtt_username, mqtt_password: the ledger's broker login (None: anonymous).
        ca_file: PEM bundle to verify a TLS broker (None: the system store).
        prefix: the tables' topic prefix.
        cutoff_hour: the hour (0-23) at which a business day starts.
        timezone: IANA name of the parlor's time zone (None: the machine's).
    """

    database: str = DEFAULT_DATABASE
    broker_host: str = "127.0.0.1"
    broker_port: int = 1883
    broker_tls: bool = False
    mqtt_username: str | None = None
    mqtt_password: str | None = field(default=None, repr=False)
    ca_file: str | None = None
    prefix: str = DEFAULT_PREFIX
    cutoff_hour: int = DEFAULT_CUTOFF_HOUR
    timezone: str | None = None

    def zone(self) -> ZoneInfo | None:
        """The time zone of the business day (None: the machine's)."""
        return None if self.timezone is None else ZoneInfo(self.timezone)


def parse_broker(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``
    (:func:`tablectl.mqtt_settings.parse_broker_url`)."""
    try:
        return parse_broker_url(url, f"broker {url!r}")
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        raw = tomllib.loads(read_small_file(path, "config file"))
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise SettingsError(f"{path}: not a TOML file: {exc}") from None
    except ValueError as exc:  # read_small_file: missing, not a regular file, too big
        raise SettingsError(f"{path}: {exc}") from None
    section = raw.get("ledger", {})
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: [ledger] must be a table")
    unknown = sorted(set(section) - _KEYS)
    if unknown:
        raise SettingsError(f"{path}: [ledger] has an unknown key {unknown[0]!r}")
    for key, value in section.items():
        if key == "cutoff_hour":
            if isinstance(value, bool) or not isinstance(value, int):
                raise SettingsError(f"{path}: [ledger] cutoff_hour must be an integer")
        elif not isinstance(value, str):
            raise SettingsError(f"{path}: [ledger] {key} must be a text")
    return section


def load_settings(
    config: str | None = None,
    *,
    database: str | None = None,
    broker: str | None = None,
    prefix: str | None = None,
    cutoff_hour: int | None = None,
) -> LedgerSettings:
    """The settings from the config file (if any) with the command line's on top."""
    values: dict[str, Any] = _read_file(Path(config)) if config else {}
    for key, value in (
        ("database", database),
        ("broker", broker),
        ("prefix", prefix),
        ("cutoff_hour", cutoff_hour),
    ):
        if value is not None:
            values[key] = value
    host, port, tls = parse_broker(values.get("broker", DEFAULT_BROKER))
    target = values.get("database", DEFAULT_DATABASE)
    if not target:
        raise SettingsError("database: give a SQLite file path or a postgresql:// URL")
    if not is_url(target) and "://" in target:
        raise SettingsError(
            f"database {target!r}: a URL must start with postgresql:// (else give a file path)"
        )
    pfx = values.get("prefix", DEFAULT_PREFIX)
    if not _PREFIX.match(pfx) or "//" in pfx or pfx.startswith("/") or pfx.endswith("/"):
        raise SettingsError(f"prefix {pfx!r}: letters, digits, '_', '-' and inner '/' only")
    hour = values.get("cutoff_hour", DEFAULT_CUTOFF_HOUR)
    if not 0 <= hour <= 23:
        raise SettingsError(f"cutoff_hour {hour}: must be 0 to 23")
    zone = values.get("timezone")
    if zone is not None:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise SettingsError(f"timezone {zone!r}: not a known time zone") from None
    return LedgerSettings(
        database=target,
        broker_host=host,
        broker_port=port,
        broker_tls=tls,
        mqtt_username=values.get("mqtt_username"),
        mqtt_password=values.get("mqtt_password"),
        ca_file=values.get("ca_file"),
        prefix=pfx,
        cutoff_hour=hour,
        timezone=zone,
    )
