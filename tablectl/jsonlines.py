"""JSON Lines with comments: the format of replay files and simulator scenarios.

One JSON value per line; blank lines and lines starting with ``#`` are skipped; line
numbers count every line from 1, so an error can name the line a person sees.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import IO, Any, NamedTuple


class JsonLine(NamedTuple):
    """One decoded line: its number, its text (stripped) and its value."""

    number: int
    text: str
    value: Any


#: Longest line read (characters): an event is a few hundred; anything longer is not ours,
#: and the cap keeps a file with no newlines (``/dev/zero``) from filling the memory.
MAX_LINE = 64 * 1024


class JsonLineError(ValueError):
    """A line that is not valid JSON; ``number`` is its line number, ``reason`` why."""

    def __init__(self, number: int, reason: str) -> None:
        super().__init__(f"line {number}: {reason}")
        self.number = number
        self.reason = reason


def json_lines(lines: Iterable[str]) -> Iterator[JsonLine]:
    """The decoded lines of ``lines``, skipping blank and ``#`` lines.

    Raises :class:`JsonLineError` at the first line that is not valid JSON.
    """
    for number, raw in enumerate(lines, start=1):
        if len(raw) > MAX_LINE:
            raise JsonLineError(number, f"longer than {MAX_LINE} characters")
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise JsonLineError(number, f"not valid JSON: {exc.msg}") from exc
        except RecursionError:
            raise JsonLineError(number, "not valid JSON: nested too deeply") from None
        except ValueError:  # Python's cap on the digits of an integer
            raise JsonLineError(
                number, "not valid JSON: an integer of thousands of digits"
            ) from None
        yield JsonLine(number, text, value)


def bounded_lines(handle: IO[str]) -> Iterator[str]:
    """The lines of ``handle``, each read with a cap of :data:`MAX_LINE` + 1 characters, so
    that a file without newlines is refused at its first line rather than read whole."""
    while True:
        line = handle.readline(MAX_LINE + 1)
        if not line:
            return
        yield line
