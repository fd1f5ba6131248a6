"""Key press to display latency, end to end through pty, bridge and daemon.

Run from the repository root::

    .venv/bin/python bench/latency.py [--presses 10000] [--games 3]

The simulated table (``hw_sim``, this process, no bots) serves a pty; the daemon runs in
its own process (``tablectl run --config ...`` whose ``device`` is that pty). Seats 1-3
press DIGIT_0 in turn (it cycles the seat's score page, so every press changes that seat's
display; seat 0 is the dealer and shows ``ROLL?``). One sample is ``time.perf_counter_ns()``
just before ``SimTable.press`` posts the ``KeyPress`` to the arrival of that seat's
``SeatDisplay`` at the simulated firmware (its command listener, called once the command
took effect). One press at a time: the next press goes once the display of the last one
arrived. A DIGIT_0 press is not a rules event, so it is not journalled (no fsync).

The floor: the same simulator, pty and measurement with ``bench/echo_peer.py`` in the
daemon's place (a host ``Link`` that answers each KeyPress with a SeatDisplay at once).

The journalled path: autoplayed games (bots, same pty set-up, daemon in its own process);
one sample is a ``WallTake`` leaving the simulator (its transmit listener, just after the
frame was written) to the next ``CentreDisplay`` arriving, when nothing else was sent in
between. A take is a rules event: the daemon appends it to the journal (SQLite,
``synchronous=FULL``, an fsync) before it sends the display. Its floor
(``journalled_floor_us``): the echo's p99 plus one fsync of the journal's disk (the median
of 200 timed 4 KiB write + fsync of a file in the journal's directory, this same run);
``journalled_ratio`` is the journalled take's p99 over that floor.

**With the C firmware as the table** (``*_c`` keys; ``--no-c-firmware`` skips them): a
production table's side of the link is a microcontroller running the C device library, so
the same three figures are measured with its POSIX port (``firmware/build/table-posix
--pty``, built by ``make -C firmware``) in the simulator's place. The port times each
sample on its side of the link (its ``burst`` and ``timed take`` hooks): a DIGIT_0 press
to the seat's display, one at a time, against the echo peer and against the daemon; and a
``WallTake`` to the next centre display, in hands this benchmark plays through the port's
stdin with the rules' wall tracker (every seat takes in turn, every hand ends in an
exhaustive draw, every seat NOTEN). Its floor: that echo's p99 plus the same fsync.

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common
from _ctable import CTable, CTableError

from firmware_bridge.messages import CentreDisplay, Key, Message, SeatDisplay, WallTake
from hw_sim import SimTable
from tablectl.rules import wall as W
from tablectl.rules.events import Discard, Take
from tablectl.rules.loader import load_rules
from tablectl.rules.refusal import Refusal
from tablectl.rules.walltrack import wall_rules

PRESET = "tenhou"  # no game clock: a press changes exactly one display
SEED = 1
SEATS = (1, 2, 3)
WARMUP = 200
READY_TIMEOUT_S = 30.0


async def _press_loop(sim: SimTable, n: int) -> list[int]:
    """Press DIGIT_0 ``n`` times (after a warm-up); round trips in nanoseconds."""
    fw = sim.firmware
    loop = asyncio.get_running_loop()
    waiting: dict[str, Any] = {"seat": -1, "fut": None}

    def on_message(direction: str, msg: Message) -> None:
        if direction != "rx" or not isinstance(msg, SeatDisplay):
            return
        fut = waiting["fut"]
        if fut is not None and msg.seat == waiting["seat"] and not fut.done():
            fut.set_result(time.perf_counter_ns())

    fw.add_listener(on_message)
    samples: list[int] = []
    try:
        for i in range(WARMUP + n):
            seat = SEATS[i % len(SEATS)]
            fut: asyncio.Future[int] = loop.create_future()
            waiting["seat"], waiting["fut"] = seat, fut
            start = time.perf_counter_ns()
            sim.press(seat, Key.DIGIT_0)
            async with asyncio.timeout(10):
                end = await fut
            if i >= WARMUP:
                samples.append(end - start)
    finally:
        waiting["fut"] = None
    return samples


async def bench_echo(n: int) -> dict[str, Any]:
    """The floor: a bare echo host on the same pty."""
    sim = SimTable(PRESET, SEED, autoplay=False)
    url = await sim.start_pty()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("echo_peer.py")), url
    )
    try:
        if not await sim.firmware.wait_for(lambda: sim.firmware.link_up, READY_TIMEOUT_S):
            raise RuntimeError("the echo peer did not connect")
        samples = await _press_loop(sim, n)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return common.summary_us(samples)


async def bench_daemon(n: int, tmp: Path) -> dict[str, Any]:
    """DIGIT_0 through the daemon (``tablectl run``, its own process)."""
    sim = SimTable(PRESET, SEED, autoplay=False)
    url = await sim.start_pty()
    config = common.write_config(tmp, url, PRESET, tmp / "latency.sqlite3", "latency")
    proc = await common.start_daemon(config, tmp / "latency.log")
    try:
        await common.wait_ready(sim, SEATS, READY_TIMEOUT_S)
        samples = await _press_loop(sim, n)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return common.summary_us(samples)


async def bench_journalled(games: int, tmp: Path) -> dict[str, Any]:
    """WallTake (journalled) to the CentreDisplay it causes, in autoplayed games."""
    sim = SimTable(PRESET, SEED, max_games=games)
    url = await sim.start_pty()
    journal = tmp / "journalled.sqlite3"
    config = common.write_config(tmp, url, PRESET, journal, "journalled")
    samples: list[int] = []
    pending: dict[str, int | None] = {"t": None}

    def on_message(direction: str, msg: Message) -> None:
        now = time.perf_counter_ns()
        if direction == "tx":
            pending["t"] = now if isinstance(msg, WallTake) else None
        elif isinstance(msg, CentreDisplay) and pending["t"] is not None:
            samples.append(now - pending["t"])
            pending["t"] = None

    sim.firmware.add_listener(on_message)
    proc = await common.start_daemon(config, tmp / "journalled.log")
    try:
        async with asyncio.timeout(120 * games):
            await sim.wait_games(games)
    finally:
        await common.stop_daemon(proc)
        await sim.close()
    return {"games": games, **common.summary_us(samples)}


def _c_ready(lines: list[tuple[str, str]]) -> bool:
    """The daemon drove the C table to its first prompt (as ``common.wait_ready``)."""
    return lines[0][0].startswith("ROLL?") and all(lines[s][0] for s in SEATS)


async def bench_echo_c(n: int) -> dict[str, Any]:
    """The floor with the C firmware as the table: the echo peer on its pty."""
    table = CTable()
    url = await table.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).with_name("echo_peer.py")), url
    )
    try:
        # The echo host draws nothing: wait until it answers a press at all.
        async with asyncio.timeout(READY_TIMEOUT_S):
            while (await table.burst(1, 1, Key.DIGIT_0, SEATS[:1])).answered < 1:
                pass
        burst = await table.burst(WARMUP + n, 1, Key.DIGIT_0, SEATS)
    finally:
        await common.stop_daemon(proc)
        await table.close()
    return common.summary_us(burst.samples_ns[WARMUP:])


async def bench_daemon_c(n: int, tmp: Path) -> dict[str, Any]:
    """DIGIT_0 through the daemon with the C firmware as the table."""
    table = CTable()
    url = await table.start()
    config = common.write_config(tmp, url, PRESET, tmp / "latency-c.sqlite3", "latency-c")
    proc = await common.start_daemon(config, tmp / "latency-c.log")
    try:
        await table.wait_for(_c_ready, READY_TIMEOUT_S)
        burst = await table.burst(WARMUP + n, 1, Key.DIGIT_0, SEATS)
    finally:
        await common.stop_daemon(proc)
        await table.close()
    return common.summary_us(burst.samples_ns[WARMUP:])


async def _play_hand_c(table: CTable, dealer: int, takes: int, samples: list[int]) -> None:
    """Roll for ``dealer`` and take in turn until the wall is exhausted (or ``takes``
    samples are in), each take timed; then the first seat to answer declares NOTEN."""
    rules = wall_rules(load_rules(PRESET))
    (rolled, _, _), _ = await table.show()
    table.press(dealer, Key.OK)
    async with asyncio.timeout(READY_TIMEOUT_S):
        while True:
            (count, die1, die2), _ = await table.show()
            if count > rolled:
                break
            await asyncio.sleep(0.005)
    state = W.start_wall(rules, dealer, (die1, die2))
    while len(samples) < takes:
        if isinstance(state, Refusal):
            raise CTableError(f"the wall tracker refused the hand: {state.message}")
        if state.finished:
            table.press(state.turn, Key.NOTEN)
            return
        if state.phase in (W.DISCARD, W.CALLED):
            state = W.wall_step(rules, state, Discard(state.turn))
            continue
        seat = state.turn
        pos = W.next_position(rules, state, seat)
        if pos is None:
            raise CTableError(f"seat {seat} cannot take in phase {state.phase}")
        samples.append(await table.timed_take(seat, pos))
        state = W.wall_step(rules, state, Take(seat, pos))


async def bench_journalled_c(takes: int, tmp: Path) -> dict[str, Any]:
    """WallTake (journalled) to the CentreDisplay it causes, the C firmware as the table:
    hands of takes only, every prompt between them answered (NOTEN, OK)."""
    table = CTable()
    url = await table.start()
    config = common.write_config(tmp, url, PRESET, tmp / "journalled-c.sqlite3", "journalled-c")
    proc = await common.start_daemon(config, tmp / "journalled-c.log")
    samples: list[int] = []
    hands = 0
    answers = {"TENPAI?": Key.NOTEN, "CONFIRM": Key.OK, "GAME OVER": Key.OK, "STOP?": Key.OK}
    try:
        await table.wait_for(_c_ready, READY_TIMEOUT_S)
        async with asyncio.timeout(max(120.0, takes / 10)):
            while len(samples) < takes:
                _, lines = await table.show()
                prompts = [(seat, l1) for seat, (l1, _) in enumerate(lines)]
                roll = [seat for seat, l1 in prompts if l1.startswith("ROLL?")]
                if roll:
                    await _play_hand_c(table, roll[0], takes, samples)
                    hands += 1
                    continue
                for seat, l1 in prompts:
                    key = next((k for p, k in answers.items() if l1.startswith(p)), None)
                    if key is not None:
                        table.press(seat, key)
                await asyncio.sleep(0.02)
    finally:
        await common.stop_daemon(proc)
        await table.close()
    return {"hands": hands, **common.summary_us(samples)}


async def run_c(presses: int, takes: int, tmp: Path) -> dict[str, Any]:
    """The C firmware peer's figures, or why there are none."""
    try:
        echo = await bench_echo_c(presses)
        daemon = await bench_daemon_c(presses, tmp)
        journalled = await bench_journalled_c(takes, tmp) if takes else None
    except CTableError as exc:
        return {"error": str(exc)}
    return {"echo": echo, "daemon": daemon, "journalled_take": journalled}


