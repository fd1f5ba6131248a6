"""Scoring a finished hand: the ``mahjong`` package's yaku and fu, configured from the
preset, and the preset's own code for what the package cannot express (docs/tiles.md,
"Scoring").

:func:`score_win` takes a :class:`~tablectl.tiles.hand.WinContext` and answers a
:class:`~tablectl.tiles.hand.HandScore` or a :class:`~tablectl.rules.refusal.Refusal`;
:func:`to_hand` turns the score into the han/fu the rules core settles.  Dora of every
kind (indicators, ura, red and gold fives by the preset's own ids, pulled norths) are
counted here, not by the package, which only sees yaku.

Pure: no I/O, clock or randomness.  This module imports ``mahjong``; the rules core looks
it up by name (:func:`tablectl.rules.tenpai.scorer`) and the daemon imports it when a table
that reads tiles connects, so a daemon whose table does not read tiles never loads the
package.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from mahjong.hand_calculating.divider import HandDivider
from mahjong.hand_calculating.fu import FuCalculator, FuDetail
from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, HandConstants, OptionalRules
from mahjong.hand_calculating.hand_response import HandResponse
from mahjong.hand_calculating.scores import ScoresCalculator, ScoresResult
from mahjong.hand_calculating.yaku import Yaku
from mahjong.hand_calculating.yaku_list.yakuman import ChuurenPoutou
from mahjong.meld import Meld as PackageMeld

from tablectl.rules import tileshapes
from tablectl.rules.events import Hand
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.scoring import MAX_HAN, VALID_FU, hand_value, ron_points
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import KIND_NAMES, TileSet, kind, tile_set

__all__ = ["REFUSAL_CODES", "compact", "score_win", "to_hand"]

#: Every refusal :func:`score_win` gives, by code.
REFUSAL_CODES = {
    "bad_tiles": "a tile id outside the preset's set, twice, or a hand of the wrong shape",
    "bad_context": "flags that cannot go together (riichi on an open hand, rinshan by ron...)",
    "not_complete": "the tiles are not a winning hand",
    "no_yaku": "a complete hand without yaku (dora are not yaku)",
    "atozuke": "the yaku depends on the winning tile where the preset has no atozuke",
}

EAST = 27
NORTH = 30
WIND_NAMES = ("east", "south", "west", "north")
#: The fu of the package's fu details that the presets read differently.
_DOUBLE_PAIR = FuCalculator.DOUBLE_VALUED_PAIR
_TSUMO_FU = FuCalculator.TSUMO
_HAITEI, _HOUTEI, _PINFU, _IIPEIKOU, _ROUND_NORTH = 6, 7, 12, 14, 25
CHANCE_YAKU = frozenset({"haitei", "houtei", "rinshan", "chankan"})
_CHUUREN = ChuurenPoutou()

#: Short English names, by the package's yaku id, for the display's second line.
YAKU_NAMES: dict[int, str] = {
    0: "tsumo", 1: "riichi", 2: "open riichi", 3: "ippatsu", 4: "chankan", 5: "rinshan",
    6: "haitei", 7: "houtei", 8: "double riichi", 9: "double open riichi", 10: "nagashi",
    11: "renhou", 12: "pinfu", 13: "tanyao", 14: "iipeikou", 15: "haku", 16: "hatsu",
    17: "chun", 18: "seat east", 19: "seat south", 20: "seat west", 21: "seat north",
    22: "round east", 23: "round south", 24: "round west", 25: "round north",
    26: "sanshoku", 27: "ittsu", 28: "chanta", 29: "honroutou", 30: "toitoi",
    31: "sanankou", 32: "sankantsu", 33: "sanshoku doukou", 34: "chiitoitsu",
    35: "shousangen", 36: "honitsu", 37: "junchan", 38: "ryanpeikou", 39: "chinitsu",
    100: "kokushi", 101: "chuuren", 102: "suuankou", 103: "daisangen", 104: "shousuushii",
    105: "ryuuiisou", 106: "suukantsu", 107: "tsuuiisou", 108: "chinroutou",
    109: "daisharin", 110: "daichisei", 111: "daisuushii", 112: "kokushi 13-wait",
    113: "suuankou tanki", 114: "junsei chuuren", 115: "tenhou", 116: "chiihou",
    117: "renhou", 118: "sashikomi", 119: "paarenchan",
}  # fmt: skip
_RENHOU_HAN = {"mangan": 5, "baiman": 8}


@dataclass(frozen=True, slots=True)
class _Setup:
    """What a preset fixes for every hand: its tile set and the package's options."""

    tiles: TileSet
    options: OptionalRules


@lru_cache(maxsize=32)
def _setup(house: HouseRules) -> _Setup:
    return _Setup(tiles=tile_set(house), options=_options(house))


