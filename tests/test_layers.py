"""The import layers hold (issue 27, docs/architecture.md "Layers"): no two modules of
tablectl/, firmware_bridge/ or hw_sim/ import each other, directly or round a longer circle;
the pure layers (the tile model, then the rules core above it) import nothing above them
and nothing with I/O, a clock or randomness; no module imports tests/ or bench/.

Read from the source with :mod:`ast`, nothing is imported: every import counts wherever it
stands (module level, inside a function, under ``if TYPE_CHECKING``), and so does
``importlib.import_module`` of a literal name, since a lazy import hides a circle without
breaking it."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tablectl", "firmware_bridge", "hw_sim")

#: The pure layers, bottom first: what a tile is, then the rules core that reads tiles.
#: Each may import itself and the layers below it, nothing else of the three packages.
PURE = ("tablectl.tiles", "tablectl.rules")
#: What the pure layers may import from outside: value types and algorithms only (no I/O,
#: clock, randomness, threads or event loop), and ``mahjong``, the scorer's package.
PURE_ALLOWED = frozenset(
    {
        "__future__",
        "collections",
        "collections.abc",
        "dataclasses",
        "difflib",
        "enum",
        "fractions",
        "functools",
        "itertools",
        "math",
        "reprlib",
        "types",
        "typing",
        "mahjong",
    }
)
#: The exceptions, each for one module: the preset loader reads its TOML files, and the
#: formal-tenpai module looks the scorer up by name (it loads ``mahjong``, so only a table
#: that reads tiles imports it).
PURE_EXCEPTIONS = {
    "tablectl.rules.loader": frozenset({"importlib.resources", "os", "pathlib", "stat", "tomllib"}),
    "tablectl.rules.tenpai": frozenset({"importlib"}),
}


@dataclass(frozen=True)
class Import:
    """One import statement (or ``importlib.import_module`` call) of a module."""

    target: str
    line: int
    #: The names of a ``from`` import (empty for ``import x`` and ``import_module``).
    names: tuple[str, ...] = ()


def module_name(path: Path, root: Path = ROOT) -> str:
    """``tablectl.rules.core`` for tablectl/rules/core.py, ``tablectl.rules`` for its
    ``__init__.py``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the three packages, by name."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            found[module_name(path, root)] = path
    return found


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of a relative ``from`` import in ``module``."""
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base.pop()
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports(module: str, path: Path) -> Iterator[Import]:
    """Every module ``module`` names in an import, anywhere in its source."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            yield Import(base, node.lineno, tuple(alias.name for alias in node.names))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield Import(node.args[0].value, node.lineno)


def targets(imp: Import, modules: dict[str, Path] | set[str]) -> list[str]:
    """The modules one import names: ``from package import name`` names ``package.name``
    when that is a module, and ``package`` (its ``__init__``) otherwise."""
    if not imp.names:
        return [imp.target]
    return [
        f"{imp.target}.{name}" if f"{imp.target}.{name}" in modules else imp.target
        for name in imp.names
    ]


def graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """Each module's imports of the others, with the line of the first one."""
    edges: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        out: dict[str, int] = {}
        for imp in imports(module, path):
            for target in targets(imp, modules):
                if target in modules and target != module:
                    out.setdefault(target, imp.line)
        edges[module] = out
    return edges


def cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for node in sorted(edges):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def describe(component: list[str], edges: dict[str, dict[str, int]]) -> str:
    """The imports inside one circle, with their lines, for the failure message."""
    inside = set(component)
    lines = [
        f"  {a} -> {b} (line {edges[a][b]})"
        for a in component
        for b in sorted(edges[a])
        if b in inside
    ]
    return "\n".join([" / ".join(component), *lines])


MODULES = sources()
EDGES = graph(MODULES)


def test_no_import_circles() -> None:
    found = cycles(EDGES)
    assert not found, "import circles:\n" + "\n".join(describe(c, EDGES) for c in found)


