"""The wall tracker: dice, break, the 14-tile dead wall, rinshan and haitei.

A pure state machine (no I/O, clock or randomness) that follows one hand from the
table's take sensors.  :func:`start_wall` begins a hand from the dice,
:func:`wall_step` applies one wall event (:class:`~tablectl.rules.events.Deal`,
``Take``, ``Discard``, ``Call``, ``Kan``, ``North``) and answers with the new
:class:`WallState` or a :class:`~tablectl.rules.refusal.Refusal` (the old state is
then unchanged, since states are immutable).  The ``check_*`` helpers let the rules
core refuse riichi, tsumo, ron, exhaustive and abortive draws that the wall
contradicts.

Wall numbering (see ``docs/wall.md`` for the picture).  Positions are fixed to the
table, not to the break, so a firmware author can map them to sensors once:

* four players: 136 positions, four walls of 17 stacks; the wall in front of seat
  ``s`` holds stacks ``s*17 .. s*17+16``; stack ``k`` of that wall is counted from the
  wall's right end *as its owner sees it* (the draw direction), and holds position
  ``2*stack`` (top tile) and ``2*stack + 1`` (bottom tile);
* three players: 108 positions, three walls of 18 stacks (stacks ``s*18 .. s*18+17``);
* kantan (own walls): the four-player numbering; each seat deals and draws from its own
  wall, from its right end.

Seats go counter-clockwise (``s -> (s + 1) % players`` is the next player, on the right),
so walls are drawn clockwise: after the left end of seat ``s``'s wall comes the right end
of seat ``s - 1``'s wall.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from tablectl.rules.events import Call, Deal, Dice, Discard, Kan, Layout, North, Take, WallEvent
from tablectl.rules.refusal import Refusal

# --------------------------------------------------------------------------- codes

BAD_DICE = "bad_dice"
NO_WALL = "no_wall"
NO_SUCH_SEAT = "no_such_seat"
NOT_DEALT = "not_dealt"
DEAL_DONE = "deal_done"
LAYOUT_LATE = "layout_late"
DICE_IN_HAND = "dice_in_hand"
DEAD_WALL_TAKE = "dead_wall_take"
OUT_OF_TURN = "out_of_turn"
WRONG_POSITION = "wrong_position"
WALL_EXHAUSTED = "wall_exhausted"
WALL_NOT_EXHAUSTED = "wall_not_exhausted"
MUST_DISCARD = "must_discard"
MUST_TAKE = "must_take"
NOT_DRAWN = "not_drawn"
NO_DISCARD = "no_discard"
WRONG_DISCARDER = "wrong_discarder"
CHI_NOT_ALLOWED = "chi_not_allowed"
CHI_NOT_NEXT = "chi_not_next"
NO_MELD_ROOM = "no_meld_room"
HAITEI_CALL = "haitei_call"
KAN_NOT_ALLOWED = "kan_not_allowed"
FIFTH_KAN = "fifth_kan"
FOUR_KANS_ABORT = "four_kans_abort"
NORTH_NOT_ALLOWED = "north_not_allowed"
RIICHI_NO_DRAW_LEFT = "riichi_no_draw_left"
NOT_LAST_DISCARD = "not_last_discard"
ABORT_NOT_MET = "abort_not_met"

#: Every refusal code this module can answer with.
REFUSAL_CODES = (
    BAD_DICE,
    NO_WALL,
    NO_SUCH_SEAT,
    NOT_DEALT,
    DEAL_DONE,
    DICE_IN_HAND,
    DEAD_WALL_TAKE,
    OUT_OF_TURN,
    WRONG_POSITION,
    WALL_EXHAUSTED,
    WALL_NOT_EXHAUSTED,
    MUST_DISCARD,
    MUST_TAKE,
    NOT_DRAWN,
    NO_DISCARD,
    WRONG_DISCARDER,
    CHI_NOT_ALLOWED,
    CHI_NOT_NEXT,
    NO_MELD_ROOM,
    HAITEI_CALL,
    KAN_NOT_ALLOWED,
    FIFTH_KAN,
    FOUR_KANS_ABORT,
    NORTH_NOT_ALLOWED,
    RIICHI_NO_DRAW_LEFT,
    NOT_LAST_DISCARD,
    ABORT_NOT_MET,
)

# --------------------------------------------------------------------------- geometry

DEAD_WALL_TILES = 14
DEAD_WALL_STACKS = 7
#: Replacement tiles taken from the break end of the dead wall (two stacks).
RINSHAN_STACKS = 2
#: The first dora indicator is the top tile of this stack counted from the break end.
DORA_STACK = 3
MAX_KANS = 4
NORTH_TILES = 4
MAX_MELDS = 4
HAND_TILES = 13
DEAL_BLOCK = 4

Phase = Literal["deal", "take", "claim", "rinshan", "discard", "called"]
KanDora = Literal["immediate", "after_discard", "none"]
KanType = Literal["open", "closed", "added"]

DEAL: Phase = "deal"
TAKE: Phase = "take"
CLAIM: Phase = "claim"
RINSHAN: Phase = "rinshan"
DISCARD: Phase = "discard"
CALLED: Phase = "called"


@dataclass(frozen=True, slots=True)
class WallRules:
    """What the wall tracker needs from a preset (the lead maps preset options onto it).

    Suggested mapping (see docs/wall.md): ariari ``four_kan_abort=True,
    haitei_discard_callable=False, kokushi_closed_kan_ron=True``; jboy defaults;
    jboy-sanma ``players=3``; kenko ``riichi_needs_draw_left=False``; sanma-free
    ``players=3, four_kan_abort=True, north_pulls=True, riichi_needs_draw_left=False``;
    kantan ``own_walls=True, kans_allowed=False, kan_dora="none",
    riichi_needs_draw_left=False``.
    """

    #: 4, or 3 for three-player (108 tiles in three walls of 18 stacks).
    players: int = 4
    #: Kantan: every player deals and draws from the wall in front of them; no dead wall,
    #: no kans; calls and ron happen on the caller's own turn and a called tile is
    #: replaced by a tile from the caller's own wall.
    own_walls: bool = False
    #: Kantan: the hand ends when every player has made this many discards.
    own_wall_discards: int = 18
    #: Kans (open, closed, added) may be made at all.  False in kantan.
    kans_allowed: bool = True
    #: Four kans by two or more players end the hand in an abortive draw once the fourth
    #: kan's maker has discarded (unless that discard is ronned).  A fifth kan is always
    #: refused, whatever this says.
    four_kan_abort: bool = False
    #: When a kan's new dora indicator is turned: ``"immediate"`` (at the kan),
    #: ``"after_discard"`` (closed kan at once, open and added kans after the kan maker's
    #: discard) or ``"none"`` (no kan dora).
    kan_dora: KanDora = "immediate"
    #: Whether an added kan turns its kan dora before the chankan chance has passed.  False
    #: (every seed that says anything): the indicator waits until the kan maker takes the
    #: replacement tile, so a chankan ron never sees it.
    kan_dora_on_chankan: bool = False
    #: Whether the last discard of the hand (the one made after the haitei draw, the
    #: houtei tile) may be chi'd or pon'd.  Ariari's 海底牌は鳴けない reads as False.  Ron
    #: on it is always allowed, and an open kan on it is always refused (no live tile is
    #: left to keep the dead wall at 14).
    haitei_discard_callable: bool = True
    #: Riichi needs another own draw to come: at least ``players`` live tiles left.
    riichi_needs_draw_left: bool = True
    #: Sanma-free: norths are pulled as nuki-dora, one at a time, each replaced from the
    #: dead wall; a pulled north counts as a discard (pon and ron allowed on it).
    north_pulls: bool = False
    #: Whether chi exists (many three-player rules have no chi).
    chi_allowed: bool = True
    #: Ron off a closed kan (kokushi musou only; ariari allows it, jboy and kenko not).
    kokushi_closed_kan_ron: bool = False

    def __post_init__(self) -> None:
        if self.players not in (3, 4):
            raise ValueError(f"players must be 3 or 4, got {self.players}")
        if self.own_walls and self.own_wall_discards < 1:
            raise ValueError("own_wall_discards must be positive")
        if self.own_walls and HAND_TILES + self.own_wall_discards > 2 * _stacks_per_wall(self):
            raise ValueError("own_wall_discards does not fit in one player's wall")


def _stacks_per_wall(rules: WallRules) -> int:
    # 4 x 17 x 2 = 136; three-player tables build 3 x 18 x 2 = 108.
    return 17 if rules.players == 4 else 18


def positions_per_wall(rules: WallRules) -> int:
    """Positions in one seat's wall: 34 with four players, 36 with three."""
    return _stacks_per_wall(rules) * 2


