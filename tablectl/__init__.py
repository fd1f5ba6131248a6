"""tablectl: the controller for Japanese riichi-mahjong automatic tables."""

__version__ = "0.1.0"

#: Stopped with Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def console_main() -> int:
    """The ``tablectl`` command: :func:`tablectl.cli.main`, with a Ctrl-C that lands while
    the command line's modules are still loading answered in one line, like one later."""
    import sys

    try:
        from tablectl.cli import main

        return main()
    except KeyboardInterrupt:
        sys.stderr.write("tablectl: stopped\n")
        return EXIT_INTERRUPTED
