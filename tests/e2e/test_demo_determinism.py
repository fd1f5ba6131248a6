"""``tablectl demo --fast``: one seed is one game however loaded the machine is (issue #26
item 3). A loaded machine is played in-process, without load: the daemon's ticker runs
between every two steps of the event loop, and the daemon's clock jumps a second at
every reading, so any deadline the game waits on has passed by the next tick, before an
answer on its way over the pty is in."""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest

import tablectl.daemon
import tablectl.demo
from tablectl.config import DaemonConfig
from tablectl.daemon import Daemon
from tablectl.demo import run_demo

#: A short keyed game (a second here) with rons in it; any seed would do.
SEED = 1


def _loaded_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ticks as often as the loop turns, and a daemon clock that runs a second a reading,
    whatever clock the demo gives its daemon."""
    readings = itertools.count()

    def daemon(config: DaemonConfig, **options: Any) -> Daemon:
        options["monotonic"] = lambda: float(next(readings))
        return Daemon(config, **options)

    monkeypatch.setattr(tablectl.daemon, "TICK_S", 0.0)
    monkeypatch.setattr(tablectl.demo, "Daemon", daemon)


async def _game(seed: int) -> dict[str, Any]:
    (result,) = await run_demo("ariari", seed, 1, fast=True, as_json=True, out=io.StringIO())
    del result["game_id"]  # each run journals anew
    return result


async def test_a_seed_plays_the_same_game_on_a_loaded_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    quiet = await _game(SEED)
    _loaded_machine(monkeypatch)
    loaded = await _game(SEED)
    assert loaded == quiet
