"""Whole hands through the wall tracker: every dice total, kans, north pulls, kantan, refusals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tablectl.rules import wall as w
from tablectl.rules.events import (
    Call,
    Deal,
    Dice,
    Discard,
    Kan,
    North,
    Take,
    WallEvent,
    event_to_json,
    parse_event,
)
from tablectl.rules.refusal import Refusal
from tablectl.rules.wall import WallRules, WallState

FOUR = WallRules()
ARIARI = WallRules(four_kan_abort=True, haitei_discard_callable=False, kokushi_closed_kan_ron=True)
SANMA = WallRules(players=3)
SANMA_FREE = WallRules(
    players=3, four_kan_abort=True, north_pulls=True, riichi_needs_draw_left=False
)
KANTAN = WallRules(
    own_walls=True, kans_allowed=False, kan_dora="none", riichi_needs_draw_left=False
)

ALL_DICE = [(a, b) for a in range(1, 7) for b in range(1, 7)]
ONE_PAIR_PER_TOTAL = [(max(1, t - 6), t - max(1, t - 6)) for t in range(2, 13)]


# --------------------------------------------------------------------------- a model
# An independent statement of the geometry, written from the docs, not from the module.


def model_order(players: int, dealer: int, total: int) -> list[int]:
    """Positions in draw order from the break, the dead wall's 14 last."""
    per = 17 if players == 4 else 18
    wall = (dealer + total - 1) % players
    k = total
    out = []
    for _ in range(players * per):
        stack = wall * per + k
        out += [2 * stack, 2 * stack + 1]
        k += 1
        if k == per:  # clockwise: on to the right end of the previous seat's wall
            wall, k = (wall - 1) % players, 0
    if players == 3:
        # Three-player chonchon: the dealer's round-4 tile is the top of the 19th live stack,
        # its 14th the top of the 21st (40); the right player then draws the bottom of the
        # 20th (39).
        out[39], out[40] = out[40], out[39]
    return out


def model_deal(players: int, dealer: int, total: int) -> list[tuple[int, list[int]]]:
    order = model_order(players, dealer, total)
    steps = []
    i = 0
    for _ in range(3):
        for j in range(players):
            steps.append(((dealer + j) % players, order[i : i + 4]))
            i += 4
    for j in range(players):
        steps.append(((dealer + j) % players, [order[i]]))
        i += 1
    return steps


# --------------------------------------------------------------------------- helpers


def start(rules: WallRules, dealer: int = 0, dice: tuple[int, int] = (3, 4)) -> WallState:
    state = w.start_wall(rules, dealer, dice)
    assert isinstance(state, WallState), state
    return state


def step(rules: WallRules, state: WallState, event: WallEvent) -> WallState:
    new = w.wall_step(rules, state, event)
    assert isinstance(new, WallState), f"{event} refused: {new}"
    check_invariants(rules, new)
    return new


def refused(rules: WallRules, state: WallState, event: WallEvent, code: str) -> Refusal:
    before = (state, w.wall_summary(state), w.render_wall(rules, state))
    out = w.wall_step(rules, state, event)
    assert isinstance(out, Refusal), f"{event} accepted, expected {code}"
    assert out.code == code, out
    assert out.code in w.REFUSAL_CODES
    assert out.message
    # Immutable state: the refused event left it exactly as it was.
    assert (state, w.wall_summary(state), w.render_wall(rules, state)) == before
    return out


def check_invariants(rules: WallRules, state: WallState) -> None:
    live = set(state.live_positions)
    dead = set(state.dead_wall)
    taken = set(state.taken)
    assert len(taken) == len(state.taken)
    assert live.isdisjoint(dead) and live.isdisjoint(taken) and dead.isdisjoint(taken)
    assert live | dead | taken == set(range(w.total_tiles(rules)))
    assert len(live) == state.live_left
    if not rules.own_walls and (state.live_left > 0 or not state.norths or not any(state.norths)):
        assert state.dead == 14


def dealt(rules: WallRules, dealer: int = 0, dice: tuple[int, int] = (3, 4)) -> WallState:
    return step(rules, start(rules, dealer, dice), Deal())


def draw_discard(rules: WallRules, state: WallState) -> WallState:
    """The seat to move takes (if it must) and discards."""
    if state.phase in (w.TAKE, w.CLAIM, w.RINSHAN):
        state = step(rules, state, Take(state.turn))
    return step(rules, state, Discard(state.turn))


def play_out(rules: WallRules, state: WallState) -> WallState:
    while not state.finished:
        state = draw_discard(rules, state)
    return state


# --------------------------------------------------------------------------- geometry


