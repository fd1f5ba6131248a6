"""A pyusb backend presenting fake USB devices whose bulk endpoints are in-process pipes.

It lets ``usb://VID:PID`` run for real through pyusb (``usb.core.find``, configuration,
interface claim, ``Device.read``/``write``) without hardware or libusb, in tests and in
hw_sim's USB mode::

    backend = usb_loopback.get_backend()          # process-wide instance
    device = backend.add_device(0x1209, 0x7A11)   # "plug in" a table
    device_side = await device.accept()            # Transport for the simulated firmware
    host_side = await open_transport("usb://1209:7a11?backend=loopback")

Each fake device has configuration 1, interface 0 (vendor class) with bulk OUT 0x01 and bulk
IN 0x81 (64-byte packets). ``device.unplug()`` makes host transfers fail with ENODEV and ends
the device-side transport, like pulling the cable; ``device.replug()`` plugs it back.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import errno
import threading
from types import SimpleNamespace
from typing import Any

import usb.backend
import usb.core

from firmware_bridge.errors import TransportClosed, TransportError
from firmware_bridge.transport import Transport

__all__ = ["EP_IN", "EP_OUT", "LoopbackBackend", "LoopbackDevice", "get_backend"]

EP_OUT = 0x01
EP_IN = 0x81
_BULK = 0x02
_MAX_PACKET = 64


class _BytePipe:
    """Thread-safe byte FIFO with a blocking reader (pyusb threads) and an async reader."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._buf = bytearray()
        self.closed = False
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def put(self, data: bytes) -> None:
        with self._cond:
            if self.closed:
                raise BrokenPipeError("pipe closed")
            self._buf += data
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        _wake_all(waiters)

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()
            waiters, self._waiters = self._waiters, []
        _wake_all(waiters)

    def get_blocking(self, size: int, timeout: float | None) -> bytes | None:
        """Up to ``size`` bytes; None on timeout; BrokenPipeError when closed and empty."""
        with self._cond:
            self._cond.wait_for(lambda: self._buf or self.closed, timeout)
            if self._buf:
                data = bytes(self._buf[:size])
                del self._buf[:size]
                return data
            if self.closed:
                raise BrokenPipeError("pipe closed")
            return None

    async def get(self) -> bytes:
        """Everything buffered (at least one byte); BrokenPipeError when closed and empty."""
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                if self._buf:
                    data = bytes(self._buf)
                    self._buf.clear()
                    return data
                if self.closed:
                    raise BrokenPipeError("pipe closed")
                entry = (loop, loop.create_future())
                self._waiters.append(entry)
            try:
                await entry[1]
            finally:
                with self._cond, contextlib.suppress(ValueError):
                    self._waiters.remove(entry)


def _wake_all(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
    for loop, fut in waiters:
        with contextlib.suppress(RuntimeError):  # that loop is closed: nobody is waiting
            loop.call_soon_threadsafe(_set_done, fut)


def _set_done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _DeviceTransport(Transport):
    """The firmware's end of a loopback device: reads what the host wrote to EP OUT."""

    def __init__(self, to_device: _BytePipe, to_host: _BytePipe, url: str) -> None:
        self.url = url
        self._rx, self._tx = to_device, to_host
        self._closed = False

    async def read(self) -> bytes:
        if self._closed:
            raise TransportClosed(f"{self.url}: closed")
        try:
            return await self._rx.get()
        except BrokenPipeError:
            self._closed = True
            raise TransportClosed(f"{self.url}: unplugged") from None

    def write(self, data: bytes) -> None:
        if self._closed:
            raise TransportClosed(f"{self.url}: closed")
        try:
            self._tx.put(data)
        except BrokenPipeError:
            self._closed = True
            raise TransportClosed(f"{self.url}: unplugged") from None

    async def close(self) -> None:
        self._closed = True

    @property
    def is_closed(self) -> bool:
        return self._closed


class LoopbackDevice:
    """One fake USB table. Create with :meth:`LoopbackBackend.add_device`."""

    def __init__(self, vid: int, pid: int, address: int) -> None:
        self.vid, self.pid, self.address = vid, pid, address
        self.url = f"usb-device://{vid:04x}:{pid:04x}"
        self.plugged = True
        self._to_device = _BytePipe()
        self._to_host = _BytePipe()
        self.descriptor = SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x0200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=_MAX_PACKET, idVendor=vid, idProduct=pid,
            bcdDevice=0x0100, iManufacturer=0, iProduct=0, iSerialNumber=0,
            bNumConfigurations=1, address=address, bus=1, port_number=address,
            port_numbers=(address,), speed=2,
        )  # fmt: skip

    def transport(self) -> Transport:
        """The device-side transport for the current plug-in (ends at :meth:`unplug`)."""
        return _DeviceTransport(self._to_device, self._to_host, self.url)

    async def accept(self) -> Transport:
        """A connector for the device-side link: the transport of the current plug-in.
        Raises TransportError while unplugged, so the link retries with its backoff."""
        if not self.plugged:
            raise TransportError(f"{self.url}: unplugged")
        return self.transport()

    def unplug(self) -> None:
        """Pull the cable: host transfers fail with ENODEV, the device transport ends."""
        self.plugged = False
        self._to_device.close()
        self._to_host.close()

    def replug(self) -> None:
        """Plug back in with fresh (empty) endpoints."""
        self._to_device = _BytePipe()
        self._to_host = _BytePipe()
        self.plugged = True

    def _check(self) -> None:
        if not self.plugged:
            raise usb.core.USBError("No such device", errno=errno.ENODEV)


