"""The simulated firmware on the wire: a host Link drives it like a daemon would."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator

import pytest

import firmware_bridge.link as link_mod
import hw_sim.firmware as fw_mod
from firmware_bridge.link import Link, LinkLost, LinkUp, Role, TableRebooted
from firmware_bridge.messages import (
    Capability,
    CentreDisplay,
    DiceResult,
    DiceRoll,
    Fault,
    FaultClear,
    FaultCode,
    HelloReply,
    Key,
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    StatusRequest,
    TableReset,
    TableStatus,
    TrayTotals,
    WallAction,
    WallCommand,
    WallLayout,
    WallState,
    WallStatus,
    WallTake,
    Wind,
)
from firmware_bridge.testing import next_status
from hw_sim import SimTable
from hw_sim.wall import PhysicalWall, tile_name, tile_set
from tests.bridge.conftest import FAST

_names = itertools.count()
#: The host link and the simulated firmware share one event loop: a stall of a loaded
#: machine silences both, so only the test of host silence keeps the fast silence
#: timeout (tests/bridge/conftest.py).
pytestmark = pytest.mark.usefixtures("patient_link")


async def expect(host: Link, cls: type[Message], n: int = 1) -> list[Message]:
    """The next ``n`` messages of type ``cls`` from the table (others are skipped)."""
    out: list[Message] = []
    async with asyncio.timeout(5), contextlib.aclosing(host.events()) as events:
        async for item in events:
            if isinstance(item, cls):
                out.append(item)
                if len(out) == n:
                    return out
    raise AssertionError("link closed")


@contextlib.asynccontextmanager
async def table_and_host(
    rules: str = "ariari", seed: int = 1, **kw: object
) -> AsyncIterator[tuple[SimTable, Link]]:
    table = SimTable(rules, seed, autoplay=False, **kw)  # type: ignore[arg-type]
    url = await table.start_sim(f"fw-{next(_names)}")
    host = Link(url, role=Role.HOST)
    try:
        await host.start()
        async with asyncio.timeout(5):
            await host.wait_up()
        yield table, host
    finally:
        await host.close()
        await table.close()


async def shuffle(host: Link, walls: int = 4) -> list[WallStatus]:
    await host.send(WallCommand(WallAction.SHUFFLE))
    got = await expect(host, WallStatus, 4 * walls)
    return [g for g in got if isinstance(g, WallStatus)]


def test_physical_wall_sets_and_shuffle() -> None:
    import random

    assert len(tile_set(4)) == 136 and len(tile_set(3)) == 108
    assert all(not 4 <= t < 32 for t in tile_set(3))  # no 2m..8m in sanma
    assert tile_name(0) == "1m" and tile_name(135) == "C" and tile_name(200) == "?"
    a, b = PhysicalWall(4, random.Random(3)), PhysicalWall(4, random.Random(3))
    a.shuffle()
    b.shuffle()
    assert a.tiles == b.tiles and sorted(a.tiles) == list(range(136))
    assert a.take(2, [10, 11]) == a.tiles[10:12]
    assert a.count(0) == 32 and a.wall_of(40) == 1
    with pytest.raises(ValueError, match="empty"):
        a.take(1, [10])
    with pytest.raises(ValueError, match="no wall position"):
        a.take(1, [136])
    a.put_back([10])
    assert a.present(10) and not a.present(11)
    three = PhysicalWall(3, random.Random(3))
    assert three.per_wall == 36 and three.wall_of(107) == 2


async def test_hello_and_capabilities() -> None:
    async with table_and_host("jboy-sanma", 5, tile_reader=True, trays=True) as (table, host):
        reply = host.peer
        assert isinstance(reply, HelloReply)
        assert reply.seats == 3 and reply.boot_id == table.firmware.boot_id
        assert reply.capabilities & Capability.TILE_READER
        assert reply.capabilities & Capability.TRAY_SENSORS
        assert reply.firmware_version == fw_mod.FIRMWARE_VERSION
    # The boot id comes from the seed: the same seed boots the same way.
    assert SimTable("ariari", 5).firmware.boot_id == SimTable("ariari", 5).firmware.boot_id


async def test_shuffle_raise_dice_and_consoles() -> None:
    async with table_and_host() as (table, host):
        statuses = await shuffle(host)
        states = [s.state for s in statuses]
        assert (
            states
            == [WallState.SHUFFLING] * 4
            + [WallState.BUILDING] * 4
            + [WallState.RAISING] * 4
            + [WallState.DONE] * 4
        )
        assert all(s.tiles_counted == s.tiles_expected == 34 for s in statuses[-4:])
        assert table.walls == [WallState.DONE] * 4
        await host.send(DiceRoll())
        (dice,) = await expect(host, DiceResult)
        assert isinstance(dice, DiceResult) and table.dice == (dice.die1, dice.die2)
        await host.send(SeatDisplay(2, "HAN? 3", "! 20 fu"))
        await host.send(SeatLamps(2, dealer=True, riichi=True))
        centre = CentreDisplay(Wind.SOUTH, 2, 1, 3, 70, (4, 100), 125)
        await host.send(centre)
        assert table.displays[2] == ("HAN? 3", "! 20 fu")
        assert table.lamps[2] == (True, True) and table.centre == centre
        text = table.render()
        assert "HAN? 3" in text and "South 2" in text and "dora 2m 8s" in text
        await host.send(StatusRequest())
        (status,) = await expect(host, TableStatus)
        assert isinstance(status, TableStatus) and status.walls == (WallState.DONE,) * 4
        await host.send(TableReset())
        await host.send(StatusRequest())
        (status,) = await expect(host, TableStatus)
        assert isinstance(status, TableStatus) and status.walls == (WallState.IDLE,) * 4
        assert table.displays[2] == ("", "") and table.centre is None


async def test_takes_with_tile_reader_and_keys() -> None:
    async with table_and_host(tile_reader=True) as (table, host):
        await shuffle(host)
        table.take(0, 10, count=4)
        table.press(1, "RON")
        table.press(3, Key.DIGIT_7)
        take, k1, k2 = await expect(host, Message, 3)
        assert take == WallTake(0, 10, table.firmware.wall.tile_at(10))
        assert (k1, k2) == (KeyPress(1, Key.RON), KeyPress(3, Key.DIGIT_7))
        with pytest.raises(ValueError, match="empty"):
            table.take(2, 12)
        with pytest.raises(ValueError, match="no take due"):
            table.take(2)  # no dice, no wall tracker: a position is needed
        with pytest.raises(ValueError, match="unknown key"):
            table.press(0, "JUMP")


async def test_wall_reader_reports_each_raised_wall_before_its_done() -> None:
    async with table_and_host(wall_reader=True) as (table, host):
        assert isinstance(host.peer, HelloReply)
        assert host.peer.capabilities & Capability.WALL_READER
        assert not host.peer.capabilities & Capability.TILE_READER
        await host.send(WallCommand(WallAction.SHUFFLE))
        got = await expect(host, Message, 12 + 4 + 4)
        tail = got[12:]  # after shuffling, building, raising: layout, DONE for each wall
        for w in range(4):
            layout, done = tail[2 * w], tail[2 * w + 1]
            assert layout == WallLayout(w, tuple(table.firmware.wall.tiles[34 * w : 34 * w + 34]))
            assert done == WallStatus(w, WallState.DONE, 34, 34)
        # A second shuffle lays new walls and reports them again.
        before = list(table.firmware.wall.tiles)
        await host.send(WallCommand(WallAction.SHUFFLE))
        again = [g for g in await expect(host, Message, 20) if isinstance(g, WallLayout)]
        assert table.firmware.wall.tiles != before
        assert [t for g in again for t in g.tiles] == table.firmware.wall.tiles


async def test_wall_reader_three_players_and_count_error() -> None:
    async with table_and_host("jboy-sanma", 2, wall_reader=True) as (table, host):
        await table.inject("tilecount", "1")
        await host.send(WallCommand(WallAction.SHUFFLE))
        got = await expect(host, Message, 9 + 2 + 2 + 2)  # three walls; wall 1: error, fault
        layouts = [g for g in got if isinstance(g, WallLayout)]
        tiles = table.firmware.wall.tiles
        assert layouts == [WallLayout(0, tuple(tiles[:36])), WallLayout(2, tuple(tiles[72:]))]


async def test_no_layouts_without_the_wall_reader() -> None:
    async with table_and_host(tile_reader=True) as (table, host):
        await shuffle(host)
        await host.send(StatusRequest())
        await expect(host, TableStatus)
        assert not any(isinstance(msg, WallLayout) for _, msg in table.firmware.transcript)


async def test_same_seed_same_walls_and_dice() -> None:
    runs = []
    for _ in range(2):
        async with table_and_host(seed=42) as (table, host):
            for _ in range(3):
                await shuffle(host)
                await host.send(DiceRoll())
                await expect(host, DiceResult)
            runs.append((list(table.firmware.wall.tiles), table.firmware.transcript[:]))
    assert runs[0] == runs[1]


async def test_motors_take_time_and_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fw_mod, "SHUFFLE_SECONDS", 0.2)
    monkeypatch.setattr(fw_mod, "RAISE_SECONDS", 0.01)
    async with table_and_host(speed=1.0) as (table, host):
        await host.send(WallCommand(WallAction.SHUFFLE))
        await expect(host, WallStatus, 4)
        assert table.walls == [WallState.SHUFFLING] * 4  # still shuffling: it takes time
        await host.send(WallCommand(WallAction.STOP))
        stopped = await expect(host, WallStatus, 4)
        assert {s.state for s in stopped if isinstance(s, WallStatus)} == {WallState.STOPPED}
        await host.send(WallCommand(WallAction.RAISE, 1))
        got = await expect(host, WallStatus, 2)
        assert [(s.wall, s.state) for s in got if isinstance(s, WallStatus)] == [
            (1, WallState.RAISING),
            (1, WallState.DONE),
        ]


async def test_host_silence_stops_motors_and_reports_when_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fw_mod, "SHUFFLE_SECONDS", 5.0)
    monkeypatch.setattr(link_mod, "LINK_TIMEOUT", FAST["LINK_TIMEOUT"])  # what is tested
    async with table_and_host(speed=1.0) as (table, host):
        await host.send(SeatDisplay(0, "E 25000", "keep me"))
        await host.send(WallCommand(WallAction.SHUFFLE))
        await expect(host, WallStatus, 4)
        await table.inject("unplug", "0.5")  # longer than LINK_TIMEOUT (0.3 s in tests)
        got = await expect(host, Fault)
        assert got == [Fault(FaultCode.HOST_SILENT, 0, "host silent: motors stopped")]
        assert table.walls == [WallState.STOPPED] * 4
        assert table.displays[0] == ("E 25000", "keep me")  # displays are kept
        assert FaultCode.HOST_SILENT in table.firmware.latched
        await host.send(FaultClear(FaultCode.HOST_SILENT))
        await host.send(StatusRequest())
        (status,) = await expect(host, TableStatus)
        assert isinstance(status, TableStatus) and status.faults == ()


async def test_reboot_gives_a_new_boot_id() -> None:
    async with table_and_host() as (table, host):
        old = table.firmware.boot_id
        await host.send(SeatDisplay(1, "W 25000"))
        await table.inject("reboot")
        async with asyncio.timeout(5):
            rebooted = await next_status(host, TableRebooted)
        assert rebooted.old_boot_id == old and rebooted.new_boot_id == table.firmware.boot_id
        assert table.displays[1] == ("", "")
        async with asyncio.timeout(5):
            await host.wait_up()
        table.press(0, "OK")
        assert await expect(host, KeyPress) == [KeyPress(0, Key.OK)]


async def test_tile_count_tray_and_stuck_key_faults() -> None:
    async with table_and_host(trays=True, faults="tilecount@0:2") as (table, host):
        # The plan's tilecount fires at once (event 0 passed at the first event).
        table.press(0, "0")
        await expect(host, KeyPress)
        await host.send(WallCommand(WallAction.SHUFFLE))
        got = await expect(host, Message, 17)
        assert got[-3:] == [
            WallStatus(2, WallState.TILE_COUNT_ERROR, 33, 34),
            Fault(FaultCode.TILE_COUNT, 2, "wall 2: 33 of 34"),
            WallStatus(3, WallState.DONE, 34, 34),
        ]
        await host.send(FaultClear(FaultCode.TILE_COUNT))
        await host.send(StatusRequest())
        (status,) = await expect(host, TableStatus)
        assert isinstance(status, TableStatus) and status.walls[2] is WallState.IDLE
        assert await table.inject("tray", "1") == "tray of seat 1 misreads one 1000 stick"
        (totals,) = await expect(host, TrayTotals)
        assert totals == TrayTotals((25000, 24000, 25000, 25000))
        table.firmware.move_tray(1, -2000)
        assert await expect(host, TrayTotals) == [TrayTotals((25000, 23000, 25000, 25000))]
        await table.inject("stuck", "3", "OK")
        presses = await expect(host, KeyPress, 4)
        assert presses == [KeyPress(3, Key.OK)] * 4
        with pytest.raises(ValueError, match="unknown fault"):
            await table.inject("meteor")


async def test_line_faults_are_repaired_by_the_link() -> None:
    async with table_and_host(faults="corrupt=0.2,drop=0.2,dup=0.2") as (table, host):
        for i in range(30):
            table.press(i % 4, Key(i % 10))
        got = await expect(host, KeyPress, 30)
        assert got == [KeyPress(i % 4, Key(i % 10)) for i in range(30)]
        (line,) = table.firmware.lines
        assert line.stats.dropped and line.stats.flipped and line.duplicated
        for i in range(20):
            await host.send(SeatDisplay(i % 4, f"line {i}"))
        assert table.displays[3] == ("line 19", "")


async def test_link_lost_on_unplug_for_each_endpoint_kind() -> None:
    """An unplug of the sim endpoint closes the pipe: the host sees it and reconnects."""
    async with table_and_host() as (table, host):
        task = asyncio.create_task(table.inject("unplug", "0.05"))
        async with asyncio.timeout(5):
            await next_status(host, LinkLost)
            await next_status(host, LinkUp)
        await task
        table.press(2, "TSUMO")
        assert await expect(host, KeyPress) == [KeyPress(2, Key.TSUMO)]
