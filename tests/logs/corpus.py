"""The real games of tests/data/tenhou (its README says where they come from)."""

from __future__ import annotations

import functools
from pathlib import Path

from tablectl.logs import LogGame, parse_mjlog, parse_tenhou6

CORPUS = Path(__file__).resolve().parent.parent / "data" / "tenhou"
MJLOGS = sorted((CORPUS / "mjlog").glob("*.mjlog"))
TENHOU6 = sorted((CORPUS / "tenhou6").glob("*.json"))
GAME_NAMES = [p.stem for p in MJLOGS]
TENHOU6_NAMES = [p.stem for p in TENHOU6]


@functools.cache
def mjlog_game(name: str) -> LogGame:
    """The corpus game ``name`` read from its mjlog."""
    return parse_mjlog((CORPUS / "mjlog" / f"{name}.mjlog").read_text(encoding="utf-8"))


@functools.cache
def tenhou6_game(name: str) -> LogGame:
    """The corpus game ``name`` read from its tenhou.net/6 JSON."""
    return parse_tenhou6((CORPUS / "tenhou6" / f"{name}.json").read_text(encoding="utf-8"))
