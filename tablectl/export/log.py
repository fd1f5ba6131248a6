"""A game's hands as the tiles moved: the neutral record both log formats are written from.

:func:`game_log` runs a game's events through the rules core (as ``tablectl replay``
does: a refused event is skipped) and follows the tiles of every hand from the ``layout``
the dice were followed by and the tile ids on the events (docs/tiles.md).  The wall
tracker says which position each take came from and which dora indicators are turned;
the little hand bookkeeping here only checks that a seat holds what it discards or melds.

Deltas here follow the online logs, not the replay output: what the hand's result moved
(honba and the deposits collected included), *without* the riichi sticks and other
deposits paid to the table during the hand (those show in the next hand's start scores).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import (
    WINDS,
    Final,
    GameState,
    HandRecord,
    HandSettled,
    HandUndone,
    Noted,
    Payment,
    initial_state,
)
from tablectl.rules.wall import DEAL, DISCARD, RINSHAN, WallState
from tablectl.tiles.ids import TileSet, kind, kind_name, tile_set

__all__ = [
    "Action",
    "Call",
    "ClosedKan",
    "AddedKan",
    "DoraRevealed",
    "Draw",
    "Discard",
    "ExportError",
    "GameLog",
    "HandLog",
    "HandResult",
    "NorthPull",
    "RiichiAccepted",
    "Win",
    "game_log",
    "hand_name",
]

NORTH_KIND = 30


class ExportError(ValueError):
    """The game cannot be written as a tile log; the message names the hand and why."""


@dataclass(frozen=True, slots=True)
class Draw:
    """``seat`` took ``tile`` from the wall (``rinshan``: the replacement after a kan or
    a north)."""

    seat: int
    tile: int
    rinshan: bool = False


@dataclass(frozen=True, slots=True)
class Discard:
    """``seat`` discarded ``tile``; ``tsumogiri`` when it is the tile just drawn;
    ``riichi`` when it is the riichi declaration tile."""

    seat: int
    tile: int
    tsumogiri: bool
    riichi: bool = False


@dataclass(frozen=True, slots=True)
class Call:
    """A chi, pon or open kan: ``seat`` took ``called`` from ``source`` and showed ``own``."""

    seat: int
    kind: ev.CallKind
    source: int
    called: int
    own: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ClosedKan:
    """A closed kan of the four ``tiles``."""

    seat: int
    tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AddedKan:
    """``tile`` added to the seat's ``pon``."""

    seat: int
    tile: int
    pon: Call


@dataclass(frozen=True, slots=True)
class NorthPull:
    """A north pulled as nuki-dora (three players)."""

    seat: int
    tile: int


@dataclass(frozen=True, slots=True)
class RiichiAccepted:
    """The seat's riichi stick went on the table (the declaration tile was not won on)."""

    seat: int


@dataclass(frozen=True, slots=True)
class DoraRevealed:
    """A kan dora indicator was turned over."""

    tile: int


Action = Draw | Discard | Call | ClosedKan | AddedKan | NorthPull | RiichiAccepted | DoraRevealed


@dataclass(frozen=True, slots=True)
class Win:
    """One winner: the hand value as entered, who paid (``source`` is the winner on a
    tsumo), and this win's share of the hand's deltas."""

    seat: int
    source: int
    tsumo: bool
    hand: ev.Hand
    riichi: bool
    deltas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HandResult:
    """How a hand ended: ``kind`` is the replay's result (ron, tsumo, draw, abort, chombo)."""

    kind: Literal["ron", "tsumo", "draw", "abort", "chombo"]
    deltas: tuple[int, ...]
    wins: tuple[Win, ...] = ()
    tenpai: tuple[int, ...] = ()
    nagashi: tuple[int, ...] = ()
    reason: str = ""


@dataclass(frozen=True, slots=True)
class HandLog:
    """One hand: where it stood at the dice, every seat's 13 dealt tiles, what happened in
    order, the dora and ura indicators (tile ids) and the result."""

    round_index: int
    dealer: int
    honba: int
    sticks: int
    scores: tuple[int, ...]
    haipai: tuple[tuple[int, ...], ...]
    actions: tuple[Action, ...]
    dora: tuple[int, ...]
    ura: tuple[int, ...]
    result: HandResult


