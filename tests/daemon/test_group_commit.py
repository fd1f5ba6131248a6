"""Group commit: the table events that arrived together cost one journal transaction; a
failing event rolls back alone; a crash in the middle of a group loses nothing."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge import Delivery, LinkPosition
from firmware_bridge import messages as m
from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon, JournalRecorder
from tablectl.journal import Journal
from tablectl.rules.loader import load_rules
from tablectl.table import Table

K = m.Key


class FakeLink:
    """What the daemon asks of the link while it handles a group."""

    def __init__(self) -> None:
        self.posted: list[m.Message] = []
        self.acked: list[Delivery] = []
        self.held = False
        #: Posts and acks in the order they were made.
        self.calls: list[str] = []

    #: The link session (one: nothing here reconnects).
    session = 1

    @property
    def posted_count(self) -> int:
        return len(self.posted)

    def post_nowait(self, msg: m.Message) -> Any:
        self.posted.append(msg)
        self.calls.append("post")

    def acknowledge(self, delivery: Delivery) -> None:
        self.acked.append(delivery)
        self.calls.append("ack")

    def hold_acks(self) -> None:
        self.held = True


async def _rig(tmp_path: Path) -> tuple[Daemon, Table, JournalRecorder, Journal, FakeLink]:
    daemon = Daemon(config_for("sim://nowhere", "jboy", tmp_path / "j.sqlite3"))
    link = FakeLink()
    daemon.link = link  # type: ignore[assignment]
    journal = Journal.open(tmp_path / "j.sqlite3")
    recorder = JournalRecorder(journal, "t", "jboy", None, position=daemon._link_position)
    table = Table(load_rules("jboy"), post=daemon._post, recorder=recorder, now=lambda: 0.0)
    recorder.flow = table.flow_snapshot
    recorder.flow_key = table.flow_key
    daemon._handling = LinkPosition(9, 0)
    with daemon._holding(), recorder.handling():
        await table.link_up(rebooted=False)
    return daemon, table, recorder, journal, link


def _group(*keys: tuple[int, K], start: int = 1) -> list[Delivery]:
    return [
        Delivery(m.KeyPress(seat=seat, key=key), LinkPosition(9, (start + i) % 256))
        for i, (seat, key) in enumerate(keys)
    ]


def _commits(journal: Journal) -> list[str]:
    statements: list[str] = []
    journal._commit._conn.set_trace_callback(statements.append)
    return statements


async def test_a_burst_of_score_page_presses_writes_nothing(tmp_path: Path) -> None:
    daemon, table, recorder, journal, link = await _rig(tmp_path)
    statements = _commits(journal)
    burst = _group(*[(seat % 4, K.DIGIT_0) for seat in range(20)])
    await daemon._handle_group(table, recorder, burst)
    assert [s for s in statements if s.startswith(("COMMIT", "BEGIN"))] == []
    assert link.acked == [burst[-1]]
    assert len(link.posted) >= 4  # every seat's page moved
    # A group with a durable change costs one commit, with the position of its last event.
    group = _group((0, K.DIGIT_0), (2, K.LAST_GAME), (1, K.DIGIT_0), start=21)
    await daemon._handle_group(table, recorder, group)
    assert [s for s in statements if s.startswith("COMMIT")] == ["COMMIT"]
    assert journal.link_position() == (9, 23)
    journal.close()


async def test_a_groups_ack_goes_with_its_last_command(tmp_path: Path) -> None:
    """The ack rides on the group's last frame: a table takes the commands first and then
    the ack that frees its window, so its next events carry its own ack."""
    daemon, table, recorder, journal, link = await _rig(tmp_path)
    link.calls.clear()
    pages = _group((1, K.DIGIT_0), (2, K.DIGIT_0), (3, K.DIGIT_0))
    await daemon._handle_group(table, recorder, pages)
    assert link.calls == ["post", "post", "ack", "post"]
    journal.close()


async def test_a_key_that_changes_the_consoles_is_committed_before_its_ack(tmp_path: Path) -> None:
    # The soak found it: keys that moved a prompt were acknowledged without storing the
    # console flow, so after kill -9 the table did not resend them and the restarted
    # daemon resumed an older prompt; the players' next keys then meant something else.
    daemon, table, recorder, journal, link = await _rig(tmp_path)
    await daemon._handle_group(table, recorder, _group((0, K.MENU), start=1))
    statements = _commits(journal)
    # A refused key or a page changes nothing durable: no write.
    await daemon._handle_group(table, recorder, _group((1, K.PON), (2, K.DIGIT_0), start=2))
    assert [s for s in statements if s.startswith("COMMIT")] == []
    # STAFF opens a prompt on seat 3: the group commits, with the flow that shows it.
    group = _group((3, K.STAFF_CALL), start=4)
    await daemon._handle_group(table, recorder, group)
    assert [s for s in statements if s.startswith("COMMIT")] == ["COMMIT"]
    assert journal.link_position() == (9, 4)
    stored = recorder.stored_flow()
    assert stored is not None and stored["consoles"][3]["prompt"] == "STAFF?"
    assert link.acked[-1] == group[-1]
    journal.close()


async def test_a_failing_event_rolls_back_alone_and_holds_the_later_acks(tmp_path: Path) -> None:
    daemon, table, recorder, journal, link = await _rig(tmp_path)
    real = table.handle
    poison = m.KeyPress(seat=3, key=K.LAST_GAME)

    async def handle(msg: m.Message) -> None:
        await real(msg)
        if msg == poison:
            raise sqlite3.OperationalError("disk I/O error")  # after its note was written

    table.handle = handle  # type: ignore[method-assign]
    group = _group((1, K.LAST_GAME), (2, K.DIGIT_0), (3, K.LAST_GAME), (0, K.LAST_GAME))
    link.posted.clear()
    with pytest.raises(sqlite3.OperationalError):
        await daemon._handle_group(table, recorder, group)
    # The first two are committed and acknowledged, the third rolled back, the fourth not
    # handled; the table keeps the last two for the next daemon.
    assert [n.seat for n in journal.notes() if n.kind == "last_game"] == [1]
    assert link.acked == [group[1]] and link.held
    assert journal.link_position() == (9, 2)
    shown = {msg.seat for msg in link.posted if isinstance(msg, m.SeatDisplay)}
    assert 3 not in shown and 0 not in shown  # what the failed event caused never went out
    journal.close()


async def test_a_crash_in_the_middle_of_a_group_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    # An autoplayed game; the first time a group of two or more table events arrives,
    # the daemon dies after handling some of it and before the commit (a BaseException
    # escapes, as kill -9 would leave it: nothing committed, nothing acknowledged). A new
    # daemon on the same journal takes the resent events; the game ends as without it.
    async def play(crash: bool, journal: Path) -> dict[str, Any]:
        sim = SimTable("tenhou", 4, max_games=1)
        url = await sim.start_sim(f"group-{crash}-{tmp_path.name}")
        config = config_for(url, "tenhou", journal)
        results: list[dict[str, Any]] = []
        crashed = False

        class Crash(BaseException):
            pass

        def daemon_for() -> Daemon:
            # Claim windows closed by the bots' answers: the same game at any load.
            daemon = Daemon(config, claim_window_s=None, max_games=1)
            daemon.on_game = lambda table, result: results.append(result)
            handle_group, dispatch = daemon._handle_group, daemon._dispatch
            current: list[Any] = []

            async def grouped(table: Table, recorder: Any, group: Any) -> None:
                current[:] = [group]
                await handle_group(table, recorder, group)

            async def dispatched(table: Table, item: Any) -> None:
                nonlocal crashed
                await dispatch(table, item)
                if crash and not crashed and current and len(current[0]) >= 2:
                    crashed = True
                    raise Crash

            daemon._handle_group = grouped  # type: ignore[method-assign]
            daemon._dispatch = dispatched  # type: ignore[method-assign]
            return daemon

        try:
            async with asyncio.timeout(60):
                while not results:
                    daemon = daemon_for()
                    task = asyncio.create_task(daemon.run())
                    try:
                        await asyncio.wait(
                            [task, asyncio.ensure_future(sim.wait_games(1))],
                            return_when=asyncio.FIRST_COMPLETED,
                        )
                    finally:
                        daemon.stop.set()
                        with contextlib.suppress(Crash):
                            await task
        finally:
            await sim.close()
        assert crashed == crash
        return results[0]

    plain = await play(False, tmp_path / "plain.sqlite3")
    crashed = await play(True, tmp_path / "crashed.sqlite3")
    assert crashed.pop("game_id") and plain.pop("game_id")  # each journal names its own
    assert crashed == plain
