"""The day files read for a start without holding their texts (memory.md rules 1, 2, 25; issue 11
item 9: a chat of 10^6 messages starts within seconds and a bounded memory).

A read scans each file once, in chunks, and keeps per line only where it starts (the file's
number and the byte offset, packed in one integer) and what the planner needs: a message's id, a
node line's level, index and size, a merge line whole. Texts stay on disk: ``MessageLog`` and
``TreeLog`` are sequences of records that decode a line when it is asked for (``pread``), and the
planner reads a line's text the same way (``TreeLog.text``, ``MessageLog.text``).

Each line is checked as it is scanned. A line written as ``records.encode`` writes it (the fields
in that order, whole numbers without leading zeros, a text whose escapes are of one byte and whose
decoded byte count is its ``size``; a message's date of 25 characters) is taken from its frame
(found for a whole piece at once, as arrays); any other line is decoded whole by
``records.decode`` (keys, \\u escapes, old kinds, torn markers, bad lines; merge lines are
matched whole and decoded). The text of a
framed line is not decoded at the start: bytes that are not UTF-8 in it (a line no writer of this
log makes) are reported when the text is read. The torn tail, the markers and the errors are
those ``eukhe.memory.daylog`` describes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TypeVar, cast, overload

from eukhe.memory.daylog import Tail, day_files, is_cut_marker
import numpy as np

from eukhe.memory.records import CorruptLine, IdGap, Kind, MergeLine, Message, NodeLine, Record, StoreError, Torn, decode
from eukhe.memory.view import Node

CHUNK = 1 << 22  # bytes read at a time (a piece and its arrays stay in the cache)
_SHIFT = 40  # a line's place: file number << 40 | byte offset
_MASK = (1 << _SHIFT) - 1
_MERGE = re.compile(rb'\{"merge":\[(?:\[(?:0|[1-9][0-9]*),(?:0|[1-9][0-9]*)\](?:,\[(?:0|[1-9][0-9]*),(?:0|[1-9][0-9]*)\])*)?\],"open":(?:true|false),"t":(?:0|[1-9][0-9]*)\}')


class _Files:
    """The day files of one directory, opened for reading lines by their place."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self._fds: dict[int, int] = {}

    def line(self, place: int) -> tuple[Path, bytes]:
        number, offset = place >> _SHIFT, place & _MASK
        fd = self._fds.get(number)
        if fd is None:
            fd = self._fds[number] = os.open(self.files[number], os.O_RDONLY)
        want = 4096
        while True:
            data = os.pread(fd, want, offset)
            end = data.find(b"\n")
            if end >= 0:
                return self.files[number], data[:end]
            if len(data) < want:
                return self.files[number], data
            want *= 4

    def where(self, place: int) -> tuple[Path, int]:
        """The file and the line number (from 1) of the line at ``place`` (the newlines before it
        are counted: an error's path, not a start's)."""
        number, offset = place >> _SHIFT, place & _MASK
        fd = self._fds.get(number)
        if fd is None:
            fd = self._fds[number] = os.open(self.files[number], os.O_RDONLY)
        lines, at = 1, 0
        while at < offset:
            data = os.pread(fd, min(CHUNK, offset - at), at)
            if not data:
                break
            lines += data.count(b"\n")
            at += len(data)
        return self.files[number], lines

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


class _Redo(Exception):
    """A torn marker names a line the fast scan took as a record: the log is read again with the
    markers found first."""


class Stale(Exception):
    """An index that does not fit the day files it describes: they are scanned whole instead."""


@dataclass(frozen=True)
class Covered:
    """The prefix of one day file an index covers: the file's name, its first ``bytes`` bytes
    (whole lines, up to the file's last good line) and its ``lines`` lines."""

    name: str
    bytes: int
    lines: int


@dataclass
class _File:
    """What the scan of one file found besides its framed lines."""

    lines: int = 0
    terminated: bool = True
    bad: dict[int, str] = field(default_factory=dict)
    markers: dict[int, Torn] = field(default_factory=dict)
    last_record: int = 0
    skip: set[int] = field(default_factory=set)  # the lines the file's markers skip (found first)
    record_end: int = 0  # the byte after the newline of line ``last_record``
    marker_ends: dict[int, int] = field(default_factory=dict)  # the byte after each whole marker's newline
    covered: Covered | None = None  # the prefix an index may cover (``_settle``)
    taken: list[np.ndarray] = field(default_factory=list)  # the numbers of the lines taken as records
    cut: set[int] = field(default_factory=set)  # the bad lines that are a cut write of a torn marker


def _settle(path: Path, found: _File, newest: bool) -> Tail | None:
    """The torn tail of one scanned file (None: none), or the CorruptLine of a bad line before it.
    Also the prefix of the file an index may cover (``found.covered``): its lines up to the last
    good one, when that line has its newline."""
    skipped: set[int] = set()
    marked = 0
    for number in sorted(found.markers):
        torn = found.markers[number]
        if not 0 < torn.line < number:
            raise CorruptLine(path, number, f"a torn marker naming line {torn.line}, not a line before it")
        skipped.update(range(torn.line, number + 1))
        marked = number
    last_good = max(found.last_record, marked)
    first_torn = last_good + 1
    if not found.terminated and last_good == found.lines:
        first_torn = found.markers[found.lines].line  # the marker's own write was cut before its newline
    for number in sorted(found.bad):
        if number <= last_good and number not in skipped:
            raise CorruptLine(path, number, found.bad[number])
    if last_good == 0:
        found.covered = Covered(path.name, 0, 0)
    elif last_good == found.last_record and found.record_end:
        found.covered = Covered(path.name, found.record_end, last_good)
    elif last_good in found.marker_ends:
        found.covered = Covered(path.name, found.marker_ends[last_good], last_good)
    if first_torn <= found.lines:
        if not newest:
            raise CorruptLine(path, first_torn, "a torn tail, and a newer day file follows")
        more = [n for n in range(first_torn + 1, found.lines + 1) if n not in found.cut and n not in found.markers]
        if more:  # a crash cuts one line, then at most the markers terminating it
            why = found.bad.get(first_torn, "not a good record")
            raise CorruptLine(
                path,
                first_torn,
                f"{why}; and {found.lines - first_torn} more lines after it (line {more[0]} the first that is no cut marker): "
                "no crash leaves more than its one cut line, the file was damaged or replaced",
            )
        return Tail(path, first_torn, found.terminated)
    return None




