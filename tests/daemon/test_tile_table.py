"""The table controller at a table that reads every tile (docs/tiles.md, "The daemon"):
the layout after the dice, discards and melds off the seat readers, the scored win and its
OK?, the refusals a win gets from the tiles, a call that waits for its meld, the fallback
to key entry when a reader fails, the draw the tiles decide, a restart in the middle, and
the hand zones checked against the tiles (a reader catching up is not a disagreement)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from firmware_bridge import messages as m
from tablectl.console.model import WinEntry
from tablectl.console.tiles import TILE_CAPS, hand_text
from tablectl.console.wins import score_line, yaku_pages
from tablectl.rules import events as ev
from tablectl.rules import tiletrack
from tablectl.rules.wall import WallState
from tablectl.table import Table
from tablectl.tiles.ids import KIND_NAMES, kind, tile_set
from tests.daemon.test_table import Rig
from tests.helpers import RecordingPublisher
from tests.tiles.kit import build_layout

K = m.Key
#: Seat 0 deals; it draws 9s first and throws it; the others throw what they draw.
DEALER_TENPAI = {0: "123m 456m 789m 123p 4p"}


class TileRig(Rig):
    """A :class:`Rig` whose table reads every tile, with a scripted layout."""

    def __init__(self, preset: str = "tenhou", *, layout: dict[str, Any], **kw: Any) -> None:
        super().__init__(preset, **kw)
        self.layout = build_layout(self.rules, dice=(3, 4), **layout)
        self.events: list[ev.Event] = []
        self.table.recorder = self  # type: ignore[assignment]

    # the recorder
    def game_started(self, rules: Any, rules_ref: str) -> None:
        self.events.clear()

    def event_accepted(self, event: ev.Event, state: Any) -> None:
        self.events.append(event)

    def note(self, kind_: str, seat: int | None, detail: dict[str, Any]) -> None:
        pass

    async def up(self, caps: m.Capability = TILE_CAPS) -> None:
        await self.table.link_up(rebooted=False, capabilities=caps)

    async def start_hand(self, dice: tuple[int, int] = (3, 4)) -> None:
        per = len(self.layout) // self.players
        for wall in range(self.players):
            tiles = self.layout[wall * per : (wall + 1) * per]
            await self.send(m.WallLayout(wall=wall, tiles=tiles))
        await super().start_hand(dice)

    def hand(self, seat: int) -> tuple[int, ...]:
        tiles = self.state.tiles
        assert tiles is not None
        return tiles.seats[seat].concealed

    def tile(self, seat: int, name: str) -> int:
        """A tile of kind ``name`` (``"4p"``) in ``seat``'s hand."""
        return next(t for t in self.hand(seat) if KIND_NAMES[kind(t)] == name)

    async def discard(self, seat: int, tile: int | None = None) -> int:
        """``seat`` puts ``tile`` (its drawn tile by default) in its pond."""
        tiles = self.state.tiles
        assert tiles is not None
        if tile is None:
            drawn = tiles.seats[seat].drawn
            assert drawn is not None
            tile = drawn
        pond = (*self.table.zone_ponds[seat], tile)
        await self.send(m.SeatTiles(seat=seat, zone=m.Zone.DISCARDS, tiles=pond))
        return tile

    async def meld(self, seat: int, *tiles: int) -> None:
        melds = (*self.table.zone_melds[seat], *tiles)
        await self.send(m.SeatTiles(seat=seat, zone=m.Zone.MELDS, tiles=melds))

    async def show_hand(self, seat: int, tiles: tuple[int, ...] | None = None) -> None:
        """``seat``'s hand reader reports ``tiles`` (by default its hand as the tiles have
        it now)."""
        shown = self.hand(seat) if tiles is None else tiles
        await self.send(m.SeatTiles(seat=seat, zone=m.Zone.HAND, tiles=shown))

    async def show_hands(self) -> None:
        """Every hand reader reports its hand as the tiles have it."""
        for seat in range(self.players):
            await self.show_hand(seat)

    async def go_round(self, *seats: int) -> None:
        """Each of ``seats`` in turn takes and throws its drawn tile."""
        for seat in seats:
            await self.take(seat)
            await self.discard(seat)

    async def play_out(self) -> WallState:
        """After the dealer's first discard: every seat in turn takes and throws its drawn
        tile until the wall is exhausted; the wall then (its last discard just made)."""
        wall = self.state.wall
        assert wall is not None
        while wall.live_left:
            await self.go_round(wall.turn)
            wall = self.state.wall
            assert wall is not None
        return wall


async def started(layout: dict[str, Any], preset: str = "tenhou") -> TileRig:
    rig = TileRig(preset, layout=layout)
    await rig.up()
    await rig.start_hand()
    return rig


async def test_a_table_without_the_readers_is_keyed_as_before() -> None:
    rig = TileRig(layout={"hands": DEALER_TENPAI})
    await rig.up(m.Capability.WALL_READER | m.Capability.WALL_TAKE_SENSORS)
    await rig.start_hand()
    assert rig.state.tiles is None and not any(isinstance(e, ev.Layout) for e in rig.events)
    await rig.key(1, K.TSUMO)
    assert rig.lines(1)[1].startswith("! ")


