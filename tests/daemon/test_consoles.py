"""Seat consoles that no key sequence can break: the declared flows, staff PINs, trays,
LAST GAME, game control, and a seeded storm of keys from every seat in every phase."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from firmware_bridge import messages as m
from tablectl.console.diagram import BEGIN, END, docs_block
from tablectl.console.prompts import PROMPTS, TABLE_PHASES, idle_spec
from tablectl.console.staff import (
    LOCKOUT_S,
    PinFormatError,
    PinHash,
    StaffGate,
    hash_pin,
)
from tablectl.phases import PUBLIC_PHASES, PhaseModel, build_machine
from tablectl.rules.loader import load_rules, preset_names
from tests.daemon.test_table import PIN, Rig, _restarted
from tests.helpers import RecordingPublisher
from tests.storm import KeyStorm

K = m.Key
DOCS = Path(__file__).resolve().parents[2] / "docs" / "console.md"


# ---------------------------------------------------------------------- by construction


def _triggers_from(phase: str) -> set[str]:
    machine = build_machine(PhaseModel())
    return {t for t in machine.get_triggers(phase) if not t.startswith("to_")}


def _destination(phase: str, trigger: str) -> str:
    from tablectl.phases import TRANSITIONS

    for name, source, dest in TRANSITIONS:
        sources = [source] if isinstance(source, str) else source
        if name == trigger and any(phase == s or phase.startswith(s + "_") for s in sources):
            return dest
    raise AssertionError(f"{trigger} from {phase}")


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_every_trigger_a_prompt_may_fire_is_a_transition_where_the_prompt_stands(
    name: str,
) -> None:
    # A handler fires its declared triggers one after another (next_hand, then shuffle):
    # each must be a transition from one of the prompt's phases or from where an earlier
    # one of them led. Which of them fires in which phase is the handler's choice; the
    # table's _trigger refuses (FlowError) anything the machine lacks before asking it,
    # and the storm below shows that never happens.
    spec = PROMPTS[name]
    assert spec.phases <= TABLE_PHASES
    reachable = set(spec.phases)
    frontier = list(spec.phases)
    while frontier:
        here = frontier.pop()
        for trigger in spec.fires & _triggers_from(here):
            dest = _destination(here, trigger)
            dest = {"table_playing": "table_playing_turn", "table": "table_idle"}.get(dest, dest)
            if dest not in reachable:
                reachable.add(dest)
                frontier.append(dest)
    fired_somewhere: set[str] = set()
    for here in reachable:
        fired_somewhere |= spec.fires & _triggers_from(here)
    assert fired_somewhere == spec.fires, spec.fires - fired_somewhere


async def test_the_table_never_asks_the_machine_for_a_transition_it_lacks() -> None:
    from tablectl.table import FlowError

    rig = Rig()
    await rig.up()
    assert rig.table.phase == "table_shuffling"
    with pytest.raises(FlowError, match="no transition 'next_hand' from table_shuffling"):
        await rig.table.core.trigger("next_hand")
    assert rig.table.phase == "table_shuffling"


@pytest.mark.parametrize("phase", sorted(TABLE_PHASES))
def test_what_a_seat_without_a_prompt_may_fire_exists_in_each_phase(phase: str) -> None:
    spec = idle_spec(phase)
    direct = _triggers_from(phase)
    after = {t for d in direct for t in _triggers_from(_destination(phase, d))}
    assert spec.fires <= direct | after


def test_the_flow_diagrams_in_the_docs_are_drawn_from_the_code() -> None:
    text = DOCS.read_text()
    match = re.search(re.escape(BEGIN) + ".*?" + re.escape(END), text, re.S)
    assert match, "docs/console.md lacks the generated console-flows block"
    assert match.group(0) == docs_block(), "run: tablectl diagram --consoles (see docs)"


# ---------------------------------------------------------------------- the reported crash


async def test_staff_keys_while_the_walls_shuffle_cannot_stop_the_daemon() -> None:
    # The report: STAFF CALL, 1, 2, OK while shuffling gave a chombo, then OK on every
    # seat fired next_hand from table_shuffling and the daemon exited.
    rig = Rig("jboy")
    await rig.up()
    assert rig.table.phase == "table_shuffling"
    await rig.key(0, K.STAFF_CALL, K.DIGIT_1)
    assert rig.lines(0) == ("E 25000", "! no hand now")
    await rig.key(0, K.DIGIT_2, K.OK)
    await rig.confirm_all()
    assert rig.table.phase == "table_shuffling"
    assert rig.state.scores == (25000,) * 4
    assert rig.state.hands_played == 0


async def test_a_key_a_prompt_does_not_take_is_refused_with_the_keys_it_takes() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO)
    before = rig.table.flow_snapshot()
    rig.sent.clear()
    await rig.key(0, K.PON)
    assert rig.lines(0) == ("HAN?", "! 0-9 MENU OK CANCEL")
    assert m.BuzzerCommand(pattern=m.BuzzerPattern.BEEP, duration_ms=100) in rig.sent
    after = rig.table.flow_snapshot()
    assert after["pending"] == before["pending"]
    assert after["consoles"][0]["prompt"] == "HAN?"


async def test_a_win_entry_opens_clean_after_an_earlier_refusal() -> None:
    # A key refused while no prompt stands (here FU, say resent by the table after a
    # daemon restart) must not show under the HAN? of a win declared afterwards: the
    # player (and the simulator's bots) would read it as the entry being refused.
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.OK)
    assert rig.lines(0)[1].startswith("! ")
    await rig.key(0, K.TSUMO)
    assert rig.lines(0) == ("HAN?", "")


async def test_confirm_takes_only_ok_and_cancel_and_never_fires_a_missing_transition() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.MENU, K.DIGIT_1, K.OK)  # nine terminals: the hand is settled
    assert rig.table.phase == "table_settlement"
    for key in K:
        if key not in (K.OK, K.CANCEL, K.STAFF_CALL):
            await rig.key(1, key)
            assert rig.lines(1)[0] == "CONFIRM"
    await rig.confirm_all()
    assert rig.table.phase == "table_shuffling"


# ---------------------------------------------------------------------- staff


async def _staff(rig: Rig, seat: int, action: int, pin: str = PIN) -> None:
    await rig.key(seat, K.STAFF_CALL, K(action))
    await rig.type(seat, pin)
    await rig.key(seat, K.OK)


async def test_a_chombo_needs_the_staff_pin() -> None:
    notes: list[tuple[str, int | None, dict[str, object]]] = []
    rig = Rig("jboy")
    rig.table.core.note = lambda kind, seat, detail=None: notes.append((kind, seat, detail or {}))  # type: ignore[method-assign]
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.STAFF_CALL, K.DIGIT_1)
    assert rig.lines(1)[0] == "PIN?"
    await rig.type(1, "1357")
    assert rig.lines(1)[0] == "PIN? ****"  # never shown
    await rig.key(1, K.OK)
    assert rig.lines(1)[1] == "! wrong PIN"
    assert rig.state.scores == (25000,) * 4
    assert notes[-1][:2] == ("staff_pin_failed", 1)
    await _staff(rig, 1, 1)
    await rig.key(1, K.DIGIT_2, K.OK)
    assert rig.state.scores == (28000, 28000, 16000, 28000)
    assert notes[-1] == ("staff_action", 1, {"action": "chombo", "target": 2})


async def test_three_wrong_pins_lock_staff_actions_on_every_seat_for_a_minute() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.start_hand()
    for seat in (0, 1, 2):
        await _staff(rig, seat, 2, pin="9999")
    assert rig.lines(2)[1] == f"! PIN: locked {int(LOCKOUT_S)} s"
    await rig.key(3, K.STAFF_CALL, K.DIGIT_1)  # the right PIN would not help now
    assert rig.lines(3)[1].startswith("! staff locked")
    rig.clock += LOCKOUT_S - 1
    await rig.key(3, K.STAFF_CALL, K.DIGIT_1)
    assert rig.lines(3)[1] == "! staff locked 2 s"
    await rig.key(3, K.STAFF_CALL, K.DIGIT_0)  # calling staff stays open to everyone
    assert rig.lines(3)[1] == "STAFF CALLED"
    rig.clock += 1
    await _staff(rig, 3, 1)
    await rig.key(3, K.DIGIT_2, K.OK)
    assert rig.state.scores == (28000, 28000, 16000, 28000)


async def test_without_a_staff_pin_staff_actions_are_refused_on_the_consoles() -> None:
    rig = Rig("jboy", staff=StaffGate(None, lambda: 0.0))
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.STAFF_CALL, K.DIGIT_1)
    assert rig.lines(0)[1] == "! no staff PIN set"


def test_pin_hashes_round_trip_and_bad_ones_say_what_is_wrong() -> None:
    text = hash_pin("4711")
    assert text.startswith("pbkdf2_sha256$")
    parsed = PinHash.parse(text)
    assert parsed.matches("4711") and not parsed.matches("4712")
    assert hash_pin("4711") != text  # salted
    for bad in ("", "pbkdf2_sha256$1$00$00", "md5$1000$00112233445566778899$00", "x$y$z$w"):
        with pytest.raises(PinFormatError):
            PinHash.parse(bad)
    for pin in ("12", "123456789", "12a4", "١٢٣٤"):
        with pytest.raises(PinFormatError):
            hash_pin(pin)


# ---------------------------------------------------------------------- trays


async def test_a_tray_mismatch_shows_through_confirm_and_holds_the_next_dice() -> None:
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.MENU, K.DIGIT_1, K.OK)  # nine terminals: no points move
    await rig.send(m.TrayTotals(totals=(25000, 24000, 25000, 25000)))
    assert rig.lines(1) == ("CONFIRM !TRAY 24000", "0 = 25000")
    await rig.confirm_all()
    for wall in range(4):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    dealer = rig.state.dealer
    await rig.key(dealer, K.OK)
    assert rig.table.phase == "table_walls_up"
    assert rig.lines(dealer)[1] == "! fix trays/STAFF 5"
    # Staff let the hand start anyway.
    await _staff(rig, 2, 5)
    await rig.key(dealer, K.OK)
    assert rig.table.phase == "table_dice"


async def test_matching_trays_release_the_hold() -> None:
    rig = Rig("jboy")
    await rig.up()
    await rig.send(m.TrayTotals(totals=(25000, 24000, 25000, 25000)))
    for wall in range(4):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    await rig.key(0, K.OK)
    assert rig.table.phase == "table_walls_up"
    await rig.send(m.TrayTotals(totals=(25000,) * 4))
    await rig.key(0, K.OK)
    assert rig.table.phase == "table_dice"


async def _bust_in_hand_one(rig: Rig) -> None:
    """The trays report the start points, then the dealer's triple yakuman busts the
    others in hand 1: the game ends at GAME OVER before any stick moves."""
    await rig.up()
    await rig.send(m.TrayTotals(totals=(25000,) * 4))
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # PAO?, CHIPS?
    assert rig.state.finished
    assert rig.table.tray_mismatch == {1: 25000, 2: 25000, 3: 25000, 0: 25000}


async def _dealer_rolls(rig: Rig) -> None:
    for wall in range(4):
        await rig.send(m.WallStatus(wall=wall, state=m.WallState.DONE))
    dealer = rig.state.dealer
    assert rig.lines(dealer)[0] == "ROLL?"
    await rig.key(dealer, K.OK)
    assert rig.lines(dealer)[1] != "! fix trays/STAFF 5"
    assert rig.table.phase == "table_dice"


async def test_a_new_game_compares_the_unmoved_trays_afresh() -> None:
    # Issue #32: the old game's mismatch (trays 25000, scores 121000/-7000) was kept into
    # the new game, whose scores of 25000 the unmoved trays match, and no tray report
    # came to compare them again: the dealer's OK was refused for ever.
    journal = Journalled()
    publisher = RecordingPublisher()
    rig = Rig("jboy", recorder=journal, publisher=publisher)
    await _bust_in_hand_one(rig)
    await rig.confirm_all()  # GAME OVER on every seat: a new game at 25000
    assert rig.state.scores == (25000,) * 4 and not rig.state.finished
    assert rig.table.tray_mismatch == {}
    assert journal.events[-1] == "start" and journal.notes[-1][0] == "trays_match"
    assert publisher.states[-1]["alerts"] == []
    await _dealer_rolls(rig)


async def test_a_new_game_after_a_restart_at_game_over_compares_the_trays_afresh() -> None:
    rig = Rig("jboy")
    await _bust_in_hand_one(rig)
    rig = await _restarted(rig)
    assert rig.table.tray_mismatch  # the hand's own mismatch survives the restart
    await rig.confirm_all()
    assert rig.table.tray_mismatch == {}
    await _dealer_rolls(rig)


async def test_a_stale_mismatch_in_a_stored_flow_is_compared_again_on_restart() -> None:
    # A flow stored by a daemon that kept the stale mismatch into the new game: the
    # restarted daemon starts the hand again, so the trays are compared again.
    rig = Rig("jboy")
    await _bust_in_hand_one(rig)
    await rig.confirm_all()
    flow = json.loads(json.dumps(rig.table.flow_snapshot()))
    flow["tray_mismatch"] = {str(s): 25000 for s in range(4)}
    restarted = Rig("jboy", state=rig.state)
    restarted.table.restore_flow(flow)
    await restarted.up()
    assert restarted.table.tray_mismatch == {}
    await _dealer_rolls(restarted)


async def test_the_same_trays_off_against_new_scores_are_a_new_mismatch() -> None:
    # Seats 0 and 1 are off before the hand and after it, by the same trays: the alert
    # must name the scores as they now stand, not those of the comparison before.
    journal = Journalled()
    publisher = RecordingPublisher()
    rig = Rig("jboy", recorder=journal, publisher=publisher, hold_on_tray_mismatch=False)
    await rig.up()
    await rig.send(m.TrayTotals(totals=(24000, 26000, 25000, 25000)))
    assert publisher.states[-1]["alerts"][-1]["text"] == "TRAY 0:24000/25000 1:26000/25000"
    await rig.start_hand()
    await rig.key(1, K.RON)
    await rig.key(2, K.CANCEL)
    await rig.key(3, K.CANCEL)
    await rig.key(1, K.MENU, K.OK, K.OK, K.OK)  # a yakuman off the dealer (PAO?, CHIPS?)
    assert rig.state.finished and rig.state.scores == (-7000, 57000, 25000, 25000)
    assert rig.table.tray_mismatch == {0: 24000, 1: 26000}
    assert publisher.states[-1]["alerts"][-1]["text"] == "TRAY 0:24000/-7000 1:26000/57000"
    assert journal.notes[-1] == (
        "tray_mismatch",
        None,
        {"trays": [24000, 26000, 25000, 25000], "scores": [-7000, 57000, 25000, 25000]},
    )
    await rig.confirm_all()  # the new game: 25000 each, the trays as they were
    assert publisher.states[-1]["alerts"][-1]["text"] == "TRAY 0:24000/25000 1:26000/25000"


# ---------------------------------------------------------------------- LAST GAME, new games


async def test_last_game_is_noted_and_cleared_when_a_new_game_starts() -> None:
    notes: list[tuple[str, int | None, dict[str, object]]] = []
    rig = Rig("jboy")
    rig.table.core.note = lambda kind, seat, detail=None: notes.append((kind, seat, detail or {}))  # type: ignore[method-assign]
    await rig.up()
    await rig.key(2, K.LAST_GAME)
    assert rig.lines(2)[0] == "W 25000 LAST"
    assert notes == [("last_game", 2, {"on": True})]
    await _staff(rig, 0, 4)
    assert rig.lines(0)[0] == "RULES? 0"
    await rig.key(0, K.OK)
    assert rig.lines(2)[0] == "W 25000"
    assert not rig.table.consoles[2].last_game


async def test_staff_start_a_new_game_with_other_rules_from_a_console() -> None:
    rig = Rig("jboy", rules_menu=("jboy", "kenko"), load_rules=load_rules)
    await rig.up()
    await rig.start_hand()
    await rig.key(1, K.MENU, K.DIGIT_1)  # half an abort menu: swept by the new game
    await _staff(rig, 0, 4)
    await rig.key(0, K.MENU)
    assert rig.lines(0) == ("RULES? 1", "kenko")
    await rig.key(0, K.OK)
    assert rig.table.rules.name == "kenko" and rig.table.rules_ref == "kenko"
    assert rig.table.phase == "table_shuffling"
    assert [c.prompt for c in rig.table.consoles] == [""] * 4
    assert rig.state.hands_played == 0


async def test_new_game_refuses_rules_for_another_number_of_players() -> None:
    rig = Rig("jboy", load_rules=load_rules)
    await rig.up()
    failure = await rig.table.new_game("jboy-sanma")
    assert failure == "jboy-sanma is for 3 players; this table has 4"
    assert rig.table.rules.name == "jboy"


# ---------------------------------------------------------------------- the storm


@pytest.mark.parametrize("preset", preset_names())
async def test_a_storm_of_keys_from_every_seat_in_every_phase_breaks_nothing(preset: str) -> None:
    # Keys, takes, dice, faults, trays, staff PINs, link drops and daemon restarts, with the
    # invariants checked after every step (tests/storm.py); bench/key_storm.py
    # runs the long version.
    for seed in range(2):
        stats = await KeyStorm(preset, seed).run(2500)
        assert stats.restarts and stats.link_drops and stats.staff_actions
        assert stats.replay_checks >= 10
        played = set(stats.phases)
        assert {"table_playing_turn", "table_result_entry", "table_settlement"} <= played


# ---------------------------------------------------------------------- corrections


class Journalled:
    """A recorder that keeps the accepted events (what the journal would hold)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.notes: list[tuple[str, int | None, dict[str, object]]] = []

    def game_started(self, rules: object, rules_ref: str) -> None:
        self.events.append("start")

    def event_accepted(self, event: object, state: object) -> None:
        from tablectl.rules.events import event_to_json

        self.events.append(event_to_json(event)["type"])  # type: ignore[arg-type]

    def note(self, kind: str, seat: int | None, detail: dict[str, object]) -> None:
        self.notes.append((kind, seat, detail))

    def game_abandoned(self) -> None:
        self.events.append("abandoned")


