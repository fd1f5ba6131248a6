"""The seeded storms behind the flow-snapshot goldens (docs/journal.md, "Golden flow
snapshots"): one :class:`Table` driven by random keys from every seat, plausible answers
to its prompts, the fake table's walls, dice, takes, trays, faults, link drops, staff PINs,
clock ticks and daemon restarts; at a table that reads its tiles also the wall layouts
and what the seat readers show (discards, melds, hands).

The driver uses only what the daemon uses of a :class:`Table` (``handle``, ``tick``,
``link_up``, ``link_lost``, ``flow_snapshot``, ``restore_flow``) and reads its consoles'
prompts, its phase and its rules state, so that a restructured ``Table`` with the same
interface is driven exactly as today's and must write the same snapshots.  It is its own
copy, not ``tablectl.console.storm``: that module may move or change with the refactor the
goldens guard, and a change to it must not change what the goldens pin.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from typing import Any

from firmware_bridge import messages as m
from tablectl.console.staff import PinHash, StaffGate, hash_pin
from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState
from tablectl.rules.wall import implied_discarder, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.table import Table
from tablectl.tiles.ids import kind, tile_set

#: What a table that reads every tile reports at the hello (tablectl.console.tiles).
TILE_CAPS = m.Capability.WALL_READER | m.Capability.SEAT_READER | m.Capability.WALL_TAKE_SENSORS
PIN = "2468"
#: A cheap hash (the salt is random, but nothing stored depends on it).
PIN_HASH = PinHash.parse(hash_pin(PIN, iterations=1000))
KEYS = list(m.Key)
#: The storms' wall clock starts here (Unix time), so that alerts' times are reproducible.
EPOCH = 1_764_000_000.0


def canonical(obj: Any) -> str:
    """The canonical JSON of ``obj`` (sorted keys, no spaces): what the goldens compare."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


class Recorder:
    """The journal's side: every accepted event of each game, as JSON, with its rules."""

    def __init__(self) -> None:
        self.games: list[dict[str, Any]] = []

    def game_started(self, rules: HouseRules, rules_ref: str | None = None) -> None:
        """A new game (its rules by name)."""
        self.games.append({"rules": rules_ref or rules.name, "events": []})

    def event_accepted(self, event: ev.Event, state: GameState) -> None:
        """One accepted event of the current game."""
        self.games[-1]["events"].append(ev.event_to_json(event))

    def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
        """Notes are not part of what the goldens pin."""

    def game_abandoned(self) -> None:
        """Staff ended the game: its events stay as they are."""


@functools.cache
def rules_menu(players: int) -> tuple[str, ...]:
    """The presets staff may pick on RULES? at a table of ``players`` (as the storms')."""
    return tuple([p for p in preset_names() if load_rules(p).players == players][:10])


def new_table(
    rules: HouseRules,
    ref: str,
    state: GameState | None,
    *,
    clock: list[float],
    outbox: list[m.Message],
    recorder: Recorder | None,
) -> Table:
    """A table as the storms (and the golden tests' restores) make it: a clock that is a
    number, a cheap staff PIN, every preset of the same size on the RULES? menu."""
    return Table(
        rules,
        post=outbox.append,
        recorder=recorder,
        now=lambda: clock[0],
        wall_time=lambda: EPOCH + clock[0],
        state=state,
        claim_window_s=0.5,
        rules_ref=ref,
        staff=StaffGate(PIN_HASH, lambda: clock[0]),
        rules_menu=rules_menu(rules.players),
        load_rules=load_rules,
    )


