"""Game records: finished games with their final scores and ranking, and CSV/JSON exports
that parse back."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tablectl.journal import Journal
from tablectl.records import (
    CSV_HEADER,
    Record,
    format_result,
    format_table,
    list_records,
    to_csv,
    to_json,
)
from tablectl.rules.core import step
from tablectl.rules.events import Riichi, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import Final, initial_state
from tests.helpers import random_event

T0 = 1_714_500_000.0  # 2024-04-30T18:00:00Z
JST = timezone(timedelta(hours=9))


def play_to_the_end(
    journal: Journal, preset: str, seed: int, seats: list[str] | None, start: float
) -> tuple[str, Final]:
    """Play a random game through the core, journalling it as the daemon does."""
    rules = load_rules(preset)
    rng = random.Random(seed)
    game_id = journal.start_game("table-1", preset, seats, start)
    state = initial_state(rules)
    now = start
    while not state.finished:
        event = parse_event(random_event(rng, rules))
        new_state, effects = step(state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue
        state = new_state
        now += 60
        journal.append(game_id, event, now, final=state.final.as_dict() if state.final else None)
    assert state.final is not None
    return game_id, state.final


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    """An empty journal in the test's own folder."""
    with Journal.open(tmp_path / "j.sqlite3") as j:
        yield j


GAMES = [
    ("kenko", ["Aoi", "Ben", "Chie", "Dai"]),
    ("mleague", ["東", "南", "西", "北"]),
    ("jboy-sanma", None),
]


def fill(journal: Journal) -> list[tuple[str, str, list[str] | None, Final, float]]:
    """Three finished games (4p plain, 4p with uma, 3p), one abandoned and one still being
    played; returns (game id, preset, seats, final, finished_at) of the finished ones."""
    out = []
    start = T0
    for seed, (preset, seats) in enumerate(GAMES):
        game_id, final = play_to_the_end(journal, preset, seed, seats, start)
        finished_at = journal.games()[-1].ended_at
        assert finished_at is not None
        out.append((game_id, preset, seats, final, finished_at))
        start = finished_at + 3600
    abandoned = journal.start_game("table-1", "kenko", None, start)
    journal.append(abandoned, Riichi(seat=0), start + 1)
    journal.abandon_game(abandoned, start + 2)
    journal.start_game("table-1", "kenko", None, start + 10)
    return out


def test_finished_games_are_recorded_with_final_scores_and_ranking(journal: Journal) -> None:
    played = fill(journal)
    records = list_records(journal)
    assert [r.game_id for r in records] == [p[0] for p in played]
    for rec, (_, preset, seats, final, finished_at) in zip(records, played, strict=True):
        assert rec.preset == preset and rec.table_id == "table-1"
        assert rec.seats == (None if seats is None else tuple(seats))
        assert rec.scores == final.scores
        assert rec.ranking == final.ranking
        assert rec.result == final.result
        assert rec.reason == final.reason
        assert rec.finished_at == finished_at
        # The settlement in P is kept with the record (jboy-sanma: chips, 100P each).
        money = final.money
        assert rec.chips == (money.chips if money else ())
        assert rec.p == (money.total if money else ())
        assert rec.fees == (tuple(-f for f in money.fee) if money else ())
        # ranks: the place of each seat; the top seat has the highest score.
        assert sorted(rec.ranks) == list(range(1, rec.players + 1))
        top = rec.ranks.index(1)
        assert rec.scores[top] == max(rec.scores)
    assert records[1].result, "mleague has uma and oka: result points are recorded"
    assert records[2].players == 3
    assert records[2].p and not records[0].p, "jboy-sanma settles in P, kenko does not"


def test_since_keeps_later_games(journal: Journal) -> None:
    played = fill(journal)
    cut = played[1][4]
    assert [r.game_id for r in list_records(journal, since=cut)] == [p[0] for p in played[1:]]
    later = datetime.fromtimestamp(cut + 1, UTC)
    assert [r.game_id for r in list_records(journal, since=later)] == [played[2][0]]


def test_csv_parses_back(journal: Journal) -> None:
    fill(journal)
    records = list_records(journal)
    text = to_csv(records, tz=JST)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == CSV_HEADER
    expected = "date,table,preset,game,seat0,seat1,seat2,seat3,score0,score1,score2,score3"
    assert CSV_HEADER[:16] == [*expected.split(","), "rank0", "rank1", "rank2", "rank3"]
    for row, rec in zip(rows, records, strict=True):
        assert datetime.fromisoformat(row["date"]).timestamp() == int(rec.finished_at)
        assert row["date"].endswith("+09:00")
        assert row["game"] == rec.game_id and row["preset"] == rec.preset
        assert [int(row[f"score{i}"]) for i in range(rec.players)] == list(rec.scores)
        assert [int(row[f"rank{i}"]) for i in range(rec.players)] == list(rec.ranks)
        names = [row[f"seat{i}"] for i in range(4)]
        assert names == list(rec.seats or ()) + [""] * (4 - len(rec.seats or ()))
        if rec.result:
            assert [float(row[f"result{i}"]) for i in range(rec.players)] == list(rec.result)
        assert [int(row[f"chips{i}"]) for i in range(len(rec.chips))] == list(rec.chips)
        assert [int(row[f"p{i}"]) for i in range(len(rec.p))] == list(rec.p)
        assert [int(row[f"fee{i}"]) for i in range(len(rec.fees))] == list(rec.fees)
    sanma = rows[2]
    assert sanma["score3"] == sanma["rank3"] == sanma["seat3"] == sanma["p3"] == ""
    assert rows[0]["chips0"] == rows[0]["p0"] == rows[0]["fee0"] == "", "kenko has no money"
    assert CSV_HEADER[-4:] == ["fee0", "fee1", "fee2", "fee3"]


