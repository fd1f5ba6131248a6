"""The tile soak (``bench/soak.py --tiles``): tile-reading games under faults end with the
same result in the live table, the journal, its replay and the exports, and never stall.

Seed ``s`` plays preset ``s mod 10`` at a table with every reader (``--tile-reader``: tile
ids on takes, a wall reader, seat readers), one game per seed, the bots on every seat, the
daemon a real ``tablectl run`` process on TCP loopback with its own journal. Every game has
the line faults ``corrupt=0.01,drop=0.01``; the games of a block take turns at the one-shot
faults, each at a seeded event count of its game (``EVENTS``): every ``kill_every``-th game
the harness sends SIGKILL to the daemon and starts a new one on the same journal, every
``unplug_every``-th the cable is out for 1 s, every ``reboot_every``-th the table reboots,
every ``reader_every``-th one seat zone's reader fails (``reader@N:SEAT:ZONE``), every
``misread_every``-th one seat's hand reader lies (``misread@N:SEAT``) and every
``keys_every``-th someone presses a burst of random keys on one bot's seat
(``keys@N:SEAT``: 5 keys drawn from the game's seed).

A game is a **stall** when the bots did not confirm its GAME OVER within the timeout. It is
a **mismatch** when any two of these differ:

* the live table: the final scores on the seats' GAME OVER displays (``#RANK SCORE``);
* the journal: the finished game's record (``tablectl records``);
* the replay: the journal's events through the rules core (nothing refused);
* the exports: tenhou.net/6's ``sc`` (every preset but kantan, which it refuses) and the
  mjai log (written for every game, one ``start_kyoku`` per hand the replay has).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _common as common

from firmware_bridge.messages import SeatDisplay, Zone
from hw_sim import SimTable
from tablectl.export import ExportError, export_text
from tablectl.journal import Journal, export_game
from tablectl.records import list_records
from tablectl.replay import replay
from tablectl.rules.loader import load_rules

LINE_FAULTS = "corrupt=0.01,drop=0.01"
#: Event counts a one-shot fault falls between: inside the first hands of a tile game
#: (one takes about 1,500 to 4,000 events), so that most fire before the game ends.
EVENTS = (60, 1500)
GAME_TIMEOUT_S = 240.0
_GAME_OVER = re.compile(r"#(\d)\s+(-?\d+)")


@dataclass(frozen=True)
class Periods:
    """Every how many games of a block each fault kind comes (0: never)."""

    kill: int = 3
    unplug: int = 4
    reboot: int = 5
    reader: int = 2
    misread: int = 3
    keys: int = 4

    def as_dict(self) -> dict[str, int]:
        """The periods by fault kind."""
        return {
            "kill": self.kill, "unplug": self.unplug, "reboot": self.reboot,
            "reader": self.reader, "misread": self.misread, "keys": self.keys,
        }  # fmt: skip


def plan(seed: int, index: int, periods: Periods, players: int) -> tuple[str, list[int]]:
    """The fault spec of the ``index``-th game of a block (seed ``seed``) and the event
    counts at which the harness kills the daemon."""
    rng = random.Random(f"tilesoak:{seed}")
    spec = [LINE_FAULTS]
    kills: list[int] = []

    def due(period: int) -> bool:
        return period > 0 and index % period == period - 1

    def at() -> int:
        return rng.randrange(*EVENTS)

    if due(periods.unplug):
        spec.append(f"unplug@{at()}")
    if due(periods.reboot):
        spec.append(f"reboot@{at()}")
    if due(periods.reader):
        zone = rng.choice([z.name.lower() for z in Zone])
        spec.append(f"reader@{at()}:{rng.randrange(players)}:{zone}")
    if due(periods.misread):
        spec.append(f"misread@{at()}:{rng.randrange(players)}")
    if due(periods.kill):
        kills.append(at())
    # Drawn last: the faults above fall where they did before keys were added.
    if due(periods.keys):
        spec.append(f"keys@{at()}:{rng.randrange(players)}")
    return ",".join(spec), kills


def live_scores(sim: SimTable) -> list[int] | None:
    """The final scores the seats' GAME OVER displays showed last (None if some seat
    never showed one)."""
    shown: dict[int, list[int]] = {}
    for direction, msg in sim.firmware.transcript:
        if direction == "rx" and isinstance(msg, SeatDisplay) and msg.line1.startswith("GAME OVER"):
            found = _GAME_OVER.search(msg.line2)
            if found is not None:
                shown[msg.seat] = [int(found.group(2))]
    players = sim.house.players
    if sorted(shown) != list(range(players)):
        return None
    return [shown[seat][0] for seat in range(players)]


def journal_results(journal: Path, preset: str) -> dict[str, Any]:
    """What the journal says of its finished game: the record's, the replay's and the
    exports' final scores, and what went wrong reading them."""
    out: dict[str, Any] = {"problems": []}
    if not journal.exists():
        out["problems"].append("no journal")
        return out
    with Journal.open(journal, readonly=True) as j:
        records = list_records(j)
        games = [g for g in j.games() if g.status == "finished"]
        if len(records) != 1 or len(games) != 1:
            out["problems"].append(f"{len(records)} records, {len(games)} finished games")
            return out
        out["record"] = list(records[0].scores)
        lines = export_game(j, games[0].game_id)
        events = j.events(games[0].game_id)
    result = replay(lines.splitlines())
    if result.rejected:
        out["problems"].append(f"replay refused {result.rejected[:2]}")
    final = result.as_dict()["final"]
    out["replay"] = None if final is None else list(final["scores"])
    money = None if final is None else final.get("money")
    if money is not None and [list(money["total"]), list(money["chips"])] != [
        list(records[0].p),
        list(records[0].chips),
    ]:
        # Issue #28: the P and chips the record keeps are the replay's.
        out["problems"].append(f"record P/chips {records[0].p}/{records[0].chips}, replay {money}")
    rules = load_rules(preset)
    try:
        mjai = [json.loads(line) for line in export_text("mjai", rules, events).splitlines()]
        if not rules.wall.own_walls:
            sc = json.loads(export_text("tenhou6", rules, events)).get("sc")
            out["tenhou6"] = None if sc is None else [int(s) for s in sc[0 : 2 * rules.players : 2]]
    except ExportError as exc:
        # A hand the daemon keyed in after all (its layout lost) has no tile log: the
        # exports refuse the game, as documented (docs/tiles.md).
        out["export_refused"] = str(exc)
        return out
    kyoku = sum(1 for item in mjai if item["type"] == "start_kyoku")
    if kyoku != len(result.hands):
        out["problems"].append(f"mjai has {kyoku} hands, the replay {len(result.hands)}")
    return out


