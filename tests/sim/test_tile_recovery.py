"""Tile bots that never wedge (issue 29 item 3): at a table that reads every tile the bots
follow the daemon's displays and the readers' zones through whatever happens at the table,
each case a short in-process game (simulator and daemon in this process over ``sim://``).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from firmware_bridge.messages import SeatDisplay, WallTake
from hw_sim import SimTable, players
from hw_sim.botmemory import Hand
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.rules import wall as W
from tablectl.rules.loader import load_rules
from tests.sim.test_autoplay import CLAIM_WINDOW_S, patient_link, still_clock  # noqa: F401
from tests.sim.test_tiles import READERS

_ids = itertools.count()
#: Loop seconds one case may take (a few seconds of play at most).
TIMEOUT = 60.0


@dataclass
class Run:
    """A tile-reading table and the daemon playing it."""

    table: SimTable
    daemon: Daemon

    async def until(self, cond: Callable[[], bool], what: str) -> None:
        """Wait for ``cond`` (the table's state), failing with ``what`` and the view."""
        try:
            async with asyncio.timeout(TIMEOUT):
                await self.table.firmware.wait_for(cond)
        except TimeoutError:
            raise AssertionError(f"stalled before {what}:\n{self.table.render()}") from None

    def takes(self) -> int:
        """Takes the table reported so far."""
        return sum(
            1 for d, m in self.table.firmware.transcript if d == "tx" and isinstance(m, WallTake)
        )


@asynccontextmanager
async def tile_table(tmp: Path, rules: str, seed: int, **kw: object) -> AsyncIterator[Run]:
    """A table with every reader and bots on all seats, the daemon on it (journal in
    ``tmp``), both in this process."""
    table = SimTable(load_rules(rules), seed, stall_timeout=5.0, **READERS, **kw)  # type: ignore[arg-type]
    try:
        url = await table.start_sim(f"tile-recovery-{next(_ids)}")
        config = config_for(url, rules, tmp / f"journal-{next(_ids)}.sqlite3")
        daemon = Daemon(config, claim_window_s=CLAIM_WINDOW_S, monotonic=still_clock)
        task = asyncio.create_task(daemon.run())
        try:
            yield Run(table, daemon)
        finally:
            daemon.stop.set()
            await task
    finally:
        await table.close()


async def test_a_draw_that_ends_the_game_goes_on_to_the_next_game(tmp_path: Path) -> None:
    """tenhou seed 5: the first game ends with an exhaustive draw that busts a seat, so the
    daemon shows GAME OVER without a CONFIRM; the bots, waiting for the draw's settlement,
    used to stay in that hand and never dealt the next game (issue 29)."""
    async with tile_table(tmp_path, "tenhou", 5) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: bots.games_finished == 1, "the first game's end")
        dealt = run.takes()
        await run.until(lambda: run.takes() > dealt + 16, "the second game's deal")
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_the_bots_play_the_rules_staff_changed_to(tmp_path: Path) -> None:
    """Staff start a kantan game on a table started under tenhou (``tablectl ctl new-game
    --rules kantan``) and tell the table (``{"cmd": "rules"}``): from the new game's dice
    the bots take from their own walls and play kantan's hands through."""
    async with tile_table(tmp_path, "tenhou", 2) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.takes() > 60, "the first hand's play")
        table = run.daemon.table
        assert table is not None
        assert await table.new_game("kantan", by="test") is None
        run.table.use_rules("kantan")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 2, "kantan's second hand")
        assert bots.house.name == "kantan" and run.table.follower.rules.own_walls
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_a_hand_reader_fault_does_not_wedge_the_bots(tmp_path: Path) -> None:
    """A seat's hand reader fails in the middle of a hand (``{"cmd": "fault", "kind":
    "reader", "args": ["2", "hand"]}``): the hand goes on keyed, the bots declare its draw
    themselves, and the next hands are played."""
    async with tile_table(tmp_path, "tenhou", 3) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.takes() > 60, "the first hand's play")
        await run.table.inject("reader", "2", "hand")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 2, "two more hands")
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_a_take_made_as_a_reader_fault_came_is_kept_for_the_hand(tmp_path: Path) -> None:
    """ema seed 151 (the tile soak): a seat's pond reader fails right after the dealer's
    first deal block; the next seat's block, lifted before FAULT showed, reaches the daemon
    during the fault. It used to be refused ("not now: no hand in play") with its tiles
    gone from the wall, and the hand waited for it for ever; the daemon now keeps it and
    applies it once the fault is cleared."""
    async with tile_table(tmp_path, "ema", 151, faults="reader@965:3:discards") as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: not run.table.firmware.faults.one_shots, "the reader fault")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 1, "the next hand")
        assert bots.stalls == 0 and bots.hands_left == 0
        # Line 2 holds 20 characters: "! not now: no hand i" (so "no hand in play" never
        # matched, and this check could not fail).
        assert not any("no hand" in why for _, why in bots.refusals)


