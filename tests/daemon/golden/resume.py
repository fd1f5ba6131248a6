"""The daemon's resume path, step by step as ``Daemon._run_locked`` takes it, for a journal
file: open it, replay the unfinished game, make the table on that state with the journal
recorder, take up the stored console flow, and bring the link up."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware_bridge import messages as m
from tablectl.console.staff import StaffGate
from tablectl.daemon import JournalRecorder
from tablectl.journal import Journal, resume
from tablectl.rules.loader import load_rules
from tablectl.table import Table


@dataclass
class Resumed:
    """A table resumed from a journal file, with what it posted and its clock."""

    journal: Journal
    recorder: JournalRecorder
    table: Table
    flow: dict[str, Any] | None
    sent: list[m.Message] = field(default_factory=list)
    clock: list[float] = field(default_factory=lambda: [100.0])


async def resume_table(path: Path, table_id: str, capabilities: m.Capability) -> Resumed:
    """Resume ``path`` as the daemon does (the caller closes ``.journal``)."""
    journal = Journal.open(path, preallocate_log=True)
    resumed = resume(journal)
    assert resumed is not None, "the journal holds no game in progress"
    rules_ref = journal.game(resumed.game_id).rules
    recorder = JournalRecorder(journal, table_id, rules_ref, None, game_id=resumed.game_id)
    sent: list[m.Message] = []
    clock = [100.0]
    table = Table(
        resumed.rules,
        post=sent.append,
        recorder=recorder,
        now=lambda: clock[0],
        table_id=table_id,
        state=resumed.state,
        rules_ref=rules_ref,
        staff=StaffGate(None, lambda: clock[0]),
        load_rules=load_rules,
    )
    recorder.flow = table.flow_snapshot
    recorder.flow_key = table.flow_key
    flow = recorder.stored_flow()
    if flow is not None:
        table.restore_flow(flow)
    await table.link_up(rebooted=False, capabilities=capabilities)
    return Resumed(journal, recorder, table, flow, sent, clock)


def summary(table: Table) -> dict[str, Any]:
    """What a resumed table must come back at: phase, prompts, scores, the hand's place."""
    state = table.state
    wall = state.wall
    return {
        "phase": table.phase,
        "prompts": [c.prompt for c in table.consoles],
        "scores": list(state.scores),
        "dealer": state.dealer,
        "honba": state.honba,
        "deposits": state.kyoutaku,
        "hands_played": state.hands_played,
        "wall_phase": None if wall is None else wall.phase,
        "live_left": None if wall is None else wall.live_left,
        "turn": None if wall is None else wall.turn,
        "tile_aware": state.tiles is not None,
    }