_CONFIG = SimpleNamespace(
    bLength=9, bDescriptorType=2, wTotalLength=32, bNumInterfaces=1, bConfigurationValue=1,
    iConfiguration=0, bmAttributes=0x80, bMaxPower=50, extra_descriptors=[],
)  # fmt: skip
_INTERFACE = SimpleNamespace(
    bLength=9, bDescriptorType=4, bInterfaceNumber=0, bAlternateSetting=0, bNumEndpoints=2,
    bInterfaceClass=0xFF, bInterfaceSubClass=0, bInterfaceProtocol=0, iInterface=0,
    extra_descriptors=[],
)  # fmt: skip
_ENDPOINTS = tuple(
    SimpleNamespace(
        bLength=7,
        bDescriptorType=5,
        bEndpointAddress=addr,
        bmAttributes=_BULK,
        wMaxPacketSize=_MAX_PACKET,
        bInterval=0,
        bRefresh=0,
        bSynchAddress=0,
        extra_descriptors=[],
    )  # fmt: skip
    for addr in (EP_OUT, EP_IN)
)


class LoopbackBackend(usb.backend.IBackend):  # type: ignore[misc]
    """pyusb backend whose devices are :class:`LoopbackDevice` objects (see module doc)."""

    def __init__(self) -> None:
        self._devices: list[LoopbackDevice] = []
        self._lock = threading.Lock()

    def add_device(self, vid: int, pid: int) -> LoopbackDevice:
        """Plug in a new fake device and return it."""
        with self._lock:
            dev = LoopbackDevice(vid, pid, address=len(self._devices) + 1)
            self._devices.append(dev)
        return dev

    def remove_device(self, dev: LoopbackDevice) -> None:
        """Unplug ``dev`` and forget it."""
        dev.unplug()
        with self._lock, contextlib.suppress(ValueError):
            self._devices.remove(dev)

    # ---- IBackend --------------------------------------------------------------------------
    # Argument names follow usb.backend.IBackend; handles are the LoopbackDevice itself.

    def enumerate_devices(self) -> list[LoopbackDevice]:
        with self._lock:
            return [d for d in self._devices if d.plugged]

    def get_parent(self, dev: LoopbackDevice) -> None:
        return None

    def get_device_descriptor(self, dev: LoopbackDevice) -> SimpleNamespace:
        return dev.descriptor

    def get_configuration_descriptor(self, dev: LoopbackDevice, config: int) -> SimpleNamespace:
        if config != 0:
            raise IndexError("configuration index out of range")
        return _CONFIG

    def get_interface_descriptor(
        self, dev: LoopbackDevice, intf: int, alt: int, config: int
    ) -> SimpleNamespace:
        if (intf, alt, config) != (0, 0, 0):
            raise IndexError("interface index out of range")
        return _INTERFACE

    def get_endpoint_descriptor(
        self, dev: LoopbackDevice, ep: int, intf: int, alt: int, config: int
    ) -> SimpleNamespace:
        if (intf, alt, config) != (0, 0, 0) or not 0 <= ep < len(_ENDPOINTS):
            raise IndexError("endpoint index out of range")
        return _ENDPOINTS[ep]

    def open_device(self, dev: LoopbackDevice) -> LoopbackDevice:
        dev._check()
        return dev

    def close_device(self, dev_handle: LoopbackDevice) -> None:
        return None

    def set_configuration(self, dev_handle: LoopbackDevice, config_value: int) -> None:
        dev_handle._check()

    def get_configuration(self, dev_handle: LoopbackDevice) -> int:
        return 1

    def set_interface_altsetting(self, dev_handle: LoopbackDevice, intf: int, alt: int) -> None:
        dev_handle._check()

    def claim_interface(self, dev_handle: LoopbackDevice, intf: int) -> None:
        dev_handle._check()

    def release_interface(self, dev_handle: LoopbackDevice, intf: int) -> None:
        return None

    def is_kernel_driver_active(self, dev_handle: LoopbackDevice, intf: int) -> bool:
        return False

    def detach_kernel_driver(self, dev_handle: LoopbackDevice, intf: int) -> None:
        return None

    def clear_halt(self, dev_handle: LoopbackDevice, ep: int) -> None:
        return None

    def bulk_write(
        self, dev_handle: LoopbackDevice, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        dev_handle._check()
        if ep != EP_OUT:
            raise usb.core.USBError("invalid endpoint", errno=errno.EINVAL)
        try:
            dev_handle._to_device.put(bytes(data))
        except BrokenPipeError:
            raise usb.core.USBError("No such device", errno=errno.ENODEV) from None
        return len(data)

    def bulk_read(
        self, dev_handle: LoopbackDevice, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        dev_handle._check()
        if ep != EP_IN:
            raise usb.core.USBError("invalid endpoint", errno=errno.EINVAL)
        try:
            data = dev_handle._to_host.get_blocking(len(buff), timeout / 1000 if timeout else None)
        except BrokenPipeError:
            raise usb.core.USBError("No such device", errno=errno.ENODEV) from None
        if data is None:
            raise usb.core.USBTimeoutError("Operation timed out", errno=errno.ETIMEDOUT)
        buff[: len(data)] = array.array("B", data)
        return len(data)

    def ctrl_transfer(self, *args: Any) -> int:
        raise usb.core.USBError("control transfers are not simulated", errno=errno.EPIPE)


_default: LoopbackBackend | None = None
_default_lock = threading.Lock()


def get_backend() -> LoopbackBackend:
    """The process-wide loopback backend used by ``usb://...?backend=loopback``."""
    global _default  # noqa: PLW0603 - one shared fake bus per process, like the real one
    with _default_lock:
        if _default is None:
            _default = LoopbackBackend()
        return _default
