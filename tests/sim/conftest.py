"""Simulator test fixtures: the bridge's fast link timings, its patient_link (no stall of a
loaded machine ends a session or a handshake) and its leak guard (a test that leaves a
task, an fd or a bridge thread behind fails)."""

from __future__ import annotations

from tests.bridge.conftest import fast_timing, no_leaks, patient_link

__all__ = ["fast_timing", "no_leaks", "patient_link"]
