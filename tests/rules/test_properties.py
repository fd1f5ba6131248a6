"""Property tests: random event sequences never raise, points are conserved, replay is
deterministic."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.replay import replay
from tablectl.rules.core import step
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import Final, initial_state
from tests.helpers import random_event

PRESETS = preset_names()


def _lines(preset: str, rng: random.Random, count: int, legal_only: bool) -> list[str]:
    rules = load_rules(preset)
    return [json.dumps(random_event(rng, rules, legal_only=legal_only)) for _ in range(count)]


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(PRESETS), st.randoms(use_true_random=False), st.integers(1, 120), st.booleans()
)
def test_random_sequences_never_raise_and_conserve_points(
    preset: str, rng: random.Random, count: int, legal_only: bool
) -> None:
    rules = load_rules(preset)
    state = initial_state(rules)
    total = rules.game.start_points * rules.players
    outside = 0  # points added from outside the table (kantan's West bonus pot)
    for line in _lines(preset, rng, count, legal_only):
        before = state
        state, effects = step(state, parse_event(json.loads(line)))
        refusals = [e for e in effects if isinstance(e, Refusal)]
        if refusals:
            assert len(effects) == 1 and state is before
            continue
        for effect in effects:
            if type(effect).__name__ == "Payment" and effect.reason == "west_bonus":
                outside += effect.to_table
        assert sum(state.scores) + state.kyoutaku == total + outside
        if state.finished:
            assert state.final is not None
            final_total = sum(state.final.scores)
            kept = state.kyoutaku if rules.game.leftover_deposits == "top" else 0
            # Penalties come off the result points when there are any, else off the scores.
            penalties = 0 if state.final.result else sum(state.final_penalties)
            expected = sum(state.scores) + kept - penalties
            if rules.game.final_sum_check:
                expected = min(expected, total)
            assert final_total == expected
            assert sorted(state.final.ranking) == list(range(rules.players))
            if state.final.result:
                _assert_results_sum_to_zero(state.final, state.kyoutaku - kept)


def _assert_results_sum_to_zero(final: Final, lost: int) -> None:
    """Results before penalties sum to zero, less deposits lost at the end (WRC)."""
    before = [r + p / 1000 for r, p in zip(final.result, final.penalties or [0] * 4, strict=False)]
    assert abs(sum(before) + lost / 1000) < 1e-6, (final, lost)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PRESETS), st.randoms(use_true_random=False), st.integers(1, 80))
def test_replaying_twice_gives_the_same_output(preset: str, rng: random.Random, count: int) -> None:
    lines = _lines(preset, rng, count, legal_only=False)
    first = json.dumps(replay(lines, preset).as_dict(), sort_keys=True)
    second = json.dumps(replay(lines, preset).as_dict(), sort_keys=True)
    assert first == second


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PRESETS), st.integers(0, 2**32))
def test_games_end_and_rank_everyone(preset: str, seed: int) -> None:
    rules = load_rules(preset)
    lines = _lines(preset, random.Random(seed), 400, legal_only=True)
    out = replay(lines, preset).as_dict()
    assert out["finished"], (len(out["hands"]), out["round"])
    if out["finished"]:
        assert len(out["final"]["scores"]) == rules.players
        assert out["final"]["ranking"][0] == max(
            range(rules.players), key=lambda s: (out["final"]["scores"][s], -s)
        )
