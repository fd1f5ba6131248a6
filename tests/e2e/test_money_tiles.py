"""A whole game with chips (祝儀) at a table that reads its tiles, daemon and simulator back
to back in one process (issue #28): the bots play the preset's real red and gold fives and
declare riichi, the daemon counts each win's chips from the tiles (nobody types one), and
every hand's chips equal a count made here from the winner's tiles and the ura indicators
under the dead wall, independently of tablectl/rules/tilechips.py (docs/tiles.md, "Chips").

The daemon publishes as to a broker (its real publisher's encoding, no broker; the hands
and the game checked against the contract, docs/mqtt/): the hands' chips and the game's P
go out as the journal has them, and the dashboard's model shows the same.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import tests.sim.test_autoplay as autoplay
from firmware_bridge.messages import SeatDisplay
from hw_sim.firmware import SimFirmware
from tablectl.config import config_for
from tablectl.console.wins import WinScoring
from tablectl.dashboard.model import ParlorModel
from tablectl.export import export_text
from tablectl.journal import Journal
from tablectl.mqtt import TablePublisher
from tablectl.mqtt_settings import MqttSettings
from tablectl.records import list_records
from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules import tilechecks
from tablectl.rules.core import step
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.state import GameState, initial_state
from tablectl.tiles.ids import tile_set
from tests.mqtt_contract import check
from tests.sim.test_autoplay import play
from tests.sim.test_tile_games import journal_game, read_from_the_tiles
from tests.sim.test_tiles import READERS

#: The coloured fives of each money preset's set, by id (the lowest copies of a five,
#: gold before red: docs/tiles.md, "Tile ids"), as the rule sheets name them.
GOLD = {"sanma-free": set(), "jboy": {52}, "jboy-sanma": {52}}
RED = {"sanma-free": {52, 88}, "jboy": {16, 88}, "jboy-sanma": {53, 88, 89}}
#: Yakuman chips per win (sanma-free 1000P at 100P a chip; jboy's reading 5).
YAKUMAN_CHIPS = {"sanma-free": 10, "jboy": 5, "jboy-sanma": 5}
#: The parts of a seat's P (``final.money``).
PARTS = ("result", "uma", "chip_p", "fee", "prizes")


def next_kind(k: int, players: int) -> int:
    """The kind an indicator of kind ``k`` makes dora (three players: 1m shows 9m)."""
    if k < 27:
        if players == 3 and k == 0:
            return 8
        return k - k % 9 + (k % 9 + 1) % 9
    if k < 31:
        return 27 + (k - 26) % 4
    return 31 + (k - 30) % 3


@dataclass
class Seen:
    """What the wins of a game held, summed: riichi wins, red/gold fives, ura, kan-ura."""

    riichi: int = 0
    fives: int = 0
    ura: int = 0
    kan_ura: int = 0


def counted_here(
    preset: str, state: GameState, hand: ev.Hand, discarder: int | None, seen: Seen
) -> int:
    """The chips ``hand`` earns (yakuman chips included) from its tiles in ``state``;
    what they held is added to ``seen``."""
    tiles, wall = state.tiles, state.wall
    assert tiles is not None and wall is not None
    st = tiles.seats[hand.seat]
    held = [*st.concealed, *(t for m in st.melds for t in m.tiles)]
    if discarder is not None:
        won = tilechecks.ron_tile(state, discarder)
        assert won is not None
        held.append(won)
    fives = sum(1 for t in held if t in RED[preset] | GOLD[preset])
    riichi = st.riichi and not st.riichi_pending
    under = [tiles.layout[p + 1] for p in wall.dora_indicators]

    def dora(indicators: list[int]) -> int:
        kinds = [next_kind(t // 4, state.players) for t in indicators]
        return sum(sum(1 for t in held if t // 4 == k) + (len(st.norths) if k == 30 else 0)
                   for k in kinds)  # fmt: skip

    ura, kan_ura = dora(under[:1]), dora(under[1:])
    seen.riichi += riichi
    seen.fives += fives
    seen.ura += ura if riichi else 0
    seen.kan_ura += kan_ura if riichi else 0
    yakuman = YAKUMAN_CHIPS[preset] if hand.yakuman else 0
    if preset == "sanma-free":  # リーチ赤・一発・裏・カン裏
        return yakuman + (fives + st.ippatsu + ura + kan_ura if riichi else 0)
    return yakuman + fives  # 赤・金の祝儀, riichi or not


def paid(players: int, hand: ev.Hand, chips: int, discarder: int | None) -> list[int]:
    """Each seat's chip change: the discarder pays a ron's, each other seat a tsumo's, the
    pao player all of them."""
    out = [0] * players
    payers = [discarder] if discarder is not None else [s for s in range(players) if s != hand.seat]
    for payer in payers:
        who = payer if hand.pao is None else hand.pao
        out[who] -= chips
        out[hand.seat] += chips
    return out


def chips_in_tenhou6(preset: str, log: dict[str, Any]) -> list[list[int]]:
    """Each hand's chip changes recounted from a tenhou.net/6 log, which has no field for
    them: from each win's yaku (赤ドラ, 一発, 裏ドラ with the kan-ura, a yakuman) and who
    paid (docs/tiles.md, "Game logs")."""
    players = load_rules(preset).players
    out: list[list[int]] = []
    for hand in log["log"]:
        result = hand[-1]
        changes = [0] * players
        if result[0] == "和了":
            for i in range(2, len(result), 2):
                who, source, pao, _points, *yaku = result[i]
                han = {m[1]: m[2] for m in (re.match(r"(.+)\((\d+)飜\)$", y) for y in yaku) if m}
                riichi = "立直" in han or "両立直" in han
                fives = int(han.get("赤ドラ", 0))
                if preset == "sanma-free":
                    won = (
                        fives + int(han.get("一発", 0)) + int(han.get("裏ドラ", 0)) if riichi else 0
                    )
                else:
                    won = fives
                if any(y.endswith("(役満)") for y in yaku):
                    won += YAKUMAN_CHIPS[preset]
                hand_ev = ev.Hand(seat=who, pao=None if pao == who else pao)
                ron = None if source == who else source
                changes = [a + b for a, b in zip(changes, paid(players, hand_ev, won, ron),
                           strict=True)]  # fmt: skip
        out.append(changes)
    return out


def chips_by_hand(preset: str, events: list[ev.Event], seen: Seen) -> list[list[int]]:
    """Each hand's chip changes as counted here, stepping the game through the core."""
    state = initial_state(load_rules(preset))
    out: list[list[int]] = []
    for event in events:
        if isinstance(event, ev.Tsumo | ev.Ron):
            hand_chips = [0] * state.players
            pairs = event.pairs() if isinstance(event, ev.Ron) else [(event.hand, None)]
            for hand, discarder in pairs:
                counted = counted_here(preset, state, hand, discarder, seen)
                hand_chips = [a + b for a, b in zip(hand_chips, paid(state.players, hand,
                              counted, discarder), strict=True)]  # fmt: skip
            out.append(hand_chips)
        elif isinstance(event, ev.Draw | ev.Abort | ev.Chombo):
            out.append([0] * state.players)
        state, effects = step(state, event)
        assert not [e for e in effects if isinstance(e, Refusal)]
    return out


