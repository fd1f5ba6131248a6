"""Staff and viewer passwords, and the sessions of people logged in to the dashboard.

A password is kept as a PBKDF2-HMAC-SHA256 hash in the same one-string form as the staff
PIN (``pbkdf2_sha256$ITERATIONS$SALT$HASH``, :mod:`tablectl.console.staff`), with more
iterations: a password is typed on a phone, not checked on the table's event loop, and
the check runs in a worker thread.

Sessions live in memory only: restarting the dashboard logs everyone out, which is the
safe default for a shared staff password. Each session has a random id (the cookie) and a
random CSRF token the page sends back in a header with every staff action.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tablectl.console.staff import SCHEME, PinFormatError, PinHash

__all__ = [
    "ITERATIONS",
    "LoginThrottle",
    "PasswordError",
    "Session",
    "Sessions",
    "check_password_hash",
    "hash_password",
]

#: PBKDF2 rounds for a new password hash (about 0.1 s on a laptop, 0.5 s on a Pi 4).
ITERATIONS = 200_000
#: Passwords shorter than this are refused when hashing.
MIN_PASSWORD = 8
#: A session ends this long after its last use (s).
SESSION_IDLE = 12 * 3600.0
#: At most this many sessions at once (the oldest go first).
MAX_SESSIONS = 200
#: Wrong passwords in a row that lock the login, and for how long (s).
MAX_FAILURES = 5
LOCKOUT_S = 60.0
#: Client addresses and user names whose wrong passwords are remembered, at most.
MAX_THROTTLED = 4096

STAFF = "staff"
VIEWER = "viewer"


class PasswordError(ValueError):
    """A password or a password hash that cannot be used (the message says why)."""


def hash_password(password: str, *, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The config form of ``password``: ``pbkdf2_sha256$ITERATIONS$SALT$HASH``."""
    if len(password) < MIN_PASSWORD:
        raise PasswordError(f"a dashboard password has at least {MIN_PASSWORD} characters")
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return f"{SCHEME}${iterations}${salt.hex()}${digest.hex()}"


def check_password_hash(text: str) -> PinHash:
    """Parse a configured hash; raises :class:`PasswordError` saying what is wrong."""
    try:
        return PinHash.parse(text)
    except PinFormatError as exc:
        message = (
            str(exc).replace("staff PIN", "password").replace("staff-pin", "dashboard-password")
        )
        raise PasswordError(message) from None


@dataclass
class Session:
    """One logged-in browser."""

    sid: str
    user: str
    role: str
    csrf: str
    last_used: float

    @property
    def staff(self) -> bool:
        """Whether the session may take staff actions (acknowledge alerts)."""
        return self.role == STAFF


@dataclass
class Sessions:
    """The sessions of this dashboard process, by cookie value."""

    now: Callable[[], float] = time.monotonic
    by_id: dict[str, Session] = field(default_factory=dict)

    def create(self, user: str, role: str) -> Session:
        """A new session for ``user`` with ``role`` (``staff`` or ``viewer``)."""
        while len(self.by_id) >= MAX_SESSIONS:
            oldest = min(self.by_id.values(), key=lambda s: s.last_used)
            del self.by_id[oldest.sid]
        session = Session(
            secrets.token_urlsafe(32), user, role, secrets.token_urlsafe(32), self.now()
        )
        self.by_id[session.sid] = session
        return session

    def get(self, sid: str | None) -> Session | None:
        """The live session with cookie value ``sid`` (touching it), or ``None``."""
        if not sid:
            return None
        session = self.by_id.get(sid)
        if session is None:
            return None
        if self.now() - session.last_used > SESSION_IDLE:
            del self.by_id[sid]
            return None
        session.last_used = self.now()
        return session

    def drop(self, sid: str | None) -> None:
        """Log the session with cookie value ``sid`` out."""
        if sid:
            self.by_id.pop(sid, None)


@dataclass
class _Strikes:
    failures: int = 0
    locked_until: float = 0.0


@dataclass
class LoginThrottle:
    """Locks the login of one client address, and of one user name, for a minute after
    ``MAX_FAILURES`` wrong passwords in a row from it or for it: a guesser locks out
    itself and the name it tries, never the rest of the staff."""

    now: Callable[[], float] = time.monotonic
    #: Clients and names remembered at most (the oldest are forgotten first).
    capacity: int = MAX_THROTTLED
    _strikes: dict[tuple[str, str], _Strikes] = field(default_factory=dict)

    @staticmethod
    def _keys(address: str, user: str) -> tuple[tuple[str, str], tuple[str, str]]:
        return ("address", address), ("user", user.casefold())

    def locked(self, address: str, user: str) -> bool:
        """Whether a login from ``address`` as ``user`` is refused now."""
        now = self.now()
        return any(
            (strikes := self._strikes.get(key)) is not None and now < strikes.locked_until
            for key in self._keys(address, user)
        )

    def record(self, address: str, user: str, ok: bool) -> None:
        """Count one login attempt from ``address`` as ``user``."""
        for key in self._keys(address, user):
            if ok:
                self._strikes.pop(key, None)
                continue
            strikes = self._strikes.pop(key, None) or _Strikes()
            self._strikes[key] = strikes  # most recent last: the oldest go first
            strikes.failures += 1
            if strikes.failures >= MAX_FAILURES:
                strikes.failures = 0
                strikes.locked_until = self.now() + LOCKOUT_S
        while len(self._strikes) > self.capacity:
            del self._strikes[next(iter(self._strikes))]
