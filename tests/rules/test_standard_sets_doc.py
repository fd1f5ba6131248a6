"""docs/rules.md lists each standard set's rules with the option that carries them; every
value written there must be the preset's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tablectl.rules.loader import load_rules
from tablectl.rules.options import as_dict

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
HEADING = re.compile(r"^### `([a-z-]+)`:", re.M)
VALUE = re.compile(r"`([a-z]+)\.([a-z_0-9]+) = ([^`]+)`")


def _sections() -> dict[str, str]:
    text = DOC.read_text("utf-8")
    marks = list(HEADING.finditer(text))
    out = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else text.index("## Refusal codes")
        out[mark.group(1)] = text[mark.end() : end]
    return out


def test_every_standard_set_is_listed() -> None:
    assert sorted(_sections()) == ["ema", "mleague", "tenhou", "wrc"]


@pytest.mark.parametrize("preset", ["tenhou", "mleague", "wrc", "ema"])
def test_listed_values_are_the_presets(preset: str) -> None:
    resolved = as_dict(load_rules(preset))
    found = VALUE.findall(_sections()[preset])
    assert len(found) >= 40
    for section, option, value in found:
        assert json.loads(value) == resolved[section][option], (section, option)
    rows = [line for line in _sections()[preset].splitlines() if line.startswith("| ")]
    assert all(line.rstrip().endswith("|") and line.count("|") == 4 for line in rows)
    assert not any(line.split("|")[3].strip() == "" for line in rows[1:])


def test_no_preset_says_not_expressible() -> None:
    folder = Path(__file__).resolve().parents[2] / "tablectl" / "rules" / "presets"
    for path in folder.glob("*.toml"):
        assert "not expressible" not in path.read_text("utf-8").lower(), path.name
