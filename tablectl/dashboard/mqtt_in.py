"""The dashboard's broker link: subscribes to every table's topics and feeds the model;
publishes the staff's acknowledgements.

One asyncio task (:meth:`ParlorLink.run`) connects with aiomqtt, subscribes, and folds
each message into the :class:`~tablectl.dashboard.model.ParlorModel`, calling
``on_change`` with the keys that changed. A lost or refused connection is retried with
the same backoff as the tables' publisher (0.5 s doubling to 30 s, with jitter).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import ssl
import time
import uuid
from collections.abc import Callable
from typing import Any

from aiomqtt import Client, MqttError

from tablectl.dashboard.model import VERSION, ParlorModel, subscriptions
from tablectl.dashboard.settings import DashboardSettings
from tablectl.mqtt_link import (
    PUBLISH_TIMEOUT,
    RECONNECT_DELAY_MAX,
    RECONNECT_DELAY_MIN,
    RECONNECT_FACTOR,
    RECONNECT_JITTER,
)
from tablectl.mqtt_signing import sign

__all__ = ["NotConnected", "ParlorLink", "ack_topic"]

_log = logging.getLogger(__name__)


class NotConnected(Exception):
    """A staff action could not be sent: the broker link is down."""


def ack_topic(prefix: str, table: str) -> str:
    """The topic of the staff acknowledgements for ``table``."""
    return f"{prefix}/{VERSION}/{table}/staff/ack"


def command_topic(prefix: str, table: str) -> str:
    """The topic of staff game control for ``table``."""
    return f"{prefix}/{VERSION}/{table}/staff/command"


class ParlorLink:
    """Keeps the model fed from the broker, reconnecting for as long as it runs."""

    def __init__(
        self,
        settings: DashboardSettings,
        model: ParlorModel,
        on_change: Callable[[set[str]], None],
        now: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.model = model
        self.on_change = on_change
        self.now = now
        self._client: Client | None = None
        self._client_id = f"tablectl-dashboard-{uuid.uuid4().hex[:8]}"

    def _tls(self) -> ssl.SSLContext | None:
        if not self.settings.broker_tls:
            return None
        return ssl.create_default_context(cafile=self.settings.ca_file)

    def _make_client(self, tls: ssl.SSLContext | None) -> Client:
        s = self.settings
        return Client(
            s.broker_host,
            s.broker_port,
            username=s.mqtt_username,
            password=s.mqtt_password,
            identifier=self._client_id,
            keepalive=30,
            timeout=PUBLISH_TIMEOUT,
            tls_context=tls,
        )

    async def run(self) -> None:
        """Connect, subscribe and read until cancelled; reconnect after any failure."""
        delay = RECONNECT_DELAY_MIN
        tls = await asyncio.to_thread(self._tls)
        logged = False
        while True:
            try:
                async with self._make_client(tls) as client:
                    await client.subscribe(
                        [(topic, 1) for topic in subscriptions(self.settings.prefix)]
                    )
                    self._client = client
                    self.on_change(self.model.set_broker(True))
                    _log.info(
                        "connected to %s:%s", self.settings.broker_host, self.settings.broker_port
                    )
                    delay, logged = RECONNECT_DELAY_MIN, False
                    async for message in client.messages:
                        payload = message.payload
                        if not isinstance(payload, bytes | bytearray):
                            payload = str(payload or "").encode()
                        changed = self.model.apply(str(message.topic), bytes(payload), self.now())
                        if changed:
                            self.on_change(changed)
            except MqttError as exc:
                if not logged:
                    _log.warning("broker link: %s; retrying", exc)
                    logged = True
            finally:
                self._client = None
                self.on_change(self.model.set_broker(False))
            await asyncio.sleep(delay * (1 + random.random() * RECONNECT_JITTER))
            delay = min(delay * RECONNECT_FACTOR, RECONNECT_DELAY_MAX)

    async def publish_ack(self, table: str, alert: str, by: str, at: float) -> None:
        """Publish a staff acknowledgement (qos 1); raises :class:`NotConnected`."""
        payload = {"alert": alert, "by": by, "at": at}
        await self._publish(ack_topic(self.settings.prefix, table), payload)

    async def publish_command(
        self,
        table: str,
        cmd: str,
        by: str,
        rules: str | None,
        at: float,
        *,
        seat: int | None = None,
    ) -> None:
        """Publish game control for ``table`` (qos 1); raises :class:`NotConnected`."""
        payload: dict[str, Any] = {"cmd": cmd, "by": by, "at": at}
        if rules is not None:
            payload["rules"] = rules
        if seat is not None:
            payload["seat"] = seat
        await self._publish(command_topic(self.settings.prefix, table), payload)

    async def publish_seat(self, table: str, by: str, names: list[str] | None, at: float) -> None:
        """Publish a seating for ``table`` (qos 1, docs/seating.md); raises
        :class:`NotConnected`."""
        payload: dict[str, Any] = {"cmd": "seat", "by": by, "names": names, "at": at}
        await self._publish(command_topic(self.settings.prefix, table), payload)

    async def _publish(self, topic: str, payload: dict[str, Any]) -> None:
        client = self._client
        if client is None:
            raise NotConnected("the dashboard is not connected to the broker")
        secret = self.settings.command_secret
        if secret is not None:
            # Signed when sent, not when asked for: the table's window starts now.
            payload = {**payload, **sign(secret, topic, payload, self.now())}
        try:
            await client.publish(topic, json.dumps(payload, ensure_ascii=False), qos=1)
        except MqttError as exc:
            raise NotConnected(str(exc)) from exc
