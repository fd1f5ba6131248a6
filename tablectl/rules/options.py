"""The house rules: one frozen, documented options object.

A preset file (TOML) sets these options section by section; a preset may ``extends``
another and then names only what differs.  Every field carries its documentation and its
allowed values in ``metadata`` so that :mod:`tablectl.rules.loader` can check a file and
``tablectl rules show`` can explain it.

Some options are enforced by the score-keeping core (flow, settlement); others only matter
when the table reads tiles and scores hands itself (``[tiles]``), and are kept here so that
one object describes the whole rule set.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

ABORTIVE_DRAWS = ("nine_terminals", "four_winds", "four_riichi", "triple_ron", "four_kans")
PAO_YAKUMAN = ("daisangen", "daisuushii", "suukantsu")
LOCAL_YAKU = ("isshoku_sanjun", "sanrenkou", "isshoku_yonjun", "suurenkou")


def opt(default: Any, doc: str, **checks: Any) -> Any:
    """A documented option with its allowed values (``choices``, ``min``, ``max``, ``items``)."""
    if isinstance(default, list | tuple):
        items = tuple(default)
        return field(default_factory=lambda: items, metadata={"doc": doc, **checks})
    return field(default=default, metadata={"doc": doc, **checks})


@dataclass(frozen=True, slots=True)
class GameOptions:
    """How long the game runs and how it ends."""

    players: int = opt(4, "number of players", choices=(3, 4))
    length: Literal["east", "east_south", "east_then_sudden_death"] = opt(
        "east_south",
        "rounds played: East only, East+South, or kantan's East then sudden death",
        choices=("east", "east_south", "east_then_sudden_death"),
    )
    start_points: int = opt(25000, "points each player starts with", min=0, max=1_000_000)
    return_points: int = opt(
        30000, "points returned (the target for oka and the West extension)", min=0, max=1_000_000
    )
    uma: tuple[int, ...] = opt(
        (), "placement bonus in thousands, best first (empty = none)", min=-1000, max=1000
    )
    oka_to_top: bool = opt(True, "the difference return - start, from every player, goes to 1st")
    extension: Literal["none", "west_until_return"] = opt(
        "none",
        "after the last round: none, or play West (sudden death) until someone reaches return",
        choices=("none", "west_until_return"),
    )
    bust: Literal["below_zero", "never"] = opt(
        "below_zero",
        "the game ends when a score falls below 0 (0 itself continues), or never",
        choices=("below_zero", "never"),
    )
    negative_settlement: bool = opt(True, "negative scores are settled in the result")
    cold_game_at: int | None = opt(
        None, "the game ends when someone reaches this score (none = no cold game)", min=1
    )
    cold_game_east_lead: int | None = opt(
        None,
        "East round only: a winner or tenpai player leading 2nd by this much ends the game",
        min=1,
    )
    time_limit_minutes: int | None = opt(
        None, "game clock; when it runs out the hand in progress is the last", min=1, max=600
    )
    all_last_agari_yame: bool = opt(False, "the all-last dealer may stop after a win")
    all_last_tenpai_yame: bool = opt(False, "the all-last dealer may stop when tenpai at a draw")
    all_last_top_ends_on_win: bool = opt(
        True, "the all-last dealer who wins and is then top must stop"
    )
    all_last_top_ends_on_tenpai: bool = opt(
        False, "the all-last dealer who is tenpai at a draw and top must stop"
    )
    west_bonus_step: int = opt(
        0, "kantan: from West 1 a bonus pot of n x step is added each hand (0 = none)", min=0
    )
    leftover_deposits: Literal["top", "lost"] = opt(
        "top", "deposits left on the table at the end", choices=("top", "lost")
    )
    tie: Literal["seat_order", "share_uma"] = opt(
        "seat_order",
        "equal final scores rank by seat order from the first dealer; with share_uma the"
        " tied players share the places they hold: they split the uma (and oka) of those"
        " places and the deposits left for the top equally, and get equal results",
        choices=("seat_order", "share_uma"),
    )
    extension_dealer_repeat_first: bool = opt(
        False,
        "in the extension (West), a dealer repeat goes on even when someone has reached"
        " the return, unless the dealer is top with the return (Tenhou 連荘優先)",
    )
    final_sum_check: bool = opt(
        False, "kenko: if the final scores sum to more than the start total, the top gives back"
    )
    final_rounding: Literal["none", "hundred", "thousand_half_up"] = opt(
        "none",
        "rounding of the final result points",
        choices=("none", "hundred", "thousand_half_up"),
    )


@dataclass(frozen=True, slots=True)
class FlowOptions:
    """Dealer repeats, honba, abortive draws, several winners, nagashi mangan."""

    dealer_repeat: Literal["win", "win_or_tenpai", "never"] = opt(
        "win_or_tenpai",
        "the dealer keeps the seat on a dealer win, on a win or tenpai at a draw, or never",
        choices=("win", "win_or_tenpai", "never"),
    )
    honba: bool = opt(True, "honba sticks are counted (kantan: none)")
    abortive_draws: tuple[str, ...] = opt(
        ABORTIVE_DRAWS, "abortive draws the table accepts", items=ABORTIVE_DRAWS
    )
    abort_dealer: Literal["repeats", "passes"] = opt(
        "repeats",
        "after an abortive draw the dealer repeats or passes",
        choices=("repeats", "passes"),
    )
    multiple_ron: Literal["head_bump", "double", "all", "every_discarder"] = opt(
        "double",
        "several players ron one discard: head bump (first in turn order only), double"
        " (two win, three abort), all win, or kantan's win from every discarder",
        choices=("head_bump", "double", "all", "every_discarder"),
    )
    multiple_ron_bonus: Literal["nearest", "each"] = opt(
        "nearest",
        "with several winners, honba go to the winner nearest the discarder or to each",
        choices=("nearest", "each"),
    )
    multiple_ron_deposits: Literal["nearest", "own_then_nearest"] = opt(
        "nearest",
        "with several winners, the deposits on the table go to the winner nearest the"
        " discarder, or each winner first takes back their own riichi stick of this hand"
        " and the rest go to the nearest (EMA)",
        choices=("nearest", "own_then_nearest"),
    )
    nagashi: Literal["none", "mangan", "baiman"] = opt(
        "mangan", "nagashi mangan at an exhaustive draw", choices=("none", "mangan", "baiman")
    )
    nagashi_closed: bool = opt(
        False,
        "nagashi mangan needs a hand without calls of one's own (ariari: closed and uncalled"
        " only); checked by tables that read tiles",
    )
    nagashi_tenpai_payments: bool = opt(
        False, "tenpai payments are still exchanged when someone makes nagashi"
    )
    nagashi_honba: bool = opt(
        False,
        "the hand's honba are added to a nagashi payment, as to a tsumo (ariari:"
        " 積み棒もアガリ点に加算); false: the mangan alone (Tenhou), and in either case the"
        " deposits stay on the table",
    )
    nagashi_flow: Literal["draw", "dealer_repeats", "win"] = opt(
        "dealer_repeats",
        "after a nagashi: a draw like any other (the dealer repeats only if tenpai, honba"
        " +1), a draw in which a dealer's nagashi also keeps the deal, or a win (a dealer's"
        " repeats with honba +1; anyone else's passes the deal and clears the honba)",
        choices=("draw", "dealer_repeats", "win"),
    )


@dataclass(frozen=True, slots=True)
class ScoringOptions:
    """How han and fu become payments."""

    table: Literal["standard", "flat_30fu", "kantan"] = opt(
        "standard",
        "points table: standard, sanma-free's flat 30 fu, or kantan's fixed table",
        choices=("standard", "flat_30fu", "kantan"),
    )
    kiriage: bool = opt(False, "30 fu 4 han and 60 fu 3 han are rounded up to mangan")
    fu_60_plus: Literal["standard", "one_han_up"] = opt(
        "standard",
        "jboy: hands of 60 fu and more score as one han more at half the fu, rounded up",
        choices=("standard", "one_han_up"),
    )
    kazoe: Literal["yakuman", "sanbaiman"] = opt(
        "yakuman", "13 han and more count as", choices=("yakuman", "sanbaiman")
    )
    multiple_yakuman: bool = opt(True, "double and triple yakuman are paid as such")
    tsumo_son: bool = opt(
        True, "three players: a tsumo pays only what the two payers would in four"
    )
    one_han_tsumo_each: int | None = opt(
        None, "sanma-free: any 1-han tsumo is this much from each payer", min=100, max=100_000
    )
    honba_ron: int = opt(300, "per honba stick on a ron, paid by the discarder", min=0, max=10_000)
    honba_tsumo_each: int = opt(
        100, "per honba stick on a tsumo, from each payer", min=0, max=10_000
    )
    riichi_deposit: int = opt(1000, "riichi deposit", min=0, max=10_000)
    tenpai_pool: int = opt(3000, "noten payments shared among tenpai players", min=0, max=100_000)
    tenpai_table: tuple[tuple[int, int], ...] = opt(
        (),
        "explicit noten payments: row n-1 for n tenpai players gives [each tenpai gets,"
        " each noten pays] (empty = share the pool)",
        min=0,
        max=100_000,
    )
    pao: tuple[str, ...] = opt(
        PAO_YAKUMAN, "yakuman with responsibility payment", items=PAO_YAKUMAN
    )
    pao_ron: Literal["split", "full"] = opt(
        "split",
        "on a ron the pao player pays half with the discarder, or all",
        choices=("split", "full"),
    )
    pao_honba: Literal["pao", "discarder"] = opt(
        "pao", "on a split ron the honba are paid by", choices=("pao", "discarder")
    )


@dataclass(frozen=True, slots=True)
class RiichiOptions:
    """Riichi declarations and their deposit."""

    min_points: int = opt(1000, "points a player needs to declare riichi", min=0, max=100_000)
    under_min: Literal["refused", "dead_hand", "dead_hand_bust", "allowed"] = opt(
        "refused",
        "a declaration below min_points: refused (hand goes on), dead hand, dead hand and"
        " bust after the hand, or allowed",
        choices=("refused", "dead_hand", "dead_hand_bust", "allowed"),
    )
    needs_draw_left: bool = opt(True, "riichi needs at least one live draw left")
    deposit_on_deal_in: bool = opt(
        False, "the deposit is taken even when the declaration tile deals in"
    )
    noten_at_draw: Literal["chombo", "penalty_each", "none"] = opt(
        "chombo",
        "a noten riichi at an exhaustive draw: chombo instead of the draw, a penalty paid"
        " to each other player on top of the draw, or nothing",
        choices=("chombo", "penalty_each", "none"),
    )
    furiten_at_draw: Literal["none", "chombo"] = opt(
        "none",
        "a riichi that was furiten when declared (a wait among the declarer's own discards"
        " or pulled norths, the declaration tile included), found at an exhaustive draw by"
        " a table that reads its tiles: nothing (it may still win by tsumo), or chombo"
        " instead of the draw (sanma-free)",
        choices=("none", "chombo"),
    )
    kan_keeps: Literal["waits", "waits_and_form"] = opt(
        "waits",
        "a closed kan in riichi, always of the tile just drawn (checked by a table that reads"
        " its tiles), must keep the waits, or the waits and the hand's form: the kan's kind"
        " a triplet in every reading of the hand (no 形の変わるカン: ariari, jboy, sanma-free)",
        choices=("waits", "waits_and_form"),
    )
    noten_penalty_each: int = opt(
        3000, "with noten_at_draw = penalty_each: paid to each other player", min=0, max=100_000
    )
    withdrawal_penalty: int | None = opt(
        None,
        "a riichi may be withdrawn before the next discard for this penalty (none = no)",
        min=0,
        max=100_000,
    )


@dataclass(frozen=True, slots=True)
class PenaltyOptions:
    """Chombo and false calls."""

    chombo: Literal["mangan", "each", "final", "none"] = opt(
        "mangan",
        "chombo payment: a mangan tsumo, a fixed amount to each other player, a deduction from"
        " the final score, or none",
        choices=("mangan", "each", "final", "none"),
    )
    chombo_amount: int = opt(
        0,
        "with chombo = each: paid to each other player; with final: deducted",
        min=0,
        max=1_000_000,
    )
    chombo_dealer: Literal["replay", "dealer_passes", "dealer_passes_except_all_last"] = opt(
        "replay",
        "after the dealer's chombo the hand is replayed, or it counts as a draw the dealer"
        " loses (honba +1), or that except in all-last, where it is replayed",
        choices=("replay", "dealer_passes", "dealer_passes_except_all_last"),
    )
    chombo_honba: Literal["unchanged", "plus_one"] = opt(
        "unchanged", "honba after a replayed chombo hand", choices=("unchanged", "plus_one")
    )
    chombo_returns: Literal["riichi", "all_deposits"] = opt(
        "riichi",
        "after a chombo, the riichi sticks of the hand go back to their owners, or every"
        " deposit put out in the hand does (false-call deposits too: kenko)",
        choices=("riichi", "all_deposits"),
    )
    false_call: Literal["none", "deposit", "dead_hand"] = opt(
        "none",
        "a false call: no penalty, a deposit to the table (dead hand if short), or dead hand",
        choices=("none", "deposit", "dead_hand"),
    )
    false_call_deposit: int = opt(1000, "with false_call = deposit", min=0, max=100_000)


@dataclass(frozen=True, slots=True)
class WallOptions:
    """The wall, kans and the dead wall (enforced when the table senses takes)."""

    own_walls: bool = opt(False, "kantan: every player draws from their own wall")
    own_wall_discards: int = opt(18, "kantan: the hand ends after this many discards each", min=1)
    kans_allowed: bool = opt(True, "kans may be made")
    kan_dora: Literal["immediate", "after_discard", "none"] = opt(
        "immediate",
        "when a kan dora indicator is revealed: at every kan, or a closed kan's at once and"
        " an open or added kan's after the kan maker's discard (Tenhou), or never",
        choices=("immediate", "after_discard", "none"),
    )
    kan_dora_on_chankan: bool = opt(False, "a kan robbed by chankan still reveals its kan dora")
    haitei_discard_callable: bool = opt(True, "the last discard of the hand may be called")
    north_pulls: bool = opt(False, "three players: north tiles are pulled as nuki-dora")
    chi_allowed: bool = opt(True, "chi may be called (three-player tables usually have none)")
    kokushi_closed_kan_ron: bool = opt(
        False, "kokushi musou may rob a closed kan (chankan on an ankan)"
    )


@dataclass(frozen=True, slots=True)
class TileOptions:
    """Yaku and fu readings for tables that read tiles (scored by the ``mahjong`` library)."""

    red_fives: tuple[str, ...] = opt(
        ("5m", "5p", "5s"), "red fives in the set", items=("5m", "5p", "5s")
    )
    gold_fives: tuple[str, ...] = opt((), "gold fives (worth more)", items=("5m", "5p", "5s"))
    red_count: int = opt(3, "number of red (and gold) fives in the set", min=0, max=8)
    formal_tenpai: Literal["yes", "not_all_four_own", "open_hand_invalid"] = opt(
        "yes",
        "formal tenpai: always valid, invalid when the player holds all four of the wait, or"
        " (sanma-free) also invalid for an open hand without yaku",
        choices=("yes", "not_all_four_own", "open_hand_invalid"),
    )
    kuitan: bool = opt(True, "open tanyao")
    atozuke: bool = opt(True, "a yaku completed only by the winning tile")
    kuikae: bool = opt(
        False,
        "swap-calling (kuikae) allowed: right after a chi or pon the caller may discard the"
        " called kind (現物) and, after a chi, the kind beyond the run's other end (筋);"
        " false: both are refused (kantan: 食い替え（現物も）可)",
    )
    furiten: bool = opt(
        True,
        "furiten: a ron is refused on a wait among the winner's own discards (or pulled"
        " norths), or one let pass since its last discard or its riichi; false: no furiten,"
        " every ron the hand makes stands (kantan: フリテン無し)",
    )
    double_wind_pair_fu: int = opt(4, "fu for a pair of the seat and round wind", choices=(2, 4))
    rinshan_tsumo_fu: bool = opt(True, "a rinshan win gets the 2 tsumo fu")
    ippatsu_chankan: bool = opt(True, "ippatsu and chankan combine")
    chance_yaku_alone: bool = opt(True, "haitei, houtei, rinshan, chankan alone are a yaku")
    renhou: Literal["none", "mangan", "baiman", "yakuman"] = opt(
        "none", "renhou", choices=("none", "mangan", "baiman", "yakuman")
    )
    north: Literal["value", "nuki", "guest"] = opt(
        "guest",
        "three players: north is a value tile, pulled nuki-dora, or a plain guest wind",
        choices=("value", "nuki", "guest"),
    )
    north_rinshan: bool = opt(
        True,
        "three players: a tsumo on a pulled north's replacement tile is rinshan; false:"
        " it is not, and after a north pulled on the haitei it is the haitei (sanma-free)",
    )
    closed_kan_bonus_han: int = opt(0, "sanma-free: a closed kan adds this many han (once)", min=0)
    tsumo_pinfu: bool = opt(True, "pinfu tsumo scores")
    four_tile_chiitoitsu_han: int = opt(
        0,
        "seven pairs with four of a kind counted as two of the pairs (4枚使いの七対子):"
        " 0 = not a winning hand, else its han (kantan 2, as any chiitoitsu; sanma-free 3)",
        min=0,
        max=13,
    )
    local_yaku: tuple[str, ...] = opt(
        (),
        "local yaku scored, at kantan's values (seed 004): isshoku_sanjun (three identical"
        " runs: 3 han, closed only), sanrenkou (three triplets in a row in one suit: 2 han),"
        " isshoku_yonjun (four identical runs) and suurenkou (four triplets in a row):"
        " yakuman, with calls too",
        items=LOCAL_YAKU,
    )
    yaku_with_calls: bool = opt(
        False,
        "kantan (鳴きがあっても成立): riichi may be declared on an open hand; tsumo, riichi"
        " and double riichi count there; every yakuman counts where its shape can hold a"
        " called set (an open chuuren too); and a call does not end the first go-around"
        " (double riichi, chiihou)",
    )
    pon_beats_chi: bool = opt(True, "a pon declared with a chi takes precedence")


#: What a hand's chips (祝儀) can be earned for, besides the yakuman chips.
CHIP_ITEMS = ("red", "gold", "ippatsu", "ura", "kan_ura")


@dataclass(frozen=True, slots=True)
class MoneyOptions:
    """A free parlor's settlement in P (points of account): the result at the rate, the
    placement uma, chips (祝儀), the game fee and the bust prize (docs/rules.md, "Money").

    Every amount is in P, every count in chips; 0 (or an empty uma) means "none", and a
    preset without any of them settles in points alone (``enabled`` is false).
    """

    rate: int = opt(
        0,
        "P per 1000 result points (点5 = 50, 点ピン = 100); 0: the result is not paid in P",
        min=0,
        max=100_000,
    )
    uma: tuple[int, ...] = opt(
        (),
        "placement uma in P, best first, one per player, summing to 0 (empty = none)",
        min=-1_000_000,
        max=1_000_000,
    )
    game_fee: int = opt(0, "game fee (ゲーム代) in P per finished game", min=0, max=100_000)
    fee_payer: Literal["each", "top"] = opt(
        "each",
        "who pays the game fee: each player, or the game's top alone (トップ払い)",
        choices=("each", "top"),
    )
    chip_value: int = opt(0, "P per chip (0 = no chips)", min=0, max=100_000)
    red_chips: int = opt(0, "chips for each red five in the winning hand", min=0, max=100)
    gold_chips: int = opt(0, "chips for each gold five in the winning hand", min=0, max=100)
    fives_need_riichi: bool = opt(
        False,
        "red and gold fives earn chips only in a riichi winner's hand (sanma-free: リーチ赤)",
    )
    ippatsu_chips: int = opt(0, "chips for an ippatsu win", min=0, max=100)
    ura_chips: int = opt(0, "chips for each ura dora (under the first indicator)", min=0, max=100)
    kan_ura_chips: int = opt(
        0, "chips for each kan-ura dora (under a kan's indicator)", min=0, max=100
    )
    yakuman_chips: int = opt(
        0,
        "chips for a yakuman win (役満祝儀), on top of the hand's other chips: from the"
        " discarder on a ron, from each other player on a tsumo (0 = none)",
        min=0,
        max=1000,
    )
    yakuman_chips_each: bool = opt(
        False,
        "a double or triple yakuman earns the yakuman chips once per yakuman; false: once"
        " per hand however many (ご祝儀は重複しません)",
    )
    kazoe_chips: bool = opt(
        False, "a kazoe yakuman (13 han counted as a yakuman) earns the yakuman chips too"
    )
    renhou_chips: Literal["ordinary", "fives_only"] = opt(
        "ordinary",
        "a renhou earns the chips of any win, or only its red and gold fives (jboy:"
        " 赤・金の祝儀のみ): no yakuman chips either way unless renhou is a yakuman",
        choices=("ordinary", "fives_only"),
    )
    pao_pays_chips: bool = opt(
        True,
        "on a pao win the pao player pays all the winner's chips (on a tsumo the count"
        " from each other player); false: they are paid as on any win",
    )
    bust_prize: int = opt(
        0,
        "bust prize (トビ賞) in P: each seat below zero at the game's end (or made bust by"
        " the rules: a riichi under the minimum) pays it to the top",
        min=0,
        max=100_000,
    )

    @property
    def enabled(self) -> bool:
        """The preset settles the game in P."""
        return bool(self.rate or self.uma or self.game_fee or self.chip_value or self.bust_prize)

    @property
    def hand_chips(self) -> bool:
        """A hand may earn chips besides the yakuman chips (a winner may enter them)."""
        return any(getattr(self, f"{item}_chips") for item in CHIP_ITEMS)

    @property
    def chips_without_riichi(self) -> bool:
        """A winner who did not declare riichi can still earn chips besides the yakuman
        chips: red or gold fives count on any win. (Ippatsu and ura need riichi.)"""
        return bool(self.red_chips or self.gold_chips) and not self.fives_need_riichi


@dataclass(frozen=True, slots=True)
class HouseRules:
    """One complete rule set.  Built by the loader from a preset; frozen."""

    name: str = "custom"
    description: str = ""
    game: GameOptions = field(default_factory=GameOptions)
    flow: FlowOptions = field(default_factory=FlowOptions)
    scoring: ScoringOptions = field(default_factory=ScoringOptions)
    riichi: RiichiOptions = field(default_factory=RiichiOptions)
    penalties: PenaltyOptions = field(default_factory=PenaltyOptions)
    wall: WallOptions = field(default_factory=WallOptions)
    tiles: TileOptions = field(default_factory=TileOptions)
    money: MoneyOptions = field(default_factory=MoneyOptions)

    @property
    def players(self) -> int:
        """Number of players."""
        return self.game.players

    def __hash__(self) -> int:
        # Rules are a cache key on every event (wall_rules and friends); hashing every option
        # each time was a tenth of a replay.  Equal rules have equal names and descriptions,
        # so this agrees with ==, and a cache hit on the same object skips == altogether.
        return hash((self.name, self.description))


SECTIONS: dict[str, type[Any]] = {
    "game": GameOptions,
    "flow": FlowOptions,
    "scoring": ScoringOptions,
    "riichi": RiichiOptions,
    "penalties": PenaltyOptions,
    "wall": WallOptions,
    "tiles": TileOptions,
    "money": MoneyOptions,
}


def as_dict(rules: HouseRules) -> dict[str, Any]:
    """Every resolved value, section by section, JSON/TOML-ready (tuples as lists)."""

    def plain(value: Any) -> Any:
        if isinstance(value, tuple):
            return [plain(v) for v in value]
        return value

    out: dict[str, Any] = {"name": rules.name, "description": rules.description}
    for section in SECTIONS:
        obj = getattr(rules, section)
        out[section] = {f.name: plain(getattr(obj, f.name)) for f in fields(obj)}
    return out