async def test_a_raise_sent_again_after_a_reboot_replaces_the_kept_layouts(
    tmp_path: Path,
) -> None:
    """kantan seed 284 (the tile soak): the table reboots as it reports the walls raised
    for East 4; the layouts and DONEs kept across the reset arrive after the daemon's new
    SHUFFLE, then the new raise's layouts. The daemon took the second raise's layouts for
    walls repeating tiles and keyed the hand without a word on any display, so at the end
    of the walls everybody waited for the draw the tiles would have decided. A wall read
    again now replaces its layout: the hand is tile-aware and played to its end."""
    async with tile_table(tmp_path, "kantan", 284, faults="misread@702:0,reboot@959") as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: not run.table.firmware.faults.one_shots, "the reboot")
        table = run.daemon.table
        assert table is not None
        await run.until(lambda: table.core.phase == "table_playing_turn", "the next hand")
        assert table.core.state.tiles is not None  # the layouts are trusted: tile-aware
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 2, "two more hands")
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_dice_rolled_as_a_fault_came_deal_the_hand(tmp_path: Path) -> None:
    """sanma-free seed 47 (the tile soak): the link drops as the dealer presses OK at
    ``ROLL?``; back, the daemon answers HOST_SILENT by rolling again, and a reader fails
    before the dice land. The dice came under FAULT and were ignored ("dice outside a
    roll"), so the deal lifted meanwhile was refused ("not now: no hand in play"), the bots
    kept the refused take and died of an 18-tile hand. The daemon now applies the dice,
    keeps the deal's takes and resumes dealing once the fault is cleared."""
    faults = "unplug@26:0.1,reader@32:2:melds"
    async with tile_table(tmp_path, "sanma-free", 47, faults=faults) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: not run.table.firmware.faults.one_shots, "the reader fault")
        await run.until(lambda: bots.hands_started >= 2, "the second hand")
        assert bots.stalls == 0 and bots.hands_left == 0
        assert not any("no hand" in why for _, why in bots.refusals)


