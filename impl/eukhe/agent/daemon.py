"""The agent process of a session: one per session, the one writer of its logs, serving any
number of clients over its socket in the agent dir (the protocol: ``eukhe.agent.protocol``).

Claiming (memory.md rule 7, grown into the agent): ``claim`` opens the session for writing
without waiting. The process that gets the writer lock (``eukhe.session``; the kernel drops it
when its holder dies) is the agent: it binds its socket under a temporary name and renames it
over the socket's path, so a socket a dead agent left is replaced in one step. A process that
finds the lock taken (``SessionLocked``) is a client: it connects to the socket. When the
holder is between taking its lock and renaming its socket (or is a command-line writer with no
socket at all), the claim tries again, for up to ``CLAIM_SECONDS``; then ``AgentBusy``.

The agent (``Daemon``):

- at open, settles the session's model and thinking level and shows the settings errors (of
  the config, the profile, the agent's aliases, models.json) as eukhe.settings_error rows, and
  the saved default model it could not honour as an eukhe.default_model row (S6): each row is
  committed once per session (display-only) and kept for the ``rows`` of ``state``;
- takes the turn loop through ``RunnerFactory`` (called with the session, the cvar agent of
  main, and ``emit``); the loop's events are checked (``protocol.loop_event``) and broadcast; an
  event the protocol does not have is dropped with an ``error`` of kind bad_event;
- gives each new client ``state`` first and then every broadcast event, in order: a client
  whose unsent events pass ``PENDING_LIMIT`` bytes (it does not read) is disconnected, and gets
  ``state`` again when it comes back;
- runs ``cvar`` lines with ``CvarAgent.run_line`` (``global``: ``EukheSettings.set_global`` and
  ``toggle_global``), ``cvar_save`` with ``CvarAgent.save``, ``/remind`` and ``/force`` with
  ``eukhe.directors.commands.session_command`` on ``Directors`` limited by the agent's
  directors.* cvars, ``/effort``, ``/model`` and ``cycle_thinking_level`` by the rules of S10
  (``eukhe.effort``); the config is read again before each ``cvar`` request, and each new
  settings error after it is a row;
- runs ``/rewind ENTRY`` (the session's own log is its to write): refused with ``busy`` while a
  turn or a background subagent runs; an entry that is not a whole number is a CommandError and one main does not have a
  SessionError naming it; else the head of main moves to ENTRY (``Conversation.rewind``), the
  model and thinking level are read again as of it (a stored level its model settles otherwise
  is committed, as at open), and every client gets ``state`` again before the asker's ``ok``;
- starts ``/agent NAME TASK`` with a turn loop that runs subagents (``Spawner``, the runner's
  ``agent_command``: ``eukhe.agent.subagents``), answering ``ok`` at once (the report comes
  later, never waited for); a refused spawn is an ``error`` of its kind (invalid_name,
  agent_busy, no_model, no_slots); ``close`` ends the subagents first.

The session's model and thinking level are documents of the main conversation, so a rewind or
a fork brings them back: ``eukhe.model`` (``{"provider", "id"}``, written by ``/model``; a
session without it is unpinned and starts on the saved default, defaultProvider and
defaultModel, resolved by ``eukhe.inference.default_model`` with an empty startup chain) and
``eukhe.thinking_level`` (the stored level: settled at open, set by ``/effort``, stepped by
``cycle_thinking_level``, clamped by a model switch). Offered levels follow S10 ladder 1: the
model's explicit thinkingLevelMap, else for a reasoning model of a custom provider (models.json)
its family's rulebook ladder, else none. The turn loop reads them as the agent does:
``session_model`` (the pinned model, else the saved default when it can be honoured) and the
``eukhe.thinking_level`` document (always set once the agent has opened the session).

A ``Daemon`` is made inside a running event loop (its ``emit`` hands events from other threads
to that loop); ``claim`` makes and starts it.

``main`` is ``eukhe agent serve``: it claims the session, then relays between the agent (its
own, or another process's) and the terminal: every event is printed as a line on stdout, every
line of stdin is sent as a request (a line that is not one is answered on stdout with its
error). As a client, the end of stdin ends it once its requests are answered; when the agent
it follows ends, it claims the session again, and so takes over. As the agent, it serves until
SIGTERM or SIGINT.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import queue
import signal
import socket
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

from eukhe import effort
from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient, AgentGone
from eukhe.directors.commands import CommandError, session_command
from eukhe.directors.document import DIRECTORS_DOC
from eukhe.directors.document import DocumentError as DirectorsDocumentError
from eukhe.directors.hooks import GOAL_DOC, DirectorLimits, Directors, GoalError, LimitsError, PushRefused
from eukhe.inference import catalog, quirks
from eukhe.inference.default_model import ROW_KIND as DEFAULT_MODEL_ROW
from eukhe.inference.default_model import SessionModel, resolve_default
from eukhe.paths import socket_address
from eukhe.session import MAIN, Conversation, Session, SessionError, SessionLocked, Store, display
from eukhe.session import lock as session_lock
from eukhe.session.private import make_dirs
from eukhe.settings.agent import ERROR_ROW, CvarAgent, EukheSettings
from eukhe.settings.cvar import SET, TOGGLE, CvarError, ExpandError, ParseError, canonical, parse_list
from eukhe.settings.files import DocumentError as SettingsDocumentError

MODEL_DOC = "eukhe.model"
THINKING_DOC = "eukhe.thinking_level"
CLAIM_SECONDS = 10.0  # how long a claim tries to reach the holder of the session's lock
CLAIM_PAUSE = 0.005  # seconds between two tries of a claim
PENDING_LIMIT = 64 * 1024 * 1024  # bytes of events queued for one client before it is dropped
OUTPUT_LIMIT = 64 * 1024 * 1024  # bytes of lines queued for stdout before lines are dropped
CLOSE_SECONDS = 5.0  # how long a turn has to end after its abort, when the agent stops
ROWS_KEPT = 200  # rows of the agent kept for ``state``
READ_CHUNK = 1 << 16

Emit = Callable[[dict[str, Any]], None]


# An agent started for a client (``--idle-exit``) that no client reaches in this time ends: the
# client gave up (eukhe.agent.reach waits 30 s for the socket) or died between start and connect.
FIRST_CLIENT_SECONDS = 120.0

class Runner(Protocol):  # pragma: no mutate block
    """The turn loop, as the agent drives it."""

    async def turn(self, text: str) -> None:
        """A user turn to its end; it emits its events itself."""

    def steer(self, text: str) -> None:
        """A message joining the running turn between tool calls."""

    def follow_up(self, text: str) -> None:
        """A message queued to run as the next turn after this one."""

    def abort(self) -> None:
        """Cancel the running turn."""


@runtime_checkable
class Spawner(Protocol):  # pragma: no mutate block
    """A turn loop that runs subagents (``eukhe.agent.runner.SessionRunner``)."""

    def agent_command(self, name: str, task: str) -> None:
        """``/agent NAME TASK``: a subagent in the background (``SubagentError`` when refused)."""

    async def close_subagents(self) -> None:
        """End the subagents that run."""

    def subagent_jobs(self) -> set[asyncio.Task[None]]:
        """The background subagents (``/agent``) whose reports are still to come."""


@runtime_checkable
class Remembers(Protocol):  # pragma: no mutate block
    """A turn loop that may answer from the chat memory (``eukhe.agent.runner.SessionRunner``)."""

    def memory_event(self, re: str | None, text: str = "", lines: list[str] | None = None) -> dict[str, Any]:
        """The chat memory's use as a ``memory`` event (LookupError outside the chat)."""

    def memory_command(self, re: str | None, words: list[str]) -> dict[str, Any]:
        """``/memory [view | model ...]``: its ``memory`` event (ValueError for a bad line)."""

    async def close(self) -> None:
        """Let the chat memory go."""


