"""The chat that never ends, served by an agent process (memory.md "Use", §6; issue 28 item 7).

The chat is a session like any other (its id ``CHAT_SESSION``, its main conversation marked by
the ``eukhe.context`` document ``"chat"``), so its turns run the agent's one turn loop
(``eukhe.agent.loop``: the guard, notes, repair, forced calls, the Director stack, tools,
subagents) and its clients speak the agent's protocol. What differs is what a request holds:

- **The memory** (``ChatMemory``): the agent process owns the chat memory of its agent dir
  (``<agent dir>/chat/main``, memory.md rule 7: one owner) for as long as it runs, with the
  live compactor on the memory role's model (D6, as ``eukhe chat`` chose it), sharing the turns'
  system prompt and tools (rule 32). Its changes are ``memory`` rows.
- **A run's context** (``ChatRun``): the run pins the view when it starts (rule 47: it waits for
  the view to settle, at most memory.settleTimeoutMs, then renders it and logs the message
  after it, D10); every request of the run sends that pinned view, then the per-turn state (the
  local date and time) and the message marked ``Turn:``, then the run's own messages: its
  replies, calls and results, the messages that joined it (rules 46, 49-51, D11). Nothing of an
  earlier run is carried over (rule 50): the session's log keeps them, the view holds them.
- **The log** (rule 48): each reply, tool call, tool result, joined message and subagent report
  of the run is logged to the chat as it is committed to the session (kinds eukhe, tool, echo,
  user, work; tool output clipped, rule 9).
- **The tools**: zoom and date (rules 52-56, ``eukhe.memory.turn.run_tool``) before the agent's
  own tools, one set for every call of the chat and its compactor (rule 27).
- **Subagents** (rules 54, 57, 58): a subagent of the chat (``/agent``, the ``task`` tool) starts
  from the view, then its task; its steps go to its own log ``<chat>/agents/<Name>.jsonl``, which
  ``zoom("Name")`` reads (``agent_steps``); its report joins the chat as one work message.

The session keeps what the agent needs across restarts (the Director stack, the model, the
thinking level); the chat memory is what the model reads. A session compaction (S6.6) is never
started in the chat (the view is its compaction), and the chat is never titled (S9 titles a
session's first prompt; the chat is the one chat).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from eukhe.agent.loop import WORK_ROW
from eukhe.agent.tools.base import Tool, ToolContext, ToolResult
from eukhe.inference.wire.events import ToolCall
from eukhe.inference.wire.plan import Image, Message
from eukhe.memory.lines import entry_lines, split_text
from eukhe.memory.owner import Memory, status_line
from eukhe.memory.prompts import TOOLS as MEMORY_TOOLS, turn_text
from eukhe.memory.records import Kind as LogKind
from eukhe.memory.request import Layers, request_messages
from eukhe.memory.turn import POLL, Deadline, LockedChat, Pinned, agent_log, append_agent_line, local_date, pin, run_tool
from eukhe.memory.store import local_now
from eukhe.session import Kind
from eukhe.session.entries import NewEntry
from eukhe.session.private import make_dirs

CHAT_SESSION = "chat"  # the chat's session id in the sessions dir
CONTEXT_DOC = "eukhe.context"  # "chat": the session's turns answer from the chat memory
CHAT = "chat"


class ChatBusy(Exception):
    """Another process owns the chat memory (memory.md rule 7)."""


def is_chat(document: object) -> bool:
    """Whether a session's ``eukhe.context`` document makes it the chat."""
    return document == CHAT


