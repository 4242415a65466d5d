"""The AWS event-stream binary framing (application/vnd.amazon.eventstream), as Bedrock's
ConverseStream answers: each message is

    total length (uint32) | headers length (uint32) | prelude CRC32 (of the 8 bytes before)
    | headers | payload | message CRC32 (of every byte before it)

all big-endian; a header is name length (uint8), name (UTF-8), value type (uint8) and value:
0 true, 1 false, 2 int8, 3 int16, 4 int32, 5 int64, 6 bytes (uint16 length), 7 string (uint16
length, UTF-8), 8 timestamp (int64 milliseconds), 9 UUID (16 bytes).

``Decoder`` takes bytes in any pieces and gives whole messages, refusing a bad CRC, a length past
the limits or a header of unknown type (``FramingError``). The product only reads frames: the
encoder is the loopback server's (spec.loopback.event_frame).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

PRELUDE = 12  # total length, headers length, prelude CRC
MAX_MESSAGE = 16 * 1024 * 1024  # the format's limits: 16 MiB a message, 128 KiB of headers
MAX_HEADERS = 128 * 1024

HeaderValue = bool | int | bytes | str | datetime | uuid.UUID


class FramingError(ValueError):
    """Bytes that are no event-stream message (the reason says where)."""


@dataclass(frozen=True)
class Message:
    headers: dict[str, HeaderValue] = field(default_factory=dict)
    payload: bytes = b""

    def header(self, name: str) -> str:
        """A string header's value, "" when absent or not a string."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else ""


def _crc(data: bytes, start: int = 0) -> int:
    return zlib.crc32(data, start) & 0xFFFFFFFF


def _headers(block: bytes) -> dict[str, HeaderValue]:
    out: dict[str, HeaderValue] = {}
    at = 0
    try:
        while at < len(block):
            size = block[at]
            name = block[at + 1 : at + 1 + size].decode("utf-8")
            at += 1 + size
            kind = block[at]
            at += 1
            value: HeaderValue
            if kind in (0, 1):
                value = kind == 0
            elif kind in (2, 3, 4, 5, 8):
                fmt = {2: ">b", 3: ">h", 4: ">i", 5: ">q", 8: ">q"}[kind]
                width = struct.calcsize(fmt)
                (number,) = struct.unpack(fmt, block[at : at + width])
                at += width
                value = datetime.fromtimestamp(number / 1000, timezone.utc) if kind == 8 else number
            elif kind in (6, 7):
                (length,) = struct.unpack(">H", block[at : at + 2])
                raw = block[at + 2 : at + 2 + length]
                if len(raw) != length:
                    raise FramingError(f"header {name!r} runs past its block")
                at += 2 + length
                value = raw if kind == 6 else raw.decode("utf-8")
            elif kind == 9:
                value = uuid.UUID(bytes=bytes(block[at : at + 16]))
                at += 16
            else:
                raise FramingError(f"header {name!r} has unknown value type {kind}")
            out[name] = value
    except (IndexError, struct.error, UnicodeDecodeError, ValueError) as error:
        if isinstance(error, FramingError):
            raise
        raise FramingError(f"a header block that does not parse: {error}") from None
    if at != len(block):
        raise FramingError("the header block runs past its length")
    return out


class Decoder:
    """Bytes in, whole messages out; what is left over waits for the next piece."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of a message not yet whole (a body that ends with some was cut)."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[Message]:
        self._buffer += data
        out: list[Message] = []
        while len(self._buffer) >= PRELUDE:
            total, length, prelude_crc = struct.unpack(">III", self._buffer[:PRELUDE])
            if _crc(bytes(self._buffer[:8])) != prelude_crc:
                raise FramingError("the prelude's CRC does not match")
            if total > MAX_MESSAGE or length > MAX_HEADERS or total < PRELUDE + length + 4:
                raise FramingError(f"a message of {total} bytes with {length} bytes of headers is past the format's limits")
            if len(self._buffer) < total:
                break
            message = bytes(self._buffer[:total])
            del self._buffer[:total]
            (crc,) = struct.unpack(">I", message[-4:])
            if _crc(message[:-4]) != crc:
                raise FramingError("the message's CRC does not match")
            out.append(Message(_headers(message[PRELUDE : PRELUDE + length]), message[PRELUDE + length : -4]))
        return out