@pytest.mark.parametrize(
    ("total", "offset"),
    [(5, 0), (9, 0), (2, 1), (6, 1), (10, 1), (3, 2), (7, 2), (11, 2), (4, 3), (8, 3), (12, 3)],
)
@pytest.mark.parametrize("dealer", range(4))
def test_break_wall_four_players(total: int, offset: int, dealer: int) -> None:
    assert w.break_wall(FOUR, dealer, total) == (dealer + offset) % 4


@pytest.mark.parametrize(
    ("total", "offset"),
    [(t, 0) for t in (4, 7, 10)]
    + [(t, 1) for t in (2, 5, 8, 11)]
    + [(t, 2) for t in (3, 6, 9, 12)],
)
def test_break_wall_three_players(total: int, offset: int) -> None:
    for dealer in range(3):
        assert w.break_wall(SANMA, dealer, total) == (dealer + offset) % 3


@pytest.mark.parametrize("dice", ALL_DICE)
@pytest.mark.parametrize("rules", [FOUR, SANMA], ids=["four", "three"])
def test_start_matches_model(dice: tuple[int, int], rules: WallRules) -> None:
    for dealer in range(rules.players):
        state = start(rules, dealer, dice)
        order = model_order(rules.players, dealer, sum(dice))
        assert list(state.order) == order
        assert state.dead_wall == tuple(order[-14:])
        # Dora indicator: top of the third stack from the break end of the dead wall.
        assert state.dora_indicators == (order[-6],)
        assert state.live_left == w.total_tiles(rules) - 14
        assert state.haitei_position == order[-15]
        per = 17 if rules.players == 4 else 18
        assert state.break_stack == state.break_seat * per + sum(dice)  # type: ignore[operator]
        check_invariants(rules, state)


def test_tile_counts() -> None:
    assert w.total_tiles(FOUR) == 136
    assert w.total_tiles(SANMA) == 108
    assert w.total_tiles(KANTAN) == 136


# --------------------------------------------------------------------------- whole hands


@pytest.mark.parametrize("dice", ONE_PAIR_PER_TOTAL, ids=lambda d: f"total{sum(d)}")
@pytest.mark.parametrize(("rules", "dealer"), [(FOUR, 0), (FOUR, 3), (SANMA, 0), (SANMA, 2)])
def test_whole_hand_by_takes(dice: tuple[int, int], rules: WallRules, dealer: int) -> None:
    state = start(rules, dealer, dice)
    players = rules.players
    for seat, block in model_deal(players, dealer, sum(dice)):
        assert state.phase == w.DEAL and state.turn == seat
        state = step(rules, state, Take(seat, pos=block[0]))
    assert state.phase == w.TAKE and state.turn == dealer
    assert state.live_left == w.total_tiles(rules) - 14 - 13 * players
    order = model_order(players, dealer, sum(dice))
    seat = dealer
    i = 13 * players
    draws = 0
    while state.live_left:
        assert state.turn == seat
        if state.live_left == 1:
            assert state.haitei_position == order[i] == order[-15]
        state = step(rules, state, Take(seat, pos=order[i]))
        state = step(rules, state, Discard(seat))
        i += 1
        draws += 1
        seat = (seat + 1) % players
    assert draws == (70 if players == 4 else 55)
    assert state.finished and w.check_draw(rules, state) is None
    assert state.dead_wall == tuple(order[-14:])
    refused(rules, state, Take(state.turn), w.WALL_EXHAUSTED)
    assert w.wall_summary(state) == {
        "live_left": 0,
        "dead": 14,
        "kans": 0,
        "dora_indicators": [order[-6]],
        "phase": "claim",
        "turn": seat,
    }


@pytest.mark.parametrize("dice", ONE_PAIR_PER_TOTAL, ids=lambda d: f"total{sum(d)}")
def test_automatic_deal_equals_deal_by_takes(dice: tuple[int, int]) -> None:
    by_takes = start(FOUR, 1, dice)
    for seat, _block in model_deal(4, 1, sum(dice)):
        by_takes = step(FOUR, by_takes, Take(seat))
    auto = dealt(FOUR, 1, dice)
    assert set(auto.taken) == set(by_takes.taken)
    assert auto.live_left == by_takes.live_left == 122 - 52
    assert auto.phase == by_takes.phase == w.TAKE and auto.turn == by_takes.turn == 1


def test_dealer_first_draw_is_the_chonchon_tile() -> None:
    state = dealt(FOUR, 0, (3, 4))
    order = model_order(4, 0, 7)
    # Round 4: the dealer took order[48]; the first draw is order[52] (the chonchon jump).
    assert state.taken_by[state.taken.index(order[48])] == 0
    state = step(FOUR, state, Take(0, pos=order[52]))
    assert state.phase == w.DISCARD and state.last_take == "live"


# --------------------------------------------------------------------------- kans


