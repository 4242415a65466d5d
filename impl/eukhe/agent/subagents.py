"""Subagents (issue 28 item 4; control.md S4, S4b.5; memory.md rules 54, 57, 58): a child agent
of a session, run in a process of its own (``eukhe.agent.child``), started by the model (the
``task`` tool) or by the user (``/agent NAME TASK``).

The spawn. The parent (the session's agent process, the one writer of the session) starts
``python -m eukhe.agent.child`` in a process group of its own, in the session's working
directory, and writes it one line of JSON, the spawn (``spawn_of``): the agent dir, the project,
the working directory, the child's name and task, the session's model and thinking level, and
the parent's cvar family (``cvarFamily``: ``CvarAgent.family_json``, the parent's layers) with the
child's own sets (its conversation's eukhe.cvar.agent document). The child's values are that
family with the child on top: its profile (subagent.cfg, then agents/<name>.cfg, read by the
child) and its sets (S4: "A subagent starts from the family of its parent").

The pipe. The child never opens the session: it answers with JSON lines on its stdout, each one
of ``{"commit": {"entries", "documents"}}`` (a commit of its turn loop), ``{"event": {...}}`` (an
event of its turn loop) and, last, ``{"done": {"reason", "text", "report"}}``. The parent
commits each commit to the child's conversation ``main.<name>`` (so the session keeps one
writer) and broadcasts each event as ``subagent {agent, event}``. The child is a fresh call
(rule 57): its conversation's model view is its task and what its own loop adds, nothing
carried from an earlier spawn of the same name (the log ``main.<name>.jsonl`` keeps them all).

The report (rule 58). The child's final answer is its report, ``[Name] report``: the ``task``
tool's result; for ``/agent`` a work row of main (``loop.WORK_ROW``) and a ``subagent`` row, never
waited for nor polled: it joins the turn that runs (between tool calls, or after its answer,
like a steered message), else it is committed at once and the next turn sees it. A child that
ends without answering gives a typed one-line error instead (``subagent_failed``), as does a
stalled one (``stalled``).

Limits, read from the parent's cvars (which an untrusted project cannot set, S4b.5):

- subagentMaxConcurrency: at most that many children run at once per agent process; a further
  spawn waits for a slot, first come first served, and says so in a ``subagent`` row
  (subagentMaxConcurrency 0 refuses every spawn: ``no_slots``).
- subagentStallMs: a child that sends no line for that long is killed with its process group
  (SIGTERM, then SIGKILL after ``KILL_GRACE_SECONDS``), and the result says it stalled. Derived:
  until its first line a child has at least ``STARTUP_SECONDS`` (the interpreter's start is not
  silence of the agent); a tool call of the child that runs longer than the limit is silence.

Two spawns of one name never run at once (``agent_busy``); a name is a letter, then letters,
digits, ``_`` or ``-`` (64 at most); the ``task`` tool's default names are ``agent1``, ``agent2``,
... (the first not running). The children do not spawn children of their own (no ``task`` tool
in a child). Killing the parent kills its children: a child exits when its stdin (the parent's
pipe) ends, and asks the kernel for SIGTERM when its parent dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eukhe.agent import protocol as p
from eukhe.agent.loop import WORK_ROW, Emit
from eukhe.agent.tools.base import Tool, ToolContext, ToolError, ToolResult, clip
from eukhe.session import MAIN, Kind, NewEntry, Session, SessionError, row
from eukhe.settings.agent import CvarAgent

MAX_CVAR, STALL_CVAR = "subagentMaxConcurrency", "subagentStallMs"
STARTUP_SECONDS = 30.0  # the least a child has before its first line
KILL_GRACE_SECONDS = 2.0  # from SIGTERM to SIGKILL of a child's process group
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")

# The kinds of a spawn's typed errors.
INVALID_NAME, AGENT_BUSY, NO_MODEL, NO_SLOTS, STALLED, FAILED = (
    "invalid_name",
    "agent_busy",
    "no_model",
    "no_slots",
    "stalled",
    "subagent_failed",
)

TASK_SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,63}$", "description": "the subagent's name (default: agent1, agent2, ...)"},
        "task": {"type": "string", "minLength": 1, "description": "what the subagent is to do; it sees nothing else of this conversation"},
    },
    "required": ["task"],
    "additionalProperties": False,
}


class SubagentError(Exception):
    """A spawn refused: ``kind`` names why."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class Outcome:
    """How a child ended: its report, or a typed error (``kind``, one line)."""

    name: str
    report: str = ""
    kind: str = ""
    message: str = ""

    @property
    def text(self) -> str:
        """``[Name] report``, or ``[Name] kind: message``."""
        return f"[{self.name}] {self.report}" if not self.kind else f"[{self.name}] {self.kind}: {self.message}"


