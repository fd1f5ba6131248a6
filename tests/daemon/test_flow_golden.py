"""The flow snapshot pinned byte for byte (docs/journal.md, "Golden flow snapshots").

Journals in the field hold the console flow as ``Table.flow_snapshot`` wrote it; after
any restructuring of ``Table`` they must still restore. The goldens under
tests/daemon/golden/ were written by the seeded storms of ``golden/storm.py`` with the code
of their commit: the same storms must write exactly the same snapshots, each golden
snapshot must restore into a fresh table on its rules state (the journal's events
replayed) and snapshot again to the same canonical JSON with the same ``flow_key``, and a
journal file written by the daemon, killed in the middle of a hand, must resume there.
"""

from __future__ import annotations

import functools
import gzip
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge import messages as m
from tablectl.journal import resume
from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.state import GameState, initial_state
from tablectl.rules.wall import WallState, implied_discarder, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.table import Table
from tests.daemon.golden.resume import resume_table, summary
from tests.daemon.golden.storm import (
    STORMS,
    GoldenStorm,
    canonical,
    golden_name,
    new_table,
    record,
)

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """The storms' refusals, faults and tiles going off are expected: not worth a log."""
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def load_golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / name).read_text("utf-8"))
    return data


def fresh(rules_ref: str, state: GameState, clock: float = 5000.0) -> Table:
    """A table as a restarted daemon makes it: the resumed rules state, no flow yet."""
    return new_table(
        rules_for(rules_ref), rules_ref, state, clock=[clock], outbox=[], recorder=None
    )


@functools.cache
def rules_for(ref: str) -> HouseRules:
    """The preset's rules, loaded once (they are frozen)."""
    return load_rules(ref)


def check_round_trip(table: Table, flow: dict[str, Any], rules_ref: str) -> None:
    """``flow`` restores into a fresh table on ``table``'s state, with the same key."""
    restored = fresh(rules_ref, table.state)
    restored.restore_flow(json.loads(json.dumps(flow)))
    assert canonical(restored.flow_snapshot()) == canonical(flow)
    assert restored.flow_key() == table.flow_key()


@pytest.mark.parametrize(
    ("preset", "seed", "tiles", "calm", "steps"),
    STORMS,
    ids=[golden_name(*s[:4]).removesuffix(".json") for s in STORMS],
)
async def test_the_storm_writes_the_golden_snapshots(
    preset: str, seed: int, tiles: bool, calm: bool, steps: int
) -> None:
    """(a) Today's snapshots, byte for byte, at the same steps; and at each one the live
    table's flow restores into a fresh table with the live table's ``flow_key``."""
    golden = load_golden(golden_name(preset, seed, tiles, calm))

    def round_trip(storm: GoldenStorm) -> None:
        check_round_trip(storm.table, storm.table.flow_snapshot(), storm.table.rules_ref)

    made = await record(preset, seed, tiles, calm, steps, round_trip)
    assert made["storm"] == golden["storm"]
    for got, want in zip(made["points"], golden["points"], strict=False):
        where = f"step {want['step']}"
        assert (got["step"], got["game"], got["events"]) == (
            want["step"],
            want["game"],
            want["events"],
        ), where
        assert canonical(got["flow"]) == canonical(want["flow"]), where
        assert canonical(got["state"]) == canonical(want["state"]), where
    assert len(made["points"]) == len(golden["points"])
    assert canonical(made["games"]) == canonical(golden["games"])


def replayed_states(golden: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str, GameState]]:
    """Every point of a golden with its game's rules and the rules state its journalled
    events replay to (as ``tablectl.journal.resume`` rebuilds it)."""
    at: dict[int, tuple[int, GameState]] = {}
    for point in golden["points"]:
        game = golden["games"][point["game"]]
        done, state = at.get(point["game"], (0, initial_state(rules_for(game["rules"]))))
        for obj in game["events"][done : point["events"]]:
            state, effects = step(state, ev.parse_event(obj))
            assert not any(type(e).__name__ == "Refusal" for e in effects)
        at[point["game"]] = (point["events"], state)
        yield point, game["rules"], state


@pytest.mark.parametrize(
    "name", [golden_name(*s[:4]) for s in STORMS], ids=lambda n: n.removesuffix(".json")
)
def test_every_golden_snapshot_restores_and_snapshots_the_same(name: str) -> None:
    """(b) From the golden file alone: each snapshot restores into a fresh table on the
    replayed rules state, snapshots to the identical canonical JSON, and a table restored
    from that has the same ``flow_key``."""
    golden = load_golden(name)
    for point, rules_ref, state in replayed_states(golden):
        flow = point["flow"]
        table = fresh(rules_ref, state)
        table.restore_flow(json.loads(json.dumps(flow)))
        again = table.flow_snapshot()
        assert canonical(again) == canonical(flow), f"step {point['step']}"
        key = table.flow_key()
        table.restore_flow(json.loads(json.dumps(again)))  # as a second restart would
        assert canonical(table.flow_snapshot()) == canonical(flow), f"step {point['step']}"
        assert table.flow_key() == key, f"step {point['step']}"


