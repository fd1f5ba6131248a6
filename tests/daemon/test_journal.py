"""The journal: durable appends, resume by replay at every prefix, export, a real kill -9,
and clear errors for files it cannot use."""

from __future__ import annotations

import inspect
import json
import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tablectl.journal as journal_mod
import tablectl.journal_file as journal_file
import tablectl.journal_schema as journal_schema
from tablectl.journal import (
    WAL_FRAME_HEADER,
    WAL_HEADER,
    Journal,
    JournalError,
    LinkPosition,
    export_game,
    resume,
    rules_digest,
)
from tablectl.replay import ReplayResult, hand_dict, replay
from tablectl.rules.core import step
from tablectl.rules.events import Event, Hand, Riichi, Start, Tsumo, parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, HandSettled, initial_state
from tests.helpers import random_event

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_700_000_000.0  # a fixed wall clock: the journal never reads the real one


def accepted_events(
    rules: HouseRules, seed: int, limit: int = 400
) -> list[tuple[Event, GameState, list[HandSettled]]]:
    """A random game as the daemon would journal it: only the events the core accepts,
    each with the live state after it and the hands it settled."""
    rng = random.Random(seed)
    state = initial_state(rules)
    out = []
    for _ in range(limit):
        if state.finished:
            break
        event = parse_event(random_event(rng, rules, legal_only=False))
        new_state, effects = step(state, event)
        if any(isinstance(e, Refusal) for e in effects):
            continue
        state = new_state
        out.append((event, state, [e for e in effects if isinstance(e, HandSettled)]))
    return out


@pytest.mark.parametrize(
    ("preset", "seed"),
    [("kenko", 1), ("mleague", 2), ("jboy-sanma", 3), ("kantan", 4), ("tenhou", 5)],
)
def test_every_prefix_resumes_to_the_live_state(tmp_path: Path, preset: str, seed: int) -> None:
    path = tmp_path / "journal.sqlite3"
    rules = load_rules(preset)
    game = accepted_events(rules, seed)
    assert game[-1][1].finished, "the random game should end"
    journal = Journal.open(path)
    game_id = journal.start_game("t1", preset, None, T0)
    journal.close()
    expected = initial_state(rules)
    for seq, (event, live, _) in enumerate([(None, expected, []), *game]):
        if event is not None:
            with Journal.open(path) as journal:
                assert journal.append(game_id, event, T0 + seq) == seq
        # Close and reopen at every prefix: what a crash right here would leave.
        with Journal.open(path) as journal:
            resumed = resume(journal)
        assert resumed is not None
        assert resumed.game_id == game_id
        assert resumed.rules == rules
        assert resumed.state == live, f"prefix {seq}"
    with Journal.open(path) as journal:
        final = game[-1][1].final
        assert final is not None
        journal.finish_game(game_id, final.as_dict(), T0 + 1000)
        assert resume(journal) is None
        assert journal.current_game() is None


@pytest.mark.parametrize(("preset", "seed"), [("kenko", 11), ("ema", 12), ("sanma-free", 13)])
def test_export_replays_to_the_live_output(tmp_path: Path, preset: str, seed: int) -> None:
    rules = load_rules(preset)
    game = accepted_events(rules, seed)
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game_id = journal.start_game("t1", preset, None, T0)
        for seq, (event, state, _) in enumerate(game, start=1):
            final = state.final.as_dict() if state.final else None
            journal.append(game_id, event, T0 + seq, final=final)
        text = export_game(journal, game_id)
    live = ReplayResult(
        rules=rules,
        state=game[-1][1],
        hands=[hand_dict(h.record) for _, _, hands in game for h in hands],
    )
    lines = text.splitlines()
    assert lines[0] == json.dumps({"type": "start", "rules": preset}, separators=(",", ":"))
    assert len(lines) == len(game) + 1
    assert replay(lines).as_dict() == live.as_dict()