def total_tiles(rules: WallRules) -> int:
    """How many tiles (positions) the table's walls hold for these rules."""
    return rules.players * _stacks_per_wall(rules) * 2


def break_wall(rules: WallRules, dealer: int, total: int) -> int:
    """The seat whose wall is broken for a dice ``total``, counting the dealer as 1.

    Four players: 5/9 the dealer, 2/6/10 the right player, 3/7/11 across, 4/8/12 left.
    Three players (three walls): 1/4/7/10 the dealer, 2/5/8/11 the right, 3/6/9/12 the left.
    """
    return (dealer + total - 1) % rules.players


def _next_stack(rules: WallRules, stack: int) -> int:
    # Clockwise: from a wall's left end to the right end of the previous seat's wall.
    per = _stacks_per_wall(rules)
    wall, k = divmod(stack, per)
    if k < per - 1:
        return stack + 1
    return ((wall - 1) % rules.players) * per


def _draw_order(rules: WallRules, dealer: int, total: int) -> tuple[int, ...]:
    """All positions in draw order: the live wall from the break, the dead wall last."""
    per = _stacks_per_wall(rules)
    stack = break_wall(rules, dealer, total) * per + total  # first stack left of the break
    out: list[int] = []
    for _ in range(rules.players * per):
        out += [2 * stack, 2 * stack + 1]
        stack = _next_stack(rules, stack)
    if rules.players == 3:
        # Three-player chonchon: the dealer's 14th tile is the top of the stack after the
        # next one (the round-4 tiles fill only one and a half stacks), so the dealer's
        # first draw and the right player's first draw swap places in the draw order.
        first = HAND_TILES * rules.players
        out[first], out[first + 1] = out[first + 1], out[first]
    return tuple(out)


def _own_order(rules: WallRules) -> tuple[int, ...]:
    # Kantan: each wall from its own right end, seat by seat.
    return tuple(range(total_tiles(rules)))


def _own_pos(rules: WallRules, seat: int, index: int) -> int:
    return seat * _stacks_per_wall(rules) * 2 + index