async def test_the_layout_follows_the_dice_and_every_take_has_its_tile() -> None:
    rig = await started({"hands": DEALER_TENPAI, "draws": ["9s"]})
    kinds = [type(e).__name__ for e in rig.events]
    assert kinds[:2] == ["Dice", "Layout"]
    takes = [e for e in rig.events if isinstance(e, ev.Take)]
    assert takes and all(e.tile == rig.layout[e.pos] for e in takes if e.pos is not None)
    assert rig.state.tiles is not None


async def test_a_discard_is_the_new_tile_in_the_pond_and_a_stray_one_waits() -> None:
    rig = await started({"hands": DEALER_TENPAI, "draws": ["9s"]})
    tile = await rig.discard(0)
    assert rig.events[-1] == ev.Discard(seat=0, tile=tile)
    assert rig.state.wall is not None and rig.state.wall.phase == "claim"
    # Seat 2's pond shows a tile out of turn: nothing happens.
    before = len(rig.events)
    await rig.send(m.SeatTiles(seat=2, zone=m.Zone.DISCARDS, tiles=(rig.hand(2)[0],)))
    assert len(rig.events) == before


def tsumo_layout() -> dict[str, Any]:
    return {"hands": DEALER_TENPAI, "draws": ["9s", "1z", "1z", "2z", "4p"]}


async def test_tsumo_shows_the_tiles_value_and_ok_makes_it() -> None:
    rig = await started(tsumo_layout())
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    await rig.key(0, K.TSUMO)
    line1, line2 = rig.lines(0)
    assert line1 == "3 HAN 30 FU 6000 OK?"  # ittsu 2, tsumo 1: 2000 all from a dealer
    assert line2 == "tsumo, ittsu" and rig.table.phase == "table_result_entry"
    await rig.key(0, K.DIGIT_0)  # one page: 0 comes back to it
    assert rig.lines(0) == (line1, line2)
    await rig.key(0, K.OK)
    assert rig.events[-1] == ev.Tsumo(hand=ev.Hand(seat=0, han=3, fu=30))
    assert rig.lines(0)[0] == "CONFIRM" and rig.lines(0)[1].startswith("+6000")


async def test_cancel_takes_the_win_back() -> None:
    rig = await started(tsumo_layout())
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    before = len(rig.events)
    await rig.key(0, K.TSUMO, K.CANCEL)
    assert len(rig.events) == before and rig.table.phase == "table_playing_turn"
    assert rig.lines(0)[0] == "E 25000"
    await rig.discard(0)  # and play goes on
    assert isinstance(rig.events[-1], ev.Discard)


@pytest.mark.parametrize(
    ("layout", "lines"),
    [
        # 234m 567m 345p 11s 79s waits on 8s: no tanyao, no pinfu, no riichi.
        (
            {"hands": {1: "234m 567m 345p 11s 79s"}, "draws": ["8s"]},
            ("! no yaku", "dora are no yaku"),
        ),
        # The same hand does not wait on 6s.
        (
            {"hands": {1: "234m 567m 345p 11s 79s"}, "draws": ["6s"]},
            ("! not a win", "6s is no wait"),
        ),
    ],
    ids=["no yaku", "not complete"],
)
async def test_a_ron_the_tiles_refuse_says_why_and_changes_nothing(
    layout: dict[str, Any], lines: tuple[str, str]
) -> None:
    rig = await started(layout)
    await rig.discard(0)
    before = (len(rig.events), rig.state)
    await rig.key(1, K.RON)
    assert rig.lines(1) == lines
    assert (len(rig.events), rig.state) == before and rig.table.phase == "table_playing_turn"


async def test_furiten_is_refused_with_the_tile_in_the_discards() -> None:
    # Seat 1 (tanyao, waits on 5s) draws a 5s and throws it; the dealer's 5s later.
    layout = {"hands": {1: "234m 567m 345p 22s 46s"}, "draws": ["9s", "5s", "1z", "1z", "5s"]}
    rig = await started(layout)
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    await rig.discard(0)
    await rig.key(1, K.RON)
    assert rig.lines(1) == ("! furiten: 5s", "in your discards")


async def test_tsumo_on_a_hand_that_is_not_complete_is_refused() -> None:
    rig = await started({"hands": DEALER_TENPAI, "draws": ["9s"]})
    await rig.key(0, K.TSUMO)
    assert rig.lines(0) == ("! not a win", "hand not complete")
    assert not isinstance(rig.events[-1], ev.Tsumo)


async def test_riichi_on_a_hand_that_is_not_tenpai_is_refused() -> None:
    rig = await started({"hands": {0: "147m 258p 369s 1357z"}, "draws": ["5m"]})
    await rig.key(0, K.RIICHI)
    assert rig.lines(0)[1] == "! not tenpai" and rig.state.pending_riichi is None


@pytest.mark.parametrize(
    ("draws", "menu", "line"),
    [
        (["7m"], K.DIGIT_1, "! under 9 terminals"),  # 8 kinds with the drawn 7m
        (["1z", "1z", "1z", "2z"], K.DIGIT_2, "! not 4 same winds"),
    ],
    ids=["nine terminals", "four winds"],
)
async def test_an_abort_the_tiles_do_not_make_is_refused_on_the_display(
    draws: list[str], menu: K, line: str
) -> None:
    rig = await started({"hands": {0: "19m 19p 19s 12z 23456m"}, "draws": draws})
    if menu == K.DIGIT_2:
        await rig.discard(0)
        await rig.go_round(1, 2, 3)
    await rig.key(0, K.MENU, menu, K.OK)
    assert rig.lines(0)[1] == line
    assert not any(isinstance(e, ev.Abort) for e in rig.events)


