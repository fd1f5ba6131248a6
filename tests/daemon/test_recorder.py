"""The daemon's unit of durability: what one table event causes is journalled in one
transaction with the link position, and nothing it causes goes out before that."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge import messages as m
from tablectl.config import config_for
from tablectl.daemon import Daemon, JournalRecorder
from tablectl.journal import Journal, LinkPosition
from tablectl.rules.events import Riichi
from tablectl.rules.loader import load_rules
from tablectl.rules.state import initial_state

T0 = 1_700_000_000.0


def _recorder(journal: Journal, position: list[LinkPosition | None]) -> JournalRecorder:
    return JournalRecorder(
        journal, "t1", "kenko", None, clock=lambda: T0, position=lambda: position[0]
    )


def test_one_table_event_is_journalled_whole_or_not_at_all(tmp_path: Path) -> None:
    state = initial_state(load_rules("kenko"))
    position: list[LinkPosition | None] = [LinkPosition(7, 1)]
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        recorder = _recorder(journal, position)
        with recorder.handling():
            recorder.game_started(state.rules)
            recorder.event_accepted(Riichi(seat=1), state)
        game_id = recorder.game_id
        assert game_id is not None
        assert journal.link_position() == (7, 1)
        position[0] = LinkPosition(7, 2)
        with pytest.raises(RuntimeError, match="died"), recorder.handling():
            recorder.event_accepted(Riichi(seat=2), state)  # e.g. the implied discard...
            raise RuntimeError("died before the take")  # ...and not the take itself
        assert journal.events(game_id) == [Riichi(seat=1)]
        assert journal.link_position() == (7, 1)  # so the table resends the event
        assert recorder.stored == (7, 1)


def test_events_that_journal_nothing_write_nothing_until_the_position_lags(
    tmp_path: Path,
) -> None:
    # A key that changes nothing durable costs no write of its own: its position rides on
    # the next commit. Only once it lags POSITION_LAG_MAX events (or the table rebooted)
    # is it written alone, so that a stale position can never look like a new
    # acknowledgement in the 8-bit sequence space.
    from tablectl.daemon import POSITION_LAG_MAX

    position: list[LinkPosition | None] = [None]
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        recorder = _recorder(journal, position)
        with recorder.handling():
            pass
        assert journal.link_position() is None  # no table event yet: nothing to store
        position[0] = LinkPosition(7, 0)
        with recorder.handling():
            pass
        assert journal.link_position() == (7, 0)  # the first one of a boot is written
        writes = []
        for n in range(1, 300):
            position[0] = LinkPosition(7, n % 256)
            before = journal.link_position()
            with recorder.handling():
                pass
            if journal.link_position() != before:
                writes.append(n)
        assert writes == list(range(POSITION_LAG_MAX, 300, POSITION_LAG_MAX))
        position[0] = LinkPosition(8, 0)  # another boot
        with recorder.handling():
            pass
        assert journal.link_position() == (8, 0)
        assert journal.query("PRAGMA synchronous") == [(2,)]  # FULL again for events
    with Journal.open(tmp_path / "j.sqlite3") as journal:  # and it was committed
        assert journal.link_position() == (8, 0)


class _Link:
    session = 1

    def __init__(self) -> None:
        self.posted: list[m.Message] = []

    @property
    def posted_count(self) -> int:
        return len(self.posted)

    def post_nowait(self, msg: m.Message) -> Any:
        self.posted.append(msg)


def test_commands_wait_until_the_event_is_on_disk(tmp_path: Path) -> None:
    daemon = Daemon(config_for("sim://nowhere", "kenko", tmp_path / "j.sqlite3"))
    link = _Link()
    daemon.link = link  # type: ignore[assignment]
    display = m.SeatDisplay(seat=0, line1="E 25000", line2="")
    with daemon._holding():
        daemon._post(display)
        assert link.posted == []
    assert link.posted == [display]
    with pytest.raises(RuntimeError, match="journal"), daemon._holding():
        daemon._post(display)
        raise RuntimeError("journal write failed")
    assert link.posted == [display]  # what the failed event caused never went out
    daemon._post(display)  # outside a handling: at once
    assert link.posted == [display, display]


def test_the_console_flow_is_stored_for_exactly_that_journal_state(tmp_path: Path) -> None:
    state = initial_state(load_rules("kenko"))
    position: list[LinkPosition | None] = [LinkPosition(7, 1)]
    flow = {"phase": "table_result_entry", "n": 0}
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        recorder = _recorder(journal, position)
        recorder.flow = lambda: dict(flow)
        with recorder.handling():
            recorder.game_started(state.rules)
            recorder.event_accepted(Riichi(seat=1), state)
        flow["n"] = 1
        position[0] = LinkPosition(7, 2)
        with recorder.handling():  # a key that journals nothing: nothing written for it
            pass
        game_id = recorder.game_id
        with recorder.handling():  # the next durable change takes the flow along
            recorder.note("last_game", 1, {"on": True})
    with Journal.open(path) as journal:
        again = JournalRecorder(journal, "t1", "kenko", None, game_id=game_id)
        assert again.stored_flow() == {"phase": "table_result_entry", "n": 1}
        assert journal.link_position() == (7, 2)
        journal.append(game_id, Riichi(seat=2), T0)  # written without the flow: stale now
        assert JournalRecorder(journal, "t1", "kenko", None, game_id=game_id).stored_flow() is None


async def test_a_failed_event_is_not_acked_and_the_daemon_stops(tmp_path: Path) -> None:
    # The journal write of a table event fails: the daemon must not ack it (the table keeps
    # it for the next daemon) and must stop with the error instead of running on with a
    # state the journal does not have.
    from hw_sim import SimTable
    from tablectl.journal import JournalError

    sim = SimTable("tenhou", 1, autoplay=False)
    url = await sim.start_sim(f"fail-{tmp_path.name}")
    daemon = Daemon(config_for(url, "tenhou", tmp_path / "j.sqlite3"))
    failing = m.KeyPress(seat=2, key=m.Key.DIGIT_0)

    def broken_handle(msg: m.Message) -> Any:
        async def fail() -> None:
            raise JournalError("disk full")

        async def ok() -> None:
            return None

        return fail() if msg == failing else ok()

    try:
        async with asyncio.timeout(20):
            task = asyncio.create_task(daemon.run())
            while daemon.table is None or not sim.firmware.link_up:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            daemon.table.handle = broken_handle  # type: ignore[method-assign]
            sim.press(2, m.Key.DIGIT_0)
            with pytest.raises(JournalError, match="disk full"):
                await task
        link = sim.firmware.link
        assert link is not None
        assert failing in [msg for _, msg in link.unacked().events]
    finally:
        await sim.close()


def test_the_durable_position_never_lags_near_a_turn_of_the_sequence_space(
    tmp_path: Path,
) -> None:
    # After a power cut of the Pi alone the table keeps its window, and a hello whose
    # position is 1..8 ahead of the window's start (mod 256) acks those events: a stored
    # position that lagged 248-255 events would let the table drop events nobody handled.
    # So every write of the position is a synced one (never synchronous=NORMAL), and after
    # each group of events that journal nothing the stored position lags less than
    # POSITION_LAG_MAX events: what a power cut can leave behind.
    from firmware_bridge.link import WINDOW
    from tablectl.daemon import GROUP_LIMIT, POSITION_LAG_MAX

    assert POSITION_LAG_MAX + GROUP_LIMIT - 1 < 256 - WINDOW

    position: list[LinkPosition | None] = [LinkPosition(7, 0)]
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        statements: list[str] = []
        journal._commit._conn.set_trace_callback(statements.append)
        recorder = _recorder(journal, position)
        handled, lags = 0, []
        for group in range(1500):
            handled += 1 + (group * 7) % GROUP_LIMIT  # groups of 1..32 events
            position[0] = LinkPosition(7, handled % 256)
            with recorder.handling():
                pass
            stored = journal.link_position()
            assert stored is not None
            lags.append((handled - stored.rx_next) % 256)
        assert handled > 8 * 256
        assert max(lags) < POSITION_LAG_MAX
        assert any(lag >= GROUP_LIMIT for lag in lags)  # the position did ride along
        assert not [s for s in statements if "synchronous" in s.lower()]
