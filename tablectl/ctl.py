"""``tablectl ctl``: the local admin interface of a running daemon, over a Unix socket.

One request per connection, one JSON line each way::

    {"cmd": "status"}                      -> {"ok": true, "status": {...}}
    {"cmd": "abandon"}                     -> {"ok": true}   (a new game, same rules)
    {"cmd": "new-game", "rules": "kenko"}  -> {"ok": true}
    {"cmd": "undo"}                        -> {"ok": true}   (the last hand is re-entered)
    {"cmd": "seat", "seats": ["1024", "Chiba", "", ""]}
                                           -> {"ok": true}   (players for the next game)
    {"cmd": "seat", "seats": null}         -> {"ok": true}   (the config's seat names)
    anything that cannot be done           -> {"ok": false, "error": "why"}

The socket is created with mode 0660, so the daemon's group (the parlor's staff
accounts) may use it and nobody else; whoever can reach it is staff, as with the PIN.
Every action is journalled and published like the same action from a console.

Floods are bounded: at most :func:`connection_limit` connections are served at once (well
below the process's file limit, so the journal, the serial port and MQTT always have file
descriptors); one more gets a one-line refusal and is closed at once. A connection that
sends no request line within :data:`IDLE_TIMEOUT_S` is closed. When accept() itself runs
out of file descriptors, accepting pauses and backs off instead of spinning.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import os
import resource
import socket
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from firmware_bridge.ratelog import RateLimitedLog

COMMANDS = ("status", "abandon", "new-game", "undo", "seat")
#: Longest entry of a seating (a member number or a name; the table checks the name).
MAX_SEAT_ENTRY = 64
#: A request is one short JSON line; anything longer is not ours.
MAX_REQUEST = 4096
SOCKET_MODE = 0o660
CLIENT_TIMEOUT_S = 10.0
#: A connection that sends no request line this long is closed (``tablectl ctl`` sends
#: its line at once; an idle one only holds a file descriptor).
IDLE_TIMEOUT_S = 3.0
#: Admin connections served at once, at most (one staff member needs one).
MAX_CLIENTS = 16
#: Of the process's file descriptor limit, the share admin connections may take at most.
FD_SHARE = 16
#: Connections the kernel queues before accept(): a burst beyond waits in the client.
BACKLOG = 16
#: accept() out of file descriptors: first pause, doubled up to the last (s).
ACCEPT_BACKOFF_S = (0.1, 2.0)
#: accept() errors that mean "no resources now", not "this socket is broken".
_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class CtlError(Exception):
    """The admin socket cannot be used (nothing listening, no permission, a bad answer)."""


def parse_request(line: bytes) -> dict[str, Any]:
    """The request in ``line``, checked; raises ValueError saying what is wrong."""
    try:
        request = json.loads(line)
    except (ValueError, RecursionError):
        raise ValueError("a request is one JSON object on one line") from None
    if not isinstance(request, dict) or request.get("cmd") not in COMMANDS:
        raise ValueError(f"'cmd' must be one of {', '.join(COMMANDS)}")
    extra = set(request) - {"cmd", "rules", "seats"}
    if extra:
        raise ValueError(f"unknown field(s): {', '.join(sorted(extra))}")
    seats = request.get("seats")
    if request["cmd"] == "seat":
        if "seats" not in request or not (seats is None or _seat_entries(seats)):
            raise ValueError(
                "seat needs 'seats': one entry per seat (a member number, a name or '' for"
                f" a guest, at most {MAX_SEAT_ENTRY} characters), or null"
            )
    elif "seats" in request:
        raise ValueError(f"{request['cmd']} takes no 'seats'")
    rules = request.get("rules")
    if request["cmd"] == "new-game":
        if not isinstance(rules, str) or not rules:
            raise ValueError("new-game needs 'rules': a preset name or a rules file path")
    elif rules is not None:
        raise ValueError(f"{request['cmd']} takes no 'rules'")
    return request


def _seat_entries(value: Any) -> bool:
    """Whether ``value`` is a seating as staff typed it: 2-4 short strings."""
    return (
        isinstance(value, list)
        and 2 <= len(value) <= 4
        and all(isinstance(v, str) and len(v) <= MAX_SEAT_ENTRY for v in value)
    )


def connection_limit(max_clients: int = MAX_CLIENTS) -> int:
    """Admin connections to serve at once: ``max_clients``, or fewer under a low file
    descriptor limit (a sixteenth of it: 4 under ``ulimit -n 64``)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return max_clients
    return max(1, min(max_clients, soft // FD_SHARE))


class CtlServer:
    """Serves admin requests on a Unix socket for the daemon's lifetime."""

    def __init__(
        self,
        path: Path,
        handler: Handler,
        *,
        max_clients: int | None = None,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
    ) -> None:
        self.path = path
        self.handler = handler
        self.max_clients = connection_limit() if max_clients is None else max_clients
        self.idle_timeout_s = idle_timeout_s
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._clients: set[asyncio.Task[None]] = set()
        self._ratelog = RateLimitedLog(log, prefix=f"{path}: ")
        #: (st_dev, st_ino) of the socket file this server bound: the only file it removes.
        self._bound: tuple[int, int] | None = None

    async def start(self) -> None:
        """Listen at :attr:`path`. Only a stale socket (one nobody answers on, left by a
        killed daemon) is replaced; anything else at the path is refused, never removed."""
        self._clear_stale()
        # umask, not chmod after bind: no moment in which others could connect.
        old = os.umask(0o117)
        try:
            self._listener = _listen(self.path)
        except (OSError, ValueError) as exc:
            raise CtlError(f"{self.path}: cannot listen: {_reason(exc)}") from None
        finally:
            os.umask(old)
        bound = os.lstat(self.path)
        self._bound = (bound.st_dev, bound.st_ino)
        os.chmod(self.path, SOCKET_MODE)
        self._accepting = asyncio.create_task(self._accept(self._listener))

    def _clear_stale(self) -> None:
        """Remove a stale socket at :attr:`path`; refuse whatever else is there."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            raise CtlError(
                f"{self.path}: cannot use it for the admin socket: {_reason(exc)}"
            ) from None
        if not stat.S_ISSOCK(found.st_mode):
            raise CtlError(
                f"{self.path}: something else is there, not a socket; the admin socket"
                " ([staff] socket) needs a path of its own"
            )
        if _probe(self.path) != errno.ECONNREFUSED:
            # Answered, or cannot tell (no permission): it may be another daemon's.
            raise CtlError(f"{self.path}: another daemon answers on this socket")
        self.path.unlink()

    async def close(self) -> None:
        """Stop listening, end the connections and remove the socket file, if it is still
        the one bound here."""
        tasks = [t for t in (self._accepting, *self._clients) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._accepting = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            self._ratelog.flush()
        bound, self._bound = self._bound, None
        if bound is None:
            return  # never bound: whatever is at the path is not ours
        try:
            found = os.lstat(self.path)
        except OSError:
            return
        if (found.st_dev, found.st_ino) == bound:
            self.path.unlink()

    @property
    def clients(self) -> int:
        """Connections being served now."""
        return len(self._clients)

    async def _accept(self, listener: socket.socket) -> None:
        """Accept connections for as long as the daemon runs: serve up to
        :attr:`max_clients`, refuse the rest at once, and back off while the process has
        no file descriptor to give (asyncio's own server logs a traceback per try)."""
        loop = asyncio.get_running_loop()
        pause, longest = ACCEPT_BACKOFF_S
        while True:
            try:
                conn, _ = await loop.sock_accept(listener)
            except OSError as exc:
                if exc.errno not in _RESOURCE_ERRNOS:
                    raise
                self._ratelog.error(
                    "accepts out of file descriptors",
                    "%scannot accept a connection: %s; retrying in %.1f s",
                    f"{self.path}: ",
                    exc.strerror or exc,
                    pause,
                )
                await asyncio.sleep(pause)
                pause = min(pause * 2, longest)
                continue
            pause = ACCEPT_BACKOFF_S[0]
            if len(self._clients) >= self.max_clients:
                self._refuse(conn)
                continue
            task = asyncio.create_task(self._connection(conn))
            self._clients.add(task)
            task.add_done_callback(self._clients.discard)

    def _refuse(self, conn: socket.socket) -> None:
        """One line saying why, without waiting for the client, and the socket closed."""
        busy = {
            "ok": False,
            "busy": True,
            "error": f"busy: {self.max_clients} admin connections open; try again",
        }
        with conn, contextlib.suppress(OSError):
            conn.setblocking(False)
            conn.send(json.dumps(busy, separators=(",", ":")).encode() + b"\n")
        self._ratelog.warning(
            "connections refused",
            "%sconnection refused: %d admin connections open already",
            f"{self.path}: ",
            self.max_clients,
        )

    async def _connection(self, conn: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_unix_connection(sock=conn)
        except OSError:
            conn.close()
            return
        await self._serve(reader, writer)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await asyncio.wait_for(reader.readline(), self.idle_timeout_s)
                if len(line) > MAX_REQUEST:
                    raise ValueError(f"a request is at most {MAX_REQUEST} bytes")
                reply = await self.handler(parse_request(line))
            except ValueError as exc:
                reply = {"ok": False, "error": str(exc)}
            except (TimeoutError, asyncio.LimitOverrunError):
                reply = {"ok": False, "error": "no request line"}
            writer.write(json.dumps(reply, separators=(",", ":")).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the client went away; nothing was half done for it
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


def _listen(path: Path) -> socket.socket:
    """A non-blocking Unix stream socket bound at ``path`` and listening."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _probe(path: Path) -> int:
    """Connect to the socket at ``path``: 0 when something answers, else the errno
    (ECONNREFUSED: a stale socket nobody listens on)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        try:
            sock.connect(str(path))
        except OSError as exc:
            return exc.errno or -1
    return 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def request(path: Path, payload: dict[str, Any], timeout: float = CLIENT_TIMEOUT_S) -> Any:
    """Send one request to the daemon at ``path`` and return its reply (a dict)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            # A daemon at its connection limit writes its refusal and closes at once,
            # maybe before the request arrived: the refusal is still there to read (a
            # daemon that died leaves nothing, and that is said below).
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(json.dumps(payload).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except FileNotFoundError:
            raise CtlError(f"{path}: no daemon socket there (is tablectl run running?)") from None
        except PermissionError:
            raise CtlError(f"{path}: permission denied (staff are in the daemon's group)") from None
        except OSError as exc:
            raise CtlError(f"{path}: {exc.strerror or exc}") from None
    try:
        reply = json.loads(data)
    except ValueError:
        raise CtlError(f"{path}: the daemon gave no answer") from None
    if not isinstance(reply, dict):
        raise CtlError(f"{path}: the daemon gave no answer")
    if reply.get("busy") is True:
        raise CtlError(f"{path}: {reply.get('error', 'busy')}")
    return reply
