"""Simulator test fixtures: the bridge's fast link timings and its leak guard (a test that
leaves a task, an fd or a bridge thread behind fails)."""

from __future__ import annotations

from tests.bridge.conftest import fast_timing, no_leaks

__all__ = ["fast_timing", "no_leaks"]
