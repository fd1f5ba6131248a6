"""Seeded fault injection for the simulated table.

Two kinds of faults:

* **line faults**, continuous and random, applied by :class:`FaultLine` to the bytes of the
  host connection: ``corrupt`` (a bit flipped in a frame the table writes or in a chunk it
  reads), ``drop`` (a frame lost), ``dup`` (a frame sent twice). Probabilities per frame;
  the randomness comes from the plan's seed, so a run repeats.
* **one-shot faults**, fired when the table has sent a given number of events (so they land
  at the same point of a seeded game every time): ``unplug`` (the cable is pulled for
  ``DUR`` seconds, default 1), ``reboot`` (the firmware restarts with a new boot id),
  ``stuck`` (a key chatters: it reports several presses), ``tray`` (the next tray report
  misreads one stick), ``tilecount`` (the next raised wall is one tile short), and at a
  table with seat readers ``reader`` (one seat zone's reader fails: ``Fault TILE_READER``,
  latched) and ``misread`` (one seat's hand reader lies: it reports its first tile as
  another copy of the same kind, the red five as a plain one, until the next shuffle,
  and raises no fault); these two are never drawn by ``random``, which keeps the plans
  it made before; nor is ``keys`` (someone presses a burst of random keys on one seat,
  drawn from the plan's seed: a bot's seat at a table that plays itself).

A plan is written as a comma-separated spec (the ``--faults`` option)::

    corrupt=0.01,drop=0.02,dup=0.01,unplug@300:2,reboot@900,stuck@500:1:OK,tray@40,tilecount@2

``KIND@N`` fires after the N-th event the table sent; ``stuck@N:SEAT:KEY`` names the seat
and key (default: a seat from the seed and key ``0``); ``tray@N:SEAT``; ``tilecount@N:WALL``;
``reader@N:SEAT:ZONE`` (zone ``hand``, ``melds``, ``discards`` or 0..2); ``misread@N:SEAT``;
``keys@N:SEAT:COUNT`` (default 5 keys).
``random=K`` adds K one-shot faults of random kinds at random event counts in 50..2000.
"""

from __future__ import annotations

import dataclasses
import logging
import random

from firmware_bridge.messages import Key, Zone
from firmware_bridge.testing import FaultyTransport
from firmware_bridge.transport import Transport

__all__ = [
    "BURST_KEYS",
    "LINE_FAULTS",
    "ONE_SHOT_FAULTS",
    "TILE_FAULTS",
    "FaultLine",
    "FaultPlan",
    "OneShot",
    "parse_key",
    "parse_zone",
]

_log = logging.getLogger(__name__)

#: Continuous line faults and what their probability applies to.
LINE_FAULTS = ("corrupt", "drop", "dup")
#: Faults that happen once, at an event count.
ONE_SHOT_FAULTS = ("unplug", "reboot", "stuck", "tray", "tilecount")
#: The most one-shot faults ``random=K`` draws: they fall at event counts 50..2000, so more
#: would hit nearly every event (and a plan of a million took seconds to build).
MAX_RANDOM_FAULTS = 1000

#: One-shot faults of the seat readers, and a person at a seat (not drawn by ``random=K``).
TILE_FAULTS = ("reader", "misread", "keys")
#: Keys in a ``keys`` burst unless told.
BURST_KEYS = 5
#: Default unplug length (s): longer than the link timeout, so the host notices it.
UNPLUG_SECONDS = 1.0


def parse_key(name: str) -> Key:
    """A console key from its name (``RON``, ``ok``) or digit (``7``)."""
    text = name.strip().upper().replace(" ", "_")
    if text.isdigit() and len(text) == 1:
        return Key(int(text))
    if text.startswith("DIGIT_"):
        return Key[text]
    try:
        return Key[text]
    except KeyError:
        names = ", ".join(k.name for k in Key)
        raise ValueError(f"unknown key {name!r}; keys: {names}") from None


def parse_zone(name: str) -> Zone:
    """A seat reader's zone from its name (``hand``, ``MELDS``) or number (``2``)."""
    text = name.strip().upper()
    if text.isdigit() and int(text) in {int(z) for z in Zone}:
        return Zone(int(text))
    try:
        return Zone[text]
    except KeyError:
        names = ", ".join(z.name.lower() for z in Zone)
        raise ValueError(f"unknown zone {name!r}; zones: {names} (or 0..2)") from None


