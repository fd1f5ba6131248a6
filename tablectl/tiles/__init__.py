"""Tiles: what a tile is, below the rules core that reads them (docs/tiles.md).

Pure: no I/O, no clock, no randomness, and nothing above it: :mod:`.ids` names the tile ids
of the wire protocol and says which of them a preset's set makes red or gold; :mod:`.hand`
holds the shapes of a win and its value.  What the preset makes of tiles (shapes and
waits, formal tenpai, the tile tracker, furiten, the scorer) is the rules core's:
:mod:`tablectl.rules.tileshapes`, :mod:`~tablectl.rules.tenpai`,
:mod:`~tablectl.rules.tiletracker`, :mod:`~tablectl.rules.tilechecks` and
:mod:`~tablectl.rules.tilescoring`.
"""
