"""The dashboard's HTTP side without a browser: login, CSRF, acks, the stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tablectl.dashboard.auth import hash_password
from tablectl.dashboard.model import ParlorModel
from tablectl.dashboard.settings import DashboardSettings
from tablectl.dashboard.web import Hub, make_app
from tests.dashboard.test_model import state

STAFF_PW = "staff password"
VIEW_PW = "viewer password"


class Rig:
    """A dashboard app with a model and a fake ack sender."""

    def __init__(self, **settings: Any) -> None:
        self.settings = DashboardSettings("127.0.0.1", 1883, **settings)
        self.model = ParlorModel()
        self.hub = Hub()
        self.sent: list[tuple[str, str, str, float]] = []
        self.commands: list[tuple[str, str, str, str | None, int | None]] = []
        self.fail = False
        self.app = make_app(
            self.settings, self.model, self.hub, self.send, now=lambda: 1000.0,
            send_command=self.command,
        )  # fmt: skip

    async def send(self, table: str, alert: str, by: str, at: float) -> None:
        if self.fail:
            raise ConnectionError("broker gone")
        self.sent.append((table, alert, by, at))

    async def command(
        self, table: str, cmd: str, by: str, rules: str | None, at: float, *, seat: int | None
    ) -> None:
        if self.fail:
            raise ConnectionError("broker gone")
        self.commands.append((table, cmd, by, rules, seat))

    def publish(self, table: str, leaf: str, payload: Any) -> None:
        raw = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.hub.notify(self.model.apply(f"tablectl/v1/{table}/{leaf}", raw, 900.0))


async def client_for(rig: Rig) -> TestClient[Any, Any]:
    client = TestClient(TestServer(rig.app, host="127.0.0.1"))
    await client.start_server()
    return client


@pytest.fixture
async def protected() -> AsyncIterator[tuple[Rig, TestClient[Any, Any]]]:
    from tablectl.dashboard.settings import PinHash

    rig = Rig(
        staff_hash=PinHash.parse(hash_password(STAFF_PW, iterations=1000)),
        view_hash=PinHash.parse(hash_password(VIEW_PW, iterations=1000)),
    )
    client = await client_for(rig)
    yield rig, client
    await client.close()


ALERT = {"id": "a7", "kind": "staff_call", "seat": 2, "text": "", "since": 900.0}


async def test_staff_login_csrf_and_ack(protected: tuple[Rig, TestClient[Any, Any]]) -> None:
    rig, client = protected
    rig.publish("t1", "state", state(alerts=[ALERT]))
    me = await (await client.get("/api/me")).json()
    assert me["user"] is None and me["may_view"] is False and me["login_needed"] is True
    assert (await client.get("/events")).status == 401
    ack = {"table": "t1", "alert": "a7"}
    assert (await client.post("/api/ack", json=ack)).status == 401
    bad = await client.post("/api/login", json={"user": "Eri", "password": "guess"})
    assert bad.status == 401
    viewer = await client.post("/api/login", json={"user": "Kai", "password": VIEW_PW})
    assert (await viewer.json())["staff"] is False
    assert (await client.post("/api/ack", json=ack)).status == 401  # viewers may not ack
    login = await client.post("/api/login", json={"user": " Eri  Sato ", "password": STAFF_PW})
    assert login.status == 200
    cookie = login.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    body = await login.json()
    assert body["user"] == "Eri Sato" and body["staff"] is True
    token = body["csrf"]
    assert (await client.post("/api/ack", json=ack)).status == 403  # no token
    assert (await client.post("/api/ack", json=ack, headers={"X-CSRF-Token": "x"})).status == 403
    cross = await client.post(
        "/api/ack", json=ack, headers={"X-CSRF-Token": token, "Origin": "http://evil.example"}
    )
    assert cross.status == 403
    form = await client.post("/api/ack", data="table=t1", headers={"X-CSRF-Token": token})
    assert form.status == 415
    ok = await client.post("/api/ack", json=ack, headers={"X-CSRF-Token": token})
    assert ok.status == 200, await ok.text()
    assert rig.sent == [("t1", "a7", "Eri Sato", 1000.0)]
    assert rig.model.find_alert("t1", "a7")["ack"] == {"by": "Eri Sato", "at": 1000.0}
    gone = {"table": "t1", "alert": "a9"}
    assert (await client.post("/api/ack", json=gone, headers={"X-CSRF-Token": token})).status == 404
    rig.publish("t1", "availability", "offline")
    local = {"table": "t1", "alert": "offline-t1"}
    assert (
        await client.post("/api/ack", json=local, headers={"X-CSRF-Token": token})
    ).status == 200
    assert len(rig.sent) == 1  # the derived offline alert is acknowledged here only
    rig.publish("t1", "state", state(alerts=[{**ALERT, "id": "a8"}]))
    rig.fail = True
    again = {"table": "t1", "alert": "a8"}
    down = await client.post("/api/ack", json=again, headers={"X-CSRF-Token": token})
    assert down.status == 503 and "broker gone" in await down.text()
    await client.post("/api/logout", json={})
    assert (
        await client.post("/api/ack", json=again, headers={"X-CSRF-Token": token})
    ).status == 401


async def test_wrong_passwords_lock_the_login(protected: tuple[Rig, TestClient[Any, Any]]) -> None:
    _rig, client = protected
    for _ in range(5):
        await client.post("/api/login", json={"user": "x", "password": "nope"})
    locked = await client.post("/api/login", json={"user": "x", "password": STAFF_PW})
    assert locked.status == 429


async def test_open_staff_on_loopback_and_the_stream() -> None:
    rig = Rig()
    client = await client_for(rig)
    try:
        page = await client.get("/", headers={"Accept-Language": "ja,en;q=0.8"})
        text = await page.text()
        assert '<html lang="ja">' in text
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        assert (await client.get("/static/app.js")).status == 200
        me = await (await client.get("/api/me")).json()
        assert me["staff"] is True and me["csrf"] and me["login_needed"] is False
        rig.publish("t1", "state", state(alerts=[ALERT]))
        stream = await client.get("/events")
        assert stream.headers["Content-Type"] == "text/event-stream"

        async def read_event() -> tuple[str, Any]:
            name = None
            while True:
                line = (await asyncio.wait_for(stream.content.readline(), 5)).decode().strip()
                if line.startswith("event: "):
                    name = line[7:]
                elif line.startswith("data: ") and name:
                    return name, json.loads(line[6:])

        name, snap = await read_event()
        assert name == "snapshot" and snap["tables"][0]["table"] == "t1"
        rig.publish("t1", "state", state(scores=[1000, 2000, 3000, 94000]))
        name, update = await read_event()
        assert name == "update" and update["table"]["seats"][3]["score"] == 94000
        ok = await client.post(
            "/api/ack", json={"table": "t1", "alert": "a7"}, headers={"X-CSRF-Token": me["csrf"]}
        )
        assert ok.status == 404  # the new state dropped the alert
        stream.close()
    finally:
        await client.close()


async def test_open_staff_refuses_a_foreign_host_name() -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own host name: no staff session."""
    rig = Rig()
    client = await client_for(rig)
    try:
        me = await (await client.get("/api/me", headers={"Host": "attacker.example"})).json()
        assert me["staff"] is False and me["csrf"] is None
        login = await client.post(
            "/api/login",
            json={"user": "x", "password": ""},
            headers={"Host": "attacker.example"},
        )
        assert login.status == 401
    finally:
        await client.close()


