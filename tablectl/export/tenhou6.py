"""A game log as tenhou.net/6 JSON, the form the tenhou.net/6 viewer and review tools read.

Tiles are numbered 11-19 man, 21-29 pin, 31-39 sou, 41-47 east south west north haku
hatsu chun, and 51/52/53 for a red 5m/5p/5s (a gold five is written as red: the format
has no gold).  Each hand is ``[[kyoku, honba, sticks], scores, dora, ura]``, then per
seat its 13 dealt tiles, its takes (draws; ``c``/``p``/``m`` call strings, the marker's
place saying who the tile came from) and its discards (60 = the tile just drawn, ``r``
for the riichi tile, ``a``/``k`` for closed and added kans, ``f44`` for a north pulled,
0 after an open kan), then the result (each winner's yaku in Japanese with their han, as
tenhou.net lists them).  Three-player games keep four seats with the fourth empty, as
tenhou.net's own three-player logs do.  See docs/tiles.md, "Game logs".
"""

from __future__ import annotations

from typing import Any

from tablectl.export.log import (
    AddedKan,
    Call,
    ClosedKan,
    Discard,
    Draw,
    ExportError,
    GameLog,
    HandLog,
    HandResult,
    NorthPull,
    Win,
)
from tablectl.export.tenhou_yaku import tenhou_yaku
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import hand_value, ron_points, tsumo_payments
from tablectl.tiles.ids import TileSet, kind

__all__ = ["ABORT_NAMES", "tenhou6", "tile_code"]

SEATS = 4
TSUMOGIRI = 60
#: After an open kan the seat's discard column gets this placeholder (no discard).
OPEN_KAN_PLACEHOLDER = 0
ABORT_NAMES = {
    "nine_terminals": "九種九牌",
    "four_winds": "四風連打",
    "four_riichi": "四家立直",
    "four_kans": "四槓散了",
    "triple_ron": "三家和了",
}
#: Limit names by basic points, highest first.
LIMIT_NAMES = ((8000, "役満"), (6000, "三倍満"), (4000, "倍満"), (3000, "跳満"), (2000, "満貫"))


def tile_code(tile: int, tiles: TileSet) -> int:
    """tenhou.net/6's number for tile id ``tile`` (red and gold fives: 51, 52, 53)."""
    k = kind(tile)
    if k >= 27:
        return 41 + k - 27
    suit, number = divmod(k, 9)
    if tile in tiles.red or tile in tiles.gold:
        return 51 + suit
    return 10 * (suit + 1) + number + 1


def _sort_key(code: int) -> tuple[int, int]:
    # A red five sorts with the fives, after the plain ones (as tenhou.net writes hands).
    return (10 * (code - 50) + 5, 1) if code > 50 else (code, 0)


def _sorted(tiles: tuple[int, ...], ts: TileSet) -> list[int]:
    return sorted((tile_code(t, ts) for t in tiles), key=_sort_key)


def _call_text(call: Call, ts: TileSet, marker: str | None = None, added: int | None = None) -> str:
    """``c``/``p``/``m`` call strings; ``k`` for the pon's added kan (``added``)."""
    own = [str(c) for c in _sorted(call.own, ts)]
    called = str(tile_code(call.called, ts))
    if call.kind == "chi":
        return "c" + called + "".join(own)
    # Where the marker stands says who the tile came from: the player on the left first,
    # across in the middle, on the right last (three players: the empty fourth seat
    # counts, as on tenhou.net).
    relative = (call.source - call.seat) % SEATS
    letter = marker or ("p" if call.kind == "pon" else "m")
    head = letter + (str(tile_code(added, ts)) if added is not None else "") + called
    at = {3: 0, 2: 1, 1: len(own)}[relative]
    return "".join(own[:at]) + head + "".join(own[at:])


def _point_text(rules: HouseRules, win: Win, dealer: int) -> str:
    hand = win.hand
    value = hand_value(rules, han=hand.han, fu=hand.fu, yakuman=hand.yakuman, tsumo=win.tsumo)
    assert not isinstance(value, Refusal), value  # the core accepted this hand
    is_dealer = win.seat == dealer
    if win.tsumo:
        pays = tsumo_payments(rules, value, winner=win.seat, dealer=dealer)
        others = [p for s, p in enumerate(pays) if s not in (win.seat, dealer)]
        if is_dealer:
            points = f"{others[0]}点∀"
        else:
            points = f"{others[0] if others else pays[dealer]}-{pays[dealer]}点"
    else:
        points = f"{ron_points(rules, value, dealer=is_dealer)}点"
    for base, name in LIMIT_NAMES:
        if value.yakuman or value.base >= base:
            return name + points
    return f"{value.fu}符{value.han}飜{points}"


