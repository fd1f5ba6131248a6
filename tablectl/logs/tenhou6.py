"""tenhou.net/6 JSON as a :class:`~.game.LogGame`.

A game is one object ``{"title", "name", "rule", "log": [hand, ...], "sc"?}``, or JSON
Lines of such objects with one hand each (as some archives store it; their ``log``
arrays are joined).  A hand is ``[[kyoku, honba, sticks], scores, dora indicators, ura
indicators, then per seat its 13 dealt tiles, takes and discards, then the result]``.

Tiles are codes 11-19, 21-29, 31-39 (man, pin, sou), 41-47 (the honours), 51-53 (the red
fives).  A take is a tile drawn or a call: ``c`` + called + own two (a chi, from the
left); ``p`` / ``m`` before the called tile of a pon / an open kan, first among its
codes when called from the left, second from across, last from the right.  A discard is
a tile, 60 for the tile just drawn, ``r`` + either for the riichi tile, ``XXXXXXaXX`` for a
closed kan, the pon's string with ``k`` + the added tile for an added kan, 0 after an
open kan (no discard).  The order of the seats' actions is not written: it follows from
the turn order (a pon or kan of the discard first, then a chi by the next seat, else the
next seat draws).  Kan dora are turned where tenhou.net's mjlog turns them: at once for a
closed kan, after the replacement draw for an open one (before the discard, or at the
next kan).

The format has no tile ids, no dice and no seed; ids are given as
:mod:`.game` says, ``dice`` and ``wall`` stay ``None``, and ``fu`` is 0 for a limit
hand written without its fu.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

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
from tablectl.logs.yaku import YAKU_IDS, YAKUMAN_HAN

__all__ = ["parse_tenhou6", "tile_code_kind"]

TSUMOGIRI = 60
RESULT_WIN = "和了"
DRAW_KINDS = {
    "流局": "exhaustive",
    "全員聴牌": "exhaustive",
    "全員不聴": "exhaustive",
    "流し満貫": "nagashi",
    "九種九牌": "nine_terminals",
    "四家立直": "four_riichi",
    "三家和了": "triple_ron",
    "四槓散了": "four_kans",
    "四風連打": "four_winds",
}
_RED = {51: 4, 52: 13, 53: 22}
_YAKU = re.compile(r"^(.+)\((\d+)飜\)$|^(.+)\(役満\)$")
_POINTS = re.compile(r"^(?:(\d+)符\d+飜|満貫|跳満|倍満|三倍満|役満)(\d+)(?:-(\d+))?点(∀)?$")


def tile_code_kind(code: int) -> tuple[int, bool]:
    """The kind 0..33 of tenhou.net/6 tile ``code`` and whether it is a red five."""
    if code in _RED:
        return _RED[code], True
    suit, number = divmod(code, 10)
    if not (1 <= suit <= 3 and 1 <= number <= 9) and not (suit == 4 and 1 <= number <= 7):
        raise LogError(f"{code!r} is not a tile code")
    return (suit - 1) * 9 + number - 1, False


class _Ids:
    """Gives each physical tile an id the first time it is seen."""

    def __init__(self, red_fives: bool) -> None:
        self._red_fives = red_fives
        self._used: set[int] = set()

    def new(self, code: int) -> int:
        kind, red = tile_code_kind(code)
        if red:
            copies: tuple[int, ...] = (0,)
        elif self._red_fives and kind in _RED.values():
            copies = (1, 2, 3)
        else:
            copies = (0, 1, 2, 3)
        for copy in copies:
            tile = kind * 4 + copy
            if tile not in self._used:
                self._used.add(tile)
                return tile
        raise LogError(f"more copies of tile {code} than the set holds")


def _code(tile: int, red_fives: bool) -> int:
    kind = tile // 4
    if red_fives and tile % 4 == 0 and kind in _RED.values():
        return 51 + kind // 9
    suit, number = divmod(kind, 9)
    return (suit + 1) * 10 + number + 1


def _codes(text: str) -> list[int]:
    digits = re.sub(r"[a-z]", "", text)
    if len(digits) % 2:
        raise LogError(f"call {text!r} is not pairs of digits")
    return [int(digits[i : i + 2]) for i in range(0, len(digits), 2)]


def _called(text: str, seat: int) -> tuple[Literal["chi", "pon", "kan"], int, int]:
    """A take that is a call: its kind, the seat called from, the called tile's code."""
    m = re.search(r"[cpm]", text)
    if m is None:
        raise LogError(f"take {text!r} is neither a tile nor a call")
    letter, at = m[0], m.start()
    called = int(text[at + 1 : at + 3])
    if letter == "c":
        return "chi", (seat + 3) % 4, called
    last = 4 if letter == "p" else 6
    offsets = {0: 3, 2: 2, last: 1}
    if at not in offsets:
        raise LogError(f"call {text!r} has its marker at an impossible place")
    return ("pon" if letter == "p" else "kan"), (seat + offsets[at]) % 4, called