def _options(house: HouseRules) -> OptionalRules:
    """The package's optional rules from the preset.

    Red fives are off: the package knows only ids 16/52/88, and counts them as dora; they
    are counted here from the preset's own set.  No preset counts a single yakuman double
    (13-wait kokushi, suuankou tanki, 9-wait chuuren, daisuushii): ``multiple_yakuman``
    decides only whether different yakuman stack."""
    tiles, scoring = house.tiles, house.scoring
    return OptionalRules(
        has_open_tanyao=tiles.kuitan,
        has_aka_dora=False,
        has_double_yakuman=False,
        kazoe_limit=(
            HandConstants.KAZOE_LIMITED
            if scoring.kazoe == "yakuman"
            else HandConstants.KAZOE_SANBAIMAN
        ),
        kiriage=scoring.kiriage,
        fu_for_open_pinfu=True,
        # With tsumo fu on a pinfu shape the package no longer sees pinfu: "tsumo only".
        fu_for_pinfu_tsumo=not tiles.tsumo_pinfu,
        renhou_as_yakuman=tiles.renhou == "yakuman",
        has_daisharin=scoring.table == "kantan",
        is_three_player=house.players == 3,
    )


def compact(tiles: Iterable[int]) -> str:
    """``"123m456p789s11z"``: tiles by kind in the usual notation, suits in order."""
    kinds = sorted(kind(t) for t in tiles)
    out: list[str] = []
    for suit in "mpsz":
        digits = "".join(KIND_NAMES[k][0] for k in kinds if KIND_NAMES[k][1] == suit)
        if digits:
            out.append(digits + suit)
    return "".join(out)


def to_hand(score: HandScore, seat: int, pao: int | None = None) -> Hand:
    """The rules core's :class:`~tablectl.rules.events.Hand` for ``score`` won by ``seat``.

    Counted han above 13 are entered as 13 (the core reads 13 as kazoe).  A fu above the
    core's scale (110; only three kans reach it) is entered as 110: such a hand has 4 han
    or more, a mangan either way.  A yakuman enters as its count alone."""
    if score.yakuman:
        return Hand(seat=seat, han=0, fu=None, yakuman=score.yakuman, pao=pao)
    fu = score.fu
    if fu is not None and fu > VALID_FU[-1]:
        fu = VALID_FU[-1]
    return Hand(seat=seat, han=min(score.han, MAX_HAN), fu=fu, yakuman=0, pao=pao)


# --- checking the context -------------------------------------------------------------


def _meld_shape_ok(meld: Meld) -> bool:
    kinds = sorted(kind(t) for t in meld.tiles)
    if meld.kind == "chi":
        first = kinds[0]
        return (
            len(kinds) == 3
            and first < EAST
            and first % 9 <= 6
            and kinds == [first, first + 1, first + 2]
        )
    size = 3 if meld.kind == "pon" else 4
    return len(kinds) == size and len(set(kinds)) == 1


def _check(house: HouseRules, setup: _Setup, ctx: WinContext) -> Refusal | None:
    """The context's tiles and flags are possible at all; None when they are."""
    players = house.players
    if ctx.players != players:
        return Refusal("bad_context", f"this preset plays {players} players, not {ctx.players}")
    if not (0 <= ctx.seat < players and 0 <= ctx.dealer < players and 0 <= ctx.round_wind < 4):
        return Refusal("bad_context", "seat, dealer or round wind out of range")
    hand = list(ctx.concealed) + [t for m in ctx.melds for t in m.tiles]
    strangers = sorted({t for t in (*hand, *ctx.dora_indicators, *ctx.ura_indicators)
                        if t not in setup.tiles})  # fmt: skip
    if strangers:
        return Refusal("bad_tiles", f"tile ids not in this preset's set: {strangers}")
    seen = Counter((*hand, *ctx.dora_indicators, *ctx.ura_indicators))
    twice = sorted(t for t, n in seen.items() if n > 1)
    if twice:
        return Refusal("bad_tiles", f"tile ids given more than once: {twice}")
    if len(ctx.melds) > 4 or len(ctx.concealed) != 14 - 3 * len(ctx.melds):
        return Refusal(
            "bad_tiles",
            f"{len(ctx.concealed)} concealed tiles with {len(ctx.melds)} melds"
            f" (a winning hand holds {14 - 3 * min(len(ctx.melds), 4)})",
        )
    if ctx.win_tile not in ctx.concealed:
        return Refusal("bad_tiles", f"the winning tile {ctx.win_tile} is not in the hand")
    for meld in ctx.melds:
        if not _meld_shape_ok(meld):
            return Refusal("bad_tiles", f"a {meld.kind} of {compact(meld.tiles)} is no such meld")
    return _check_flags(house, ctx)


