"""The append-only log of one conversation: read it into a ``Tree``, append records with fsync.

Reading: every line is decoded first; a ``torn`` marker skips the lines it names; the lines
after the last good record are the torn tail of a crash (a write that never completed) and
are skipped. A crash cuts one line: the tail is that line, then at most the cut writes of the
markers terminating it (starts of ``{"op":"torn","lines":[a,b]}``); a tail of more (garbage, a
log replaced) is no crash's and is refused like any other bad line. Any other line that is not
a good record is a ``CorruptRecord`` naming the file and the record, raised before anything is
written.

Appending: one ``os.write`` of one whole line per record, then ``fsync``. A writer that finds
a torn tail first terminates it (a newline if the last line has none) and appends a ``torn``
marker naming its lines, in one write, fsynced: so the next record starts on a line of its own
and no byte of the log is ever rewritten.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from eukhe.session.errors import CorruptRecord, SessionError
from eukhe.session.private import open_append, write_all
from eukhe.session.records import Record, RecordError, Torn, decode, encode
from eukhe.session.tree import Tree


@dataclass(frozen=True)
class Tail:
    """What a read found at the end of the log: the lines of a torn tail (none when
    ``first`` > ``last``) and whether the last byte is a newline."""

    first: int
    last: int
    terminated: bool

    @property
    def torn(self) -> bool:
        return self.first <= self.last


def load(path: Path, name: str) -> tuple[Tree, Tail]:
    """Read the log at ``path`` into a new tree. A missing file reads as an empty log."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    lines = _split(data)
    decoded: list[Record | RecordError] = []
    for text, complete in lines:
        if not complete:
            decoded.append(RecordError("the line has no newline: a torn write"))
            continue
        try:
            decoded.append(decode(text))
        except RecordError as error:
            decoded.append(error)
    skipped: set[int] = set()  # 0-based line indexes a torn marker covers
    for index, item in enumerate(decoded):
        if isinstance(item, Torn) and item.last == index:  # the marker follows the lines it names
            skipped.update(range(item.first - 1, item.last))
    last_good = -1
    for index, item in enumerate(decoded):
        if not isinstance(item, RecordError) and index not in skipped:
            last_good = index
    for index in range(last_good + 2, len(lines)):  # after the one line a crash cut: only cut markers
        if not _is_cut_marker(lines[index][0]):
            raise CorruptRecord(
                path,
                last_good + 2,
                f"{decoded[last_good + 1]}; and {len(lines) - last_good - 2} more lines after it (line {index + 1} the first "
                "that is no cut marker): no crash leaves more than its one cut line, the log was damaged or replaced",
            )
    tree = Tree(name)
    for index in range(last_good + 1):
        item = decoded[index]
        if index in skipped:
            continue
        if isinstance(item, RecordError):
            raise CorruptRecord(path, index + 1, str(item))
        if isinstance(item, Torn) and item.last != index:
            raise CorruptRecord(path, index + 1, f"a torn marker naming lines {item.first}-{item.last}, not the lines before it")
        try:
            tree.apply(item)
        except RecordError as error:
            raise CorruptRecord(path, index + 1, str(error)) from None
    return tree, Tail(last_good + 2, len(lines), not data or data.endswith(b"\n"))


_MARKER_HEAD = b'{"op":"torn","lines":['
_MARKER_REST = re.compile(rb"[0-9]+(,([0-9]+(\]\}?)?)?)?")


def _is_cut_marker(text: bytes) -> bool:
    """Whether a line is what a cut write of a torn marker leaves: a start of it (not empty)."""
    if len(text) <= len(_MARKER_HEAD):
        return bool(text) and _MARKER_HEAD.startswith(text)
    return text.startswith(_MARKER_HEAD) and _MARKER_REST.fullmatch(text, len(_MARKER_HEAD)) is not None


def _split(data: bytes) -> list[tuple[bytes, bool]]:
    """The lines of ``data`` without their newlines, each with whether it had one."""
    lines: list[tuple[bytes, bool]] = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        if end < 0:
            lines.append((data[start:], False))
            break
        lines.append((data[start:end], True))
        start = end + 1
    return lines


class Appender:
    """The open end of one log, for the one writer of its session: a new log is made 0600, its
    directory fsynced (``eukhe.session.private``)."""

    def __init__(self, path: Path, tail: Tail) -> None:
        self.path = path
        self.failed: BaseException | None = None
        self._fd = open_append(path)
        if tail.torn:
            self._write((b"" if tail.terminated else b"\n") + encode(Torn(tail.first, tail.last)))

    def append(self, record: Record) -> None:
        self._write(encode(record))

    def _write(self, data: bytes) -> None:
        if self.failed is not None:
            raise SessionError(f"an earlier write to {self.path} failed ({self.failed}); reopen the session")
        try:
            write_all(self._fd, data)
            os.fsync(self._fd)
        except OSError as error:
            self.failed = error
            raise

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

