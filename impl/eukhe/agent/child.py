"""A subagent's process: ``python -m eukhe.agent.child``, started by its parent agent
(``eukhe.agent.subagents``, whose docstring gives the spawn line and the pipe).

It reads the spawn line from stdin, makes its cvar family (the parent's layers, then its own
profile, subagent.cfg then agents/<name>.cfg, and its own sets), resolves the session's model
with the agent dir's credentials, and runs the turn loop (``eukhe.agent.loop``) once, on its task,
with the same tools in the session's working directory. Its conversation lives in a scratch
session of its own (a private temporary directory, removed at the end): each commit of it is
also written to stdout for the parent to commit to ``main.<name>``, each event of the loop too,
then ``done`` with the final answer (the report). Nothing else is written to stdout.

It ends its turn (aborted: its bash calls' process groups are killed) on SIGTERM, when its stdin
(the parent's pipe) ends, and when its parent dies (PR_SET_PDEATHSIG, Linux). Exit 0 once
``done`` is written; 2 for a spawn line it cannot read.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from eukhe.agent.loop import ANSWERED, FAILED, SYSTEM, Agent, retry_event
from eukhe.session import Conversation, Kind, NewEntry, Session, Store
from eukhe.session.entries import EntryId

PR_SET_PDEATHSIG = 1
CHILD_SYSTEM = (
    " You are the subagent {name}: the main agent gave you one task. Do it with your tools. "
    "Your final answer is your report to the main agent: make it complete and brief."
)


class _Pipe:
    """The lines to the parent (stdout), one JSON object each; a parent that is gone ends the
    child."""

    def __init__(self, sink: IO[bytes]) -> None:
        self.sink = sink
        self.lock = threading.Lock()

    def send(self, message: Mapping[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False).encode("utf-8", "replace") + b"\n"
        with self.lock:
            try:
                self.sink.write(line)
                self.sink.flush()
            except (BrokenPipeError, OSError):
                os._exit(1)  # the parent is gone: nobody to report to


class Relayed(Conversation):
    """The child's conversation: each commit is also sent to the parent."""

    def __init__(self, session: Session, name: str, path: Path, pipe: _Pipe) -> None:
        super().__init__(session, name, path)
        self.pipe = pipe

    def commit(self, entries: Sequence[NewEntry] = (), documents: Mapping[str, object] | None = None) -> list[EntryId]:
        ids = super().commit(entries, documents)
        if ids:
            sent = [{"kind": e.kind.value, "content": e.content, "custom_type": e.custom_type, "display_only": e.display_only} for e in entries]
            self.pipe.send({"commit": {"entries": sent, "documents": dict(documents or {})}})
        return ids