@dataclass(frozen=True, slots=True)
class GameLog:
    """The hands of a game that were settled, in order, and how the game ended (None
    while it goes on)."""

    rules: HouseRules
    tiles: TileSet
    names: tuple[str, ...]
    hands: tuple[HandLog, ...]
    final: Final | None


def hand_name(round_index: int, dealer: int, honba: int) -> str:
    """``"E1"``, ``"S3 2 honba"``: a hand as players call it."""
    name = f"{WINDS[round_index % 4]}{dealer + 1}"
    return f"{name} {honba} honba" if honba else name


def _tile_text(tile: int) -> str:
    return f"tile {tile} ({kind_name(kind(tile))})"


@dataclass
class _Hand:
    """The hand in progress: its tiles so far and the first problem found with them."""

    number: int
    state: GameState
    seats: int
    layout: tuple[int, ...] | None = None
    problem: str | None = None
    haipai: list[list[int]] = field(default_factory=list)
    held: list[set[int]] = field(default_factory=list)
    pons: list[list[Call]] = field(default_factory=list)
    drawn: list[int | None] = field(default_factory=list)
    riichi_next: list[bool] = field(default_factory=list)
    last_discard_at: list[int | None] = field(default_factory=list)
    open_tile: int | None = None
    actions: list[Action] = field(default_factory=list)
    paid: list[int] = field(default_factory=list)
    wall: WallState | None = None

    def __post_init__(self) -> None:
        n = self.seats
        self.haipai = [[] for _ in range(n)]
        self.held = [set() for _ in range(n)]
        self.pons = [[] for _ in range(n)]
        self.drawn = [None] * n
        self.riichi_next = [False] * n
        self.last_discard_at = [None] * n
        self.paid = [0] * n

    @property
    def name(self) -> str:
        start = self.state
        return f"hand {self.number} ({hand_name(start.round_index, start.dealer, start.honba)})"

    def fail(self, problem: str) -> None:
        """Keep the first problem; the hand's tiles are not followed any further."""
        if self.problem is None:
            self.problem = problem

    def take_from(self, seat: int, tiles: Sequence[int], what: str) -> bool:
        """Take ``tiles`` out of ``seat``'s concealed hand, or note the problem."""
        if len(set(tiles)) != len(tiles):
            self.fail(f"{what} by seat {seat} names one tile twice: {list(tiles)}")
            return False
        for tile in tiles:
            if tile not in self.held[seat]:
                self.fail(f"{what} by seat {seat}: seat {seat} does not hold {_tile_text(tile)}")
                return False
        self.held[seat].difference_update(tiles)
        return True


def _check_layout(hand: _Hand, tiles: TileSet, layout: tuple[int, ...]) -> None:
    if sorted(layout) != sorted(tiles.ids):
        hand.fail(
            f"the wall layout holds {len(layout)} tile ids that are not this preset's"
            f" {len(tiles.ids)} tiles, each once"
        )
        return
    hand.layout = layout


def _wall_tiles(hand: _Hand, event: ev.Event, before: WallState, after: WallState) -> None:
    """Deal, draws and replacement tiles: the positions the wall tracker marked taken."""
    layout = hand.layout
    assert layout is not None
    start = len(before.taken)
    for pos, seat in zip(after.taken[start:], after.taken_by[start:], strict=True):
        tile = layout[pos]
        if before.phase == DEAL:
            hand.haipai[seat].append(tile)
            hand.held[seat].add(tile)
            continue
        if isinstance(event, ev.Take) and event.tile is not None and event.tile != tile:
            hand.fail(
                f"seat {seat} took position {pos}, where the layout has {_tile_text(tile)},"
                f" but read {_tile_text(event.tile)}"
            )
            return
        hand.held[seat].add(tile)
        hand.drawn[seat] = tile
        hand.actions.append(Draw(seat, tile, rinshan=before.phase == RINSHAN))


