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
