"""A command line's broken standard streams answered in one line, never a traceback.

Every entry point of the three packages (``tablectl``, ``python -m hw_sim``, ``python -m
firmware_bridge.conformance``) runs its main function through :func:`run_guarded`. It lives
here because this package is the one the other two both depend on.

* stdout that cannot be written (``> /dev/full``, a full disk, an I/O error): one line on
  stderr naming the error, exit :data:`EXIT_OUTPUT_LOST` (74, sysexits' EX_IOERR).
* stdout whose reader went away (``tablectl rules list | head -1``): quiet, exit
  :data:`EXIT_BROKEN_PIPE` (141 = 128 + SIGPIPE, what a shell reports for a command the
  closed pipe ended, so ``set -o pipefail`` scripts see the same as with ``cat``).
* stdin that is not UTF-8 text: one line, exit 2 (bad input, as every other).
* a usage error (:class:`OneLineParser`): one line naming the command and the mistake,
  exit 2, instead of argparse's usage block followed by the error.

While the main function runs, ``sys.stdout`` is a thin wrapper that marks a failed write
as :class:`OutputLost` (not an ``OSError``), so a command's own ``except OSError`` around
its work cannot mistake it for a failure of a file or a socket. stdout is flushed inside
the guard, and after a failure file descriptor 1 is pointed at ``/dev/null`` (as the
Python documentation on SIGPIPE recommends), so the interpreter's last flush at exit has
nothing left to fail on.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import typing
from collections.abc import Callable
from typing import Any, TextIO, cast

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_BROKEN_PIPE",
    "EXIT_OUTPUT_LOST",
    "InputNotText",
    "OneLineParser",
    "OutputLost",
    "read_stdin_line",
    "run_guarded",
]

EXIT_OUTPUT_LOST = 74
EXIT_BROKEN_PIPE = 141
EXIT_BAD_INPUT = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (``PROG: error: MESSAGE (--help ...)``),
    exit 2; its sub-command parsers are of the same class (argparse's default)."""

    def error(self, message: str) -> typing.NoReturn:
        """Answer a usage mistake in one line and exit 2."""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (--help shows the usage)\n")


class OutputLost(Exception):
    """Writing to stdout failed; ``error`` is why (a BrokenPipeError when the reader left)."""

    def __init__(self, error: OSError | UnicodeEncodeError) -> None:
        super().__init__(str(error))
        self.error = error


class InputNotText(Exception):
    """stdin held bytes that are not UTF-8 text."""


class _GuardedStdout:
    """``sys.stdout`` as it was, but a failed write or flush raises :class:`OutputLost`."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (OSError, UnicodeEncodeError) as exc:
            raise OutputLost(exc) from exc

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputLost(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def read_stdin_line(limit: int) -> str:
    """One line of at most ``limit`` bytes from stdin, decoded as UTF-8 (strictly: whatever
    the locale, so that a byte that is not text is refused here and not carried on as a
    lone surrogate). Raises :class:`InputNotText`."""
    stream = sys.stdin
    if stream is None:
        return ""
    raw = getattr(stream, "buffer", None)
    data = raw.readline(limit) if raw is not None else stream.readline(limit).encode()
    try:
        return cast(bytes, data).decode("utf-8")
    except UnicodeDecodeError:
        raise InputNotText("stdin is not UTF-8 text") from None


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null: what is still buffered for stdout goes nowhere, quietly."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(devnull)


def _say(prog: str, text: str) -> None:
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"{prog}: {text}\n")
        sys.stderr.flush()


def _lost(prog: str, error: BaseException) -> int:
    _silence_stdout()
    if isinstance(error, BrokenPipeError) or getattr(error, "errno", None) == errno.EPIPE:
        return EXIT_BROKEN_PIPE
    if isinstance(error, UnicodeEncodeError):
        encoding = getattr(sys.stdout, "encoding", None) or "?"
        _say(prog, f"cannot write the output: stdout's encoding ({encoding}) cannot show it")
    else:
        reason = getattr(error, "strerror", None) or str(error)
        _say(prog, f"cannot write the output: {reason}")
    return EXIT_OUTPUT_LOST


def run_guarded(prog: str, main: Callable[[], int]) -> int:
    """``main()``'s exit code, with stdout's and stdin's failures answered in one line on
    stderr under ``prog``'s name (see the module's docstring for the exit codes).
    ``SystemExit`` (argparse's ``--help``, a usage error) is answered like a return."""
    real = sys.stdout
    if real is None:  # started with stdout closed: print() writes nothing, nothing to guard
        return main()
    sys.stdout = cast(TextIO, _GuardedStdout(real))
    try:
        try:
            code = main()
        except SystemExit as exc:
            if exc.code is not None and not isinstance(exc.code, int):
                raise
            code = exc.code or 0
        finally:
            sys.stdout = real
    except OutputLost as lost:
        return _lost(prog, lost.error)
    except InputNotText as exc:
        _say(prog, str(exc))
        return EXIT_BAD_INPUT
    except OSError as exc:
        # Written through a reference to stdout taken before the guard began.
        if not _is_stdout_error(real):
            raise
        return _lost(prog, exc)
    try:
        real.flush()  # here, not at exit, where a failure could only be a traceback
    except OSError as exc:
        return _lost(prog, exc)
    return code


def _is_stdout_error(real: TextIO) -> bool:
    """Whether stdout itself is what failed: a second flush fails too (the data that could
    not be written is still buffered)."""
    try:
        real.flush()
    except OSError:
        return True
    return False
