"""MQTT connection settings for the table daemon.

Kept in its own module with no third-party imports so the config loader can import it
without pulling in aiomqtt (and so a table without a broker never imports the client).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MqttSettings"]


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