async def test_a_north_from_the_hand_in_riichi_is_refused_and_the_pull_waits() -> None:
    others = {1: "111p 999p 88s 789s 67z", 2: "123s 567s 666p 77z 1z 9m"}
    hands = {0: "123p 456p 789s 111s 4z", **others}  # riichi on a 4z tanki
    rig = await started({"hands": hands, "draws": ["5z", "6z", "7z", "9p"]}, "sanma-free")
    await rig.key(0, K.RIICHI)
    await rig.discard(0)
    await rig.go_round(1, 2)
    await rig.take(0)  # 9p: the held 4z may not go
    await rig.key(0, K.KAN, K.DIGIT_3)
    await rig.meld(0, rig.tile(0, "4z"))
    assert rig.lines(0) == ("PLACE MELD NORTH", "! north: drawn only")
    assert not any(isinstance(e, ev.North) for e in rig.events)
    await rig.key(0, K.CANCEL)
    assert rig.table.held_meld is None


PON_LAYOUT = {"hands": {0: "123m 456m 789m 123p 4p", 1: "55z 123m 456p 789s 11s"}, "draws": ["5z"]}


@pytest.mark.parametrize("meld_first", [False, True], ids=["key first", "meld first"])
async def test_a_pon_is_made_when_the_key_and_the_meld_are_both_there(meld_first: bool) -> None:
    rig = await started(PON_LAYOUT)
    called = await rig.discard(0)
    own = tuple(t for t in rig.hand(1) if KIND_NAMES[kind(t)] == "5z")
    if meld_first:
        await rig.meld(1, called, *own)
        assert not isinstance(rig.events[-1], ev.Call)
        await rig.key(1, K.PON)
    else:
        await rig.key(1, K.PON)
        assert rig.lines(1)[0] == "PLACE MELD PON"
        assert not isinstance(rig.events[-1], ev.Call)
        await rig.meld(1, called, *own)
    assert rig.events[-1] == ev.Call(seat=1, kind="pon", discarder=0, tiles=own)
    assert rig.lines(1)[0] == "S 25000" and rig.table.held_meld is None


async def test_a_meld_that_is_not_the_call_is_refused_and_the_call_waits() -> None:
    rig = await started(PON_LAYOUT)
    called = await rig.discard(0)
    await rig.key(1, K.PON)
    wrong = rig.hand(1)[:2]
    await rig.meld(1, called, *wrong)
    assert rig.lines(1) == ("PLACE MELD PON", "! not that meld")
    assert not isinstance(rig.events[-1], ev.Call)
    await rig.key(1, K.CANCEL)
    assert rig.lines(1)[0] == "S 25000" and rig.table.held_meld is None


async def test_a_seat_reader_fault_puts_the_hand_back_to_key_entry() -> None:
    rig = await started(tsumo_layout())
    await rig.discard(0)
    await rig.send(m.Fault(code=m.FaultCode.TILE_READER, detail=0x112, text="seat 1 discards"))
    assert rig.events[-1] == ev.TilesOff(reason="seat 1 reader fault")
    assert rig.state.tiles is None and rig.lines(2)[0] == "FAULT"
    await rig.send(m.TableStatus(walls=(m.WallState.DONE,) * 4))
    await rig.key(2, K.OK)  # staff fixed it
    # Keyed from here on: the discards are inferred, the win is entered with HAN?.
    await rig.take(1)
    await rig.take(2)
    assert rig.events[-2] == ev.Discard(seat=1)
    await rig.key(2, K.TSUMO)
    assert rig.lines(2)[0] == "HAN?"


async def test_a_discard_the_readers_missed_puts_the_hand_back_to_key_entry() -> None:
    rig = await started(tsumo_layout())
    await rig.take(1)  # seat 0's discard never showed in its pond
    assert [type(e) for e in rig.events[-3:]] == [ev.TilesOff, ev.Discard, ev.Take]
    assert rig.state.tiles is None


async def test_the_tiles_decide_the_exhaustive_draw() -> None:
    rig = await started({"hands": DEALER_TENPAI})
    await rig.discard(0)
    last = (await rig.play_out()).last_discard
    expected = tiletrack.expected_draw(rig.state)
    assert expected is not None
    others = [s for s in range(4) if s != last]
    assert all(rig.lines(s) == ("RON?", "LAST DISCARD") for s in others)
    await rig.key(others[0], K.TENPAI)  # no such key now
    assert rig.lines(others[0])[1].startswith("! keys")
    for seat in others:
        await rig.key(seat, K.CANCEL)
    assert rig.events[-1] == expected
    for seat in range(4):
        said = "TENPAI" if seat in expected.tenpai else "NOTEN"
        assert rig.lines(seat)[0] == f"CONFIRM {said}"


