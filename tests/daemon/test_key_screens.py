"""A key answers the screen its player saw (issue 29, the tile soak's sanma-free seed 237).

The daemon handles each key with what the table had acknowledged when it sent it
(``Delivery.peer_acked``): a key pressed on another screen than its seat shows now is
dropped with a refusal. The rig is the daemon's own group handling with a fake link
(tests/daemon/test_group_commit.py), so every key says exactly which displays the table
had: the races of a real link, without its timing.
"""

from __future__ import annotations

from pathlib import Path

from firmware_bridge import Delivery, LinkPosition
from firmware_bridge import messages as m
from firmware_bridge.link import _Received
from tablectl.console.screens import ShownScreens, screen_of
from tablectl.daemon import Daemon, JournalRecorder
from tablectl.journal import Journal
from tablectl.table import Table
from tests.daemon.test_group_commit import FakeLink, _rig
from tests.daemon.test_table import Rig

K = m.Key


class DaemonRig(Rig):
    """:class:`Rig`'s moves, each message delivered through the daemon's group handling
    as the table sent it: a key with the number of the daemon's commands the table had
    acknowledged (all of them unless told: the player saw the latest displays)."""

    def __init__(
        self, daemon: Daemon, table: Table, recorder: JournalRecorder, link: FakeLink
    ) -> None:
        self.rules = table.rules
        self.table = table
        self.clock = 0.0
        self.sent = link.posted
        self.daemon, self.recorder, self.link = daemon, recorder, link
        self.rx = 0

    async def send(self, msg: m.Message, acked: int | None = None) -> None:
        self.rx += 1
        seen = len(self.link.posted) if acked is None else acked
        received = _Received(msg, FakeLink.session, 9, self.rx % 256, seen)
        delivery = Delivery(msg, LinkPosition(9, self.rx % 256), received)
        await self.daemon._handle_group(self.table, self.recorder, [delivery])

    async def press(self, seat: int, key: K, acked: int) -> None:
        """``seat`` presses ``key`` when the table had ``acked`` of the daemon's commands."""
        await self.send(m.KeyPress(seat=seat, key=key), acked)


async def _rigged(tmp_path: Path) -> tuple[DaemonRig, Journal]:
    daemon, table, recorder, journal, link = await _rig(tmp_path)
    return DaemonRig(daemon, table, recorder, link), journal


def _sent_since(rig: DaemonRig, mark: int, kind: type[m.Message]) -> list[m.Message]:
    return [msg for msg in rig.link.posted[mark:] if isinstance(msg, kind)]


async def test_an_ok_for_a_fault_does_not_confirm_the_game_over_under_it(tmp_path: Path) -> None:
    """Seed 237: GAME OVER on every seat, then a reader fault. One OK meant for GAME OVER
    reached the daemon while FAULT showed, and cleared it; the OKs the other seats pressed
    for the FAULT then confirmed the GAME OVER that came back, and with the last seat's
    own OK the table started a new game nobody had agreed to."""
    rig, journal = await _rigged(tmp_path)
    await rig.send(m.TrayTotals(totals=(25000,) * 4))
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # busts all three
    assert rig.state.finished
    assert all(screen_of(rig.lines(seat)[0]) == "GAME OVER" for seat in range(4))
    on_game_over = len(rig.link.posted)
    await rig.send(m.Fault(code=m.FaultCode.TILE_READER, detail=0x0101, text="seat 0 melds"))
    assert all(rig.lines(seat)[0] == "FAULT" for seat in range(4))
    on_fault = len(rig.link.posted)

    await rig.press(1, K.OK, on_game_over)  # for GAME OVER: lands on FAULT
    assert rig.table.faults, "an OK pressed on GAME OVER cleared the fault"
    assert rig.lines(1) == ("FAULT", "seat 0 melds")
    await rig.press(0, K.OK, on_fault)  # clears the fault: GAME OVER again
    assert not rig.table.faults
    mark = len(rig.link.posted)
    await rig.press(2, K.OK, on_fault)  # for the FAULT, as seat 3's
    await rig.press(3, K.OK, on_fault)
    assert screen_of(rig.lines(2)[0]) == "GAME OVER" and rig.lines(2)[1] == "! screen changed"
    await rig.key(1, K.OK)  # seat 1, now on GAME OVER: its own confirmation
    assert rig.state.finished, "keys pressed for the FAULT confirmed the GAME OVER"
    assert _sent_since(rig, mark, m.WallCommand) == []  # no shuffle: no new game

    await rig.key(0, K.OK)
    await rig.key(2, K.OK)
    await rig.key(3, K.OK)  # everyone saw GAME OVER and agreed: the next game
    assert not rig.state.finished and rig.state.scores == (25000,) * 4
    assert _sent_since(rig, mark, m.WallCommand) != []
    journal.close()


