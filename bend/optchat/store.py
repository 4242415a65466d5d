"""The built nodes, as the seed keeps them: a binary trie per level keyed by the bits of ``i``,
lowest bit first (memory.md "Lists, not arrays": sparse, grow-only, lookup ~20 steps).

A trie is ``None`` (empty) or ``(value, zero, one)``: the value of the key whose bits end here,
and the subtries for the next bit 0 and 1. Key 0 is the root (no bits); key ``i`` follows its
bits lowest first until none is left. Inserting copies the path (persistent, immutable).
"""

from __future__ import annotations

Trie = tuple[object, "Trie", "Trie"] | None


def lookup(trie: Trie, key: int) -> object:
    """The value at ``key``, or None."""
    while trie is not None:
        if key == 0:
            return trie[0]
        trie = trie[1] if key & 1 == 0 else trie[2]
        key >>= 1
    return None


def insert(trie: Trie, key: int, value: object) -> Trie:
    """The trie with ``key`` bound to ``value`` (path copied)."""
    here = trie if trie is not None else (None, None, None)
    if key == 0:
        return (value, here[1], here[2])
    if key & 1 == 0:
        return (here[0], insert(here[1], key >> 1, value), here[2])
    return (here[0], here[1], insert(here[2], key >> 1, value))

