"""Every real game of the corpus read from its mjlog and from its tenhou.net/6 JSON: the
scores hold together hand by hand up to the log's final scores, the two records of the
same game agree on every action and result, and the hard cases are where the corpus
README says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablectl.logs import LogError, parse_log, parse_tenhou6, read_log
from tablectl.logs.game import Action, DrawnHand, LogGame, LogHand, Win
from tests.logs.corpus import CORPUS, GAME_NAMES, TENHOU6_NAMES, mjlog_game, tenhou6_game

RED_FIVES = (16, 52, 88)

#: The hard cases of the corpus: where each occurs (game, hand as round-honba).
HARD_CASES: dict[str, list[tuple[str, str]]] = {
    "chankan": [
        ("2010081709gm-00a9-0000-fe3371ad", "E3-0"),
        ("2010091009gm-00a9-0000-83af2648", "S2-0"),
        ("2018010702gm-00a9-0000-5dd4f9b4", "E2-0"),
    ],
    "double_ron": [
        ("2010091009gm-00a9-0000-83af2648", "S2-0"),
        ("2020052700gm-00a9-0000-75a4695c", "E2-2"),
        ("double-ron", "E4-0"),
    ],
    "four_kans": [("2016052515gm-00a9-0000-c4d72066", "E1-2")],
    "rinshan": [
        ("2016052515gm-00a9-0000-c4d72066", "E2-2"),
        ("2020052221gm-00a9-0000-6f0524c7", "S4-0"),
        ("2020052700gm-00a9-0000-75a4695c", "E4-0"),
        ("2020080212gm-00a9-0000-82c7d512", "E4-0"),
    ],
    "nagashi": [("2019082700gm-00a9-0000-63d1f136", "E4-0")],
    "nine_terminals": [
        ("2010112714gm-00a9-0000-d497e395", "S1-0"),
        ("2011020613gm-00a9-0000-3774f8d1", "E4-1"),
        ("2018022422gm-00a9-0000-0067d2a4", "E3-0"),
        ("2018022422gm-00a9-0000-0067d2a4", "E4-0"),
        ("2020060723gm-00a9-0000-58807e27", "W1-0"),
    ],
    "four_riichi": [("2018040923gm-00a9-0000-1833afca", "E3-0")],
    "four_winds": [("2020052221gm-00a9-0000-6f0524c7", "S3-0")],
    "pao": [("pao-tsumo", "E4-0")],
    "yakuman": [
        ("2010091009gm-00a9-0000-83af2648", "S2-0"),
        ("2017040900gm-00a9-0000-af5434e3", "E1-1"),
        ("2019060813gm-00a9-0000-08bb0ec3", "S1-2"),
        ("pao-tsumo", "E4-0"),
    ],
}


def _label(hand: LogHand) -> str:
    return f"{'ESWN'[hand.round_index // 4]}{hand.round_index % 4 + 1}-{hand.honba}"


def _cases(hand: LogHand) -> set[str]:
    result = hand.result
    if isinstance(result, DrawnHand):
        return {result.kind} - {"exhaustive"}
    yaku = {y for win in result for y, _ in win.yaku}
    found = {name for name, y in (("chankan", 3), ("rinshan", 4)) if y in yaku}
    if len(result) > 1:
        found.add("double_ron")
    if any(win.pao is not None for win in result):
        found.add("pao")
    if any(win.han >= 13 for win in result):
        found.add("yakuman")
    return found


def test_the_corpus_has_at_least_twenty_whole_games() -> None:
    assert len(GAME_NAMES) >= 20
    assert set(TENHOU6_NAMES) <= set(GAME_NAMES)


def test_the_players_are_anonymous() -> None:
    for path in (CORPUS / "mjlog").glob("*.mjlog"):
        text = path.read_text(encoding="utf-8")
        for tag in text.split("<UN ")[1:]:
            names = [
                part for part in tag.split(">")[0].split() if part[:2] in ("n0", "n1", "n2", "n3")
            ]
            assert names and all("%E3%81%95%E3%82%93" in n for n in names), path.name
    for path in (CORPUS / "tenhou6").glob("*.json"):
        for line in path.read_text(encoding="utf-8").splitlines():
            assert json.loads(line)["name"] == ["Aさん", "Bさん", "Cさん", "Dさん"], path.name


def _check_scores(game: LogGame) -> None:
    scores = list(game.hands[0].scores)
    assert scores == [25000] * 4
    sticks = 0
    for hand in game.hands:
        assert list(hand.scores) == scores, _label(hand)
        assert hand.sticks == sticks, _label(hand)
        scores = [s + d for s, d in zip(scores, hand.deltas(), strict=True)]
        if isinstance(hand.result, DrawnHand):
            sticks += len(hand.riichi_paid())
        else:
            sticks = 0
    # The sticks still on the table go to the first place (a tie: the seat nearer the
    # first dealer, seat 0).
    top = max(range(4), key=lambda s: (scores[s], -s))
    scores[top] += 1000 * sticks
    assert game.final_scores == tuple(scores)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_hand_scores_what_the_next_starts_with(name: str) -> None:
    game = mjlog_game(name)
    assert game.rules.players == 4 and game.rules.red_fives and game.rules.open_tanyao
    assert game.rules.length == "south"
    _check_scores(game)


def _tile(tile: int) -> tuple[int, bool]:
    return tile // 4, tile in RED_FIVES


def _same_tiles(action: Action) -> tuple[object, ...]:
    """``action`` with each tile as its kind and colour, the only identity tenhou.net/6
    keeps."""
    out: list[object] = [type(action).__name__]
    for name in action.__slots__:
        value = getattr(action, name)
        if name in ("tile", "called", "indicator"):
            out.append(_tile(value))
        elif name in ("own", "tiles"):
            out.append(sorted(_tile(t) for t in value))
        else:
            out.append(value)
    return tuple(out)


def _same_win(win: Win, fu_known: bool) -> tuple[object, ...]:
    return (
        win.seat,
        win.source,
        win.fu if fu_known else 0,
        win.points,
        win.han,
        sorted(win.yaku),
        win.pao,
        win.deltas,
    )


@pytest.mark.parametrize("name", TENHOU6_NAMES)
def test_the_tenhou6_record_agrees_with_the_mjlog(name: str) -> None:
    mjlog, t6 = mjlog_game(name), tenhou6_game(name)
    assert t6.rules == mjlog.rules
    assert len(t6.hands) == len(mjlog.hands)
    for a, b in zip(mjlog.hands, t6.hands, strict=True):
        where = _label(a)
        head = (a.round_index, a.honba, a.sticks, a.dealer, a.scores)
        assert head == (b.round_index, b.honba, b.sticks, b.dealer, b.scores), where
        assert [sorted(map(_tile, h)) for h in a.haipai] == [
            sorted(map(_tile, h)) for h in b.haipai
        ]
        assert _tile(a.dora) == _tile(b.dora), where
        assert [_tile(t) for t in a.ura] == [_tile(t) for t in b.ura], where
        assert [_same_tiles(x) for x in a.actions] == [_same_tiles(x) for x in b.actions], where
        if isinstance(a.result, DrawnHand):
            assert a.result == b.result, where
        else:
            assert isinstance(b.result, tuple) and len(a.result) == len(b.result), where
            for wa, wb in zip(a.result, b.result, strict=True):
                assert _same_win(wa, wb.fu != 0) == _same_win(wb, True), where
        assert b.dice is None and b.wall is None


@pytest.mark.parametrize("name", TENHOU6_NAMES)
def test_every_tenhou6_hand_scores_what_the_next_starts_with(name: str) -> None:
    game = tenhou6_game(name)
    for hand, after in zip(game.hands, game.hands[1:], strict=False):
        moved = [s + d for s, d in zip(hand.scores, hand.deltas(), strict=True)]
        assert tuple(moved) == after.scores, _label(hand)


def test_the_hard_cases_are_where_the_readme_says() -> None:
    found: dict[str, list[tuple[str, str]]] = {}
    for name in GAME_NAMES:
        for hand in mjlog_game(name).hands:
            for case in sorted(_cases(hand)):
                found.setdefault(case, []).append((name, _label(hand)))
    assert found == HARD_CASES
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for case, where in HARD_CASES.items():
        for game, hand in where:
            assert f"{game} {hand}" in readme, (case, game, hand)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "<mjloggm><GO type='169'/><INIT seed='0,0,0,1,2' ten='250,250,250,250' oya='0'/>",
            "not XML",
        ),
        ("<other/>", "not <mjloggm>"),
        ("<mjloggm><GO type='185'/></mjloggm>", "three-player"),
        ("<mjloggm><GO type='169'/><SHUFFLE seed='x,y'/><INIT/></mjloggm>", "SHUFFLE"),
        (
            "<mjloggm><GO type='169'/><INIT seed='0,0' ten='250' oya='0'/><AGARI/></mjloggm>",
            "AGARI ten",
        ),
        ("{}", "no log array"),
        ("{nope", "not JSON"),
        ('{"rule":{"disp":"三鳳南喰赤"},"log":[]}', "three-player"),
        ('{"rule":{"disp":"鳳南喰赤"},"log":[[1,2]]}', "not 17"),
    ],
)
def test_a_broken_log_is_one_clear_error(text: str, says: str) -> None:
    with pytest.raises(LogError) as err:
        parse_log(text)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_changed_tenhou6_action_is_caught() -> None:
    line = (
        (CORPUS / "tenhou6" / f"{TENHOU6_NAMES[0]}.json")
        .read_text(encoding="utf-8")
        .splitlines()[0]
    )
    hand = json.loads(line)
    # Seat 0 discards a tile it never held.
    hand["log"][0][6][0] = 47 if 47 not in hand["log"][0][4] else 46
    with pytest.raises(LogError):
        parse_tenhou6(json.dumps(hand))


def test_read_log_reads_both_formats(tmp_path: Path) -> None:
    name = TENHOU6_NAMES[0]
    assert read_log(CORPUS / "mjlog" / f"{name}.mjlog") == mjlog_game(name)
    assert read_log(CORPUS / "tenhou6" / f"{name}.json") == tenhou6_game(name)
    with pytest.raises(LogError):
        read_log(tmp_path / "missing.json")
    (tmp_path / "bad").write_bytes(b"\xff\xfe")
    with pytest.raises(LogError):
        read_log(tmp_path / "bad")
