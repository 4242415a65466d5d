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

from collections.abc import Sequence

from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config
from eukhe.memory.records import MergeLine, Message, NodeLine, StoreError
from eukhe.memory.text import size
from eukhe.memory.view import Node, first, last


class FoldError(StoreError):
    """The merge lines do not fold into a view: the message says which line and why."""


def fold(t: int, merges: Sequence[MergeLine]) -> tuple[list[Node], bool]:
    """The view of a chat of ``t`` messages from its merge lines (log order), and the shrinking
    flag of the last one."""
    previous = 0
    made: list[tuple[int, int, int, Node]] = []
    for index, line in enumerate(merges):
        if not previous < line.t <= t:
            raise FoldError(f"merge line {index + 1} at t={line.t} follows one at t={previous}, in a chat of {t} messages")
        previous = line.t
        for node in line.lines:
            if node[0] < 1 or last(node) >= line.t:
                raise FoldError(f"merge line {index + 1} at t={line.t} names {node}, which is no merge of its messages")
            made.append((first(node), -node[0], index, node))
    made.sort()
    view: list[Node] = []
    position = 0
    outer: tuple[int, Node] | None = None
    for start, _level, index, node in made:
        if start < position:
            assert outer is not None
            if index >= outer[0] or last(node) > last(outer[1]):
                raise FoldError(f"merge line {index + 1} names {node}, inside {outer[1]} merged before it")
            continue
        view.extend((0, i) for i in range(position, start))
        view.append(node)
        position = last(node) + 1
        outer = (index, node)
    view.extend((0, i) for i in range(position, t))
    return view, bool(merges) and merges[-1].open


def _complete(texts: dict[Node, str], node: Node, wrote: list[NodeLine | MergeLine]) -> None:
    """Build the free parents above ``node`` that a crash cut (rule 12). ``texts`` holds the
    built nodes' lines (a line of 0 bytes is no built node)."""
    while size(texts.get((node[0], node[1] ^ 1), "")) > 0:
        up = (node[0] + 1, node[1] >> 1)
        if size(texts.get(up, "")) > 0:
            return
        left, right = (node[0], node[1] & ~1), (node[0], node[1] | 1)
        joined = texts[left] + "\n" + texts[right]
        if size(joined) > NODE:
            return
        texts[up] = joined
        wrote.append(NodeLine(up, joined))
        node = up


def reopen(config: Config, messages: Sequence[Message], tree: Sequence[NodeLine | MergeLine]) -> tuple[Chat, list[NodeLine | MergeLine]]:
    """The planner of a chat reopened from its log, and the lines the reopening wrote."""
    t = len(messages)
    texts: dict[Node, str] = {}
    built: list[tuple[Node, str]] = []
    merges: list[MergeLine] = []
    newest: Node | None = None
    for record in tree:
        if isinstance(record, NodeLine):
            node = record.node
            if node in texts or (node[0] == 0 and node[1] >= t) or (node[0] > 0 and last(node) >= t):
                raise FoldError(f"node {node} logged twice or beyond the chat's {t} messages")
            texts[node] = record.text
            built.append((node, record.text))
            newest = node
        else:
            merges.append(record)
    wrote: list[NodeLine | MergeLine] = []
    if newest is not None:
        _complete(texts, newest, wrote)
    for i, message in enumerate(messages):
        if size(texts.get((0, i), "")) == 0 and size(message.text) <= NODE:
            texts[(0, i)] = message.text
            wrote.append(NodeLine((0, i), message.text))
            _complete(texts, (0, i), wrote)
    for record in wrote:
        assert isinstance(record, NodeLine)
        built.append((record.node, record.text))
    nodes, shrinking = fold(t, merges)
    gap = shrinking and merges[-1].t < t
    chat = Chat(config)
    chat.restore([m.text for m in messages], built, nodes, shrinking, fit=gap)
    if gap:
        before = set(nodes)
        wrote.append(MergeLine(tuple(n for n in chat.view.nodes if n not in before), chat.open, t))
    return chat, wrote