# --------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class WallState:
    """Where the hand stands in the wall.  Immutable; every step returns a new state.

    ``phase`` says what ``turn`` must do next:

    * ``"deal"``: the deal is under way (``deal_step`` blocks taken); ``turn`` takes next;
    * ``"take"``: ``turn`` must take from the wall (dealer's first draw; kantan: the tile
      replacing a called one); no claim is open;
    * ``"claim"``: ``last_discard`` just discarded; ``turn`` (the next seat) takes next,
      unless another seat calls or rons that discard;
    * ``"rinshan"``: ``turn`` must take the replacement tile after ``replacing`` (a kan or a
      north pull); chankan / ron on the pulled north is possible until then;
    * ``"discard"``: ``turn`` has just drawn (``last_take``) and may tsumo, riichi, kan,
      pull a north or discard;
    * ``"called"``: ``turn`` called chi or pon and must discard.
    """

    players: int
    dealer: int
    dice: tuple[int, int]
    #: Seat whose wall was broken (None in kantan: no break).
    break_seat: int | None
    #: Global stack index of the first live stack (left of the break); None in kantan.
    break_stack: int | None
    #: Every position in draw order (kantan: seat by seat).
    order: tuple[int, ...]
    phase: Phase
    turn: int
    deal_step: int = 0
    #: Index into ``order`` of the next live tile and the live wall's end (exclusive).
    next_live: int = 0
    live_end: int = 0
    #: Positions taken, in the order they were taken, and by whom.
    taken: tuple[int, ...] = ()
    taken_by: tuple[int, ...] = ()
    #: Untaken dead wall positions (14 in play; kantan: the tiles no draw reaches).
    dead_wall: tuple[int, ...] = ()
    #: Replacement (rinshan) tiles taken so far.
    rinshan_taken: int = 0
    replacing: Literal["kan", "north"] | None = None
    last_take: Literal["deal", "live", "rinshan"] | None = None
    last_discard: int | None = None
    discards: tuple[int, ...] = ()
    #: Live draws per seat after the deal (used by kantan's own walls).
    draws: tuple[int, ...] = ()
    kans: tuple[int, ...] = ()
    #: Pons per seat not yet turned into added kans (an added kan needs one).
    pons: tuple[int, ...] = ()
    #: Melds per seat (chi, pon, kans of any kind): at most four.
    melds: tuple[int, ...] = ()
    norths: tuple[int, ...] = ()
    last_kan: KanType | None = None
    last_kan_seat: int | None = None
    #: Revealed dora indicator positions, the first one first.
    dora_indicators: tuple[int, ...] = ()
    #: A kan dora owed and when it will be turned (``"rinshan"``: when the kan maker takes
    #: the replacement tile; ``"discard"``: at the kan maker's discard).
    kan_dora_due: Literal["rinshan", "discard"] | None = None
    #: Four kans by two or more players under a four-kan-abort preset.
    four_kans_pending: bool = False
    #: Any chi, pon or kan made this hand (ends the uninterrupted first go-around).
    any_call: bool = False
    #: Kantan: the seat called and still takes the wall tile that stands for the call.
    replacing_call: bool = False
    own_walls: bool = False
    own_wall_discards: int = 0

    @property
    def tiles(self) -> int:
        """How many tiles the table holds (136 or 108)."""
        return len(self.order)

    @property
    def live_left(self) -> int:
        """Untaken tiles outside the dead wall (kantan: within the seats' reach, 31 a wall)."""
        if self.own_walls:
            return (HAND_TILES + self.own_wall_discards) * self.players - len(self.taken)
        return self.live_end - self.next_live

    @property
    def dead(self) -> int:
        """Tiles in the dead wall (14 throughout a hand; kantan: the unreached tiles)."""
        return len(self.dead_wall)

    @property
    def total_kans(self) -> int:
        """Kans made this hand, all seats."""
        return sum(self.kans)

    @property
    def live_positions(self) -> tuple[int, ...]:
        """The untaken live positions in draw order (kantan: seat by seat)."""
        if self.own_walls:
            per = len(self.order) // self.players
            reach = HAND_TILES + self.own_wall_discards
            taken = set(self.taken)
            return tuple(
                seat * per + i
                for seat in range(self.players)
                for i in range(reach)
                if seat * per + i not in taken
            )
        return self.order[self.next_live : self.live_end]

    @property
    def haitei_position(self) -> int | None:
        """The last live tile (the haitei), or None once it is drawn (kantan: None)."""
        if self.own_walls or self.live_left == 0:
            return None
        return self.order[self.live_end - 1]

    @property
    def finished(self) -> bool:
        """The wall is done: no live tile left and the last discard made.

        An exhaustive draw may then be declared (``check_draw`` accepts).
        """
        if self.own_walls:
            return all(d >= self.own_wall_discards for d in self.discards)
        return self.phase == CLAIM and self.live_left == 0

    @property
    def four_kans_abort_due(self) -> bool:
        """The fourth kan (by two or more players) is complete: only ron or the abort now."""
        return self.four_kans_pending and self.phase == CLAIM


# --------------------------------------------------------------------------- helpers


def _refuse(code: str, message: str) -> Refusal:
    return Refusal(code, message)


def _bump(values: tuple[int, ...], seat: int, by: int = 1) -> tuple[int, ...]:
    return values[:seat] + (values[seat] + by,) + values[seat + 1 :]


def _seat_ok(state: WallState, seat: int, what: str = "seat") -> Refusal | None:
    if 0 <= seat < state.players:
        return None
    return _refuse(NO_SUCH_SEAT, f"no {what} {seat}: seats are 0..{state.players - 1}")


def _dead_positions(order: tuple[int, ...], live_end: int, taken: set[int]) -> tuple[int, ...]:
    return tuple(p for p in order[live_end:] if p not in taken)


def _deal_blocks(rules: WallRules, state: WallState) -> list[tuple[int, tuple[int, ...]]]:
    """The deal as (seat, positions) steps: 4-4-4 blocks, then one tile each (4-4-4-1)."""
    players = rules.players
    steps: list[tuple[int, tuple[int, ...]]] = []
    for rnd in range(3):
        for i in range(players):
            seat = (state.dealer + i) % players
            if rules.own_walls:
                block = tuple(_own_pos(rules, seat, rnd * DEAL_BLOCK + j) for j in range(4))
            else:
                start = (rnd * players + i) * DEAL_BLOCK
                block = state.order[start : start + DEAL_BLOCK]
            steps.append((seat, block))
    for i in range(players):
        seat = (state.dealer + i) % players
        if rules.own_walls:
            steps.append((seat, (_own_pos(rules, seat, 3 * DEAL_BLOCK),)))
        else:
            steps.append((seat, (state.order[3 * DEAL_BLOCK * players + i],)))
    return steps


def _dora_position(state: WallState, index: int) -> int:
    """Indicator ``index`` (0 = the first, 1..4 = kan dora): top of stack 3+index from the
    break end of the dead wall."""
    n = len(state.order)
    return state.order[n - 2 * (DORA_STACK + index)]


def _rinshan_position(state: WallState) -> int | None:
    """Where the next replacement tile comes from, or None when there is none."""
    n = len(state.order)
    k = state.rinshan_taken
    if k < 2 * RINSHAN_STACKS:
        # Break end first: stack 1 top, stack 1 bottom, stack 2 top, stack 2 bottom.
        stack_from_end, level = divmod(k, 2)
        return state.order[n - 2 * (stack_from_end + 1) + level]
    # Only three-player north pulls get here (four kans use four replacement tiles).  The
    # dead wall's far end is the tile the live wall has just handed over, so the
    # replacement is that tile; the dora stacks and their ura tiles stay untouched.
    if state.live_left > 0:
        return state.order[state.live_end - 1]
    taken = set(state.taken)
    for pos in state.order[state.live_end :]:
        if pos not in taken:
            return pos
    return None  # pragma: no cover - eight replacements never empty the dead wall


