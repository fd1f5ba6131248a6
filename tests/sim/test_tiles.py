"""A table that reads its tiles: the seat zones and their SeatTiles snapshots, the 1.2
host that gets no snapshots, a reader fault, the control interface."""

from __future__ import annotations

import asyncio
import json

import pytest

import firmware_bridge.link as link_mod
from firmware_bridge.messages import (
    Capability,
    Fault,
    FaultClear,
    FaultCode,
    SeatTiles,
    StatusRequest,
    TableStatus,
    WallAction,
    WallCommand,
    WallStatus,
    Zone,
)
from hw_sim import SimTable
from hw_sim.__main__ import build_parser, readers
from hw_sim.control import ControlServer
from hw_sim.wall import tile_name
from hw_sim.zones import TableZones
from tests.sim.test_autoplay import frames, patient_link, play  # noqa: F401
from tests.sim.test_firmware import expect, shuffle, table_and_host

READERS = {"tile_reader": True, "wall_reader": True, "seat_reader": True}


# --- the zones ---------------------------------------------------------------------------


def test_zones_move_tiles_and_say_which_zones_changed() -> None:
    zones = TableZones(4)
    assert zones.take(0, [10, 20, 30]) == [(0, Zone.HAND)]
    assert zones.discard(0, 20) == [(0, Zone.HAND), (0, Zone.DISCARDS)]
    assert zones.take(1, [21, 22, 40]) == [(1, Zone.HAND)]
    called, changed = zones.call(1, 0, [21, 22])
    assert called == 20 and changed == [(0, Zone.DISCARDS), (1, Zone.HAND), (1, Zone.MELDS)]
    assert zones.tiles(1, Zone.MELDS) == (20, 21, 22) and zones.tiles(0, Zone.DISCARDS) == ()
    assert zones.declare(1, [40]) == [(1, Zone.HAND), (1, Zone.MELDS)]
    assert zones.where(40) == (1, Zone.MELDS) and zones.where(99) is None
    assert zones.clear() == [(0, Zone.HAND), (1, Zone.MELDS)]
    assert all(zones.tiles(s, z) == () for s, z in zones.all_places())


@pytest.mark.parametrize(
    ("move", "message"),
    [
        (lambda z: z.discard(0, 99), r"\[99\] are not in seat 0's hand"),
        (lambda z: z.declare(0, [10, 10]), "repeat"),
        (lambda z: z.call(1, 0, [11]), "seat 0 has no discard to call"),
        (lambda z: z.call(0, 0, [11]), "its own discard"),
        (lambda z: z.take(1, [10]), "already in seat 0's HAND"),
        (lambda z: z.take(4, [50]), "no seat 4"),
    ],
)
def test_a_move_that_cannot_be_changes_nothing(move: object, message: str) -> None:
    zones = TableZones(4)
    zones.take(0, [10, 11])
    before = [zones.tiles(s, z) for s, z in zones.all_places()]
    with pytest.raises(ValueError, match=message):
        move(zones)  # type: ignore[operator]
    assert [zones.tiles(s, z) for s, z in zones.all_places()] == before


# --- the firmware on the wire ------------------------------------------------------------


def snapshots(table: SimTable, since: int = 0) -> list[SeatTiles]:
    return [m for d, m in table.firmware.transcript[since:] if isinstance(m, SeatTiles)]


async def test_every_move_is_reported_as_snapshots_of_the_zones_it_changed() -> None:
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        caps = table.firmware.capabilities
        assert Capability.SEAT_READER in caps and Capability.WALL_READER in caps
        await shuffle(host)
        wall = table.firmware.wall.tiles
        mark = len(table.firmware.transcript)
        take = table.take(0, 0, 4)
        assert take.tile == wall[0]
        table.discard(0, wall[2])
        table.take(1, 4, 4)
        table.press(1, "PON")
        called = table.meld(1, [wall[4], wall[5]], discarder=0)
        table.meld(1, [wall[6]])  # a north pulled, say
        got = [(s.seat, s.zone, s.tiles) for s in snapshots(table, mark)]
        assert called == wall[2]
        assert got == [
            (0, Zone.HAND, tuple(wall[0:4])),
            (0, Zone.HAND, (wall[0], wall[1], wall[3])),
            (0, Zone.DISCARDS, (wall[2],)),
            (1, Zone.HAND, tuple(wall[4:8])),
            (0, Zone.DISCARDS, ()),
            (1, Zone.HAND, (wall[6], wall[7])),
            (1, Zone.MELDS, (wall[2], wall[4], wall[5])),
            (1, Zone.HAND, (wall[7],)),
            (1, Zone.MELDS, (wall[2], wall[4], wall[5], wall[6])),
        ]
        view = table.render()
        assert "tiles (seat readers):  hand | melds | pond" in view
        assert f"seat 1  {tile_name(wall[7])} | " in view
        # Each reaches the host in that order, after the take that caused it.
        received = await expect(host, SeatTiles, len(got))
        assert [(m.seat, m.zone, m.tiles) for m in received if isinstance(m, SeatTiles)] == got

        # StatusRequest: the TableStatus, then every zone, seat by seat.
        mark = len(table.firmware.transcript)
        await host.send(StatusRequest())
        await expect(host, TableStatus)
        resync = snapshots(table, mark)
        assert [(s.seat, s.zone) for s in resync] == table.firmware.zones.all_places()  # type: ignore[union-attr]
        assert [s.tiles for s in resync][:3] == [(wall[0], wall[1], wall[3]), (), ()]

        # The shuffle: every tile back into the table, the zones that held some say so,
        # before the motors report anything.
        mark = len(table.firmware.transcript)
        await host.send(WallCommand(WallAction.SHUFFLE))
        await expect(host, WallStatus)
        after = [m for _, m in table.firmware.transcript[mark:] if not isinstance(m, WallCommand)]
        emptied = [(m.seat, m.zone) for m in after if isinstance(m, SeatTiles)]
        assert emptied == [(0, Zone.HAND), (1, Zone.HAND), (1, Zone.MELDS)]
        assert all(not m.tiles for m in after if isinstance(m, SeatTiles))
        assert isinstance(after[len(emptied)], WallStatus)


