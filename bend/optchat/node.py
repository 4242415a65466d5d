"""Tree nodes of the chat memory (memory.md rule 11, §2 The tree).

A node ``(l, i)`` covers the ``2^l`` messages ``[i*2^l, (i+1)*2^l)``; it is named ``id+n``
(first message, count): ``(3, 5)`` is ``40+8``. Its parent drops the lowest bit of ``i``;
its children are ``(l-1, 2i)`` and ``(l-1, 2i+1)``. Zoom arithmetic (rule 52): ``zoom(id, n)``
names a node when ``n`` is a power of 2, ``id`` is a multiple of ``n`` and ``id + n <= T``.
"""

from __future__ import annotations

Node = tuple[int, int]


def first(node: Node) -> int:
    """The node's first message."""
    return node[1] << node[0]


def last(node: Node) -> int:
    """The node's last message."""
    return ((node[1] + 1) << node[0]) - 1


def count(node: Node) -> int:
    return 1 << node[0]


def name(node: Node) -> str:
    """``id+n`` (rule 11)."""
    return f"{first(node)}+{count(node)}"


def parent(node: Node) -> Node:
    """The node one level up that covers this one.

    pre: 0 <= node[0] <= 62 and node[1] >= 0
    post: first(__return__) <= first(node) and last(node) <= last(__return__)
    post: count(__return__) == 2 * count(node)
    """
    return (node[0] + 1, node[1] >> 1)


def sibling(node: Node) -> Node:
    return (node[0], node[1] ^ 1)


def children(node: Node) -> tuple[Node, Node]:
    """The two halves of a node, left then right.

    pre: 1 <= node[0] <= 62 and node[1] >= 0
    post: first(__return__[0]) == first(node) and last(__return__[1]) == last(node)
    post: last(__return__[0]) + 1 == first(__return__[1])
    post: siblings(*__return__) and parent(__return__[0]) == node
    """
    return ((node[0] - 1, 2 * node[1]), (node[0] - 1, 2 * node[1] + 1))


def siblings(a: Node, b: Node) -> bool:
    """``a`` is a left child and ``b`` its right sibling."""
    return a[0] == b[0] and a[1] % 2 == 0 and b[1] == a[1] + 1


def zoom_node(t: int, ident: int, n: int) -> Node | str:
    """The node ``zoom(ident, n)`` opens in a chat of ``t`` messages, or the reason it names none
    (rule 52: n a power of 2, id a multiple of n, id + n <= T).

    pre: 0 <= t and n <= 2 ** 62
    post: isinstance(__return__, str) or (first(__return__) == ident and count(__return__) == n and last(__return__) < t)
    """
    if n < 1 or n & (n - 1) != 0:
        return f"n={n} is not a power of 2"
    if ident < 0 or ident % n != 0:
        return f"id={ident} is not a multiple of n={n}"
    if ident + n > t:
        return f"{ident}+{n} runs past the chat's {t} messages"
    level = n.bit_length() - 1
    return (level, ident // n)
