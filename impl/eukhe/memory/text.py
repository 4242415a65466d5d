"""Byte sizes, the cut at a character boundary and newline flattening (memory.md rules 16, 36)."""

from __future__ import annotations

from eukhe.memory import NODE


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut(text: str, limit: int = NODE) -> str:
    """At most ``limit`` bytes of ``text``, never splitting a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def flatten(text: str) -> str:
    """Each newline (\\r\\n, \\r or \\n) becomes one space."""
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
