"""The repetition guard (inference.md S6.5): utils::stream_repeat.

The text and thinking deltas of every stream go through one ``Guard`` per attempt. Production
keeps the byte work: each block (a text or thinking block, by the key the wire gives it) holds
its own partial line; a complete non-blank line is a chunk; a line over MAX_CHUNK_BYTES (4096)
bytes of UTF-8 is cut there, on a character boundary, as it grows, so a loop with no newline is
still cut in bounded chunks; each distinct chunk of the attempt gets one id. The ids go to the
compiled guard's step, ``bend.infer.guard_feed`` (the seed: the guard runs as the compiled
model, bend/ffi_infer_guard, no copy here), which every block of the stream shares: interleaved
blocks are one run. A cut is ``StreamRepeating``, retryable, with the period and the last line.
A new attempt restarts the guard (``restart``).

The wire side calls ``feed(block, text)`` per delta and stops the stream on a non-None answer.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from bend import infer as compiled
from eukhe.inference.wire.events import Retryable

MAX_CHUNK_BYTES = 4096
DEFAULT_LIMIT = 64
LIMIT_CVAR = "retry.provider.streamRepeatLimit"
U32 = compiled.U32
_SHOWN = 200  # characters of the last line the message shows


class StreamRepeating(Retryable):
    """stream_repeating: the stream repeats a cycle of ``period`` chunks; retryable. The failure
    info records RepeatedLines (``repeated_lines``: the period and the last line)."""

    kind = "stream_repeating"
    retryable = True

    def __init__(self, period: int, last_line: str) -> None:
        shown = last_line if len(last_line) <= _SHOWN else last_line[:_SHOWN] + "…"
        noun = "line" if period == 1 else "lines"
        super().__init__(f"stream_repeating: the stream repeats a cycle of {period} {noun}; last line: {shown!r}")
        self.period = period
        self.last_line = last_line

    @property
    def repeated_lines(self) -> dict[str, Any]:
        return {"period": self.period, "last_line": self.last_line}


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _width(ch: str) -> int:
    """The UTF-8 bytes of one character (a lone surrogate, as the wire may carry, is 3)."""
    code = ord(ch)
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def _cut(text: str, limit: int) -> int:
    """The number of characters of ``text`` whose UTF-8 fits in ``limit`` bytes: the longest
    prefix that ends on a character boundary."""
    used = 0
    for i, ch in enumerate(text):
        width = _width(ch)
        if used + width > limit:
            return i
        used += width
    return len(text)


def _is_chunk(line: str) -> bool:
    return bool(line.strip())


def split(partial: str, text: str, max_bytes: int = MAX_CHUNK_BYTES) -> tuple[str, list[str]]:
    """Add a delta to a block's partial line: the chunks it completes, in order, and the new
    partial line. A line is complete at its newline ("\\r\\n" ends one too); blank and
    whitespace lines are not chunks; a partial line longer than ``max_bytes`` bytes gives its
    first bytes up to a character boundary as a chunk."""
    chunks: list[str] = []
    buffer = partial + text
    lines = buffer.split("\n")
    for line in lines[:-1]:
        if line.endswith("\r"):
            line = line[:-1]
        for piece in _pieces(line, max_bytes, complete=True)[0]:
            if _is_chunk(piece):
                chunks.append(piece)
    pieces, rest = _pieces(lines[-1], max_bytes, complete=False)
    for piece in pieces:
        if _is_chunk(piece):
            chunks.append(piece)
    return rest, chunks


def _pieces(line: str, max_bytes: int, complete: bool) -> tuple[list[str], str]:
    """A line cut into pieces of at most ``max_bytes`` bytes; an incomplete line keeps its last
    piece (no longer than ``max_bytes``) as the partial line."""
    pieces: list[str] = []
    while len(line) * 4 > max_bytes and _utf8_length(line) > max_bytes:
        take = max(1, _cut(line, max_bytes))  # 1: a character wider than the limit (never at 4096)
        pieces.append(line[:take])
        line = line[take:]
    if complete:
        pieces.append(line)
        return pieces, ""
    return pieces, line


class Guard:
    """One attempt's repetition guard over every block of its stream."""

    def __init__(self, limit: int = DEFAULT_LIMIT, max_bytes: int = MAX_CHUNK_BYTES) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= U32:
            raise ValueError(f"{LIMIT_CVAR} is a natural up to {U32}, not {limit!r}")
        self.limit = limit
        self.max_bytes = max_bytes
        self.restart()

    @classmethod
    def from_settings(cls, value: Callable[[str], Any]) -> Guard:
        """The guard with the session's window: ``value`` reads a cvar (Agent.value)."""
        return cls(int(value(LIMIT_CVAR)))

    def restart(self) -> None:
        """A new attempt: no partial line, no id, no chunk read."""
        self._state = compiled.guard_start(self.limit)
        self._partial: dict[Hashable, str] = {}
        self._ids: dict[str, int] = {}
        self.cut: StreamRepeating | None = None
        self.chunks_read = 0

    def feed(self, block: Hashable, text: str) -> StreamRepeating | None:
        """One delta of a block: None while the stream may go on; the cut once it repeats (and
        on every feed after it, until ``restart``)."""
        if self.cut is not None:
            return self.cut
        rest, chunks = split(self._partial.get(block, ""), text, self.max_bytes)
        self._partial[block] = rest
        for chunk in chunks:
            ident = self._ids.setdefault(chunk, len(self._ids))
            self._state, verdict = compiled.guard_feed(self._state, ident)
            self.chunks_read += 1
            if verdict != compiled.KEPT:
                self.cut = StreamRepeating(verdict, chunk)
                return self.cut
        return None
