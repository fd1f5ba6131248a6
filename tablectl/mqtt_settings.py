"""MQTT connection settings for the table daemon.

Kept in its own module with no third-party imports so the config loader can import it
without pulling in aiomqtt (and so a table without a broker never imports the client).
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field

from tablectl.mqtt_signing import secret_problem

__all__ = ["COMMAND_MODES", "MqttSettings"]

#: How a table takes staff requests (acknowledgements, game control) from the broker:
#: ``signed`` checks each one's signature (``command_secret``), ``broker-acl`` trusts
#: whatever the broker lets through (its login and ACL are the only protection), ``off``
#: refuses them all.
COMMAND_MODES = ("signed", "broker-acl", "off")


@dataclass(frozen=True)
class MqttSettings:
    """Where and how the daemon reaches the parlor's MQTT broker.

    Attributes:
        host: Broker host name or address.
        port: Broker TCP port (1883 plain, usually 8883 with TLS).
        username: Login name, or ``None`` for an anonymous connection.
        password: Password for ``username``; ignored without a username.
        tls: Connect with TLS.
        ca_file: PEM bundle to verify the broker with; ``None`` uses the system store.
        certfile: PEM client certificate the table proves itself with (needs ``tls``).
        keyfile: Its private key, when not in ``certfile``.
        client_id: MQTT client identifier; ``None`` derives ``tablectl-<table id>``.
        topic_prefix: First level of every table topic (``<prefix>/v1/<table>/...``).
        discovery_prefix: Home Assistant discovery prefix.
        keepalive: MQTT keepalive in seconds; the broker publishes the last will
            after about 1.5 times this much silence.
        command_secret: The secret the parlor's dashboard signs staff requests with
            (``tablectl mqtt-secret``); never shown in the settings' repr.
        commands: One of :data:`COMMAND_MODES`, or None: ``signed`` with a
            ``command_secret``, ``off`` without (see :attr:`command_mode`).
    """

    host: str
    port: int = 1883
    username: str | None = None
    password: str | None = None
    tls: bool = False
    ca_file: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    client_id: str | None = None
    topic_prefix: str = "tablectl"
    discovery_prefix: str = "homeassistant"
    keepalive: int = 30
    command_secret: str | None = field(default=None, repr=False)
    commands: str | None = None

    def __post_init__(self) -> None:
        if self.commands is not None and self.commands not in COMMAND_MODES:
            msg = f"commands is {self.commands!r}; allowed: {', '.join(COMMAND_MODES)}"
            raise ValueError(msg)
        if self.command_secret is not None:
            problem = secret_problem(self.command_secret)
            if problem is not None:
                raise ValueError(f"command_secret {problem}")
            if self.commands not in (None, "signed"):
                msg = f"command_secret is set but commands is {self.commands!r}: remove one"
                raise ValueError(msg)
        elif self.commands == "signed":
            msg = "commands is 'signed' but there is no command_secret to check with"
            raise ValueError(msg)

    @property
    def command_mode(self) -> str:
        """How staff requests from the broker are taken: one of :data:`COMMAND_MODES`.
        Without a word in the config, only a secret lets them in."""
        if self.commands is not None:
            return self.commands
        return "signed" if self.command_secret is not None else "off"

    def command_mode_line(self) -> str:
        """The one line the daemon logs at start about how it takes staff requests."""
        mode = self.command_mode
        if mode == "signed":
            return (
                "MQTT staff requests: signed (HMAC-SHA256 with command_secret; unsigned,"
                " forged or replayed ones are refused)"
            )
        if mode == "broker-acl":
            login = "anonymous!" if self.username is None and self.certfile is None else "logged in"
            return (
                f'MQTT staff requests: trusted from the broker (commands = "broker-acl",'
                f" {login}): its login and ACL are the only protection"
            )
        return (
            "MQTT staff requests: off (no command_secret in [mqtt]); acknowledgements and"
            " game control from the parlor are refused"
        )


#: A broker's host name (an IPv6 address is taken as urllib reads it).
_HOST = re.compile(r"^[A-Za-z0-9.-]{1,253}$")


def parse_broker_url(url: str, where: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``; raises
    ValueError with one line starting with ``where`` (what the caller calls the setting)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"{where}: expected mqtt://HOST:PORT or mqtts://HOST:PORT")
    if parsed.username or parsed.password:
        raise ValueError(f"{where}: put the broker login in the config file, not the URL")
    if parsed.path not in ("", "/") or parsed.query or parsed.fragment:
        raise ValueError(f"{where}: expected mqtt://HOST:PORT with nothing after the port")
    host = parsed.hostname
    if not host or not (_HOST.match(host) or ":" in host):
        raise ValueError(f"{where}: no host name")
    try:
        port_text = parsed.netloc.rsplit(":", 1)[1] if parsed.port is not None else ""
    except ValueError:
        raise ValueError(f"{where}: the port must be a number from 1 to 65535") from None
    tls = parsed.scheme == "mqtts"
    if not port_text:
        return host, 8883 if tls else 1883, tls
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"{where}: the port must be a number from 1 to 65535, not {port_text!r}")
    return host, int(port_text), tls
