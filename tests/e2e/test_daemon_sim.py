"""The daemon and the simulated table back to back over a pty, under every preset.

Each autoplayed game's final scores must equal ``tablectl replay`` of the journal's
export, and the simulated seat displays must show the daemon's scores.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hw_sim import SimTable
from tablectl.config import config_for
from tablectl.daemon import Daemon
from tablectl.journal import Journal, export_game
from tablectl.records import list_records
from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules, preset_names

GAME_TIMEOUT_S = 60


async def play(
    preset: str, seed: int, journal: Path, games: int = 1, **readers: bool
) -> tuple[Daemon, SimTable, list[dict[str, Any]]]:
    house = load_rules(preset)
    sim = SimTable(house, seed, max_games=games, **readers)
    url = await sim.start_pty()
    results: list[dict[str, Any]] = []
    config = config_for(url, preset, journal, table_id="e2e")
    daemon = Daemon(
        config,
        claim_window_s=None,  # closed by the bots' answers: the same game at any load
        max_games=games,
        on_game=lambda table, result: results.append(result),
    )
    task = asyncio.create_task(daemon.run())
    try:
        async with asyncio.timeout(GAME_TIMEOUT_S):
            await sim.wait_games(games)
    finally:
        daemon.stop.set()
        await task
        await sim.close()
    return daemon, sim, results


@pytest.mark.parametrize("preset", preset_names())
async def test_autoplayed_game_matches_replay_of_its_journal(preset: str, tmp_path: Path) -> None:
    journal_path = tmp_path / "journal.sqlite3"
    daemon, sim, results = await play(preset, seed=11, journal=journal_path)
    assert len(results) == 1
    final = results[0]["final"]
    assert len(final["scores"]) == load_rules(preset).players
    with Journal.open(journal_path) as journal:
        game = journal.last_game()
        assert game is not None
        exported = export_game(journal, game)
        assert journal.game(game).finished
    replayed = replay(exported.splitlines()).as_dict()
    assert replayed["rejected"] == []
    assert replayed["finished"] is True
    assert replayed["final"] == final
    assert replayed["hands"], "a game has hands"
    # The simulated consoles show the daemon's final scores and ranks.
    for seat, (line1, line2) in enumerate(sim.displays):
        rank = final["ranking"].index(seat) + 1
        assert (
            line1 == "GAME OVER"
            or line1.endswith(str(final["scores"][seat]))
            or (f"#{rank} {final['scores'][seat]}" in line2)
        ), (seat, line1, line2)
    if preset in MONEY_PRESETS:
        check_money(journal_path, final, sim)


#: Keyed games whose winners entered chips at CHIPS? (seed 11: the journal holds such wins).
MONEY_PRESETS = ("sanma-free", "jboy")


def check_money(journal_path: Path, final: dict[str, Any], sim: SimTable) -> None:
    """Issue #28: the P of a keyed game with chips, as the daemon settled it, shown at
    GAME OVER and kept in the records, equals the replay of the daemon's own journal
    (checked on the games the test above plays anyway: no game of its own)."""
    money = final["money"]
    with Journal.open(journal_path) as journal:
        game = journal.last_game()
        assert game is not None
        entered = [
            hand.chips
            for event in journal.events(game)
            if isinstance(event, ev.Ron | ev.Tsumo)
            for hand in (event.winners if isinstance(event, ev.Ron) else (event.hand,))
            if hand.chips
        ]
        (record,) = list_records(journal)
        exported = export_game(journal, game)
    assert entered, "the winners entered chips at CHIPS?"
    replayed = replay(exported.splitlines()).as_dict()
    assert money is not None and replayed["final"]["money"] == money
    assert sum(money["chips"]) == 0 and any(money["chips"])
    assert list(record.p) == money["total"] and list(record.chips) == money["chips"]
    for seat, (_, line2) in enumerate(sim.displays):
        assert line2.endswith(f" {money['total'][seat]:+d}P"), (seat, line2)


async def test_same_seed_same_game(tmp_path: Path) -> None:
    _, _, first = await play("jboy", seed=5, journal=tmp_path / "a.sqlite3")
    _, _, second = await play("jboy", seed=5, journal=tmp_path / "b.sqlite3")
    # The same game, recorded under each journal's own game id.
    assert [r.pop("game_id") is not None for r in (*first, *second)] == [True] * 2
    assert first == second