def test_the_goldens_cover_every_pending_kind_and_most_prompts() -> None:
    """What the goldens hold (reported in docs/journal.md): every phase a snapshot may be
    stored in, every pending kind, the held melds and unread tiles of tile-aware hands."""
    prompts: set[str] = set()
    pending: set[str] = set()
    held: set[str] = set()
    phases: set[str] = set()
    unread = 0
    for spec in STORMS:
        for point in load_golden(golden_name(*spec[:4]))["points"]:
            flow = point["flow"]
            phases.add(flow["phase"])
            prompts |= {c["prompt"] for c in flow["consoles"] if c["prompt"]}
            if flow["pending"] is not None:
                pending.add(flow["pending"]["kind"])
            if flow["held_meld"] is not None:
                held.add(flow["held_meld"]["kind"])
            unread += any(flow["unread_ponds"]) or any(flow["unread_melds"])
    assert pending == {"claim", "confirm", "draw", "from", "ron", "tsumo"}
    assert {"pon", "kan"} <= held
    assert unread > 0
    assert phases == {
        "table_shuffling",
        "table_walls_up",
        "table_dice",
        "table_dealing",
        "table_playing_turn",
        "table_playing_claim",
        "table_result_entry",
        "table_settlement",
    }
    missing = {"ROLL?", "RON?", "FROM?", "HAN?", "FU?", "PAO?", "KAN?", "PLACE MELD"}
    missing |= {"ABORT?", "TENPAI?", "CONFIRM", "GAME OVER", "STAFF?", "PIN?", "SEAT?"}
    missing |= {"RULES?"}
    assert missing - prompts == set()


def test_a_perturbed_snapshot_is_told_apart() -> None:
    """The comparison is byte for byte: a renamed key or a changed value is a difference."""
    flow = load_golden(golden_name(*STORMS[0][:4]))["points"][-1]["flow"]
    renamed = {("walls_finished" if k == "walls_done" else k): v for k, v in flow.items()}
    assert canonical(renamed) != canonical(flow)
    assert canonical({**flow, "clock_s": (flow["clock_s"] or 0) + 0.001}) != canonical(flow)


JOURNALS = ("journal-tenhou-tiles", "journal-kantan-keyed")


def unpack(name: str, folder: Path) -> Path:
    """A copy of a golden journal (database and write-ahead log) in ``folder``."""
    path = folder / "journal.sqlite3"
    for suffix in ("", "-wal"):
        with gzip.open(GOLDEN / f"{name}.sqlite3{suffix}.gz") as packed:
            Path(f"{path}{suffix}").write_bytes(packed.read())
    return path


@pytest.mark.parametrize("name", JOURNALS)
async def test_a_journal_killed_mid_hand_resumes_there_and_plays_on(
    tmp_path: Path, name: str
) -> None:
    """(c) A journal file the daemon wrote (``tablectl demo --fast`` killed with SIGKILL in
    the middle of a hand) resumes at the recorded phase, prompts, scores and place in the
    hand with the stored console flow, and the hand goes on: the seat to play discards and
    the next seat takes, both journalled."""
    recorded = json.loads((GOLDEN / f"{name}.json").read_text("utf-8"))
    packed = {p: p.read_bytes() for p in GOLDEN.glob(f"{name}.*")}
    path = unpack(name, tmp_path)
    resumed = await resume_table(path, "demo", m.Capability(recorded["capabilities"]))
    table, recorder = resumed.table, resumed.recorder
    try:
        assert recorder.game_id == recorded["game_id"]
        assert recorder.game_events == recorded["events"]
        assert resumed.flow is not None and canonical(resumed.flow) == canonical(recorded["flow"])
        assert summary(table) == recorded["resumed"]
        assert canonical(table.flow_snapshot()) == canonical(recorded["flow"])
        wall = table.state.wall
        assert wall is not None and wall.phase == "discard" and wall.live_left > 0
        seat, after = wall.turn, (wall.turn + 1) % table.players
        with recorder.handling():
            tiles = table.state.tiles
            if tiles is not None:  # the seat reader shows the discard
                st = tiles.seats[seat]
                pond = (
                    *table.zone_ponds[seat],
                    st.drawn if st.drawn is not None else st.concealed[0],
                )
                await table.handle(m.SeatTiles(seat=seat, zone=m.Zone.DISCARDS, tiles=pond))
            rules, now = wall_rules(table.rules), table.state.wall
            assert now is not None
            if implied_discarder(now, after) == seat:  # keyed: the take implies the discard
                stepped = wall_step(rules, now, ev.Discard(seat=seat))
                assert isinstance(stepped, WallState)
                now = stepped
            position = next_position(rules, now, after)
            assert position is not None
            await table.handle(m.WallTake(seat=after, position=position))
        events = resumed.journal.events(recorded["game_id"])
        assert [type(e).__name__ for e in events[recorded["events"] :]] == ["Discard", "Take"]
        assert table.state.wall is not None and table.state.wall.turn == after
        assert table.state.wall.live_left == recorded["resumed"]["live_left"] - 1
        assert (table.state.tiles is not None) == recorded["resumed"]["tile_aware"]
        assert table.phase == "table_playing_turn"
        again = resume(resumed.journal)
        assert again is not None and again.state == table.state
    finally:
        resumed.journal.close()
    assert {p: p.read_bytes() for p in GOLDEN.glob(f"{name}.*")} == packed


def test_the_golden_journals_are_small() -> None:
    """They are committed: each well under 500 KB."""
    for name in JOURNALS:
        assert sum(p.stat().st_size for p in GOLDEN.glob(f"{name}.*")) < 500_000
