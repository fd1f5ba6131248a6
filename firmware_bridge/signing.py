"""Frame authentication: MAVLink v2-style signing with a shared 32-byte key.

A signed frame carries a 13-byte trailer between its payload and its CRC (see
:class:`~firmware_bridge.codec.Signature` and docs/protocol.md, "Signing"):

    link_id u8 | timestamp u48le | mac = HMAC-SHA256(key, header payload link_id timestamp)[:6]

:class:`Signer` is one end's state: its own link id and timestamp, and the last timestamp
accepted from every other link id. It follows MAVLink's timestamp rules
(https://mavlink.io/en/guide/message_signing.html, "Timestamp handling"):

* timestamps are 10 us units since 2015-01-01 00:00 UTC, from the system clock;
* every frame a link sends has a timestamp at least one above the previous one, so at more
  than 100 000 frames/s it runs ahead of the clock;
* a frame that passes its MAC moves our own timestamp up to its own if that is greater
  (a firmware without a real-time clock takes the host's time this way);
* per link id, a frame whose timestamp is not greater than the last one accepted from that
  link id is a replay; a link id not seen before is accepted unless its timestamp is more
  than one minute behind ours.

Unlike MAVLink (system id, component id and link id), the link id alone names a stream here:
the host signs with :data:`HOST_LINK_ID`, the table with :data:`DEVICE_LINK_ID`, and a frame
carrying the receiver's own link id is one of its own frames sent back at it (a reflection),
refused as a replay. The MAC is an HMAC rather than MAVLink's SHA-256 of key and message, so
that no length-extension property of SHA-256 needs thinking about.
"""

from __future__ import annotations

import enum
import hmac
import time
import urllib.parse
from collections.abc import Callable

from firmware_bridge.codec import (
    MAC_LEN,
    TIMESTAMP_MAX,
    Flags,
    Frame,
    Signature,
    signing_input,
)

__all__ = [
    "DEVICE_LINK_ID",
    "EPOCH_UNIX",
    "HOST_LINK_ID",
    "KEY_LEN",
    "NEW_STREAM_WINDOW",
    "TICKS_PER_SECOND",
    "URL_KEY",
    "Signer",
    "Verdict",
    "check_key",
    "compute_mac",
    "parse_key",
    "sign_frame",
    "split_signing_key",
    "timestamp_at",
]

#: Length of the shared secret, as MAVLink's.
KEY_LEN = 32
#: The link id the host signs with.
HOST_LINK_ID = 0
#: The link id the table (device) signs with.
DEVICE_LINK_ID = 1
#: 2015-01-01 00:00:00 UTC in Unix seconds: MAVLink's timestamp epoch.
EPOCH_UNIX = 1_420_070_400
#: Timestamp units per second (10 us).
TICKS_PER_SECOND = 100_000
#: A link id not heard before may be this far (one minute) behind our timestamp.
NEW_STREAM_WINDOW = 60 * TICKS_PER_SECOND
#: The transport URL query parameter that carries the key (hex).
URL_KEY = "signing_key"


class Verdict(enum.Enum):
    """What :meth:`Signer.verify` made of a frame."""

    OK = "ok"
    #: No signature at all.
    UNSIGNED = "unsigned"
    #: The MAC does not match: forged, or signed with another key.
    BAD_SIGNATURE = "bad signature"
    #: A genuine frame seen before: its timestamp is not above the last one accepted from its
    #: link id, or more than a minute old for a new link id, or it carries our own link id.
    REPLAY = "replay"


def check_key(key: object) -> bytes:
    """``key`` as bytes if it is a usable signing key; TypeError/ValueError otherwise.
    The messages give the length, never the key."""
    if not isinstance(key, bytes | bytearray):
        raise TypeError(f"a signing key is {KEY_LEN} bytes, not a {type(key).__name__}")
    if len(key) != KEY_LEN:
        raise ValueError(f"a signing key is {KEY_LEN} bytes, got {len(key)}")
    return bytes(key)


def parse_key(text: str) -> bytes:
    """A key written as 64 hex digits (how configuration files and URLs carry it), e.g.
    from ``python -c 'import secrets;print(secrets.token_hex(32))'``."""
    digits = text.strip()
    if len(digits) != 2 * KEY_LEN:
        raise ValueError(
            f"a signing key is {2 * KEY_LEN} hex digits ({KEY_LEN} bytes), "
            f"got {len(digits)} characters"
        )
    for i, ch in enumerate(digits):
        if ch not in "0123456789abcdefABCDEF":
            raise ValueError(f"a signing key is hex digits only; character {i + 1} is not one")
    return bytes.fromhex(digits)


