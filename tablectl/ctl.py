"""``tablectl ctl``: the local admin interface of a running daemon, over a Unix socket.

One request per connection, one JSON line each way::

    {"cmd": "status"}                      -> {"ok": true, "status": {...}}
    {"cmd": "abandon"}                     -> {"ok": true}   (a new game, same rules)
    {"cmd": "new-game", "rules": "kenko"}  -> {"ok": true}
    {"cmd": "undo"}                        -> {"ok": true}   (the last hand is re-entered)
    anything that cannot be done           -> {"ok": false, "error": "why"}

The socket is created with mode 0660, so the daemon's group (the parlor's staff
accounts) may use it and nobody else; whoever can reach it is staff, as with the PIN.
Every action is journalled and published like the same action from a console.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import socket
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

COMMANDS = ("status", "abandon", "new-game", "undo")
#: A request is one short JSON line; anything longer is not ours.
MAX_REQUEST = 4096
SOCKET_MODE = 0o660
CLIENT_TIMEOUT_S = 10.0

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
    extra = set(request) - {"cmd", "rules"}
    if extra:
        raise ValueError(f"unknown field(s): {', '.join(sorted(extra))}")
    rules = request.get("rules")
    if request["cmd"] == "new-game":
        if not isinstance(rules, str) or not rules:
            raise ValueError("new-game needs 'rules': a preset name or a rules file path")
    elif rules is not None:
        raise ValueError(f"{request['cmd']} takes no 'rules'")
    return request


class CtlServer:
    """Serves admin requests on a Unix socket for the daemon's lifetime."""

    def __init__(self, path: Path, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self._server: asyncio.AbstractServer | None = None
        #: (st_dev, st_ino) of the socket file this server bound: the only file it removes.
        self._bound: tuple[int, int] | None = None

    async def start(self) -> None:
        """Listen at :attr:`path`. Only a stale socket (one nobody answers on, left by a
        killed daemon) is replaced; anything else at the path is refused, never removed."""
        self._clear_stale()
        # umask, not chmod after bind: no moment in which others could connect.
        old = os.umask(0o117)
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path))
        except (OSError, ValueError) as exc:
            raise CtlError(f"{self.path}: cannot listen: {_reason(exc)}") from None
        finally:
            os.umask(old)
        bound = os.lstat(self.path)
        self._bound = (bound.st_dev, bound.st_ino)
        os.chmod(self.path, SOCKET_MODE)

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
        """Stop listening and remove the socket file, if it is still the one bound here."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        bound, self._bound = self._bound, None
        if bound is None:
            return  # never bound: whatever is at the path is not ours
        try:
            found = os.lstat(self.path)
        except OSError:
            return
        if (found.st_dev, found.st_ino) == bound:
            self.path.unlink()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                line = await asyncio.wait_for(reader.readline(), CLIENT_TIMEOUT_S)
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
    return reply