def _within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def pure_violations(modules: dict[str, Path]) -> list[str]:
    """Every import by a pure layer of something above it, or outside the allowed list."""
    wrong = []
    for module, path in modules.items():
        layer = next((i for i, p in enumerate(PURE) if _within(module, [p])), None)
        if layer is None:
            continue
        below = PURE[: layer + 1]
        allowed = PURE_ALLOWED | PURE_EXCEPTIONS.get(module, frozenset())
        for imp in imports(module, path):
            for target in targets(imp, modules):
                if _within(target, below):
                    continue
                full = [f"{imp.target}.{n}" for n in imp.names] or [target]
                outside = target.split(".")[0] not in PACKAGES
                if outside and (_within(target, allowed) or all(_within(f, allowed) for f in full)):
                    continue
                wrong.append(f"{module}:{imp.line} imports {target}")
    return sorted(set(wrong))


def test_the_pure_layers_import_nothing_above_them() -> None:
    wrong = pure_violations(MODULES)
    assert not wrong, "a pure layer reaches above itself:\n" + "\n".join(wrong)


def test_no_module_imports_the_tests_or_benches() -> None:
    wrong = [
        f"{module}:{imp.line} imports {imp.target}"
        for module, path in MODULES.items()
        for imp in imports(module, path)
        if imp.target.split(".")[0] in ("tests", "bench")
    ]
    assert not wrong, "\n".join(wrong)


# The checker itself, on made-up sources: each of these must be caught.
CASES = {
    "direct": ({"a": "import p.b", "b": "from p import a"}, [["p.a", "p.b"]]),
    "lazy": ({"a": "def f():\n    from p.b import x", "b": "import p.a"}, [["p.a", "p.b"]]),
    "typing": (
        {
            "a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import p.b",
            "b": "import p.a",
        },
        [["p.a", "p.b"]],
    ),
    "importlib": (
        {"a": "import importlib\nimportlib.import_module('p.b')", "b": "from . import a"},
        [["p.a", "p.b"]],
    ),
    "round": (
        {"a": "import p.b", "b": "import p.c", "c": "from .a import x"},
        [["p.a", "p.b", "p.c"]],
    ),
    "none": ({"a": "import p.b", "b": "import p.c", "c": "import os"}, []),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_checker_finds_circles(case: str, tmp_path: Path) -> None:
    files, expected = CASES[case]
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__init__.py").write_text("")
    for name, text in files.items():
        (tmp_path / "p" / f"{name}.py").write_text(text + "\n")
    modules = {
        ".".join(path.relative_to(tmp_path).with_suffix("").parts).removesuffix(".__init__"): path
        for path in sorted((tmp_path / "p").glob("*.py"))
    }
    assert cycles(graph(modules)) == expected


PURE_CASES = {
    "clean": ({"rules/a.py": "from tablectl.tiles import b\nimport dataclasses"}, []),
    "clock": ({"rules/a.py": "def f():\n    import time"}, ["tablectl.rules.a:2 imports time"]),
    "random": ({"rules/a.py": "from random import Random"}, ["tablectl.rules.a:1 imports random"]),
    "daemon": (
        {"rules/a.py": "from tablectl.table import Table"},
        ["tablectl.rules.a:1 imports tablectl.table"],
    ),
    "upward": (
        {"tiles/b.py": "from tablectl.rules.a import x"},
        ["tablectl.tiles.b:1 imports tablectl.rules.a"],
    ),
}


@pytest.mark.parametrize("case", sorted(PURE_CASES))
def test_the_checker_finds_impure_imports(case: str, tmp_path: Path) -> None:
    files, expected = PURE_CASES[case]
    base = {"__init__.py": "", "table.py": "", "rules/__init__.py": "", "rules/a.py": ""}
    base |= {"tiles/__init__.py": "", "tiles/b.py": ""}
    for name, text in (base | files).items():
        path = tmp_path / "tablectl" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    assert pure_violations(sources(tmp_path)) == expected
