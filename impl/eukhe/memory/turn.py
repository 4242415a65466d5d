"""The turn (memory.md §6, rules 46-58, D10, D11): one user message answered from the view.

A turn, in order:

1. **Pin** (rules 47, 49, D5, D10): the turn waits for its view to settle, every view line
   built, at most ``memory.settleTimeoutMs`` (the ``Deadline``: a clock and a number of seconds,
   or an event a caller sets). While it waits the planner knows a turn waits (``wait``: only the
   view's unbuilt lines start, D5); at the deadline it takes the view as it is (``go``): each line
   not summarized yet shows its input, the message, cut to 512 bytes at a character boundary,
   never the placeholder and never an error. The view is rendered, then the message is logged
   (kind user; a long one as several messages, rule 10), both under the owner's lock: the view
   covers exactly the messages before the new one, whatever another client appends meanwhile.
2. **Calls** (rules 26, 48, 50, 51, D11): a fresh conversation, nothing carried from an earlier
   turn: the view, then the per-turn state (the date and time now, devices), then the message
   whole, marked ``Turn:``. Every call of the turn sends that same pinned view. The system prompt
   and the tools never change (rule 27). Each reply, tool call and tool result is logged as it
   happens (kinds eukhe, tool, echo; tool output clipped, rule 9); thoughts are shown to the
   caller, never logged (rule 8).
3. **Messages during a call** (rule 46): a message sent while the turn's call runs waits in the
   turn's inbox and joins the conversation between tool calls (after the results of the step
   under way), logged as user when it joins. A message that arrives as the model's last reply
   ends joins too: the turn goes on with it rather than dropping it.
4. **Tools** (rules 52-56): ``zoom(id, n)`` opens a view line into its two halves (n a power of
   2, id a multiple of n); ``zoom(id, 1)`` gives the message whole with its images (their paths
   in the text; the images themselves to a model that takes images); ``zoom("Name")`` gives an
   agent's whole chat from its own log; ``date(id)`` gives a message's
   date and time read in the local time zone. A call that names nothing gets an error result the
   model can read, never an exception.
5. **Subagents** (rules 54, 57, 58): a subagent is a fresh conversation: the view (pinned once,
   sent by every call of its conversation), then its task (no ``Turn:`` mark, D11). It logs
   nothing to the chat: its steps go to its own log ``<chat>/agents/<Name>.jsonl`` (what
   ``zoom("Name")`` reads). Its final reply comes back as one work message ``[Name] report``;
   the master never waits for it or polls: when a call of the master runs, the report joins it
   between tool calls like a message.

A turn runs in the process that owns the chat (``eukhe.memory.owner.Memory`` as owner): it
reads the planner under the owner's lock. The model is any client with the wire clients'
``stream(request)`` (``eukhe.inference.wire.client_for``); the requests are built by
``eukhe.memory.request.build_request`` from the chat's layers (one system prompt and the zoom and
date tools, shared with compactions: rules 26, 27, 29, 32). With the chat's live compactor
(``Compacting``: ``eukhe.memory.compactor.Compactor``) the wait, its end, the clock at each look
and the turn's message go through it, and every logged row tells it (its calls start); give it
``LockedChat(memory)`` so that its changes take the owner's lock like the clients' appends.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from eukhe import strict_json
from eukhe.inference.wire.base import closing
from eukhe.inference.wire.events import Event, Stop, TextDelta, ThinkingDelta, ThinkingSignature, ToolCall, Usage
from eukhe.inference.wire.plan import IMAGE_TYPES, Image, Message, Request
from eukhe.inference.wire.thoughts import Thoughts
from eukhe.memory import NODE
from eukhe.memory.chat import ZoomError
from eukhe.memory.durable import DurableChat
from eukhe.memory.lines import cap_text, entry_lines, split_text
from eukhe.memory.owner import Memory
from eukhe.memory.prompts import turn_text
from eukhe.memory.records import Kind
from eukhe.memory.request import Layers, build_request
from eukhe.memory.text import cut
from eukhe.memory.view import Node, render_lines
from eukhe.session.private import make_dirs, open_append, write_all

POLL = 0.02  # seconds between two looks at the planner while a turn waits for its view
MAX_STEPS = 64  # model calls in one turn at most (a model that calls tools forever ends)
AGENTS = "agents"
AGENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


class TurnError(Exception):
    """A turn that cannot run: the handle does not own the chat, or the owner has closed."""


class Model(Protocol):  # pragma: no mutate block
    """What a turn asks of a model: the wire clients' ``stream``."""

    def stream(self, request: Request) -> AsyncIterator[Event]: ...


