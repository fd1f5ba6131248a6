"""A game log as mjai events (JSON Lines, one object a line), the form mjai bots and
review tools read.

Tiles are ``"1m"`` .. ``"9s"``, ``"5mr"`` for a red five (a gold five is written as red),
``"E" "S" "W" "N"`` and ``"P" "F" "C"`` (haku, hatsu, chun).  A game is ``start_game``,
per hand ``start_kyoku`` ... ``end_kyoku``, then ``end_game``.  mjai has no three-player
standard: a three-player game is written with three ``tehais``, ``scores`` and ``deltas``
and a ``nukidora`` event for a north pulled (as three-player mjai bots read it).  See
docs/tiles.md, "Game logs".
"""

from __future__ import annotations

from typing import Any

from tablectl.export.log import (
    Action,
    AddedKan,
    Call,
    ClosedKan,
    Discard,
    DoraRevealed,
    Draw,
    GameLog,
    HandLog,
    NorthPull,
    RiichiAccepted,
)
from tablectl.tiles.ids import TileSet, kind

__all__ = ["mjai", "tile_name"]

HONOURS = ("E", "S", "W", "N", "P", "F", "C")
CALL_TYPES = {"chi": "chi", "pon": "pon", "kan": "daiminkan"}


def tile_name(tile: int, tiles: TileSet) -> str:
    """mjai's name of tile id ``tile`` (``"5pr"`` for a red or gold five)."""
    k = kind(tile)
    if k >= 27:
        return HONOURS[k - 27]
    suit, number = divmod(k, 9)
    red = "r" if tile in tiles.red or tile in tiles.gold else ""
    return f"{number + 1}{'mps'[suit]}{red}"


def _names(tiles: tuple[int, ...], ts: TileSet) -> list[str]:
    return [tile_name(t, ts) for t in sorted(tiles)]


def _in_order(actions: tuple[Action, ...]) -> list[Action]:
    """The actions with a kan dora turned at the kan written before the replacement draw.

    The tracker turns an added kan's indicator (where the preset turns kan dora at once)
    after the replacement draw.  Written in that order, the ``dora`` line stands between
    the seat's ``tsumo`` and its ``dahai``: libriichi's own log checker takes it, but a
    reader that feeds the log to libriichi line by line has the dora clear the seat's
    candidates and then refuses the discard ("cannot discard").  Before the draw, as an
    open and a closed kan are already written, every reader takes it (docs/tiles.md,
    "Game logs").
    """
    out = list(actions)
    for i in range(1, len(out) - 1):
        before, here, after = out[i - 1], out[i], out[i + 1]
        kan = isinstance(before, AddedKan | ClosedKan) or (
            isinstance(before, Call) and before.kind == "kan"
        )
        if kan and isinstance(here, Draw) and here.rinshan and isinstance(after, DoraRevealed):
            out[i], out[i + 1] = after, here
    return out


def _hand(log: GameLog, hand: HandLog) -> list[dict[str, Any]]:
    ts = log.tiles
    out: list[dict[str, Any]] = [
        {
            "type": "start_kyoku",
            "bakaze": "ESWN"[hand.round_index % 4],
            "kyoku": hand.dealer + 1,
            "honba": hand.honba,
            "kyotaku": hand.sticks,
            "oya": hand.dealer,
            "dora_marker": tile_name(hand.dora[0], ts),
            "scores": list(hand.scores),
            "tehais": [_names(tiles, ts) for tiles in hand.haipai],
        }
    ]
    for action in _in_order(hand.actions):
        match action:
            case Draw(seat=seat, tile=tile):
                out.append({"type": "tsumo", "actor": seat, "pai": tile_name(tile, ts)})
            case Discard(seat=seat, tile=tile, tsumogiri=tsumogiri, riichi=riichi):
                if riichi:
                    out.append({"type": "reach", "actor": seat})
                pai = tile_name(tile, ts)
                out.append({"type": "dahai", "actor": seat, "pai": pai, "tsumogiri": tsumogiri})
            case Call(seat=seat, kind=call_kind, source=source, called=called, own=own):
                line = {
                    "type": CALL_TYPES[call_kind],
                    "actor": seat,
                    "target": source,
                    "pai": tile_name(called, ts),
                    "consumed": _names(own, ts),
                }
                if action.stand_in is not None:
                    line["stand_in"] = tile_name(action.stand_in, ts)
                out.append(line)
            case ClosedKan(seat=seat, tiles=tiles):
                out.append({"type": "ankan", "actor": seat, "consumed": _names(tiles, ts)})
            case AddedKan(seat=seat, tile=tile, pon=pon):
                out.append(
                    {
                        "type": "kakan",
                        "actor": seat,
                        "pai": tile_name(tile, ts),
                        "consumed": _names((pon.called, *pon.own), ts),
                    }
                )
            case NorthPull(seat=seat, tile=tile):
                out.append({"type": "nukidora", "actor": seat, "pai": tile_name(tile, ts)})
            case RiichiAccepted(seat=seat):
                out.append({"type": "reach_accepted", "actor": seat})
            case DoraRevealed(tile=tile):
                out.append({"type": "dora", "dora_marker": tile_name(tile, ts)})
    result = hand.result
    for win in result.wins:
        # kantan counts no ura dora (seed 004), as the scorer has it.
        ura_counts = win.riichi and log.rules.scoring.table != "kantan"
        ura = [tile_name(t, ts) for t in hand.ura] if ura_counts else []
        out.append(
            {
                "type": "hora",
                "actor": win.seat,
                "target": win.source,
                "deltas": list(win.deltas),
                "ura_markers": ura,
            }
        )
    if not result.wins:
        out.append({"type": "ryukyoku", "deltas": list(result.deltas)})
    out.append({"type": "end_kyoku"})
    return out


def mjai(log: GameLog) -> list[dict[str, Any]]:
    """The mjai events of ``log``, one dict per line."""
    coloured = bool(log.tiles.red or log.tiles.gold)
    out: list[dict[str, Any]] = [
        {
            "type": "start_game",
            "names": list(log.names),
            # As mjai-reviewer writes it: 0 for East+South, 4 for an East-only game.
            "kyoku_first": 4 if log.rules.game.length == "east" else 0,
            "aka_flag": coloured,
        }
    ]
    for hand in log.hands:
        out += _hand(log, hand)
    out.append({"type": "end_game"})
    return out