def _reveal(rules: WallRules, state: WallState) -> WallState:
    """Turn the next kan dora indicator."""
    if rules.kan_dora == "none" or rules.own_walls:
        return state
    pos = _dora_position(state, len(state.dora_indicators))
    return replace(state, dora_indicators=(*state.dora_indicators, pos), kan_dora_due=None)


def _flush_dora(rules: WallRules, state: WallState) -> WallState:
    return _reveal(rules, state) if state.kan_dora_due is not None else state


# --------------------------------------------------------------------------- start


def start_wall(rules: WallRules, dealer: int, dice: tuple[int, int]) -> WallState | Refusal:
    """Begin tracking a hand: the dealer rolled ``dice``; the deal comes next.

    Refuses ``bad_dice`` (a die not 1..6) and ``no_such_seat`` (dealer out of range).
    """
    if len(dice) != 2 or any(d < 1 or d > 6 for d in dice):
        return _refuse(BAD_DICE, f"dice must be two values 1..6, got {list(dice)}")
    if not 0 <= dealer < rules.players:
        return _refuse(NO_SUCH_SEAT, f"no dealer seat {dealer}: seats are 0..{rules.players - 1}")
    total = dice[0] + dice[1]
    zeros = (0,) * rules.players
    if rules.own_walls:
        order = _own_order(rules)
        per = _stacks_per_wall(rules) * 2
        first = HAND_TILES + rules.own_wall_discards
        # The tiles past the last draw of each wall never come into play.
        dead = tuple(s * per + i for s in range(rules.players) for i in range(first, per))
        return WallState(
            players=rules.players,
            dealer=dealer,
            dice=(dice[0], dice[1]),
            break_seat=None,
            break_stack=None,
            order=order,
            phase=DEAL,
            turn=dealer,
            dead_wall=dead,
            # Reading: the indicator is the top tile of the last stack of the dealer's wall.
            dora_indicators=(dealer * per + per - 2,),
            discards=zeros,
            draws=zeros,
            kans=zeros,
            pons=zeros,
            melds=zeros,
            norths=zeros,
            own_walls=True,
            own_wall_discards=rules.own_wall_discards,
        )
    order = _draw_order(rules, dealer, total)
    n = len(order)
    bseat = break_wall(rules, dealer, total)
    state = WallState(
        players=rules.players,
        dealer=dealer,
        dice=(dice[0], dice[1]),
        break_seat=bseat,
        break_stack=bseat * _stacks_per_wall(rules) + total,
        order=order,
        phase=DEAL,
        turn=dealer,
        next_live=0,
        live_end=n - DEAD_WALL_TILES,
        dead_wall=order[n - DEAD_WALL_TILES :],
        discards=zeros,
        draws=zeros,
        kans=zeros,
        pons=zeros,
        melds=zeros,
        norths=zeros,
    )
    return replace(state, dora_indicators=(_dora_position(state, 0),))


# --------------------------------------------------------------------------- steps


def no_wall_refusal(event: WallEvent) -> Refusal:
    """The refusal for a wall event in a hand with no dice (a score-keeping table)."""
    name = type(event).__name__.lower()
    return _refuse(NO_WALL, f"a {name} event needs the dice first: no wall is tracked this hand")


def wall_step(rules: WallRules, state: WallState, event: WallEvent) -> WallState | Refusal:
    """Apply one wall event; a Refusal leaves ``state`` as it was.

    ``Dice`` is refused (``dice_in_hand``): a new hand starts with :func:`start_wall`.
    """
    if isinstance(event, Dice):
        return _refuse(DICE_IN_HAND, "the dice were already rolled for this hand")
    if isinstance(event, Layout):
        # The wall tracker needs no tiles; the tile tracker (tablectl.tiles) reads them.
        if state.phase != DEAL or state.taken:
            return _refuse(LAYOUT_LATE, "the wall layout comes right after the dice")
        return state
    if isinstance(event, Deal):
        return _deal(rules, state)
    if isinstance(event, Take):
        return _take(rules, state, event.seat, event.pos)
    if isinstance(event, Discard):
        return _discard(rules, state, event.seat)
    if isinstance(event, Call):
        return _call(rules, state, event)
    if isinstance(event, Kan):
        return _kan(rules, state, event)
    return _north(rules, state, event)


def _deal(rules: WallRules, state: WallState) -> WallState | Refusal:
    if state.phase != DEAL:
        return _refuse(DEAL_DONE, "the starting hands were already dealt")
    if state.deal_step:
        return _refuse(
            DEAL_DONE, f"the deal is already under way by takes ({state.deal_step} taken)"
        )
    taken: list[int] = []
    by: list[int] = []
    for seat, block in _deal_blocks(rules, state):
        taken += block
        by += [seat] * len(block)
    steps = len(_deal_blocks(rules, state))
    return _after_deal(rules, replace(state, taken=tuple(taken), taken_by=tuple(by)), steps)


def _after_deal(rules: WallRules, state: WallState, steps: int) -> WallState:
    live_start = 0 if rules.own_walls else HAND_TILES * rules.players
    return replace(
        state,
        phase=TAKE,
        turn=state.dealer,
        deal_step=steps,
        next_live=live_start,
        last_take="deal",
    )


