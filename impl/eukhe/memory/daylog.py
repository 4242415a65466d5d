"""Day files: one append-only log split into ``YYYY-MM-DD.jsonl`` files (memory.md rules 1, 2, 6).

Reading (``eukhe.memory.index``): the files in name order, every line checked. The lines of the
newest file after its last good line (a last line without newline, or lines that are not good
records: a write cut by a crash, also one cut while terminating an earlier tail) are its torn
tail: skipped (``Tail``). A ``{"torn": N}`` marker skips the lines from ``N`` up to itself (a tail
an earlier writer terminated). Any other bad line is a ``CorruptLine`` naming the file and the
line.

A torn tail is what a crash leaves: the one line whose write it cut, and after it only the cut
writes of markers that were terminating it (prefixes of ``{"torn": N}``; each writer that found
the tail appends one marker, and a crash can cut it too). Anything more after the last good line
(garbage, a file replaced, lines of records) is no crash's: a ``CorruptLine`` naming the tail's
first line.

Appending: one ``os.write`` of one whole line, then ``fsync`` (rule 6: flush every write, never
edit or delete). A writer that finds a torn tail terminates it first, in one write: a newline if
the tail has none, then the marker naming it; so its own lines start on a line of their own and
no byte of the log is rewritten. A new file (0600) or directory (0700) is made with the directory
holding its entry fsynced (``eukhe.session.private``).

The day file of a line is the local date of the clock, unless that is earlier than the newest
day file (the clock's date stepped back: a change of time zone, a clock set back): then the line
goes to the newest day file, so the files' order stays the ids' order. The message keeps the
clock's date in its ``date``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eukhe.memory.records import Record, StoreError, Torn, encode
from eukhe.session.private import fsync_dir, make_dirs, open_append, write_all

__all__ = ["Appender", "Tail", "day_files", "fsync_dir", "is_cut_marker", "write_line"]

_MARKER_HEAD = b'{"torn":'
_MARKER_REST = re.compile(rb"[0-9]+\}?")


def is_cut_marker(line: bytes) -> bool:
    """Whether ``line`` is what a cut write of a torn marker leaves: a start of ``{"torn":N}``
    (not empty)."""
    if len(line) <= len(_MARKER_HEAD):
        return bool(line) and _MARKER_HEAD.startswith(line)
    return _MARKER_REST.fullmatch(line, len(_MARKER_HEAD)) is not None and line.startswith(_MARKER_HEAD)


@dataclass(frozen=True)
class Tail:
    """The newest file's end: the first line of its torn tail (0: none), and whether the file
    ends with a newline."""

    path: Path | None
    torn: int
    terminated: bool


def day_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.is_file() and _is_day(p.name))


def _is_day(name: str) -> bool:
    stem, dot, ext = name.partition(".")
    parts = stem.split("-")
    return ext == "jsonl" and bool(dot) and len(parts) == 3 and all(p.isdigit() for p in parts) and [len(p) for p in parts] == [4, 2, 2]


class Appender:
    """The open end of one day-file log, for the one owner of its chat."""

    def __init__(self, directory: Path, tail: Tail, day: Callable[[], str]) -> None:
        self.directory = directory
        self.day = day
        self._tail = tail
        self._path: Path | None = None
        self._fd = -1
        self._newest = "" if tail.path is None else tail.path.name  # the newest day file's name
        self.failed: BaseException | None = None

    def _terminate(self) -> None:
        tail = self._tail
        if tail.path is None or tail.torn == 0:
            return
        fd = os.open(tail.path, os.O_WRONLY | os.O_APPEND)
        try:
            write_line(fd, (b"" if tail.terminated else b"\n") + encode(Torn(tail.torn)))
        finally:
            os.close(fd)
        self._tail = Tail(tail.path, 0, True)

    def append(self, record: Record) -> None:
        if self.failed is not None:
            raise StoreError(f"an earlier write to {self._path} failed ({self.failed}); reopen the chat")
        try:
            self._terminate()
            name = max(f"{self.day()}.jsonl", self._newest)  # never before the newest day file
            path = self.directory / name
            if path != self._path:
                self.close()
                make_dirs(self.directory)
                self._fd = open_append(path)
                self._path = path
                self._newest = name
            write_line(self._fd, encode(record))
        except OSError as error:
            self.failed = error
            raise StoreError(f"cannot write {self._path or self.directory}: {error}") from error

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self._path = None


def write_line(fd: int, data: bytes) -> None:
    """One write of the whole line (repeated only if the kernel took part of it), then fsync."""
    write_all(fd, data)
    os.fsync(fd)