def finished_record(tmp: Path) -> Any:
    """The record (``tablectl records``) of the game the daemon finished in ``tmp``."""
    (path,) = tmp.glob("journal-*.sqlite3")
    with Journal.open(path, readonly=True) as journal:
        (record,) = list_records(journal)  # the finished games
    return record


def wins_counted(preset: str, events: list[ev.Event]) -> list[tuple[int, int]]:
    """Each win without yakuman, as (winner, the chips its tiles hold)."""
    state = initial_state(load_rules(preset))
    out: list[tuple[int, int]] = []
    for event in events:
        if isinstance(event, ev.Tsumo | ev.Ron):
            pairs = event.pairs() if isinstance(event, ev.Ron) else [(event.hand, None)]
            for hand, discarder in pairs:
                if not hand.yakuman:
                    out.append((hand.seat, counted_here(preset, state, hand, discarder, Seen())))
        state, _ = step(state, event)
    return out


class Published:
    """What the daemon's publisher sent; its hands and games checked against the contract."""

    def __init__(self) -> None:
        self.raw: list[tuple[str, bytes]] = []
        self.seen: dict[str, list[Any]] = {}

    def drain(self, publisher: TablePublisher) -> None:
        while (message := publisher._outbox.take()) is not None:
            self.raw.append((message.topic, message.payload))
            leaf = message.topic.split("/v1/", 1)[1].split("/", 1)[1]
            if leaf in ("hands", "games"):  # (the states: test_mqtt_contract.py checks them)
                self.seen.setdefault(leaf, []).append(check(message.topic, message.payload))


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch) -> Published:
    """The daemon of ``play`` publishes (no broker: its queue is read as a connection
    would, after every message)."""
    out = Published()
    monkeypatch.setattr(
        autoplay,
        "config_for",
        lambda *a, **kw: config_for(*a, **kw, mqtt=MqttSettings(host="127.0.0.1")),
    )

    async def run(self: TablePublisher) -> None:
        await asyncio.Event().wait()  # cancelled at the daemon's stop

    async def close(self: TablePublisher) -> None:
        out.drain(self)

    for name in ("publish_state", "publish_event", "publish_hand", "publish_game"):
        real = getattr(TablePublisher, name)

        def publish(self: TablePublisher, value: Any, real: Any = real) -> None:
            real(self, value)
            out.drain(self)

        monkeypatch.setattr(TablePublisher, name, publish)
    monkeypatch.setattr(TablePublisher, "run", run)
    monkeypatch.setattr(TablePublisher, "close", close)
    return out