async def test_a_furiten_riichi_at_the_draw_shows_furiten() -> None:
    # Sanma-free: seat 0 throws 4s, then declares riichi on 1s 4s: a chombo at the draw.
    others = {1: "111p 999p 88s 789s 67z", 2: "123s 567s 666p 77z 1z 9m"}
    hands = {0: "123p 456p 789s 1s 3s 4s 9m", **others}
    rig = await started({"hands": hands, "draws": ["1s", None, None, "2s"]}, "sanma-free")
    await rig.discard(0, rig.tile(0, "4s"))
    await rig.go_round(1, 2)
    await rig.take(0)
    await rig.key(0, K.RIICHI)
    await rig.discard(0, rig.tile(0, "9m"))
    last = (await rig.play_out()).last_discard
    for seat in range(rig.players):
        if seat != last:
            await rig.key(seat, K.CANCEL)
    assert rig.lines(0)[0] == "CONFIRM FURITEN"
    assert {rig.lines(s)[0] for s in (1, 2)} == {"CONFIRM NOTEN"}
    assert rig.state.scores == (20000, 35000, 35000)


async def test_a_restart_at_ok_comes_back_to_ok() -> None:
    rig = await started(tsumo_layout())
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    await rig.key(0, K.TSUMO)
    shown = rig.lines(0)
    stored = json.loads(json.dumps(rig.table.flow_snapshot()))
    again = TileRig(layout=tsumo_layout(), state=rig.state)
    again.table.restore_flow(stored)
    await again.up()
    assert again.lines(0) == shown
    await again.key(0, K.OK)
    assert again.events[-1] == ev.Tsumo(hand=ev.Hand(seat=0, han=3, fu=30))


async def test_a_restart_while_a_call_waits_for_its_meld_makes_it_when_it_shows() -> None:
    rig = await started(PON_LAYOUT)
    called = await rig.discard(0)
    await rig.key(1, K.PON)
    stored = json.loads(json.dumps(rig.table.flow_snapshot()))
    again = TileRig(layout=PON_LAYOUT, state=rig.state)
    again.table.restore_flow(stored)
    await again.up()
    assert again.lines(1)[0] == "PLACE MELD PON"
    own = tuple(t for t in rig.hand(1) if KIND_NAMES[kind(t)] == "5z")
    await again.meld(1, called, *own)
    assert again.events[-1] == ev.Call(seat=1, kind="pon", discarder=0, tiles=own)


def test_a_bad_stored_meld_is_refused() -> None:
    table = TileRig(layout={"hands": DEALER_TENPAI}).table
    stored = table.flow_snapshot()
    stored["held_meld"] = {"seat": 1, "kind": "sword"}
    with pytest.raises(ValueError, match="sword"):
        table.restore_flow(stored)


@pytest.mark.parametrize(
    ("entry", "fu_counts", "line"),
    [
        (WinEntry(seat=0, han=3, fu=40, points=5200), True, "3 HAN 40 FU 5200 OK?"),
        (WinEntry(seat=0, han=4, fu=40, points=12000), True, "4HAN 40FU 12000 OK?"),
        (WinEntry(seat=0, han=6, fu=40, points=18000), True, "6 HAN 18000 OK?"),
        (WinEntry(seat=0, han=2, fu=30, points=2000), False, "2 HAN 2000 OK?"),
        (WinEntry(seat=0, yakuman=1, points=32000), True, "YAKUMAN 32000 OK?"),
        (WinEntry(seat=0, yakuman=2, points=64000), True, "YAKUMAN x2 64000 OK?"),
    ],
)
def test_the_score_line(entry: WinEntry, fu_counts: bool, line: str) -> None:
    assert score_line(entry, fu_counts=fu_counts) == line and len(line) <= 20


def test_the_yaku_are_paged_by_display_line() -> None:
    yaku = ["riichi", "ippatsu", "menzen tsumo", "pinfu", "dora 2", "red 1"]
    pages = yaku_pages(yaku)
    assert pages == ["riichi, ippatsu", "menzen tsumo, pinfu", "dora 2, red 1"]
    assert yaku_pages([]) == [""]


def test_a_table_reads_tiles_only_with_every_reader() -> None:
    rules = TileRig(layout={"hands": DEALER_TENPAI}).rules
    table = Table(rules, post=lambda _: None, now=lambda: 0)
    assert not table.reads_tiles()
    table.capabilities = TILE_CAPS & ~m.Capability.SEAT_READER
    assert not table.reads_tiles()
    table.capabilities = TILE_CAPS
    assert table.reads_tiles()


async def test_a_meld_laid_before_a_restart_is_still_there_after_it() -> None:
    rig = await started(PON_LAYOUT)
    called = await rig.discard(0)
    own = tuple(t for t in rig.hand(1) if KIND_NAMES[kind(t)] == "5z")
    await rig.meld(1, called, *own)
    stored = json.loads(json.dumps(rig.table.flow_snapshot()))
    assert stored["unread_melds"][1] == [called, *own]
    again = TileRig(layout=PON_LAYOUT, state=rig.state)
    again.table.restore_flow(stored)
    await again.up()
    await again.key(1, K.PON)
    assert again.events[-1] == ev.Call(seat=1, kind="pon", discarder=0, tiles=own)


async def test_a_discard_stores_nothing_new_in_the_console_state() -> None:
    rig = await started(tsumo_layout())
    key = rig.table.flow_key()
    await rig.discard(0)
    await rig.take(1)
    assert rig.table.flow_key() == key  # the journal commits no console state for them


