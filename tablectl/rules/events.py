"""Events the rules core accepts, and their JSON (replay) form.

Each event is a frozen dataclass.  :func:`parse_event` turns one decoded JSON object
into an event or raises :class:`EventFormatError` naming what is wrong.  Parsing checks
shape and types only; whether an event is *legal* (a seat that exists, a han/fu that can
be scored, a take in turn) is decided by the core, which answers with a
:class:`~tablectl.rules.refusal.Refusal`.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

ABORT_REASONS = ("nine_terminals", "four_winds", "four_riichi", "triple_ron", "four_kans")
AbortReason = Literal["nine_terminals", "four_winds", "four_riichi", "triple_ron", "four_kans"]
CallKind = Literal["chi", "pon", "kan"]
KanKind = Literal["closed", "added"]


class EventFormatError(ValueError):
    """A replay line is not a well-formed event (bad shape, unknown type, wrong field type)."""


@dataclass(frozen=True, slots=True)
class Hand:
    """One winner's hand value: han and fu, or a yakuman count (``yakuman`` > 0).

    ``chips`` is the count of chips (祝儀) the hand earns besides the yakuman chips, as
    the winner entered it (None: not given, none); yakuman chips follow from the value.
    """

    seat: int
    han: int = 0
    fu: int | None = None
    yakuman: int = 0
    pao: int | None = None
    chips: int | None = None


@dataclass(frozen=True, slots=True)
class Start:
    """First line of a replay: names the preset (ignored when ``--rules`` is given)."""

    rules: str


@dataclass(frozen=True, slots=True)
class Riichi:
    """A riichi declaration by ``seat``."""

    seat: int


@dataclass(frozen=True, slots=True)
class Ron:
    """A win off a discard.  ``discarders`` has one seat except in kantan, where its one
    winner is paid by each of them: at one value for all, or listed once per discarder,
    in their order, at the value of each discarder's tile (:attr:`each_discarder`)."""

    discarders: tuple[int, ...]
    winners: tuple[Hand, ...]

    @property
    def each_discarder(self) -> bool:
        """Kantan's winner is listed once per discarder, each with its own value."""
        return (
            len(self.discarders) > 1
            and len(self.winners) == len(self.discarders)
            and len({w.seat for w in self.winners}) == 1
        )

    def pairs(self) -> tuple[tuple[Hand, int], ...]:
        """Every (winner's hand, discarder) that is paid: each listed hand with its own
        discarder under :attr:`each_discarder`, else every winner with every discarder."""
        if self.each_discarder:
            return tuple(zip(self.winners, self.discarders, strict=True))
        return tuple((w, d) for w in self.winners for d in self.discarders)


@dataclass(frozen=True, slots=True)
class Tsumo:
    """A self-drawn win."""

    hand: Hand


@dataclass(frozen=True, slots=True)
class Draw:
    """An exhaustive draw with the tenpai seats and any nagashi mangan seats."""

    tenpai: tuple[int, ...]
    nagashi: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Abort:
    """An abortive draw."""

    reason: AbortReason


@dataclass(frozen=True, slots=True)
class Chombo:
    """A major penalty against ``seat``."""

    seat: int


@dataclass(frozen=True, slots=True)
class FalseCall:
    """A false call (wrong pon/chi/ron declaration) by ``seat``."""

    seat: int


@dataclass(frozen=True, slots=True)
class Stop:
    """The all-last dealer chooses to end the game (agari-yame / tenpai-yame)."""


@dataclass(frozen=True, slots=True)
class TimeUp:
    """The game clock ran out: the hand in progress is the last."""


@dataclass(frozen=True, slots=True)
class Undo:
    """A correction: the last hand result (ron, tsumo, draw, abort, chombo) is taken back,
    to be entered again as an ordinary event."""


@dataclass(frozen=True, slots=True)
class Dice:
    """The dice for the hand: starts wall tracking."""

    dice: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Deal:
    """The table dealt the starting hands automatically (13 each, dealer's 14th not yet)."""


@dataclass(frozen=True, slots=True)
class Take:
    """A tile taken from the wall by ``seat``; ``pos`` is the table's wall position if sensed,
    ``tile`` its tile id if the table reads tiles (docs/tiles.md)."""

    seat: int
    pos: int | None = None
    tile: int | None = None