RunnerFactory = Callable[[Session, CvarAgent, Emit], Runner]


class AgentBusy(SessionError):
    """The session's writer lock is held, but no agent answers on its socket in time."""


class _Refused(Exception):
    """A request refused: its error kind and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


# -- one client of the agent ------------------------------------------------------------------


class _Client:
    """A connection: the lines queued for it and the task that writes them, in order."""

    def __init__(self, writer: asyncio.StreamWriter, limit: int) -> None:
        self.writer = writer
        self.limit = limit
        self.pending = 0
        self.closed = False
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.task = asyncio.create_task(self._write())

    def send(self, line: bytes) -> None:
        if self.closed:
            return
        self.pending += len(line)
        if self.pending > self.limit:  # it does not read: dropped; it gets state again when back
            self.drop()
            return
        self.lines.put_nowait(line)

    async def _write(self) -> None:
        while True:
            line = await self.lines.get()
            if line is None:
                break
            self.pending -= len(line)
            try:
                self.writer.write(line)
                await self.writer.drain()
            except (ConnectionError, OSError):
                self.drop()
                return
        self.writer.close()  # the transport's close raises nothing: it stops reading and ends the connection once written

    def finish(self) -> None:
        """Close once what is queued is written."""
        if not self.closed:
            self.closed = True
            self.lines.put_nowait(None)

    def drop(self) -> None:
        self.closed = True
        self.writer.transport.abort()
        self.task.cancel()


# -- the agent --------------------------------------------------------------------------------


class Daemon:
    """The agent of one session, opened for writing; ``start`` serves, ``close`` ends."""

    def __init__(
        self,
        agent_dir: Path,
        session: Session,
        factory: RunnerFactory | None,
        *,
        project_dir: Path | None = None,
        line_limit: int = p.LINE_LIMIT,
        pending_limit: int = PENDING_LIMIT,
    ) -> None:
        self.agent_dir = Path(agent_dir)
        self.session = session
        self.main = session.conversation(MAIN)
        self.settings = EukheSettings(self.agent_dir, project_dir)
        self.cvar = CvarAgent(self.settings, self.main)
        self.address = p.socket_path(self.agent_dir, session.dir)
        self.line_limit = line_limit
        self.pending_limit = pending_limit
        self.clients: set[_Client] = set()
        self.rows: list[p.RowEvent] = []
        self.turn_events: list[p.Event] = []
        self.task: asyncio.Task[None] | None = None
        self.open_run: str | None = None  # the run of a turn_start with no turn_end yet
        self.loop = asyncio.get_running_loop()
        self.thread = threading.get_ident()
        self.models_json_errors: list[str] = []
        self.model: p.ModelRef | None = None
        self.thinking = effort.ThinkingSession(None)
        self.sent_stack: list[dict[str, Any]] | None = None
        self.sent_switches: dict[str, Any] = {}
        self.server: asyncio.AbstractServer | None = None
        self.inode: int | None = None
        self.handlers: set[asyncio.Task[None]] = set()
        self.served = False  # whether a client ever connected
        self.activity = asyncio.Event()  # set by each change ``idle`` reads
        self._open()
        self.runner = None if factory is None else factory(session, self.cvar, self.emit)

    # -- open --------------------------------------------------------------------------------------

    def _open(self) -> None:
        reg = self._registry()
        pinned = pinned_model(self.main)
        if pinned is not None:
            self.model = pinned
        else:
            self._saved_default(reg)
        self._settle_thinking(reg)
        self.sent_stack = self._stack()
        self.sent_switches = self._switches()
        self._show_settings_errors()

    def _settle_thinking(self, reg: catalog.Registry) -> None:
        """The thinking level of the model as main's head stores it (S10 open): a stored level
        the model settles otherwise is committed."""
        found = None if self.model is None else reg.find(self.model.provider, self.model.id)
        level = self.main.document(THINKING_DOC)
        self.thinking = effort.ThinkingSession(_effort_model(found), level if isinstance(level, str) else None, self._default_level())
        settled = self.thinking.open()
        if settled != level:
            self.main.commit(documents={THINKING_DOC: settled})

    def _saved_default(self, reg: catalog.Registry) -> None:
        """An unpinned session starts on the saved default, never silently replaced (S6): a
        default it cannot honour is an eukhe.default_model row, committed once per session."""
        answer = saved_default(self.agent_dir, self.cvar, reg)
        self.model = None if answer.model is None else p.ModelRef(provider=answer.model[0], id=answer.model[1])
        if answer.row is None:
            return
        # no startup chain here (saved_default): a default not honoured is never replaced
        said = answer.error if answer.error is not None else f"default model {answer.row['saved']}: {answer.row['reason']}"
        text = f"{said}; the session has no model: pick one with /model"
        shown = {repr(e.content) for e in self.main.user_view() if e.custom_type == DEFAULT_MODEL_ROW}
        if repr(answer.row) not in shown:
            self.main.commit([display(DEFAULT_MODEL_ROW, answer.row)])
        self._row("default_model", text)

    def _default_level(self) -> str | None:
        value = self.cvar.value("defaultThinkingLevel")
        return value if isinstance(value, str) and value else None

    def _registry(self) -> catalog.Registry:
        reg = catalog.registry(self.agent_dir)
        self.models_json_errors = list(reg.diagnostics)
        return reg

    def _settings_errors(self) -> list[str]:
        return [error.show() for error in self.cvar.errors()] + self.models_json_errors

    def _show_settings_errors(self) -> None:
        """Each settings error not yet shown in this session: one eukhe.settings_error row."""
        shown = {e.content for e in self.main.user_view() if e.custom_type == ERROR_ROW}
        new = [text for text in dict.fromkeys(self._settings_errors()) if text not in shown]
        if new:
            self.main.commit([display(ERROR_ROW, text) for text in new])
        for text in new:
            self._row("settings_error", text)

    # -- serving -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the socket (a temporary name renamed over the path) and serve."""
        directory = self.address.parent
        make_dirs(directory)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = f".{self.address.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        try:
            with socket_address(directory, temporary) as address:
                sock.bind(address)
            os.chmod(directory / temporary, 0o600)  # the user's alone, before it takes the socket's name
            sock.listen(64)
            os.replace(directory / temporary, self.address)
            self.inode = os.stat(self.address).st_ino
            self.server = await asyncio.start_unix_server(self._connected, sock=sock)
        except BaseException:
            sock.close()
            with contextlib.suppress(OSError):
                os.unlink(directory / temporary)
            raise

    async def close(self) -> None:
        """Stop: the socket goes first (a client that comes back finds none, and claims once
        this process is gone), then the turn (aborted, then cancelled), the clients, the session."""
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(OSError):
                if self.inode is not None and os.stat(self.address).st_ino == self.inode:
                    os.unlink(self.address)
            self.server = None
        if isinstance(self.runner, Spawner):
            with contextlib.suppress(Exception):
                await self.runner.close_subagents()
        task = self.task
        if task is not None:
            assert self.runner is not None  # a turn runs only in a turn loop
            with contextlib.suppress(Exception):
                self.runner.abort()
            done, _ = await asyncio.wait({task}, timeout=CLOSE_SECONDS)
            if not done:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if isinstance(self.runner, Remembers):
            with contextlib.suppress(Exception):
                await self.runner.close()
        clients = list(self.clients)
        for client in clients:
            client.finish()  # each connection closes once what is queued for it is written
        if clients:
            await asyncio.wait([client.task for client in clients], timeout=CLOSE_SECONDS)
        for client in clients:
            if not client.task.done():
                client.drop()
        if self.handlers:  # each sees its connection end, and ends
            await asyncio.wait(list(self.handlers), timeout=CLOSE_SECONDS)
        self.clients.clear()
        self.session.close()

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = _Client(writer, self.pending_limit)
        self.clients.add(client)
        self.served = True
        client.send(p.encode(self.state()))  # before any broadcast can reach it: nothing between
        handler = asyncio.current_task()
        assert handler is not None  # asyncio runs each connection's callback as a task
        self.handlers.add(handler)
        lines = p.LineBuffer(self.line_limit)
        try:
            while not client.closed:
                data = await reader.read(READ_CHUNK)
                if not data:
                    rest = lines.rest()
                    if rest is None or rest.strip():
                        self._line(client, rest)
                    break
                for line in lines.feed(data):
                    self._line(client, line)
        except (ConnectionError, OSError):
            pass
        finally:
            self.clients.discard(client)
            client.finish()
            self.handlers.discard(handler)
            self.activity.set()

    def _line(self, client: _Client, line: bytes | None) -> None:
        if line is None:
            client.send(p.encode(p.ErrorEvent(kind=p.TOO_LONG, message=f"a line longer than {self.line_limit} bytes was dropped")))
            return
        try:
            request = p.decode_request(line)
        except p.ProtocolError as error:
            client.send(p.encode(p.ErrorEvent(re=error.re, kind=error.kind, message=error.message)))
            return
        try:
            reply = self.answer(request)
        except _Refused as refused:
            reply = p.ErrorEvent(re=request.id, kind=refused.kind, message=refused.message)
        except Exception as error:  # every failure is an answer; the agent goes on
            kind, message, cvar = _error_of(error)
            reply = p.ErrorEvent(re=request.id, kind=kind, message=message, cvar=cvar)
        client.send(p.encode(reply))

    def broadcast(self, event: p.Event) -> None:
        line = p.encode(event)
        for client in list(self.clients):
            client.send(line)
        self.activity.set()

    def _jobs(self) -> set[asyncio.Task[None]]:
        return self.runner.subagent_jobs() if isinstance(self.runner, Spawner) else set()

    def idle(self) -> bool:
        """Whether nothing is left to serve: a client came and every one has gone, no turn runs
        and no background subagent's report is still to come."""
        return self.served and not self.clients and self.task is None and not self._jobs()

    async def until_idle(self, first_client: float = FIRST_CLIENT_SECONDS) -> None:
        """Return once ``idle`` holds (checked at each change of what it reads: a client gone, a
        turn ended, an event sent, a background subagent ended), or when no client came within
        ``first_client`` seconds (the client that started it gave up, or died first)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + first_client
        while True:
            self.activity.clear()
            if self.idle() or (not self.served and loop.time() >= give_up):
                return
            changed = asyncio.ensure_future(self.activity.wait())
            wait = None if self.served else give_up - loop.time()
            await asyncio.wait({changed, *self._jobs()}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()

    def emit(self, event: dict[str, Any]) -> None:
        """An event of the turn loop: checked, kept for the turn under way, broadcast. Safe
        from any thread."""
        if threading.get_ident() != self.thread:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the agent has ended
                self.loop.call_soon_threadsafe(self.emit, event)
            return
        try:
            typed = p.loop_event(event)
        except p.ProtocolError as error:
            self.broadcast(p.ErrorEvent(kind="bad_event", message=f"the turn loop made an event this protocol does not have: {error.message}"))
            return
        self._keep(typed)
        self.broadcast(typed)

    def _keep(self, event: p.Event) -> None:
        if isinstance(event, p.TurnStartEvent):
            self.turn_events = [event]
            self.open_run = event.run
            return
        if isinstance(event, p.TurnEndEvent) and event.run == self.open_run:
            self.open_run = None
        if self.task is None:
            if isinstance(event, p.RowEvent):
                self._keep_row(event)
            return
        last = self.turn_events[-1] if self.turn_events else None
        if isinstance(event, p.DeltaEvent) and isinstance(last, p.DeltaEvent):
            self.turn_events[-1] = p.DeltaEvent(text=last.text + event.text)
        elif isinstance(event, p.ThinkingEvent) and isinstance(last, p.ThinkingEvent):
            self.turn_events[-1] = p.ThinkingEvent(text=last.text + event.text)
        elif isinstance(last, p.SubagentEvent) and isinstance(event, p.SubagentEvent) and _joins(last, event):
            before, after = last.event, event.event
            assert isinstance(before, (p.DeltaEvent, p.ThinkingEvent)) and isinstance(after, (p.DeltaEvent, p.ThinkingEvent))
            self.turn_events[-1] = p.SubagentEvent(agent=last.agent, event=before.model_copy(update={"text": before.text + after.text}))
        else:
            self.turn_events.append(event)

    def _keep_row(self, row: p.RowEvent) -> None:
        self.rows.append(row)
        del self.rows[:-ROWS_KEPT]

    def _row(self, kind: p.RowKind, text: str) -> None:
        row = p.RowEvent(kind=kind, text=text)
        self._keep_row(row)
        self.broadcast(row)

    # -- state ---------------------------------------------------------------------------------------

    def state(self, re: str | None = None) -> p.StateEvent:
        goal = self.main.document(GOAL_DOC)
        return p.StateEvent.model_validate(
            {
                "re": re,
                "session": self.session.id,
                "pid": os.getpid(),
                "head": self.main.head,
                "directors": self._stack(),
                "goal": goal if isinstance(goal, dict) else None,
                "settings_errors": self._settings_errors(),
                "model": self.model,
                "thinking_level": self.thinking.shown,
                "offered_levels": _levels(self.thinking.offer),
                "running": self.task is not None,
                "turn": list(self.turn_events),
                "rows": list(self.rows),
                "clients": len(self.clients),
                "switches": self._switches(),
            }
        )

    def _stack(self) -> list[dict[str, Any]]:
        value = self.main.document(DIRECTORS_DOC)
        layers = value.get("layers") if isinstance(value, dict) else None
        return [layer for layer in layers if isinstance(layer, dict)] if isinstance(layers, list) else []

    def _model_event(self, re: str | None = None) -> p.ModelEvent:
        return p.ModelEvent(re=re, model=self.model, thinking_level=self.thinking.shown, offered_levels=_levels(self.thinking.offer))

    def _directors_changed(self) -> None:
        stack = self._stack()
        if stack != self.sent_stack:
            self.sent_stack = stack
            self.broadcast(p.DirectorsEvent(stack=stack))

    def _switches(self) -> dict[str, Any]:
        """The session's values of the switches a client shows (``p.SWITCHES``)."""
        return {cvar: self.cvar.value(cvar) for cvar in p.SWITCHES}

    def _switches_changed(self) -> None:
        """Every client gets the switches again when one changed (a cvar line, a turn)."""
        switches = self._switches()
        if switches != self.sent_switches:
            self.sent_switches = switches
            self.broadcast(p.SwitchesEvent(switches=switches))

    # -- requests ------------------------------------------------------------------------------------

    def answer(self, request: p.Request) -> p.Event:
        """Do one request; its reply (raises _Refused or the error of what it ran)."""
        re = request.id
        if isinstance(request, p.StatusRequest):
            return self.state(re)
        if isinstance(request, (p.TurnRequest, p.SteerRequest, p.FollowUpRequest, p.AbortRequest)):
            return self._turn_request(request)
        if isinstance(request, p.CvarRequest):
            return self._cvar(request)
        if isinstance(request, p.CvarSaveRequest):
            written = self.cvar.save()
            path = self.settings.agent_cfg(self.cvar.name)
            return p.CvarSavedEvent(re=re, path=str(path), written=[p.CvarSet(cvar=cvar, value=value) for cvar, value in written])
        if isinstance(request, p.CommandRequest):
            return self._command(request)
        if isinstance(request, p.GetModelCatalogRequest):
            reg = self._registry()
            return p.ModelCatalogEvent(re=re, models=[_entry(model) for model in reg.models], models_json_errors=list(reg.diagnostics))
        assert isinstance(request, p.CycleThinkingLevelRequest)
        before = self.thinking.shown
        step = self.thinking.cycle(not request.backward)
        if step is not None:
            self._level_changed(before)
        return p.ThinkingLevelEvent(re=re, level=step, offered_levels=_levels(self.thinking.offer))

    def _turn_request(self, request: p.TurnRequest | p.SteerRequest | p.FollowUpRequest | p.AbortRequest) -> p.Event:
        runner = self.runner
        if runner is None:
            raise _Refused("no_loop", "turn loop not installed")
        running = self.task is not None
        if isinstance(request, p.AbortRequest):
            if not running:
                raise _Refused("idle", "no turn runs: nothing to abort")
            runner.abort()
            return p.OkEvent(re=request.id, request=request.type, text="the turn is aborted")
        if isinstance(request, p.TurnRequest) and running:
            raise _Refused("busy", "a turn runs: send steer to join it, or follow_up to run after it")
        if running and isinstance(request, p.SteerRequest):
            runner.steer(request.text)
            return p.OkEvent(re=request.id, request=request.type, text=p.JOINS_THE_TURN)
        if running and isinstance(request, p.FollowUpRequest):
            runner.follow_up(request.text)
            return p.OkEvent(re=request.id, request=request.type, text="the message runs after this turn")
        self.task = asyncio.create_task(self._run_turn(runner, request.text))
        return p.OkEvent(re=request.id, request=request.type, text="the turn starts")

    async def _run_turn(self, runner: Runner, text: str) -> None:
        failure: str | None = None
        try:
            await runner.turn(text)
        except asyncio.CancelledError:
            failure = "the turn was cancelled"
            raise
        except Exception as error:
            failure = f"{type(error).__name__}: {error}"
            self.broadcast(p.ErrorEvent(kind="turn_failed", message=f"the turn ended with an error: {failure}"))
        finally:
            if self.open_run is not None:
                end = p.TurnEndEvent(run=self.open_run, reason="failed" if failure else "answered", text=failure or "")
                self.open_run = None
                self.broadcast(end)
            self.task = None
            self.turn_events = []
            with contextlib.suppress(Exception):
                self._directors_changed()
            with contextlib.suppress(Exception):
                self._switches_changed()
            if isinstance(runner, Remembers):
                with contextlib.suppress(Exception):
                    self.broadcast(p.MemoryEvent.model_validate(runner.memory_event(None)))  # the chat's status bar after its turn
            self.activity.set()

    def _cvar(self, request: p.CvarRequest) -> p.Event:
        self.settings.reload()
        outcomes: list[p.CvarOutcome] = []
        try:
            if request.global_:
                for command in parse_list(request.line):
                    outcomes.append(self._global(str(command), command.verb, command.args))
            else:
                for shown, outcome in self.cvar.run_line(request.line):
                    refused = outcome.startswith(("CvarError", "ParseError", "ExpandError"))
                    outcomes.append(p.CvarOutcome(command=shown, outcome=outcome, refused=refused))
        finally:
            self.thinking.default = self._default_level()
            self._show_settings_errors()
            self._switches_changed()
        return p.CvarResultEvent.model_validate({"re": request.id, "global": request.global_, "outcomes": outcomes})

    def _global(self, shown: str, verb: str, args: tuple[str, ...]) -> p.CvarOutcome:
        try:
            if verb == SET:
                value: Any = self.settings.set_global(args[0], args[1])
            elif verb == TOGGLE:
                value = self.settings.toggle_global(args[0])
            else:
                return p.CvarOutcome(command=shown, outcome="refused: only set and toggle write the global config.cfg", refused=True)
        except CvarError as error:
            return p.CvarOutcome(command=shown, outcome=f"{error.show()}: {error.message}", refused=True)
        return p.CvarOutcome(command=shown, outcome=f"ok: {canonical(value)} (global config.cfg)", refused=False)

    def _command(self, request: p.CommandRequest) -> p.Event:
        line = request.line.strip()
        word, _, rest = line.partition(" ")
        if word in ("/remind", "/force"):
            directors = Directors(self.main, DirectorLimits.of(self.cvar.value))
            document = session_command(directors, line)
            layers = document.get("layers", [])
            self.sent_stack = list(layers)
            self.broadcast(p.DirectorsEvent(stack=list(layers)))
            top = layers[-1] if layers else {}
            return p.OkEvent(re=request.id, request=request.type, text=f"{top.get('kind', 'layer')} pushed: {len(layers)} layers")
        if word == "/effort":
            if rest.strip():
                before = self.thinking.shown
                self.thinking.set(effort.parse_level(rest.strip()))
                if self.thinking.stored != self.main.document(THINKING_DOC):
                    self._level_changed(before)
            return p.ThinkingLevelEvent(re=request.id, level=self.thinking.shown, offered_levels=_levels(self.thinking.offer))
        if word == "/model":
            if rest.strip():
                self._switch(rest.strip())
                assert self.model is not None
                return p.OkEvent(re=request.id, request=request.type, text=f"model {self.model.provider}/{self.model.id}")
            return self._model_event(request.id)
        if word == "/agent":
            return self._agent_command(request, rest.strip())
        if word == "/memory":
            return self._memory_command(request, rest.split())
        if word == "/rewind":
            return self._rewind(request, rest.strip())
        raise CommandError(f"unknown command {word!r}: the session commands are /remind, /force, /effort, /model, /agent, /memory, /rewind")

    def _rewind(self, request: p.CommandRequest, text: str) -> p.Event:
        """/rewind ENTRY: the head of main moves to ENTRY (``Conversation.rewind``, a branch move:
        nothing is deleted). The session's model and thinking level are read again as of ENTRY,
        and every client gets ``state`` again (the head, the Director stack, the goal, the
        switches, the model as of ENTRY) before the asker gets ``ok``."""
        if self.task is not None:
            raise _Refused("busy", "a turn runs: /rewind once it has ended (or abort it)")
        if self._jobs():  # its report would land on the rewound branch
            raise _Refused("busy", "a background subagent runs: /rewind once its report has come")
        body = text[1:] if text.startswith("-") else text
        if not (body.isascii() and body.isdigit()) or len(body) > 30:
            raise CommandError(f"/rewind ENTRY: an entry id is a whole number, not {text[:40]!r}")
        entry = int(text)
        self.main.rewind(entry)  # UnknownEntry (a SessionError) names an entry main does not have
        self._settle_model()
        self.sent_stack = self._stack()
        self.sent_switches = self._switches()
        self.broadcast(self.state())
        text = f"rewound: the head of main is entry {entry}"
        if self.main.head != entry:  # the thinking level settled at it was committed
            text += f", then entry {self.main.head} (the thinking level as of it, settled)"
        return p.OkEvent(re=request.id, request=request.type, text=text)

    def _settle_model(self) -> None:
        """The model and thinking level as the documents of main's head hold them (a rewind): as
        at open, without its rows; a stored level the model settles differently is committed."""
        reg = self._registry()
        self.model = pinned_model(self.main)
        if self.model is None:  # unpinned as of the head: the saved default, when it can be honoured
            chosen = saved_default(self.agent_dir, self.cvar, reg).model
            self.model = None if chosen is None else p.ModelRef(provider=chosen[0], id=chosen[1])
        self._settle_thinking(reg)

    def _memory_command(self, request: p.CommandRequest, words: list[str]) -> p.Event:
        """/memory [view | model ...]: the chat memory of the session that is the chat."""
        if not isinstance(self.runner, Remembers):
            raise _Refused("no_loop", "the turn loop of this agent has no chat memory")
        try:
            return p.MemoryEvent.model_validate(self.runner.memory_command(request.id, words))
        except LookupError as error:
            raise _Refused("not_chat", str(error)) from None
        except ValueError as error:
            raise CommandError(str(error)) from None

    def _agent_command(self, request: p.CommandRequest, rest: str) -> p.Event:
        """/agent NAME TASK: a subagent in the background; its report comes as a subagent row and
        a work row of main (``eukhe.agent.subagents``)."""
        from eukhe.agent.subagents import SubagentError

        name, _, task = rest.partition(" ")
        if not name or not task.strip():
            raise CommandError("/agent NAME TASK: name the subagent and give it a task")
        if not isinstance(self.runner, Spawner):
            raise _Refused("no_loop", "the turn loop of this agent runs no subagents")
        try:
            self.runner.agent_command(name, task.strip())
        except SubagentError as error:
            raise _Refused(error.kind, error.message) from None
        return p.OkEvent(re=request.id, request=request.type, text=f"subagent {name} starts; its report comes as [{name}] ...")

    def _level_changed(self, before: str) -> None:
        self.main.commit(documents={THINKING_DOC: self.thinking.stored})
        if self.thinking.shown != before:
            self._row("effort", f"thinking level {before} -> {self.thinking.shown}")
        self.broadcast(self._model_event())

    def _switch(self, text: str) -> None:
        """/model PROVIDER/MODEL (or a model id that names one model of the catalog)."""
        reg = self._registry()
        providers = {m.provider for m in reg.models} | set(reg.custom_providers)
        provider, _, model_id = text.partition("/")
        if not (provider in providers and model_id):
            matches = [m for m in reg.models if m.id == text]
            if len(matches) > 1:
                names = ", ".join(f"{m.provider}/{m.id}" for m in matches)
                raise _Refused("unknown_model", f"{text!r} names several models ({names}): name the provider")
            if not matches:
                raise _Refused("unknown_model", f"no model {text!r} in the catalog: PROVIDER/MODEL, see get_model_catalog")
            provider, model_id = matches[0].provider, matches[0].id
        found = reg.find(provider, model_id)
        if found is None and provider not in reg.custom_providers:
            listed = ", ".join(m.id for m in reg.models if m.provider == provider)
            raise _Refused("unknown_model", f"provider {provider} has no model {model_id!r} (models: {listed})")
        before = self.thinking.shown
        self.model = p.ModelRef(provider=provider, id=model_id)
        self.thinking.switch(_effort_model(found))
        self.main.commit(documents={MODEL_DOC: {"provider": provider, "id": model_id}, THINKING_DOC: self.thinking.stored})
        self._row("note", f"model {provider}/{model_id}")
        if self.thinking.shown != before:
            self._row("effort", f"thinking level {before} -> {self.thinking.shown}")
        self.broadcast(self._model_event())


