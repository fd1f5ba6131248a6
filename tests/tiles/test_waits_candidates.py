"""The waits of a hand are found by testing only the kinds that could complete it
(tileshapes._candidates); here they equal the waits found by adding every kind of the
set in turn, over random hands biased towards the shapes that have waits (one suit,
orphans only, seven pairs, four of a kind)."""

from __future__ import annotations

import random

from tablectl.rules import tileshapes as T


def _every_kind(hand: tuple[int, ...], three: bool, fours: bool) -> tuple[int, ...]:
    out = []
    for k in range(T.KINDS):
        if (three and k in T.SANMA_MISSING) or hand[k] >= 4:
            continue
        plus = list(hand)
        plus[k] += 1
        if T.complete(tuple(plus), fours):
            out.append(k)
    return tuple(out)


def _hand(rng: random.Random) -> tuple[int, ...]:
    size = rng.choice((1, 4, 7, 10, 13, 13, 13))
    shape = rng.random()
    if shape < 0.2:
        pool = [k for k in T.ORPHANS for _ in range(4)]
    elif shape < 0.5:
        suit = rng.randrange(3)
        pool = [suit * 9 + j for j in range(9) for _ in range(4)] + [27 + rng.randrange(7)] * 3
    else:
        pool = [k for k in range(T.KINDS) for _ in range(4)]
    counts = [0] * T.KINDS
    for k in rng.sample(pool, size):
        counts[k] += 1
    return tuple(counts)


def test_the_candidate_kinds_find_every_wait() -> None:
    rng = random.Random(1)
    waiting = 0
    for _ in range(1200):
        hand = _hand(rng)
        for three in (False, True):
            for fours in (False, True):
                found = T._waits.__wrapped__(hand, three, fours)  # type: ignore[attr-defined]
                assert found == _every_kind(hand, three, fours), (hand, three, fours)
                waiting += bool(found)
    assert waiting > 400  # the hands are worth checking: many are tenpai