def _discard(hand: _Hand, event: ev.Discard) -> None:
    seat = event.seat
    if event.tile is None:
        hand.fail(f"seat {seat}'s discard has no tile id")
        return
    if not hand.take_from(seat, (event.tile,), "a discard"):
        return
    riichi = hand.riichi_next[seat]
    hand.riichi_next[seat] = False
    hand.last_discard_at[seat] = len(hand.actions)
    hand.actions.append(Discard(seat, event.tile, event.tile == hand.drawn[seat], riichi))
    hand.drawn[seat] = None
    hand.open_tile = event.tile


def _same_kind(tiles: Sequence[int]) -> bool:
    return len({kind(t) for t in tiles}) == 1


def _is_run(tiles: Sequence[int]) -> bool:
    kinds = sorted(kind(t) for t in tiles)
    suited = kinds[-1] < 27 and kinds[0] // 9 == kinds[-1] // 9
    return suited and kinds == list(range(kinds[0], kinds[0] + 3))


def _call(hand: _Hand, event: ev.Call) -> None:
    seat, called = event.seat, hand.open_tile
    if called is None:  # pragma: no cover - the wall tracker refuses a call with no discard
        hand.fail(f"seat {seat} called with no tile open to call")
        return
    size = 3 if event.kind == "kan" else 2
    own = tuple(event.tiles)
    if len(own) != size:
        hand.fail(f"seat {seat}'s {event.kind} shows {len(own)} of its own tiles, not {size}")
        return
    meld = (called, *own)
    if not (_is_run(meld) if event.kind == "chi" else _same_kind(meld)):
        names = ", ".join(kind_name(kind(t)) for t in meld)
        hand.fail(f"seat {seat}'s {event.kind} of {names} is no {event.kind}")
        return
    if not hand.take_from(seat, own, f"a {event.kind}"):
        return
    made = Call(seat, event.kind, event.discarder, called, own)
    if event.kind == "pon":
        hand.pons[seat].append(made)
    hand.actions.append(made)
    hand.drawn[seat] = None
    hand.open_tile = None


def _kan(hand: _Hand, event: ev.Kan) -> None:
    seat, tiles = event.seat, tuple(event.tiles)
    if event.kind == "closed":
        if len(tiles) != 4 or not _same_kind(tiles):
            hand.fail(f"seat {seat}'s closed kan is not four tiles of one kind: {list(tiles)}")
            return
        if hand.take_from(seat, tiles, "a closed kan"):
            hand.actions.append(ClosedKan(seat, tiles))
            hand.drawn[seat] = None
        return
    if len(tiles) != 1:
        hand.fail(f"seat {seat}'s added kan names {len(tiles)} tiles, not the one added")
        return
    pon = next((p for p in hand.pons[seat] if kind(p.called) == kind(tiles[0])), None)
    if pon is None:
        hand.fail(f"seat {seat} added {_tile_text(tiles[0])} to a pon it does not have")
        return
    if hand.take_from(seat, tiles, "an added kan"):
        hand.pons[seat].remove(pon)
        hand.actions.append(AddedKan(seat, tiles[0], pon))
        hand.drawn[seat] = None
        hand.open_tile = tiles[0]  # robbed by chankan, if anyone


def _north(hand: _Hand, event: ev.North) -> None:
    seat, tile = event.seat, event.tile
    if tile is None or kind(tile) != NORTH_KIND:
        got = "no tile id" if tile is None else _tile_text(tile)
        hand.fail(f"seat {seat}'s north pull has {got}")
        return
    if hand.take_from(seat, (tile,), "a north pull"):
        hand.actions.append(NorthPull(seat, tile))
        hand.drawn[seat] = None
        hand.open_tile = tile  # a pulled north may be ponned or won on


def _riichi(hand: _Hand, seat: int, wall: WallState | None) -> None:
    if wall is not None and wall.phase == DISCARD and wall.turn == seat:
        hand.riichi_next[seat] = True  # declared holding the drawn tile: the next discard
        return
    at = hand.last_discard_at[seat]
    if at is None:  # pragma: no cover - the wall tracker refuses riichi before a turn
        hand.fail(f"seat {seat} declared riichi before any discard")
        return
    declared = hand.actions[at]
    assert isinstance(declared, Discard)
    hand.actions[at] = replace(declared, riichi=True)


