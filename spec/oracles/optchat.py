"""The chat memory's judges, written from memory.md and OPTCHAT.md, never from bend/optchat or
eukhe.memory: node arithmetic (rule 11, §2 The tree), byte sizes and the cut (rule 36, D9),
the bijective binary counter of the seed's push_agrees_always proof, and the compaction
context (rules 34, 41, F2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Node = tuple[int, int]

# memory.md rule 12 / OPTCHAT.md "Tree": a node is at most 512 bytes.
NODE = 512
# memory.md rule 18 / OPTCHAT.md "View": the placeholder of a message not yet summarized.
PLACEHOLDER = "(not summarized yet: zoom it)"
# memory.md D5: the third failed call builds the node from its input.
FAILURES = 3


def size(text: str) -> int:
    """Sizes are UTF-8 bytes, never tokens (OPTCHAT.md)."""
    return len(text.encode("utf-8"))


PLACEHOLDER_BYTES = size(PLACEHOLDER)


def cut(text: str, limit: int = NODE) -> str:
    """The longest prefix of whole characters within ``limit`` bytes (rule 36, D9), walked
    character by character."""
    total = 0
    for index, char in enumerate(text):
        total += size(char)
        if total > limit:
            return text[:index]
    return text


# -- the tree (rule 11; OPTCHAT.md "Tree": node(l, i) covers the 2^l messages from i*2^l) ---------


def first(node: Node) -> int:
    return int(node[1] * 2 ** node[0])


def last(node: Node) -> int:
    return first(node) + int(2 ** node[0]) - 1


def name(node: Node) -> str:
    """``id+n`` (first message, count): node(3, 5) is 40+8."""
    return f"{first(node)}+{2 ** node[0]}"


def parent(node: Node) -> Node:
    """node(l, i) is the merge of node(l-1, 2i) and node(l-1, 2i+1)."""
    return (node[0] + 1, node[1] // 2)


def siblings(a: Node, b: Node) -> bool:
    """``a`` is node(l-1, 2i) and ``b`` node(l-1, 2i+1) for some parent node(l, i)."""
    return a[0] == b[0] and a[1] % 2 == 0 and b[1] == a[1] + 1


def covers(nodes: Sequence[Node], t: int) -> bool:
    """The lines cover 0..t-1, each message once, contiguous, oldest first, each a tree node."""
    start = 0
    for level, i in nodes:
        if level < 0 or i < 0 or first((level, i)) != start:
            return False
        start = last((level, i)) + 1
    return start == t


def context(cview: Sequence[Node], node: Node, built: Callable[[Node], bool]) -> tuple[Node, ...]:
    """The lines a compaction of ``node`` sees (rules 34, 41, F2): the compaction view's lines
    that end before the message (a merge: at or before its last message), built only, up to
    the first that is not."""
    bound = first(node) - 1 if node[0] == 0 else last(node)
    out: list[Node] = []
    for line in cview:
        if last(line) > bound or not built(line):
            break
        out.append(line)
    return tuple(out)


# -- the seed's proof of push_agrees_always: the bijective binary counter ----------------------------


def digits(total: int) -> tuple[int, ...]:
    """The keep bits d_j (0 or 1, newest first) with total = sum (1 + d_j) 2^j."""
    out = []
    while total > 0:
        d = 0 if total % 2 == 1 else 1
        out.append(d)
        total = (total - 1 - d) // 2
    return tuple(out)


def value(ds: Sequence[int]) -> int:
    return sum((1 + d) * 2**j for j, d in enumerate(ds))


def increment(ds: Sequence[int]) -> tuple[int, ...]:
    """One push as the seed says it: 0 absorbs, 1 carries."""
    out = list(ds)
    for j, d in enumerate(out):
        if d == 0:
            out[j] = 1
            return tuple(out)
        out[j] = 0
    return tuple(out) + (0,)


def starts(ds: Sequence[int]) -> list[int]:
    """Where entry j's line starts: after every older (higher) entry's line of 2^(k + d_k)."""
    return [sum(2 ** (k + ds[k]) for k in range(j + 1, len(ds))) for j in range(len(ds))]


def entries(ds: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Push's list of the count, newest first: (state, keep) = (start of entry j's line, d_j)."""
    return tuple(zip(starts(ds), ds))


