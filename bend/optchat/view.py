"""The view: lines oldest first, each a tree node with its byte size (memory.md §3, rules 14-24).

A line is ``(node, size)``: the built line's size, or the placeholder's while the node waits
for its summary. Only the sizes live in the view; texts are read from the built store when the
view is rendered.

Merge order (rule 19, the seed's "Due compare without division"): for sibling lines
``(l, 2k), (l, 2k+1)`` in a chat of ``T`` messages, ``due = (T - last) / 2^l`` with ``last`` the
pair's last message. The comparison is cross-multiplied, with ``e = last + 1``::

    (T - last_a)/2^la > (T - last_b)/2^lb  <=>  (T+1)*2^lb + e_b*2^la > (T+1)*2^la + e_a*2^lb

``fit`` merges the most due pair whose parent is built, the oldest pair among equals, and
repeats until the view is at most ``budget`` bytes or no pair can merge (rules 19, 23, 24).
Each merge reads every pair and removes one line: lists, as the seed explains.
"""

from __future__ import annotations

from collections.abc import Callable

from bend.optchat.node import Node, first, name, parent, siblings
from bend.optchat.text import PLACEHOLDER, flatten, size

Line = tuple[Node, int]
View = tuple[Line, ...]
Built = Callable[[Node], "int | None"]
Order = Callable[[Node, Node, int], bool]

PLACEHOLDER_BYTES = size(PLACEHOLDER)
BLOCK = 4


def more_due(a: Node, b: Node, t: int) -> bool:
    """The pair whose left line is ``a`` is strictly more due than the pair whose left line is
    ``b`` in a chat of ``t`` messages: due from the pair's *last* message (rule 19)."""
    la, lb = a[0], b[0]
    ea, eb = (a[1] + 2) << la, (b[1] + 2) << lb
    return ((t + 1) << lb) + (eb << la) > ((t + 1) << la) + (ea << lb)


def more_due_first(a: Node, b: Node, t: int) -> bool:
    """The classic bug (rule 21, §7.1): due measured from the pair's *first* message,
    ``(T - first)/2^l``, cross-multiplied."""
    la, lb = a[0], b[0]
    return (t << lb) + (first(b) << la) > (t << la) + (first(a) << lb)


def view_bytes(view: View) -> int:
    total = 0
    for _node, length in view:
        total += length
    return total


def line_bytes(node: Node, built: Built) -> int:
    """A line's size: the built line's, or the placeholder's (rule 18)."""
    length = built(node)
    return PLACEHOLDER_BYTES if length is None else length


def mergeable(view: View, k: int, built: Built) -> bool:
    """Lines ``k`` and ``k+1`` are siblings and their parent is built (rules 19, 24)."""
    a, b = view[k][0], view[k + 1][0]
    return siblings(a, b) and built(parent(a)) is not None


def most_due(view: View, t: int, built: Built, order: Order = more_due) -> int:
    """The index of the left line of the most due mergeable pair (oldest among equals), or -1."""
    best = -1
    for k in range(len(view) - 1):
        if mergeable(view, k, built) and (best < 0 or order(view[k][0], view[best][0], t)):
            best = k
    return best


def merge_at(view: View, k: int, built: Built) -> View:
    """Replace lines ``k`` and ``k+1`` with their parent (rule 11)."""
    node = parent(view[k][0])
    return view[:k] + ((node, line_bytes(node, built)),) + view[k + 2 :]


def merge_step(view: View, t: int, built: Built, order: Order = more_due) -> View:
    """One merge: the most due mergeable pair becomes its parent; no pair, no change."""
    k = most_due(view, t, built, order)
    return view if k < 0 else merge_at(view, k, built)


def fit(view: View, t: int, built: Built, budget: int, order: Order = more_due) -> tuple[View, int]:
    """Merge the most due pair whose parent is built until the view is at most ``budget`` bytes
    or no pair can merge (rules 19, 23, 24). Returns the view and the number of merges."""
    merges = 0
    total = view_bytes(view)
    while total > budget:
        k = most_due(view, t, built, order)
        if k < 0:
            break
        merged = merge_at(view, k, built)
        total += merged[k][1] - view[k][1] - view[k + 1][1]
        view = merged
        merges += 1
    return view, merges


def grow(view: View, node: Node, length: int) -> View:
    """A message appends its line; nothing else changes (rule 22)."""
    return view + ((node, length),)


def resize(view: View, node: Node, length: int) -> View:
    """The view after ``node``'s line was built with ``length`` bytes."""
    return tuple((n, length) if n == node else (n, old) for n, old in view)


def render_lines(nodes: tuple[Node, ...], text: Callable[[Node], str | None]) -> list[str]:
    """``id+n|text`` per line, newlines flattened, the placeholder for an unbuilt node (rules 15,
    16, 18)."""
    out = []
    for node in nodes:
        body = text(node)
        out.append(f"{name(node)}|{flatten(PLACEHOLDER if body is None else body)}")
    return out


def render(nodes: tuple[Node, ...], text: Callable[[Node], str | None]) -> str:
    """``<chat>``, one line per node, ``</chat>`` (rule 15)."""
    return "<chat>\n" + "".join(line + "\n" for line in render_lines(nodes, text)) + "</chat>"


def pieces(nodes: tuple[Node, ...], text: Callable[[Node], str | None]) -> tuple[str, str]:
    """The rendered view split at its cache mark: the first piece ends at the last whole block
    of 4 lines (rule 29); the second holds the rest."""
    lines = render_lines(nodes, text)
    whole = len(lines) // BLOCK * BLOCK
    marked = "<chat>\n" + "".join(line + "\n" for line in lines[:whole])
    rest = "".join(line + "\n" for line in lines[whole:]) + "</chat>"
    return marked, rest
