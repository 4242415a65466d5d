"""The live compactor (memory.md rules 29, 30, 35-42, D5, D9): model calls that build the chat's
tree, fed by the planner's work queue.

- Work: the production planner (``eukhe.memory.chat.Chat`` inside a ``DurableChat``) decides
  which nodes run (at most 8, rule 39; a message node once fewer than 8 message lines before it
  are unbuilt, a merge once both halves are built, rule 40; ready nodes in queues, rule 42;
  while a turn waits only the view's unbuilt lines, D5). After every change the compactor starts
  one call per running node it is not already building and stops the calls of nodes the planner
  no longer runs. It never scans the tree: it reads the planner's running list only. An idle
  chat has nothing running and makes no call.
- A node's line (rules 35-37, D9): ``LineBuild``, one conversation with the model: the
  compaction view and task (``eukhe.memory.request.compaction_input``), then a follow-up in
  the same conversation for a line over 512 bytes; at most 5 calls, the shortest line kept, a
  follow-up not shorter ends the tries, an empty or thinking-only reply is the last try; the
  line is the best reply, else the input, cut to 512 bytes at a character boundary.
- Failures (rule 38, D5): a call that errs (a wire error, past 10 minutes: ``CALL_DEADLINE``)
  fails its node; the planner retries it at the next message and, while a turn waits, every
  10 s (``RETRY``; ``poll`` reads the clock the compactor was given); the third failure builds
  the node from its input cut to 512 bytes.
- The prefix gate (rule 30): a call whose marked prefix (tools, system prompt, the view to its
  last whole block) another call is writing waits until that call's response starts.
- Every built node goes through the ``DurableChat``, so it is logged before the planner moves
  on; every compactor change gives one ``memory:`` row (``Row``; the line's text only at full
  detail).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from contextlib import aclosing
from dataclasses import dataclass

from eukhe.inference.wire.base import WireClient
from eukhe.inference.wire.events import TextDelta, Usage
from eukhe.inference.wire.plan import Message, Request
from eukhe.memory import NODE, TRIES
from eukhe.memory.durable import DurableChat
from eukhe.memory.prompts import cut_follow_up
from eukhe.memory.records import kind_of
from eukhe.memory.request import Layers, build_request, compaction_input
from eukhe.memory.text import cut, size
from eukhe.memory.view import Node, name

RETRY = 10.0  # seconds between retries of failed nodes while a turn waits (D5)
CALL_DEADLINE = 600.0  # seconds a model call may take before it fails (D9)


# -- one node's line (rules 35-37, D9) ---------------------------------------------------------


class LineBuild:
    """The conversation that builds one node's line from its ``source`` (its input).

    ``ask`` is what to send next: ``""`` for the first call (the task), the follow-up for a
    line over the limit, ``None`` once the conversation is over. ``take`` reads one reply's
    text; ``line`` is the result once over."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.calls: list[tuple[str, str]] = []  # (the follow-up sent, "" first; the reply's line)
        self.best: str | None = None
        self.ask: str | None = ""

    def take(self, text: str) -> None:
        """Read the reply to the call ``ask`` asked for (never once the conversation is over)."""
        line = text.strip()
        self.calls.append((self.ask or "", line))
        best = self.best
        if not line or (best is not None and size(line) >= size(best)):
            self.ask = None  # D9: empty is the last try; a follow-up not shorter ends the tries
            return
        self.best = line
        if size(line) <= NODE or len(self.calls) >= TRIES:
            self.ask = None
        else:
            self.ask = cut_follow_up(line)

    @property
    def over(self) -> bool:
        return self.ask is None

    @property
    def origin(self) -> str:
        """Where the line comes from: ``reply`` (the best reply) or ``input`` (no reply at all)."""
        return "input" if self.best is None else "reply"

    @property
    def line(self) -> str:
        """The best reply, else the input, cut to 512 bytes at a character boundary."""
        return cut(self.source if self.best is None else self.best, NODE)


def build_line(source: str, replies: list[str]) -> LineBuild:
    """The conversation run on scripted reply texts (a missing reply is an empty one)."""
    build = LineBuild(source)
    while not build.over:
        k = len(build.calls)
        build.take(replies[k] if k < len(replies) else "")
    return build


