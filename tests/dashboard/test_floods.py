"""The dashboard under floods (issue #32): the login lockout is per client address and
per user name, live streams are limited, slow headers are cut off and a malformed request
is one log line. Real sockets on 127.0.0.1 (and 127.0.0.2 as a second client)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("aiohttp")

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient

from tablectl.dashboard import guard
from tablectl.dashboard import web as dashboard_web
from tablectl.dashboard.auth import hash_password
from tablectl.dashboard.guard import install_bad_request_filter, start_site
from tablectl.dashboard.settings import PinHash
from tests.dashboard.test_web import STAFF_PW, Rig, client_for
from tests.helpers import free_port


async def _login(port: int, source: str, user: str, password: str) -> int:
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as session:
        body = {"user": user, "password": password}
        async with session.post(f"http://127.0.0.1:{port}/api/login", json=body) as response:
            return response.status


@pytest.fixture
async def staff_login() -> AsyncIterator[TestClient[Any, Any]]:
    client = await client_for(
        Rig(staff_hash=PinHash.parse(hash_password(STAFF_PW, iterations=1000)))
    )
    yield client
    await client.close()


async def test_wrong_passwords_lock_out_their_client_and_name_not_the_staff(
    staff_login: TestClient[Any, Any],
) -> None:
    client = staff_login
    port = client.port
    assert port is not None
    for _ in range(5):
        assert await _login(port, "127.0.0.1", "Mallory", "guess") == 401
    assert await _login(port, "127.0.0.1", "Eri", STAFF_PW) == 429  # the guesser's address
    assert await _login(port, "127.0.0.2", "Mallory", STAFF_PW) == 429  # the name guessed
    assert await _login(port, "127.0.0.2", "Eri", STAFF_PW) == 200  # the rest of the staff


async def _open_stream(port: int, session: aiohttp.ClientSession) -> aiohttp.ClientResponse:
    response = await session.get(f"http://127.0.0.1:{port}/events")
    if response.status == 200:
        await response.content.readline()  # the stream has begun
    return response


async def test_live_streams_are_limited_per_client_and_in_all(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(dashboard_web, "MAX_STREAMS", 10)
    rig = Rig()
    client = await client_for(rig)
    port = client.port
    assert port is not None
    sessions = [
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(f"127.0.0.{n}", 0)))
        for n in (1, 2, 3)
    ]
    streams: list[aiohttp.ClientResponse] = []
    try:
        with caplog.at_level(logging.WARNING, logger="tablectl.dashboard.web"):
            for _ in range(dashboard_web.MAX_STREAMS_PER_CLIENT):
                streams.append(await _open_stream(port, sessions[0]))
            assert [s.status for s in streams] == [200] * 8
            over = await _open_stream(port, sessions[0])
            assert over.status == 503 and over.headers["Retry-After"] == "10"
            assert "8 live streams open from 127.0.0.1" in await over.text()
            streams.append(await _open_stream(port, sessions[1]))
            streams.append(await _open_stream(port, sessions[1]))
            assert [s.status for s in streams[8:]] == [200, 200]
            full = await _open_stream(port, sessions[2])  # 10 in all
            assert full.status == 503 and "10 live streams open" in await full.text()
            streams.pop(0).close()
            async with asyncio.timeout(5):
                while (again := await _open_stream(port, sessions[2])).status != 200:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
            streams.append(again)
        refused = [r for r in caplog.records if "live stream refused" in r.getMessage()]
        assert len(refused) == 1  # the rest are counted, not logged one by one
    finally:
        for stream in streams:
            stream.close()
        for session in sessions:
            await session.close()
        await client.close()


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[Rig, int]]:
    rig = Rig()
    runner = web.AppRunner(rig.app, access_log=None)
    await runner.setup()
    port = free_port()
    server = await start_site(runner, "127.0.0.1", port, header_timeout_s=0.5)
    yield rig, port
    server.close()
    await runner.cleanup()


async def test_a_connection_dribbling_its_headers_is_closed(
    guarded: tuple[Rig, int], caplog: pytest.LogCaptureFixture
) -> None:
    _rig, port = guarded
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def dribble() -> None:  # a header line every 0.1 s, never the blank line
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for n in range(100):
            writer.write(f"X-Slow-{n}: x\r\n".encode())
            await writer.drain()
            await asyncio.sleep(0.1)

    with caplog.at_level(logging.WARNING, logger="tablectl.dashboard.guard"):
        loop = asyncio.get_running_loop()
        start = loop.time()
        dribbler = asyncio.create_task(dribble())
        async with asyncio.timeout(10):
            assert await reader.read() == b""  # closed, no answer
        closed_after = loop.time() - start
        dribbler.cancel()
        await asyncio.gather(dribbler, return_exceptions=True)
    writer.close()
    assert closed_after is not None and closed_after < 3.0
    assert any("no complete request headers" in r.getMessage() for r in caplog.records)


async def test_requests_and_streams_outlive_the_header_deadline(guarded: tuple[Rig, int]) -> None:
    _rig, port = guarded
    async with aiohttp.ClientSession() as session:
        page = await session.get(f"http://127.0.0.1:{port}/")
        assert page.status == 200
        await page.read()
        stream = await session.get(f"http://127.0.0.1:{port}/events")
        assert stream.status == 200
        await stream.content.readline()
        await asyncio.sleep(1.0)  # twice the deadline: a stream is a request being served
        assert stream.connection is not None and not stream.content.at_eof()
        stream.close()
        await asyncio.sleep(0.7)  # an idle keep-alive connection: the next request is fine
        again = await session.get(f"http://127.0.0.1:{port}/api/me")
        assert again.status == 200


async def test_a_malformed_request_is_one_log_line(
    guarded: tuple[Rig, int], caplog: pytest.LogCaptureFixture
) -> None:
    _rig, port = guarded
    bad_filter = install_bad_request_filter()
    bad_filter.ratelog = guard.RateLimitedLog(logging.getLogger("tablectl.dashboard.guard"))
    with caplog.at_level(logging.DEBUG):
        for junk in (b"\x16\x03\x01garbage\r\n\r\n", b"GET / HTTP/1.1\r\nBad Header\r\n\r\n"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(junk)
            async with asyncio.timeout(5):
                answer = await reader.read()
            writer.close()
            assert answer[:13] in (b"HTTP/1.1 400 ", b"HTTP/1.0 400 ")
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    said = [r.getMessage() for r in caplog.records if "bad HTTP request" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("bad HTTP request from 127.0.0.1: ")