async def tile_game(
    seed: int, index: int, periods: Periods, tmp: Path, game_s: float
) -> dict[str, Any]:
    """One faulty tile game; its figures, stall and mismatch."""
    preset = common.preset_for(seed)
    house = load_rules(preset)
    spec, kill_at = plan(seed, index, periods, house.players)
    sim = SimTable(
        house, seed, max_games=1, faults=spec, tile_reader=True, wall_reader=True,
        seat_reader=True,
    )  # fmt: skip
    planned = len(sim.firmware.faults.one_shots)
    fw = sim.firmware
    port = await sim.start_tcp(0)
    journal = tmp / f"tilesoak-{seed}.sqlite3"
    log = tmp / f"tilesoak-{seed}.log"
    config = common.write_config(tmp, f"socket://127.0.0.1:{port}", preset, journal, f"ts-{seed}")
    daemon = common.KilledDaemon(fw, config, log, kill_at)
    await daemon.start()
    start = time.perf_counter()
    stall = None
    try:
        async with asyncio.timeout(game_s):
            await sim.wait_games(1)
    except (TimeoutError, RuntimeError) as exc:
        stall = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        stall += f" at {sim.displays}"
    finally:
        elapsed = time.perf_counter() - start
        await daemon.stop()
        await sim.close()
    got = journal_results(journal, preset)
    got["live"] = live_scores(sim)
    finals = {k: got.get(k) for k in ("live", "record", "replay", "tenhou6") if k in got}
    differ = len({json.dumps(v) for v in finals.values()}) != 1 or None in finals.values()
    if stall is None and differ:
        got["problems"].append(f"finals differ: {finals}")
    bots = sim.bots
    assert bots is not None
    fired = [s for s in spec.split(",")[2:] if s]
    return {
        "seed": seed,
        "preset": preset,
        "stall": stall,
        "mismatch": got["problems"] if stall is None and got["problems"] else None,
        "elapsed_s": elapsed,
        "kills": daemon.kills,
        "one_shots_planned": planned,
        "one_shots_fired": planned - len(fw.faults.one_shots),
        "faults": fired,
        "reboots": fw.boots - 1,
        "connections": len(fw.lines),
        "export_refused": got.get("export_refused"),
        "bot_stalls": bots.stalls,
        "bot_refusals": len(bots.refusals),
        "hands": bots.hands_started,
        "log": log,
    }


