"""``tablectl demo``: the simulator and the daemon together, autoplaying games.

The simulated table (hw_sim) opens a pseudo-terminal; the daemon opens it as its serial
device, exactly as it opens ``/dev/ttyUSB0`` on a real table.  The terminal shows the
simulator's live view; ``--json`` prints one line per finished game instead.  With
``--tiles`` the table reads every tile (wall and seat readers): the daemon scores the
wins, and the view adds every seat's hand, melds and pond from the daemon's tile state.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, TextIO

from tablectl.config import DaemonConfig, config_for
from tablectl.daemon import Daemon, StoppedAt
from tablectl.journal import Journal, LinkPosition
from tablectl.rules.events import event_to_json
from tablectl.rules.loader import load_rules
from tablectl.rules.state import GameState, HandRecord
from tablectl.table import Table
from tablectl.tiles.ids import KIND_NAMES, kind, tile_set

#: The claim windows have no deadline: every seat is a bot that answers each ``RON?`` at
#: once, so a window closes on its last answer. A deadline (0.05 s, once) closed windows
#: on a loaded machine before the answers were back, and one seed played another game.
CLAIM_WINDOW_S = None
#: Seconds between two bot actions when people watch (0 with --fast).
WATCH_PACE_S = 0.12
#: Screen refresh interval of the live view.
REFRESH_S = 0.1
CLEAR = "\x1b[H\x1b[2J"


class DemoInterrupted(Exception):
    """Ctrl-C (SIGINT) or SIGTERM stopped the demo; the game in progress was closed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        #: The signal that stopped it (the exit code is 128 + it, as a shell reports).
        self.signum = signum


class ResumeError(Exception):
    """The game in progress in the journal cannot be picked up (one line says why)."""