@pytest.mark.parametrize(("preset", "seed"), [("sanma-free", 7), ("jboy-sanma", 3)])
async def test_each_hands_chips_are_what_its_tiles_hold(
    tmp_path: Path,
    preset: str,
    seed: int,
    published: Published,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = load_rules(preset)
    # The simulated wall holds the preset's set: its red and gold fives where the sheet
    # has them (sanma-free: red 5p 5s; jboy-sanma: gold 5p, red 5p and two red 5s).
    assert tile_set(rules).red == RED[preset] and tile_set(rules).gold == GOLD[preset]
    shown: list[tuple[int, int | None]] = []
    real_entry = WinScoring.scored_entry

    def scored_entry(self: WinScoring, seat: int, *args: Any, **kwargs: Any) -> Any:
        entry = real_entry(self, seat, *args, **kwargs)
        shown.append((seat, entry.counted_chips))  # what the winner sees at OK?
        return entry

    monkeypatch.setattr(WinScoring, "scored_entry", scored_entry)
    game_over: dict[int, str] = {}  # each seat's line 2 at GAME OVER, as the table shows it
    real_handle = SimFirmware._handle

    async def handle(self: SimFirmware, msg: Any) -> None:
        if isinstance(msg, SeatDisplay) and msg.line1.startswith("GAME OVER"):
            game_over.setdefault(msg.seat, msg.line2)
        await real_handle(self, msg)

    monkeypatch.setattr(SimFirmware, "_handle", handle)
    played = await play(tmp_path, preset, seed, **READERS)
    table_ids = set(played.table.firmware.wall.ids)
    assert RED[preset] | GOLD[preset] <= table_ids
    events = read_from_the_tiles(played, tmp_path)
    assert not any(isinstance(e, ev.Tsumo | ev.Ron) and _typed(e) for e in events)
    _, _, lines = journal_game(tmp_path)
    result: dict[str, Any] = replay(lines.splitlines()).as_dict()
    hands = [h["chips"] for h in result["hands"]]
    seen = Seen()
    assert hands == chips_by_hand(preset, events, seen)
    # Each winner saw at OK? the chips its tiles hold (yakuman chips aside: the core adds
    # those to the value's).
    for seat, counted in wins_counted(preset, events):
        assert (seat, counted) in shown, (seat, counted, shown)
    assert any(any(c) for c in hands)
    # The game's chips and P as the daemon settled them.
    money = played.finals[0]["money"]
    assert money["chips"] == [sum(c) for c in zip(*hands, strict=True)]
    assert money["total"] == [sum(parts) for parts in zip(*(money[k] for k in PARTS), strict=True)]
    # The same P at GAME OVER on every seat's display, and in the records.
    assert sorted(game_over) == list(range(rules.players)), game_over
    for seat, line2 in game_over.items():
        assert line2.endswith(f" {money['total'][seat]:+d}P"), (seat, line2)
    record = finished_record(tmp_path)
    assert list(record.p) == money["total"] and list(record.chips) == money["chips"]
    assert seen.riichi and seen.fives and seen.ura, seen

    # The tenhou.net/6 log carries what earns chips, in its yaku: the same counts.
    log = json.loads(export_text("tenhou6", rules, events))
    assert chips_in_tenhou6(preset, log) == hands

    # Over MQTT: each hand with its chips, the game with its P, as the journal has them.
    sent = published.seen
    assert [h["chips"] for h in sent["hands"]] == hands
    assert [h["hand"] for h in sent["hands"]] == list(range(1, len(hands) + 1))
    (game,) = [g for g in sent["games"] if g["final"] is not None]
    assert game["final"]["money"] == money == result["final"]["money"]
    # And on the dashboard: the game's P and chips per seat, each hand's chips.
    model = ParlorModel()
    for topic, payload in published.raw:
        model.apply(topic, payload, 0.0)
        if topic.endswith("/games"):
            break  # (the next game's first state starts its own list of hands)
    (shown,) = model.view("games")["games"]
    assert shown["money"] == {"chips": money["chips"], "total": money["total"]}
    table = model.view(f"table:{game['table']}")["table"]
    assert [h["chips"] for h in table["hands"]] == hands


def _typed(event: ev.Ron | ev.Tsumo) -> bool:
    """A win with a chip count in it (a reading table never types one)."""
    hands = event.winners if isinstance(event, ev.Ron) else (event.hand,)
    return any(h.chips is not None for h in hands)
