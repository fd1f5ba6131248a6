"""Signed staff requests over MQTT: the table checks who sent a command, not the broker.

A parlor's dashboard and its tables share a secret (``command_secret`` in the table's
``[mqtt]`` section and in the dashboard's ``[dashboard]`` section). Every staff request
the dashboard publishes (an acknowledgement on ``.../staff/ack``, game control on
``.../staff/command``) carries three more fields:

* ``ts``: the sender's Unix time in whole seconds;
* ``nonce``: 16 to 64 characters of ``[A-Za-z0-9_-]``, new for every request;
* ``sig``: HMAC-SHA256 (lower-case hex) keyed with the secret over :func:`canonical`:
  ``tablectl-mqtt-sig-v1``, a newline, the topic, a newline, and the payload without
  ``sig`` as canonical JSON (keys sorted, no spaces, UTF-8 unescaped, no NaN).

The topic is signed, so a request for table t1 cannot be replayed at t2, nor an
acknowledgement replayed as a command. The table refuses a request whose ``ts`` is more
than :data:`WINDOW` seconds from its own clock, and remembers every nonce it accepted
until its ``ts`` has left the window, so the same request is accepted once. Both ends need
a clock within the window of the truth (NTP).

No third-party imports: the config loaders check a secret with :func:`secret_problem`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from typing import Any

__all__ = [
    "NONCE_MEMORY",
    "SECRET_MIN",
    "WINDOW",
    "RequestVerifier",
    "canonical",
    "new_secret",
    "secret_problem",
    "sign",
    "verify",
]

#: Seconds a request's ``ts`` may be off the table's clock (either way).
WINDOW = 30
#: Nonces remembered at most (each until its request leaves the window). Only requests
#: with a good signature are remembered, so forged ones cannot fill it.
NONCE_MEMORY = 4096
#: Shortest secret accepted: :func:`new_secret` gives 43 characters (256 bits).
SECRET_MIN = 32
#: Longest secret accepted (a config value, not a file).
SECRET_MAX = 256
#: The fields a signature adds to a payload.
FIELDS = ("ts", "nonce", "sig")
#: First line of every signed text: a signature over anything else never matches.
DOMAIN = b"tablectl-mqtt-sig-v1"
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,64}")
_SIG = re.compile(r"[0-9a-f]{64}")
_SECRET = re.compile(r"[!-~]+")  # printable ASCII without spaces: safe in TOML and shells


def new_secret() -> str:
    """A new random secret (256 bits, URL-safe base64)."""
    return secrets.token_urlsafe(32)


def secret_problem(secret: object) -> str | None:
    """Why ``secret`` cannot be a command secret, or None when it can."""
    if not isinstance(secret, str):
        return "must be a string"
    if not SECRET_MIN <= len(secret) <= SECRET_MAX:
        return (
            f"must be {SECRET_MIN} to {SECRET_MAX} characters (got {len(secret)});"
            " make one with 'tablectl mqtt-secret'"
        )
    if not _SECRET.fullmatch(secret):
        return "must be printable ASCII without spaces; make one with 'tablectl mqtt-secret'"
    return None


def canonical(topic: str, payload: dict[str, Any]) -> bytes:
    """The bytes a signature covers: the domain, the topic and the payload without
    ``sig`` as canonical JSON. Raises ValueError for a payload JSON cannot carry
    (NaN, infinities) and TypeError for one that is not JSON at all."""
    body = {key: value for key, value in payload.items() if key != "sig"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)  # fmt: skip
    return b"\n".join((DOMAIN, topic.encode(), text.encode()))


def _mac(secret: str, topic: str, payload: dict[str, Any]) -> str:
    return hmac.new(secret.encode(), canonical(topic, payload), hashlib.sha256).hexdigest()


def sign(
    secret: str, topic: str, payload: dict[str, Any], now: float, nonce: str | None = None
) -> dict[str, Any]:
    """The fields (``ts``, ``nonce``, ``sig``) that sign ``payload`` for ``topic`` at
    Unix time ``now``; add them to the payload before sending it. ``nonce`` defaults to
    a new random one (give one only to reproduce a signature)."""
    if any(key in payload for key in FIELDS):
        msg = f"the payload already holds one of {', '.join(FIELDS)}"
        raise ValueError(msg)
    fields: dict[str, Any] = {"ts": int(now), "nonce": nonce or secrets.token_hex(16)}
    if not _NONCE.fullmatch(fields["nonce"]):
        msg = "a nonce is 16 to 64 characters of A-Z, a-z, 0-9, _ and -"
        raise ValueError(msg)
    fields["sig"] = _mac(secret, topic, {**payload, **fields})
    return fields


def verify(
    secret: str, topic: str, payload: dict[str, Any], now: float, window: float = WINDOW
) -> str | None:
    """Why ``payload`` (decoded JSON from ``topic``) is not a request signed with
    ``secret`` within ``window`` seconds of ``now``; None when it is. Does not look at
    replays: :class:`RequestVerifier` does."""
    ts, nonce, sig = (payload.get(key) for key in FIELDS)
    if ts is None and nonce is None and sig is None:
        return "not signed"
    if not (isinstance(sig, str) and _SIG.fullmatch(sig)):
        return "malformed signature"
    if not isinstance(ts, int) or isinstance(ts, bool):
        return "malformed timestamp"
    if not (isinstance(nonce, str) and _NONCE.fullmatch(nonce)):
        return "malformed nonce"
    try:
        expected = _mac(secret, topic, payload)
    except (TypeError, ValueError, RecursionError):
        return "not canonical JSON"
    if not hmac.compare_digest(expected, sig):
        return "bad signature"
    # Checked after the signature: a genuine request out of the window is the sign of a
    # wrong clock at one end, worth saying by how much.
    if abs(ts - now) > window:
        return f"timestamp {ts - now:+.0f} s off this table's clock (at most {window:g} s)"
    return None


class RequestVerifier:
    """Checks signed requests for one table and refuses replays.

    Args:
        secret: The shared secret.
        window: Seconds a request's ``ts`` may be off ``now``.
        capacity: Nonces remembered at most; when that many genuine requests arrived
            within one window, more are refused until some leave it.
    """

    def __init__(self, secret: str, window: float = WINDOW, capacity: int = NONCE_MEMORY):
        self._secret = secret
        self._window = window
        self._capacity = capacity
        #: Accepted nonce -> the time after which its request is out of the window anyway.
        self._seen: dict[str, float] = {}

    def check(self, topic: str, payload: dict[str, Any], now: float) -> str | None:
        """Why the request is refused, or None (and its nonce is remembered)."""
        why = verify(self._secret, topic, payload, now, self._window)
        if why is not None:
            return why
        nonce = payload["nonce"]
        if nonce in self._seen:
            return "replayed (nonce already used)"
        if len(self._seen) >= self._capacity:
            self._seen = {n: t for n, t in self._seen.items() if t >= now}
            if len(self._seen) >= self._capacity:
                return f"more than {self._capacity} signed requests within {self._window:g} s"
        self._seen[nonce] = payload["ts"] + self._window
        return None

    @property
    def remembered(self) -> int:
        """Nonces held now (at most ``capacity``)."""
        return len(self._seen)
