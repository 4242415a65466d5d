"""The chat planner: which lines the view holds, when they merge, what each compaction sees,
and which node the compactor builds next (memory.md §3, §4, D5, F1, F2).

Built for chats of millions of messages:

- built nodes: one ``array('H')`` of line sizes per level, indexed by ``i`` (0 = not built),
  so a lookup is two index operations and a million messages cost a few megabytes;
  texts are kept only when asked for (``keep_texts``: the bridge, rendering);
- the view and the compaction view keep byte totals incrementally and fit with a heap
  (``eukhe.memory.view``);
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
from dataclasses import dataclass
from itertools import islice

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
from eukhe.memory.view import Node, View, first, last, name, render_lines


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


class Chat:
    """The planner of one chat."""

    def __init__(self, config: Config = Config(), *, keep_texts: bool = True) -> None:
        self.config = config
        self.t = 0
        self.keep_texts = keep_texts
        self.levels: list[array[int]] = []
        self.texts: dict[Node, str] = {}
        self.messages: list[str] = []
        self._pending: dict[int, int] = {}
        self.view = View()
        self.cview = View()
        self.open = False
        self.batch = -1
        self.cmerge = "-"
        self.unbuilt = 0
        self.fresh: deque[int] = deque()
        self.started = 0
        self.running: list[Node] = []
        self.failed: list[Node] = []
        self.retry: list[Node] = []
        self.fails: dict[Node, int] = {}
        self.merges: deque[Node] = deque()
        self.waiting = False
        self.built_count = 0
        self.cases: set[str] = set()

    # -- built nodes ---------------------------------------------------------------------------

    def built_size(self, node: Node) -> int:
        """The size of ``node``'s line, 0 when it is not built."""
        level, i = node
        if level >= len(self.levels):
            return 0
        sizes = self.levels[level]
        return sizes[i] if i < len(sizes) else 0

    def is_built(self, node: Node) -> bool:
        return self.built_size(node) > 0

    def text(self, node: Node) -> str | None:
        return self.texts.get(node)

    def source_size(self, node: Node) -> int:
        if node[0] == 0:
            return self._pending.get(node[1], 0)
        left, right = (node[0] - 1, 2 * node[1]), (node[0] - 1, 2 * node[1] + 1)
        return self.built_size(left) + 1 + self.built_size(right)

    def source(self, node: Node) -> str:
        """A node's input: its message, or its halves joined with a newline (rule 12)."""
        if not self.keep_texts:
            raise TextsNotKept(f"node {name(node)} needs its input, and texts are not kept")
        if node[0] == 0:
            return self.messages[node[1]]
        left, right = (node[0] - 1, 2 * node[1]), (node[0] - 1, 2 * node[1] + 1)
        return self.texts[left] + "\n" + self.texts[right]

    def _store(self, node: Node, length: int, line: str | None) -> None:
        level, i = node
        while len(self.levels) <= level:
            self.levels.append(array("H"))
        sizes = self.levels[level]
        if len(sizes) <= i:
            sizes.frombytes(bytes(2 * (i + 1 - len(sizes))))
        sizes[i] = length
        if self.keep_texts and line is not None:
            self.texts[node] = line
        self.built_count += 1

    def build(self, node: Node, line: str | None, length: int | None = None) -> None:
        """Build ``node`` (once, rule 13); a parent whose halves are now both built is built at
        once when its joined input fits 512 bytes (rule 12), else it waits in the merge queue."""
        if length is None:
            if line is None:
                raise ValueError("a built node needs its line or its size")
            length = size(line)
        self._store(node, length, line)
        if node in self.running:
            self.running.remove(node)
            if node[0] == 0:
                self.started -= 1
        elif node in self.failed:
            self.failed.remove(node)
            if node[0] == 0:
                self.started -= 1
        elif node in self.retry:
            self.retry.remove(node)
            if node[0] == 0:
                self.started -= 1
        self.fails.pop(node, None)
        level, i = node
        if level == 0:
            self._pending.pop(i, None)
            self.view.resize(node, length)
            self.cview.resize(node, length)
            self.unbuilt -= 1
        sizes = self.levels[level]
        j = i ^ 1
        sib_size = sizes[j] if j < len(sizes) else 0
        if not sib_size:
            return
        up = (level + 1, i >> 1)
        left_size, right_size = (length, sib_size) if i & 1 == 0 else (sib_size, length)
        joined = left_size + 1 + right_size
        if joined <= NODE:
            self.cases.add("free_merge")
            text = self.source(up) if self.keep_texts else None
            self.build(up, text, joined)
        else:
            self.merges.append(up)

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

    def message(self, text: str | None = None, length: int | None = None) -> None:
        """A message arrives (rules 22-24, 33, 38). Give its text, or (texts not kept) its size."""
        if text is not None:
            length = size(text)
        if length is None or length < 1:
            raise ValueError("a message has at least one byte")
        i = self.t
        node = (0, i)
        self.t += 1
        if self.keep_texts:
            self.messages.append(text if text is not None else "")
        self.view.append(node, PLACEHOLDER_BYTES)
        self.cview.append(node, PLACEHOLDER_BYTES)
        self.unbuilt += 1
        if self.failed:
            self.retry.extend(self.failed)
            self.failed.clear()
            self.cases.add("retry_at_message")
        self.batch = -1
        self.cmerge = "-"
        if length <= NODE:
            self.cases.add("free_message")
            self.build(node, text, length)
        else:
            self._pending[i] = length
            self.fresh.append(i)
        self._batch()
        self._compact()
        self._after()

    def _batch(self) -> None:
        cfg = self.config
        if not self.open and self.view.total <= cfg.ceiling:
            self.cases.add("grow")
            return
        resumed = self.open
        self.batch = self.view.fit(self.t, self.levels, cfg.floor)
        self.open = self.view.total > cfg.floor
        self.cases.add("batch" if not resumed else ("batch_resumed" if self.batch else "batch_open_empty"))
        if self.open:
            self.cases.add("batch_short")

    def _compact(self) -> None:
        cfg = self.config
        if self.batch > 0:
            self.cview = self.view.copy()
            self.cview.fit(self.t, self.levels, cfg.cfloor)
            self.cmerge = "view"
            self.cases.add("cview_from_view")
        elif self.cview.total > cfg.cceiling:
            self.cview.fit(self.t, self.levels, cfg.cfloor)
            self.cmerge = "ceiling"
            self.cases.add("cview_ceiling")

    def done(self, k: int, line: str | None = None, length: int | None = None) -> Node | None:
        """The ``k``-th running call (modulo) ends with its line."""
        if line is not None:
            length = size(line)
        if length is None or not 1 <= length <= NODE:
            raise ValueError(f"a compactor's line is 1-{NODE} bytes, not {length}")
        if not self.running:
            return None
        node = self.running[k % len(self.running)]
        self.build(node, line, length)
        self._after()
        return node

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
        self.running = [n for n in self.running if n[0] == 0]
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
            return [f"{ident}+1|{flatten(self.messages[ident]) if self.keep_texts else ''}"]
        i = ident // n
        return render_lines([(level - 1, 2 * i), (level - 1, 2 * i + 1)], self.text)