def kan_now(rules: WallRules, state: WallState, kind: str) -> WallState:
    seat = state.turn
    if kind == "open":
        frm = state.last_discard
        assert frm is not None
        return step(rules, state, Call(seat, "kan", frm))
    if kind == "added":
        return step(rules, state, Kan(seat, "added"))
    return step(rules, state, Kan(seat, "closed"))


@pytest.mark.parametrize("kans", range(5))
@pytest.mark.parametrize("dice", [(1, 1), (3, 3), (6, 6)])
def test_kans_by_one_player(kans: int, dice: tuple[int, int]) -> None:
    rules = ARIARI
    state = dealt(rules, 0, dice)
    order = list(state.order)
    rinshan = [order[-2], order[-1], order[-4], order[-3]]
    made = 0
    while state.live_left:
        state = step(rules, state, Take(state.turn))
        if state.turn == 2 and made < kans:
            state = step(rules, state, Kan(2, "closed"))
            assert state.phase == w.RINSHAN and state.dead == 14
            # Kan dora at once (ariari): top of stacks 4, 5, 6, 7 from the break end.
            assert state.dora_indicators[-1] == order[-6 - 2 * (made + 1)]
            live_before = state.live_left
            state = step(rules, state, Take(2, pos=rinshan[made]))
            assert state.last_take == "rinshan"
            assert state.live_left == live_before - 1  # the live wall fed the dead wall
            made += 1
        state = step(rules, state, Discard(state.turn))
    assert state.finished
    assert state.total_kans == kans and state.kans[2] == kans
    assert len(state.dora_indicators) == 1 + kans
    assert len(state.taken) == 52 + 70  # every live tile and each rinshan tile drawn once
    assert not state.four_kans_pending  # one player: play goes on


def test_fifth_kan_refused_one_player() -> None:
    state = step(ARIARI, dealt(ARIARI), Take(0))
    for _ in range(4):  # four kans in a row, each on the replacement tile
        state = step(ARIARI, state, Kan(0, "closed"))
        state = step(ARIARI, state, Take(0))
    assert state.phase == w.DISCARD and state.total_kans == 4
    refused(ARIARI, state, Kan(0, "closed"), w.FIFTH_KAN)
    state = step(ARIARI, state, Discard(0))
    refused(ARIARI, state, Call(2, "kan", 0), w.FIFTH_KAN)
    assert not state.four_kans_pending and check_abort_code(ARIARI, state) == w.ABORT_NOT_MET
    state = step(ARIARI, state, Take(1))  # play goes on


def check_abort_code(rules: WallRules, state: WallState) -> str | None:
    out = w.check_abort(rules, state, "four_kans")
    return None if out is None else out.code


@pytest.mark.parametrize("rules", [ARIARI, SANMA_FREE], ids=["ariari", "sanma-free"])
def test_four_kans_by_several_players_abort(rules: WallRules) -> None:
    state = dealt(rules)
    makers = [0, 1, 0, 2] if rules.players == 4 else [0, 1, 2, 0]
    for n, seat in enumerate(makers):
        while state.turn != seat or state.phase not in (w.TAKE, w.CLAIM):
            state = draw_discard(rules, state)
        state = step(rules, state, Take(seat))
        state = step(rules, state, Kan(seat, "closed"))
        assert state.four_kans_pending == (n == 3)
        assert check_abort_code(rules, state) == w.ABORT_NOT_MET
        state = step(rules, state, Take(seat))
        if n < 3:
            state = step(rules, state, Discard(seat))
    assert check_abort_code(rules, state) == w.ABORT_NOT_MET  # the discard is still to come
    state = step(rules, state, Discard(makers[3]))
    assert state.four_kans_abort_due
    assert w.check_abort(rules, state, "four_kans") is None
    # The discard may still be ronned, but play does not go on.
    assert w.check_ron(rules, state, (makers[3],), ((makers[3] + 1) % rules.players,)) is None
    refused(rules, state, Take(state.turn), w.FOUR_KANS_ABORT)
    refused(
        rules, state, Call((makers[3] + 1) % rules.players, "pon", makers[3]), w.FOUR_KANS_ABORT
    )


def test_four_kans_no_abort_rule_plays_on_and_fifth_refused() -> None:
    state = dealt(FOUR)
    for seat in (0, 1, 2, 3):
        while state.turn != seat or state.phase not in (w.TAKE, w.CLAIM):
            state = draw_discard(FOUR, state)
        state = step(FOUR, state, Take(seat))
        state = step(FOUR, state, Kan(seat, "closed"))
        state = step(FOUR, state, Take(seat))
        state = step(FOUR, state, Discard(seat))
    assert not state.four_kans_pending
    assert check_abort_code(FOUR, state) == w.ABORT_NOT_MET
    refused(FOUR, state, Call(2, "kan", 3), w.FIFTH_KAN)
    state = play_out(FOUR, state)
    assert state.finished and state.live_left == 0 and state.dead == 14
    assert len(state.taken) == 136 - 14