def test_json_parses_back(journal: Journal) -> None:
    fill(journal)
    records = list_records(journal)
    data = json.loads(to_json(records, tz=UTC))
    assert len(data) == 3
    for obj, rec in zip(data, records, strict=True):
        assert obj["game"] == rec.game_id
        assert obj["scores"] == list(rec.scores)
        assert obj["ranking"] == list(rec.ranking)
        assert obj["ranks"] == list(rec.ranks)
        assert obj["date"] == datetime.fromtimestamp(rec.finished_at, UTC).isoformat(
            timespec="seconds"
        )
    assert data[1]["seats"] == ["東", "南", "西", "北"]
    assert data[0]["result"] is None and data[1]["result"] == list(records[1].result)
    assert data[0]["p"] is None and data[0]["chips"] is None
    assert data[2]["p"] == list(records[2].p) and data[2]["chips"] == list(records[2].chips)
    assert data[0]["fees"] is None and data[2]["fees"] == list(records[2].fees)


def test_readable_table(journal: Journal) -> None:
    fill(journal)
    text = format_table(list_records(journal), tz=UTC)
    lines = text.splitlines()
    assert len(lines) == 3
    assert "Aoi" in lines[0] and "#1" in lines[0] and "kenko" in lines[0]
    assert "seat 2" in lines[2]
    rec = list_records(journal)[2]
    assert lines[2].endswith(f"{rec.chips[2]:+d} chips {rec.p[2]:+d}P")  # jboy-sanma: no fee
    # A seat that paid a game fee has it on its line, before the P it is counted in.
    paid = dataclasses.replace(rec, fees=(300,) * rec.players)
    assert format_table([paid]).rstrip().endswith(f"{rec.chips[2]:+d} chips fee 300 {rec.p[2]:+d}P")
    assert "chips" not in lines[0]
    assert format_table([]) == "no finished games\n"


def test_a_record_needs_a_finish(journal: Journal) -> None:
    game_id = journal.start_game("table-1", "kenko", None, T0)
    assert list_records(journal) == []
    with pytest.raises(ValueError, match="scores"):
        journal.finish_game(game_id, {"scores": "lots", "ranking": [0]}, T0 + 1)
    assert list_records(journal) == [] and journal.current_game() == game_id
    journal.finish_game(
        game_id,
        {"scores": [30000, 20000, 25000, 25000], "ranking": [0, 2, 3, 1], "reason": "stop"},
        T0 + 2,
    )
    (rec,) = list_records(journal)
    assert rec == Record(
        game_id=game_id,
        table_id="table-1",
        preset="kenko",
        seats=None,
        started_at=T0,
        finished_at=T0 + 2,
        scores=(30000, 20000, 25000, 25000),
        ranking=(0, 2, 3, 1),
        result=(),
        reason="stop",
    )
    assert rec.ranks == (1, 4, 2, 3)


def test_a_record_names_the_seats_that_called_last_game(tmp_path: Path) -> None:
    from tablectl.journal import Journal
    from tablectl.records import format_table, list_records

    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game_id = journal.start_game("t1", "jboy", None, 1_700_000_000.0)
        for seat, on in ((2, True), (1, True), (1, False)):
            journal.note(game_id, 1_700_000_001.0, seat, "last_game", {"on": on})
        final = {"scores": [40000, 30000, 20000, 10000], "ranking": [0, 1, 2, 3], "reason": "x"}
        journal.finish_game(game_id, final, 1_700_000_002.0)
        (record,) = list_records(journal)
    assert record.last_game == (2,)
    assert record.as_dict()["last_game"] == [2]
    assert "20000 #3 LAST" in format_table([record])


@pytest.mark.parametrize(
    ("value", "sign", "text"),
    [(19.97, False, "19.97"), (20.0, False, "20.0"), (-59.9, False, "-59.9"),
     (61.2, True, "+61.2"), (-0.05, True, "-0.05"), (8.0, True, "+8.0")],
)  # fmt: skip
def test_results_keep_the_hundredths_of_a_shared_uma(value: float, sign: bool, text: str) -> None:
    # A three-way tie in M-League shares 59.9 as 19.97 each (docs/rules.md): shown as
    # 20.0 the tied players would not read equal.
    assert format_result(value, sign=sign) == text


def test_a_record_keeps_the_money_and_refuses_a_malformed_one(journal: Journal) -> None:
    final = {
        "scores": [41000, 25000, 39000],
        "ranking": [0, 2, 1],
        "reason": "x",
        "money": {"chips": [3, -1, -2], "result": [0, 0, 0], "fee": [-300, -300, -300],
                  "total": [1600, -1400, -200]},
    }  # fmt: skip
    bad = {**final, "money": {"chips": [3, -1], "total": [1, 2, 3]}}
    game_id = journal.start_game("t1", "sanma-free", None, T0)
    with pytest.raises(ValueError, match="chips"):
        journal.finish_game(game_id, bad, T0 + 1)
    with pytest.raises(ValueError, match="money"):
        journal.finish_game(game_id, {**final, "money": [1, 2, 3]}, T0 + 1)
    assert list_records(journal) == []
    journal.finish_game(game_id, final, T0 + 2)
    (rec,) = list_records(journal)
    assert (rec.chips, rec.p) == ((3, -1, -2), (1600, -1400, -200))
    assert rec.fees == (300, 300, 300)  # what each seat paid
    stored = journal.query("SELECT final FROM records")[0][0]
    assert json.loads(stored)["money"] == final["money"]