@dataclass
class _Play:
    """The turn-by-turn reading of one hand."""

    red_fives: bool
    ids: _Ids
    hands: list[list[int]]
    takes: list[list[Any]]
    discards: list[list[Any]]
    kan_dora: list[int]
    actions: list[Action] = field(default_factory=list)
    taken: list[int] = field(default_factory=lambda: [0] * 4)
    done: list[int] = field(default_factory=lambda: [0] * 4)
    drawn: list[int | None] = field(default_factory=lambda: [None] * 4)
    dora_due: int = 0

    def next_take(self, seat: int) -> Any:
        return (
            self.takes[seat][self.taken[seat]] if self.taken[seat] < len(self.takes[seat]) else None
        )

    def remove(self, seat: int, code: int, avoid: int | None = None) -> int:
        """Take a tile of ``code`` out of ``seat``'s hand (not ``avoid`` if another fits)."""
        fits = [t for t in self.hands[seat] if _code(t, self.red_fives) == code]
        if not fits:
            raise LogError(f"seat {seat} gives up tile {code}, which it does not hold")
        tile = next((t for t in fits if t != avoid), fits[0])
        self.hands[seat].remove(tile)
        return tile

    def turn_dora(self, count: int) -> None:
        for _ in range(count):
            if not self.kan_dora:
                raise LogError("a kan turns more dora than the hand lists")
            self.actions.append(NewDora(self.ids.new(self.kan_dora.pop(0))))

    def draw(self, seat: int, rinshan: bool) -> None:
        take = self.next_take(seat)
        if not isinstance(take, int):
            raise LogError(f"seat {seat} should draw, its take is {take!r}")
        self.taken[seat] += 1
        tile = self.ids.new(take)
        self.hands[seat].append(tile)
        self.drawn[seat] = tile
        self.actions.append(Draw(seat, tile, rinshan))

    def call(self, seat: int, source: int, tile: int) -> Literal["chi", "pon", "kan"]:
        take = self.takes[seat][self.taken[seat]]
        self.taken[seat] += 1
        kind, _, called = _called(take, seat)
        codes = _codes(take)
        codes.remove(called)
        own = tuple(self.remove(seat, c) for c in codes)
        self.actions.append(Call(seat, kind, source, tile, own))
        self.drawn[seat] = None
        return kind

    def caller(self, seat: int, code: int) -> int | None:
        """The seat that calls ``seat``'s discard of ``code``, if one does."""
        for other in (seat + 1, seat + 2, seat + 3):
            take = self.next_take(other % 4)
            if isinstance(take, str) and re.search("[pm]", take):
                _, source, called = _called(take, other % 4)
                if source == seat and called == code:
                    return other % 4
        take = self.next_take((seat + 1) % 4)
        if isinstance(take, str) and take.startswith("c") and int(take[1:3]) == code:
            return (seat + 1) % 4
        return None

    def act(self, seat: int) -> tuple[int, int, bool] | None:
        """``seat`` plays its discard column until it discards: the discarded tile, its
        code and whether it declared riichi; ``None`` when the hand ended first."""
        while True:
            if self.done[seat] >= len(self.discards[seat]):
                return None
            entry = self.discards[seat][self.done[seat]]
            self.done[seat] += 1
            if isinstance(entry, str) and ("a" in entry or "k" in entry):
                self.kan(seat, entry)
                if self.next_take(seat) is None:
                    return None  # robbed (chankan) or the hand ended on the kan
                self.draw(seat, rinshan=True)
                continue
            riichi = isinstance(entry, str) and entry.startswith("r")
            code = int(entry[1:]) if isinstance(entry, str) and riichi else entry
            if not isinstance(code, int) or code == 0:
                raise LogError(f"seat {seat} has discard {entry!r} where a discard belongs")
            drawn = self.drawn[seat]
            if code == TSUMOGIRI:
                if drawn is None:
                    raise LogError(f"seat {seat} discards the drawn tile after a call")
                tile = drawn
                self.hands[seat].remove(tile)
            else:
                tile = self.remove(seat, code, avoid=drawn)
            self.turn_dora(self.dora_due)
            self.dora_due = 0
            self.actions.append(Discard(seat, tile, tile == drawn, riichi))
            self.drawn[seat] = None
            return tile, _code(tile, self.red_fives), riichi

    def kan(self, seat: int, entry: str) -> None:
        if "a" in entry:
            codes = _codes(entry)
            tiles = tuple(self.remove(seat, c) for c in codes)
            self.actions.append(ClosedKan(seat, (tiles[0], tiles[1], tiles[2], tiles[3])))
            self.turn_dora(self.dora_due + 1)
            self.dora_due = 0
        else:
            at = entry.index("k")
            tile = self.remove(seat, int(entry[at + 1 : at + 3]))
            self.actions.append(AddedKan(seat, tile))
            self.turn_dora(self.dora_due)
            self.dora_due = 1
        self.drawn[seat] = None


