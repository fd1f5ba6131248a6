"""Real tenhou.net games dealt and played at the simulated table against the daemon
(issue #29): the dice and layout commands, the layouts of every hand of the corpus, and
the hard-case games played in one process (``sim://``) with the journal's tenhou.net/6
export compared with the log.  bench/playlog.py plays the whole corpus."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gzip
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hw_sim import SimTable
from hw_sim.__main__ import main as hw_sim_main
from hw_sim.control import ControlServer
from hw_sim.playlog import Diverged, LogPlayer, preset_for
from hw_sim.playlog_wall import hand_deal
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.export import export_text
from tablectl.journal import Journal
from tablectl.logs import LogError, LogGame, parse_log, parse_tenhou6, read_log
from tablectl.logs.compare import differences
from tablectl.logs.game import Action, AddedKan, ClosedKan, Discard, Draw
from tablectl.logs.game import Call as LogCall
from tablectl.rules import wall as W
from tablectl.rules.events import Call as WallCall
from tablectl.rules.events import Discard as WallDiscard
from tablectl.rules.events import Kan, Take, WallEvent
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.walltrack import wall_rules

CORPUS = Path(__file__).parents[1] / "data" / "tenhou"
TENHOU6 = sorted((CORPUS / "tenhou6").glob("*.json"))
#: The games of the corpus README's hard cases, played in the suite (the rest: bench).
HARD_CASES = {
    "2010091009gm-00a9-0000-83af2648": "chankan, double ron and a yakuman in one hand",
    "2016052515gm-00a9-0000-c4d72066": "four kans abort, rinshan kaihou",
    "2019082700gm-00a9-0000-63d1f136": "nagashi mangan",
    "2018040923gm-00a9-0000-1833afca": "four riichi",
    "2020052221gm-00a9-0000-6f0524c7": "four winds, rinshan kaihou",
    "2011020613gm-00a9-0000-3774f8d1": "nine terminals",
    "pao-tsumo": "pao",
}
#: A two-hand game (a bust), the cheapest whole game of the corpus.
SHORT = "2017040900gm-00a9-0000-af5434e3"
GAME_TIMEOUT_S = 120
#: The claim window: the player answers every RON? at once, so the window closes as soon
#: as it has; a long one only keeps a loaded machine from closing it before the answers.
CLAIM_WINDOW_S = 30.0


@pytest.fixture
def journal_dir() -> Iterator[Path]:
    """A directory for journals, in memory where the machine has one: the daemon syncs
    every commit, and a disk's syncs would double the cost of a game."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="playlog-", dir=base) as tmp:
        yield Path(tmp)


async def play(game: LogGame, journal: Path, name: str) -> LogGame:
    """Play ``game`` at a simulated table against an in-process daemon over ``sim://``;
    the daemon's record of it (the journal's tenhou.net/6 export, read back)."""
    preset = preset_for(game.rules)
    sim = SimTable(
        preset, speed=0.0, autoplay=False, tile_reader=True, wall_reader=True,
        seat_reader=True, name=name,
    )  # fmt: skip
    player = LogPlayer(sim, game)
    url = await sim.start_sim(name)
    daemon = Daemon(config_for(url, preset, journal), claim_window_s=CLAIM_WINDOW_S, max_games=1)
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(GAME_TIMEOUT_S):
            await player.run()
    finally:
        daemon.stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await sim.close()
    assert player.hands_played == len(game.hands)
    with Journal.open(journal) as j:
        row = next(g for g in reversed(j.games()) if g.status == "finished")
        rules = load_rules(row.rules)
        text = export_text("tenhou6", rules, j.events(row.game_id), row.seats, ("", ""))
    return parse_tenhou6(text)


# ---- the control commands


async def test_next_dice_and_layout_make_the_next_hand() -> None:
    table = SimTable("tenhou", autoplay=False)
    layout = list(range(135, -1, -1))
    table.next_dice([6, 2])
    table.next_layout(layout)
    table.firmware.wall.shuffle()
    assert table.roll() == (6, 2)
    assert table.firmware.wall.tiles == layout
    table.firmware.wall.shuffle()  # nothing planned: seeded again
    assert table.firmware.wall.tiles != layout


