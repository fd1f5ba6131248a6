"""What the bots at a tile-reading table decide from their tiles (hw_sim.tilebot and the
bots' ron rules): worked examples."""

from __future__ import annotations

import random
import re

import pytest

from hw_sim import SimTable
from hw_sim import tilebot as T
from hw_sim.botmemory import Hand as _Hand
from hw_sim.botmemory import TileSeat as _TileSeat
from tablectl.rules import wall as W
from tablectl.rules.loader import load_rules
from tablectl.tiles.hand import HandScore, Meld, WinContext
from tablectl.tiles.ids import kind, tile_set

TENHOU = load_rules("tenhou")


def tiles(spec: str, *, used: set[int] | None = None) -> tuple[int, ...]:
    """Tile ids of ``"123m456p11z"`` (``0`` = the red five, id 4*kind): each plain tile is
    the highest copy not used yet, so no red five sneaks in."""
    used = set() if used is None else used
    out: list[int] = []
    for digits, suit in re.findall(r"(\d+)([mpsz])", spec):
        base = "mpsz".index(suit) * 9
        for d in digits:
            k = base + (4 if d == "0" else int(d) - 1)
            if d == "0":
                tile = 4 * k
            else:
                tile = next(t for t in range(4 * k + 3, 4 * k - 1, -1) if t not in used)
            used.add(tile)
            out.append(tile)
    return tuple(out)


def one(spec: str) -> int:
    (tile,) = tiles(spec)
    return tile


@pytest.mark.parametrize(
    ("spec", "shanten"),
    [
        ("123m456p789s11z23s4s", -1),
        ("123m456p789s11z23s", 0),
        ("123m456p789s1z23s5z", 1),
        ("19m19p19s1234567z", 0),  # kokushi, 13 waits
        ("1122m3344p5566s7z", 0),  # chiitoitsu
    ],
)
def test_shanten(spec: str, shanten: int) -> None:
    assert T.shanten(TENHOU, tiles(spec)) == shanten


@pytest.mark.parametrize(
    ("spec", "waits"),
    [
        ("123m456p789s11z23s", {"1s", "4s"}),
        ("123m456p789s11z2s4s", {"3s"}),
        ("1112345678999m", {f"{n}m" for n in range(1, 10)}),  # nine gates
        ("123m456p789s11z25s", set()),  # not tenpai
        ("123m456p789s1111z", set()),  # waiting on a fifth east: none
    ],
)
def test_waits(spec: str, waits: set[str]) -> None:
    names = {f"{k % 9 + 1}{'mpsz'[k // 9]}" for k in T.waits(TENHOU, tiles(spec))}
    assert names == waits


def test_the_discard_keeps_shanten_lowest_and_the_red_five() -> None:
    rng = random.Random(0)
    hand = tiles("123m456p789s11z23s7z")
    tile, left = T.choose_discard(TENHOU, hand, rng)
    assert kind(tile) == 33 and left == 0  # the lone chun
    # An extra 5p next to the 456p run: a 5p goes, and it is not the red one (52).
    hand = (*tiles("123m4p6p789s11z23s"), 52, one("5p"))
    tile, left = T.choose_discard(TENHOU, hand, rng)
    assert kind(tile) == 13 and tile != 52 and left == 0


def test_a_kuikae_kind_is_never_discarded() -> None:
    hand = tiles("456p789s11z23s5s")  # 11 tiles after a call
    free, _ = T.choose_discard(TENHOU, hand, random.Random(0))
    forbidden = frozenset({kind(free)})
    tile, _ = T.choose_discard(TENHOU, hand, random.Random(0), forbidden=forbidden)
    assert kind(tile) not in forbidden


