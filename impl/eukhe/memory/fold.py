"""The view folded from the logged merges, and the planner a restart reopens (memory.md rule 25,
F1, D1, D7, D8; the model is ``bend.optchat.fold``, the same rules read beside the seed).

``fold`` builds the view of a chat of ``t`` messages from its merge lines without replaying them
one by one: tree nodes nest or are disjoint, so the view is every message line covered by the
outermost merged line over it. A merge line is checked as the replay would check it: in order of
``t`` (one per message at most, after its message), naming nodes that end before ``t``, and never
a node inside a line an earlier merge already made (the replay could not merge it). The result
is the replay's view (the law ``store_fold_is_live`` holds it to the model's replay). Cost: one sort
of the merged lines, one pass over the messages.

``reopen`` gives the production planner (``eukhe.memory.chat.Chat``) the state the model's
``reopen`` gives: the built nodes, the folded view with each line's size, the shrinking flag of
the last merge line (F1), the free nodes a crash cut built again (rule 12), the batch of a
shrinking view's gap run (D8), the compaction view merged to its floor once (D7), unbuilt
message nodes queued oldest first, ready merges in the order they became ready, and the first
calls started. It returns the lines it wrote for the store to log.

The planner takes that state through its one public way in, ``Chat.restore``: this module gives
it the messages, the built nodes in log order (then the ones the reopening built), the folded
view and the shrinking flag, and whether the gap run is due; the planner sizes the lines, fits,
and fills its queues.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import chain, islice

import numpy as np

from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config, put
from eukhe.memory.index import MessageLog, TreeLog
from eukhe.memory.records import MergeLine, Message, NodeLine, StoreError
from eukhe.memory.text import size
from eukhe.memory.view import Node, last


class FoldError(StoreError):
    """The merge lines do not fold into a view: the message says which line and why."""


def fold(t: int, merges: Sequence[MergeLine]) -> tuple[list[Node], bool]:
    """The view of a chat of ``t`` messages from its merge lines (log order), and the shrinking
    flag of the last one. The merged lines are checked and sorted as arrays (one sort of every
    line a merge made: a chat of 10^6 messages has about 10^6 of them)."""
    previous = 0
    late = len(merges)
    for index, line in enumerate(merges):
        if not previous < line.t <= t:
            late = index
            break
        previous = line.t
    counts = [len(line.lines) for line in merges[:late]]
    try:
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(line.lines for line in merges[:late])), dtype=np.int64, count=2 * sum(counts))
    except OverflowError:  # a number no node has: found and named below
        flat = np.array([min(x, t + 1) for line in merges[:late] for node in line.lines for x in node], dtype=np.int64)
    levels, indexes = flat[0::2], flat[1::2]
    which = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    ends = np.array([line.t for line in merges[:late]], dtype=np.int64)[which]
    level = np.clip(levels, 0, 32)
    firsts = np.clip(indexes, 0, t + 1) << level
    lasts = ((np.clip(indexes, 0, t + 1) + 1) << level) - 1
    wrong = np.flatnonzero((levels < 1) | (levels > 32) | (indexes > t) | (lasts >= ends))  # no merge of its messages
    if len(wrong) and (late == len(merges) or which[wrong[0]] < late):
        k = int(wrong[0])
        index = int(which[k])
        node = merges[index].lines[k - int(sum(counts[:index]))]
        raise FoldError(f"merge line {index + 1} at t={merges[index].t} names {node}, which is no merge of its messages")
    if late < len(merges):
        before = merges[late - 1].t if late else 0
        raise FoldError(f"merge line {late + 1} at t={merges[late].t} follows one at t={before}, in a chat of {t} messages")
    order = np.lexsort((which, -levels, firsts))
    firsts, lasts, levels, indexes, which = firsts[order], lasts[order], levels[order], indexes[order], which[order]
    reach = np.maximum.accumulate(lasts)
    inner = np.concatenate((np.zeros(min(1, len(order)), dtype=bool), firsts[1:] <= reach[:-1]))
    outer = np.maximum.accumulate(np.where(inner, 0, np.arange(len(order))))
    clash = np.flatnonzero(inner & ((which >= which[outer]) | (lasts > lasts[outer])))
    if len(clash):
        k = int(clash[0])
        node, over = (int(levels[k]), int(indexes[k])), (int(levels[outer[k]]), int(indexes[outer[k]]))
        raise FoldError(f"merge line {int(which[k]) + 1} names {node}, inside {over} merged before it")
    view: list[Node] = []
    position = 0
    for k in np.flatnonzero(~inner).tolist():
        start = int(firsts[k])
        view.extend((0, i) for i in range(position, start))
        view.append((int(levels[k]), int(indexes[k])))
        position = int(lasts[k]) + 1
    view.extend((0, i) for i in range(position, t))
    return view, bool(merges) and merges[-1].open


class _Built:
    """The built nodes of a log: their sizes as the planner's rows, their places in the build
    order, and their lines (read from disk for a store's log, the reopening's own in ``extra``)."""

    def __init__(self, tree: Sequence[NodeLine | MergeLine], t: int) -> None:
        self.extra: dict[Node, str] = {}
        self.merges: list[MergeLine]
        self.on_disk: Callable[[Node], str] | None
        if isinstance(tree, TreeLog):
            if tree.problem is not None:
                raise FoldError(tree.problem)
            self.rows, self.order, self.merges, self.newest = tree.rows, tree.order, tree.merges, tree.newest
            self.count = len(tree) - len(tree.merges)
            self.on_disk = tree.text
            return
        self.rows, self.order, self.merges, self.newest, self.count, self.on_disk = [[]], [array("q")], [], None, 0, None
        for record in tree:
            if isinstance(record, NodeLine):
                node = record.node
                if node in self.extra or last(node) >= t:
                    raise FoldError(f"node {node} logged twice or beyond the chat's {t} messages")
                self.add(node, record.text)
                self.newest = node
            else:
                self.merges.append(record)

    def add(self, node: Node, line: str) -> None:
        put(self.rows, self.order, node, size(line), self.count)
        self.extra[node] = line
        self.count += 1

    def size(self, node: Node) -> int:
        level, i = node
        if level >= len(self.rows):
            return 0
        row = self.rows[level]
        return row[i] if i < len(row) else 0

    def text(self, node: Node) -> str:
        line = self.extra.get(node)
        if line is not None:
            return line
        assert self.on_disk is not None, f"node {node} is built"
        return self.on_disk(node)


def _complete(built: _Built, node: Node, wrote: list[NodeLine | MergeLine]) -> None:
    """Build the free parents above ``node`` that a crash cut (rule 12). A line of 0 bytes is no
    built node."""
    while built.size((node[0], node[1] ^ 1)) > 0:
        up = (node[0] + 1, node[1] >> 1)
        if built.size(up) > 0:
            return
        left, right = (node[0], node[1] & ~1), (node[0], node[1] | 1)
        if built.size(left) + 1 + built.size(right) > NODE:
            return
        joined = built.text(left) + "\n" + built.text(right)
        built.add(up, joined)
        wrote.append(NodeLine(up, joined))
        node = up


def reopen(config: Config, messages: Sequence[Message], tree: Sequence[NodeLine | MergeLine]) -> tuple[Chat, list[NodeLine | MergeLine]]:
    """The planner of a chat reopened from its log, and the lines the reopening wrote. From a
    store's logs (``MessageLog``, ``TreeLog``) nothing is decoded but the merge lines and the
    lines of unbuilt messages: the planner reads other texts from disk when it needs them."""
    t = len(messages)
    built = _Built(tree, t)
    message_at: Callable[[int], str] = messages.text if isinstance(messages, MessageLog) else (lambda i: messages[i].text)
    wrote: list[NodeLine | MergeLine] = []
    if built.newest is not None:
        _complete(built, built.newest, wrote)
    row0 = built.rows[0]
    known = min(len(row0), t)
    unbuilt = np.flatnonzero(np.fromiter(islice(row0, known), dtype=np.int64, count=known) == 0).tolist() + list(range(known, t))
    for i in unbuilt:
        text = message_at(i)
        if size(text) <= NODE:
            built.add((0, i), text)
            wrote.append(NodeLine((0, i), text))
            _complete(built, (0, i), wrote)
    nodes, shrinking = fold(t, built.merges)
    gap = shrinking and built.merges[-1].t < t
    chat = Chat(config)
    chat.restore_rows(t, built.rows, built.order, built.count, nodes, shrinking, gap, message_at, built.on_disk)
    chat.texts = built.extra
    if not isinstance(messages, MessageLog):
        chat.messages, chat.base, chat.message_at = [m.text for m in messages], 0, None
    if gap:
        before = set(nodes)
        wrote.append(MergeLine(tuple(n for n in chat.view.nodes if n not in before), chat.open, t))
    return chat, wrote
