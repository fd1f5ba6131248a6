"""The journal's file on disk: what may be opened as a journal, its write-ahead log, its lock.

Checked before SQLite opens anything (:func:`check_kind`, :func:`check_writable`): a
journal is a regular file in a folder the daemon may write, never a FIFO, a device or an
empty file. :func:`preallocate_wal` writes the daemon's write-ahead log out to its working
size; :class:`JournalLock` keeps a second daemon off a journal in use. The errors every
journal module raises are defined here.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import stat
from pathlib import Path

from tablectl.rules.loader import regular_file_problem

__all__ = [
    "COMPANIONS",
    "WAL_FRAME_HEADER",
    "WAL_HEADER",
    "WAL_SLACK_FRAMES",
    "JournalError",
    "JournalLock",
    "JournalNotReady",
    "check_kind",
    "check_writable",
    "preallocate_wal",
]


class JournalError(Exception):
    """The journal file cannot be used: unreadable, corrupt, too new, or a call that the
    journal's contents do not allow (an unknown game, appending to a finished game).

    The message always names the file.
    """


class JournalNotReady(JournalError):
    """A file opened to be read holds no journal yet: empty, or a daemon starting on it has
    not committed the schema yet. Try again in a moment (a poller keeps polling)."""


#: Files SQLite keeps beside the journal: they must be plain files too, or SQLite would
#: write its log into whatever they point at.
COMPANIONS = ("-wal", "-shm")


def check_kind(path: Path, *, may_be_absent: bool, readonly: bool = False) -> None:
    """The journal is a regular file (or, with ``may_be_absent``, not there yet), never a
    directory, a FIFO, a device or a symlink to one, and never an empty file: an empty
    file is someone else's mistake, not a journal to start afresh in (only an absent
    path makes a new journal). Checked before SQLite opens anything, as SQLite would
    hang on a FIFO and make a ``-journal`` file beside a device."""
    problem = regular_file_problem(path, absent_ok=may_be_absent)
    if problem == "no file there":
        raise JournalError(f"{path}: no journal file there")
    if problem is not None:
        raise JournalError(f"{path}: {problem}, not a journal")
    for suffix in COMPANIONS:
        problem = regular_file_problem(Path(f"{path}{suffix}"), absent_ok=True)
        if problem is not None:
            raise JournalError(f"{path}{suffix}: {problem}; the journal's {suffix} must be a file")
    if path.exists() and path.stat().st_size == 0 and not _has_log(path):
        if readonly:
            # A reader cannot tell a stray empty file from the instant after a daemon's
            # sqlite3.connect() made the file: a poller keeps polling (JournalNotReady).
            raise JournalNotReady(
                f"{path}: an empty file (0 bytes), no journal in it yet: a daemon starting"
                " on it writes one within a moment; otherwise it is not a journal"
            )
        raise JournalError(
            f"{path}: an empty file (0 bytes), not a journal; remove it to start a new"
            " journal there, or name the journal file"
        )


def _has_log(path: Path) -> bool:
    """Whether a write-ahead log with something in it lies beside ``path`` (a journal
    whose pages are all still in its log has a main file of 0 bytes)."""
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


def check_writable(path: Path) -> None:
    """The daemon's journal lives in a folder that exists and that it may write (SQLite
    puts the -wal and -shm files beside the journal)."""
    folder = path.parent
    if not folder.is_dir():
        raise JournalError(
            f"{path}: the folder {folder} does not exist; create it, owned by the daemon's"
            " user (the systemd unit's StateDirectory= does)"
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise JournalError(
            f"{path}: the folder {folder} is not writable by this user; fix its owner or mode"
        )
    if path.exists() and not os.access(path, os.R_OK | os.W_OK):
        raise JournalError(f"{path}: not readable and writable by this user; fix its owner or mode")


#: SQLite's write-ahead log: a 32-byte header, then frames of a 24-byte header and a page.
WAL_HEADER = 32
WAL_FRAME_HEADER = 24
#: Frames past the automatic checkpoint's size in the preallocated log: the commit that
#: crosses that size (a whole group's pages) still lands in the preallocated part.
WAL_SLACK_FRAMES = 64


def preallocate_wal(path: Path, conn: sqlite3.Connection) -> None:
    """Extend the journal's write-ahead log with zeros to the size it reaches before
    SQLite's automatic checkpoint wraps it (``wal_autocheckpoint`` pages, plus slack).

    Why: a commit appended to a growing file makes its fdatasync write the file's new size
    too (a file-system journal commit of its own); once the log has wrapped, commits
    overwrite blocks that exist and the sync carries their data alone (ext4 here: 135 vs
    88 us at the median, docs/performance.md). SQLite deletes the log at a clean close,
    so without this every start grew it again through its first ~500 commits.

    Safe because only bytes after the log's end are written, once, before this
    connection's first write: SQLite never takes zeros for a frame (a frame must carry the
    header's random salts and a running checksum) and ignores them as it ignores the stale
    frames it leaves behind itself after a wrap; a crash while padding leaves a shorter
    tail of zeros. The log is not locked by SQLite (its locks are on the ``-shm`` file),
    so opening and closing it here drops no lock of this process.
    """
    wal = Path(f"{path}-wal")
    try:
        page = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = max(int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]), 0)
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read the journal's settings: {exc}") from exc
    want = WAL_HEADER + (pages + WAL_SLACK_FRAMES) * (WAL_FRAME_HEADER + page)
    try:
        # Not created here: SQLite made it when the connection went into WAL mode.
        fd = os.open(wal, os.O_WRONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise JournalError(f"{wal}: cannot open the write-ahead log: {exc.strerror}") from exc
    try:
        size = os.fstat(fd).st_size
        if size >= want:
            return
        zeros = bytes(min(want - size, 1 << 20))
        while size < want:
            size += os.pwrite(fd, zeros[: want - size], size)
        os.fsync(fd)
    except OSError as exc:
        raise JournalError(f"{wal}: cannot extend the write-ahead log: {exc.strerror}") from exc
    finally:
        os.close(fd)


class JournalLock:
    """An exclusive lock on ``<journal>.lock``, held for a daemon's life: two daemons on
    one journal would interleave their games and each resume the other's."""

    def __init__(self, path: Path) -> None:
        self.path = Path(f"{path}.lock")
        self._fd: int | None = None

    def acquire(self) -> JournalLock:
        """Take the lock, or raise :class:`JournalError` naming who holds it (or why the
        journal's folder cannot be used at all)."""
        journal = Path(str(self.path)[: -len(".lock")])
        check_kind(journal, may_be_absent=True)  # no lock beside a device or a FIFO
        check_writable(journal)
        # O_NOFOLLOW and O_NONBLOCK: the lock file is truncated below, so it must be our
        # own plain file, not a link to someone else's nor a FIFO that would hang.
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o640)
        except OSError as exc:
            why = "a symlink" if exc.errno == errno.ELOOP else exc.strerror
            raise JournalError(f"{self.path}: cannot use it as the lock file: {why}") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise JournalError(f"{self.path}: not a regular file; the journal's lock must be one")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise JournalError(
                    f"{journal}: another tablectl (pid {holder}) is using this journal;"
                    " stop it first: two daemons must not share a journal"
                ) from None
            raise JournalError(f"{self.path}: cannot lock: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Let go of the lock (also done by the kernel when the process dies)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
