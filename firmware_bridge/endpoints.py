"""Transports opened by URL: the one place that knows every scheme.

=============================  ============================================================
URL                            transport
=============================  ============================================================
``/dev/ttyUSB0``, ``/dev/pts/3`` serial port through pyserial-asyncio-fast (``?baud=115200``)
``socket://host:port``         TCP client through asyncio streams
``usb://VID:PID``              USB bulk endpoints through pyusb (hex ids, ``?backend=loopback``
                               picks :mod:`firmware_bridge.usb_loopback`)
``sim://name``                 in-process pair; the other end is accepted by
                               ``SimListener("name").accept()``
=============================  ============================================================

Above :mod:`firmware_bridge.transport` and the USB modules, which import only the transport
interface: nothing imports back up here.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from firmware_bridge.errors import TransportError
from firmware_bridge.transport import (
    DEFAULT_BAUDRATE,
    Connector,
    SerialTransport,
    SimListener,
    StreamTransport,
    Transport,
)

__all__ = ["connector_for", "open_transport"]


async def open_transport(url: str, *, usb_backend: Any = None) -> Transport:
    """Open the transport named by ``url`` (see the module docstring for the schemes).

    ``usb_backend`` overrides the pyusb backend for ``usb://`` URLs (tests, hw_sim).
    Raises :class:`TransportError` when the endpoint cannot be opened.
    """
    parsed = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parsed.query))
    if parsed.scheme == "socket":
        if parsed.hostname is None or parsed.port is None:
            raise TransportError(f"{url}: expected socket://host:port")
        return await StreamTransport.connect(parsed.hostname, parsed.port)
    if parsed.scheme == "sim":
        listener = SimListener._registry.get(parsed.netloc or parsed.path)
        if listener is None:
            raise TransportError(f"{url}: no simulator listening under that name")
        return listener._connect()
    if parsed.scheme == "usb":
        # pyusb takes ~75 ms to import: only a usb:// URL pays for it.
        from firmware_bridge.usb_transport import UsbTransport, parse_usb_ids

        vid, pid = parse_usb_ids(parsed.netloc)
        backend = usb_backend
        if backend is None and query.get("backend") == "loopback":
            from firmware_bridge import usb_loopback

            backend = usb_loopback.get_backend()
        return await UsbTransport.open(vid, pid, backend=backend)
    if parsed.scheme in ("", "serial", "file"):
        path = parsed.path
        try:
            baud = int(query.get("baud", DEFAULT_BAUDRATE))
        except ValueError:
            raise TransportError(f"{url}: baud must be an integer") from None
        return await SerialTransport.open(path, baudrate=baud)
    raise TransportError(
        f"{url}: unknown transport scheme {parsed.scheme!r} "
        "(use a device path, socket://, usb:// or sim://)"
    )


def connector_for(url: str, *, usb_backend: Any = None) -> Connector:
    """A :data:`Connector` that opens ``url`` anew on every call."""

    async def connect() -> Transport:
        return await open_transport(url, usb_backend=usb_backend)

    connect.__qualname__ = f"connector_for({url!r})"
    return connect