@dataclass(frozen=True, slots=True)
class Discard:
    """A discard by ``seat``; ``tile`` is its tile id if the table reads tiles."""

    seat: int
    tile: int | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """A call on the last discard: chi, pon or an open (daiminkan) kan."""

    seat: int
    kind: CallKind
    discarder: int
    #: With tile readers: the caller's own tiles that join the called discard (2, or 3 for a kan).
    tiles: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Kan:
    """A kan made on one's own turn: closed (ankan) or added to a pon (shouminkan)."""

    seat: int
    kind: KanKind
    #: With tile readers: the four tiles of a closed kan, the one tile added to a pon.
    tiles: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class North:
    """A north tile pulled as nuki-dora (three-player); ``tile`` its id with tile readers."""

    seat: int
    tile: int | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    """The tiles of the whole wall as the wall reader saw it at the raise: ``tiles[p]`` lies
    at wall position ``p`` (136 or 108 ids).  Given right after ``dice``."""

    tiles: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TilesOff:
    """The table stops reading tiles for the rest of the hand (a seat reader failed, or its
    snapshots contradicted the tiles): the hand's tile state is dropped and the hand goes
    on as at a table without tile readers.  ``reason`` says why, for the journal."""

    reason: str = ""


ScoreEvent = (
    Riichi | Ron | Tsumo | Draw | Abort | Chombo | FalseCall | Stop | TimeUp | Undo | TilesOff
)
WallEvent = Dice | Layout | Deal | Take | Discard | Call | Kan | North
Event = Start | ScoreEvent | WallEvent


#: No field of an event (a seat, han, fu, a count, a wall position, a die) comes near this.
MAX_INT = 1_000_000


def _int(obj: Mapping[str, Any], key: str, *, optional: bool = False) -> int | None:
    if key not in obj:
        if optional:
            return None
        raise EventFormatError(f"missing field {key!r}")
    value = obj[key]
    # bool is an int subclass; true/false where a number belongs is a malformed line.
    if isinstance(value, bool) or not isinstance(value, int):
        raise EventFormatError(f"field {key!r} must be an integer, got {_short(value)}")
    if not -MAX_INT <= value <= MAX_INT:
        raise EventFormatError(f"field {key!r} is out of range: {_short(value)}")
    return value


def _short(value: Any) -> str:
    """``value`` for a message, cut short and not deep: a malformed line must not make a
    huge message (or recurse without end)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return "a huge number"
    return reprlib.repr(value)


def _req_int(obj: Mapping[str, Any], key: str) -> int:
    value = _int(obj, key)
    assert value is not None
    return value


def _int_list(obj: Mapping[str, Any], key: str, *, optional: bool = False) -> tuple[int, ...]:
    if key not in obj:
        if optional:
            return ()
        raise EventFormatError(f"missing field {key!r}")
    value = obj[key]
    if not isinstance(value, list):
        raise EventFormatError(f"field {key!r} must be a list of seats, got {_short(value)}")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            raise EventFormatError(f"field {key!r} must hold integers, got {_short(item)}")
    return tuple(value)


def _text(obj: Mapping[str, Any], key: str) -> str:
    """An optional free-text field ("" when absent)."""
    value = obj.get(key, "")
    if not isinstance(value, str):
        raise EventFormatError(f"field {key!r} must be text, got {_short(value)}")
    return value[:200]


def _choice(obj: Mapping[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    if key not in obj:
        raise EventFormatError(f"missing field {key!r}")
    value = obj[key]
    if value not in allowed:
        raise EventFormatError(
            f"field {key!r} must be one of {', '.join(allowed)}; got {_short(value)}"
        )
    return str(value)


def _check_keys(obj: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse a key the event does not have: a misspelt ``nagashi`` must not pass as a
    plain draw."""
    for key in obj:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            extra = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise EventFormatError(
                f"unknown field {_short(key)} in {where}{extra}; allowed: {', '.join(allowed)}"
            )


HAND_KEYS = ("seat", "han", "fu", "yakuman", "pao", "chips")