class _Words:
    """The 8 bytes from any position of a piece of ``n`` bytes followed by 8 zero bytes, as
    little-endian words: two aligned words shifted together (the buffer starts aligned and has
    room for the word after the padding)."""

    def __init__(self, buffer: np.ndarray, n: int) -> None:
        self.n = n
        self.words = buffer[: ((n >> 3) + 2) * 8].view("<u8")

    def __len__(self) -> int:
        return self.n + 1  # the positions a word starts at: the piece's bytes and its padding

    def __getitem__(self, pos: np.ndarray) -> np.ndarray:
        p = np.clip(pos, 0, self.n)
        at, shift = p >> 3, ((p & 7) << 3).astype(np.uint64)
        low, high = self.words[at], self.words[at + 1]
        word: np.ndarray = (low >> shift) | ((high << np.uint64(1)) << (np.uint64(63) - shift))
        return word


def _is(words: _Words, pos: np.ndarray, literal: bytes) -> np.ndarray:
    """Whether ``literal`` stands at each position (a literal never matches the padding)."""
    ok: np.ndarray = (pos >= 0) & (pos < len(words))
    for k in range(0, len(literal), 8):
        part = literal[k : k + 8]
        mask = np.uint64((1 << (8 * len(part))) - 1)
        ok &= (words[pos + k] & mask) == np.uint64(int.from_bytes(part, "little"))
    return ok


def _word(words: _Words, pos: np.ndarray) -> np.ndarray:
    """The 8 bytes from each position, as a little-endian word (past the piece: its zero padding)."""
    return words[pos]


def _sixteen(words: _Words, pos: np.ndarray) -> np.ndarray:
    """The 16 bytes from each position, one row each."""
    rows: np.ndarray = np.stack((_word(words, pos), _word(words, pos + 8)), axis=1).view(np.uint8)
    return rows


