"""The one server-sent events reader of every wire API (the WHATWG event stream format).

Lines end with LF, CRLF or CR; ``field: value`` lines build an event (``event``, ``data``
joined by LF, ``id``); a line starting with ``:`` is a comment (OpenRouter's keep-alive
``: OPENROUTER PROCESSING``); a blank line dispatches the event when it has data. An event
still open when the body ends is discarded, as the format says: a body cut mid-event never
yields half an event.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    event: str  # "message" when the event names none
    data: str
    id: str | None = None


class SseParser:
    """Feed text in any pieces; take the whole events."""

    def __init__(self) -> None:
        self._buffer = ""
        self._pending_cr = False
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, text: str) -> list[SseEvent]:
        if self._pending_cr and text.startswith("\n"):
            text = text[1:]
        self._pending_cr = False
        self._buffer += text
        out: list[SseEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                break
            end, width = cut
            if width == 1 and self._buffer[end] == "\r" and end + 1 == len(self._buffer):
                self._pending_cr = True  # a CR last: its LF may come in the next piece
            line = self._buffer[:end]
            self._buffer = self._buffer[end + width :]
            event = self._line(line)
            if event is not None:
                out.append(event)
        return out

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = SseEvent(self._event or "message", "\n".join(self._data), self._id)
            self._event, self._data = "", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


def _line_end(buffer: str) -> tuple[int, int] | None:
    lf, cr = buffer.find("\n"), buffer.find("\r")
    if cr < 0:
        return None if lf < 0 else (lf, 1)
    if 0 <= lf < cr:
        return lf, 1
    return (cr, 2) if buffer[cr + 1 : cr + 2] == "\n" else (cr, 1)


async def read_sse(chunks: AsyncIterable[str]) -> AsyncGenerator[SseEvent, None]:
    """The events of a body given as decoded text pieces."""
    parser = SseParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
