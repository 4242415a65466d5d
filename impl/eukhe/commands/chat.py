"""`eukhe chat`: the one chat that never ends, in a terminal (memory.md "Use", §6), as a line
client of the chat's agent (issue 28 item 7).

    eukhe [--agent-dir D] chat [--provider P] [--model M] [--thinking L]

The chat is the session ``chat`` of the sessions dir, served by its agent process
(``eukhe.agent.chat``: the agent owns the chat memory, runs its compactor and answers each turn
from the pinned view with the agent's tools, zoom and date). The client reaches that agent,
starting ``eukhe agent serve --idle-exit`` when none serves it, and sets the chat's model (the
provider from --provider, else defaultProvider; the model from --model, else defaultModel, as
``eukhe ask`` resolves them) and its thinking level (--thinking, else defaultThinkingLevel).
Several clients may watch the chat at once: each shows every turn.

A line of text is a turn. The reply streams to the terminal; thoughts are shown marked
``[thinking]`` and never logged; tool calls and their results are shown as they happen, and
the agent's rows (``memory:`` rows of the compactor, retries, notes, the Director stack) each on
a line of its own. A line typed while a turn runs joins it between tool calls (rule 46). Before
each prompt the status bar shows ``mem N/128K`` (the view's bytes over the ceiling).

Commands:

    /memory                    the chat memory's status (mem N/128K, messages, nodes, view lines)
    /memory view               every view line, in <chat> ... </chat>
    /memory model              the memory role: compaction model and reasoning effort
                               (memory.model, memory.thinking, default medium)
    /memory model P/M [LEVEL]  set memory.model (and memory.thinking) in the global config
    /agent NAME TASK           a subagent on TASK in the background; its report joins the chat
    /help                      these commands
    /quit                      leave (end of input leaves too, once the turn under way ended)

Bad input (an unknown command, a bad model name or level, a line that is not UTF-8) is one line
``eukhe chat: ...`` on stderr and the chat goes on; a turn that fails (a fault of the provider
the retries did not cure, no usable model) ends with one line naming the reason, and the chat
goes on. Nothing prints a traceback unless EUKHE_DEBUG=1.

Exit status: 0 when the chat ends (``/quit`` or the end of input) and every turn was answered;
exit status 1 when any turn (or a subagent) failed for a fault of the provider or the environment, so a script
that pipes lines into the chat sees the failure, or when the agent cannot be reached or ended;
70 when a turn met a bug in eukhe. What it cannot start with (an unknown provider, no
credentials, a setting past its bound) is one line and exit 2 or 1 before the first prompt, as
for ``eukhe ask``. A stdout closed by its reader ends the chat quietly (exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from eukhe.cli import EXIT_BUG, EXIT_FAULT, EXIT_OK, clip

COMMANDS = ("/memory", "/memory view", "/memory model", "/agent", "/help", "/quit")
SENT = ("/memory", "/agent")
ANSWERED = ("answered", "refused")  # a refusal is an answer: shown as one [refused] row


def register(sub: Any) -> None:
    p = sub.add_parser("chat", help="the chat that never ends, in this terminal (a client of the chat's agent)")
    p.add_argument("--provider", default=None, help="the provider id (default: the defaultProvider setting)")
    p.add_argument("--model", default=None, help="the model id (default: defaultModel, else the provider's default model)")
    p.add_argument("--thinking", default=None, help="the thinking level of turns (default: the defaultThinkingLevel setting)")
    p.set_defaults(run=run_chat)


def mem_bar(event: Any) -> str:
    """The status bar: ``mem N/128K`` (the view's bytes over its ceiling, in thousands)."""
    return f"mem {event.view_bytes // 1000}K/{event.ceiling // 1000}K"


class Terminal:
    """What the chat writes: the reply as it streams, marked rows for the rest."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self.column = 0  # characters on the current line (0: at a line start)
        self.mode = ""

    def write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self.column = 0 if text.endswith("\n") else self.column + len(text)

    def row(self, text: str) -> None:
        """A whole line of its own."""
        if self.column:
            self.write("\n")
        self.write(text + "\n")
        self.mode = ""

    def error(self, text: str) -> None:
        if self.column:
            self.write("\n")
        self.err.write(clip(f"eukhe chat: {text}") + "\n")
        self.err.flush()

    def stream(self, what: str, text: str) -> None:
        """The reply (``text``) or the thoughts (``thinking``) as they stream."""
        if self.mode != what:
            if self.column:
                self.write("\n")
            if what == "thinking":
                self.write("[thinking] ")
            self.mode = what
        self.write(text)


def shown(event: Any, provider: str) -> str | None:
    """The row one event of a turn shows (None: nothing, or streamed text)."""
    from eukhe.agent import protocol as p

    if isinstance(event, p.ToolCallEvent):
        return f"[tool] {event.name} {event.arguments}"
    if isinstance(event, p.ToolResultEvent):
        lines = event.text.splitlines() or [""]
        more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        return f"[result] {lines[0][:200]}{more}"
    if isinstance(event, p.RowEvent):
        return event.text if event.kind == "memory" else f"[{event.kind}] {event.text}"
    if isinstance(event, p.RetryEvent):
        return f"[retry {event.attempt}/{event.retries}: {provider}: {event.kind}; waiting {event.wait:.1f} s]"
    if isinstance(event, p.NoteEvent):
        return f"[note {event.used}/{event.max}: {event.kind}]"
    if isinstance(event, p.StepEvent) and event.decision != "yield":
        return f"[step] {event.decision} ({event.rule})"
    if isinstance(event, p.SubagentEvent) and isinstance(event.event, p.TurnEndEvent) and event.event.reason != "answered":
        return f"[{event.agent}] {event.event.reason}" + (f": {event.event.text}" if event.event.text else "")
    return None


class ChatClient:
    """One `eukhe chat` run: lines from the terminal to the agent, its events to the terminal."""

    def __init__(self, client: Any, term: Terminal, provider: str) -> None:
        self.client = client
        self.term = term
        self.provider = provider
        self.status = EXIT_OK  # EXIT_FAULT once a turn failed, EXIT_BUG once one met a bug
        self.running = False  # a turn of the chat runs (this client's or another's)
        self.idle = asyncio.Event()
        self.idle.set()

    def failed(self, status: int) -> None:
        self.status = max(self.status, status)

    def prompt(self, bar: str) -> None:
        self.term.row(f"[{bar}]")
        self.term.write("> ")
        self.term.column = 0

    # -- events of the agent -------------------------------------------------------------------------

    async def watch(self) -> None:
        """Show every event of the agent until its connection ends."""
        from eukhe.agent.client import AgentGone

        while True:
            try:
                event = await self.client.next()
            except AgentGone:
                return
            self.show(event)

    def show(self, event: Any) -> None:
        from eukhe.agent import protocol as p

        if event.type in ("ok", "cvar_result", "model", "thinking_level", "directors", "switches", "state", "model_catalog", "cvar_saved"):
            return
        if isinstance(event, p.TurnStartEvent):
            self.running = True
            self.idle.clear()
        elif isinstance(event, p.DeltaEvent):
            self.term.stream("text", event.text)
        elif isinstance(event, p.ThinkingEvent):
            self.term.stream("thinking", event.text)
        elif isinstance(event, p.TurnEndEvent):
            self.running = False
            if event.reason not in ANSWERED:
                self.failed(EXIT_FAULT)
                self.term.error(event.text or event.reason)
            elif self.term.column:
                self.term.write("\n")
        elif isinstance(event, p.MemoryEvent):
            if event.re is None and not self.running:  # the agent's turn ended, and the runs it chained
                self.idle.set()
                self.prompt(mem_bar(event))
        elif isinstance(event, p.ErrorEvent):
            if event.kind == "turn_failed":
                self.failed(EXIT_BUG)
                if os.environ.get("EUKHE_DEBUG") == "1":
                    print(event.message, file=sys.stderr)
                self.term.error(f"a bug in eukhe ({event.message}); please report it")
            elif event.re is None:
                self.term.error(event.message)
        else:
            if isinstance(event, p.SubagentEvent) and isinstance(event.event, p.TurnEndEvent) and event.event.reason not in ANSWERED:
                self.failed(EXIT_FAULT)  # a subagent's failure shows in the exit status as a turn's does
            row = shown(event, self.provider)
            if row is not None:
                self.term.row(row)

    # -- lines of the terminal -----------------------------------------------------------------------

    async def line(self, raw: bytes) -> bool:
        """One line typed; False once the chat should end."""
        from eukhe.agent import protocol as p

        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            self.term.error(f"the line is not UTF-8 (byte {error.start}); nothing was sent")
            return True
        said = text.strip()
        if said.startswith("/"):
            head = said.split()[0]
            if head in ("/quit", "/exit"):
                return False
            if head == "/help":
                self.term.row("commands: " + ", ".join(COMMANDS))
            elif head in SENT:
                answer = await self.client.request(p.CommandRequest(line=said))
                self.answer(answer)
            else:
                self.term.error(f"unknown command {head!r} (commands: {', '.join(COMMANDS)})")
            if not self.running:
                await self.bar()
            return True
        if not said:
            if not self.running:
                await self.bar()
            return True
        self.idle.clear()  # set again by the memory bar that follows the turn's end
        answer = await self.client.request(p.SteerRequest(text=text))  # joins the running turn, or starts one
        if isinstance(answer, p.ErrorEvent):
            self.term.error(answer.message)
            if not self.running:  # nothing was started or joined (a joined turn runs: its end sets idle)
                self.idle.set()
        elif answer.text == p.JOINS_THE_TURN:
            self.term.row("[queued: joins the running call]")
        else:  # a turn of its own starts: a turn that ended as the steer went may have set idle (its bar came first)
            self.idle.clear()
        return True

    def answer(self, event: Any) -> None:
        """A reply to a command: its text and lines, or its error."""
        from eukhe.agent import protocol as p

        if isinstance(event, p.ErrorEvent):
            self.term.error(event.message)
        elif isinstance(event, p.MemoryEvent):
            if event.text:
                self.term.row(event.text)
            for shown_line in event.lines:
                self.term.row(shown_line)
        elif isinstance(event, p.OkEvent):
            self.term.row(f"[agent] {event.text}")  # a command's (/agent NAME TASK): the one request that answers ok

    async def bar(self) -> None:
        """The prompt, with the status bar as the agent gives it."""
        from eukhe.agent import protocol as p

        answer = await self.client.request(p.CommandRequest(line="/memory"))
        self.prompt(mem_bar(answer) if isinstance(answer, p.MemoryEvent) else "mem ?")

    async def start(self) -> None:
        """The first prompt; a chat whose memory the agent could not take (another process owns
        it) cannot start: EnvironmentFault."""
        from eukhe.agent import protocol as p
        from eukhe.cli import EnvironmentFault

        answer = await self.client.request(p.CommandRequest(line="/memory"))
        if not isinstance(answer, p.MemoryEvent):
            raise EnvironmentFault(f"eukhe chat: {getattr(answer, 'message', answer)}")
        self.prompt(mem_bar(answer))

    async def run(self, fd: int) -> int:
        """The chat until its input ends (and the turn under way with it) or ``/quit``; an agent
        whose connection ends first is an error, exit 1."""
        from eukhe.agent.client import AgentGone

        watching = asyncio.ensure_future(self.watch())
        try:
            await self.start()
            async for raw in lines_of(fd):
                if watching.done() or not await self.line(raw):
                    break
            if not watching.done():
                await asyncio.wait({watching, asyncio.ensure_future(self.idle.wait())}, return_when=asyncio.FIRST_COMPLETED)
            gone = watching.done()  # the watch ends only with the agent's connection
        except AgentGone:  # a request the connection ended under
            gone = True
        finally:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            await self.client.close()
        if gone:
            self.term.error("the chat's agent ended")
            self.failed(EXIT_FAULT)
        return self.status


async def lines_of(fd: int) -> Any:
    """The lines of ``fd`` (a terminal, a pipe or a file), read without a thread."""
    lines: asyncio.Queue[bytes | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    pending = bytearray()

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except OSError:  # a terminal that refuses the read (EIO: a background job, a hangup mid-read): the end of input
            data = b""
        if not data:
            loop.remove_reader(fd)
            if pending:
                lines.put_nowait(bytes(pending))
            lines.put_nowait(None)
            return
        start = len(pending)  # what came before holds no newline: a long line is scanned once
        pending.extend(data)
        while (end := pending.find(b"\n", start)) >= 0:
            lines.put_nowait(bytes(pending[: end + 1]))
            del pending[: end + 1]
            start = 0

    try:
        loop.add_reader(fd, readable)
    except PermissionError:  # a regular file as input: read it whole, line by line
        while data := os.read(fd, 65536):
            pending.extend(data)
        for piece in bytes(pending).splitlines(keepends=True):
            lines.put_nowait(piece)
        pending.clear()
        lines.put_nowait(None)
    try:
        while (raw := await lines.get()) is not None:
            yield raw
    finally:
        loop.remove_reader(fd)


def chat_session(agent: Path, sessions: Path) -> Any:
    """The sessions store and the chat's session id (made, marked as the chat, when missing)."""
    from eukhe.agent.chat import CHAT_SESSION, CONTEXT_DOC, CHAT
    from eukhe.session import MAIN, SessionExists, Store

    store = Store(sessions)
    if CHAT_SESSION not in store.ids():
        try:
            with store.create(CHAT_SESSION) as created:
                created.conversation(MAIN).commit(documents={CONTEXT_DOC: CHAT})
        except SessionExists:  # another client made it meanwhile
            pass
    return store


async def _connect(agent: Path, store: Any, model: Any, level: str) -> tuple[Any, list[str]]:
    """A client of the chat's agent, on the chat's model and thinking level, and the rows the
    agent showed before (its compactor's, its settings errors)."""
    from eukhe.agent import protocol as p
    from eukhe.agent.chat import CHAT_SESSION
    from eukhe.agent.client import AgentClient
    from eukhe.agent.reach import reach

    client, _started = await reach(agent, store.path(CHAT_SESSION), CHAT_SESSION, Path.cwd())
    assert isinstance(client, AgentClient)
    state = await client.next()
    assert isinstance(state, p.StateEvent)  # an agent's first event to a client is its state, before any other
    rows = [row for row in (shown(r, model.provider) for r in state.rows) if row is not None]
    if state.model is None or (state.model.provider, state.model.id) != (model.provider, model.id):
        await client.request(p.CommandRequest(line=f"/model {model.provider}/{model.id}"))
    if state.thinking_level != level:
        await client.request(p.CommandRequest(line=f"/effort {level}"))
    return client, rows


def run_chat(args: argparse.Namespace) -> int:
    from eukhe import paths
    from eukhe.agent.chat import said
    from eukhe.agent.client import AgentGone
    from eukhe.agent.reach import AgentUnreachable
    from eukhe.cli import EnvironmentFault, os_message, show_path
    from eukhe.commands.inference import connect
    from eukhe.memory.store import chat_dir

    term = Terminal(sys.stdout, sys.stderr)
    from eukhe.agent.runner import TIMEOUT_SECONDS

    # `eukhe ask`'s checks of the flags, the settings and the model, before the first prompt; the
    # client it builds sends nothing (the agent sends the chat's requests) and is closed at once
    args.timeout = TIMEOUT_SECONDS
    connection = connect(args, "eukhe chat", uses=("memory.settleTimeoutMs",))
    model, level = connection.model, str(connection.level)
    store = chat_session(connection.agent, paths.session_dir(None, agent_dir_flag=args.agent_dir))

    async def run() -> int:
        await connection.pool.aclose()
        try:
            client, rows = await _connect(connection.agent, store, model, level)
        except (AgentUnreachable, AgentGone) as error:
            raise EnvironmentFault(f"eukhe chat: {said(error)}") from None
        except OSError as error:  # a socket's error names no path: the agent dir is where
            raise EnvironmentFault(f"eukhe chat: cannot reach the chat's agent (agent dir {show_path(connection.agent)}): {os_message(error)}") from None
        term.row(f"eukhe chat: {model.provider}/{model.id}, chat {chat_dir(connection.agent)}; /help for commands")
        for row in rows:
            term.row(row)
        return await ChatClient(client, term, model.provider).run(sys.stdin.fileno())

    return asyncio.run(run())