# --- the hand zones -----------------------------------------------------------------------

#: Seat 1 holds the red 5p (id 52); the other 5p ids (53..55) are plain.
RED_LAYOUT = {"hands": {**DEALER_TENPAI, 1: "234m 067m 340p 11s 79s"}, "draws": ["9s", "1z"]}


def tiles_off(rig: TileRig) -> list[ev.TilesOff]:
    return [e for e in rig.events if isinstance(e, ev.TilesOff)]


async def test_hand_readers_catching_up_are_not_disagreements() -> None:
    rig = await started(tsumo_layout())
    await rig.show_hands()
    # Seat 0's pond shows its discard before its hand reader lets go of it.
    thrown = await rig.discard(0)
    assert rig.table.zone_hands[0] == tuple(sorted((*rig.hand(0), thrown)))
    # Seat 1's hand reader shows the tile it took only after the take.
    await rig.take(1)
    await rig.show_hands()  # seat 0's reader has caught up meanwhile
    await rig.discard(1)
    # Seat 2's shows it before the take sensor's report arrives.
    wall, tiles = rig.state.wall, rig.state.tiles
    assert wall is not None and tiles is not None
    await rig.show_hand(2, (*rig.hand(2), tiles.layout[wall.live_positions[0]]))
    await rig.take(2)
    await rig.discard(2)
    await rig.show_hands()
    await rig.go_round(3)
    await rig.show_hands()
    # The dealer declares tsumo before its hand reader shows the winning 4p.
    await rig.take(0)
    await rig.key(0, K.TSUMO)
    assert rig.lines(0)[0] == "3 HAN 30 FU 6000 OK?"
    assert tiles_off(rig) == [] and rig.state.tiles is not None


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("wrong", "! hand: 5p not 0p"),  # the red 5p read as a plain one: its own id
        ("missing", "! hand: no 0p"),
        ("extra", "! hand: extra 7z"),
        ("stale", "! hand: extra 1z"),  # still shows its discard at its next turn
    ],
)
async def test_a_hand_that_disagrees_when_the_seats_turn_begins_turns_the_tiles_off(
    case: str, said: str
) -> None:
    rig = await started(RED_LAYOUT)
    await rig.show_hands()
    hand = rig.hand(1)
    shown = {
        "wrong": tuple(53 if t == 52 else t for t in hand),
        "missing": tuple(t for t in hand if t != 52),
        "extra": (*hand, 135),
        "stale": hand,
    }[case]
    await rig.show_hand(1, shown)
    await rig.discard(0)
    await rig.show_hand(0)
    if case == "stale":
        # Seat 1 takes the 1z and throws it; its reader never lets go of it, and the
        # disagreement lasts to seat 1's next turn.
        await rig.take(1)
        await rig.show_hand(1)
        await rig.discard(1)
        await rig.go_round(2, 3, 0)
        assert tiles_off(rig) == []
    await rig.take(1)
    (off,) = tiles_off(rig)
    assert off.reason.startswith("seat 1's hand reader disagrees with its hand: it ")
    assert rig.events[-1] == off and isinstance(rig.events[-2], ev.Take)
    assert rig.lines(1)[1] == said
    assert rig.lines(2)[1] == "KEY ENTRY: NO TILES" and rig.state.tiles is None
    # Keyed from here on, as after a reader fault: seat 1's discard is inferred.
    await rig.take(2)
    assert rig.events[-2] == ev.Discard(seat=1)


