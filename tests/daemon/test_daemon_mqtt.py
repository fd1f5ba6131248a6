"""The daemon with MQTT configured: an autoplayed game against a real Mosquitto.

A parlor watching the broker sees the table's retained state, per-seat scores that match
the game's final scores, and the finished game.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiomqtt

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.mqtt_settings import MqttSettings
from tablectl.rules.loader import load_rules


async def test_daemon_publishes_state_scores_and_the_finished_game(
    mosquitto: Any, tmp_path: Path
) -> None:
    house = load_rules("sanma-free")
    sim = SimTable(house, 3, max_games=1)
    url = await sim.start_pty()
    settings = MqttSettings(host="127.0.0.1", port=mosquitto.port, topic_prefix="parlor")
    config = config_for(
        url, "sanma-free", tmp_path / "journal.sqlite3", table_id="t9", mqtt=settings
    )
    games: list[dict[str, Any]] = []
    game_seen = asyncio.Event()
    received: dict[str, Any] = {}

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as watcher:
        await watcher.subscribe("parlor/t9/#", qos=1)

        async def watch() -> None:
            async for message in watcher.messages:
                payload = message.payload
                text = payload.decode() if isinstance(payload, bytes | bytearray) else str(payload)
                received[str(message.topic)] = (
                    json.loads(text) if text[:1] in "{[0123456789-" else text
                )
                if str(message.topic) == "parlor/t9/games":
                    games.append(json.loads(text))
                    game_seen.set()

        watcher_task = asyncio.create_task(watch())
        daemon = Daemon(config, claim_window_s=0.05, max_games=1)
        task = asyncio.create_task(daemon.run())
        try:
            async with asyncio.timeout(60):
                await sim.wait_games(1)
                done, _ = await asyncio.wait(
                    {watcher_task, asyncio.ensure_future(game_seen.wait())},
                    return_when=asyncio.FIRST_COMPLETED,
                )
                assert not watcher_task.done(), watcher_task.exception()
        finally:
            daemon.stop.set()
            await task
            await sim.close()
            watcher_task.cancel()
    final = games[0]["final"]
    assert games[0]["rules"] == "sanma-free"
    state = received["parlor/t9/state"]
    assert state["finished"] is True and state["rules"] == "sanma-free"
    raw_scores = state["scores"]
    assert [received[f"parlor/t9/seat/{s}/score"] for s in range(3)] == raw_scores
    # Raw scores plus the leftover deposits given to the top are the final scores.
    assert sum(final["scores"]) == sum(raw_scores) + state["deposits"]
    assert received["parlor/t9/availability"] in ("online", "offline")
