"""The rollback push (memory.md §3.2, rule 20; OPTCHAT.md "Which lines merge").

The list holds entries newest first, each ``(state, keep)``. Pushing a state: if the newest
``keep`` is 0 it becomes 1 and the new state is dropped; if it is 1 the new state becomes the
newest entry with bit 0 and the old newest entry is pushed the same way into the rest. A
binary counter: 0 absorbs, 1 carries.

Read as a view, each entry starts a line that runs to the next newer entry (the newest to
``t``). Under push alone the list is a bijective binary counter (the seed's proof of
push_agrees_always): with bits ``d_j`` newest first, ``T = t + 1 = sum (1 + d_j) 2^j`` and entry
``j`` is one line of level ``j + d_j``.
"""

from __future__ import annotations

from bend.optchat.node import Node

Entry = tuple[int, int]
Push = tuple[Entry, ...]


def push(entries: Push, state: int) -> Push:
    """Push ``state`` onto the list (newest first)."""
    if not entries:
        return ((state, 0),)
    newest, keep = entries[0]
    if keep == 0:
        return ((newest, 1),) + entries[1:]
    return ((state, 0),) + push(entries[1:], newest)


def pushes(t: int) -> Push:
    """The list after pushing the states ``0..t``."""
    entries: Push = ()
    for state in range(t + 1):
        entries = push(entries, state)
    return entries


def ranges(entries: Push, t: int) -> tuple[tuple[int, int], ...]:
    """The lines the list stands for, oldest first, as ``(first, count)``: each entry runs to
    the next newer one, the newest to ``t``."""
    out = []
    end = t + 1
    for state, _keep in entries:
        out.append((state, end - state))
        end = state
    return tuple(reversed(out))


def digits(total: int) -> tuple[int, ...]:
    """The bijective binary digits ``d_j`` (each 0 or 1, lowest first) with
    ``total = sum (1 + d_j) 2^j`` (``total`` >= 0)."""
    out = []
    while total > 0:
        if total % 2 == 1:
            out.append(0)
            total = (total - 1) // 2
        else:
            out.append(1)
            total = (total - 2) // 2
    return tuple(out)


def from_digits(ds: tuple[int, ...]) -> Push:
    """The push list of the count ``sum (1 + d_j) 2^j``, newest first: entry ``j`` starts one line
    of level ``j + d_j`` with keep bit ``d_j`` (the digit correspondence)."""
    starts = []
    start = 0
    for j in reversed(range(len(ds))):
        starts.append((start, ds[j]))
        start += 1 << (j + ds[j])
    return tuple(reversed(starts))


def digit_view(ds: tuple[int, ...]) -> tuple[Node, ...]:
    """The view the digits stand for, oldest first: entry ``j`` is the node of level ``j + d_j``
    that starts where the older entries end."""
    nodes = []
    start = 0
    for j in reversed(range(len(ds))):
        level = j + ds[j]
        nodes.append((level, start >> level))
        start += 1 << level
    return tuple(nodes)