def _take(rules: WallRules, state: WallState, seat: int, pos: int | None) -> WallState | Refusal:
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if pos is not None and not 0 <= pos < state.tiles:
        return _refuse(
            WRONG_POSITION, f"no wall position {pos}: positions are 0..{state.tiles - 1}"
        )
    if pos is not None and pos in state.taken:
        return _refuse(WRONG_POSITION, f"position {pos} was already taken")
    dead_pos = pos is not None and pos in state.dead_wall
    if state.phase == DEAL:
        return _deal_take(rules, state, seat, pos, dead_pos)
    if state.phase == RINSHAN:
        return _rinshan_take(rules, state, seat, pos)
    if dead_pos:
        return _refuse(
            DEAD_WALL_TAKE,
            f"seat {seat} took position {pos} from the dead wall with no kan or north pending",
        )
    if state.phase in (DISCARD, CALLED):
        if seat == state.turn:
            return _refuse(MUST_DISCARD, f"seat {seat} holds a drawn tile and must discard first")
        return _refuse(OUT_OF_TURN, f"seat {seat} took, but seat {state.turn} must discard")
    if state.four_kans_abort_due:
        return _refuse(FOUR_KANS_ABORT, "four kans by several players: the hand is aborted")
    if rules.own_walls:
        return _own_take(rules, state, seat, pos)
    if state.live_left == 0:
        return _refuse(WALL_EXHAUSTED, f"seat {seat} took, but no live tile is left")
    if seat != state.turn:
        return _refuse(OUT_OF_TURN, f"seat {seat} took, but it is seat {state.turn}'s draw")
    expected = state.order[state.next_live]
    if pos is not None and pos != expected:
        return _refuse(
            WRONG_POSITION, f"seat {seat} took position {pos}; the next live tile is {expected}"
        )
    return replace(
        state,
        phase=DISCARD,
        next_live=state.next_live + 1,
        taken=(*state.taken, expected),
        taken_by=(*state.taken_by, seat),
        draws=_bump(state.draws, seat),
        last_take="live",
        last_discard=None,
    )


def _deal_take(
    rules: WallRules, state: WallState, seat: int, pos: int | None, dead_pos: bool
) -> WallState | Refusal:
    steps = _deal_blocks(rules, state)
    want_seat, block = steps[state.deal_step]
    if dead_pos:
        return _refuse(DEAD_WALL_TAKE, f"seat {seat} took position {pos} from the dead wall")
    if seat != want_seat:
        return _refuse(
            OUT_OF_TURN,
            f"seat {seat} took during the deal, but seat {want_seat} takes deal block "
            f"{state.deal_step + 1} (position {block[0]})",
        )
    if pos is not None and pos != block[0]:
        return _refuse(
            WRONG_POSITION,
            f"seat {seat} took position {pos}; deal block {state.deal_step + 1} starts at "
            f"{block[0]}",
        )
    step = state.deal_step + 1
    new = replace(
        state,
        deal_step=step,
        next_live=state.next_live + (0 if rules.own_walls else len(block)),
        taken=state.taken + block,
        taken_by=state.taken_by + (seat,) * len(block),
        turn=steps[step][0] if step < len(steps) else state.turn,
    )
    if step < len(steps):
        return new
    return _after_deal(rules, new, len(steps))


def _own_take(
    rules: WallRules, state: WallState, seat: int, pos: int | None
) -> WallState | Refusal:
    if seat != state.turn:
        return _refuse(OUT_OF_TURN, f"seat {seat} took, but it is seat {state.turn}'s draw")
    if state.draws[seat] >= rules.own_wall_discards:
        return _refuse(WALL_EXHAUSTED, f"seat {seat} has made all {rules.own_wall_discards} draws")
    expected = _own_pos(rules, seat, HAND_TILES + state.draws[seat])
    if pos is not None and pos != expected:
        return _refuse(
            WRONG_POSITION,
            f"seat {seat} took position {pos}; its own wall's next tile is {expected}",
        )
    return replace(
        state,
        phase=CALLED if state.replacing_call else DISCARD,
        replacing_call=False,
        taken=(*state.taken, expected),
        taken_by=(*state.taken_by, seat),
        draws=_bump(state.draws, seat),
        last_take="live",
    )


def _rinshan_take(
    rules: WallRules, state: WallState, seat: int, pos: int | None
) -> WallState | Refusal:
    if seat != state.turn:
        return _refuse(
            OUT_OF_TURN, f"seat {seat} took, but seat {state.turn} takes the replacement tile"
        )
    expected = _rinshan_position(state)
    if expected is None:  # pragma: no cover - see _rinshan_position
        return _refuse(WALL_EXHAUSTED, "no replacement tile is left in the dead wall")
    if pos is not None and pos != expected:
        return _refuse(
            WRONG_POSITION,
            f"seat {seat} took position {pos}; the replacement tile is {expected}",
        )
    # The live wall gives its last tile to the dead wall so the dead wall stays at 14.
    # With no live tile left (a north pulled on the haitei) there is nothing to give.
    live_end = state.live_end - 1 if state.live_left > 0 else state.live_end
    taken = (*state.taken, expected)
    new = replace(
        state,
        phase=DISCARD,
        live_end=live_end,
        taken=taken,
        taken_by=(*state.taken_by, seat),
        dead_wall=_dead_positions(state.order, live_end, set(taken)),
        rinshan_taken=state.rinshan_taken + 1,
        replacing=None,
        last_take="rinshan",
    )
    if new.kan_dora_due == "rinshan":
        new = _reveal(rules, new)
    return new


def _discard(rules: WallRules, state: WallState, seat: int) -> WallState | Refusal:
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no discard before the deal is complete")
    if seat != state.turn:
        return _refuse(OUT_OF_TURN, f"seat {seat} discarded, but it is seat {state.turn}'s turn")
    if state.phase == RINSHAN:
        return _refuse(MUST_TAKE, f"seat {seat} must take the replacement tile first")
    if state.phase in (TAKE, CLAIM):
        return _refuse(MUST_TAKE, f"seat {seat} must take a tile before discarding")
    new = replace(
        state,
        phase=CLAIM,
        turn=(seat + 1) % state.players,
        discards=_bump(state.discards, seat),
        last_discard=seat,
    )
    if new.kan_dora_due == "discard":
        new = _reveal(rules, new)
    return new