def _die_with_parent() -> None:
    """SIGTERM when the parent dies (Linux); elsewhere the end of stdin does it."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def _pairs(items: object) -> list[tuple[str, Any]]:
    return [(str(item[0]), item[1]) for item in items if isinstance(item, list) and len(item) == 2] if isinstance(items, list) else []


async def run(spawn: Mapping[str, Any], pipe: _Pipe) -> None:
    from eukhe.agent.runner import wire_for
    from eukhe.inference.tiers import model_tiers
    from eukhe.agent.tools.registry import context_for
    from eukhe.inference.resolve import NoModel, resolve_model
    from eukhe.inference.wire.pool import Pool
    from eukhe.inference.wire.retry import Policy, Retrying
    from eukhe.settings.agent import EukheSettings
    from eukhe.settings.cvar import AgentLayers

    name, task = str(spawn["name"]), str(spawn["task"])
    ended: dict[str, str] = {}

    def emit(event: dict[str, Any]) -> None:
        if event.get("type") == "turn_end":
            ended.update(reason=str(event.get("reason")), text=str(event.get("text", "")))
        pipe.send({"event": event})

    agent_dir = Path(spawn["agentDir"])
    project = spawn.get("projectDir")
    settings = EukheSettings(agent_dir, None if project is None else Path(project))
    family = [AgentLayers(str(a["name"]), _pairs(a.get("profile")), _pairs(a.get("sets"))) for a in spawn["cvarFamily"]]
    profile, _, errors = settings.profile(name, False)
    family.append(AgentLayers(name, profile, _pairs(spawn.get("sets"))))
    for error in errors:
        emit({"type": "row", "kind": "settings_error", "text": error.show()})

    def value(cvar: str) -> Any:
        return settings.cvars.value(family, cvar)

    chosen = spawn["model"]
    try:
        model = resolve_model(agent_dir, settings.cvars, str(chosen["provider"]), str(chosen["id"]))
    except NoModel as error:
        _ignore_ends()
        pipe.send({"done": {"reason": FAILED, "text": str(error), "report": ""}})
        return
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="eukhe-subagent-") as scratch:
        with Store(Path(scratch)).create("child") as session:
            conversation = Relayed(session, "main", session.dir / "main.jsonl", pipe)
            session._conversations["main"] = conversation
            pool = Pool()
            try:
                client = Retrying(wire_for(agent_dir, settings, model, pool), Policy.from_settings(value), notify=lambda r: emit(retry_event(r)))
                thinking = spawn.get("thinking")
                agent = Agent(
                    conversation, client, model.api, context_for(Path(spawn["workdir"]), settings, family), value, emit,
                    system=SYSTEM + CHILD_SYSTEM.format(name=name),
                    thinking=thinking if isinstance(thinking, str) and thinking != "off" else None, tiers=model_tiers(model),
                )  # fmt: skip
                stopped = asyncio.Event()
                for number in (signal.SIGTERM, signal.SIGINT):
                    loop.add_signal_handler(number, stopped.set)
                threading.Thread(target=_watch_stdin, args=(loop, stopped), name="eukhe-child-stdin", daemon=True).start()
                turning = asyncio.ensure_future(agent.turn(_with_view(spawn.get("view"), task)))
                stopping = asyncio.ensure_future(stopped.wait())
                await asyncio.wait({turning, stopping}, return_when=asyncio.FIRST_COMPLETED)
                stopping.cancel()
                if not turning.done():  # the turn is aborted: its bash calls' groups are killed
                    agent.abort()
                    turning.cancel()
                await asyncio.gather(turning, return_exceptions=True)
                for number in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(number)
                _ignore_ends()
            finally:
                await pool.aclose()
            report = ""
            if ended.get("reason") == ANSWERED:
                answers = [e for e in conversation.model_view() if e.kind is Kind.ASSISTANT]
                content = answers[-1].content if answers else ""
                report = str(content.get("text", "")) if isinstance(content, dict) else str(content)
            pipe.send({"done": {"reason": ended.get("reason", FAILED), "text": ended.get("text", ""), "report": report}})


def _ignore_ends() -> None:
    """The turn ended, or never began: the parent ends the child's group as the report comes, and
    a signal then would find the loop closing (Python's "Exception ignored ... signal wakeup fd"
    on stderr) or cut the scratch dir's removal short; the child ends by itself."""
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, signal.SIG_IGN)


def _with_view(view: object, task: str) -> str:
    """A chat's subagent starts from the view, then its task (memory.md rule 57); another
    subagent from its task alone."""
    if not isinstance(view, list):
        return task
    from eukhe.memory.request import view_parts

    return "".join(text for text, _ in view_parts([str(line) for line in view])) + "\n\n" + task


def _watch_stdin(loop: asyncio.AbstractEventLoop, stopped: asyncio.Event) -> None:
    """The parent's pipe: its end (the parent is gone, or ended the child) stops the turn."""
    with contextlib.suppress(OSError, ValueError):  # os.read, not the buffer: a thread blocked in it would stop the interpreter's exit
        while os.read(sys.stdin.fileno(), 1 << 16):
            pass
    with contextlib.suppress(RuntimeError):  # the loop has ended
        loop.call_soon_threadsafe(stopped.set)


def main() -> int:
    _die_with_parent()
    line = sys.stdin.buffer.readline()
    try:
        spawn = json.loads(line)
        if not isinstance(spawn, dict):
            raise ValueError("not an object")
    except ValueError as error:
        print(f"eukhe.agent.child: the spawn line is not a JSON object: {error}", file=sys.stderr)
        return 2
    if spawn.get("parent") is not None and os.getppid() != spawn["parent"]:
        return 1  # the parent died before the child asked to die with it
    asyncio.run(run(spawn, _Pipe(sys.stdout.buffer)))
    return 0


if __name__ == "__main__":
    # The code runs as the module of its name, not as __main__: one copy of the module, whose
    # functions carry its name (a mutation run switches a mutant on by that name).
    from eukhe.agent.child import main as entry

    sys.exit(entry())
