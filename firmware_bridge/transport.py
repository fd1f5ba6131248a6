"""Byte transports, all behind one small interface (opened by URL in
:mod:`firmware_bridge.endpoints`; USB in :mod:`firmware_bridge.usb_transport`).

A :class:`Transport` is a reliable-or-not byte stream: ``await read()`` returns at least one
byte or raises :class:`TransportClosed`; ``write()`` queues bytes without blocking; ``await
close()`` releases everything (fds, threads, tasks) before returning. The link above pulls
with ``read()``; end of stream travels up as ``TransportClosed``. A pull interface (rather
than asyncio protocol callbacks) keeps fault-injection wrappers and the USB thread bridge a
few lines each.

Device-side helpers used by tests and hw_sim: :func:`transport_pair`, :class:`SimListener`,
:class:`TcpListener` and :func:`open_pty` (master side of a pseudo-terminal whose slave path
the host opens as a serial port).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import errno
import logging
import os
import tty
from collections.abc import Awaitable, Callable

from firmware_bridge.errors import TransportClosed, TransportError

__all__ = [
    "DEFAULT_BAUDRATE",
    "Connector",
    "PairTransport",
    "PtyTransport",
    "SerialTransport",
    "SimListener",
    "StreamTransport",
    "TcpListener",
    "Transport",
    "open_pty",
    "transport_pair",
]

_log = logging.getLogger(__name__)

#: Serial speed when the URL gives none: fast enough for a 255-byte frame in 22 ms, and
#: every USB-UART bridge and MCU UART does it reliably.
DEFAULT_BAUDRATE = 115200
#: Largest read from an fd in one go; several frames, small enough to keep latency low.
READ_CHUNK = 4096

#: An async callable that opens (or accepts) the next transport; the link calls it again to
#: reconnect.
Connector = Callable[[], Awaitable["Transport"]]


class Transport(abc.ABC):
    """A byte stream. Implementations must make ``close`` idempotent and complete."""

    #: Human-readable endpoint, for logs.
    url: str = ""

    @abc.abstractmethod
    async def read(self) -> bytes:
        """Return the next chunk of bytes (at least one), or raise :class:`TransportClosed`."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Queue ``data`` for sending without blocking. Raises :class:`TransportClosed`."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close and release every resource; pending ``read`` calls raise TransportClosed."""

    @property
    @abc.abstractmethod
    def is_closed(self) -> bool:
        """True once the stream ended or was closed."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url}>"


class _ChunkQueue:
    """An asyncio FIFO of byte chunks that can be closed (then readers get TransportClosed)."""

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.reason = "closed"

    def put(self, data: bytes) -> None:
        if self.closed or not data:
            return
        self._chunks.append(bytes(data))
        self._wake()

    def close(self, reason: str = "closed") -> None:
        if not self.closed:
            self.closed = True
            self.reason = reason
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def get(self) -> bytes:
        while not self._chunks:
            if self.closed:
                raise TransportClosed(self.reason)
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        data = b"".join(self._chunks)
        self._chunks.clear()
        return data


# --------------------------------------------------------------------------------------------
# In-process pair