def test_open_and_added_kans_and_kan_dora_timing() -> None:
    state = dealt(FOUR)
    state = draw_discard(FOUR, state)  # seat 0 discards
    state = step(FOUR, state, Call(2, "pon", 0))
    assert state.phase == w.CALLED and state.turn == 2 and state.pons[2] == 1
    refused(FOUR, state, Kan(2, "closed"), w.MUST_DISCARD)
    refused(FOUR, state, Take(2), w.MUST_DISCARD)
    assert isinstance(w.check_tsumo(FOUR, state, 2), Refusal)
    state = step(FOUR, state, Discard(2))
    assert state.turn == 3  # play goes on from the caller
    state = step(FOUR, state, Call(1, "kan", 2))  # open kan: dora at once
    assert state.phase == w.RINSHAN and len(state.dora_indicators) == 2
    assert isinstance(w.check_ron(FOUR, state, (1,), (0,)), Refusal)  # no chankan on open kan
    state = step(FOUR, state, Take(1))
    state = step(FOUR, state, Discard(1))
    while state.turn != 2:
        state = draw_discard(FOUR, state)
    state = step(FOUR, state, Take(2))
    state = step(FOUR, state, Kan(2, "added"))
    # No kan dora while chankan is possible; the ron is accepted as chankan.
    assert len(state.dora_indicators) == 2 and state.kan_dora_due == "rinshan"
    assert w.check_ron(FOUR, state, (2,), (0, 3)) is None
    state = step(FOUR, state, Take(2))
    assert len(state.dora_indicators) == 3 and state.kan_dora_due is None
    assert state.pons[2] == 0
    assert w.check_tsumo(FOUR, state, 2) is None  # rinshan tsumo


def test_kan_dora_after_discard_and_none() -> None:
    rules = WallRules(kan_dora="after_discard")
    state = dealt(rules)
    state = step(rules, state, Take(0))
    state = step(rules, state, Kan(0, "closed"))
    assert len(state.dora_indicators) == 2  # closed kan: at once
    state = step(rules, state, Take(0))
    state = step(rules, state, Discard(0))
    state = step(rules, state, Call(2, "kan", 0))
    assert len(state.dora_indicators) == 2 and state.kan_dora_due == "discard"
    state = step(rules, state, Take(2))
    state = step(rules, state, Kan(2, "closed"))  # a kan after a kan turns the owed one first
    assert len(state.dora_indicators) == 4
    state = step(rules, state, Take(2))
    state = step(rules, state, Discard(2))
    assert len(state.dora_indicators) == 4
    order = state.order
    assert state.dora_indicators == (order[-6], order[-8], order[-10], order[-12])

    none = WallRules(kan_dora="none")
    state = dealt(none)
    state = step(none, state, Take(0))
    state = step(none, state, Kan(0, "closed"))
    state = step(none, state, Take(0))
    assert len(state.dora_indicators) == 1


def test_kan_dora_on_chankan_rule() -> None:
    rules = WallRules(kan_dora_on_chankan=True)
    state = dealt(rules)
    state = draw_discard(rules, state)
    state = step(rules, state, Call(2, "pon", 0))
    state = step(rules, state, Discard(2))
    while state.turn != 2:
        state = draw_discard(rules, state)
    state = step(rules, state, Take(2))
    state = step(rules, state, Kan(2, "added"))
    assert len(state.dora_indicators) == 2


def test_closed_kan_ron_only_for_kokushi_rule() -> None:
    for rules, ok in ((ARIARI, True), (FOUR, False)):
        state = step(rules, step(rules, dealt(rules), Take(0)), Kan(0, "closed"))
        assert (w.check_ron(rules, state, (0,), (1,)) is None) is ok


def test_kan_on_haitei_refused_and_haitei_call_rules() -> None:
    for rules in (FOUR, ARIARI):
        state = dealt(rules)
        while state.live_left > 1:
            state = draw_discard(rules, state)
        haitei = state.haitei_position
        state = step(rules, state, Take(state.turn, pos=haitei))
        assert state.live_left == 0 and state.phase == w.DISCARD
        seat = state.turn
        refused(rules, state, Kan(seat, "closed"), w.KAN_NOT_ALLOWED)
        assert w.check_tsumo(rules, state, seat) is None  # haitei tsumo
        state = step(rules, state, Discard(seat))
        assert state.finished
        assert w.check_ron(rules, state, (seat,), ((seat + 2) % 4,)) is None  # houtei
        refused(rules, state, Call((seat + 2) % 4, "kan", seat), w.KAN_NOT_ALLOWED)
        pon = Call((seat + 2) % 4, "pon", seat)
        if rules.haitei_discard_callable:
            state = step(rules, state, pon)
            state = step(rules, state, Discard((seat + 2) % 4))
            assert state.finished and w.check_draw(rules, state) is None
        else:
            refused(rules, state, pon, w.HAITEI_CALL)
            refused(rules, state, Call((seat + 1) % 4, "chi", seat), w.HAITEI_CALL)


