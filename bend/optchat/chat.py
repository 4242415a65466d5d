"""The chat planner: view, batch, compaction view, context and work queue (memory.md §3, §4, D5).

A pure state machine: each event takes a ``Chat`` to the next one.

- ``message``: the message's line is appended (rule 22); a message of at most 512 bytes is its
  own node at once, no model call (rule 12). Failed nodes go back to the queue (rule 38).
  Past ``ceiling`` bytes, or while the view is still shrinking (``open``, fix F1), a batch
  merges the most due built-parent pairs down to ``floor`` (rules 23, 24). The compaction view
  (rule 33) gets the new line; it is merged again from the chat view when the chat view
  merged, or merged further when it passes ``cceiling``; both fits stop at ``cfloor``.
- ``done``: a running call ends; its node is built with the line (rule 13). A built node whose
  sibling is built makes their parent ready: at most 512 bytes joined with a newline it is
  built at once (rule 12), else it waits in the merge queue (rule 42).
- ``fail``: a running call fails; the third failure builds the node from its input cut to 512
  bytes (D5, rule 38, law fail_cap_builds); before that the node waits for the next message.
- ``wait`` / ``go``: a turn starts waiting for its view (rule 47) / takes it at its deadline
  (D10). While it waits only the view's unbuilt lines start and running calls for other nodes
  stop, back to the front of their queue, without a failure (D5). ``tick`` (every 10 s while a
  turn waits) retries failed nodes. The wait ends once every view line is built.
- The work queue (rules 39, 40, 42, D5): at most ``jobs`` calls at once; failed nodes retried
  first, then message nodes oldest first, each once fewer than 8 message lines before it are
  unbuilt, then ready merges in the order they became ready. Waiting: retried and new message
  nodes only. Ready nodes are kept in queues; the tree is never scanned.

The compaction view and the context of a compaction (rule 34, F2, rule 41): the compaction
view's lines that end before the message (for a merge: at or before its last message), up to
the first unbuilt line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bend.optchat import store
from bend.optchat.node import Node, children, first, last, parent, sibling
from bend.optchat.text import NODE, cut, size
from bend.optchat.view import PLACEHOLDER_BYTES, View, fit, grow, resize, view_bytes

JOBS = 8
WINDOW = 8
FAILURES = 3
VIEW_CEILING = 128_000
VIEW_FLOOR = 64_000
COMPACTION_CEILING = 32_000
COMPACTION_FLOOR = 16_000


@dataclass(frozen=True)
class Config:
    jobs: int = JOBS
    ceiling: int = VIEW_CEILING
    floor: int = VIEW_FLOOR
    cceiling: int = COMPACTION_CEILING
    cfloor: int = COMPACTION_FLOOR


@dataclass(frozen=True)
class Chat:
    config: Config = Config()
    t: int = 0
    messages: store.Trie = None
    built: tuple[store.Trie, ...] = ()
    view: View = ()
    cview: View = ()
    open: bool = False
    batch: int = -1
    cmerge: str = "-"
    unbuilt: tuple[int, ...] = ()
    next: int = 0
    running: tuple[Node, ...] = ()
    failed: tuple[Node, ...] = ()
    retry: tuple[Node, ...] = ()
    fails: tuple[tuple[Node, int], ...] = ()
    merges: tuple[Node, ...] = ()
    waiting: bool = False


# -- the built store ---------------------------------------------------------------------------


def text_of(chat: Chat, node: Node) -> str | None:
    """The built line of ``node``, or None."""
    if node[0] >= len(chat.built):
        return None
    found = store.lookup(chat.built[node[0]], node[1])
    return found if isinstance(found, str) else None


def built_size(chat: Chat, node: Node) -> int | None:
    found = text_of(chat, node)
    return None if found is None else size(found)


def message_text(chat: Chat, i: int) -> str:
    found = store.lookup(chat.messages, i)
    return found if isinstance(found, str) else ""


def source(chat: Chat, node: Node) -> str:
    """A node's input: the message, or its two halves joined with a newline (rule 12)."""
    if node[0] == 0:
        return message_text(chat, node[1])
    left, right = children(node)
    return (text_of(chat, left) or "") + "\n" + (text_of(chat, right) or "")


def _without(nodes: tuple[Node, ...], node: Node) -> tuple[Node, ...]:
    return tuple(n for n in nodes if n != node)


def build(chat: Chat, node: Node, line: str) -> Chat:
    """Build ``node`` with ``line`` (once, rule 13); a ready parent follows (rules 12, 42)."""
    level = node[0]
    tries = chat.built + (None,) * (level + 1 - len(chat.built))
    tries = tries[:level] + (store.insert(tries[level], node[1], line),) + tries[level + 1 :]
    chat = replace(
        chat,
        built=tries,
        running=_without(chat.running, node),
        failed=_without(chat.failed, node),
        retry=_without(chat.retry, node),
        fails=tuple(entry for entry in chat.fails if entry[0] != node),
    )
    if level == 0:
        length = size(line)
        chat = replace(
            chat,
            view=resize(chat.view, node, length),
            cview=resize(chat.cview, node, length),
            unbuilt=tuple(i for i in chat.unbuilt if i != node[1]),
        )
    if text_of(chat, sibling(node)) is None:
        return chat
    up = parent(node)
    joined = source(chat, up)
    if size(joined) <= NODE:
        return build(chat, up, joined)
    return replace(chat, merges=chat.merges + (up,))


# -- the work queue ----------------------------------------------------------------------------


def _open_messages(chat: Chat) -> int:
    """Message nodes started and not built: the unbuilt lines before the next message node."""
    return sum(1 for n in chat.running + chat.failed + chat.retry if n[0] == 0)


