"""``tablectl demo --journal F --resume`` after a Ctrl-C mid-game picks the game up where
it stood and finishes it (issue 29 item 7): the simulated table plays the seed's game up
to the journal's point again, then the daemon resumes the journal's game on it."""

from __future__ import annotations

import asyncio
import io
import signal
import subprocess
from pathlib import Path

import pytest

from tablectl.demo import ResumeError, run_demo
from tablectl.journal import Journal
from tablectl.rules.events import event_to_json
from tests.helpers import TABLECTL, stop_process

RULES = "kantan"
SEED = 3
#: Bounds a demo game that never ends (the old resume waited forever).
GAME_TIMEOUT_S = 120


def _journal(path: Path) -> tuple[str, str, list[dict[str, object]]]:
    """The journal's only game: its id, status and events."""
    with Journal.open(path, readonly=True) as journal:
        (game,) = journal.games()
        return game.game_id, game.status, [event_to_json(e) for e in journal.events(game.game_id)]


def _interrupted_demo(journal: Path) -> None:
    """``tablectl demo`` stopped by SIGINT as soon as its first hand is settled."""
    args = [*TABLECTL, "demo", "--fast", "--rules", RULES, "--seed", str(SEED)]
    demo = subprocess.Popen(
        [*args, "--journal", str(journal)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert demo.stdout is not None
        assert demo.stdout.readline().startswith("tablectl demo:")
        assert demo.stdout.readline().startswith("E1 "), "the first hand"
        demo.send_signal(signal.SIGINT)
        assert demo.wait(timeout=GAME_TIMEOUT_S) == 128 + signal.SIGINT
    finally:
        stop_process(demo)


async def test_a_demo_stopped_mid_game_is_finished_by_resume(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    await asyncio.to_thread(_interrupted_demo, journal)
    game_id, status, before = _journal(journal)
    assert status == "playing" and before, "the demo was stopped after its game ended"

    # The wrong seed plays another game: said in one line, the journal untouched.
    with pytest.raises(ResumeError, match=f"seed {SEED + 1} does not play the game"):
        async with asyncio.timeout(GAME_TIMEOUT_S):
            await run_demo(RULES, SEED + 1, 1, fast=True, as_json=True, journal=journal,
                           out=io.StringIO())  # fmt: skip
    assert _journal(journal) == (game_id, status, before)
    with pytest.raises(ResumeError, match=f"plays {RULES}; give --rules {RULES}"):
        await run_demo("jboy", SEED, 1, fast=True, as_json=True, journal=journal, out=io.StringIO())

    async with asyncio.timeout(GAME_TIMEOUT_S):
        (resumed,) = await run_demo(
            RULES, SEED, 1, fast=True, as_json=True, journal=journal, out=io.StringIO()
        )
        (whole,) = await run_demo(
            RULES, SEED, 1, fast=True, as_json=True, journal=tmp_path / "whole.sqlite3",
            out=io.StringIO(),
        )  # fmt: skip
    # The journal's game went on from where it stood, to the end the seed's game has.
    after_id, after_status, after = _journal(journal)
    assert (after_id, after_status) == (game_id, "finished")
    assert resumed["game_id"] == game_id
    assert after[: len(before)] == before and len(after) > len(before)
    assert resumed["final"] == whole["final"]
    assert after == _journal(tmp_path / "whole.sqlite3")[2]
