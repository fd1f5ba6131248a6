"""Scripted tile-aware hands for the tests: a layout that deals the hands a test names and
puts the draws it names in draw order, and a driver that steps events through the core.

Tiles are written in the usual short notation: ``"123m 406p 77z"`` (``0`` is a red five,
``z`` the honours 1 east .. 7 chun).  Each tile written takes a copy not yet used (red
fives only when written as ``0``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules import tenpai, tilechecks, walltrack
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state
from tablectl.rules.tiletracker import SeatTiles, TileState
from tablectl.rules.wall import WallState, start_wall, wall_step
from tablectl.tiles.ids import kind, tile_set

SUITS = {"m": 0, "p": 9, "s": 18, "z": 27}


def kinds_of(text: str) -> list[tuple[int, bool]]:
    """``"406p"`` -> [(kind, red?), ...]."""
    out: list[tuple[int, bool]] = []
    digits: list[str] = []
    for ch in text.replace(" ", ""):
        if ch.isdigit():
            digits.append(ch)
            continue
        base = SUITS[ch]
        for d in digits:
            n = 5 if d == "0" else int(d)
            out.append((base + n - 1, d == "0"))
        digits = []
    assert not digits, f"no suit after {digits} in {text!r}"
    return out


class Deck:
    """The preset's tiles not yet placed."""

    def __init__(self, rules: HouseRules) -> None:
        self.set = tile_set(rules)
        self.free = list(self.set.ids)

    def take(self, text: str) -> list[int]:
        out = []
        for k, red in kinds_of(text):
            coloured = self.set.red | self.set.gold
            pick = [t for t in self.free if kind(t) == k and (t in coloured) == red]
            assert pick, f"no {'red ' if red else ''}copy of kind {k} left"
            self.free.remove(pick[0])
            out.append(pick[0])
        return out


def _rinshan_positions(wall: WallState) -> list[int]:
    n = len(wall.order)
    return [wall.order[n - 2], wall.order[n - 1], wall.order[n - 4], wall.order[n - 3]]


def build_layout(
    rules: HouseRules,
    *,
    dealer: int = 0,
    dice: tuple[int, int] = (3, 4),
    hands: Mapping[int, str],
    draws: Sequence[str | None] = (),
    own_draws: Mapping[int, Sequence[str]] | None = None,
    rinshan: Sequence[str] = (),
    dora: Sequence[str] = (),
    ura: Sequence[str] = (),
) -> tuple[int, ...]:
    """A layout dealing ``hands`` (13 tiles a seat), then ``draws`` in draw order (kantan:
    ``own_draws`` per seat; None leaves a draw to the rest), the replacement tiles
    ``rinshan`` in order, the indicators ``dora`` (the first one, then the kan dora) with
    ``ura`` under them; the rest in id order."""
    wrules = walltrack.wall_rules(rules)
    wall = start_wall(wrules, dealer, dice)
    assert isinstance(wall, WallState)
    dealt = wall_step(wrules, wall, ev.Deal())
    assert isinstance(dealt, WallState)
    deck = Deck(rules)
    placed: dict[int, int] = {}
    for seat, text in hands.items():
        tiles = deck.take(text)
        positions = [p for p, s in zip(dealt.taken, dealt.taken_by, strict=True) if s == seat]
        assert len(tiles) == len(positions) == 13, (seat, len(tiles))
        placed.update(zip(positions, tiles, strict=True))
    if rules.wall.own_walls:
        per = len(wall.order) // rules.players
        for seat, texts in (own_draws or {}).items():
            tiles = deck.take(" ".join(texts))
            assert len(tiles) <= rules.wall.own_wall_discards, f"seat {seat} draws {len(tiles)}"
            for i, tile in enumerate(tiles):
                placed[seat * per + 13 + i] = tile
    else:
        live = dealt.order[dealt.next_live :]
        for pos, draw in zip(live, draws, strict=False):
            if draw is not None:
                (placed[pos],) = deck.take(draw)
        for pos, tile in zip(_rinshan_positions(wall), deck.take(" ".join(rinshan)), strict=False):
            placed[pos] = tile
    n = len(wall.order)
    indicators = [wall.order[n - 2 * (3 + i)] for i in range(5)]
    if rules.wall.own_walls:
        indicators = list(wall.dora_indicators)
    for pos, tile in zip(indicators, deck.take(" ".join(dora)), strict=False):
        placed[pos] = tile
    for pos, tile in zip(indicators, deck.take(" ".join(ura)), strict=False):
        placed[pos + 1] = tile
    rest = iter(deck.free)
    return tuple(placed[p] if p in placed else next(rest) for p in range(len(wall.order)))