@pytest.mark.parametrize(
    ("called", "own", "kinds"),
    [
        ("4p", "5p6p", {"4p", "7p"}),  # the other end of 4-5-6 is 7p
        ("6p", "4p5p", {"6p", "3p"}),
        ("5p", "4p6p", {"5p"}),
        ("7s", "8s9s", {"7s"}),  # no 10s
        ("3m", "1m2m", {"3m"}),  # no 0m
        ("1z", "1z1z", {"1z"}),  # pon: the called kind
    ],
)
def test_kuikae_kinds(called: str, own: str, kinds: set[str]) -> None:
    got = T.kuikae_kinds(one(called), tiles(own))
    assert {f"{k % 9 + 1}{'mpsz'[k // 9]}" for k in got} == kinds


def test_call_options() -> None:
    hand = tiles("3p4p6p7p9s9s")
    assert [tuple(kind(t) for t in own) for own in T.chi_options(hand, one("5p"))] == [
        (11, 12),
        (12, 14),
        (14, 15),
    ]
    assert T.chi_options(hand, one("1z")) == []
    assert [tuple(map(kind, own)) for own in T.pon_options(hand, one("9s"))] == [(26, 26)]
    assert T.pon_options(hand, one("3p")) == []


def _ctx(concealed: tuple[int, ...], win: int, **kw: object) -> WinContext:
    base: dict[str, object] = dict(
        seat=1,
        dealer=0,
        players=4,
        round_wind=0,
        concealed=concealed,
        melds=(),
        win_tile=win,
        tsumo=False,
    )
    base.update(kw)
    return WinContext(**base)  # type: ignore[arg-type]


def _value(preset: str, ctx: WinContext) -> HandScore | None:
    house = load_rules(preset)
    return T.value(house, tile_set(house), ctx)


def test_riichi_pinfu_tsumo_is_three_han_twenty_fu() -> None:
    hand = tiles("234789m12345666p")
    score = _value("tenhou", _ctx(hand, hand[-1], tsumo=True, riichi=True))
    assert score is not None and (score.han, score.fu, score.yakuman) == (3, 20, 0)
    assert {"Riichi", "Pinfu", "Menzen Tsumo"} <= set(score.yaku)


@pytest.mark.parametrize(
    ("preset", "red", "plain", "more"),
    [
        ("tenhou", 52, 55, 1),  # red 5p
        ("kenko", 52, 55, 0),  # a set without red fives
        ("jboy", 52, 55, 1),  # jboy's 5p is gold: counted here as one
        ("jboy-sanma", 53, 55, 1),  # its red 5p is id 53 (52 is gold)
        ("tenhou", 53, 55, 0),  # ... which is a plain 5p at tenhou
    ],
)
def test_red_and_gold_fives_are_the_presets_ids(
    preset: str, red: int, plain: int, more: int
) -> None:
    players = load_rules(preset).players
    rest = tiles("123p4p6p789p111z22z")  # ittsuu, one 5p to come; no 2m..8m (sanma)
    hands = [(*rest, five) for five in (red, plain)]
    scores = [
        _value(preset, _ctx(h, h[0], players=players, tsumo=True, riichi=True)) for h in hands
    ]
    assert scores[0] is not None and scores[1] is not None
    assert scores[0].han - scores[1].han == more


def test_kantan_has_no_pinfu() -> None:
    # ピンフ無し (seed 004): a closed ron with pinfu alone is no win; with tanyao it is
    # tanyao alone.
    pinfu = tiles("123m456p789s23s99m")
    win = one("1s")
    assert _value("tenhou", _ctx((*pinfu, win), win)) is not None
    assert _value("kantan", _ctx((*pinfu, win), win)) is None
    both = tiles("234m456p678s34s66m")
    score = _value("kantan", _ctx((*both, one("5s")), one("5s")))
    assert score is not None and score.yaku == ("Tanyao",) and score.han == 1


def test_no_yaku_and_no_win_are_none() -> None:
    chi = Meld("chi", tiles("123m"), called=one("1m"), source=0)
    open_hand = tiles("456p789s234s99p")
    assert _value("tenhou", _ctx(open_hand, open_hand[-1], melds=(chi,))) is None
    closed = tiles("123m456p789s234s9p1z")
    assert _value("tenhou", _ctx(closed, closed[-1], tsumo=True)) is None