def test_appends_are_on_disk_when_append_returns(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    journal = Journal.open(path)
    game_id = journal.start_game("t1", "kenko", ["A", "B", "C", "D"], T0)
    journal.append(game_id, Riichi(seat=1), T0 + 1)
    # Another connection (another process) sees the committed event at once.
    other = sqlite3.connect(path)
    assert other.execute("SELECT seq, at, event FROM events").fetchall() == [
        (1, T0 + 1, '{"type":"riichi","seat":1}')
    ]
    other.close()
    assert journal.query("PRAGMA journal_mode") == [("wal",)]
    assert journal.query("PRAGMA synchronous") == [(2,)]  # 2 = FULL
    assert [e.seq for e in journal.entries(game_id)] == [1]
    journal.close()


def test_a_refused_event_in_the_journal_is_logged_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rules = load_rules("kenko")
    game = accepted_events(rules, 21)[:6]
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        for seq, (event, _, _) in enumerate(game[:3], start=1):
            journal.append(game_id, event, T0 + seq)
        # The daemon never journals a refusal; an old bug might have.
        journal.append(game_id, Riichi(seat=7), T0 + 10)
        for seq, (event, _, _) in enumerate(game[3:], start=11):
            journal.append(game_id, event, T0 + seq)
        journal.append(game_id, Tsumo(hand=Hand(seat=9, han=1, fu=30)), T0 + 20)
        with caplog.at_level(logging.WARNING, logger="tablectl.journal"):
            resumed = resume(journal)
    assert resumed is not None and resumed.state == game[-1][1]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert "#4" in warnings[0] and "no_such_seat" in warnings[0]
    assert "#8" in warnings[1]  # the last event: a crash right after a bad append


def test_resume_without_a_game_in_progress(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        assert resume(journal) is None
        game_id = journal.start_game("t1", "kenko", None, T0)
        resumed = resume(journal)
        assert resumed is not None
        rules, gid, state = resumed
        assert gid == game_id and state == initial_state(rules)
        journal.abandon_game(game_id, T0 + 5)
        assert resume(journal) is None
        assert journal.games()[0].status == "abandoned" and journal.games()[0].finished


def test_game_lifecycle_rules(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        first = journal.start_game("t1", "kenko", None, T0, game_id="abc123")
        assert first == "abc123"
        with pytest.raises(JournalError, match="still being played"):
            journal.start_game("t1", "kenko", None, T0 + 1)
        with pytest.raises(ValueError, match="start"):
            journal.append(first, Start(rules="kenko"), T0 + 1)
        with pytest.raises(ValueError, match="finite"):
            journal.append(first, Riichi(seat=0), float("nan"))
        with pytest.raises(JournalError, match="no game 'nope'"):
            journal.append("nope", Riichi(seat=0), T0 + 1)
        with pytest.raises(ValueError, match="ranking"):
            journal.finish_game(first, {"scores": [1, 2, 3, 4], "ranking": [0, 0, 1, 2]}, T0)
        assert journal.current_game() == first  # the bad finish changed nothing
        journal.abandon_game(first, T0 + 2)
        with pytest.raises(JournalError, match="abandoned; no more events"):
            journal.append(first, Riichi(seat=0), T0 + 3)
        with pytest.raises(JournalError, match="already used"):
            journal.start_game("t1", "kenko", None, T0 + 4, game_id="abc123")
        with pytest.raises(ValueError, match="3 seat names"):
            journal.start_game("t1", "kenko", ["a", "b", "c"], T0 + 4)
        second = journal.start_game("t1", "kenko", None, T0 + 4, game_id="abd999")
        assert journal.game("abc").game_id == first  # a unique prefix is enough
        with pytest.raises(JournalError, match="matches 2 games"):
            journal.game("ab")
        assert [g.game_id for g in journal.games()] == [first, second]
        assert journal.last_game() == second == journal.current_game()


def test_a_rules_file_is_kept_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "parlor.toml").write_text('extends = "kenko"\n[game]\ntime_limit_minutes = 60\n')
    monkeypatch.chdir(tmp_path)
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        journal.start_game("t1", "parlor.toml", None, T0)
        assert journal.games()[0].rules == str(tmp_path / "parlor.toml")
        monkeypatch.chdir(ROOT)
        resumed = resume(journal)
        assert resumed is not None and resumed.rules.game.time_limit_minutes == 60


def test_a_changed_rules_file_is_noticed_on_resume(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rules_file = tmp_path / "parlor.toml"
    rules_file.write_text('extends = "kenko"\n')
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        journal.start_game("t1", str(rules_file), None, T0)
        rules_file.write_text('extends = "kenko"\n[game]\nstart_points = 30000\n')
        with caplog.at_level(logging.WARNING, logger="tablectl.journal"):
            assert resume(journal) is not None
    assert "changed since the game started" in caplog.text


#: Digests journalled before the [money] options existed (computed at 6642b00). A preset
#: without money settles as it did, so its games must resume after the upgrade without a
#: "rules changed" warning; presets that gained money (jboy, sanma-free) rightly differ.
DIGESTS_BEFORE_MONEY = {
    "tenhou": "e237dcffa1e75a3da501cc68b73fd66793d1e8da085cacd744cfd2c98561a505",
    "kenko": "3c96848a99919a7c551d3485529e071f8649f40287b21057296a1ffdcbb3beab",
}


@pytest.mark.parametrize("preset", sorted(DIGESTS_BEFORE_MONEY))
def test_a_preset_without_money_keeps_its_digest(preset: str) -> None:
    assert rules_digest(load_rules(preset)) == DIGESTS_BEFORE_MONEY[preset]


# --- files the journal cannot use ---------------------------------------------------


def test_corrupt_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(JournalError, match=f"{path}: not a journal"):
        Journal.open(path)


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(JournalError, match=f"{path}: not a tablectl journal"):
        Journal.open(path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    Journal.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(JournalError, match=f"{path}: journal schema version 99 is newer"):
        Journal.open(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(JournalError, match="no journal file there"):
        Journal.open(tmp_path / "missing.sqlite3", create=False)
    assert not (tmp_path / "missing.sqlite3").exists()
    with pytest.raises(JournalError, match=r"not a regular file \(a directory\), not a journal"):
        Journal.open(tmp_path)
    # No silent mkdir (as root, anywhere): a missing folder is the install's to make.
    with pytest.raises(JournalError, match=r"the folder .*/var/lib does not exist; create it"):
        Journal.open(tmp_path / "var" / "lib" / "j.sqlite3")
    assert not (tmp_path / "var").exists()


def test_migration_hook_upgrades_an_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        journal.append(game_id, Riichi(seat=2), T0 + 1)

    def to_next(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE games ADD COLUMN note TEXT")

    newest = journal_mod.schema_version()
    monkeypatch.setitem(journal_mod.MIGRATIONS, newest + 1, to_next)
    with Journal.open(path) as journal:
        assert journal.query("PRAGMA user_version") == [(newest + 1,)]
        assert journal.events(game_id) == [Riichi(seat=2)]
        columns = [row[1] for row in journal.query("PRAGMA table_info(games)")]
        assert "note" in columns


def test_a_failing_migration_leaves_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    Journal.open(path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE extra (x)")
        conn.execute("ALTER TABLE no_such_table ADD COLUMN y")

    newest = journal_mod.schema_version()
    monkeypatch.setitem(journal_mod.MIGRATIONS, newest + 1, broken)
    with pytest.raises(JournalError, match=f"schema version {newest + 1} failed"):
        Journal.open(path)
    monkeypatch.delitem(journal_mod.MIGRATIONS, newest + 1)
    with Journal.open(path) as journal:
        assert journal.query("PRAGMA user_version") == [(newest,)]
        assert journal.query("SELECT name FROM sqlite_master WHERE name = 'extra'") == []


def test_a_version_1_file_gains_the_link_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    with monkeypatch.context() as patch:
        patch.setattr(journal_schema, "MIGRATIONS", {1: journal_mod.MIGRATIONS[1]})
        with Journal.open(path) as journal:
            game_id = journal.start_game("t1", "kenko", None, T0)
            journal.append(game_id, Riichi(seat=2), T0 + 1)
            assert journal.query("PRAGMA user_version") == [(1,)]
    with Journal.open(path) as journal:
        assert journal.query("PRAGMA user_version") == [(max(journal_mod.MIGRATIONS),)]
        assert journal.link_position() is None
        assert journal.events(game_id) == [Riichi(seat=2)]


def test_a_version_2_file_gains_the_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "j.sqlite3"
    with monkeypatch.context() as patch:
        old = {v: journal_mod.MIGRATIONS[v] for v in (1, 2)}
        patch.setattr(journal_schema, "MIGRATIONS", old)
        with Journal.open(path) as journal:
            game_id = journal.start_game("t1", "kenko", None, T0)
    with Journal.open(path) as journal:
        assert journal.notes(game_id) == []
        journal.note(game_id, T0 + 1, 2, "staff_pin_failed", {"action": "chombo"})
        journal.note(None, T0 + 2, None, "staff_action", {"action": "new_game"})
        assert [n.as_dict() for n in journal.notes(game_id)] == [
            {"at": T0 + 1, "seat": 2, "kind": "staff_pin_failed", "action": "chombo"}
        ]
        assert len(journal.notes()) == 2


def test_the_link_position_is_stored_with_the_event(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        journal.append(game_id, Riichi(seat=2), T0 + 1, position=LinkPosition(0xBEEF, 41))
        assert journal.link_position() == (0xBEEF, 41)
        journal.append(game_id, Riichi(seat=3), T0 + 2)  # no position: the old one stays
        journal.set_link_position(LinkPosition(0xCAFE, 3))
    with Journal.open(path) as journal:
        assert journal.link_position() == (0xCAFE, 3)


def test_a_refused_append_does_not_move_the_link_position(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        journal.append(game_id, Riichi(seat=2), T0 + 1, position=LinkPosition(7, 1))
        journal.abandon_game(game_id, T0 + 2)
        with pytest.raises(JournalError, match="abandoned"):
            journal.append(game_id, Riichi(seat=3), T0 + 3, position=LinkPosition(7, 2))
        assert journal.link_position() == (7, 1)


def test_a_batch_commits_its_writes_together(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        with journal.batch():
            game_id = journal.start_game("t1", "kenko", None, T0)
            journal.append(game_id, Riichi(seat=2), T0 + 1)
            with journal.batch():  # nested: joins the outer one
                journal.append(game_id, Riichi(seat=3), T0 + 2)
            journal.set_link_position(LinkPosition(9, 4))
            # Another connection sees none of it before the batch ends.
            with sqlite3.connect(path) as other:
                assert other.execute("SELECT count(*) FROM games").fetchone() == (0,)
        with sqlite3.connect(path) as other:
            assert other.execute("SELECT count(*) FROM events").fetchone() == (2,)
        assert journal.link_position() == (9, 4)


def test_a_batch_that_raises_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        journal.set_link_position(LinkPosition(9, 1))
        with pytest.raises(RuntimeError, match="crash"), journal.batch():
            journal.append(game_id, Riichi(seat=2), T0 + 1)
            journal.set_link_position(LinkPosition(9, 2))
            raise RuntimeError("crash mid-event")
        assert journal.events(game_id) == []
        assert journal.link_position() == (9, 1)
        journal.append(game_id, Riichi(seat=1), T0 + 3)  # and the journal goes on
        assert journal.events(game_id) == [Riichi(seat=1)]


def test_a_failed_write_in_a_batch_keeps_the_writes_before_it(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        with journal.batch():
            journal.append(game_id, Riichi(seat=2), T0 + 1)
            with pytest.raises(ValueError, match="ranking"):
                journal.append(game_id, Riichi(seat=3), T0 + 2, final={"scores": [1]})
        assert journal.events(game_id) == [Riichi(seat=2)]
        assert journal.game(game_id).status == "playing"


def test_an_empty_batch_opens_no_transaction(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        # A writer elsewhere is not blocked: nothing was begun.
        with journal.batch(), sqlite3.connect(path, timeout=0) as other:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
        assert journal.link_position() is None


def test_an_unreadable_event_row_is_named(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        journal.append(game_id, Riichi(seat=2), T0 + 1)
    conn = sqlite3.connect(path)
    conn.execute('UPDATE events SET event = \'{"type":"bogus"}\'')
    conn.commit()
    conn.close()
    with Journal.open(path) as journal, pytest.raises(JournalError, match="event #1"):
        resume(journal)


# --- a real crash -------------------------------------------------------------------

# The writer runs the same game generator as the checks below (its source is pasted in,
# so the child does not import pytest), so both sides agree on every event.
WRITER = (
    textwrap.dedent(
        """
        from __future__ import annotations
        import random, sys
        from tablectl.journal import Journal
        from tablectl.rules.core import step
        from tablectl.rules.events import parse_event
        from tablectl.rules.loader import load_rules
        from tablectl.rules.refusal import Refusal
        from tablectl.rules.state import HandSettled, initial_state
        from tests.helpers import random_event
        """
    )
    + inspect.getsource(accepted_events)
    + textwrap.dedent(
        """
        path, preset, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
        rules = load_rules(preset)
        journal = Journal.open(path, preallocate_log=sys.argv[4] == "1")
        number = 0
        while True:
            game = accepted_events(rules, seed + number)
            game_id = journal.start_game("t1", preset, None, 0.0, game_id=f"g{number:03d}")
            for seq, (event, state, _) in enumerate(game, start=1):
                final = state.final.as_dict() if state.final else None
                journal.append(game_id, event, float(seq), final=final)
                # Acknowledge only after append returned: this event must survive the kill.
                print(game_id, seq, flush=True)
            number += 1
        """
    )
)


def _writer(path: Path, preset: str, seed: int, preallocate: bool = False) -> subprocess.Popen[str]:
    """Start the journalling child process; it writes games until it is killed (with
    ``preallocate``, into a write-ahead log padded as the daemon's is)."""
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), preset, str(seed), str(int(preallocate))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=path.parent,
    )


def _check_consistent_prefix(path: Path, preset: str, seed: int) -> int:
    """Every game in the file is a prefix of what the writer would write, each resumes
    to the live state; returns the number of events found."""
    rules = load_rules(preset)
    total = 0
    with Journal.open(path) as journal:
        games = journal.games()
        for number, row in enumerate(games):
            assert row.game_id == f"g{number:03d}"
            expected = accepted_events(rules, seed + number)
            entries = journal.entries(row.game_id)
            assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
            assert [e.event for e in entries] == [ev for ev, _, _ in expected[: len(entries)]]
            assert row.finished == (len(entries) == len(expected))
            total += len(entries)
        resumed = resume(journal)
        if games and not games[-1].finished:
            assert resumed is not None
            count = games[-1].event_count
            live = expected[count - 1][1] if count else initial_state(rules)
            assert resumed.state == live
        else:
            assert resumed is None
    return total


@pytest.mark.parametrize("preallocate", [False, True], ids=["growing-log", "preallocated-log"])
@pytest.mark.parametrize("run", range(3))
def test_kill_9_mid_game_leaves_a_consistent_prefix(
    tmp_path: Path, run: int, preallocate: bool
) -> None:
    rng = random.Random(run)
    path = tmp_path / "j.sqlite3"
    preset, seed = rng.choice(["kenko", "jboy-sanma", "mleague"]), rng.randrange(10_000)
    kill_after = rng.randint(1, 80)
    proc = _writer(path, preset, seed, preallocate)
    assert proc.stdout is not None
    acked = 0
    try:
        for _ in range(kill_after):
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            acked += 1
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    # Every acknowledged event survived, and no torn event is visible.
    assert _check_consistent_prefix(path, preset, seed) >= acked


def test_a_torn_wal_tail_loses_only_whole_transactions(tmp_path: Path) -> None:
    """Cut the write-ahead log mid-frame, as a power cut during a write would."""
    path = tmp_path / "j.sqlite3"
    proc = _writer(path, "kenko", 77)
    assert proc.stdout is not None
    for _ in range(40):
        assert proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    wal = Path(f"{path}-wal")
    size = wal.stat().st_size
    assert size > 0, "the killed writer leaves its WAL behind"
    with wal.open("r+b") as handle:
        handle.truncate(size - 1500)  # through the middle of the last frames
    assert _check_consistent_prefix(path, "kenko", 77) > 0


def _log_end(wal: Path) -> int:
    """Where the frames of the write-ahead log's current round end: past them come zeros
    (a preallocated log) or frames of an older round, whose salts differ."""
    data = wal.read_bytes()
    page = int.from_bytes(data[8:12], "big")
    salts = data[16:24]
    end = WAL_HEADER
    while end + WAL_FRAME_HEADER + page <= len(data) and data[end + 8 : end + 16] == salts:
        end += WAL_FRAME_HEADER + page
    return end


def test_a_preallocated_log_keeps_its_size_and_its_frames(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with Journal.open(path, preallocate_log=True) as journal:
        wal = Path(f"{path}-wal")
        size = wal.stat().st_size
        pages = journal.query("PRAGMA wal_autocheckpoint")[0][0]
        assert size >= WAL_HEADER + pages * (WAL_FRAME_HEADER + 4096)
        journal.start_game("t1", "kenko", None, 0.0, game_id="g")
        # Past the automatic checkpoint: the log wraps instead of growing.
        for n in range(2 * pages):
            journal.set_link_position(LinkPosition(1, n % 256), flow=f"{n}")
        assert wal.stat().st_size == size
    with Journal.open(path, preallocate_log=True) as journal:
        assert journal.link_position() == LinkPosition(1, (2 * pages - 1) % 256)
        assert journal.link_flow() == f"{2 * pages - 1}"


def test_a_torn_frame_in_a_preallocated_log_loses_only_whole_transactions(
    tmp_path: Path,
) -> None:
    """A power cut while a frame overwrote the padding: its end is still zeros."""
    path = tmp_path / "j.sqlite3"
    proc = _writer(path, "kenko", 78, preallocate=True)
    assert proc.stdout is not None
    for _ in range(40):
        assert proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    wal = Path(f"{path}-wal")
    end = _log_end(wal)
    assert WAL_HEADER < end < wal.stat().st_size, "frames, then the padding"
    with wal.open("r+b") as handle:
        handle.seek(end - 1500)  # the last frame's second half, as if never written
        handle.write(bytes(1500))
    assert _check_consistent_prefix(path, "kenko", 78) > 0


def test_an_undo_of_the_game_ending_hand_reopens_the_game_and_its_record_follows(
    tmp_path: Path,
) -> None:
    from tablectl.records import list_records
    from tablectl.rules.events import Undo

    rules = load_rules("jboy")
    big = Tsumo(hand=Hand(seat=0, yakuman=3))  # every other seat busts
    small = Tsumo(hand=Hand(seat=0, han=2, fu=30))
    with Journal.open(tmp_path / "j.sqlite3") as journal:
        game_id = journal.start_game("t1", "jboy", None, T0)
        state, _ = step(initial_state(rules), big)
        assert state.finished and state.final is not None
        journal.append(game_id, big, T0 + 1, final=state.final.as_dict())
        assert journal.game(game_id).status == "finished"
        assert [r.game_id for r in list_records(journal)] == [game_id]
        journal.append(game_id, Undo(), T0 + 2)
        assert journal.game(game_id).status == "playing"
        assert list_records(journal) == []
        assert resume(journal).state.scores == (25000,) * 4  # type: ignore[union-attr]
        journal.append(game_id, small, T0 + 3)
        journal.append(game_id, Undo(), T0 + 4)
        journal.append(game_id, big, T0 + 5, final=state.final.as_dict())
        records = list_records(journal)
        assert [r.scores for r in records] == [state.final.scores]
        exported = export_game(journal, game_id).splitlines()
    types = [json.loads(line)["type"] for line in exported]
    assert types == ["start", "tsumo", "undo", "tsumo", "undo", "tsumo"]
    assert replay(exported).as_dict()["final"] == state.final.as_dict()


def _journal_with_a_game(path: Path) -> str:
    with Journal.open(path) as journal:
        game_id = journal.start_game("t1", "kenko", None, T0)
        for seat in range(4):
            journal.append(game_id, Riichi(seat=seat), T0 + seat)
    return game_id


def test_a_damaged_journal_is_refused_at_start_naming_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    _journal_with_a_game(path)
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) >= 3 * page
    data[page : 2 * page] = b"\xff" * page  # garbage in the middle: a whole page
    path.write_bytes(bytes(data))
    with pytest.raises(JournalError, match="damaged|not a journal") as caught:
        Journal.open(path)
    assert str(caught.value).startswith(str(path))
    truncated = tmp_path / "t.sqlite3"
    truncated.write_bytes(bytes(data[: page + 10]))
    with pytest.raises(JournalError):
        Journal.open(truncated)


def test_a_folder_the_daemon_cannot_write_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root writes anywhere, so the check is shown with os.access saying no.
    monkeypatch.setattr(journal_file.os, "access", lambda path, mode: False)
    with pytest.raises(JournalError, match="is not writable by this user; fix its owner or mode"):
        Journal.open(tmp_path / "j.sqlite3")


def test_reading_commands_never_write_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    game_id = _journal_with_a_game(path)
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()}
    with Journal.open(path, readonly=True) as journal:
        assert journal.game(game_id).event_count == 4
        export_game(journal, game_id)
        with pytest.raises(JournalError):
            journal.note(game_id, T0, None, "x", {})  # a write is refused, not done
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()}
    assert after == before


def test_a_version_1_journal_is_read_without_being_upgraded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    with monkeypatch.context() as patch:
        patch.setattr(journal_schema, "MIGRATIONS", {1: journal_mod.MIGRATIONS[1]})
        game_id = _journal_with_a_game(path)
    with Journal.open(path, readonly=True) as journal:
        assert journal.query("PRAGMA user_version") == [(1,)]
        assert journal.notes(game_id) == []
        assert len(journal.events(game_id)) == 4


def test_two_daemons_cannot_hold_one_journal(tmp_path: Path) -> None:
    from tablectl.journal import JournalLock

    path = tmp_path / "j.sqlite3"
    first = JournalLock(path).acquire()
    try:
        with pytest.raises(JournalError, match=rf"another tablectl \(pid {os.getpid()}\)"):
            JournalLock(path).acquire()
    finally:
        first.release()
    JournalLock(path).acquire().release()  # free again once the first let go