async def _tsumo(rig: Rig, seat: int, han: str, fu: str = "30") -> None:
    await rig.key(seat, K.TSUMO)
    await rig.type(seat, han)
    await rig.key(seat, K.OK)
    if rig.lines(seat)[0].startswith("FU?"):
        await rig.type(seat, fu)
        await rig.key(seat, K.OK)


async def test_cancel_at_confirm_sends_the_hand_back_to_the_winners_entry() -> None:
    journal = Journalled()
    rig = Rig("ariari", recorder=journal)
    await rig.up()
    await rig.start_hand()
    await _tsumo(rig, 0, "1")  # the dealer meant 3 han
    assert rig.table.phase == "table_settlement"
    assert rig.state.scores == (26500, 24500, 24500, 24500)
    await rig.key(1, K.OK)
    await rig.key(2, K.CANCEL)  # a loser sees it is wrong
    assert rig.table.phase == "table_result_entry"
    assert rig.state.scores == (25000,) * 4 and rig.state.hands_played == 0
    assert rig.lines(0) == ("HAN?", "AGAIN")
    assert [rig.lines(s)[0] for s in (1, 2, 3)] == ["S 25000", "W 25000", "N 25000"]
    await rig.type(0, "3")
    await rig.key(0, K.OK)
    await rig.type(0, "30")
    await rig.key(0, K.OK)
    assert rig.state.scores == (31000, 23000, 23000, 23000)
    assert journal.events[-3:] == ["tsumo", "undo", "tsumo"]
    assert journal.notes[-1][:2] == ("correction", 2)
    await rig.confirm_all()
    assert rig.table.phase == "table_shuffling"