async def test_bad_moves_are_refused_and_send_nothing() -> None:
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        await shuffle(host)
        table.take(0, 0, 4)
        mark = len(table.firmware.transcript)
        with pytest.raises(ValueError, match="not in seat 0's hand"):
            table.discard(0, table.firmware.wall.tiles[10])
        with pytest.raises(ValueError, match="seat 2 has no discard"):
            table.meld(1, [1], discarder=2)
        assert table.firmware.transcript[mark:] == []
    async with table_and_host("tenhou", 3) as (table, host):
        with pytest.raises(ValueError, match="no seat readers"):
            table.discard(0, 5)
        with pytest.raises(ValueError, match="no seat readers"):
            table.meld(0, [5])
        assert table.discard(0) is None  # a person's discard, as always: nothing sensed


async def test_a_1_2_host_gets_no_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "PROTOCOL_MINOR", 2)  # the host's Hello says 1.2
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        await shuffle(host)
        table.take(0, 0, 4)
        table.discard(0)
        await host.send(StatusRequest())
        await expect(host, TableStatus)
        assert table.firmware.host_minor == 2
        assert snapshots(table) == []
        assert host.stats.unknown_messages == 0


async def test_a_seat_reader_fault_silences_that_zone_until_cleared() -> None:
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        await shuffle(host)
        table.take(1, 4, 4)
        said = await table.inject("reader", "1", "discards")
        assert said == "seat 1 discards reader failed"
        (fault,) = await expect(host, Fault)
        assert isinstance(fault, Fault) and fault.code is FaultCode.TILE_READER
        assert fault.detail == 0x112 and fault.text == "seat 1 discards reader"
        mark = len(table.firmware.transcript)
        tile = table.discard(1)
        assert [(s.seat, s.zone) for s in snapshots(table, mark)] == [(1, Zone.HAND)]
        mark = len(table.firmware.transcript)
        await host.send(FaultClear(FaultCode.TILE_READER))
        await asyncio.sleep(0)
        assert [(s.seat, s.zone, s.tiles) for s in snapshots(table, mark)] == [
            (1, Zone.DISCARDS, (tile,))
        ]
    async with table_and_host("tenhou", 3) as (table, _):
        assert await table.inject("reader", "0", "hand") == "no seat readers: nothing to fail"


async def test_the_control_interface_discards_and_melds_real_tiles() -> None:
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        await shuffle(host)
        control = await ControlServer(table).start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", control.port)

            async def ask(request: dict[str, object]) -> dict[str, object]:
                writer.write(json.dumps(request).encode() + b"\n")
                await writer.drain()
                reply: dict[str, object] = json.loads(await reader.readline())
                return reply

            wall = table.firmware.wall.tiles
            await ask({"cmd": "take", "seat": 0, "pos": 0, "count": 4})
            assert await ask({"cmd": "discard", "seat": 0}) == {"ok": True, "tile": wall[3]}
            await ask({"cmd": "take", "seat": 1, "pos": 4, "count": 4})
            reply = await ask({"cmd": "meld", "seat": 1, "tiles": wall[4:6], "from": 0})
            assert reply == {"ok": True, "called": wall[3]}
            state = await ask({"cmd": "state"})
            zones = state["zones"]
            assert isinstance(zones, list) and zones[1] == {
                "hand": wall[6:8], "melds": [wall[3], *wall[4:6]], "discards": []
            }  # fmt: skip
            bad = await ask({"cmd": "meld", "seat": 1, "tiles": "x"})
            assert bad["ok"] is False and "'tiles' must be a list" in str(bad["error"])
            bad = await ask({"cmd": "discard", "seat": 0, "tile": 200})
            assert bad["ok"] is False and "'tile' is 200" in str(bad["error"])
            writer.close()
            await writer.wait_closed()
        finally:
            await control.close()


def test_the_cli_tile_reader_is_a_table_that_reads_every_tile() -> None:
    parse = build_parser().parse_args
    assert readers(parse(["serve", "--pty", "--tile-reader"])) == READERS
    assert readers(parse(["serve", "--pty", "--wall-reader"])) == {
        "tile_reader": False, "wall_reader": True, "seat_reader": False
    }  # fmt: skip
    assert not any(readers(parse(["serve", "--pty"])).values())
