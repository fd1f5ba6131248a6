"""Whole games at a table that reads every tile, daemon and simulator back to back: every
hand is tile-aware (a layout after the dice, tiles on every take, discard, call, kan and
north), no hand reader is found disagreeing with the tiles, every win is scored by the
daemon and agreed with OK (``... OK?``), every draw is decided by the tiles, the journal
replays through the core with nothing refused, and the game exports as a tenhou.net/6 log
(docs/tiles.md, "The daemon"). A hand reader that misreads puts its hand back to keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firmware_bridge.messages import KeyPress, SeatDisplay, SeatTiles, Zone
from tablectl.export import export_text
from tablectl.journal import Journal, export_game
from tablectl.replay import replay
from tablectl.rules import events as ev
from tablectl.rules.loader import load_rules
from tests.sim.test_autoplay import Played, frames, patient_link, play  # noqa: F401
from tests.sim.test_tiles import READERS


def journal_game(tmp: Path) -> tuple[str, list[ev.Event], str]:
    """The game the daemon finished in ``tmp``: its id, events and replay lines."""
    (path,) = tmp.glob("journal-*.sqlite3")
    journal = Journal.open(path, readonly=True)
    try:
        # The first game, finished (the daemon began the next one before it stopped).
        (game,) = [g for g in journal.games() if g.finished]
        return game.game_id, journal.events(game.game_id), export_game(journal, game.game_id)
    finally:
        journal.close()


def read_from_the_tiles(played: Played, tmp: Path) -> list[ev.Event]:
    """Check a whole game played at a table that reads every tile (see the module doc);
    its journalled events."""
    assert len(played.finals) == 1
    bots = played.table.bots
    assert bots is not None and bots.refusals == []
    _, events, lines = journal_game(tmp)

    # Every hand is tile-aware: a layout right after each dice, tiles on every move.
    dice = [i for i, e in enumerate(events) if isinstance(e, ev.Dice)]
    assert dice and all(isinstance(events[i + 1], ev.Layout) for i in dice)
    assert not any(isinstance(e, ev.TilesOff) for e in events)
    assert all(e.tile is not None for e in events if isinstance(e, ev.Take | ev.Discard))
    assert all(e.tiles for e in events if isinstance(e, ev.Call | ev.Kan))
    assert all(e.tile is not None for e in events if isinstance(e, ev.North))

    # The journal replays through the core with nothing refused, to the daemon's result.
    result = replay(lines.splitlines())
    assert result.rejected == []
    assert result.state.finished
    assert result.as_dict()["final"] == played.finals[0]

    # The wins were scored and agreed with OK; nobody keyed han, fu, tenpai or noten.
    wins = [e for e in events if isinstance(e, ev.Ron | ev.Tsumo)]
    tx, rx = frames(played.transcript)
    # (The hand readers reported every hand, and the daemon found them all agreeing.)
    assert any(isinstance(m, SeatTiles) and m.zone is Zone.HAND and m.tiles for m in tx)
    shown = [d.line1 for d in rx if isinstance(d, SeatDisplay)]
    assert wins and any(line.endswith("OK?") for line in shown)
    assert not any(line.startswith(("HAN?", "FU?", "TENPAI?")) for line in shown)
    keys = {m.key.name for m in tx if isinstance(m, KeyPress)}
    assert not keys & {"TENPAI", "NOTEN"}
    draws = [e for e in events if isinstance(e, ev.Draw)]
    if draws:
        assert any(line.startswith("CONFIRM TENPAI") or "NOTEN" in line for line in shown)
    assert len(result.hands) == len(dice)
    return events


@pytest.mark.parametrize(("preset", "seed"), [("tenhou", 1), ("sanma-free", 3), ("jboy", 2)])
async def test_a_whole_game_is_read_from_the_tiles(tmp_path: Path, preset: str, seed: int) -> None:
    played = await play(tmp_path, preset, seed, **READERS)
    events = read_from_the_tiles(played, tmp_path)
    # And the game is a tenhou.net/6 log.
    log = json.loads(export_text("tenhou6", load_rules(preset), events))
    assert len(log["log"]) == sum(isinstance(e, ev.Dice) for e in events)


@pytest.mark.parametrize(
    ("seed", "holds"),
    [(1, ("ron off several", "tsumo")), (3, ("ron after the draw", "pon")), (4, ("draw",))],
)
async def test_a_whole_kantan_game_is_read_from_the_tiles(
    tmp_path: Path, seed: int, holds: tuple[str, ...]
) -> None:
    # Kantan (seed 004): calls and rons on one's own turn off any seat's last discard, a
    # stand-in from the caller's own wall in its meld zone (the called tile stays in the
    # discarder's pond), rons naming every discarder whose last discard wins, the 18th
    # discards ronned by any seat after the draw. The bots play the tiles; the daemon
    # scores every win and decides every draw; nothing seed 004 allows is refused.
    played = await play(tmp_path, "kantan", seed, **READERS)
    events = read_from_the_tiles(played, tmp_path)
    calls = [e for e in events if isinstance(e, ev.Call)]
    assert calls and all(e.kind in ("chi", "pon") for e in calls)
    found = {
        "ron off several": any(isinstance(e, ev.Ron) and len(e.discarders) > 1 for e in events),
        "ron after the draw": _ron_after_the_draw(events),
        "tsumo": any(isinstance(e, ev.Tsumo) for e in events),
        "pon": any(e.kind == "pon" for e in calls),
        "draw": any(isinstance(e, ev.Draw) for e in events),
    }
    assert all(found[what] for what in holds), found
    # Each stand-in (the take right after a call) lay among its caller's melds, and no
    # pond ever gave up a tile in a hand: the called tiles stayed in them.
    tx, _ = frames(played.transcript)
    snaps = [m for m in tx if isinstance(m, SeatTiles)]
    for call, take in zip(events, events[1:], strict=False):
        if isinstance(call, ev.Call):
            assert isinstance(take, ev.Take) and take.seat == call.seat
            assert any(
                m.seat == call.seat and m.zone is Zone.MELDS and take.tile in m.tiles for m in snaps
            )
    ponds: dict[int, tuple[int, ...]] = {}
    for m in snaps:
        if m.zone is Zone.DISCARDS:
            before = ponds.get(m.seat, ())
            assert not m.tiles or m.tiles[: len(before)] == before
            ponds[m.seat] = m.tiles


def _ron_after_the_draw(events: list[ev.Event]) -> bool:
    """A ron after every seat made its 18 discards (kantan's last discards)."""
    discards = 0
    for event in events:
        if isinstance(event, ev.Dice):
            discards = 0
        discards += isinstance(event, ev.Discard)
        if isinstance(event, ev.Ron) and discards == 72:
            return True
    return False


async def test_a_hand_reader_that_misreads_puts_that_hand_back_to_key_entry(
    tmp_path: Path,
) -> None:
    # Seat 1's hand reader reads one of its tiles as another copy of that kind from the
    # 300th event the table sends until the next shuffle (hw_sim's misread fault): the
    # daemon finds it at seat 1's next turn (docs/tiles.md, "The daemon").
    played = await play(tmp_path, "tenhou", 1, faults="misread@300:1", **READERS)
    assert len(played.finals) == 1
    bots = played.table.bots
    assert bots is not None and bots.refusals == []
    _, events, lines = journal_game(tmp_path)
    (off,) = [e for e in events if isinstance(e, ev.TilesOff)]
    assert off.reason.startswith("seat 1's hand reader disagrees with its hand")
    # That hand goes on keyed; every hand after it reads its tiles again.
    at = events.index(off)
    dice = [i for i, e in enumerate(events) if isinstance(e, ev.Dice)]
    later = [i for i in dice if i > at]
    assert later and all(isinstance(events[i + 1], ev.Layout) for i in later)
    assert all(e.tile is not None for e in events[later[0] :] if isinstance(e, ev.Discard))
    _, rx = frames(played.transcript)
    told = [d.line2 for d in rx if isinstance(d, SeatDisplay) and d.seat == 1]
    assert any(line.startswith("! hand: ") for line in told)
    # The journal replays with nothing refused, to the daemon's result.
    result = replay(lines.splitlines())
    assert result.rejected == [] and result.as_dict()["final"] == played.finals[0]