# -- rows -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One compactor change: ``event`` (start, wait, go, built, failed, capped, stopped), the node,
    a short note, and the line (shown at full detail only)."""

    event: str
    node: Node
    note: str = ""
    text: str = ""

    def render(self, detail: bool = False) -> str:
        head = f"memory: {self.event} {name(self.node)}" + (f" ({self.note})" if self.note else "")
        return head + (f": {self.text}" if detail and self.text else "")


# -- the prefix gate (rule 30) --------------------------------------------------------------------


class PrefixGate:
    """Calls whose marked prefix another call is writing wait until that call's response starts.

    The first call of a prefix nobody is writing writes it; a call that waited goes once the
    writer's response started (the entry is written). A later call of a prefix whose writer is
    done writes it again, as a first call: its own response starts as fast as the entry allows."""

    def __init__(self) -> None:
        self.writing: dict[str, asyncio.Event] = {}
        self.waiting = 0

    async def enter(self, key: str) -> bool:
        """Whether this call writes ``key`` (then it must call ``started``); waits while another
        call writes it."""
        event = self.writing.get(key)
        if event is None:
            self.writing[key] = asyncio.Event()
            return True
        self.waiting += 1
        try:
            await event.wait()
        finally:
            self.waiting -= 1
        return False

    def started(self, key: str) -> None:
        """The writer's response started, or its call ended without one: the waiting calls go."""
        event = self.writing.pop(key, None)
        if event is not None:
            event.set()


