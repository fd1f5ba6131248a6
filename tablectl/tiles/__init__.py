"""Tiles: what a table with tile readers knows about every tile (docs/tiles.md).

Pure like the rules core: no I/O, no clock, no randomness.  :mod:`.ids` names the tile
ids of the wire protocol and says which of them a preset's set makes red or gold;
:mod:`.hand` holds the shapes of a win and its value; :mod:`.scoring` scores a win with
the ``mahjong`` package.  This package does not import :mod:`.scoring`: only a table that
reads its tiles loads ``mahjong``.
"""