class ChatMemory:
    """The chat memory the agent process owns, its compactor and its tools (the module's
    docstring). ``close`` lets it go."""

    def __init__(
        self, memory: Memory, row: Callable[[str], None], *, compactor: Any = None, clock: Callable[[], float] = time.monotonic, poll: float = POLL
    ) -> None:
        """Over ``memory``, owned by this process; ``compactor`` a live one (else
        ``start_compactor`` makes it); ``clock`` and ``poll`` time the wait for the view."""
        self.memory = memory
        self.row = row
        self.compactor: Any = compactor
        self.clock = clock
        self.poll = poll
        self.pool: Any = None
        self.layers = Layers.of()

    @classmethod
    def open(cls, directory: Path, row: Callable[[str], None]) -> ChatMemory:
        """The chat memory at ``directory``, owned for the agent's life; ChatBusy when another
        process owns it (rule 7)."""
        memory = Memory(directory)
        if not memory.is_owner:
            memory.close()
            raise ChatBusy(f"another eukhe chat owns {directory}; one chat runs turns at a time")
        return cls(memory, row)

    def tools(self) -> tuple[Tool, ...]:
        """zoom and date as tools of the turn loop, run on this chat."""

        def body(name: str) -> Callable[[Mapping[str, Any], ToolContext], Any]:
            async def run(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
                result = run_tool(self.memory, ToolCall(0, "", name, json.dumps(dict(arguments))))
                return ToolResult(result.text, result.error, images=result.images)

            return run

        return tuple(Tool(t.name, t.description, t.parameters, body(t.name)) for t in MEMORY_TOOLS)

    def offer(self, tools: Sequence[Tool]) -> None:
        """The chat's layers over the turn loop's own ``tools`` (zoom and date lead them): one
        system prompt and one tool set for turns and compactions (rules 27, 32)."""
        own = tuple(t.wire for t in tools if t.name not in {m.name for m in MEMORY_TOOLS})
        self.layers = Layers.of(tools=own)
        if self.compactor is not None:
            self.compactor.layers = self.layers

    def start_compactor(self, agent_dir: Path, cvars: Any, timeout: float) -> None:
        """The live compactor on the memory role's model (memory.model with memory.thinking, else
        modelRoles.memory, D6); with none, or one that cannot be reached, one ``memory:`` row
        says why and turns take their view at the settle deadline (D10)."""
        from eukhe.inference import catalog, quirks, wire
        from eukhe.inference.resolve import NoModel, resolve_model
        from eukhe.inference.wire import events
        from eukhe.inference.wire.pool import Pool
        from eukhe.memory.compactor import Compactor
        from eukhe.memory.request import MemoryModelUnset, choose_model

        provider, model = cvars.value([], "defaultProvider") or "", cvars.value([], "defaultModel") or ""
        saved = f"{provider}/{model}" if provider and model else None
        try:
            choice = choose_model(
                cvars.value([], "memory.model") or "",
                cvars.value([], "memory.thinking") or "medium",
                cvars.value([], "modelRoles.memory") or None,
                saved,
                "the compactor takes memory.model or modelRoles.memory, never the turn's model",
            )
            wired = resolve_model(agent_dir, cvars, choice.provider, choice.id)
            if self.pool is None:
                self.pool = Pool()
            client = wire.client_for(wired, timeout=timeout, pool=self.pool)
        except (MemoryModelUnset, ValueError, NoModel, quirks.QuirksError, catalog.CatalogError, events.BadRequest) as error:
            self.row(f"memory: no compactor: {said(error)}")
            return
        if self.compactor is not None:
            self.compactor.client, self.compactor.thinking = client, choice.thinking
        else:
            self.compactor = Compactor(
                LockedChat(self.memory), client, self.layers, thinking=choice.thinking, clock=time.monotonic, rows=lambda row: self.row(row.render())
            )
            self.compactor.sync()
        self.row(f"memory: compactor on {choice.provider}/{choice.id} ({choice.source}, thinking {choice.thinking})")

    async def run(self, text: str, settle_seconds: float) -> ChatRun:
        """A run starts: the pinned view, the message logged after it (rule 47)."""
        pinned = await pin(self.memory, Deadline(settle_seconds, self.clock), text, poll=self.poll, compactor=self.compactor)
        return ChatRun(pinned, text, local_date(local_now()))

    def log(self, entries: Sequence[NewEntry]) -> None:
        """The chat's log of what a run committed (rule 48)."""
        for entry in entries:
            for kind, text in chat_lines(entry):
                self.memory.append(text, kind)
                if self.compactor is not None:
                    self.compactor.sync()  # the calls the line made due start

    def agent_steps(self, name: str, entries: Sequence[NewEntry]) -> None:
        """A subagent's steps to its own log ``<chat>/agents/<Name>.jsonl`` (rule 54: zoom("Name")
        reads it; nothing goes to the chat but its report). Its first message is the view and its
        task: the task alone is logged, the chat holds the view."""
        path = agent_log(self.memory, name)
        make_dirs(path.parent)
        for entry in entries:
            for kind, text in chat_lines(entry):
                if kind is LogKind.USER and text.startswith("<chat>\n") and "</chat>\n\n" in text:
                    text = text.split("</chat>\n\n", 1)[1]
                append_agent_line(path, kind, text)

    def status(self) -> dict[str, Any]:
        return self.memory.status()

    def command(self, words: Sequence[str], settings: Any) -> tuple[str, list[str]]:
        """``/memory`` (the status), ``/memory view`` (every view line), ``/memory model
        [PROVIDER/MODEL [LEVEL]]`` (the memory role, saved in the global config): the reply's
        text and lines. ValueError names a bad line."""
        if not words:
            status = self.status()
            return status_line(status), [f"chat {status['directory']}"]
        if words[0] == "view" and len(words) == 1:
            return "", ["<chat>", *self.memory.view(), "</chat>"]
        if words[0] == "model":
            return self._model(list(words[1:]), settings), []
        raise ValueError(f"unknown /memory command {' '.join(words)!r} (/memory, /memory view, /memory model)")

    def _model(self, words: list[str], settings: Any) -> str:
        from eukhe.effort import EffortError, parse_level
        from eukhe.memory.request import split_model

        cvars = settings.cvars
        if not words:
            model = cvars.value([], "memory.model") or "(unset: the auxiliary model)"
            return f"memory.model {model}  memory.thinking {cvars.value([], 'memory.thinking')}"
        if len(words) > 2:
            raise ValueError("/memory model wants PROVIDER/MODEL and at most a level")
        split_model(words[0])
        level = None
        if len(words) == 2:
            try:
                level = str(parse_level(words[1]))
            except EffortError as error:
                raise ValueError(f"/memory model: {error}") from None
        settings.set_global("memory.model", words[0])
        if level is not None:
            settings.set_global("memory.thinking", level)
        return f"memory.model {words[0]}  memory.thinking {settings.cvars.value([], 'memory.thinking')} (saved)"

    async def close(self) -> None:
        if self.compactor is not None:
            await self.compactor.close()
        if self.pool is not None:
            await self.pool.aclose()
        self.memory.close()


class ChatRun:
    """One run's context: the pinned view, the state and the marked message, the run's messages."""

    def __init__(self, pinned: Pinned, text: str, now: str) -> None:
        self.pinned = pinned
        self.lead = (Message("user", f"Now: {now}"), Message("user", turn_text(text)))
        self.images: dict[str, tuple[Image, ...]] = {}  # a zoom result's images, by call id (rule 53)

    def messages(self, after: Sequence[Message]) -> tuple[Message, ...]:
        """The request's messages: the pinned view, the state and the message, then ``after``
        (the run's own messages, from the session's model view), zoomed images restored."""
        images = self.images
        own = tuple(replace(m, images=images[m.tool_call_id]) if m.role == "tool" and m.tool_call_id in images else m for m in after)
        return request_messages(self.pinned.lines, self.lead + own)


def chat_lines(entry: NewEntry) -> list[tuple[LogKind, str]]:
    """The chat's messages for one committed entry: a reply's text (eukhe), a tool call (tool),
    its result clipped (echo), a message that joined (user), a subagent's report (work); the
    rest (rows of the agent, documents) is the session's alone."""
    content = entry.content
    if entry.kind is Kind.ASSISTANT:
        return entry_lines({"type": "text", "text": str(content.get("text", "") if isinstance(content, dict) else content)})
    if entry.kind is Kind.TOOL_CALL and isinstance(content, dict):
        return entry_lines({"type": "tool_use", "name": content.get("name"), "input": content.get("arguments")})
    if entry.kind is Kind.TOOL_RESULT and isinstance(content, dict):
        return entry_lines({"type": "tool_result", "text": str(content.get("text", ""))})
    if entry.kind is Kind.USER:
        return entry_lines({"type": "user", "text": str(content)})
    if entry.kind is Kind.CUSTOM and entry.custom_type == WORK_ROW and isinstance(content, dict):
        return [(LogKind.WORK, piece) for piece in split_text(str(content.get("text", "")))]
    return []


def said(error: BaseException) -> str:
    """An error as one line: the first line of its message, else its type's name."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__

