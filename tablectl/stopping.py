"""A stop signal held from a command's first line, for the daemon to stop cleanly on.

``tablectl run`` must answer SIGTERM (systemd's stop) with a clean exit 0 and a closed
journal at any moment, also in the second or so in which its modules load, before any
event loop exists to install a handler on. So the console script holds SIGTERM from its
first line (:func:`hold`, cheap: nothing here imports more than the standard library):
a signal that comes is remembered. The daemon forwards it, and any later one, to its
stop event (:func:`forwarded`); every other command :func:`release`\\ s it, and a signal
that came meanwhile acts then as it would have.

The signals stay caught by a plain Python handler for the daemon's whole life (not the
event loop's ``add_signal_handler``, which the loop removes again as it closes, leaving a
moment in which SIGTERM would kill the process after all).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

__all__ = ["EXIT_INTERRUPTED", "forwarded", "hold", "release", "requested"]

#: Stopped with Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


class _Held:
    """The process's one record of the held signals (signal handlers are per process)."""

    def __init__(self) -> None:
        #: Each held signal's handler before it was held, for :func:`release`.
        self.before: dict[int, Any] = {}
        self.requested: int | None = None
        self.forward: Callable[[int], object] | None = None


_state = _Held()


def _handle(signum: int, frame: FrameType | None) -> None:
    _state.requested = _state.requested or signum
    forward = _state.forward
    if forward is not None:
        # The loop may be closing as the signal lands; the stop is remembered either way.
        with contextlib.suppress(RuntimeError):
            forward(signum)


def hold(*signums: int) -> None:
    """From now on ``signums`` (default SIGTERM) are remembered instead of acting."""
    for signum in signums or (signal.SIGTERM,):
        before = signal.signal(signum, _handle)
        _state.before.setdefault(signum, before)
    # A daemon answers SIGTERM whatever signal mask it inherited; one that came while it
    # was blocked (before this first line) is delivered to the handler now.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_state.before))


def requested() -> int | None:
    """The first held signal that came, or None."""
    return _state.requested


@contextlib.contextmanager
def forwarded(stop: Callable[[int], object]) -> Iterator[None]:
    """While inside, a held signal calls ``stop(signum)``; one that already came, at once."""
    _state.forward = stop
    try:
        if _state.requested is not None:
            stop(_state.requested)
        yield
    finally:
        _state.forward = None


def release() -> None:
    """The held signals act as before :func:`hold` again; one that came while held acts
    now."""
    if not _state.before:
        return
    for signum, before in _state.before.items():
        signal.signal(signum, signal.SIG_DFL if before is None else before)
    _state.before.clear()
    came, _state.requested = _state.requested, None
    if came is not None:
        os.kill(os.getpid(), came)
