"""The stall watchdog (tablectl/watchdog.py, issue 29 item 5): a hand in play without
progress for the configured time raises the ``stalled`` alert, published and journalled,
and progress ends it. Most of it on an injected clock; one wedged simulated table in
real time."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge import messages as m
from firmware_bridge.messages import Key as K
from hw_sim import SimTable
from tablectl.config import ConfigError, config_for, parse_config
from tablectl.daemon import Daemon
from tablectl.journal import Journal
from tablectl.watchdog import IN_HAND, StallClock, StallWatch
from tests.daemon.test_mqtt_contract import CheckedPublisher
from tests.daemon.test_table import Rig


class Clock:
    """Monotonic seconds a test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_stall_is_reported_once_and_ends_at_the_next_progress() -> None:
    clock = Clock()
    watch = StallClock(60, clock)
    assert watch.observe(True, 1) is None
    clock.now += 59.9
    assert watch.observe(True, 1) is None
    clock.now += 0.1
    assert watch.observe(True, 1) == "stalled"
    clock.now += 600
    assert watch.observe(True, 1) is None  # once, not at every look
    assert watch.observe(True, 2) == "cleared"
    clock.now += 59
    assert watch.observe(True, 2) is None


def test_time_out_of_a_hand_does_not_count() -> None:
    clock = Clock()
    watch = StallClock(60, clock)
    watch.observe(True, 1)
    clock.now += 50
    watch.observe(False, 1)  # settlement, a fault, the link down: people may pause
    clock.now += 3600
    assert watch.observe(False, 1) is None
    clock.now += 59
    assert watch.observe(True, 1) is None
    clock.now += 1
    assert watch.observe(True, 1) == "stalled"


def test_a_stall_is_at_least_a_moment_long() -> None:
    with pytest.raises(ValueError, match="at least a moment"):
        StallClock(0, Clock())


class Notes:
    """A recorder that keeps the notes (the only part the watchdog uses)."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, int | None, dict[str, Any]]] = []

    def game_started(self, rules: Any, rules_ref: str) -> None:
        pass

    def event_accepted(self, event: Any, state: Any) -> None:
        pass

    def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
        self.notes.append((kind, seat, detail))

    def game_abandoned(self) -> None:
        pass


async def test_a_table_stuck_in_play_shows_the_alert_until_it_moves() -> None:
    publisher = CheckedPublisher("table", 4)  # what it publishes meets the MQTT contract
    notes = Notes()
    clock = Clock()
    rig = Rig("jboy", publisher=publisher, recorder=notes, wall_time=lambda: 1_764_000_000.0)
    watch = StallWatch(rig.table.core, lambda: (rig.table.state, rig.table.flow_key()), 120, clock)
    await rig.up()
    await rig.start_hand()
    assert rig.table.phase in IN_HAND
    watch.check()
    clock.now += 119
    watch.check()
    assert publisher.seen["state"][-1]["alerts"] == []
    await rig.key(2, K.CHI)  # a key refused in this state moves nothing on
    assert rig.lines(2)[1].startswith("!")
    clock.now += 1
    watch.check()
    alert = publisher.seen["state"][-1]["alerts"][-1]
    assert (alert["kind"], alert["seat"], alert["text"]) == (
        "stalled", None, "no progress for 120 s (play)",
    )  # fmt: skip
    assert alert["since"] == 1_764_000_000.0 - 120  # since the last progress
    assert notes.notes[-1] == ("stalled", None, {"phase": "play", "idle_s": 120.0})
    assert publisher.seen["events"][-1] == {
        "v": 1,
        "type": "stalled",
        "seat": None,
        **notes.notes[-1][2],
    }
    clock.now += 30
    await rig.take((rig.table.state.dealer + 1) % rig.players)  # the next take: progress
    watch.check()
    assert publisher.seen["state"][-1]["alerts"] == []
    assert notes.notes[-1] == ("stall_over", None, {"stalled_s": 150.0})


async def test_walls_that_never_come_up_are_a_stall_but_a_dealer_who_waits_is_not() -> None:
    publisher = CheckedPublisher("table", 4)
    clock = Clock()
    rig = Rig("jboy", publisher=publisher, recorder=Notes(), wall_time=lambda: 1_764_000_000.0)
    watch = StallWatch(rig.table.core, lambda: (rig.table.state, rig.table.flow_key()), 120, clock)
    await rig.up()
    assert rig.table.phase == "table_shuffling"  # the machine builds the walls
    watch.check()
    for wall in range(rig.players - 1):  # one wall never reports DONE
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    watch.check()
    clock.now += 120
    watch.check()
    alert = publisher.seen["state"][-1]["alerts"][-1]
    assert (alert["kind"], alert["text"]) == ("stalled", "no progress for 120 s (shuffling)")
    await rig.send(m.WallStatus(wall=rig.players - 1, state=m.WallState.DONE))
    watch.check()  # the walls are up and the dealer is asked to roll: progress
    assert publisher.seen["state"][-1]["alerts"] == []
    clock.now += 3600  # the dealer may wait as long as the players like
    watch.check()
    assert publisher.seen["state"][-1]["alerts"] == []


@pytest.mark.parametrize(
    ("value", "why"),
    [(0.5, "allowed: seconds from 1 to 86400, or 0"), (True, "is True"), ("60", "is '60'"),
     (float("nan"), "is nan"), (86401, "is 86401")],
)  # fmt: skip
def test_the_loader_checks_the_option(tmp_path: Path, value: Any, why: str) -> None:
    base = {"id": "t1", "device": "socket://127.0.0.1:1", "rules": "jboy"}
    source = tmp_path / "tablectl.toml"
    config = parse_config(source, {**base, "watchdog": {"stall_after_s": 90}})
    assert config.stall_after_s == 90.0
    assert parse_config(source, base).stall_after_s == 300.0
    assert parse_config(source, {**base, "watchdog": {"stall_after_s": 0}}).stall_after_s is None
    with pytest.raises(ConfigError, match="watchdog") as info:
        parse_config(source, {**base, "watchdog": {"stall_after_s": value}})
    assert why in str(info.value)


#: The configured time of the wedged table, and what the test allows beyond it (the tick
#: is 0.1 s; a loaded machine is slow).
STALL_S = 0.5
SLACK_S = 5.0


async def test_a_wedged_table_shows_the_alert_within_the_configured_time(tmp_path: Path) -> None:
    # The bots play three seats; the person at the fourth never takes their tiles.
    sim = SimTable("jboy", 7, seats={0, 1, 2})
    url = await sim.start_sim("wedged")
    journal = tmp_path / "journal.sqlite3"
    config = dataclasses.replace(
        config_for(url, "jboy", journal, table_id="wedged"), stall_after_s=STALL_S
    )
    daemon = Daemon(config, claim_window_s=0.05)
    task = asyncio.create_task(daemon.run())
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        async with asyncio.timeout(30):
            while daemon.table is None or not daemon.table.alerts.seats("stalled"):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            table = daemon.table
            assert table.phase in IN_HAND
            assert table.state.wall is not None  # in the deal, waiting for seat 3
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    # Within the configured time and some slack of the start (the deal takes little).
    assert loop.time() - started <= STALL_S + SLACK_S
    with Journal.open(journal, readonly=True) as read:
        notes = [(note.kind, note.detail) for note in read.notes()]
    assert [kind for kind, _ in notes] == ["stalled"]
    assert notes[0][1]["idle_s"] >= STALL_S