def _yaku(rules: HouseRules, win: Win) -> list[str]:
    if win.score is None:
        return []
    return tenhou_yaku(rules, win.score, opened=win.opened, riichi=win.riichi)


def _padded(values: tuple[int, ...]) -> list[int]:
    return list(values) + [0] * (SEATS - len(values))


def _result(rules: HouseRules, hand: HandLog) -> list[Any]:
    result: HandResult = hand.result
    if result.kind in ("ron", "tsumo"):
        out: list[Any] = ["和了"]
        for win in result.wins:
            pao = win.hand.pao if win.hand.pao is not None else win.seat
            yaku = _yaku(rules, win)
            out += [
                _padded(win.deltas),
                [win.seat, win.source, pao, _point_text(rules, win, hand.dealer), *yaku],
            ]
        return out
    if result.kind == "abort":
        return [ABORT_NAMES[result.reason]]
    if result.kind == "draw" and result.nagashi:
        return ["流し満貫", _padded(result.deltas)]
    everyone = len(result.tenpai) == rules.players
    if result.kind == "draw" and not any(result.deltas) and (everyone or not result.tenpai):
        return ["全員聴牌" if everyone else "全員不聴"]
    # tenhou.net/6 has no chombo: its payments are shown as those of a draw.
    return ["流局", _padded(result.deltas)]


def _hand(log: GameLog, hand: HandLog) -> list[Any]:
    ts = log.tiles
    players = log.rules.players
    takes: list[list[Any]] = [[] for _ in range(players)]
    discards: list[list[Any]] = [[] for _ in range(players)]
    for action in hand.actions:
        match action:
            case Draw(seat=seat, tile=tile):
                takes[seat].append(tile_code(tile, ts))
            case Discard(seat=seat, tile=tile, tsumogiri=tsumogiri, riichi=riichi):
                code = TSUMOGIRI if tsumogiri else tile_code(tile, ts)
                discards[seat].append(f"r{code}" if riichi else code)
            case Call(seat=seat):
                takes[seat].append(_call_text(action, ts))
                if action.kind == "kan":
                    discards[seat].append(OPEN_KAN_PLACEHOLDER)
            case ClosedKan(seat=seat, tiles=tiles):
                codes = [str(c) for c in _sorted(tiles, ts)]
                discards[seat].append("".join(codes[:3]) + "a" + codes[3])
            case AddedKan(seat=seat, tile=tile, pon=pon):
                discards[seat].append(_call_text(pon, ts, "k", tile))
            case NorthPull(seat=seat):
                discards[seat].append("f44")
    out: list[Any] = [
        [hand.round_index * SEATS + hand.dealer, hand.honba, hand.sticks],
        _padded(hand.scores),
        [tile_code(t, ts) for t in hand.dora],
        [tile_code(t, ts) for t in hand.ura] if any(w.riichi for w in hand.result.wins) else [],
    ]
    for seat in range(SEATS):
        if seat < players:
            out += [_sorted(hand.haipai[seat], ts), takes[seat], discards[seat]]
        else:
            out += [[], [], []]
    out.append(_result(log.rules, hand))
    return out


def _rule(log: GameLog) -> dict[str, Any]:
    rules, ts = log.rules, log.tiles
    coloured = ts.red | ts.gold
    per_suit = [sum(1 for t in coloured if kind(t) == 4 + 9 * suit) for suit in range(3)]
    length = "東" if rules.game.length == "east" else "南"
    disp = ("三" if rules.players == 3 else "") + length
    disp += ("喰" if rules.tiles.kuitan else "") + ("赤" if coloured else "")
    return {
        "disp": disp,
        "aka": 1 if coloured else 0,
        "aka51": per_suit[0],
        "aka52": per_suit[1],
        "aka53": per_suit[2],
    }


def tenhou6(log: GameLog, title: tuple[str, str] = ("", "")) -> dict[str, Any]:
    """The tenhou.net/6 JSON object of ``log``: ``title``, ``name``, ``rule``, ``log`` and,
    once the game is over, ``sc`` (each seat's final score and result points: the
    preset's result, or the score in thousands where the preset has none)."""
    if log.rules.wall.own_walls:
        raise ExportError(
            f"{log.rules.name}: own walls and calls on one's own turn (kantan) have no"
            " tenhou.net/6 form (its mjai log writes them, docs/tiles.md)"
        )
    names = list(log.names) + [""] * (SEATS - len(log.names))
    out: dict[str, Any] = {
        "title": list(title),
        "name": names,
        "rule": _rule(log),
        "log": [_hand(log, hand) for hand in log.hands],
    }
    final = log.final
    if final is not None:
        results = list(final.result) or [s / 1000 for s in final.scores]
        sc: list[Any] = []
        for score, result in zip(_padded(final.scores), results + [0] * SEATS, strict=False):
            sc += [score, result]
        out["sc"] = sc
    return out
