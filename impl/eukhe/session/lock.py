"""The one-writer lock of a session: an exclusive ``flock`` on ``<session>/writer.lock``.

The holder writes who it is into the lock file, so a second writer's ``SessionLocked`` names
it. ``flock`` locks belong to the open file, so a second open in the same process conflicts
too, and the kernel drops the lock when the holder dies (a crash leaves no stale lock).
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys
import time
from pathlib import Path

from eukhe.session.errors import SessionLocked

LOCK_FILE = "writer.lock"


class WriterLock:
    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self.path = path

    @classmethod
    def acquire(cls, session_dir: Path) -> WriterLock:
        path = session_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise SessionLocked(session_dir, holder or "another writer (it has not written its name yet)") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder_text().encode("utf-8"), 0)
        return cls(fd, path)

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


def holder_text() -> str:
    command = " ".join(sys.argv)[:200] or sys.executable
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return f"pid {os.getpid()} on {socket.gethostname()} ({command}) since {started}\n"
