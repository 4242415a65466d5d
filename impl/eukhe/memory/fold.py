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

Nothing lost silently (issue 30). A crash loses at most the line it cut (rule 6: each line is
fsynced before the next is written), so a reopening from the store's logs refuses, naming the
file and the line, what no crash leaves:

- a node named twice or beyond the chat (``TreeLog.problem``); beyond the chat with the newest
  message line cut short: the message log lost its end (its node is logged after it);
- a node logged without a half before it (``TreeLog.lost``), a merge line naming a node no line
  logs: tree lines lost;
- a message of at most 512 bytes without its node line, but the last (rule 12 logs the node with
  its message; only a crash between the two writes leaves the last one without);
- a saved view (view.json, D1) that no history of this log shows: more messages than the log,
  a merged line no node line logs, or one the merge lines no longer make. view.json is replaced
  after the lines it shows are fsynced, so whatever survives of it is a view this log had.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import chain, islice
from pathlib import Path

import numpy as np

from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config, put
from eukhe.memory.index import MessageLog, TreeLog
from eukhe.memory.records import LostLines, MergeLine, Message, NodeLine, StoreError
from eukhe.memory.text import size
from eukhe.memory.view import Node, first, last


class FoldError(StoreError):
    """The merge lines do not fold into a view: the message says which line and why (``merge``:
    the number of the merge line, from 0, when one is named)."""

    def __init__(self, message: str, merge: int = -1) -> None:
        super().__init__(message)
        self.merge = merge


Built = Callable[[np.ndarray, np.ndarray], np.ndarray]


def fold(t: int, merges: Sequence[MergeLine], built: Built | None = None) -> tuple[list[Node], bool]:
    """The view of a chat of ``t`` messages from its merge lines (log order), and the shrinking
    flag of the last one. The merged lines are checked and sorted as arrays (one sort of every
    line a merge made: a chat of 10^6 messages has about 10^6 of them). ``built`` (levels,
    indexes -> whether each node is built) checks that every merged line is a built node."""
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
    if len(wrong):  # every line before ``late``: ``which`` counts only those
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
    if built is not None and len(levels):
        unbuilt = np.flatnonzero(~built(levels, indexes))
        if len(unbuilt):
            k = int(unbuilt[np.argmin(which[unbuilt])])  # the first merge line naming one
            index = int(which[k])
            node = (int(levels[k]), int(indexes[k]))
            raise FoldError(f"merge line {index + 1} at t={merges[index].t} names {node}, which no node line logs: tree lines were lost", merge=index)
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

    def __init__(self, tree: Sequence[NodeLine | MergeLine], t: int, messages: Sequence[Message] = ()) -> None:
        self.extra: dict[Node, str] = {}
        self.merges: list[MergeLine]
        self.on_disk: Callable[[Node], str] | None
        if isinstance(tree, TreeLog):
            if tree.problem is not None:
                raise FoldError(_problem(tree, messages))
            if tree.lost is not None:
                path, line = tree.where(tree.lost_at)
                raise LostLines(path, line, tree.lost)
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


def _problem(tree: TreeLog, messages: Sequence[Message]) -> str:
    """A node named twice or beyond the chat, with the file and line naming it; beyond the chat,
    what the message log lost."""
    assert tree.problem is not None
    path, line = tree.where(tree.problem_at)
    text = f"{path}: line {line}: {tree.problem}"
    node, t = tree.problem_node, tree.t
    if node is None or last(node) < t or not isinstance(messages, MessageLog):
        return text
    tail = messages.tail
    if tail.torn and tail.path is not None:
        return (
            f"{tail.path}: line {tail.torn}: the message line after message {t - 1} is cut short, yet {path}: line {line} "
            f"logs node {node} over it (a node line is logged after its message: no crash leaves this): the message log lost its end"
        )
    if t:
        end, number = messages.where(t - 1)
        return f"{text}; the messages end with message {t - 1} at {end}: line {number}: message lines were lost"
    return f"{text}; the message log holds none: message lines were lost"