def queue(chat: Chat, waiting: bool, limit: int) -> tuple[Node, ...]:
    """The next ``limit`` nodes to start, in order (rules 39, 40, 42, D5)."""
    out: list[Node] = []
    for node in chat.retry:
        if len(out) < limit and (not waiting or node[0] == 0):
            out.append(node)
    open_before = _open_messages(chat)
    for i in chat.unbuilt:
        if len(out) >= limit or open_before >= WINDOW:
            break
        if i >= chat.next:
            out.append((0, i))
            open_before += 1
    if not waiting:
        for node in chat.merges:
            if len(out) >= limit:
                break
            out.append(node)
    return tuple(out)


def fill(chat: Chat) -> Chat:
    """Start calls until ``jobs`` run or nothing is ready."""
    start = queue(chat, chat.waiting, chat.config.jobs - len(chat.running))
    if not start:
        return chat
    nxt = chat.next
    for node in start:
        if node[0] == 0 and node not in chat.retry:
            nxt = node[1] + 1
    return replace(
        chat,
        running=chat.running + start,
        retry=tuple(n for n in chat.retry if n not in start),
        merges=tuple(n for n in chat.merges if n not in start),
        next=nxt,
    )


def settle(chat: Chat) -> Chat:
    """A waiting turn goes once every view line is built (rule 47)."""
    if chat.waiting and not chat.unbuilt:
        return replace(chat, waiting=False)
    return chat


def after(chat: Chat) -> Chat:
    return fill(settle(fill(chat)))


# -- events ------------------------------------------------------------------------------------


def message(chat: Chat, text: str) -> Chat:
    """A message arrives (rules 22-24, 33, 38)."""
    i = chat.t
    node = (0, i)
    chat = replace(
        chat,
        t=i + 1,
        messages=store.insert(chat.messages, i, text),
        view=grow(chat.view, node, PLACEHOLDER_BYTES),
        cview=grow(chat.cview, node, PLACEHOLDER_BYTES),
        unbuilt=chat.unbuilt + (i,),
        retry=chat.retry + chat.failed,
        failed=(),
        batch=-1,
        cmerge="-",
    )
    if size(text) <= NODE:
        chat = build(chat, node, text)
    return after(compact(batch(chat)))


def batch(chat: Chat) -> Chat:
    """Past the ceiling, or while shrinking, merge toward the floor (rules 23, 24, F1)."""
    if not chat.open and view_bytes(chat.view) <= chat.config.ceiling:
        return chat
    view, merges = fit(chat.view, chat.t, lambda n: built_size(chat, n), chat.config.floor)
    return replace(chat, view=view, batch=merges, open=view_bytes(view) > chat.config.floor)


def compact(chat: Chat) -> Chat:
    """The compaction view: merged again from the chat view when it merged, or merged further
    past its ceiling; both to its floor (rule 33)."""
    sizes = lambda n: built_size(chat, n)  # noqa: E731
    if chat.batch > 0:
        cview, _merges = fit(chat.view, chat.t, sizes, chat.config.cfloor)
        return replace(chat, cview=cview, cmerge="view")
    if view_bytes(chat.cview) > chat.config.cceiling:
        cview, _merges = fit(chat.cview, chat.t, sizes, chat.config.cfloor)
        return replace(chat, cview=cview, cmerge="ceiling")
    return chat


def done(chat: Chat, k: int, line: str) -> Chat:
    """The ``k``-th running call (modulo) ends with ``line``."""
    if not chat.running:
        return chat
    node = chat.running[k % len(chat.running)]
    return after(build(chat, node, line))


def failures(chat: Chat, node: Node) -> int:
    for entry in chat.fails:
        if entry[0] == node:
            return entry[1]
    return 0


def fail(chat: Chat, k: int) -> Chat:
    """The ``k``-th running call (modulo) fails; the third failure builds the node from its
    input cut to 512 bytes (D5, rule 38)."""
    if not chat.running:
        return chat
    node = chat.running[k % len(chat.running)]
    count = failures(chat, node) + 1
    if count >= FAILURES:
        return after(build(chat, node, cut(source(chat, node), NODE)))
    chat = replace(
        chat,
        running=_without(chat.running, node),
        failed=chat.failed + (node,),
        fails=tuple(e for e in chat.fails if e[0] != node) + ((node, count),),
    )
    return after(chat)


def wait(chat: Chat) -> Chat:
    """A turn starts waiting: calls for nodes other than the view's lines stop (D5)."""
    stopped = tuple(n for n in chat.running if n[0] > 0)
    chat = replace(
        chat,
        waiting=True,
        running=tuple(n for n in chat.running if n[0] == 0),
        merges=stopped + chat.merges,
    )
    return after(chat)


def go(chat: Chat) -> Chat:
    """The waiting turn takes the view as it is (D10)."""
    return after(replace(chat, waiting=False))


def tick(chat: Chat) -> Chat:
    """10 s pass: while a turn waits, failed nodes are tried again (D5)."""
    if not chat.waiting:
        return chat
    return after(replace(chat, retry=chat.retry + chat.failed, failed=()))


def context(chat: Chat, node: Node) -> tuple[Node, ...]:
    """The compaction view a compaction of ``node`` sees: lines ending before the message (a
    merge: at or before its last message), built lines only, up to the first that is not
    (rules 34, 41, F2)."""
    bound = first(node) - 1 if node[0] == 0 else last(node)
    out = []
    for line, _length in chat.cview:
        if last(line) > bound or text_of(chat, line) is None:
            break
        out.append(line)
    return tuple(out)
