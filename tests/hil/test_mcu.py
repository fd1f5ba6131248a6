"""The device library bare-metal on an emulated Cortex-M3 (``firmware/qemu.sh``: QEMU's
mps2-an385, the link on UART0's pty, the person at the table on UART1's): every
conformance check, the interactive ones typed on the harness UART, and ``tablectl run``
playing a scripted hand through a kill -9 of the daemon and two warm resets of the board.

Without the Arm toolchain and QEMU these tests skip with the install line (they fail under
``CI=true``: .ci/run installs them)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import firmware_bridge.conformance as conformance
from firmware_bridge.endpoints import open_transport
from firmware_bridge.messages import Key
from tablectl.journal import Journal
from tablectl.rules import wall as W
from tablectl.rules.events import Dice, Hand, Take, Tsumo
from tablectl.rules.loader import load_rules
from tablectl.rules.walltrack import wall_rules
from tests.helpers import journal_events, stop_process
from tests.hil.board import QEMU_SH, Harness, board, require_toolchain
from tests.hil.daemon import daemon_config, start_daemon, until_up

#: The link's stack budget in the linker script (port/mps2-an385/mps2-an385.ld).
STACK_SIZE = 2560


async def test_the_emulated_board_passes_every_check(monkeypatch: pytest.MonkeyPatch) -> None:
    with board() as (url, harness):
        assert harness.stats()["queue"] == 32  # qemu.sh's default

        def person(text: object) -> None:
            if "press any key" in str(text):
                harness.type("press 0 0x20")  # OK on seat 0
            elif "reset button" in str(text):
                harness.type("reset")

        monkeypatch.setattr(conformance, "_say", person)
        transport = await open_transport(url)
        report = await conformance.run_checks(transport, url, interactive=True)
        statuses = {r.name: r.status for r in report.results}
        assert statuses == {name: "pass" for name in conformance.CHECKS}, "\n".join(report.lines())
        # The reset was the board's own (SYSRESETREQ), the unacked event kept in .noinit.
        kept = harness.until(r"mps2: warm boot \d+ queue \d+ kept (\d+)")
        assert int(kept.group(1)) >= 1
        stats = harness.stats()
    assert stats["warm_resets"] == 1 and stats["events_dropped"] == 0, stats
    assert 0 < stats["stack_used"] < STACK_SIZE, stats


def _wait_display(harness: Harness, seat: int, start: str, timeout: float = 30.0) -> None:
    """Until ``seat``'s display starts with ``start`` (read from the board, as the player
    at that seat reads it)."""
    deadline = time.monotonic() + timeout
    shown: dict[int, str] = {}
    while time.monotonic() < deadline:
        shown = harness.show()
        if shown.get(seat, "").startswith(start):
            return
        time.sleep(0.1)  # another process draws it: polling is how a player sees it
    raise AssertionError(f"seat {seat} never showed {start!r}: {shown}")


def _until_journalled(journal: Path, count: int, log: Path) -> None:
    """Until the daemon has journalled ``count`` events."""
    deadline = time.monotonic() + 30
    while journal_events(journal) < count:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)  # another process writes the journal: polling is how to watch it


def _press(harness: Harness, seat: int, *keys: Key) -> None:
    for key in keys:
        harness.type(f"press {seat} {int(key)}")


def test_the_daemon_plays_a_hand_on_the_board_through_a_kill_9_and_warm_resets(
    tmp_path: Path,
) -> None:
    """The dealer's tsumo (3 han 30 fu, 2000 all) with the daemon killed (SIGKILL) mid-deal
    and the board reset while a take is unacknowledged: the journal holds each take once,
    in order, as an uninterrupted run would."""
    rules = wall_rules(load_rules("tenhou"))
    config, log, sock = (
        daemon_config(tmp_path, "URL"),
        tmp_path / "daemon.log",
        tmp_path / "ctl.sock",
    )
    deal = [*(i % 4 for i in range(16)), 0]  # three blocks of four, one each, the dealer's jump
    with board() as (url, harness):
        config.write_text(config.read_text().replace('"URL"', f'"{url}"'), "utf-8")
        daemon = start_daemon(config, log)
        try:
            until_up(sock, daemon, log)
            _wait_display(harness, 0, "ROLL?")
            _press(harness, 0, Key.OK)
            dice = (0, 0)
            while dice == (0, 0):  # the dice show once the roll came in
                words = harness.ask("show", "show: end")[0].split()
                dice = (int(words[3]), int(words[4]))
            wall = W.start_wall(rules, 0, dice)
            assert isinstance(wall, W.WallState)
            expected: list[object] = [Dice(dice)]
            for i, seat in enumerate(deal):
                after = W.wall_step(rules, wall, Take(seat))
                assert isinstance(after, W.WallState)
                position, wall = after.taken[len(wall.taken)], after
                expected.append(Take(seat, position))
                if i == 6:
                    # The daemon dies mid-deal, once it has journalled what came before
                    # (a DiceResult resent to the next daemon is ignored as "outside a
                    # roll": a daemon matter, not the board's); a player takes meanwhile,
                    # then the board is reset before any host has acknowledged the take.
                    _until_journalled(tmp_path / "journal.sqlite3", len(expected) - 1, log)
                    daemon.send_signal(signal.SIGKILL)
                    daemon.wait()
                    harness.type(f"take {seat} {position}")
                    harness.type("reset")
                    kept = harness.until(r"mps2: warm boot \d+ queue \d+ kept (\d+)")
                    assert int(kept.group(1)) >= 1, harness.seen
                    daemon = start_daemon(config, log)
                    until_up(sock, daemon, log)
                elif i == 12:
                    # A reset with the daemon there: the take may be in flight as it comes.
                    harness.type(f"take {seat} {position}")
                    harness.type("reset")
                    harness.until(r"mps2: warm boot")
                else:
                    harness.type(f"take {seat} {position}")
            _press(harness, 0, Key.TSUMO)
            _wait_display(harness, 0, "HAN?")
            _press(harness, 0, Key.DIGIT_3, Key.OK)
            _wait_display(harness, 0, "FU?")
            _press(harness, 0, Key.DIGIT_3, Key.DIGIT_0, Key.OK)
            for seat in range(4):
                _wait_display(harness, seat, "CONFIRM")
            for seat in range(4):
                _press(harness, seat, Key.OK)
            _wait_display(harness, 0, "ROLL?")  # the next hand: the dealer kept the deal
            shown = harness.show()
        finally:
            stopped = stop_process(daemon, timeout=15)
        stats = harness.stats()
    assert stopped == 0, log.read_text()  # a clean stop on SIGTERM
    assert stats["warm_resets"] == 2 and stats["events_dropped"] == 0, stats
    assert "resuming game" in log.read_text()
    journal = Journal.open(tmp_path / "journal.sqlite3", readonly=True)
    try:
        (game,) = journal.games()
        events = journal.events(game.game_id)
    finally:
        journal.close()
    assert events == [*expected, Tsumo(Hand(seat=0, han=3, fu=30))], events
    assert [shown[s] for s in (1, 2, 3)] == ["S 23000", "W 23000", "N 23000"]  # 2000 all


def test_qemu_sh_answers_bad_arguments_with_one_line() -> None:
    require_toolchain()
    for args, env in ((["--bogus"], {}), ([], {"ARM_BUILD": "/tmp/elsewhere"})):
        done = subprocess.run(
            [str(QEMU_SH), *args], capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, **env},
        )  # fmt: skip
        assert done.returncode == 2, (args, env, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("qemu.sh: "), done.stderr
