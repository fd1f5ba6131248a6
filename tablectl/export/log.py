"""A game's hands as the tiles moved: the neutral record both log formats are written from.

:func:`game_log` runs a game's events through the rules core (as ``tablectl replay``
does: a refused event is skipped) and reads every hand off the core's own tile state
(``GameState.tiles``, docs/tiles.md "The tile tracker"): the tracker has already checked
that each tile is where the events say, so here the accepted events are only written down
in order, from what each one changed.  A win is scored again from its tiles
(:func:`tablectl.rules.tilechecks.win_context`, :func:`tablectl.rules.tilescoring.score_win`) for
the yaku the logs list.

Deltas here follow the online logs, not the replay output: what the hand's result moved
(honba and the deposits collected included), *without* the riichi sticks and other
deposits paid to the table during the hand (those show in the next hand's start scores).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from tablectl.rules import events as ev
from tablectl.rules import tilechecks
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
    Payment,
    initial_state,
)
from tablectl.rules.tilescoring import score_win
from tablectl.rules.tiletracker import TileState
from tablectl.rules.wall import DEAL
from tablectl.tiles.hand import HandScore, Meld
from tablectl.tiles.ids import TileSet, tile_set

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

NO_TILES = "tenhou.net/6 and mjai logs need every tile"


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
    """A chi, pon or open kan: ``seat`` took ``called`` from ``source`` and showed ``own``.

    Kantan (鳴いた牌を河から持って来ないで、代わりに山の牌を加える): the called tile stays in
    the discarder's river and ``stand_in``, the next tile of the caller's own wall, lies
    in its place in the meld (it never enters the hand)."""

    seat: int
    kind: ev.CallKind
    source: int
    called: int
    own: tuple[int, ...]
    stand_in: int | None = None


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
    tsumo), whether it is in riichi, this win's share of the hand's deltas, and the
    scorer's reading of its tiles (``score``: the yaku; None if it found none) with whether
    the hand was open."""

    seat: int
    source: int
    tsumo: bool
    hand: ev.Hand
    riichi: bool
    deltas: tuple[int, ...]
    score: HandScore | None = None
    opened: bool = False


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


@dataclass
class _Hand:
    """The hand in progress: where it started, the dealt tiles once the deal is done, what
    happened since and what each seat paid to the table during it."""

    number: int
    start: GameState
    haipai: tuple[tuple[int, ...], ...] | None = None
    actions: list[Action] = field(default_factory=list)
    paid: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        start = self.start
        return f"hand {self.number} ({hand_name(start.round_index, start.dealer, start.honba)})"

    def copy(self) -> _Hand:
        """A copy that later actions do not change (what an undo goes back to)."""
        return replace(self, actions=list(self.actions))


def _own(meld: Meld) -> tuple[int, ...]:
    """The caller's own tiles of a called meld."""
    return tuple(t for t in meld.tiles if t != meld.called)


def _called(seat: int, kind: ev.CallKind, meld: Meld) -> Call:
    assert meld.called is not None and meld.source is not None, meld
    return Call(seat, kind, meld.source, meld.called, _own(meld))


def _moves(event: ev.Event, old: TileState, new: TileState) -> list[Action]:
    """What an accepted event did to the tiles, read off the tracker's state after it."""
    match event:
        case ev.Take(seat=seat) if new.draw_source != "stand_in":
            tile = new.seats[seat].drawn
            assert tile is not None, (event, new.draw_source)
            return [Draw(seat, tile, rinshan=new.draw_source != "live")]
        case ev.Discard(seat=seat):
            river = new.seats[seat].discards[-1]
            return [Discard(seat, river.tile, tsumogiri=river.drawn, riichi=river.riichi)]
        case ev.Call(seat=seat, kind=kind):
            return [_called(seat, kind, new.seats[seat].melds[-1])]
        case ev.Kan(seat=seat, kind="closed"):
            return [ClosedKan(seat, new.seats[seat].melds[-1].tiles)]
        case ev.Kan(seat=seat, tiles=(tile,)):
            melds = zip(old.seats[seat].melds, new.seats[seat].melds, strict=True)
            pon = next(was for was, now in melds if was != now)
            return [AddedKan(seat, tile, _called(seat, "pon", pon))]
        case ev.North(seat=seat, tile=tile) if tile is not None:
            return [NorthPull(seat, tile)]
    return []


def _riichi_after_discard(hand: _Hand, seat: int) -> None:
    """Riichi reported right after its declaration tile: mark that discard."""
    at = max(i for i, a in enumerate(hand.actions) if isinstance(a, Discard) and a.seat == seat)
    declared = hand.actions[at]
    assert isinstance(declared, Discard)
    hand.actions[at] = replace(declared, riichi=True)


def _follow(hand: _Hand, event: ev.Event, before: GameState, after: GameState) -> None:
    """Write down one accepted event of a hand with tiles (nothing for one without)."""
    old, new, wall = before.tiles, after.tiles, before.wall
    if old is None or new is None or wall is None:
        return  # the layout that starts the tiles, a hand without them, or its result
    if wall.phase == DEAL:
        if after.wall is not None and after.wall.phase != DEAL:
            hand.haipai = tuple(st.concealed for st in new.seats)
        return
    if isinstance(event, ev.Riichi):
        st = new.seats[event.seat]
        if st.riichi and not st.riichi_pending and not old.seats[event.seat].riichi:
            _riichi_after_discard(hand, event.seat)
        return
    if isinstance(event, ev.Take) and new.draw_source == "stand_in":
        _stand_in(hand, event.seat, new.seats[event.seat].melds[-1].stand_in)
        return
    hand.actions += _moves(event, old, new)
    hand.actions += [DoraRevealed(t) for t in new.dora[len(old.dora) :]]


