"""The tile tracker through the rules core: a whole hand, the deal, and every refusal."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from tablectl.rules import events as ev
from tablectl.rules import tenpai, tilechecks, tileshapes
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.tiletrack import expected_draw
from tablectl.rules.tiletracker import RiverTile
from tablectl.tiles.ids import kind, tile_set
from tests.tiles.kit import Table, build_layout, play_out

# --- a whole hand ---------------------------------------------------------------------

WHOLE_HAND = {
    "hands": {
        0: "1111m 234p 567s 8s 99p",
        1: "777z 234m 456m 78p 55z",
        2: "99s 1p 345m 678m 22z 67p",
        3: "23p 456s 789m 44z 6z 1s 2s",
    },
    "draws": ["7z", "9s", "6z", "9s", "7m", "8s", "9p"],
    "rinshan": ["4z", "3z", "5p"],
}


def test_a_whole_hand_from_the_layout_to_the_win() -> None:
    """Closed kan, pon, chi, open kan, added kan, riichi and an ippatsu ron (Tenhou)."""
    t = Table("tenhou")
    t.start(**WHOLE_HAND)
    layout = t.tiles.layout
    t.take(0)
    kan = tuple(x for x in t.seat(0).concealed if kind(x) == 0)
    t.ok(ev.Kan(0, "closed", kan))
    assert len(t.tiles.dora) == 2  # a closed kan turns its kan dora at once
    t.take(0)
    assert t.tiles.draw_source == "rinshan" and t.seat(0).drawn is not None
    t.discard(0, "4z")
    t.turn(1, "9s")
    t.call(2, "pon", 1, "99s")
    t.discard(2, "1p")
    t.call(3, "chi", 2, "23p")
    t.discard(3, "6z")
    t.turn(0, "7z")
    t.call(1, "kan", 0, "777z")
    t.take(1)
    t.discard(1, "3z")
    t.take(2)
    t.ok(ev.Kan(2, "added", (t.tile(2, "9s"),)))
    t.take(2)
    t.discard(2, "5p")
    t.turn(3, "7m")
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "6z")
    t.turn(1, "9p")

    s0, s1, s2, s3 = t.tiles.seats
    assert [m.kind for m in s0.melds] == ["closed_kan"]
    assert [m.kind for m in s1.melds] == ["open_kan"] and s1.melds[0].source == 0
    assert [m.kind for m in s2.melds] == ["added_kan"] and s2.melds[0].source == 1
    assert [m.kind for m in s3.melds] == ["chi"] and s3.melds[0].called == s2.discards[0].tile
    assert [kind(x) for x in s0.concealed] == [10, 11, 12, 17, 17, 22, 23, 24, 25, 25]
    assert s0.discards[-1] == RiverTile(s0.discards[-1].tile, riichi=True)
    assert s1.discards[0].called_by == 2 and s1.discards[0].drawn
    assert s2.discards[0].called_by == 3 and s0.discards[1].called_by == 1
    assert s0.riichi and s0.ippatsu and not s0.double_riichi
    assert t.tiles.interrupted
    wall = t.state.wall
    assert wall is not None and len(wall.dora_indicators) == 4
    assert t.tiles.dora == tuple(layout[p] for p in wall.dora_indicators)
    assert t.tiles.ura == tuple(layout[p + 1] for p in wall.dora_indicators)
    assert sum(len(s.concealed) + 3 * len(s.melds) for s in t.tiles.seats) == 52

    t.ok(t.ron(0, 1))
    assert t.state.tiles is None and t.state.wall is None
    out = t.replayed()
    assert out["rejected"] == [] and out["hands"][0]["winners"] == [0]


@pytest.mark.parametrize("preset", ["tenhou", "jboy-sanma", "sanma-free", "kantan"])
@pytest.mark.parametrize("manual", [False, True])
def test_the_deal_gives_each_seat_the_tiles_at_its_dealt_positions(
    preset: str, manual: bool
) -> None:
    t = Table(preset)
    rules = t.rules
    layout = list(tile_set(rules).ids)[::-1]
    t.ok(ev.Dice((2, 5)), ev.Layout(tuple(layout)))
    if manual:
        while t.state.wall is not None and t.state.wall.phase == "deal":
            t.take(t.state.wall.turn)
    else:
        t.ok(ev.Deal())
    wall = t.state.wall
    assert wall is not None
    for seat, st in enumerate(t.tiles.seats):
        mine = sorted(
            layout[p] for p, s in zip(wall.taken, wall.taken_by, strict=True) if s == seat
        )
        assert list(st.concealed) == mine and len(mine) == 13


def test_a_hand_without_layout_is_as_before() -> None:
    t = Table("tenhou")
    t.ok(ev.Dice((3, 4)), ev.Deal(), ev.Take(0, tile=5), ev.Discard(0), ev.Take(1, tile=999))
    assert t.state.tiles is None


# --- refusals ---------------------------------------------------------------------------

BASE_HANDS = {
    0: "123m 456m 789m 23p 55s",  # tenpai: 1p 4p
    1: "111z 222z 567m 19p 9s 3z",
    2: "234s 678s 345p 678p 9m",
    3: "2233m 44p 66p 88s 77s 3z",
}
BASE_DRAWS: list[str | None] = ["1z", "9m", "7p", "5s", "6z", "6z", "6z", "6z"]


def base(preset: str = "tenhou") -> Table:
    t = Table(preset)
    t.start(hands=BASE_HANDS, draws=BASE_DRAWS)
    return t


def other_seats_tile(t: Table, seat: int) -> int:
    return next(x for x in t.tiles.seats[(seat + 1) % 4].concealed)


def _take_wrong_tile(t: Table) -> ev.Event:
    wall = t.state.wall
    assert wall is not None
    right = t.tiles.layout[wall.order[wall.next_live]]
    return ev.Take(0, tile=right ^ 1)


def _discard_without_tile(t: Table) -> ev.Event:
    t.take(0)
    return ev.Discard(0)


def _discard_elsewhere(t: Table) -> ev.Event:
    t.take(0)
    return ev.Discard(0, t.seat(1).concealed[0])


def _pon_without_tiles(t: Table) -> ev.Event:
    t.turn(0, "1z")
    return ev.Call(1, "pon", 0)


def _pon_mixed(t: Table) -> ev.Event:
    t.turn(0, "1z")
    return ev.Call(1, "pon", 0, (t.tile(1, "1z"), t.tile(1, "2z")))


def _pon_three_own(t: Table) -> ev.Event:
    t.turn(0, "1z")
    return ev.Call(1, "pon", 0, tuple(x for x in t.seat(1).concealed if kind(x) == 27))


def _pon_with_others_tiles(t: Table) -> ev.Event:
    t.turn(0, "1z")
    return ev.Call(1, "pon", 0, t.seat(3).concealed[:2])


def _chi_no_run(t: Table) -> ev.Event:
    t.turn(0, "4m")
    return ev.Call(1, "chi", 0, (t.tile(1, "1p"), t.tile(1, "9p")))


def _after_pon(t: Table) -> None:
    t.turn(0, "1z")
    t.call(1, "pon", 0, "11z")


def _after_chi(t: Table) -> None:
    t.turn(0, "4m")
    t.call(1, "chi", 0, "56m")


def _kuikae_pon(t: Table) -> ev.Event:
    _after_pon(t)
    return ev.Discard(1, t.tile(1, "1z"))


def _kuikae_chi_suji(t: Table) -> ev.Event:
    _after_chi(t)
    return ev.Discard(1, t.tile(1, "7m"))


def _closed_kan_without_tiles(t: Table) -> ev.Event:
    t.take(0)
    return ev.Kan(0, "closed")


def _closed_kan_mixed(t: Table) -> ev.Event:
    t.take(0)
    return ev.Kan(0, "closed", t.seat(0).concealed[:4])


def _riichi_noten(t: Table) -> ev.Event:
    t.turn(0, "1z")
    t.take(1)
    return ev.Riichi(1)


def _riichi_noten_discard(t: Table) -> ev.Event:
    t.take(0)
    t.ok(ev.Riichi(0))
    return ev.Discard(0, t.tile(0, "5s"))


def _riichi_after_pon(t: Table) -> ev.Event:
    _after_pon(t)
    t.discard(1, "3z")
    for seat in (2, 3, 0):
        t.tsumogiri(seat)
    t.take(1)
    return ev.Riichi(1)


def _riichi_around(t: Table) -> None:
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "1z")
    for seat in (1, 2, 3):
        t.tsumogiri(seat)


def _riichi_wrong_discard(t: Table) -> ev.Event:
    _riichi_around(t)
    t.take(0)
    return ev.Discard(0, t.tile(0, "9m"))


def _riichi_pon(t: Table) -> ev.Event:
    _riichi_around(t)
    return ev.Call(0, "pon", 3, tuple(x for x in t.seat(0).concealed if kind(x) == 22))


def _tsumo_incomplete(t: Table) -> ev.Event:
    t.take(0)
    return ev.Tsumo(ev.Hand(0, 1, 30))


def _ron_incomplete(t: Table) -> ev.Event:
    t.turn(0, "1z")
    t.turn(1, "9s")
    return ev.Ron((1,), (ev.Hand(0, 1, 30),))


SCRIPTS: list[tuple[str, Callable[[Table], ev.Event], str]] = [
    ("take: the reader disagrees with the layout", _take_wrong_tile, "tile_mismatch"),
    ("discard without its tile", _discard_without_tile, "tile_unknown"),
    ("discard of a tile another seat holds", _discard_elsewhere, "tile_not_in_hand"),
    ("pon without tiles", _pon_without_tiles, "tile_unknown"),
    ("pon of 1z with 1z 2z", _pon_mixed, "bad_meld"),
    ("pon with three own tiles", _pon_three_own, "bad_meld"),
    ("pon with another seat's tiles", _pon_with_others_tiles, "tile_not_in_hand"),
    ("chi of 4m with 1p 9p", _chi_no_run, "bad_meld"),
    ("kuikae: pon of 1z, then a 1z", _kuikae_pon, "kuikae"),
    ("kuikae: chi of 4m with 56m, then 7m", _kuikae_chi_suji, "kuikae"),
    ("closed kan without tiles", _closed_kan_without_tiles, "tile_unknown"),
    ("closed kan of four kinds", _closed_kan_mixed, "bad_meld"),
    ("riichi on a noten hand (Tenhou)", _riichi_noten, "not_tenpai"),
    ("riichi, then a discard that leaves it noten (Tenhou)", _riichi_noten_discard, "not_tenpai"),
    ("riichi after a pon", _riichi_after_pon, "open_riichi"),
    ("in riichi, a discard not the drawn tile", _riichi_wrong_discard, "riichi_discard"),
    ("in riichi, a pon", _riichi_pon, "riichi_call"),
    ("tsumo on an incomplete hand", _tsumo_incomplete, "not_a_win"),
    ("ron on a tile that completes nothing", _ron_incomplete, "not_a_win"),
]


@pytest.mark.parametrize(
    ("script", "code"), [(s, c) for _, s, c in SCRIPTS], ids=[n for n, _, _ in SCRIPTS]
)
def test_refused_with_the_state_unchanged(script: Callable[[Table], ev.Event], code: str) -> None:
    t = base()
    event = script(t)
    refusal = t.refused(event, code)
    assert refusal.message


def test_a_deal_take_is_checked_on_its_first_tile() -> None:
    t = Table("tenhou")
    t.ok(ev.Dice((3, 4)), ev.Layout(build_layout(t.rules, hands=BASE_HANDS, draws=BASE_DRAWS)))
    wall = t.state.wall
    assert wall is not None
    first = t.tiles.layout[wall.order[0]]
    refusal = t.refused(ev.Take(0, tile=first ^ 1), "tile_mismatch")
    assert f"position {wall.order[0]}" in refusal.message
    t.ok(ev.Take(0, pos=wall.order[0], tile=first))
    assert len(t.seat(0).concealed) == 4


@pytest.mark.parametrize(
    ("preset", "change", "needle"),
    [
        ("tenhou", lambda tiles: tiles[:-1], "135 tiles"),
        ("tenhou", lambda tiles: [tiles[1], *tiles[1:]], "positions 0 and 1"),
        ("sanma-free", lambda tiles: [4, *tiles[1:]], "not a tile id of this set"),
    ],
    ids=["short", "twice", "2m in three-player"],
)
def test_a_layout_must_hold_every_tile_once(
    preset: str, change: Callable[[list[int]], list[int]], needle: str
) -> None:
    t = Table(preset)
    t.ok(ev.Dice((3, 4)))
    tiles = change(list(tile_set(t.rules).ids))
    refusal = t.refused(ev.Layout(tuple(tiles)), "bad_layout")
    assert needle in refusal.message


@pytest.mark.parametrize(("allowed", "code"), [(False, "kuikae"), (True, None)])
def test_swap_calling_where_the_preset_allows_it(allowed: bool, code: str | None) -> None:
    rules = load_rules("tenhou")
    t = Table.with_rules(replace(rules, tiles=replace(rules.tiles, kuikae=allowed)))
    t.start(hands=BASE_HANDS, draws=BASE_DRAWS)
    _after_chi(t)
    assert t.seat(1).kuikae == ((3, 6) if not allowed else ())
    refused = t.send(ev.Discard(1, t.tile(1, "7m")))
    assert (refused.code if refused else None) == code


def test_a_chi_that_leaves_only_swap_tiles_is_refused() -> None:
    # After three pons seat 1 holds 56m 7m 4m: a chi of 4m with 56m would leave 7m and 4m,
    # both swap tiles, and nothing else to discard.
    t = Table("tenhou")
    t.start(
        hands={
            0: "111z 222z 333z 4m 4m 9p 9p",
            1: "55z 66z 77z 44p 9s 56m 7m 4m",
            2: "123s 456s 789s 123p 1m",
            3: "999m 888m 777s 666p 5p",
        },
        draws=["5z", None, None, "6z", None, None, "7z"],
    )
    for name, out in (("5z", "4p"), ("6z", "4p"), ("7z", "9s")):
        t.take(0)
        t.discard(0, name)
        t.call(1, "pon", 0, name + name)
        t.discard(1, out)
        for seat in (2, 3):
            t.tsumogiri(seat)
    t.take(0)
    t.discard(0, "4m")
    assert [kind(x) for x in t.seat(1).concealed] == [3, 4, 5, 6]
    refusal = t.refused(ev.Call(1, "chi", 0, (t.tile(1, "5m"), t.tile(1, "6m"))), "kuikae")
    assert "would leave only" in refusal.message


RIICHI_KAN_HANDS = {
    1: "123s 456s 789s 11z 22z",
    2: "258m 147p 369s 1234z",
    3: "147p 258s 369m 5z 6z 7z 7z",
}


@pytest.mark.parametrize(
    ("hand", "fifth_draw", "code"),
    [
        ("111m 23m 456p 789p 05s", "1m", "riichi_kan"),  # waits 1m 4m 5s; the kan loses 5s
        ("111m 456p 789p 234s 5s", "1m", None),  # 5s tanki either way
        ("1111m 23m 456p 789p 5s", "9s", "riichi_kan"),  # a kan of tiles held, not drawn
    ],
    ids=["waits change", "waits stay", "not the drawn tile"],
)
def test_a_closed_kan_in_riichi(hand: str, fifth_draw: str, code: str | None) -> None:
    t = Table("tenhou")
    t.start(
        hands={0: hand, **RIICHI_KAN_HANDS},
        draws=["3z", "4z", "6z", "6z", fifth_draw, None, None, None, "5z"],
    )
    t.take(0)
    t.ok(ev.Riichi(0))
    t.discard(0, "3z")
    for seat in (1, 2, 3):
        t.tsumogiri(seat)
    t.take(0)
    four = tuple(x for x in t.seat(0).concealed if kind(x) == 0)
    refused = t.send(ev.Kan(0, "closed", four))
    assert (refused.code if refused else None) == code


#: Seat 0's riichi hand and its kan: on 5s 8s, a kan of 2p keeps them but not the 234p
#: readings; on 2s 5s, 111m is a triplet in every reading.
FORM_CHANGES, FORM_STAYS = ("222333444p 5678s", "2p"), ("111m 456p 789p 234s 5s", "1m")
#: Four-player seats 1 to 3, with none of the tiles those hands use.
FORM_OTHERS = {
    1: "111z 222z 333z 567m 9s",
    2: "444z 555z 666z 567m 9s",
    3: "777z 234m 789m 11p 99s",
}
#: Sanma-free's other two seats, likewise (and for the north pulls below).
SANMA_OTHERS = {1: "111p 999p 88s 789s 67z", 2: "123s 567s 666p 77z 1z 9m"}


@pytest.mark.parametrize(
    ("preset", "riichi", "code"),
    [
        ("tenhou", FORM_CHANGES, None),  # kan_keeps = "waits": the waits stay
        ("mleague", FORM_CHANGES, None),
        ("ariari", FORM_CHANGES, "riichi_kan"),  # 待ちや面子構成が変わらない場合に可
        ("jboy", FORM_CHANGES, "riichi_kan"),  # 送り槓「形が変わるカン」は出来ません
        ("jboy-sanma", FORM_CHANGES, "riichi_kan"),
        ("sanma-free", FORM_CHANGES, "riichi_kan"),  # 形の変わるカンはできません
        ("ariari", FORM_STAYS, None),
        ("sanma-free", FORM_STAYS, None),
    ],
)
def test_a_closed_kan_in_riichi_that_changes_the_form(
    preset: str, riichi: tuple[str, str], code: str | None
) -> None:
    hand, kan = riichi
    t = Table(preset)
    players = t.rules.players
    others = SANMA_OTHERS if players == 3 else FORM_OTHERS
    t.start(hands={0: hand, **others}, draws=["5z", *[None] * (players - 1), kan])
    t.riichi(0, "5z")
    for seat in range(1, players):
        t.tsumogiri(seat)
    t.take(0)
    four = tuple(x for x in t.seat(0).concealed if kind(x) == kind(t.tile(0, kan)))
    refused = t.send(ev.Kan(0, "closed", four))
    assert (refused.code if refused else None) == code
    if refused is not None:
        assert "would change its hand's form (its waits 5s 8s stay" in refused.message


@pytest.mark.parametrize("after_discard", [False, True])
def test_riichi_before_or_after_the_declaration_discard(after_discard: bool) -> None:
    t = base()
    t.take(0)
    if after_discard:
        t.discard(0, "1z")
        t.ok(ev.Riichi(0))
    else:
        t.ok(ev.Riichi(0))
        assert t.seat(0).riichi_pending
        t.discard(0, "1z")
    s0 = t.seat(0)
    assert s0.riichi_on and s0.ippatsu and s0.double_riichi
    assert s0.discards == (RiverTile(s0.discards[0].tile, riichi=True, drawn=True),)
    t.tsumogiri(1)
    assert t.seat(0).ippatsu
    t.tsumogiri(2)
    t.tsumogiri(3)
    t.tsumogiri(0)
    assert not t.seat(0).ippatsu and t.seat(0).riichi_on


@pytest.mark.parametrize(("preset", "result"), [("jboy", "chombo"), ("kantan", "draw")])
def test_a_noten_riichi_bluff_is_found_at_the_draw(preset: str, result: str) -> None:
    t = Table(preset)
    t.start(hands=BASE_HANDS)
    t.tsumogiri(0)
    t.take(1)
    t.ok(ev.Riichi(1))  # seat 1 is far from tenpai: a bluff
    drawn = t.seat(1).drawn
    assert drawn is not None
    t.ok(ev.Discard(1, drawn))
    play_out(t)
    draw = expected_draw(t.state)
    assert draw is not None and 1 not in draw.tenpai
    t.ok(draw)
    out = t.replayed()
    assert out["rejected"] == [] and out["hands"][-1]["result"] == result
    if preset == "kantan":
        # 3000 from the noten riichi to each other player, on top of the tenpai payments.
        assert out["hands"][-1]["deltas"][1] <= -9000


NORTH = {
    "hands": {
        0: "4z 19m 123p 456p 789s 1s",
        1: "44z 111p 999p 11s 234s",
        2: "123s 567s 666p 77z 1z 9m",
    },
    "draws": ["9s", "4z", "1z"],
    "rinshan": ["6z"],
}


def test_north_pulls_in_three_players() -> None:
    t = Table("sanma-free")
    t.start(**NORTH)
    t.take(0)
    t.refused(ev.North(0), "tile_unknown")
    t.refused(ev.North(0, t.tile(0, "1m")), "not_north")
    t.refused(ev.North(0, t.tile(1, "4z")), "tile_not_in_hand")
    north = t.tile(0, "4z")
    t.ok(ev.North(0, north))
    assert t.seat(0).norths == (north,) and north not in t.seat(0).concealed
    assert t.seat(1).passed == (north,)
    # The pulled north can be ponned before the replacement is taken.
    t.call(1, "pon", 0, "44z")
    assert t.seat(0).norths == () and t.seat(1).melds[0].called == north
    t.discard(1, "1s")
    assert t.replayed()["rejected"] == []


KANTAN = {
    0: "123m 456m 789m 11p 9s 1z",
    1: "333z 456p 789s 12m 5s 6s",
    2: "123m 456m 789m 23p 55s",  # tenpai: 1p 4p
    3: "147m 258p 369s 4z 5z 6z 6z",
}


def test_kantan_a_call_is_made_on_ones_turn_and_a_wall_tile_stands_in() -> None:
    # 鳴いた牌を河から持って来ないで、代わりに山の牌を加える (seed 004): the called 3z stays in
    # seat 0's river and pond; the 9p seat 1 takes from its own wall lies in its meld zone
    # beside its own two 3z, in the called tile's place, and never joins the hand.
    t = Table("kantan")
    t.start(hands=KANTAN, own_draws={0: ["3z"], 1: ["9p"]})
    t.tsumogiri(0)
    called = t.seat(0).discards[-1].tile
    t.call(1, "pon", 0, "33z")
    own = tuple(x for x in t.seat(1).melds[0].tiles if x != called)
    assert t.seat(1).meld_zone == own  # the stand-in is not taken yet
    before = t.seat(1).concealed
    t.take(1)
    st = t.seat(1)
    stand_in = st.melds[0].stand_in
    assert stand_in == t.tiles.layout[34 + 13]  # seat 1's wall, after the 13 it dealt itself
    assert st.concealed == before and st.drawn is None and stand_in not in st.concealed
    assert st.melds[0].called == called and st.melds[0].in_river
    assert st.meld_zone == (*own, stand_in)
    assert t.seat(0).discards[-1].called_by is None and t.seat(0).pond[-1] == called
    t.discard(1, "5s")
    assert t.replayed()["rejected"] == []


#: Seat 0 throws 4m: seat 1 chis it (56m), seat 2 pons it (44m), seat 3 (23m, haku) rons it.
KANTAN_AGAIN = {
    1: "56m 123p 111z 222z 99s",
    2: "44m 123s 456s 777z 8p 9p",
    3: "23m 456p 789p 555z 99s",
}


def test_kantan_a_called_tile_may_be_called_and_ronned_again() -> None:
    # チーされた牌もポン出来る, チー・ポンされた牌もロン出来る (seed 004): the 4m stays
    # seat 0's last discard through seat 1's chi and seat 2's pon, and seat 3 rons it.
    t = Table("kantan")
    t.start(hands=KANTAN_AGAIN, own_draws={0: ["4m"]})
    t.tsumogiri(0)
    four = t.seat(0).discards[-1].tile
    t.call(1, "chi", 0, "56m")
    t.take(1)
    t.discard(1, "9s")
    t.call(2, "pon", 0, "44m")
    t.take(2)
    t.discard(2, "9p")
    assert t.seat(1).melds[0].called == four == t.seat(2).melds[0].called
    assert t.seat(0).pond == (four,)
    t.ok(t.ron(3, 0))
    out = t.replayed()
    assert out["rejected"] == [] and out["hands"][0]["winners"] == [3]


@pytest.mark.parametrize(
    ("own", "thrown", "stand_in", "red"),
    [
        ("05p", "5p", "9m", 1),  # its own red 5p lies in the pon
        ("55p", "0p", "9m", 0),  # the called red 5p lies in seat 0's river
        ("55p", "5p", "0s", 0),  # a red 5s standing in for the 5p is no 5s
    ],
    ids=["own red five", "called red five", "red stand-in"],
)
def test_kantan_a_called_tile_counts_by_its_kind_not_its_colour(
    own: str, thrown: str, stand_in: str, red: int
) -> None:
    # Reading: the caller's meld holds its own tiles and a stand-in; the called tile is in
    # the discarder's river. Seat 1 pons 5p, then wins by tsumo on 1z (tsumo counts open).
    t = Table("kantan")
    hands = {1: f"{own} 123m 456m 789s 1z 9p"}
    t.start(hands=hands, own_draws={0: [thrown], 1: [stand_in, "1z"]}, dora=["7z"])
    t.tsumogiri(0)
    t.call(1, "pon", 0, own)
    t.take(1)
    t.discard(1, "9p")
    for seat in (2, 3, 0):
        t.tsumogiri(seat)
    t.take(1)
    ctx = tilechecks.win_context(t.rules, t.state, 1, True, None)
    score = tenpai.scorer()
    assert score is not None
    found = score(t.rules, ctx)
    assert not isinstance(found, Refusal) and found.han == 1 + red
    assert ("red 1" in found.yaku) is bool(red)
    t.ok(t.tsumo(1))
    assert t.replayed()["rejected"] == []


#: Seat 1 holds 333z and 56m 7m: a pon of 3z or a chi of 4m off seat 0.
KANTAN_KUIKAE = {**KANTAN, 1: "333z 456p 789s 56m 7m 5s"}


@pytest.mark.parametrize(
    ("thrown", "call", "own", "swap"),
    [("3z", "pon", "33z", "3z"), ("4m", "chi", "56m", "7m")],
    ids=["pon, then the called kind", "chi, then the run's other end"],
)
@pytest.mark.parametrize("kuikae", [True, False], ids=["kantan", "kantan without kuikae"])
def test_kantan_allows_swap_calling(
    thrown: str, call: str, own: str, swap: str, kuikae: bool
) -> None:
    # 食い替え（現物も）可 (seed 004): right after its call the caller may throw the called
    # kind (現物) as well as the tile beyond its run (筋).
    rules = load_rules("kantan")
    t = Table("kantan")
    if not kuikae:
        t = Table.with_rules(replace(rules, tiles=replace(rules.tiles, kuikae=False)))
    t.start(hands=KANTAN_KUIKAE, own_draws={0: [thrown]})
    t.tsumogiri(0)
    t.call(1, call, 0, own)
    t.take(1)
    discard = ev.Discard(1, t.tile(1, swap))
    if not kuikae:
        t.refused(discard, "kuikae")
        return
    t.ok(discard)
    assert t.replayed()["rejected"] == []


def test_kantan_ron_off_several_last_discards() -> None:
    # ロン牌が複数ある場合は全員からあがれる (seed 004): seat 2 (123m 456m 789m 23p 55s) rons
    # seat 0's 1p and seat 1's 4p on its own turn. Reading: each pays the hand won on its
    # own tile: 2 han off the 1p (ittsu), 3 off the 4p (ittsu, dora: the indicator is 3p).
    t = Table("kantan")
    draws = {0: ["7z", "1p"], 1: ["7z", "4p"], 2: ["9p"], 3: ["9s"]}
    t.start(hands=KANTAN, own_draws=draws, dora=["3p"])
    for seat in (0, 1, 2, 3, 0, 1):
        t.tsumogiri(seat)
    off_1p, off_4p = (t.value(2, tsumo=False, discarder=d) for d in (0, 1))
    assert (off_1p.han, off_4p.han) == (2, 3)
    refusal = t.refused(ev.Ron((0, 1, 3), (off_1p, off_4p, off_4p)), "not_a_win")
    assert "seat 3's 9s" in refusal.message
    refusal = t.refused(ev.Ron((0, 1), (off_1p,)), "value_mismatch")
    assert "claims 2 han off seat 1's 4p; the tiles make 3 han" in refusal.message
    t.ok(ev.Ron((0, 1), (off_1p, off_4p)))
    out = t.replayed()
    assert out["rejected"] == [] and out["hands"][0]["from"] == [0, 1]
    assert out["hands"][0]["deltas"] == [-3000, -6000, 9000, 0]


@pytest.mark.parametrize(
    ("hand", "drawn", "which", "code", "needle"),
    [
        ("99m 345p 234s 67s 444z", "4z", "drawn", None, ""),
        ("99m 345p 234s 67s 444z", "4z", "held", None, ""),  # norths are alike: same hand
        ("123p 456p 789s 111s 4z", "4z", "drawn", None, ""),  # its win let pass: its choice
        ("123p 456p 789s 111s 4z", "9p", "held", "riichi_north", "waits (4z to 9p)"),
        ("99m 345p 234s 67s 444z", "9m", "held", "riichi_north", "waits stay 5s 8s"),
    ],
    ids=["the drawn north", "a held north, a north drawn", "the winning north pulled",
         "a held north changes the waits", "a held north keeps the waits, not the hand"],
)  # fmt: skip
def test_a_north_pull_in_riichi(
    hand: str, drawn: str, which: str, code: str | None, needle: str
) -> None:
    t = Table("sanma-free")
    t.start(hands={0: hand, **SANMA_OTHERS}, draws=["5z", "6z", "7z", drawn], rinshan=["5z"])
    t.riichi(0, "5z")
    t.tsumogiri(1)
    t.tsumogiri(2)
    t.take(0)
    st = t.seat(0)
    assert st.drawn is not None
    held = [x for x in st.concealed if kind(x) == 30 and x != st.drawn]
    north = st.drawn if which == "drawn" else held[0]
    before = sorted(kind(x) for x in st.concealed if x != st.drawn)
    if code is not None:
        refusal = t.refused(ev.North(0, north), code)
        assert needle in refusal.message and "only a north it has just drawn" in refusal.message
        return
    t.ok(ev.North(0, north))
    assert sorted(kind(x) for x in t.seat(0).concealed) == before
    t.take(0)  # the replacement, which the riichi seat throws
    replacement = t.seat(0).drawn
    assert replacement is not None
    t.ok(ev.Discard(0, replacement))
    assert t.replayed()["rejected"] == []


def _kantan_with_calls(with_calls: bool) -> Table:
    """Kantan, or kantan where calls do not keep the yaku (``yaku_with_calls`` off)."""
    if with_calls:
        return Table("kantan")
    kantan = load_rules("kantan")
    return Table.with_rules(replace(kantan, tiles=replace(kantan.tiles, yaku_with_calls=False)))


def _pon_before_first_draws(t: Table, draw: str) -> None:
    """Kantan: seat 1 pons seat 0's first discard on its own turn (a wall tile stands in);
    seat 2, which has not drawn yet, draws ``draw``."""
    t.start(hands=KANTAN, own_draws={0: ["3z"], 2: [draw]})
    t.tsumogiri(0)
    t.call(1, "pon", 0, "33z")
    t.take(1)


@pytest.mark.parametrize("with_calls", [True, False])
def test_kantan_riichi_after_a_call(with_calls: bool) -> None:
    # リーチ 1 ダブルリーチ 2 ※鳴きがあっても成立: seat 1 declares riichi with its first
    # discard, made right after its pon (a bluff kantan allows; it is found at the draw).
    t = _kantan_with_calls(with_calls)
    _pon_before_first_draws(t, "9p")
    t.discard(1, "5s")
    if not with_calls:
        t.refused(ev.Riichi(1), "open_riichi")
        return
    t.ok(ev.Riichi(1))
    st = t.seat(1)
    assert st.riichi and st.double_riichi and not st.closed
    assert t.replayed()["rejected"] == []


@pytest.mark.parametrize("with_calls", [True, False])
def test_kantan_chiihou_after_another_seats_call(with_calls: bool) -> None:
    # 天和 地和 ※鳴きがあっても成立: kantan's calls skip nobody's draw.
    t = _kantan_with_calls(with_calls)
    _pon_before_first_draws(t, "1p")
    t.discard(1, "5s")
    t.take(2)
    assert t.tiles.interrupted is not with_calls
    ctx = tilechecks.win_context(t.rules, t.state, 2, True, None)
    assert ctx.chiihou is with_calls
    win = t.tsumo(2)
    t.ok(win)
    assert win.hand.yakuman == (1 if with_calls else 0)


@pytest.mark.parametrize("with_calls", [True, False])
def test_kantan_double_riichi_after_another_seats_call(with_calls: bool) -> None:
    t = _kantan_with_calls(with_calls)
    _pon_before_first_draws(t, "9p")
    t.discard(1, "5s")
    t.take(2)
    t.ok(ev.Riichi(2))
    t.discard(2, "9p")
    assert t.seat(2).riichi and t.seat(2).double_riichi is with_calls


#: Sanma-free, seat 0 (the dealer) tenpai on a 3s single; it takes the 55th and last live
#: tile. ``at``: which of its draws is a north, pulled and replaced by the winning 3s.
NORTH_WIN = {0: "123p 456p 789s 111s 3s", **SANMA_OTHERS}


@pytest.mark.parametrize(
    ("north_rinshan", "at", "yaku", "not_yaku"),
    [
        (False, 3, None, ("rinshan", "haitei")),  # 嶺上開花はつきません
        (False, 54, "haitei", ("rinshan",)),  # ハイテイで北を抜く…自摸あがった場合、ハイテイ
        (True, 3, "rinshan", ("haitei",)),
        (True, 54, "rinshan", ("haitei",)),  # rinshan and haitei do not combine
    ],
    ids=["sanma-free", "sanma-free on the haitei", "north_rinshan", "north_rinshan on the haitei"],
)
def test_a_tsumo_on_a_pulled_norths_replacement(
    north_rinshan: bool, at: int, yaku: str | None, not_yaku: tuple[str, ...]
) -> None:
    rules = load_rules("sanma-free")
    assert rules.tiles.north_rinshan is False
    t = Table.with_rules(replace(rules, tiles=replace(rules.tiles, north_rinshan=north_rinshan)))
    draws: list[str | None] = [None] * at + ["4z"]
    t.start(hands=NORTH_WIN, draws=draws, rinshan=["3s"])
    while t.state.wall is not None and len(t.state.wall.taken) < 39 + at:
        t.tsumogiri(t.state.wall.turn)
    t.take(0)
    assert kind(t.seat(0).drawn or -1) == tileshapes.NORTH
    t.ok(ev.North(0, t.seat(0).drawn))
    t.take(0)  # the replacement: 3s
    score_win = tenpai.scorer()
    assert score_win is not None
    score = score_win(t.rules, tilechecks.win_context(t.rules, t.state, 0, True, None))
    assert not isinstance(score, Refusal), score
    assert (yaku is None or yaku in score.yaku) and not set(not_yaku) & set(score.yaku)
    t.ok(t.tsumo(0))