async def test_staff_correct_a_confirmed_hand_before_the_next_dice() -> None:
    journal = Journalled()
    rig = Rig("ariari", recorder=journal)
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.MENU, K.DIGIT_1, K.OK)  # nine terminals, pressed by mistake
    await rig.confirm_all()
    assert rig.table.phase == "table_shuffling" and rig.state.honba == 1
    await _staff(rig, 3, 3)
    # Back in the hand where it stood: the dealer's turn, nothing settled.
    assert rig.table.phase == "table_playing_turn"
    assert rig.state.honba == 0 and rig.state.hands_played == 0
    assert journal.events[-2:] == ["abort", "undo"]
    assert journal.notes[-1][:2] == ("correction", 3)
    await _tsumo(rig, 0, "2")
    assert rig.state.scores == (28000, 24000, 24000, 24000)
    await rig.confirm_all()
    assert rig.table.phase == "table_shuffling"


async def test_a_correction_once_the_next_dice_are_rolled_is_refused() -> None:
    rig = Rig("ariari")
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.MENU, K.DIGIT_1, K.OK)
    await rig.confirm_all()
    await rig.start_hand()
    await rig.key(1, K.STAFF_CALL, K.DIGIT_3)
    assert rig.lines(1)[1] == "! next hand begun"
    assert await rig.table.correct_last_hand() == "next hand begun"


