"""hw_sim: a simulated automatic table that speaks the real wire protocol.

Everyone without a table, and every test, runs against this; a hardware-in-the-loop rig
swaps it for a real board. It uses firmware_bridge's own schema and codec in the device
role (docs/protocol.md); docs/simulator.md describes it all.

Public API (for tests, ``tablectl demo`` and scripts)::

    from hw_sim import SimTable

    table = SimTable("mleague", seed=7, speed=0.0, max_games=1)   # bots on every seat
    url = await table.start_pty()        # "/dev/pts/N"  (or one of:)
    # port = await table.start_tcp(0)    # socket://127.0.0.1:port
    # url = await table.start_sim("t1")  # "sim://t1", in-process
    # url = await table.start_usb()      # "usb://1209:7a11?backend=loopback", in-process
    ...                                  # start the daemon on that URL
    await table.wait_games(1)            # or: await table.run() (returns after max_games)
    table.displays, table.lamps, table.centre, table.trays, table.dice, table.scores()
    table.render()                       # the terminal view as text (hw_sim.view)
    await table.close()

``SimTable(rules, seed, *, speed=0.0, autoplay=True, seats=None, max_games=None,
tile_reader=False, wall_reader=False, seat_reader=False, trays=False, faults=None,
name="hw_sim", stall_timeout=10.0, signing_key=None)``:

* ``rules``: a preset name or a loaded ``HouseRules``; ``seed``: walls, dice, boot ids and
  the bots' choices -- one seed is one reproducible game against a deterministic daemon;
* ``speed``: motor and dice durations x speed (0 instant, 1 real time);
* ``autoplay``/``seats``: bots play those seats (default all); people or scripts play the
  others with :meth:`SimTable.press`, :meth:`SimTable.take`, :meth:`SimTable.discard`;
* ``max_games``: the bots stop after that many games (``games_finished`` counts games
  whose GAME OVER every bot confirmed; ``game_marks`` the transcript length at each);
* ``tile_reader``: every ``WallTake`` carries the tile id; ``wall_reader``: each raised
  wall's tiles are reported (``WallLayout``), so the daemon shows the dora indicators;
  ``seat_reader``: every seat's hand, melds and pond are kept and reported (``SeatTiles``)
  and the bots play the tiles they hold (the CLI's ``--tile-reader`` turns on all three);
* ``faults``: a :class:`hw_sim.faults.FaultPlan` or its spec (``"drop=0.02,reboot@500"``);
  :meth:`SimTable.inject` injects one now;
* ``signing_key``: 32 bytes; the table signs every frame and requires signed ones
  (docs/protocol.md, "Signing"; the daemon's URL gets ``?signing_key=HEX``).

The pieces: :mod:`hw_sim.firmware` (the device state machine), :mod:`hw_sim.wall`
(the physical wall), :mod:`hw_sim.zones` (the seat zones), :mod:`hw_sim.players` (wall
follower and bots), :mod:`hw_sim.tilebot` (what a bot makes of its tiles),
:mod:`hw_sim.scenario` (JSON Lines scripts), :mod:`hw_sim.control` (the JSON Lines
control server), :mod:`hw_sim.faults`, :mod:`hw_sim.view`, and ``python -m hw_sim``
(:mod:`hw_sim.__main__`).
"""

from hw_sim.faults import FaultPlan
from hw_sim.firmware import Console, SimFirmware
from hw_sim.players import BotTable, WallFollower
from hw_sim.table import SimTable

__all__ = ["BotTable", "Console", "FaultPlan", "SimFirmware", "SimTable", "WallFollower"]