def _tile_event(hand: _Hand, event: ev.Event, before: GameState, after: GameState) -> None:
    """Follow one accepted event's tiles (nothing once the hand has a problem)."""
    if hand.problem is not None:
        return
    wall_before, wall_after = before.wall, after.wall
    if isinstance(event, ev.Dice | ev.Start) or wall_before is None or wall_after is None:
        return
    if isinstance(event, ev.Layout):
        _check_layout(hand, tile_set(before.rules), event.tiles)
    elif hand.layout is None:
        if isinstance(event, ev.Take | ev.Deal | ev.Discard | ev.Call | ev.Kan | ev.North):
            hand.fail("it was played without tile readers (no wall layout after the dice)")
    elif isinstance(event, ev.Take | ev.Deal):
        _wall_tiles(hand, event, wall_before, wall_after)
    elif isinstance(event, ev.Discard):
        _discard(hand, event)
    elif isinstance(event, ev.Call):
        _call(hand, event)
    elif isinstance(event, ev.Kan):
        _kan(hand, event)
    elif isinstance(event, ev.North):
        _north(hand, event)
    layout = hand.layout
    if hand.problem is None and layout is not None:
        for pos in wall_after.dora_indicators[len(wall_before.dora_indicators) :]:
            hand.actions.append(DoraRevealed(layout[pos]))
    hand.wall = wall_after


def _bare(before: GameState, honba: int) -> GameState:
    """The state before a ron with nothing on the table: what one winner alone is paid."""
    zeros = (0,) * before.players
    return replace(
        before,
        honba=honba,
        kyoutaku=0,
        riichi=(),
        riichi_deposits=0,
        pending_riichi=None,
        hand_payments=zeros,
    )


def _win_shares(
    before: GameState, event: ev.Ron, winners: list[int], total: tuple[int, ...]
) -> list[tuple[int, ...]]:
    """Split a multiple ron's deltas by winner: each winner's payment as the core settles
    a ron of that winner alone (honba as the preset gives them), then each winner's part
    of the deposits (the rest of ``total``) to that winner."""
    if len(winners) == 1:
        return [total]
    hands = {h.seat: h for h in event.winners}
    honba_each = before.rules.flow.multiple_ron_bonus == "each"
    shares: list[list[int]] = []
    for index, seat in enumerate(winners):
        honba = before.honba if index == 0 or honba_each else 0
        alone = ev.Ron(discarders=event.discarders, winners=(hands[seat],))
        _, effects = step(_bare(before, honba), alone)
        records = [e.record for e in effects if isinstance(e, HandSettled)]
        assert records, f"a ron the core accepted with others is refused alone: {effects}"
        shares.append(list(records[0].deltas))
    rest = [t - sum(s[i] for s in shares) for i, t in enumerate(total)]
    for share, seat in zip(shares, winners, strict=True):
        share[seat] += rest[seat]
        rest[seat] = 0
    shares[0] = [a + b for a, b in zip(shares[0], rest, strict=True)]
    return [tuple(s) for s in shares]


def _result(
    record: HandRecord, event: ev.Event, before: GameState, paid: Sequence[int]
) -> HandResult:
    total = tuple(d - p for d, p in zip(record.deltas, paid, strict=True))
    detail = record.detail
    riichi = {*before.riichi, *([] if before.pending_riichi is None else [before.pending_riichi])}
    if record.result == "ron":
        assert isinstance(event, ev.Ron)
        winners = [int(s) for s in detail["winners"]]
        source = int(detail["from"][0])
        hands = {h.seat: h for h in event.winners}
        shares = _win_shares(before, event, winners, total)
        wins = tuple(
            Win(seat, source, False, hands[seat], seat in riichi, share)
            for seat, share in zip(winners, shares, strict=True)
        )
        return HandResult("ron", total, wins=wins)
    if record.result == "tsumo":
        assert isinstance(event, ev.Tsumo)
        seat = event.hand.seat
        return HandResult(
            "tsumo", total, wins=(Win(seat, seat, True, event.hand, seat in riichi, total),)
        )
    if record.result == "draw":
        return HandResult(
            "draw",
            total,
            tenpai=tuple(detail.get("tenpai", ())),
            nagashi=tuple(detail.get("nagashi", ())),
        )
    if record.result == "abort":
        return HandResult("abort", total, reason=str(detail.get("reason", "")))
    return HandResult("chombo", total, reason=str(detail.get("reason", "")))


