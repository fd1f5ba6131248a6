"""Repeated warnings are logged once per kind, then counted once a window (issue #32):
50,000 undecodable frames once wrote 50,202 WARNING lines (7.8 MB) in minutes."""

from __future__ import annotations

import asyncio
import dataclasses
import logging

import pytest

from firmware_bridge.messages import Key, KeyPress
from firmware_bridge.ratelog import RateLimitedLog
from firmware_bridge.testing import link_pair
from tests.bridge.test_link import collect, exchange

LOGGER = "tests.ratelog"


class FakeClock:
    """Time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_the_first_of_a_kind_is_logged_then_a_count_once_a_window(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    ratelog = RateLimitedLog(logging.getLogger(LOGGER), clock=clock)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for i in range(10_000):
            clock.now += 0.001  # 10 s of a flood
            ratelog.warning("bad frames", "bad frame %d", i)
        assert messages(caplog) == ["bad frame 0"]
        assert ratelog.held("bad frames") == 9_999
        clock.now += 55.0  # 65 s after the first: the next one reports the lot
        ratelog.warning("bad frames", "bad frame %d", 10_000)
        assert messages(caplog)[1:] == [
            "10000 more bad frames in the last 65 s (latest: bad frame 10000)"
        ]
        assert ratelog.held("bad frames") == 0


def test_kinds_are_counted_apart_and_a_quiet_kind_is_logged_in_full_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    ratelog = RateLimitedLog(logging.getLogger(LOGGER), window_s=60.0, clock=clock)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        ratelog.warning("a", "a 1")
        ratelog.warning("b", "b 1")
        ratelog.warning("a", "a 2")
        clock.now += 61.0
        ratelog.warning("b", "b 2")  # nothing held for b: in full, as a first one
        ratelog.error("a", "a %s", 3)
    assert messages(caplog) == ["a 1", "b 1", "b 2", "2 more a in the last 61 s (latest: a 3)"]
    assert caplog.records[-1].levelno == logging.ERROR


def test_flush_reports_what_a_window_still_holds(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    ratelog = RateLimitedLog(logging.getLogger(LOGGER), clock=clock)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for _ in range(5):
            ratelog.warning("x", "x")
        clock.now += 12.4
        ratelog.flush()
        ratelog.flush()  # nothing more held: nothing more said
    assert messages(caplog) == ["x", "4 more x in the last 12 s"]


@dataclasses.dataclass(frozen=True, slots=True)
class GarbledKey(KeyPress):
    """A key event whose payload no decoder accepts (a table with broken firmware)."""

    def to_bytes(self) -> bytes:
        return b"\xff\xff\xff"


async def test_a_flood_of_undecodable_frames_writes_a_bounded_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    flood = 3_000
    with caplog.at_level(logging.WARNING, logger="firmware_bridge.link"):
        async with link_pair() as (host, device):

            async def send_all() -> None:
                for _ in range(flood // 200):  # the table keeps 256 unacknowledged at most
                    batch = [device.post(GarbledKey(0, Key.TSUMO)) for _ in range(200)]
                    await asyncio.gather(*batch)
                await device.send(KeyPress(1, Key.RON))

            async with asyncio.timeout(60):
                got, _ = await asyncio.gather(collect(host, 1), send_all())
            assert got == [KeyPress(1, Key.RON)]
            assert host.stats.decode_errors == flood
            await exchange(host, device, 5)  # the session goes on
    said = [r.getMessage() for r in caplog.records if "bad payload" in r.getMessage()]
    # The first one in full; the count when the link closes (within the flood's minute).
    assert len(said) == 2, said[:5]
    assert said[0].startswith("table: bad payload for type 0x83: ")
    assert said[1].startswith(f"table: {flood - 1} more frames with a bad payload in the last ")
    assert len(caplog.records) < 20
