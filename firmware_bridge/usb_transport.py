"""``usb://VID:PID``: the wire protocol over a pair of USB bulk endpoints, through pyusb.

The table enumerates as a vendor-specific device whose interface 0 has one bulk OUT and one
bulk IN endpoint; the COBS byte stream runs over them unchanged (USB packet boundaries mean
nothing to the decoder). pyusb calls block, so they run on two threads per transport, never
on the event loop: a reader that polls the IN endpoint with a short timeout (so ``close``
returns promptly) and a writer fed by a queue (so writes stay in order).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from typing import Any

import usb.core
import usb.util

from firmware_bridge.errors import TransportClosed, TransportError
from firmware_bridge.transport import Transport, _ChunkQueue

__all__ = ["USB_READ_TIMEOUT_MS", "UsbTransport", "parse_usb_ids"]

_log = logging.getLogger(__name__)

#: A blocked bulk read gives up this often so the reader thread notices ``close`` quickly.
USB_READ_TIMEOUT_MS = 50
#: A bulk write that takes longer than this means the device stopped reading: give up.
USB_WRITE_TIMEOUT_MS = 2000
#: Bytes asked for per bulk read: several 64-byte full-speed packets, one frame or more.
USB_READ_SIZE = 512
#: The interface carrying the two bulk endpoints.
USB_INTERFACE = 0


def parse_usb_ids(text: str) -> tuple[int, int]:
    """Parse ``"1209:7a11"`` (hex) into ``(vid, pid)``; raises TransportError."""
    try:
        vid_s, pid_s = text.split(":")
        vid, pid = int(vid_s, 16), int(pid_s, 16)
    except ValueError:
        raise TransportError(f"usb://{text}: expected usb://VID:PID in hex") from None
    if not (0 <= vid <= 0xFFFF and 0 <= pid <= 0xFFFF):
        raise TransportError(f"usb://{text}: ids must be 16-bit")
    return vid, pid


class UsbTransport(Transport):
    """Transport over bulk endpoints of a pyusb device. Build with :meth:`open`."""

    def __init__(self, dev: Any, ep_in: int, ep_out: int, url: str) -> None:
        self.url = url
        self._dev = dev
        self._ep_in, self._ep_out = ep_in, ep_out
        self._loop = asyncio.get_running_loop()
        self._rx = _ChunkQueue()
        self._stop = threading.Event()
        self._wq: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(
            target=self._read_loop, name=f"firmware_bridge-usb-rx {url}", daemon=True
        )
        self._writer = threading.Thread(
            target=self._write_loop, name=f"firmware_bridge-usb-tx {url}", daemon=True
        )
        self._reader.start()
        self._writer.start()

    @classmethod
    async def open(cls, vid: int, pid: int, *, backend: Any = None) -> UsbTransport:
        """Find ``vid:pid``, configure it and start the I/O threads."""
        url = f"usb://{vid:04x}:{pid:04x}"
        dev, ep_in, ep_out = await asyncio.to_thread(_open_blocking, vid, pid, backend, url)
        return cls(dev, ep_in, ep_out, url)

    def _post(self, fn: Any, *args: Any) -> None:
        # Hop from an I/O thread to the loop; the loop may be gone during interpreter exit.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(fn, *args)

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._dev.read(self._ep_in, USB_READ_SIZE, timeout=USB_READ_TIMEOUT_MS)
            except usb.core.USBTimeoutError:
                continue
            except (usb.core.USBError, OSError, ValueError) as exc:
                if not self._stop.is_set():
                    _log.info("%s: bulk read failed: %s", self.url, exc)
                    self._post(self._rx.close, f"{self.url}: {exc}")
                return
            if len(data):
                self._post(self._rx.put, bytes(data))

    def _write_loop(self) -> None:
        while True:
            data = self._wq.get()
            if data is None:
                return
            try:
                self._dev.write(self._ep_out, data, timeout=USB_WRITE_TIMEOUT_MS)
            except (usb.core.USBError, OSError, ValueError) as exc:
                _log.info("%s: bulk write failed: %s", self.url, exc)
                self._post(self._rx.close, f"{self.url}: {exc}")
                return

    async def read(self) -> bytes:
        return await self._rx.get()

    def write(self, data: bytes) -> None:
        if self._rx.closed:
            raise TransportClosed(f"{self.url}: closed")
        self._wq.put(bytes(data))

    async def close(self) -> None:
        self._rx.close(f"{self.url}: closed")
        if self._stop.is_set():
            return
        self._stop.set()
        self._wq.put(None)
        await asyncio.to_thread(self._join_and_release)

    def _join_and_release(self) -> None:
        self._reader.join()
        self._writer.join()
        with contextlib.suppress(usb.core.USBError, OSError):
            usb.util.dispose_resources(self._dev)

    @property
    def is_closed(self) -> bool:
        return self._rx.closed


def _open_blocking(vid: int, pid: int, backend: Any, url: str) -> tuple[Any, int, int]:
    try:
        dev = usb.core.find(idVendor=vid, idProduct=pid, backend=backend)
    except usb.core.NoBackendError:
        raise TransportError(
            f"{url}: usb:// needs the libusb library, which is not installed"
            " (apt-get install libusb-1.0-0)"
        ) from None
    except (usb.core.USBError, OSError) as exc:
        raise TransportError(f"{url}: {exc}") from exc
    if dev is None:
        raise TransportError(f"{url}: no such USB device (plugged in? permissions?)")
    try:
        with contextlib.suppress(NotImplementedError, usb.core.USBError):
            if dev.is_kernel_driver_active(USB_INTERFACE):
                dev.detach_kernel_driver(USB_INTERFACE)
        dev.set_configuration()
        intf = dev.get_active_configuration()[(USB_INTERFACE, 0)]
        ep_in = ep_out = None
        for ep in intf:
            if usb.util.endpoint_type(ep.bmAttributes) != usb.util.ENDPOINT_TYPE_BULK:
                continue
            if usb.util.endpoint_direction(ep.bEndpointAddress) == usb.util.ENDPOINT_IN:
                ep_in = ep_in or ep.bEndpointAddress
            else:
                ep_out = ep_out or ep.bEndpointAddress
        if ep_in is None or ep_out is None:
            raise TransportError(f"{url}: interface {USB_INTERFACE} lacks bulk IN/OUT endpoints")
        usb.util.claim_interface(dev, USB_INTERFACE)
    except (usb.core.USBError, OSError, ValueError) as exc:
        usb.util.dispose_resources(dev)
        raise TransportError(f"{url}: {exc}") from exc
    return dev, int(ep_in), int(ep_out)
