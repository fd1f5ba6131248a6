"""The games the game-log tests export: real generated games of every preset with a log
form (tests/tiles/gamegen.py) and the scripted hands of :mod:`tests.export.scripted`.

A game is its preset and its events (JSON objects, no ``start`` line); :func:`concealed`
gives each settled hand's concealed tiles at its end from the rules core's own tile
tracker, :func:`replayed` what ``tablectl replay`` makes of the game.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from tablectl.replay import ReplayResult, run_events
from tablectl.rules.core import step
from tablectl.rules.events import Event, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import HandSettled, HandUndone, initial_state
from tests.export.scripted import SCRIPTED
from tests.tiles.gamegen import generate_game

#: (preset, seed) of the generated games: every preset but kantan (no tenhou.net/6 form;
#: test_mjai.py adds its games), both three-player ones twice.
GENERATED = [
    ("tenhou", 11),
    ("ariari", 21),
    ("jboy", 31),
    ("jboy-sanma", 41),
    ("jboy-sanma", 42),
    ("sanma-free", 51),
    ("sanma-free", 52),
    ("kenko", 61),
    ("mleague", 71),
    ("ema", 81),
    ("wrc", 91),
]


@dataclass(frozen=True, eq=False)
class Game:
    """A game to export: a name for the test ids, its preset, its events.  Compared and
    hashed by identity (the events are dicts), so the per-game caches below work."""

    name: str
    preset: str
    events: tuple[dict[str, Any], ...]

    def parsed(self) -> list[Event]:
        """The events as the rules core reads them."""
        return [parse_event(e) for e in self.events]


@functools.cache
def generated(preset: str, seed: int) -> Game:
    """The generated game of ``preset`` from ``seed``, played to its end."""
    events = generate_game(preset, seed).events
    assert events[0]["type"] == "start"
    return Game(f"{preset}-{seed}", preset, tuple(events[1:]))


@functools.cache
def scripted(name: str) -> Game:
    """One of the scripted games, by name."""
    preset, play = SCRIPTED[name]
    return Game(name, preset, tuple(play()))


def every_game() -> list[Game]:
    """The generated games, then the scripted ones."""
    return [generated(*g) for g in GENERATED] + [scripted(name) for name in SCRIPTED]


#: The test ids of :func:`every_game`, in order.
GAME_IDS = [f"{p}-{s}" for p, s in GENERATED] + list(SCRIPTED)


def game_by_id(game_id: str) -> Game:
    """A game of :data:`GAME_IDS`."""
    if game_id in SCRIPTED:
        return scripted(game_id)
    preset, _, seed = game_id.rpartition("-")
    return generated(preset, int(seed))


@functools.cache
def concealed(game: Game) -> list[list[tuple[int, ...]]]:
    """Each settled hand's concealed tiles per seat when it ended (the drawn tile of a
    tsumo included), as the rules core's tile tracker has them."""
    state = initial_state(load_rules(game.preset))
    out: list[list[tuple[int, ...]]] = []
    for event in game.parsed():
        after, effects = step(state, event)
        assert not any(isinstance(e, Refusal) for e in effects), (event, effects)
        for effect in effects:
            if isinstance(effect, HandSettled):
                assert state.tiles is not None
                out.append([st.concealed for st in state.tiles.seats])
            elif isinstance(effect, HandUndone):
                out.pop()
        state = after
    return out


@functools.cache
def replayed(game: Game) -> ReplayResult:
    """``tablectl replay``'s reading of the game; nothing in it is rejected."""
    rules = load_rules(game.preset)
    result = run_events(rules, list(enumerate(game.parsed(), 1)))
    assert result.as_dict()["rejected"] == []
    return result
