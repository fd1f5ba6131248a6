"""Autoplay bots at the simulated table.

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

The table follows the hand with a :class:`~hw_sim.follower.WallFollower` and leaves the
decisions of play to one of two players: at a table with seat readers
(``SimFirmware.zones``) :class:`~hw_sim.tileplay.TilePlay` plays the tiles the bots hold;
without them :class:`~hw_sim.keyedplay.KeyedPlay` decides by probabilities.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Callable
from typing import Protocol

from firmware_bridge.messages import (
    CentreDisplay,
    Fault,
    FaultCode,
    Key,
    Message,
    SeatDisplay,
    SeatLamps,
)
from hw_sim.botmemory import Entry, Hand, entry_for
from hw_sim.firmware import Direction, SimFirmware
from hw_sim.follower import WallFollower
from hw_sim.keyedplay import P_TENPAI, KeyedPlay, choose_entry
from hw_sim.tileplay import TilePlay
from hw_sim.zones import TableZones
from tablectl.rules import wall as W
from tablectl.rules.events import Discard, WallEvent
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.walltrack import wall_rules
from tablectl.tiles.hand import HandScore

__all__ = [
    "PROMPTS",
    "BotTable",
    "WallFollower",
    "prompt_of",
]

_log = logging.getLogger(__name__)

#: Display line-1 prompts of docs/console.md, longest first so prefixes do not shadow.
PROMPTS = (
    "PLACE MELD",
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
#: Prompts that show once the hand in play is over: nothing more is to be played in it.
PROMPTS_ENDING_A_HAND = frozenset(
    {"HAN?", "FU?", "PAO?", "CHIPS?", "RON?", "TENPAI?", "CONFIRM", "OK?", "GAME OVER", "ROLL?"}
)
_SCORE = re.compile(r"^[ESWN]\s+(-?\d+)")
_AMOUNT = re.compile(r"[+-]?\d+")
_TOTAL = re.compile(r"=\s*(-?\d+)")
#: Chips a keyed bot enters at CHIPS? (a small count, often none; legal everywhere).
CHIP_COUNTS = (0, 0, 0, 1, 2)

# The keyed bots' answers at prompts (their play: hw_sim.keyedplay).
P_JOIN_RON = 0.05  # another seat also rons in a claim window
P_PAO = 0.1
P_STOP = 0.5
MAX_REFUSALS = 6
#: Seconds a refused take may still be confirmed by the centre display (fault cases only).
REFUSAL_GRACE = 1.0
#: Line 2 of a seat display when the daemon stopped reading the tiles of the hand
#: (docs/console.md): on the idle seats, and on the seat whose hand reader disagreed.
KEYED_LINES = ("KEY ENTRY: NO TILES", "! hand:")
#: Line 2 where the daemon dropped a key pressed on another screen (docs/console.md, "A key
#: pressed on another screen"): about an older key, never the echo of the one just pressed.
STALE_LINE = "! screen changed"
#: Line 2 where the daemon refused a key because a fault stands (docs/console.md): a key
#: for after the fault, not a refusal of what it asked.
FAULT_LINE = "! fault: fix it"
#: How often a bot presses a key again that the daemon dropped for a changed screen.
STALE_RETRIES = 3


def _settle_tray(fw: SimFirmware, seat: int, line2: str) -> None:
    """Pay or collect sticks as CONFIRM says: to the total shown after ``=`` when there
    is one (``+3900 = 28900``), else by the signed amount."""
    if seat >= fw.players:
        return
    total = _TOTAL.search(line2)
    if total is not None:
        delta = int(total.group(1)) - fw.trays[seat]
    else:
        amount = _AMOUNT.search(line2)
        delta = int(amount.group()) if amount is not None else 0
    if delta:
        fw.move_tray(seat, delta)


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


class Play(Protocol):
    """The decisions of play a :class:`BotTable` leaves to its player (keyed or tiles):
    each makes one move and returns False when the bots stop playing this hand."""

    async def drawn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` holds a drawn tile: win, kan, north, abort, riichi, or just discard."""

    async def called(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` called: it discards."""

    async def after_discard(self, hand: Hand, after: W.WallState) -> bool:
        """The last discard is out: ron, call, the draw, or the next seat takes."""

    async def own_turn(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """Kantan: ``seat``'s own turn before the draw, the wall not exhausted."""

    async def chankan(self, hand: Hand, state: W.WallState) -> bool | None:
        """Another bot robs the added kan (the move's result); None when nobody does."""

    async def tenpai_at_draw(self, hand: Hand) -> bool:
        """The wall is exhausted: each seat's tenpai into ``hand.tenpai``; False when the
        hand is over without the bots declaring the draw."""


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
        #: Rules to play from the next hand on (see :meth:`use_rules`).
        self._next_house: HouseRules | None = None
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
        #: Takes the daemon refused, put back in the wall (they count in nobody's hand).
        self.takes_put_back = 0
        #: Seconds to wait before each move of play, for people watching (0: none). It
        #: changes when the bots act, never what they do; prompts are answered at once.
        self.pace = 0.0
        self._stopped = False
        self._hand: Hand | None = None
        #: The hand :meth:`_play_hand` is playing (None between hands).
        self._playing: Hand | None = None
        self._hand_start: int | None = None
        self._entries: dict[int, Entry] = {}
        self._intent: dict[int, list[Key]] = {}
        #: Seats whose call key the bots pressed (their meld is on its way).
        self.calling: set[int] = set()
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
        #: The tile player at a table with seat readers (None: the keyed bots play).
        self.tiles = TilePlay(self, self.zones) if self.zones is not None else None
        #: The table reads every tile (seat and wall readers): the daemon scores the wins
        #: (the bots agree at ``OK?``) and decides the exhaustive draw (no TENPAI/NOTEN).
        self.scored = self.tiles is not None and self.tiles.scored
        self.play: Play = self.tiles if self.tiles is not None else KeyedPlay(self)
        #: The seat a bot is pressing a key on, while it does (see :meth:`press`).
        self._pressing: int | None = None
        self.follower.takes_key = lambda seat: _key_counts(self, seat)
        firmware.add_listener(self._on_message)

    def press(self, seat: int, key: Key) -> None:
        """A bot presses ``key`` on its seat: the wall follower, which sees every key as it
        is pressed, knows it for the bots' own (:func:`_key_counts`)."""
        self._pressing = seat
        try:
            self.fw.press(seat, key)
        finally:
            self._pressing = None

    # ---- observation (listener: runs as each command arrives)

    def _on_message(self, direction: Direction, msg: Message) -> None:
        if direction != "rx":
            if isinstance(msg, Fault) and msg.code == FaultCode.TILE_READER and self._hand:
                self._hand.keyed = True
            return
        if isinstance(msg, CentreDisplay):
            self._centre_seq = self.fw.display_seq
        elif isinstance(msg, SeatLamps) and self._hand is not None:
            self._hand.riichi_lamp(msg.seat, msg.riichi)
        elif isinstance(msg, SeatDisplay):
            seat = msg.seat
            text = (msg.line1, msg.line2)
            if text == self._text[seat]:
                return  # a redraw: nothing new to answer
            if not (msg.line2 == STALE_LINE and msg.line1 == self._text[seat][0]):
                self._changes[seat] += 1
            self._text[seat] = text
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

    def use_rules(self, house: HouseRules) -> None:
        """Play the hands from the next dice on under ``house`` (staff started a game
        with other rules on the daemon); the wall follower is told too."""
        if house.players != self.players:
            raise ValueError(f"{house.name} is for {house.players} players, not {self.players}")
        self._next_house = house
        self.follower.use_rules(house)

    def _take_up_rules(self) -> None:
        house, self._next_house = self._next_house, None
        if house is None:
            return
        _log.info("bots: playing %s from this hand on", house.name)
        self.house, self.rules = house, wall_rules(house)
        self.tiles = TilePlay(self, self.zones) if self.zones is not None else None
        self.play = self.tiles if self.tiles is not None else KeyedPlay(self)

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
        """Wait for ``cond``, answering prompts meanwhile. False when stopped or stalled,
        or when the hand being played ended (whatever the bots were waiting for in it
        will not come: the daemon went on to a settlement, the next hand or game)."""
        while not self.done:
            if cond():
                return True
            if self._playing is not None and self._playing.over:
                return False
            seat = self._next_prompt()
            if seat is not None:
                await self._answer(seat)
                continue
            ok = await self.fw.wait_for(
                lambda: (
                    cond()
                    or bool(self._dirty)
                    or self.done
                    or bool(self._playing and self._playing.over)
                ),
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
        self.press(seat, key)
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
                self._playing = None
                if self._hand is not None:
                    self._hand.over = True

    async def _play_hand(self, dealer: int) -> None:
        seen = self._dice_seen
        if not await self._wait_until(lambda: self.fw.dice_count > seen):
            return
        self._dice_seen = self.fw.dice_count
        self._take_up_rules()
        self.hands_started += 1
        hand = Hand(dealer)
        self._hand = self._playing = hand
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

    async def _step(self, hand: Hand, state: W.WallState) -> bool:
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
        if phase == W.RINSHAN:
            if state.replacing == "kan" and state.last_kan == "added":
                robbed = await self.play.chankan(hand, state)
                if robbed is not None:
                    return robbed
            return await self._take(turn)
        if phase == W.DISCARD:
            return await self.play.drawn(hand, state, turn)
        if phase == W.CALLED:
            if self.tiles is not None and turn not in self.calling:
                # Not our call: its meld never comes; withdrawn at PLACE MELD.
                return await self._wait_until(lambda: self.follower.state is not state)
            return await self.play.called(hand, state, turn)
        if phase == W.CLAIM:
            if self.rules.own_walls:
                return await self._own_turn(hand, state)
            return await self.play.after_discard(hand, state)
        return False  # pragma: no cover - every phase is handled

    async def _discard(self, hand: Hand, state: W.WallState, seat: int) -> bool:
        """``seat`` discards (the table does not sense it): go on from the discard."""
        self.calling.discard(seat)
        after = W.wall_step(self.rules, state, Discard(seat))
        if isinstance(after, Refusal):  # pragma: no cover - a drawn or called seat discards
            return False
        if self.rules.own_walls:
            return await self._own_turn(hand, after)
        return await self.play.after_discard(hand, after)

    async def _own_turn(self, hand: Hand, state: W.WallState) -> bool:
        """Kantan: on your own turn, before the draw, ron off another's last discard, or
        the exhaustive draw once everyone made their discards, or take."""
        seat = state.turn
        if state.finished:
            return await self._draw(hand, seat)
        if seat not in self.seats:
            return await self._take(seat)  # waits for the person at that seat
        return await self.play.own_turn(hand, state, seat)

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
        before = self.follower.state
        self.fw.take(seat, positions, self.follower.take_zone(seat))
        taken = self.follower.state
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
                _log.error("bots: the daemon refused seat %d's take of %s: put back",
                           seat, list(positions))  # fmt: skip
                # Kept, the tiles sat in a hand the daemon never counted them in, and the
                # next hand dealt on top of them (an 18-tile hand: sanma-free seed 47).
                self.fw.put_back(seat, positions)
                self.follower.forget_take(taken, before)
                self.takes_put_back += 1
                return False
        return True

    async def _tsumo(self, hand: Hand, seat: int, score: HandScore | None = None) -> bool:
        self._entries[seat] = entry_for(self.house, True, score)
        return await self._after_win_key(hand, seat, Key.TSUMO)

    async def _ron(self, hand: Hand, seat: int, score: HandScore | None = None) -> bool:
        self._entries[seat] = entry_for(self.house, False, score)
        return await self._after_win_key(hand, seat, Key.RON)

    async def _after_win_key(self, hand: Hand, seat: int, key: Key) -> bool:
        """TSUMO/RON: the hand is over once an entry or a claim window opened; a
        refusal (a dead hand, say) means play goes on."""
        await press_for(self, hand, seat, key)
        if hand.over:
            return False
        self._entries.pop(seat, None)
        self._intent.pop(seat, None)
        return True

    async def _kan(self, hand: Hand, state: W.WallState, seat: int, digit: Key) -> bool:
        since = self.fw.display_seq
        self._intent[seat] = [digit]
        self.press(seat, Key.KAN)
        await self._wait_until(
            lambda: self.follower.state is not state or self._refused_at[seat] > since
        )
        self._intent.pop(seat, None)
        return True  # refused: the next look at the same tile just discards

    async def _abort(self, hand: Hand, seat: int, digit: Key, reason: str) -> bool:
        self._intent[seat] = [digit, Key.OK]
        await press_for(self, hand, seat, Key.MENU)
        self._intent.pop(seat, None)
        if not hand.over:
            hand.refused.add(reason)
        return not hand.over

    async def _draw(self, hand: Hand, first: int) -> bool:
        """The wall is exhausted: decide every seat's tenpai, the first one declares. Where
        the daemon reads every tile it decides the draw once the last discard passed (or
        keys it in after all, when a hand reader disagrees then)."""
        if not await self.play.tenpai_at_draw(hand):
            return False
        if first not in self.seats:
            await self._wait_until(lambda: hand.over, stall=False)
            return False
        await press_for(self, hand, first, Key.TENPAI if hand.tenpai[first] else Key.NOTEN)
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
        ends = prompt in PROMPTS_ENDING_A_HAND
        if ends and hand and not last_window:
            # A win entry, a claim window, the draw, the settlement, or past them all: a
            # draw that ends the game goes straight to GAME OVER, without CONFIRM.
            hand.over = True
        if prompt == "ROLL?":
            self._hand_start = seat
            self.press(seat, Key.OK)
        elif prompt == "HAN?":
            # "! hand: ..." says why this win is keyed, not that our entry was refused.
            refused = line2.startswith("! ") and not line2.startswith("! hand:")
            await _enter_han(self, seat, refused=refused)
        elif prompt == "OK?":
            # The daemon scored the win from the tiles: agree (a refused one shows why;
            # "! screen changed" is about an older key, not this win).
            refused = line2.startswith("! ") and line2 != STALE_LINE
            self.press(seat, Key.CANCEL if refused else Key.OK)
        elif prompt in ("FU?", "CHIPS?", "PAO?"):
            await _enter_number(self, seat, prompt, line2)
        elif prompt == "RON?":
            if self.tiles is not None:
                score = self.tiles.claim_value(seat)
                join = score is not None
                if score is not None:
                    self._entries[seat] = entry_for(self.house, False, score)
            else:
                join = self.rng.random() < P_JOIN_RON
                if join:
                    self._entries[seat] = Entry(tsumo=False)
            self.press(seat, Key.RON if join else Key.CANCEL)
        elif prompt == "TENPAI?":
            tenpai = hand.tenpai.get(seat) if hand else None
            if tenpai is None and self.tiles is not None and hand is not None:
                tenpai = self.tiles.tenpai(hand, seat)
            if tenpai is None:
                tenpai = self.rng.random() < P_TENPAI
            self.press(seat, Key.TENPAI if tenpai else Key.NOTEN)
        elif prompt == "CONFIRM":
            self.press(seat, Key.OK)
            _settle_tray(self.fw, seat, line2)
        elif prompt == "GAME OVER":
            self.press(seat, Key.OK)
            self._gameover_ok.add(seat)
            if self._gameover_ok >= self.seats:
                _game_over(self)
        elif prompt == "PLACE MELD" and seat not in self.calling:
            # Someone pressed a call key on this seat: withdraw it, as a person would.
            self.follower.withdraw_call(seat)
            self.press(seat, Key.CANCEL)
        elif prompt == "STOP?":
            self.press(seat, Key.OK if self.rng.random() < P_STOP else Key.CANCEL)
        elif prompt == "FAULT":
            # One OK is enough ("staff fixed it"); the other consoles show the same fault.
            for other in range(self.players):
                if self.fw.consoles[other].line1.startswith("FAULT"):
                    self._dirty.pop(other, None)
            self.press(seat, Key.OK)
        else:  # KAN? ABORT? FROM? STAFF? SEAT?: ours if we started it, else leave it
            keys = self._intent.pop(seat, None)
            if keys is None:
                self.press(seat, Key.CANCEL)
                return
            for key in keys[:-1]:
                await self._press_echo(seat, key)
            self.press(seat, keys[-1])


def _key_counts(bots: BotTable, seat: int) -> bool:
    """The wall follower takes a key on ``seat`` (a call, a kan, a ron or a draw key, and
    the discard it implies) as the daemon's tracker will: at a table that reads tiles, in a
    tile-aware hand, only a bot's own key on a bot's seat. A call someone else presses
    there is held for a meld nobody lays, and withdrawn; a ron or a draw key the tiles
    refuse changes nothing (issue 29: the follower made the call, or the discard a RON
    implied, and the hand waited for ever for what never came)."""
    hand = bots._hand
    keyed = hand is not None and hand.keyed
    return bots.tiles is None or seat not in bots.seats or bots._pressing == seat or keyed


async def _enter_number(bots: BotTable, seat: int, prompt: str, line2: str) -> None:
    """``FU?``: the fu the bot knows (else 30); ``CHIPS?``: some chips now and then;
    ``PAO?``: someone now and then, keyed bots only (with real tiles nobody is named: the
    bots do not track who fed a yakuman). Then OK."""
    if prompt == "FU?":
        entry = bots._entries.get(seat)
        fu = entry.fu if entry is not None and entry.fu is not None else 30
        digits = [Key(int(digit)) for digit in str(fu)]
    elif prompt == "CHIPS?":
        chips = 0 if line2.startswith("! ") else bots.rng.choice(CHIP_COUNTS)
        digits = [Key(chips)] if chips else []
    else:
        house = bots.house
        pao = bots.zones is None and house.scoring.pao and bots.rng.random() < P_PAO
        others = [s for s in range(bots.players) if s != seat]
        digits = [Key(bots.rng.choice(others))] if pao else []
    for digit in digits:
        await bots._press_echo(seat, digit)
    bots.press(seat, Key.OK)


def _game_over(bots: BotTable) -> None:
    """Every bot seat confirmed GAME OVER: one more game, the sticks back to the start."""
    bots._gameover_ok.clear()
    bots.games_finished += 1
    _log.info("bots: game %d over", bots.games_finished)
    start = bots.house.game.start_points
    for s in range(bots.fw.players):
        if bots.fw.trays[s] != start:
            bots.fw.move_tray(s, start - bots.fw.trays[s])
    if bots.on_game_over is not None:
        bots.on_game_over(bots.games_finished)


async def _enter_han(bots: BotTable, seat: int, *, refused: bool) -> None:
    """Enter ``seat``'s han at ``HAN?``: the value it knows, else a chosen one (another
    after a refusal); CANCEL after too many refusals."""
    entry = bots._entries.setdefault(seat, Entry(tsumo=False))
    if refused and entry.chosen:
        entry.refusals += 1
    if entry.refusals >= MAX_REFUSALS:
        _log.error("bots: seat %d gives up its win entry after %d refusals",
                   seat, entry.refusals)  # fmt: skip
        bots.press(seat, Key.CANCEL)
        return
    if refused or not entry.chosen:
        choose_entry(entry, bots.rng, bots.house)
    if entry.yakuman:
        for _ in range(entry.yakuman):
            await bots._press_echo(seat, Key.MENU)
    else:
        for digit in str(entry.han):
            await bots._press_echo(seat, Key(int(digit)))
    bots.press(seat, Key.OK)


async def press_for(bots: BotTable, hand: Hand, seat: int, key: Key) -> None:
    """A bot presses ``key`` on ``seat`` and waits until the hand is over or the daemon
    refuses. A key the daemon dropped because the screen changed under it, or refused
    because a fault stands, was never taken: the bot presses it again once the table is
    back, as a person would (docs/console.md, "A key pressed on another screen"), unless
    the seat now shows a prompt, which takes the answer instead."""
    since = [0]

    def answered() -> bool:
        return hand.over or bots._refused_at[seat] > since[0]

    for _ in range(STALE_RETRIES):
        since[0] = bots.fw.display_seq
        bots.press(seat, key)
        await bots._wait_until(answered)
        if hand.over or not bots._text[seat][1].startswith((STALE_LINE, FAULT_LINE)):
            return
        await bots._wait_until(lambda: hand.over or bots._table_ok())
        if prompt_of(bots.fw.consoles[seat].line1) is not None:
            # A prompt came instead (the last discard's RON?, a win's OK?): it is
            # answered as such; the key again would land on it, dropped once more.
            return
