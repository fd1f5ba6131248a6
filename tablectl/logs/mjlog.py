"""tenhou.net's mjlog XML (``<mjloggm ver="2.3">``) as a :class:`~.game.LogGame`.

The tags read: ``GO`` (the rules as bits of ``type``), ``SHUFFLE`` (the seed: the whole
wall and the dice, :mod:`.tenhou_wall`), ``INIT`` (each hand's round, honba, sticks,
dice, dora indicator, scores, dealer and dealt tiles), ``T``..``W`` + id (draws of seats
0..3), ``D``..``G`` + id (discards), ``N`` (calls, the meld code ``m``), ``REACH``
(step 1 declares, step 2 pays the stick), ``DORA``, ``AGARI`` and ``RYUUKYOKU`` (results,
``sc`` the scores and deltas in hundreds, ``owari`` the final scores).  ``UN``,
``TAIKYOKU`` and ``BYE`` say nothing about play and are skipped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

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
from tablectl.logs.tenhou_wall import WallSeedError, walls
from tablectl.logs.yaku import YAKUMAN_HAN

__all__ = ["decode_meld", "parse_mjlog"]

_DRAW = re.compile(r"^([TUVW])(\d+)$")
_DISCARD = re.compile(r"^([DEFG])(\d+)$")
_RYUUKYOKU_KINDS = {
    None: "exhaustive",
    "nm": "nagashi",
    "yao9": "nine_terminals",
    "reach4": "four_riichi",
    "ron3": "triple_ron",
    "kan4": "four_kans",
    "kaze4": "four_winds",
}
_GO_NO_RED, _GO_NO_KUITAN, _GO_SOUTH, _GO_SANMA = 0x02, 0x04, 0x08, 0x10


def _ints(text: str | None, what: str) -> list[int]:
    if text is None:
        raise LogError(f"{what} is missing")
    try:
        return [int(float(v)) for v in text.split(",")] if text else []
    except ValueError:
        raise LogError(f"{what} is not a list of numbers: {text!r}") from None


def decode_meld(who: int, m: int) -> Call | ClosedKan | AddedKan:
    """A call from its mjlog meld code ``m`` made by seat ``who``."""
    source = (who + (m & 3)) % 4
    if m & 0x4:
        t, r = divmod(m >> 10, 3)
        base = (t // 7) * 9 + t % 7
        tiles = [(base + k) * 4 + ((m >> (3 + 2 * k)) & 3) for k in range(3)]
        called = tiles.pop(r)
        return Call(who, "chi", source, called, tuple(tiles))
    if m & 0x18:
        t, r = divmod(m >> 9, 3)
        unused = (m >> 5) & 3
        tiles = [t * 4 + i for i in range(4) if i != unused]
        if m & 0x10:
            return AddedKan(who, t * 4 + unused)
        called = tiles.pop(r)
        return Call(who, "pon", source, called, tuple(tiles))
    if m & 0x20:
        raise LogError(f"seat {who} pulls a north (meld {m}): three-player logs are not read")
    called = m >> 8
    kan = tuple(called // 4 * 4 + i for i in range(4))
    if source == who:
        return ClosedKan(who, (kan[0], kan[1], kan[2], kan[3]))
    return Call(who, "kan", source, called, tuple(t for t in kan if t != called))


@dataclass
class _Hand:
    """A hand being read."""

    init: ET.Element
    actions: list[Action] = field(default_factory=list)
    wins: list[Win] = field(default_factory=list)
    drawn: DrawnHand | None = None
    ura: tuple[int, ...] = ()
    last_draw: list[int | None] = field(default_factory=lambda: [None] * 4)
    riichi_declared: int | None = None
    rinshan_due: bool = False


def _win(tag: ET.Element) -> Win:
    who = int(tag.get("who", "-1"))
    fu, points = _ints(tag.get("ten"), "AGARI ten")[:2]
    if tag.get("yakuman"):
        ids = _ints(tag.get("yakuman"), "AGARI yakuman")
        yaku = tuple((i, YAKUMAN_HAN) for i in ids)
    else:
        pairs = _ints(tag.get("yaku"), "AGARI yaku")
        # tenhou lists ura dora at 0 han for every riichi win; only what counts is kept.
        yaku = tuple((pairs[k], pairs[k + 1]) for k in range(0, len(pairs), 2) if pairs[k + 1])
    pao = tag.get("paoWho")
    sc = _ints(tag.get("sc"), "AGARI sc")
    return Win(
        seat=who,
        source=int(tag.get("fromWho", "-1")),
        fu=fu,
        points=points,
        han=sum(h for _, h in yaku),
        yaku=yaku,
        pao=int(pao) if pao is not None else None,
        deltas=tuple(d * 100 for d in sc[1::2]),
    )


def _finish(hand: _Hand, wall: tuple[int, ...] | None) -> LogHand:
    seed = _ints(hand.init.get("seed"), "INIT seed")
    if len(seed) != 6:
        raise LogError(f"INIT seed has {len(seed)} numbers, not 6")
    haipai = tuple(tuple(_ints(hand.init.get(f"hai{s}"), f"INIT hai{s}")) for s in range(4))
    result: tuple[Win, ...] | DrawnHand
    if hand.wins:
        result = tuple(hand.wins)
    elif hand.drawn is not None:
        result = hand.drawn
    else:
        raise LogError(f"hand {seed[0]}-{seed[1]} has no AGARI or RYUUKYOKU")
    return LogHand(
        round_index=seed[0],
        honba=seed[1],
        sticks=seed[2],
        dealer=int(hand.init.get("oya", "-1")),
        scores=tuple(v * 100 for v in _ints(hand.init.get("ten"), "INIT ten")),
        haipai=haipai,
        dora=seed[5],
        ura=hand.ura,
        actions=tuple(hand.actions),
        result=result,
        dice=(seed[3] + 1, seed[4] + 1),
        wall=wall,
    )


def _rules(go: ET.Element | None) -> LogRules:
    if go is None:
        raise LogError("no GO tag (the game's rules)")
    bits = int(go.get("type", "0"))
    return LogRules(
        players=3 if bits & _GO_SANMA else 4,
        red_fives=not bits & _GO_NO_RED,
        open_tanyao=not bits & _GO_NO_KUITAN,
        length="south" if bits & _GO_SOUTH else "east",
    )


def _play(hand: _Hand, tag: ET.Element) -> None:
    """One tag of play inside a hand."""
    name = tag.tag
    if m := _DRAW.match(name):
        seat, tile = "TUVW".index(m[1]), int(m[2])
        hand.actions.append(Draw(seat, tile, rinshan=hand.rinshan_due))
        hand.rinshan_due = False
        hand.last_draw[seat] = tile
    elif m := _DISCARD.match(name):
        seat, tile = "DEFG".index(m[1]), int(m[2])
        riichi = hand.riichi_declared == seat
        hand.riichi_declared = None
        hand.actions.append(Discard(seat, tile, hand.last_draw[seat] == tile, riichi))
        hand.last_draw[seat] = None
    elif name == "N":
        call = decode_meld(int(tag.get("who", "-1")), int(tag.get("m", "0")))
        hand.actions.append(call)
        hand.rinshan_due = isinstance(call, ClosedKan | AddedKan) or call.kind == "kan"
        hand.last_draw[call.seat] = None
    elif name == "REACH":
        seat = int(tag.get("who", "-1"))
        if tag.get("step") == "1":
            hand.riichi_declared = seat
        else:
            hand.actions.append(RiichiAccepted(seat))
    elif name == "DORA":
        hand.actions.append(NewDora(int(tag.get("hai", "-1"))))
    elif name == "AGARI":
        hand.wins.append(_win(tag))
        if tag.get("doraHaiUra"):
            hand.ura = tuple(_ints(tag.get("doraHaiUra"), "AGARI doraHaiUra"))
    elif name == "RYUUKYOKU":
        kind = _RYUUKYOKU_KINDS.get(tag.get("type"))
        if kind is None:
            raise LogError(f"RYUUKYOKU of unknown type {tag.get('type')!r}")
        sc = _ints(tag.get("sc"), "RYUUKYOKU sc")
        hand.drawn = DrawnHand(kind, tuple(d * 100 for d in sc[1::2]))
    elif name not in ("UN", "BYE"):
        raise LogError(f"unknown tag <{name}> inside a hand")


def parse_mjlog(text: str) -> LogGame:
    """The game of the mjlog XML ``text``.  Raises :class:`~.game.LogError` for anything
    this reader does not understand (a three-player log among them)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise LogError(f"not XML: {exc}") from None
    if root.tag != "mjloggm":
        raise LogError(f"root tag is <{root.tag}>, not <mjloggm>")
    rules = _rules(root.find("GO"))
    if rules.players != 4:
        raise LogError("three-player logs are not read")
    shuffle = root.find("SHUFFLE")
    seed = shuffle.get("seed") if shuffle is not None else None
    hands: list[_Hand] = []
    final: tuple[int, ...] | None = None
    for tag in root:
        if tag.tag == "INIT":
            hands.append(_Hand(tag))
        elif hands:
            _play(hands[-1], tag)
        if (owari := tag.get("owari")) is not None:
            final = tuple(v * 100 for v in _ints(owari, "owari")[0::2])
    hand_walls: list[tuple[int, ...] | None] = [None] * len(hands)
    if seed:
        try:
            hand_walls = [w.tiles for w in walls(seed, len(hands))]
        except WallSeedError as exc:
            raise LogError(f"SHUFFLE: {exc}") from None
    return LogGame(
        rules, tuple(_finish(h, w) for h, w in zip(hands, hand_walls, strict=True)), final
    )
