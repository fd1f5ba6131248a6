"""Copy a tenhou.net mjlog with its players' names replaced by fixed placeholders.

``python tests/data/tenhou/anonymise.py SRC.mjlog DEST.mjlog``: every ``n0`` .. ``n3``
attribute of the ``<UN>`` tags (the game's opening one and any a reconnection writes)
becomes "Aさん" .. "Dさん", URL-encoded byte by byte as tenhou writes names, the same names
the tenhou.net/6 JSON of the corpus carries.  Nothing else in the file changes: the
players' ranks and rates, the seed and every action stay as tenhou wrote them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PLACEHOLDERS = ("Aさん", "Bさん", "Cさん", "Dさん")
UN_TAG = re.compile(r"<UN\b[^>]*>")
NAME = re.compile(r'\bn([0-3])="[^"]*"')


def encoded(name: str) -> str:
    """``name`` as tenhou writes it in an mjlog: every UTF-8 byte as ``%XX``."""
    return "".join(f"%{b:02X}" for b in name.encode("utf-8"))


def anonymise(text: str) -> str:
    """The mjlog ``text`` with the seats' names replaced by :data:`PLACEHOLDERS`."""

    def tag(m: re.Match[str]) -> str:
        return NAME.sub(lambda n: f'n{n[1]}="{encoded(PLACEHOLDERS[int(n[1])])}"', m[0])

    return UN_TAG.sub(tag, text)


def main(argv: list[str]) -> int:
    """Command line: source and destination paths."""
    if len(argv) != 2:
        print("usage: anonymise.py SRC.mjlog DEST.mjlog", file=sys.stderr)
        return 2
    src, dest = (Path(a) for a in argv)
    dest.write_text(anonymise(src.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
