"""Staff PINs: the salted hash kept in the config, and the lockout after wrong guesses.

A staff PIN is a few digits typed on a seat console, so it has little entropy: anyone who
can read the config file can recover it from the hash by trying every PIN. The hash only
keeps the PIN out of plain sight; the config file must be readable by the daemon and
root alone (docs/pi.md). What protects the PIN at the table is :class:`StaffGate`: three
wrong PINs lock every staff action on every seat for a minute, and every failure is
journalled and published, so staff see someone trying.

The hash is PBKDF2-HMAC-SHA256 in one string: ``pbkdf2_sha256$ITERATIONS$SALT$HASH`` (salt
and hash in hex). The iteration count keeps a check well under 50 ms on a Pi, since it
runs on the daemon's event loop.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

SCHEME = "pbkdf2_sha256"
ITERATIONS = 20_000
#: Digits a PIN may have: short enough to type, long enough not to be guessed in 3 tries.
PIN_DIGITS = (4, 8)
#: Wrong PINs in a row that lock staff actions, and for how long.
MAX_FAILURES = 3
LOCKOUT_S = 60.0


class PinFormatError(ValueError):
    """A PIN or a PIN hash that is not of the documented form."""


def check_pin_text(pin: str) -> str:
    """``pin`` if it is 4 to 8 digits; raises :class:`PinFormatError` naming the problem."""
    low, high = PIN_DIGITS
    if not pin.isascii() or not pin.isdigit():
        raise PinFormatError("a staff PIN is digits only (it is typed on a seat console)")
    if not low <= len(pin) <= high:
        raise PinFormatError(f"a staff PIN has {low} to {high} digits, not {len(pin)}")
    return pin


def hash_pin(pin: str, *, salt: bytes | None = None, iterations: int = ITERATIONS) -> str:
    """The config form of ``pin``: ``pbkdf2_sha256$ITERATIONS$SALT$HASH``."""
    check_pin_text(pin)
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, iterations)
    return f"{SCHEME}${iterations}${salt.hex()}${digest.hex()}"


@dataclass(frozen=True, slots=True)
class PinHash:
    """A parsed PIN hash from the config."""

    iterations: int
    salt: bytes
    digest: bytes

    @classmethod
    def parse(cls, text: str) -> PinHash:
        """Parse the config form; raises :class:`PinFormatError` saying what is wrong."""
        parts = text.split("$")
        if len(parts) != 4 or parts[0] != SCHEME:
            raise PinFormatError(
                f"a staff PIN hash looks like '{SCHEME}$ITERATIONS$SALT$HASH'"
                " (make one with 'tablectl staff-pin')"
            )
        try:
            iterations = int(parts[1])
            salt, digest = bytes.fromhex(parts[2]), bytes.fromhex(parts[3])
        except ValueError:
            raise PinFormatError(
                "the staff PIN hash has a part that is not a number or hex"
                " (make one with 'tablectl staff-pin')"
            ) from None
        if not 1_000 <= iterations <= 10_000_000 or len(salt) < 8 or len(digest) != 32:
            raise PinFormatError(
                "the staff PIN hash has an iteration count outside 1000..10000000,"
                " a salt under 8 bytes or a hash that is not 32 bytes"
            )
        return cls(iterations, salt, digest)

    def matches(self, pin: str) -> bool:
        """Whether ``pin`` is the PIN (in constant time for a given length)."""
        digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), self.salt, self.iterations)
        return hmac.compare_digest(digest, self.digest)


class StaffGate:
    """Decides whether a typed PIN opens staff actions, with a table-wide lockout.

    The lockout counts wrong PINs from every seat together: someone trying PINs would
    just move to the next seat otherwise.
    """

    def __init__(self, pin_hash: PinHash | None, now: Callable[[], float]) -> None:
        self.pin_hash = pin_hash
        self.now = now
        self.failures = 0
        self.locked_until: float | None = None

    @property
    def configured(self) -> bool:
        """Whether a staff PIN is set (without one, staff actions come only from ``ctl``)."""
        return self.pin_hash is not None

    def locked_for(self) -> float:
        """Seconds the lockout still runs (0 when staff actions are open)."""
        if self.locked_until is None:
            return 0.0
        left = self.locked_until - self.now()
        if left <= 0:
            self.locked_until = None
            return 0.0
        return left

    def check(self, pin: str) -> str:
        """``"ok"``, ``"wrong"``, ``"locked"`` (this failure started a lockout),
        ``"still_locked"`` or ``"not_configured"``. Only ``"ok"`` opens staff actions."""
        if self.pin_hash is None:
            return "not_configured"
        if self.locked_for() > 0:
            return "still_locked"
        if self.pin_hash.matches(pin):
            self.failures = 0
            return "ok"
        self.failures += 1
        if self.failures >= MAX_FAILURES:
            self.failures = 0
            self.locked_until = self.now() + LOCKOUT_S
            return "locked"
        return "wrong"