@dataclass
class Table:
    """Steps events through the pure core and keeps the accepted ones as replay lines."""

    preset: str
    rules: HouseRules = field(init=False)
    state: GameState = field(init=False)
    lines: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rules = load_rules(self.preset)
        self.state = initial_state(self.rules)
        self.lines = [{"type": "start", "rules": self.preset}]

    @classmethod
    def with_rules(cls, rules: HouseRules) -> Table:
        """A table for a changed rule set (no replay lines: the preset would differ)."""
        table = cls("tenhou")
        table.rules = rules
        table.state = initial_state(rules)
        return table

    def send(self, event: ev.Event | dict[str, Any]) -> Refusal | None:
        """Step one event; the refusal, or None when it was accepted."""
        if isinstance(event, dict):
            event = ev.parse_event(event)
        new, effects = step(self.state, event)
        refused = [e for e in effects if isinstance(e, Refusal)]
        if refused:
            assert new == self.state
            return refused[0]
        self.state = new
        self.lines.append(ev.event_to_json(event))
        return None

    def ok(self, *events: ev.Event | dict[str, Any]) -> None:
        """Step events that must be accepted."""
        for event in events:
            refused = self.send(event)
            assert refused is None, (event, refused)

    def refused(self, event: ev.Event | dict[str, Any], code: str) -> Refusal:
        """Step an event that must be refused with ``code``; the state stays."""
        before = self.state
        refused = self.send(event)
        assert refused is not None and refused.code == code, refused
        assert self.state == before
        return refused

    # --- the hand ---------------------------------------------------------------------

    def start(self, **layout: Any) -> None:
        """Dice, the layout of :func:`build_layout` and the automatic deal."""
        dice = layout.get("dice", (3, 4))
        self.ok(ev.Dice(dice), ev.Layout(build_layout(self.rules, **layout)), ev.Deal())

    @property
    def tiles(self) -> TileState:
        assert self.state.tiles is not None
        return self.state.tiles

    def seat(self, seat: int) -> SeatTiles:
        return self.tiles.seats[seat]

    def tile(self, seat: int, name: str, *, besides: Sequence[int] = ()) -> int:
        """A tile of kind ``name`` in the seat's hand (not one of ``besides``), the drawn
        one first."""
        ((k, red),) = kinds_of(name)
        st = self.seat(seat)
        held = [t for t in st.concealed if kind(t) == k and t not in besides]
        assert held, f"seat {seat} holds no {name}: {st.concealed}"
        coloured = tile_set(self.rules).red | tile_set(self.rules).gold
        if st.drawn in held and (st.drawn in coloured) == red:
            return st.drawn
        return next((t for t in held if (t in coloured) == red), held[0])

    def take(self, seat: int) -> None:
        self.ok(ev.Take(seat))

    def discard(self, seat: int, name: str) -> None:
        self.ok(ev.Discard(seat, self.tile(seat, name)))

    def turn(self, seat: int, name: str) -> None:
        """Take, then discard ``name``."""
        self.take(seat)
        self.discard(seat, name)

    def riichi(self, seat: int, name: str) -> None:
        """Take, declare riichi, then discard ``name``: the declaration tile."""
        self.take(seat)
        self.ok(ev.Riichi(seat))
        self.discard(seat, name)

    def tsumogiri(self, seat: int) -> None:
        """Take, then discard the tile taken."""
        self.take(seat)
        drawn = self.seat(seat).drawn
        assert drawn is not None
        self.ok(ev.Discard(seat, drawn))

    def call(self, seat: int, kind_: str, frm: int, names: str) -> None:
        own: list[int] = []
        for name in _split(names):
            own.append(self.tile(seat, name, besides=own))
        self.ok(ev.Call(seat, kind_, frm, tuple(own)))  # type: ignore[arg-type]

    def value(self, seat: int, *, tsumo: bool, discarder: int | None) -> ev.Hand:
        """The win's value from the scorer if there is one, else 1 han 30 fu."""
        score_win = tenpai.scorer()
        if score_win is None:
            return ev.Hand(seat=seat, han=1, fu=30)
        ctx = tilechecks.win_context(self.rules, self.state, seat, tsumo, discarder)
        score = score_win(self.rules, ctx)
        assert not isinstance(score, Refusal), score
        if score.yakuman:
            return ev.Hand(seat=seat, yakuman=score.yakuman)
        return ev.Hand(seat=seat, han=min(score.han, 13), fu=score.fu)

    def ron(self, seat: int, frm: int) -> ev.Ron:
        return ev.Ron((frm,), (self.value(seat, tsumo=False, discarder=frm),))

    def tsumo(self, seat: int) -> ev.Tsumo:
        return ev.Tsumo(self.value(seat, tsumo=True, discarder=None))

    def replayed(self) -> dict[str, Any]:
        """The accepted lines through ``tablectl replay``'s reader."""
        return replay([json.dumps(line) for line in self.lines]).as_dict()


def _split(names: str) -> list[str]:
    """``"23p"`` -> ["2p", "3p"]."""
    out = []
    for k, red in kinds_of(names):
        suit = "mpsz"[k // 9] if k < 27 else "z"
        number = k - 27 + 1 if k >= 27 else k % 9 + 1
        out.append(f"{0 if red else number}{suit}")
    return out


def play_out(table: Table) -> None:
    """Every seat takes and discards the tile it took, to the end of the wall."""
    while True:
        wall = table.state.wall
        assert wall is not None
        if wall.finished:
            return
        seat = wall.turn
        table.take(seat)
        drawn = table.seat(seat).drawn
        assert drawn is not None
        table.ok(ev.Discard(seat, drawn))
