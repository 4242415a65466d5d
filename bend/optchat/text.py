"""Texts: byte sizes, the cut at a character boundary, flattening, and the scenario texts.

Sizes are UTF-8 bytes, never tokens (OPTCHAT.md). ``cut`` keeps at most ``limit`` bytes without
splitting a character (memory.md rule 36, D9). ``flatten`` turns every newline (``\\r\\n``,
``\\r`` or ``\\n``) into one space (rule 16).

``filler(tag, size)`` is the scenario text of exactly ``size`` bytes: the bridge's scenario
files carry sizes, and both sides make the same texts from them. It has every kind of newline
and multi-byte characters, so flattening and cutting are exercised.
"""

from __future__ import annotations

NODE = 512
PLACEHOLDER = "(not summarized yet: zoom it)"

_PATTERN = "alpha beta\r\ngamma\rdelta\nepsilon ζήτα ø — «ok»; 𝄞 end. "
_BASE = _PATTERN * (40_000 // len(_PATTERN.encode("utf-8")) + 2)


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def cut(text: str, limit: int = NODE) -> str:
    """At most ``limit`` bytes of ``text``, cut at a character boundary.

    pre: limit >= 0
    post: size(__return__) <= limit and text.startswith(__return__)
    post: __return__ == text or size(__return__) > limit - 4
    """
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def flatten(text: str) -> str:
    """Every newline (\\r\\n, \\r, \\n) becomes one space (rule 16).

    post: chr(10) not in __return__ and chr(13) not in __return__
    post: len(__return__) <= len(text)
    """
    return text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


def filler(tag: str, length: int) -> str:
    """A scenario text of exactly ``length`` bytes (``length`` >= 1), starting with ``tag``."""
    text = cut(tag + " " + _BASE, length)
    return text + "." * (length - size(text))


def line_size(node: tuple[int, int], base: int, spread: int) -> int:
    """The size of the line a never-late compactor writes for ``node`` in a scenario (1..512)."""
    return max(1, min(NODE, base + (node[1] * 7 + node[0] * 13) % max(1, spread)))