async def test_oks_for_a_fault_do_not_confirm_a_hand(tmp_path: Path) -> None:
    """CONFIRM on every seat under a fault: all press OK for the FAULT; the first clears
    it, the others' must not agree to the settlement that came back."""
    rig, journal = await _rigged(tmp_path)
    await rig.send(m.TrayTotals(totals=(25000,) * 4))
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.DIGIT_3, K.OK, K.DIGIT_3, K.DIGIT_0, K.OK, K.OK)
    assert all(screen_of(rig.lines(seat)[0]) == "CONFIRM" for seat in range(4))
    await rig.send(m.Fault(code=m.FaultCode.LID_OPEN, text="lid open"))
    on_fault = len(rig.link.posted)
    for seat in (1, 0, 2, 3):
        await rig.press(seat, K.OK, on_fault)
    assert not rig.table.faults
    assert [rig.lines(seat)[1] for seat in (0, 2, 3)] == ["! screen changed"] * 3
    await rig.key(1, K.OK)
    assert rig.table.phase == "table_settlement", "keys for the FAULT confirmed the hand"
    for seat in (0, 2, 3):
        await rig.key(seat, K.OK)
    assert rig.table.phase != "table_settlement"
    journal.close()


async def test_digits_typed_before_their_echo_count(tmp_path: Path) -> None:
    """Typing ahead on one prompt is not another screen: ``HAN? 1`` then ``HAN? 13``
    before the table had the first echo."""
    rig, journal = await _rigged(tmp_path)
    await rig.send(m.TrayTotals(totals=(25000,) * 4))
    await rig.start_hand()
    await rig.key(0, K.TSUMO)
    assert screen_of(rig.lines(0)[0]) == "HAN?"
    shown = len(rig.link.posted)
    await rig.press(0, K.DIGIT_1, shown)
    await rig.press(0, K.DIGIT_3, shown)
    assert rig.lines(0)[0] == "HAN? 13"
    journal.close()


def test_screens_of_display_lines() -> None:
    assert screen_of("FAULT") == "FAULT"
    assert screen_of("GAME OVER") == screen_of("GAME OVER !TRAY 25000") == "GAME OVER"
    assert screen_of("HAN? 13") == screen_of("HAN?") == "HAN?"
    assert screen_of("3 HAN 40 FU 5200 OK?") == screen_of("OK?") == "OK?"
    assert screen_of("PLACE MELD PON") == "PLACE MELD"
    assert screen_of("E 25000") == screen_of("S DIFF E+8000") == screen_of("SAFE") == ""


async def test_keys_typed_ahead_through_the_seats_own_prompts_count(tmp_path: Path) -> None:
    """``STAFF`` then ``0`` before ``STAFF?`` reached the table: the seat's own key
    changed its screen, so the next key was meant for the prompt it opened."""
    rig, journal = await _rigged(tmp_path)
    shown = len(rig.link.posted)
    await rig.press(2, K.STAFF_CALL, shown)
    await rig.press(2, K.DIGIT_0, shown)
    assert rig.table.alerts.seats("staff_call") == [2]
    journal.close()


def test_a_new_session_starts_from_what_the_seats_showed_last() -> None:
    """A key the table resends after a reconnect was pressed on the displays it kept, not
    on the ones the daemon sends in the new session."""
    screens = ShownScreens()
    assert screens.stale(0, 1, 5) is None  # nothing sent: taken as it comes
    for ordinal, line1 in ((3, "GAME OVER"), (7, "E 25000")):
        screens.made(0, line1, own=False)
        screens.posted(0, 1, ordinal)
    assert screens.stale(0, 1, 2) is None  # the table had none of them
    assert screens.stale(0, 1, 6) == ("GAME OVER", "")
    screens.made(0, "ROLL?", own=False)
    screens.posted(0, 2, 2)  # the next session
    assert screens.stale(0, 2, 0) == ("", "ROLL?")  # on the page it had at the end
    assert screens.stale(0, 2, 2) is None