@pytest.mark.parametrize(
    ("spec", "count"),
    [("19m19p19s12345667z", 1), ("19m19p19s12345677z", 2)],  # the 13-sided wait: double
)
def test_a_yakuman_is_entered_as_a_count(spec: str, count: int) -> None:
    hand = tiles(spec)
    score = _value("tenhou", _ctx(hand, hand[-1]))
    assert score is not None and (score.han, score.fu, score.yakuman) == (0, None, count)


def test_the_closed_kan_bonus_of_sanma_free() -> None:
    kan = Meld("closed_kan", tiles("5z5z5z5z"))
    hand = tiles("123p456p789s11z")
    with_kan = _value("sanma-free", _ctx(hand, hand[0], players=3, melds=(kan,), tsumo=True))
    plain = _value("tenhou", _ctx(hand, hand[0], melds=(kan,), tsumo=True))  # no bonus
    assert with_kan is not None and plain is not None
    assert with_kan.yaku == plain.yaku and with_kan.han == plain.han + 1


# --- the bots' ron rules -----------------------------------------------------------------


@pytest.fixture
def bot_table() -> SimTable:
    """An unstarted table with seat readers and bots (only their rules are used)."""
    return SimTable("tenhou", 1, seat_reader=True)


def _tenpai_seat(table: SimTable, spec: str) -> tuple[_Hand, W.WallState, _TileSeat]:
    bots = table.bots
    assert bots is not None and bots.tiles is not None and table.firmware.zones is not None
    table.firmware.wall.shuffle()
    state = W.start_wall(bots.rules, 0, (3, 4))
    assert isinstance(state, W.WallState)
    hand = _Hand(dealer=0)
    concealed = tiles(spec)
    table.firmware.zones.take(1, concealed)
    mem = bots.tiles.mem(hand, 1)
    mem.waits = T.waits(bots.house, concealed)
    return hand, state, mem


def test_a_bot_rons_a_tile_that_completes_a_hand_with_a_yaku(bot_table: SimTable) -> None:
    hand, state, _ = _tenpai_seat(bot_table, "234m567p678s5m6m22s")  # tanyao, 4-7m
    assert bot_table.bots is not None and bot_table.bots.tiles is not None
    score = bot_table.bots.tiles.ron_value(hand, state, 1, one("4m"))
    assert score is not None and "Tanyao" in score.yaku
    assert bot_table.bots.tiles.ron_value(hand, state, 1, one("9m")) is None  # no win


@pytest.mark.parametrize("preset", ["tenhou", "kantan"])
@pytest.mark.parametrize("why", ["own_discard", "passed", "riichi_passed"])
def test_a_bot_never_rons_in_furiten(preset: str, why: str) -> None:
    table = SimTable(preset, 1, seat_reader=True)
    hand, state, mem = _tenpai_seat(table, "234m567p678s5m6m22s")
    bots = table.bots
    assert bots is not None and bots.tiles is not None
    if why == "own_discard":
        mem.discarded.add(kind(one("7m")))  # it threw one of its own waits
    elif why == "passed":
        bots.tiles.passed(hand, 1, one("7m"))  # let a winning tile go since its last draw
    else:
        hand.riichi.add(1)
        bots.tiles.passed(hand, 1, one("7m"))
        mem.temp_furiten = False  # a new draw clears only the temporary furiten
    assert mem.furiten
    score = bots.tiles.ron_value(hand, state, 1, one("4m"))
    assert (score is None) is (preset != "kantan")  # kantan: フリテン無し


def test_an_open_hand_without_a_yaku_does_not_ron(bot_table: SimTable) -> None:
    hand, state, mem = _tenpai_seat(bot_table, "456p789s99p2m3m")
    mem.melds.append(Meld("chi", tiles("123s"), called=one("1s"), source=0))
    assert bot_table.bots is not None and bot_table.bots.tiles is not None
    assert bot_table.bots.tiles.ron_value(hand, state, 1, one("4m")) is None