def _stand_in(hand: _Hand, seat: int, tile: int | None) -> None:
    """Kantan: the take after a call lies in the called tile's place: mark that call."""
    at = max(i for i, a in enumerate(hand.actions) if isinstance(a, Call) and a.seat == seat)
    call = hand.actions[at]
    assert isinstance(call, Call) and tile is not None, (call, tile)
    hand.actions[at] = replace(call, stand_in=tile)


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


def _win(
    before: GameState, hand: ev.Hand, source: int, deltas: tuple[int, ...], *, tsumo: bool
) -> Win:
    """One win, with the scorer's reading of its tiles."""
    ctx = tilechecks.win_context(before.rules, before, hand.seat, tsumo, None if tsumo else source)
    score = score_win(before.rules, ctx)
    return Win(
        seat=hand.seat,
        source=source,
        tsumo=tsumo,
        hand=hand,
        riichi=ctx.riichi,
        deltas=deltas,
        score=score if isinstance(score, HandScore) else None,
        opened=any(m.opened for m in ctx.melds),
    )


def _result(
    record: HandRecord, event: ev.Event, before: GameState, paid: Sequence[int]
) -> HandResult:
    total = tuple(d - p for d, p in zip(record.deltas, paid, strict=True))
    detail = record.detail
    if record.result == "ron":
        assert isinstance(event, ev.Ron)
        winners = [int(s) for s in detail["winners"]]
        source = int(detail["from"][0])
        hands = {h.seat: h for h in event.winners}
        shares = _win_shares(before, event, winners, total)
        wins = tuple(
            _win(before, hands[seat], source, share, tsumo=False)
            for seat, share in zip(winners, shares, strict=True)
        )
        return HandResult("ron", total, wins=wins)
    if record.result == "tsumo":
        assert isinstance(event, ev.Tsumo)
        seat = event.hand.seat
        return HandResult("tsumo", total, wins=(_win(before, event.hand, seat, total, tsumo=True),))
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


def _settle(hand: _Hand, record: HandRecord, event: ev.Event, before: GameState) -> HandLog:
    tiles = before.tiles
    if tiles is None:
        raise ExportError(
            f"{hand.name}: it was played without tile readers (no wall layout after the"
            f" dice); {NO_TILES}"
        )
    start = hand.start
    deposit = start.rules.scoring.riichi_deposit
    return HandLog(
        round_index=start.round_index,
        dealer=start.dealer,
        honba=start.honba,
        sticks=start.kyoutaku // deposit if deposit else 0,
        scores=start.scores,
        # A hand ended during the deal (a chombo) shows the tiles dealt so far.
        haipai=hand.haipai or tuple(st.concealed for st in tiles.seats),
        actions=tuple(hand.actions),
        dora=tiles.dora,
        ura=tiles.ura,
        result=_result(record, event, before, hand.paid),
    )


def game_log(
    rules: HouseRules, events: Iterable[ev.Event], names: Sequence[str] | None = None
) -> GameLog:
    """The settled hands of a game from its events (a leading ``start`` is ignored).

    Raises :class:`ExportError` naming the hand when a settled hand was played without
    tile readers (no dice and layout: the core then knows no tiles).  A hand still in
    progress at the end of the events is left out.
    """
    players = rules.players
    if names is not None and len(names) != players:
        raise ExportError(f"{len(names)} player names for a {players}-player game")
    state = initial_state(rules)
    hands: list[HandLog] = []
    hand: _Hand | None = None
    undo_to: _Hand | None = None
    count = 0
    for event in events:
        if isinstance(event, ev.Start):
            continue
        after, effects = step(state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue  # refused: changes nothing, as in a replay
        if isinstance(event, ev.Dice) and state.wall is None and after.wall is not None:
            count += 1
            hand = _Hand(number=count, start=state, paid=(0,) * players)
        if hand is not None and any(isinstance(e, HandSettled) for e in effects):
            # An undo goes back to the state before this event: so does the hand.
            undo_to = hand.copy()
        for effect in effects:
            if hand is not None and isinstance(effect, Payment):
                hand.paid = tuple(p + d for p, d in zip(hand.paid, effect.deltas, strict=True))
                if effect.reason == "riichi":
                    seat = next(i for i, d in enumerate(effect.deltas) if d < 0)
                    hand.actions.append(RiichiAccepted(seat))
        if hand is not None:
            _follow(hand, event, state, after)
        for effect in effects:
            if isinstance(effect, HandSettled):
                if hand is None:
                    count += 1
                    name = hand_name(state.round_index, state.dealer, state.honba)
                    raise ExportError(
                        f"hand {count} ({name}): it was played without tile readers (no dice"
                        f" and wall layout); {NO_TILES}"
                    )
                hands.append(_settle(hand, effect.record, event, state))
                hand = None
            elif isinstance(effect, HandUndone):
                hands.pop()
                hand, undo_to = undo_to, None
        state = after
    default = [f"seat {i}" for i in range(players)]
    return GameLog(
        rules=rules,
        tiles=tile_set(rules),
        names=tuple(names) if names is not None else tuple(default),
        hands=tuple(hands),
        final=state.final,
    )