#: fsyncs timed for the floor of a journalled take.
FSYNC_SAMPLES = 200


def bench_fsync(folder: Path, samples: int = FSYNC_SAMPLES) -> dict[str, float]:
    """One 4 KiB write and fsync of a file in ``folder`` (the journal's disk), timed
    ``samples`` times: what one durable commit costs at the least."""
    path = folder / "fsync.probe"
    block = b"\x5a" * 4096
    times: list[int] = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for i in range(samples):
            os.pwrite(fd, block, (i % 16) * 4096)
            t0 = time.perf_counter_ns()
            os.fsync(fd)
            times.append(time.perf_counter_ns() - t0)
    finally:
        os.close(fd)
        path.unlink()
    return common.summary_us(times)


async def run(presses: int, games: int, c_takes: int | None = None) -> dict[str, Any]:
    """All three measurements with each peer; the figures the issue asks for at the top.
    ``c_takes``: journalled takes with the C firmware as the table (None: no C peer)."""
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as folder:
        tmp = Path(folder)
        echo = await bench_echo(presses)
        daemon = await bench_daemon(presses, tmp)
        journalled = await bench_journalled(games, tmp) if games else None
        c_peer = await run_c(presses, c_takes, tmp) if c_takes is not None else None
        fsync = bench_fsync(tmp)
    # The floor of a journalled take: the echo's round trip plus one fsync of the
    # journal's disk (its median), measured in this same run.
    floor = echo["p99_us"] + fsync["p50_us"]
    out = {
        "latency_p50_us": daemon["p50_us"],
        "latency_p99_us": daemon["p99_us"],
        "latency_max_us": daemon["max_us"],
        "echo_p50_us": echo["p50_us"],
        "echo_p99_us": echo["p99_us"],
        "echo_max_us": echo["max_us"],
        "latency_ratio": round(daemon["p99_us"] / echo["p99_us"], 2),
        "latency_ratio_p50": round(daemon["p50_us"] / echo["p50_us"], 2),
        "presses": presses,
        "daemon": daemon,
        "echo": echo,
        "journalled_take": journalled,
        "fsync": fsync,
        "journalled_floor_us": round(floor, 1),
    }
    if journalled and journalled.get("n"):
        out["journalled_p50_us"] = journalled["p50_us"]
        out["journalled_p99_us"] = journalled["p99_us"]
        out["journalled_ratio"] = round(journalled["p99_us"] / floor, 2)
    if c_peer is not None:
        out["c_firmware"] = c_peer
        if "error" not in c_peer:
            echo_c, daemon_c = c_peer["echo"], c_peer["daemon"]
            floor_c = echo_c["p99_us"] + fsync["p50_us"]
            out["latency_p99_us_c"] = daemon_c["p99_us"]
            out["echo_p99_us_c"] = echo_c["p99_us"]
            out["latency_ratio_c"] = round(daemon_c["p99_us"] / echo_c["p99_us"], 2)
            out["journalled_floor_us_c"] = round(floor_c, 1)
            taken = c_peer["journalled_take"]
            if taken and taken.get("n"):
                out["journalled_p50_us_c"] = taken["p50_us"]
                out["journalled_p99_us_c"] = taken["p99_us"]
                out["journalled_ratio_c"] = round(taken["p99_us"] / floor_c, 2)
    return out


def main() -> None:
    """Parse the sizes, run, print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=10000)
    parser.add_argument("--games", type=int, default=3, help="autoplayed games (journalled)")
    parser.add_argument(
        "--c-takes", type=int, default=1500, help="journalled takes with the C firmware peer"
    )
    parser.add_argument(
        "--no-c-firmware", action="store_true", help="skip the C firmware peer's figures"
    )
    args = parser.parse_args()
    if args.presses < 1 or args.games < 0 or args.c_takes < 0:
        parser.error("--presses must be at least 1, --games and --c-takes not negative")
    c_takes = None if args.no_c_firmware else args.c_takes
    result = asyncio.run(run(args.presses, args.games, c_takes))
    print(json.dumps({"machine": common.machine(), **result}))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