async def test_nothing_to_correct_and_a_chombo_is_staff_s_to_take_back() -> None:
    rig = Rig("jboy")
    await rig.up()
    assert await rig.table.correct_last_hand() == "nothing to correct"
    await rig.start_hand()
    await _staff(rig, 0, 1)
    await rig.key(0, K.DIGIT_2, K.OK)
    await rig.key(2, K.CANCEL)
    assert rig.lines(2) == ("CONFIRM", "! staff: STAFF 3")
    assert rig.state.scores == (28000, 28000, 16000, 28000)
    assert await rig.table.correct_last_hand(by="ctl") is None
    assert rig.state.scores == (25000,) * 4
    assert rig.table.phase == "table_playing_turn"


async def test_the_hand_that_ended_the_game_can_be_entered_again() -> None:
    journal = Journalled()
    rig = Rig("jboy", recorder=journal)
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # triple yakuman, no pao
    assert rig.state.finished
    assert rig.lines(1)[0] == "GAME OVER"
    await rig.key(3, K.CANCEL)
    assert not rig.state.finished and rig.table.phase == "table_result_entry"
    assert rig.lines(0) == ("HAN?", "AGAIN")
    await rig.key(0, K.DIGIT_2, K.OK, K.DIGIT_3, K.DIGIT_0, K.OK, K.OK)  # no chips
    assert not rig.state.finished and rig.state.scores == (28000, 24000, 24000, 24000)
    assert journal.events[-3:] == ["tsumo", "undo", "tsumo"]


