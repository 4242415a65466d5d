"""The production planner on a log (memory.md rules 1, 6, 13, 25, F1, D1, D2, D8): every message
appended before the planner sees it, every built node logged, every batch writing its merge line,
the view saved after each change.

A ``Sink`` takes the lines: the store (``eukhe.memory.store``: day files, fsync per line,
view.json) or, for the laws, a list in memory that a crash cuts at any point. What an event
writes, in order (the model's ``bend.optchat.fold.logged``): the message line; the node lines of
the nodes it built, each before its free parent; the batch's merge line (every batch, also one
that merged nothing, F1); then the view. A restart (``reopen``) reads the lines back.

The planner is used through its public methods only; which nodes an event built is read from
``is_built`` on the nodes it could build (the new message's node, the calls that were running)
and their parents, never by scanning the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from eukhe.memory import NODE
from eukhe.memory.chat import Chat, Config
from eukhe.memory.fold import reopen
from eukhe.memory.index import MessageLog
from eukhe.memory.records import Kind, MergeLine, Message, NodeLine
from eukhe.memory.text import size
from eukhe.memory.view import Node


class Sink(Protocol):  # pragma: no mutate block
    def message(self, record: Message) -> None: ...
    def node(self, record: NodeLine) -> None: ...
    def merge(self, record: MergeLine) -> None: ...
    def view(self, nodes: Sequence[Node]) -> None: ...


class DurableChat:
    """One chat's planner whose every change is logged to ``sink`` first."""

    def __init__(self, chat: Chat, sink: Sink, clock: Callable[[], str], keys: dict[str, int] | None = None) -> None:
        self.chat = chat
        self.sink = sink
        self.clock = clock
        self.keys: dict[str, int] = {} if keys is None else keys
        self.log: Sequence[Message] = ()  # the messages it was reopened with (read on demand)
        self.dates: list[str] = []  # the dates of the messages after them
        self.kinds: list[Kind] = []  # the kinds of the messages after them (a compaction task names it)

    @classmethod
    def open(cls, config: Config, messages: Sequence[Message], tree: Sequence[NodeLine | MergeLine], sink: Sink, clock: Callable[[], str]) -> DurableChat:
        """The chat reopened from its log; what the reopening wrote goes to ``sink``. A sink that
        saved a view (the store's view.json, ``saved_view``) has it checked against the log
        before anything is written (``eukhe.memory.fold.reopen``)."""
        saved_view = getattr(sink, "saved_view", None)
        chat, wrote = reopen(config, messages, tree, saved_view() if callable(saved_view) else None)
        for record in wrote:
            if isinstance(record, NodeLine):
                sink.node(record)
            else:
                sink.merge(record)
        keys = dict(messages.keys) if isinstance(messages, MessageLog) else {m.key: m.i for m in messages if m.key is not None}
        durable = cls(chat, sink, clock, keys)
        durable.log = messages
        sink.view(chat.view.nodes)
        return durable

    def _log_built(self, candidates: Sequence[Node]) -> None:
        chat = self.chat
        for node in candidates:
            while chat.is_built(node):
                self.sink.node(NodeLine(node, chat.text(node) or ""))
                node = (node[0] + 1, node[1] >> 1)

    def message(self, text: str, kind: Kind = Kind.USER, key: str | None = None) -> int:
        """Append one message (at least one byte); its id. A ``key`` already logged is not
        logged again (D2): the id it got is returned."""
        if key is not None and key in self.keys:
            return self.keys[key]
        if not text:
            raise ValueError("a message has at least one byte")
        chat = self.chat
        i = chat.t
        date = self.clock()
        self.sink.message(Message(i, kind, text, date, key))
        if key is not None:
            self.keys[key] = i
        self.dates.append(date)
        self.kinds.append(kind)
        running = [n for n in chat.running]
        before = list(chat.view.nodes) if chat.open or chat.view.total + NODE > chat.config.ceiling else None
        chat.message(text)
        self._log_built([(0, i)] + [n for n in running if chat.is_built(n)])
        if chat.batch >= 0:
            assert before is not None, "a batch ran that the snapshot rule did not foresee"
            old = set(before)
            old.add((0, i))
            self.sink.merge(MergeLine(tuple(n for n in chat.view.nodes if n not in old), chat.open, chat.t))
        self.sink.view(chat.view.nodes)
        return i

    def done(self, k: int, line: str) -> Node | None:
        """The ``k``-th running call ends with ``line``; the node it built is logged."""
        running = list(self.chat.running)
        node = self.chat.done(k, line)
        self._log_built([n for n in running if self.chat.is_built(n)])
        return node

    def fail(self, k: int) -> Node | None:
        running = list(self.chat.running)
        node = self.chat.fail(k)
        self._log_built([n for n in running if self.chat.is_built(n)])
        return node

    def wait(self) -> None:
        self.chat.wait()

    def go(self) -> None:
        self.chat.go()

    def tick(self) -> None:
        self.chat.tick()

    def size_of(self, i: int) -> int:
        return size(self.chat.message_text(i))

    def kind(self, i: int) -> Kind:
        """Message ``i``'s kind (IndexError past the chat)."""
        if not 0 <= i < self.chat.t:
            raise IndexError(i)
        return self.log[i].kind if i < len(self.log) else self.kinds[i - len(self.log)]

    def date(self, i: int) -> str:
        """Message ``i``'s date (IndexError past the chat)."""
        if not 0 <= i < self.chat.t:
            raise IndexError(i)
        return self.log[i].date if i < len(self.log) else self.dates[i - len(self.log)]