def _unlogged(messages: MessageLog, tree: TreeLog, i: int) -> LostLines:
    path, line = messages.where(i)
    beside = tree.directory / path.name
    state = "is missing" if not beside.exists() else "does not hold it"
    return LostLines(
        path,
        line,
        f"message {i} has at most {NODE} bytes but no node line in {tree.directory} ({beside} {state}); a short message's node "
        "is logged right after it (rule 12), only the last message can lack it (a crash between the two writes): tree lines were lost",
    )


def unreached(saved: Sequence[Node], view: Sequence[Node], t: int, built: Callable[[Node], bool]) -> str | None:
    """Why ``saved`` (a view.json) is no view that a chat whose log folds to ``view`` (``t``
    messages) ever had, or None. A view this store saved covers messages 0..t'-1 (t' <= t), its
    merged lines are built, and each lies inside one line of any later view (views only append
    and merge). Lines that are no such cover (not contiguous from 0) are no evidence: None."""
    end = 0
    for level, i in saved:
        if not 0 <= level <= 62 or i << level != end:
            return None
        end = (i + 1) << level
    if end > t:
        return f"shows {end} messages, the log holds {t}: message lines were lost"
    starts = [first(n) for n in view]
    for node in saved:
        if node[0] > 0 and not built(node):
            return f"shows {node}, which no node line logs: tree lines were lost"
        k = bisect_right(starts, first(node)) - 1
        if k < 0 or last(view[k]) < last(node):
            return f"shows {node}, which the merge lines no longer make (the folded view has {view[k] if k >= 0 else None} there): a merge line was lost"
    return None


def reopen(
    config: Config, messages: Sequence[Message], tree: Sequence[NodeLine | MergeLine], saved: tuple[Path, Sequence[Node]] | None = None
) -> tuple[Chat, list[NodeLine | MergeLine]]:
    """The planner of a chat reopened from its log, and the lines the reopening wrote. From a
    store's logs (``MessageLog``, ``TreeLog``) nothing is decoded but the merge lines and the
    lines of unbuilt messages: the planner reads other texts from disk when it needs them; what
    no crash leaves is refused (the module's doc). ``saved``: view.json's path and its view, to
    check against the log."""
    t = len(messages)
    built = _Built(tree, t, messages)
    on_disk = isinstance(messages, MessageLog) and isinstance(tree, TreeLog)
    message_at: Callable[[int], str] = messages.text if isinstance(messages, MessageLog) else (lambda i: messages[i].text)
    try:  # the merge lines first: the view folds from them alone
        nodes, shrinking = fold(t, built.merges, tree.logged if isinstance(tree, TreeLog) else None)
    except FoldError as error:
        if error.merge < 0 or not isinstance(tree, TreeLog):
            raise
        path, line = tree.where(tree.merge_at(error.merge))
        raise LostLines(path, line, str(error)) from None
    wrote: list[NodeLine | MergeLine] = []
    if built.newest is not None:
        _complete(built, built.newest, wrote)
    row0 = built.rows[0]
    known = min(len(row0), t)
    unbuilt = np.flatnonzero(np.fromiter(islice(row0, known), dtype=np.int64, count=known) == 0).tolist() + list(range(known, t))
    for i in unbuilt:
        text = message_at(i)
        if size(text) <= NODE:
            if on_disk and i < t - 1:
                assert isinstance(messages, MessageLog) and isinstance(tree, TreeLog)
                raise _unlogged(messages, tree, i)
            built.add((0, i), text)
            wrote.append(NodeLine((0, i), text))
            _complete(built, (0, i), wrote)
    if saved is not None:
        why = unreached(saved[1], nodes, t, lambda node: built.size(node) > 0)
        if why is not None:
            raise LostLines(
                saved[0],
                1,
                f"{why} (the view is saved after the lines it shows are logged and fsynced); restore the lost lines, "
                "or if the logs are whole and view.json itself is wrong, delete view.json",
            )
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