def _call(rules: WallRules, state: WallState, event: Call) -> WallState | Refusal:
    seat, kind, frm = event.seat, event.kind, event.discarder
    bad = _seat_ok(state, seat) or _seat_ok(state, frm, "discarder seat")
    if bad:
        return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no call before the deal is complete")
    if seat == frm:
        return _refuse(WRONG_DISCARDER, f"seat {seat} cannot call its own discard")
    if rules.own_walls:
        return _own_call(rules, state, seat, kind, frm)
    if state.phase == RINSHAN and state.replacing == "north" and frm == state.turn:
        # A pulled north counts as a discard: it may be ponned before the replacement.
        if kind != "pon":
            code = CHI_NOT_ALLOWED if kind == "chi" else KAN_NOT_ALLOWED
            return _refuse(code, f"a pulled north can only be ponned, not {kind}")
        if state.melds[seat] >= MAX_MELDS:
            return _refuse(NO_MELD_ROOM, f"seat {seat} already has four melds")
        return replace(
            state,
            phase=CALLED,
            turn=seat,
            replacing=None,
            pons=_bump(state.pons, seat),
            melds=_bump(state.melds, seat),
            any_call=True,
            last_discard=None,
        )
    if state.phase != CLAIM or state.last_discard is None:
        return _refuse(NO_DISCARD, f"seat {seat} called {kind}, but no discard is open to call")
    if frm != state.last_discard:
        return _refuse(
            WRONG_DISCARDER,
            f"seat {seat} called from seat {frm}; the last discard is seat {state.last_discard}'s",
        )
    if state.four_kans_abort_due:
        return _refuse(FOUR_KANS_ABORT, "four kans by several players: the hand is aborted")
    refusal = _meld_refusal(rules, state, seat, kind, frm)
    if refusal:
        return refusal
    if kind == "kan":
        refusal = _kan_refusal(rules, state, seat, "open kan")
        if refusal:
            return refusal
    elif state.live_left == 0 and not rules.haitei_discard_callable:
        return _refuse(HAITEI_CALL, f"the last discard (seat {frm}'s) cannot be called: {kind}")
    new = replace(
        state,
        turn=seat,
        melds=_bump(state.melds, seat),
        any_call=True,
        last_discard=None,
    )
    if kind == "kan":
        return _after_kan(rules, new, seat, "open")
    if kind == "pon":
        new = replace(new, pons=_bump(new.pons, seat))
    return replace(new, phase=CALLED)


def _meld_refusal(
    rules: WallRules, state: WallState, seat: int, kind: str, frm: int
) -> Refusal | None:
    """What stops ``seat`` from melding ``kind`` off seat ``frm`` (chi rules, meld room)."""
    if kind == "chi":
        if not rules.chi_allowed:
            return _refuse(CHI_NOT_ALLOWED, "these rules have no chi")
        if seat != (frm + 1) % state.players:
            return _refuse(
                CHI_NOT_NEXT,
                f"seat {seat} cannot chi from seat {frm}: only seat {(frm + 1) % state.players}",
            )
    if state.melds[seat] >= MAX_MELDS:
        return _refuse(NO_MELD_ROOM, f"seat {seat} already has four melds")
    return None


def _own_call(
    rules: WallRules, state: WallState, seat: int, kind: str, frm: int
) -> WallState | Refusal:
    # Kantan: pon (and chi) on your own turn, instead of the draw, on another player's
    # last discard; a wall tile from your own wall then stands for the called tile.
    if state.phase != CLAIM:
        return _refuse(NO_DISCARD, f"seat {seat} may call only at the start of its own turn")
    if seat != state.turn:
        return _refuse(
            OUT_OF_TURN,
            f"seat {seat} called {kind}; calls are made on your own turn (seat {state.turn}'s)",
        )
    if kind == "kan":
        return _refuse(KAN_NOT_ALLOWED, "these rules have no kans")
    if state.discards[frm] == 0:
        return _refuse(WRONG_DISCARDER, f"seat {frm} has not discarded yet")
    refusal = _meld_refusal(rules, state, seat, kind, frm)
    if refusal:
        return refusal
    if state.draws[seat] >= rules.own_wall_discards:
        return _refuse(WALL_EXHAUSTED, f"seat {seat} has no wall tile left to stand for a call")
    pons = _bump(state.pons, seat) if kind == "pon" else state.pons
    return replace(
        state,
        phase=TAKE,
        replacing_call=True,
        melds=_bump(state.melds, seat),
        pons=pons,
        any_call=True,
    )


def _kan_refusal(rules: WallRules, state: WallState, seat: int, what: str) -> Refusal | None:
    if not rules.kans_allowed or rules.own_walls:
        return _refuse(KAN_NOT_ALLOWED, "these rules have no kans")
    if state.total_kans >= MAX_KANS:
        return _refuse(FIFTH_KAN, f"seat {seat}'s {what} would be the fifth kan")
    if state.live_left == 0:
        return _refuse(
            KAN_NOT_ALLOWED,
            f"seat {seat} cannot make an {what}: no live tile is left to keep the dead wall at 14",
        )
    return None


def _after_kan(rules: WallRules, state: WallState, seat: int, kind: KanType) -> WallState:
    kans = _bump(state.kans, seat)
    makers = sum(1 for k in kans if k)
    new = replace(
        state,
        phase=RINSHAN,
        turn=seat,
        kans=kans,
        replacing="kan",
        any_call=True,
        last_kan=kind,
        last_kan_seat=seat,
        four_kans_pending=rules.four_kan_abort and sum(kans) == MAX_KANS and makers >= 2,
    )
    if rules.kan_dora == "none":
        return new
    if kind == "closed":
        return _reveal(rules, new)
    if rules.kan_dora == "after_discard":
        return replace(new, kan_dora_due="discard")
    if kind == "added" and not rules.kan_dora_on_chankan:
        return replace(new, kan_dora_due="rinshan")
    return _reveal(rules, new)