def _hand(obj: Any, where: str) -> Hand:
    if not isinstance(obj, dict):
        raise EventFormatError(f"{where} must be an object, got {_short(obj)}")
    if where.startswith("winners"):
        _check_keys(obj, HAND_KEYS, where)
    seat = _req_int(obj, "seat")
    pao = _int(obj, "pao", optional=True)
    chips = _int(obj, "chips", optional=True)
    if "yakuman" in obj:
        yakuman = _req_int(obj, "yakuman")
        if "han" in obj or "fu" in obj:
            raise EventFormatError(f"{where}: give either 'yakuman' or 'han'/'fu', not both")
        return Hand(seat=seat, yakuman=yakuman, pao=pao, chips=chips)
    han = _int(obj, "han")
    fu = _int(obj, "fu", optional=True)
    assert han is not None
    return Hand(seat=seat, han=han, fu=fu, pao=pao, chips=chips)


def _ron(obj: Mapping[str, Any]) -> Ron:
    if "from" not in obj:
        raise EventFormatError("missing field 'from'")
    raw_from = obj["from"]
    discarders = _int_list(obj, "from") if isinstance(raw_from, list) else (_req_int(obj, "from"),)
    if "winners" not in obj:
        raise EventFormatError("missing field 'winners'")
    winners_raw = obj["winners"]
    if not isinstance(winners_raw, list):
        got = _short(winners_raw)
        raise EventFormatError(f"field 'winners' must be a list of hands, got {got}")
    # An empty list is well formed: the core refuses it (no_winner), as it does "from": [].
    winners = tuple(_hand(w, f"winners[{i}]") for i, w in enumerate(winners_raw))
    return Ron(discarders=discarders, winners=winners)


def _dice(obj: Mapping[str, Any]) -> Dice:
    values = _int_list(obj, "dice")
    if len(values) != 2:
        raise EventFormatError(f"field 'dice' must hold two dice, got {list(values)!r}")
    return Dice(dice=(values[0], values[1]))


def _start(obj: Mapping[str, Any]) -> Start:
    rules = obj.get("rules")
    if not isinstance(rules, str):
        raise EventFormatError("field 'rules' must be a preset name")
    return Start(rules=rules)


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Event]] = {
    "start": _start,
    "riichi": lambda o: Riichi(seat=_req_int(o, "seat")),
    "ron": _ron,
    "tsumo": lambda o: Tsumo(hand=_hand(dict(o), "tsumo")),
    "draw": lambda o: Draw(
        tenpai=_int_list(o, "tenpai"), nagashi=_int_list(o, "nagashi", optional=True)
    ),
    "abort": lambda o: Abort(reason=_choice(o, "reason", ABORT_REASONS)),  # type: ignore[arg-type]
    "chombo": lambda o: Chombo(seat=_req_int(o, "seat")),
    "false_call": lambda o: FalseCall(seat=_req_int(o, "seat")),
    "stop": lambda o: Stop(),
    "time_up": lambda o: TimeUp(),
    "undo": lambda o: Undo(),
    "tiles_off": lambda o: TilesOff(reason=_text(o, "reason")),
    "dice": _dice,
    "layout": lambda o: Layout(tiles=_int_list(o, "tiles")),
    "deal": lambda o: Deal(),
    "take": lambda o: Take(
        seat=_req_int(o, "seat"),
        pos=_int(o, "pos", optional=True),
        tile=_int(o, "tile", optional=True),
    ),
    "discard": lambda o: Discard(seat=_req_int(o, "seat"), tile=_int(o, "tile", optional=True)),
    "call": lambda o: Call(
        seat=_req_int(o, "seat"),
        kind=_choice(o, "kind", ("chi", "pon", "kan")),  # type: ignore[arg-type]
        discarder=_req_int(o, "from"),
        tiles=_int_list(o, "tiles", optional=True),
    ),
    "kan": lambda o: Kan(
        seat=_req_int(o, "seat"),
        kind=_choice(o, "kind", ("closed", "added")),  # type: ignore[arg-type]
        tiles=_int_list(o, "tiles", optional=True),
    ),
    "north": lambda o: North(seat=_req_int(o, "seat"), tile=_int(o, "tile", optional=True)),
}

EVENT_TYPES = tuple(_PARSERS)

