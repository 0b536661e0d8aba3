"""Writers to one SQLite database take turns through a lock file, not SQLite's busy handler.

SQLite allows one writing transaction at a time; a writer that finds the database locked
sleeps in SQLite's busy handler (1, 2, 5, 10 … then 100 ms at a time) and tries again. A
sleeping writer does not notice the lock coming free, so under contention the lock sits idle
while every waiter sleeps: at 3,000 probes a second, rounds holding the lock for 30 ms waited
up to 2.9 s for it, their waits quantized on the handler's sleeps (BENCHMARKS.md).

Here a writer first takes an advisory ``flock`` on ``<database>-writer`` beside the file, then
``BEGIN IMMEDIATE``, and lets go after COMMIT or ROLLBACK. Threads of one process queue on a
plain lock (woken the moment it is released), so one thread per process at most tries the file
lock, every half millisecond. SQLite's own lock still guards every write: a writer without this
lock (an older slamon, the sqlite3 shell) only waits as before; this one orders the writers.
The wait is bounded by the connection's ``timeout`` (the engine sets 30 s), as SQLite's own is:
a stuck holder ends in the same "database is locked" error, never in a hang.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

try:
    import fcntl
except ImportError:  # not on Windows: writers there wait in SQLite's busy handler as before
    fcntl = None  # type: ignore[assignment]

LOCK_FILES = fcntl is not None  # where flock exists

POLL_S = 0.0005  # between tries for the file lock, while another process holds it
_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


def _process_lock(path: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(path, threading.Lock())


class WriterLockedConnection(sqlite3.Connection):
    """A pysqlite connection whose write transactions take the database's writer lock first
    (``sqlite3.connect(..., factory=WriterLockedConnection)``)."""

    def __init__(self, database: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(database, *args, **kwargs)
        self._wait_s = float(kwargs.get("timeout", args[0] if args else 5.0))  # sqlite3's default
        path = os.fspath(database) if not kwargs.get("uri") else ""
        self._lock_path = f"{os.path.abspath(path)}-writer" if path not in ("", ":memory:") else ""
        self._lock_fd: int | None = None
        self._holds_process_lock = False

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self.let_go_of_writer_lock()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self.let_go_of_writer_lock()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.let_go_of_writer_lock()
            if self._lock_fd is not None:
                os.close(self._lock_fd)
                self._lock_fd = None

    def take_writer_lock(self) -> None:
        """Wait (bounded) for the writers' lock; held until COMMIT, ROLLBACK or close.
        Raises ``sqlite3.OperationalError`` ("database is locked") past the timeout."""
        if not self._lock_path:
            return  # an in-memory database has one process
        deadline = time.monotonic() + self._wait_s
        if not _process_lock(self._lock_path).acquire(timeout=self._wait_s):
            raise self._locked()
        self._holds_process_lock = True
        if self._lock_fd is None:
            # read-only is enough for flock: any process that may write the database may lock
            self._lock_fd = os.open(self._lock_path, os.O_RDONLY | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    self.let_go_of_writer_lock()
                    raise self._locked() from None
                time.sleep(POLL_S)

    def _locked(self) -> sqlite3.OperationalError:
        return sqlite3.OperationalError(
            f"database is locked: another writer held it for {self._wait_s:g} s"
        )

    def let_go_of_writer_lock(self) -> None:
        """After COMMIT, ROLLBACK or close, or for a transaction that did not begin."""
        if self._lock_fd is not None:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        if self._holds_process_lock:
            self._holds_process_lock = False
            _process_lock(self._lock_path).release()
