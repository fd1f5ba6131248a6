"""The rules core: pure, synchronous and deterministic.

No I/O, clock or randomness lives in this package (preset files are read by
:mod:`tablectl.rules.loader`, which is the single exception and only reads TOML).
"""