def _kan(rules: WallRules, state: WallState, event: Kan) -> WallState | Refusal:
    seat = event.seat
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no kan before the deal is complete")
    if not rules.kans_allowed or rules.own_walls:
        return _refuse(KAN_NOT_ALLOWED, "these rules have no kans")
    if seat != state.turn:
        return _refuse(OUT_OF_TURN, f"seat {seat} made a kan, but it is seat {state.turn}'s turn")
    if state.phase == CALLED:
        return _refuse(MUST_DISCARD, f"seat {seat} called and must discard before any kan")
    if state.phase != DISCARD:
        return _refuse(MUST_TAKE, f"seat {seat} must take a tile before a {event.kind} kan")
    refusal = _kan_refusal(rules, state, seat, f"{event.kind} kan")
    if refusal:
        return refusal
    if event.kind == "added" and state.pons[seat] == 0:
        return _refuse(KAN_NOT_ALLOWED, f"seat {seat} has no pon to add a fourth tile to")
    if event.kind == "closed" and state.melds[seat] >= MAX_MELDS:
        return _refuse(NO_MELD_ROOM, f"seat {seat} already has four melds")
    new = _flush_dora(rules, state)  # a kan right after a kan turns the owed indicator first
    if event.kind == "added":
        new = replace(new, pons=_bump(new.pons, seat, -1))
        return _after_kan(rules, new, seat, "added")
    new = replace(new, melds=_bump(new.melds, seat))
    return _after_kan(rules, new, seat, "closed")


def _north(rules: WallRules, state: WallState, event: North) -> WallState | Refusal:
    seat = event.seat
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if not rules.north_pulls or rules.own_walls:
        return _refuse(NORTH_NOT_ALLOWED, "these rules have no north pulls")
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no north pull before the deal is complete")
    if seat != state.turn:
        return _refuse(
            OUT_OF_TURN, f"seat {seat} pulled a north, but it is seat {state.turn}'s turn"
        )
    if state.phase == CALLED:
        return _refuse(MUST_DISCARD, f"seat {seat} called and must discard")
    if state.phase != DISCARD:
        return _refuse(MUST_TAKE, f"seat {seat} must take a tile before pulling a north")
    if sum(state.norths) >= NORTH_TILES:
        return _refuse(NORTH_NOT_ALLOWED, "all four norths have been pulled")
    # A north may be pulled on the haitei (sanma-free seed): the replacement still comes
    # from the dead wall, which then has no live tile to be refilled from.
    return replace(
        state,
        phase=RINSHAN,
        norths=_bump(state.norths, seat),
        replacing="north",
    )


# --------------------------------------------------------------------------- checks


def check_riichi(rules: WallRules, state: WallState, seat: int) -> Refusal | None:
    """Riichi by ``seat``: on its own turn (holding a drawn tile, or with the discard it
    has just made), and with another own draw to come when the preset needs one."""
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no riichi before the deal is complete")
    holding = state.phase == DISCARD and state.turn == seat
    just_discarded = state.phase == CLAIM and state.last_discard == seat
    if not (holding or just_discarded):
        return _refuse(NOT_DRAWN, f"seat {seat} may declare riichi only on its own turn")
    if rules.riichi_needs_draw_left:
        if rules.own_walls:
            left = rules.own_wall_discards - state.draws[seat]
        else:
            # Seat's next draw is ``players`` live tiles away.
            left = state.live_left // state.players
        if left < 1:
            return _refuse(
                RIICHI_NO_DRAW_LEFT,
                f"seat {seat} has no draw left ({state.live_left} live tiles)",
            )
    return None


def check_tsumo(rules: WallRules, state: WallState, seat: int) -> Refusal | None:
    """A tsumo by ``seat``: it must have just drawn (a live tile or a replacement tile)."""
    bad = _seat_ok(state, seat)
    if bad:
        return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no tsumo before the deal is complete")
    if state.turn != seat:
        return _refuse(OUT_OF_TURN, f"seat {seat} declared tsumo on seat {state.turn}'s turn")
    if state.phase != DISCARD:
        return _refuse(NOT_DRAWN, f"seat {seat} has not just drawn a tile")
    return None


def check_ron(
    rules: WallRules,
    state: WallState,
    discarders: tuple[int, ...],
    winner_seats: tuple[int, ...],
) -> Refusal | None:
    """A ron by ``winner_seats`` off ``discarders``.

    Off the last discard; chankan on an added kan (and a closed kan if the preset lets
    kokushi rob it); a pulled north in three-player.  Kantan: on the winner's own turn
    (before its draw) off any other players' last discards, or by anyone on the 18th
    discards after the wall is done.
    """
    for s in (*discarders, *winner_seats):
        bad = _seat_ok(state, s)
        if bad:
            return bad
    if state.phase == DEAL:
        return _refuse(NOT_DEALT, "no ron before the deal is complete")
    if not discarders or not winner_seats:
        return _refuse(NOT_LAST_DISCARD, "a ron needs a discarder and a winner")
    for w in winner_seats:
        if w in discarders:
            return _refuse(NOT_LAST_DISCARD, f"seat {w} cannot ron its own discard")
    if rules.own_walls:
        return _own_ron(rules, state, discarders, winner_seats)
    if len(discarders) != 1:
        return _refuse(NOT_LAST_DISCARD, "a ron is off one discard in these rules")
    frm = discarders[0]
    if state.phase == CLAIM and state.last_discard == frm:
        return None
    if state.phase == RINSHAN and state.turn == frm:
        if state.replacing == "north":
            return None
        if state.last_kan == "added":
            return None
        if state.last_kan == "closed" and rules.kokushi_closed_kan_ron:
            return None
    last = "none" if state.last_discard is None else f"seat {state.last_discard}'s"
    return _refuse(
        NOT_LAST_DISCARD,
        f"seat {frm} has nothing to ron on (the last discard open to ron: {last})",
    )


def _own_ron(
    rules: WallRules, state: WallState, discarders: tuple[int, ...], winners: tuple[int, ...]
) -> Refusal | None:
    for d in discarders:
        if state.discards[d] == 0:
            return _refuse(NOT_LAST_DISCARD, f"seat {d} has not discarded yet")
    if state.finished:
        return None  # the 18th discards can still be ronned after the draw
    if len(winners) != 1 or state.phase != CLAIM or winners[0] != state.turn:
        return _refuse(
            OUT_OF_TURN,
            f"ron by seat(s) {list(winners)}: a ron is made on your own turn, before the "
            f"draw (seat {state.turn}'s turn)",
        )
    return None


