"""Presets load; broken rules files fail at load with a message naming file, key and limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablectl.rules.loader import RulesConfigError, load_rules, preset_names
from tablectl.rules.options import as_dict

SIX = ("ariari", "jboy", "jboy-sanma", "kenko", "sanma-free", "kantan")
STANDARD = ("tenhou", "mleague", "wrc", "ema")


def test_every_required_preset_ships() -> None:
    assert set(SIX + STANDARD) <= set(preset_names())


@pytest.mark.parametrize("name", SIX + STANDARD)
def test_preset_loads_and_names_itself(name: str) -> None:
    rules = load_rules(name)
    assert rules.name == name
    assert rules.description
    assert as_dict(rules)["game"]["players"] in (3, 4)


def test_extends_overrides_only_what_differs() -> None:
    jboy, sanma = load_rules("jboy"), load_rules("jboy-sanma")
    assert sanma.players == 3 and sanma.game.start_points == 35000
    assert sanma.scoring.honba_ron == jboy.scoring.honba_ron == 1500
    assert sanma.penalties == jboy.penalties


def test_parlor_file_extends_a_preset(tmp_path: Path) -> None:
    path = tmp_path / "myparlor.toml"
    path.write_text('extends = "kenko"\n[game]\ntime_limit_minutes = 60\n')
    rules = load_rules(str(path))
    assert rules.name == "myparlor"
    assert rules.game.time_limit_minutes == 60
    assert rules.game.bust == "never"


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("[game]\nplayerz = 4\n", ["[game]", "playerz", "did you mean 'players'"]),
        ("[gaem]\nplayers = 4\n", ["unknown key 'gaem'", "did you mean 'game'"]),
        ("[game]\nplayers = 5\n", ["[game] players", "allowed: 3, 4"]),
        ('[game]\nplayers = "four"\n', ["[game] players", "must be an integer"]),
        ("[game]\nstart_points = -1\n", ["start_points", "at least 0"]),
        ('[flow]\ndealer_repeat = "always"\n', ["dealer_repeat", "'win_or_tenpai'"]),
        (
            '[flow]\nabortive_draws = ["nine_terminals", "five_winds"]\n',
            ["abortive_draws[1]", "five_winds", "'four_winds'"],
        ),
        ('[scoring]\nkiriage = "yes"\n', ["kiriage", "true or false"]),
        ("[game]\numa = [10, -10]\n", ["uma has 2 entries", "one per player"]),
        ("[scoring]\ntenpai_table = [[3000, 1000]]\n", ["tenpai_table needs 3 rows"]),
        ("[game]\nplayers = 4\n[wall]\nnorth_pulls = true\n", ["north_pulls", "players = 3"]),
        (
            'extends = "sanma-free"\n[tiles]\nfuriten = false\n',
            ["furiten_at_draw = 'chombo'", "furiten = false"],
        ),
        ('extends = "kenk"\n', ["unknown preset 'kenk'", "did you mean 'kenko'"]),
        ("[game\nplayers = 4\n", ["not valid TOML"]),
    ],
)
def test_broken_rules_file_names_the_problem(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(RulesConfigError) as info:
        load_rules(str(path))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    if "unknown preset" not in message:
        assert str(path) in message


def test_extends_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(RulesConfigError, match="loops back"):
        load_rules(str(tmp_path / "a.toml"))


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(RulesConfigError, match="known presets: ariari"):
        load_rules("nosuchrules")


def test_every_ambiguous_reading_is_commented_in_its_preset() -> None:
    from importlib import resources

    folder = resources.files("tablectl.rules.presets")
    for name in SIX:
        text = folder.joinpath(f"{name}.toml").read_text("utf-8")
        if name != "ariari":
            assert "(reading)" in text, name
        assert text.lstrip().startswith("#"), name