class FaultLine(FaultyTransport):
    """A :class:`FaultyTransport` that can also duplicate frames and spoil received bytes.

    Its probabilities are plain attributes, changed at run time by :meth:`FaultPlan.apply`
    or the control interface. ``pause()`` models an unplugged UART (traffic lost both ways).
    """

    def __init__(
        self,
        inner: Transport,
        *,
        seed: int = 0,
        drop: float = 0.0,
        flip: float = 0.0,
        dup: float = 0.0,
    ) -> None:
        super().__init__(inner, seed=seed, drop=drop, flip=flip)
        self.dup = dup
        #: Frames duplicated so far.
        self.duplicated = 0
        #: Received chunks spoiled so far.
        self.rx_spoiled = 0

    def write(self, data: bytes) -> None:
        """Write a frame, maybe twice (``dup``), maybe dropped or flipped (parent)."""
        super().write(data)
        if self.dup and not self._paused and self.rng.random() < self.dup:
            self.duplicated += 1
            super().write(data)

    async def read(self) -> bytes:
        """Read bytes; with ``flip`` a received chunk may get a bit flipped, with ``drop``
        it may vanish (the host's retransmission repairs both)."""
        while True:
            data = await super().read()
            if self.drop and self.rng.random() < self.drop:
                self.rx_spoiled += 1
                continue
            if self.flip and self.rng.random() < self.flip:
                buf = bytearray(data)
                bit = self.rng.randrange(len(buf) * 8)
                buf[bit // 8] ^= 1 << (bit % 8)
                self.rx_spoiled += 1
                return bytes(buf)
            return data


@dataclasses.dataclass(frozen=True, slots=True)
class OneShot:
    """A fault that fires once, after the table sent ``at`` events."""

    at: int
    kind: str
    #: Kind-specific arguments: unplug (seconds,), stuck (seat, key), tray (seat,),
    #: tilecount (wall,), reader (seat, zone), misread (seat,), keys (seat, count). Missing
    #: ones are drawn from
    #: the plan's seed when it fires.
    args: tuple[str, ...] = ()


@dataclasses.dataclass(slots=True)
class FaultPlan:
    """Line fault probabilities and a list of one-shot faults, all from one seed."""

    seed: int = 0
    corrupt: float = 0.0
    drop: float = 0.0
    dup: float = 0.0
    one_shots: list[OneShot] = dataclasses.field(default_factory=list)

    @classmethod
    def parse(cls, spec: str, seed: int = 0) -> FaultPlan:
        """Build a plan from a spec like ``drop=0.02,unplug@300:2`` (see the module doc).

        Raises ValueError naming the bad item.
        """
        plan = cls(seed=seed)
        rng = random.Random(f"faults:{seed}")
        for raw in (item.strip() for item in spec.split(",")):
            if not raw:
                continue
            if "=" in raw:
                name, _, value = raw.partition("=")
                name = name.strip()
                if name == "random":
                    try:
                        count = int(value)
                    except ValueError:
                        raise ValueError(f"fault {raw!r}: random=K needs an integer") from None
                    if not 0 <= count <= MAX_RANDOM_FAULTS:
                        raise ValueError(
                            f"fault {raw!r}: random=K wants 0..{MAX_RANDOM_FAULTS} faults"
                        )
                    for _ in range(count):
                        kind = rng.choice(ONE_SHOT_FAULTS)
                        plan.one_shots.append(OneShot(rng.randrange(50, 2000), kind))
                    continue
                if name not in LINE_FAULTS:
                    raise ValueError(
                        f"fault {raw!r}: unknown line fault {name!r} (use {', '.join(LINE_FAULTS)})"
                    )
                try:
                    prob = float(value)
                except ValueError:
                    raise ValueError(f"fault {raw!r}: {value!r} is not a probability") from None
                if not 0.0 <= prob < 1.0:
                    raise ValueError(f"fault {raw!r}: the probability must be in [0, 1)")
                setattr(plan, name, prob)
                continue
            kind, at_sep, rest = raw.partition("@")
            if not at_sep or kind not in ONE_SHOT_FAULTS + TILE_FAULTS:
                raise ValueError(
                    f"fault {raw!r}: expected NAME=PROB ({', '.join(LINE_FAULTS)}) or "
                    f"KIND@N ({', '.join(ONE_SHOT_FAULTS + TILE_FAULTS)})"
                )
            at_text, *args = rest.split(":")
            try:
                at = int(at_text)
            except ValueError:
                raise ValueError(f"fault {raw!r}: {at_text!r} is not an event count") from None
            if kind == "stuck" and len(args) >= 2:
                parse_key(args[1])  # checked now, not in the middle of a game
            if kind in TILE_FAULTS and args and not (args[0].isdigit() and int(args[0]) <= 3):
                raise ValueError(f"fault {raw!r}: {args[0]!r} is not a seat 0..3")
            if kind == "reader" and len(args) >= 2:
                parse_zone(args[1])
            if kind == "keys" and len(args) >= 2 and not (args[1].isdigit() and int(args[1]) > 0):
                raise ValueError(f"fault {raw!r}: {args[1]!r} is not a number of keys")
            if kind == "misread" and len(args) >= 2:
                # The daemon holds a call whose meld it cannot read until the player
                # withdraws it, which the bots never do: only the hand reader lies.
                raise ValueError(f"fault {raw!r}: misread takes a seat (its hand reader)")
            plan.one_shots.append(OneShot(at, kind, tuple(args)))
        plan.one_shots.sort(key=lambda s: s.at)
        return plan

    def describe(self) -> str:
        """The plan in its spec form (for logs and the view)."""
        items = [f"{n}={getattr(self, n):g}" for n in LINE_FAULTS if getattr(self, n)]
        items += [f"{s.kind}@{s.at}" + "".join(f":{a}" for a in s.args) for s in self.one_shots]
        return ",".join(items) or "none"

    def line(self, inner: Transport, connection: int) -> FaultLine:
        """Wrap the ``connection``-th host connection's transport with the line faults."""
        return FaultLine(
            inner,
            seed=(self.seed * 1_000_003 + connection) & 0xFFFF_FFFF,
            drop=self.drop,
            flip=self.corrupt,
            dup=self.dup,
        )

    def due(self, events_sent: int) -> list[OneShot]:
        """Remove and return the one-shot faults due once ``events_sent`` events went out."""
        due = [s for s in self.one_shots if s.at <= events_sent]
        if due:
            self.one_shots = [s for s in self.one_shots if s.at > events_sent]
            _log.info("fault plan: %s due at event %d", [s.kind for s in due], events_sent)
        return due
