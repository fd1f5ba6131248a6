"""Seating over a real Mosquitto (issue #30): the dashboard's signed ``seat`` command
reaches the daemon, which seats the players of the game that has not begun, publishes
them in its state and journals them; a bad seating is refused and said why."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiomqtt

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.mqtt_settings import MqttSettings
from tablectl.seating import latest_seating
from tests.daemon.test_daemon_mqtt import SECRET, signed
from tests.mqtt_contract import check

TOPIC = "tablectl/v1/t5/staff/command"
NAMES = ["Aoki Ken", "Chiba", "t5 guest 2", "t5 guest 3"]


async def test_the_dashboards_seating_reaches_the_table_and_its_journal(
    mosquitto: Any, tmp_path: Path
) -> None:
    sim = SimTable("jboy", 1, autoplay=False)  # the first game opens; nothing is played
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, command_secret=SECRET)
    journal_path = tmp_path / "journal.sqlite3"
    config = config_for(url, "jboy", journal_path, table_id="t5", mqtt=settings)
    events: list[dict[str, Any]] = []
    states: list[dict[str, Any]] = []

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as parlor:
        await parlor.subscribe("tablectl/v1/t5/#", qos=1)

        async def until(want: Any) -> None:
            if want():
                return
            async with asyncio.timeout(10):
                async for message in parlor.messages:
                    assert isinstance(message.payload, bytes)
                    value = check(str(message.topic), message.payload)
                    if str(message.topic).endswith("/events"):
                        events.append(value)
                    if str(message.topic).endswith("/state"):
                        states.append(value)
                    if want():
                        return

        daemon = Daemon(config, claim_window_s=0.05)
        task = asyncio.create_task(daemon.run())
        try:
            await until(lambda: states and states[-1]["link"] == "up")
            for names in (NAMES[:3], NAMES):
                seat = {"cmd": "seat", "by": "Eri", "names": names, "at": time.time()}
                await parlor.publish(TOPIC, signed(TOPIC, seat), qos=1)
            await until(lambda: states[-1]["names"] == NAMES)
            # The events and the state go out in turns: either may come first.
            await until(lambda: len([e for e in events if e.get("action") == "seat"]) == 2)
        finally:
            daemon.stop.set()
            await task
            await sim.close()
    seating = [e for e in events if e.get("action") == "seat"]
    assert seating[0]["type"] == "staff_refused"
    assert seating[0]["why"] == "seating needs 4 names, one per seat"
    assert (seating[1]["type"], seating[1]["by"], seating[1]["names"]) == (
        "staff_action", "Eri", NAMES,
    )  # fmt: skip
    with Journal.open(journal_path, readonly=True) as journal:
        assert latest_seating(journal, 4) == tuple(NAMES)
        game = journal.last_game()
        assert game is not None and journal.game(game).seats == tuple(NAMES)
