"""Random but legal tile-aware games over the pure rules core (docs/tiles.md, "Generated
games").

Importable by any test (``from tests.tiles.gamegen import generate_game``)::

    game = generate_game("tenhou", seed=3, max_hands=4)
    game.events      # JSON-ready events, the first one {"type": "start", "rules": ...}
    game.lines()     # the same as JSON Lines, for ``tablectl replay``
    game.write(path)
    game.state       # the rules core's state after the last event

Each hand: dice and a layout shuffled by a seeded :class:`random.Random`, the deal (the
automatic ``deal`` or the 4-4-4-1 takes), then play until a win or the exhaustive draw.
Discards keep the lowest shanten (now and then a random tile); chi, pon and kans are made
now and then, riichi when tenpai; a complete hand wins (tsumo, or ron when not furiten),
with its han and fu from :mod:`tablectl.rules.tilescoring` when that module is there (a hand
it refuses, say for want of a yaku, plays on) and 1 han 30 fu otherwise; an exhaustive
draw lists the tenpai and nagashi seats the tiles say.  Every event goes through the core
as it is made: a refused one is a bug here or in the core, and raises
:class:`GenerationError`.  The same preset and seed give the same game.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import Any

from tablectl.rules import events as ev
from tablectl.rules import tenpai, tilechecks, tileshapes, tiletrack, walltrack
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state
from tablectl.rules.tiletracker import SeatTiles
from tablectl.rules.wall import next_position
from tablectl.tiles.hand import HandScore
from tablectl.tiles.ids import kind, tile_set

__all__ = ["GeneratedGame", "GenerationError", "generate_game"]

#: Placeholder value of a win when there is no scorer.
PLACEHOLDER = {"han": 1, "fu": 30}
#: No hand takes this many events; more means the generator is stuck.
MAX_EVENTS_PER_HAND = 1000


class GenerationError(RuntimeError):
    """The core refused an event the generator thought legal."""


@dataclass
class GeneratedGame:
    """A generated game: its events (JSON-ready, ``start`` first) and the final state."""

    preset: str
    seed: int
    events: list[dict[str, Any]] = field(default_factory=list)
    state: GameState | None = None

    def lines(self) -> list[str]:
        """The events as JSON Lines (no newlines)."""
        return [json.dumps(e, separators=(",", ":")) for e in self.events]

    def write(self, path: Path) -> None:
        """Write the events to ``path`` as a JSON Lines replay file."""
        path.write_text("".join(line + "\n" for line in self.lines()), "utf-8")


def generate_game(preset: str, seed: int, *, max_hands: int | None = None) -> GeneratedGame:
    """Play a game of ``preset`` from ``seed`` to its end, or ``max_hands`` hands."""
    gen = _Generator(load_rules(preset), seed)
    game = GeneratedGame(preset=preset, seed=seed, events=[{"type": "start", "rules": preset}])
    while not gen.state.finished and (max_hands is None or gen.state.hands_played < max_hands):
        gen.play_hand()
    game.events += gen.events
    game.state = gen.state
    return game


def _hand_json(seat: int, score: HandScore) -> dict[str, Any]:
    if score.yakuman:
        return {"seat": seat, "yakuman": score.yakuman}
    out: dict[str, Any] = {"seat": seat, "han": min(score.han, 13)}
    if score.fu is not None:
        out["fu"] = score.fu
    return out


def _hand(obj: dict[str, Any]) -> ev.Hand:
    return ev.Hand(
        seat=obj["seat"], han=obj.get("han", 0), fu=obj.get("fu"), yakuman=obj.get("yakuman", 0)
    )


class _Generator:
    def __init__(self, rules: HouseRules, seed: int) -> None:
        self.rules = rules
        self.rng = Random(seed)
        self.state = initial_state(rules)
        self.events: list[dict[str, Any]] = []
        self.wall_rules = walltrack.wall_rules(rules)

    # --- stepping ---------------------------------------------------------------------

    def attempt(self, event: ev.Event) -> Refusal | None:
        new, effects = step(self.state, event)
        refused = [e for e in effects if isinstance(e, Refusal)]
        if refused:
            return refused[0]
        self.state = new
        self.events.append(ev.event_to_json(event))
        return None

    def must(self, event: ev.Event) -> None:
        refused = self.attempt(event)
        if refused is not None:
            raise GenerationError(
                f"{self.rules.name}: {ev.event_to_json(event)} refused: {refused.code}: "
                f"{refused.message}"
            )

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    @property
    def wall(self) -> Any:
        assert self.state.wall is not None
        return self.state.wall

    @property
    def tiles(self) -> Any:
        assert self.state.tiles is not None
        return self.state.tiles

    def seat(self, seat: int) -> SeatTiles:
        st: SeatTiles = self.tiles.seats[seat]
        return st

    # --- a hand -----------------------------------------------------------------------

    def play_hand(self) -> None:
        played = self.state.hands_played
        self.must(ev.Dice((self.rng.randint(1, 6), self.rng.randint(1, 6))))
        layout = list(tile_set(self.rules).ids)
        self.rng.shuffle(layout)
        self.must(ev.Layout(tuple(layout)))
        if self.chance(0.5):
            self.must(ev.Deal())
        else:
            while self.wall.phase == "deal":
                self.take(self.wall.turn)
        for _ in range(MAX_EVENTS_PER_HAND):
            if self.state.hands_played != played or self.state.finished:
                return
            self.turn()
        raise GenerationError(f"{self.rules.name}: a hand did not end")

    def take(self, seat: int) -> None:
        pos = next_position(self.wall_rules, self.wall, seat)
        assert pos is not None
        tile = self.tiles.layout[pos]
        self.must(
            ev.Take(
                seat=seat,
                pos=pos if self.chance(0.7) else None,
                tile=tile if self.chance(0.5) else None,
            )
        )

    def turn(self) -> None:
        wall = self.wall
        if wall.own_walls:
            self.own_wall_turn()
            return
        if wall.four_kans_abort_due:
            if not self.rons(wall.last_discard):
                self.must(ev.Abort("four_kans"))
            return
        match wall.phase:
            case "take":
                self.take(wall.turn)
            case "claim":
                if self.rons(wall.last_discard):
                    return
                if wall.finished:
                    self.draw()
                elif not self.call(wall.last_discard):
                    self.take(wall.turn)
            case "rinshan":
                if not self.rons(wall.turn):
                    self.take(wall.turn)
            case "discard":
                self.own_turn(wall.turn)
            case "called":
                self.discard(wall.turn)

    def own_wall_turn(self) -> None:
        # Kantan: rons and calls on one's own turn, instead of the draw.
        wall = self.wall
        seat = wall.turn
        if wall.phase == "claim" and wall.finished:
            if not any(self.own_wall_ron(s) for s in range(self.state.players)):
                self.draw()
            return
        match wall.phase:
            case "take":
                self.take(seat)
            case "claim":
                if self.own_wall_ron(seat) or self.own_wall_call(seat):
                    return
                self.take(seat)
            case "discard":
                self.own_turn(seat)
            case "called":
                self.discard(seat)

    def draw(self) -> None:
        expected = tiletrack.expected_draw(self.state)
        assert expected is not None
        self.must(expected)

    # --- wins -------------------------------------------------------------------------

    def value(self, seat: int, *, tsumo: bool, discarder: int | None) -> dict[str, Any] | None:
        score_win = tenpai.scorer()
        if score_win is None:
            return {"seat": seat, **PLACEHOLDER}
        ctx = tilechecks.win_context(self.rules, self.state, seat, tsumo, discarder)
        score = score_win(self.rules, ctx)
        if isinstance(score, Refusal):
            return None
        return _hand_json(seat, score)

    def can_ron(self, seat: int, discarder: int) -> bool:
        if seat == discarder or seat in self.state.dead:
            return False
        if walltrack.check_ron(self.state, (discarder,), (seat,)) is not None:
            return False
        tile = tilechecks.ron_tile(self.state, discarder)
        if tile is None:
            return False
        st = self.seat(seat)
        if not tilechecks.is_complete(self.rules, (*st.concealed, tile)):
            return False
        return tilechecks.furiten(self.rules, self.tiles, seat, tile) is None

    def rons(self, discarder: int | None) -> bool:
        if discarder is None:
            return False
        winners = []
        for seat in range(self.state.players):
            if self.can_ron(seat, discarder):
                value = self.value(seat, tsumo=False, discarder=discarder)
                if value is not None:
                    winners.append(_hand(value))
        if not winners:
            return False
        self.must(ev.Ron(discarders=(discarder,), winners=tuple(winners)))
        return True

    def own_wall_ron(self, seat: int) -> bool:
        wall = self.wall
        if seat in self.state.dead:
            return False
        if not wall.finished and (wall.phase != "claim" or wall.turn != seat):
            return False
        # Every last discard that wins, each at the value of the hand on its own tile (a
        # tile on which the hand has no yaku is no win off that seat).
        offers = [
            (d, self.value(seat, tsumo=False, discarder=d))
            for d in range(self.state.players)
            if wall.discards[d] and self.can_ron(seat, d)
        ]
        priced = [(d, value) for d, value in offers if value is not None]
        if not priced:
            return False
        hands = tuple(_hand(value) for _, value in priced)
        if len(set(hands)) == 1 and self.chance(0.5):
            hands = hands[:1]  # one value for all: the form a keyed table writes
        self.must(ev.Ron(discarders=tuple(d for d, _ in priced), winners=hands))
        return True

    # --- calls ------------------------------------------------------------------------

    def call_options(self, seat: int, discarder: int, tile: int) -> list[ev.Call]:
        st = self.seat(seat)
        if st.riichi or seat in self.state.dead or len(st.melds) >= 4:
            return []
        same = [t for t in st.concealed if kind(t) == kind(tile)]
        out = []
        if len(same) >= 2:
            out.append(ev.Call(seat, "pon", discarder, tuple(same[:2])))
        if len(same) >= 3 and self.rules.wall.kans_allowed and not self.rules.wall.own_walls:
            out.append(ev.Call(seat, "kan", discarder, tuple(same[:3])))
        k = kind(tile)
        nxt = (discarder + 1) % self.state.players
        if self.rules.wall.chi_allowed and seat == nxt and k < 27:
            by_kind = {kind(t): t for t in st.concealed}
            for lo in (k - 2, k - 1, k):
                run = [lo, lo + 1, lo + 2]
                if lo < k // 9 * 9 or lo + 2 > k // 9 * 9 + 8:
                    continue
                others = [x for x in run if x != k]
                if all(x in by_kind for x in others):
                    out.append(ev.Call(seat, "chi", discarder, tuple(by_kind[x] for x in others)))
        return out

    def call(self, discarder: int | None) -> bool:
        if discarder is None or not self.chance(0.35):
            return False
        tile = tilechecks.ron_tile(self.state, discarder)
        assert tile is not None
        seats = [s for s in range(self.state.players) if s != discarder]
        self.rng.shuffle(seats)
        for seat in seats:
            options = self.call_options(seat, discarder, tile)
            self.rng.shuffle(options)
            for call in options:
                # Refused: no meld room, the haitei, kuikae would leave no discard ...
                if self.attempt(call) is None:
                    return True
        return False

    def own_wall_call(self, seat: int) -> bool:
        if not self.chance(0.2):
            return False
        for discarder in range(self.state.players):
            if discarder == seat or not self.wall.discards[discarder]:
                continue
            tile = self.seat(discarder).discards[-1].tile
            for call in self.call_options(seat, discarder, tile):
                if self.attempt(call) is None:
                    return True
        return False

    # --- one's own turn ---------------------------------------------------------------

    def own_turn(self, seat: int) -> None:
        st = self.seat(seat)
        if tilechecks.is_complete(self.rules, st.concealed) and seat not in self.state.dead:
            value = self.value(seat, tsumo=True, discarder=None)
            if value is not None:
                self.must(ev.Tsumo(_hand(value)))
                return
        if self.kan(seat) or self.north(seat) or self.riichi(seat):
            return
        self.discard(seat)

    def kan(self, seat: int) -> bool:
        if not self.rules.wall.kans_allowed or not self.chance(0.6):
            return False
        st = self.seat(seat)
        for k in sorted({kind(t) for t in st.concealed}):
            four = tuple(t for t in st.concealed if kind(t) == k)
            if len(four) == 4 and self.attempt(ev.Kan(seat, "closed", four)) is None:
                return True
        for meld in st.melds:
            if meld.kind != "pon":
                continue
            fourth = [t for t in st.concealed if kind(t) == kind(meld.tiles[0])]
            if fourth and self.attempt(ev.Kan(seat, "added", (fourth[0],))) is None:
                return True
        return False

    def north(self, seat: int) -> bool:
        if not self.rules.wall.north_pulls or not self.chance(0.9):
            return False
        norths = [t for t in self.seat(seat).concealed if kind(t) == tileshapes.NORTH]
        return bool(norths) and self.attempt(ev.North(seat, norths[0])) is None

    def tenpai_discards(self, seat: int) -> list[int]:
        st = self.seat(seat)
        out = []
        for tile in {kind(t): t for t in st.concealed}.values():
            rest = list(st.concealed)
            rest.remove(tile)
            if tenpai.tenpai(self.rules, rest, st.melds):
                out.append(tile)
        return out

    def riichi(self, seat: int) -> bool:
        st = self.seat(seat)
        if st.riichi or seat in self.state.dead:
            return False
        if not st.closed and not self.rules.tiles.yaku_with_calls:
            return False
        if self.state.scores[seat] < self.rules.riichi.min_points or not self.chance(0.8):
            return False
        ready = self.tenpai_discards(seat)
        if not ready or self.attempt(ev.Riichi(seat)) is not None:
            return False
        self.must(ev.Discard(seat, self.rng.choice(ready)))
        return True

    def discard(self, seat: int) -> None:
        st = self.seat(seat)
        if st.riichi_on and st.drawn is not None:
            self.must(ev.Discard(seat, st.drawn))
            return
        allowed = [t for t in st.concealed if kind(t) not in st.kuikae]
        if self.chance(0.1):
            self.must(ev.Discard(seat, self.rng.choice(allowed)))
            return
        self.must(ev.Discard(seat, self.rng.choice(list(self.best_discards(allowed, st)))))

    def best_discards(self, allowed: list[int], st: SeatTiles) -> Iterator[int]:
        best: list[int] = []
        least = 99
        for tile in {kind(t): t for t in allowed}.values():
            rest = list(st.concealed)
            rest.remove(tile)
            n = tileshapes.shanten(self.rules, rest)
            if n < least:
                least, best = n, [tile]
            elif n == least:
                best.append(tile)
        return iter(best)
