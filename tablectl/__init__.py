"""tablectl: the controller for Japanese riichi-mahjong automatic tables."""

from tablectl.version import __version__

__all__ = ["__version__", "console_main"]


def console_main() -> int:
    """The ``tablectl`` command: :func:`tablectl.cli.main`, with a Ctrl-C that lands while
    the command line's modules are still loading answered in one line, like one later,
    and a SIGTERM then held for the daemon (:mod:`tablectl.stopping`)."""
    import sys

    from tablectl import stopping

    # Before the command's modules load (a second or so on a Pi): `tablectl run` stops
    # cleanly on a SIGTERM that comes even then; other commands release it (cli.main).
    stopping.hold()
    try:
        from tablectl.cli import main

        return main()
    except KeyboardInterrupt:
        stopping.release()
        sys.stderr.write("tablectl: stopped\n")
        return stopping.EXIT_INTERRUPTED