def prefix_key(request: Request) -> str | None:
    """The marked prefix of a request: tools, system prompt, the view to its last whole block
    (its marked piece); None when the view has no whole block (nothing is marked there)."""
    parts = request.messages[0].parts
    marked = [k for k, (_text, mark) in enumerate(parts) if mark]
    if not marked:
        return None
    tools = [[t.name, t.description, dict(t.parameters)] for t in request.tools]
    view = "".join(text for text, _mark in parts[: marked[0] + 1])
    data = json.dumps([tools, request.system, view], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


# -- the compactor ----------------------------------------------------------------------------------


class Compactor:
    """The compactor of one chat: ``client`` speaks to the memory model (with ``thinking``),
    ``layers`` are the chat's tools and system prompt (the turns' own, rule 32), ``clock``
    gives seconds (tests drive it), ``rows`` takes each ``memory:`` row."""

    def __init__(
        self,
        chat: DurableChat,
        client: WireClient,
        layers: Layers,
        *,
        thinking: str | None = None,
        clock: Callable[[], float],
        rows: Callable[[Row], None] | None = None,
        deadline: float = CALL_DEADLINE,
    ) -> None:
        self.chat = chat
        self.client = client
        self.layers = layers
        self.thinking = thinking
        self.clock = clock
        self.rows: list[Row] = []
        self._row = rows
        self.deadline = deadline
        self.gate = PrefixGate()
        self.tasks: dict[Node, asyncio.Task[None]] = {}
        self.started_at: dict[Node, float] = {}  # the start of each node's model call under way
        self.last_tick = clock()
        self.requests = 0
        self.usage: list[Usage] = []  # each call's usage, as the provider reported it
        self.changed = asyncio.Event()

    # -- events of the chat ------------------------------------------------------------------

    def message(self, text: str, kind: str = "user", key: str | None = None) -> int:
        """Append a message; the calls it makes due start (a failed node is retried, rule 38)."""
        i = self.chat.message(text, kind_of(kind), key)
        self.sync()
        return i

    def wait(self) -> None:
        """A turn waits for its view: only the view's unbuilt lines run (D5)."""
        self.chat.wait()
        self.last_tick = self.clock()
        self.sync()

    def go(self) -> None:
        """The waiting turn goes on (settled, or its deadline passed: D10)."""
        self.chat.go()
        self.sync()

    @property
    def waiting(self) -> bool:
        return self.chat.chat.waiting

    @property
    def settled(self) -> bool:
        """Every message has its line (the view shows no placeholder)."""
        return self.chat.chat.unbuilt == 0

    def poll(self) -> None:
        """Read the clock: calls past the deadline fail; while a turn waits, failed nodes are
        tried again every 10 s (D5)."""
        now = self.clock()
        for node, start in list(self.started_at.items()):
            if now - start >= self.deadline:
                self.tasks[node].cancel()
                self._failed(node, f"no line within {self.deadline:.0f} s")
        if self.chat.chat.waiting and now - self.last_tick >= RETRY:
            self.last_tick = now
            self.chat.tick()
            self.sync()

    def sync(self) -> None:
        """Start a call for each node the planner runs; stop the calls of nodes it stopped."""
        running = list(self.chat.chat.running)
        for node in [n for n in self.tasks if n not in running]:
            self.tasks.pop(node).cancel()
            self.started_at.pop(node, None)
            self._emit(Row("stopped", node, "a turn waits"))
        for node in running:
            if node not in self.tasks:
                self.tasks[node] = asyncio.get_running_loop().create_task(self._build(node))
                self._emit(Row("start", node))
        self.changed.set()

    async def idle(self) -> None:
        """Until no call is under way (tests, shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks.values()), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        await asyncio.gather(*list(self.tasks.values()), return_exceptions=True)
        self.tasks.clear()
        self.started_at.clear()

    # -- one node ------------------------------------------------------------------------------

    def _emit(self, row: Row) -> None:
        self.rows.append(row)
        self.changed.set()
        if self._row is not None:
            self._row(row)

    async def _build(self, node: Node) -> None:
        try:
            line, calls = await self._line(node)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a wire error, or any fault: the node fails, is retried, then capped
            self._failed(node, f"{type(error).__name__}: {error}")
            return
        self.tasks.pop(node, None)
        self.started_at.pop(node, None)
        running = self.chat.chat.running
        self.chat.done(running.index(node), line.line)
        self._emit(Row("built", node, f"{size(line.line)} bytes from the {line.origin}, {calls} call{'s' if calls != 1 else ''}", line.line))
        self.sync()

    def _failed(self, node: Node, reason: str) -> None:
        self.tasks.pop(node, None)
        self.started_at.pop(node, None)
        running = self.chat.chat.running
        count = self.chat.chat.fails.get(node, 0) + 1
        self.chat.fail(running.index(node))
        if self.chat.chat.is_built(node):
            self._emit(Row("capped", node, f"failure {count}: built from its input cut to {NODE} bytes", self.chat.chat.text(node) or ""))
        else:
            self._emit(Row("failed", node, f"failure {count}: {reason}"))
        self.sync()

    async def _line(self, node: Node) -> tuple[LineBuild, int]:
        durable = self.chat
        view, task = compaction_input(durable.chat, node, lambda i: durable.kind(i).value)
        build = LineBuild(durable.chat.source(node))
        conversation: list[Message] = [Message("user", task)]
        while not build.over:
            if build.calls:
                conversation += [Message("assistant", build.calls[-1][1]), Message("user", build.ask or "")]
            request = build_request(self.layers, view, conversation, self.thinking)
            build.take(await self._call(node, request))
        return build, len(build.calls)

    async def _call(self, node: Node, request: Request) -> str:
        """One model call: through the prefix gate, the reply's text (thinking dropped)."""
        key = prefix_key(request)
        writing: str | None = None  # the prefix this call writes, until its response starts
        if key is not None:
            if key in self.gate.writing:
                self._emit(Row("wait", node, "its prefix is being written"))
            if await self.gate.enter(key):
                writing = key
        text: list[str] = []
        self.started_at[node] = self.clock()
        self.requests += 1
        try:
            async with aclosing(self.client.stream(request)) as events:
                async for event in events:
                    if writing is not None:
                        self.gate.started(writing)
                        writing = None
                    if isinstance(event, TextDelta):
                        text.append(event.text)
                    elif isinstance(event, Usage):
                        self.usage.append(event)
        finally:
            if writing is not None:
                self.gate.started(writing)
            self.started_at.pop(node, None)
        return "".join(text)
