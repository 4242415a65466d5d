"""The chat memory on disk, as the reference model: what each event logs, the view folded from
the logged merges, and the chat a restart reopens (memory.md rules 1, 13, 25, F1, D1, D7, D8).

The log is one sequence of records in the order they were written (the files split it: message
lines go to ``main``, node and merge lines to ``tree``; view.json is a check, never the truth):

- ``("m", i, text)``: message ``i`` (rule 1);
- ``("n", l, i, text)``: node ``(l, i)`` was built with ``text`` (rule 13: once, never rebuilt);
- ``("b", lines, open, t)``: a batch ran at message count ``t`` (F1: every batch, also one that
  merged nothing); ``lines`` are the view lines the batch made, oldest first, each a built
  parent that replaces the lines it covers; ``open``: the view stayed above its floor.

Derived from memory.md D1 ("the view is folded from messages and tree/ merge lines and checked
against view.json; the fold replays the live view's exact merges in order: same parts, same
bytes; no recompute by another rule"), F1 (restart reads ``open`` from the last merge line) and
D8 (a crash between a message and its batch line: while shrinking, the restart sees the gap and
runs the batch; otherwise the batch runs at the next message, and a restart never runs a batch
alone). What a restart reopens beyond the view (derived, the seed is silent): calls that were
running are gone; unbuilt message nodes wait again oldest first; ready merges wait in the order
they became ready (the position of their later half's node line); failure counts start afresh;
no turn waits; the compaction view is the view merged to its floor once (D7). A message of at
most 512 bytes whose node line a crash cut is built again from its text at reopen, and so is a
free parent (rule 12): both are the same line the live chat built, with no model call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bend.optchat import chat as C
from bend.optchat import store
from bend.optchat.node import Node, first, last, parent, sibling
from bend.optchat.text import NODE, size
from bend.optchat.view import PLACEHOLDER_BYTES, View, fit, view_bytes


@dataclass(frozen=True)
class Msg:
    """A message line: message ``i`` with its text."""

    i: int
    text: str


@dataclass(frozen=True)
class Built:
    """A node line: ``node`` was built with ``text``."""

    node: Node
    text: str


@dataclass(frozen=True)
class Batch:
    """A merge line: the lines a batch made at message count ``t``, and the shrinking flag."""

    lines: tuple[Node, ...]
    open: bool
    t: int


Record = Msg | Built | Batch
Log = tuple[Record, ...]


# -- what an event logs ------------------------------------------------------------------------


def _chain(before: C.Chat, after: C.Chat, node: Node) -> tuple[Node, ...]:
    """``node`` and the free parents above it that the event built, lowest first."""
    out: list[Node] = []
    while C.text_of(after, node) is not None and C.text_of(before, node) is None:
        out.append(node)
        node = parent(node)
    return tuple(out)


def logged(before: C.Chat, after: C.Chat) -> Log:
    """The records an event writes, in order: the message line, the node lines (a node before
    its free parent), the batch line."""
    out: list[Record] = []
    touched: tuple[Node, ...] = before.running
    grew = after.t > before.t
    if grew:
        out.append(Msg(before.t, C.message_text(after, before.t)))
        touched = ((0, before.t),) + touched
    for node in touched:
        for made in _chain(before, after, node):
            out.append(Built(made, C.text_of(after, made) or ""))
    if grew and after.batch >= 0:
        old = {n for n, _ in before.view} | {(0, before.t)}
        out.append(Batch(tuple(n for n, _ in after.view if n not in old), after.open, after.t))
    return tuple(out)


# -- the fold ------------------------------------------------------------------------------------


def cover(nodes: tuple[Node, ...], line: Node) -> tuple[Node, ...] | str:
    """The view lines with the run of lines ``line`` covers replaced by it, or why it cannot."""
    start = -1
    for k, node in enumerate(nodes):
        if first(node) == first(line):
            start = k
        if start >= 0 and last(node) == last(line):
            if start == k:
                return f"{line} is a view line already"
            return nodes[:start] + (line,) + nodes[k + 1 :]
        if start >= 0 and last(node) > last(line):
            break
    return f"{line} does not cover whole view lines"


def fold(t: int, batches: tuple[Batch, ...]) -> tuple[tuple[Node, ...], bool] | str:
    """The view of a chat of ``t`` messages from its batch lines (in log order) and the
    shrinking flag of the last one; or why the lines do not fold (a corrupt log)."""
    nodes: tuple[Node, ...] = ()
    shrinking = False
    previous = 0
    for b in batches:
        if not previous < b.t <= t:
            return f"a batch line at t={b.t} after one at t={previous}, in a chat of {t} messages"
        previous = b.t
    k = 0
    for i in range(t):
        nodes = nodes + ((0, i),)
        while k < len(batches) and batches[k].t == i + 1:
            for line in batches[k].lines:
                folded = cover(nodes, line)
                if isinstance(folded, str):
                    return f"the batch line at t={batches[k].t}: {folded}"
                nodes = folded
            shrinking = batches[k].open
            k += 1
    return nodes, shrinking


# -- reopen ----------------------------------------------------------------------------------------


def _put(chat: C.Chat, node: Node, text: str) -> C.Chat:
    level = node[0]
    tries = chat.built + (None,) * (level + 1 - len(chat.built))
    tries = tries[:level] + (store.insert(tries[level], node[1], text),) + tries[level + 1 :]
    return replace(chat, built=tries)


def _complete(chat: C.Chat, node: Node, log: Log) -> tuple[C.Chat, Log]:
    """Build the free parents above ``node`` that a crash cut (rule 12), logging each."""
    while C.text_of(chat, sibling(node)) is not None:
        up = parent(node)
        if C.text_of(chat, up) is not None:
            break
        joined = C.source(chat, up)
        if size(joined) > NODE:
            break
        chat = _put(chat, up, joined)
        log = log + (Built(up, joined),)
        node = up
    return chat, log


def sized(chat: C.Chat, nodes: tuple[Node, ...]) -> View:
    """The view lines with their sizes: the built line's, or the placeholder's."""
    return tuple((n, PLACEHOLDER_BYTES if C.text_of(chat, n) is None else size(C.text_of(chat, n) or "")) for n in nodes)


def reopen(config: C.Config, log: Log) -> tuple[C.Chat, Log]:
    """The chat a restart opens from ``log``, and the log with what the restart itself wrote
    (node lines a crash cut; the batch line of a shrinking view's gap, D8)."""
    chat = C.Chat(config=config)
    batches: list[Batch] = []
    newest: Node | None = None
    t = 0
    for record in log:
        if isinstance(record, Msg):
            chat = replace(chat, messages=store.insert(chat.messages, t, record.text))
            t += 1
        elif isinstance(record, Built):
            chat = _put(chat, record.node, record.text)
            newest = record.node
        else:
            batches.append(record)
    chat = replace(chat, t=t)
    if newest is not None:
        chat, log = _complete(chat, newest, log)
    for i in range(t):
        text = C.message_text(chat, i)
        if C.text_of(chat, (0, i)) is None and size(text) <= NODE:
            chat = _put(chat, (0, i), text)
            chat, log = _complete(chat, (0, i), log + (Built((0, i), text),))
    folded = fold(t, tuple(batches))
    if isinstance(folded, str):
        raise ValueError(f"the log does not fold: {folded}")
    nodes, shrinking = folded
    view = sized(chat, nodes)
    if shrinking and batches and batches[-1].t < t:
        sizes = lambda n: C.built_size(chat, n)  # noqa: E731
        view, _merges = fit(view, t, sizes, config.floor)
        shrinking = view_bytes(view) > config.floor
        log = log + (Batch(tuple(n for n, _ in view if n not in set(nodes)), shrinking, t),)
    cview, _merges = fit(view, t, lambda n: C.built_size(chat, n), config.cfloor)
    order: dict[Node, int] = {}
    for record in log:
        if isinstance(record, Built):
            order[record.node] = len(order)
    ready = sorted(
        (max(position, order[sibling(node)]), parent(node))
        for node, position in order.items()
        if node[1] % 2 == 1 and sibling(node) in order and parent(node) not in order
    )
    chat = replace(
        chat,
        view=view,
        cview=cview,
        open=shrinking,
        unbuilt=tuple(i for i in range(t) if (0, i) not in order),
        merges=tuple(up for _position, up in ready),
    )
    return C.after(chat), log


def restart(chat: C.Chat, log: Log) -> tuple[C.Chat, Log]:
    """A restart of the owner: the chat reopened from its own log."""
    return reopen(chat.config, log)
