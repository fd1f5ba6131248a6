"""The shape of the console flows (issue #27): a prompt is only ever shown through the
core's ``open``, every prompt's declaration names its handler, the stored flow is made of
the parts' own snapshots, and no flow grows back into one big class.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tablectl.console.prompts import PROMPTS, Prompt
from tablectl.rules.loader import load_rules
from tablectl.table import Table

PACKAGE = Path(__file__).resolve().parents[2] / "tablectl"
#: The core's methods that may set a console's ``prompt``: ``open`` (which checks the
#: phase), taking a prompt down, and the bookkeeping that puts back or clears what stood.
CORE_SETTERS = {"open", "close", "back_from_staff", "sweep_prompts", "clear_consoles", "restore"}


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        found: list[ast.expr] = []
        for target in node.targets:
            found += target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        return found
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def prompt_assignments(root: Path) -> list[str]:
    """Every assignment to an attribute ``prompt`` under ``root`` outside the core's
    :data:`CORE_SETTERS`, as ``file:line``."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        allowed: set[int] = set()
        if path.relative_to(root).as_posix() == "console/core.py":
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef) and node.name in CORE_SETTERS:
                    allowed |= {n.lineno for n in ast.walk(node) if hasattr(n, "lineno")}
        for node in ast.walk(tree):
            for target in _targets(node):
                attr = isinstance(target, ast.Attribute) and target.attr == "prompt"
                if attr and node.lineno not in allowed:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_a_prompt_is_shown_only_through_the_cores_open() -> None:
    assert prompt_assignments(PACKAGE) == []


def test_the_scan_finds_a_direct_assignment(tmp_path: Path) -> None:
    """What the issue found in entry.py and confirm.py before: the scan names each one."""
    (tmp_path / "console").mkdir()
    (tmp_path / "console" / "entry.py").write_text(
        'def f(c, d):\n    c.prompt = "HAN?"\n    c.prompt, c.typed = "FU?", ""\n'
        '    d.consoles[0].prompt += ""\n'
    )
    assert prompt_assignments(tmp_path) == [
        "console/entry.py:2",
        "console/entry.py:3",
        "console/entry.py:4",
    ]


def test_every_prompt_is_declared_with_its_handler() -> None:
    assert set(PROMPTS) == set(Prompt)
    for prompt, spec in PROMPTS.items():
        assert spec.name is prompt
        assert callable(spec.handler)


def test_the_stored_flow_is_the_parts_snapshots_each_key_once() -> None:
    table = Table(load_rules("tenhou"), post=lambda msg: None, now=lambda: 0.0)
    parts = [part.snapshot() for part in table.flows.stored()]
    keys = [key for part in parts for key in part]
    assert len(keys) == len(set(keys))
    assert list(table.flow_snapshot()) == keys


# (No class over 500 lines: tests/test_class_sizes.py, for all of tablectl/.)


def test_the_table_module_stays_small() -> None:
    assert len((PACKAGE / "table.py").read_text("utf-8").splitlines()) < 400