def check_draw(rules: WallRules, state: WallState) -> Refusal | None:
    """An exhaustive draw: no live tile left and the haitei discard made (kantan: every
    player has made all their discards)."""
    if state.finished:
        return None
    if rules.own_walls:
        return _refuse(
            WALL_NOT_EXHAUSTED,
            f"discards so far {list(state.discards)}; each player makes {rules.own_wall_discards}",
        )
    if state.live_left:
        return _refuse(WALL_NOT_EXHAUSTED, f"{state.live_left} live tiles are left")
    return _refuse(WALL_NOT_EXHAUSTED, f"seat {state.turn} has not made the last discard yet")


def check_abort(rules: WallRules, state: WallState, reason: str) -> Refusal | None:
    """An abortive draw the wall can judge.

    ``four_kans``: four kans by two or more players under a four-kan-abort preset, after
    the fourth kan's discard.  ``nine_terminals``: on the declarer's first draw with no
    call yet.  ``four_winds``: right after the fourth discard of an uninterrupted first
    go-around.  Other reasons are not the wall's business (None).
    """
    if reason == "four_kans":
        if not rules.four_kan_abort:
            return _refuse(ABORT_NOT_MET, "these rules have no four-kan abort")
        if not state.four_kans_pending:
            return _refuse(
                ABORT_NOT_MET,
                f"four kans by two or more players are needed; kans by seat: {list(state.kans)}",
            )
        if state.phase != CLAIM:
            return _refuse(ABORT_NOT_MET, "the fourth kan's maker has not discarded yet")
        return None
    if reason == "nine_terminals":
        if state.phase != DISCARD or state.any_call or state.discards[state.turn] != 0:
            return _refuse(
                ABORT_NOT_MET, "nine terminals is declared on one's first draw with no call yet"
            )
        return None
    if reason == "four_winds":
        first_round = state.phase == CLAIM and sum(state.discards) == state.players
        if not first_round or state.any_call or any(d != 1 for d in state.discards):
            return _refuse(
                ABORT_NOT_MET, "four winds needs the first go-around's discards with no call"
            )
        return None
    return None


# --------------------------------------------------------------------------- output


def wall_summary(state: WallState) -> dict[str, Any]:
    """The JSON-ready ``"wall"`` object for replay output."""
    return {
        "live_left": state.live_left,
        "dead": state.dead,
        "kans": state.total_kans,
        "dora_indicators": list(state.dora_indicators),
        "phase": state.phase,
        "turn": state.turn,
    }


LEGEND = (
    "legend: 0-3 taken by that seat  o live  > next live  H haitei (last live)  "
    "# dead  R next replacement  D dora indicator  | break"
)


def render_wall(rules: WallRules, state: WallState) -> str:
    """A text picture of the wall: each seat's wall as its owner sees it from the right end
    (stack 0) to the left, top row above bottom row."""
    per = _stacks_per_wall(rules)
    owner = dict(zip(state.taken, state.taken_by, strict=True))
    live = set(state.live_positions)
    dead = set(state.dead_wall)
    dora = set(state.dora_indicators)
    nxt: int | None = None
    if state.phase in (TAKE, CLAIM) and not rules.own_walls and state.live_left:
        nxt = state.order[state.next_live]
    elif (
        state.phase in (TAKE, CLAIM)
        and rules.own_walls
        and state.draws[state.turn] < rules.own_wall_discards
    ):
        nxt = _own_pos(rules, state.turn, HAND_TILES + state.draws[state.turn])
    rinshan = _rinshan_position(state) if state.phase == RINSHAN else None
    haitei = state.haitei_position

    def mark(pos: int) -> str:
        if pos in owner:
            return str(owner[pos])
        if pos in dora:
            return "D"
        if pos == rinshan:
            return "R"
        if pos == nxt:
            return ">"
        if pos == haitei:
            return "H"
        if pos in live:
            return "o"
        if pos in dead:
            return "#"
        return "?"  # pragma: no cover - every position is live, dead or taken

    total = state.dice[0] + state.dice[1]
    lines = []
    if state.break_seat is None:
        lines.append(
            f"dealer seat {state.dealer}, dice {total}: every seat draws from its own wall"
        )
    else:
        lines.append(
            f"dealer seat {state.dealer}, dice {state.dice[0]}+{state.dice[1]}={total}: "
            f"break in seat {state.break_seat}'s wall after stack {total - 1} "
            f"(first live stack {state.break_stack})"
        )
    lines.append(
        f"live {state.live_left}  dead {state.dead}  taken {len(state.taken)}  "
        f"kans {state.total_kans}  dora indicators {list(state.dora_indicators)}  "
        f"next: seat {state.turn} {state.phase}"
    )
    header = "stack (right end -> left)  " + "".join(f"{k % 10} " for k in range(per))
    lines.append(header.rstrip())
    for seat in range(rules.players):
        for level, name in ((0, "top   "), (1, "bottom")):
            cells = []
            for k in range(per):
                stack = seat * per + k
                sep = "|" if stack + 1 == state.break_stack else " "
                cells.append(mark(2 * stack + level) + sep)
            tag = f"seat {seat} wall " if level == 0 else " " * 12
            stacks = f"{seat * per:>3}-{seat * per + per - 1:<3}" if level == 0 else " " * 7
            lines.append(f"{tag}{stacks} {name} " + "".join(cells).rstrip())
    lines.append(LEGEND)
    return "\n".join(lines)


def next_position(rules: WallRules, state: WallState, seat: int) -> int | None:
    """The position ``seat``'s next take would come from (a deal block's first tile), or
    None when that take would be refused.  Simulated players and tests use it."""
    after = wall_step(rules, state, Take(seat=seat))
    if isinstance(after, Refusal):
        return None
    return after.taken[len(state.taken)]


def implied_discarder(state: WallState, actor: int) -> int | None:
    """The seat whose discard ``actor``'s action (a take, call, ron) implies, or None.

    Tables do not sense discards: a seat that has drawn (or called) has discarded once
    another seat acts.  The daemon journals that discard; simulated players assume it.
    """
    if state.phase in (DISCARD, CALLED) and state.turn != actor:
        return state.turn
    return None