class GoldenStorm:
    """One seeded storm; :meth:`run` returns the snapshots it recorded."""

    def __init__(
        self, preset: str, seed: int, *, tiles: bool, calm: bool = False, every: int = 25
    ) -> None:
        self.rng = random.Random(f"{preset}/{seed}/{tiles}/{calm}")
        #: Mostly takes (and their discards shown): hands get played out to the draw.
        self.calm = calm
        self.preset = preset
        self.tiles = tiles
        self.every = every
        self.clock = [0.0]
        self.outbox: list[m.Message] = []
        self.recorder = Recorder()
        self.walls_building = False
        self.dice_rolling = False
        #: What the seat readers show (the storm's physical table): ponds and meld zones.
        self.ponds: list[list[int]] = []
        self.melds: list[list[int]] = []
        self.table = self._table(load_rules(preset), preset, None)
        self.caps = TILE_CAPS if tiles else m.Capability.WALL_TAKE_SENSORS
        self._clear_zones()

    def _table(self, rules: HouseRules, ref: str, state: GameState | None) -> Table:
        return new_table(
            rules, ref, state, clock=self.clock, outbox=self.outbox, recorder=self.recorder
        )

    def _clear_zones(self) -> None:
        players = self.table.players
        self.ponds = [[] for _ in range(players)]
        self.melds = [[] for _ in range(players)]

    # ------------------------------------------------------------------ recording

    def signature(self) -> tuple[Any, ...]:
        """What a snapshot covers: the phase, the prompts open, the pending and held meld
        kinds, and whether the hand reads its tiles."""
        snap = self.table.flow_snapshot()
        pending = snap["pending"]
        held = snap.get("held_meld")
        return (
            snap["phase"],
            tuple(sorted({c["prompt"] for c in snap["consoles"] if c["prompt"]})),
            None if pending is None else pending["kind"],
            None if held is None else held["kind"],
            self.table.state.tiles is not None,
            any(snap.get("unread_ponds", [])) or any(snap.get("unread_melds", [])),
        )

    def point(self, step: int) -> dict[str, Any]:
        """A recorded point: the step, where the journal stood, the flow snapshot and the
        live state."""
        games = self.recorder.games
        return {
            "step": step,
            "game": len(games) - 1,
            "events": len(games[-1]["events"]) if games else 0,
            "flow": json.loads(json.dumps(self.table.flow_snapshot())),
            # The live state the parlor is sent (Table.snapshot): pinned alongside.
            "state": json.loads(json.dumps(self.table.snapshot())),
        }

    async def run(
        self, steps: int, on_point: Callable[[GoldenStorm], None] | None = None
    ) -> list[dict[str, Any]]:
        """Run ``steps`` steps; a snapshot every ``every`` steps and at every signature
        not seen before in this storm (``on_point`` is called at each, with the storm)."""
        await self.table.link_up(rebooted=False, capabilities=self.caps)
        seen: set[tuple[Any, ...]] = set()
        points: list[dict[str, Any]] = []
        for index in range(steps):
            await self.step()
            signature = self.signature()
            if signature not in seen or (index + 1) % self.every == 0:
                seen.add(signature)
                points.append(self.point(index))
                if on_point is not None:
                    on_point(self)
        return points

    # ------------------------------------------------------------------ driving

    async def step(self) -> None:
        """One random action."""
        table = self.table
        roll = self.rng.random()
        reads = self.tiles and table.state.tiles is not None
        if self.calm:
            await self._calm_step(roll, reads)
        elif table.phase == "table_dealing" and roll < 0.5:
            await self._take()  # a deal is ~16 takes: keep keys coming, but get it dealt
        elif reads and roll < 0.25:
            await self._reader()
        elif roll < 0.35:
            await self._key(self.rng.randrange(table.players), self.rng.choice(KEYS))
        elif roll < 0.62:
            await self._answer_prompt()
        elif roll < 0.78:
            await self._table_reacts()
        elif roll < 0.90:
            await self._take()
        elif roll < 0.93:
            self.clock[0] += self.rng.choice((0.2, 1.0, 30.0))
            await table.tick()
        elif roll < 0.95:
            await self._trays()
        elif roll < 0.965:
            await self._staff()
        elif roll < 0.97:
            await self._fault()
        elif roll < 0.99:
            await self._link_drop()
        else:
            await self._restart()

    async def _calm_step(self, roll: float, reads: bool) -> None:
        """Takes, answers to the prompts open and the table's reactions only: no stray keys
        end the hand, so that it is played out to the exhaustive draw."""
        if roll < 0.6:
            await self._take()
        elif roll < 0.75 and any(c.prompt for c in self.table.consoles):
            await self._answer_prompt()
        elif (
            roll < 0.75
            and self.table.state.wall is not None
            and not self.table.state.wall.live_left
        ):
            await self._answer_prompt()  # the wall is out: TENPAI or NOTEN declares the draw
        elif roll < 0.9 or not reads:
            await self._table_reacts()
        else:
            await self._reader()

    async def _key(self, seat: int, key: m.Key) -> None:
        await self.table.handle(m.KeyPress(seat=seat, key=key))

    async def _answer_prompt(self) -> None:
        """A plausible answer on a seat with a prompt, so that hands are played."""
        table = self.table
        seats = [s for s, c in enumerate(table.consoles) if c.prompt]
        if not seats:
            wall = table.state.wall
            seat = self.rng.randrange(table.players)
            if wall is not None and self.rng.random() < 0.5:
                seat = wall.turn
            key = self.rng.choice(
                (m.Key.RON, m.Key.TSUMO, m.Key.RIICHI, m.Key.TENPAI, m.Key.NOTEN, m.Key.PON)
            )
            await self._key(seat, key)
            return
        seat = self.rng.choice(seats)
        console = table.consoles[seat]
        answers: dict[str, list[m.Key]] = {
            "ROLL?": [m.Key.OK],
            "RON?": [m.Key.RON, m.Key.CANCEL],
            "HAN?": [m.Key(self.rng.randint(1, 6)), m.Key.OK, m.Key.MENU],
            "FU?": [m.Key.DIGIT_3, m.Key.DIGIT_0, m.Key.OK, m.Key.DIGIT_4],
            "PAO?": [m.Key.OK],
            "OK?": [m.Key.OK, m.Key.OK, m.Key.DIGIT_0, m.Key.CANCEL],
            "PLACE MELD": [m.Key.CANCEL],
            "TENPAI?": [m.Key.TENPAI, m.Key.NOTEN],
            "STOP?": [m.Key.OK, m.Key.CANCEL],
            "CONFIRM": [m.Key.OK] * 6 + [m.Key.CANCEL],
            "GAME OVER": [m.Key.OK] * 6 + [m.Key.CANCEL],
            "PIN?": [m.Key(int(PIN[len(console.typed) % len(PIN)])), m.Key.OK],
            "SEAT?": [m.Key(self.rng.randrange(table.players)), m.Key.OK],
            "RULES?": [m.Key.MENU, m.Key.OK],
        }
        options = answers.get(console.prompt, [m.Key.CANCEL, m.Key.OK, m.Key.DIGIT_1])
        await self._key(seat, self.rng.choice(options))

    async def _table_reacts(self) -> None:
        """The fake table does what the daemon asked: a shuffle empties the zones and raises
        the walls (read by the wall reader at a table that reads tiles), a roll rolls."""
        outbox = list(self.outbox)
        self.outbox.clear()  # the table posts into this very list
        for msg in outbox:
            if isinstance(msg, m.WallCommand) and msg.action == m.WallAction.SHUFFLE:
                self.walls_building = True
            elif isinstance(msg, m.DiceRoll):
                self.dice_rolling = True
        table = self.table
        if self.walls_building:
            self.walls_building = False
            self._clear_zones()
            if self.tiles:
                ids = list(tile_set(table.rules).ids)
                self.rng.shuffle(ids)
                per = len(ids) // table.players
                for wall in range(table.players):
                    tiles = tuple(ids[wall * per : (wall + 1) * per])
                    await table.handle(m.WallLayout(wall=wall, tiles=tiles))
            for wall in range(table.players):
                await table.handle(m.WallStatus(wall=wall, state=m.WallState.DONE))
        elif self.dice_rolling:
            self.dice_rolling = False
            die1, die2 = self.rng.randint(1, 6), self.rng.randint(1, 6)
            await table.handle(m.DiceResult(die1=die1, die2=die2))

    async def _take(self) -> None:
        table = self.table
        wall = table.state.wall
        if wall is None or self.rng.random() < 0.05:
            seat = self.rng.randrange(table.players)
            await table.handle(m.WallTake(seat=seat, position=self.rng.randrange(136)))
            return
        rules = wall_rules(table.rules)
        seat = wall.turn if self.rng.random() < 0.7 else self.rng.randrange(table.players)
        if self.calm:
            seat = next((s for s in self._seats_from(wall.turn) if self._can_take(s)), seat)
        discarder = implied_discarder(wall, seat)
        if discarder is not None and self.tiles and self.rng.random() < 0.9:
            await self._discard(discarder)  # the reader mostly sees a discard before the take
        discarder = implied_discarder(wall, seat)
        if discarder is not None:
            stepped = wall_step(rules, wall, ev.Discard(seat=discarder))
            if isinstance(stepped, Refusal):
                return
            wall = stepped
        pos = next_position(rules, wall, seat)
        if pos is not None:
            await table.handle(m.WallTake(seat=seat, position=pos))

    def _seats_from(self, first: int) -> list[int]:
        players = self.table.players
        return [(first + i) % players for i in range(players)]

    def _can_take(self, seat: int) -> bool:
        """``seat`` may take now (after the discard its take implies)."""
        wall = self.table.state.wall
        if wall is None:
            return False
        rules = wall_rules(self.table.rules)
        discarder = implied_discarder(wall, seat)
        if discarder is not None:
            stepped = wall_step(rules, wall, ev.Discard(seat=discarder))
            if isinstance(stepped, Refusal):
                return False
            wall = stepped
        return next_position(rules, wall, seat) is not None

    async def _reader(self) -> None:
        """A seat reader shows something: a discard (mostly the seat to play, mostly its
        drawn tile), a meld (the tiles a waiting call needs when it can), or a hand."""
        table = self.table
        tiles, wall = table.state.tiles, table.state.wall
        if tiles is None or wall is None:
            return
        roll = self.rng.random()
        prompts = [s for s, c in enumerate(table.consoles) if c.prompt == "PLACE MELD"]
        seat = wall.turn if self.rng.random() < 0.7 else self.rng.randrange(table.players)
        if prompts and roll < 0.6:
            seat = prompts[0]
            roll = 0.5
        st = tiles.seats[seat]
        hand = [t for t in st.concealed if t not in self.melds[seat]]
        if roll < 0.45:
            await self._discard(seat)
        elif roll < 0.75:
            await self._meld(seat, hand)
        else:
            shown = list(st.concealed)
            if shown and self.rng.random() < 0.1:
                shown[self.rng.randrange(len(shown))] = self.rng.choice(tile_set(table.rules).ids)
            await table.handle(m.SeatTiles(seat=seat, zone=m.Zone.HAND, tiles=tuple(shown)))

    async def _discard(self, seat: int) -> None:
        """``seat``'s pond shows a new tile (mostly its drawn one), unless its last one is
        not read yet (a player puts out one tile at a time)."""
        tiles = self.table.state.tiles
        if tiles is None:
            return
        st = tiles.seats[seat]
        river = {d.tile for d in st.discards}
        if any(t not in river for t in self.ponds[seat]):
            return
        hand = [t for t in st.concealed if t not in self.melds[seat]]
        if not hand:
            return
        drawn = st.drawn
        tile = drawn if drawn is not None and self.rng.random() < 0.6 else self.rng.choice(hand)
        if tile in self.ponds[seat]:
            return
        self.ponds[seat].append(tile)
        await self.table.handle(
            m.SeatTiles(seat=seat, zone=m.Zone.DISCARDS, tiles=tuple(self.ponds[seat]))
        )

    async def _meld(self, seat: int, hand: list[int]) -> None:
        """Lay tiles in ``seat``'s meld zone: two or three of one kind with the last
        discard of that kind (a pon or kan as called), or a random few."""
        table = self.table
        tiles = table.state.tiles
        assert tiles is not None
        last = [d.tile for st in tiles.seats for d in st.discards[-1:]]
        laid: list[int] = []
        for called in last:
            same = [t for t in hand if kind(t) == kind(called)]
            if len(same) >= 2:
                laid = [*same[: self.rng.choice((2, 3)) if len(same) > 2 else 2]]
                if not table.rules.wall.own_walls:
                    laid.append(called)
                break
        if not laid and hand:
            laid = self.rng.sample(hand, min(len(hand), self.rng.choice((1, 3, 4))))
        if not laid:
            return
        self.melds[seat].extend(t for t in laid if t not in self.melds[seat])
        await table.handle(m.SeatTiles(seat=seat, zone=m.Zone.MELDS, tiles=tuple(self.melds[seat])))

    async def _trays(self) -> None:
        scores = list(self.table.state.scores)
        if self.rng.random() < 0.3:
            scores[self.rng.randrange(len(scores))] += self.rng.choice((-1000, 1000, 5000))
        await self.table.handle(m.TrayTotals(totals=tuple(scores)))

    async def _staff(self) -> None:
        """STAFF, an action, and a PIN that is right most of the time."""
        seat = self.rng.randrange(self.table.players)
        await self._key(seat, m.Key.STAFF_CALL)
        action = self.rng.choices(range(6), weights=(2, 3, 3, 3, 1, 2))[0]
        await self._key(seat, m.Key(action))
        pin = PIN if self.rng.random() < 0.8 else "1111"
        for digit in pin:
            await self._key(seat, m.Key(int(digit)))
        await self._key(seat, m.Key.OK)

    async def _fault(self) -> None:
        table = self.table
        if table.faults and self.rng.random() < 0.8:
            await self._key(self.rng.randrange(table.players), m.Key.OK)
            return
        codes = [m.FaultCode.MOTOR_STALL, m.FaultCode.TILE_COUNT, m.FaultCode.HOST_SILENT]
        codes += [m.FaultCode.DICE] + ([m.FaultCode.TILE_READER] if self.tiles else [])
        code = self.rng.choice(codes)
        detail = (
            0x100 + 16 * self.rng.randrange(table.players) if code == m.FaultCode.TILE_READER else 0
        )
        await table.handle(m.Fault(code=code, detail=detail, text="storm"))

    async def _link_drop(self) -> None:
        await self.table.link_lost()
        self.outbox.clear()  # commands are not kept across a lost session
        await self.table.link_up(rebooted=self.rng.random() < 0.3, capabilities=self.caps)

    async def _restart(self) -> None:
        """The daemon dies and comes back on the journalled state and stored flow."""
        old = self.table
        if old.phase == "fault" or old.faults:
            return  # latched faults are the table's to report again, not the journal's
        snapshot = json.loads(json.dumps(old.flow_snapshot()))
        new = self._table(old.rules, old.rules_ref, old.state)
        new.games_finished = old.games_finished
        new.restore_flow(snapshot)
        self.table = new
        self.outbox.clear()
        await new.link_up(rebooted=False, capabilities=self.caps)


