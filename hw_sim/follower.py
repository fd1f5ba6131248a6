"""The wall follower: the hand as the pure wall tracker sees it, from the table's reports.

:class:`WallFollower` follows the hand in the pure wall tracker
(:mod:`tablectl.rules.wall`) from what the table itself reports -- the dice, every
``WallTake``, the call and kan keys -- and infers discards exactly as docs/console.md says
the daemon does (a seat that drew has discarded when another seat takes, calls or rons).
It tells anyone (bots, scripts, the control interface) which tiles a seat takes next.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from firmware_bridge.messages import (
    DiceResult,
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
from hw_sim.firmware import Direction, SimFirmware
from tablectl.rules import wall as W
from tablectl.rules.events import Call, Discard, Kan, North, Take, WallEvent
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.walltrack import wall_rules

__all__ = ["WallFollower"]

_log = logging.getLogger(__name__)


class WallFollower:
    """The hand as the wall tracker sees it, from the table's own reports (see module doc).

    ``state`` is None between hands. ``desyncs`` counts reports the tracker refused: the
    daemon, which runs the same tracker, will have refused them too.
    """

    def __init__(self, house: HouseRules, firmware: SimFirmware) -> None:
        self.house = house
        self.rules = wall_rules(house)
        #: Rules the daemon plays from the next dice on (see :meth:`use_rules`).
        self.next_house: HouseRules | None = None
        self.firmware = firmware
        self.state: W.WallState | None = None
        self.desyncs = 0
        self._roll_seat: int | None = None
        self._lamp_dealer: int | None = None
        self._kan_pending: set[int] = set()
        #: Kantan: a seat's call key waiting for FROM? (the call kind, the seats typed).
        self._from_pending: dict[int, tuple[Literal["chi", "pon"], str]] = {}
        #: A call key's seat and the state before its call (see :meth:`withdraw_call`).
        self._called_from: tuple[int, W.WallState] | None = None
        #: (seat, state) of the last discard a person announced (see announce_discard).
        self.announced_discard: tuple[int, W.WallState] | None = None
        #: Whether a key pressed on ``seat`` makes what it says in the daemon's tracker (the
        #: bots say: at a table that reads tiles, not one someone else pressed on a bot's
        #: seat; see hw_sim.players._key_counts).
        self.takes_key: Callable[[int], bool] = lambda seat: True
        firmware.add_listener(self._on_message)

    def use_rules(self, house: HouseRules) -> None:
        """Follow the hands under ``house`` from the next dice on (staff changed the
        daemon's rules: its new game starts with a shuffle and dice)."""
        self.next_house = house

    def withdraw_call(self, seat: int) -> None:
        """``seat`` withdrew the call its key made (CANCEL at ``PLACE MELD``: no meld was
        laid): the hand is as it was before that key, if nothing happened since."""
        called, self._called_from = self._called_from, None
        state = self.state
        if called is None or called[0] != seat or state is None:
            return
        if state.phase == W.CALLED and state.turn == seat:
            self.state = called[1]
            self.firmware._wake()

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

    def forget_take(self, taken: W.WallState | None, before: W.WallState | None) -> None:
        """A take the daemon refused went back to the wall: the tracker, at ``taken`` (the
        state the take's report made), returns to ``before`` (the state before it, so
        the discard the take implied goes too), as the daemon's never left it. Anything
        reported since (a new hand's dice) stands."""
        if self.state is taken:
            self.state = before

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
                if self.next_house is not None:
                    self.house, self.next_house = self.next_house, None
                    self.rules = wall_rules(self.house)
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
        if not self.takes_key(seat):
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
            before = state  # the discard the key implies is withdrawn with it
            self._infer_discard(seat)
            discarder = self.state.last_discard if self.state is not None else None
            if discarder is not None:
                kind: Literal["chi", "pon", "kan"] = (
                    "pon" if key == Key.PON else "chi" if key == Key.CHI else "kan"
                )
                if self._apply(Call(seat, kind, discarder)):
                    self._called_from = (seat, before)
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