# -- the deadline (D10) ------------------------------------------------------------------------------


class Deadline:
    """When a waiting turn stops waiting: ``seconds`` after it was made on ``clock``, or once
    ``event`` is set, whichever comes first. Tests give a clock or an event and never sleep."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic, event: threading.Event | None = None) -> None:
        self.clock = clock
        self.end = clock() + seconds
        self.event = event

    def passed(self) -> bool:
        return (self.event is not None and self.event.is_set()) or self.clock() >= self.end


# -- the pinned view (rules 47, 49, D10) -------------------------------------------------------------


@dataclass(frozen=True)
class Pinned:
    """The view a turn or a subagent sends with every call: its lines; which of them show their
    input cut (not summarized by the deadline); whether the turn waited, and the ids its message
    got (none for a subagent's view)."""

    lines: tuple[str, ...]
    cut: tuple[int, ...]
    waited: bool
    ids: tuple[int, ...] = ()


def _core(memory: Memory) -> Any:
    core = memory.core
    if core is None:
        raise TurnError(f"{memory.directory}: a turn runs in the process that owns the chat; this handle is a client of the owner")
    return core


def _unbuilt(chat: Any) -> list[int]:
    return [k for k, node in enumerate(chat.view.nodes) if not chat.is_built(node)]


def _render(chat: Any) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The view's lines, a line not built showing its input cut to 512 bytes (D10)."""
    nodes: list[Node] = chat.view.nodes
    cuts = tuple(k for k, node in enumerate(nodes) if not chat.is_built(node))

    def text(node: Node) -> str:
        line = chat.text(node) if chat.is_built(node) else None
        return line if line is not None else cut(chat.source(node), NODE)

    return tuple(render_lines(nodes, text)), cuts


class Compacting(Protocol):  # pragma: no mutate block
    """What a turn tells the live compactor (``eukhe.memory.compactor.Compactor``) of the chat:
    a turn waits (only the view's lines run, D5) and goes on; the clock is read at each look
    (retries every 10 s while a turn waits, the call deadline); messages go through it, so the
    calls they make due start; ``sync`` after a line logged elsewhere."""

    def wait(self) -> None: ...
    def go(self) -> None: ...
    def poll(self) -> None: ...
    def sync(self) -> None: ...
    def message(self, text: str, kind: str = "user", key: str | None = None) -> int: ...


class LockedChat(DurableChat):
    """The owner's ``DurableChat`` (the same state: one dictionary) whose changes take the owner's
    lock: the live compactor ends its calls in the event loop's thread while clients append in
    the owner's socket threads. Give it to the compactor in place of ``core.chat``."""

    def __init__(self, memory: Memory) -> None:  # shares the owner's chat; nothing of its own
        core = _core(memory)
        self.__dict__ = core.chat.__dict__
        self.owner_lock = core.lock

    def message(self, text: str, kind: Kind = Kind.USER, key: str | None = None) -> int:
        with self.owner_lock:
            return super().message(text, kind, key)

    def done(self, k: int, line: str) -> Node | None:
        with self.owner_lock:
            return super().done(k, line)

    def fail(self, k: int) -> Node | None:
        with self.owner_lock:
            return super().fail(k)

    def wait(self) -> None:
        with self.owner_lock:
            super().wait()

    def go(self) -> None:
        with self.owner_lock:
            super().go()

    def tick(self) -> None:
        with self.owner_lock:
            super().tick()


async def pin(
    memory: Memory,
    deadline: Deadline,
    message: str | None = None,
    kind: Kind = Kind.USER,
    poll: float = POLL,
    compactor: Compacting | None = None,
) -> Pinned:
    """Wait until the view settles or the deadline passes, then render it and (given a
    ``message``) log the message after it, in one step under the owner's lock. With the chat's
    live ``compactor``, the wait and the message go through it (D5)."""
    core = _core(memory)
    waited = False
    while True:
        with core.lock:
            if core.closed:
                raise TurnError(f"{memory.directory}: the chat's owner has closed")
            durable = core.chat
            chat = durable.chat
            if compactor is not None and waited:
                compactor.sync()  # calls for lines another client's messages made due
                compactor.poll()
            if not _unbuilt(chat) or deadline.passed():
                if waited:
                    (compactor or durable).go()
                lines, cuts = _render(chat)
                ids: list[int] = []
                if message is not None:
                    if compactor is not None:
                        ids = [compactor.message(piece, kind.value) for piece in split_text(message)]
                    else:
                        ids = [durable.message(piece, kind) for piece in split_text(message)]
                return Pinned(lines, cuts, waited, tuple(ids))
            if not waited:
                (compactor or durable).wait()
                waited = True
        await asyncio.sleep(poll)


# -- tools (rules 52-56) -----------------------------------------------------------------------------


def local_date(iso: str) -> str:
    """A logged date (ISO 8601 with its offset) read in the local time zone: ``YYYY-MM-DD HH:MM:SS
    Weekday (zone, UTC+hh:mm)``."""
    moment = datetime.fromisoformat(iso).astimezone()
    offset = moment.strftime("%z")
    return f"{moment:%Y-%m-%d %H:%M:%S} {moment:%A} ({moment.tzname()}, UTC{offset[:3]}:{offset[3:]})"


ZOOM = "zoom"
DATE = "date"


@dataclass(frozen=True)
class Result:
    text: str
    error: bool = False
    images: tuple[Image, ...] = ()


def load_images(paths: list[Path]) -> tuple[Image, ...]:
    """The images of a zoomed message that a model can read (PNG, JPEG, GIF, WebP); a file of
    another kind, or one that cannot be read, stays a path in the result's text only."""
    out: list[Image] = []
    for path in paths:
        media_type = IMAGE_TYPES.get(path.suffix.lower())
        if media_type is not None:
            try:
                out.append(Image(media_type, path.read_bytes()))
            except OSError:
                continue
    return tuple(out)


def agent_log(memory: Memory, name: str) -> Path:
    return memory.directory / AGENTS / f"{name}.jsonl"


def append_agent_line(path: Path, kind: Kind, text: str) -> None:
    """One step of an agent's own log (rule 54): one line in one write, fsynced; the file made
    0600 (its directory fsynced), in the chat's 0700 directories: it holds the conversation."""
    fd = open_append(path)
    try:
        write_all(fd, (json.dumps({"kind": kind.value, "text": text}, ensure_ascii=False) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def agent_chat(memory: Memory, name: str) -> list[str]:
    """An agent's whole chat from its own log: one ``kind: text`` entry per step, in order."""
    if not AGENT_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not an agent's name (a letter, then letters, digits, _ or -)")
    path = agent_log(memory, name)
    try:
        data = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"no agent named {name!r} in this chat") from None
    out = []
    for line in data.split("\n"):
        if line.strip():
            entry = json.loads(line)
            out.append(f"{entry['kind']}: {entry['text']}")
    return out


def _arguments(call: ToolCall) -> dict[str, Any]:
    try:
        value = strict_json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as error:
        raise ValueError(f"the arguments of {call.name} are not JSON: {error.msg} at column {error.colno}") from None
    if not isinstance(value, dict):
        raise ValueError(f"the arguments of {call.name} are a JSON object, not {call.arguments[:80]!r}")
    return value


def _whole(value: Any, what: str) -> int:
    """A whole number given as a JSON number or a string of digits (models write both)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,30}", value):
        return int(value)
    raise ValueError(f"{what} is a whole number, not {json.dumps(value)[:40]}")


def run_tool(memory: Memory, call: ToolCall) -> Result:
    """A tool call's result: zoom or date on the chat; an error result names what was wrong."""
    try:
        args = _arguments(call)
        if call.name == ZOOM:
            ident = args.get("id")
            if isinstance(ident, str) and not ident.lstrip("-").isdigit():
                return Result("\n".join(agent_chat(memory, ident)))
            n = _whole(args.get("n", 1), "n")
            zoomed = memory.zoom(_whole(ident, "id"), n)
            return Result("\n".join(list(zoomed) + [f"image: {path}" for path in zoomed.images]), images=load_images(zoomed.images))
        if call.name == DATE:
            return Result(local_date(memory.date(_whole(args.get("id"), "id"))))
        raise ValueError(f"no tool named {call.name!r} (tools: {ZOOM}, {DATE})")
    except (ValueError, ZoomError, KeyError) as error:
        return Result(f"error: {error}", True)


# -- the turn ----------------------------------------------------------------------------------------


Show = Callable[[str, str], None]  # (what, text): text, thinking, tool, result, joined, report, usage


def _quiet(what: str, text: str) -> None:
    pass


@dataclass
class Outcome:
    """What one turn did: the pinned view, the requests it sent, its final reply, the messages it
    logged (ids), and the stop of its last call."""

    pinned: Pinned
    requests: list[Request] = field(default_factory=list)
    reply: str = ""
    stop: str = ""
    steps: int = 0
    joined: int = 0
    usage: list[Usage] = field(default_factory=list)


class Turns:
    """The turns of one chat against one model, with the fixed system prompt and tools."""

    def __init__(
        self,
        memory: Memory,
        model: Model,
        *,
        layers: Layers | None = None,
        thinking: str | None = None,
        settle_seconds: float = 20.0,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], str] | None = None,
        poll: float = POLL,
        max_steps: int = MAX_STEPS,
        compactor: Compacting | None = None,
    ) -> None:
        _core(memory)
        self.compactor = compactor
        self.poll = poll
        self.max_steps = max_steps
        self.memory = memory
        self.model = model
        self.layers = layers if layers is not None else Layers.of()
        self.thinking = thinking
        self.settle_seconds = settle_seconds
        self.clock = clock
        self.now = now
        self._inbox: deque[tuple[Kind, str]] = deque()
        self._lock = threading.Lock()
        self.calling = False
        self.agents: dict[str, asyncio.Task[str]] = {}

    # -- messages from outside ------------------------------------------------------------------

    def send(self, text: str) -> bool:
        """A message while a call runs (rule 46): it joins the call between tool calls. False
        when no call runs (the caller starts a turn with it)."""
        with self._lock:
            if not self.calling:
                return False
            self._inbox.append((Kind.USER, text))
            return True

    def _take(self, last: bool) -> list[tuple[Kind, str]]:
        """The messages waiting to join; when the reply was the ``last`` (no tool call) and none
        waits, the call ends here, in the same step: a message sent after it starts a turn."""
        with self._lock:
            out = list(self._inbox)
            self._inbox.clear()
            if last and not out:
                self.calling = False
            return out

    def _log(self, block: dict[str, object], log: Callable[[Kind, str], None]) -> None:
        for kind, text in entry_lines(block):
            log(kind, text)

    def _chat_log(self, kind: Kind, text: str) -> None:
        self.memory.append(text, kind)
        if self.compactor is not None:
            self.compactor.sync()  # the calls the line made due start

    # -- one conversation -------------------------------------------------------------------------

    async def _converse(
        self, messages: list[Message], log: Callable[[Kind, str], None], show: Show, outcome: Outcome, inbox: bool, model: Model | None = None
    ) -> None:
        """Calls until a reply calls no tool and no message waits to join; ``messages`` is the
        conversation after the pinned view (its leading user texts join the view's message)."""
        for _step in range(self.max_steps):
            request = build_request(self.layers, outcome.pinned.lines, messages, self.thinking)
            outcome.requests.append(request)
            text: list[str] = []
            calls: list[ToolCall] = []
            thoughts = Thoughts()
            stop = ""
            async with closing((model or self.model).stream(request)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        text.append(event.text)
                        show("text", event.text)
                    elif isinstance(event, ThinkingDelta):
                        thoughts.text(event)
                        show("thinking", event.text)
                    elif isinstance(event, ThinkingSignature):
                        thoughts.sign(event)
                    elif isinstance(event, ToolCall):
                        calls.append(event)
                    elif isinstance(event, Usage):
                        outcome.usage.append(event)
                    elif isinstance(event, Stop):
                        stop = event.reason
            outcome.steps += 1
            outcome.stop = stop
            reply = "".join(text)
            if reply:
                outcome.reply = reply
                self._log({"type": "text", "text": reply}, log)
            if reply or calls:
                messages.append(Message("assistant", reply, tool_calls=tuple(calls), thoughts=thoughts.done()))
            for call in calls:
                try:
                    parsed: object = strict_json.loads(call.arguments) if call.arguments.strip() else {}
                except json.JSONDecodeError:
                    parsed = call.arguments
                self._log({"type": "tool_use", "name": call.name, "input": parsed}, log)
                show("tool", f"{call.name} {call.arguments}")
                result = run_tool(self.memory, call)
                clipped = cap_text(result.text)
                self._log({"type": "tool_result", "text": clipped}, log)
                show("result", clipped)
                messages.append(Message("tool", clipped, tool_call_id=call.id, tool_name=call.name, is_error=result.error, images=result.images))
            joined = self._take(not calls) if inbox else []
            for kind, said in joined:
                if kind is Kind.USER:
                    self._log({"type": "user", "text": said}, log)
                show("joined", said)
                messages.append(Message("user", said))
                outcome.joined += 1
            if not calls and not joined:
                return
        show("text", f"\n[the turn ends after {self.max_steps} model calls]")

    async def turn(self, text: str, *, state: str = "", deadline: Deadline | None = None, show: Show = _quiet) -> Outcome:
        """Answer one user message (rules 46-51, D10, D11)."""
        if not text.strip():
            raise ValueError("a turn needs a message with some text")
        with self._lock:
            if self.calling:
                raise TurnError("a turn is running: send the message to it (it joins between tool calls)")
            self.calling = True
        try:
            pinned = await pin(self.memory, deadline or Deadline(self.settle_seconds, self.clock), text, poll=self.poll, compactor=self.compactor)
            outcome = Outcome(pinned)
            state = state or self._state()
            messages = ([Message("user", state)] if state else []) + [Message("user", turn_text(text))]
            await self._converse(messages, self._chat_log, show, outcome, inbox=True)
            return outcome
        finally:
            with self._lock:
                self.calling = False
                left = list(self._inbox)
                self._inbox.clear()
            for kind, said in left:  # a call that failed: the messages sent to it are logged, not lost
                if kind is Kind.USER:
                    self._log({"type": "user", "text": said}, self._chat_log)

    def _state(self) -> str:
        if self.now is None:
            return ""
        return f"Now: {self.now()}"

    # -- subagents (rules 54, 57, 58) --------------------------------------------------------------

    async def subagent(self, name: str, task: str, *, deadline: Deadline | None = None, show: Show = _quiet, model: Model | None = None) -> Outcome:
        """Run agent ``name`` on ``task`` to its final reply (with the turns' model, or its own
        ``model``); the reply is logged as one work message ``[Name] report`` and joins the
        master's running call, if any."""
        if not AGENT_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an agent's name (a letter, then letters, digits, _ or -)")
        if not task.strip():
            raise ValueError("a subagent needs a task with some text")
        path = agent_log(self.memory, name)
        make_dirs(path.parent)

        def log(kind: Kind, text: str) -> None:
            append_agent_line(path, kind, text)

        pinned = await pin(self.memory, deadline or Deadline(self.settle_seconds, self.clock), poll=self.poll, compactor=self.compactor)
        outcome = Outcome(pinned)
        log(Kind.USER, task)
        messages = [Message("user", task)]  # the view, then the task, unmarked (D11)
        await self._converse(messages, log, show, outcome, inbox=False, model=model)
        report = f"[{name}] {outcome.reply}"
        self._log({"type": "report", "name": name, "text": outcome.reply}, self._chat_log)
        with self._lock:
            if self.calling:
                self._inbox.append((Kind.WORK, report))
        show("report", report)
        return outcome


def chat_turns(
    memory: Memory, model: Model, *, thinking: str | None = None, settle_seconds: float = 20.0, layers: Layers | None = None, compactor: Compacting | None = None
) -> Turns:
    """The turns of ``eukhe chat``: the chat's fixed system prompt and tools (shared with its
    compactor, rule 32), the local date and time as the per-turn state."""
    from eukhe.memory.store import local_now

    return Turns(
        memory,
        model,
        layers=layers or Layers.of(),
        thinking=thinking,
        settle_seconds=settle_seconds,
        now=lambda: local_date(local_now()),
        compactor=compactor,
    )