class PairTransport(Transport):
    """One end of an in-process byte pipe; closing either end ends both (like an unplug)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._rx = _ChunkQueue()
        self._peer: PairTransport | None = None

    async def read(self) -> bytes:
        return await self._rx.get()

    def write(self, data: bytes) -> None:
        if self._rx.closed or self._peer is None:
            raise TransportClosed(f"{self.url}: closed")
        self._peer._rx.put(data)

    async def close(self) -> None:
        self._rx.close(f"{self.url}: closed")
        if self._peer is not None:
            self._peer._rx.close(f"{self.url}: peer closed")

    @property
    def is_closed(self) -> bool:
        return self._rx.closed


def transport_pair(name: str = "pair") -> tuple[PairTransport, PairTransport]:
    """Two connected in-process transports: ``(host_end, device_end)``."""
    a, b = PairTransport(f"sim://{name}#host"), PairTransport(f"sim://{name}#device")
    a._peer, b._peer = b, a
    return a, b


class SimListener:
    """Device side of ``sim://name``: each ``open_transport("sim://name")`` creates a pair and
    hands the device end to :meth:`accept`. Use as a context manager or call :meth:`close`."""

    _registry: dict[str, SimListener] = {}  # noqa: RUF012 - process-wide name table

    def __init__(self, name: str) -> None:
        if name in SimListener._registry:
            raise TransportError(f"sim://{name} is already listening")
        self.name = name
        self._pending: asyncio.Queue[PairTransport] = asyncio.Queue()
        SimListener._registry[name] = self

    async def accept(self) -> Transport:
        """Wait for the next host connection and return the device end."""
        return await self._pending.get()

    def _connect(self) -> PairTransport:
        host, device = transport_pair(self.name)
        self._pending.put_nowait(device)
        return host

    def close(self) -> None:
        """Stop listening; pending unaccepted connections are closed."""
        SimListener._registry.pop(self.name, None)
        while not self._pending.empty():
            t = self._pending.get_nowait()
            t._rx.close()
            if t._peer is not None:
                t._peer._rx.close("listener closed")

    def __enter__(self) -> SimListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# TCP


class StreamTransport(Transport):
    """Transport over an asyncio ``StreamReader``/``StreamWriter`` pair (TCP)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, url: str):
        self.url = url
        self._reader, self._writer = reader, writer
        self._closed = False

    @classmethod
    async def connect(cls, host: str, port: int) -> StreamTransport:
        """Open a TCP connection to ``host:port``."""
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError as exc:
            raise TransportError(f"socket://{host}:{port}: {exc}") from exc
        return cls(reader, writer, f"socket://{host}:{port}")

    async def read(self) -> bytes:
        if self._closed:
            raise TransportClosed(f"{self.url}: closed")
        try:
            data = await self._reader.read(READ_CHUNK)
        except OSError as exc:
            raise TransportClosed(f"{self.url}: {exc}") from exc
        if not data:
            self._closed = True
            raise TransportClosed(f"{self.url}: connection closed by peer")
        return data

    def write(self, data: bytes) -> None:
        if self._closed or self._writer.is_closing():
            raise TransportClosed(f"{self.url}: closed")
        self._writer.write(data)

    async def close(self) -> None:
        self._closed = True
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

    @property
    def is_closed(self) -> bool:
        return self._closed


class TcpListener:
    """Device side of ``socket://``: a TCP server whose :meth:`accept` returns transports.

    ``port=0`` picks a free port, readable from :attr:`port` after :meth:`start`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self._server: asyncio.Server | None = None
        self._pending: asyncio.Queue[StreamTransport] = asyncio.Queue()

    async def start(self) -> TcpListener:
        """Start listening; returns self."""
        self._server = await asyncio.start_server(self._on_client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        t = StreamTransport(reader, writer, f"tcp-client://{peer}")
        self._pending.put_nowait(t)

    async def accept(self) -> Transport:
        """Wait for the next connection."""
        return await self._pending.get()

    async def close(self) -> None:
        """Stop listening and close connections that were never accepted."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        while not self._pending.empty():
            await self._pending.get_nowait().close()

    async def __aenter__(self) -> TcpListener:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


# --------------------------------------------------------------------------------------------
# Serial (pyserial-asyncio-fast)