def _joins(last: p.SubagentEvent, event: p.SubagentEvent) -> bool:
    """Whether ``event`` is a subagent's delta or thought that continues ``last`` (kept as one)."""
    return last.agent == event.agent and isinstance(event.event, (p.DeltaEvent, p.ThinkingEvent)) and type(last.event) is type(event.event)


def pinned_model(main: Conversation) -> p.ModelRef | None:
    """The model the session is pinned to: its eukhe.model document, when it holds one."""
    stored = main.document(MODEL_DOC)
    provider, model_id = (stored.get("provider"), stored.get("id")) if isinstance(stored, dict) else (None, None)
    if isinstance(provider, str) and isinstance(model_id, str):
        return p.ModelRef(provider=provider, id=model_id)
    return None


def saved_default(agent_dir: Path, cvar: CvarAgent, reg: catalog.Registry | None = None) -> SessionModel:
    """The saved default (defaultProvider and defaultModel, both set) as resolve_default settles
    it, with an empty startup chain: the model, or None with the row and DefaultUnusable."""
    from eukhe.inference.resolve import NoModel, resolve_model

    reg = catalog.registry(agent_dir) if reg is None else reg
    provider, model_id = cvar.value("defaultProvider") or "", cvar.value("defaultModel") or ""
    saved = (str(provider), str(model_id)) if provider and model_id else None
    keyed: list[str] = []
    if saved is not None and reg.find(*saved) is not None:
        try:
            resolve_model(agent_dir, cvar.settings.cvars, saved[0], saved[1])
            keyed.append(saved[0])
        except NoModel:  # no credentials (or an auth.json that cannot be read)
            pass
    return resolve_default(saved, [m.key for m in reg.models], None, keyed, ())