def _check_flags(house: HouseRules, ctx: WinContext) -> Refusal | None:
    is_open = any(m.opened for m in ctx.melds)
    hand = list(ctx.concealed) + [t for m in ctx.melds for t in m.tiles]
    dealer = ctx.seat == ctx.dealer
    kans = any(m.kind in ("open_kan", "closed_kan", "added_kan") for m in ctx.melds)
    norths = ctx.north_count > 0 and house.tiles.north_rinshan
    riichi = ctx.riichi or ctx.double_riichi
    problems = [
        (riichi and is_open and not house.tiles.yaku_with_calls, "riichi on an open hand"),
        (ctx.ippatsu and not riichi, "ippatsu without riichi"),
        (ctx.chankan and ctx.tsumo, "chankan is a ron"),
        (ctx.houtei and ctx.tsumo, "houtei is a ron"),
        (ctx.haitei and not ctx.tsumo, "haitei is a tsumo"),
        (ctx.rinshan and not (ctx.tsumo and (kans or norths)), "rinshan is a tsumo after a"
         " kan" + (" or a north" if house.tiles.north_rinshan else "")),
        (ctx.tenhou and not (dealer and ctx.tsumo and not ctx.melds), "tenhou: dealer's tsumo"),
        (ctx.chiihou and (dealer or not ctx.tsumo or bool(ctx.melds)), "chiihou: non-dealer's"
         " first tsumo"),
        (ctx.renhou and (dealer or ctx.tsumo or bool(ctx.melds)), "renhou: a non-dealer's ron"
         " before the first draw"),
        (ctx.north_count < 0 or ctx.north_count > 4, "pulled norths must be 0 to 4"),
        (ctx.north_count > 0 and house.tiles.north != "nuki", "this preset pulls no norths"),
        (ctx.north_count + sum(1 for t in hand if kind(t) == NORTH) > 4, "more than four norths"),
    ]  # fmt: skip
    for wrong, message in problems:
        if wrong:
            return Refusal("bad_context", message)
    return None


# --- dora -----------------------------------------------------------------------------


def _bonuses(house: HouseRules, setup: _Setup, ctx: WinContext) -> list[tuple[str, int]]:
    """Dora, ura dora (riichi only), red and gold fives, pulled norths and sanma-free's
    closed-kan han: what a hand with yaku adds, by display name and han."""
    hand = list(ctx.concealed) + [t for m in ctx.melds for t in m.tiles]
    counts = Counter(kind(t) for t in hand)
    players = house.players

    def dora(indicators: Sequence[int]) -> int:
        total = 0
        for indicator in indicators:
            k = tileshapes.dora_kind(indicator, players)
            total += counts[k] + (ctx.north_count if k == NORTH else 0)
        return total

    riichi = ctx.riichi or ctx.double_riichi
    ura = riichi and house.scoring.table != "kantan"  # kantan: no ura dora (seed 004)
    # Reading (kantan): a called tile left in its river counts by its kind (dora) but not
    # by its colour: the red five lies in the discarder's river, not among the winner's
    # tiles, and the stand-in in its place counts as the called kind only.
    in_river = {m.called for m in ctx.melds if m.in_river}
    coloured = [t for t in hand if t not in in_river]
    found = [
        ("dora", dora(ctx.dora_indicators)),
        ("ura", dora(ctx.ura_indicators) if ura else 0),
        ("red", sum(1 for t in coloured if t in setup.tiles.red)),
        # Seed 001 names gold fives only for chips (赤・金の祝儀): one dora, as a red five.
        ("gold", sum(1 for t in coloured if t in setup.tiles.gold)),
        ("north", ctx.north_count),
    ]
    out = [(f"{name} {n}", n) for name, n in found if n]
    bonus = house.tiles.closed_kan_bonus_han
    if bonus and any(m.kind == "closed_kan" for m in ctx.melds):
        out.append(("closed kan", bonus))  # once, however many closed kans (seed 003)
    return out


# --- the package ----------------------------------------------------------------------


def _worth(house: HouseRules, han: int, fu: int, yakuman: int) -> int:
    """What the preset pays for a non-dealer's ron of this value: how the readings of one
    hand are ranked (its table, kiriage, the limits)."""
    if yakuman:
        value = hand_value(house, yakuman=max(1, min(yakuman, 6)))
    else:
        value = hand_value(house, han=min(han, MAX_HAN), fu=min(fu, VALID_FU[-1]), tsumo=True)
    return 0 if isinstance(value, Refusal) else ron_points(house, value, dealer=False)


