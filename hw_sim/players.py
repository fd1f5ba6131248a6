"""Players at the simulated table: a wall follower and autoplay bots.

:class:`WallFollower` follows the hand in the pure wall tracker
(:mod:`tablectl.rules.wall`) from what the table itself reports -- the dice, every
``WallTake``, the call and kan keys -- and infers discards exactly as docs/console.md says
the daemon does (a seat that drew has discarded when another seat takes, calls or rons).
It tells anyone (bots, scripts, the control interface) which tiles a seat takes next.

:class:`BotTable` plays the seats it is given, whole games under any preset, reading only
the consoles like people would. It is deterministic given its seed *and* the daemon's
outputs: one ``random.Random`` for the table, decisions at fixed points of the game, and
it never acts on wall-clock time. Rules it follows (see docs/simulator.md):

* after each take it waits until the centre display's ``tiles_left`` shows the take (or
  the seat's display shows a refusal ``! ...``);
* prompts (display line 1, docs/console.md) are answered one at a time **in the order
  they appeared**, so the keys it sends do not depend on how fast displays arrive;
* in a claim window (``RON?``) every asked seat answers RON or CANCEL at once;
* han/fu entries are always legal values (refused ones are re-entered differently, then
  with a safe value, then cancelled: never an endless loop);
* a ``FAULT`` prompt is answered with OK by one seat; while the link is down or a fault
  shows, nobody takes tiles.

At a table with seat readers (``SimFirmware.zones``) the bots play the tiles they hold
(:mod:`hw_sim.tilebot`): they discard what keeps shanten lowest, win only with a complete
hand that has a yaku (and for ron is not furiten), call when it lowers shanten and leaves
a yaku in reach, declare riichi when tenpai, and enter the real han and fu. Their tiles
move through the seat zones, which the firmware reports as ``SeatTiles``. Without seat
readers nothing of this runs: the bots use the probabilities below, as before.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
import re
from collections.abc import Callable
from typing import Literal

from firmware_bridge.messages import (
    Capability,
    CentreDisplay,
    DiceResult,
    Fault,
    FaultCode,
    Key,
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    TableReset,
    WallAction,
    WallCommand,
    WallTake,
    Zone,
)
from hw_sim import tilebot as T
from hw_sim.firmware import Direction, SimFirmware
from hw_sim.zones import TableZones
from tablectl.rules import wall as W
from tablectl.rules.events import Call, Discard, Kan, North, Take, WallEvent
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.tilechecks import terminal_kinds
from tablectl.rules.tiletrack import NINE_TERMINALS
from tablectl.rules.walltrack import wall_rules
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import kind, tile_set

__all__ = [
    "PROMPTS",
    "BotTable",
    "WallFollower",
    "prompt_of",
]

_log = logging.getLogger(__name__)

#: Display line-1 prompts of docs/console.md, longest first so prefixes do not shadow.
PROMPTS = (
    "GAME OVER",
    "TENPAI?",
    "CONFIRM",
    "ABORT?",
    "STAFF?",
    "CHIPS?",
    "FAULT",
    "ROLL?",
    "STOP?",
    "SEAT?",
    "HAN?",
    "PAO?",
    "RON?",
    "KAN?",
    "FU?",
)
_SCORE = re.compile(r"^[ESWN]\s+(-?\d+)")
_AMOUNT = re.compile(r"[+-]?\d+")
_TOTAL = re.compile(r"=\s*(-?\d+)")
#: Chips a keyed bot enters at CHIPS? (a small count, often none; legal everywhere).
CHIP_COUNTS = (0, 0, 0, 1, 2)

#: Han/fu pairs a bot wins with (ron); tsumo adds the 20-fu (pinfu tsumo) ones.
HANDS_RON = ((1, 30), (1, 40), (2, 25), (2, 30), (3, 30), (3, 60), (4, 30))
HANDS_TSUMO = (*HANDS_RON, (2, 20), (3, 20), (4, 20))
#: Limit hands (no fu asked).
LIMIT_HANS = (5, 5, 6, 6, 7, 8, 9, 10, 11, 12)
#: What a bot enters once a value was refused too often: legal under every preset.
SAFE_HAND = (3, 30)

# Decision probabilities. Tuned so that a game has wins by ron and tsumo, exhaustive draws
# in about a third of the hands, a few calls, kans and riichi, and rare oddities.
P_TSUMO = 0.0045  # per draw, rising to 3x at the haitei
P_RON = 0.008  # per discard, for the table (then one seat is picked)
P_JOIN_RON = 0.05  # another seat also rons in a claim window
P_CHANKAN = 0.03
P_HOUTEI_RON = 0.05
P_PON = 0.03  # per seat and discard
P_CHI = 0.04
P_OPEN_KAN = 0.004
P_CLOSED_KAN = 0.004
P_ADDED_KAN = 0.05
P_NORTH = 0.3  # three-player north pulls: 4 norths in 108 tiles
P_RIICHI = 0.05
P_NINE_TERMINALS = 0.004
P_TENPAI = 0.45
P_YAKUMAN = 0.02
P_LIMIT = 0.12
P_PAO = 0.1
P_STOP = 0.5
MAX_REFUSALS = 6
# With real tiles (seat readers) the tiles decide; these only say how often a bot takes a
# chance it has.
P_TILE_CALL = 0.5  # a call that lowers shanten and keeps a yaku in reach
P_TILE_OPEN_KAN = 0.3
P_TILE_KAN = 0.5  # a closed or added kan
P_TILE_RIICHI = 0.6  # tenpai, closed, 1000 points, a draw left
P_TILE_NINE_TERMINALS = 0.5
P_STAND_IN_FIRST = 0.5  # kantan: the stand-in taken before the own tiles are laid
#: Seconds a refused take may still be confirmed by the centre display (fault cases only).
REFUSAL_GRACE = 1.0
#: Line 2 of a seat display when the daemon stopped reading the tiles of the hand
#: (docs/console.md): on the idle seats, and on the seat whose hand reader disagreed.
KEYED_LINES = ("KEY ENTRY: NO TILES", "! hand:")


def prompt_of(line1: str) -> str | None:
    """The docs/console.md prompt a display line 1 starts with (``FROM?`` anywhere in it,
    for kantan's ``RON FROM?``; ``OK?`` at its end, a win the tiles scored:
    ``3 HAN 40 FU 5200 OK?``), or None."""
    for prompt in PROMPTS:
        if line1.startswith(prompt):
            return prompt
    if "FROM?" in line1:
        return "FROM?"
    if line1.endswith("OK?"):
        return "OK?"
    return None


# ---------------------------------------------------------------------------------------------
# Following the wall


class WallFollower:
    """The hand as the wall tracker sees it, from the table's own reports (see module doc).

    ``state`` is None between hands. ``desyncs`` counts reports the tracker refused: the
    daemon, which runs the same tracker, will have refused them too.
    """

    def __init__(self, house: HouseRules, firmware: SimFirmware) -> None:
        self.house = house
        self.rules = wall_rules(house)
        self.firmware = firmware
        self.state: W.WallState | None = None
        self.desyncs = 0
        self._roll_seat: int | None = None
        self._lamp_dealer: int | None = None
        self._kan_pending: set[int] = set()
        #: Kantan: a seat's call key waiting for FROM? (the call kind, the seats typed).
        self._from_pending: dict[int, tuple[Literal["chi", "pon"], str]] = {}
        #: (seat, state) of the last discard a person announced (see announce_discard).
        self.announced_discard: tuple[int, W.WallState] | None = None
        firmware.add_listener(self._on_message)

    # ---- what a seat takes next

    def announce_discard(self, seat: int) -> None:
        """A person at ``seat`` discarded (the table cannot sense it; bots wait for this
        before they take or call after a person's turn)."""
        if self.state is not None:
            self.announced_discard = (seat, self.state)
            self.firmware._wake()

    def expected_take(self, seat: int) -> tuple[int, ...] | None:
        """The positions ``seat`` lifts if it takes now (a deal block or one tile), with the
        discard inferred as the daemon would; None if the tracker refuses that take, or if
        a tile it names is no longer in the wall (see :meth:`out_of_the_wall`)."""
        state = self.state
        if state is None:
            return None
        state = self._with_discard(state, seat)
        new = W.wall_step(self.rules, state, Take(seat))
        if isinstance(new, Refusal):
            return None
        positions = new.taken[len(state.taken) :]
        gone = self.out_of_the_wall(positions)
        if gone:
            _log.warning("wall follower: seat %d's next take %s: %s already out of the wall;"
                         " the table's reports and its wall differ, nobody takes",
                         seat, list(positions), gone)  # fmt: skip
            return None
        return positions

    def out_of_the_wall(self, positions: tuple[int, ...]) -> list[int]:
        """The ``positions`` whose tiles were already lifted. The tracker follows what the
        table reported, the wall what players did; they differ after a take the table
        could not report (its event queue was full: ``EVENT_OVERFLOW``) and after dice
        rolled again without a shuffle (a re-roll starts the tracker on a dealt wall).
        A tile lifted once cannot be lifted again, so no take is due then."""
        return [p for p in positions if not self.firmware.wall.present(p)]

    def take_zone(self, seat: int) -> Zone:
        """Where ``seat``'s take goes at a table with seat readers: its hand, or (kantan,
        right after its call) its melds, where the tile stands in for the called one."""
        state = self.state
        stand_in = state is not None and state.replacing_call and state.turn == seat
        return Zone.MELDS if stand_in else Zone.HAND

    def after_take(self, seat: int) -> W.WallState | None:
        """The tracker state after ``seat`` takes now (None if refused)."""
        if self.state is None:
            return None
        new = W.wall_step(self.rules, self._with_discard(self.state, seat), Take(seat))
        return None if isinstance(new, Refusal) else new

    def _with_discard(self, state: W.WallState, actor: int) -> W.WallState:
        seat = W.implied_discarder(state, actor)
        if seat is not None:
            new = W.wall_step(self.rules, state, Discard(seat))
            if not isinstance(new, Refusal):
                return new
        return state

    # ---- listening

    def _apply(self, event: WallEvent) -> bool:
        if self.state is None:
            return False
        new = W.wall_step(self.rules, self.state, event)
        if isinstance(new, Refusal):
            self.desyncs += 1
            _log.info("wall follower: %s refused: %s", event, new.message)
            return False
        self.state = new
        return True

    def _infer_discard(self, actor: int, *, any_seat: bool = False) -> None:
        state = self.state
        if state is None or state.phase not in (W.DISCARD, W.CALLED):
            return
        if any_seat or state.turn != actor:
            self._apply(Discard(state.turn))

    def _on_message(self, direction: Direction, msg: Message) -> None:
        if direction == "rx":
            match msg:
                case SeatDisplay(seat=seat, line1=line1) if line1.startswith("ROLL?"):
                    self._roll_seat = seat
                case SeatLamps(seat=seat, dealer=True):
                    self._lamp_dealer = seat
                case WallCommand(action=WallAction.SHUFFLE) | TableReset():
                    self.state = None
            return
        match msg:
            case DiceResult(die1=d1, die2=d2):
                dealer = self._roll_seat if self._roll_seat is not None else self._lamp_dealer
                started = W.start_wall(self.rules, dealer or 0, (d1, d2))
                self.state = None if isinstance(started, Refusal) else started
                self._kan_pending.clear()
                self._from_pending.clear()
            case WallTake(seat=seat, position=pos):
                self._infer_discard(seat)
                self._apply(Take(seat, pos))
            case KeyPress(seat=seat, key=key):
                self._on_key(seat, key)

    def _on_key(self, seat: int, key: Key) -> None:
        state = self.state
        if state is None:
            return
        if seat in self._kan_pending:
            self._kan_pending.discard(seat)
            if key == Key.DIGIT_1:
                self._apply(Kan(seat, "closed"))
            elif key == Key.DIGIT_2:
                self._apply(Kan(seat, "added"))
            elif key == Key.DIGIT_3:
                self._apply(North(seat))
            return
        if self.rules.own_walls and self._on_own_walls_key(seat, key):
            return
        if key in (Key.PON, Key.CHI, Key.KAN):
            if key == Key.KAN and state.phase == W.DISCARD and state.turn == seat:
                self._kan_pending.add(seat)
                return
            self._infer_discard(seat)
            discarder = self.state.last_discard if self.state is not None else None
            if discarder is not None:
                kind: Literal["chi", "pon", "kan"] = (
                    "pon" if key == Key.PON else "chi" if key == Key.CHI else "kan"
                )
                self._apply(Call(seat, kind, discarder))
        elif key == Key.RON:
            self._infer_discard(seat)
        elif key in (Key.TENPAI, Key.NOTEN) and state.live_left == 0:
            self._infer_discard(seat, any_seat=True)

    def _on_own_walls_key(self, seat: int, key: Key) -> bool:
        """Kantan: PON or CHI, then the discarder's digit and OK at FROM?, is a call on the
        caller's own turn (the daemon makes it then, or once its meld shows: either way
        the seat's next take stands in for the called tile); no kans. True: the key is
        taken here (RON and the draw keys are not: they infer a discard as anywhere)."""
        typed = self._from_pending.pop(seat, None)
        if key in (Key.PON, Key.CHI):
            self._from_pending[seat] = ("pon" if key == Key.PON else "chi", "")
        elif typed is not None and key <= Key.DIGIT_9:
            digit = str(int(key))
            digits = typed[1].replace(digit, "") if digit in typed[1] else typed[1] + digit
            self._from_pending[seat] = (typed[0], digits)
        elif typed is not None and key == Key.OK and typed[1]:
            self._infer_discard(seat)
            self._apply(Call(seat, typed[0], int(typed[1][0])))
        elif typed is not None and key == Key.OK:
            self._from_pending[seat] = typed  # FROM? takes no OK before a seat is named
        return key not in (Key.RON, Key.TENPAI, Key.NOTEN)


# ---------------------------------------------------------------------------------------------
# Bots


@dataclasses.dataclass(slots=True)
class _Entry:
    """One winner's han/fu entry in progress."""

    tsumo: bool
    han: int = 0
    fu: int | None = None
    yakuman: int = 0
    refusals: int = 0
    chosen: bool = False


@dataclasses.dataclass(slots=True)
class _TileSeat:
    """What a bot seat at a tile-reading table remembers of its own hand (the tiles
    themselves lie in the firmware's zones)."""

    melds: list[Meld] = dataclasses.field(default_factory=list)
    #: Kinds this seat discarded this hand (called ones too): furiten.
    discarded: set[int] = dataclasses.field(default_factory=set)
    #: The kinds that complete the hand (empty unless tenpai), since its last discard.
    waits: frozenset[int] = frozenset()
    #: Passed a winning tile since its last draw / since its riichi.
    temp_furiten: bool = False
    riichi_furiten: bool = False
    #: (melds on the table, own discards) right after the riichi discard: ippatsu holds
    #: while both stay so.
    riichi_at: tuple[int, int] | None = None
    double_riichi: bool = False
    #: Kinds it may not discard right after a call (kuikae).
    forbidden: frozenset[int] = frozenset()

    @property
    def furiten(self) -> bool:
        """It may not ron."""
        return self.temp_furiten or self.riichi_furiten or bool(self.waits & self.discarded)

    @property
    def closed(self) -> bool:
        """No open meld."""
        return not any(m.opened for m in self.melds)


@dataclasses.dataclass(slots=True)
class _Hand:
    """What the bots remember about the hand in play."""

    dealer: int
    riichi: set[int] = dataclasses.field(default_factory=set)
    called: set[int] = dataclasses.field(default_factory=set)
    tenpai: dict[int, bool] = dataclasses.field(default_factory=dict)
    #: Declarations the daemon refused this hand (not tried again).
    refused: set[str] = dataclasses.field(default_factory=set)
    #: The state the last own-turn decision was made on.
    last_state: W.WallState | None = None
    over: bool = False
    #: Tile-reading tables: each bot seat's own memory, and the rons the daemon refused
    #: (seat, tile, tiles taken so far), not tried again.
    tiles: dict[int, _TileSeat] = dataclasses.field(default_factory=dict)
    refused_rons: set[tuple[int, int, int]] = dataclasses.field(default_factory=set)
    #: A tile reader failed or disagreed this hand: the daemon keys the rest of it in
    #: (docs/tiles.md), so the bots declare the exhaustive draw themselves again.
    keyed: bool = False


class BotTable:
    """Autoplay bots for the seats in ``seats`` (all by default), driven by one seed.

    Run :meth:`run` as a task; it returns after ``max_games`` games (each confirmed at
    GAME OVER by every bot) or when :meth:`stop` is called. ``stall_timeout`` (s of loop
    time) only guards against a daemon that never answers: a stalled wait is logged and
    the bots carry on as if it had answered.
    """

    def __init__(
        self,
        firmware: SimFirmware,
        house: HouseRules,
        *,
        seed: int = 0,
        seats: set[int] | None = None,
        follower: WallFollower | None = None,
        max_games: int | None = None,
        stall_timeout: float = 10.0,
        on_game_over: Callable[[int], None] | None = None,
    ) -> None:
        self.fw = firmware
        self.house = house
        self.rules = wall_rules(house)
        self.players = house.players
        self.seats = set(range(self.players)) if seats is None else set(seats)
        self.follower = follower or WallFollower(house, firmware)
        self.rng = random.Random(f"bots:{seed}")
        self.max_games = max_games
        self.stall_timeout = stall_timeout
        self.on_game_over = on_game_over
        #: Games confirmed at GAME OVER by every bot seat.
        self.games_finished = 0
        #: Refusals the daemon showed to a bot (``! ...`` on line 2), for tests and logs.
        self.refusals: list[tuple[int, str]] = []
        self.stalls = 0
        self.hands_started = 0
        #: Hands the bots stopped playing because no take was due by the wall tracker
        #: where one was expected (it refused, or the tiles it named were already lifted).
        self.hands_left = 0
        #: Seconds to wait before each move of play, for people watching (0: none). It
        #: changes when the bots act, never what they do; prompts are answered at once.
        self.pace = 0.0
        self._stopped = False
        self._hand: _Hand | None = None
        self._hand_start: int | None = None
        self._entries: dict[int, _Entry] = {}
        self._intent: dict[int, list[Key]] = {}
        self._gameover_ok: set[int] = set()
        self._dirty: dict[int, int] = {}
        self._order = 0
        self._changes = [0] * 4
        self._refused_at = [0] * 4
        self._text = [("", "")] * 4
        self._scores: list[int | None] = [None] * 4
        self._centre_seq = 0
        self._dice_seen = 0
        #: The seat zones when the table reads tiles: the bots then play real hands.
        self.zones: TableZones | None = firmware.zones
        #: The table reads every tile (seat and wall readers): the daemon scores the wins
        #: (the bots agree at ``OK?``) and decides the exhaustive draw (no TENPAI/NOTEN).
        self.scored = self.zones is not None and bool(
            firmware.capabilities & Capability.WALL_READER
        )
        self.tileset = tile_set(house)
        #: The discarder (or kan maker) and tile of the ron a bot declared, and whether it
        #: robs a kan (for the other bots' RON? prompts).
        self._claim: tuple[int, int, bool] | None = None
        firmware.add_listener(self._on_message)

    # ---- observation (listener: runs as each command arrives)

    def _on_message(self, direction: Direction, msg: Message) -> None:
        if direction != "rx":
            if isinstance(msg, Fault) and msg.code == FaultCode.TILE_READER and self._hand:
                self._hand.keyed = True
            return
        if isinstance(msg, CentreDisplay):
            self._centre_seq = self.fw.display_seq
        elif isinstance(msg, SeatDisplay):
            seat = msg.seat
            text = (msg.line1, msg.line2)
            if text == self._text[seat]:
                return  # a redraw: nothing new to answer
            self._text[seat] = text
            self._changes[seat] += 1
            found = _SCORE.match(msg.line1)
            if found:
                self._scores[seat] = int(found.group(1))
            if msg.line2.startswith(KEYED_LINES) and self._hand is not None:
                self._hand.keyed = True  # a hand reader disagreed: the daemon keys it in
            # "! TRAY ..." is the daemon's tray check, "! hand: ..." its hand readers'
            # (the hand goes on keyed), not an answer to anything we did.
            if msg.line2.startswith("! ") and not msg.line2.startswith(("! TRAY", "! hand:")):
                self._refused_at[seat] = self.fw.display_seq
                if seat in self.seats:
                    self.refusals.append((seat, msg.line2))
                    _log.info("bots: seat %d refused: %s", seat, msg.line2)
            # Ordered by the latest change: the rx stream's order, whatever the timing.
            self._order += 1
            self._dirty[seat] = self._order

    def stop(self) -> None:
        """Stop acting (the run task returns at its next wait)."""
        self._stopped = True
        self.fw._wake()

    @property
    def done(self) -> bool:
        """True once stopped or ``max_games`` were played."""
        return self._stopped or (
            self.max_games is not None and self.games_finished >= self.max_games
        )

    # ---- waiting

    def _table_ok(self) -> bool:
        """The link is up and no console shows a fault: players may touch the walls."""
        return self.fw.link_up and not any(
            c.line1.startswith("FAULT") for c in self.fw.consoles[: self.players]
        )

    def _next_prompt(self) -> int | None:
        """The bot seat whose current display arrived first (among unanswered ones)."""
        while self._dirty:
            seat = min(self._dirty, key=self._dirty.__getitem__)
            del self._dirty[seat]
            if seat in self.seats and prompt_of(self.fw.consoles[seat].line1) is not None:
                return seat
        return None

    async def _wait_until(self, cond: Callable[[], bool], *, stall: bool = True) -> bool:
        """Wait for ``cond``, answering prompts meanwhile. False when stopped or stalled."""
        while not self.done:
            if cond():
                return True
            seat = self._next_prompt()
            if seat is not None:
                await self._answer(seat)
                continue
            ok = await self.fw.wait_for(
                lambda: cond() or bool(self._dirty) or self.done,
                self.stall_timeout if stall else None,
            )
            if not ok:
                self.stalls += 1
                _log.warning("bots: the daemon did not answer within %.1f s", self.stall_timeout)
                return False
        return False

    async def _press_echo(self, seat: int, key: Key) -> None:
        """Press a key the display echoes (digits, MENU) and wait for the echo."""
        before = self._changes[seat]
        self.fw.press(seat, key)
        await self.fw.wait_for(
            lambda: self._changes[seat] > before or self.done, self.stall_timeout
        )
        self._dirty.pop(seat, None)  # the echo is ours, not a new prompt

    # ---- main loop

    async def run(self) -> None:
        """Play until ``max_games`` games are over or :meth:`stop` is called."""
        _log.info("bots: playing seats %s", sorted(self.seats))
        while not self.done:
            if not await self._wait_until(lambda: self._hand_start is not None, stall=False):
                continue
            dealer, self._hand_start = self._hand_start, None
            assert dealer is not None
            try:
                await self._play_hand(dealer)
            finally:
                if self._hand is not None:
                    self._hand.over = True

    async def _play_hand(self, dealer: int) -> None:
        seen = self._dice_seen
        if not await self._wait_until(lambda: self.fw.dice_count > seen):
            return
        self._dice_seen = self.fw.dice_count
        self.hands_started += 1
        hand = _Hand(dealer)
        self._hand = hand
        self._entries.clear()
        while not hand.over and not self.done:
            if not await self._wait_until(self._table_ok, stall=False):
                return
            if self.pace:
                await asyncio.sleep(self.pace)
                if not await self._wait_until(self._table_ok, stall=False):
                    return
            state = self.follower.state
            if state is None:
                return
            if not await self._step(hand, state):
                return

    # ---- one play decision

    def _others_from(self, seat: int) -> list[int]:
        return [(seat + i) % self.players for i in range(1, self.players)]

    def _valid(self, state: W.WallState, event: WallEvent) -> bool:
        return not isinstance(W.wall_step(self.rules, state, event), Refusal)

    async def _step(self, hand: _Hand, state: W.WallState) -> bool:
        """Make one move of the hand; False when the bots stop playing this hand."""
        phase, turn = state.phase, state.turn
        if turn not in self.seats:
            # A person plays this seat: wait until the table reports what they did, or
            # (discards are not sensed) until they say they discarded.
            announced = self.follower.announced_discard
            if phase in (W.DISCARD, W.CALLED) and announced == (turn, state):
                return await self._discard(hand, state, turn)
            return await self._wait_until(
                lambda: (
                    self.follower.state is not state
                    or self.follower.announced_discard is not announced
                ),
                stall=False,
            )
        if phase in (W.DEAL, W.TAKE):
            return await self._take(turn)
        if self.zones is not None and phase in (W.RINSHAN, W.CALLED):
            if phase == W.CALLED:
                return await self._tile_discard(hand, state, turn)
            if state.replacing == "kan" and state.last_kan == "added":
                robbed = await self._chankan(hand, state)
                if robbed is not None:
                    return robbed
            return await self._take(turn)
        if phase == W.RINSHAN:
            if state.replacing == "kan" and state.last_kan == "added":
                for seat in self._others_from(turn):
                    if seat in self.seats and self.rng.random() < P_CHANKAN:
                        return await self._ron(hand, seat)
            return await self._take(turn)
        if phase == W.DISCARD:
            return await self._drawn(hand, state, turn)
        if phase == W.CALLED:
            return await self._discard(hand, state, turn)
        if phase == W.CLAIM:
            if self.rules.own_walls:
                return await self._own_turn(hand, state)
            return await self._after_discard(hand, state)
        return False  # pragma: no cover - every phase is handled

    async def _drawn(self, hand: _Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` holds a drawn tile: win, kan, north, abort, riichi, or just discard."""
        if self.zones is not None:
            return await self._tile_drawn(hand, state, seat)
        rng = self.rng
        late = 1.0 - state.live_left / 70 if not self.rules.own_walls else sum(state.discards) / 72
        # A declaration the daemon refused is not tried again on the same tile.
        fresh = hand.last_state is not state
        hand.last_state = state
        if not fresh:
            return await self._discard(hand, state, seat)
        if rng.random() < P_TSUMO * (1 + 2 * max(late, 0.0)):
            return await self._tsumo(hand, seat)
        if (
            "nine_terminals" in self.house.flow.abortive_draws
            and "nine_terminals" not in hand.refused
            and W.check_abort(self.rules, state, "nine_terminals") is None
            and rng.random() < P_NINE_TERMINALS
        ):
            return await self._abort(hand, seat, Key.DIGIT_1, "nine_terminals")
        if (
            state.pons[seat]
            and rng.random() < P_ADDED_KAN
            and self._valid(state, Kan(seat, "added"))
        ):
            return await self._kan(hand, state, seat, Key.DIGIT_2)
        if rng.random() < P_CLOSED_KAN and self._valid(state, Kan(seat, "closed")):
            return await self._kan(hand, state, seat, Key.DIGIT_1)
        if self.rules.north_pulls and rng.random() < P_NORTH and self._valid(state, North(seat)):
            return await self._kan(hand, state, seat, Key.DIGIT_3)
        score = self._scores[seat]
        if (
            seat not in hand.riichi
            and seat not in hand.called
            and score is not None
            and score >= 1000
            and W.check_riichi(self.rules, state, seat) is None
            and rng.random() < P_RIICHI
        ):
            hand.riichi.add(seat)
            self.fw.press(seat, Key.RIICHI)
        return await self._discard(hand, state, seat)

    async def _discard(self, hand: _Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` discards (the table does not sense it): go on from the discard."""
        after = W.wall_step(self.rules, state, Discard(seat))
        if isinstance(after, Refusal):  # pragma: no cover - a drawn or called seat discards
            return False
        if self.rules.own_walls:
            return await self._own_turn(hand, after)
        return await self._after_discard(hand, after)

    async def _after_discard(self, hand: _Hand, after: W.WallState) -> bool:
        """The last discard is out (not yet reported: the next take, call or ron tells the
        daemon): ron, call, the draw, or the next seat takes."""
        if self.zones is not None:
            return await self._tile_after_discard(hand, after)
        rng = self.rng
        discarder = after.last_discard
        assert discarder is not None
        if after.finished:
            if rng.random() < P_HOUTEI_RON:
                winner = rng.choice(self._others_from(discarder))
                if winner in self.seats:
                    return await self._ron(hand, winner)
            return await self._draw(hand, after.turn)
        if after.four_kans_abort_due:
            # Someone else declares it: that is what tells the daemon the discard was made.
            # Refused, the one other legal way on is a ron on that discard.
            if after.turn in self.seats and "four_kans" not in hand.refused:
                return await self._abort(hand, after.turn, Key.DIGIT_4, "four_kans")
            robber = next((s for s in self._others_from(discarder) if s in self.seats), None)
            if robber is None:
                return False
            return await self._ron(hand, robber)
        if rng.random() < P_RON:
            winner = rng.choice(self._others_from(discarder))
            if winner in self.seats:
                return await self._ron(hand, winner)
        for seat in self._others_from(discarder):
            if seat not in self.seats or seat in hand.riichi:
                continue
            kind: Literal["kan", "pon", "chi"] | None = None
            roll = rng.random()
            if roll < P_OPEN_KAN:
                kind = "kan"
            elif roll < P_OPEN_KAN + P_PON:
                kind = "pon"
            elif roll < P_OPEN_KAN + P_PON + P_CHI and seat == after.turn:
                kind = "chi"
            if kind is not None and self._valid(after, Call(seat, kind, discarder)):
                hand.called.add(seat)
                key = {"kan": Key.KAN, "pon": Key.PON, "chi": Key.CHI}[kind]
                self.fw.press(seat, key)
                return True
        return await self._take(after.turn)

    async def _own_turn(self, hand: _Hand, state: W.WallState) -> bool:
        """Kantan: on your own turn, before the draw, ron off another's last discard, or
        the exhaustive draw once everyone made their discards, or take."""
        seat = state.turn
        if state.finished:
            return await self._draw(hand, seat)
        if seat not in self.seats:
            return await self._take(seat)  # waits for the person at that seat
        if self.zones is not None:
            return await self._tile_own_turn(hand, state, seat)
        prev = (seat - 1) % self.players
        if state.discards[prev] and self.rng.random() < P_RON / 2:
            self._intent[seat] = [Key(prev), Key.OK]
            return await self._ron(hand, seat)
        return await self._take(seat)

    # ---- real tiles (a table with seat readers)

    def _last_discards(self, state: W.WallState, seat: int) -> list[tuple[int, int]]:
        """Kantan: (seat, tile) of every other seat's last discard, in turn order after
        ``seat`` (called ones too: they stay in the pond)."""
        assert self.zones is not None
        out = []
        for other in self._others_from(seat):
            tile = self.zones.last_discard(other) if state.discards[other] else None
            if tile is not None:
                out.append((other, tile))
        return out

    async def _tile_own_turn(self, hand: _Hand, state: W.WallState, seat: int) -> bool:
        """Kantan with real tiles, on one's own turn before the draw: ron off every other
        seat's last discard that wins (a table that reads tiles names them itself; keyed,
        at FROM?), else now and then pon or chi one of them (FROM?, then the own tiles
        among the melds; the next take is the stand-in), else draw. A ron or call the
        daemon refused is not tried again this turn."""
        turn = (seat, -1, len(state.taken))
        if turn in hand.refused_rons:
            return await self._take(seat)
        wins = [
            (discarder, score)
            for discarder, tile in self._last_discards(state, seat)
            if (score := self._ron_value(hand, state, seat, tile)) is not None
        ]
        if wins:
            if not self.scored or hand.keyed:
                self._intent[seat] = [*(Key(d) for d, _ in wins), Key.OK]
            self._claim = None
            if await self._ron(hand, seat, wins[0][1]):
                hand.refused_rons.add(turn)
            return True
        for _, tile in self._last_discards(state, seat):
            self._passed(hand, seat, tile)
        if seat not in hand.riichi:
            for discarder, tile in self._last_discards(state, seat):
                choice = self._call_choice(hand, state, seat, tile, discarder)
                if choice is not None:
                    if not await self._own_turn_call(hand, seat, discarder, choice):
                        hand.refused_rons.add(turn)
                    return True
        return await self._take(seat)

    async def _own_turn_call(
        self,
        hand: _Hand,
        seat: int,
        discarder: int,
        choice: tuple[Literal["kan", "pon", "chi"], tuple[int, ...]],
    ) -> bool:
        """Kantan: ``seat`` pons or chis ``discarder``'s last discard on its own turn: the
        key, the discarder at FROM?, then its own tiles among its melds (the called tile
        stays in the discarder's pond; the take that follows stands in for it). False if
        the daemon refused it."""
        assert self.zones is not None
        call, own = choice
        tile = self.zones.last_discard(discarder)
        assert tile is not None
        since, before = self.fw.display_seq, self.follower.state
        self._intent[seat] = [Key(discarder), Key.OK]
        self.fw.press(seat, Key.PON if call == "pon" else Key.CHI)
        await self._wait_until(
            lambda: self.follower.state is not before or self._refused_at[seat] > since
        )
        self._intent.pop(seat, None)
        if self.follower.state is before:
            return False
        hand.called.add(seat)
        self._remember_call(hand, seat, call, tile, own, discarder)
        if self.rng.random() < P_STAND_IN_FIRST:
            # The stand-in lifted before the own tiles are laid: the daemon keeps the take
            # until the meld shows.
            return await self._take(seat, then=lambda: self.fw.declare(seat, own))
        self.fw.declare(seat, own)
        return True

    def _remember_call(
        self,
        hand: _Hand,
        seat: int,
        call: Literal["kan", "pon", "chi"],
        tile: int,
        own: tuple[int, ...],
        discarder: int,
    ) -> None:
        """A bot's call is made: its meld (the called tile by kind where it stays in the
        discarder's pond: kantan) and, where kuikae is refused, what it may not throw."""
        mem = self._mem(hand, seat)
        kind_ = "open_kan" if call == "kan" else call
        meld = Meld(kind_, (tile, *own), tile, discarder, in_river=self.rules.own_walls)
        mem.melds.append(meld)
        if call != "kan" and not self.house.tiles.kuikae:
            mem.forbidden = T.kuikae_kinds(tile, own)

    def _mem(self, hand: _Hand, seat: int) -> _TileSeat:
        return hand.tiles.setdefault(seat, _TileSeat())

    def _hand_tiles(self, seat: int) -> tuple[int, ...]:
        assert self.zones is not None
        return self.zones.hand(seat)

    def _round_wind(self) -> int:
        centre = self.fw.centre
        return int(centre.round_wind) if centre is not None else 0

    def _context(
        self,
        hand: _Hand,
        state: W.WallState,
        seat: int,
        win_tile: int,
        concealed: tuple[int, ...],
        *,
        tsumo: bool,
        chankan: bool = False,
    ) -> WinContext:
        """The win of ``seat`` on ``win_tile`` as the table saw it (``state``: the wall
        when the tile was drawn or discarded)."""
        mem = self._mem(hand, seat)
        riichi = seat in hand.riichi
        first_draw = (
            tsumo and not state.any_call and state.draws[seat] == 1 and state.last_take == "live"
        )
        last = state.live_left == 0 and not self.rules.own_walls
        dora = tuple(self.fw.wall.tile_at(p) for p in state.dora_indicators)
        ura = tuple(self.fw.wall.tile_at(p + 1) for p in state.dora_indicators)
        return WinContext(
            seat=seat,
            dealer=hand.dealer,
            players=self.players,
            round_wind=self._round_wind(),
            concealed=concealed,
            melds=tuple(mem.melds),
            win_tile=win_tile,
            tsumo=tsumo,
            riichi=riichi and not mem.double_riichi,
            double_riichi=riichi and mem.double_riichi,
            ippatsu=riichi and mem.riichi_at == (sum(state.melds), state.discards[seat]),
            # Kantan's own walls have no haitei or houtei (seed 004: 海底・河底がありません).
            haitei=tsumo and last and state.last_take == "live",
            houtei=not tsumo and not chankan and last,
            rinshan=tsumo and state.last_take == "rinshan",
            chankan=chankan,
            tenhou=first_draw and seat == hand.dealer and sum(state.discards) == 0,
            chiihou=first_draw and seat != hand.dealer and state.discards[seat] == 0,
            dora_indicators=dora,
            ura_indicators=ura if riichi else (),
            north_count=state.norths[seat] if state.norths else 0,
        )

    def _tsumo_value(self, hand: _Hand, state: W.WallState, seat: int) -> HandScore | None:
        """The value of ``seat``'s hand if it is a complete hand with a yaku."""
        concealed = self._hand_tiles(seat)
        if not concealed or T.shanten(self.house, concealed) != -1:
            return None
        ctx = self._context(hand, state, seat, concealed[-1], concealed, tsumo=True)
        return T.value(self.house, self.tileset, ctx)

    def _ron_value(
        self, hand: _Hand, state: W.WallState, seat: int, tile: int, *, chankan: bool = False
    ) -> HandScore | None:
        """The value of ``seat`` ronning ``tile``: None unless it completes the hand, the
        seat is not furiten and the hand has a yaku."""
        mem = self._mem(hand, seat)
        if kind(tile) not in mem.waits or (mem.furiten and self.house.tiles.furiten):
            return None
        concealed = (*self._hand_tiles(seat), tile)
        ctx = self._context(hand, state, seat, tile, concealed, tsumo=False, chankan=chankan)
        return T.value(self.house, self.tileset, ctx)

    def _passed(self, hand: _Hand, seat: int, tile: int) -> None:
        """``seat`` let a tile that completes its hand go by: furiten until its next draw
        (for good after riichi)."""
        mem = self._mem(hand, seat)
        if kind(tile) in mem.waits:
            mem.temp_furiten = True
            if seat in hand.riichi:
                mem.riichi_furiten = True

    def _claim_value(self, seat: int) -> HandScore | None:
        """At ``RON?``: what ``seat`` wins by joining the ron on the claimed tile."""
        hand, state = self._hand, self.follower.state
        if hand is None or state is None or self.zones is None:
            return None
        if self.rules.own_walls:  # kantan's 18th discards: any of the others' wins
            tiles = [tile for _, tile in self._last_discards(state, seat)]
            found = (self._ron_value(hand, state, seat, tile) for tile in tiles)
            return next((score for score in found if score is not None), None)
        claim = self._claim
        if claim is None and state.last_discard is not None:
            tile = self.zones.last_discard(state.last_discard)
            claim = None if tile is None else (state.last_discard, tile, False)
        if claim is None or claim[0] == seat:
            return None
        _, tile, chankan = claim
        score = self._ron_value(hand, state, seat, tile, chankan=chankan)
        if score is None:
            self._passed(hand, seat, tile)
        return score

    def _tenpai(self, hand: _Hand, seat: int) -> bool:
        """Tenpai as the preset's ``formal_tenpai`` reads it, from the tiles held."""
        concealed = self._hand_tiles(seat)
        if len(concealed) % 3 != 1:
            return False
        waits = T.waits(self.house, concealed)
        mem = self._mem(hand, seat)
        rule = self.house.tiles.formal_tenpai
        if rule != "yes":
            held = T.counts([*concealed, *(t for m in mem.melds for t in m.tiles)])
            waits = frozenset(k for k in waits if held[k] < 4)
        if rule == "open_hand_invalid" and not mem.closed:
            state = self.follower.state
            if state is None:
                return False
            waits = frozenset(
                k
                for k in waits
                if T.value(
                    self.house,
                    self.tileset,
                    self._context(
                        hand, state, seat, 4 * k + 3, (*concealed, 4 * k + 3), tsumo=False
                    ),
                )
                is not None
            )
        return bool(waits)

    async def _tile_drawn(self, hand: _Hand, state: W.WallState, seat: int) -> bool:
        """A bot holding a drawn tile, at a table that reads tiles: tsumo with a yaku,
        nine terminals, a kan or a north, riichi when tenpai, then the discard."""
        rng = self.rng
        fresh = hand.last_state is not state
        hand.last_state = state
        mem = self._mem(hand, seat)
        if not fresh:
            return await self._tile_discard(hand, state, seat)
        mem.temp_furiten = False
        concealed = self._hand_tiles(seat)
        score = self._tsumo_value(hand, state, seat)
        if score is not None:
            return await self._tsumo(hand, seat, score)
        if (
            len(terminal_kinds(concealed)) >= NINE_TERMINALS
            and "nine_terminals" in self.house.flow.abortive_draws
            and "nine_terminals" not in hand.refused
            and W.check_abort(self.rules, state, "nine_terminals") is None
            and rng.random() < P_TILE_NINE_TERMINALS
        ):
            return await self._abort(hand, seat, Key.DIGIT_1, "nine_terminals")
        have = T.counts(concealed)
        if seat not in hand.riichi:
            for meld in mem.melds:
                pon = kind(meld.tiles[0]) if meld.kind == "pon" else None
                fourth = [t for t in concealed if kind(t) == pon]
                if fourth and self._valid(state, Kan(seat, "added")) and rng.random() < P_TILE_KAN:
                    return await self._tile_kan(hand, state, seat, Key.DIGIT_2, (fourth[0],))
            quads = [k for k in range(34) if have[k] == 4]
            if quads and self._valid(state, Kan(seat, "closed")) and rng.random() < P_TILE_KAN:
                tiles = tuple(t for t in concealed if kind(t) == quads[0])
                return await self._tile_kan(hand, state, seat, Key.DIGIT_1, tiles)
        norths = [t for t in concealed if kind(t) == 30]
        if norths and self.rules.north_pulls and self._valid(state, North(seat)):
            return await self._tile_kan(hand, state, seat, Key.DIGIT_3, (norths[0],))
        score_shown = self._scores[seat]
        if (
            seat not in hand.riichi
            and mem.closed
            and score_shown is not None
            and score_shown >= 1000
            and W.check_riichi(self.rules, state, seat) is None
        ):
            tile, left = T.choose_discard(self.house, concealed, rng)
            if left == 0 and rng.random() < P_TILE_RIICHI:
                hand.riichi.add(seat)
                mem.double_riichi = not state.any_call and state.discards[seat] == 0
                self.fw.press(seat, Key.RIICHI)
                return await self._tile_discard(hand, state, seat, tile, riichi=True)
        return await self._tile_discard(hand, state, seat)

    async def _tile_discard(
        self,
        hand: _Hand,
        state: W.WallState,
        seat: int,
        tile: int | None = None,
        *,
        riichi: bool = False,
    ) -> bool:
        """A bot discards a real tile (the drawn one in riichi, else the one that keeps
        shanten lowest, never a kuikae swap) and play goes on from the discard."""
        assert self.zones is not None
        mem = self._mem(hand, seat)
        concealed = self._hand_tiles(seat)
        if tile is None:
            if seat in hand.riichi:
                tile = concealed[-1]
            else:
                tile, _ = T.choose_discard(self.house, concealed, self.rng, forbidden=mem.forbidden)
        self.fw.discard(seat, tile)
        mem.forbidden = frozenset()
        mem.discarded.add(kind(tile))
        mem.waits = T.waits(self.house, self._hand_tiles(seat))
        if riichi:
            mem.riichi_at = (sum(state.melds), state.discards[seat] + 1)
        self._claim = None
        return await self._discard(hand, state, seat)

    async def _tile_after_discard(self, hand: _Hand, after: W.WallState) -> bool:
        """After a real discard: a ron where it completes a hand with a yaku (not
        furiten), a call now and then where it lowers shanten, else the next take."""
        assert self.zones is not None
        discarder = after.last_discard
        assert discarder is not None
        tile = self.zones.last_discard(discarder)
        if tile is None:
            return await self._take(after.turn)
        for seat in self._others_from(discarder):
            if seat not in self.seats:
                continue
            score = self._ron_value(hand, after, seat, tile)
            key = (seat, tile, len(after.taken))
            if score is None or key in hand.refused_rons:
                self._passed(hand, seat, tile)
                continue
            self._claim = (discarder, tile, False)
            if await self._ron(hand, seat, score):
                hand.refused_rons.add(key)
                return True
            return False
        if after.finished:
            # The daemon asks RON? of the last discard: the bots' claim is that tile.
            self._claim = (discarder, tile, False)
            return await self._draw(hand, after.turn)
        if after.four_kans_abort_due:
            if after.turn in self.seats and "four_kans" not in hand.refused:
                return await self._abort(hand, after.turn, Key.DIGIT_4, "four_kans")
            return await self._take(after.turn)
        for seat in self._others_from(discarder):
            if seat not in self.seats or seat in hand.riichi:
                continue
            choice = self._call_choice(hand, after, seat, tile, discarder)
            if choice is not None:
                call, own = choice
                hand.called.add(seat)
                self.fw.press(seat, {"kan": Key.KAN, "pon": Key.PON, "chi": Key.CHI}[call])
                called = self.fw.call(seat, discarder, own)
                self._remember_call(hand, seat, call, called, own, discarder)
                return True
        return await self._take(after.turn)

    def _call_choice(
        self, hand: _Hand, after: W.WallState, seat: int, tile: int, discarder: int
    ) -> tuple[Literal["kan", "pon", "chi"], tuple[int, ...]] | None:
        """The call ``seat`` makes on ``discarder``'s ``tile``, if any: one the wall tracker
        allows, that lowers shanten (a kan: keeps it), leaves a legal discard and a yaku in
        reach."""
        concealed = self._hand_tiles(seat)
        mem = self._mem(hand, seat)
        now = T.shanten(self.house, concealed)
        options: list[tuple[Literal["kan", "pon", "chi"], tuple[int, ...]]] = []
        same = [t for t in concealed if kind(t) == kind(tile)]
        if len(same) == 3:
            options.append(("kan", tuple(same)))
        options += [("pon", own) for own in T.pon_options(concealed, tile)]
        if seat == after.turn:
            options += [("chi", own) for own in T.chi_options(concealed, tile)]
        for call, own in options:
            if not self._valid(after, Call(seat, call, discarder)):
                continue
            rest = list(concealed)
            for t in own:
                rest.remove(t)
            if not self._yaku_in_reach(hand, seat, rest, [*mem.melds], (tile, *own)):
                continue
            if call == "kan":
                if T.shanten(self.house, rest) > now or self.rng.random() >= P_TILE_OPEN_KAN:
                    continue
                return call, own
            forbidden = T.kuikae_kinds(tile, own) if not self.house.tiles.kuikae else frozenset()
            if all(kind(t) in forbidden for t in rest):
                continue
            _, left = T.choose_discard(self.house, rest, random.Random(0), forbidden=forbidden)
            if left < now and self.rng.random() < P_TILE_CALL:
                return call, own
        return None

    def _yaku_in_reach(
        self,
        hand: _Hand,
        seat: int,
        rest: list[int],
        melds: list[Meld],
        new_meld: tuple[int, ...],
    ) -> bool:
        """An open hand keeps a yaku in reach: a dragon or own wind triplet, or (kuitan)
        only simples melded and at most one other tile in the hand."""
        yakuhai = T.yakuhai_kinds((seat - hand.dealer) % self.players, self._round_wind())
        groups = [m.tiles for m in melds] + [new_meld]
        for group in groups:
            kinds = {kind(t) for t in group}
            if len(kinds) == 1 and kinds <= yakuhai:
                return True
        if not self.house.tiles.kuitan:
            return False
        melded_simple = all(T.is_simple(kind(t)) for group in groups for t in group)
        return melded_simple and sum(1 for t in rest if not T.is_simple(kind(t))) <= 1

    async def _chankan(self, hand: _Hand, state: W.WallState) -> bool | None:
        """Another bot robs the added kan when the added tile completes its hand; None
        when nobody does."""
        assert self.zones is not None
        maker = state.turn
        melds = self.zones.tiles(maker, Zone.MELDS)
        if not melds:
            return None
        tile = melds[-1]
        for seat in self._others_from(maker):
            if seat not in self.seats:
                continue
            key = (seat, tile, len(state.taken))
            score = self._ron_value(hand, state, seat, tile, chankan=True)
            if score is None or key in hand.refused_rons:
                self._passed(hand, seat, tile)
                continue
            self._claim = (maker, tile, True)
            if await self._ron(hand, seat, score):
                hand.refused_rons.add(key)
                return True
            return False
        return None

    async def _tile_kan(
        self, hand: _Hand, state: W.WallState, seat: int, digit: Key, tiles: tuple[int, ...]
    ) -> bool:
        """A closed kan (DIGIT_1), an added kan (DIGIT_2) or a north (DIGIT_3) with real
        tiles: declared with the keys, then the tiles are laid among the melds."""
        await self._kan(hand, state, seat, digit)
        if self.follower.state is state:
            return True  # refused: the next look at the same tile just discards
        self.fw.declare(seat, tiles)
        mem = self._mem(hand, seat)
        if digit == Key.DIGIT_1:
            mem.melds.append(Meld("closed_kan", tiles))
        elif digit == Key.DIGIT_2:
            for i, meld in enumerate(mem.melds):
                if meld.kind == "pon" and kind(meld.tiles[0]) == kind(tiles[0]):
                    mem.melds[i] = Meld(
                        "added_kan", (*meld.tiles, *tiles), meld.called, meld.source
                    )
                    break
        return True

    # ---- actions

    async def _take(self, seat: int, then: Callable[[], object] | None = None) -> bool:
        """``seat`` takes what the wall tracker says comes next, does ``then`` (kantan: lay
        its own tiles for the call it made, after the stand-in), and waits until the
        daemon shows the take."""
        if seat not in self.seats:
            # A person plays this seat: wait until the table reports what happened.
            state = self.follower.state
            return await self._wait_until(lambda: self.follower.state is not state, stall=False)
        positions = self.follower.expected_take(seat)
        after = self.follower.after_take(seat)
        if positions is None or after is None:
            # The tracker refuses, or names tiles already lifted: the bots leave the rest
            # of this hand to people (staff) and play again from the next ROLL?.
            _log.warning("bots: seat %d cannot take (wall tracker refuses): hand left", seat)
            self.hands_left += 1
            return False
        centre = self.fw.centre
        before_left = centre.tiles_left if centre is not None else None
        since = self.fw.display_seq
        expect = after.live_left
        self.fw.take(seat, positions, self.follower.take_zone(seat))
        if then is not None:
            then()

        def acked() -> bool:
            c = self.fw.centre
            if self._refused_at[seat] > since:
                return True
            if c is None or c.tiles_left != expect:
                return False
            return self._centre_seq > since or before_left == expect

        await self._wait_until(acked)
        if self._refused_at[seat] > since:
            # A refusal may be for a copy of an older take that the table re-sent to a
            # restarted daemon; if this take still shows up, play goes on.
            def shown() -> bool:
                c = self.fw.centre
                return c is not None and c.tiles_left == expect and self._centre_seq > since

            if not await self.fw.wait_for(shown, REFUSAL_GRACE):
                _log.error("bots: the daemon refused seat %d's take of %s", seat, list(positions))
                return False
        return True

    async def _tsumo(self, hand: _Hand, seat: int, score: HandScore | None = None) -> bool:
        since = self.fw.display_seq
        self._entries[seat] = self._entry(True, score)
        self.fw.press(seat, Key.TSUMO)
        return await self._after_win_key(hand, seat, since)

    async def _ron(self, hand: _Hand, seat: int, score: HandScore | None = None) -> bool:
        since = self.fw.display_seq
        self._entries[seat] = self._entry(False, score)
        self.fw.press(seat, Key.RON)
        return await self._after_win_key(hand, seat, since)

    def _entry(self, tsumo: bool, score: HandScore | None) -> _Entry:
        """A win entry: the real value when the bot knows it (``chosen``), else one the
        entry picks at ``HAN?``."""
        if score is None:
            return _Entry(tsumo=tsumo)
        fu = score.fu if self.house.scoring.table == "standard" and score.han < 5 else None
        return _Entry(tsumo=tsumo, han=score.han, fu=fu, yakuman=score.yakuman, chosen=True)

    async def _after_win_key(self, hand: _Hand, seat: int, since: int) -> bool:
        """After TSUMO/RON: the hand is over once an entry or a claim window opened; a
        refusal (a dead hand, say) means play goes on."""
        await self._wait_until(lambda: hand.over or self._refused_at[seat] > since)
        if hand.over:
            return False
        self._entries.pop(seat, None)
        self._intent.pop(seat, None)
        return True

    async def _kan(self, hand: _Hand, state: W.WallState, seat: int, digit: Key) -> bool:
        since = self.fw.display_seq
        self._intent[seat] = [digit]
        self.fw.press(seat, Key.KAN)
        await self._wait_until(
            lambda: self.follower.state is not state or self._refused_at[seat] > since
        )
        self._intent.pop(seat, None)
        return True  # refused: the next look at the same tile just discards

    async def _abort(self, hand: _Hand, seat: int, digit: Key, reason: str) -> bool:
        since = self.fw.display_seq
        self._intent[seat] = [digit, Key.OK]
        self.fw.press(seat, Key.MENU)
        await self._wait_until(lambda: hand.over or self._refused_at[seat] > since)
        self._intent.pop(seat, None)
        if not hand.over:
            hand.refused.add(reason)
        return not hand.over

    async def _draw(self, hand: _Hand, first: int) -> bool:
        """The wall is exhausted: decide every seat's tenpai, the first one declares. Where
        the daemon reads every tile it decides the draw once the last discard passed (or
        keys it in after all, when a hand reader disagrees then)."""
        if self.scored and not hand.keyed:
            await self._wait_until(lambda: hand.over or hand.keyed, stall=False)
            if hand.over:
                return False
        for seat in range(self.players):
            if self.zones is not None:
                hand.tenpai[seat] = self._tenpai(hand, seat)
            else:
                hand.tenpai[seat] = seat in hand.riichi or self.rng.random() < P_TENPAI
        if first not in self.seats:
            await self._wait_until(lambda: hand.over, stall=False)
            return False
        since = self.fw.display_seq
        self.fw.press(first, Key.TENPAI if hand.tenpai[first] else Key.NOTEN)
        await self._wait_until(lambda: hand.over or self._refused_at[first] > since)
        return False

    # ---- prompts

    async def _answer(self, seat: int) -> None:
        """Answer the prompt on ``seat``'s display (docs/console.md, "Prompts")."""
        console = self.fw.consoles[seat]
        line1, line2 = console.line1, console.line2
        prompt = prompt_of(line1)
        hand = self._hand
        # The last discard's window (RON? / LAST DISCARD, a table that reads its tiles) ends
        # the hand only with a ron or the draw the tiles decide: a hand reader that
        # disagrees then leaves the draw to the keys after all (see _draw).
        last_window = prompt == "RON?" and line2.startswith("LAST DISCARD")
        ends = prompt in ("HAN?", "FU?", "PAO?", "CHIPS?", "RON?", "TENPAI?", "CONFIRM", "OK?")
        if ends and hand and not last_window:
            hand.over = True  # a win entry, a claim window, the draw or the settlement
        if prompt == "ROLL?":
            self._hand_start = seat
            self.fw.press(seat, Key.OK)
        elif prompt == "HAN?":
            # "! hand: ..." says why this win is keyed, not that our entry was refused.
            refused = line2.startswith("! ") and not line2.startswith("! hand:")
            await self._enter_han(seat, refused=refused)
        elif prompt == "OK?":
            # The daemon scored the win from the tiles: agree (a refused one shows why).
            self.fw.press(seat, Key.OK if not line2.startswith("! ") else Key.CANCEL)
        elif prompt == "FU?":
            entry = self._entries.get(seat)
            fu = entry.fu if entry is not None and entry.fu is not None else 30
            for digit in str(fu):
                await self._press_echo(seat, Key(int(digit)))
            self.fw.press(seat, Key.OK)
        elif prompt == "CHIPS?":
            chips = 0 if line2.startswith("! ") else self.rng.choice(CHIP_COUNTS)
            if chips:
                await self._press_echo(seat, Key(chips))
            self.fw.press(seat, Key.OK)
        elif prompt == "PAO?":
            # With real tiles nobody is named: the bots do not track who fed a yakuman.
            pao = self.zones is None and self.house.scoring.pao and self.rng.random() < P_PAO
            if pao:
                other = self.rng.choice([s for s in range(self.players) if s != seat])
                await self._press_echo(seat, Key(other))
            self.fw.press(seat, Key.OK)
        elif prompt == "RON?":
            if self.zones is not None:
                score = self._claim_value(seat)
                join = score is not None
                if score is not None:
                    self._entries[seat] = self._entry(False, score)
            else:
                join = self.rng.random() < P_JOIN_RON
                if join:
                    self._entries[seat] = _Entry(tsumo=False)
            self.fw.press(seat, Key.RON if join else Key.CANCEL)
        elif prompt == "TENPAI?":
            tenpai = hand.tenpai.get(seat) if hand else None
            if tenpai is None and self.zones is not None and hand is not None:
                tenpai = self._tenpai(hand, seat)
            if tenpai is None:
                tenpai = self.rng.random() < P_TENPAI
            self.fw.press(seat, Key.TENPAI if tenpai else Key.NOTEN)
        elif prompt == "CONFIRM":
            self.fw.press(seat, Key.OK)
            self._settle_tray(seat, line2)
        elif prompt == "GAME OVER":
            self.fw.press(seat, Key.OK)
            self._gameover_ok.add(seat)
            if self._gameover_ok >= self.seats:
                self._gameover_ok.clear()
                self.games_finished += 1
                _log.info("bots: game %d over", self.games_finished)
                start = self.house.game.start_points
                for s in range(self.fw.players):  # sticks back to the start for a new game
                    if self.fw.trays[s] != start:
                        self.fw.move_tray(s, start - self.fw.trays[s])
                if self.on_game_over is not None:
                    self.on_game_over(self.games_finished)
        elif prompt == "STOP?":
            self.fw.press(seat, Key.OK if self.rng.random() < P_STOP else Key.CANCEL)
        elif prompt == "FAULT":
            # One OK is enough ("staff fixed it"); the other consoles show the same fault.
            for other in range(self.players):
                if self.fw.consoles[other].line1.startswith("FAULT"):
                    self._dirty.pop(other, None)
            self.fw.press(seat, Key.OK)
        else:  # KAN? ABORT? FROM? STAFF? SEAT?: ours if we started it, else leave it
            keys = self._intent.pop(seat, None)
            if keys is None:
                self.fw.press(seat, Key.CANCEL)
                return
            for key in keys[:-1]:
                await self._press_echo(seat, key)
            self.fw.press(seat, keys[-1])

    def _settle_tray(self, seat: int, line2: str) -> None:
        """Pay or collect sticks as CONFIRM says: to the total shown after ``=`` when there
        is one (``+3900 = 28900``), else by the signed amount."""
        if seat >= self.fw.players:
            return
        total = _TOTAL.search(line2)
        if total is not None:
            delta = int(total.group(1)) - self.fw.trays[seat]
        else:
            amount = _AMOUNT.search(line2)
            delta = int(amount.group()) if amount is not None else 0
        if delta:
            self.fw.move_tray(seat, delta)

    def _choose(self, entry: _Entry) -> None:
        rng = self.rng
        entry.chosen = True
        if entry.refusals >= 3:
            entry.han, entry.fu, entry.yakuman = SAFE_HAND[0], SAFE_HAND[1], 0
            return
        roll = rng.random()
        if roll < P_YAKUMAN:
            entry.han, entry.fu, entry.yakuman = 0, None, 1
        elif roll < P_YAKUMAN + P_LIMIT:
            entry.han, entry.fu, entry.yakuman = rng.choice(LIMIT_HANS), None, 0
        else:
            entry.han, fu = rng.choice(HANDS_TSUMO if entry.tsumo else HANDS_RON)
            entry.fu = fu if self.house.scoring.table == "standard" else None
            entry.yakuman = 0

    async def _enter_han(self, seat: int, *, refused: bool) -> None:
        entry = self._entries.setdefault(seat, _Entry(tsumo=False))
        if refused and entry.chosen:
            entry.refusals += 1
        if entry.refusals >= MAX_REFUSALS:
            _log.error("bots: seat %d gives up its win entry after %d refusals",
                       seat, entry.refusals)  # fmt: skip
            self.fw.press(seat, Key.CANCEL)
            return
        if refused or not entry.chosen:
            self._choose(entry)
        if entry.yakuman:
            for _ in range(entry.yakuman):
                await self._press_echo(seat, Key.MENU)
        else:
            for digit in str(entry.han):
                await self._press_echo(seat, Key(int(digit)))
        self.fw.press(seat, Key.OK)
