"""Small seeded games with real tiles, for the game-log tests.

:func:`play` shuffles the preset's tile set into a layout, rolls the dice, deals (by the
automatic deal or by takes) and plays random takes and discards over the pure rules core
and wall tracker, with now and then a chi, pon or kan of real tiles, a north pulled,
riichi, a tsumo or ron with a plausible han/fu, an abort, a chombo or a correction
(undo). It is not mahjong (nobody checks a hand wins), but every tile is consistent: a
seat discards and melds only what it holds, and melds show tiles of one kind or a run.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from tablectl.rules import wall as wl
from tablectl.rules.core import step
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import DeadHand, GameState, HandSettled, HandUndone, initial_state
from tablectl.rules.walltrack import wall_rules
from tablectl.tiles.ids import kind, tile_set
from tests.helpers import random_hand

NORTH = 30


@dataclass
class Game:
    """A generated game: its events (JSON objects) and, for every settled hand, each
    seat's concealed tiles when it ended."""

    preset: str
    events: list[dict[str, Any]] = field(default_factory=list)
    concealed: list[list[set[int]]] = field(default_factory=list)


class _Player:
    """Plays one game; ``state`` is the core's state after every event emitted."""

    def __init__(self, preset: str, seed: int) -> None:
        self.rules = load_rules(preset)
        self.wall_rules = wall_rules(self.rules)
        self.rng = random.Random(seed)
        self.state: GameState = initial_state(self.rules)
        self.game = Game(preset)
        self.players = self.rules.players
        self.layout: list[int] = []
        self.held: list[set[int]] = []
        self.pons: list[list[list[int]]] = []
        self.opened: list[bool] = []
        self.riichi: set[int] = set()
        self.dead: set[int] = set()
        self.drawn: int | None = None
        #: This hand is played to the end of the wall: no win, abort or chombo.
        self.quiet = False

    # --- the core ------------------------------------------------------------------------

    def offer(self, event: dict[str, Any]) -> bool:
        """Emit ``event`` if the core accepts it; False (nothing changed) if refused."""
        after, effects = step(self.state, parse_event(event))
        if any(isinstance(e, Refusal) for e in effects):
            return False
        self.state = after
        self.game.events.append(event)
        for effect in effects:
            if isinstance(effect, DeadHand):
                self.dead.add(effect.seat)
            elif isinstance(effect, HandSettled):
                self.game.concealed.append([set(h) for h in self.held])
            elif isinstance(effect, HandUndone):
                self.game.concealed.pop()
        return True

    def emit(self, event: dict[str, Any]) -> None:
        """Emit an event the generator knows to be legal."""
        accepted = self.offer(event)
        assert accepted, (json.dumps(event), step(self.state, parse_event(event))[1])

    @property
    def wall(self) -> wl.WallState:
        assert self.state.wall is not None
        return self.state.wall

    # --- a hand ------------------------------------------------------------------------

    def hand(self) -> None:
        rng = self.rng
        n = self.players
        self.held = [set() for _ in range(n)]
        self.pons = [[] for _ in range(n)]
        self.opened = [False] * n
        self.riichi, self.dead = set(), set()
        self.quiet = rng.random() < 0.3
        self.emit({"type": "dice", "dice": [rng.randint(1, 6), rng.randint(1, 6)]})
        self.layout = list(tile_set(self.rules).ids)
        rng.shuffle(self.layout)
        if rng.random() < 0.2:
            self._four_for_the_dealer()
        self.emit({"type": "layout", "tiles": self.layout})
        if rng.random() < 0.5:
            self._taken_into_hands(lambda: self.emit({"type": "deal"}))
        while self.wall.phase == wl.DEAL:
            seat = self.wall.turn
            self._taken_into_hands(lambda s=seat: self.emit({"type": "take", "seat": s}))
        while self.state.wall is not None:
            self._turn()

    def _four_for_the_dealer(self) -> None:
        """All four copies of one kind into the dealer's first deal block (a closed kan
        waiting to happen)."""
        chosen = kind(self.rng.choice(self.layout))
        four = [t for t in self.layout if kind(t) == chosen]
        for pos, tile in zip(self.wall.order[:4], four, strict=True):
            other = self.layout.index(tile)
            self.layout[pos], self.layout[other] = self.layout[other], self.layout[pos]

    def _taken_into_hands(self, action: Any) -> None:
        before = len(self.wall.taken)
        action()
        after = self.wall
        for pos, seat in zip(after.taken[before:], after.taken_by[before:], strict=True):
            self.held[seat].add(self.layout[pos])

    def _take(self, seat: int) -> bool:
        pos = wl.next_position(self.wall_rules, self.wall, seat)
        if pos is None:
            return False
        tile = self.layout[pos]
        event: dict[str, Any] = {"type": "take", "seat": seat, "tile": tile}
        if self.rng.random() < 0.5:
            event["pos"] = pos
        self.emit(event)
        self.held[seat].add(tile)
        self.drawn = tile
        return True

    def _turn(self) -> None:
        """One seat's turn: its take, its choice, then the others' answer to its discard."""
        seat = self.wall.turn
        if self.wall.phase in (wl.TAKE, wl.CLAIM, wl.RINSHAN) and not self._take(seat):
            self._no_take()
            return
        if self._own_turn(seat):
            return
        self._discard(seat)
        self._answer(seat)

    def _no_take(self) -> None:
        if self.wall.four_kans_abort_due:
            self.emit({"type": "abort", "reason": "four_kans"})
            return
        alive = [s for s in range(self.players) if s not in self.dead]
        tenpai = sorted(
            set(self.rng.sample(alive, self.rng.randint(0, len(alive)))) | (self.riichi - self.dead)
        )
        event: dict[str, Any] = {"type": "draw", "tenpai": tenpai}
        if self.rules.flow.nagashi != "none" and self.rng.random() < 0.1:
            event["nagashi"] = [self.rng.choice(alive)]
        self.emit(event)
        self._maybe_correct(event)

    def _win(self, event: dict[str, Any]) -> None:
        self.emit(event)
        self._maybe_correct(event)

    def _maybe_correct(self, event: dict[str, Any]) -> None:
        """Now and then the result is taken back and entered again (as staff would)."""
        if self.rng.random() >= 0.1:
            return
        self.emit({"type": "undo"})
        again = json.loads(json.dumps(event))
        if again["type"] == "tsumo":
            again = {"type": "tsumo", **random_hand(self.rng, again["seat"], tsumo=True)}
        elif again["type"] == "ron":
            again["winners"] = [
                random_hand(self.rng, w["seat"], tsumo=False) for w in again["winners"]
            ]
        self.emit(again)

    def _own_turn(self, seat: int) -> bool:
        """A tsumo, an abort, a chombo, kans, a north or riichi; True when the hand ended."""
        rng, held = self.rng, self.held[seat]
        if not self.quiet and seat not in self.dead and rng.random() < 0.04:
            self._win({"type": "tsumo", **random_hand(rng, seat, tsumo=True)})
            return True
        aborts = self.rules.flow.abortive_draws
        nine = {"type": "abort", "reason": "nine_terminals"}
        if (
            not self.quiet
            and "nine_terminals" in aborts
            and rng.random() < 0.01
            and self.offer(nine)
        ):
            return True
        if not self.quiet and rng.random() < 0.002:
            self.emit({"type": "chombo", "seat": rng.randrange(self.players)})
            return True
        by_kind: dict[int, list[int]] = {}
        for tile in held:
            by_kind.setdefault(kind(tile), []).append(tile)
        for tiles in by_kind.values():
            kan = {"type": "kan", "seat": seat, "kind": "closed", "tiles": sorted(tiles)}
            if (
                len(tiles) == 4
                and seat not in self.riichi
                and rng.random() < 0.6
                and self.offer(kan)
            ):
                held.difference_update(tiles)
                return self._after_kan(seat)
        for pon in self.pons[seat]:
            fourth = [t for t in held if kind(t) == kind(pon[0])]
            added = {"type": "kan", "seat": seat, "kind": "added", "tiles": fourth}
            if fourth and rng.random() < 0.6 and self.offer(added):
                held.discard(fourth[0])
                self.pons[seat].remove(pon)
                if rng.random() < 0.2 and self._chankan(seat):
                    return True
                return self._after_kan(seat)
        norths = [t for t in held if kind(t) == NORTH]
        if self.rules.wall.north_pulls and norths and rng.random() < 0.7:
            pull = {"type": "north", "seat": seat, "tile": norths[0]}
            if self.offer(pull):
                held.discard(norths[0])
                return self._after_kan(seat)
        if (
            not self.opened[seat]
            and seat not in self.riichi
            and seat not in self.dead
            and rng.random() < 0.06
            and rng.random() < 0.5
            and self.offer({"type": "riichi", "seat": seat})
        ):
            self.riichi.add(seat)
        return False

    def _after_kan(self, seat: int) -> bool:
        """The replacement tile, then the seat's turn goes on."""
        assert self._take(seat)
        if self._own_turn(seat):
            return True
        self._discard(seat)
        self._answer(seat)
        return True

    def _chankan(self, seat: int) -> bool:
        robber = self.rng.choice([s for s in range(self.players) if s not in (seat, *self.dead)])
        hand = random_hand(self.rng, robber, tsumo=False)
        if not self.offer({"type": "ron", "from": seat, "winners": [hand]}):
            return False
        self._maybe_correct({"type": "ron", "from": seat, "winners": [hand]})
        return True

    def _discard(self, seat: int) -> None:
        held = self.held[seat]
        if self.drawn in held and (seat in self.riichi or self.rng.random() < 0.3):
            tile = self.drawn
        else:
            tile = self.rng.choice(sorted(held))
        assert tile is not None
        self.emit({"type": "discard", "seat": seat, "tile": tile})
        held.discard(tile)
        self.drawn = None
        # Riichi declared after the discard, now and then.
        if (
            not self.opened[seat]
            and seat not in self.riichi
            and seat not in self.dead
            and self.rng.random() < 0.03
            and self.offer({"type": "riichi", "seat": seat})
        ):
            self.riichi.add(seat)
        self._last = (seat, tile)

    def _answer(self, seat: int) -> None:
        """Ron, pon, an open kan or chi on ``seat``'s discard, or nothing."""
        rng = self.rng
        if self.state.wall is None:
            return
        others = [s for s in range(self.players) if s != seat and s not in self.dead]
        if others and not self.quiet and rng.random() < 0.03:
            count = 1 if rng.random() < 0.7 else min(len(others), rng.randint(2, 3))
            winners = rng.sample(others, count)
            event = {
                "type": "ron",
                "from": seat,
                "winners": [random_hand(rng, w, tsumo=False) for w in winners],
            }
            if self.offer(event):
                self._maybe_correct(event)
                return
        _, tile = self._last
        for caller in rng.sample(others, len(others)):
            if caller in self.riichi:
                continue
            same = [t for t in self.held[caller] if kind(t) == kind(tile)]
            if len(same) >= 3 and rng.random() < 0.3 and self._call(caller, seat, "kan", same[:3]):
                self._after_kan(caller)
                return
            if len(same) >= 2 and rng.random() < 0.15 and self._call(caller, seat, "pon", same[:2]):
                self.pons[caller].append([tile, *same[:2]])
                self._discard(caller)
                self._answer(caller)
                return
        caller = (seat + 1) % self.players
        run = self._run_for(caller, tile)
        chi = run and caller in others and caller not in self.riichi and rng.random() < 0.1
        if chi and run and self._call(caller, seat, "chi", run):
            self._discard(caller)
            self._answer(caller)

    def _run_for(self, seat: int, tile: int) -> list[int] | None:
        k = kind(tile)
        if k >= 27:
            return None
        by_kind = {kind(t): t for t in sorted(self.held[seat])}
        for a, b in ((k - 2, k - 1), (k - 1, k + 1), (k + 1, k + 2)):
            if min(a, b) // 9 == k // 9 == max(a, b) // 9 and a in by_kind and b in by_kind:
                return [by_kind[a], by_kind[b]]
        return None

    def _call(self, caller: int, source: int, call_kind: str, own: list[int]) -> bool:
        event = {"type": "call", "seat": caller, "kind": call_kind, "from": source, "tiles": own}
        if not self.offer(event):
            return False
        self.held[caller].difference_update(own)
        self.opened[caller] = True
        self.drawn = None
        return True


def play(preset: str, seed: int, *, max_hands: int = 40) -> Game:
    """A random game under ``preset`` (to its end, or ``max_hands`` hands)."""
    player = _Player(preset, seed)
    while not player.state.finished and player.state.hands_played < max_hands:
        player.hand()
    return player.game
