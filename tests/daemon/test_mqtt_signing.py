"""Signed staff requests (tablectl/mqtt_signing.py), the refusal limiter, the ``[mqtt]``
settings that choose a table's mode, and the publisher's checks before the daemon sees a
request: all without a broker (test_daemon_mqtt.py has them over a real Mosquitto)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tablectl.mqtt import REQUESTS_OFF, TablePublisher
from tablectl.mqtt_refusals import RefusalLimiter
from tablectl.mqtt_settings import MqttSettings
from tablectl.mqtt_signing import (
    WINDOW,
    RequestVerifier,
    canonical,
    new_secret,
    secret_problem,
    sign,
    verify,
)

SECRET = "tablectl-test-secret-0123456789abcdef"
TOPIC = "tablectl/v1/t1/staff/command"
NOW = 1764042031.9
NONCE = "0123456789abcdef0123456789abcdef"
UNDO = {"cmd": "undo", "by": "Mika", "at": 1764042031.2}


def signed(
    payload: dict[str, Any], topic: str = TOPIC, now: float = NOW, nonce: str | None = None
) -> dict[str, Any]:
    """``payload`` with its signature fields."""
    return {**payload, **sign(SECRET, topic, payload, now, nonce)}


def test_golden_vector() -> None:
    # The signature any implementation must reproduce (checked with
    # `openssl dgst -sha256 -hmac SECRET` over the canonical bytes below).
    fields = sign(SECRET, TOPIC, UNDO, NOW, nonce=NONCE)
    assert fields == {
        "ts": 1764042031,
        "nonce": NONCE,
        "sig": "46d4a04586c454b48c7e83a56758213f418520946416661d270ffe85ff31b358",
    }
    assert canonical(TOPIC, {**UNDO, **fields}) == (
        b"tablectl-mqtt-sig-v1\ntablectl/v1/t1/staff/command\n"
        b'{"at":1764042031.2,"by":"Mika","cmd":"undo",'
        b'"nonce":"0123456789abcdef0123456789abcdef","ts":1764042031}'
    )


def test_canonical_form_ignores_key_order_and_spacing_and_keeps_kanji() -> None:
    request = signed({"by": "美香", "cmd": "undo"}, nonce=NONCE)
    # As it reaches the table: any key order, any spacing, kanji escaped or not.
    wire = json.dumps(dict(reversed(list(request.items()))), indent=2, ensure_ascii=True)
    assert verify(SECRET, TOPIC, json.loads(wire), NOW) is None
    assert "美香".encode() in canonical(TOPIC, request)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r | {"cmd": "new_game"}, "bad signature"),  # tampered payload
        (lambda r: r | {"rules": "kenko"}, "bad signature"),  # a field added
        (lambda r: {k: v for k, v in r.items() if k != "at"}, "bad signature"),  # removed
        (lambda r: r | {"ts": r["ts"] + 1}, "bad signature"),
        (lambda r: r | {"nonce": "f" * 32}, "bad signature"),
        (lambda r: r | {"sig": "0" * 64}, "bad signature"),
        (lambda r: r | {"sig": r["sig"].upper()}, "malformed signature"),
        (lambda r: r | {"sig": r["sig"][:-2]}, "malformed signature"),
        (lambda r: {k: v for k, v in r.items() if k != "sig"}, "malformed signature"),
        (lambda r: r | {"ts": float(r["ts"])}, "malformed timestamp"),
        (lambda r: r | {"ts": True}, "malformed timestamp"),
        (lambda r: r | {"ts": str(r["ts"])}, "malformed timestamp"),
        (lambda r: r | {"nonce": "short"}, "malformed nonce"),
        (lambda r: r | {"nonce": "x" * 65}, "malformed nonce"),
        (lambda r: r | {"nonce": "a b" * 8}, "malformed nonce"),
        (lambda r: r | {"at": float("nan")}, "not canonical JSON"),
        (lambda r: dict(UNDO), "not signed"),
    ],
)
def test_anything_but_the_signed_request_is_refused(change: Any, why: str) -> None:
    request = signed(UNDO, nonce=NONCE)
    assert verify(SECRET, TOPIC, request, NOW) is None
    assert verify(SECRET, TOPIC, change(request), NOW) == why


def test_another_topic_or_secret_is_a_bad_signature() -> None:
    request = signed(UNDO)
    assert verify(SECRET, "tablectl/v1/t2/staff/command", request, NOW) == "bad signature"
    assert verify(SECRET, "tablectl/v1/t1/staff/ack", request, NOW) == "bad signature"
    assert verify("x" * 32 + SECRET, TOPIC, request, NOW) == "bad signature"


def test_a_timestamp_out_of_the_window_is_refused_either_way() -> None:
    request = signed(UNDO, now=NOW)
    ts = request["ts"]  # whole seconds
    assert verify(SECRET, TOPIC, request, ts + WINDOW) is None
    assert verify(SECRET, TOPIC, request, ts - WINDOW) is None
    late = verify(SECRET, TOPIC, request, ts + WINDOW + 1)
    assert late == f"timestamp -{WINDOW + 1} s off this table's clock (at most {WINDOW} s)"
    early = verify(SECRET, TOPIC, request, ts - 600)
    assert early is not None and early.startswith("timestamp +600 s off")


def test_a_replay_is_refused_and_nonces_are_forgotten_after_the_window() -> None:
    verifier = RequestVerifier(SECRET)
    request = signed(UNDO)
    assert verifier.check(TOPIC, request, NOW) is None
    assert verifier.check(TOPIC, request, NOW + 1) == "replayed (nonce already used)"
    assert verifier.check(TOPIC, signed(UNDO), NOW + 1) is None  # a new nonce
    # Forged requests are never remembered: they cannot fill the memory.
    for n in range(100):
        forged = {**UNDO, "ts": int(NOW), "nonce": f"{n:032d}", "sig": "0" * 64}
        assert verifier.check(TOPIC, forged, NOW) == "bad signature"
    assert verifier.remembered == 2


def test_nonce_memory_is_bounded() -> None:
    verifier = RequestVerifier(SECRET, capacity=3)
    for _ in range(3):
        assert verifier.check(TOPIC, signed(UNDO), NOW) is None
    # Full of requests still in the window: refused rather than forgetting one.
    assert verifier.check(TOPIC, signed(UNDO), NOW) == "more than 3 signed requests within 30 s"
    assert verifier.remembered == 3
    # Once they have left the window they make room.
    later = NOW + WINDOW + 5
    assert verifier.check(TOPIC, signed(UNDO, now=later), later) is None
    assert verifier.remembered == 1


def test_sign_refuses_a_payload_already_signed_or_a_bad_nonce() -> None:
    with pytest.raises(ValueError, match="already holds"):
        sign(SECRET, TOPIC, signed(UNDO), NOW)
    with pytest.raises(ValueError, match="nonce"):
        sign(SECRET, TOPIC, UNDO, NOW, nonce="short")


def test_secrets() -> None:
    assert secret_problem(new_secret()) is None
    assert new_secret() != new_secret()
    for bad in ("short", "x" * 31, "x" * 257, "x" * 31 + " ", "x" * 31 + "\0", "é" * 40, 7):
        assert secret_problem(bad) is not None


def test_refusal_limiter_admits_a_burst_per_period_and_counts_the_rest() -> None:
    limiter = RefusalLimiter(burst=2, period=60)
    assert [limiter.admit("not signed", 100 + n) for n in range(4)] == [True, True, False, False]
    assert limiter.admit("timestamp +40 s off", 104) is False
    assert limiter.admit("timestamp -90 s off", 105) is False
    assert limiter.open_since == 100
    assert limiter.close() == {"not signed": 2, "timestamp off this table's clock": 2}
    assert limiter.open_since is None and limiter.close() == {}
    assert limiter.admit("bad signature", 200) is True


# ---------------------------------------------------------------- the settings


def test_the_mode_follows_the_secret_unless_the_config_says() -> None:
    assert MqttSettings(host="h").command_mode == "off"
    assert MqttSettings(host="h", command_secret=SECRET).command_mode == "signed"
    assert MqttSettings(host="h", commands="broker-acl").command_mode == "broker-acl"
    assert SECRET not in repr(MqttSettings(host="h", command_secret=SECRET))
    lines = {
        mode: MqttSettings(host="h", commands=mode, command_secret=secret).command_mode_line()
        for mode, secret in (("signed", SECRET), ("broker-acl", None), ("off", None))
    }
    assert lines["signed"].startswith("MQTT staff requests: signed")
    assert "anonymous!" in lines["broker-acl"]
    assert lines["off"].startswith("MQTT staff requests: off")
    assert (
        "logged in"
        in MqttSettings(host="h", username="t", commands="broker-acl").command_mode_line()
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"commands": "on"}, "commands is 'on'; allowed: signed, broker-acl, off"),
        ({"commands": "signed"}, "no command_secret"),
        ({"command_secret": "short"}, "command_secret must be 32 to 256 characters"),
        ({"command_secret": SECRET, "commands": "broker-acl"}, "command_secret is set but"),
        ({"command_secret": SECRET, "commands": "off"}, "command_secret is set but"),
    ],
)
def test_settings_refuse_what_cannot_work(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        MqttSettings(host="h", **values)


# ------------------------------------------------------- the publisher's checks


class Recorder:
    """What a publisher hands the daemon."""

    def __init__(self, publisher: TablePublisher) -> None:
        self.commands: list[tuple[str, str, str | None]] = []
        self.acks: list[tuple[str, str]] = []
        self.refused: list[tuple[str, str, str]] = []
        self.counted: list[dict[str, int]] = []
        publisher.on_staff_ack = lambda alert, by: self.acks.append((alert, by))
        publisher.on_staff_command = lambda c, by, rules, _seat: self.commands.append(
            (c, by, rules)
        )
        publisher.on_staff_refused = lambda a, by, why: self.refused.append((a, by, why))
        publisher.on_staff_refusals_counted = self.counted.append


def test_a_signed_table_takes_signed_requests_once_and_refuses_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = [NOW]
    settings = MqttSettings(host="127.0.0.1", command_secret=SECRET)
    publisher = TablePublisher(settings, "t1", 4, clock=lambda: clock[0])
    seen = Recorder(publisher)
    good = json.dumps(signed(UNDO)).encode()
    publisher._requests.command(good)
    publisher._requests.command(good)  # the same again: a replay
    publisher._requests.command(json.dumps(UNDO).encode())
    ack = {"alert": "a1", "by": "Mika"}
    publisher._requests.ack(json.dumps(signed(ack, "tablectl/v1/t1/staff/ack")).encode())
    publisher._requests.ack(json.dumps(signed(ack)).encode())  # signed for the command topic
    publisher._requests.command(b"not json")
    assert seen.commands == [("undo", "Mika", None)]
    assert seen.acks == [("a1", "Mika")]
    assert seen.refused == [
        ("undo", "Mika", "replayed (nonce already used)"),
        ("undo", "Mika", "not signed"),
        ("alert_ack", "Mika", "bad signature"),
        ("unknown", "?", "not a JSON object"),
    ]
    # A signed but malformed request is the sender's bug: said as before, not refused.
    publisher._requests.command(json.dumps(signed({"cmd": "rm", "by": "Mika"})).encode())
    assert "staff command ignored: 'cmd' must be one of undo, new_game" in caplog.text
    assert len(seen.refused) == 4


def test_a_flood_of_forged_requests_is_noted_a_few_times_then_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = [NOW]
    settings = MqttSettings(host="127.0.0.1", command_secret=SECRET)
    publisher = TablePublisher(settings, "t1", 4, clock=lambda: clock[0])
    seen = Recorder(publisher)
    caplog.set_level(logging.WARNING)
    forged = json.dumps({**UNDO, "cmd": "new_game", "ts": int(NOW), "nonce": NONCE,
                         "sig": "0" * 64}).encode()  # fmt: skip
    for _ in range(2000):
        publisher._requests.command(forged)
    assert len(seen.refused) == 5 and seen.counted == []
    assert len(caplog.records) == 5
    clock[0] += 61  # the period is over: the next refusal reports the count first
    publisher._requests.command(forged)
    assert seen.counted == [{"bad signature": 1995}]
    assert "1995 more staff requests refused in 60 s: bad signature x1995" in caplog.text
    assert len(seen.refused) == 6 and len(caplog.records) == 7


def test_a_table_without_a_secret_refuses_every_request() -> None:
    publisher = TablePublisher(MqttSettings(host="127.0.0.1"), "t1", 4)
    seen = Recorder(publisher)
    publisher._requests.command(json.dumps(signed(UNDO)).encode())
    publisher._requests.ack(b'{"alert": "a1", "by": "Mika"}')
    assert seen.commands == [] and seen.acks == []
    assert seen.refused == [("undo", "Mika", REQUESTS_OFF), ("alert_ack", "Mika", REQUESTS_OFF)]
