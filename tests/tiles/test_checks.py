"""Shanten, waits, tenpai per preset, furiten, nagashi mangan and the context of a win."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import pytest

from tablectl.rules import events as ev
from tablectl.rules import tenpai, tilechecks, tileshapes
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.tiletrack import expected_draw
from tablectl.rules.tiletracker import RiverTile, SeatTiles, TileState
from tablectl.tiles.hand import HandScore, Meld, MeldKind, WinContext
from tablectl.tiles.ids import kind
from tests.tiles.kit import Deck, Table, kinds_of, play_out

TENHOU = load_rules("tenhou")


def ids(text: str, preset: str = "tenhou") -> list[int]:
    return Deck(load_rules(preset)).take(text)


def names(kinds: tuple[int, ...]) -> str:
    return tileshapes.kinds_text(kinds)


# --- shanten and waits -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand", "shanten", "waits"),
    [
        ("123m 456m 789m 23p 55s", 0, "1p 4p"),
        ("111m 23m 456p 789p 55s", 0, "1m 4m 5s"),
        ("1112345678999m", 0, "1m 2m 3m 4m 5m 6m 7m 8m 9m"),  # nine gates
        ("19m 19p 19s 1234567z", 0, "1m 9m 1p 9p 1s 9s 1z 2z 3z 4z 5z 6z 7z"),
        ("112233m 4455p 66s 7z", 0, "7z"),  # seven pairs
        ("1111m 234p 567s 999s", 1, "nothing"),  # a fifth 1m does not exist
        ("123m 456m 789m 1p 5s 9s 1z", 2, "nothing"),
        ("23p 55s", 0, "1p 4p"),  # three melds aside
        ("5s", 0, "5s"),  # four melds aside
    ],
)
def test_shanten_and_waits(hand: str, shanten: int, waits: str) -> None:
    tiles = ids(hand)
    assert tileshapes.shanten(TENHOU, tiles) == shanten
    assert names(tileshapes.waits(TENHOU, tiles)) == waits


@pytest.mark.parametrize(
    ("hand", "kan", "keeps"),
    [
        ("222333444m 5678p", "2m", False),  # 5p 8p either way, but 234m x3 is a reading
        ("111m 456p 789p 234s 5s", "1m", True),
        ("333p 456p 789s 11s 23s", "3p", True),  # 33p 345p 6p is no reading
        ("111234m 567p 789s 5z", "1m", True),  # 11m 123m 4m is none either
        ("11123m 456p 789s 11z", "1m", False),  # on 1m 4m 1z: 11m 123m reads too
    ],
)
def test_a_kan_keeps_the_hands_form(hand: str, kan: str, keeps: bool) -> None:
    ((k, _),) = kinds_of(kan)
    assert tileshapes.kan_keeps_form(load_rules("tenhou"), ids(hand), k) is keeps


def test_three_player_waits_skip_2m_to_8m() -> None:
    tiles = ids("11m 99m 123p 456p 789s", "sanma-free")
    assert names(tileshapes.waits(load_rules("sanma-free"), tiles)) == "1m 9m"
    assert tileshapes.shanten(load_rules("sanma-free"), tiles) == 0


# Seven pairs with four of a kind as two of them (4枚使いの七対子): sanma-free (seed 003:
# 4枚使いの七対子も認めます) and kantan (seed 004: ※4枚使い有り); nowhere else (ariari, seed
# 000: チートイツの4枚使いは認めない).
FOUR_PAIRS = [
    # preset, concealed, shanten, waits
    ("sanma-free", "1111p 22p 55s 99s 11z 7z", 0, "7z"),  # the single beside 1111p
    ("kantan", "2222m 33m 44m 66p 77p 8s", 0, "8s"),
    ("kantan", "222m 33m 44m 66p 77p 88s", 0, "2m"),  # the fourth 2m
    # seed 003's compound form: the meld hand's shabo (1z 2z) and the seven pairs' single
    # (9s beside 999s): シャボとのチートイツの単騎待ち.
    ("sanma-free", "112233p 999s 11z 22z", 0, "9s 1z 2z"),
    ("ariari", "112233p 999s 11z 22z", 0, "1z 2z"),
    ("ariari", "1111p 22p 55s 99s 11z 7z", 2, "nothing"),
    ("tenhou", "2222m 33m 44m 66p 77p 8s", 1, "nothing"),
    ("jboy-sanma", "1111p 22p 55s 99s 11z 7z", 2, "nothing"),
]


@pytest.mark.parametrize(("preset", "hand", "shanten", "waits"), FOUR_PAIRS)
def test_four_of_a_kind_in_seven_pairs(preset: str, hand: str, shanten: int, waits: str) -> None:
    rules = load_rules(preset)
    tiles = ids(hand, preset)
    assert tileshapes.shanten(rules, tiles) == shanten
    assert names(tileshapes.waits(rules, tiles)) == waits
    assert tenpai.tenpai(rules, tiles, []) is (waits != "nothing")


@pytest.mark.parametrize(
    ("preset", "complete"),
    [("sanma-free", True), ("kantan", True), ("ariari", False), ("jboy-sanma", False)],
)
def test_a_four_tile_chiitoitsu_is_complete_where_the_preset_counts_it(
    preset: str, complete: bool
) -> None:
    rules = load_rules(preset)
    tiles = ids("1111p 22p 55s 99s 11z 77z", preset)
    assert tilechecks.is_complete(rules, tiles) is complete
    assert tileshapes.shanten(rules, tiles) == (-1 if complete else 1)


@pytest.mark.parametrize(
    ("hand", "complete", "kokushi"),
    [
        ("123m 456m 789m 123p 55s", True, False),
        ("19m 19p 19s 12345677z", True, True),
        ("1122m 3344p 5566s 77z", True, False),
        ("123m 456m 789m 123p 5s 6s", False, False),
    ],
)
def test_complete_hands(hand: str, complete: bool, kokushi: bool) -> None:
    assert tilechecks.is_complete(TENHOU, ids(hand)) is complete
    assert tilechecks.is_kokushi(ids(hand)) is kokushi


# --- tenpai as each preset counts it --------------------------------------------------


def pon(text: str, preset: str = "tenhou") -> Meld:
    tiles = tuple(ids(text, preset))
    return Meld("pon", tiles, called=tiles[0], source=0)


# (preset, concealed, melds, tenpai)
TENPAI = [
    # 1m tanki beside a pon of 1m: the player holds all four of its only wait.
    ("jboy", "1m 234p 567p 999s", "111m", True),  # formal tenpai: yes
    ("tenhou", "1m 234p 567p 999s", "111m", False),  # not_all_four_own
    ("kenko", "1m 234p 567p 999s", "111m", False),
    ("ariari", "1m 234p 567p 999s", "111m", False),
    # A wait of which the player holds three still counts.
    ("tenhou", "23m 456p 789p 55s", "111m", True),
    ("tenhou", "123m 456m 789m 23p 55s", "", True),
    ("tenhou", "123m 456m 789m 1p 5s 9s 1z", "", False),
    # sanma-free: an open hand counts only with a yaku on every wait (no atozuke).
    ("sanma-free", "234s 678s 99s 55z", "111p", False),  # 9s: no yaku
    ("sanma-free", "234s 678s 99s 11p", "555z", True),  # haku pon
    ("sanma-free", "234s 678s 99s 55z", "", True),  # closed: formal tenpai holds
]


@pytest.mark.parametrize(("preset", "concealed", "meld", "ready"), TENPAI)
def test_tenpai_per_formal_tenpai(preset: str, concealed: str, meld: str, ready: bool) -> None:
    rules = load_rules(preset)
    deck = Deck(rules)
    melds = [Meld("pon", tuple(deck.take(meld)), source=0)] if meld else []
    hand = deck.take(concealed)
    assert tenpai.tenpai(rules, hand, melds) is ready


def test_sanma_free_with_atozuke_would_count_a_yaku_on_one_wait() -> None:
    rules = load_rules("sanma-free")
    deck = Deck(rules)
    melds = [Meld("pon", tuple(deck.take("111p")), source=0)]
    hand = deck.take("234s 678s 99s 55z")
    assert names(tenpai.tenpai_waits(rules, hand, melds)) == "nothing"
    loose = replace(rules, tiles=replace(rules.tiles, atozuke=True))
    assert names(tenpai.tenpai_waits(loose, hand, melds)) == "5z"


# --- furiten ----------------------------------------------------------------------------


def seat_state(**kw: object) -> TileState:
    st = SeatTiles(concealed=tuple(ids("123m 456m 789m 23p 55s")), **kw)  # type: ignore[arg-type]
    return TileState(layout=(), seats=(st, SeatTiles(), SeatTiles(), SeatTiles()))


ONE_P, FOUR_P, NINE_S = 36, 48, 104


@pytest.mark.parametrize(
    ("seat", "win", "reason"),
    [
        ({}, FOUR_P, None),
        ({"discards": (RiverTile(ONE_P + 1),)}, FOUR_P, "permanent furiten"),
        ({"discards": (RiverTile(ONE_P + 1, called_by=2),)}, FOUR_P, "permanent furiten"),
        ({"discards": (RiverTile(NINE_S),)}, FOUR_P, None),
        ({"passed": (ONE_P + 1, FOUR_P)}, FOUR_P, "temporary furiten"),
        ({"passed": (FOUR_P,)}, FOUR_P, None),  # the tile being ronned has not passed
        ({"riichi": True, "riichi_passed": (ONE_P + 2,)}, FOUR_P, "riichi furiten"),
        ({"riichi": False, "riichi_passed": (ONE_P + 2,)}, FOUR_P, None),
    ],
)
@pytest.mark.parametrize("preset", ["tenhou", "kantan"])
def test_furiten(preset: str, seat: dict[str, object], win: int, reason: str | None) -> None:
    rules = load_rules(preset)
    found = tilechecks.furiten(rules, seat_state(**seat), 0, win)
    if reason is None or not rules.tiles.furiten:  # kantan: フリテン無し
        assert found is None
    else:
        assert found is not None and found.startswith(reason) and "1p 4p" in found


FURITEN_HANDS = {
    0: "123m 456m 789m 23p 55s",  # tenpai: 1p 4p
    1: "111z 222z 567m 19p 9s 3z",
    2: "234s 678s 345p 679p 9m",
    3: "2233m 66p 88p 88s 77s 3z",
}


def furiten_table(draws: list[str | None]) -> Table:
    t = Table("tenhou")
    t.start(hands=FURITEN_HANDS, draws=draws)
    return t


def test_permanent_furiten_through_the_core() -> None:
    t = furiten_table(["1p", "4p"])
    t.take(0)
    t.discard(0, "1p")  # its own winning tile
    t.tsumogiri(1)
    refusal = t.refused(t.ron(0, 1), "furiten")
    assert "permanent furiten" in refusal.message and "1p" in refusal.message


def test_temporary_furiten_lasts_until_the_own_discard() -> None:
    t = furiten_table(["7z", "1p", "4p", None, None, "4p"])
    t.tsumogiri(0)
    t.tsumogiri(1)  # 1p passes seat 0
    t.tsumogiri(2)
    refusal = t.refused(t.ron(0, 2), "furiten")
    assert "temporary furiten" in refusal.message
    t.tsumogiri(3)
    t.tsumogiri(0)  # seat 0's own discard ends it
    t.tsumogiri(1)
    t.ok(t.ron(0, 1))
    assert t.replayed()["rejected"] == []


def test_riichi_furiten_lasts_the_hand() -> None:
    t = furiten_table(["7z", "1p", None, None, None, "4p"])
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "7z")
    t.tsumogiri(1)  # 1p passes seat 0 in riichi
    t.tsumogiri(2)
    t.tsumogiri(3)
    t.tsumogiri(0)
    t.tsumogiri(1)
    refusal = t.refused(t.ron(0, 1), "furiten")
    assert "riichi furiten" in refusal.message


def _kantan(furiten: bool) -> Table:
    """Kantan (フリテン無し), or kantan with furiten as elsewhere."""
    kantan = load_rules("kantan")
    if not furiten:
        return Table("kantan")
    return Table.with_rules(replace(kantan, tiles=replace(kantan.tiles, furiten=True)))


#: Kantan: seat 2 waits on 1p 4p; seats 0 and 1 throw what they draw.
KANTAN_FURITEN = {
    0: "147m 258p 369s 1z 2z 3z 5z",
    1: "147m 258p 369s 1z 2z 3z 6z",
    2: "123m 456m 789m 23p 55s",
    3: "147m 258p 369s 1z 2z 3z 7z",
}


@pytest.mark.parametrize(
    ("case", "draws", "reason"),
    [
        # Seat 2 throws its own winning 1p, then rons seat 1's 4p.
        ("permanent", {2: ["1p"], 1: ["6z", "4p"]}, "permanent furiten"),
        # Seat 2 in riichi takes instead of ronning seat 0's 1p (it lets it pass), then rons
        # seat 1's 4p on its next turn.
        (
            "riichi",
            {0: ["5z", "1p", "5z"], 1: ["6z", "6z", "4p"], 2: ["6z", "9s"]},
            "riichi furiten",
        ),
    ],
)
@pytest.mark.parametrize("furiten", [False, True], ids=["kantan", "kantan with furiten"])
def test_kantan_has_no_furiten(
    case: str, draws: dict[int, list[str]], reason: str, furiten: bool
) -> None:
    # フリテン無し (seed 004): a wait among one's own discards or let pass stops no ron.
    t = _kantan(furiten)
    t.start(hands=KANTAN_FURITEN, own_draws={3: ["7z", "7z"], **draws})
    t.tsumogiri(0)
    t.tsumogiri(1)
    if case == "riichi":
        t.riichi(2, "6z")
        for seat in (3, 0, 1, 2, 3, 0, 1):
            t.tsumogiri(seat)
    else:
        t.turn(2, "1p")
        for seat in (3, 0, 1):
            t.tsumogiri(seat)
    win = t.ron(2, 1) if not furiten else ev.Ron((1,), (ev.Hand(seat=2, han=1),))
    if furiten:
        refusal = t.refused(win, "furiten")
        assert reason in refusal.message
        return
    t.ok(win)
    assert t.replayed()["rejected"] == []


FOUR_PAIRS_TENPAI = "1111p 22p 55s 99s 11z 7z"  # waits 7z where the preset counts it


@pytest.mark.parametrize("preset", ["sanma-free", "kantan", "ariari"])
def test_a_ron_on_a_four_tile_chiitoitsu_through_the_core(preset: str) -> None:
    t = Table(preset)
    if t.rules.wall.own_walls:  # kantan: seat 1 rons seat 0's last discard on its own turn
        t.start(hands={1: FOUR_PAIRS_TENPAI}, own_draws={0: ["7z"]})
        t.tsumogiri(0)
    else:
        t.start(hands={1: FOUR_PAIRS_TENPAI}, draws=["7z"])
        t.turn(0, "7z")
    if t.rules.tiles.four_tile_chiitoitsu_han:
        t.ok(t.ron(1, 0))
        assert t.replayed()["rejected"] == []
        return
    refusal = t.refused(ev.Ron((0,), (ev.Hand(seat=1, han=2, fu=25),)), "not_a_win")
    assert "(waits: nothing)" in refusal.message


def test_a_four_tile_chiitoitsu_let_go_is_furiten() -> None:
    t = Table("sanma-free")
    t.start(hands={1: FOUR_PAIRS_TENPAI}, draws=[None, "7z", "7z"])
    t.tsumogiri(0)
    t.tsumogiri(1)  # seat 1 draws its winning 7z and lets it go
    t.tsumogiri(2)
    refusal = t.refused(t.ron(1, 2), "furiten")
    assert "permanent furiten: seat 1 waits on 7z" in refusal.message


@pytest.mark.parametrize("preset", ["sanma-free", "kantan", "ariari"])
def test_a_four_tile_chiitoitsu_is_tenpai_at_the_draw_where_the_preset_counts_it(
    preset: str,
) -> None:
    t = Table(preset)
    t.start(hands={1: FOUR_PAIRS_TENPAI})
    play_out(t)
    expected = expected_draw(t.state)
    assert expected is not None
    assert (1 in expected.tenpai) is (t.rules.tiles.four_tile_chiitoitsu_han > 0)


# --- nagashi mangan -------------------------------------------------------------------

TERMINAL, SIMPLE = 0, 4  # 1m, 2m


@pytest.mark.parametrize(
    ("preset", "discards", "melds", "nagashi"),
    [
        ("tenhou", (RiverTile(TERMINAL), RiverTile(120)), (), True),
        ("tenhou", (RiverTile(TERMINAL), RiverTile(SIMPLE)), (), False),
        ("tenhou", (RiverTile(TERMINAL), RiverTile(120, called_by=2)), (), False),
        ("tenhou", (), (), False),
        ("tenhou", (RiverTile(TERMINAL),), ("pon",), True),  # own calls allowed
        ("ariari", (RiverTile(TERMINAL),), ("pon",), False),  # nagashi_closed
        ("ariari", (RiverTile(TERMINAL),), ("closed_kan",), True),
        ("kenko", (RiverTile(TERMINAL),), (), False),  # no nagashi in kenko
    ],
)
def test_nagashi(
    preset: str, discards: tuple[RiverTile, ...], melds: tuple[MeldKind, ...], nagashi: bool
) -> None:
    st = SeatTiles(
        discards=discards,
        melds=tuple(
            Meld(m, (132, 133, 134), source=None if m == "closed_kan" else 1) for m in melds
        ),
    )
    assert tilechecks.nagashi(load_rules(preset), st) is nagashi


DRAW_HANDS = {
    0: "123m 456m 789m 23p 55s",  # tenpai 1p 4p
    1: "234m 567m 234p 567p 6s",  # tenpai 6s
    2: "234s 678s 345p 679p 9m",  # noten
    3: "2233m 44p 66p 88s 77s 3z",  # seven pairs, tenpai 3z
}
#: Seat 1 draws (and discards) nothing but honours: nagashi mangan.
NAGASHI_DRAWS: list[str | None] = [None] * 70
for _i, _tile in zip(range(1, 70, 4), "111122224444555566", strict=True):
    NAGASHI_DRAWS[_i] = f"{_tile}z"


@pytest.mark.parametrize("preset", ["tenhou", "ariari", "jboy"])
def test_the_exhaustive_draw_is_decided_by_the_tiles(preset: str) -> None:
    t = Table(preset)
    t.start(hands=DRAW_HANDS, draws=NAGASHI_DRAWS)
    play_out(t)
    expected = expected_draw(t.state)
    assert expected is not None
    assert expected.tenpai == (0, 1, 3) and expected.nagashi == (1,)
    refusal = t.refused(ev.Draw(tenpai=(0, 1)), "tenpai_mismatch")
    assert "0, 1, 3" in refusal.message
    t.refused(ev.Draw(tenpai=(0, 1, 3)), "nagashi_mismatch")
    t.refused(ev.Draw(tenpai=(0, 1, 3), nagashi=(1, 2)), "nagashi_mismatch")
    t.ok(ev.Draw(tenpai=(3, 1, 0), nagashi=(1,)))
    out = t.replayed()
    assert out["rejected"] == [] and out["hands"][0]["nagashi"] == [1]


def test_a_dead_hand_is_not_tenpai_at_the_draw() -> None:
    t = Table("ariari")  # a false call makes a dead hand
    t.start(hands=DRAW_HANDS)
    t.ok(ev.FalseCall(3))
    play_out(t)
    expected = expected_draw(t.state)
    assert expected is not None and expected.tenpai == (0, 1)
    t.refused(ev.Draw(tenpai=(0, 1, 3)), "dead_hand")
    t.ok(ev.Draw(tenpai=(0, 1)))


# --- the context of a win ------------------------------------------------------------

TENPAI_HAND = "123m 456m 789m 23p 55s"  # 1p 4p
OTHER = {seat: hand for seat, hand in FURITEN_HANDS.items() if seat}


def test_tenhou_on_the_dealers_first_draw() -> None:
    t = Table("tenhou")
    t.start(hands={0: TENPAI_HAND, **OTHER}, draws=["1p"])
    t.take(0)
    ctx = tilechecks.win_context(t.rules, t.state, 0, True, None)
    assert ctx.tenhou and not ctx.chiihou and ctx.tsumo and kind(ctx.win_tile) == 9
    assert len(ctx.concealed) == 14 and ctx.ura_indicators == ()
    t.ok(t.tsumo(0))


def test_chiihou_and_renhou() -> None:
    t = Table("tenhou")
    t.start(hands={1: TENPAI_HAND, 0: OTHER[1], 2: OTHER[2], 3: OTHER[3]}, draws=["4p", "1p"])
    t.take(0)
    t.discard(0, "4p")
    renhou = tilechecks.win_context(t.rules, t.state, 1, False, 0)
    assert renhou.renhou and not renhou.chiihou
    t.take(1)
    chiihou = tilechecks.win_context(t.rules, t.state, 1, True, None)
    assert chiihou.chiihou and not chiihou.tenhou and not chiihou.renhou


def test_double_riichi_ippatsu_and_ura() -> None:
    t = Table("tenhou")
    t.start(hands={0: TENPAI_HAND, **OTHER}, draws=["7z", "4p"])
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "7z")
    t.tsumogiri(1)
    ctx = tilechecks.win_context(t.rules, t.state, 0, False, 1)
    assert ctx.riichi and ctx.double_riichi and ctx.ippatsu
    assert ctx.ura_indicators == t.tiles.ura and len(ctx.ura_indicators) == 1
    t.ok(t.ron(0, 1))


def test_a_call_ends_ippatsu() -> None:
    t = Table("tenhou")
    t.start(hands={0: TENPAI_HAND, **OTHER}, draws=["7z", "9s"])
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "7z")
    t.tsumogiri(1)
    assert t.seat(0).ippatsu
    t.call(2, "chi", 1, "78s")
    assert not t.seat(0).ippatsu and t.tiles.interrupted


def test_haitei_and_houtei() -> None:
    draws: list[str | None] = [None] * 70
    draws[68], draws[69] = "1p", "4p"  # seat 0's last draw, seat 1's haitei
    t = Table("tenhou")
    t.start(
        hands={0: TENPAI_HAND, 1: "234m 567m 234p 567p 4p", 2: OTHER[2], 3: OTHER[3]}, draws=draws
    )
    wall = t.state.wall
    while wall is not None and wall.live_left > 1:
        t.tsumogiri(wall.turn)
        wall = t.state.wall
    t.take(1)
    haitei = tilechecks.win_context(t.rules, t.state, 1, True, None)
    assert haitei.haitei and not haitei.houtei and not haitei.rinshan
    t.discard(1, "4p")
    houtei = tilechecks.win_context(t.rules, t.state, 0, False, 1)
    assert houtei.houtei and not houtei.haitei


def test_rinshan_after_a_closed_kan() -> None:
    t = Table("tenhou")
    t.start(hands={0: "111m 23p 456s 789s 55z", **OTHER}, draws=["1m"], rinshan=["4p"])
    t.take(0)
    t.ok(ev.Kan(0, "closed", tuple(x for x in t.seat(0).concealed if kind(x) == 0)))
    t.take(0)
    ctx = tilechecks.win_context(t.rules, t.state, 0, True, None)
    assert ctx.rinshan and not ctx.tenhou and not ctx.haitei
    assert len(ctx.dora_indicators) == 2 and ctx.melds[0].kind == "closed_kan"
    t.ok(t.tsumo(0))
    assert t.replayed()["rejected"] == []


CHANKAN = {
    "hands": {
        0: "123m 456m 789m 55s 6s 8s",  # waits 7s
        1: "77s 111z 222z 333z 4z 5z",
        2: "123p 456p 789p 11s 2s 3s",
        3: "147m 258p 369s 4z 5z 6z 7z",
    },
    "draws": ["6z", "7z", "7s", None, None, None, "7s"],
}


def test_chankan_on_an_added_kan() -> None:
    t = Table("tenhou")
    t.start(**CHANKAN)
    t.tsumogiri(0)
    t.tsumogiri(1)
    t.take(2)
    t.discard(2, "7s")
    t.call(1, "pon", 2, "77s")
    t.discard(1, "4z")
    for seat in (2, 3, 0):
        t.tsumogiri(seat)
    t.take(1)
    t.ok(ev.Kan(1, "added", (t.tile(1, "7s"),)))
    ctx = tilechecks.win_context(t.rules, t.state, 0, False, 1)
    assert ctx.chankan and kind(ctx.win_tile) == 24
    assert len(ctx.dora_indicators) == 1  # no kan dora before the chankan chance passes
    t.ok(t.ron(0, 1))
    assert t.replayed()["rejected"] == []


@pytest.mark.parametrize(
    ("hand", "code"),
    [("9m 19p 199s 1234567z", None), ("23m 456m 789m 789p 55s", "not_a_win")],
    ids=["kokushi", "not kokushi"],
)
def test_only_kokushi_robs_a_closed_kan(hand: str, code: str | None) -> None:
    t = Table("ariari")
    t.start(
        hands={0: hand, 1: "111m 345p 678p 22s 33s", 2: OTHER[2], 3: "2233m 44p 66p 88s 77s 5z"},
        draws=["7z", "1m"],
    )
    t.tsumogiri(0)
    t.take(1)
    t.ok(ev.Kan(1, "closed", tuple(x for x in t.seat(1).concealed if kind(x) == 0)))
    refused = t.send(t.ron(0, 1) if code is None else ev.Ron((1,), (ev.Hand(0, 1, 30),)))
    assert (refused.code if refused else None) == code


def test_north_count_in_three_players() -> None:
    t = Table("sanma-free")
    t.start(
        hands={
            0: "4z 19m 123p 456p 789s 1s",
            1: "44z 111p 999p 11s 234s",
            2: "123s 567s 666p 77z 1z 9m",
        },
        draws=["9s"],
    )
    t.take(0)
    t.ok(ev.North(0, t.tile(0, "4z")))
    t.take(0)
    ctx = tilechecks.win_context(t.rules, t.state, 0, True, None)
    # 北を抜いて嶺上牌からのツモアガりに嶺上開花はつきません (sanma-free: north_rinshan = false)
    assert ctx.north_count == 1 and not ctx.rinshan


def test_kinds_of_reads_the_short_notation() -> None:
    assert kinds_of("406p 7z") == [(12, False), (13, True), (14, False), (33, False)]


# --- the scorer, where it is there ------------------------------------------------------


@dataclass
class FakeScorer:
    """A stand-in ``tablectl.rules.tilescoring``: answers its last answer, keeps the contexts."""

    answers: list[HandScore | Refusal] = field(default_factory=list)
    seen: list[WinContext] = field(default_factory=list)

    def append(self, answer: HandScore | Refusal) -> None:
        self.answers.append(answer)

    def score_win(self, house: object, ctx: WinContext) -> HandScore | Refusal:
        self.seen.append(ctx)
        return self.answers[-1]


@pytest.fixture
def fake_scorer(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeScorer]:
    fake = FakeScorer()
    module = types.ModuleType("tablectl.rules.tilescoring")
    module.score_win = fake.score_win  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tablectl.rules.tilescoring", module)
    tenpai.scorer.cache_clear()
    yield fake
    tenpai.scorer.cache_clear()


def riichi_ron_table() -> Table:
    t = Table("tenhou")
    t.start(hands={0: TENPAI_HAND, **OTHER}, draws=["7z", "4p"])
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "7z")
    t.tsumogiri(1)
    return t


@pytest.mark.parametrize(
    ("score", "claim", "code"),
    [
        (HandScore(han=4, fu=40, yaku=("riichi", "ippatsu")), ev.Hand(0, 4, 40), None),
        (HandScore(han=4, fu=40, yaku=("riichi", "ippatsu")), ev.Hand(0, 3, 40), "value_mismatch"),
        (HandScore(han=4, fu=40), ev.Hand(0, 4, 30), "value_mismatch"),
        (HandScore(han=6, fu=40), ev.Hand(0, 6, 30), None),  # fu do not count at 6 han
        (HandScore(han=15, fu=40), ev.Hand(0, 13), None),  # entered as 13
        (HandScore(han=13, fu=None, yakuman=1), ev.Hand(0, yakuman=1), None),
        (HandScore(han=13, fu=None, yakuman=2), ev.Hand(0, yakuman=1), "value_mismatch"),
        (Refusal("no_yaku", "no yaku"), ev.Hand(0, 1, 30), "not_a_win"),
    ],
)
def test_a_win_is_worth_what_the_scorer_says(
    fake_scorer: FakeScorer,
    score: HandScore | Refusal,
    claim: ev.Hand,
    code: str | None,
) -> None:
    t = riichi_ron_table()
    fake_scorer.append(score)
    refused = t.send(ev.Ron((1,), (claim,)))
    assert (refused.code if refused else None) == code
    if code == "value_mismatch":
        assert refused is not None and "the tiles make" in refused.message


def test_the_generator_and_the_tests_take_their_values_from_the_scorer(
    fake_scorer: FakeScorer,
) -> None:
    t = riichi_ron_table()
    fake_scorer.append(HandScore(han=3, fu=40))
    assert t.value(0, tsumo=False, discarder=1) == ev.Hand(0, 3, 40)
    t.ok(t.ron(0, 1))
    ctx = fake_scorer.seen[-1]
    assert ctx.riichi and ctx.ippatsu and ctx.double_riichi and not ctx.tsumo


def test_open_hand_yaku_through_the_scorer(fake_scorer: FakeScorer) -> None:
    rules = load_rules("sanma-free")
    deck = Deck(rules)
    melds = [Meld("pon", tuple(deck.take("111p")), source=0)]
    hand = deck.take("234s 678s 99s 55z")
    fake_scorer.append(HandScore(han=1, fu=30))
    assert tenpai.tenpai(rules, hand, melds)
    fake_scorer.append(Refusal("no_yaku", "no yaku"))
    assert not tenpai.tenpai(rules, hand, melds)