def session_model(agent_dir: Path, cvar: CvarAgent) -> p.ModelRef | None:
    """The model of the session whose main conversation is ``cvar``'s: the pinned one, else the
    saved default when it can be honoured (what ``state`` shows as ``model``)."""
    pinned = pinned_model(cvar.conversation.session.conversation(MAIN))
    if pinned is not None:
        return pinned
    answer = saved_default(agent_dir, cvar).model
    return None if answer is None else p.ModelRef(provider=answer[0], id=answer[1])


def _levels(offer: tuple[str, ...] | None) -> list[str] | None:
    return None if offer is None else list(offer)


def _effort_model(found: catalog.CatalogModel | None) -> effort.CatalogModel | None:
    """The model as S10 sees it: its explicit map; else, for a reasoning model of a custom
    provider, its family's rulebook ladder; else none (S10 ladder 1)."""
    if found is None:
        return None
    chosen: dict[str, str | None] | None = found.thinking_level_map
    if chosen is None and found.reasoning and found.source == "models.json":
        key = quirks.ModelKey(found.id, found.name, found.provider, found.api, found.base_url)
        rule = quirks.shipped().query(key, "thinking_ladder")
        chosen = {str(level): wire for level, wire in rule.value} if rule.known and isinstance(rule.value, tuple) else None
    return effort.CatalogModel(found.id, found.reasoning, chosen)