@pytest.mark.parametrize(
    ("request_", "error"),
    [
        ({"cmd": "next_dice", "dice": [7, 1]}, "dice are two values 1..6, got [7, 1]"),
        ({"cmd": "next_dice", "dice": [3]}, "dice are two values 1..6, got [3]"),
        ({"cmd": "next_dice", "dice": [True, 2]}, "dice are two values 1..6"),
        ({"cmd": "next_dice", "dice": "34"}, "'dice' must be a list of two values 1..6"),
        ({"cmd": "next_layout", "tiles": list(range(135))},
         "tenhou: a layout has one tile id per position: 136 for this set, got 135"),
        ({"cmd": "next_layout", "tiles": [0, *range(135)]},
         "each tile id of the set once; given twice: [0]"),
        ({"cmd": "next_layout", "tiles": [*range(135), 200]}, "not in this set: [200]"),
        ({"cmd": "next_layout", "tiles": [*range(135), "x"]}, "a list of tile ids (integers)"),
        ({"cmd": "next_layout"}, "'tiles' must be a list of tile ids, got None"),
    ],
)  # fmt: skip
async def test_bad_dice_and_layouts_are_one_line_and_change_nothing(
    request_: dict[str, object], error: str
) -> None:
    table = SimTable("tenhou", autoplay=False)
    reply = await ControlServer(table).handle_line(json.dumps(request_))
    assert reply["ok"] is False
    assert error in reply["error"] and "\n" not in reply["error"]
    assert not table.firmware.planned_dice and not table.firmware.wall.planned


async def test_a_sanma_layout_has_108_tiles() -> None:
    table = SimTable("sanma-free", autoplay=False)
    reply = await ControlServer(table).handle_line(
        json.dumps({"cmd": "next_layout", "tiles": list(range(136))})
    )
    assert reply == {
        "ok": False,
        "error": "sanma-free: a layout has one tile id per position: 108 for this set, got 136",
    }
    ids = sorted(table.firmware.wall.ids)
    reply = await ControlServer(table).handle_line(json.dumps({"cmd": "next_layout", "tiles": ids}))
    assert reply == {"ok": True, "queued": 1}


# ---- the layouts


@pytest.mark.parametrize("path", TENHOU6, ids=lambda p: p.stem)
def test_every_hand_deals_and_draws_the_logs_tiles(path: Path) -> None:
    """The wall tracker, following the log's actions, takes the log's tiles from each
    hand's layout: the deal, every live and replacement draw, the dora and ura.  The
    tenhou.net/6 logs, whose walls are built here from what they show; an mjlog's wall
    is tenhou.net's own (tests/logs checks it against every draw) and goes through the
    same map to positions."""
    game = read_log(path)
    rules = wall_rules(load_rules(preset_for(game.rules)))
    for index, hand in enumerate(game.hands):
        deal = hand_deal(rules, hand, index)
        state = W.start_wall(rules, hand.dealer, deal.dice)
        assert not isinstance(state, Refusal)
        assert deal.layout[state.dora_indicators[0]] == hand.dora
        while state.phase == W.DEAL:
            after = W.wall_step(rules, state, Take(state.turn))
            assert not isinstance(after, Refusal)
            state = after
        for seat in range(4):
            dealt = [
                deal.layout[p]
                for p, s in zip(state.taken, state.taken_by, strict=True)
                if s == seat
            ]
            assert sorted(dealt) == sorted(hand.haipai[seat]), (index, seat)
        for action in hand.actions:
            event = _wall_event(state, action)
            if event is None:
                continue
            after = W.wall_step(rules, state, event)
            assert not isinstance(after, Refusal), (index, action, after)
            if isinstance(action, Draw):
                assert deal.layout[after.taken[-1]] == action.tile, (index, action)
            state = after
        for n, tile in enumerate(hand.ura):
            assert deal.layout[state.dora_indicators[n] + 1] == tile, (index, n)


