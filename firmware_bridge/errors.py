"""The exception tree of the firmware bridge.

Every exception the bridge raises on purpose derives from :class:`BridgeError`::

    BridgeError
    ├── FrameError         a packet failed COBS, CRC or length checks (codec)
    ├── ProtocolError      a well-framed packet that makes no sense (unknown type, bad payload)
    │   └── VersionMismatch    the peer speaks an incompatible protocol major version
    │                          (not raised by Link since 1.1: see LinkRefused)
    ├── TransportError     opening or using a byte transport failed
    │   └── TransportClosed    the byte stream ended (unplug, EOF, close)
    ├── LinkDown           no session with the peer (send() while down, or the link dropped
    │                      before the message was acknowledged: delivery unknown)
    └── SendFailed         the peer never acknowledged a message within MAX_RETRANSMITS

Constructor misuse (a seat of 7, a 300-byte display line) raises ``ValueError``/``TypeError``:
those are bugs in the caller, not I/O conditions.
"""

from __future__ import annotations

__all__ = [
    "BridgeError",
    "FrameError",
    "LinkDown",
    "ProtocolError",
    "SendFailed",
    "TransportClosed",
    "TransportError",
    "VersionMismatch",
]


class BridgeError(Exception):
    """Base class of every error the firmware bridge raises on purpose."""


class FrameError(BridgeError):
    """A packet on the wire is not a valid frame.

    ``kind`` is one of ``"cobs"``, ``"crc"``, ``"length"``, ``"empty"``, so statistics can
    tell a noisy line (CRC) from a framing bug (COBS/length).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class ProtocolError(BridgeError):
    """A frame passed the CRC but its content breaks the protocol."""


class VersionMismatch(ProtocolError):
    """The peer's protocol major version differs from ours.

    Kept for callers that catch it. :class:`~firmware_bridge.link.Link` no longer raises
    it: a table refused at the hello is a ``LinkRefused`` event and the link retries.
    """


class TransportError(BridgeError):
    """Opening or using a transport (serial, TCP, USB, in-process) failed."""


class TransportClosed(TransportError):
    """The byte stream ended: the cable was unplugged, the peer closed, or we closed."""


class LinkDown(BridgeError):
    """There is no session with the peer.

    Raised by ``send()`` when the link is not up, or when it went down before the message
    was acknowledged; in the latter case the peer may or may not have acted on it.
    """


class SendFailed(BridgeError):
    """The peer did not acknowledge a message after ``MAX_RETRANSMITS`` retransmissions."""
