"""`eukhe chat`: the one chat that never ends, in a terminal (memory.md "Use", §6).

    eukhe [--agent-dir D] chat [--provider P] [--model M] [--thinking L] [--timeout S]

A line of text is a turn (``eukhe.memory.turn``): the view, then the message, to the provider's
model (the provider from --provider, else defaultProvider; the model from --model, else
defaultModel, as ``eukhe ask`` resolves them), with the zoom and date tools. The reply streams
to the terminal; thoughts are shown marked ``[thinking]`` and never logged; tool calls and
their results are shown as they happen. A line typed while a turn's call runs joins that call
between tool calls (rule 46). Before each prompt the status bar shows ``mem N/128K`` (the
view's bytes over the ceiling).

Commands:

    /memory                    the chat memory's status (mem N/128K, messages, nodes, view lines)
    /memory view               every view line, in <chat> ... </chat>
    /memory model              the memory role: compaction model and reasoning effort
                               (memory.model, memory.thinking, default medium)
    /memory model P/M [LEVEL]  set memory.model (and memory.thinking) in the global config
    /agent NAME TASK           a subagent on TASK; its report comes back as [NAME] ...
    /help                      these commands
    /quit                      leave (end of input leaves too)

Bad input (an unknown command, a bad model name or level, a line that is not UTF-8) is one line
``eukhe chat: ...`` on stderr and the chat goes on; a fault of the provider (an HTTP error, no
connection, a timeout) ends the turn with one line naming the provider and the reason, and the
chat goes on; one that can be retried, before any of the reply arrived, is retried as the retry.*
settings say, each retry one row ``[retry 1/3: PROVIDER: KIND; waiting N s]``. A refusal of the
model shows as one row, ``[refused] <its text>``. The turns and the compactor send their requests
through one HTTP client per provider, kept for the whole chat (``eukhe.inference.wire.pool``).
Nothing prints a traceback unless EUKHE_DEBUG=1.

Exit status: 0 when the chat ends (``/quit`` or the end of input) and every turn was answered
(a refusal is an answer; a bad line is not a turn); exit status 1 when any turn (or /agent
subagent) failed for a fault of the provider or the environment, so a script that pipes lines
into the chat sees the failure; 70 when a turn met a bug in eukhe. What it cannot start with (an
unknown provider, no credentials, a --timeout that is not a finite number above 0, a setting past
its bound) is one line and exit 2 or 1 before the first prompt, as for ``eukhe ask``. A stdout
closed by its reader ends the chat quietly (exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eukhe.cli import EXIT_BUG, EXIT_FAULT, EXIT_OK, clip

if TYPE_CHECKING:
    from eukhe.inference.wire.events import Event


COMMANDS = ("/memory", "/memory view", "/memory model", "/agent", "/help", "/quit")


class ChatInputError(ValueError):
    """A line of the chat that cannot be done: the message names what was wrong."""


def register(sub: Any) -> None:
    p = sub.add_parser("chat", help="the chat that never ends, in this terminal (turns over the chat memory)")
    p.add_argument("--provider", default=None, help="the provider id (default: the defaultProvider setting)")
    p.add_argument("--model", default=None, help="the model id (default: defaultModel, else the provider's default model)")
    p.add_argument("--thinking", default=None, help="the thinking level of turns (default: the defaultThinkingLevel setting)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds without a byte before a call fails (a finite number above 0; default 120)")
    p.set_defaults(run=run_chat)


def mem_bar(status: dict[str, Any]) -> str:
    """The status bar: ``mem N/128K`` (the view's bytes over its ceiling, in thousands)."""
    return f"mem {status['view_bytes'] // 1000}K/{status['ceiling'] // 1000}K"


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

    def show(self, what: str, text: str) -> None:
        """A turn's display callback (``eukhe.memory.turn.Show``)."""
        if what in ("text", "thinking"):
            if self.mode != what:
                if self.column:
                    self.write("\n")
                if what == "thinking":
                    self.write("[thinking] ")
                self.mode = what
            self.write(text)
            return
        if what == "tool":
            self.row(f"[tool] {text}")
        elif what == "result":
            lines = text.splitlines() or [""]
            more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
            self.row(f"[result] {lines[0][:200]}{more}")
        elif what == "joined":
            self.row(f"[joined] {text}")
        elif what == "report":
            self.row(f"[report] {text}")


class ShowRefusals:
    """A model whose refusals show as one row, ``[refused] <text>`` (a turn keeps only the stop
    of its call; the refusal's text would otherwise never reach the terminal)."""

    def __init__(self, model: Any, term: Terminal) -> None:
        self.model = model
        self.term = term

    async def stream(self, request: Any) -> AsyncIterator[Event]:
        from eukhe.inference.wire.base import closing
        from eukhe.inference.wire.events import Refusal

        async with closing(self.model.stream(request)) as events:
            async for event in events:
                if isinstance(event, Refusal):
                    self.term.row(f"[refused] {event.text or '(the provider gave no reason)'}")
                yield event


def _level(text: str, what: str) -> str:
    from eukhe.effort import EffortError, parse_level

    try:
        return str(parse_level(text))
    except EffortError as error:
        raise ChatInputError(f"{what}: {error}") from None


class Session:
    """One `eukhe chat` run: the chat memory, its turns, the terminal."""

    def __init__(
        self, memory: Any, turns: Any, settings: Any, term: Terminal, agent_dir: Path | None = None, timeout: float = 120.0, pool: Any = None
    ) -> None:
        self.memory = memory
        self.pool = pool  # wire.pool.Pool of the chat's HTTP clients, closed as the loop ends
        self.turns = turns
        self.settings = settings
        self.term = term
        self.agent_dir = agent_dir
        self.timeout = timeout
        self.turn: asyncio.Task[Any] | None = None
        self.agents: set[asyncio.Task[Any]] = set()
        self.compactor: Any = None
        self.status = EXIT_OK  # the chat's exit status: EXIT_FAULT once a turn failed, EXIT_BUG once one met a bug

    def failed(self, status: int) -> None:
        self.status = max(self.status, status)

    def start_compactor(self) -> None:
        """The chat's live compactor on the memory role's model (memory.model with memory.thinking,
        D6), sharing the turns' layers (rule 32); its changes show as ``memory:`` rows. With no
        model, or one that cannot be reached, one ``memory:`` row says why and turns take their
        view at the settle deadline (D10)."""
        import time

        from eukhe.inference.resolve import NoModel, resolve_model
        from eukhe.inference import catalog, quirks, wire
        from eukhe.inference.wire import events
        from eukhe.memory.compactor import Compactor
        from eukhe.memory.request import MemoryModelUnset, choose_model
        from eukhe.memory.turn import LockedChat

        cvars = self.settings.cvars
        provider, model = cvars.value([], "defaultProvider") or "", cvars.value([], "defaultModel") or ""
        saved = f"{provider}/{model}" if provider and model else None
        try:
            choice = choose_model(
                cvars.value([], "memory.model") or "",
                cvars.value([], "memory.thinking") or "medium",
                cvars.value([], "modelRoles.memory") or None,  # the auxiliary model of D6: the memory role
                saved,
                "the compactor takes memory.model or modelRoles.memory, never the turn's model",
            )
            assert self.agent_dir is not None
            wired = resolve_model(self.agent_dir, cvars, choice.provider, choice.id)
            client = wire.client_for(wired, timeout=self.timeout, pool=self.pool)
        except (MemoryModelUnset, ValueError, NoModel, quirks.QuirksError, catalog.CatalogError, events.BadRequest) as error:
            self.term.row(f"memory: no compactor: {_said(error)}")
            return
        if self.compactor is not None:
            self.compactor.client, self.compactor.thinking = client, choice.thinking
        else:
            self.compactor = Compactor(LockedChat(self.memory), client, self.turns.layers, thinking=choice.thinking, clock=time.monotonic, rows=lambda row: self.term.row(row.render()))
            self.turns.compactor = self.compactor
            self.compactor.sync()
        self.term.row(f"memory: compactor on {choice.provider}/{choice.id} ({choice.source}, thinking {choice.thinking})")

    def prompt(self) -> None:
        self.term.row(f"[{mem_bar(self.memory.status())}]")
        self.term.write("> ")
        self.term.column = 0

    def command(self, line: str) -> bool:
        """Run a /command; False once the chat should end."""
        from eukhe.memory.owner import status_line

        words = line.split()
        head = words[0]
        if head in ("/quit", "/exit"):
            return False
        if head == "/help":
            self.term.row("commands: " + ", ".join(COMMANDS))
        elif head == "/memory":
            if len(words) == 1:
                status = self.memory.status()
                self.term.row(status_line(status))
                self.term.row(f"chat {status['directory']}")
            elif words[1] == "view" and len(words) == 2:
                self.term.row("<chat>")
                for view_line in self.memory.view():
                    self.term.row(view_line)
                self.term.row("</chat>")
            elif words[1] == "model":
                self.memory_model(words[2:])
            else:
                raise ChatInputError(f"unknown /memory command {' '.join(words[1:])!r} (/memory, /memory view, /memory model)")
        elif head == "/agent":
            if len(words) < 3:
                raise ChatInputError("/agent wants a name and a task: /agent NAME TASK")
            name, task = words[1], line.split(None, 2)[2]
            from eukhe.memory.turn import AGENT_NAME

            if not AGENT_NAME.fullmatch(name):
                raise ChatInputError(f"{name!r} is not an agent's name (a letter, then letters, digits, _ or -)")
            agent = asyncio.ensure_future(self.turns.subagent(name, task, show=self.term.show))
            self.agents.add(agent)
            agent.add_done_callback(self._agent_done)
            self.term.row(f"[agent] {name} started")
        else:
            raise ChatInputError(f"unknown command {head!r} (commands: {', '.join(COMMANDS)})")
        return True

    def _agent_done(self, agent: asyncio.Task[Any]) -> None:
        self.agents.discard(agent)
        if agent.cancelled():
            return
        error = agent.exception()
        if error is not None:
            self.failed(EXIT_FAULT)
            self.term.error(_said(error))

    def memory_model(self, words: list[str]) -> None:
        """/memory model [PROVIDER/MODEL [LEVEL]]: the memory role's model and effort."""
        if not words:
            model = self.settings.cvars.value([], "memory.model") or ""
            thinking = self.settings.cvars.value([], "memory.thinking")
            shown = model or "(unset: the auxiliary model)"
            self.term.row(f"memory.model {shown}  memory.thinking {thinking}")
            return
        if len(words) > 2:
            raise ChatInputError("/memory model wants PROVIDER/MODEL and at most a level")
        from eukhe.memory.request import split_model

        try:
            split_model(words[0])
        except ValueError as error:
            raise ChatInputError(str(error)) from None
        level = _level(words[1], "/memory model") if len(words) == 2 else None
        self.settings.set_global("memory.model", words[0])
        if level is not None:
            self.settings.set_global("memory.thinking", level)
        self.term.row(f"memory.model {words[0]}  memory.thinking {self.settings.cvars.value([], 'memory.thinking')} (saved)")
        if self.agent_dir is not None:
            self.start_compactor()

    async def run_turn(self, text: str) -> None:
        from eukhe.inference.wire.events import WireError
        from eukhe.memory.turn import TurnError

        from eukhe.memory.records import StoreError

        try:
            await self.turns.turn(text, show=self.term.show)
        except (WireError, TurnError, StoreError, OSError) as error:
            self.failed(EXIT_FAULT)
            self.term.error(_said(error))
        except Exception as error:  # a bug: one line (the traceback with EUKHE_DEBUG=1), the chat goes on
            self.failed(EXIT_BUG)
            if os.environ.get("EUKHE_DEBUG") == "1":
                import traceback

                traceback.print_exc()
            self.term.error(f"a bug in eukhe ({type(error).__name__}: {_said(error)}); please report it")
        if self.term.column:
            self.term.write("\n")

    async def loop(self, fd: int) -> int:
        """Read lines from ``fd`` (the terminal) without a thread: the event loop watches it."""
        lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        pending = bytearray()

        def readable() -> None:
            try:
                data = os.read(fd, 65536)
            except OSError:  # a closed terminal (EIO on a pty): the end of input
                data = b""
            if not data:
                loop.remove_reader(fd)
                if pending:
                    lines.put_nowait(bytes(pending))
                lines.put_nowait(None)
                return
            pending.extend(data)
            while (end := pending.find(b"\n")) >= 0:
                lines.put_nowait(bytes(pending[: end + 1]))
                del pending[: end + 1]

        try:
            loop.add_reader(fd, readable)
        except PermissionError:  # a regular file as input: read it whole, line by line
            while True:
                data = os.read(fd, 65536)
                pending.extend(data)
                if not data:
                    break
            for piece in bytes(pending).splitlines(keepends=True):
                lines.put_nowait(piece)
            pending.clear()
            lines.put_nowait(None)
        if self.agent_dir is not None:
            self.start_compactor()
        self.prompt()
        get: asyncio.Task[bytes | None] = asyncio.ensure_future(lines.get())
        while True:
            waits: set[asyncio.Future[Any]] = {get}
            if self.turn is not None:
                waits.add(self.turn)
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if self.turn is not None and self.turn in done:
                finished, self.turn = self.turn, None
                finished.result()  # what run_turn lets through (a closed stdout) ends the chat
                self.prompt()
            if get not in done:
                continue
            raw = get.result()
            if raw is None:
                break
            get = asyncio.ensure_future(lines.get())
            if not self.line(raw):
                break
        if self.turn is not None:
            await self.turn
        for agent in list(self.agents):
            await asyncio.wait({agent})
        get.cancel()
        loop.remove_reader(fd)
        if self.compactor is not None:
            await self.compactor.close()
        return self.status

    def line(self, raw: bytes) -> bool:
        """One line typed; False once the chat should end."""
        try:
            text = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            self.term.error(f"the line is not UTF-8 (byte {error.start}); nothing was sent")
            return True
        try:
            if text.strip().startswith("/"):
                going = self.command(text.strip())
                if self.turn is None and going:
                    self.prompt()
                return going
            if not text.strip():
                if self.turn is None:
                    self.prompt()
                return True
            if self.turn is not None:
                if self.turns.send(text):
                    self.term.row("[queued: joins the running call]")
                    return True
            self.turn = asyncio.ensure_future(self.run_turn(text))
        except (ChatInputError, ValueError) as error:
            self.term.error(str(error))
            if self.turn is None:
                self.prompt()
        except Exception as error:  # a fault of the store or the settings: one line, the chat goes on
            from eukhe.memory.records import StoreError
            from eukhe.settings.files import DocumentError

            if not isinstance(error, (StoreError, DocumentError, OSError)):
                raise
            self.term.error(_said(error))
            if self.turn is None:
                self.prompt()
        return True


def _said(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def run_chat(args: argparse.Namespace) -> int:
    from eukhe.cli import EnvironmentFault
    from eukhe.commands.inference import connect
    from eukhe.memory.owner import Memory, MemoryBusy
    from eukhe.memory.records import StoreError
    from eukhe.memory.store import chat_dir
    from eukhe.memory.turn import chat_turns

    term = Terminal(sys.stdout, sys.stderr)
    connection = connect(args, "eukhe chat", lambda retry: term.row(f"[{retry.line()}]"), uses=("memory.settleTimeoutMs",))
    agent, settings, model, level, client = connection.agent, connection.settings, connection.model, connection.level, connection.client
    settle = int(settings.cvars.value([], "memory.settleTimeoutMs")) / 1000.0
    try:
        memory = Memory(chat_dir(agent))
    except (StoreError, OSError) as error:
        raise EnvironmentFault(f"eukhe chat: {_said(error)}") from None
    try:
        if not memory.is_owner:
            raise EnvironmentFault(f"eukhe chat: another eukhe chat owns {chat_dir(agent)}; one chat runs turns at a time")
        turns = chat_turns(memory, ShowRefusals(client, term), thinking=level, settle_seconds=settle)
        term.row(f"eukhe chat: {model.provider}/{model.id}, chat {chat_dir(agent)}; /help for commands")
        session = Session(memory, turns, settings, term, agent, args.timeout, connection.pool)

        async def run() -> int:
            async with connection.pool:  # the chat's HTTP clients close in its event loop
                return await session.loop(sys.stdin.fileno())

        return asyncio.run(run())
    except MemoryBusy as error:
        raise EnvironmentFault(f"eukhe chat: {_said(error)}") from None
    finally:
        memory.close()