class _Stop:
    """The signal that asked the demo to stop, once one did."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.event = asyncio.Event()

    def set(self, signum: int) -> None:
        self.signum = self.signum or signum
        self.event.set()


@contextlib.contextmanager
def _stop_signals() -> Iterator[_Stop]:
    """Set by SIGINT or SIGTERM while the demo runs. The demo waits on it beside the game,
    so a Ctrl-C at any moment ends the same way (the daemon and the simulator closed, then
    :class:`DemoInterrupted`), instead of as a cancellation some clean-up step might
    absorb."""
    loop = asyncio.get_running_loop()
    stop = _Stop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set, sig)
    try:
        yield stop
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


async def run_demo(
    rules: str,
    seed: int,
    games: int,
    *,
    fast: bool,
    as_json: bool,
    journal: Path | None = None,
    out: TextIO = sys.stdout,
    tiles: bool = False,
) -> list[dict[str, Any]]:
    """Play ``games`` games, game ``k`` with seed ``seed + k`` (so that ``--seed`` of any
    printed line plays that game again); returns each game's result (also printed with
    ``as_json``). On a terminal the live view shows the table; elsewhere one plain line
    per hand. Ctrl-C or SIGTERM raises :class:`DemoInterrupted` once the game in progress
    is closed.

    A game in progress in ``journal`` (a demo stopped half-way) is picked up where it
    stood: the simulated table plays seed ``seed``'s game up to that point again (see
    :func:`_fast_forward`), then the daemon resumes the journal's game on it. A journal
    whose game that seed does not play raises :class:`ResumeError`."""
    results: list[dict[str, Any]] = []
    live = not as_json and out.isatty()
    with _stop_signals() as stop, tempfile.TemporaryDirectory(prefix="tablectl-demo-") as tmp:
        if not as_json:
            # Once the handlers are in: a Ctrl-C after this line ends the demo cleanly
            # (a script driving the demo waits for it before it signals).
            out.write(f"tablectl demo: {rules}, seed {seed}; Ctrl-C to quit\n")
            out.flush()
        journal_path = journal or Path(tmp) / "journal.sqlite3"
        for game in range(games):
            result = await _one_game(
                rules, seed + game, journal_path, fast, live, as_json, out, tiles, stop
            )
            results.append(result)
            if as_json:
                out.write(json.dumps(result) + "\n")
            else:
                final = result["final"]
                money = final.get("money")
                settled = "" if not money else f", chips {money['chips']}, P {money['total']}"
                out.write(
                    f"game over, seed {result['seed']} ({final['reason']}): scores"
                    f" {final['scores']}, ranking {final['ranking']}{settled}\n"
                )
            out.flush()
    return results


async def _one_game(
    rules: str,
    seed: int,
    journal_path: Path,
    fast: bool,
    live: bool,
    as_json: bool,
    out: TextIO,
    tiles: bool,
    stop: _Stop,
) -> dict[str, Any]:
    from hw_sim import SimTable

    house = load_rules(rules)
    results: list[dict[str, Any]] = []
    # A wall reader: the view's centre display shows the dora indicators. With the take
    # and seat readers too, every hand is tile-aware (docs/tiles.md, "The daemon").
    resuming = _game_in_progress(journal_path, rules)
    sim = SimTable(
        house,
        seed,
        speed=0.0 if fast or resuming is not None else 0.2,
        max_games=1,
        wall_reader=True,
        tile_reader=tiles,
        seat_reader=tiles,
    )
    url = await sim.start_pty()
    config = config_for(url, rules, journal_path, table_id="demo")
    if resuming is not None:
        try:
            await _fast_forward(sim, config, resuming, seed, stop)
        except BaseException:
            await sim.close()
            raise
        if stop.signum is not None:
            await sim.close()
            raise DemoInterrupted(stop.signum)
        if not as_json:
            out.write(f"resuming game {resuming.game_id[:8]} after {len(resuming.events)} events\n")
            out.flush()
    if not fast:
        sim.firmware.speed = 0.2
        if sim.bots is not None:
            sim.bots.pace = WATCH_PACE_S

    def on_game(table: Table, result: dict[str, Any]) -> None:
        results.append({"rules": house.name, "seed": seed, **result})

    def on_hand(table: Table, record: HandRecord) -> None:
        if not live and not as_json:
            state = table.state
            out.write(
                f"{record.wind}{record.number} honba {record.honba}: {record.result},"
                f" scores {list(state.scores)}, deposits {state.kyoutaku}\n"
            )
            out.flush()

    daemon = demo_daemon(config, fast, max_games=1, on_game=on_game, on_hand=on_hand)
    daemon_task = asyncio.create_task(daemon.run())
    watched = daemon if tiles else None
    view_task = asyncio.create_task(_live_view(sim, out, watched)) if live else None
    stopped = asyncio.ensure_future(stop.event.wait())
    try:
        done, _ = await asyncio.wait(
            {daemon_task, asyncio.ensure_future(sim.wait_games(1)), stopped},
            return_when=asyncio.FIRST_COMPLETED,
        )
        for task in done:
            task.result()
    finally:
        stopped.cancel()
        daemon.stop.set()
        with contextlib.suppress(asyncio.CancelledError):
            await daemon_task
        if view_task is not None:
            view_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await view_task
            out.write(CLEAR + sim.render() + "\n")
        await sim.close()
    if stop.signum is not None:
        raise DemoInterrupted(stop.signum)
    if not results:
        raise RuntimeError("the game ended without a result")
    return results[0]


def demo_daemon(config: DaemonConfig, fast: bool, **options: Any) -> Daemon:
    """The demo's daemon (``options`` as :class:`Daemon` takes them): nothing in its game
    waits on a clock, so that a seed plays one game however loaded the machine is. Claim
    windows close on the bots' answers (:data:`CLAIM_WINDOW_S`); with ``fast`` its clock
    stands still too, so a game clock (kenko's 50 minutes) never runs out in the middle
    of a game that takes seconds, and shows its full time. A watched game keeps the
    running clock people see count down; it takes minutes, far from any time limit."""
    clock = _still_clock if fast else time.monotonic
    return Daemon(config, claim_window_s=CLAIM_WINDOW_S, monotonic=clock, **options)


def _still_clock() -> float:
    """The fast demo's monotonic clock: it stands still (see :func:`demo_daemon`)."""
    return 0.0


class _InProgress(NamedTuple):
    """The game a journal holds in progress: its id, events and stored link position."""

    game_id: str
    events: list[dict[str, Any]]
    position: LinkPosition | None


def _game_in_progress(path: Path, rules: str) -> _InProgress | None:
    """The game in progress in the journal at ``path`` (None: none, or no journal), which
    must be a demo's under ``rules``."""
    if not path.exists():
        return None
    with Journal.open(path, readonly=True) as journal:
        game_id = journal.current_game()
        if game_id is None:
            return None
        row = journal.game(game_id)
        if row.table_id != "demo":
            raise ResumeError(
                f"{path}: the game in progress is table {row.table_id!r}'s, not a demo's"
            )
        if row.rules != rules:
            raise ResumeError(
                f"{path}: the game in progress there plays {row.rules}; give --rules {row.rules}"
            )
        events = [event_to_json(e) for e in journal.events(game_id)]
        return _InProgress(game_id, events, journal.link_position())


async def _fast_forward(
    sim: Any, config: DaemonConfig, game: _InProgress, seed: int, stop: _Stop
) -> None:
    """Bring the simulated table to where the journal's game stood: one seed plays the same
    game, so the table plays it again at full speed against a daemon with a scratch
    journal, which stops before the first table event the journal's daemon had not handled
    (the table keeps it, and those after it, for the next daemon: as after a kill -9).
    Raises :class:`ResumeError` if the game played is not the journal's."""
    wanted = len(game.events)

    def there(events: int, position: LinkPosition | None) -> bool:
        if events > wanted:
            return True  # gone past it: another game (compared below)
        return events == wanted and (game.position is None or position == game.position)

    with tempfile.TemporaryDirectory(prefix="tablectl-resume-") as tmp:
        scratch = dataclasses.replace(config, journal=Path(tmp) / "scratch.sqlite3")
        daemon = demo_daemon(scratch, True, max_games=1, stop_at=there)
        task = asyncio.create_task(daemon.run())
        stopped = asyncio.ensure_future(stop.event.wait())
        try:
            await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not task.done():
                daemon.stop.set()
            with contextlib.suppress(StoppedAt):
                await task
        if stop.signum is not None:
            return
        with Journal.open(scratch.journal, readonly=True) as journal:
            game_id = journal.last_game()
            played = [] if game_id is None else [event_to_json(e) for e in journal.events(game_id)]
    if played != game.events:
        pairs = enumerate(zip(played, game.events, strict=False))
        same = next((i for i, (a, b) in pairs if a != b), None)
        where = f"event {same + 1}" if same is not None else f"{len(played)} events"
        raise ResumeError(
            f"{config.journal}: seed {seed} does not play the game in progress there (it"
            f" differs at {where}); give the --seed (and --tiles) of the game that was stopped"
        )


async def _live_view(sim: Any, out: TextIO, daemon: Daemon | None = None) -> None:
    while True:
        table = None if daemon is None else daemon.table
        hands = "" if table is None else "\n" + tile_view(table.state)
        out.write(CLEAR + sim.render() + hands + "\nCtrl-C to quit\n")
        out.flush()
        await asyncio.sleep(REFRESH_S)


def _tiles_text(tiles: Any, coloured: frozenset[int]) -> str:
    """``123m 406p 77z``: tiles sorted, by suit, a red or gold five as 0."""
    groups: dict[str, str] = {}
    for tile in sorted(tiles, key=lambda t: ("mpsz".index(KIND_NAMES[kind(t)][1]), kind(t), t)):
        name = KIND_NAMES[kind(tile)]
        digit, suit = name[0], name[1]
        groups[suit] = groups.get(suit, "") + ("0" if tile in coloured else digit)
    return " ".join(digits + suit for suit, digits in groups.items())


def tile_view(state: GameState) -> str:
    """Every seat's hand (sorted), melds and pond as the daemon's tile state has them;
    one line saying so when the hand in progress reads no tiles."""
    tiles = state.tiles
    if tiles is None:
        return "tiles (daemon): none read in this hand"
    tset = tile_set(state.rules)
    coloured = tset.red | tset.gold
    lines = ["tiles (daemon):  hand | melds | pond (* called away, r riichi)"]
    for seat, st in enumerate(tiles.seats):
        wind = "ESWN"[(seat - state.dealer) % state.players]
        melds = " ".join(
            ("[" if m.opened else "(") + _tiles_text(m.tiles, coloured) + ("]" if m.opened else ")")
            for m in st.melds
        )
        if st.norths:
            melds += f" north x{len(st.norths)}"
        pond = " ".join(
            KIND_NAMES[kind(d.tile)] + ("*" if d.called_by is not None else "")
            + ("r" if d.riichi else "")
            for d in st.discards
        )  # fmt: skip
        hand = _tiles_text(st.concealed, coloured)
        lines.append(f"{wind} {seat}  {hand} | {melds.strip()} | {pond}")
    return "\n".join(lines)


def journal_in_use(path: Path) -> str | None:
    """Why ``path`` should not be played on by the demo (a game in progress there, from
    a table or an earlier demo), or None."""
    from tablectl.journal import Journal, JournalError

    if not path.exists():
        return None
    try:
        with Journal.open(path, readonly=True) as journal:
            game_id = journal.current_game()
            if game_id is None:
                return None
            row = journal.game(game_id)
    except JournalError as exc:
        return str(exc)
    return (
        f"{path}: table {row.table_id!r} has a game in progress there ({row.rules},"
        f" {row.event_count} events); give --resume to play it on, or another file"
    )