def _settle(
    hand: _Hand, record: HandRecord, event: ev.Event, before: GameState, tiles: TileSet
) -> HandLog:
    if hand.problem is not None:
        raise ExportError(
            f"{hand.name}: {hand.problem}; tenhou.net/6 and mjai logs need every tile"
        )
    wall = hand.wall
    layout = hand.layout
    if wall is None or layout is None:
        raise ExportError(f"{hand.name}: it was played without tile readers (no wall layout)")
    result = _result(record, event, before, hand.paid)
    dora = tuple(layout[p] for p in wall.dora_indicators)
    # Ura indicators lie under the dora indicators (the bottom tile of the same stack).
    ura = tuple(layout[p + 1] for p in wall.dora_indicators)
    start = hand.state
    deposit = start.rules.scoring.riichi_deposit
    return HandLog(
        round_index=start.round_index,
        dealer=start.dealer,
        honba=start.honba,
        sticks=start.kyoutaku // deposit if deposit else 0,
        scores=start.scores,
        haipai=tuple(tuple(h) for h in hand.haipai),
        actions=tuple(hand.actions),
        dora=dora,
        ura=ura,
        result=result,
    )


def game_log(
    rules: HouseRules, events: Iterable[ev.Event], names: Sequence[str] | None = None
) -> GameLog:
    """The settled hands of a game from its events (a leading ``start`` is ignored).

    Raises :class:`ExportError` naming the hand when a settled hand cannot be written
    with its tiles: played without tile readers, a discard or meld without tile ids, a
    tile a seat does not hold.  Kantan (own walls, calls on one's own turn) has no form
    in these logs.  A hand still in progress at the end of the events is left out.
    """
    if rules.wall.own_walls:
        raise ExportError(
            f"{rules.name}: own walls and calls on one's own turn (kantan) have no"
            " tenhou.net/6 or mjai form"
        )
    players = rules.players
    if names is not None and len(names) != players:
        raise ExportError(f"{len(names)} player names for a {players}-player game")
    tiles = tile_set(rules)
    state = initial_state(rules)
    hands: list[HandLog] = []
    hand: _Hand | None = None
    count = 0
    undo_to: _Hand | None = None
    for event in events:
        if isinstance(event, ev.Start):
            continue
        after, effects = step(state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue  # refused: changes nothing, as in a replay
        if isinstance(event, ev.Dice) and state.wall is None and after.wall is not None:
            count += 1
            hand = _Hand(number=count, state=state, seats=players)
        if hand is not None and any(isinstance(e, HandSettled) for e in effects):
            undo_to = copy.deepcopy(hand)
        for effect in effects:
            if hand is None:
                break
            if isinstance(effect, Payment):
                hand.paid = [p + d for p, d in zip(hand.paid, effect.deltas, strict=True)]
                if effect.reason == "riichi" and hand.problem is None:
                    seat = next(i for i, d in enumerate(effect.deltas) if d < 0)
                    hand.actions.append(RiichiAccepted(seat))
            elif isinstance(effect, Noted) and effect.what == "riichi" and hand.problem is None:
                assert isinstance(event, ev.Riichi)
                _riichi(hand, event.seat, state.wall)
        if hand is not None:
            _tile_event(hand, event, state, after)
        for effect in effects:
            if isinstance(effect, HandSettled):
                if hand is None:
                    count += 1
                    name = hand_name(state.round_index, state.dealer, state.honba)
                    raise ExportError(
                        f"hand {count} ({name}): it was played without tile readers (no dice"
                        " and wall layout); tenhou.net/6 and mjai logs need every tile"
                    )
                hands.append(_settle(hand, effect.record, event, state, tiles))
                hand = None
            elif isinstance(effect, HandUndone):
                hands.pop()
                hand, undo_to = undo_to, None
        state = after
    default = [f"seat {i}" for i in range(players)]
    return GameLog(
        rules=rules,
        tiles=tiles,
        names=tuple(names) if names is not None else tuple(default),
        hands=tuple(hands),
        final=state.final,
    )
