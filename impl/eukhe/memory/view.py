"""The view and its batched fit, built for chats of millions of messages (memory.md §3).

Nodes ``(l, i)`` cover ``[i*2^l, (i+1)*2^l)`` and are named ``id+n`` (rule 11). The view keeps
its lines in two parallel lists (node, size) and its byte total incrementally; a message
appends in O(1), a built message line is resized through a position index.

``fit`` (rules 19, 23, 24) merges the most due pair whose parent is built until the view is at
most the budget. The message count ``T`` is fixed during a fit, so the due order is a number
per pair: ``(T + 1 - first) / 2^l`` (the seed's production form: the order of
``(T - last) / 2^l`` shifted by 2), kept exact as the integer ``(T + 1 - first) << (64 - l)``.
The candidate pairs are read once into a heap; each merge removes one line from a linked list
and offers at most one new pair (the parent and its sibling), so a batch costs
O(lines + merges log lines), never a rescan of the view per merge.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Iterator, Sequence

from eukhe.memory import PLACEHOLDER
from eukhe.memory.text import flatten

Node = tuple[int, int]
_SHIFT = 64


def first(node: Node) -> int:
    return node[1] << node[0]


def last(node: Node) -> int:
    return ((node[1] + 1) << node[0]) - 1


def name(node: Node) -> str:
    return f"{node[1] << node[0]}+{1 << node[0]}"


def parent(node: Node) -> Node:
    return (node[0] + 1, node[1] >> 1)


def due_key(left: Node, t: int) -> int:
    """The due of the pair whose left line is ``left``, as an exact integer at a fixed ``t``."""
    return (t + 1 - (left[1] << left[0])) << (_SHIFT - left[0])


class View:
    """Lines oldest first, each a node with its byte size (the built line's, or the
    placeholder's)."""

    __slots__ = ("nodes", "sizes", "total", "_where", "first_change")

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.sizes: list[int] = []
        self.total = 0
        self._where: dict[Node, int] = {}
        self.first_change = -1

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def copy(self) -> View:
        other = View()
        other.nodes = list(self.nodes)
        other.sizes = list(self.sizes)
        other.total = self.total
        other._where = dict(self._where)
        return other

    def append(self, node: Node, length: int) -> None:
        """A message appends its line (rule 22)."""
        if node[0] == 0:
            self._where[node] = len(self.nodes)
        self.nodes.append(node)
        self.sizes.append(length)
        self.total += length

    def resize(self, node: Node, length: int) -> None:
        """``node``'s line was built: its size becomes the line's."""
        position = self._where.pop(node, -1)
        if position >= 0:
            self.total += length - self.sizes[position]
            self.sizes[position] = length

    def fit(self, t: int, levels: Sequence[array[int]], budget: int) -> int:
        """Merge the most due built-parent pair, oldest among equals, until at most ``budget``
        bytes or no pair can merge. ``levels[l][i]`` is the size of node ``(l, i)``'s line, 0
        when it is not built. Returns the number of merges; ``first_change`` is the first line
        the batch rewrote (-1 when none)."""
        self.first_change = -1
        if self.total <= budget:
            return 0
        nodes, sizes = self.nodes, self.sizes
        count = len(nodes)
        depth = len(levels)

        def built(level: int, i: int) -> int:
            if level >= depth:
                return 0
            row = levels[level]
            return row[i] if i < len(row) else 0

        heap: list[tuple[int, int, int, Node]] = []
        for k in range(count - 1):
            a = nodes[k]
            al, ai = a
            if ai & 1:
                continue
            b = nodes[k + 1]
            if b[0] == al and b[1] == ai + 1 and built(al + 1, ai >> 1):
                heap.append((-due_key(a, t), ai << al, k, a))
        if not heap:
            return 0
        heapq.heapify(heap)
        after = list(range(1, count + 1))
        before = list(range(-1, count - 1))
        alive = [True] * count
        total = self.total
        merges = 0
        lowest = count
        while total > budget and heap:
            _key, _first, k, left = heapq.heappop(heap)
            right = after[k]
            if not alive[k] or right >= count or nodes[k] != left:
                continue
            b = nodes[right]
            ul, ui = left[0] + 1, left[1] >> 1
            if not (b[0] == left[0] and b[1] == left[1] + 1):
                continue
            length = built(ul, ui)
            total += length - sizes[k] - sizes[right]
            up = (ul, ui)
            nodes[k] = up
            sizes[k] = length
            alive[right] = False
            nxt = after[right]
            after[k] = nxt
            if nxt < count:
                before[nxt] = k
            merges += 1
            if k < lowest:
                lowest = k
            if not built(ul + 1, ui >> 1):
                continue
            if ui & 1 == 0:
                if nxt < count and nodes[nxt] == (ul, ui + 1):
                    heapq.heappush(heap, (-due_key(up, t), ui << ul, k, up))
            else:
                prv = before[k]
                if prv >= 0 and nodes[prv] == (ul, ui - 1):
                    heapq.heappush(heap, (-due_key(nodes[prv], t), (ui - 1) << ul, prv, nodes[prv]))
        if merges:
            keep = [k for k in range(count) if alive[k]]
            self.first_change = sum(1 for k in keep if k < lowest)
            self.nodes = [nodes[k] for k in keep]
            self.sizes = [sizes[k] for k in keep]
            where = self._where
            self._where = {node: position for position, node in enumerate(self.nodes) if node in where}
        self.total = total
        return merges


def render_lines(nodes: list[Node], text: Callable[[Node], str | None]) -> list[str]:
    """One ``id+n|text`` line per node, newlines flattened, the placeholder for an unbuilt node
    (rules 15, 16, 18)."""
    out = []
    for node in nodes:
        body = text(node)
        out.append(f"{name(node)}|{flatten(PLACEHOLDER if body is None else body)}")
    return out


def render(nodes: list[Node], text: Callable[[Node], str | None]) -> str:
    """``<chat>``, the lines, ``</chat>`` (rule 15)."""
    return "<chat>\n" + "".join(line + "\n" for line in render_lines(nodes, text)) + "</chat>"


def pieces(nodes: list[Node], text: Callable[[Node], str | None], block: int = 4) -> tuple[str, str]:
    """The rendered view split at its cache mark, the end of the last whole block of ``block``
    lines (rule 29): the marked piece, then the rest."""
    lines = render_lines(nodes, text)
    whole = len(lines) // block * block
    marked = "<chat>\n" + "".join(line + "\n" for line in lines[:whole])
    return marked, "".join(line + "\n" for line in lines[whole:]) + "</chat>"