async def test_a_tsumo_on_a_hand_the_reader_disagrees_with_is_keyed() -> None:
    rig = await started(tsumo_layout())
    await rig.show_hands()
    await rig.discard(0)
    await rig.show_hand(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    one_m = rig.tile(0, "1m")
    await rig.show_hand(0, tuple(135 if t == one_m else t for t in rig.hand(0)))
    await rig.key(0, K.TSUMO)
    assert [type(e) for e in rig.events[-2:]] == [ev.Take, ev.TilesOff]
    assert rig.lines(0) == ("HAN?", "! hand: 7z not 1m")  # why the value is keyed
    await rig.type(0, "3")
    await rig.key(0, K.OK)
    await rig.type(0, "30")
    await rig.key(0, K.OK)
    assert rig.events[-1] == ev.Tsumo(hand=ev.Hand(seat=0, han=3, fu=30))


async def test_a_ron_on_a_hand_the_reader_disagrees_with_is_keyed() -> None:
    rig = await started({"hands": {**DEALER_TENPAI, 1: "234m 567m 345p 66s 78s"}, "draws": ["6s"]})
    await rig.show_hands()
    await rig.show_hand(1, rig.hand(1)[1:])
    await rig.discard(0)
    await rig.key(1, K.RON)
    assert isinstance(rig.events[-1], ev.TilesOff) and rig.lines(1)[1] == "! hand: no 2m"
    await rig.key(2, K.CANCEL)
    await rig.key(3, K.CANCEL)
    assert rig.lines(1) == ("HAN?", "! hand: no 2m")


async def test_a_hand_that_disagrees_at_the_draw_leaves_the_draw_to_the_keys() -> None:
    rig = await started({"hands": DEALER_TENPAI})
    await rig.discard(0)
    # The last discarder's reader still shows its last discard (it may lag); another
    # seat's shows a tile too few.
    last = (await rig.play_out()).last_discard
    assert last is not None
    tiles = rig.state.tiles
    assert tiles is not None
    await rig.show_hand(last, (*rig.hand(last), tiles.seats[last].discards[-1].tile))
    other = (last + 1) % 4
    await rig.show_hand(other, rig.hand(other)[1:])
    for seat in range(4):
        if seat != last:
            await rig.key(seat, K.CANCEL)
    assert isinstance(rig.events[-1], ev.TilesOff) and str(other) in rig.events[-1].reason
    assert rig.lines(other)[1].startswith("! hand: no ")
    await rig.key(other, K.NOTEN)  # the keyed draw, as at a table without readers
    assert all(rig.lines(s)[0].startswith("TENPAI?") for s in range(4) if s != other)


def test_what_a_seat_is_told_of_its_hand() -> None:
    tiles = tile_set(TileRig(layout={"hands": DEALER_TENPAI}).rules)
    assert hand_text(tiles, [52], [53]) == "hand: 5p not 0p"
    assert hand_text(tiles, [53], [54]) == "hand: another 5p"
    assert hand_text(tiles, [0, 36], []) == "hand: no 1m 1p"
    assert hand_text(tiles, [], [135]) == "hand: extra 7z"
    assert hand_text(tiles, [0, 4, 8, 12, 20], []) == "hand: 5 tiles differ"
    assert hand_text(tiles, [0, 4], [8]) == "hand: 3 tiles differ"


# --- kantan ------------------------------------------------------------------------------

#: Seat 1 holds 333z and 56m 7m; seat 2 waits on 1p 4p (123m 456m 789m 23p 55s).
KANTAN_HANDS = {
    0: "147m 258p 369s 1z 2z 4z 5z",
    1: "333z 456p 789s 56m 7m 5s",
    2: "123m 456m 789m 23p 55s",
    3: "147m 258p 369s 1z 2z 4z 6z",
}


def kantan_layout(own_draws: dict[int, list[str]], **layout: Any) -> dict[str, Any]:
    return {"hands": KANTAN_HANDS, "own_draws": own_draws, **layout}


async def kantan(own_draws: dict[int, list[str]], **layout: Any) -> TileRig:
    """A kantan hand whose tiles are read, dealt: the dealer (seat 0) has drawn."""
    return await started(kantan_layout(own_draws, **layout), "kantan")


def owned(rig: TileRig, seat: int, name: str, count: int) -> tuple[int, ...]:
    """``count`` of ``seat``'s tiles of kind ``name``."""
    found = tuple(t for t in rig.hand(seat) if KIND_NAMES[kind(t)] == name)[:count]
    assert len(found) == count, (seat, name, rig.hand(seat))
    return found


async def test_a_kantan_hand_reads_its_tiles() -> None:
    rig = await kantan({0: ["7z"]})
    assert rig.table.reads_tiles() and rig.state.tiles is not None
    assert [type(e) for e in rig.events[:2]] == [ev.Dice, ev.Layout]


@pytest.mark.parametrize(
    "order", ["key, own tiles, take", "key, take, own tiles", "own tiles, key, take", "early"]
)
async def test_a_kantan_pon_shows_its_own_tiles_and_a_stand_in_from_the_wall(order: str) -> None:
    # 鳴いた牌を河から持って来ないで、代わりに山の牌を加える: the called 3z stays in seat 0's
    # pond; seat 1 lays its own 33z and a tile from its own wall in the meld zone. The
    # take may come before the own tiles show (kept until the call is made), and the
    # reader may show the stand-in before the take sensor reports it ("early").
    rig = await kantan({0: ["3z"], 1: ["9p"]})
    called = await rig.discard(0)
    own = owned(rig, 1, "3z", 2)
    stand_in = rig.layout[34 + 13]  # seat 1's own wall, after the 13 it dealt itself
    keys = (K.PON, K.DIGIT_0, K.OK)
    if order.startswith("own tiles"):
        await rig.meld(1, *own)
        await rig.key(1, *keys)
        assert rig.events[-1] == ev.Call(seat=1, kind="pon", discarder=0, tiles=own)
        await rig.take(1)
    else:
        await rig.key(1, *keys)
        assert rig.lines(1)[0] == "PLACE MELD PON"
        if order == "key, take, own tiles":
            await rig.take(1)  # kept: the call is not made yet
            assert not isinstance(rig.events[-1], ev.Call | ev.Take)
            await rig.meld(1, *own)
        elif order == "early":
            await rig.meld(1, *own, stand_in)
            assert rig.events[-1] == ev.Call(seat=1, kind="pon", discarder=0, tiles=own)
            await rig.take(1)
        else:
            await rig.meld(1, *own)
            await rig.take(1)
    assert rig.events[-2:] == [
        ev.Call(seat=1, kind="pon", discarder=0, tiles=own),
        ev.Take(seat=1, pos=34 + 13, tile=stand_in),
    ]
    assert rig.table.held_meld is None and rig.lines(1)[0] == "S 25000"
    if order != "early":
        await rig.meld(1, stand_in)
    st = rig.state.tiles.seats  # type: ignore[union-attr]
    assert st[1].meld_zone == (*own, stand_in) and stand_in not in st[1].concealed
    assert st[0].pond == (called,) == rig.table.zone_ponds[0]
    assert rig.table.tiles.fresh_melds(1) == []
    # 食い替え（現物も）可: the third 3z may go right after the pon.
    third = owned(rig, 1, "3z", 1)[0]
    assert await rig.discard(1, third) == third and rig.events[-1] == ev.Discard(1, third)
    assert tiles_off(rig) == []


async def test_from_opens_empty_after_a_confirm_that_said_tenpai() -> None:
    # A draw the tiles decide leaves TENPAI typed on each CONFIRM line; FROM? in a later
    # hand must not read it as seats (it raised ValueError in the daemon).
    rig = await kantan({0: ["3z"], 1: ["9p"]})
    await rig.discard(0)
    rig.table.consoles[1].typed = "TENPAI"
    await rig.key(1, K.PON)
    assert rig.lines(1)[0] == "FROM?"
    await rig.key(1, K.DIGIT_0, K.OK)
    assert rig.lines(1)[0] == "PLACE MELD PON"


async def test_a_kantan_call_withdrawn_after_its_take_leaves_that_take_a_draw() -> None:
    rig = await kantan({0: ["3z"], 1: ["9p"]})
    await rig.discard(0)
    await rig.key(1, K.PON, K.DIGIT_0, K.OK)
    await rig.take(1)
    await rig.key(1, K.CANCEL)
    assert rig.events[-1] == ev.Take(seat=1, pos=34 + 13, tile=rig.layout[34 + 13])
    assert rig.state.tiles.seats[1].drawn == rig.layout[34 + 13]  # type: ignore[union-attr]
    assert rig.table.held_meld is None and rig.lines(1)[0] == "S 25000"


#: Seats 0 and 1 throw 7z, then 1p and 4p; seat 2 waits on both; the indicator is 3p.
SEVERAL = {0: ["7z", "1p"], 1: ["7z", "4p"], 2: ["9p"], 3: ["9s"]}


async def test_a_kantan_ron_wins_off_every_last_discard_each_at_its_own_value() -> None:
    # ロン牌が複数ある場合は全員からあがれる: seat 2 presses RON on its own turn; the tiles
    # name seats 0 and 1 (no FROM?), each paying the hand on its own tile: 2 han off the
    # 1p (ittsu), 3 off the 4p (ittsu, dora).
    rig = await kantan(SEVERAL, dora=["3p"])
    await rig.discard(0)
    await rig.go_round(1, 2, 3, 0, 1)
    await rig.key(2, K.RON)
    assert rig.lines(2) == ("RON x2 9000 OK?", "E: 2 HAN 3000")
    pages = []
    for _ in range(4):
        pages.append(rig.lines(2)[1])
        await rig.key(2, K.DIGIT_0)
    assert pages == ["E: 2 HAN 3000", "ittsu", "S: 3 HAN 6000", "ittsu, dora 1"]
    await rig.key(2, K.OK)
    assert rig.events[-1] == ev.Ron(
        discarders=(0, 1), winners=(ev.Hand(seat=2, han=2), ev.Hand(seat=2, han=3))
    )
    assert rig.state.scores == (22000, 19000, 34000, 25000)


async def test_a_restart_at_ok_on_a_ron_off_several_comes_back_to_it() -> None:
    layout = kantan_layout(SEVERAL, dora=["3p"])
    rig = await started(layout, "kantan")
    await rig.discard(0)
    await rig.go_round(1, 2, 3, 0, 1)
    await rig.key(2, K.RON, K.DIGIT_0)
    shown = rig.lines(2)
    stored = json.loads(json.dumps(rig.table.flow_snapshot()))
    again = TileRig("kantan", layout=layout, state=rig.state)
    again.table.restore_flow(stored)
    await again.up()
    assert again.lines(2) == shown == ("RON x2 9000 OK?", "ittsu")
    await again.key(2, K.OK)
    assert again.events[-1] == ev.Ron((0, 1), (ev.Hand(seat=2, han=2), ev.Hand(seat=2, han=3)))


async def test_a_reader_fault_while_a_kantan_call_waits_with_its_take_makes_both_keyed() -> None:
    rig = await kantan({0: ["3z"], 1: ["9p"]})
    await rig.discard(0)
    await rig.key(1, K.PON, K.DIGIT_0, K.OK)
    await rig.take(1)  # the stand-in, kept: the own tiles have not shown
    await rig.send(m.Fault(code=m.FaultCode.TILE_READER, detail=0x111, text="seat 1 melds"))
    assert rig.events[-3:] == [
        ev.TilesOff(reason="seat 1 reader fault"),
        ev.Call(seat=1, kind="pon", discarder=0),
        ev.Take(seat=1, pos=34 + 13),
    ]
    wall = rig.state.wall
    assert wall is not None and wall.phase == "called" and rig.table.held_meld is None


@pytest.mark.parametrize(
    ("seat", "draws", "lines"),
    [
        (2, {0: ["7z", "8s"], 1: ["7z", "8s"]}, ("! not a win", "no last discard wins")),
        (3, SEVERAL, ("N 25000", "! ron on own turn")),
    ],
    ids=["no last discard wins", "not its turn"],
)
async def test_a_kantan_ron_the_tiles_or_the_turn_refuse(
    seat: int, draws: dict[int, list[str]], lines: tuple[str, str]
) -> None:
    rig = await kantan(draws)
    await rig.discard(0)
    await rig.go_round(1, 2, 3, 0, 1)
    before = len(rig.events)
    await rig.key(seat, K.RON)
    assert rig.lines(seat) == lines
    assert len(rig.events) == before and rig.table.phase == "table_playing_turn"


async def test_a_kantan_ron_on_a_wait_thrown_before_stands() -> None:
    # フリテン無し: seat 2 throws its own winning 1p, then rons seat 1's 4p.
    rig = await kantan({1: ["7z", "4p"], 2: ["1p"]})
    await rig.discard(0)
    await rig.go_round(1)
    await rig.take(2)
    await rig.discard(2, rig.tile(2, "1p"))
    await rig.go_round(3, 0, 1)
    await rig.key(2, K.RON)
    assert rig.lines(2)[0].endswith(" OK?")
    await rig.key(2, K.OK)
    assert isinstance(rig.events[-1], ev.Ron) and rig.events[-1].discarders == (1,)


#: Seats 0 and 2 wait on 1p 4p; seat 3's 18th draw (and discard) is a 4p.
LAST_HANDS = {**KANTAN_HANDS, 0: "123s 406s 789s 23p 99m"}
LAST_DRAWS = {3: ["5555z 7777z 9999p 111z 22z", "4p"]}


async def kantan_to_the_last_discard() -> TileRig:
    rig = await started({"hands": LAST_HANDS, "own_draws": LAST_DRAWS}, "kantan")
    await rig.discard(0)
    wall = await rig.play_out()
    assert wall.finished and wall.last_discard == 3
    assert all(rig.lines(s) == ("RON?", "LAST DISCARDS") for s in range(4))
    return rig


async def test_after_the_18th_discards_every_seat_may_ron_and_the_next_in_turn_wins() -> None:
    # 18枚目の捨て牌は流局後にロン出来る: seats 0 and 2 both ron seat 3's last 4p; seat 0,
    # whose turn would have come first, wins.
    rig = await kantan_to_the_last_discard()
    for seat, key in ((2, K.RON), (0, K.RON), (1, K.CANCEL), (3, K.CANCEL)):
        await rig.key(seat, key)
    assert rig.lines(0)[0].endswith(" OK?") and rig.table.pending is not None
    assert rig.table.pending.discarders[-1] == 3
    await rig.key(0, K.OK)
    ron = rig.events[-1]
    assert isinstance(ron, ev.Ron) and ron.winners[0].seat == 0 and 3 in ron.discarders


async def test_after_the_18th_discards_nobody_rons_and_the_tiles_decide_the_draw() -> None:
    rig = await kantan_to_the_last_discard()
    expected = tiletrack.expected_draw(rig.state)
    assert expected is not None and {0, 2} <= set(expected.tenpai)
    for seat in range(4):
        await rig.key(seat, K.CANCEL)
    assert rig.events[-1] == expected and rig.lines(0)[0] == "CONFIRM TENPAI"


async def test_a_restart_while_a_kantan_call_waits_with_its_take_makes_it_when_it_shows() -> None:
    layout = kantan_layout({0: ["3z"], 1: ["9p"]})
    rig = await started(layout, "kantan")
    called = await rig.discard(0)
    await rig.key(1, K.PON, K.DIGIT_0, K.OK)
    await rig.take(1)
    stored = json.loads(json.dumps(rig.table.flow_snapshot()))
    assert stored["held_meld"]["take"] == 34 + 13
    again = TileRig("kantan", layout=layout, state=rig.state)
    again.table.restore_flow(stored)
    await again.up()
    assert again.lines(1)[0] == "PLACE MELD PON"
    own = owned(rig, 1, "3z", 2)
    await again.meld(1, *own)
    assert again.events[-2:] == [
        ev.Call(seat=1, kind="pon", discarder=0, tiles=own),
        ev.Take(seat=1, pos=34 + 13, tile=rig.layout[34 + 13]),
    ]
    # Rebuilt after another restart: the called 3z in seat 0's pond, the stand-in among
    # seat 1's melds.
    stored = json.loads(json.dumps(again.table.flow_snapshot()))
    third = TileRig("kantan", layout=layout, state=again.state)
    third.table.restore_flow(stored)
    assert third.table.zone_ponds[0] == (called,)
    assert third.table.zone_melds[1] == (*own, rig.layout[34 + 13])


async def test_the_parlor_gets_the_tiles_value_and_yaku_with_the_hand() -> None:
    publisher = RecordingPublisher()
    rig = TileRig(layout=tsumo_layout(), publisher=publisher)
    await rig.up()
    await rig.start_hand()
    await rig.discard(0)
    await rig.go_round(1, 2, 3)
    await rig.take(0)
    await rig.key(0, K.TSUMO, K.OK)
    [hand] = publisher.hands
    assert (hand["dealer"], hand["riichi"]) == (0, [])
    assert hand["values"] == [
        {"seat": 0, "han": 3, "fu": 30, "yakuman": 0, "points": 6000, "yaku": ["tsumo", "ittsu"]}
    ]