def _entry(model: catalog.CatalogModel) -> p.CatalogEntry:
    from eukhe.inference.tiers import model_tiers

    offered = _effort_model(model)
    return p.CatalogEntry(
        provider=model.provider,
        id=model.id,
        name=model.name,
        api=model.api,
        reasoning=model.reasoning,
        context_window=model.context_window,
        max_tokens=model.max_tokens,
        thinking_levels=[] if offered is None else list(offered.offered()),
        source=model.source,
        service_tiers=list(model_tiers(model)),
    )


def _error_of(error: Exception) -> tuple[str, str, str | None]:
    """The error event's kind, message and cvar of a failure of a request."""
    if isinstance(error, CvarError):
        return "CvarError", str(error), error.id
    if isinstance(error, ExpandError):
        return "ExpandError", error.show(), None
    if isinstance(error, SettingsDocumentError):
        return "DocumentError", f"settings error: {error}; nothing written", None
    if isinstance(error, DirectorsDocumentError):
        return "DocumentError", str(error), None
    named = (ParseError, CommandError, PushRefused, LimitsError, GoalError, effort.EffortError, SessionError)
    if isinstance(error, named):
        kind = next(cls.__name__ for cls in named if isinstance(error, cls))
        return kind, str(error), None
    if isinstance(error, OSError):
        return "OSError", f"{error.strerror or error}" + (f": {error.filename}" if error.filename else ""), None
    return "internal", f"{type(error).__name__}: {error} (a bug in eukhe: please report it)", None


