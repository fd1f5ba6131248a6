"""``tablectl journal export --format tenhou6|mjai`` on a journal written as the daemon
writes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tablectl.cli import main
from tablectl.export import export_text
from tablectl.journal import Journal
from tablectl.rules.core import step
from tablectl.rules.events import parse_event
from tablectl.rules.loader import load_rules
from tablectl.rules.state import initial_state
from tests.export.games import Game, generated
from tests.export.test_golden import EVENTS

T0 = 1_714_500_000.0
NAMES = ["Aoi", "Ben", "Chie", "Dan"]


def journal_game(journal: Journal, game: Game, names: list[str], *, game_id: str) -> None:
    """Journal ``game``'s events as the daemon does (the final with the last one)."""
    rules = load_rules(game.preset)
    journal.start_game("table-3", game.preset, names, T0, game_id=game_id)
    state = initial_state(rules)
    for index, raw in enumerate(game.events):
        event = parse_event(raw)
        state, _ = step(state, event)
        final = state.final.as_dict() if state.final else None
        journal.append(game_id, event, T0 + index, final=final)


@pytest.fixture(scope="module")
def games() -> dict[str, Game]:
    """A finished four-player game, a finished three-player one, one still playing."""
    return {
        "aaaa1111": generated("ariari", 21),
        "bbbb2222": generated("jboy-sanma", 41),
        "cccc3333": Game("unfinished", "tenhou", tuple(EVENTS[:5])),
    }


@pytest.fixture(scope="module")
def journal_path(tmp_path_factory: pytest.TempPathFactory, games: dict[str, Game]) -> Path:
    path = tmp_path_factory.mktemp("journal") / "journal.sqlite3"
    with Journal.open(path) as journal:
        journal_game(journal, games["aaaa1111"], NAMES, game_id="aaaa1111")
        journal_game(journal, games["bbbb2222"], NAMES[:3], game_id="bbbb2222")
        journal_game(journal, games["cccc3333"], NAMES, game_id="cccc3333")
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _expected(game: Game, fmt: str, names: list[str]) -> str:
    return export_text(fmt, load_rules(game.preset), game.parsed(), names, ("x", "y"))


def test_tenhou6_of_the_last_finished_game_by_default(
    journal_path: Path, games: dict[str, Game], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["journal", "export", "--format", "tenhou6", "--journal", str(journal_path)], capsys
    )
    assert code == 0, err
    log = json.loads(out)
    expected = json.loads(_expected(games["bbbb2222"], "tenhou6", NAMES[:3]))
    assert log["title"][0] == "table-3 jboy-sanma"
    assert {k: v for k, v in log.items() if k != "title"} == {
        k: v for k, v in expected.items() if k != "title"
    }
    assert log["name"] == [*NAMES[:3], ""]
    assert "三" in log["rule"]["disp"]


def test_mjai_of_a_game_named_by_prefix_to_a_file(
    journal_path: Path, games: dict[str, Game], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "game.mjson"
    code, out, err = run(
        ["journal", "export", "aaaa", "--format", "mjai", "--journal", str(journal_path),
         "-o", str(target)],
        capsys,
    )  # fmt: skip
    assert (code, out, err) == (0, "", "")
    assert target.read_text(encoding="utf-8") == _expected(games["aaaa1111"], "mjai", NAMES)


def test_a_game_in_progress_gives_the_hands_it_finished(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["journal", "export", "cccc", "--format", "tenhou6", "--journal", str(journal_path)],
        capsys,
    )
    assert code == 0, err
    assert json.loads(out)["log"] == [] and "sc" not in json.loads(out)


def test_the_replay_format_stays_the_default(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["journal", "export", "--journal", str(journal_path)], capsys)
    assert code == 0
    assert out.splitlines()[0] == '{"type":"start","rules":"tenhou"}'


@pytest.fixture(scope="module")
def odd_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished game without tiles (score keeping only) and a kantan game."""
    path = tmp_path_factory.mktemp("odd") / "journal.sqlite3"
    with Journal.open(path) as journal:
        journal.start_game("table-3", "kenko", None, T0, game_id="dddd4444")
        journal.append("dddd4444", parse_event({"type": "draw", "tenpai": []}), T0)
        journal.abandon_game("dddd4444", T0 + 1)
        journal.start_game("table-3", "kantan", None, T0 + 2, game_id="eeee5555")
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--journal", "{dir}/missing.sqlite3"],
            "tablectl journal export: {dir}/missing.sqlite3: no journal file there",
        ),
        (
            ["ffff", "--journal", "{journal}"],
            "tablectl journal export: {journal}: no game 'ffff' in the journal",
        ),
        (
            ["--journal", "{odd}"],
            "tablectl journal export: {odd}: the journal holds no finished game; name one",
        ),
        (
            ["dddd", "--journal", "{odd}"],
            "tablectl journal export: game dddd4444: hand 1 (E1): it was played without tile"
            " readers (no dice and wall layout); tenhou.net/6 and mjai logs need every tile",
        ),
        (
            ["eeee", "--journal", "{odd}"],
            "tablectl journal export: game eeee5555: kantan: own walls and calls on one's own"
            " turn (kantan) have no tenhou.net/6 form (its mjai log writes them, docs/tiles.md)",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    journal_path: Path,
    odd_journal: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    where = {"dir": str(tmp_path), "journal": str(journal_path), "odd": str(odd_journal)}
    argv = ["journal", "export", "--format", "tenhou6", *(a.format(**where) for a in args)]
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert err == message.format(**where) + "\n"


def test_an_unknown_format_is_refused_by_the_parser(
    journal_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["journal", "export", "--format", "tenhou5", "--journal", str(journal_path)]) == 2
    assert "invalid choice: 'tenhou5'" in capsys.readouterr().err
