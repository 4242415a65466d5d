"""bash: a command run by ``bash -c`` in the working directory.

The command runs in a process group of its own (a new session), its stdin empty, its stdout and
stderr one stream in the order they were written. The call ends when bash exits, when its
timeout passes, or when the turn cancels it (the context's cancellation hook, or the task
running the tool being cancelled); then the whole group is ended, whatever the reason, so no
process a call started outlives it (a background job too: this step has no background tools):
SIGTERM to the group, a grace of ``kill_grace_ms`` for bash to exit and the output pipe to
close, then SIGKILL to the group. A process that ignores SIGTERM is killed all the same. Only a
process that leaves the group (``setsid``) escapes: a group is what the call can name.

The timeout is the call's ``timeout_ms`` when it asks for one, never more than the context's
``bash_timeout_ms`` (the session's toolBlockingBudgetMs, a limit an untrusted project cannot
raise: control.md S4b.5).

The output is collected as it streams, bounded: the first and the last ``CAP`` characters are
kept and the rest only counted, so a command that writes without end costs no memory. Clipping
keeps the head and the tail of the whole output (memory.md rule 9): ``cap_text`` is applied to
an ``_Elided`` text whose length is the whole output's and whose kept ends are its ends.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import signal
from collections.abc import Mapping
from typing import Any, SupportsIndex

from eukhe.agent.tools.base import CANCELLED, EXIT_STATUS, TIMEOUT, Tool, ToolContext, ToolResult, clip
from eukhe.memory.lines import CAP


class _Elided(str):
    """A text of which only the first and the last ``keep`` characters are held: its length is
    the whole text's, and a slice within either kept end reads as the whole text would. It is
    what ``cap_text`` needs (the length, a head, a tail); any other read raises, so a change of
    ``cap_text`` cannot silently read characters that were never kept."""

    total: int
    keep: int

    def __new__(cls, head: str, tail: str, total: int) -> _Elided:
        made = super().__new__(cls, head + tail)
        made.total, made.keep = total, len(head)
        return made

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        assert isinstance(key, slice) and key.step is None, "an elided text is read by slices"
        start, stop, _ = key.indices(self.total)
        held = str.__len__(self)
        if stop <= self.keep:
            return str.__getitem__(self, slice(start, stop))
        assert start >= self.total - (held - self.keep), "only the kept ends of an elided text can be read"
        shift = self.total - held
        return str.__getitem__(self, slice(start - shift, stop - shift))


class Collector:
    """The output of a command as it streams: UTF-8 decoded (bad bytes replaced), the first and
    last ``keep`` characters held, the total counted."""

    def __init__(self, keep: int = CAP) -> None:
        self.keep = keep
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.head = ""
        self.tail = ""
        self.total = 0

    def add(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        self.total += len(text)
        room = self.keep - len(self.head)
        if room > 0:
            self.head, text = self.head + text[:room], text[room:]
        if text:
            self.tail = (self.tail + text)[-self.keep :]

    def text(self, cap: int) -> str:
        """The whole output clipped to ``cap`` characters, head and tail. ``cap`` is at most what
        is held at each end, so a clipped text needs no character that was dropped."""
        assert cap <= self.keep, f"cannot clip to {cap} characters holding {self.keep} at each end"
        if self.total == len(self.head) + len(self.tail):
            return clip(self.head + self.tail, cap)
        return str(clip(_Elided(self.head, self.tail, self.total), cap))


class Run(asyncio.SubprocessProtocol):
    """One bash call as asyncio's subprocess protocol reports it: its output into a Collector,
    and two moments, bash's exit and the close of its output pipe. (asyncio's ``Process.wait``
    would wait for both: a background job holding the pipe would keep a finished command
    running until its timeout.)"""

    def __init__(self, output: Collector) -> None:
        loop = asyncio.get_running_loop()
        self.output = output
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.output.add(data if isinstance(data, bytes) else data.encode())

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:  # once: stderr goes to stdout's one pipe
        self.output.add(b"", final=True)
        self.closed.set_result(None)

    def process_exited(self) -> None:
        self.exited.set_result(None)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:  # the group is already gone
        pass


async def end_group(transport: asyncio.SubprocessTransport, run: Run, grace_ms: int) -> None:
    """SIGTERM to the process group, up to ``grace_ms`` for bash to exit and the pipe to close,
    then SIGKILL to the group (sent even when this is cancelled while it waits). A process that
    left the group (setsid) cannot be signalled through it: the pipe it may hold is waited for
    one more grace, then closed on our side."""
    pgid = transport.get_pid()  # the leader of its own session: its pid is the group's id
    try:
        _signal_group(pgid, signal.SIGTERM)
        await asyncio.wait([run.exited, run.closed], timeout=grace_ms / 1000)
    finally:
        _signal_group(pgid, signal.SIGKILL)
        try:
            await asyncio.wait([run.exited, run.closed], timeout=grace_ms / 1000)
        finally:
            transport.close()
    await run.exited  # bash, the leader, was killed if it had not exited: it is reaped


async def start(command: str, context: ToolContext, output: Collector) -> tuple[asyncio.SubprocessTransport, Run]:
    """bash -c ``command`` in a session of its own. The start is shielded: a cancellation while
    bash starts waits for the start (asyncio would kill bash alone, leaving its children), ends
    the group and propagates."""
    loop = asyncio.get_running_loop()
    starting = asyncio.ensure_future(loop.subprocess_exec(
        lambda: Run(output), "bash", "-c", command, cwd=context.resolve("."), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True,
    ))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        await end_group(*await starting, 0)
        raise


async def run_command(command: str, context: ToolContext, timeout_ms: int) -> tuple[Collector, str, int | None]:
    """Run ``command``; (its output, how it ended: "" for bash's exit, TIMEOUT or CANCELLED,
    bash's exit code)."""
    output = Collector()
    transport, run = await start(command, context, output)
    cancelled: asyncio.Future[Any] = asyncio.ensure_future(context.cancel.wait())
    ending = ""
    try:
        done, _ = await asyncio.wait([run.exited, cancelled], timeout=timeout_ms / 1000, return_when=asyncio.FIRST_COMPLETED)
        if run.exited not in done:
            ending = CANCELLED if cancelled in done else TIMEOUT
    finally:
        cancelled.cancel()
        await end_group(transport, run, context.kill_grace_ms)
    return output, ending, transport.get_returncode()


async def bash(arguments: Mapping[str, Any], context: ToolContext) -> ToolResult:
    asked = arguments.get("timeout_ms")
    timeout_ms = context.bash_timeout_ms if asked is None else min(int(asked), context.bash_timeout_ms)
    output, ending, code = await run_command(arguments["command"], context, timeout_ms)
    if ending == TIMEOUT:
        over = f" (the tool blocking budget; {int(asked)} ms was asked)" if asked is not None and int(asked) > timeout_ms else ""
        status, kind = f"timeout: the command ran past {timeout_ms} ms{over}; its process group was killed", TIMEOUT
    elif ending == CANCELLED:
        status, kind = "cancelled: the turn was cancelled; the command's process group was killed", CANCELLED
    else:
        status, kind = f"exit code {code}", EXIT_STATUS if code != 0 else ""
    text = output.text(CAP - len(status) - 1)
    return ToolResult(f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}{status}", bool(kind), kind)


BASH = Tool(
    "bash",
    "Run a bash command in the working directory; returns its output (stdout and stderr) and exit code.",
    {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "the command, run by bash -c"},
            "timeout_ms": {"type": "integer", "minimum": 1, "description": "stop the command after this many milliseconds"},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    bash,
)
