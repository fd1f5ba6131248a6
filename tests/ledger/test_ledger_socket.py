"""The ledger's MQTT socket sends at once (TCP_NODELAY).

Without it, the acknowledgement the ledger publishes right after its PUBACK of the
table's game waited for the broker's delayed ACK (Nagle's algorithm): about 40 ms a
game, which capped a ledger on SQLite on disk near 85 games a second in
bench/parlor_scale.py (about 400 with it; docs/performance.md, "Parlor scale")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tablectl.ledger.service import LedgerService
from tablectl.ledger.settings import LedgerSettings
from tests.helpers import Broker, assert_one_socket_without_nagle


async def test_the_ledgers_socket_sends_at_once(mosquitto: Broker, tmp_path: Path) -> None:
    settings = LedgerSettings(database=str(tmp_path / "ledger.sqlite3"), broker_port=mosquitto.port)
    service = LedgerService(settings)
    task = asyncio.create_task(service.run())
    try:
        async with asyncio.timeout(10):
            await service.online.wait()
        assert_one_socket_without_nagle(mosquitto.port)
    finally:
        service.stop()
        await task