# --------------------------------------------------------------------------- north pulls


def test_north_pulls_replacements_and_haitei() -> None:
    rules = SANMA_FREE
    state = dealt(rules, 1, (2, 3))
    order = state.order
    rinshan = [order[-2], order[-1], order[-4], order[-3]]
    pulls = 0
    while sum(state.norths) < 4:
        state = step(rules, state, Take(state.turn))
        seat = state.turn
        state = step(rules, state, North(seat))
        assert state.phase == w.RINSHAN and state.replacing == "north"
        assert w.check_ron(rules, state, (seat,), ((seat + 1) % 3,)) is None  # ron on a north
        state = step(rules, state, Take(seat, pos=rinshan[pulls]))
        assert state.dead == 14
        pulls += 1
        state = step(rules, state, Discard(seat))
    assert state.live_left == 55 - 4 - 4  # four norths fed the dead wall, four draws
    state = step(rules, state, Take(state.turn))
    refused(rules, state, North(state.turn), w.NORTH_NOT_ALLOWED)  # all four norths are out
    # Four kans add four more replacements: beyond the break-end stacks they are the tile
    # the live wall has just handed over (the dora stacks stay whole).
    for _ in range(4):
        seat = state.turn
        handed = state.haitei_position
        state = step(rules, state, Kan(seat, "closed"))
        state = step(rules, state, Take(seat, pos=handed))
        assert state.dead == 14
        assert set(state.dora_indicators) <= set(state.dead_wall)
    state = play_out(rules, state)
    assert state.dead == 14 and len(state.dora_indicators) == 5


def test_north_on_the_haitei() -> None:
    rules = SANMA_FREE
    state = dealt(rules)
    while state.live_left > 1:
        state = draw_discard(rules, state)
    state = step(rules, state, Take(state.turn))
    seat = state.turn
    state = step(rules, state, North(seat))
    state = step(rules, state, Take(seat))
    # Nothing live is left to feed the dead wall: the hand is at its end.
    assert state.live_left == 0 and state.dead == 13
    assert w.check_tsumo(rules, state, seat) is None
    state = step(rules, state, Discard(seat))
    assert w.check_draw(rules, state) is None


def test_pon_of_a_pulled_north() -> None:
    rules = SANMA_FREE
    state = dealt(rules)
    state = step(rules, state, Take(0))
    state = step(rules, state, North(0))
    refused(rules, state, Call(1, "kan", 0), w.KAN_NOT_ALLOWED)
    state = step(rules, state, Call(2, "pon", 0))
    assert state.phase == w.CALLED and state.turn == 2 and state.replacing is None
    assert state.dead == 14 and state.live_left == 55 - 1
    state = step(rules, state, Discard(2))
    assert state.turn == 0


def test_north_refused_where_not_played() -> None:
    for rules in (FOUR, SANMA, KANTAN):
        state = step(rules, dealt(rules), Take(0))
        refused(rules, state, North(0), w.NORTH_NOT_ALLOWED)


# --------------------------------------------------------------------------- kantan


def test_kantan_own_walls_whole_hand() -> None:
    rules = KANTAN
    state = start(rules, 2, (5, 5))
    for rnd in range(4):
        for j in range(4):
            seat = (2 + j) % 4
            pos = seat * 34 + 4 * rnd
            state = step(rules, state, Take(seat, pos=pos))
    assert state.phase == w.TAKE and state.turn == 2 and state.live_left == 72
    assert state.dead == 12 and state.dora_indicators == (2 * 34 + 32,)
    for turn in range(72):
        seat = (2 + turn) % 4
        own_index = 13 + turn // 4
        if turn % 4 == 1:
            refused(
                rules, state, Take(seat, pos=((seat + 1) % 4) * 34 + own_index), w.WRONG_POSITION
            )
        state = step(rules, state, Take(seat, pos=seat * 34 + own_index))
        state = step(rules, state, Discard(seat))
        if turn < 71:
            assert w.check_draw(rules, state) is not None
    assert state.finished and state.discards == (18, 18, 18, 18)
    assert w.check_draw(rules, state) is None
    # The 18th discards can still be ronned after the draw, by anyone, from several.
    assert w.check_ron(rules, state, (0, 3), (1,)) is None
    refused(rules, state, Take(state.turn), w.WALL_EXHAUSTED)
    assert set(state.dead_wall) == {s * 34 + i for s in range(4) for i in (31, 32, 33)}


