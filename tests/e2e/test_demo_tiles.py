"""``tablectl demo --tiles``: a table that reads every tile; the live view shows every
seat's tiles from the daemon's tile state (docs/tiles.md, "The daemon")."""

from __future__ import annotations

import io
from pathlib import Path

from tablectl.demo import run_demo, tile_view
from tests.tiles.kit import Table


class Terminal(io.StringIO):
    """Output that says it is a terminal: the demo draws its live view there."""

    def isatty(self) -> bool:
        return True


def test_the_tile_view_shows_hands_melds_and_ponds() -> None:
    table = Table("tenhou")
    table.start(hands={0: "123m 406p 789s 1122z", 1: "55z 123m 456p 789s 11s"}, draws=["5z"])
    table.take(0)
    table.discard(0, "5z")
    table.call(1, "pon", 0, "55z")
    view = tile_view(table.state).splitlines()
    assert view[0].startswith("tiles (daemon):")
    assert view[1] == "E 0  123m 406p 789s 1122z |  | 5z*"
    assert view[2].startswith("S 1  123m 456p 11789s | [555z] | ")
    assert len(view) == 5


async def test_demo_with_tiles_plays_a_scored_game_and_shows_the_tiles(tmp_path: Path) -> None:
    out = Terminal()
    (result,) = await run_demo(
        "sanma-free", 3, 1, fast=True, as_json=False, journal=tmp_path / "j.sqlite3",
        out=out, tiles=True,
    )  # fmt: skip
    assert result["final"]["reason"]
    text = out.getvalue()
    assert "tiles (daemon):  hand | melds | pond" in text
    assert "north x" in text  # sanma-free pulls norths
