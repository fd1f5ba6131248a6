"""``tablectl bringup`` against the simulator, with a script playing the technician: it
does what each seat display asks (press the key shown, confirm what is seen, take a tile,
move a stick), except where a test makes a part of the table broken."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.messages import Capability, Key, Message, SeatDisplay
from hw_sim import SimTable
from tablectl.bringup import KEYS, Timeouts, run_bringup, write_report


class Technician:
    """Reads the seat displays the tool writes and does what they say, a moment later
    (a person reads before acting). ``dead_keys`` never arrive; ``says_no`` are the seats
    where the technician answers CANCEL to "is it shown?"."""

    def __init__(
        self,
        sim: SimTable,
        dead_keys: AbstractSet[tuple[int, Key]] = frozenset(),
        says_no: AbstractSet[int] = frozenset(),
    ) -> None:
        self.sim = sim
        self.dead_keys = dead_keys
        self.says_no = says_no
        sim.firmware.add_listener(self.on_message)

    def on_message(self, direction: str, msg: Message) -> None:
        if direction != "rx" or not isinstance(msg, SeatDisplay):
            return
        loop = asyncio.get_running_loop()
        seat, line1, line2 = msg.seat, msg.line1, msg.line2
        if line1.startswith("PRESS "):
            key = Key[line1.removeprefix("PRESS ")]
            if (seat, key) not in self.dead_keys:
                loop.call_later(0.01, self.sim.press, seat, key)
        elif "OK=SEEN" in line2 or "OK=HEARD" in line2:
            answer = Key.CANCEL if seat in self.says_no else Key.OK
            loop.call_later(0.01, self.sim.press, seat, answer)
        elif line1.startswith("TAKE WALL "):
            wall = int(line1.removeprefix("TAKE WALL "))
            loop.call_later(0.01, self.sim.take, seat, wall * 34)
        elif line1 == "MOVE A STICK":
            loop.call_later(0.01, self.sim.firmware.move_tray, seat, 1000)


FAST = Timeouts(key=1.0, confirm=1.0, motors=5.0, dice=2.0)


async def _bringup(sim: SimTable, **technician: Any) -> Any:
    port = await sim.start_tcp()
    Technician(sim, **technician)
    lines: list[str] = []
    try:
        return await run_bringup(f"socket://127.0.0.1:{port}", lines.append, FAST), lines
    finally:
        await sim.close()


async def test_a_working_table_passes_every_item(tmp_path: Path) -> None:
    sim = SimTable("tenhou", 2, autoplay=False, tile_reader=True, trays=True)
    report, lines = await _bringup(sim)
    assert report.passed, report.text()
    parts = {i.part: i for i in report.items}
    assert len([p for p in parts if " key " in p]) == 4 * len(KEYS)
    for expected in ("seat 3 display and lamps", "centre display", "buzzer", "dice",
                     "wall 2 shuffle", "wall 2 raise", "wall 1 take sensor",
                     "wall 1 tile reader", "seat 0 tray"):  # fmt: skip
        assert parts[expected].status == "ok", expected
    assert parts["wall 0 shuffle"].detail == "SHUFFLING -> BUILDING -> RAISING -> DONE"
    assert set(report.capabilities) >= {"SEAT_CONSOLES", "TILE_READER", "TRAY_SENSORS"}
    assert any("seat 0: press DIGIT_0" in line for line in lines)
    text, data = write_report(report, tmp_path / "bringup")
    assert text.read_text().splitlines()[-1].startswith(f"{len(report.items)} ok, 0 failed")
    assert json.loads(data.read_text())["passed"] is True


async def test_a_dead_key_and_a_dark_display_are_reported() -> None:
    sim = SimTable("tenhou", 2, autoplay=False)
    report, _ = await _bringup(sim, dead_keys={(2, Key.RON)}, says_no={1})
    assert not report.passed
    status = {i.part: i.status for i in report.items}
    assert status["seat 2 key RON"] == "missing"
    assert status["seat 2 key TSUMO"] == "ok"
    assert status["seat 1 display and lamps"] == "failed"
    # What the simulated table does not have is skipped, not failed.
    assert status["trays"] == "skipped" and "TRAY_SENSORS" in report.text()
    assert Capability.TRAY_SENSORS.name not in report.capabilities


async def test_a_wall_that_counts_wrong_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = SimTable("tenhou", 2, autoplay=False)
    sim.firmware._tile_count_error = 1  # the next wall-1 build counts one tile short
    report, _ = await _bringup(sim)
    wall = {i.part: i for i in report.items}["wall 1 shuffle"]
    assert wall.status == "failed" and "33 tiles of 34" in wall.detail


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gopher://x"], "allowed: a serial device path"),
        (["socket://127.0.0.1:1", "--key-timeout", "0"], "--key-timeout must be 0..3600 s"),
    ],
)
def test_bad_input_gets_one_line(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tablectl.cli", "bringup", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
