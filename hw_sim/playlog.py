"""Play a logged game (tenhou.net mjlog or tenhou.net/6) at the simulated table.

:class:`LogPlayer` plans every hand's dice and wall layout (:mod:`hw_sim.playlog_wall`)
on a :class:`~hw_sim.table.SimTable` that reads its tiles, then plays the log's actions
against the daemon as people at the table would: the dealer's OK at ``ROLL?``, the deal
and every draw taken where the wall tracker says (the planned layout puts the log's tile
there), discards into the ponds, calls with their key and the meld laid, kans with KAN
and the digit, riichi with its key, wins with TSUMO or RON (the other winner of a double
ron at ``RON?``), the aborts with MENU, the digit and OK; ``OK?``, ``PAO?``, ``CONFIRM``
and ``GAME OVER`` are answered.  The daemon scores everything from the tiles.

It stops at the first place the daemon's table differs from the log with
:class:`Diverged`, whose message is one line naming the hand and the action: a refusal on
a seat display, a take the daemon does not show, scores after a hand other than the
log's, a prompt the log has no answer for, a game that ends early or goes on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from firmware_bridge.messages import CentreDisplay, Key, Message, SeatDisplay
from hw_sim.firmware import (
    BUILD_SECONDS,
    DICE_SECONDS,
    RAISE_SECONDS,
    SHUFFLE_SECONDS,
    Direction,
)
from hw_sim.playlog_wall import HandDeal, hand_deal
from hw_sim.table import SimTable
from hw_sim.wall import tile_name
from tablectl.logs.game import (
    Action,
    AddedKan,
    Call,
    ClosedKan,
    Discard,
    Draw,
    DrawnHand,
    LogError,
    LogGame,
    LogHand,
    LogRules,
    NewDora,
    RiichiAccepted,
    Win,
)
from tablectl.rules import wall as W
from tablectl.rules.walltrack import wall_rules

__all__ = ["PRESET", "Diverged", "LogPlayer", "describe", "preset_for"]

_log = logging.getLogger(__name__)

#: The preset that plays tenhou.net's games (four players, East+South, red fives).
PRESET = "tenhou"
#: Seconds of loop time the daemon may take to answer one move before the play stops.
ANSWER_TIMEOUT = 10.0
#: Seconds the motors and the dice take between two hands at speed 1.
MOTOR_SECONDS = SHUFFLE_SECONDS + BUILD_SECONDS + RAISE_SECONDS + DICE_SECONDS
_TOTAL = re.compile(r"=\s*(-?\d+)")
#: Display line-1 prompts the player answers (docs/console.md), longest first.
_PROMPTS = (
    "GAME OVER", "TENPAI?", "CONFIRM", "ABORT?", "STAFF?", "FAULT", "ROLL?", "STOP?",
    "SEAT?", "HAN?", "PAO?", "RON?", "KAN?", "FU?",
)  # fmt: skip
_ABORT_DIGITS = {"nine_terminals": 1, "four_winds": 2, "four_riichi": 3, "four_kans": 4}


class Diverged(Exception):
    """The daemon's table left the log; the message is one line saying where and how."""


def preset_for(rules: LogRules) -> str:
    """The preset that plays a log with ``rules``; raises :class:`LogError` for rules no
    preset matches (only tenhou.net's four-player East+South with red fives has one)."""
    if rules.players != 4 or not rules.red_fives or rules.length != "south":
        raise LogError(
            f"no preset plays these rules ({rules.players} players, red fives"
            f" {'on' if rules.red_fives else 'off'}, {rules.length}): only tenhou.net's"
            " four-player East+South with red fives (preset tenhou)"
        )
    return PRESET


def describe(action: Action) -> str:
    """One action in words: ``seat 2 discards 5m (riichi)``."""
    match action:
        case Draw(seat=seat, tile=tile, rinshan=rinshan):
            return f"seat {seat} draws {tile_name(tile)}{' (replacement)' if rinshan else ''}"
        case Discard(seat=seat, tile=tile, riichi=riichi):
            return f"seat {seat} discards {tile_name(tile)}{' (riichi)' if riichi else ''}"
        case RiichiAccepted(seat=seat):
            return f"seat {seat}'s riichi stick"
        case Call(seat=seat, kind=kind, source=source, called=called):
            return f"seat {seat} calls {kind} on {tile_name(called)} from seat {source}"
        case ClosedKan(seat=seat, tiles=tiles):
            return f"seat {seat} closed kan of {tile_name(tiles[0])}"
        case AddedKan(seat=seat, tile=tile):
            return f"seat {seat} adds {tile_name(tile)} to its pon"
        case NewDora(indicator=tile):
            return f"kan dora indicator {tile_name(tile)}"
    return repr(action)  # pragma: no cover - every action is named above


