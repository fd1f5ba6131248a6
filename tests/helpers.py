"""Helpers shared by the tests (importable as ``tests.helpers``)."""

from __future__ import annotations

import json
from typing import Any

from tablectl.replay import replay


def play(preset: str, *events: dict[str, Any]) -> dict[str, Any]:
    """Replay ``events`` under ``preset`` and return the replay output object."""
    lines = [json.dumps(e) for e in events]
    return replay(lines, preset).as_dict()


HANDS_4 = [(1, 30), (1, 40), (2, 25), (2, 30), (2, 20), (3, 30), (3, 60), (4, 30), (1, 110)]


def random_hand(rng: Any, seat: int, *, tsumo: bool) -> dict[str, Any]:
    """A plausible winning hand value for ``seat`` (han/fu, a limit hand or a yakuman)."""
    roll = rng.random()
    if roll < 0.05:
        return {"seat": seat, "yakuman": 1}
    if roll < 0.25:
        return {"seat": seat, "han": rng.randint(5, 13)}
    han, fu = rng.choice(HANDS_4)
    if not tsumo and fu == 20:
        fu = 30
    return {"seat": seat, "han": han, "fu": fu}


def random_event(rng: Any, rules: Any, *, legal_only: bool = True) -> dict[str, Any]:
    """One event that the rules should accept in most states (or, rarely, a bad one)."""
    players = rules.players
    seats = list(range(players))
    kind = rng.random()
    if not legal_only and kind < 0.05:
        return rng.choice(
            [
                {"type": "ron", "from": 0, "winners": [{"seat": 0, "han": 1, "fu": 30}]},
                {"type": "tsumo", "seat": players, "han": 2, "fu": 30},
                {"type": "ron", "from": 1, "winners": [{"seat": 2, "han": 1, "fu": 20}]},
                {"type": "abort", "reason": "nine_terminals"},
                {"type": "stop"},
                {"type": "riichi", "seat": -1},
            ]
        )
    if kind < 0.15:
        return {"type": "riichi", "seat": rng.choice(seats)}
    if kind < 0.45:
        discarder = rng.choice(seats)
        others = [s for s in seats if s != discarder]
        count = 1 if rng.random() < 0.9 else 2
        winners = rng.sample(others, count)
        if rules.flow.multiple_ron == "every_discarder":
            winners = winners[:1]
            discarders = [s for s in seats if s != winners[0]]
            frm: Any = rng.sample(discarders, rng.randint(1, 2))
        else:
            frm = discarder
        return {
            "type": "ron",
            "from": frm,
            "winners": [random_hand(rng, w, tsumo=False) for w in winners],
        }
    if kind < 0.65:
        return {"type": "tsumo", **random_hand(rng, rng.choice(seats), tsumo=True)}
    if kind < 0.92:
        tenpai = [s for s in seats if rng.random() < 0.4]
        return {"type": "draw", "tenpai": tenpai}
    if kind < 0.95 and rules.flow.abortive_draws:
        return {"type": "abort", "reason": rng.choice(rules.flow.abortive_draws)}
    if kind < 0.97:
        return {"type": "false_call", "seat": rng.choice(seats)}
    if kind < 0.98:
        return {"type": "chombo", "seat": rng.choice(seats)}
    return {"type": "stop"}


class RecordingPublisher:
    """A stand-in for the MQTT publisher that keeps what the table hands it, in order."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.games: list[dict[str, Any]] = []
        self.hands: list[dict[str, Any]] = []

    def publish_state(self, state: dict[str, Any]) -> None:
        """Keep a state."""
        self.states.append(state)

    def publish_event(self, event: dict[str, Any]) -> None:
        """Keep an event."""
        self.events.append(event)

    def publish_game(self, result: dict[str, Any]) -> None:
        """Keep a game's result."""
        self.games.append(result)

    def publish_hand(self, hand: dict[str, Any]) -> None:
        """Keep a settled hand."""
        self.hands.append(hand)
