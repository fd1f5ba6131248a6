"""A seeded storm of key presses and table events against one :class:`Table`, with the
invariants checked after every step (the tests' stateful property test and
``bench/key_storm.py``'s long run).

Everything is in one process and deterministic: a fake table answers the daemon's
commands (walls built, dice rolled), takes come at legal wall positions or at random
ones, keys come from every seat in every phase, mixed with plausible answers so that
hands get played, and with faults, tray totals, link drops, staff PINs (right and
wrong), clock ticks and daemon restarts (the console flow stored as JSON and restored
into a new controller on the same rules state).

After every step: nothing escaped as an exception; points plus deposits are conserved;
after a restart the console flow is what it was; and at the end of every game, and
every ``check_every`` steps, the journalled events replayed through ``tablectl
replay`` give the live state with nothing rejected.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from firmware_bridge import messages as m
from tablectl.console.core import Publisher
from tablectl.console.staff import PinHash, StaffGate, hash_pin
from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules, preset_names
from tablectl.rules.options import HouseRules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, Payment, initial_state
from tablectl.rules.wall import implied_discarder, next_position, wall_step
from tablectl.rules.walltrack import wall_rules
from tablectl.table import Table

PIN = "2468"
#: A cheap hash: the storm checks thousands of PINs.
_PIN_HASH = PinHash.parse(hash_pin(PIN, iterations=1000))
KEYS = list(m.Key)
#: The storm's wall clock starts here (Unix time), so that alerts' times are reproducible.
STORM_EPOCH = 1_764_000_000.0


class InvariantBroken(AssertionError):
    """A storm step left the table in a state the invariants forbid."""


@dataclass
class StormStats:
    """What one storm did."""

    steps: int = 0
    keys: int = 0
    refusals: int = 0
    hands: int = 0
    games: int = 0
    restarts: int = 0
    link_drops: int = 0
    faults: int = 0
    staff_actions: int = 0
    replay_checks: int = 0
    phases: dict[str, int] = field(default_factory=dict)


class _Journal:
    """The recorder: every accepted event of each game, as the journal would keep them."""

    def __init__(self) -> None:
        self.games: list[tuple[str, list[ev.Event], str]] = []  # (rules ref, events, status)
        self.notes: list[tuple[str, int | None, dict[str, Any]]] = []

    def game_started(self, rules: HouseRules, rules_ref: str) -> None:
        if self.games and self.games[-1][2] == "playing":
            raise InvariantBroken(
                "a game started while the last one was neither over nor abandoned"
            )
        self.games.append((rules_ref, [], "playing"))

    def event_accepted(self, event: ev.Event, state: GameState) -> None:
        if not self.games:
            raise InvariantBroken(f"{event} accepted before any game")
        ref, events, status = self.games[-1]
        reopens = status == "finished" and isinstance(event, ev.Undo)
        if status != "playing" and not reopens:
            raise InvariantBroken(f"{event} accepted outside a game in progress")
        events.append(event)
        self.games[-1] = (ref, events, "finished" if state.finished else "playing")

    def note(self, kind: str, seat: int | None, detail: dict[str, Any]) -> None:
        self.notes.append((kind, seat, detail))

    def game_abandoned(self) -> None:
        ref, events, _ = self.games[-1]
        self.games[-1] = (ref, events, "abandoned")


class KeyStorm:
    """One table under a seeded storm (see the module docstring)."""

    def __init__(
        self,
        preset: str,
        seed: int,
        *,
        check_every: int = 200,
        publisher: Publisher | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        #: Gets what the table publishes (the MQTT contract test checks every message).
        self.publisher = publisher
        self.preset = preset
        self.seed = seed
        self.check_every = check_every
        self.clock = 0.0
        self.journal = _Journal()
        self.outbox: list[m.Message] = []
        self.walls_building = False
        self.dice_rolling = False
        self.stats = StormStats()
        rules = load_rules(preset)
        same_size = [p for p in preset_names() if load_rules(p).players == rules.players]
        self.rules_menu = tuple(same_size[:10])
        self.table = self._new_table(rules, preset, None)

    def _new_table(self, rules: HouseRules, ref: str, state: GameState | None) -> Table:
        return Table(
            rules,
            post=self.outbox.append,
            recorder=self.journal,
            publisher=self.publisher,
            now=lambda: self.clock,
            wall_time=lambda: STORM_EPOCH + self.clock,
            state=state,
            claim_window_s=0.5,
            rules_ref=ref,
            staff=StaffGate(_PIN_HASH, lambda: self.clock),
            rules_menu=self.rules_menu,
            load_rules=load_rules,
        )

    # ------------------------------------------------------------------ driving

    async def run(self, steps: int) -> StormStats:
        """Run ``steps`` steps; raises :class:`InvariantBroken` (or whatever escaped the
        table) with the seed and step in the message."""
        await self.table.link_up(rebooted=False)
        for index in range(steps):
            try:
                await self.step()
                self.check(full=(index + 1) % self.check_every == 0)
            except Exception as exc:
                raise InvariantBroken(
                    f"{self.preset} seed {self.seed} step {index}: {exc!r}"
                ) from exc
        self.check(full=True)
        return self.stats

    async def step(self) -> None:
        """One random action."""
        self.stats.steps += 1
        phase = self.table.phase
        self.stats.phases[phase] = self.stats.phases.get(phase, 0) + 1
        roll = self.rng.random()
        if phase == "table_dealing" and roll < 0.5:
            await self._take()  # a deal is ~16 takes: keep keys coming, but get it dealt
        elif roll < 0.35:
            await self._random_key()
        elif roll < 0.62:
            await self._answer_prompt()
        elif roll < 0.78:
            await self._table_reacts()
        elif roll < 0.90:
            await self._take()
        elif roll < 0.93:
            self.clock += self.rng.choice((0.2, 1.0, 30.0))
            await self.table.tick()
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

    async def _key(self, seat: int, key: m.Key) -> None:
        self.stats.keys += 1
        before = self.table.consoles[seat].message
        await self.table.handle(m.KeyPress(seat=seat, key=key))
        message = self.table.consoles[seat].message
        if message.startswith("! ") and message != before:
            self.stats.refusals += 1

    async def _random_key(self) -> None:
        await self._key(self.rng.randrange(self.table.players), self.rng.choice(KEYS))

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
        prompt = table.consoles[seat].prompt
        answers: dict[str, list[m.Key]] = {
            "ROLL?": [m.Key.OK],
            "RON?": [m.Key.RON, m.Key.CANCEL],
            "HAN?": [m.Key(self.rng.randint(1, 6)), m.Key.OK, m.Key.MENU],
            "FU?": [m.Key.DIGIT_3, m.Key.DIGIT_0, m.Key.OK, m.Key.DIGIT_4],
            "PAO?": [m.Key.OK],
            "TENPAI?": [m.Key.TENPAI, m.Key.NOTEN],
            "STOP?": [m.Key.OK, m.Key.CANCEL],
            "CONFIRM": [m.Key.OK] * 6 + [m.Key.CANCEL],
            "GAME OVER": [m.Key.OK] * 6 + [m.Key.CANCEL],
            "PIN?": [m.Key(int(PIN[len(table.consoles[seat].typed) % len(PIN)])), m.Key.OK],
            "SEAT?": [m.Key(self.rng.randrange(table.players)), m.Key.OK],
            "RULES?": [m.Key.MENU, m.Key.OK],
        }
        options = answers.get(prompt, [m.Key.CANCEL, m.Key.OK, m.Key.DIGIT_1])
        await self._key(seat, self.rng.choice(options))

    async def _table_reacts(self) -> None:
        """The fake table does what the daemon asked (build the walls, roll the dice); like
        a real one it finishes a shuffle it started even when the line dropped meanwhile."""
        outbox = list(self.outbox)
        self.outbox.clear()  # the table posts into this very list
        for msg in outbox:
            if isinstance(msg, m.WallCommand) and msg.action == m.WallAction.SHUFFLE:
                self.walls_building = True
            elif isinstance(msg, m.DiceRoll):
                self.dice_rolling = True
        if self.walls_building:
            self.walls_building = False
            for wall in range(self.table.players):
                await self.table.handle(m.WallStatus(wall=wall, state=m.WallState.DONE))
        elif self.dice_rolling:
            self.dice_rolling = False
            die1, die2 = self.rng.randint(1, 6), self.rng.randint(1, 6)
            await self.table.handle(m.DiceResult(die1=die1, die2=die2))

    async def _take(self) -> None:
        table = self.table
        wall = table.state.wall
        if wall is None or self.rng.random() < 0.05:
            seat = self.rng.randrange(table.players)
            await table.handle(m.WallTake(seat=seat, position=self.rng.randrange(136)))
            return
        rules = wall_rules(table.rules)
        seat = wall.turn if self.rng.random() < 0.7 else self.rng.randrange(table.players)
        discarder = implied_discarder(wall, seat)
        if discarder is not None:
            stepped = wall_step(rules, wall, ev.Discard(seat=discarder))
            if isinstance(stepped, Refusal):
                return
            wall = stepped
        pos = next_position(rules, wall, seat)
        if pos is not None:
            await table.handle(m.WallTake(seat=seat, position=pos))

    async def _trays(self) -> None:
        scores = list(self.table.state.scores)
        if self.rng.random() < 0.3:
            scores[self.rng.randrange(len(scores))] += self.rng.choice((-1000, 1000, 5000))
        await self.table.handle(m.TrayTotals(totals=tuple(scores)))

    async def _staff(self) -> None:
        """STAFF, an action, and a PIN that is right most of the time; with a publisher,
        as often a staff member acknowledging an alert from the parlor's dashboard (an
        open one, or one that is gone)."""
        if self.publisher is not None and self.rng.random() < 0.5:
            alerts = self.table.alerts.as_list()
            alert_id = self.rng.choice(alerts)["id"] if alerts else "a999"
            self.table.acknowledge_alert(alert_id, "storm staff", via="mqtt")
            return
        seat = self.rng.randrange(self.table.players)
        await self._key(seat, m.Key.STAFF_CALL)
        action = self.rng.choices(range(6), weights=(2, 3, 3, 3, 1, 2))[0]
        await self._key(seat, m.Key(action))
        pin = PIN if self.rng.random() < 0.8 else "1111"
        for digit in pin:
            await self._key(seat, m.Key(int(digit)))
        await self._key(seat, m.Key.OK)
        self.stats.staff_actions += 1

    async def _fault(self) -> None:
        self.stats.faults += 1
        if self.table.faults and self.rng.random() < 0.8:
            await self._key(self.rng.randrange(self.table.players), m.Key.OK)
            return
        code = self.rng.choice(
            (
                m.FaultCode.MOTOR_STALL,
                m.FaultCode.TILE_COUNT,
                m.FaultCode.HOST_SILENT,
                m.FaultCode.DICE,
            )
        )
        await self.table.handle(m.Fault(code=code, text="storm"))

    async def _link_drop(self) -> None:
        self.stats.link_drops += 1
        await self.table.link_lost()
        self.outbox.clear()  # commands are not kept across a lost session
        await self.table.link_up(rebooted=self.rng.random() < 0.3)

    async def _restart(self) -> None:
        """The daemon dies and comes back on the journalled state and stored flow."""
        self.stats.restarts += 1
        old = self.table
        if old.phase == "fault" or old.faults:
            return  # latched faults are the table's to report again, not the journal's
        snapshot = json.loads(json.dumps(old.flow_snapshot()))
        new = self._new_table(old.rules, old.rules_ref, old.state)
        new.games_finished = old.games_finished
        new.restore_flow(snapshot)
        self.table = new
        await new.link_up(rebooted=False)
        # What the old daemon would show after a mere reconnect is what the new one shows.
        await old.link_lost()
        await old.link_up(rebooted=False)
        self.outbox.clear()
        expected = json.loads(json.dumps(old.flow_snapshot()))
        after = json.loads(json.dumps(new.flow_snapshot()))
        keys = ("phase", "consoles", "pending", "game_started", "tray_mismatch", "rules_ref",
                "staff_calls")  # fmt: skip
        for key in keys:
            if after[key] != expected[key]:
                raise InvariantBroken(
                    f"after a restart the console flow's {key} differs from a reconnect's:"
                    f" {expected[key]!r} -> {after[key]!r}"
                )
        if new.state != old.state:
            raise InvariantBroken("after a restart the rules state differs")

    # ------------------------------------------------------------------ invariants

    def check(self, *, full: bool) -> None:
        """Points plus deposits are conserved; with ``full``, the journalled events of the
        game in progress replay to the live state."""
        table = self.table
        state = table.state
        if not self.journal.games:
            return
        ref, events, status = self.journal.games[-1]
        if status == "abandoned" or ref != table.rules_ref:
            return
        if full or state.finished:
            self._check_replay(ref, events, state)
        self.stats.hands = max(self.stats.hands, state.hands_played)
        self.stats.games = len(self.journal.games)

    def _check_replay(self, ref: str, events: list[ev.Event], state: GameState) -> None:
        self.stats.replay_checks += 1
        rules = self.table.rules
        lines = [json.dumps(ev.event_to_json(e)) for e in events]
        result = replay(lines, ref).as_dict()
        if result["rejected"]:
            raise InvariantBroken(f"the journal replays with rejections: {result['rejected']}")
        live = {
            "scores": list(state.scores),
            "honba": state.honba,
            "kyoutaku": state.kyoutaku,
            "dealer": state.dealer,
            "finished": state.finished,
        }
        replayed = {key: result[key] for key in live}
        if replayed != live:
            raise InvariantBroken(f"replay {replayed} != live {live}")
        outside = 0
        shadow = initial_state(rules)
        for event in events:
            shadow, effects = step(shadow, event)
            outside += sum(
                e.to_table for e in effects if isinstance(e, Payment) and e.reason == "west_bonus"
            )
        total = rules.game.start_points * rules.players + outside
        if sum(state.scores) + state.kyoutaku != total:
            raise InvariantBroken(
                f"points not conserved: {state.scores} + {state.kyoutaku} != {total}"
            )