async def test_staff_actions_and_wrong_pins_are_published_and_journalled() -> None:
    publisher = RecordingPublisher()
    journal = Journalled()
    rig = Rig("jboy", recorder=journal, publisher=publisher)
    await rig.up()
    await rig.start_hand()
    await _staff(rig, 2, 2, pin="0000")
    await _staff(rig, 2, 2)
    await rig.key(2, K.DIGIT_1, K.OK)
    kinds = [(e["type"], e["seat"]) for e in publisher.events if e["type"] != "false_call"]
    assert kinds == [("staff_pin_failed", 2), ("staff_action", 2)]
    assert [(k, s) for k, s, _ in journal.notes] == kinds
    assert journal.notes[-1][2] == {"action": "false_call", "target": 1}


async def test_the_parlor_sees_public_phases_scores_with_events_and_game_ids() -> None:
    publisher = RecordingPublisher()
    journal = Journalled()
    journal.game_id = "g-1"  # type: ignore[attr-defined]
    rig = Rig("jboy", recorder=journal, publisher=publisher)
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.MENU, K.MENU, K.MENU, K.OK, K.OK, K.OK)  # triple yakuman: bust
    phases = [s["phase"] for s in publisher.states]
    assert set(phases) <= set(PUBLIC_PHASES.values())
    assert {"shuffling", "dice", "dealing", "play", "result_entry"} <= set(phases)
    assert publisher.states[-1]["finished"] is True and phases[-1] == "settlement"
    tsumo = [e for e in publisher.events if e["type"] == "tsumo"][-1]
    assert tsumo["scores"] == list(rig.state.scores)
    assert publisher.games == [
        {
            "table": rig.table.table_id,
            "game_id": "g-1",
            "rules": "jboy",
            "hands": 1,
            "final": rig.state.final.as_dict(),  # type: ignore[union-attr]
        }
    ]
    before = len(publisher.states)
    await rig.confirm_all()  # everyone OKs GAME OVER: the game is over, the next begins
    after = [s["phase"] for s in publisher.states[before:]]
    assert after[:2] == ["game_over", "idle"] and after[-1] == "shuffling"
    assert rig.table.status()["phase"] == "table_shuffling"  # staff keep the machine's name