def test_kantan_calls_and_ron_on_own_turn() -> None:
    rules = KANTAN
    state = dealt(rules, 0)
    for _ in range(4):
        state = draw_discard(rules, state)
    # Seat 0's turn: calls and rons only now, before the draw.
    assert state.turn == 0 and state.phase == w.CLAIM
    refused(rules, state, Call(2, "pon", 1), w.OUT_OF_TURN)
    assert w.check_ron(rules, state, (1, 2, 3), (0,)) is None  # from several last discards
    assert isinstance(w.check_ron(rules, state, (0,), (2,)), Refusal)
    refused(rules, state, Call(0, "chi", 2), w.CHI_NOT_NEXT)
    refused(rules, state, Call(0, "kan", 2), w.KAN_NOT_ALLOWED)
    state = step(rules, state, Call(0, "pon", 2))  # an older discard: allowed in kantan
    assert state.phase == w.TAKE and state.replacing_call
    refused(rules, state, Discard(0), w.MUST_TAKE)
    refused(rules, state, Call(0, "pon", 1), w.NO_DISCARD)
    state = step(rules, state, Take(0, pos=14))  # a wall tile stands for the called tile
    assert state.phase == w.CALLED and isinstance(w.check_tsumo(rules, state, 0), Refusal)
    state = step(rules, state, Discard(0))
    state = step(rules, state, Call(1, "chi", 0))
    state = step(rules, state, Take(1))
    state = step(rules, state, Discard(1))
    refused(rules, state, Kan(2, "closed"), w.KAN_NOT_ALLOWED)
    state = step(rules, state, Take(2))
    refused(rules, state, Kan(2, "closed"), w.KAN_NOT_ALLOWED)
    assert w.check_riichi(rules, state, 2) is None
    state = play_out(rules, state)
    assert state.discards == (18, 18, 18, 18)


def test_kantan_riichi_on_the_last_turn() -> None:
    rules = KANTAN
    state = dealt(rules)
    while state.draws[3] < 17 or state.turn != 3:
        state = draw_discard(rules, state)
    state = step(rules, state, Take(3))
    assert state.draws[3] == 18
    assert w.check_riichi(rules, state, 3) is None  # 18th-turn riichi allowed
    strict = replace(rules, riichi_needs_draw_left=True)
    out = w.check_riichi(strict, state, 3)
    assert out is not None and out.code == w.RIICHI_NO_DRAW_LEFT


# --------------------------------------------------------------------------- refusals


def test_start_refusals() -> None:
    for dice in ((0, 3), (7, 1), (3, -1)):
        out = w.start_wall(FOUR, 0, dice)
        assert isinstance(out, Refusal) and out.code == w.BAD_DICE
    out = w.start_wall(FOUR, 4, (1, 1))
    assert isinstance(out, Refusal) and out.code == w.NO_SUCH_SEAT
    out = w.start_wall(SANMA, 3, (1, 1))
    assert isinstance(out, Refusal) and out.code == w.NO_SUCH_SEAT


def test_deal_refusals() -> None:
    state = start(FOUR, 1, (2, 2))
    steps = model_deal(4, 1, 4)
    refused(FOUR, state, Take(2), w.OUT_OF_TURN)
    refused(FOUR, state, Take(1, pos=steps[0][1][1]), w.WRONG_POSITION)
    refused(FOUR, state, Take(1, pos=state.dead_wall[0]), w.DEAD_WALL_TAKE)
    refused(FOUR, state, Take(1, pos=136), w.WRONG_POSITION)
    refused(FOUR, state, Take(7), w.NO_SUCH_SEAT)
    refused(FOUR, state, Discard(1), w.NOT_DEALT)
    refused(FOUR, state, Call(2, "pon", 1), w.NOT_DEALT)
    refused(FOUR, state, Kan(1, "closed"), w.NOT_DEALT)
    refused(FOUR, state, Dice((1, 1)), w.DICE_IN_HAND)
    assert isinstance(w.check_tsumo(FOUR, state, 1), Refusal)
    assert isinstance(w.check_riichi(FOUR, state, 1), Refusal)
    assert isinstance(w.check_ron(FOUR, state, (1,), (2,)), Refusal)
    state = step(FOUR, state, Take(1))
    refused(FOUR, state, Deal(), w.DEAL_DONE)
    refused(FOUR, state, Take(1, pos=steps[0][1][0]), w.WRONG_POSITION)  # already taken
    refused(FOUR, dealt(FOUR), Deal(), w.DEAL_DONE)


