"""firmware_bridge: the wire protocol between the Pi and the table's microcontroller.

Layers, top to bottom (each knows only the one below):

* :mod:`firmware_bridge.link` -- :class:`Link`: seq/ack/retransmit, hello, heartbeat,
  reconnect; host and device roles;
* :mod:`firmware_bridge.messages` -- the schema: frozen dataclass messages and enums
  (import message classes from there);
* :mod:`firmware_bridge.signing` -- frame authentication (MAVLink v2-style signing with a
  shared key), off unless a key is given;
* :mod:`firmware_bridge.codec` -- pure COBS + CRC-16 framing;
* :mod:`firmware_bridge.endpoints` -- opens a transport by URL;
* :mod:`firmware_bridge.transport` (+ ``usb_transport``, ``usb_loopback``) -- byte streams;
* :mod:`firmware_bridge.testing` -- seeded faulty transports for tests and fault injection,
  and a fuzzer that throws frames into a live link pair.

The protocol itself is specified in docs/protocol.md.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware_bridge.codec import (
        PROTOCOL_MAJOR,
        Flags,
        Frame,
        FrameDecoder,
        check_packet,
        decode_packet,
        encode_frame,
    )
    from firmware_bridge.endpoints import open_transport
    from firmware_bridge.errors import (
        BridgeError,
        FrameError,
        LinkDown,
        ProtocolError,
        SendFailed,
        TransportClosed,
        TransportError,
        VersionMismatch,
    )
    from firmware_bridge.link import (
        Delivery,
        DeviceInfo,
        Link,
        LinkEvent,
        LinkLost,
        LinkPosition,
        LinkRefused,
        LinkStats,
        LinkUp,
        RefusalKind,
        Retained,
        Role,
        TableRebooted,
    )
    from firmware_bridge.transport import (
        Connector,
        SimListener,
        TcpListener,
        Transport,
        open_pty,
        transport_pair,
    )

#: Where each name of the package's own namespace lives.  They are imported on first use
#: (PEP 562), not with the package: a command that needs only a submodule (``tablectl
#: records``, ``ctl``, ``replay``) then skips the link's and transports' imports, which
#: were a third of its start-up on a Pi-class board.
_HOMES: dict[str, str] = {
    "BridgeError": "firmware_bridge.errors",
    "Connector": "firmware_bridge.transport",
    "Delivery": "firmware_bridge.link",
    "DeviceInfo": "firmware_bridge.link",
    "Flags": "firmware_bridge.codec",
    "Frame": "firmware_bridge.codec",
    "FrameDecoder": "firmware_bridge.codec",
    "FrameError": "firmware_bridge.errors",
    "Link": "firmware_bridge.link",
    "LinkDown": "firmware_bridge.errors",
    "LinkEvent": "firmware_bridge.link",
    "LinkLost": "firmware_bridge.link",
    "LinkPosition": "firmware_bridge.link",
    "LinkRefused": "firmware_bridge.link",
    "LinkStats": "firmware_bridge.link",
    "LinkUp": "firmware_bridge.link",
    "PROTOCOL_MAJOR": "firmware_bridge.codec",
    "ProtocolError": "firmware_bridge.errors",
    "RefusalKind": "firmware_bridge.link",
    "Retained": "firmware_bridge.link",
    "Role": "firmware_bridge.link",
    "SendFailed": "firmware_bridge.errors",
    "SimListener": "firmware_bridge.transport",
    "TableRebooted": "firmware_bridge.link",
    "TcpListener": "firmware_bridge.transport",
    "Transport": "firmware_bridge.transport",
    "TransportClosed": "firmware_bridge.errors",
    "TransportError": "firmware_bridge.errors",
    "VersionMismatch": "firmware_bridge.errors",
    "check_packet": "firmware_bridge.codec",
    "decode_packet": "firmware_bridge.codec",
    "encode_frame": "firmware_bridge.codec",
    "open_pty": "firmware_bridge.transport",
    "open_transport": "firmware_bridge.endpoints",
    "transport_pair": "firmware_bridge.transport",
}


def __getattr__(name: str) -> Any:
    """The name ``name`` of the package, imported from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "PROTOCOL_MAJOR",
    "BridgeError",
    "Connector",
    "DeviceInfo",
    "Flags",
    "Frame",
    "FrameDecoder",
    "FrameError",
    "Link",
    "LinkDown",
    "LinkEvent",
    "LinkLost",
    "Delivery",
    "LinkPosition",
    "LinkRefused",
    "LinkStats",
    "LinkUp",
    "ProtocolError",
    "RefusalKind",
    "Retained",
    "Role",
    "SendFailed",
    "SimListener",
    "TableRebooted",
    "TcpListener",
    "Transport",
    "TransportClosed",
    "TransportError",
    "VersionMismatch",
    "check_packet",
    "decode_packet",
    "encode_frame",
    "open_pty",
    "open_transport",
    "transport_pair",
]