def view(ds: Sequence[int]) -> tuple[Node, ...]:
    """The view the digits stand for, oldest first: entry j is one line of level j + d_j."""
    s = starts(ds)
    return tuple((j + ds[j], s[j] // 2 ** (j + ds[j])) for j in reversed(range(len(ds))))


# -- the built store as memory.md "Lists, not arrays" lays it out ---------------------------------


def trie_get(trie: object, key: int) -> object:
    """The value at ``key`` in a binary trie keyed by the bits of ``key``, lowest bit first: a trie
    is empty (None) or (value, subtrie for bit 0, subtrie for bit 1); key 0 is the root."""
    bits = []
    while key:
        bits.append(key & 1)
        key //= 2
    node = trie
    for bit in bits:
        if node is None:
            return None
        assert isinstance(node, tuple)
        node = node[1 + bit]
    if node is None:
        return None
    assert isinstance(node, tuple)
    return node[0]


def built_line(levels: Sequence[object], node: Node) -> str | None:
    """The line stored for ``node``: one trie per level, keyed by i (the seed's layout)."""
    if node[0] >= len(levels):
        return None
    found = trie_get(levels[node[0]], node[1])
    return found if isinstance(found, str) else None


# -- the rendered view (rules 15, 16, 18, 29) -------------------------------------------------------


def flatten(text: str) -> str:
    """Rule 16: newlines become spaces; each newline (\\r\\n, \\r or \\n) is one space (the seed's
    test flatten_turns_every_newline_into_one_space), walked character by character."""
    out: list[str] = []
    k = 0
    while k < len(text):
        if text[k] == "\r" and k + 1 < len(text) and text[k + 1] == "\n":
            out.append(" ")
            k += 2
            continue
        out.append(" " if text[k] in "\r\n" else text[k])
        k += 1
    return "".join(out)


def rendered_lines(nodes: Sequence[Node], text: Callable[[Node], str | None]) -> list[str]:
    """Rule 15: one ``id+n|text`` line per node; rule 18: a node not built shows the placeholder."""
    return [name(node) + "|" + flatten(PLACEHOLDER if text(node) is None else str(text(node))) for node in nodes]


def rendered(nodes: Sequence[Node], text: Callable[[Node], str | None]) -> str:
    """Rule 15: ``<chat>``, the lines, ``</chat>``, each on a line of its own."""
    return "\n".join(["<chat>", *rendered_lines(nodes, text), "</chat>"])


def marked(nodes: Sequence[Node], text: Callable[[Node], str | None], block: int = 4) -> str:
    """Rule 29: the view in blocks of ``block`` lines, the cache mark on the last whole block: the
    rendered view up to the end of that block (``<chat>`` alone when no block is whole)."""
    lines = rendered_lines(nodes, text)
    whole = (len(lines) // block) * block
    return "\n".join(["<chat>", *lines[:whole]]) + "\n"


def due(left: Node, t: int) -> tuple[int, int]:
    """Rule 19: the due of the pair whose left line is ``left`` in a chat of ``t`` messages,
    (T - last) / 2^l with ``last`` the pair's last message, as a fraction (numerator, 2^l)."""
    pair_last = first(left) + 2 * 2 ** left[0] - 1
    return t - pair_last, 2 ** left[0]


# -- the planner's numbers (rules 23, 33, 39; D9 / H1) ---------------------------------------------

# rule 23: past 128,000 bytes one batch merges the view down to 64,000 bytes.
VIEW_CEILING, VIEW_FLOOR = 128_000, 64_000
# rule 33: the compaction view is merged to 16-32 KB.
COMPACTION_CEILING, COMPACTION_FLOOR = 32_000, 16_000
# rule 39: at most 8 concurrent calls.
JOBS = 8


def config_ok(jobs: int, ceiling: int, floor: int, cceiling: int, cfloor: int) -> bool:
    """A planner's settings the seed allows: 1..8 calls (rule 39), each floor between 0 and its
    ceiling (rules 23, 33: a batch merges from past the ceiling down to the floor)."""
    return 1 <= jobs <= JOBS and 0 <= floor <= ceiling and 0 <= cfloor <= cceiling


def line_ok(length: int) -> bool:
    """D9 / H1: every line is 1-512 bytes."""
    return 1 <= length <= NODE