@dataclass(slots=True)
class _Where:
    """Where the play is, for the one line of a divergence."""

    hand: str = "before the first hand"
    step: str = ""

    def __str__(self) -> str:
        return f"hand {self.hand}{', ' + self.step if self.step else ''}"


class LogPlayer:
    """Plays ``game`` at ``table`` (built with autoplay off and every tile reader on),
    against whatever daemon opens its endpoint.  Make it before the table starts (its
    first shuffle must take the first hand's layout); ``await run()`` returns once the
    log's last hand is confirmed at ``GAME OVER`` or raises :class:`Diverged`."""

    def __init__(self, table: SimTable, game: LogGame, *, timeout: float = ANSWER_TIMEOUT) -> None:
        if table.bots is not None:
            raise ValueError("a table that plays a log has no bots (autoplay off)")
        if table.firmware.zones is None:
            raise ValueError("a table that plays a log reads its tiles (--tile-reader)")
        self.table = table
        self.fw = table.firmware
        self.game = game
        self.timeout = timeout
        rules = wall_rules(table.house)
        self.deals: list[HandDeal] = [hand_deal(rules, h, i) for i, h in enumerate(game.hands)]
        for deal in self.deals:
            table.next_dice(deal.dice)
            table.next_layout(deal.layout)
        #: Hands the daemon confirmed as the log has them.
        self.hands_played = 0
        self.where = _Where()
        self._dirty: dict[int, int] = {}
        self._order = 0
        self._text: list[tuple[str, str]] = [("", "")] * 4
        self._centre_seq = 0
        self._refusal: tuple[int, str] | None = None
        self._intent: dict[int, list[Key]] = {}
        self._ron_winners: set[int] = set()
        self._ron_pressed: set[int] = set()
        self._pao: dict[int, int | None] = {}
        self._confirmed: set[int] = set()
        self._totals: dict[int, int] = {}
        self._gameover: set[int] = set()
        self._expect_roll: int | None = None
        self.fw.add_listener(self._on_message)

    # ---- watching the displays

    def _on_message(self, direction: Direction, msg: Message) -> None:
        if direction != "rx":
            return
        if isinstance(msg, CentreDisplay):
            self._centre_seq = self.fw.display_seq
        elif isinstance(msg, SeatDisplay) and msg.seat < 4:
            text = (msg.line1, msg.line2)
            if text == self._text[msg.seat]:
                return
            self._text[msg.seat] = text
            refused = msg.line2.startswith("! ") and not msg.line2.startswith("! TRAY")
            if refused and self._refusal is None:
                self._refusal = (msg.seat, msg.line2)
            self._order += 1
            self._dirty[msg.seat] = self._order

    def _fail(self, what: str) -> Diverged:
        return Diverged(f"{self.where}: {what}")

    def _check_refusal(self) -> None:
        if self._refusal is not None:
            seat, line2 = self._refusal
            line1 = self.fw.consoles[seat].line1
            raise self._fail(f"seat {seat} shows {line1.strip()!r} / {line2.strip()!r}")

    async def _wait(
        self, cond: Callable[[], bool], what: str, *, extra: float | None = 0.0
    ) -> None:
        """Wait for ``cond``, answering prompts in the order they appeared, at most the
        player's timeout and ``extra`` seconds (None: as long as it takes)."""
        within = None if extra is None else self.timeout + extra
        while True:
            self._check_refusal()
            if cond():
                return
            if self._dirty:
                seat = min(self._dirty, key=self._dirty.__getitem__)
                del self._dirty[seat]
                await self._answer(seat)
                continue
            ok = await self.fw.wait_for(
                lambda: cond() or bool(self._dirty) or self._refusal is not None, within
            )
            if not ok:
                limit = "before the table closed" if within is None else f"within {within:g} s"
                raise self._fail(f"the daemon did not {what} {limit}")

    async def _press_echo(self, seat: int, key: Key) -> None:
        seq = self._order
        self.fw.press(seat, key)
        await self.fw.wait_for(lambda: self._order > seq, self.timeout)
        self._dirty.pop(seat, None)

    async def _answer(self, seat: int) -> None:
        line1, line2 = self.fw.consoles[seat].line1, self.fw.consoles[seat].line2
        prompt = next((p for p in _PROMPTS if line1.startswith(p)), None)
        if prompt is None and line1.endswith("OK?"):
            prompt = "OK?"
        if prompt is None:
            return
        if prompt == "ROLL?":
            if self._expect_roll is None:
                raise self._fail(f"the daemon asks seat {seat} to roll; the log has ended")
            if seat != self._expect_roll:
                raise self._fail(
                    f"the daemon asks seat {seat} to roll; the log's dealer is seat"
                    f" {self._expect_roll}"
                )
            self._expect_roll = None
            self.fw.press(seat, Key.OK)
        elif prompt == "OK?":
            self.fw.press(seat, Key.OK)
        elif prompt == "PAO?":
            pao = self._pao.get(seat)
            if pao is not None:
                await self._press_echo(seat, Key(pao))
            self.fw.press(seat, Key.OK)
        elif prompt == "RON?":
            if seat in self._ron_pressed:
                return
            join = seat in self._ron_winners
            if join:
                self._ron_pressed.add(seat)
            self.fw.press(seat, Key.RON if join else Key.CANCEL)
        elif prompt == "CONFIRM":
            total = _TOTAL.search(line2)
            if total is not None:
                self._totals[seat] = int(total.group(1))
            self._confirmed.add(seat)
            self.fw.press(seat, Key.OK)
        elif prompt == "GAME OVER":
            self._gameover.add(seat)
            self.fw.press(seat, Key.OK)
        elif prompt in ("KAN?", "ABORT?") and seat in self._intent:
            keys = self._intent.pop(seat)
            for key in keys[:-1]:
                await self._press_echo(seat, key)
            self.fw.press(seat, keys[-1])
        else:
            raise self._fail(f"seat {seat} asks {line1.strip()!r} / {line2.strip()!r}")

    # ---- playing

    async def run(self) -> None:
        """Play every hand of the log, then confirm the game's end."""
        for index, hand in enumerate(self.game.hands):
            self.where = _Where(hand.name, "at its start")
            await self._play_hand(index, hand)
            self.hands_played += 1
        self.where = _Where(self.game.hands[-1].name, "after the log's last hand")
        await self._wait(lambda: len(self._gameover) == 4, "end the game")

    async def _play_hand(self, index: int, hand: LogHand) -> None:
        self._expect_roll = hand.dealer
        self._ron_winners, self._ron_pressed = set(), set()
        self._confirmed, self._totals = set(), {}
        seen = self.fw.dice_count
        if self._gameover:
            raise self._fail("the daemon ended the game; the log goes on")
        await self._wait(
            lambda: (
                self.fw.dice_count > seen
                and self.table.follower.state is not None
                or bool(self._gameover)
            ),
            "ask the dealer to roll",
            # The daemon may connect long after the table is up; later hands wait for the
            # motors (the shuffle, building and raising the walls, the dice).
            extra=None if index == 0 else MOTOR_SECONDS * self.fw.speed,
        )
        if self._gameover:
            raise self._fail("the daemon ended the game; the log goes on")
        if tuple(self.fw.wall.tiles) != self.deals[index].layout:
            raise self._fail("the walls are not the log's (a shuffle the plan did not expect)")
        self.where.step = "the deal"
        while (state := self.table.follower.state) is not None and state.phase == W.DEAL:
            await self._take(state.turn, None)
        for seat in range(4):
            held = sorted(self.fw.wall.tile_at(p) for p in self._dealt(seat))
            if held != sorted(hand.haipai[seat]):
                raise self._fail(f"seat {seat} was not dealt the log's tiles")
        for n, action in enumerate(hand.actions, 1):
            self.where.step = f"action {n} ({describe(action)})"
            await self._act(action)
        await self._finish(hand)

    def _dealt(self, seat: int) -> list[int]:
        state = self.table.follower.state
        assert state is not None
        return [p for p, s in zip(state.taken, state.taken_by, strict=True) if s == seat]

    async def _take(self, seat: int, tile: int | None) -> None:
        follower = self.table.follower
        positions = follower.expected_take(seat)
        after = follower.after_take(seat)
        if positions is None or after is None:
            raise self._fail(f"seat {seat} has no take due by the wall tracker")
        if tile is not None and self.fw.wall.tile_at(positions[0]) != tile:
            there = tile_name(self.fw.wall.tile_at(positions[0]))
            raise self._fail(f"seat {seat}'s take would be {there}, not the log's")
        since = self.fw.display_seq
        expect = after.live_left
        before = self.fw.centre.tiles_left if self.fw.centre is not None else None
        self.fw.take(seat, positions, follower.take_zone(seat))

        def shown() -> bool:
            centre = self.fw.centre
            if centre is None or centre.tiles_left != expect:
                return False
            return self._centre_seq > since or before == expect

        await self._wait(shown, f"show seat {seat}'s take")

    async def _act(self, action: Action) -> None:
        fw = self.fw
        match action:
            case Draw(seat=seat, tile=tile):
                await self._take(seat, tile)
            case Discard(seat=seat, tile=tile, riichi=riichi):
                if riichi:
                    fw.press(seat, Key.RIICHI)
                assert fw.zones is not None  # checked when the player was made
                if tile not in fw.zones.hand(seat):
                    raise self._fail(f"seat {seat} does not hold {tile_name(tile)}")
                fw.discard(seat, tile)
            case Call(seat=seat, kind=kind, source=source, own=own):
                fw.press(seat, {"chi": Key.CHI, "pon": Key.PON, "kan": Key.KAN}[kind])
                fw.call(seat, source, own)
            case ClosedKan(seat=seat, tiles=tiles):
                await self._kan(seat, Key.DIGIT_1, tiles)
            case AddedKan(seat=seat, tile=tile):
                await self._kan(seat, Key.DIGIT_2, (tile,))
            case RiichiAccepted() | NewDora():
                pass  # the daemon does these itself: the scores and the exports tell

    async def _kan(self, seat: int, digit: Key, tiles: tuple[int, ...]) -> None:
        self._intent[seat] = [digit]
        self.fw.press(seat, Key.KAN)
        await self._wait(lambda: seat not in self._intent, f"ask seat {seat} KAN?")
        self.fw.declare(seat, tiles)

    async def _finish(self, hand: LogHand) -> None:
        result = hand.result
        last_seat = next(
            (a.seat for a in reversed(hand.actions) if isinstance(a, Draw | Discard)), hand.dealer
        )
        if isinstance(result, DrawnHand):
            self.where.step = f"the {result.kind.replace('_', ' ')} draw"
            digit = _ABORT_DIGITS.get(result.kind)
            if digit is not None:
                # Nine terminals is the drawing seat's; the others anyone's: the next seat.
                seat = last_seat if result.kind == "nine_terminals" else (last_seat + 1) % 4
                self._intent[seat] = [Key(digit), Key.OK]
                self.fw.press(seat, Key.MENU)
            elif result.kind == "triple_ron":
                raise self._fail("a triple-ron abort is not played (its winners are not logged)")
        else:
            self._play_wins(result)
        expected = [s + d for s, d in zip(hand.scores, hand.deltas(), strict=True)]
        await self._wait(
            lambda: len(self._confirmed) == 4 or bool(self._gameover), "confirm the hand"
        )
        for seat, total in sorted(self._totals.items()):
            if total != expected[seat]:
                raise self._fail(
                    f"seat {seat} has {total} after the hand, the log {expected[seat]}"
                )

    def _play_wins(self, wins: tuple[Win, ...]) -> None:
        first = wins[0]
        self.where.step = "the win" if len(wins) == 1 else "the wins"
        self._pao = {w.seat: w.pao for w in wins}
        if first.source == first.seat:
            self.fw.press(first.seat, Key.TSUMO)
            return
        self._ron_winners = {w.seat for w in wins}
        self._ron_pressed = {first.seat}
        self.fw.press(first.seat, Key.RON)