Spawn = Callable[[str, str], dict[str, Any]]  # (name, task) -> the spawn line; raises SubagentError
Deliver = Callable[[str], None]  # a background report, ``[Name] report``, to the parent's conversation
Steps = Callable[[str, list[NewEntry]], None]  # (name, entries): a commit a child relayed


def spawn_of(cvar: CvarAgent, agent_dir: Path, workdir: Path, name: str, task: str, model: p.ModelRef, thinking: str | None) -> dict[str, Any]:
    """The spawn line of child ``name`` of the agent ``cvar`` (see the module docstring)."""
    child = cvar.conversation.session.conversation(f"{cvar.conversation.name}.{name}")
    project = cvar.settings.paths.project_dir
    return {
        "agentDir": str(agent_dir),
        "projectDir": None if project is None else str(project),
        "workdir": str(workdir),
        "name": name,
        "task": task,
        "model": {"provider": model.provider, "id": model.id},
        "thinking": thinking,
        "cvarFamily": cvar.family_json(),
        "sets": cvar.document(child)["sets"],
        "parent": os.getpid(),
    }


class Subagents:
    """The children of one agent process (its session ``session``, its cvars ``cvar``)."""

    def __init__(
        self, session: Session, cvar: CvarAgent, emit: Emit, spawn: Spawn, deliver: Deliver, workdir: Path, steps: Steps
    ) -> None:
        self.session = session
        self.steps = steps  # told of each commit a child relays (the chat logs them to the agent's own log)
        self.cvar = cvar
        self.emit = emit
        self.spawn = spawn
        self.deliver = deliver
        self.workdir = workdir
        self.names: set[str] = set()  # waiting or running
        self.running = 0
        self.changed = asyncio.Condition()
        self.background: set[asyncio.Task[None]] = set()

    # -- the ways in ------------------------------------------------------------------------------

    def tool(self) -> Tool:
        """The ``task`` tool: a child on a task; its report is the result."""

        async def body(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
            name = str(arguments.get("name") or self._free_name())
            try:
                outcome = await self.run(name, str(arguments["task"]))
            except SubagentError as error:
                raise ToolError(error.kind, error.message) from None
            if outcome.kind:
                return ToolResult.error(outcome.kind, outcome.message)
            return ToolResult(clip(outcome.text))

        return Tool(
            "task",
            "Start a subagent: a fresh agent with the same tools in the same directory does the task and reports back; "
            "its report is the result. Use it only when the user asks for subagents.",
            TASK_SCHEMA,
            body,
        )

    def start(self, name: str, task: str) -> None:
        """``/agent NAME TASK``: a child in the background; its report is delivered when it
        ends. Refused at once (SubagentError) for a bad name, a busy one, no task, no model."""
        spawn = self._reserve(name, task)
        job = asyncio.create_task(self._background(name, task, spawn))
        self.background.add(job)
        job.add_done_callback(self.background.discard)

    async def run(self, name: str, task: str) -> Outcome:
        """A child on ``task`` to its end (the ``task`` tool's way)."""
        spawn = self._reserve(name, task)
        return await self._run(name, spawn)

    async def close(self) -> None:
        """End every background child (each killed with its group)."""
        jobs = list(self.background)
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.gather(*jobs, return_exceptions=True)

    # -- a child ------------------------------------------------------------------------------------

    def _free_name(self) -> str:
        number = 1
        while f"agent{number}" in self.names:
            number += 1
        return f"agent{number}"

    def _reserve(self, name: str, task: str) -> dict[str, Any]:
        if not NAME.fullmatch(name):
            raise SubagentError(INVALID_NAME, f"{name!r} is not an agent's name: a letter, then letters, digits, _ or - (64 at most)")
        if not task.strip():
            raise SubagentError(FAILED, "a subagent needs a task with some text")
        if name in self.names:
            raise SubagentError(AGENT_BUSY, f"subagent {name} runs already: wait for its report, or give another name")
        if self._limit() == 0:
            raise SubagentError(NO_SLOTS, f"{MAX_CVAR} is 0: no subagent may run")
        spawn = self.spawn(name, task)
        self.names.add(name)
        return spawn

    async def _background(self, name: str, task: str, spawn: dict[str, Any]) -> None:
        outcome = await self._run(name, spawn)
        self.emit({"type": "row", "kind": "subagent", "text": outcome.text})
        self.deliver(outcome.text)

    async def _run(self, name: str, spawn: dict[str, Any]) -> Outcome:
        """The reserved child ``name``: a slot, its process, its lines, its end."""
        try:
            async with self.changed:
                limit = max(1, self._limit())
                if self.running >= limit:
                    self.emit({"type": "row", "kind": "subagent", "text": f"{name} waits for a slot: {self.running} of {MAX_CVAR} {limit} run"})
                await self.changed.wait_for(lambda: self.running < max(1, self._limit()))
                self.running += 1
            try:
                return await self._child(name, spawn)
            finally:
                async with self.changed:
                    self.running -= 1
                    self.changed.notify_all()
        finally:
            self.names.discard(name)

    def _limit(self) -> int:
        return int(self.cvar.value(MAX_CVAR))

    async def _child(self, name: str, spawn: dict[str, Any]) -> Outcome:
        stall_ms = int(self.cvar.value(STALL_CVAR))
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "eukhe.agent.child",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=self.workdir,
                start_new_session=True, limit=p.LINE_LIMIT,
            )  # fmt: skip
        except OSError as error:
            return Outcome(name, kind=FAILED, message=f"subagent {name} did not start: {error}")
        try:
            assert process.stdin is not None and process.stdout is not None
            task = str(spawn["task"])
            self.emit({"type": "row", "kind": "subagent", "text": f"{name} starts (pid {process.pid}): {task.splitlines()[0][:200]}"})
            process.stdin.write(json.dumps(spawn, ensure_ascii=False).encode("utf-8") + b"\n")
            await process.stdin.drain()  # stdin stays open: its end tells the child the parent is gone
            conversation = self.session.conversation(f"{MAIN}.{name}")
            heard = False
            while True:
                wait = stall_ms / 1000 if heard else max(stall_ms / 1000, STARTUP_SECONDS)
                try:
                    line = await asyncio.wait_for(process.stdout.readline(), wait)
                except asyncio.TimeoutError:
                    return Outcome(name, kind=STALLED, message=f"subagent {name} sent nothing for {stall_ms} ms ({STALL_CVAR}); its process group was killed")
                except ValueError:  # a line past the limit
                    return Outcome(name, kind=FAILED, message=f"subagent {name} sent a line longer than {p.LINE_LIMIT} bytes; it was killed")
                if not line:
                    code = await process.wait()
                    return Outcome(name, kind=FAILED, message=f"subagent {name} ended (exit {code}) without a report")
                heard = True
                message = json.loads(line)
                if "commit" in message:
                    commit = message["commit"]
                    entries = [NewEntry(Kind(e["kind"]), e.get("content"), e.get("custom_type"), bool(e.get("display_only"))) for e in commit["entries"]]
                    conversation.commit(entries, commit.get("documents") or None)
                    self.steps(name, entries)
                elif "event" in message:
                    self.emit({"type": "subagent", "agent": name, "event": message["event"]})
                else:
                    done = message["done"]  # a line of none of the three is a KeyError: the child failed
                    if done.get("reason") == "answered":
                        return Outcome(name, report=str(done.get("report", "")))
                    said = str(done.get("text") or "").replace("\n", " ")
                    return Outcome(name, kind=FAILED, message=f"subagent {name} ended without a report ({done.get('reason')}){': ' + said if said else ''}")
        except (SessionError, json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            return Outcome(name, kind=FAILED, message=f"subagent {name}: {type(error).__name__}: {error}".replace("\n", " "))
        finally:
            await _end(process)


async def _end(process: asyncio.subprocess.Process) -> None:
    """The child and its group ended: its stdin closed, SIGTERM to the group, SIGKILL after the
    grace (sent even when this is cancelled while it waits); the child reaped."""
    assert process.stdin is not None  # started with a pipe
    process.stdin.close()
    if process.returncode is not None:
        return
    try:
        _signal_group(process.pid, signal.SIGTERM)  # the child aborts its turn (its bash calls' groups are killed) and exits
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE_SECONDS)
    finally:
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE_SECONDS)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def report_row(text: str) -> NewEntry:
    """A background report as its parent's conversation holds it (a work row the model sees)."""
    return row(WORK_ROW, {"text": text})