async def run_tile_block(
    first: int,
    games: int,
    periods: Periods,
    keep: Path | None,
    game_s: float = GAME_TIMEOUT_S,
    only: int | None = None,
) -> dict[str, Any]:
    """Seeds ``first .. first + games - 1`` in order; the figures to merge (with ``only``,
    just that seed's game, with the faults its place in the block gives it)."""
    stalls: list[dict[str, Any]] = []
    mismatches: list[dict[str, Any]] = []
    totals = {
        "kills": 0, "one_shots_fired": 0, "one_shots_planned": 0, "reboots": 0,
        "connections": 0, "bot_stalls": 0, "bot_refusals": 0, "hands": 0, "game_s": 0.0,
    }  # fmt: skip
    kinds: dict[str, int] = {}
    refused: list[dict[str, Any]] = []
    presets: dict[str, int] = {}
    for index, seed in enumerate(range(first, first + games)):
        if only is not None and seed != only:
            continue
        with tempfile.TemporaryDirectory(prefix="bench-tilesoak-") as folder:
            got = await tile_game(seed, index, periods, Path(folder), game_s)
            for key in totals:
                totals[key] += got["elapsed_s"] if key == "game_s" else got[key]
            presets[got["preset"]] = presets.get(got["preset"], 0) + 1
            # One line a game on stderr: a long run cut short still says what it did.
            brief = {k: v for k, v in got.items() if k != "log"}
            print(
                f"tilesoak-game {json.dumps(common.rounded(brief, 2))}", file=sys.stderr, flush=True
            )
            if got["export_refused"] is not None:
                refused.append(
                    {"seed": seed, "preset": got["preset"], "why": got["export_refused"]}
                )
            for item in got["faults"]:
                name = item.split("@")[0]
                kinds[name] = kinds.get(name, 0) + 1
            if got["stall"] is not None or got["mismatch"] is not None:
                entry = {k: got[k] for k in ("seed", "preset", "stall", "mismatch", "faults")}
                (stalls if got["stall"] is not None else mismatches).append(entry)
                print(f"tilesoak: {json.dumps(entry)}", flush=True)
                if keep is not None:
                    common.keep_log(got["log"], keep / f"tilesoak-{seed}-{got['preset']}.log")
    return {
        "tile_games": games if only is None else 1,
        "tile_stalls": len(stalls),
        "tile_mismatches": len(mismatches),
        **totals,
        "planned_by_kind": kinds,
        "presets": presets,
        "exports_refused": refused,
        "stalls": stalls,
        "mismatches": mismatches,
    }