def test_play_refusals() -> None:
    state = dealt(FOUR, 0, (4, 4))
    order = state.order
    # Dealer's first draw.
    refused(FOUR, state, Take(1), w.OUT_OF_TURN)
    refused(FOUR, state, Take(0, pos=order[53]), w.WRONG_POSITION)
    refused(FOUR, state, Take(0, pos=order[-1]), w.DEAD_WALL_TAKE)
    refused(FOUR, state, Discard(0), w.MUST_TAKE)
    refused(FOUR, state, Discard(2), w.OUT_OF_TURN)
    refused(FOUR, state, Kan(0, "closed"), w.MUST_TAKE)
    refused(FOUR, state, Call(1, "pon", 0), w.NO_DISCARD)
    state = step(FOUR, state, Take(0))
    assert w.check_abort(FOUR, state, "nine_terminals") is None
    refused(FOUR, state, Take(0), w.MUST_DISCARD)
    refused(FOUR, state, Take(1), w.OUT_OF_TURN)
    refused(FOUR, state, Kan(0, "added"), w.KAN_NOT_ALLOWED)  # no pon to add to
    refused(FOUR, state, Kan(1, "closed"), w.OUT_OF_TURN)
    refused(FOUR, state, Discard(9), w.NO_SUCH_SEAT)
    state = step(FOUR, state, Discard(0))
    refused(FOUR, state, Call(2, "chi", 0), w.CHI_NOT_NEXT)
    refused(FOUR, state, Call(1, "pon", 3), w.WRONG_DISCARDER)
    refused(FOUR, state, Call(0, "pon", 0), w.WRONG_DISCARDER)
    refused(FOUR, state, Call(1, "pon", 5), w.NO_SUCH_SEAT)
    refused(FOUR, state, Take(2), w.OUT_OF_TURN)
    refused(FOUR, state, Kan(1, "closed"), w.MUST_TAKE)
    refused(FOUR, state, Take(1, pos=order[-6]), w.DEAD_WALL_TAKE)  # the dora indicator
    state = step(FOUR, state, Call(1, "kan", 0))
    refused(FOUR, state, Take(2), w.OUT_OF_TURN)
    refused(FOUR, state, Take(1, pos=order[54]), w.WRONG_POSITION)
    refused(FOUR, state, Discard(1), w.MUST_TAKE)
    state = step(FOUR, state, Take(1, pos=order[-2]))
    state = step(FOUR, state, Discard(1))
    refused(FOUR, state, Take(2, pos=order[-2]), w.WRONG_POSITION)  # already taken
    refused(FOUR, state, Take(2, pos=order[-1]), w.DEAD_WALL_TAKE)


def test_no_chi_rule_and_meld_limit() -> None:
    rules = WallRules(players=3, chi_allowed=False)
    state = draw_discard(rules, dealt(rules))
    refused(rules, state, Call(1, "chi", 0), w.CHI_NOT_ALLOWED)
    state = dealt(FOUR)
    for _ in range(4):
        while state.phase != w.CLAIM or state.last_discard == 2:
            state = draw_discard(FOUR, state)
        state = step(FOUR, state, Call(2, "pon", state.last_discard))  # type: ignore[arg-type]
        state = step(FOUR, state, Discard(2))
    state = draw_discard(FOUR, state)
    refused(FOUR, state, Call(2, "pon", state.last_discard), w.NO_MELD_ROOM)  # type: ignore[arg-type]


def test_riichi_checks() -> None:
    state = dealt(ARIARI)
    assert w.check_riichi(ARIARI, state, 0) is not None  # before the draw
    state = step(ARIARI, state, Take(0))
    assert w.check_riichi(ARIARI, state, 0) is None
    assert w.check_riichi(ARIARI, state, 1) is not None
    state = step(ARIARI, state, Discard(0))
    assert w.check_riichi(ARIARI, state, 0) is None  # declared with the discard just made
    while state.live_left > 4:
        state = draw_discard(ARIARI, state)
    state = step(ARIARI, state, Take(state.turn))
    assert state.live_left == 3
    out = w.check_riichi(ARIARI, state, state.turn)
    assert out is not None and out.code == w.RIICHI_NO_DRAW_LEFT
    kenko = WallRules(riichi_needs_draw_left=False)
    assert w.check_riichi(kenko, state, state.turn) is None


def test_score_checks_against_the_wall() -> None:
    state = dealt(FOUR)
    out = w.check_draw(FOUR, state)
    assert out is not None and out.code == w.WALL_NOT_EXHAUSTED
    state = step(FOUR, state, Take(0))
    assert w.check_tsumo(FOUR, state, 0) is None
    assert w.check_tsumo(FOUR, state, 1) is not None
    state = step(FOUR, state, Discard(0))
    assert w.check_tsumo(FOUR, state, 0) is not None
    assert w.check_ron(FOUR, state, (0,), (1, 2)) is None  # double ron
    out = w.check_ron(FOUR, state, (3,), (1,))
    assert out is not None and out.code == w.NOT_LAST_DISCARD
    assert w.check_ron(FOUR, state, (0,), (0,)) is not None
    assert w.check_ron(FOUR, state, (0,), (5,)) is not None


