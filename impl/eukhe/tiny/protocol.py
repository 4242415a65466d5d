"""The worker's wire: JSON lines over a Unix socket (S9 worker 6).

Each side reads lines of at most ``LINE_LIMIT`` bytes (256 MiB). A longer line is not held:
its bytes are discarded as they arrive, up to its newline, and the reader reports it as
``OVER_LIMIT`` (the worker answers bad_request; the client reports an answer out of
protocol), then reads the next line.

A read may have a deadline (``timeout``, seconds for the whole line): past it the read raises
``TimeoutError`` (the bytes that came stay buffered; the callers close the connection).
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any, Final

from eukhe import strict_json

LINE_LIMIT: Final = 256 * 1024 * 1024
CHUNK: Final = 1 << 20


class _OverLimit:
    def __repr__(self) -> str:
        return "OVER_LIMIT"


OVER_LIMIT: Final = _OverLimit()


class LineReader:
    """Lines from a socket, without their newline; None at the end of the stream (a partial
    last line counts as the end: the other side died mid-line)."""

    def __init__(self, sock: socket.socket, limit: int = LINE_LIMIT) -> None:
        self.sock = sock
        self.limit = limit
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline

    def _recv(self, until: float | None) -> bytes:
        """One recv, within the deadline ``until`` (a time.monotonic(); None: none)."""
        if until is None:
            return self.sock.recv(CHUNK)
        left = until - time.monotonic()
        if left <= 0:
            raise TimeoutError("no line within the deadline")
        before = self.sock.gettimeout()
        self.sock.settimeout(left)
        try:
            return self.sock.recv(CHUNK)
        finally:
            self.sock.settimeout(before)

    def _fill(self, until: float | None = None) -> bool:
        chunk = self._recv(until)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def read(self, timeout: float | None = None) -> bytes | _OverLimit | None:
        until = None if timeout is None else time.monotonic() + timeout
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                self.scanned = 0
                if end > self.limit:
                    del self.buffer[: end + 1]
                    return OVER_LIMIT
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            self.scanned = len(self.buffer)
            if len(self.buffer) > self.limit:
                return self._discard(until)
            if not self._fill(until):
                return None

    def _discard(self, until: float | None = None) -> _OverLimit | None:
        """Drop an over-long line up to its newline, holding at most one chunk of it."""
        self.buffer.clear()
        self.scanned = 0
        while True:
            chunk = self._recv(until)
            if not chunk:
                return None
            end = chunk.find(b"\n")
            if end >= 0:
                self.buffer += chunk[end + 1 :]
                return OVER_LIMIT


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(encode(message))


def decode(line: bytes) -> dict[str, Any] | None:
    """A JSON object, or None when the line is not one."""
    try:
        value = strict_json.loads(line, limit=strict_json.RECORD_DEPTH)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None
