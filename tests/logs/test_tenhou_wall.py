"""tenhou.net's walls rebuilt from the shuffle seed: the published test vector, and every
tile every hand of the corpus deals, draws and turns sits where the wall map says."""

from __future__ import annotations

import json

import pytest

from tablectl.logs.game import AddedKan, Call, ClosedKan, Draw, LogHand, NewDora
from tablectl.logs.tenhou_wall import (
    WallSeedError,
    dora_position,
    haipai_positions,
    live_draw_position,
    rinshan_position,
    ura_position,
    walls,
)
from tests.logs.corpus import CORPUS, GAME_NAMES, mjlog_game


def test_the_reproducers_vector() -> None:
    vector = json.loads((CORPUS / "reproducer_vector.json").read_text(encoding="utf-8"))
    first = walls(vector["seed"], 3)[0]
    assert list(first.tiles) == vector["wall"]
    assert list(first.dice) == vector["dice"]


def test_a_wall_is_every_tile_once() -> None:
    seed = json.loads((CORPUS / "reproducer_vector.json").read_text(encoding="utf-8"))["seed"]
    for wall in walls(seed, 5):
        assert sorted(wall.tiles) == list(range(136))
        assert all(1 <= d <= 6 for d in wall.dice)


@pytest.mark.parametrize(
    "seed",
    ["mt19937ar-sha512-n288-base64,%%%", "xorshift,AAAA", "mt19937ar-sha512-n288-base64,AAAA"],
)
def test_a_seed_of_another_kind_is_refused(seed: str) -> None:
    with pytest.raises(WallSeedError):
        walls(seed, 1)


def test_the_positions_cover_the_wall_once() -> None:
    dealt = [p for offset in range(4) for p in haipai_positions(offset)]
    live = [live_draw_position(n) for n in range(70)]
    dead = [rinshan_position(k) for k in range(4)]
    dead += [dora_position(k) for k in range(5)] + [ura_position(k) for k in range(5)]
    assert sorted(dealt + live + dead) == list(range(136))


def _check_hand(hand: LogHand) -> None:
    wall = hand.wall
    assert wall is not None
    for seat in range(4):
        positions = haipai_positions((seat - hand.dealer) % 4)
        assert sorted(hand.haipai[seat]) == sorted(wall[p] for p in positions), seat
    assert hand.dora == wall[dora_position(0)]
    live = rinshan = kan_dora = 0
    for action in hand.actions:
        if isinstance(action, Draw) and action.rinshan:
            assert action.tile == wall[rinshan_position(rinshan)]
            rinshan += 1
        elif isinstance(action, Draw):
            assert action.tile == wall[live_draw_position(live)]
            live += 1
        elif isinstance(action, NewDora):
            kan_dora += 1
            assert action.indicator == wall[dora_position(kan_dora)]
    kans = sum(
        isinstance(a, ClosedKan | AddedKan) or (isinstance(a, Call) and a.kind == "kan")
        for a in hand.actions
    )
    assert rinshan <= kans
    assert list(hand.ura) == [wall[ura_position(k)] for k in range(len(hand.ura))]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_deal_draw_and_indicator_lands_where_the_wall_map_says(name: str) -> None:
    game = mjlog_game(name)
    for hand in game.hands:
        assert hand.dice is not None and hand.wall is not None
        _check_hand(hand)


def test_the_dice_are_the_logs() -> None:
    """The mjlog's INIT writes dice - 1; the seed gives them again."""
    for name in GAME_NAMES:
        game = mjlog_game(name)
        text = (CORPUS / "mjlog" / f"{name}.mjlog").read_text(encoding="utf-8")
        seed = text.split('SHUFFLE seed="', 1)[1].split('"', 1)[0]
        rebuilt = walls(seed, len(game.hands))
        assert [h.dice for h in game.hands] == [w.dice for w in rebuilt]