def _wall_event(state: W.WallState, action: Action) -> WallEvent | None:
    """The wall tracker's event for a logged action (None: the tracker has none)."""
    match action:
        case Draw(seat=seat):
            return Take(seat)
        case Discard(seat=seat):
            return WallDiscard(seat)
        case LogCall(seat=seat, kind=kind, source=source):
            return WallCall(seat, kind, source)
        case ClosedKan(seat=seat):
            return Kan(seat, "closed")
        case AddedKan(seat=seat):
            return Kan(seat, "added")
    return None


# ---- whole games


@pytest.mark.parametrize("name", sorted(HARD_CASES))
async def test_a_hard_case_game_scores_as_the_log(
    name: str, journal_dir: Path, patient_link: None
) -> None:
    game = read_log(CORPUS / "mjlog" / f"{name}.mjlog")
    table = await play(game, journal_dir / "journal.sqlite3", name)
    assert differences(game, table) == []


async def test_a_tenhou6_log_plays_with_the_rest_of_the_wall_free(
    journal_dir: Path, patient_link: None
) -> None:
    game = read_log(CORPUS / "tenhou6" / f"{SHORT}.json")
    assert game.hands[0].wall is None
    table = await play(game, journal_dir / "journal.sqlite3", SHORT)
    assert differences(game, table) == []
    assert table.hands[-1].scores == game.hands[-1].scores


async def test_a_log_the_daemon_scores_otherwise_stops_with_one_line(
    journal_dir: Path, patient_link: None
) -> None:
    lines = (CORPUS / "tenhou6" / f"{SHORT}.json").read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    result = first["log"][0][-1]  # ["和了", deltas, detail]
    assert result[0] == "和了"
    winner = next(i for i, d in enumerate(result[1]) if d > 0)
    result[1][winner] += 1000
    result[1][(winner + 1) % 4] -= 1000
    game = parse_log("\n".join([json.dumps(first, ensure_ascii=False), *lines[1:]]))
    with pytest.raises(Diverged) as caught:
        await play(game, journal_dir / "journal.sqlite3", "tampered")
    # The dealer's win (a bust ends the game after the next hand) was worth 1000 less.
    assert str(caught.value) == "hand E1-0, the win: seat 0 has 37000 after the hand, the log 38000"


def test_a_log_that_is_no_log_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"title": 1}\n')
    assert hw_sim_main(["serve", "--tcp", "0", "--play-log", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hw_sim: --play-log {bad}: ") and err.count("\n") == 1


def test_the_comparison_names_each_difference() -> None:
    log = read_log(CORPUS / "mjlog" / f"{SHORT}.mjlog")
    first = log.hands[0]
    assert isinstance(first.result, tuple) and log.final_scores is not None
    want = first.result[0]
    win = dataclasses.replace(want, han=want.han + 1, fu=want.fu + 10)
    changed = dataclasses.replace(first, result=(win,), scores=(25000, 25000, 25000, 24000))
    table = dataclasses.replace(log, hands=(changed,), final_scores=(1, 2, 3, 4))
    assert differences(log, table) == [
        "1 hands, the log 2",
        "E1-0: scores (25000, 25000, 25000, 24000), the log (25000, 25000, 25000, 25000)",
        f"E1-0: han {want.han + 1}, the log {want.han}",
        f"E1-0: fu {want.fu + 10}, the log {want.fu}",
        f"final scores [1, 2, 3, 4], the log {list(log.final_scores)}",
    ]
    assert differences(log, log) == []


def test_a_gzipped_log_reads_as_the_plain_one(tmp_path: Path) -> None:
    plain = CORPUS / "mjlog" / f"{SHORT}.mjlog"
    packed = tmp_path / f"{SHORT}.mjlog.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_log(packed) == read_log(plain)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(plain.read_bytes())[:100])
    with pytest.raises(LogError, match=r"^.*broken\.gz: "):
        read_log(broken)