# -- claiming the session ---------------------------------------------------------------------------


def _open_writer(store: Store, session_id: str) -> Session:
    """The session opened for writing at once: SessionLocked when another writer holds it."""
    before = session_lock.HOLDER.timeout
    session_lock.HOLDER.timeout = 0.0
    try:
        return store.open(session_id, writer=True)
    finally:
        session_lock.HOLDER.timeout = before


async def claim(
    agent_dir: Path,
    store: Store,
    session_id: str,
    factory: RunnerFactory | None,
    *,
    project_dir: Path | None = None,
    seconds: float = CLAIM_SECONDS,
) -> Daemon | AgentClient:
    """This process's part in the session: its agent (started) when it takes the writer lock,
    else a client of the agent that holds it (see the module docstring)."""
    address = p.socket_path(agent_dir, store.path(session_id))
    deadline = time.monotonic() + seconds
    while True:
        try:
            session = _open_writer(store, session_id)
        except SessionLocked as locked:
            try:
                return await AgentClient.connect(address)
            except (ConnectionRefusedError, FileNotFoundError):
                if time.monotonic() > deadline:
                    raise AgentBusy(f"session {session_id} is held by {locked.holder}, but no agent answers on {address}") from None
                await asyncio.sleep(CLAIM_PAUSE)  # the holder is between its lock and its socket
                continue
        try:
            daemon = Daemon(agent_dir, session, factory, project_dir=project_dir)
            await daemon.start()
        except BaseException:
            session.close()
            raise
        return daemon