def _win(detail: list[Any], deltas: list[int], dealer: int) -> Win:
    if len(detail) < 4:
        raise LogError(f"win detail {detail!r} is too short")
    who, source, pao, text = detail[:4]
    m = _POINTS.match(text)
    if m is None:
        raise LogError(f"win points {text!r} not understood")
    fu, first, second, all_pay = m[1], int(m[2]), m[3], m[4]
    if who == source:
        points = first * 3 if all_pay else first * 2 + int(second or 0)
    else:
        points = first
    yaku: list[tuple[int, int]] = []
    for name in detail[4:]:
        y = _YAKU.match(name)
        if y is None or (y[1] or y[3]) not in YAKU_IDS:
            raise LogError(f"yaku {name!r} not understood")
        yaku.append((YAKU_IDS[y[1] or y[3]], int(y[2]) if y[2] else YAKUMAN_HAN))
    return Win(
        seat=who,
        source=source,
        fu=int(fu) if fu else 0,
        points=points,
        han=sum(h for _, h in yaku),
        yaku=tuple(yaku),
        pao=pao if pao != who else None,
        deltas=tuple(deltas),
    )


def _result(entry: list[Any], dealer: int) -> tuple[Win, ...] | DrawnHand:
    if not entry or not isinstance(entry[0], str):
        raise LogError(f"result {entry!r} not understood")
    name = entry[0]
    if name == RESULT_WIN:
        pairs = entry[1:]
        if not pairs or len(pairs) % 2:
            raise LogError(f"win result {entry!r} is not deltas/detail pairs")
        return tuple(_win(pairs[i + 1], pairs[i], dealer) for i in range(0, len(pairs), 2))
    if name not in DRAW_KINDS:
        raise LogError(f"result {name!r} not understood")
    deltas = tuple(entry[1]) if len(entry) > 1 else (0, 0, 0, 0)
    return DrawnHand(DRAW_KINDS[name], deltas)


