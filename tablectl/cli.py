"""The ``tablectl`` command line."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from tablectl import __version__
from tablectl.replay import ReplayFileError, replay
from tablectl.rules.loader import RulesConfigError, load_rules, preset_names
from tablectl.rules.options import SECTIONS, as_dict

EXIT_OK = 0
EXIT_USAGE = 2

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    """Register a sub-command implementation under ``name``."""

    def register(func: Command) -> Command:
        _COMMANDS[name] = func
        return func

    return register


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return '"none"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@command("rules-list")
def _rules_list(args: argparse.Namespace) -> int:
    for name in preset_names():
        rules = load_rules(name)
        print(f"{name:<12} {rules.players}p  {rules.description}")
    return EXIT_OK


@command("rules-show")
def _rules_show(args: argparse.Namespace) -> int:
    rules = load_rules(args.name)
    if args.json:
        print(json.dumps(as_dict(rules), indent=2, ensure_ascii=False))
        return EXIT_OK
    resolved = as_dict(rules)
    print(f"# {rules.name}: {rules.description}")
    print("# every value resolved (presets extended, defaults filled in)")
    for section, cls in SECTIONS.items():
        print(f"\n[{section}]")
        for f in fields(cls):
            value = resolved[section][f.name]
            doc = f.metadata.get("doc", "")
            if value is None:
                print(f"# {f.name} is not set  # {doc}")
            else:
                print(f"{f.name} = {_toml_value(value)}  # {doc}")
    return EXIT_OK


@command("replay")
def _replay(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        with path.open(encoding="utf-8") as handle:
            result = replay(handle, args.rules)
    except OSError as exc:
        print(f"tablectl replay: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except UnicodeDecodeError:
        print(f"tablectl replay: {path} is not UTF-8 text", file=sys.stderr)
        return EXIT_USAGE
    except ReplayFileError as exc:
        print(f"tablectl replay: {path}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(result.as_dict(), ensure_ascii=False))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(
        prog="tablectl", description="Controller for Japanese riichi-mahjong automatic tables."
    )
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p_replay = sub.add_parser("replay", help="replay a JSON Lines event file through the rules")
    p_replay.add_argument("file", help="JSON Lines file, one event per line")
    p_replay.add_argument("--rules", help="preset name or rules file (overrides a start line)")
    p_replay.set_defaults(handler="replay")

    p_rules = sub.add_parser("rules", help="list and show the house rule presets")
    rules_sub = p_rules.add_subparsers(dest="rules_command", required=True, metavar="ACTION")
    rules_sub.add_parser("list", help="the shipped presets").set_defaults(handler="rules-list")
    p_show = rules_sub.add_parser("show", help="every resolved value of a preset or file")
    p_show.add_argument("name", help="preset name or path to a rules TOML file")
    p_show.add_argument("--json", action="store_true", help="print JSON instead of TOML")
    p_show.set_defaults(handler="rules-show")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tablectl`` console script."""
    # Behave like a Unix tool when piped into `head`.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = build_parser().parse_args(argv)
    try:
        return _COMMANDS[args.handler](args)
    except RulesConfigError as exc:
        print(f"tablectl: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
