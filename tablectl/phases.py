"""The table's phase machine: where the table stands in its cycle of hands.

A hierarchical, asynchronous, queued ``transitions`` machine.  The rules core decides
what is legal; this machine only says which inputs the daemon is waiting for (walls,
dice, takes, win entry, confirmations) and remembers where a hand stood when the link
drops or the table reports a fault, so the daemon can go back exactly there.
"""

from __future__ import annotations

from typing import Any

from transitions.extensions.asyncio import HierarchicalAsyncMachine
from transitions.extensions.factory import HierarchicalAsyncGraphMachine

_TABLE_CHILDREN: list[Any] = [
    "idle",
    "shuffling",
    "walls_up",
    "dice",
    "dealing",
    {"name": "playing", "children": ["turn", "claim"], "initial": "turn"},
    "result_entry",
    "settlement",
    "game_over",
]

STATES: list[Any] = [
    "offline",
    "handshake",
    "fault",
    {"name": "table", "children": _TABLE_CHILDREN, "initial": "idle"},
]

#: The phase names the parlor sees (MQTT state, docs/mqtt.md): a stable public set,
#: independent of the state machine's internal names.
PUBLIC_PHASES: dict[str, str] = {
    "offline": "offline",
    "handshake": "connecting",
    "fault": "fault",
    "table_idle": "idle",
    "table_shuffling": "shuffling",
    "table_walls_up": "walls_up",
    "table_dice": "dice",
    "table_dealing": "dealing",
    "table_playing_turn": "play",
    "table_playing_claim": "claim",
    "table_result_entry": "result_entry",
    "table_settlement": "settlement",
    "table_game_over": "game_over",
}


def public_phase(phase: str) -> str:
    """The public name of an internal phase (``table_playing_turn`` -> ``play``)."""
    return PUBLIC_PHASES.get(phase, "fault" if phase.startswith("table_fault") else phase)


#: Every phase of a table in play (the ``table`` state and its children, as leaf names).
TABLE_PHASES = frozenset(p for p in PUBLIC_PHASES if p.startswith("table_"))
PLAYING = frozenset({"table_playing_turn", "table_playing_claim"})
#: Phases in which a hand is under way and may end with an abort or a penalty.
HAND_PHASES = frozenset(
    {"table_walls_up", "table_dice", "table_dealing", *PLAYING, "table_result_entry"}
)
#: Where a settled hand can still be corrected: it is settled and the next hand's dice have
#: not been rolled.
CORRECTABLE = frozenset(
    {"table_settlement", "table_game_over", "table_idle", "table_shuffling", "table_walls_up"}
)

# (trigger, source, destination)
TRANSITIONS: list[tuple[str, str | list[str], str]] = [
    ("link_up", "offline", "handshake"),
    ("hello_ok", "handshake", "table"),
    ("link_lost", ["handshake", "table", "fault"], "offline"),
    ("table_fault", "table", "fault"),
    ("shuffle", ["table_idle", "table_shuffling", "table_walls_up"], "table_shuffling"),
    ("walls_ready", "table_shuffling", "table_walls_up"),
    ("roll", "table_walls_up", "table_dice"),
    ("dice_rolled", "table_dice", "table_dealing"),
    ("dealt", "table_dealing", "table_playing"),
    ("claim_opened", "table_playing_turn", "table_playing_claim"),
    ("claim_closed", "table_playing_claim", "table_playing_turn"),
    ("enter_result", ["table_playing", "table_dealing"], "table_result_entry"),
    ("entry_cancelled", "table_result_entry", "table_playing"),
    (
        "hand_over",
        ["table_playing", "table_dealing", "table_result_entry", "table_walls_up", "table_dice"],
        "table_settlement",
    ),
    ("next_hand", "table_settlement", "table_idle"),
    ("game_ended", "table_settlement", "table_game_over"),
    ("new_game", "table_game_over", "table_idle"),
    # Corrections: a settled hand whose next dice have not been rolled is entered again.
    ("reopen", sorted(CORRECTABLE), "table_result_entry"),
    ("resume_play", sorted(CORRECTABLE), "table_playing"),
    # Staff end the game in progress (abandoned, or for a game with other rules).
    ("abandon", "table", "table_idle"),
]


def destination(trigger: str, phase: str) -> str | None:
    """The leaf phase ``trigger`` leads to from ``phase`` (None: no such transition)."""
    for name, source, dest in TRANSITIONS:
        sources = [source] if isinstance(source, str) else source
        if name == trigger and any(phase == s or phase.startswith(s + "_") for s in sources):
            return {"table_playing": "table_playing_turn", "table": "table_idle"}.get(dest, dest)
    return None


class PhaseModel:
    """The object the machine drives; ``state`` is the current phase name."""

    state: str


def build_machine(model: Any, *, initial: str = "offline", graph: bool = False) -> Any:
    """A machine for ``model`` (its ``state`` starts at ``initial``).

    ``auto_transitions`` gives ``to_<phase>`` triggers, which the daemon uses to return to
    the exact phase a hand stood in after a fault or a reconnect.
    """
    cls = HierarchicalAsyncGraphMachine if graph else HierarchicalAsyncMachine
    kwargs: dict[str, Any] = {"graph_engine": "mermaid"} if graph else {}
    return cls(
        model=model,
        states=STATES,
        transitions=[{"trigger": t, "source": s, "dest": d} for t, s, d in TRANSITIONS],
        initial=initial,
        queued=True,
        auto_transitions=True,
        send_event=False,
        **kwargs,
    )


def mermaid() -> str:
    """The machine as a mermaid state diagram (``tablectl diagram``)."""
    model = PhaseModel()
    machine = build_machine(model, graph=True)
    text: str = machine.get_graph().draw(None)
    return text