async def test_game_control_needs_staff_and_names_a_known_table(
    protected: tuple[Rig, TestClient[Any, Any]],
) -> None:
    rig, client = protected
    rig.publish("t1", "state", state())
    undo = {"table": "t1", "cmd": "undo"}
    assert (await client.post("/api/command", json=undo)).status == 401
    login = await client.post("/api/login", json={"user": "Eri", "password": STAFF_PW})
    token = {"X-CSRF-Token": (await login.json())["csrf"]}
    assert (await client.post("/api/command", json=undo)).status == 403  # no token
    for bad in (
        {"table": "t1", "cmd": "format_disk"},
        {"table": 7, "cmd": "undo"},
        {"table": "t1", "cmd": "new_game", "rules": "x" * 300},
        {"table": "t1", "cmd": "chombo"},
        {"table": "t1", "cmd": "false_call", "seat": 4},
    ):
        answer = await client.post("/api/command", json=bad, headers=token)
        assert answer.status == 400, bad
    unknown = await client.post("/api/command", json={"table": "t9", "cmd": "undo"}, headers=token)
    assert unknown.status == 404
    assert (await client.post("/api/command", json=undo, headers=token)).status == 200
    new = {"table": "t1", "cmd": "new_game", "rules": "kenko"}
    assert (await client.post("/api/command", json=new, headers=token)).status == 200
    same = {"table": "t1", "cmd": "new_game", "rules": ""}
    assert (await client.post("/api/command", json=same, headers=token)).status == 200
    for other in ({"cmd": "chombo", "seat": 2}, {"cmd": "tray_override", "seat": 1},
                  {"cmd": "abandon"}, {"cmd": "false_call", "seat": 0}):  # fmt: skip
        answer = await client.post("/api/command", json={"table": "t1", **other}, headers=token)
        assert answer.status == 200, other
    assert rig.commands == [
        ("t1", "undo", "Eri", None, None), ("t1", "new_game", "Eri", "kenko", None),
        ("t1", "new_game", "Eri", None, None), ("t1", "chombo", "Eri", None, 2),
        ("t1", "tray_override", "Eri", None, None), ("t1", "abandon", "Eri", None, None),
        ("t1", "false_call", "Eri", None, 0),
    ]  # fmt: skip
    rig.fail = True
    down = await client.post("/api/command", json=undo, headers=token)
    assert down.status == 503 and "broker gone" in await down.text()
    # The table's answer is kept for the page.
    refusal = {"v": 1, "type": "staff_refused", "seat": None, "action": "undo", "by": "Eri",
               "why": "nothing to undo"}  # fmt: skip
    rig.publish("t1", "events", refusal)
    events = rig.model.view("table:t1")["table"]["events"]
    assert events[-1] == {"type": "staff_refused", "action": "undo", "by": "Eri",
                          "why": "nothing to undo"}  # fmt: skip