def _hand(entry: list[Any], rules: LogRules, index: int) -> LogHand:
    if len(entry) != 17:
        raise LogError(f"hand {index + 1} has {len(entry)} fields, not 17")
    (round_index, honba, sticks), scores, dora, ura = entry[:4]
    dealer = round_index % 4
    ids = _Ids(rules.red_fives)
    haipai = [[ids.new(c) for c in entry[4 + 3 * s]] for s in range(4)]
    play = _Play(
        red_fives=rules.red_fives,
        ids=ids,
        hands=[list(h) for h in haipai],
        takes=[list(entry[5 + 3 * s]) for s in range(4)],
        discards=[list(entry[6 + 3 * s]) for s in range(4)],
        kan_dora=list(dora[1:]),
    )
    first_dora = ids.new(dora[0])
    result = _result(entry[16], dealer)
    seat = dealer
    if play.next_take(seat) is not None:
        play.draw(seat, rinshan=False)
    while (out := play.act(seat)) is not None:
        tile, code, riichi = out
        caller = play.caller(seat, code)
        if caller is None and play.next_take((seat + 1) % 4) is None:
            won_on = isinstance(result, tuple) and any(w.source == seat for w in result)
            if riichi and not won_on:
                play.actions.append(RiichiAccepted(seat))
            break
        if riichi:
            play.actions.append(RiichiAccepted(seat))
        if caller is None:
            seat = (seat + 1) % 4
            play.draw(seat, rinshan=False)
            continue
        kind = play.call(caller, seat, tile)
        seat = caller
        if kind == "kan":
            if (
                play.done[seat] >= len(play.discards[seat])
                or play.discards[seat][play.done[seat]] != 0
            ):
                raise LogError(
                    f"hand {index + 1}: no 0 in seat {seat}'s discards after its open kan"
                )
            play.done[seat] += 1
            play.draw(seat, rinshan=True)
            play.dora_due = 1
    left = [
        s for s in range(4) if play.next_take(s) is not None or play.done[s] < len(play.discards[s])
    ]
    if left:
        raise LogError(f"hand {index + 1}: seat {left[0]}'s actions do not fit the turn order")
    return LogHand(
        round_index=round_index,
        honba=honba,
        sticks=sticks,
        dealer=dealer,
        scores=tuple(scores),
        haipai=tuple(tuple(h) for h in haipai),
        dora=first_dora,
        ura=tuple(ids.new(c) for c in ura),
        actions=tuple(play.actions),
        result=result,
    )


def _rules(rule: Any) -> LogRules:
    if not isinstance(rule, dict) or not isinstance(rule.get("disp"), str):
        raise LogError("no rule.disp (the game's rules)")
    disp: str = rule["disp"]
    red = bool(rule.get("aka") or rule.get("aka51") or rule.get("aka52") or rule.get("aka53"))
    return LogRules(
        players=3 if "三" in disp else 4,
        red_fives=red or "赤" in disp,
        open_tanyao="喰" in disp,
        length="east" if "東" in disp else "south",
    )


def _objects(text: str) -> list[dict[str, Any]]:
    try:
        whole = json.loads(text)
        objects = [whole]
    except json.JSONDecodeError:
        try:
            objects = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise LogError(f"not JSON: {exc}") from None
    if not objects or not all(
        isinstance(o, dict) and isinstance(o.get("log"), list) for o in objects
    ):
        raise LogError("not a tenhou.net/6 game: no log array")
    return objects


def parse_tenhou6(text: str) -> LogGame:
    """The game of the tenhou.net/6 JSON ``text`` (one object, or JSON Lines of hands).
    Raises :class:`~.game.LogError` for anything this reader does not understand (a
    three-player log among them)."""
    objects = _objects(text)
    rules = _rules(objects[0].get("rule"))
    if rules.players != 4:
        raise LogError("three-player logs are not read")
    entries = [hand for o in objects for hand in o["log"]]
    try:
        hands = tuple(_hand(entry, rules, i) for i, entry in enumerate(entries))
    except (TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, LogError):
            raise
        raise LogError(f"malformed hand: {exc}") from None
    sc = objects[-1].get("sc")
    final = tuple(int(v) for v in sc[0::2]) if isinstance(sc, list) else None
    return LogGame(rules, hands, final)
