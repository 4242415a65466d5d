"""The chat planner: which lines the view holds, when they merge, what each compaction sees,
and which node the compactor builds next (memory.md §3, §4, D5, F1, F2).

Built for chats of millions of messages:

- the built sizes, the view and the compaction view live in the planner core
  (``eukhe.memory.core``: plain int lists, one row of line sizes per level, 0 = not built;
  byte totals kept incrementally; a heap fit; compiled with mypyc when built); texts are kept
  only when asked for (``keep_texts``: the bridge, rendering);
- a message of at most 512 bytes appends its line with its final size: nothing but the fit
  runs on its path, and the core's part of it (append, a parent made ready, the fit) is one
  call (``Planner.message``); the work queue is read only when something waits in it;
- ``Chat.message`` and ``Chat.done`` are the core's work queue's own methods
  (``eukhe.memory.core.Work``, compiled with the planner core, bound per chat): the node built,
  a free merge (rule 12) or a ready merge queued, the rule cases, ready merges started when only
  merges wait, with no Python frame of the chat's; the queues and the rule cases are this chat's
  own containers, shared with it; what the core leaves to the chat (texts kept, retries queued,
  the texts of free merges, the queue order when a retry, a message node or a waiting turn is
  queued) runs here, called back by the work queue;
- ready nodes wait in queues (rule 42): failed nodes to retry, message nodes not yet started
  (oldest first), merges whose halves are both built (in the order they became ready).
  Starting work reads the queues' heads only; the tree is never scanned.

The decisions are the seed's: a message appends its line (rule 22); a message of at most 512
bytes is its own node and two short lines joined with a newline make their parent, with no
model call (rule 12); past the ceiling, or while still shrinking (F1), a batch merges toward
the floor (rules 23, 24); the compaction view is merged again from the chat view when the chat
view merges, or merged further past its ceiling (rule 33); at most ``jobs`` calls run; a
message node starts once fewer than 8 message lines before it are unbuilt; a merge once both
halves are built (rules 39, 40); a failed node is retried at the next message, or every tick
while a turn waits, and its third failure builds it from its input cut to 512 bytes (rule 38,
D5); while a turn waits only the view's unbuilt lines start and other calls stop (D5).
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Protocol, cast

import numpy as np

from eukhe.memory import (
    COMPACTION_CEILING,
    COMPACTION_FLOOR,
    FAILURES,
    JOBS,
    NODE,
    PLACEHOLDER_BYTES,
    VIEW_CEILING,
    VIEW_FLOOR,
    WINDOW,
)
from eukhe.memory.text import cut, flatten, size
from eukhe.memory.core import FREED, LATER  # what ``Work.todo`` leaves to the chat
from eukhe.memory.view import Node, View, first, last, name, planner, render_lines, rows_of, work

_CMERGE = ("-", "view", "ceiling")


def put(rows: list[list[int]], order: list[array[int]], node: Node, length: int, position: int) -> None:
    """Record node ``(l, i)`` built with a line of ``length`` bytes at ``position`` in the build
    order (rows of sizes and of places, grown as needed)."""
    level, i = node
    while len(rows) <= level:
        rows.append([])
        order.append(array("q"))
    row, place = rows[level], order[level]
    if i >= len(row):
        row.extend([0] * (i + 1 - len(row)))
    if i >= len(place):
        place.extend([-1] * (i + 1 - len(place)))
    row[i] = length
    place[i] = position


class ZoomError(ValueError):
    """zoom(id, n) names no node: n not a power of 2, id not a multiple of n, or past the chat."""


class TextsNotKept(RuntimeError):
    """A line must be cut from its input, but the planner was built without texts."""


@dataclass(frozen=True)
class Config:
    jobs: int = JOBS
    ceiling: int = VIEW_CEILING
    floor: int = VIEW_FLOOR
    cceiling: int = COMPACTION_CEILING
    cfloor: int = COMPACTION_FLOOR

    def __post_init__(self) -> None:
        if not 1 <= self.jobs <= JOBS:
            raise ValueError(f"jobs must be 1..{JOBS} (rule 39), not {self.jobs}")
        if not 0 <= self.floor <= self.ceiling:
            raise ValueError(f"the view's floor {self.floor} must be between 0 and its ceiling {self.ceiling}")
        if not 0 <= self.cfloor <= self.cceiling:
            raise ValueError(f"the compaction view's floor {self.cfloor} must be between 0 and its ceiling {self.cceiling}")


class Message(Protocol):  # pragma: no mutate block
    def __call__(self, text: str | int) -> None:
        """A message arrives (rules 22-24, 33, 38): its text, or (texts not kept) its size."""


class Done(Protocol):  # pragma: no mutate block
    def __call__(self, k: int, line: str | int) -> Node | None:
        """The ``k``-th running call (modulo) ends with its line (texts not kept: its size)."""


class Chat:
    """The planner of one chat.

    ``message`` and ``done``, the per-message path, are the core's work queue's own
    (``Work.message``, ``Work.done``, bound per chat to its form of the core): a call runs no
    Python frame of the chat's; the work queue calls back the chat's ``_before``, ``_keep_line``
    and ``_todo`` when there is more to do than the common case."""

    message: Message
    done: Done

    def __init__(self, config: Config = Config(), *, keep_texts: bool = True) -> None:
        self.config = config
        self.keep_texts = keep_texts
        self.core = planner(config.ceiling, config.floor, config.cceiling, config.cfloor)
        self.view = View(self.core)
        self.cview = View(self.core, compaction=True)
        self.texts: dict[Node, str] = {}
        self.messages: list[str] = []  # the texts of messages ``base``, ``base + 1``, ...
        self.base = 0  # messages before ``base`` are read through ``message_at`` (a reopened log)
        self.message_at: Callable[[int], str] | None = None
        self.text_at: Callable[[Node], str] | None = None  # a built node's line kept on disk
        # the queues and the rule cases are shared with the core's work queue (``self.work``,
        # the per-message path): changed in place, never rebound
        self._pending: dict[int, int] = {}
        self.fresh: deque[int] = deque()
        self.running: list[Node] = []
        self.failed: list[Node] = []
        self.retry: list[Node] = []
        self.fails: dict[Node, int] = {}
        self.merges: deque[Node] = deque()
        self.cases: set[str] = set()
        self.work = work(self.core, config.jobs, NODE, keep_texts, self.running, self.merges, self.fresh, self.retry, self.failed, self.fails, self._pending, self.cases, self._before, self._keep_line, self._todo)
        self.message = self.work.message
        self.done = cast(Done, self.work.done)  # its node is the running list's own tuple: a Node

    # the counters live in the core's work queue
    @property
    def unbuilt(self) -> int:
        """Message nodes not built yet."""
        return self.work.unbuilt

    @unbuilt.setter
    def unbuilt(self, value: int) -> None:
        self.work.unbuilt = value

    @property
    def started(self) -> int:
        """Message nodes started and not built yet (rule 40's window)."""
        return self.work.started

    @started.setter
    def started(self, value: int) -> None:
        self.work.started = value

    @property
    def waiting(self) -> bool:
        """A turn waits for its view (D5)."""
        return self.work.waiting

    @waiting.setter
    def waiting(self, value: bool) -> None:
        self.work.waiting = value

    @property
    def built_count(self) -> int:
        """Built nodes."""
        return self.work.built

    @built_count.setter
    def built_count(self, value: int) -> None:
        self.work.built = value

    @property
    def t(self) -> int:
        return self.core.t

    @property
    def open(self) -> bool:
        """Still shrinking toward the floor (F1)."""
        return self.core.open

    @property
    def batch(self) -> int:
        """The merges of the last message's batch, -1 when it had none."""
        return self.core.batch

    @property
    def cmerge(self) -> str:
        """How the last message changed the compaction view: "-", "view" or "ceiling"."""
        return _CMERGE[self.core.cmerge]

    # -- built nodes ---------------------------------------------------------------------------

    def built_size(self, node: Node) -> int:
        """The size of ``node``'s line, 0 when it is not built."""
        return self.core.size(node[0], node[1])

    def is_built(self, node: Node) -> bool:
        return self.core.size(node[0], node[1]) > 0

    def text(self, node: Node) -> str | None:
        line = self.texts.get(node)
        if line is None and self.text_at is not None and self.core.size(node[0], node[1]) > 0:
            return self.text_at(node)
        return line

    def message_text(self, i: int) -> str:
        """Message ``i``'s text (from the log on disk for a reopened chat's older messages)."""
        if i < self.base:
            assert self.message_at is not None
            return self.message_at(i)
        return self.messages[i - self.base]

    def source_size(self, node: Node) -> int:
        if node[0] == 0:
            return self._pending.get(node[1], 0)
        size_of = self.core.size
        return size_of(node[0] - 1, 2 * node[1]) + 1 + size_of(node[0] - 1, 2 * node[1] + 1)

    def source(self, node: Node) -> str:
        """A node's input: its message, or its halves joined with a newline (rule 12)."""
        if not self.keep_texts:
            raise TextsNotKept(f"node {name(node)} needs its input, and texts are not kept")
        if node[0] == 0:
            return self.message_text(node[1])
        halves = self.text((node[0] - 1, 2 * node[1])), self.text((node[0] - 1, 2 * node[1] + 1))
        assert halves[0] is not None and halves[1] is not None, f"the halves of {name(node)} are built"
        return halves[0] + "\n" + halves[1]

    def build(self, node: Node, line: str | None, length: int | None = None) -> None:
        """Build ``node`` (once, rule 13); a parent whose halves are now both built is built at
        once when its joined input fits 512 bytes (rule 12), else it waits in the merge queue
        (the core's work queue: ``Work.build``)."""
        if length is None:
            if line is None:
                raise ValueError("a built node needs its line or its size")
            length = size(line)
        self.work.build(node[0], node[1], length)
        if self.keep_texts and line is not None:
            self.texts[node] = line
        if self.work.freed:
            self._freed()

    def _freed(self) -> None:
        """The lines of the free merges just built (rule 12: the halves joined with a newline),
        in the order they were built (a parent's before its own parent's)."""
        freed = self.work.freed
        for up in freed:
            self.texts[up] = self.source(up)
        freed.clear()

    def restore_rows(
        self,
        t: int,
        rows: list[list[int]],
        order: list[array[int]],
        count: int,
        lines: Sequence[Node],
        shrinking: bool,
        fit: bool,
        message_at: Callable[[int], str],
        text_at: Callable[[Node], str] | None = None,
    ) -> None:
        """Take a saved state into a new planner (a chat reopened from its log: rule 25, F1, D7,
        D8; ``eukhe.memory.fold.reopen``): ``t`` messages; the built sizes as rows (``rows[l][i]``:
        the size of node ``(l, i)``'s line, 0 when not built; taken, not copied), each built
        node's place in the build order (``order[l][i]``, -1 when not built), ``count`` built
        lines; the view's ``lines``; whether the view is still ``shrinking`` (F1). With ``fit``
        (messages came after the last batch of a shrinking view, D8), the view is fitted to its
        floor now and shrinks on while above it. The compaction view is the view merged to its
        floor (D7); unbuilt message nodes queue oldest first, merges whose halves are both built
        in the order they became ready (rule 42); then the first calls start. Texts are read on
        demand (``message_at``, ``text_at``: a log on disk; nothing is read here but the unbuilt
        messages)."""
        core = self.core
        if core.t or self.built_count:
            raise ValueError("restore takes a new planner, not one with messages or built nodes")
        core.rows = rows_of(rows)
        self.built_count = count
        core.t = t
        if self.keep_texts:
            self.messages, self.base, self.message_at, self.text_at = [], t, message_at, text_at
        size_of = core.size
        codes = [i << 6 | level for level, i in lines]
        sizes = [size_of(level, i) or PLACEHOLDER_BYTES for level, i in lines]
        core.load(False, codes, sizes, {i: k for k, (level, i) in enumerate(lines) if level == 0 and not size_of(0, i)})
        if fit:
            self.view.refit(t, self.config.floor)
            shrinking = core.total > self.config.floor
        core.open = shrinking
        if core.with_cview:
            core.load(True, list(core.codes), list(core.sizes), dict(core.where))
            self.cview.refit(t, self.config.cfloor)
        row0 = rows[0]
        known = min(len(row0), t)
        unbuilt = np.flatnonzero(np.fromiter(islice(row0, known), dtype=np.int64, count=known) == 0).tolist() + list(range(known, t))
        self.unbuilt = len(unbuilt)
        self.fresh.clear()
        self.fresh.extend(unbuilt)
        self._pending.clear()
        self._pending.update({i: size(message_at(i)) for i in unbuilt})
        ready: list[tuple[int, Node]] = []
        for level in range(len(rows)):  # a built pair whose parent is not built: ready, by its later place
            row, place = rows[level], order[level]
            above = rows[level + 1] if level + 1 < len(rows) else []
            pairs = len(row) // 2
            if not pairs:
                continue
            pair_sizes = np.fromiter(islice(row, 2 * pairs), dtype=np.int64, count=2 * pairs)
            parent = np.zeros(pairs, dtype=np.int64)
            above_known = min(pairs, len(above))
            parent[:above_known] = np.fromiter(islice(above, above_known), dtype=np.int64, count=above_known)
            js = np.flatnonzero((pair_sizes[0::2] != 0) & (pair_sizes[1::2] != 0) & (parent == 0))
            if len(js):
                where = np.fromiter(islice(place, 2 * pairs), dtype=np.int64, count=min(len(place), 2 * pairs))
                later = np.maximum(where[2 * js], where[2 * js + 1])
                ready.extend(zip(later.tolist(), [(level + 1, j) for j in js.tolist()]))
        self.merges.clear()
        self.merges.extend(up for _position, up in sorted(ready))
        self._after()

    # -- the work queue ------------------------------------------------------------------------

    def queue(self, waiting: bool, limit: int) -> list[Node]:
        """The next ``limit`` nodes to start, in order (rules 39, 40, 42, D5)."""
        out: list[Node] = []
        for node in self.retry:
            if len(out) >= limit:
                break
            if not waiting or node[0] == 0:
                out.append(node)
        before = self.started
        for i in self.fresh:
            if len(out) >= limit:
                break
            if before >= WINDOW:
                self.cases.add("window_full")
                break
            out.append((0, i))
            before += 1
        if not waiting:
            out.extend(islice(self.merges, max(0, limit - len(out))))
        return out

    def _fill(self) -> None:
        if not (self.retry or self.fresh or self.merges):
            return
        free = self.config.jobs - len(self.running)
        if free <= 0:
            if self.retry or self.fresh or self.merges:
                self.cases.add("jobs_full")
            return
        if not (self.retry or self.fresh or self.waiting):  # only merges wait: the oldest start
            merges, running = self.merges, self.running
            for _ in range(min(free, len(merges))):
                running.append(merges.popleft())
            self.cases.add("merge_call")
            return
        for node in self.queue(self.waiting, free):
            self.running.append(node)
            if self.retry and node in self.retry:
                self.retry.remove(node)
                self.cases.add("retry_started")
            elif node[0] == 0 and self.fresh and self.fresh[0] == node[1]:
                self.fresh.popleft()
                self.started += 1
                self.cases.add("message_call")
            else:
                self.merges.popleft()
                self.cases.add("merge_call")

    def _after(self) -> None:
        self._fill()
        if self.waiting and self.unbuilt == 0:
            self.waiting = False
            self.cases.add("wait_settled")
            self._fill()

    # -- events --------------------------------------------------------------------------------

    def _before(self, text: str | None, length: int) -> None:
        """A message's text kept; failed nodes queued to retry (rule 38) (``Work.before``)."""
        if self.keep_texts:
            self.messages.append(text if text is not None else "")
            if text is not None and length <= NODE:
                self.texts[(0, self.core.t)] = text
        if self.failed:
            self.retry.extend(self.failed)
            self.failed.clear()
            self.cases.add("retry_at_message")

    def _keep_line(self, node: Node, line: str) -> None:
        """A compactor's line kept (``Work.keep_line``)."""
        self.texts[node] = line

    def _todo(self, todo: int) -> None:
        """What the core's work queue left to the chat (``Work.leave``): the lines of free
        merges, then the queues' order (anything but ready merges waits)."""
        if todo & FREED:
            self._freed()
        if todo & LATER:
            self._after()

    def fail(self, k: int) -> Node | None:
        """The ``k``-th running call (modulo) fails; the third failure builds the node from its
        input cut to 512 bytes (rule 38, D5)."""
        if not self.running:
            return None
        node = self.running[k % len(self.running)]
        count = self.fails.get(node, 0) + 1
        self.cases.add("fail")
        if count >= FAILURES:
            self.cases.add("fail_cap")
            line = cut(self.source(node), NODE)
            self.build(node, line)
        else:
            self.running.remove(node)
            self.failed.append(node)
            self.fails[node] = count
        self._after()
        return node

    def wait(self) -> None:
        """A turn starts waiting for its view: calls for other nodes stop (D5)."""
        stopped = [n for n in self.running if n[0] > 0]
        if stopped:
            self.cases.add("wait_stopped")
        self.running[:] = [n for n in self.running if n[0] == 0]
        self.merges.extendleft(reversed(stopped))
        self.waiting = True
        self._after()

    def go(self) -> None:
        """The waiting turn takes the view as it is (D10)."""
        if self.waiting:
            self.cases.add("go_deadline")
        self.waiting = False
        self._after()

    def tick(self) -> None:
        """10 s pass: while a turn waits, failed nodes are tried again (D5)."""
        if not self.waiting:
            return
        if self.failed:
            self.cases.add("retry_at_tick")
        self.retry.extend(self.failed)
        self.failed.clear()
        self._after()

    # -- reading -------------------------------------------------------------------------------

    def context(self, node: Node) -> list[Node]:
        """What a compaction of ``node`` sees: compaction view lines ending before the message
        (a merge: at or before its last message), built only, up to the first unbuilt line
        (rules 34, 41, F2)."""
        bound = first(node) - 1 if node[0] == 0 else last(node)
        out = []
        for line in self.cview.nodes:
            if last(line) > bound or not self.is_built(line):
                break
            out.append(line)
        return out

    def zoom(self, ident: int, n: int) -> list[str]:
        """zoom(id, n): the line's two halves as ``id+n|text`` lines, or for n = 1 the message
        whole (rules 52, 53)."""
        if n < 1 or n & (n - 1):
            raise ZoomError(f"n={n} is not a power of 2")
        if ident < 0 or ident % n:
            raise ZoomError(f"id={ident} is not a multiple of n={n}")
        if ident + n > self.t:
            raise ZoomError(f"{ident}+{n} runs past the chat's {self.t} messages")
        level = n.bit_length() - 1
        if level == 0:
            return [f"{ident}+1|{flatten(self.message_text(ident)) if self.keep_texts else ''}"]
        i = ident // n
        return render_lines([(level - 1, 2 * i), (level - 1, 2 * i + 1)], self.text)
