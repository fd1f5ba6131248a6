"""The dora indicators on the centre display, from the wall reader's layouts.

The controller is driven directly (the rig of tests/daemon/test_table.py). The layouts are
a seeded permutation of the tiles, so an indicator's tile id is not its position.
"""

from __future__ import annotations

import json
import logging
import random

import pytest

from firmware_bridge import messages as m
from tests.daemon.test_table import Rig, _restarted

K = m.Key


def layouts(players: int = 4, seed: int = 1) -> list[m.WallLayout]:
    """A shuffled set laid into the walls, one WallLayout per wall."""
    per = 34 if players == 4 else 36
    tiles = list(range(136)) if players == 4 else [t for t in range(136) if not 4 <= t < 32]
    random.Random(seed).shuffle(tiles)
    return [m.WallLayout(w, tuple(tiles[w * per : w * per + per])) for w in range(players)]


def tile_at(walls: list[m.WallLayout], pos: int) -> int:
    per = len(walls[0].tiles)
    return walls[pos // per].tiles[pos % per]


def centre(rig: Rig) -> m.CentreDisplay:
    return next(x for x in reversed(rig.sent) if isinstance(x, m.CentreDisplay))


def indicators(rig: Rig) -> tuple[int, ...]:
    wall = rig.state.wall
    assert wall is not None and wall.dora_indicators
    return wall.dora_indicators


async def raised(rig: Rig, walls: list[m.WallLayout]) -> None:
    """The table reports the walls' layouts while it raises them (before their DONE)."""
    assert rig.table.phase == "table_shuffling"
    for layout in walls:
        await rig.send(layout)


@pytest.mark.parametrize("preset", ["ariari", "jboy-sanma", "kantan"])
async def test_the_centre_shows_the_indicator_tiles_of_the_layouts(preset: str) -> None:
    rig = Rig(preset)
    await rig.up()
    walls = layouts(rig.players)
    await raised(rig, walls)
    await rig.start_hand()
    (pos,) = indicators(rig)
    assert centre(rig).dora == (tile_at(walls, pos),)
    assert tile_at(walls, pos) != pos  # a tile id, not the position
    assert rig.table.dora_tiles() == centre(rig).dora


async def test_a_kan_dora_joins_the_first_one() -> None:
    rig = Rig("ariari")  # kan dora turned at once for a closed kan
    await rig.up()
    walls = layouts()
    await raised(rig, walls)
    await rig.start_hand()
    dealer = rig.state.dealer
    await rig.key(dealer, K.KAN)
    await rig.key(dealer, K.DIGIT_1)  # a closed kan
    await rig.take(dealer)  # the replacement tile
    first, kan = indicators(rig)
    assert centre(rig).dora == (tile_at(walls, first), tile_at(walls, kan))


async def test_without_layouts_the_centre_shows_no_dora() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    assert indicators(rig) and centre(rig).dora == ()


async def test_a_wall_without_its_layout_shows_no_dora_rather_than_a_guess() -> None:
    rig = Rig()
    await rig.up()
    walls = layouts()
    await raised(rig, [w for w in walls if w.wall != 2])
    await rig.start_hand(dice=(3, 4))  # 7 from the dealer (seat 0): seat 2's wall breaks
    (pos,) = indicators(rig)
    assert pos // 34 == 2 and centre(rig).dora == ()


async def test_a_take_that_disagrees_clears_the_dora_until_the_next_shuffle(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = Rig()
    await rig.up()
    walls = layouts()
    await raised(rig, walls)
    await rig.start_hand()
    wall = rig.state.wall
    assert wall is not None
    shown = centre(rig).dora
    assert shown
    # The next draw, read as the layout says: nothing changes.
    seat = (wall.turn + 1) % rig.players
    pos = next(p for p in wall.live_positions if p not in wall.taken)
    await rig.send(m.WallTake(seat=seat, position=pos, tile=tile_at(walls, pos)))
    assert rig.state.wall is not wall and centre(rig).dora == shown
    # The following one read as another tile: a misread somewhere; no dora any more.
    wall = rig.state.wall
    assert wall is not None
    seat = (seat + 1) % rig.players
    pos = next(p for p in wall.live_positions if p not in wall.taken)
    wrong = (tile_at(walls, pos) + 1) % 136
    with caplog.at_level(logging.WARNING):
        await rig.send(m.WallTake(seat=seat, position=pos, tile=wrong))
    assert "the wall layout says" in caplog.text
    assert centre(rig).dora == () and rig.table.layouts_void
    # A take that agrees again does not bring them back; a restart keeps them cleared.
    rig = await _restarted(rig)
    assert rig.table.layouts_void and centre(rig).dora == ()
    # The next hand (a tsumo, everyone confirms) has new walls and shows its dora again.
    await rig.key(seat, K.TSUMO)
    await rig.type(seat, "2")
    await rig.key(seat, K.OK)
    await rig.type(seat, "30")
    await rig.key(seat, K.OK)
    for other in range(rig.players):
        await rig.key(other, K.OK)
    assert rig.table.phase == "table_shuffling"
    assert rig.table.wall_layouts == {} and not rig.table.layouts_void
    walls = layouts(seed=2)
    await raised(rig, walls)
    await rig.start_hand()
    (pos,) = indicators(rig)
    assert centre(rig).dora == (tile_at(walls, pos),)


async def test_the_layouts_survive_a_restart_in_the_middle_of_the_hand() -> None:
    rig = Rig()
    await rig.up()
    walls = layouts()
    await raised(rig, walls)
    await rig.start_hand()
    shown = centre(rig).dora
    assert shown
    rig = await _restarted(rig)
    assert centre(rig).dora == shown
    assert rig.table.wall_layouts == {w.wall: w.tiles for w in walls}


async def test_a_flow_stored_before_the_wall_reader_shows_no_dora() -> None:
    # A daemon updated in the middle of a hand: its stored flow has no layouts. The
    # centre shows no dora (never a wrong one) until the next hand's walls are read.
    rig = Rig()
    await rig.up()
    await raised(rig, layouts())
    await rig.start_hand()
    assert centre(rig).dora
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    del snapshot["wall_layouts"], snapshot["layouts_void"]
    new = Rig("ariari", state=rig.state)
    new.table.restore_flow(snapshot)
    await new.up()
    assert indicators(new) and centre(new).dora == ()


async def test_a_stored_layout_that_does_not_fit_is_refused() -> None:
    rig = Rig()
    await rig.up()
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    snapshot["wall_layouts"] = {"0": list(range(36))}  # a three-player wall at four
    with pytest.raises(ValueError, match="console state"):
        Rig().table.restore_flow(snapshot)


async def test_layouts_that_do_not_fit_are_ignored_or_distrusted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rig = Rig()
    await rig.up()
    walls = layouts()
    with caplog.at_level(logging.WARNING):
        await rig.send(m.WallLayout(0, tuple(range(36))))  # 36 tiles at a 4-player table
        assert rig.table.wall_layouts == {}
        for layout in walls:
            await rig.send(layout)
        await rig.send(m.WallLayout(1, walls[0].tiles))  # the tiles of wall 0 again
    assert "with 36 tiles ignored" in caplog.text and "repeats tiles" in caplog.text
    await rig.start_hand()
    assert indicators(rig) and centre(rig).dora == ()


async def test_walls_read_again_replace_their_layouts() -> None:
    # A warm reset re-sends the layouts of the raise before it, then the host's new
    # SHUFFLE raises the walls again: while old and new walls share tiles none is trusted,
    # and once every wall is read again the new raise's layouts are the hand's.
    rig = Rig()
    await rig.up()
    await raised(rig, layouts(seed=1))
    walls = layouts(seed=2)
    await rig.send(walls[0])
    assert rig.table.layouts.tile_at(0) is None
    await raised(rig, walls[1:])
    assert rig.table.wall_layouts == {w.wall: w.tiles for w in walls}
    await rig.start_hand()
    (pos,) = indicators(rig)
    assert centre(rig).dora == (tile_at(walls, pos),)


async def test_a_layout_outside_a_raise_is_ignored() -> None:
    rig = Rig()
    await rig.up()
    walls = layouts()
    await rig.start_hand()
    for layout in walls:
        await rig.send(layout)
    assert rig.table.wall_layouts == {} and centre(rig).dora == ()


async def test_a_layout_changes_the_stored_flow() -> None:
    # The daemon commits the console flow with a group of table events only when its
    # key changes: a layout must change it, or a restart would forget it.
    rig = Rig()
    await rig.up()
    before = rig.table.flow_key()
    await rig.send(layouts()[0])
    assert rig.table.flow_key() != before
