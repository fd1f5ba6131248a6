"""tenhou.net's wall and dice, rebuilt from the shuffle seed an mjlog keeps.

An mjlog's ``<SHUFFLE seed="mt19937ar-sha512-n288-base64,...">`` holds the seed of the
whole game.  The algorithm (published by tenhou.net in 2022, implemented in C++ by
mjx-project/tenhou-wall-reproducer, MIT; written again here in pure Python from that
description):

1. the base64 after the comma decodes to 2496 bytes, 624 little-endian 32-bit words, the
   key of MT19937's ``init_by_array``;
2. per hand, in order, the same generator gives 288 words (1152 bytes, little-endian);
   nine SHA-512 digests of its 128-byte blocks give 576 bytes, 144 words ``rnd``;
3. the wall starts as ids 0..135; for ``i`` in 0..134 ``wall[i]`` swaps with
   ``wall[i + rnd[i] % (136 - i)]``;
4. the dice are ``rnd[135] % 6 + 1`` and ``rnd[136] % 6 + 1``.

The resulting array is in tenhou's dealing order, whatever the dice say (the positions
below were checked against every hand of the corpus in tests/data/tenhou):

- the deal takes tiles from the top end: the dealer ``wall[135..132]``, the next seat
  ``wall[131..128]`` and so on for three rounds of four, then one tile each from
  ``wall[87]`` (the dealer) down to ``wall[84]``;
- live draws are ``wall[83]``, ``wall[82]``, ... downwards;
- the dora indicator is ``wall[5]``, the kan dora indicators ``wall[7]``, ``[9]``,
  ``[11]``, ``[13]``; the ura indicators ``wall[4]``, ``[6]``, ``[8]``, ``[10]``, ``[12]``;
- the replacement tiles for kans 1..4 are ``wall[1]``, ``[0]``, ``[3]``, ``[2]``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

__all__ = [
    "SEED_PREFIX",
    "TenhouWall",
    "WallSeedError",
    "dora_position",
    "haipai_positions",
    "live_draw_position",
    "rinshan_position",
    "ura_position",
    "walls",
]

#: The only seed kind tenhou.net has written since 2009.
SEED_PREFIX = "mt19937ar-sha512-n288-base64,"
TILES = 136
#: Live draws: the 136 tiles less the 14 of the dead wall and the 52 dealt.
LIVE_DRAWS = TILES - 14 - 52

_N = 624
_KEY_BYTES = _N * 4
_WORDS_PER_HAND = 288
_RINSHAN = (1, 0, 3, 2)


class WallSeedError(ValueError):
    """A shuffle seed that is not tenhou.net's ``mt19937ar-sha512-n288-base64`` kind."""


@dataclass(frozen=True, slots=True)
class TenhouWall:
    """One hand's wall in tenhou's dealing order (tile ids 0..135) and its two dice."""

    tiles: tuple[int, ...]
    dice: tuple[int, int]


class _MT19937:
    """The reference MT19937 (mt19937ar.c): ``init_by_array`` and ``genrand_int32``."""

    def __init__(self, key: tuple[int, ...]) -> None:
        mt = [0] * _N
        mt[0] = 19650218
        for i in range(1, _N):
            mt[i] = (1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF
        i, j = 1, 0
        for _ in range(max(_N, len(key))):
            mixed = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j
            mt[i] = mixed & 0xFFFFFFFF
            i, j = i + 1, j + 1
            if i >= _N:
                mt[0], i = mt[_N - 1], 1
            if j >= len(key):
                j = 0
        for _ in range(_N - 1):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & 0xFFFFFFFF
            i += 1
            if i >= _N:
                mt[0], i = mt[_N - 1], 1
        mt[0] = 0x80000000
        self._mt = mt
        self._index = _N

    def _twist(self) -> None:
        mt = self._mt
        for k in range(_N):
            y = (mt[k] & 0x80000000) | (mt[(k + 1) % _N] & 0x7FFFFFFF)
            mt[k] = mt[(k + 397) % _N] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        self._index = 0

    def next_word(self) -> int:
        """The next 32-bit output (``genrand_int32``)."""
        if self._index >= _N:
            self._twist()
        y = self._mt[self._index]
        self._index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)


def _key(seed: str) -> tuple[int, ...]:
    text = seed.removeprefix(SEED_PREFIX)
    if "," in text:
        raise WallSeedError(f"shuffle seed of unknown kind {seed.split(',', 1)[0]!r}")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WallSeedError(f"shuffle seed is not base64: {exc}") from None
    if len(raw) < _KEY_BYTES:
        raise WallSeedError(f"shuffle seed has {len(raw)} bytes, needs {_KEY_BYTES}")
    return struct.unpack(f"<{_N}I", raw[:_KEY_BYTES])


def walls(seed: str, hands: int) -> list[TenhouWall]:
    """The walls and dice of a game's first ``hands`` hands from its shuffle seed (with
    or without the ``mt19937ar-sha512-n288-base64,`` prefix).

    Raises :class:`WallSeedError` for a seed that is not of that kind.
    """
    mt = _MT19937(_key(seed))
    out: list[TenhouWall] = []
    for _ in range(hands):
        src = struct.pack(f"<{_WORDS_PER_HAND}I", *(mt.next_word() for _ in range(288)))
        digest = b"".join(hashlib.sha512(src[k * 128 : (k + 1) * 128]).digest() for k in range(9))
        rnd = struct.unpack("<144I", digest)
        wall = list(range(TILES))
        for i in range(TILES - 1):
            j = i + rnd[i] % (TILES - i)
            wall[i], wall[j] = wall[j], wall[i]
        out.append(TenhouWall(tuple(wall), (rnd[135] % 6 + 1, rnd[136] % 6 + 1)))
    return out


def haipai_positions(offset: int) -> tuple[int, ...]:
    """The wall positions of the 13 tiles dealt to the seat ``offset`` places after the
    dealer (0 = the dealer), in dealing order."""
    if offset not in range(4):
        raise ValueError(f"seat offset {offset} is not 0..3")
    blocks = [TILES - 1 - 16 * rnd - 4 * offset - k for rnd in range(3) for k in range(4)]
    return (*blocks, 87 - offset)


def live_draw_position(n: int) -> int:
    """The wall position of the hand's ``n``-th live draw (0 = the dealer's first)."""
    if n not in range(LIVE_DRAWS):
        raise ValueError(f"live draw {n} is not 0..{LIVE_DRAWS - 1}")
    return 83 - n


def rinshan_position(n: int) -> int:
    """The wall position of the replacement tile of the hand's ``n``-th kan (0..3)."""
    return _RINSHAN[n]


def dora_position(n: int) -> int:
    """The wall position of the ``n``-th dora indicator (0 = the first, 1..4 the kan
    dora)."""
    if n not in range(5):
        raise ValueError(f"dora indicator {n} is not 0..4")
    return 5 + 2 * n


def ura_position(n: int) -> int:
    """The wall position of the ``n``-th ura dora indicator (0..4)."""
    if n not in range(5):
        raise ValueError(f"ura indicator {n} is not 0..4")
    return 4 + 2 * n
