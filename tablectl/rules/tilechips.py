"""The chips (祝儀) a win earns, counted from its tiles: what a table that reads its tiles
knows without asking (docs/rules.md, "Money"; docs/tiles.md, "Chips").

Pure and deterministic, and light (no ``mahjong`` package): :func:`count_tiles` reads a
:class:`~tablectl.tiles.hand.WinContext` (the winner's tiles, the ura indicators the wall
reader saw, the ippatsu of the flow) into a :class:`ChipTiles`, and :meth:`ChipTiles.chips`
prices it by the preset's ``[money]`` with :func:`tablectl.rules.money.hand_chips`. The
yakuman chips follow from the hand's value in the rules core, as for a keyed win.

Readings, as the scorer counts the same tiles as dora (:mod:`.tilescoring`):

- a red or gold five counts wherever it lies among the winner's tiles, concealed or in a
  meld; kantan's called tile that stays in the discarder's river does not (it is not
  the winner's tile);
- ``ura`` are the hand's tiles the first ura indicator makes dora, ``kan_ura`` those the
  indicators under the kans' dora make; a pulled north counts as a north under each;
- there is neither without riichi (the context carries no ura indicators then), nor at
  a preset without ura dora (kantan).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tablectl.rules.money import hand_chips
from tablectl.rules.options import HouseRules
from tablectl.rules.tileshapes import NORTH, dora_kind
from tablectl.tiles.hand import WinContext
from tablectl.tiles.ids import kind, tile_set

__all__ = ["ChipTiles", "count_tiles"]


@dataclass(frozen=True, slots=True)
class ChipTiles:
    """What earns chips in one win, by the tiles: the ``red`` and ``gold`` fives among the
    winner's tiles, its ``ura`` and ``kan_ura`` dora, whether it was a riichi win, an
    ``ippatsu`` and a ``renhou`` (a preset's renhou: jboy's earns its fives alone)."""

    riichi: bool
    red: int = 0
    gold: int = 0
    ura: int = 0
    kan_ura: int = 0
    ippatsu: bool = False
    renhou: bool = False

    def chips(self, house: HouseRules) -> int:
        """The chips these tiles earn under ``house``'s ``[money]`` (besides the yakuman
        chips): 0 at a preset without chips."""
        return hand_chips(
            house.money,
            riichi=self.riichi,
            ippatsu=self.ippatsu,
            red=self.red,
            gold=self.gold,
            ura=self.ura,
            kan_ura=self.kan_ura,
            renhou=self.renhou,
        )

    def text(self) -> str:
        """What the tiles show, for a refusal: ``red 1, ura 2, ippatsu``; ``nothing``."""
        parts = [
            f"{name} {count}"
            for name, count in (
                ("red", self.red),
                ("gold", self.gold),
                ("ura", self.ura),
                ("kan-ura", self.kan_ura),
            )
            if count
        ]
        parts += ["ippatsu"] if self.ippatsu else []
        parts += [] if self.riichi else ["no riichi"]
        return ", ".join(parts) or "nothing"


def _dora_count(counts: Counter[int], indicators: Sequence[int], players: int, norths: int) -> int:
    """The tiles of a hand (by kind ``counts``, and ``norths`` pulled) that ``indicators``
    make dora."""
    total = 0
    for indicator in indicators:
        k = dora_kind(indicator, players)
        total += counts[k] + (norths if k == NORTH else 0)
    return total


def count_tiles(house: HouseRules, ctx: WinContext) -> ChipTiles:
    """What earns chips in the win ``ctx`` under ``house`` (see the module docstring).

    >>> from tablectl.rules.loader import load_rules
    >>> rules = load_rules("sanma-free")
    >>> # 234p 0p67p 789s EEE 11m, riichi tsumo: the red 5p (id 52); the ura indicator
    >>> # 3p (id 44) makes the 4p (id 48) dora.
    >>> ctx = WinContext(seat=0, dealer=0, players=3, round_wind=0,
    ...     concealed=(40, 45, 48, 52, 56, 60, 96, 100, 104, 108, 109, 110, 0, 1),
    ...     melds=(), win_tile=1, tsumo=True, riichi=True, ura_indicators=(44,))
    >>> found = count_tiles(rules, ctx)
    >>> found.text(), found.chips(rules)
    ('red 1, ura 1', 2)
    """
    tiles = tile_set(house)
    in_river = {m.called for m in ctx.melds if m.in_river}
    hand = [*ctx.concealed, *(t for m in ctx.melds for t in m.tiles)]
    coloured = [t for t in hand if t not in in_river]
    riichi = ctx.riichi or ctx.double_riichi
    ura, kan_ura = 0, 0
    if riichi and house.scoring.table != "kantan":  # kantan: no ura dora (seed 004)
        counts = Counter(kind(t) for t in hand)
        first, kans = ctx.ura_indicators[:1], ctx.ura_indicators[1:]
        ura = _dora_count(counts, first, house.players, ctx.north_count)
        kan_ura = _dora_count(counts, kans, house.players, ctx.north_count)
    return ChipTiles(
        riichi=riichi,
        red=sum(1 for t in coloured if t in tiles.red),
        gold=sum(1 for t in coloured if t in tiles.gold),
        ura=ura,
        kan_ura=kan_ura,
        ippatsu=riichi and ctx.ippatsu,
        renhou=ctx.renhou and house.tiles.renhou != "none",
    )