#: The presets the goldens cover: both wall kinds, sanma, kantan's own walls.
PRESETS = ("tenhou", "kenko", "jboy-sanma", "sanma-free", "kantan", "ariari")
#: The storms the goldens hold: (preset, seed, tiles, calm, steps). The wild ones reach
#: prompts, staff, faults and restarts; the calm ones play hands out to the draw.
STORMS: tuple[tuple[str, int, bool, bool, int], ...] = tuple(
    [(p, 1, tiles, False, 700) for p in PRESETS for tiles in (False, True)]
    + [(p, 2, tiles, True, 450) for p in PRESETS for tiles in (False, True)]
)


def golden_name(preset: str, seed: int, tiles: bool, calm: bool) -> str:
    """The golden file of one storm."""
    return f"{preset}-{'tiles' if tiles else 'keyed'}-{'calm' if calm else 'wild'}-{seed}.json"


async def record(
    preset: str,
    seed: int,
    tiles: bool,
    calm: bool,
    steps: int,
    on_point: Callable[[GoldenStorm], None] | None = None,
) -> dict[str, Any]:
    """Run one storm: its parameters, every game's journalled events, and the points."""
    storm = GoldenStorm(preset, seed, tiles=tiles, calm=calm)
    points = await storm.run(steps, on_point)
    return {
        "storm": {"preset": preset, "seed": seed, "tiles": tiles, "calm": calm, "steps": steps},
        "games": storm.recorder.games,
        "points": points,
    }


def dump(golden: dict[str, Any]) -> str:
    """A golden as the file holds it: canonical JSON, one game and one point a line."""
    lines = ['{"storm":' + canonical(golden["storm"]) + ","]
    lines.append('"games":[' + ",\n".join(canonical(g) for g in golden["games"]) + "],")
    lines.append('"points":[\n' + ",\n".join(canonical(p) for p in golden["points"]) + "]}")
    return "\n".join(lines) + "\n"