# -- eukhe agent serve ------------------------------------------------------------------------------


class _Output:
    """Lines to stdout, written by a thread of their own so a reader that does not read never
    stalls the agent. Past OUTPUT_LIMIT queued bytes lines are dropped, and the next line
    written says how many were."""

    def __init__(self, sink: IO[str], limit: int = OUTPUT_LIMIT) -> None:
        self.sink = sink
        self.limit = limit
        self.size = 0
        self.dropped = 0
        self.broken = False
        self.lock = threading.Lock()
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="eukhe-agent-output", daemon=True)
        self.thread.start()

    def write(self, line: bytes) -> None:
        text = line.decode("utf-8")
        with self.lock:
            if self.broken or self.size + len(text) > self.limit:
                self.dropped += 1
                return
            self.size += len(text)
        self.lines.put(text)

    def _run(self) -> None:
        while True:
            text = self.lines.get()
            if text is None:
                return
            with self.lock:
                self.size -= len(text)
                dropped, self.dropped = self.dropped, 0
            try:
                if dropped:
                    note = p.ErrorEvent(kind="output_dropped", message=f"{dropped} lines were dropped: stdout was not read")
                    self.sink.write(p.encode(note).decode("utf-8"))
                self.sink.write(text)
                self.sink.flush()
            except BaseException:  # stdout is gone: the agent goes on without it
                with self.lock:
                    self.broken = True

    def close(self) -> None:
        self.lines.put(None)
        self.thread.join(CLOSE_SECONDS)


class _EndOfInput:
    """The end of stdin, as the input thread tells the relay (a blank line is ``b""``, a line)."""


END_OF_INPUT = _EndOfInput()
Input = bytes | None | _EndOfInput  # a line of stdin, None for one past the limit, or its end


def _put_all(queue: asyncio.Queue[Input], lines: tuple[Input, ...]) -> None:
    for line in lines:
        queue.put_nowait(line)


def _read_input(fd: int, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[Input]) -> None:
    """The lines of stdin, into ``lines`` (None for a line past the limit); END_OF_INPUT marks its end."""
    buffer = p.LineBuffer()

    def put(*read: Input) -> None:
        """The lines of one read into ``lines`` at once: the relay sends them on together."""
        with contextlib.suppress(RuntimeError):  # the loop has ended
            loop.call_soon_threadsafe(_put_all, lines, read)

    try:
        while True:
            data = os.read(fd, READ_CHUNK)
            if not data:
                break
            put(*buffer.feed(data))
        rest = buffer.rest()
        if rest is None or rest.strip():
            put(rest)
    except OSError:
        pass
    put(END_OF_INPUT)


