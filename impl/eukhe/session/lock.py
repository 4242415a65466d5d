"""The one-writer lock of a session: an exclusive ``flock`` on ``<session>/writer.lock``.

The holder writes who it is into the lock file, so a second writer's ``SessionLocked`` names
it: the pid, the host, the program and its command words (``eukhe set``, named by the CLI
in ``HOLDER``; never an argument's value), and the start time. The record is written in
one ``pwrite`` of a fixed width at offset 0, after the lock is held and before anything else,
so a reader never finds the file empty or half-written once a holder has started (only a lock
file that no holder ever wrote is empty).

A second writer waits for the lock up to a timeout, polling with a short backoff, then fails
with ``SessionLocked`` naming the holder. The timeout is the ``timeout`` argument, else
``HOLDER.timeout``: the command line sets it (the ``session.lockTimeoutMs`` setting, default
5000, or ``EUKHE_LOCK_TIMEOUT`` seconds over it; ``eukhe.cli.lock_timeout``); a library caller
that sets nothing fails at once. ``HOLDER.timeout`` may be a function: it is called only when
the lock is taken by another writer, so an uncontended lock never reads the settings.
``flock`` locks belong to the open file, so a second open in the same process conflicts too,
and the kernel drops the lock when the holder dies (a crash leaves no stale lock).
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eukhe.session.errors import SessionLocked

LOCK_FILE = "writer.lock"
RECORD_WIDTH = 256  # bytes of the holder record, padded with spaces, newline last


@dataclass
class Holder:
    """How this process takes locks: the name its records give (the CLI sets its command words,
    ``eukhe set``; empty: the script's name) and how long ``acquire`` waits by default (0: a
    library caller fails at once; the CLI sets its wait, ``eukhe.cli.lock_timeout``, as a
    function called when the lock is contended)."""

    program: str = ""
    timeout: float | Callable[[], float] = 0.0

    def wait(self) -> float:
        return self.timeout() if callable(self.timeout) else self.timeout


HOLDER = Holder()


class WriterLock:
    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    @classmethod
    def acquire(cls, session_dir: Path, timeout: float | None = None) -> WriterLock:
        """The lock of ``session_dir``, waiting up to ``timeout`` seconds (None: ``HOLDER.timeout``)."""
        path = session_dir / LOCK_FILE
        record = holder_record()  # built first: nothing can fail between the lock and the write
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            wait = -1.0  # not read until the lock is found taken
            deadline = pause = 0.0
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if wait < 0:
                        wait = max(0.0, HOLDER.wait() if timeout is None else timeout)
                        deadline, pause = time.monotonic() + wait, 0.005
                    left = deadline - time.monotonic()
                    if left <= 0:
                        holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
                        raise SessionLocked(
                            session_dir,
                            (holder or "another writer (it has not written its name yet)") + f"; waited {wait:g} s",
                        ) from None
                    time.sleep(min(pause, left))
                    pause = min(pause * 2, 0.1)
            os.pwrite(fd, record, 0)
            os.ftruncate(fd, len(record))  # drops the tail of a longer record an older eukhe wrote
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, path)

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


def holder_text() -> str:
    """Who holds the lock, for a second writer's error: never an argument's value."""
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    program = HOLDER.program or os.path.basename(sys.argv[0] if sys.argv else "") or sys.executable
    return f"pid {os.getpid()} on {socket.gethostname()} ({program}) since {started}"


def holder_record() -> bytes:
    """``holder_text`` as one fixed-width line of UTF-8 (undecodable bytes escaped; a text too
    long is cut at a character's boundary, never inside one)."""
    data = holder_text().encode("utf-8", "backslashreplace")[: RECORD_WIDTH - 1]
    data = data.decode("utf-8", "ignore").encode("utf-8")  # drops the bytes of a character cut in two
    return data.ljust(RECORD_WIDTH - 1, b" ") + b"\n"
