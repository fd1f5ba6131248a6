"""The admin socket under a flood (issue #32): a connection limit with a one-line refusal,
an idle timeout, and a limit derived from the file descriptor limit."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from tablectl.ctl import CtlError, CtlServer, connection_limit, request


async def _status(req: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "status": {"cmd": req["cmd"]}}


async def _fill(server: CtlServer, path: Path, n: int) -> list[Any]:
    """``n`` idle connections, returned once the server is serving all of them."""
    idle = [await asyncio.open_unix_connection(str(path)) for _ in range(n)]
    async with asyncio.timeout(5):
        while server.clients < n:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    return idle


async def test_over_the_limit_a_connection_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "ctl.sock"
    # The idle timeout is far out of reach, so a refusal cannot be the idle ones timing out
    # and the test holds on a loaded machine; the drop is the next test's.
    server = CtlServer(path, _status, max_clients=2, idle_timeout_s=3600)
    await server.start()
    try:
        idle = await _fill(server, path, 2)
        reader, writer = await asyncio.open_unix_connection(str(path))
        async with asyncio.timeout(5):
            refusal = json.loads(await reader.readline())
            assert await reader.read() == b""  # and closed
        writer.close()
        assert refusal == {
            "ok": False,
            "busy": True,
            "error": "busy: 2 admin connections open; try again",
        }
        with pytest.raises(CtlError, match="busy: 2 admin connections open"):
            await asyncio.to_thread(request, path, {"cmd": "status"})
        assert server.clients == 2  # the refusals did not take a place
        for _, idle_writer in idle:
            idle_writer.close()
    finally:
        await server.close()
    assert not path.exists()


def test_a_refusal_written_before_the_request_arrived_is_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A daemon at its limit writes "busy" and closes before the client's request is sent
    # (what a loaded machine made happen): the send fails with a broken pipe, and the
    # client must still say what the daemon said, not "Broken pipe".
    path = tmp_path / "ctl.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    refused = threading.Event()

    def refuse() -> None:
        conn, _ = server.accept()
        conn.sendall(b'{"ok": false, "busy": true, "error": "busy: 2 admin connections"}\n')
        conn.close()
        refused.set()

    class LateSender(socket.socket):
        def sendall(self, data: Any, flags: int = 0) -> None:
            refused.wait(5)
            super().sendall(data, flags)

    thread = threading.Thread(target=refuse)
    thread.start()
    monkeypatch.setattr(socket, "socket", LateSender)
    try:
        with pytest.raises(CtlError, match="busy: 2 admin connections"):
            request(path, {"cmd": "status"})
    finally:
        monkeypatch.undo()
        thread.join(5)
        server.close()


async def test_an_idle_connection_is_dropped_and_its_place_freed(tmp_path: Path) -> None:
    path = tmp_path / "ctl.sock"
    server = CtlServer(path, _status, max_clients=2, idle_timeout_s=0.2)
    await server.start()
    try:
        idle = await _fill(server, path, 2)
        for idle_reader, idle_writer in idle:  # the idle ones are told and closed
            async with asyncio.timeout(5):
                said = json.loads(await idle_reader.readline())
                assert await idle_reader.read() == b""
            assert said == {"ok": False, "error": "no request line"}
            idle_writer.close()
        async with asyncio.timeout(5):
            while server.clients:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
        reply = await asyncio.to_thread(request, path, {"cmd": "status"})
        assert reply == {"ok": True, "status": {"cmd": "status"}}
    finally:
        await server.close()
    assert not path.exists()


def test_the_limit_stays_well_below_the_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {64: 4, 256: 16, 1024: 16, 16: 1}
    for soft, expected in limits.items():
        monkeypatch.setattr(resource, "getrlimit", lambda _: (soft, soft))  # noqa: B023
        assert connection_limit() == expected
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY,) * 2)
    assert connection_limit() == 16
