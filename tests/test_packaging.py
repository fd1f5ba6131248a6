"""A plain install runs a table (issue 26): every third-party package the code imports is a
runtime dependency, or an extra whose command says so in one line; and the wheel that
``pip wheel .`` builds, installed into a fresh venv with no extras and no dev packages, plays
a game with tiles, runs the simulator, exports and replays the journal.

The fresh-venv test installs the runtime dependencies from the package registry, so it takes
as long as one venv plus one ``pip install`` (about half a minute here)."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tablectl", "firmware_bridge", "hw_sim")

# A package an extra provides may be imported only by these files, and the command that
# loads them answers its absence with one line naming the extra.
EXTRA_IMPORTERS = {
    "dashboard": {
        "tablectl/dashboard/web.py",
        "tablectl/dashboard/books_web.py",
        "tablectl/dashboard/server.py",
        "tablectl/dashboard/guard.py",
    },
    "postgres": {"tablectl/ledger/db.py", "tablectl/ledger/cli.py"},
}

# What the source copy leaves out: the .gitignore'd outputs and the developer's venv, so the
# wheel is built from what a clean clone holds and the checkout is not written to.
IGNORED = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "build-san",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "*.sqlite3",
    "*.db",
)


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project: dict[str, object] = tomllib.load(handle)["project"]
    return project


def _names(requirements: object) -> set[str]:
    assert isinstance(requirements, list)
    return {canonicalize_name(Requirement(text).name) for text in requirements}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module name -> the files (relative to the root) importing it, for every
    import in the shipped packages that is neither the standard library nor ours."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    top = module.partition(".")[0]
                    if top in sys.stdlib_module_names or top in PACKAGES:
                        continue
                    found.setdefault(top, set()).add(path.relative_to(ROOT).as_posix())
    return found


def test_every_import_is_a_dependency_or_a_named_extra() -> None:
    project = _project()
    runtime = _names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    distributions = importlib.metadata.packages_distributions()
    imports = _third_party_imports()
    assert "mahjong" in imports, "the scan found no import of mahjong: the scan is broken"
    for module, files in sorted(imports.items()):
        dists = {canonicalize_name(name) for name in distributions.get(module, [])}
        assert dists, f"{module} (imported by {sorted(files)}) is not installed in the dev venv"
        if dists & runtime:
            continue
        providers = [name for name in EXTRA_IMPORTERS if dists & _names(extras.get(name, []))]
        assert providers, (
            f"{module} (imported by {sorted(files)}) is in no runtime dependency: a plain "
            "pip install would stop with a traceback"
        )
        allowed = set().union(*(EXTRA_IMPORTERS[name] for name in providers))
        assert files <= allowed, (
            f"{module} comes only with the {providers} extra, but {sorted(files - allowed)} "
            "imports it too"
        )


def test_only_the_dashboard_and_postgres_are_extras() -> None:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    assert set(extras) == {"dev", "dashboard", "postgres"}
    assert _names(extras["dashboard"]) == {"aiohttp"}
    assert _names(extras["postgres"]) == {"psycopg"}


def test_ledger_on_postgresql_without_its_extra_says_so_in_one_line() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; from tablectl.cli import main; "
        "sys.exit(main(['ledger', 'close', '--day', '2026-11-26', '--db', 'postgresql://u@h/d']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 78
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'tablectl[postgres]'" in lines[0]


def test_dashboard_without_its_extra_says_so_in_one_line() -> None:
    # aiohttp blocked in sys.modules reads as not installed, in the dev venv that has it.
    code = (
        "import sys; sys.modules['aiohttp'] = None; from tablectl.cli import main; "
        "sys.exit(main(['dashboard', '--broker', 'mqtt://127.0.0.1:1']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    _assert_names_the_extra(done)


def _assert_names_the_extra(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "dashboard extra" in lines[0]
    assert "pip install 'tablectl[dashboard]'" in lines[0]


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` away from the checkout (``python -m`` would import the source tree
    from the working directory) and without the developer's venv in the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        argv, check=False, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )


def _ok(done: subprocess.CompletedProcess[str], what: str) -> str:
    assert done.returncode == 0, f"{what}: exit {done.returncode}\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, f"{what}:\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.timeout(900)  # one venv and one pip install from the registry, on a loaded CI box
def test_the_wheel_runs_a_table_in_a_fresh_venv(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=IGNORED)
    wheels = tmp_path / "wheels"
    _ok(
        _run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), "."],
            source,
        ),
        "pip wheel",
    )
    (wheel,) = wheels.glob("tablectl-*.whl")
    # The three packages and nothing else: no test tool (tests/storm.py) and no bench.
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.partition("/")[0] for name in archive.namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == set(PACKAGES)

    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", str(venv)], tmp_path), "python -m venv")
    bin_dir = venv / "bin"
    python = str(bin_dir / "python")
    _ok(_run([python, "-m", "pip", "install", "-q", str(wheel)], tmp_path), "pip install")

    # No dev package and no extra came along; the code runs from the venv, not the checkout.
    probe = (
        "import importlib.util as u, tablectl, hw_sim, firmware_bridge; "
        "print([m for m in ('aiohttp', 'pytest', 'jsonschema', 'selenium') if u.find_spec(m)]); "
        "print(tablectl.__file__, hw_sim.__file__, firmware_bridge.__file__)"
    )
    absent, where = _ok(_run([python, "-c", probe], tmp_path), "probe").splitlines()
    assert absent == "[]"
    assert all(Path(path).is_relative_to(venv) for path in where.split())

    tablectl = str(bin_dir / "tablectl")
    journal = tmp_path / "journal.sqlite3"
    demo = [tablectl, "demo", "--fast", "--json", "--tiles", "--rules", "tenhou"]
    out = _ok(_run([*demo, "--journal", str(journal)], tmp_path), "tablectl demo --tiles")
    games = [json.loads(line) for line in out.splitlines()]
    assert len(games) == 1
    assert games[0]["rules"] == "tenhou"
    assert games[0]["final"]["ranking"]

    for fmt in ("replay", "tenhou6", "mjai"):
        exported = tmp_path / f"game.{fmt}"
        export = [tablectl, "journal", "export", "--journal", str(journal), "--format", fmt]
        _ok(_run([*export, "-o", str(exported)], tmp_path), f"journal export --format {fmt}")
        assert exported.stat().st_size > 0
    replayed = _ok(_run([tablectl, "replay", str(tmp_path / "game.replay")], tmp_path), "replay")
    assert json.loads(replayed.splitlines()[-1])["final"] == games[0]["final"]

    helped = _ok(_run([python, "-m", "hw_sim", "serve", "--help"], tmp_path), "hw_sim --help")
    assert "--tcp" in helped

    _assert_names_the_extra(_run([tablectl, "dashboard"], tmp_path))