#: The fields each event type has ("type" included); any other key is refused.
EVENT_KEYS: dict[str, tuple[str, ...]] = {
    "start": ("type", "rules"),
    "riichi": ("type", "seat"),
    "ron": ("type", "from", "winners"),
    "tsumo": ("type", *HAND_KEYS),
    "draw": ("type", "tenpai", "nagashi"),
    "abort": ("type", "reason"),
    "chombo": ("type", "seat"),
    "false_call": ("type", "seat"),
    "stop": ("type",),
    "time_up": ("type",),
    "undo": ("type",),
    "tiles_off": ("type", "reason"),
    "dice": ("type", "dice"),
    "layout": ("type", "tiles"),
    "deal": ("type",),
    "take": ("type", "seat", "pos", "tile"),
    "discard": ("type", "seat", "tile"),
    "call": ("type", "seat", "kind", "from", "tiles"),
    "kan": ("type", "seat", "kind", "tiles"),
    "north": ("type", "seat", "tile"),
}


def parse_event(obj: Any) -> Event:
    """Turn one decoded JSON object into an event, or raise :class:`EventFormatError`."""
    if not isinstance(obj, dict):
        raise EventFormatError(f"an event must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise EventFormatError("missing field 'type'")
    parser = _PARSERS.get(kind)
    if parser is None:
        raise EventFormatError(
            f"unknown event type {_short(kind)}; known: {', '.join(EVENT_TYPES)}"
        )
    _check_keys(obj, EVENT_KEYS[kind], f"{kind!r} event")
    return parser(obj)


def _hand_json(hand: Hand) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": hand.seat}
    if hand.yakuman:
        out["yakuman"] = hand.yakuman
    else:
        out["han"] = hand.han
        if hand.fu is not None:
            out["fu"] = hand.fu
    if hand.pao is not None:
        out["pao"] = hand.pao
    if hand.chips is not None:
        out["chips"] = hand.chips
    return out


def event_to_json(event: Event) -> dict[str, Any]:
    """The replay (JSON Lines) form of an event; ``parse_event`` of it gives it back."""
    match event:
        case Start(rules=rules):
            return {"type": "start", "rules": rules}
        case Riichi(seat=seat):
            return {"type": "riichi", "seat": seat}
        case Ron(discarders=discarders, winners=winners):
            src: int | list[int] = discarders[0] if len(discarders) == 1 else list(discarders)
            return {"type": "ron", "from": src, "winners": [_hand_json(w) for w in winners]}
        case Tsumo(hand=hand):
            return {"type": "tsumo", **_hand_json(hand)}
        case Draw(tenpai=tenpai, nagashi=nagashi):
            out: dict[str, Any] = {"type": "draw", "tenpai": list(tenpai)}
            if nagashi:
                out["nagashi"] = list(nagashi)
            return out
        case Abort(reason=reason):
            return {"type": "abort", "reason": reason}
        case Chombo(seat=seat):
            return {"type": "chombo", "seat": seat}
        case FalseCall(seat=seat):
            return {"type": "false_call", "seat": seat}
        case Stop():
            return {"type": "stop"}
        case TimeUp():
            return {"type": "time_up"}
        case Undo():
            return {"type": "undo"}
        case TilesOff(reason=reason):
            return {"type": "tiles_off"} | ({"reason": reason} if reason else {})
        case Dice(dice=dice):
            return {"type": "dice", "dice": list(dice)}
        case Layout(tiles=tiles):
            return {"type": "layout", "tiles": list(tiles)}
        case Deal():
            return {"type": "deal"}
        case Take(seat=seat, pos=pos, tile=tile):
            return (
                {"type": "take", "seat": seat}
                | ({} if pos is None else {"pos": pos})
                | ({} if tile is None else {"tile": tile})
            )
        case Discard(seat=seat, tile=tile):
            return {"type": "discard", "seat": seat} | ({} if tile is None else {"tile": tile})
        case Call(seat=seat, kind=kind, discarder=discarder, tiles=tiles):
            out = {"type": "call", "seat": seat, "kind": kind, "from": discarder}
            return out | ({"tiles": list(tiles)} if tiles else {})
        case Kan(seat=seat, kind=kind, tiles=tiles):
            out = {"type": "kan", "seat": seat, "kind": kind}
            return out | ({"tiles": list(tiles)} if tiles else {})
        case North(seat=seat, tile=tile):
            return {"type": "north", "seat": seat} | ({} if tile is None else {"tile": tile})
    raise TypeError(f"not an event: {event!r}")  # pragma: no cover
