"""Property tests: any dice, any legal sequence of takes, calls, kans and north pulls.

* live + dead + taken is every tile, each exactly once;
* the dead wall holds 14 until the hand ends (only a north pulled on the haitei, after the
  last live tile, leaves it at 13);
* every live take is the next live tile, and the last one is the haitei;
* kan dora turned (or owed) = one per kan.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.rules import wall as w
from tablectl.rules.events import Call, Deal, Discard, Kan, North, Take, WallEvent
from tablectl.rules.wall import WallRules, WallState

RULESETS = {
    "four": WallRules(),
    "ariari": WallRules(
        four_kan_abort=True, haitei_discard_callable=False, kokushi_closed_kan_ron=True
    ),
    "after-discard": WallRules(kan_dora="after_discard", kan_dora_on_chankan=True),
    "jboy-sanma": WallRules(players=3, chi_allowed=False),
    "sanma-free": WallRules(
        players=3, four_kan_abort=True, north_pulls=True, riichi_needs_draw_left=False
    ),
    "kantan": WallRules(
        own_walls=True, kans_allowed=False, kan_dora="none", riichi_needs_draw_left=False
    ),
}


def plain_event(state: WallState) -> WallEvent:
    """The ordinary next move: take if a take is due, otherwise discard."""
    if state.phase in (w.DISCARD, w.CALLED):
        return Discard(state.turn)
    return Take(state.turn)


def extra_events(rules: WallRules, state: WallState) -> list[WallEvent]:
    """Every other move worth trying now (some will be refused)."""
    out: list[WallEvent] = []
    if state.phase == w.DEAL and state.deal_step == 0:
        out.append(Deal())
    if state.phase == w.DISCARD:
        out += [Kan(state.turn, "closed"), Kan(state.turn, "added"), North(state.turn)]
    sources = [s for s in (state.last_discard,) if s is not None]
    if state.phase == w.RINSHAN and state.replacing == "north":
        sources.append(state.turn)
    if rules.own_walls and state.phase == w.CLAIM:
        sources = [s for s in range(rules.players) if state.discards[s]]
    for frm in sources:
        for seat in range(rules.players):
            out += [Call(seat, "chi", frm), Call(seat, "pon", frm), Call(seat, "kan", frm)]
    return out


def check(rules: WallRules, state: WallState, unrefilled: int) -> None:
    n = w.total_tiles(rules)
    live, dead, taken = state.live_positions, state.dead_wall, state.taken
    assert len(live) == state.live_left
    assert len(live) + len(dead) + len(taken) == n
    assert set(live) | set(dead) | set(taken) == set(range(n))
    if rules.own_walls:
        assert state.dead == 4 * 3
        assert all(d <= rules.own_wall_discards for d in state.discards)
    else:
        assert state.dead == 14 - unrefilled
        assert set(state.dora_indicators) <= set(dead)
        if state.live_left:
            assert state.haitei_position == live[-1]
        if rules.kan_dora != "none":
            owed = 1 if state.kan_dora_due else 0
            assert len(state.dora_indicators) + owed == 1 + state.total_kans
    assert state.total_kans <= 4


def run_hand(rules: WallRules, dealer: int, dice: tuple[int, int], data: st.DataObject) -> None:
    state = w.start_wall(rules, dealer, dice)
    assert isinstance(state, WallState)
    unrefilled = 0  # replacement tiles taken with no live tile left to refill the dead wall
    live_takes = 0
    # How often this hand tries something other than take/discard: from never (no kans, no
    # calls) to often (four kans early, many calls).
    extra_rate = data.draw(st.integers(0, 30))
    for _ in range(2000):
        check(rules, state, unrefilled)
        if state.four_kans_abort_due or state.finished:
            break
        event: WallEvent = plain_event(state)
        if data.draw(st.integers(0, 99)) < extra_rate:
            accepted = [
                e
                for e in extra_events(rules, state)
                if isinstance(w.wall_step(rules, state, e), WallState)
            ]
            if accepted:
                event = data.draw(st.sampled_from(accepted))
        before = state
        out = w.wall_step(rules, state, event)
        assert isinstance(out, WallState), (event, out)
        state = out
        if isinstance(event, Take) and before.phase == w.RINSHAN and before.live_left == 0:
            assert rules.north_pulls  # only a north may be pulled on the haitei
            unrefilled += 1
        if isinstance(event, Take) and before.phase in (w.TAKE, w.CLAIM) and not rules.own_walls:
            live_takes += 1
            # Each live take is the next live tile; the one emptying the wall is the haitei.
            assert state.taken[-1] == before.live_positions[0]
            if state.live_left == 0:
                assert state.taken[-1] == before.haitei_position
    else:  # pragma: no cover - a hand always ends
        raise AssertionError("the hand did not end")
    if state.four_kans_abort_due:
        assert w.check_abort(rules, state, "four_kans") is None
        return
    assert w.check_draw(rules, state) is None
    refusal = w.wall_step(rules, state, Take(state.turn))
    assert not isinstance(refusal, WallState) and refusal.code == w.WALL_EXHAUSTED
    if not rules.own_walls:
        # Every live tile was drawn once: the live wall minus what the kans and norths gave
        # to the dead wall (a north on the haitei gives nothing).
        dealt = 13 * rules.players
        assert live_takes == state.live_end - dealt


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(RULESETS)),
    dealer=st.integers(0, 3),
    dice=st.tuples(st.integers(1, 6), st.integers(1, 6)),
    data=st.data(),
)
def test_any_legal_hand_keeps_the_wall_whole(
    name: str, dealer: int, dice: tuple[int, int], data: st.DataObject
) -> None:
    rules = RULESETS[name]
    run_hand(rules, dealer % rules.players, dice, data)