def _ranking(house: HouseRules, extra_han: int) -> type[ScoresCalculator]:
    """A scores calculator that ranks the package's readings of one hand as the preset
    pays them (:func:`_worth`, with the dora the package does not see), so that the
    reading the package keeps is the one worth most here."""

    class Ranked(ScoresCalculator):
        @staticmethod
        def calculate_scores(
            han: int, fu: int, config: HandConfig, is_yakuman: bool = False
        ) -> ScoresResult:
            if is_yakuman:
                points = _worth(house, 0, 0, han // 13)
            else:
                points = _worth(house, han + extra_han, fu, 0)
            return ScoresResult(
                main=points, additional=0, main_bonus=0, additional_bonus=0,
                kyoutaku_bonus=0, total=points, yaku_level="",
            )  # fmt: skip

    return Ranked


_PACKAGE_MELD = {
    "chi": PackageMeld.CHI,
    "pon": PackageMeld.PON,
    "open_kan": PackageMeld.KAN,
    "closed_kan": PackageMeld.KAN,
    "added_kan": PackageMeld.SHOUMINKAN,
}


def _package_meld(meld: Meld) -> PackageMeld:
    return PackageMeld(
        meld_type=_PACKAGE_MELD[meld.kind],
        tiles=sorted(meld.tiles),
        opened=meld.opened,
        called_tile=meld.called,
        from_who=meld.source,
    )


@dataclass(frozen=True, slots=True)
class _Win:
    """A complete hand's yaku (display name, han), its fu after the preset's fu readings,
    and yakuman."""

    yaku: tuple[tuple[str, int], ...]
    fu: int
    yakuman: int

    def worth(self, house: HouseRules, extra_han: int) -> int:
        """What the preset pays for this reading (see :func:`_worth`)."""
        return _worth(house, sum(h for _, h in self.yaku) + extra_han, self.fu, self.yakuman)


def _is_open(ctx: WinContext) -> bool:
    return any(m.opened for m in ctx.melds)


def _held(ctx: WinContext) -> Counter[int]:
    """The kinds of every tile of the hand, melds included."""
    return Counter(kind(t) for t in (*ctx.concealed, *(t for m in ctx.melds for t in m.tiles)))


def _swapped(house: HouseRules, ctx: WinContext) -> bool:
    """jboy-sanma's north is always a value tile; the package values only the seat and
    round winds.  With a north pair or set, the package is told the round is north and
    the real round wind's han and pair fu are put back (:func:`_added`, :func:`_fu`)."""
    winds = (EAST + ctx.round_wind, EAST + ctx.seat_wind)
    return house.tiles.north == "value" and NORTH not in winds and _held(ctx)[NORTH] >= 2


def _late_riichi(house: HouseRules, ctx: WinContext) -> bool:
    """A riichi on an open hand (``tiles.yaku_with_calls``: kantan, seed 004); the package
    refuses one, so it is added here (:func:`_added`)."""
    riichi = ctx.riichi or ctx.double_riichi
    return house.tiles.yaku_with_calls and riichi and _is_open(ctx)


def _added(house: HouseRules, ctx: WinContext) -> list[tuple[str, int]]:
    """Yaku of the preset's own that the package does not find: the real round wind's set
    after the north swap, tsumo and riichi on an open hand (``tiles.yaku_with_calls``)."""
    added: list[tuple[str, int]] = []
    if _swapped(house, ctx) and _held(ctx)[EAST + ctx.round_wind] >= 3:
        added.append((YAKU_NAMES[22 + ctx.round_wind], 1))
    if house.tiles.yaku_with_calls and ctx.tsumo and _is_open(ctx):
        added.append(("tsumo", 1))
    if _late_riichi(house, ctx):
        added.append(("double riichi", 2) if ctx.double_riichi else ("riichi", 1))
    return added


def _config(
    house: HouseRules, setup: _Setup, ctx: WinContext, *, lift: bool, fixed: bool = False
) -> HandConfig:
    """The package's view of the win's situation, as the preset reads the flags.

    Kantan (seed 004) has no ippatsu, rinshan, chankan, haitei or houtei; an ippatsu on a
    chankan is dropped where the two do not combine; rinshan on the last wall tile is
    rinshan only (the package refuses both).  ``lift``: haitei (tsumo) or houtei (ron) is
    set only so that the package reads a hand whose yaku are all added here (its sets
    and fu); it changes neither, and is taken out of the yaku after.  ``fixed``: closed
    melds fix the reading (:func:`_fixed_melds`), and the package refuses tenhou, chiihou
    and renhou with melds: they are left out, for the caller to put back
    (:func:`_blessings`)."""
    tiles = house.tiles
    kantan = house.scoring.table == "kantan"
    late = _late_riichi(house, ctx)
    ippatsu = ctx.ippatsu and not kantan and not (ctx.chankan and not tiles.ippatsu_chankan)
    blessed = not fixed
    return HandConfig(
        is_tsumo=ctx.tsumo,
        is_riichi=(ctx.riichi or ctx.double_riichi) and not late,
        is_daburu_riichi=ctx.double_riichi and not late,
        is_ippatsu=ippatsu and not late,
        is_rinshan=ctx.rinshan and not kantan,
        is_chankan=ctx.chankan and not kantan,
        is_haitei=_haitei(house, ctx) or (lift and ctx.tsumo),
        is_houtei=_houtei(house, ctx) or (lift and not ctx.tsumo),
        is_tenhou=ctx.tenhou and blessed,
        is_chiihou=ctx.chiihou and blessed,
        is_renhou=ctx.renhou and tiles.renhou == "yakuman" and blessed,
        player_wind=EAST + ctx.seat_wind,
        round_wind=NORTH if _swapped(house, ctx) else EAST + ctx.round_wind,
        options=setup.options,
    )


def _open_yakuman(house: HouseRules, ctx: WinContext) -> list[tuple[str, int]]:
    """Chuuren on an open hand where every yakuman counts with calls
    (``tiles.yaku_with_calls``): the package looks for it in closed hands only.  Its test
    is the package's, on the tiles one by one (the shape, whatever the sets)."""
    if not (house.tiles.yaku_with_calls and _is_open(ctx)):
        return []
    held = _held(ctx)
    tiles = [[k] for k in sorted(held) for _ in range(held[k])]
    return [(YAKU_NAMES[_CHUUREN.yaku_id], 13)] if _CHUUREN.is_condition_met(tiles) else []


def _blessings(house: HouseRules, ctx: WinContext) -> list[tuple[str, int]]:
    """Tenhou, chiihou and renhou as a yakuman: yakuman whatever the reading."""
    blessed = (
        ("tenhou", ctx.tenhou),
        ("chiihou", ctx.chiihou),
        ("renhou", ctx.renhou and house.tiles.renhou == "yakuman"),
    )
    return [(name, 13) for name, on in blessed if on]


def _haitei(house: HouseRules, ctx: WinContext) -> bool:
    return ctx.haitei and not ctx.rinshan and house.scoring.table != "kantan"


def _houtei(house: HouseRules, ctx: WinContext) -> bool:
    return ctx.houtei and house.scoring.table != "kantan"


def _evaluate(
    house: HouseRules,
    setup: _Setup,
    ctx: WinContext,
    extra_han: int,
) -> _Win | Refusal:
    """The reading of the hand worth most under the preset: the package's best one with
    the preset's own yaku and fu code, one with a local yaku (:func:`_read_local`), or a
    four-tile chiitoitsu (:func:`_read_four_pairs`); the package's refusal when there is
    none."""
    found = _read_package(house, setup, ctx, extra_han)
    readings = [found] if isinstance(found, _Win) else []
    readings += _read_local(house, setup, ctx, extra_han)
    pairs = _read_four_pairs(house, setup, ctx)
    if pairs is not None:
        readings.append(pairs)
    if not readings:
        return found
    # Of equal worth, the one with more yakuman (a single-yakuman table still names them
    # all), then the first: the package's reading.
    return max(readings, key=lambda win: (win.worth(house, extra_han), win.yakuman))


def _read_package(
    house: HouseRules,
    setup: _Setup,
    ctx: WinContext,
    extra_han: int,
    local: _Local | None = None,
) -> _Win | Refusal:
    """The package's best reading of the hand, with the preset's own yaku and fu code;
    with ``local``, its best reading that holds that local yaku's sets, the local yaku
    with it."""
    kantan = house.scoring.table == "kantan"
    is_open = _is_open(ctx)
    hand = list(ctx.concealed) + [t for m in ctx.melds for t in m.tiles]
    melds = [_package_meld(m) for m in ctx.melds]
    added = _added(house, ctx)
    added_yakuman = _open_yakuman(house, ctx)
    replaced: frozenset[int] = frozenset()
    fixed = False
    if local is not None:
        fixing = _fixed_melds(ctx, local.sets)
        melds += fixing
        fixed = bool(fixing)
        if fixed:
            added_yakuman += _blessings(house, ctx)
        (added_yakuman if local.yakuman else added).append((local.name, local.han))
        replaced = local.replaces
    swapped = _swapped(house, ctx)

    def read(lift: bool) -> HandResponse:
        return HandCalculator.estimate_hand_value(
            hand,
            ctx.win_tile,
            melds=melds,
            config=_config(house, setup, ctx, lift=lift, fixed=fixed),
            scores_calculator_factory=_ranking(house, extra_han + sum(h for _, h in added)),
        )

    response = read(lift=False)
    lifted = False
    if response.error == HandCalculator.ERR_NO_YAKU and (added or added_yakuman):
        response, lifted = read(lift=True), True
    if response.error == HandCalculator.ERR_HAND_NOT_WINNING:
        return _not_complete(house, ctx)
    if response.error == HandCalculator.ERR_NO_YAKU:
        return _no_yaku(house, ctx, is_open)
    if response.error:
        return Refusal("bad_context", f"the hand's flags do not go together: {response.error}")
    chance = _haitei(house, ctx) or _houtei(house, ctx)
    yaku: list[tuple[str, int]] = []
    yakuman: list[tuple[str, int]] = []
    pinfu_dropped = False
    for item in response.yaku or []:
        if kantan and item.yaku_id == _PINFU:
            pinfu_dropped = True
            continue
        if lifted and item.yaku_id in (_HAITEI, _HOUTEI) and not chance:
            continue
        if item.yaku_id in replaced:
            continue
        han = item.han_open if is_open and item.han_open else item.han_closed
        (yakuman if item.is_yakuman else yaku).append((_name(item, swapped), han))
    yakuman += added_yakuman
    if yakuman:
        count = sum(max(1, han // 13) for _, han in yakuman)
        return _Win(yaku=tuple(yakuman), fu=0, yakuman=count)
    yaku.extend(added)
    if not yaku:
        reason = "pinfu does not count in this preset" if pinfu_dropped else "no yaku"
        return Refusal("no_yaku", f"a complete hand without yaku: {reason}")
    if not house.tiles.chance_yaku_alone and {name for name, _ in yaku} <= CHANCE_YAKU:
        return Refusal(
            "no_yaku",
            f"{' and '.join(n for n, _ in yaku)} alone is not a yaku in this preset",
        )
    fu = _fu(house, ctx, response.fu_details or [], swapped)
    return _Win(yaku=tuple(yaku), fu=fu, yakuman=0)


# --- local yaku (kantan) --------------------------------------------------------------

#: The local yaku of ``tiles.local_yaku``, at kantan's values (seed 004, 手役一覧, 役名
#: 翻数→食い下がり): display name, han closed, han open (0: not open; 一色三順 3→×).
#: Isshoku yonjun and suurenkou are on its yakuman line (※鳴きがあっても成立: open too).
LOCAL_YAKU: dict[str, tuple[str, int, int]] = {
    "isshoku_sanjun": ("isshoku sanjun", 3, 0),
    "sanrenkou": ("sanrenkou", 2, 2),
    "isshoku_yonjun": ("isshoku yonjun", 13, 13),
    "suurenkou": ("suurenkou", 13, 13),
}
_YAKUMAN_LOCAL = frozenset({"isshoku_yonjun", "suurenkou"})
#: The package's yaku a local yaku takes the place of: three identical runs hold an
#: iipeikou (reading: isshoku sanjun is 3 han, not 3 + 1, as ryanpeikou is 3).
_REPLACES = {"isshoku_sanjun": frozenset({_IIPEIKOU})}


@dataclass(frozen=True, slots=True)
class _Local:
    """A local yaku one reading of the hand holds: its display name and han, whether it is
    a yakuman, its sets (each as its kinds) and the package's yaku it replaces."""

    name: str
    han: int
    yakuman: bool
    sets: tuple[tuple[int, ...], ...]
    replaces: frozenset[int]


def _local_yaku(
    wanted: Sequence[str], blocks: Sequence[Sequence[int]], is_open: bool
) -> _Local | None:
    """The local yaku of one reading (``blocks``: its sets and pair, as kinds), the one
    worth most where several would hold (a reading of four sets has room for one of
    them, or a yakuman and the smaller one it contains)."""
    runs = Counter(tuple(b) for b in blocks if len(b) == 3 and b[0] != b[1])
    triplets = {b[0]: tuple(b) for b in blocks if len(b) >= 3 and b[0] == b[1] and b[0] < EAST}
    found: list[tuple[str, tuple[tuple[int, ...], ...]]] = []
    for run, n in runs.items():
        if n >= 3:
            found.append(("isshoku_yonjun" if n == 4 else "isshoku_sanjun", (run,) * n))
            if n == 4:
                found.append(("isshoku_sanjun", (run,) * 3))
    for start in triplets:
        row = [start]
        while row[-1] + 1 in triplets and (row[-1] + 1) // 9 == start // 9:
            row.append(row[-1] + 1)
        if len(row) >= 3:
            found.append(("sanrenkou", tuple(triplets[k] for k in row[:3])))
        if len(row) == 4:
            found.append(("suurenkou", tuple(triplets[k] for k in row)))
    best: _Local | None = None
    for option, sets in found:
        name, closed, opened = LOCAL_YAKU[option]
        han = opened if is_open else closed
        if option not in wanted or han == 0:
            continue
        local = _Local(
            name=name,
            han=han,
            yakuman=option in _YAKUMAN_LOCAL,
            sets=sets,
            replaces=_REPLACES.get(option, frozenset()),
        )
        if best is None or (local.yakuman, local.han) > (best.yakuman, best.han):
            best = local
    return best


def _fixed_melds(ctx: WinContext, sets: Sequence[tuple[int, ...]]) -> list[PackageMeld]:
    """The sets that are not melds of the hand already, as closed melds of its concealed
    tiles (the winning tile last): given to the package, they fix its reading to one that
    holds them.  The package counts a chi meld as open for its wait fu; only kantan, whose
    table has no fu, has local yaku."""
    melds = [tuple(sorted(kind(t) for t in m.tiles)) for m in ctx.melds]
    free = sorted(ctx.concealed, key=lambda t: t == ctx.win_tile)
    out: list[PackageMeld] = []
    for kinds in sets:
        if kinds in melds:
            melds.remove(kinds)
            continue
        tiles = []
        for k in kinds:
            tile = next(t for t in free if kind(t) == k)
            free.remove(tile)
            tiles.append(tile)
        chi = kinds[0] != kinds[1]
        out.append(
            PackageMeld(
                meld_type=PackageMeld.CHI if chi else PackageMeld.PON, tiles=tiles, opened=False
            )
        )
    return out


def _read_local(house: HouseRules, setup: _Setup, ctx: WinContext, extra_han: int) -> list[_Win]:
    """The readings of the hand with a local yaku of the preset's (``tiles.local_yaku``):
    for each local yaku some division of the tiles into sets holds, the package's best
    reading with those sets, the local yaku with it.  111222333m is three runs (isshoku
    sanjun) or three triplets (sanrenkou): both are read, and :func:`_evaluate` keeps
    the one worth more."""
    wanted = house.tiles.local_yaku
    if not wanted:
        return []
    held = _held(ctx)
    # Every local yaku holds three kinds in a row of one suit three times each: most hands
    # are left at that, without dividing them into sets.
    if not any(held[k] >= 3 and held[k + 1] >= 3 and held[k + 2] >= 3
               for k in range(EAST) if k % 9 <= 6):  # fmt: skip
        return []
    counts = [held[k] for k in range(34)]
    found: list[_Local] = []
    for blocks in HandDivider.divide_hand(counts, [_package_meld(m) for m in ctx.melds]):
        local = _local_yaku(wanted, blocks, _is_open(ctx))
        if local is not None and local not in found:
            found.append(local)
    readings = (_read_package(house, setup, ctx, extra_han, local) for local in found)
    return [win for win in readings if isinstance(win, _Win)]


#: The display name of a four-tile chiitoitsu (its han are the preset's).
FOUR_TILE_CHIITOITSU = "4-tile chiitoitsu"
_CHIITOITSU_FU = 25


def _read_four_pairs(house: HouseRules, setup: _Setup, ctx: WinContext) -> _Win | None:
    """Seven pairs with four of a kind as two of them (4枚使いの七対子), where the preset
    counts it (``tiles.four_tile_chiitoitsu_han``: its han); None for any other hand.

    The package reads seven *different* pairs only.  The other yaku are the package's: the
    situation's from the same config as its own reading (tsumo, riichi, ippatsu, chankan,
    haitei, houtei, tenhou, chiihou, renhou as a yakuman) and, tested on the pairs by the
    package's own yaku, those of the tiles a seven-pairs hand can hold: tanyao, honroutou,
    honitsu or chinitsu, and the yakuman tsuuiisou, chinroutou and ryuuiisou (all of one
    kind of tile, which four of a kind makes possible in seven pairs).  Fu: a
    chiitoitsu's 25."""
    han = house.tiles.four_tile_chiitoitsu_han
    if not han or ctx.melds:
        return None
    held = Counter(kind(t) for t in ctx.concealed)
    if any(n % 2 for n in held.values()) or max(held.values()) < 4:
        return None
    pairs = [[k, k] for k in sorted(held) for _ in range(held[k] // 2)]
    config = _config(house, setup, ctx, lift=False)
    y = config.yaku
    chinitsu = y.chinitsu.is_condition_met(pairs)
    # In the package's order; its chiitoitsu stands for the shape, at the preset's han.
    found = [
        item
        for item, holds in (
            (y.tsumo, config.is_tsumo),
            (y.chiitoitsu, True),
            (y.tanyao, y.tanyao.is_condition_met(pairs)),
            (y.riichi, config.is_riichi and not config.is_daburu_riichi),
            (y.daburu_riichi, config.is_daburu_riichi),
            (y.ippatsu, config.is_ippatsu),
            (y.chankan, config.is_chankan),
            (y.haitei, config.is_haitei),
            (y.houtei, config.is_houtei),
            (y.renhou_yakuman, config.is_renhou),
            (y.tenhou, config.is_tenhou),
            (y.chiihou, config.is_chiihou),
            (y.chinitsu, chinitsu),
            (y.honitsu, not chinitsu and y.honitsu.is_condition_met(pairs)),
            (y.tsuisou, y.tsuisou.is_condition_met(pairs)),
            (y.honroto, y.honroto.is_condition_met(pairs)),
            (y.chinroto, y.chinroto.is_condition_met(pairs)),
            (y.ryuisou, y.ryuisou.is_condition_met(pairs)),
        )
        if holds
    ]
    yakuman = [item for item in found if item.is_yakuman]
    if yakuman:
        names = tuple((_name(item, False), item.han_closed) for item in yakuman)
        count = sum(max(1, item.han_closed // 13) for item in yakuman)
        return _Win(yaku=names, fu=0, yakuman=count)
    yaku = tuple(
        (FOUR_TILE_CHIITOITSU, han)
        if item is y.chiitoitsu
        else (_name(item, False), item.han_closed)
        for item in found
    )
    return _Win(yaku=yaku, fu=_CHIITOITSU_FU, yakuman=0)


def _name(item: Yaku, swapped: bool) -> str:
    if swapped and item.yaku_id == _ROUND_NORTH:
        return "north"
    return YAKU_NAMES.get(item.yaku_id, item.name.lower())


def _fu(
    house: HouseRules,
    ctx: WinContext,
    details: Sequence[FuDetail],
    swapped: bool,
) -> int:
    """The package's fu with the preset's fu readings: the seat-and-round wind pair
    (2 or 4), tsumo fu on a rinshan win, jboy-sanma's real round wind after the swap."""
    parts = [(d["fu"], d["reason"]) for d in details]
    if len(parts) == 1 and parts[0][0] == 25:
        return 25  # chiitoitsu: not rounded, no pair fu
    raw = sum(fu for fu, _ in parts)
    reasons = {reason for _, reason in parts}
    tiles = house.tiles
    if _DOUBLE_PAIR in reasons and tiles.double_wind_pair_fu == 2:
        raw -= 2
    if ctx.rinshan and not tiles.rinshan_tsumo_fu and _TSUMO_FU in reasons:
        raw -= 2
    round_kind, seat_kind = EAST + ctx.round_wind, EAST + ctx.seat_wind
    if swapped and _held(ctx)[round_kind] == 2:
        given = 2 if seat_kind == round_kind else 0
        wanted = tiles.double_wind_pair_fu if seat_kind == round_kind else 2
        raw += wanted - given
    return -(-raw // 10) * 10


# --- refusals -------------------------------------------------------------------------


def _not_complete(house: HouseRules, ctx: WinContext) -> Refusal:
    away = tileshapes.shanten(house, ctx.concealed)
    melds = f" with {len(ctx.melds)} melds" if ctx.melds else ""
    distance = f" ({away + 1} tile(s) away from one)" if away >= 0 else ""
    pairs = (
        "seven pairs (four of a kind as two)"
        if house.tiles.four_tile_chiitoitsu_han
        else "seven different pairs"
    )
    return Refusal(
        "not_complete",
        f"{compact(ctx.concealed)}{melds} is not a winning hand: it needs four sets and a"
        f" pair, {pairs} or thirteen orphans{distance}",
    )


def _no_yaku(house: HouseRules, ctx: WinContext, is_open: bool) -> Refusal:
    simples = all(k < EAST and k % 9 not in (0, 8) for k in _held(ctx))
    if is_open and simples and not house.tiles.kuitan:
        why = "an open hand without yaku (kuitan is off in this preset: open tanyao does not count)"
    elif is_open:
        why = "an open hand without yaku (dora are not yaku)"
    elif not ctx.tsumo:
        why = "a closed hand won by ron without riichi and without yaku (dora are not yaku)"
    else:
        why = "a hand without yaku (dora are not yaku)"
    return Refusal("no_yaku", why)


def _atozuke(house: HouseRules, setup: _Setup, ctx: WinContext) -> Refusal | None:
    """Sanma-free (seed 003, 後付け無し): when any wait of the hand before the winning tile
    would win without yaku, a win on a wait with yaku is refused too, unless riichi or a
    closed tsumo (menzen tsumo is a yaku on every wait).  The waits are those of
    :func:`~tablectl.rules.tileshapes.waits` (a four-tile chiitoitsu's single among them, where
    the preset counts it), less a kind whose four tiles the hand holds; each is read with
    the same flags; dora are not yaku."""
    if ctx.riichi or ctx.double_riichi or (ctx.tsumo and not _is_open(ctx)):
        return None
    waiting = list(ctx.concealed)
    waiting.remove(ctx.win_tile)
    held = _held(ctx)
    used = set(ctx.concealed) | {t for m in ctx.melds for t in m.tiles}
    for k in tileshapes.waits(house, waiting):
        if k == kind(ctx.win_tile) or held[k] >= 4:
            continue
        tile = next(t for t in range(4 * k, 4 * k + 4) if t not in used)
        other = replace(ctx, concealed=(*waiting, tile), win_tile=tile)
        result = _evaluate(house, setup, other, 0)
        if isinstance(result, Refusal) and result.code == "no_yaku":
            return Refusal(
                "atozuke",
                f"a win on {KIND_NAMES[k]} would have no yaku: this preset has no atozuke"
                " (every wait needs a yaku before the win, or riichi)",
            )
    return None


# --- the score ------------------------------------------------------------------------


def score_win(house: HouseRules, ctx: WinContext) -> HandScore | Refusal:
    """The value of the win ``ctx`` under ``house``, or why it is no win.

    A normal hand: its han (counted: above 13 where the yaku and dora reach it), its fu
    (30 for sanma-free's flat table, None for kantan's) and the yaku, then the dora, by
    short name.  A yakuman: ``yakuman`` the count the preset pays (1 without multiple
    yakuman), ``han`` 0 and ``fu`` None.  Flags the preset does not score are ignored:
    ``renhou`` where it has none, ippatsu on a chankan where they do not combine, ura
    indicators without riichi, haitei on a rinshan win.

    Refusal codes: ``bad_tiles`` and ``bad_context`` (the context itself is impossible),
    ``not_complete``, ``no_yaku``, ``atozuke`` (see :data:`REFUSAL_CODES`)."""
    setup = _setup(house)
    refusal = _check(house, setup, ctx)
    if refusal is not None:
        return refusal
    bonuses = _bonuses(house, setup, ctx)
    extra = sum(h for _, h in bonuses)
    flat_renhou = _RENHOU_HAN.get(house.tiles.renhou) if ctx.renhou else None
    win = _evaluate(house, setup, ctx, extra)
    if isinstance(win, Refusal):
        if flat_renhou is not None and win.code == "no_yaku":
            return HandScore(han=flat_renhou, fu=None, yaku=("renhou",))
        return win
    if not house.tiles.atozuke and flat_renhou is None:
        late = _atozuke(house, setup, ctx)
        if late is not None:
            return late
    if win.yakuman:
        count = win.yakuman if house.scoring.multiple_yakuman else 1
        return HandScore(han=0, fu=None, yakuman=count, yaku=tuple(n for n, _ in win.yaku))
    han = sum(h for _, h in win.yaku) + extra
    if flat_renhou is not None and han <= flat_renhou:
        # Renhou is a flat limit hand (jboy: 手役・ドラの翻数は加算しません); the hand's own
        # value when that is higher.
        return HandScore(han=flat_renhou, fu=None, yaku=("renhou",))
    table = house.scoring.table
    fu = win.fu if table == "standard" else 30 if table == "flat_30fu" else None
    return HandScore(
        han=han, fu=fu, yakuman=0, yaku=tuple(n for n, _ in win.yaku) + tuple(n for n, _ in bonuses)
    )
