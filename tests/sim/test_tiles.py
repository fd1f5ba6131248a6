"""A table that reads its tiles: the seat zones and their SeatTiles snapshots, the layouts
against the takes, the 1.2 host that gets no snapshots, a reader fault, and whole games
with the daemon in which the bots play the tiles they hold."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

import firmware_bridge.link as link_mod
from firmware_bridge.messages import (
    Capability,
    Fault,
    FaultClear,
    FaultCode,
    KeyPress,
    Message,
    SeatTiles,
    StatusRequest,
    TableStatus,
    WallAction,
    WallCommand,
    WallLayout,
    WallStatus,
    WallTake,
    Zone,
)
from hw_sim import SimTable
from hw_sim.__main__ import build_parser, readers
from hw_sim.control import ControlServer
from hw_sim.wall import tile_name
from hw_sim.zones import TableZones
from tablectl.rules import wall as W
from tablectl.rules.loader import load_rules
from tablectl.tiles.ids import tile_set
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


async def test_a_kantan_call_keeps_the_called_tile_in_the_pond_and_melds_the_stand_in() -> None:
    # 鳴いた牌を河から持って来ないで、代わりに山の牌を加える (seed 004): seat 1 pons seat 0's
    # discard on its own turn (PON, FROM? 0, OK): its own two tiles go among its melds,
    # the called tile stays in seat 0's pond, and its next take, from its own wall, is
    # laid among its melds in the called tile's place, never in its hand.
    async with table_and_host("kantan", 3, **READERS) as (table, host):
        await shuffle(host)
        follower, zones = table.follower, table.firmware.zones
        assert zones is not None
        follower.state = W.start_wall(follower.rules, 0, (3, 4))  # as the dice would
        while follower.state.phase in (W.DEAL, W.TAKE):
            table.take(follower.state.turn)
        thrown = table.discard(0)
        for key in ("PON", "0", "OK"):
            table.press(1, key)
        assert follower.state.replacing_call and follower.take_zone(1) is Zone.MELDS
        own = list(zones.hand(1)[:2])
        assert table.meld(1, own, discarder=0) == thrown
        mark = len(table.firmware.transcript)
        stand_in = table.take(1)
        assert zones.tiles(0, Zone.DISCARDS) == (thrown,)
        assert zones.tiles(1, Zone.MELDS) == (*own, stand_in.tile) and len(zones.hand(1)) == 11
        got = [(s.seat, s.zone, s.tiles) for s in snapshots(table, mark)]
        assert got == [(1, Zone.MELDS, (*own, stand_in.tile))]
        assert follower.state.phase == W.CALLED and follower.take_zone(1) is Zone.HAND


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


async def test_a_misreading_hand_reader_lies_until_the_next_shuffle() -> None:
    async with table_and_host("tenhou", 3, **READERS) as (table, host):
        await shuffle(host)
        table.take(1, 4, 4)
        hand = table.firmware.zones.hand(1)  # type: ignore[union-attr]
        mark = len(table.firmware.transcript)
        said = await table.inject("misread", "1")
        assert said == "seat 1 hand reader misreads until the next shuffle"
        # No fault: the reader does not know. Its first tile is read as another copy of
        # the same kind, from now on.
        lie = (hand[0] ^ 1, *hand[1:])
        assert [(s.seat, s.zone, s.tiles) for s in snapshots(table, mark)] == [(1, Zone.HAND, lie)]
        assert not any(isinstance(m, Fault) for _, m in table.firmware.transcript[mark:])
        mark = len(table.firmware.transcript)
        table.discard(1, hand[3])
        assert [(s.zone, s.tiles) for s in snapshots(table, mark)] == [
            (Zone.HAND, lie[:3]), (Zone.DISCARDS, (hand[3],))
        ]  # fmt: skip
        assert table.firmware.zones.hand(1) == hand[:3]  # type: ignore[union-attr]
        # The shuffle empties the zones; the tiles that come up next are read right.
        await shuffle(host)
        mark = len(table.firmware.transcript)
        table.take(1, 4, 4)
        (snapshot,) = snapshots(table, mark)
        assert snapshot.tiles == table.firmware.zones.hand(1)  # type: ignore[union-attr]


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


# --- whole games ---------------------------------------------------------------------------


def check_tiles(events: Sequence[Message], preset: str) -> dict[str, int]:
    """Follow every hand of a game as the table reported it and check the readers agree:
    each layout is a shuffle of the preset's set, each take's tile is the layout's at that
    position and enters the taker's hand, snapshots keep the protocol's order, every tile
    is in one place at a time and came out of the wall or another zone. Counts returned."""
    house = load_rules(preset)
    ids = sorted(tile_set(house).ids)
    per = 34 if house.players == 4 else 36
    zones: dict[tuple[int, Zone], list[int]] = {
        (s, z): [] for s in range(house.players) for z in Zone
    }
    walls: dict[int, tuple[int, ...]] = {}
    layout: list[int] = []
    wall_tiles: set[int] = set()
    out: set[int] = set()  # tiles that left the wall this hand
    counts = {"hands": 0, "takes": 0, "snapshots": 0, "discards": 0, "red_in_hands": 0}
    pending: int | None = None  # the tile a take reported, due in the taker's hand
    for msg in events:
        if isinstance(msg, WallLayout):
            if len(walls) == house.players:
                walls = {}
            walls[msg.wall] = msg.tiles
            if len(walls) == house.players:
                assert all(not tiles for tiles in zones.values()), "zones not empty at a shuffle"
                layout = [t for w in range(house.players) for t in walls[w]]
                assert sorted(layout) == ids and all(len(walls[w]) == per for w in walls)
                wall_tiles, out = set(layout), set()
                counts["hands"] += 1
        elif isinstance(msg, WallTake):
            assert msg.tile == layout[msg.position]
            pending = msg.tile
            counts["takes"] += 1
        elif isinstance(msg, SeatTiles):
            counts["snapshots"] += 1
            old, new = zones[(msg.seat, msg.zone)], list(msg.tiles)
            kept = [t for t in old if t in new]
            assert new[: len(kept)] == kept, f"order broken: {old} -> {new}"
            added = new[len(kept) :]
            for tile in added:
                if tile in wall_tiles:
                    assert msg.zone is Zone.HAND, f"{tile} from the wall into {msg.zone.name}"
                    wall_tiles.discard(tile)
                    out.add(tile)
                else:  # moved: it left the wall this hand (and its last zone, see below)
                    assert tile in out, f"tile {tile} came from nowhere"
            if pending is not None and msg.zone is Zone.HAND:
                assert pending in added, "the taken tile did not reach the taker's hand"
                pending = None
            if msg.zone is Zone.DISCARDS and added:
                assert len(added) == 1
                counts["discards"] += 1
            zones[(msg.seat, msg.zone)] = new
            seen = [t for z in zones.values() for t in z]
            assert len(seen) == len(set(seen)), "a tile in two zones"
            counts["red_in_hands"] += sum(
                1 for t in added if msg.zone is Zone.HAND and t in tile_set(house).red
            )
    assert pending is None
    return counts


@pytest.mark.parametrize(("preset", "seed"), [("tenhou", 1), ("sanma-free", 3)])
async def test_whole_games_with_real_tiles(
    tmp_path: Path, preset: str, seed: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    played = await play(tmp_path, preset, seed, **READERS)
    assert len(played.finals) == 1
    bots = played.table.bots
    assert bots is not None and bots.refusals == []
    tx, _ = frames(played.transcript)
    counts = check_tiles(tx, preset)
    assert counts["hands"] >= 2 and counts["snapshots"] > 10 * counts["hands"]
    assert counts["red_in_hands"] > 0
    keys = {m.key.name for m in tx if isinstance(m, KeyPress)}
    assert {"RIICHI", "RON"} <= keys and keys & {"PON", "KAN"}
    # The daemon decoded every snapshot and had nothing to say about them.
    assert played.host_stats["unknown_messages"] == 0 and played.host_stats["decode_errors"] == 0
    assert [r.getMessage() for r in caplog.records] == []


async def test_a_tile_game_is_reproducible(tmp_path: Path) -> None:
    first = await play(tmp_path, "tenhou", 2, **READERS)
    second = await play(tmp_path, "tenhou", 2, **READERS)
    assert frames(first.transcript) == frames(second.transcript)
    assert first.finals == second.finals
