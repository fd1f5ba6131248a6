"""JSON Lines with comments: the format of replay files and simulator scenarios.

One JSON value per line; blank lines and lines starting with ``#`` are skipped; line
numbers count every line from 1, so an error can name the line a person sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple


class JsonLine(NamedTuple):
    """One decoded line: its number, its text (stripped) and its value."""

    number: int
    text: str
    value: Any


class JsonLineError(ValueError):
    """A line that is not valid JSON; ``number`` is its line number, ``error`` the cause."""

    def __init__(self, number: int, error: json.JSONDecodeError) -> None:
        super().__init__(f"line {number}: not valid JSON: {error.msg}")
        self.number = number
        self.error = error


def json_lines(lines: Iterable[str]) -> Iterator[JsonLine]:
    """The decoded lines of ``lines``, skipping blank and ``#`` lines.

    Raises :class:`JsonLineError` at the first line that is not valid JSON.
    """
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JsonLineError(number, exc) from exc
        yield JsonLine(number, text, value)