def _number(words: _Words, pos: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole number written from each position (JSON: no leading zero; fewer than ``width``
    <= 16 digits), its end, and whether there is one."""
    rows = _sixteen(words, pos)
    digit = (rows - np.uint8(48)) < 10
    count = np.argmin(digit, axis=1)  # the first byte that is no digit (0: all are)
    good = (count >= 1) & (count < width) & (pos >= 0) & (pos < len(words)) & ~((rows[:, 0] == 48) & (count > 1))
    count = np.where(good, count, 0)
    value = np.zeros(len(pos), dtype=np.int64)
    for k in range(int(count.max()) if len(count) else 0):
        value = np.where(k < count, value * 10 + (rows[:, k].astype(np.int64) - 48), value)
    return value, pos + count, good


def _number_back(words: _Words, last: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The whole number whose last digit is at each position (fewer than ``width`` <= 16 digits),
    where it starts, and whether there is one."""
    rows = _sixteen(words, last - 15)
    digit = (rows[:, ::-1] - np.uint8(48)) < 10
    count = np.argmin(digit, axis=1)  # the digits that end at ``last``
    first = rows[np.arange(len(last)), np.clip(16 - count, 0, 15)]
    good = (count >= 1) & (count < width) & (last >= 15) & (last < len(words)) & ~((first == 48) & (count > 1))
    count = np.where(good, count, 0)
    value = np.zeros(len(last), dtype=np.int64)
    for k in range(int(count.max()) if len(count) else 0):
        value = np.where(k < count, value + (rows[:, 15 - k].astype(np.int64) - 48) * 10**k, value)
    return value, last + 1 - count, good


def _member(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Whether each of ``x`` is one of the sorted ``values``."""
    if not len(values):
        return np.zeros(len(x), dtype=bool)
    at = np.minimum(np.searchsorted(values, x), len(values) - 1)
    hit: np.ndarray = values[at] == x
    return hit


_KINDS = tuple(k.value.encode() for k in Kind)
_DATE = 25  # "2026-11-30T12:00:00+00:00": the date a line is framed with (others are decoded)


def _pattern(literal: bytes) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """A literal of 9 to 16 bytes as two words and their masks."""
    low, high = literal[:8], literal[8:16]
    return (
        np.uint64(int.from_bytes(low, "little")),
        np.uint64((1 << (8 * len(low))) - 1),
        np.uint64(int.from_bytes(high, "little")),
        np.uint64((1 << (8 * len(high))) - 1),
    )


_KIND_TEXT = [(len(kind) + 10, _pattern(kind + b'","text":"')) for kind in _KINDS]  # after ',"kind":"'


class _Texts:
    """The JSON strings of one piece: where escapes start, and which quotes are not escaped."""

    _SIMPLE = np.zeros(256, dtype=bool)
    _SIMPLE[list(b'"\\/bfnrt')] = True  # escapes of one byte (a \u escape is decoded whole)

    def __init__(self, a: np.ndarray) -> None:
        backslashes = np.flatnonzero(a == 92)
        index = np.arange(len(backslashes))
        run = np.concatenate((np.ones(min(1, len(backslashes)), dtype=bool), backslashes[1:] != backslashes[:-1] + 1))
        within = index - np.maximum.accumulate(np.where(run, index, 0))
        self.escapes = backslashes[within % 2 == 0]  # a backslash that escapes the next byte
        after = a[np.clip(self.escapes + 1, 0, len(a) - 1)]
        self.odd = self.escapes[~self._SIMPLE[after]]  # \u escapes, or no escape at all
        quotes = np.flatnonzero(a == 34)
        self.quotes = quotes[~_member(self.escapes, quotes - 1)] if len(self.escapes) else quotes

    def size(self, begin: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The bytes the strings from ``begin`` to ``end`` (their closing quotes) decode to, and
        whether each is a string of plain bytes and one-byte escapes."""
        end = np.maximum(begin, end)
        count = np.searchsorted(self.escapes, end) - np.searchsorted(self.escapes, begin)
        plain = (np.searchsorted(self.quotes, end) == np.searchsorted(self.quotes, begin)) & (
            np.searchsorted(self.odd, end) == np.searchsorted(self.odd, begin)
        )
        plain &= ~_member(self.escapes, end - 1)  # the closing quote is not escaped
        return end - begin - count, plain


def _frame_messages(a: np.ndarray, w: _Words, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lines from ``s`` to ``e`` (their newline) framed as ``encode`` writes a message without a
    key: which are, and their ids."""
    texts = _Texts(a)
    ok = _is(w, s, b'{"i":')
    ident, after, good = _number(w, s + 5, 15)
    ok &= good & _is(w, after, b',"kind":"')
    text = np.full(len(s), -1, dtype=np.int64)
    low, high = _word(w, after + 9), _word(w, after + 17)
    for skip, (word, mask, word2, mask2) in _KIND_TEXT:
        here = ((low & mask) == word) & ((high & mask2) == word2)
        text = np.where(here, after + 9 + skip, text)
    ok &= text >= 0
    ok &= _is(w, e - 1, b"}") & _is(w, e - 2 - _DATE - 9, b',"date":"') & _is(w, e - 2, b'"') & texts.size(e - 2 - _DATE, e - 2)[1]
    length, start, good = _number_back(w, e - 3 - _DATE - 9, 12)
    ok &= good & _is(w, start - 9, b'","size":')
    close = start - 9
    decoded, plain = texts.size(text, close)
    ok &= (close >= text) & (decoded == length) & plain
    return ok, ident


def _frame_nodes(a: np.ndarray, w: _Words, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lines framed as ``encode`` writes a node line: which are, their levels, indexes, sizes."""
    ok = _is(w, s, b'{"l":')
    level, after, good = _number(w, s + 5, 3)  # levels of one or two digits (a chat of 2^20 messages has levels up to 20)
    ok &= good & _is(w, after, b',"i":')
    index, after, good = _number(w, after + 5, 15)
    ok &= good & _is(w, after, b',"text":"')
    text = after + 9
    ok &= _is(w, e - 1, b"}")
    length, start, good = _number_back(w, e - 2, 12)
    ok &= good & _is(w, start - 9, b'","size":')
    close = start - 9
    decoded, plain = _Texts(a).size(text, close)
    ok &= (close >= text) & (decoded == length) & plain
    return ok, level, index, length


def _chunks(path: Path, start: int = 0) -> Iterator[tuple[int, np.ndarray, int, bool]]:
    """The file in pieces that end at a newline (the last piece may not): each with its offset, as
    a buffer of its ``n`` bytes followed by 8 zero bytes and room for 16 more (``_Words``), and
    whether it ends with a newline. The buffer is read into directly and reused: a piece is used
    before the next."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        want = CHUNK
        buffer = np.zeros(want + 24, dtype=np.uint8)
        offset = start
        while offset < size:
            n = os.preadv(fd, [buffer.data[:want]], offset)
            if n <= 0:
                return  # the file shrank under the reader: what was read is what there is
            if offset + n >= size:
                buffer[n : n + 8] = 0
                yield offset, buffer, n, bool(buffer[n - 1] == 10)
                return
            end = -1
            tail = n
            while end < 0 and tail > 0:  # the last newline, looked for from the end
                found = np.flatnonzero(buffer[max(0, tail - 65_536) : tail] == 10)
                end = int(found[-1]) + max(0, tail - 65_536) if len(found) else -1
                tail -= 65_536
            if end < 0:  # one line longer than the buffer: a larger one
                want *= 2
                buffer = np.zeros(want + 24, dtype=np.uint8)
                continue
            buffer[end + 1 : end + 9] = 0
            yield offset, buffer, end + 1, True
            offset += end + 1
    finally:
        os.close(fd)


def _lines(buffer: np.ndarray, n: int, ended: bool) -> tuple[np.ndarray, _Words, np.ndarray, np.ndarray]:
    """The piece's ``n`` bytes, the 8-byte words from each byte (``_is``), and its lines' starts
    and ends (the newline's position, or the end)."""
    a = buffer[:n]
    w = _Words(buffer, n)
    ends = np.flatnonzero(a == 10).astype(np.int64)
    if not ended:
        ends = np.append(ends, np.int64(n))
    starts = np.concatenate((np.zeros(1, dtype=np.int64), ends[:-1] + 1))
    return a, w, starts, ends


def _may_mark(path: Path, start: int = 0) -> bool:
    """Whether the file holds the bytes ``"torn"`` from byte ``start`` (outside a string only a
    marker does)."""
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        carry = b""
        while block := handle.read(CHUNK):
            if (carry + block[:8]).find(b'"torn"') >= 0 or block.find(b'"torn"') >= 0:
                return True
            carry = block[-8:]
    return False


def _markers(path: Path, slow: _Slow, start: int = 0, first: int = 0) -> None:
    """The torn markers of a file, and the lines they skip (``found.markers``, ``found.skip``),
    before its lines are read: a marker skips the lines from the one it names up to itself, also
    a whole line whose newline only the terminating write gave it. Only a line with ``"torn"``
    outside a string can be a marker: a file without those bytes is passed at once. From byte
    ``start``, line ``first + 1`` (the end of the prefix an index covered): a marker naming a line
    of the prefix is ``Stale`` (the index cannot be resumed)."""
    found = slow.found
    if not _may_mark(path, start):
        return
    number = first
    for offset, buffer, n, ended in _chunks(path, start):
        data = buffer[:n].tobytes()
        at = data.find(b'"torn"')
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            line = number + data.count(b"\n", 0, start) + 1
            slow.decode(line, data[start:end], ended or end < len(data))  # a marker is noted in found
            found.bad.pop(line, None)  # a bad line is read again, in order, with the others
            if line in found.markers and (ended or end < len(data)):
                found.marker_ends[line] = offset + end + 1
            at = data.find(b'"torn"', end)
        number += data.count(b"\n") + (0 if ended else 1)
    for line, torn in found.markers.items():
        if torn.line <= first:
            raise Stale(f"{path}: the marker at line {line} names line {torn.line}, which the index covered")
        if 0 < torn.line < line:
            found.skip.update(range(torn.line, line + 1))


class _Slow:
    """The lines a piece's framing did not take, decoded whole."""

    def __init__(self, found: _File, tree: bool) -> None:
        self.found = found
        self.tree = tree

    def decode(self, number: int, line: bytes, ended: bool) -> Record | None:
        """The record of line ``number``, or None (a bad line or a marker, noted in ``found``)."""
        if self.tree and ended and _MERGE.fullmatch(line):  # a merge line as ``encode`` writes it
            body = json.loads(line)
            return MergeLine(tuple(map(tuple, body["merge"])), body["open"], body["t"])
        try:
            record = decode(line, tree=self.tree)
        except ValueError as error:
            self.found.bad[number] = str(error) if ended else "the line has no newline: a torn write"
            if is_cut_marker(line):
                self.found.cut.add(number)
            return None
        if isinstance(record, Torn):
            self.found.markers[number] = record
            return None
        if not ended:
            self.found.bad[number] = "the line has no newline: a torn write"
            return None
        return record


def _array(values: np.ndarray) -> array[int]:
    out = array("q")
    out.frombytes(values.astype(np.int64).tobytes())
    return out


R = TypeVar("R", bound="Message | NodeLine | MergeLine")


class _Log(Sequence[R]):
    """The records of one directory's day files in log order: ``log[k]`` decodes record ``k``'s
    line from disk; equal to a list of the same records."""

    tree = False

    def __init__(self, files: list[Path]) -> None:
        self._files = _Files(files)
        self.places = array("q")  # each record's line: file number << 40 | byte offset

    def __len__(self) -> int:
        return len(self.places)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, _Log)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> R: ...
    @overload
    def __getitem__(self, index: slice) -> list[R]: ...
    def __getitem__(self, index: int | slice) -> R | list[R]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        return self._record(self.places[index])

    def _record(self, place: int) -> R:
        path, line = self._files.line(place)
        try:
            record = decode(line, tree=self.tree)
        except ValueError as error:
            path, number = self._files.where(place)
            raise CorruptLine(path, number, f"{error} (read at byte {place & _MASK}, after the start checked the file)") from None
        return cast(R, record)

    def where(self, k: int) -> tuple[Path, int]:
        """The file and line number of record ``k``."""
        return self._files.where(self.places[k])

    def close(self) -> None:
        self._files.close()

    def _pieces(self, files: list[Path], resume: Sequence[Covered], careful: bool) -> Iterator[tuple[int, Path, _File, _Slow, int, np.ndarray, bool, tuple[np.ndarray, _Words, np.ndarray, np.ndarray, np.ndarray]]]:
        """Each piece of each file (``_chunks``, ``_lines``) with the file's number, path, what its
        scan found so far and its decoder of unframed lines; after a file's last piece, its torn
        tail is settled (``self.tail``: the newest file's). A file an index covers (``resume``)
        is read from the end of its covered prefix, as if its lines had been read; what each
        file's scan may let an index cover is ``self.covered``.

        The torn markers of a file are found as its lines are read (a marker is no framed line);
        a marker skips the lines from the one it names up to itself. The fast scan (``careful``
        false) checks at the end of each file that it took none of those lines as a record, else
        ``_Redo``: the careful scan finds a file's markers first (``_markers``) and passes over
        their lines."""
        self.tail = Tail(files[-1] if files else None, 0, True)
        self.covered: list[Covered | None] = []
        for number, path in enumerate(files):
            found = _File()
            start = 0
            if number < len(resume):
                known = resume[number]
                found.lines = found.last_record = known.lines
                found.record_end = start = known.bytes
            slow = _Slow(found, tree=self.tree)
            first = found.lines
            if careful:
                _markers(path, slow, start, first)
            ended = True
            lines = found.lines
            for offset, data, n, ended in _chunks(path, start):
                a, w, starts, ends = _lines(data, n, ended)
                skipped = np.zeros(len(starts), dtype=bool)
                if found.skip:  # a file an earlier writer terminated: its markers' lines are passed over
                    skipped[[k for k in range(len(starts)) if lines + 1 + k in found.skip]] = True
                lines += len(starts)
                yield number, path, found, slow, offset, data, ended, (a, w, starts, ends, skipped)
            found.terminated = ended if found.lines else True
            if found.markers and not careful:
                taken = np.concatenate(found.taken) if found.taken else np.zeros(0, dtype=np.int64)
                for line, torn in found.markers.items():
                    if torn.line <= first:
                        raise Stale(f"{path}: the marker at line {line} names line {torn.line}, which the index covered")
                    if torn.line < line and ((taken >= torn.line) & (taken <= line)).any():  # torn.line > first >= 0 here
                        raise _Redo()
            found.taken = []
            tail = _settle(path, found, number == len(files) - 1)
            self.covered.append(found.covered)
            if tail is not None:
                self.tail = tail


class MessageLog(_Log[Message]):
    """The messages of a chat directory: ``log[i]`` decodes message ``i``'s line from disk."""

    def __init__(self, directory: Path, resume: Resume | None = None) -> None:
        files = day_files(directory)
        super().__init__(files)
        try:
            self._read(files, resume, careful=False)
        except _Redo:
            self.places = array("q")
            self._read(files, resume, careful=True)

    def _read(self, files: list[Path], resume: Resume | None, careful: bool) -> None:
        self.keys: dict[str, int] = {}
        gap: IdGap | None = None
        count = 0
        covered: Sequence[Covered] = ()
        if resume is not None:
            covered = resume.fits(files)
            self.places.frombytes(resume.places.astype(np.int64).tobytes())
            self.keys.update(resume.keys)
            count = len(self.places)
        for number, path, found, slow, offset, data, ended, (a, w, starts, ends, skipped) in self._pieces(files, covered, careful):
            if ended:
                ok, ident = _frame_messages(a, w, starts, ends)
            else:  # the last line has no newline: decoded (a torn write, or a marker)
                ok, ident = _frame_messages(a, w, starts[:-1], ends[:-1])
                ok, ident = np.append(ok, False), np.append(ident, np.int64(-1))
            numbers = found.lines + 1
            ok &= ~skipped
            for k in np.flatnonzero(~ok & ~skipped).tolist():
                record = slow.decode(numbers + k, data[starts[k] : ends[k]].tobytes(), ended or k < len(ok) - 1)
                if record is not None:
                    assert isinstance(record, Message)
                    ok[k] = True
                    ident[k] = record.i
                    if record.key is not None:
                        self.keys[record.key] = record.i
            found.lines += len(ok)
            taken = np.flatnonzero(ok)
            if len(taken):
                ids = ident[taken]
                wrong = np.flatnonzero(ids != np.arange(count, count + len(ids)))
                if len(wrong) and gap is None:
                    k = int(wrong[0])
                    gap = IdGap(path, numbers + int(taken[k]), f"message id {int(ids[k])} where {count + k} is next: a gap in message ids")
                self.places.frombytes(((starts[taken] + offset) | (number << _SHIFT)).astype(np.int64).tobytes())
                found.taken.append(taken + numbers)
                count += len(taken)
                found.last_record = numbers + int(taken[-1])
                found.record_end = offset + int(ends[taken[-1]]) + 1
        self.gap = gap  # the store raises it after reading the tree (a bad line anywhere comes first)

    def text(self, i: int) -> str:
        return self[i].text


class TreeLog(_Log[NodeLine | MergeLine]):
    """The tree lines of a chat directory in log order (``log[k]`` decodes line ``k`` from disk),
    with what a restart needs at hand: the built sizes as the planner's rows, each node's place
    in the log, the merge lines, and the first node named twice or beyond the chat (``problem``,
    at record ``problem_at``).

    ``lost``: the first node logged before one of its halves was (record ``lost_at``). A node is
    built only once both halves are, and each built node is logged as it is built, children first
    (rules 11, 13): a node logged without a half before it says tree lines were lost (a day file
    deleted, cut or replaced)."""

    tree = True

    def __init__(self, directory: Path, t: int, resume: Resume | None = None) -> None:
        files = day_files(directory)
        super().__init__(files)
        self.directory = directory
        self.t = t
        try:
            self._read(files, resume, careful=False)
        except _Redo:
            self.places = array("q")
            self._read(files, resume, careful=True)

    def _read(self, files: list[Path], resume: Resume | None, careful: bool) -> None:
        t = self.t
        self.rows: list[list[int]] = [[]]
        self.order: list[array[int]] = [array("q")]
        self.merges: list[MergeLine] = []
        self.newest: Node | None = None
        self.problem: str | None = None
        self.problem_at = -1
        self.problem_node: Node | None = None
        places = self.places
        sizes: list[np.ndarray] = []
        where: list[np.ndarray] = []
        first_problem = -1
        covered: Sequence[Covered] = ()
        if resume is not None:
            if resume.t > t:
                raise Stale(f"the index covers {resume.t} messages, the chat has {t}")
            covered = resume.fits(files)
            places.frombytes(resume.places.astype(np.int64).tobytes())
            sizes = [np.array(x, dtype=np.int64) for x in resume.sizes]
            where = [np.array(x, dtype=np.int64) for x in resume.where]
            self.merges = list(resume.merges)
            self.newest = resume.newest
        for number, path, found, slow, offset, data, ended, (a, w, starts, ends, skipped) in self._pieces(files, covered, careful):
            if ended:
                ok, level, index, length = _frame_nodes(a, w, starts, ends)
            else:
                ok, level, index, length = (np.append(x, y) for x, y in zip(_frame_nodes(a, w, starts[:-1], ends[:-1]), (False, 0, 0, 0)))
            node = ok.copy()
            huge: list[tuple[int, Node]] = []
            numbers = found.lines + 1
            ok &= ~skipped
            for k in np.flatnonzero(~ok & ~skipped).tolist():
                record = slow.decode(numbers + k, data[starts[k] : ends[k]].tobytes(), ended or k < len(ok) - 1)
                if isinstance(record, MergeLine):
                    ok[k] = True
                    self.merges.append(record)
                elif isinstance(record, NodeLine):
                    ok[k] = True
                    if record.node[0] > 62 or record.node[1] >= t:  # no node of the chat (nor an int64)
                        huge.append((k, record.node))
                    else:
                        node[k] = True
                        level[k], index[k], length[k] = record.node[0], record.node[1], len(record.text.encode("utf-8"))
            found.lines += len(ok)
            taken = np.flatnonzero(ok)
            if not len(taken):
                continue
            position = np.cumsum(ok) - 1 + len(places)  # each record's place in the log
            places.frombytes(((starts[taken] + offset) | (number << _SHIFT)).astype(np.int64).tobytes())
            found.taken.append(taken + numbers)
            found.last_record = numbers + int(taken[-1])
            found.record_end = offset + int(ends[taken[-1]]) + 1
            for k, far in huge:
                if first_problem < 0 or int(position[k]) < first_problem:
                    first_problem = int(position[k])
                    self.problem_node = far
                    self.problem = f"node {far} logged twice or beyond the chat's {t} messages"
            nodes = np.flatnonzero(node)
            if not len(nodes):
                continue
            last = int(nodes[-1])
            self.newest = (int(level[last]), int(index[last]))
            bad = index[nodes] + 1 > np.right_shift(np.int64(t), np.minimum(level[nodes], 62))  # ends at or past t
            for depth in np.unique(level[nodes[~bad]]).tolist():
                mine = nodes[(level[nodes] == depth) & ~bad]
                at = index[mine]
                while len(sizes) <= depth:
                    sizes.append(np.zeros(0, dtype=np.int64))
                    where.append(np.zeros(0, dtype=np.int64))
                top = int(at.max()) + 1
                if top > len(sizes[depth]):
                    grow = max(top, 2 * len(sizes[depth]))
                    sizes[depth] = np.pad(sizes[depth], (0, grow - len(sizes[depth])))  # np.pad keeps the int64 dtype
                    where[depth] = np.pad(where[depth], (0, grow - len(where[depth])), constant_values=-1)
                before = where[depth][at] >= 0  # named in an earlier piece
                keep = mine[~before]
                where[depth][index[keep]] = position[keep]
                sizes[depth][index[keep]] = length[keep]
                # named again: after an earlier piece (its own place), or within this piece (the
                # place of the last naming, which the assignment kept, is a later one)
                later = np.concatenate((position[mine[before]], where[depth][at[~before & (where[depth][at] != position[mine])]]))
                if len(later):
                    k = int(later.min())
                    if first_problem < 0 or k < first_problem:
                        first_problem = k
                        m = int(mine[int(np.flatnonzero(position[mine] == k)[0])]) if (position[mine] == k).any() else -1
                        named = (depth, int(index[m])) if m >= 0 else (depth, -1)
                        self.problem_node = named
                        self.problem = f"node {named} logged twice or beyond the chat's {t} messages"
            beyond = nodes[bad]
            if len(beyond):
                m = int(beyond[0])
                if first_problem < 0 or int(position[m]) < first_problem:
                    first_problem = int(position[m])
                    self.problem_node = (int(level[m]), int(index[m]))
                    self.problem = f"node {self.problem_node} logged twice or beyond the chat's {t} messages"
        self._built: list[tuple[np.ndarray, np.ndarray]] = []  # each depth's sizes and places (an index keeps them)
        for depth in range(len(sizes)):
            used = np.flatnonzero(where[depth] >= 0)
            top = int(used[-1]) + 1 if len(used) else 0
            self._built.append((sizes[depth][:top], where[depth][:top]))
            while len(self.rows) <= depth:
                self.rows.append([])
                self.order.append(array("q"))
            self.rows[depth] = sizes[depth][:top].tolist()
            self.order[depth] = _array(where[depth][:top])
        self.problem_at = first_problem
        self.lost, self.lost_at = self._halves_first()

    def logged(self, levels: np.ndarray, indexes: np.ndarray) -> np.ndarray:
        """Whether each node ``(levels[k], indexes[k])`` has a node line in the log."""
        out = np.zeros(len(levels), dtype=bool)
        inside_levels = (levels >= 0) & (levels < len(self._built))
        for level in np.flatnonzero(np.bincount(levels[inside_levels], minlength=1)).tolist():  # the levels named (few)
            sizes = self._built[level][0]
            if not len(sizes):
                continue
            mine = np.flatnonzero(levels == level)
            at = indexes[mine]
            inside = (at >= 0) & (at < len(sizes))
            out[mine] = inside & (sizes[np.where(inside, at, 0)] > 0)
        return out

    def merge_at(self, n: int) -> int:
        """The record number of merge line ``n`` (from 0): the records that are no node line, in
        order."""
        merge = np.ones(len(self.places), dtype=bool)
        for _sizes, places in self._built:
            merge[places[places >= 0]] = False
        return int(np.flatnonzero(merge)[n])

    def _halves_first(self) -> tuple[str | None, int]:
        """The first node (in log order) logged before one of its halves, or without it: why, and
        its record's number (-1: none)."""
        first, why = -1, None
        for depth in range(1, len(self._built)):
            places = self._built[depth][1]
            nodes = np.flatnonzero(places >= 0)
            if not len(nodes):
                continue
            below = self._built[depth - 1][1]
            at = places[nodes]
            for child in (2 * nodes, 2 * nodes + 1):
                half = below[np.minimum(child, len(below) - 1)] if len(below) else np.full(len(child), -1)
                half = np.where(child < len(below), half, -1)
                wrong = np.flatnonzero((half < 0) | (half > at))
                if len(wrong):
                    k = int(wrong[int(np.argmin(at[wrong]))])
                    if first < 0 or int(at[k]) < first:
                        first = int(at[k])
                        node, side = (depth, int(nodes[k])), (depth - 1, int(child[k]))
                        after = "not logged at all" if half[k] < 0 else "logged only after it"
                        why = f"node {node} is logged, its half {side} {after}: tree lines were lost (a day file of tree/ deleted, cut or replaced)"
        return why, first

    def text(self, node: Node) -> str:
        """The line of built node ``node`` (StoreError when it was not logged)."""
        level, i = node
        if level >= len(self.order) or i >= len(self.order[level]) or self.order[level][i] < 0:
            raise StoreError(f"node {node} is not in the log")
        record = self._record(self.places[self.order[level][i]])
        assert isinstance(record, NodeLine)
        return record.text



# -- the index: what the scan found, kept beside the logs for the next start -----------------------
#
# One file (``Store`` names it, ``index.bin`` in the chat directory), replaced whole (a new file
# renamed over it, no fsync: like view.json it is never the truth). It holds, for each log, the
# prefix of each day file the scan covered (``Covered``: whole lines up to the file's last good
# line) with a fingerprint of those bytes, and what the scan read from them: the records' places,
# the message keys, the built nodes' sizes and places, the merge lines, the newest node. A start
# that finds an index whose checksum holds, whose arrays are well formed and whose fingerprints
# match the files scans only the bytes after each covered prefix (``Resume.fits``); anything else
# (no index, a torn or tampered one, a file rewritten, removed or renamed, a marker naming a
# covered line) is a full scan, which gives the same logs as if there had been no index.
#
# The fingerprint of a prefix: the file's inode and the prefix's length, its first and last 64 KiB
# and 16 blocks of 4 KiB spread over it. The logs are append only (rule 6): a writer that follows
# the rules only adds bytes after the prefix. An edit inside a long prefix that keeps its length
# and misses the sampled blocks is not seen; a full scan (delete the index) checks every line.

INDEX_MAGIC = b"eukhe chat index 1\n"
_DIGEST = 16
_EDGE = 1 << 16
_SPOT = 1 << 12


@dataclass
class Resume:
    """What an index says a log's scan found in the files' covered prefixes."""

    files: list[Covered]
    prints: list[str]  # each covered prefix's fingerprint
    places: np.ndarray
    keys: dict[str, int] = field(default_factory=dict)
    t: int = 0
    sizes: list[np.ndarray] = field(default_factory=list)
    where: list[np.ndarray] = field(default_factory=list)
    merges: list[MergeLine] = field(default_factory=list)
    newest: Node | None = None

    def fits(self, files: list[Path]) -> list[Covered]:
        """The covered prefixes, when the day files begin with the covered ones, unchanged in
        what the fingerprints see; else ``Stale``."""
        if len(files) < len(self.files):
            raise Stale("a day file the index covers is gone")
        for path, known, seen in zip(files, self.files, self.prints):
            if path.name != known.name or fingerprint(path, known.bytes) != seen:
                raise Stale(f"{path}: not the file the index covered")
        return self.files


def fingerprint(path: Path, length: int) -> str:
    """The fingerprint of the first ``length`` bytes of a file (``Stale`` when it is shorter)."""
    digest = hashlib.blake2b(digest_size=_DIGEST)
    fd = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(fd)
        if status.st_size < length:
            raise Stale(f"{path}: shorter than the {length} bytes the index covered")
        digest.update(f"{status.st_ino}:{length}".encode())
        spans = [(0, min(length, _EDGE)), (max(0, length - _EDGE), min(length, _EDGE))]
        spans += [(length * k // 17, min(_SPOT, length - length * k // 17)) for k in range(1, 17)]
        for at, want in spans:
            data = os.pread(fd, want, at)
            if len(data) != want:
                raise Stale(f"{path}: shorter than the {length} bytes the index covered")
            digest.update(data)
    finally:
        os.close(fd)
    return digest.hexdigest()


def _covered(log: _Log[R]) -> list[Covered] | None:
    return None if any(c is None for c in log.covered) else cast(list[Covered], log.covered)


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def index_bytes(messages: MessageLog, tree: TreeLog, message_dir: Path, tree_dir: Path) -> bytes | None:
    """The index of two logs just scanned (None: not one an index may keep: a gap, a node logged
    twice or beyond the chat, a prefix without its newline, a merge line whose numbers do not fit
    64 bits)."""
    mfiles, tfiles = _covered(messages), _covered(tree)
    if mfiles is None or tfiles is None or messages.gap is not None or tree.problem is not None or tree.t != len(messages):
        return None
    arrays: list[tuple[str, np.ndarray]] = [
        ("m.places", np.frombuffer(messages.places, dtype=np.int64) if len(messages.places) else np.zeros(0, np.int64)),
        ("t.places", np.frombuffer(tree.places, dtype=np.int64) if len(tree.places) else np.zeros(0, np.int64)),
    ]
    for depth, (sizes, where) in enumerate(tree._built):
        arrays += [(f"t.sizes.{depth}", sizes), (f"t.where.{depth}", where)]
    merges = tree.merges
    merge_lines = [x for m in merges for n in m.lines for x in n]
    if not all(_INT64_MIN <= x <= _INT64_MAX for x in (*(m.t for m in merges), *(m.open for m in merges), *merge_lines)):
        return None  # a merge line naming a node no chat reaches: the scan reads it, the index cannot hold it
    arrays += [
        ("t.merge.t", np.array([m.t for m in merges], dtype=np.int64)),
        ("t.merge.open", np.array([m.open for m in merges], dtype=np.int64)),
        ("t.merge.count", np.array([len(m.lines) for m in merges], dtype=np.int64)),
        ("t.merge.lines", np.array(merge_lines, dtype=np.int64)),
    ]
    header = {
        "messages": {"files": [list(astuple(c)) for c in mfiles], "prints": [fingerprint(message_dir / c.name, c.bytes) for c in mfiles], "keys": messages.keys},
        "tree": {"files": [list(astuple(c)) for c in tfiles], "prints": [fingerprint(tree_dir / c.name, c.bytes) for c in tfiles], "t": tree.t, "depths": len(tree._built), "newest": None if tree.newest is None else list(tree.newest)},
        "arrays": [[name, len(values)] for name, values in arrays],
    }
    head = json.dumps(header, separators=(",", ":")).encode()
    body = b"".join([INDEX_MAGIC, len(head).to_bytes(8, "little"), head] + [values.astype("<i8").tobytes() for _name, values in arrays])
    return body + hashlib.blake2b(body, digest_size=_DIGEST).digest()


def _files(body: object) -> tuple[list[Covered], list[str]]:
    assert isinstance(body, dict)
    files, prints = body["files"], body["prints"]
    assert isinstance(files, list) and isinstance(prints, list) and len(files) == len(prints)
    covered = []
    for entry in files:
        assert isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
        assert all(type(x) is int and x >= 0 for x in entry[1:])
        covered.append(Covered(entry[0], entry[1], entry[2]))
    assert all(isinstance(p, str) for p in prints)
    return covered, prints


def _places_fit(places: np.ndarray, files: list[Covered]) -> bool:
    """Places in log order, each in a covered prefix."""
    if not len(places):
        return True
    number, offset = places >> _SHIFT, places & _MASK
    if (places < 0).any() or (np.diff(places) <= 0).any() or int(number.max()) >= len(files):
        return False
    return bool((offset < np.array([c.bytes for c in files], dtype=np.int64)[number]).all())


def parse_index(data: bytes) -> tuple[Resume, Resume] | None:
    """The two logs' resumes an index file holds, or None when it is not a whole, well formed
    index (then the logs are scanned whole)."""
    try:
        return _parse(data)
    except (AssertionError, ValueError, KeyError, TypeError, IndexError, OverflowError):
        return None


def _parse(data: bytes) -> tuple[Resume, Resume] | None:
    body, digest = memoryview(data)[:-_DIGEST], data[-_DIGEST:]
    if bytes(body[: len(INDEX_MAGIC)]) != INDEX_MAGIC or hashlib.blake2b(body, digest_size=_DIGEST).digest() != digest:
        return None
    at = len(INDEX_MAGIC)
    size = int.from_bytes(body[at : at + 8], "little")
    header = json.loads(bytes(body[at + 8 : at + 8 + size]))
    assert isinstance(header, dict)
    at += 8 + size
    arrays: dict[str, np.ndarray] = {}
    for name, length in header["arrays"]:
        assert isinstance(name, str) and type(length) is int and 0 <= length and at + 8 * length <= len(body)
        arrays[name] = np.frombuffer(body, dtype="<i8", count=length, offset=at).astype(np.int64)
        at += 8 * length
    assert at == len(body)
    m, t = header["messages"], header["tree"]
    mfiles, mprints = _files(m)
    keys = m["keys"]
    count = len(arrays["m.places"])
    assert isinstance(keys, dict) and all(isinstance(k, str) and type(v) is int and 0 <= v < count for k, v in keys.items())
    tfiles, tprints = _files(t)
    chat = t["t"]
    assert type(chat) is int and chat == count
    tplaces = arrays["t.places"]
    if not (_places_fit(arrays["m.places"], mfiles) and _places_fit(tplaces, tfiles)):
        return None
    depths = t["depths"]
    assert type(depths) is int and 0 <= depths <= 64
    sizes, where = [], []
    for depth in range(depths):
        s, w = arrays[f"t.sizes.{depth}"], arrays[f"t.where.{depth}"]
        assert len(s) == len(w) and not (s < 0).any() and not ((w < -1) | (w >= len(tplaces))).any() and not ((w < 0) & (s != 0)).any()
        sizes.append(s)
        where.append(w)
    moments, opened, counts, flat = (arrays[f"t.merge.{k}"] for k in ("t", "open", "count", "lines"))
    assert len(moments) == len(opened) == len(counts) and not (counts < 0).any() and int(counts.sum()) * 2 == len(flat)
    assert not ((opened != 0) & (opened != 1)).any() and not (flat < 0).any()
    pairs = list(map(tuple, flat.reshape(-1, 2).tolist()))
    merges, k = [], 0
    for moment, shrinking, many in zip(moments.tolist(), opened.tolist(), counts.tolist()):
        merges.append(MergeLine(tuple(pairs[k : k + many]), bool(shrinking), moment))
        k += many
    built = int(sum(int((w >= 0).sum()) for w in where))
    assert built + len(merges) == len(tplaces)
    newest = t["newest"]
    assert newest is None or (isinstance(newest, list) and len(newest) == 2 and all(type(x) is int and x >= 0 for x in newest))
    return (
        Resume(mfiles, mprints, arrays["m.places"], keys=dict(keys)),
        Resume(tfiles, tprints, tplaces, t=chat, sizes=sizes, where=where, merges=merges, newest=None if newest is None else (newest[0], newest[1])),
    )
