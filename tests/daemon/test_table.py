"""The table controller driven directly: console flows, displays, the hand cycle.

No link and no real time: a rig feeds table messages to :class:`Table` and collects the
commands it posts; the clock is a number the test moves.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from firmware_bridge import messages as m
from tablectl.console.staff import PinHash, StaffGate, hash_pin
from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState
from tablectl.rules.wall import implied_discarder, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.table import Table

K = m.Key
#: The staff PIN of every rig (a cheap hash: tests check many PINs).
PIN = "2468"
PIN_HASH = PinHash.parse(hash_pin(PIN, iterations=1000))


class Rig:
    """A fake table around one :class:`Table`."""

    def __init__(self, preset: str = "ariari", **kw: Any) -> None:
        self.rules = load_rules(preset)
        self.sent: list[Any] = []
        self.clock = 0.0
        kw.setdefault("staff", StaffGate(PIN_HASH, lambda: self.clock))
        self.table = Table(self.rules, post=self.sent.append, now=lambda: self.clock, **kw)

    @property
    def players(self) -> int:
        return self.rules.players

    def lines(self, seat: int) -> tuple[str, str]:
        for msg in reversed(self.sent):
            if isinstance(msg, m.SeatDisplay) and msg.seat == seat:
                return msg.line1, msg.line2
        raise AssertionError(f"no display sent for seat {seat}")

    def lamps(self, seat: int) -> m.SeatLamps:
        return next(x for x in reversed(self.sent) if isinstance(x, m.SeatLamps) and x.seat == seat)

    async def up(self) -> None:
        await self.table.link_up(rebooted=False)

    async def send(self, msg: m.Message) -> None:
        await self.table.handle(msg)

    async def key(self, seat: int, *keys: K) -> None:
        for key in keys:
            await self.send(m.KeyPress(seat=seat, key=key))

    async def type(self, seat: int, text: str) -> None:
        await self.key(seat, *(K(int(c)) for c in text))

    async def take(self, seat: int) -> None:
        wall = self.table.state.wall
        assert wall is not None
        rules = wall_rules(self.rules)
        discarder = implied_discarder(wall, seat)
        if discarder is not None:
            stepped = wall_step(rules, wall, ev.Discard(seat=discarder))
            assert not isinstance(stepped, Refusal)
            wall = stepped
        pos = next_position(rules, wall, seat)
        assert pos is not None, f"seat {seat} cannot take now"
        await self.send(m.WallTake(seat=seat, position=pos))

    async def start_hand(self, dice: tuple[int, int] = (3, 4)) -> None:
        for wall in range(self.players):
            await self.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
        dealer = self.table.state.dealer
        assert self.lines(dealer)[0].startswith("ROLL?")  # "ROLL? !TRAY 24000" too
        await self.key(dealer, K.OK)
        assert isinstance(self.sent[-1], m.DiceRoll) or any(
            isinstance(x, m.DiceRoll) for x in self.sent[-3:]
        )
        await self.send(m.DiceResult(die1=dice[0], die2=dice[1]))
        wall = self.table.state.wall
        assert wall is not None
        while wall.phase == "deal":
            await self.take(wall.turn)
            wall = self.table.state.wall
            assert wall is not None
        await self.take(dealer)

    async def confirm_all(self) -> None:
        for seat in range(self.players):
            await self.key(seat, K.OK)

    @property
    def state(self) -> GameState:
        return self.table.state


async def test_start_shuffles_and_prompts_the_dealer_to_roll() -> None:
    rig = Rig()
    await rig.up()
    assert m.WallCommand(action=m.WallAction.SHUFFLE) in rig.sent
    assert rig.table.phase == "table_shuffling"
    assert rig.lines(0) == ("E 25000", "")
    assert rig.lamps(0).dealer and not rig.lamps(1).dealer
    await rig.start_hand()
    assert rig.table.phase == "table_playing_turn"
    centre = next(x for x in reversed(rig.sent) if isinstance(x, m.CentreDisplay))
    assert centre.tiles_left == 136 - 14 - 53 and centre.round_wind == m.Wind.EAST


async def test_ron_with_claim_window_entry_and_confirmation() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.RON)  # seat 0 drew and discarded: seat 1 rons it
    assert rig.table.phase == "table_playing_claim"
    assert rig.lines(2)[0] == "RON?" and rig.lines(3)[0] == "RON?"
    await rig.key(2, K.CANCEL)
    await rig.key(3, K.CANCEL)
    assert rig.lines(1)[0] == "HAN?"
    await rig.type(1, "2")
    assert rig.lines(1)[0] == "HAN? 2"
    await rig.key(1, K.OK)
    await rig.type(1, "30")
    await rig.key(1, K.OK)
    assert rig.state.scores == (23000, 27000, 25000, 25000)
    assert rig.table.phase == "table_settlement"
    assert rig.lines(0) == ("CONFIRM", "-2000 = 23000")
    assert rig.lines(1) == ("CONFIRM", "+2000 = 27000")
    before = len(rig.sent)
    await rig.confirm_all()
    assert m.WallCommand(action=m.WallAction.SHUFFLE) in rig.sent[before:]
    assert rig.state.dealer == 1 and rig.lines(1)[0] == "E 27000"


async def test_double_ron_both_enter_their_hands() -> None:
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.RON)
    await rig.key(3, K.RON)
    await rig.key(2, K.CANCEL)
    for seat, han in ((1, "1"), (3, "3")):
        await rig.type(seat, han)
        await rig.key(seat, K.OK)
        await rig.type(seat, "30")
        await rig.key(seat, K.OK)
    assert rig.state.scores == (25000 - 1000 - 3900, 26000, 25000, 28900)


async def test_refused_entry_shows_the_reason_and_changes_nothing() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(2, K.RON)
    await rig.key(1, K.CANCEL)
    await rig.key(3, K.CANCEL)
    await rig.type(2, "1")
    await rig.key(2, K.OK)
    await rig.type(2, "20")
    await rig.key(2, K.OK)
    line1, line2 = rig.lines(2)
    assert line1 == "HAN?" and line2.startswith("! ")
    assert rig.state.scores == (25000,) * 4 and rig.table.phase == "table_result_entry"
    await rig.key(2, K.CANCEL)  # give up the win
    assert rig.table.phase == "table_playing_turn"


async def test_take_out_of_turn_is_refused_on_that_seat() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    wall = rig.state.wall
    assert wall is not None
    await rig.send(m.WallTake(seat=2, position=wall.order[wall.next_live]))
    assert rig.lines(2)[1].startswith("! seat 2 took")
    assert rig.state.wall is wall


async def test_riichi_lamp_and_deposit() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.RIICHI)
    assert rig.lamps(0).riichi
    assert rig.state.kyoutaku == 0  # taken when the declaration tile passes
    await rig.take(1)
    assert rig.state.kyoutaku == 1000 and rig.state.scores[0] == 24000


async def test_exhaustive_draw_tenpai_declarations() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    seat = 1
    while rig.state.wall is not None and rig.state.wall.live_left:
        await rig.take(seat)
        seat = (seat + 1) % 4
    await rig.key(2, K.TENPAI)
    assert [rig.lines(s)[0] for s in (0, 1, 3)] == ["TENPAI?"] * 3
    await rig.key(0, K.NOTEN)
    await rig.key(1, K.NOTEN)
    await rig.key(3, K.TENPAI)
    assert rig.state.scores == (23500, 23500, 26500, 26500)
    assert rig.table.phase == "table_settlement"


async def test_draw_declared_too_early_is_refused() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.NOTEN)
    assert rig.lines(1)[1].startswith("! ")
    assert rig.table.phase == "table_playing_turn"


async def test_score_pages_difference_and_rank() -> None:
    rig = Rig()
    await rig.up()
    rig.table.state = rig.state.__class__(rules=rig.rules, scores=(30000, 20000, 25000, 25000))
    await rig.key(1, K.DIGIT_0)
    # Each other seat labelled by its wind (seat 0 deals: E), as players call them.
    assert rig.lines(1) == ("S DIFF E-10000", "W-5000 N-5000")
    await rig.key(1, K.DIGIT_0)
    assert rig.lines(1) == ("S RANK 4/4", "20000")
    await rig.key(1, K.DIGIT_0)
    assert rig.lines(1) == ("S 20000", "")


async def test_the_game_clock_shows_on_every_seat_where_the_preset_has_one() -> None:
    rig = Rig("kenko")  # a 50-minute clock
    await rig.up()
    await rig.start_hand()
    rig.table.clock_started = rig.table.now() - 754  # 12 min 34 s played
    rig.table.refresh()
    assert rig.table.clock_text() == "37:26"
    assert all(rig.lines(seat)[1] == "TIME 37:26" for seat in (1, 2, 3))
    plain = Rig("tenhou")
    await plain.up()
    assert plain.table.clock_text() is None and "TIME" not in plain.lines(1)[1]


async def test_all_last_conditions_show_when_the_hand_starts_and_on_key_0() -> None:
    # Tenhou South 4, 2 honba, seat 3 deals (docs/replay.md's worked example).
    rig = Rig("tenhou")
    start = rig.state.__class__(rules=rig.rules, scores=(33000, 23000, 24000, 20000),
                                round_index=1, dealer=3, honba=2)  # fmt: skip
    rig.table.state = start
    await rig.up()
    assert rig.lines(2) == ("1ST R 12000 D 4500", "TSUMO 1800-3600")
    assert rig.lines(0) == ("SAFE", "TOP NOW")
    assert rig.lines(1)[0].startswith("1ST R ")
    await rig.key(2, K.DIGIT_0)  # pages: conditions -> score -> difference -> rank -> ...
    assert rig.lines(2)[0] == "N 24000"
    for _ in range(3):
        await rig.key(2, K.DIGIT_0)
    assert rig.lines(2)[0] == "1ST R 12000 D 4500"
    assert rig.table.snapshot()["conditions"]["2"]["1"]["tsumo"] == 7200


async def test_no_conditions_page_before_the_last_hand() -> None:
    rig = Rig("tenhou")
    await rig.up()
    for _ in range(3):
        await rig.key(1, K.DIGIT_0)
    assert rig.lines(1)[0] == "S 25000"  # three pages only
    assert rig.table.snapshot()["conditions"] is None


async def test_fault_and_resume() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.send(m.Fault(code=m.FaultCode.MOTOR_STALL, detail=2, text="wall 2 motor"))
    assert rig.table.phase == "fault"
    assert rig.lines(3) == ("FAULT", "wall 2 motor")
    await rig.key(3, K.RON)  # ignored while the fault stands
    await rig.key(0, K.OK)
    assert m.FaultClear(code=m.FaultCode.MOTOR_STALL) in rig.sent
    assert rig.table.phase == "table_playing_turn"


async def test_a_fault_latched_at_the_table_shows_after_a_restart() -> None:
    # A daemon restarted while FAULT showed asks the table for its status at link up and
    # puts the latched fault back over the prompts; staff clear it as before.
    rig = Rig()
    await rig.up()
    assert m.StatusRequest() in rig.sent
    await rig.start_hand()
    await rig.send(m.TableStatus(walls=(m.WallState.DONE,) * 4, faults=(m.FaultCode.LID_OPEN,)))
    assert rig.table.phase == "fault"
    assert rig.lines(1) == ("FAULT", "lid open")
    assert rig.table.snapshot()["alerts"][0]["kind"] == "fault"
    # A status that repeats a fault the daemon knows changes nothing.
    before = len(rig.sent)
    await rig.send(m.TableStatus(walls=(m.WallState.DONE,) * 4, faults=(m.FaultCode.LID_OPEN,)))
    assert not any(isinstance(x, m.BuzzerCommand) for x in rig.sent[before:])
    await rig.key(0, K.OK)
    assert m.FaultClear(code=m.FaultCode.LID_OPEN) in rig.sent
    assert rig.table.phase == "table_playing_turn"


async def test_host_silent_in_a_status_is_left_to_its_own_fault_event() -> None:
    # The table reports HOST_SILENT as a Fault event when the host is back, and the daemon
    # clears it there (re-rolling lost dice): the status listing it must not do it again.
    rig = Rig()
    await rig.up()
    before = len(rig.sent)
    await rig.send(m.TableStatus(walls=(m.WallState.DONE,) * 4, faults=(m.FaultCode.HOST_SILENT,)))
    assert not any(
        isinstance(x, (m.FaultClear, m.DiceRoll, m.BuzzerCommand)) for x in rig.sent[before:]
    )
    assert rig.table.phase != "fault"


async def test_link_lost_and_back_resumes_and_resends_displays() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.table.link_lost()
    assert rig.table.phase == "offline"
    before = len(rig.sent)
    await rig.table.link_up(rebooted=True)
    assert rig.table.phase == "table_playing_turn"
    resent = rig.sent[before:]
    assert sum(isinstance(x, m.SeatDisplay) for x in resent) == 4
    assert any(isinstance(x, m.CentreDisplay) for x in resent)


async def test_kenko_clock_makes_the_hand_in_progress_the_last() -> None:
    rig = Rig("kenko")
    await rig.up()
    await rig.start_hand()
    rig.clock = 50 * 60 + 1
    await rig.table.tick()
    assert rig.state.last_hand
    centre = next(x for x in reversed(rig.sent) if isinstance(x, m.CentreDisplay))
    assert centre.clock == 0
    await rig.key(0, K.TSUMO)
    await rig.type(0, "3")
    await rig.key(0, K.OK)
    await rig.type(0, "30")
    await rig.key(0, K.OK)
    assert rig.state.finished and rig.state.final is not None
    assert rig.state.final.reason == "time_up"
    assert rig.lines(2)[0] == "GAME OVER"


async def test_tray_mismatch_is_shown() -> None:
    rig = Rig()
    await rig.up()
    await rig.send(m.TrayTotals(totals=(25000, 24000, 25000, 25000)))
    assert rig.lines(1) == ("S 25000", "! TRAY 24000")


async def test_events_are_recorded_before_their_displays() -> None:
    order: list[str] = []

    class Recorder:
        def game_started(self, rules: Any, rules_ref: str) -> None:
            order.append("start")

        def event_accepted(self, event: ev.Event, state: GameState) -> None:
            order.append(type(event).__name__)

        def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
            order.append(kind)

        def game_abandoned(self) -> None:
            order.append("abandoned")

    rig = Rig(recorder=Recorder())
    rig.table.post_command = lambda msg: (order.append("post"), rig.sent.append(msg))
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO)
    await rig.type(0, "1")
    await rig.key(0, K.OK)
    await rig.type(0, "30")
    del order[:]
    await rig.key(0, K.OK)
    assert order[0] == "Tsumo" and order[1:] and set(order[1:]) == {"post"}


async def test_abort_from_the_menu() -> None:
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.MENU, K.DIGIT_2, K.OK)  # four winds needs the first go-around
    assert rig.lines(1)[1].startswith("! ")
    await rig.key(0, K.MENU, K.DIGIT_1)  # the dealer's first draw: nine terminals
    assert rig.lines(0)[0] == "ABORT? 9 TERMINALS"
    await rig.key(0, K.OK)
    assert rig.table.phase == "table_settlement"
    assert rig.state.dealer == 1


async def test_chombo_via_staff_menu() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.start_hand()
    await rig.key(3, K.STAFF_CALL, K.DIGIT_1)
    await rig.type(3, PIN)
    await rig.key(3, K.OK, K.DIGIT_2, K.OK)
    assert rig.state.scores == (28000, 28000, 16000, 28000)
    assert rig.table.phase == "table_settlement"


async def test_a_resent_take_is_ignored_not_refused() -> None:
    # The same take reported twice (a sensor bounce, a resend) is not a new take.
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    wall = rig.state.wall
    assert wall is not None
    last = m.WallTake(seat=wall.taken_by[-1], position=wall.taken[-1])
    before = rig.state
    await rig.send(last)
    assert rig.state is before
    assert not rig.lines(last.seat)[1].startswith("! ")
    # A take of that position by another seat is still refused.
    await rig.send(m.WallTake(seat=(last.seat + 1) % 4, position=last.position))
    assert rig.lines((last.seat + 1) % 4)[1].startswith("! ")


async def _roll_then_lose_the_link(rig: Rig) -> int:
    """Walls up, the dealer presses OK at ROLL?, then the link drops and comes back (the
    table did not reboot). Returns how many commands were sent before the reconnect."""
    await rig.up()
    for wall in range(rig.players):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    dealer = rig.state.dealer
    await rig.key(dealer, K.OK)
    assert rig.table.phase == "table_dice"
    assert m.DiceRoll() in rig.sent
    await rig.table.link_lost()
    before = len(rig.sent)
    await rig.table.link_up(rebooted=False)
    assert rig.table.phase == "table_dice"
    return before


async def test_a_roll_lost_with_the_link_is_asked_for_again() -> None:
    # The DiceRoll went out as the line went: the table never got it, so its queued
    # events after the reconnect hold no DiceResult before its HOST_SILENT fault.
    rig = Rig()
    before = await _roll_then_lose_the_link(rig)
    await rig.send(m.Fault(code=m.FaultCode.HOST_SILENT, text="host silent: motors stopped"))
    assert m.DiceRoll() in rig.sent[before:]
    assert rig.table.phase == "table_dice"
    await rig.send(m.DiceResult(die1=3, die2=4))
    assert rig.table.phase == "table_dealing"
    assert rig.state.wall is not None


async def test_a_roll_made_before_the_link_dropped_is_not_asked_for_again() -> None:
    # The table rolled before the line went: its DiceResult comes before HOST_SILENT.
    rig = Rig()
    before = await _roll_then_lose_the_link(rig)
    await rig.send(m.DiceResult(die1=3, die2=4))
    await rig.send(m.Fault(code=m.FaultCode.HOST_SILENT, text="host silent: motors stopped"))
    assert m.DiceRoll() not in rig.sent[before:]
    assert rig.table.phase == "table_dealing"


async def test_a_host_silent_older_than_the_roll_asks_for_no_second_roll() -> None:
    # The table lost an earlier host and queued HOST_SILENT; behind a backlog of events
    # it reaches this daemon after the walls went up and the DiceRoll went out in this
    # session. The table got that DiceRoll: asking again rolled the dice twice (the
    # storm test's simulator then dealt from a wall already dealt).
    rig = Rig()
    await rig.up()
    for wall in range(rig.players):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    await rig.key(rig.state.dealer, K.OK)
    assert rig.table.phase == "table_dice"
    before = len(rig.sent)
    await rig.send(m.Fault(code=m.FaultCode.HOST_SILENT, text="host silent: motors stopped"))
    assert m.DiceRoll() not in rig.sent[before:]
    await rig.send(m.DiceResult(die1=3, die2=4))
    assert rig.table.phase == "table_dealing"


async def test_a_fault_while_waiting_for_the_dice_ends_with_a_new_roll() -> None:
    # Cleared with OK, a fault in table_dice must not leave the table waiting for dice
    # nobody asked for: the dealer is prompted to roll again.
    rig = Rig()
    await rig.up()
    for wall in range(rig.players):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    dealer = rig.state.dealer
    await rig.key(dealer, K.OK)
    assert rig.table.phase == "table_dice"
    await rig.send(m.Fault(code=m.FaultCode.DICE, text="dice stuck"))
    assert rig.lines(dealer)[0] == "FAULT"
    await rig.key(dealer, K.OK)
    assert rig.table.phase == "table_walls_up"
    assert rig.lines(dealer)[0] == "ROLL?"
    before = len(rig.sent)
    await rig.key(dealer, K.OK)
    assert m.DiceRoll() in rig.sent[before:]
    await rig.send(m.DiceResult(die1=2, die2=5))
    assert rig.table.phase == "table_dealing"


async def _restarted(rig: Rig) -> Rig:
    """The daemon dies: a new controller on the journalled state and the stored flow."""
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))  # as stored: JSON text
    new = Rig(rig.rules.name, state=rig.state)
    new.table.restore_flow(snapshot)
    await new.up()
    return new


@pytest.mark.parametrize("cut", range(7))
async def test_a_restart_in_the_middle_of_a_double_ron_entry_goes_on_from_there(cut: int) -> None:
    # Killed after any key of the claim window and the han/fu entries, the restarted
    # daemon shows the same prompts and the entry ends with the same scores.
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    keys: list[tuple[int, K]] = [(1, K.RON), (3, K.RON), (2, K.CANCEL)]
    for seat, han in ((1, "1"), (3, "3")):
        keys += [(seat, K(int(han))), (seat, K.OK), (seat, K.DIGIT_3), (seat, K.DIGIT_0)]
        keys.append((seat, K.OK))
    for i, (seat, key) in enumerate(keys):
        if i == cut:
            shown = [rig.lines(s)[0] for s in range(rig.players)]
            rig = await _restarted(rig)
            assert [rig.lines(s)[0] for s in range(rig.players)] == shown
        await rig.key(seat, key)
    assert rig.state.scores == (25000 - 1000 - 3900, 26000, 25000, 28900)


async def test_a_restart_during_the_confirmations_keeps_them() -> None:
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO)
    await rig.type(0, "2")
    await rig.key(0, K.OK)
    await rig.type(0, "30")
    await rig.key(0, K.OK)
    await rig.key(1, K.OK)
    assert rig.table.phase == "table_settlement"
    rig = await _restarted(rig)
    assert rig.table.phase == "table_settlement"
    assert rig.lines(2)[0].startswith("CONFIRM") and not rig.lines(1)[0].startswith("CONFIRM")
    for seat in (0, 2, 3):
        await rig.key(seat, K.OK)
    assert m.WallCommand(action=m.WallAction.SHUFFLE) in rig.sent


@pytest.mark.parametrize(
    "broken",
    [{}, {"phase": "offline", "consoles": [], "pending": None, "walls_done": [],
          "game_started": True}, {"phase": "table_playing_turn", "consoles": [{"bogus": 1}] * 4,
          "pending": None, "walls_done": [], "game_started": True}],
)  # fmt: skip
async def test_a_flow_that_does_not_fit_is_refused_and_changes_nothing(
    broken: dict[str, Any],
) -> None:
    rig = Rig()
    before = rig.table.flow_snapshot()
    with pytest.raises(ValueError, match="console state"):
        rig.table.restore_flow(broken)
    assert rig.table.flow_snapshot() == before


async def test_the_game_clock_survives_a_restart() -> None:
    # kenko has a time limit: minutes played before the daemon died still count.
    rig = Rig("kenko")
    await rig.up()
    await rig.start_hand()
    rig.clock += 600.0
    await rig.key(1, K.DIGIT_0)
    before = next(x for x in reversed(rig.sent) if isinstance(x, m.CentreDisplay)).clock
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    new = Rig("kenko", state=rig.state)
    new.clock = 5000.0  # another process: its monotonic clock has nothing to do with ours
    new.table.restore_flow(snapshot)
    await new.up()
    after = next(x for x in reversed(new.sent) if isinstance(x, m.CentreDisplay)).clock
    assert before is not None and after == before


async def test_a_restored_claim_window_waits_for_the_link() -> None:
    # Restored while offline, the window must not close (and the ticker must not fail)
    # before the table is back; once it is, the window runs again.
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.RON)
    assert rig.table.phase == "table_playing_claim"
    snapshot = json.loads(json.dumps(rig.table.flow_snapshot()))
    new = Rig("ariari", state=rig.state)
    new.table.restore_flow(snapshot)
    new.clock += 60.0
    await new.table.tick()  # offline: nothing happens
    assert new.table.pending is not None and new.table.pending.kind == "claim"
    await new.up()
    assert new.table.phase == "table_playing_claim"


async def test_a_claim_window_without_a_deadline_closes_on_the_answers_alone() -> None:
    # The demo's bots answer every RON? at once: with no deadline, however far the clock
    # (a loaded machine's) runs before their answers are in, the window waits for them.
    timed, untimed = Rig(), Rig(claim_window_s=None)
    for rig in (timed, untimed):
        await rig.up()
        await rig.start_hand()
        await rig.key(1, K.RON)
        await rig.key(2, K.CANCEL)
        rig.clock += 3600.0
        await rig.table.tick()
    assert timed.lines(1)[0] == "HAN?" and timed.lines(3)[0] != "RON?"  # closed by the clock
    assert untimed.table.phase == "table_playing_claim" and untimed.lines(3)[0] == "RON?"
    # A restored window has no deadline either.
    restored = Rig(claim_window_s=None, state=untimed.state)
    restored.table.restore_flow(json.loads(json.dumps(untimed.table.flow_snapshot())))
    await restored.up()
    restored.clock += 3600.0
    await restored.table.tick()
    assert restored.table.phase == "table_playing_claim"
    for rig in (untimed, restored):
        await rig.key(3, K.RON)  # the last answer closes it: a double ron
        assert rig.lines(1)[0] == "HAN?" and rig.lines(3)[0] == "HAN?"