async def test_a_take_the_daemon_refused_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon refuses a bot's take (sanma-free seed 47: ``! not now: no hand in
    play``): the bot puts the tiles back in the wall and the wall follower forgets the
    take. The tiles used to stay in the seat's hand zone, the next hand was dealt on top
    of them and the bots died of shanten on 18 tiles."""
    monkeypatch.setattr(players, "REFUSAL_GRACE", 0.05)
    async with tile_table(tmp_path, "tenhou", 3) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.daemon.table is not None, "the daemon's table")
        assert run.daemon.table is not None
        flow = run.daemon.table.hand
        take = flow.take
        refused: list[int] = []

        async def refusing(seat: int, pos: int) -> None:
            if not refused and seat == 1 and run.takes() > 20:
                refused.append(pos)
                flow.core.refuse(seat, "not now: no hand in play")
                return
            await take(seat, pos)

        monkeypatch.setattr(flow, "take", refusing)
        fw = run.table.firmware
        await run.until(lambda: bool(refused) and fw.wall.present(refused[0]), "the put back")
        assert fw.zones is not None and bots.follower.state is not None
        assert bots.takes_put_back == 1
        assert fw.zones.where(fw.wall.tile_at(refused[0])) is None
        assert refused[0] not in bots.follower.state.taken
        assert len(fw.zones.hand(1)) <= 13  # not the tile it lifted


def test_a_hand_of_more_than_14_tiles_is_keyed_not_raised() -> None:
    """Whatever the bots hold, a hand zone with more tiles than any hand (18: a refused
    deal block kept, then the next hand dealt on top) turns the hand keyed, as a reader's
    fault does; the tile arithmetic on it (shanten: "Too many tiles") killed the bots."""
    bot_table = SimTable("tenhou", 1, seat_reader=True)  # unstarted: its bots' play only
    bots = bot_table.bots
    assert bots is not None and bots.tiles is not None and bot_table.firmware.zones is not None
    play = bots.tiles
    bot_table.firmware.wall.shuffle()
    state = W.start_wall(bots.rules, 0, (3, 4))
    assert isinstance(state, W.WallState)
    hand = Hand(dealer=0)
    bot_table.firmware.zones.take(1, tuple(range(0, 72, 4)))  # 18 tiles, every kind once
    play.mem(hand, 1).waits = frozenset(range(34))
    assert play._tsumo_value(hand, state, 1) is None
    assert hand.keyed
    assert not play.tenpai(hand, 1)
    assert play.ron_value(hand, state, 1, 73) is None
    assert play._call_choice(hand, state, 1, 73, 0) is None


async def test_a_key_dropped_as_a_fault_came_is_pressed_again(tmp_path: Path) -> None:
    """ema seed 1 (the tile soak): a pond reader fails as the wall runs out; the first
    seat's TENPAI reaches the daemon under FAULT: dropped (``! screen changed``, pressed
    on its page) or refused (``! fault: fix it``, pressed on FAULT), as the timing falls.
    Once the fault is cleared the bot presses it again, as a person would; it used to
    wait for ever for a draw nobody declared."""
    async with tile_table(tmp_path, "ema", 1, faults="reader@721:3:discards") as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: not run.table.firmware.faults.one_shots, "the reader fault")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 1, "the next hand")
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_a_misread_under_the_conditions_page_is_seen_and_keyed(tmp_path: Path) -> None:
    """kantan seed 254 (the tile soak): seat 0's hand reader misreads in South 1, a hand
    that opens on every seat's conditions page. The daemon turned the tiles off and said
    so on line 2 of the score page (``! hand: another 1s``, ``KEY ENTRY: NO TILES``),
    hidden under the conditions page: nobody knew the hand was keyed, and at the end of
    the walls everybody waited for the draw the tiles would have decided. The refusal and
    the notice now bring the score page back, and the hand is keyed to its end."""
    async with tile_table(tmp_path, "kantan", 254, faults="misread@1150:0") as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: bots.games_finished == 1, "the game's end")
        shown = [
            m.line2
            for d, m in run.table.firmware.transcript
            if d == "rx" and isinstance(m, SeatDisplay) and m.seat == 0
        ]
        assert "! hand: another 1s" in shown
        assert bots.stalls == 0 and bots.hands_left == 0


async def test_a_ron_while_the_drawn_tile_is_held_is_refused(tmp_path: Path) -> None:
    """Someone presses RON on a bot's seat while the seat to discard still holds its drawn
    tile (random keys: ema seed 81, mleague seed 106). The daemon took it for a discard
    the readers missed, turned the tiles off and opened a win entry refused at its end
    ("nothing to ron on"), and the bots gave the hand up. The readers say no discard
    happened: the RON is refused (``! no discard``), nothing changes, the tiles stay on."""
    async with tile_table(tmp_path, "tenhou", 3) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.takes() > 70, "the first hand's play")
        table = run.daemon.table
        assert table is not None

        def holding() -> bool:
            wall = table.state.wall
            return wall is not None and wall.phase == "discard"

        await run.until(holding, "a seat holding its drawn tile")
        assert table.state.wall is not None
        ronner = (table.state.wall.turn + 2) % 4
        pressed = len(run.table.firmware.transcript)
        run.table.press(ronner, "RON")
        consoles = run.table.firmware.consoles
        await run.until(lambda: consoles[ronner].line2 == "! no discard", "the refusal")
        assert table.state.tiles is not None
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 1, "the next hand")
        assert bots.stalls == 0 and bots.hands_left == 0
        keyed = [
            m
            for _, m in run.table.firmware.transcript[pressed:]
            if isinstance(m, SeatDisplay) and m.line2 == "KEY ENTRY: NO TILES"
        ]
        assert not keyed


async def test_a_call_key_pressed_on_a_bots_seat_is_withdrawn(tmp_path: Path) -> None:
    """Someone presses PON on a bot's seat while the seat before it still holds its drawn
    tile: the daemon waits at ``PLACE MELD`` for a meld that never comes; the bots
    withdraw the call (CANCEL), as a person would, the wall follower forgets it and the
    discard it implied, and the hand goes on to the next ones."""
    async with tile_table(tmp_path, "tenhou", 3) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.takes() > 70, "the first hand's play")
        run.table.press(2, "PON")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 1, "the next hand")
        assert bots.stalls == 0 and bots.hands_left == 0


@pytest.mark.parametrize(
    ("preset", "seed"),
    [
        ("ariari", 0),  # PON, CHI: the daemon took neither, the follower made the call
        ("jboy-sanma", 13),  # RIICHI: the bot went on discarding other tiles, refused
        ("jboy", 22),  # keys dropped for another screen: their notices read as echoes
        ("ariari", 70),  # MENU, OK after a page at OK?: the daemon stopped (KeyError)
        ("tenhou", 8),  # a RON dropped for RON?, pressed again on OK?: the win cancelled
        ("ema", 81),  # RON while a drawn tile was held: tiles off, a win entry refused
    ],
)
async def test_random_keys_on_a_bots_seat_do_not_wedge_the_bots(
    tmp_path: Path, preset: str, seed: int
) -> None:
    """Someone presses six random keys (``keys`` fault, drawn from the seed) on one bot's
    seat in the middle of a hand: the bots follow what the daemon made of them and play
    the next hands (issue 29 item 3; the tile soak's ``keys@N:SEAT``)."""
    async with tile_table(tmp_path, preset, seed) as run:
        bots = run.table.bots
        assert bots is not None
        await run.until(lambda: run.takes() > 40 + seed % 30, "the first hand's play")
        await run.table.inject("keys", str(seed % run.table.house.players), "6")
        started = bots.hands_started
        await run.until(lambda: bots.hands_started >= started + 2, "two more hands")
        assert bots.stalls == 0 and bots.hands_left == 0
