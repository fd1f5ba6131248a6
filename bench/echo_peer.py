"""The latency floor's peer: a bare host that echoes every key press as a display.

Run by ``bench/latency.py`` in its own process, in the daemon's place::

    .venv/bin/python bench/echo_peer.py /dev/pts/N

It opens the serial device with the same firmware_bridge ``Link`` (host role) as the
daemon and answers each ``KeyPress`` at once with a ``SeatDisplay`` for that seat, the same
size as the daemon's score-page display. No rules, no journal, no phase machine: what is
left is the pty, the codec, the link and two event loops.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal

from firmware_bridge import Link, Role
from firmware_bridge import messages as m

#: What the daemon shows for DIGIT_0's pages ("E 25000" / "E DIFF" / "E RANK 1/4").
PAGES = (("S 25000", ""), ("S DIFF", "0 0 0"), ("S RANK 1/4", "25000"))


async def serve(device: str) -> None:
    """Echo key presses as displays until SIGTERM/SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    pages = [0] * 4
    async with Link(device, role=Role.HOST, name="echo") as link:

        async def echo() -> None:
            async for item in link.events():
                if isinstance(item, m.KeyPress):
                    seat = item.seat
                    pages[seat] = (pages[seat] + 1) % len(PAGES)
                    line1, line2 = PAGES[pages[seat]]
                    link.post(m.SeatDisplay(seat=seat, line1=line1, line2=line2))

        task = asyncio.create_task(echo())
        await stop.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def main() -> None:
    """Parse the device path and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", help="serial device (the simulator's pty)")
    asyncio.run(serve(parser.parse_args().device))


if __name__ == "__main__":
    main()