class _SerialProtocol(asyncio.Protocol):
    def __init__(self, url: str) -> None:
        self.rx = _ChunkQueue()
        self.url = url
        self.lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.rx.put(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.rx.close(f"{self.url}: {exc}" if exc else f"{self.url}: closed")
        if not self.lost.done():
            self.lost.set_result(None)


class SerialTransport(Transport):
    """A serial port through pyserial-asyncio-fast (also a pty slave in tests)."""

    def __init__(self, transport: asyncio.Transport, protocol: _SerialProtocol, url: str):
        self.url = url
        self._transport, self._protocol = transport, protocol

    @classmethod
    async def open(cls, path: str, baudrate: int = DEFAULT_BAUDRATE) -> SerialTransport:
        """Open ``path`` at ``baudrate`` 8N1, no flow control."""
        import serial
        import serial_asyncio_fast

        loop = asyncio.get_running_loop()
        protocol = _SerialProtocol(path)
        try:
            # exclusive: an flock on the port while it is open, so that a second daemon
            # (or a terminal program) cannot read the table's frames away from this one.
            transport, _ = await serial_asyncio_fast.create_serial_connection(
                loop, lambda: protocol, path, baudrate=baudrate, exclusive=True
            )
        except (OSError, serial.SerialException) as exc:
            raise TransportError(f"{path}: {exc}") from exc
        return cls(transport, protocol, path)

    async def read(self) -> bytes:
        return await self._protocol.rx.get()

    def write(self, data: bytes) -> None:
        if self._protocol.rx.closed or self._transport.is_closing():
            raise TransportClosed(f"{self.url}: closed")
        self._transport.write(data)

    async def close(self) -> None:
        if not self._transport.is_closing():
            # abort, not close: close() flushes with tcdrain, which can block forever on a
            # port whose other end stopped reading (an unplugged adapter, an idle pty).
            self._transport.abort()
        await self._protocol.lost

    @property
    def is_closed(self) -> bool:
        return self._protocol.rx.closed


# --------------------------------------------------------------------------------------------
# Pseudo-terminal master (device side of a serial test or of hw_sim's pty mode)


class PtyTransport(Transport):
    """The master side of a pty; the host opens :attr:`slave_path` as a serial port.

    The transport keeps its own slave fd open so the master never sees EIO when the host
    closes the port: like a real UART, the device side does not notice an unplug except by
    silence.
    """

    def __init__(self) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no line editing, no CR/LF translation
        os.set_blocking(self._master, False)
        self.slave_path = os.ttyname(self._slave)
        self.url = f"pty:{self.slave_path}"
        self._rx = _ChunkQueue()
        self._out = bytearray()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self._master, self._on_readable)
        self._writing = False

    def _on_readable(self) -> None:
        try:
            data = os.read(self._master, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError as exc:
            _log.debug("pty read failed: %s", exc)
            self._shutdown(f"{self.url}: {exc}")
            return
        if data:
            self._rx.put(data)

    async def read(self) -> bytes:
        return await self._rx.get()

    def write(self, data: bytes) -> None:
        if self._rx.closed:
            raise TransportClosed(f"{self.url}: closed")
        self._out += data
        self._flush()

    def _flush(self) -> None:
        while self._out:
            try:
                n = os.write(self._master, self._out)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EIO:  # nobody on the slave: bytes vanish like on a wire
                    self._out.clear()
                    break
                self._shutdown(f"{self.url}: {exc}")
                return
            del self._out[:n]
        if self._out and not self._writing:
            self._loop.add_writer(self._master, self._flush)
            self._writing = True
        elif not self._out and self._writing:
            self._loop.remove_writer(self._master)
            self._writing = False

    def _shutdown(self, reason: str) -> None:
        if self._master < 0:
            return
        self._loop.remove_reader(self._master)
        if self._writing:
            self._loop.remove_writer(self._master)
            self._writing = False
        os.close(self._master)
        os.close(self._slave)
        self._master = self._slave = -1
        self._rx.close(reason)

    async def close(self) -> None:
        self._shutdown(f"{self.url}: closed")

    @property
    def is_closed(self) -> bool:
        return self._rx.closed


async def open_pty() -> PtyTransport:
    """Create a pty pair; returns the master transport, see ``.slave_path``."""
    return PtyTransport()


# --------------------------------------------------------------------------------------------
# URL dispatch