async def test_the_staff_menu_stands_over_a_prompt_which_comes_back_when_it_closes() -> None:
    rig = Rig()
    await rig.up()
    await rig.start_hand()
    await rig.key(0, K.TSUMO, K.DIGIT_3)
    await rig.key(0, K.STAFF_CALL)
    assert rig.table.consoles[0].prompt == "STAFF?"
    await rig.key(0, K.CANCEL)
    assert (rig.table.consoles[0].prompt, rig.table.consoles[0].typed) == ("HAN?", "3")
    await rig.key(0, K.STAFF_CALL, K.DIGIT_1)  # a chombo, with a wrong PIN
    await rig.type(0, "1111")
    await rig.key(0, K.OK)
    assert rig.lines(0)[1] == "! wrong PIN"
    assert (rig.table.consoles[0].prompt, rig.table.consoles[0].typed) == ("HAN?", "3")
    await rig.key(0, K.STAFF_CALL)
    restored = Rig()
    restored.table.restore_flow(rig.table.flow_snapshot())
    assert restored.table.consoles[0].under == ("HAN?", "3", None)
    await rig.key(0, K.DIGIT_0)
    assert rig.lines(0) == ("HAN? 3", "STAFF CALLED")
    await rig.key(0, K.OK)
    assert rig.table.consoles[0].prompt == "FU?"
