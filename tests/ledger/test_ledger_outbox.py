"""The journal's outbox to the ledger: each change the ledger must hear of is a new
revision, written with the change itself; an acknowledgement takes off only the revision
it names; a game that never finished is not the ledger's business."""

from __future__ import annotations

import random
from pathlib import Path

from tablectl.journal import Journal
from tablectl.journal_ledger import PENDING_QUERY, pending
from tablectl.rules.core import step
from tablectl.rules.events import Undo, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import initial_state
from tests.helpers import random_event

T0 = 1_800_000_000.0


def finish(journal: Journal, game_id: str, seed: int) -> None:
    """Journal a random mleague game to its end (the final with the last event)."""
    rng = random.Random(seed)
    state = initial_state(load_rules("mleague"))
    with journal.batch():
        while not state.finished:
            event = parse_event(random_event(rng, state.rules))
            new_state, effects = step(state, event)
            if any(isinstance(e, Refusal) for e in effects):
                continue
            state = new_state
            final = state.final.as_dict() if state.finished and state.final else None
            journal.append(game_id, event, T0 + 60, final=final)


def outbox(journal: Journal) -> list[tuple[str, int, str]]:
    return [(g.game_id, g.revision, g.state) for g in pending(journal.query(PENDING_QUERY))]


def test_each_change_is_a_new_revision_until_acknowledged(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game = journal.start_game("t1", "mleague", ["A", "B", "C", "D"], T0)
        assert outbox(journal) == []
        finish(journal, game, 1)
        [sent] = pending(journal.query(PENDING_QUERY))
        assert (sent.revision, sent.state, sent.seats, sent.table_id) == (
            1, "finished", ["A", "B", "C", "D"], "t1"
        )  # fmt: skip
        record = journal.query("SELECT finished_at FROM records")[0][0]
        assert sent.finished_at == record and sent.final is not None
        assert sent.message()["final"]["scores"] == sent.final["scores"]
        assert journal.ledger_acknowledge(game, 1)
        assert outbox(journal) == []
        assert not journal.ledger_acknowledge(game, 1)  # a repeated ack changes nothing
        journal.append(game, Undo(), T0 + 120)
        assert outbox(journal) == [(game, 2, "reopened")]
        assert pending(journal.query(PENDING_QUERY))[0].final is None
        # The ack of the first revision arriving late does not take off the second.
        assert not journal.ledger_acknowledge(game, 1)
        assert outbox(journal) == [(game, 2, "reopened")]
        journal.abandon_game(game, T0 + 180)
        assert outbox(journal) == [(game, 3, "abandoned")]
        assert not journal.ledger_acknowledge(game, 4)  # a revision it never had
        assert journal.ledger_acknowledge(game, 3)
        assert outbox(journal) == []


def test_an_abandoned_game_that_never_finished_is_not_sent(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game = journal.start_game("t1", "mleague", None, T0)
        journal.abandon_game(game, T0 + 60)
        assert outbox(journal) == []
        assert not journal.ledger_acknowledge(game, 1)


def test_the_outbox_row_rolls_back_with_the_game_s_end(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game = journal.start_game("t1", "mleague", None, T0)
        try:
            with journal.batch():
                finish(journal, game, 2)
                raise RuntimeError("power cut")
        except RuntimeError:
            pass
        assert outbox(journal) == []
        assert journal.query("SELECT COUNT(*) FROM records") == [(0,)]
