"""Readable tiles for the tile tests: ``"123m406p789s11z"`` to the ids of a preset's set.

Digits name the tiles of the suit letter that follows them (``z``: 1-4 east south west
north, 5-7 haku hatsu chun); ``0`` is a red five, ``g`` a gold five.  A plain five is
never a red or gold one, so a hand without ``0`` or ``g`` has no coloured fives whatever
the preset.  One :class:`Tiles` hands out each id once, so the tiles of a hand, its melds
and its dora indicators are distinct physical tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tablectl.rules.options import HouseRules
from tablectl.tiles.hand import Meld, MeldKind, WinContext
from tablectl.tiles.ids import tile_set

SUITS = {"m": 0, "p": 9, "s": 18, "z": 27}


def kinds(text: str) -> list[tuple[int, str]]:
    """``(kind, colour)`` per tile of ``text``; colour is ``""``, ``"red"`` or ``"gold"``."""
    out: list[tuple[int, str]] = []
    pending: list[str] = []
    for ch in text.replace(" ", ""):
        if ch in SUITS:
            if not pending:
                raise ValueError(f"suit letter {ch!r} without digits in {text!r}")
            for digit in pending:
                colour = {"0": "red", "g": "gold"}.get(digit, "")
                number = 5 if colour else int(digit)
                out.append((SUITS[ch] + number - 1, colour))
            pending = []
        elif ch.isdigit() or ch == "g":
            pending.append(ch)
        else:
            raise ValueError(f"unexpected {ch!r} in {text!r}")
    if pending:
        raise ValueError(f"digits without a suit letter at the end of {text!r}")
    return out


class Tiles:
    """Hands out the ids of a preset's set by notation, each id once."""

    def __init__(self, house: HouseRules) -> None:
        self.set = tile_set(house)
        self.used: set[int] = set()

    def take(self, text: str) -> tuple[int, ...]:
        """The ids for ``text``: a red or gold five where written, else a plain copy."""
        ids: list[int] = []
        for k, colour in kinds(text):
            pool = {"red": self.set.red, "gold": self.set.gold}.get(colour)
            for tile in range(4 * k, 4 * k + 4):
                if tile in self.used or tile not in self.set:
                    continue
                coloured = tile in self.set.red or tile in self.set.gold
                if (pool is None and not coloured) or (pool is not None and tile in pool):
                    break
            else:
                raise ValueError(f"no {colour or 'plain'} copy of kind {k} left for {text!r}")
            self.used.add(tile)
            ids.append(tile)
        return tuple(ids)


def win(
    house: HouseRules,
    hand: str,
    tile: str,
    *,
    melds: Sequence[tuple[MeldKind, str]] = (),
    dora: str = "",
    ura: str = "",
    seat: int = 1,
    dealer: int = 0,
    round_wind: int = 0,
    tsumo: bool = False,
    **flags: Any,
) -> WinContext:
    """A win: ``hand`` the concealed tiles before the winning ``tile``; melds as
    ``("pon", "555z")``; dora and ura indicators as notation.  Seat 1 (south) against
    dealer 0 in the east round, by ron, unless told."""
    tiles = Tiles(house)
    made = tuple(Meld(kind=k, tiles=tiles.take(text)) for k, text in melds)
    concealed = tiles.take(hand)
    (winning,) = tiles.take(tile)
    return WinContext(
        seat=seat,
        dealer=dealer,
        players=house.players,
        round_wind=round_wind,
        concealed=(*concealed, winning),
        melds=made,
        win_tile=winning,
        tsumo=tsumo,
        dora_indicators=tiles.take(dora) if dora else (),
        ura_indicators=tiles.take(ura) if ura else (),
        **flags,
    )