def split_signing_key(url: str) -> tuple[str, bytes | None]:
    """Take ``signing_key=HEX`` out of a transport URL's query: returns the URL without it
    (transports never see the key, so it is in none of their log lines) and the key, or
    None. Raises ValueError for a malformed key or one given twice."""
    parts = urllib.parse.urlsplit(url)
    if URL_KEY not in urllib.parse.parse_qs(parts.query, keep_blank_values=True):
        return url, None
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    keys = [value for name, value in pairs if name == URL_KEY]
    if len(keys) > 1:
        raise ValueError(f"{URL_KEY} is given {len(keys)} times in the transport URL; give it once")
    try:
        key = parse_key(keys[0])
    except ValueError as exc:
        raise ValueError(f"{URL_KEY} in the transport URL: {exc}") from None
    rest = urllib.parse.urlencode([(n, v) for n, v in pairs if n != URL_KEY])
    return urllib.parse.urlunsplit(parts._replace(query=rest)), key


def timestamp_at(unix_seconds: float) -> int:
    """The signing timestamp of a Unix time: 10 us units since 2015-01-01 UTC."""
    return max(0, min(int((unix_seconds - EPOCH_UNIX) * TICKS_PER_SECOND), TIMESTAMP_MAX))


def compute_mac(key: bytes, frame: Frame, link_id: int, timestamp: int) -> bytes:
    """The 6-byte MAC of ``frame`` signed by ``link_id`` at ``timestamp``."""
    return hmac.digest(key, signing_input(frame, link_id, timestamp), "sha256")[:MAC_LEN]


def sign_frame(frame: Frame, key: bytes, link_id: int, timestamp: int) -> Frame:
    """``frame`` with the ``SIGNED`` flag and its signature (any previous one replaced)."""
    return Frame(
        frame.flags | Flags.SIGNED,
        frame.seq,
        frame.ack,
        frame.msg_type,
        frame.payload,
        frame.version,
        Signature(link_id, timestamp, compute_mac(key, frame, link_id, timestamp)),
    )


class Signer:
    """One end's signing state: signs what it sends with ``link_id`` and checks what it
    receives (MAVLink's rules, see the module doc). ``clock`` returns Unix seconds."""

    def __init__(self, key: bytes, link_id: int, *, clock: Callable[[], float] = time.time) -> None:
        self._key = check_key(key)
        if not 0 <= link_id <= 0xFF:
            raise ValueError(f"a link id is 0..255, got {link_id}")
        self.link_id = link_id
        self._clock = clock
        self._timestamp = 0
        #: The last timestamp accepted from each other link id.
        self.last_accepted: dict[int, int] = {}

    def now(self) -> int:
        """Our current timestamp: the clock's, or the last one used or adopted if greater."""
        return max(timestamp_at(self._clock()), self._timestamp)

    def next_timestamp(self) -> int:
        """A timestamp for the next frame: above every one used before."""
        self._timestamp = max(timestamp_at(self._clock()), self._timestamp + 1)
        return self._timestamp

    def sign(self, frame: Frame) -> Frame:
        """``frame`` signed with our key, link id and the next timestamp."""
        return sign_frame(frame, self._key, self.link_id, self.next_timestamp())

    def verify(self, frame: Frame) -> Verdict:
        """Check ``frame``; if it is accepted (:attr:`Verdict.OK`) remember its timestamp
        for its link id and adopt it as ours if it is ahead."""
        sig = frame.signature
        if sig is None:
            return Verdict.UNSIGNED
        want = compute_mac(self._key, frame, sig.link_id, sig.timestamp)
        if not hmac.compare_digest(want, sig.mac):
            return Verdict.BAD_SIGNATURE
        if sig.link_id == self.link_id:
            return Verdict.REPLAY
        last = self.last_accepted.get(sig.link_id)
        if last is None:
            if sig.timestamp + NEW_STREAM_WINDOW < self.now():
                return Verdict.REPLAY
        elif sig.timestamp <= last:
            return Verdict.REPLAY
        self.last_accepted[sig.link_id] = sig.timestamp
        self._timestamp = max(self._timestamp, sig.timestamp)
        return Verdict.OK