def main(
    agent_dir: Path,
    sessions: Path,
    session_id: str,
    factory: RunnerFactory | None,
    *,
    project_dir: Path | None = None,
    source: IO[Any] | None = None,
    sink: IO[str],
    idle_exit: bool = False,
) -> int:
    """``eukhe agent serve``: see the module docstring. 0 when it ends."""
    return asyncio.run(_serve(agent_dir, sessions, session_id, factory, project_dir, source, sink, idle_exit))


async def _serve(
    agent_dir: Path,
    sessions: Path,
    session_id: str,
    factory: RunnerFactory | None,
    project_dir: Path | None,
    source: IO[Any] | None,
    sink: IO[str],
    idle_exit: bool = False,
) -> int:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    lines: asyncio.Queue[Input] = asyncio.Queue()
    fd = _fileno(source)
    terminal = fd is not None and os.isatty(fd)
    if terminal:  # run in the background, a read of the terminal fails (EIO) instead of stopping the agent
        before = signal.signal(signal.SIGTTIN, signal.SIG_IGN)
    if fd is None:
        lines.put_nowait(END_OF_INPUT)
    else:
        threading.Thread(target=_read_input, args=(fd, loop, lines), name="eukhe-agent-input", daemon=True).start()
    output = _Output(sink)
    store = Store(sessions)
    daemon: Daemon | None = None
    relay = _Relay(lines, output)
    try:
        while not stop.is_set():
            role = await _unless(stop, claim(agent_dir, store, session_id, factory, project_dir=project_dir))
            if role is None:
                break
            if idle_exit:  # no relay: serve until idle; another process serves already: done
                if isinstance(role, Daemon):
                    daemon = role
                    await _unless_stopped(stop, daemon.until_idle())
                else:
                    await role.close()
                break
            if isinstance(role, Daemon):
                daemon = role
                client = await AgentClient.connect(daemon.address)
            else:
                client = role
            ended = await relay.run(client, stop, serving=daemon is not None)
            await client.close()
            if ended:
                break
    finally:
        if daemon is not None:
            await daemon.close()
        output.close()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(number)
        if terminal:
            signal.signal(signal.SIGTTIN, before)
    return 0


def _fileno(source: IO[Any] | None) -> int | None:
    if source is None:
        return None
    try:
        return source.fileno()
    except (OSError, ValueError, AttributeError):  # a stream with no descriptor: no input
        return None


async def _unless(stop: asyncio.Event, work: Awaitable[Daemon | AgentClient]) -> Daemon | AgentClient | None:
    """``work``'s result, or None when ``stop`` is set first (``work`` is then cancelled, and
    a role it got is given back)."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        role = await task
        if isinstance(role, Daemon):
            await role.close()
        elif isinstance(role, AgentClient):
            await role.close()
    return None


async def _unless_stopped(stop: asyncio.Event, work: Awaitable[None]) -> None:
    """``work`` to its end, or until ``stop`` is set (``work`` is then cancelled)."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for pending in (task, stopped):
        pending.cancel()
    await asyncio.gather(task, stopped, return_exceptions=True)


class _Relay:
    """Between the terminal and an agent: events to stdout, stdin lines as requests."""

    def __init__(self, lines: asyncio.Queue[Input], output: _Output) -> None:
        self.lines = lines
        self.output = output
        self.input_done: bool = False  # stdin has ended
        self.ids = itertools.count(1)

    def _request(self, line: bytes | None) -> p.Request | None:
        """The request of a stdin line, an id given where it has none; None (the error shown)
        for a line too long or no request."""
        if line is None:
            self.output.write(p.encode(p.ErrorEvent(kind=p.TOO_LONG, message=f"a line longer than {p.LINE_LIMIT} bytes was dropped")))
            return None
        try:
            request = p.decode_request(line)
        except p.ProtocolError as error:
            self.output.write(p.encode(p.ErrorEvent(re=error.re, kind=error.kind, message=error.message)))
            return None
        if request.id is None:
            request = request.model_copy(update={"id": f"console-{next(self.ids)}"})
        return request

    async def run(self, client: AgentClient, stop: asyncio.Event, *, serving: bool) -> bool:
        """Relay until the end: True when this process is done (stopped, or a client whose
        input ended and was answered), False when the agent it followed ended (claim again)."""
        pending: set[str] = set()
        answered = asyncio.Event()
        answered.set()

        async def events() -> None:
            async for event in client.events():
                self.output.write(p.encode(event))
                re = getattr(event, "re", None)
                if re in pending:
                    pending.discard(re)
                    if not pending:
                        answered.set()

        async def requests() -> None:
            while not self.input_done:
                read = [await self.lines.get()]
                while not self.lines.empty():  # lines that came together go on in one write (a turn and its abort)
                    read.append(self.lines.get_nowait())
                batch: list[p.Request] = []
                for line in read:
                    if isinstance(line, _EndOfInput):
                        self.input_done = True
                        break
                    request = self._request(line)
                    if request is not None:
                        assert request.id is not None
                        pending.add(request.id)
                        batch.append(request)
                if batch:
                    answered.clear()
                    try:
                        await client.send(*batch)
                    except AgentGone:
                        return

        reading = asyncio.create_task(events())
        stopped = asyncio.create_task(stop.wait())
        sending = None if self.input_done else asyncio.create_task(requests())
        drained: asyncio.Task[Any] | None = None
        try:
            while True:
                waiting: set[asyncio.Task[Any]] = {reading, stopped}
                if sending is not None:
                    waiting.add(sending)
                if self.input_done and not serving:
                    if drained is None:
                        drained = asyncio.create_task(answered.wait())
                    waiting.add(drained)
                await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if stopped.done():
                    return True
                if reading.done():
                    for ident in sorted(pending):
                        gone = p.ErrorEvent(re=ident, kind="disconnected", message="the agent process ended before answering")
                        self.output.write(p.encode(gone))
                    return self.input_done and not serving
                if drained is not None and drained.done():
                    return True
                if sending is not None and sending.done():
                    sending = None  # the input ended, or the agent went away mid-send (reading ends next)
        finally:
            for task in (reading, stopped, sending, drained):
                if task is not None:
                    task.cancel()