def test_abort_checks() -> None:
    state = dealt(ARIARI)
    for _ in range(4):
        assert w.check_abort(ARIARI, state, "four_winds") is not None
        state = draw_discard(ARIARI, state)
    assert w.check_abort(ARIARI, state, "four_winds") is None
    assert w.check_abort(ARIARI, state, "four_riichi") is None  # not the wall's business
    state = step(ARIARI, state, Take(0))
    assert w.check_abort(ARIARI, state, "nine_terminals") is not None  # second draw
    out = w.check_abort(FOUR, state, "four_kans")
    assert out is not None and out.code == w.ABORT_NOT_MET


def test_haitei_take_then_exhausted() -> None:
    state = dealt(FOUR)
    while state.live_left > 1:
        state = draw_discard(FOUR, state)
    out = w.check_draw(FOUR, state)
    assert out is not None and "1 live" in out.message
    state = step(FOUR, state, Take(state.turn))
    out = w.check_draw(FOUR, state)
    assert out is not None and out.code == w.WALL_NOT_EXHAUSTED
    state = step(FOUR, state, Discard(state.turn))
    refused(FOUR, state, Take(state.turn), w.WALL_EXHAUSTED)
    refused(FOUR, state, Take(state.turn, pos=state.dead_wall[0]), w.DEAD_WALL_TAKE)


# --------------------------------------------------------------------------- replay form


def test_replay_events_drive_the_tracker() -> None:
    lines = [
        {"type": "dice", "dice": [2, 5]},
        {"type": "deal"},
        {"type": "take", "seat": 0},
        {"type": "kan", "seat": 0, "kind": "closed"},
        {"type": "take", "seat": 0},
        {"type": "discard", "seat": 0},
        {"type": "call", "seat": 2, "kind": "pon", "from": 0},
        {"type": "discard", "seat": 2},
        {"type": "take", "seat": 3},
    ]
    events = [parse_event(line) for line in lines]
    assert [event_to_json(e) for e in events] == lines
    dice = events[0]
    assert isinstance(dice, Dice)
    state = start(FOUR, 0, dice.dice)
    for event in events[1:]:
        assert isinstance(event, Deal | Take | Discard | Call | Kan | North)
        state = step(FOUR, state, event)
    assert w.wall_summary(state) == {
        "live_left": 70 - 1 - 1 - 1,
        "dead": 14,
        "kans": 1,
        "dora_indicators": [state.order[-6], state.order[-8]],
        "phase": "discard",
        "turn": 3,
    }


def test_render_wall_marks() -> None:
    state = dealt(FOUR, 0, (3, 4))
    state = step(FOUR, state, Take(0))
    state = step(FOUR, state, Kan(0, "closed"))
    text = w.render_wall(FOUR, state)
    assert "break in seat 2's wall after stack 6" in text
    assert "|" in text and "R" in text and "H" in text and "legend" in text
    assert text.count("D") >= 2
    rows = [line for line in text.splitlines() if "top" in line or "bottom" in line]
    assert len(rows) == 8
    kantan = w.render_wall(KANTAN, step(KANTAN, dealt(KANTAN, 2), Take(2)))
    assert "own wall" in kantan
    sanma = w.render_wall(SANMA, dealt(SANMA))
    assert len([line for line in sanma.splitlines() if "top" in line]) == 3


def test_wall_rules_validation() -> None:
    with pytest.raises(ValueError):
        WallRules(players=5)
    with pytest.raises(ValueError):
        WallRules(own_walls=True, own_wall_discards=40)


def test_three_player_chonchon_positions() -> None:
    # Dealer 0, dice 5: right player's wall (seat 1), first live stack 18 + 5 = 23; live
    # stacks 23..35, then seat 0's wall from stack 0: the 19th live stack is stack 5.
    state = start(SANMA, 0, (2, 3))
    for seat, block in model_deal(3, 0, 5)[:9]:
        state = step(SANMA, state, Take(seat, pos=block[0]))
    state = step(SANMA, state, Take(0, pos=10))  # top of the 19th stack
    state = step(SANMA, state, Take(1, pos=11))  # its bottom
    state = step(SANMA, state, Take(2, pos=12))  # top of the 20th
    refused(SANMA, state, Take(0, pos=13), w.WRONG_POSITION)
    state = step(SANMA, state, Take(0, pos=14))  # the chonchon: top of the 21st
    state = step(SANMA, state, Discard(0))
    state = step(SANMA, state, Take(1, pos=13))  # the right player: bottom of the 20th
    state = step(SANMA, state, Discard(1))
    state = step(SANMA, state, Take(2, pos=15))
    state = step(SANMA, state, Discard(2))
    state = step(SANMA, state, Take(0, pos=16))
