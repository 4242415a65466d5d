"""The daemon bridge (issue 28 item 6, issue 26 item 4): the agent process's requests
(impl/eukhe/agent/daemon.py, over its socket, from a real client) against the
model of those requests (bend/daemon.py), on 300 generated scenarios, byte for byte.

Every scenario runs on a real session in a temporary agent dir whose models.json holds the
scenario's catalog (custom providers on a loopback address no request ever reaches). Its agent is
one of three (the scenario's first event says which):

- most scenarios: a real ``Daemon`` with no turn loop (factory None), serving its socket inside
  an asyncio loop of this process, reached by a real client (``eukhe.agent.client.AgentClient``);
- ``"agent": "reach"``: the real agent process, started the way a client (``eukhe tui``, ``eukhe
  chat``) starts it: ``eukhe.agent.reach`` runs ``eukhe agent serve --session ID --idle-exit``
  and connects the real client to its socket; the process ends (exit 0) once its client has gone,
  and then no agent serves the session (``unreachable``);
- ``"agent": "serve"``: ``eukhe agent serve --session ID`` in the foreground, as a user runs it
  in a terminal: each request is a line written to its stdin, each event a line read from its
  stdout (its relay, its own client of the agent it serves); SIGTERM ends it, exit 0;
- ``"agent": "serve-client"``: the same command for a session whose agent runs already (a
  ``Daemon`` with the session's turn loop in this process): the second process becomes a client
  of that agent, never a second writer, and relays; the end of its stdin ends it (exit 0);
- ``"agent": "chat"``: the chat's agent in this process: a ``Daemon`` with the session turn loop
  (``eukhe.agent.runner``) on the chat session (``eukhe.agent.chat``), which owns the chat memory
  of its agent dir (``/memory``, ``/memory view``, ``/memory model``; a turn's end tells the chat's
  status); ``"agent": "chat-busy"``: the same while this process owns the chat memory first, as
  another ``eukhe chat`` would (memory.md rule 7), so the agent serves the chat without it.

- ``"agent": "serve-tty"``: ``serve`` with its stdin a terminal (a pty in raw mode: no echo, no line
  editing), as a user runs it; ``"agent": "serve-held"``: first an ``eukhe agent serve`` while this
  process holds the session as a writer with no socket, sent SIGTERM once the kernel shows it
  catches the signal (its handler is set before it claims), which must end at once, exit 0, having
  printed nothing; then ``serve``. The scenarios after the first 300 (``MORE``) are of these kinds,
  of a catalog with a reasoning model with no thinkingLevelMap (``free``), and of an agent dir
  whose global config.cfg does not parse (``broken``: ``global_cfg``), raw lines of RAW_MORE
  (``raw``), the chat's agent whose compactor is moved from one model to another (``compactor``),
  a saved default of the compiled catalog whose provider has no credentials (``keyless``: the session
  rewound to its start, then taken over, cannot take it), an agent whose limit of a client's
  unsent events is below a greeting (``deaf``: each raw line's connection is dropped as it connects),
  and a socket served by no agent of this protocol (``foreign``: the real client reads lines that are
  no events, each told as its error, then the connection's end). After those: ``stubborn``, the
  in-process agent with a turn loop of the bridge's (``_Stubborn``) that emits a row from a thread of
  its own and an event the protocol does not have, and ignores its abort, so the agent's end cancels
  its turn (``through_stubborn``); ``closed``, a second ``eukhe agent serve`` (a client) started with
  its stdin closed, which ends by itself (``"agent": "serve-closed"``); ``stalled``, the stubborn
  loop's agent with a connection that never reads while a turn_start of 1 MiB is broadcast, which
  the agent's end drops (``stall``, gated on the bytes waiting unread in it); ``orphan``, a second
  ``eukhe agent serve`` whose agent ends while a request of its stdin waits unread on the agent's
  side of its connection (``"asking"`` on a ``reopen``, gated by ``select`` on that socket while
  this process's loop is held): the relay tells it ``disconnected``, then takes the session over.

The in-process agents read lines of at most ``bend.daemon.LINE_LIMIT`` bytes, so a raw line past
it is answered ``too_long``; a raw line may also end with the end of what its connection writes
instead of a newline. ``get_model_catalog`` is told as the models of models.json and their levels.
``/rewind`` to the head at open brings the session back to its start (a saved default, set with
``--global``, is then its model). ``reopen`` (the in-process agent with no turn loop): a second
claim of the session (``eukhe.agent.daemon.claim``) becomes a client; then the agent ends, and
the claim made again takes the session over (``takeover``).

The real process runs the real turn loop (``eukhe.agent.runner``): its scenarios also send turns,
``steer``, ``follow_up``, ``abort``, ``/memory`` and ``/agent NAME TASK``, while the session has no
model (a model would send them to the network). Starting a Python process costs about a second
(three under coverage), so only a deterministic subset runs through it: 12 scenarios, one in 25
(0, 26, 52, ...: each focus of the generator), half each way; 12 more run the chat's agent and 6
the chat owned elsewhere, in this process; every other scenario runs in this process with no turn
loop, where the same requests are refused no_loop. Each scenario starts from a fresh session
in its own agent dir, whichever agent serves it. Under a deliberate break (EUKHE_BREAK) the agent
process gets a sitecustomize on its PYTHONPATH that installs the same break in it.

Each request goes with its id; what the agent broadcasts while it answers, then its answer, are
read back in order (a turn's ``ok`` is followed by the turn's events, to its ``turn_end``). The
transcript prints each of those events: switches, the Director stack's kinds, rows, the model and
its levels, cvar outcomes, the sets cvar_save wrote, errors' kinds, thinking levels, turn starts
and ends, the state.

The scenarios: cvar lines (sets, toggles and aliases of the session switches and other Local
cvars, bad values, naturals past their width, undeclared ids, Global cvars refused from a
session, ``--global`` sets and toggles), ``cvar_save``, ``/remind``, ``/force`` (past the stack
cap: refused; directors.stackCap lowered by a set), ``/effort [LEVEL]``, ``/model`` (known, by
bare id, ambiguous, unknown, an unlisted id of a models.json provider), ``cycle_thinking_level``
both ways, ``status``, the turn loop's requests (above), and unknown commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import sys
import tempfile
import termios
import tty
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from bend import daemon as model
from bend import effort as ef
from bend.director import DEFAULT_STACK_CAP
from bridge.core import Bridge, Event
from eukhe.agent import daemon
from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient, AgentGone
from eukhe.agent.chat import CHAT, CHAT_SESSION, CONTEXT_DOC
from eukhe.agent.reach import AgentUnreachable, reach
from eukhe.agent.runner import runner_factory
from eukhe.directors.document import DIRECTORS_DOC
from eukhe.memory.owner import Memory
from eukhe.memory.store import chat_dir
from eukhe.paths import socket_address
from eukhe.session import MAIN, Store
from spec import breaks

BASE_URL = "http://127.0.0.1:9/v1"  # never reached: no turn runs

# The catalog pool: provider, id, reasoning, thinkingLevelMap (every reasoning model has its
# own map, so no family ladder of the rulebook is needed). deep-1 is in two providers.
POOL: tuple[dict[str, Any], ...] = (
    {"provider": "lab", "id": "deep-1", "reasoning": True, "map": {"off": None, "low": "l", "high": "h", "xhigh": "xh"}},
    {"provider": "lab", "id": "plain-1", "reasoning": False, "map": None},
    {"provider": "den", "id": "tri-2", "reasoning": True, "map": {"minimal": None, "medium": None, "max": "m"}},
    {"provider": "den", "id": "deep-1", "reasoning": True, "map": {"minimal": "min", "xhigh": None}},
    {"provider": "den", "id": "mute-3", "reasoning": True, "map": {level: None for level in ef.LADDER}},
    {"provider": "lab", "id": "solo-4", "reasoning": True, "map": {lv: (None if lv != "high" else "hi") for lv in ef.LADDER}},
)


# -- the production side -----------------------------------------------------------------------


def _levels(levels: Any) -> str:
    return model.show_levels(None if levels is None else tuple(levels))


def _model(ref: Any) -> str:
    return "-" if ref is None else f"{ref['provider']}/{ref['id']}"


def _switches(switches: dict[str, Any]) -> str:
    return " ".join(f"{cvar}={json.dumps(switches[cvar], sort_keys=True, ensure_ascii=False)}" for cvar in model.SWITCHES)


def _outcome(outcome: str, is_global: bool) -> str:
    if outcome.startswith("ParseError"):
        return "ParseError"
    if is_global:
        return outcome.split(":", 1)[0] if outcome.startswith(("ok:", "refused:")) else outcome.split(": ", 1)[0]
    return outcome


def event_line(event: dict[str, Any]) -> str:
    """One event the daemon sent, as the transcript shows it."""
    kind = event["type"]
    if kind == "switches":
        return "switches " + _switches(event["switches"])
    if kind == "directors":
        return "directors " + (",".join(layer["kind"] for layer in event["stack"]) or "-")
    if kind == "row" and event["kind"] == "memory" and event["text"].startswith("memory: no compactor:"):
        return "row memory memory: no compactor"  # its reason names every provider of the catalog
    if kind == "row" and event["kind"] == "settings_error":  # the document it names, without its directory
        return f"row settings_error {Path(event['text'].split(':', 1)[0]).name}"
    if kind == "row":
        return f"row {event['kind']} {event['text']}"
    if kind == "memory":
        lines = [re.sub(r"^chat .*/agent/", "chat AGENT/", line) for line in event["lines"]]
        return (
            f"memory bytes={event['view_bytes']}/{event['ceiling']} messages={event['messages']} nodes={event['nodes']} "
            f"view_lines={event['view_lines']} text={json.dumps(event['text'], ensure_ascii=False)} lines={json.dumps(lines, ensure_ascii=False)}"
        )
    if kind == "model_catalog":
        own = [m for m in event["models"] if m["source"] == "models.json"]
        shown = " ".join(f"{m['provider']}/{m['id']}[{_levels(m['thinking_levels'])}]" for m in own)
        return f"catalog {shown} errors={len(event['models_json_errors'])}"
    if kind == "model":
        return f"model {_model(event['model'])} level={event['thinking_level']} offered={_levels(event['offered_levels'])}"
    if kind == "cvar_result":
        is_global = bool(event["global"])
        said = "; ".join(f"{o['command']} -> {_outcome(o['outcome'], is_global)}" for o in event["outcomes"])
        return ("cvar --global [" if is_global else "cvar [") + said + "]"
    if kind == "ok":
        return f"ok {event['text']}"
    if kind == "error":
        return f"error {event['kind']}" + (f" {event['message']}" if event["kind"] == "ExpandError" else "")
    if kind == "thinking_level":
        return f"thinking level={event['level'] or 'null'} offered={_levels(event['offered_levels'])}"
    if kind == "turn_start":
        return f"turn_start {json.dumps(event['text'], ensure_ascii=False)}"
    if kind == "turn_end":  # a path of the scenario's agent dir is told as AGENT
        text = re.sub(r"/\S*/agent/chat/", "AGENT/chat/", event["text"])
        return f"turn_end {event['reason']} {json.dumps(text, ensure_ascii=False)}"
    if kind == "cvar_saved":
        return "saved [" + ", ".join(f"{w['cvar']}={json.dumps(w['value'], sort_keys=True, ensure_ascii=False)}" for w in event["written"]) + "]"
    if kind == "state":
        stack = ",".join(layer["kind"] for layer in event["directors"]) or "-"
        return (
            f"state model={_model(event['model'])} level={event['thinking_level']} offered={_levels(event['offered_levels'])} "
            f"directors={stack} {_switches(event['switches'])}" + (f" settings_errors={len(event['settings_errors'])}" if event["settings_errors"] else "")
        )
    return f"unexpected {kind}"


def raw_line(event: dict[str, Any]) -> str:
    """An event that answered a raw line: a request's answer tells the id it answers (the relay
    of ``eukhe agent serve`` numbers a request of its stdin that has none)."""
    re = event.get("re") if event["type"] != "error" else None
    return event_line(event) + (f" re={re}" if re is not None else "")


def request_of(event: Event) -> p.Request:
    kind = event["request"]
    if kind == "cvar":
        return p.cvar_request(str(event["line"]), bool(event.get("global", False)))
    if kind == "command":
        return p.CommandRequest(line=str(event["line"]))
    if kind == "cycle_thinking_level":
        return p.CycleThinkingLevelRequest(backward=bool(event.get("backward", False)))
    if kind == "cvar_save":
        return p.CvarSaveRequest()
    if kind == "get_model_catalog":
        return p.GetModelCatalogRequest()
    if kind == "turn":
        return p.TurnRequest(text=str(event["text"]))
    if kind == "steer":
        return p.SteerRequest(text=str(event["text"]))
    if kind == "follow_up":
        return p.FollowUpRequest(text=str(event["text"]))
    if kind == "abort":
        return p.AbortRequest()
    assert kind == "status", kind
    return p.StatusRequest()


def models_json(catalog: Sequence[dict[str, Any]]) -> dict[str, Any]:
    providers: dict[str, Any] = {}
    for entry in catalog:
        provider = providers.setdefault(entry["provider"], {"baseUrl": BASE_URL, "apiKey": "key-daemon", "models": []})
        item: dict[str, Any] = {"id": entry["id"], "reasoning": entry["reasoning"]}
        if entry["map"] is not None:
            item["thinkingLevelMap"] = entry["map"]
        provider["models"].append(item)
    return {"providers": providers}


STARTS_A_TURN = ("turn", "steer", "follow_up")
ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 120.0  # seconds a scenario's agent process has to answer (a hung agent fails the run)
BUSY_SECONDS = 0.2  # how long the takeover's claim tries while a writer with no socket holds the session
GONE_SECONDS = 10.0  # seconds a client of an agent that has ended has to tell so
ENDS_WITH_INPUT = 30.0  # seconds a client ``eukhe agent serve`` has to end once its stdin has


Receive = Callable[[], Awaitable[dict[str, Any]]]
Raw = Callable[[bytes], Awaitable[list[dict[str, Any]]]]
Reopen = Callable[[], Awaitable[list[str]]]


async def _no_reopen() -> list[str]:
    raise AssertionError("only the in-process agent with no turn loop is reopened")


async def exchange(
    events: Sequence[Event],
    send: Callable[[p.Request], Awaitable[None]],
    receive: Receive,
    raw: Raw,
    reopen: Reopen = _no_reopen,
    asking: Callable[[p.Request], Awaitable[list[str]]] | None = None,
) -> list[str]:
    """The state the agent sends first, then each request with its id: what the agent broadcasts
    while it answers, then its answer; a turn's answer ``ok`` is followed by the turn's events, to
    its ``turn_end`` (in the chat, to the ``memory`` event after it). A raw line goes through
    ``raw``, which gives what answered it; ``reopen`` gives the lines of a takeover."""
    chat = events[0].get("agent") == "chat"
    lines = ["0 " + event_line(await receive())]
    for number, event in enumerate(events[1:], 1):
        if event["request"] == "reopen" and event.get("asking") is not None:  # a request sent as the agent ends
            assert asking is not None, "only the relay of a second agent process is asked as its agent ends"
            asked = request_of({"request": event["asking"]}).model_copy(update={"id": f"r{number}"})
            lines.extend(f"{number} {line}" for line in await asking(asked))
            continue
        if event["request"] == "reopen":
            lines.extend(f"{number} {line}" for line in await reopen())
            continue
        if event["request"] == "raw":
            end = b"\n" if event.get("eol", True) else b""
            line = str(event["line"]) * int(event.get("repeat", 1))  # a line past the protocol's limit: a short event
            lines.extend(f"{number} {raw_line(said)}" for said in await raw(line.encode("utf-8", "surrogateescape") + end))
            continue
        request = request_of(event).model_copy(update={"id": f"r{number}"})
        await send(request)
        turn = False
        while True:
            said = await receive()
            lines.append(f"{number} {event_line(said)}")
            if said.get("re") == request.id:
                turn = said["type"] == "ok" and request.type in STARTS_A_TURN
                if not turn:
                    break
            elif turn and said["type"] == "turn_end" and not chat:
                break
            elif turn and said["type"] == "memory":
                break
    return lines


def _typed(event: p.Event) -> dict[str, Any]:
    value = json.loads(p.encode(event))
    assert isinstance(value, dict)
    return value


def in_process(agent: Path, events: Sequence[Event]) -> list[str]:
    """A ``Daemon`` in this process, reached by a real client: with no turn loop, or (``"agent":
    "chat"``) the chat's, with the session's turn loop (``eukhe.agent.runner``) on the session
    marked as the chat, so the agent owns the chat memory of its agent dir."""
    lines: list[str] = []
    chat = events[0].get("agent") in ("chat", "chat-busy")
    owner = Memory(chat_dir(agent)) if events[0].get("agent") == "chat-busy" else None  # another process's, as the agent sees it
    with contextlib.ExitStack() as stack, Store(agent / "sessions").create(CHAT_SESSION if chat else None) as session:
        if owner is not None:
            stack.callback(owner.close)
            assert owner.is_owner
        if chat:
            session.conversation(MAIN).commit(documents={CONTEXT_DOC: CHAT})
        if events[0].get("broken_stack") is True:  # a Director stack document that does not parse
            session.conversation(MAIN).commit(documents={DIRECTORS_DOC: {"layers": "not a list", "version": 1}})

        async def serve() -> None:
            agent_process = daemon.Daemon(agent, session, runner_factory if chat else None, line_limit=model.LINE_LIMIT)
            await agent_process.start()
            agents, clients = [agent_process], [await AgentClient.connect(agent_process.address)]  # the serving ones, last
            greeted: list[dict[str, Any]] = []
            if events[0].get("deaf") is True:  # once this client has its greeting, a later one whose events wait unsent past this is dropped
                greeted.append(await _next(clients[-1]))
                agent_process.pending_limit = DEAF_LIMIT

            async def send(request: p.Request) -> None:
                await clients[-1].send(request)

            async def receive() -> dict[str, Any]:
                return greeted.pop() if greeted else await _next(clients[-1])

            async def reopen() -> list[str]:
                said, taken, fresh = await takeover(agent, session.id, agents[-1], clients[-1], events[0].get("stale_socket") is True)
                agents.append(taken)
                clients.append(fresh)
                return said

            try:
                lines.extend(await exchange(events, send, receive, _connection(agent_process.address), reopen))
                await clients[-1].close()
            finally:
                await agents[-1].close()

        asyncio.run(serve())
    return lines


class _Stubborn:
    """A turn loop of the bridge's (``"agent": "stubborn"``, bend.daemon.stubborn): its turn emits
    its turn_start, a row from a thread of its own, an event the protocol does not have, then
    waits for ever; its abort ends nothing (only the agent's cancel, as it closes, ends the turn)."""

    def __init__(self, emit: daemon.Emit) -> None:
        self.emit = emit
        self.aborted = 0

    async def turn(self, text: str) -> None:
        self.emit({"type": "turn_start", "run": model.STUBBORN_RUN, "text": text})
        await asyncio.to_thread(self.emit, {"type": "row", "kind": "note", "text": model.STUBBORN_ROW})
        self.emit({"type": "no_such_event", "text": text})
        await asyncio.Event().wait()

    def steer(self, text: str) -> None:
        pass

    def follow_up(self, text: str) -> None:
        pass

    def abort(self) -> None:
        self.aborted += 1


async def _unread(sock: socket.socket) -> None:
    """Once bytes wait unread in ``sock`` (the kernel's count of its receive queue)."""
    while not int.from_bytes(fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"), sys.byteorder):
        await asyncio.sleep(0.001)


def _read_to_end(sock: socket.socket) -> str:
    """What a connection that did not read was sent, read to its end: told as whole lines (the
    first must be the greeting, a state), then a line cut short, then the end."""
    sock.settimeout(GONE_SECONDS)
    data = b""
    try:
        while chunk := sock.recv(1 << 20):
            data += chunk
    except TimeoutError:
        return f"the connection that did not read: no end within {GONE_SECONDS:g} s"
    except ConnectionError as error:
        return f"the connection that did not read: {type(error).__name__}"
    *whole, rest = data.split(b"\n")
    kinds = [json.loads(line)["type"] for line in whole]
    if kinds == ["state"] and rest:
        return model.STALLED_END
    return f"the connection that did not read: {kinds} then {len(rest)} bytes, then its end"


def through_stubborn(agent: Path, events: Sequence[Event]) -> list[str]:
    """The in-process agent with the stubborn turn loop, reached by a real client: each request
    with its id, read to its answer (a turn's ``ok`` then the loop's events, to the error that
    stands for the event it dropped); ``close`` ends the agent while the client stays connected,
    which reads every event left, then the connection's end."""
    loops: list[_Stubborn] = []

    def factory(_session: Any, _cvar: Any, emit: daemon.Emit) -> _Stubborn:
        loops.append(_Stubborn(emit))
        return loops[-1]

    def shown(event: dict[str, Any]) -> str:
        if event["type"] == "turn_start" and len(event["text"]) > model.SHORT_TEXT:
            return f"turn_start of {len(event['text'].encode('utf-8'))} bytes"
        return event_line(event)

    stalled: list[socket.socket] = []
    with Store(agent / "sessions").create() as session, contextlib.ExitStack() as stack:

        async def serve() -> list[str]:
            limit = p.LINE_LIMIT if events[0].get("agent") == "stalled" else model.LINE_LIMIT
            agent_process = daemon.Daemon(agent, session, factory, line_limit=limit)
            await agent_process.start()
            closed = False
            client = await AgentClient.connect(agent_process.address)
            try:
                lines = ["0 " + event_line(await _next(client))]
                for number, event in enumerate(events[1:], 1):
                    if event["request"] == "stall":  # a connection that never reads: once its greeting waits in it
                        stalled.append(stack.enter_context(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)))
                        with socket_address(agent_process.address.parent, agent_process.address.name) as where:
                            stalled[-1].connect(where)
                        await asyncio.wait_for(_unread(stalled[-1]), DEADLINE)
                        lines.append(f"{number} {model.STALLED}")
                        continue
                    if event["request"] == "close":
                        closing = asyncio.create_task(agent_process.close())
                        closed = True
                        with contextlib.suppress(AgentGone):
                            while True:
                                lines.append(f"{number} {shown(await _next(client))}")
                        lines.append(f"{number} gone")
                        await asyncio.wait_for(closing, DEADLINE)
                        for each in stalled:  # what it was sent, to its end
                            lines.append(f"{number} {await asyncio.to_thread(_read_to_end, each)}")
                        continue
                    request = request_of(event).model_copy(update={"id": f"r{number}"})
                    if event.get("repeat") is not None:
                        request = request.model_copy(update={"text": str(event["text"]) * int(event["repeat"])})
                    await client.send(request)
                    while True:  # to its answer
                        said = await _next(client)
                        lines.append(f"{number} {shown(said)}")
                        if said.get("re") == request.id:
                            break
                    if said["type"] == "ok" and said["text"] == "the turn starts":  # the loop's events, to the error of the one it dropped
                        while not (said["type"] == "error" and said.get("re") is None):
                            said = await _next(client)
                            lines.append(f"{number} {shown(said)}")
                asked = sum(e.get("request") in ("abort", "close") for e in events[1:])  # the agent's end aborts the turn first
                assert [each.aborted for each in loops] == [asked], f"the loop was asked to abort {[each.aborted for each in loops]} times, not {asked}"
                return lines
            finally:
                await client.close()
                if not closed:
                    await agent_process.close()

        return asyncio.run(serve())


async def takeover(agent: Path, ident: str, running: daemon.Daemon, client: AgentClient, stale: bool = False) -> tuple[list[str], daemon.Daemon, AgentClient]:
    """A second claim of the session while its agent runs (``eukhe.agent.daemon.claim``, as a
    second ``eukhe`` process makes it): it finds the writer lock taken and becomes a client (its
    greeting, the state); then the agent ends, and each of its clients sees its connection end
    (``gone``: no event is left, and a request sent then fails, as does the claimant's request
    sent as the agent ended); while a writer with no socket holds the session, a claim tries
    again until its time runs out (``busy``: AgentBusy); once that writer has gone, the claim made again takes the
    session, as the agent, and its client's greeting is the state with the kinds of the rows the
    agent showed at open."""
    store = Store(agent / "sessions")
    second = await asyncio.wait_for(daemon.claim(agent, store, ident, None), DEADLINE)
    assert isinstance(second, AgentClient), "a second claim of a held session made an agent"
    said = [event_line(_typed(await asyncio.wait_for(second.until(lambda event: event.type == "state"), DEADLINE)))]
    asked = asyncio.ensure_future(second.request(p.StatusRequest()))  # sent as the agent ends: it is never answered
    await running.close()
    for each in (client, second):
        left = []
        if each is second:
            with contextlib.suppress(AgentGone):
                left.append(event_line(_typed(await asyncio.wait_for(asked, GONE_SECONDS))))
        left += [event_line(_typed(event)) async for event in each.events()]  # it ends at once: the agent sent its last
        asks: tuple[Callable[[], Awaitable[p.Event]], ...] = (each.next, lambda: each.request(p.StatusRequest()))
        for ask in asks:  # so does each later read, and a request sent then
            with contextlib.suppress(AgentGone):
                left.append(event_line(_typed(await asyncio.wait_for(ask(), GONE_SECONDS))))
        await each.close()
        said.append(" ".join(left) or "gone")
    with store.open(ident) as writer:  # a writer with no socket (a command line's) holds the session
        try:
            held = await asyncio.wait_for(daemon.claim(agent, store, ident, None, seconds=BUSY_SECONDS), GONE_SECONDS)
        except daemon.AgentBusy:
            said.append("busy")
        else:
            said.append(f"claimed {type(held).__name__}")
            await held.close()
        assert not writer.closed
    if stale:  # a directory where the socket would be: the claim takes the session, cannot bind, gives it back
        address = p.socket_path(agent, store.path(ident))
        address.mkdir()
        (address / "left").write_text("", encoding="utf-8")
        try:
            refused = await asyncio.wait_for(daemon.claim(agent, store, ident, None), DEADLINE)
        except OSError as error:
            said.append(f"claim refused {'OSError' if error.filename is not None else type(error).__name__}")
        else:
            said.append(f"claimed {type(refused).__name__}")
            await refused.close()
        shutil.rmtree(address)
    role = await asyncio.wait_for(daemon.claim(agent, store, ident, None), DEADLINE)
    assert isinstance(role, daemon.Daemon), "the claim of a session nobody holds made no agent"
    role.line_limit = model.LINE_LIMIT  # as the scenario's in-process agents read
    fresh = await AgentClient.connect(role.address)
    greeting = await _next(fresh)
    said.append(event_line(greeting) + " rows=" + (",".join(row["kind"] for row in greeting["rows"]) or "-"))
    return said, role, fresh


async def _next(client: AgentClient) -> dict[str, Any]:
    return _typed(await asyncio.wait_for(client.next(), DEADLINE))


def _connection(address: Path) -> Raw:
    """A raw line on a connection of its own, as a client that breaks the protocol sends it: the
    line, the end of what it writes, then every line the agent sends until it closes."""

    async def raw(line: bytes) -> list[dict[str, Any]]:
        with socket_address(address.parent, address.name) as where:
            reader, writer = await asyncio.open_unix_connection(where, limit=p.LINE_LIMIT)
        said = b""
        try:
            writer.write(line)
            await writer.drain()
            writer.write_eof()
            said = await asyncio.wait_for(reader.read(), DEADLINE)
        except ConnectionError:  # the agent dropped the connection as it came (``deaf``): it sent nothing
            pass
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()
        return [json.loads(text) for text in said.splitlines()]

    return raw


def through_reach(tmp: Path, agent: Path, events: Sequence[Event]) -> list[str]:
    """The real agent process, started as a client starts it (``eukhe.agent.reach``: ``eukhe
    agent serve --idle-exit``), reached by the real client; it ends once its client has gone."""
    with Store(agent / "sessions").create() as session:
        ident, where = session.id, session.dir

    async def run() -> list[str]:
        client, process = await reach(agent, where, ident, tmp)
        assert process is not None, "an agent served the scenario's new session already"
        asked: list[tuple[p.Request, asyncio.Task[p.Event]]] = []
        stream = client.events()  # this client reads as a client's user interface does: every event, in order

        async def send(request: p.Request) -> None:  # and asks as a caller that waits for its answer
            asked.append((request, asyncio.create_task(client.request(request))))

        async def receive() -> dict[str, Any]:
            return _typed(await asyncio.wait_for(anext(stream), DEADLINE))

        try:
            said = await exchange(events, send, receive, _connection(p.socket_path(agent, where)))
            for request, answer in asked:  # each answer ``request`` gave is the event that answered it
                answered = await asyncio.wait_for(answer, DEADLINE)  # an agent that never answers fails the run
                assert getattr(answered, "re", None) == request.id, f"{request.id}: request gave {answered!r}"
        finally:
            await client.close()
        try:
            code = await asyncio.wait_for(asyncio.to_thread(process.wait), DEADLINE)
        except TimeoutError:  # killed, or its waiting thread would hold asyncio.run's end for ever
            process.kill()
            raise AssertionError(f"the agent process did not end within {DEADLINE:g} s of its client's going") from None
        assert code == 0, f"the agent process ended with exit {code}"
        await unreachable(agent, where, ident, tmp)
        return said

    with breaks.reaching_children(tmp / "site"):  # the agent process
        return asyncio.run(run())


async def unreachable(agent: Path, where: Path, ident: str, tmp: Path) -> None:
    """Once the agent process has ended, no agent serves the session: a client that does not
    start one is refused (AgentUnreachable); and an agent started for a session the agent dir does
    not have ends before it serves, which the client is told (its exit code)."""
    for session, start in ((ident, False), ("no-such-session", True)):
        try:
            late, started = await asyncio.wait_for(reach(agent, where.with_name(session), session, tmp, start=start), DEADLINE)
        except AgentUnreachable as error:
            assert start == ("ended (exit " in str(error)), f"{session}: {error}"
            continue
        await late.close()
        if started is not None:
            started.kill()
            started.wait()
        raise AssertionError(f"an agent served session {session}")


def through_serve(tmp: Path, agent: Path, events: Sequence[Event]) -> list[str]:
    """``eukhe agent serve --session ID`` in the foreground, as a user runs it in a terminal:
    each request a line on its stdin, each event a line of its stdout; SIGTERM ends it.

    ``"agent": "serve-client"``: the session has its agent already (a ``Daemon`` with the session's
    turn loop, in this process, as another ``eukhe`` that serves it), so ``eukhe agent serve`` is a
    second process for the session: it becomes a client of that agent, never a second writer, and
    relays between it and the terminal; the end of its stdin ends it once each request was
    answered (exit 0, nothing printed after), with no signal; then ``eukhe agent serve
    --idle-exit`` (the agent a client starts) finds the session served and ends at once (exit 0,
    nothing printed). A ``reopen`` ends that agent: the
    relay claims the session again and takes it over, as the agent, whose state it prints (then
    it serves until a signal)."""
    client_mode = events[0].get("agent") == "serve-client"
    terminal = events[0].get("agent") == "serve-tty"  # its stdin a terminal (a pty, raw: no echo, no line editing)
    with Store(agent / "sessions").create() as session:
        ident = session.id
    command = [sys.executable, "-m", "eukhe", "--agent-dir", str(agent), "agent", "serve", "--session", ident, "--session-dir", str(agent / "sessions")]

    holding: list[daemon.Daemon] = []  # the agent of this process, while it holds the session

    async def run(env: dict[str, str]) -> list[str]:
        if events[0].get("agent") == "serve-closed":  # a client whose stdin is closed from the start
            with Store(agent / "sessions").open(ident) as held:
                holder = daemon.Daemon(agent, held, runner_factory, line_limit=model.LINE_LIMIT)
                await holder.start()
                try:
                    return [f"0 {await closed_client(env)}"]
                finally:
                    await holder.close()
        if events[0].get("agent") == "serve-held":
            stopped = await stopped_while_claiming(env)
            return [f"0 {stopped}", *await relay(env)]
        if not client_mode:
            return await relay(env)
        with Store(agent / "sessions").open(ident) as held:
            asked = any(event.get("asking") is not None for event in events)  # the agent's end, with no loop's to await first
            holder = daemon.Daemon(agent, held, None if asked else runner_factory, line_limit=model.LINE_LIMIT)
            await holder.start()
            holding.append(holder)
            try:
                return await relay(env)
            finally:
                if holding:
                    await holding.pop().close()

    async def closed_client(env: dict[str, str]) -> str:
        """``eukhe agent serve`` for the session its agent serves, started with no stdin at all (its
        descriptor 0 closed, as a shell's ``<&-`` leaves it): a client whose input has ended with no
        request; it ends by itself (the gate: its stdout's end, then its exit), having printed at
        most the greeting its client got (the state), which its end may come before."""
        closed = ["/bin/sh", "-c", 'exec "$@" <&-', "sh", *command]
        process = await asyncio.create_subprocess_exec(*closed, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, cwd=tmp, env=env, limit=p.LINE_LIMIT)
        try:
            assert process.stdout is not None
            try:
                printed = await asyncio.wait_for(process.stdout.read(), ENDS_WITH_INPUT)
            except TimeoutError:
                return f"stdin closed: still running {ENDS_WITH_INPUT:g} s on"
            code = await asyncio.wait_for(process.wait(), DEADLINE)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        kinds = [json.loads(line)["type"] for line in printed.splitlines()]
        return f"stdin closed: exit {code}, " + ("printed at most its greeting" if kinds in ([], ["state"]) else f"printed {kinds}")

    async def stopped_while_claiming(env: dict[str, str]) -> str:
        """``eukhe agent serve`` for the session while a writer with no socket (a command line's)
        holds it: it claims, tries again and again; SIGTERM once it has its handler of the signal
        (which it sets before it claims), and it ends."""
        with Store(agent / "sessions").open(ident) as held:
            process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, cwd=tmp, env=env)
            try:
                await asyncio.wait_for(_handles_sigterm(process), DEADLINE)
                process.send_signal(signal.SIGTERM)
                assert process.stdout is not None
                printed = await asyncio.wait_for(process.stdout.read(), DEADLINE)
                code = await asyncio.wait_for(process.wait(), DEADLINE)
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            assert not held.closed
        return f"stopped while it claimed the session: {'nothing printed' if printed == b'' else f'printed {printed[:200]!r}'}, exit {code}"

    async def relay(env: dict[str, str]) -> list[str]:
        pty: tuple[int, int] | None = None
        if terminal:
            pty = os.openpty()
            tty.setraw(pty[1])
        try:
            process = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE if pty is None else pty[1], stdout=asyncio.subprocess.PIPE, cwd=tmp, env=env, limit=p.LINE_LIMIT
            )
        finally:
            if pty is not None:
                os.close(pty[1])  # the process has its own
        assert process.stdout is not None
        stdin: Any = process.stdin if pty is None else _Terminal(pty[0])
        stdout = process.stdout

        async def send(request: p.Request) -> None:
            stdin.write(p.encode(request))
            await stdin.drain()

        async def receive() -> dict[str, Any]:
            line = await asyncio.wait_for(stdout.readline(), DEADLINE)
            assert line, "the agent process ended its stdout"
            value = json.loads(line)
            assert isinstance(value, dict)
            return value

        async def raw(line: bytes) -> list[dict[str, Any]]:  # the relay answers it: its error, no more
            stdin.write(line)
            await stdin.drain()
            if not line.endswith(b"\n"):  # the last line, ended by the end of stdin: a blank one is no line
                stdin.close()
                if not line.strip():
                    return []
            return [await receive()]

        async def reopen() -> list[str]:  # the agent it follows ends: it takes the session over
            assert holding, "only the agent of this process is ended"
            await holding.pop().close()
            greeting = await receive()
            return [event_line(greeting) + " rows=" + (",".join(row["kind"] for row in greeting["rows"]) or "-")]

        async def asking(request: p.Request) -> list[str]:
            """A request of its stdin the agent it follows never answers: sent, and once it waits
            unread on the agent's side of the relay's connection (this process's loop held on it,
            so the agent cannot read it first), the agent ends; the relay tells the request
            disconnected, then takes the session over."""
            assert holding, "only the agent of this process is ended"
            holder = holding.pop()
            (relayed,) = holder.clients  # the relay's connection, as the agent holds it
            where = relayed.writer.transport.get_extra_info("socket")
            stdin.write(p.encode(request))
            await stdin.drain()
            readable, _, _ = select.select([where.fileno()], [], [], DEADLINE)  # the gate: the request has come, unread
            assert readable, f"the relay did not send its request within {DEADLINE:g} s"
            closing = asyncio.create_task(holder.close())  # its first step runs before the loop reads the request
            told: list[str] = []
            while True:  # what the relay prints, to the greeting of the agent it then is
                said = await receive()
                if said["type"] == "state":
                    await asyncio.wait_for(closing, DEADLINE)
                    return [*told, event_line(said) + " rows=" + (",".join(row["kind"] for row in said["rows"]) or "-")]
                told.append(event_line(said))

        try:
            said = await exchange(events, send, receive, raw, reopen, asking)
            stdin.close()
            if not holding:  # the agent serves until a signal; a client ends with its input
                process.send_signal(signal.SIGTERM)
            rest = await asyncio.wait_for(stdout.read(), ENDS_WITH_INPUT if holding else DEADLINE)
            assert rest == b"", f"the agent printed after its last answer: {rest[:200]!r}"
            code = await asyncio.wait_for(process.wait(), DEADLINE)
            assert code == 0, f"the agent process ended with exit {code}"
            if holding:  # an agent started for a client (--idle-exit) finds the session served: it ends at once
                started = await asyncio.create_subprocess_exec(
                    *command, "--idle-exit", stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, cwd=tmp, env=env
                )
                try:
                    printed, _ = await asyncio.wait_for(started.communicate(), ENDS_WITH_INPUT)
                finally:
                    if started.returncode is None:
                        started.kill()
                        await started.wait()
                assert (started.returncode, printed) == (0, b""), f"--idle-exit for a served session: exit {started.returncode}, {printed[:200]!r}"
            return said
        finally:
            if isinstance(stdin, _Terminal):
                stdin.close()
            if process.returncode is None:
                process.kill()
                await process.wait()

    with breaks.reaching_children(tmp / "site"):  # the agent process
        return asyncio.run(run(dict(os.environ)))


SIGTERM_CAUGHT = 1 << (signal.SIGTERM - 1)  # its bit in the SigCgt mask of /proc/PID/status


async def _handles_sigterm(process: asyncio.subprocess.Process) -> None:
    """Once ``process`` catches SIGTERM (the kernel's mask of the signals it has a handler for); a
    process that ended first fails."""
    while True:
        assert process.returncode is None, f"the agent process ended (exit {process.returncode}) before it caught SIGTERM"
        with open(f"/proc/{process.pid}/status", encoding="ascii") as status:
            mask = next((int(line.split()[1], 16) for line in status if line.startswith("SigCgt:")), 0)
        if mask & SIGTERM_CAUGHT:
            return
        await asyncio.sleep(0.001)


def through_foreign(tmp: Path, lines: Sequence[str]) -> list[str]:
    """The real client of a socket whose server writes ``lines`` and closes (``foreign``): each
    event it reads, with the request it names as answered (``re``), then its end."""

    async def run() -> list[str]:
        async def serve(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"".join(line.encode("utf-8", "surrogateescape") + b"\n" for line in lines))
            await writer.drain()
            writer.close()

        address = tmp / "foreign.sock"
        server = await asyncio.start_unix_server(serve, path=str(address))
        said: list[str] = []
        try:
            client = await AgentClient.connect(address, limit=model.LINE_LIMIT)
            try:
                while True:
                    event = _typed(await asyncio.wait_for(client.next(), DEADLINE))
                    said.append(f"{len(said)} {event_line(event)} re={event.get('re')}")
            except AgentGone:
                said.append(f"{len(said)} gone")
            finally:
                await client.close()
        finally:
            server.close()
        return said

    return asyncio.run(run())


class _Terminal:
    """The terminal side of a pty whose other side is the stdin of ``eukhe agent serve``: what a
    user types is written to it; closing it ends that stdin (its reads fail, EIO)."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def write(self, data: bytes) -> None:
        assert self.fd is not None
        view = memoryview(data)
        while view:  # a full input queue blocks until the process has read: it reads all along
            view = view[os.write(self.fd, view) :]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def production(events: Sequence[Event]) -> list[str]:
    key = os.environ.pop(KEYLESS_VARIABLE, None)  # the saved default's provider has no credentials here
    try:
        return _production(events)
    finally:
        if key is not None:
            os.environ[KEYLESS_VARIABLE] = key


def _production(events: Sequence[Event]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        agent = Path(tmp) / "agent"
        agent.mkdir()
        (agent / "models.json").write_text(json.dumps(models_json(events[0]["catalog"])), encoding="utf-8")
        if "global_cfg" in events[0]:  # the global config.cfg, as a user left it
            (agent / "config.cfg").write_text(str(events[0]["global_cfg"]), encoding="utf-8")
        if events[0].get("agents_file") is True:  # a file where the agents directory would be
            (agent / "agents").write_text("not a directory\n", encoding="utf-8")
        mode = events[0].get("agent")
        if mode == "reach":
            return through_reach(Path(tmp), agent, events)
        if mode in ("serve", "serve-client", "serve-tty", "serve-held", "serve-closed"):
            return through_serve(Path(tmp), agent, events)
        if mode in ("stubborn", "stalled"):
            return through_stubborn(agent, events)
        if mode == "foreign":
            return through_foreign(Path(tmp), [str(line) for line in events[0]["lines"]])
        assert mode in (None, "chat", "chat-busy"), mode
        return in_process(agent, events)


# -- the generator ---------------------------------------------------------------------------------

LOCAL_SETS = (
    "set serviceTier flex",
    "set serviceTier priority",
    "set serviceTier bogus",  # BadValue
    "set stt.enabled true",
    "set autonomous.enabled yes",  # BadValue
    "set transport sse",
    "set retry.maxRetries -1",  # BadValue
    "set retry.maxRetries 4294967296",  # past u32: BadValue
    "set directors.maxSteps 9223372036854775808",  # past i64: BadValue
    "set temperature 0.5",
    "set no.such.cvar 1",  # Undeclared
    "set defaultThinkingLevel high",  # Global from a session
    "set memory.model m",  # Global from a session
    "toggle autonomous.enabled",
    "toggle stt.enabled",
    "toggle serviceTier",  # NotBool
    "toggle titles.generate",  # Global
    "toggle ghost.flag",  # Undeclared
    "toggle defaultThinkingLevel",  # Global and not Bool: NotBool first
    'alias fast "set serviceTier priority; toggle stt.enabled"',
    'alias calm "set serviceTier default; set autonomous.enabled false"',
    'alias loop "loop"',
    'alias broken "set \\"x"',  # a body that does not parse
    "fast",
    "calm",
    "loop",  # ExpandError::Cycle
    "nosuchalias",  # ExpandError::Unknown
    'bind f1 "toggle stt.enabled"',  # client-only
    "action quit",  # client-only
    'set serviceTier "unclosed',  # ParseError
    "set serviceTier",  # ParseError (arity)
)
GLOBAL_SETS = (
    "set defaultThinkingLevel high",
    "set defaultThinkingLevel loud",  # BadValue
    "set serviceTier flex",  # a Local cvar in the global config: below the session's sets
    "set directors.stackCap 1",
    "set directors.stackCap 99999999999999999999",  # past i64
    "set no.such.cvar 2",
    "toggle titles.generate",
    "toggle stt.enabled",
    "toggle memory.model",  # NotBool
    'alias x "set serviceTier flex"',  # refused: only set and toggle
    "set defaultProvider lab; set defaultModel deep-1",  # a saved default (S6): a rewound session takes it
    "set defaultProvider den; set defaultModel deep-1",
    "set defaultProvider nope; set defaultModel deep-1",  # of no provider: none
    "set serviceTier",  # ParseError
)
CAP_SETS = ("set directors.stackCap 0", "set directors.stackCap 1", "set directors.stackCap 2", "set directors.stackCap 3")
PUSHES = (
    "/remind Run the tests first.",
    "/remind   keep the diff small  ",
    "/remind",  # no text
    "/force read",
    "/force ls --tries 3",
    "/force grep --tries 0",
    "/force read --tries",  # no number
    "/force read --tries x",  # not a number
    "/force",  # no tool
    "/force read ls",  # two tools
    '/force ""',  # an empty tool: refused by the stack
    '/force "unclosed',  # does not split
)
EFFORT = ("/effort", "/effort off", "/effort minimal", "/effort low", "/effort medium", "/effort high", "/effort xhigh", "/effort max", "/effort turbo")
MODELS = (
    "/model",
    "/model lab/deep-1",
    "/model den/deep-1",
    "/model lab/plain-1",
    "/model den/tri-2",
    "/model den/mute-3",
    "/model lab/solo-4",
    "/model deep-1",  # a bare id: ambiguous when both providers list it
    "/model tri-2",
    "/model solo-4",
    "/model lab/unlisted-9",  # an id lab's models.json does not list: accepted, outside the catalog
    "/model nope/x",  # unknown provider
    "/model zz-none",  # unknown id
    "/model lab/",  # a provider and no id
)
OTHER = (
    "/agent",
    "/agent helper",
    "/forget everything",
    "/remindme later",
    "/memory view",
    "/memory",
    "/rewind 999999",
    "/rewind -3",
    "/rewind x",
    "/rewind +1",  # a plus sign: not an entry
    "/rewind HEAD",  # the head at open (bend.daemon.open_head)
    "/rewind 0HEAD",  # the same, written with a leading zero
    "/model anthropic/no-such-9",  # a provider of the compiled catalog, and no model of it
)
SPAWNS = ("/agent helper look around", "/agent 9lives count them", "/agent x_y-Z2 go", "/agent bad.name go", "/agent ünï go")  # no model: refused
TEXTS = ("hi", "run the tests", "ünïcödé ✓ 🙂", "x" * 2000, "line one\nline two")
RAW = (  # lines that are not requests: each kind of the protocol's errors
    "",
    "   ",
    "not json",
    '{"v":1,"type":"status"',
    "[1,2]",
    '"status"',
    "null",
    '{"type":"status","id":"raw"}',
    '{"v":2,"type":"status","id":"raw"}',
    '{"v":true,"type":"status","id":"raw"}',
    '{"v":"1","type":"status","id":"raw"}',
    '{"v":1,"id":"raw"}',
    '{"v":1,"type":"nope","id":"raw"}',
    '{"v":1,"type":"cvar","id":"raw"}',
    '{"v":1,"type":"status","id":"raw","extra":1}',
    '{"v":1,"type":"turn","text":"","id":"raw"}',
    '{"v":1,"type":"command","line":"","id":"raw"}',
    '{"v":1,"type":"status","id":5}',
    '{"v":1,"type":"cvar","line":7}',
    '{"v":1,"type":"ünï","id":"raw"}',
)
PROCESS_EVERY = 25  # one scenario of each 25 runs through the real agent process (see production)
MEMORY = (  # the chat's /memory lines (NAME: a model of the scenario's catalog, or of no provider)
    "/memory",
    "/memory view",
    "/memory model",
    "/memory model NAME",
    "/memory model NAME",
    "/memory model NAME high",
    "/memory model NAME off",
    "/memory model zz/none-1 low",  # of no provider: no compactor
    "/memory model nope",  # not PROVIDER/ID
    "/memory model lab/",  # no id
    "/memory model NAME turbo",  # not a level
    "/memory model NAME high extra",  # too many words
    "/memory view all",
    "/memory forget",
)
LONG = (  # past the in-process agent's line limit (bend.daemon.LINE_LIMIT)
    '{"v":1,"type":"status","id":"' + "x" * 5000 + '"}',
    "y" * 4097,
    "ü" * 2049,  # 4098 bytes
)


RAW_REQUESTS = ('{"v":1,"type":"status"}', '{"v":1,"type":"get_model_catalog"}')  # requests with no id


def raw_event(rng: random.Random, in_process: bool) -> Event:
    """A raw line; to an in-process agent, sometimes one past its line limit, or one that the end
    of the connection ends instead of a newline; sometimes a request that has no id."""
    roll = rng.random()
    if roll >= (0.85 if in_process else 0.7):
        return {"request": "raw", "line": rng.choice(RAW_REQUESTS)}
    if in_process and roll < 0.2:
        return {"request": "raw", "line": rng.choice(LONG), "eol": rng.random() < 0.5}
    if in_process and roll < 0.4:
        return {"request": "raw", "line": rng.choice(RAW), "eol": False}
    return {"request": "raw", "line": rng.choice(RAW)}


def _catalog(rng: random.Random) -> list[dict[str, Any]]:
    count = rng.choice([2, 3, 3, 4])
    return [dict(entry) for entry in rng.sample(POOL, count)]


# The scenarios after the first 300 (MORE_FIRST on), each of one kind: ``free``, the in-process
# agent over a catalog that also holds FREE, a reasoning model of models.json with no
# thinkingLevelMap and of no family the rulebook knows (S10: the default ladder, off to high);
# ``tty``, ``eukhe agent serve`` whose stdin is a terminal (a pty), as a user runs it; ``held``, first
# an ``eukhe agent serve`` for the session while a writer with no socket holds it, stopped (SIGTERM)
# while it claims (bend.daemon.STOPPED_WHILE_CLAIMING), then the serve of ``serve`` once it is free.
MORE_FIRST = 300
MORE = ("free", "free", "free", "free", "tty", "tty", "held", "held", "broken", "broken", "broken", "raw", "raw", "raw", "compactor", "compactor", "blocked", "blocked", "stack", "stale", "keyless", "keyless", "deaf", "deaf", "foreign", "foreign", "stubborn", "closed", "stalled", "orphan")
# ``foreign``: the session's socket is served by no agent of this protocol (one of another version,
# or a program that speaks none): it writes lines of FOREIGN to each connection, each ended by a
# newline, then closes it. The real client (eukhe.agent.client, reading at most LINE_LIMIT bytes a
# line) tells each line that is not an event as an error of its kind, answering the ``re`` a line
# names when it could read one, reads on, then ends (gone).
# No line names a type of either table, so an event line is refused as a request line would be.
FOREIGN = (
    "",
    "   ",
    "not json",
    '{"v":1,"type":"state"',  # cut short
    "[1,2]",
    "null",
    '"state"',
    '{"type":"state"}',  # no version
    '{"v":2,"type":"state","re":"x"}',  # a later version
    '{"v":"1","type":"row"}',
    '{"v":1,"re":"x"}',  # no type
    '{"v":1,"type":"nope"}',
    "\udcff\udcfe state",  # the bytes 0xff 0xfe: not UTF-8
    '{"v":1,"type":"row","kind":"note","text":"\\ud800"}',  # a lone surrogate escape
    "x" * 5000,  # past the client's limit
)
# ``deaf``: the in-process agent's limit of a client's unsent events (PENDING_LIMIT in production) set,
# once the scenario's client has connected, below the greeting of any later one: a connection that
# does not read is dropped as it connects (each raw line's), before its line is read.
DEAF_LIMIT = 64
# ``keyless``: a saved default of the compiled catalog whose provider has no credentials (no auth.json,
# no variable, no models.json entry): the session cannot take it, at a rewind as at a takeover.
KEYLESS = ("xai", "grok-4.6")
KEYLESS_VARIABLE = "XAI_API_KEY"  # its provider's variable, unset while the scenario runs
RAW_MORE = (  # ``raw``: lines that are no UTF-8, hold lone surrogate escapes, are JSON scalars, end with CR
    "\udcff\udcfe status",  # the bytes 0xff 0xfe: not UTF-8
    '{"v":1,"type":"status","id":"caf\udce9"}',  # a byte 0xe9 inside the JSON: not UTF-8
    "true",
    "42",
    "-1.5e3",
    '{"v":1,"type":"status","id":"cr"}\r',  # a CR before the newline: the request all the same
    '{"v":1,"type":"status","id":"\\ud800"}',  # a lone surrogate escape in the id
    '{"v":1,"type":"command","line":"/remind x","x":["ok","\\udc00"]}',  # in a list
    '{"v":1,"type":"status","\\ud83d":1}',  # in a key
    '{"v":1,"type":"cvar","line":"set a 1","global":true,"x":{"\\udfff":2}}',  # in a key of an inner object
    '{"v":2,"type":"status","id":"\\udfff"}',  # before the version is read
)
BROKEN_CFG = 'set serviceTier "unclosed\n'  # does not parse
FREE = {"provider": "lab", "id": "free-7", "reasoning": True, "map": None}


def generate(index: int) -> list[Event]:
    rng = random.Random(f"daemon-{index}")
    more = MORE[index - MORE_FIRST] if index >= MORE_FIRST else None
    catalog = _catalog(rng) + ([dict(FREE)] if more == "free" else [])
    names = [f"/model {e['provider']}/{e['id']}" for e in catalog]
    first: Event = {"catalog": catalog}
    if more == "broken":
        first["global_cfg"] = BROKEN_CFG
    if more == "blocked":  # agents is a file: no profile can be read, cvar_save cannot write
        first["agents_file"] = True
    if more == "stack":  # main's Director stack document does not parse
        first["broken_stack"] = True
    if more == "stale":  # at a takeover, a directory where the session's socket would be
        first["stale_socket"] = True
    if more == "deaf":
        first["deaf"] = True
    if more == "foreign":
        return [{**first, "agent": "foreign", "lines": rng.sample(FOREIGN, len(FOREIGN))}]
    if more == "closed":  # a second ``eukhe agent serve``, a client, whose stdin is closed (bend.daemon.CLOSED_CLIENT)
        return [{**first, "agent": "serve-closed"}]
    if more == "orphan":  # a second ``eukhe agent serve`` whose request its agent never answers (bend.daemon.reopen)
        return [{**first, "agent": "serve-client"}, {"request": "status"}, {"request": "reopen", "asking": "status"}, {"request": "status"}]
    if more == "stalled":  # the stubborn loop's agent, and a connection that never reads (bend.daemon.STALLED)
        big: Event = {"request": "turn", "text": rng.choice("xyz"), "repeat": 1 << 20}
        return [{**first, "agent": "stalled"}, {"request": "stall"}, {"request": "status"}, big, {"request": "close"}]
    if more == "stubborn":  # the in-process agent with a turn loop that breaks its side (bend.daemon.stubborn)
        text = rng.choice(TEXTS)
        asks: list[Event] = [{"request": "turn", "text": text}, {"request": "steer", "text": rng.choice(TEXTS)}, {"request": "follow_up", "text": rng.choice(TEXTS)}]
        asks += [{"request": "turn", "text": rng.choice(TEXTS)}, {"request": "abort"}, {"request": "status"}, {"request": "close"}]
        return [{**first, "agent": "stubborn"}, *asks]
    group = index // PROCESS_EVERY
    process = index % PROCESS_EVERY == group % 5  # 0, 26, 52, 78, 104, 125, ...: each focus below
    chat = index % PROCESS_EVERY == (group + 2) % 5  # 2, 28, 54, ...: the chat's agent, in this process
    busy = group % 2 == 1 and index % PROCESS_EVERY == (group + 4) % 5  # 25+0, 75+2, ...: the chat's, owned elsewhere
    client = group % 2 == 0 and index % PROCESS_EVERY == (group + 4) % 5  # 4, 51, 103, ...: a second agent process, a client
    if more is not None:
        process, chat, busy, client = more in ("tty", "held"), more == "compactor", False, False
    if client:
        first["agent"] = "serve-client"
        process = True
    elif process and more in ("tty", "held"):
        first["agent"] = {"tty": "serve-tty", "held": "serve-held"}[more]
    elif process:  # the real agent process: reached as a client starts it, or serving its terminal
        first["agent"] = "reach" if group % 2 == 0 else "serve"
    elif chat:
        first["agent"] = "chat"
    elif busy:
        first["agent"] = "chat-busy"
    in_process = first.get("agent") in (None, "chat", "chat-busy")
    events: list[Event] = [first]
    if more == "compactor":  # the chat's compactor started on one model, then moved to another (and back)
        for name, level in ((names[0], ""), (names[-1], " high"), (names[0], "")):
            events.append({"request": "command", "line": f"/memory model {name.removeprefix('/model ')}{level}"})
        events.append({"request": "command", "line": f"/memory model {names[0].removeprefix('/model ')} high extra"})  # too many words
    if more == "keyless":  # the saved default of no credentials, then the session rewound to its start
        events.append({"request": "cvar", "line": f"set defaultProvider {KEYLESS[0]}; set defaultModel {KEYLESS[1]}", "global": True})
        events.append({"request": "command", "line": "/rewind 1"})
    modelled = False  # a /model line was sent: the turn loop of a real process would reach the network
    focus = index % 5  # each scenario leans on one kind of request, and mixes the rest
    for _ in range(rng.randint(6, 24)):
        if first.get("agent") is None and more != "deaf" and rng.random() < 0.06:  # a takeover of the session (bend.daemon.reopen)
            events.append({"request": "reopen"})
        elif client and len(events) > 3 and not any(e.get("request") == "reopen" for e in events) and rng.random() < 0.15:
            events.append({"request": "reopen"})  # the agent the relay follows ends: it takes the session over
        roll = rng.random()
        bias = {0: "cvar", 1: "push", 2: "effort", 3: "model", 4: "mix"}[focus]
        pick = bias if roll < 0.4 and bias != "mix" else rng.choice(["cvar", "global", "push", "effort", "model", "cycle", "status", "other", "turn", "save"])
        if more == "broken" and rng.random() < 0.4:  # the global config.cfg that does not parse: lines that would write it
            pick = "global"
        if more == "blocked" and rng.random() < 0.4:  # the profile that cannot be written
            pick = rng.choice(["save", "cvar"])
        if more == "stack" and rng.random() < 0.5:  # pushes on the stack that cannot be read
            pick = "push"
        if more == "deaf" and rng.random() < 0.4:  # connections of their own, each dropped as it connects
            events.append(raw_event(rng, in_process))
            continue
        if more == "raw" and rng.random() < 0.5:
            events.append({"request": "raw", "line": rng.choice(RAW_MORE), "eol": rng.random() < 0.8})
            continue
        if (process or chat or busy) and not modelled and rng.random() < 0.35:  # the turn loop's requests, while they stay off the network
            pick = "turn"
        if pick == "cvar":
            line = rng.choice(LOCAL_SETS)
            if rng.random() < 0.2:
                line = line + "; " + rng.choice(LOCAL_SETS)
            events.append({"request": "cvar", "line": line})
            if line.startswith("alias ") and rng.random() < 0.5:  # the alias it defines, run
                events.append({"request": "cvar", "line": line.split()[1]})
        elif pick == "global":
            line = rng.choice(GLOBAL_SETS)
            modelled = modelled or "defaultModel" in line  # a turn of an unpinned session would take it
            events.append({"request": "cvar", "line": line, "global": True})
            if "defaultModel" in line and rng.random() < 0.5:  # the session rewound to its start takes it
                events.append({"request": "command", "line": "/rewind " + ("2" if chat or busy or more == "stack" else "1")})
        elif pick == "push":
            if rng.random() < 0.15:
                events.append({"request": "cvar", "line": rng.choice(CAP_SETS)})
            for _ in range(rng.randint(1, 4)):
                events.append({"request": "command", "line": rng.choice(PUSHES)})
        elif pick == "effort":
            events.append({"request": "command", "line": rng.choice(EFFORT)})
        elif pick == "model":
            line = rng.choice(names) if rng.random() < 0.5 else rng.choice(MODELS)
            modelled = modelled or line.strip() != "/model"
            events.append({"request": "command", "line": line})
        elif pick == "cycle":
            events.append({"request": "cycle_thinking_level", "backward": rng.random() < 0.4})
        elif pick == "status":
            events.append({"request": "status"} if rng.random() < 0.7 else {"request": "get_model_catalog"})
        elif pick == "save":
            events.append({"request": "cvar_save"} if rng.random() < 0.6 else raw_event(rng, in_process))
        elif pick == "turn":
            kind = rng.choice(["turn", "turn", "steer", "follow_up", "abort", "spawn", "spawn", "memory", "raw"] + ["raw"] * 3 * (first.get("agent") in model.TERMINAL) + ["memory"] * 4 * (chat or busy))
            if kind == "raw":
                events.append(raw_event(rng, in_process))
            elif kind == "memory" and (chat or busy):
                for _ in range(rng.randint(1, 3)):
                    line = rng.choice(MEMORY)
                    if "NAME" in line:
                        line = line.replace("NAME", rng.choice([n.removeprefix("/model ") for n in names] + ["zz/none-1"]))
                    events.append({"request": "command", "line": line})
                    if "/" in line.split()[-1] and rng.random() < 0.5:  # the role as saved
                        events.append({"request": "command", "line": "/memory model"})
            elif kind == "memory":
                events.append({"request": "command", "line": rng.choice(["/memory", "/memory view", "/memory model x"])})
            elif modelled and kind != "abort":
                events.append({"request": "status"})
            elif kind == "spawn":
                events.append({"request": "command", "line": rng.choice(SPAWNS)})
            elif kind == "abort":
                events.append({"request": "abort"})
            else:
                events.append({"request": kind, "text": rng.choice(TEXTS)})
        else:
            events.append({"request": "command", "line": rng.choice(OTHER).replace("HEAD", "2" if chat or more == "stack" else "1")})
    if more in ("stale", "keyless"):  # a takeover, whatever the draws
        events.append({"request": "reopen"})
    if more == "held":  # a line of stdin past the protocol's limit (64 MiB): the relay answers too_long
        events.append({"request": "raw", "line": "y", "repeat": model.PROTOCOL_LINE_LIMIT + 1})
    if first.get("agent") in ("serve", "serve-client") and rng.random() < 0.5:  # the last line of stdin, ended by its end
        events.append({"request": "raw", "line": rng.choice(RAW[:3] + RAW_REQUESTS + RAW[3:]), "eol": False})
    else:
        events.append({"request": "status"})
    return events


# -- the cases a scenario reaches (read from the model's transcript, request by request) ----------

CASES = frozenset(
    {
        "cvar set ok",
        "cvar set bad value",
        "cvar set past its width",
        "cvar set undeclared",
        "cvar set of a Global cvar refused",
        "cvar toggle ok",
        "cvar toggle not bool",
        "cvar toggle of a Global cvar refused",
        "cvar alias defined",
        "cvar alias runs",
        "cvar alias body does not parse",
        "cvar client-only",
        "cvar line does not parse",
        "cvar expansion cycle",
        "cvar expansion unknown",
        "switches change",
        "global set ok",
        "global toggle ok",
        "global set refused",
        "global verb refused",
        "global line does not parse",
        "remind pushed",
        "force pushed",
        "push refused past the cap",
        "push refused at a cap the session set",
        "push command refused",
        "effort shown",
        "effort set keeps",
        "effort set clamps",
        "effort set without a catalog model",
        "effort unknown level",
        "model shown",
        "model switch",
        "model switch clamps",
        "model by bare id",
        "model id names several",
        "model unknown",
        "model outside the catalog",
        "a model that offers nothing",
        "cycle forward",
        "cycle backward",
        "cycle answers null",
        "status",
        "unknown command",
        "cvar saved",
        "raw line not json",
        "raw line not an object",
        "raw line of no version",
        "raw line of an unknown type",
        "raw line invalid",
        "raw line to the terminal",
        "cvar saved with nothing to write",
        "turn without a loop",
        "turn without a model",
        "steer starts a turn",
        "follow_up starts a turn",
        "abort without a loop",
        "abort with no turn",
        "memory without a loop",
        "memory outside the chat",
        "agent without a name or task",
        "agent without a loop",
        "agent name refused",
        "agent without a model",
        "the agent process reached by a client",
        "the agent process serving its terminal",
        "the chat's agent",
        "memory status in the chat",
        "memory view in the chat",
        "memory model shown",
        "memory model saved: its compactor",
        "memory model saved with a level",
        "memory model of no provider: no compactor",
        "memory model shown once saved",
        "memory line refused in the chat",
        "chat turn ends with the chat's status",
        "model catalog",
        "rewind to the head at open",
        "rewind to the saved default",
        "model of a compiled provider it does not have",
        "the chat owned by another process",
        "turn in a chat another process owns",
        "memory in a chat another process owns",
        "raw line too long",
        "raw line too long with no newline",
        "raw line with no newline",
        "raw blank line with no newline",
        "a second agent process for the session becomes its client",
        "raw request with no id",
        "raw request with no id numbered by the relay",
        "a second claim becomes a client, then takes the session over",
        "takeover of a pinned session",
        "takeover on the saved default",
        "takeover with a saved default it cannot honour",
        "a relay whose agent ended takes the session over",
        "the last line of the terminal with no newline",
        "rewind keeps the profile cvar_save wrote",
        "the agent process serving a real terminal",
        "a reasoning model with no thinkingLevelMap",
        "a serve stopped while it claims a held session",
        "a global config.cfg that does not parse",
        "global write refused: config.cfg does not parse",
        "raw line not UTF-8",
        "raw request ending with a carriage return",
        "raw line past the protocol's limit to the terminal",
        "agents is a file: the profile is a settings error",
        "cvar_save cannot write: agents is a file",
        "push refused: the stack document does not parse",
        "a claim that cannot bind its socket gives the session back",
        "memory model of too many words refused in the chat",
        "a saved default whose provider has no credentials",
        "a connection that does not read is dropped as it connects",
        "a client serve whose stdin is closed ends at once",
        "an agent that ends drops a connection that does not read",
        "a request of the relay its agent never answered: disconnected",
        "a turn loop's event emitted from a thread of its own",
        "a turn loop's event the protocol does not have",
        "a turn that ignores its abort, cancelled as the agent ends",
        *(f"a client told a line that is not an event: {kind}" for kind in ("not_json", "not_object", "version", "unknown_type", "not_utf8", "too_long")),
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    mode = events[0].get("agent")
    if mode == "foreign":
        return {f"a client told a line that is not an event: {line.split()[2]}" for line in model.foreign([str(x) for x in events[0]["lines"]])[:-1]}
    if mode == "serve-closed":
        return {"a client serve whose stdin is closed ends at once"}
    if mode == "stalled":
        return {"an agent that ends drops a connection that does not read"}
    if mode == "stubborn":
        said = model.stubborn(model.open_session(events[0]["catalog"], True), [dict(e) for e in events[1:]])
        wanted = {
            "a turn loop's event emitted from a thread of its own": f"row note {model.STUBBORN_ROW}",
            "a turn loop's event the protocol does not have": "error bad_event",
            "a turn that ignores its abort, cancelled as the agent ends": 'turn_end failed "the turn was cancelled"',
        }
        return {case for case, line in wanted.items() if any(told.split(" ", 1)[1] == line for told in said)}
    if mode == "reach":
        cases.add("the agent process reached by a client")
    elif mode == "serve":
        cases.add("the agent process serving its terminal")
    elif mode == "serve-client":
        cases.add("a second agent process for the session becomes its client")
    elif mode == "serve-tty":
        cases.add("the agent process serving a real terminal")
    elif mode == "serve-held":
        cases.add("a serve stopped while it claims a held session")
    if any(entry["map"] is None and entry["reasoning"] for entry in events[0]["catalog"]):
        cases.add("a reasoning model with no thinkingLevelMap")
    elif mode == "chat":
        cases.add("the chat's agent")
    elif mode == "chat-busy":
        cases.add("the chat owned by another process")
    cfg = events[0].get("global_cfg")
    world = model.open_session(
        events[0]["catalog"], mode is not None, mode in model.TERMINAL, mode == "chat", mode == "chat-busy", None if cfg is None else str(cfg), events[0].get("agents_file") is True,
        events[0].get("broken_stack") is True,
        events[0].get("stale_socket") is True,
        events[0].get("deaf") is True,
    )
    if cfg is not None:
        cases.add("a global config.cfg that does not parse")
    if events[0].get("agents_file") is True:
        cases.add("agents is a file: the profile is a settings error")
    for event in events[1:]:
        before = world
        world, said = model.step(world, dict(event))
        last = said[-1] if said else ""
        kind = event["request"]
        line = str(event.get("line", ""))
        if any(s.startswith("switches ") for s in said):
            cases.add("switches change")
        if kind == "raw" and mode in model.TERMINAL and not event.get("eol", True):
            cases.add("the last line of the terminal with no newline")
        if kind == "cvar" and not event.get("global"):
            outcomes = last
            checks = {
                "cvar set ok": "set " in line and "set " in outcomes and "-> ok" in outcomes,
                "cvar set bad value": "BadValue" in outcomes,
                "cvar set past its width": any(w in line for w in ("4294967296", "9223372036854775808")) and "BadValue" in outcomes,
                "cvar set undeclared": "Undeclared" in outcomes,
                "cvar set of a Global cvar refused": line.startswith("set ") and "CvarError::Global" in outcomes,
                "cvar toggle ok": any(s.startswith("toggle ") and s.endswith("-> ok") for s in outcomes[6:-1].split("; ")),
                "cvar toggle not bool": "NotBool" in outcomes,
                "cvar toggle of a Global cvar refused": "toggle titles.generate -> CvarError::Global" in outcomes,
                "cvar alias defined": outcomes.startswith("cvar [alias ") and "-> ok" in outcomes,
                "cvar alias runs": line.split(";")[0].strip() in ("fast", "calm") and last.startswith("cvar ["),
                "cvar alias body does not parse": "-> ParseError" in outcomes,
                "cvar client-only": "client-only" in outcomes,
                "cvar line does not parse": last == "error ParseError",
                "cvar expansion cycle": "ExpandError::Cycle" in last,
                "cvar expansion unknown": "ExpandError::Unknown" in last,
            }
            cases.update(name for name, hit in checks.items() if hit)
        elif kind == "cvar":
            checks = {
                "global set ok": "set " in last and "-> ok" in last,
                "global toggle ok": last.startswith("cvar --global [toggle") and last.endswith("-> ok]"),
                "global set refused": "CvarError" in last,
                "global verb refused": "-> refused" in last,
                "global line does not parse": last == "error ParseError",
                "global write refused: config.cfg does not parse": last == "error DocumentError",
            }
            cases.update(name for name, hit in checks.items() if hit)
        elif kind == "command":
            word = line.strip().split(" ")[0]
            if word in ("/remind", "/force"):
                if last.startswith("ok reminder"):
                    cases.add("remind pushed")
                elif last.startswith("ok forced"):
                    cases.add("force pushed")
                elif last == "error DocumentError":
                    cases.add("push refused: the stack document does not parse")
                elif last == "error PushRefused" and line not in ('/force ""',):
                    cases.add("push refused past the cap")
                    if model.value(before, "directors.stackCap") != DEFAULT_STACK_CAP:
                        cases.add("push refused at a cap the session set")
                elif last.startswith("error"):
                    cases.add("push command refused")
            elif word == "/effort":
                level = line.strip()[len("/effort") :].strip()
                offered = model.offer(before)
                if not level:
                    cases.add("effort shown")
                elif level not in ef.LADDER:
                    cases.add("effort unknown level")
                elif offered is None:
                    cases.add("effort set without a catalog model")
                else:
                    cases.add("effort set keeps" if level in offered else "effort set clamps")
            elif word == "/model":
                text = line.strip()[len("/model") :].strip()
                if not text:
                    cases.add("model shown")
                elif last == "error unknown_model" and text.startswith("anthropic/"):
                    cases.add("model of a compiled provider it does not have")
                elif last == "error unknown_model":
                    ids = [e for e in before.catalog if e.id == text]
                    cases.add("model id names several" if len(ids) > 1 else "model unknown")
                else:
                    cases.add("model switch")
                    if "/" not in text:
                        cases.add("model by bare id")
                    if model.offer(world) is None:
                        cases.add("model outside the catalog")
                    if any(s.startswith("row effort") for s in said):
                        cases.add("model switch clamps")
                    if model.offer(world) == ():
                        cases.add("a model that offers nothing")
            elif word == "/rewind" and last.startswith("ok rewound"):
                cases.add("rewind to the head at open")
                if not said[-2].startswith("state model=- "):
                    cases.add("rewind to the saved default")
                if before.cvars.family[-1].profile and before.cvars.family[-1].sets:
                    cases.add("rewind keeps the profile cvar_save wrote")
            elif word == "/memory" and mode == "chat":
                words = line.split()[1:]
                if last.startswith("error"):
                    cases.add("memory line refused in the chat")
                    if words[:1] == ["model"] and len(words) > 3:
                        cases.add("memory model of too many words refused in the chat")
                elif not words:
                    cases.add("memory status in the chat")
                elif words == ["view"]:
                    cases.add("memory view in the chat")
                elif words == ["model"]:
                    cases.add("memory model shown once saved" if model.value(before, "memory.model") else "memory model shown")
                elif any(s == "row memory memory: no compactor" for s in said):
                    cases.add("memory model of no provider: no compactor")
                else:
                    cases.add("memory model saved with a level" if len(words) == 3 else "memory model saved: its compactor")
            elif word == "/memory" and mode == "chat-busy":
                cases.add("memory in a chat another process owns")
            elif word == "/memory":
                cases.add("memory outside the chat" if last == "error not_chat" else "memory without a loop")
            elif word == "/agent":
                agent_cases = {
                    "error CommandError": "agent without a name or task",
                    "error no_loop": "agent without a loop",
                    "error invalid_name": "agent name refused",
                    "error no_model": "agent without a model",
                }
                cases.add(agent_cases[last])
            else:
                cases.add("unknown command")
        elif kind == "raw" and events[0].get("deaf") is True:
            cases.add("a connection that does not read is dropped as it connects")
        elif kind == "raw" and last == "error too_long" and mode in model.TERMINAL:
            cases.add("raw line past the protocol's limit to the terminal")
        elif kind == "raw" and last == "error too_long":
            cases.add("raw line too long" if event.get("eol", True) else "raw line too long with no newline")
        elif kind == "raw" and line.endswith("\r") and not last.startswith("error "):
            cases.add("raw request ending with a carriage return")
        elif kind == "raw" and " re=console-" in last:
            cases.add("raw request with no id numbered by the relay")
        elif kind == "raw" and not last.startswith("error ") and model.raw_kind(line) is None:
            cases.add("raw request with no id")
        elif kind == "raw" and not last.startswith("error "):
            cases.add("raw blank line with no newline")
        elif kind == "raw":
            raw_kinds = {"not_utf8": "not UTF-8", "not_json": "not json", "not_object": "not an object", "version": "of no version", "unknown_type": "of an unknown type", "invalid": "invalid"}
            cases.add("raw line " + raw_kinds[last.removeprefix("error ")])
            if not event.get("eol", True):
                cases.add("raw line with no newline")
            if mode in model.TERMINAL:
                cases.add("raw line to the terminal")
        elif kind == "cvar_save" and last == "error OSError":
            cases.add("cvar_save cannot write: agents is a file")
        elif kind == "cvar_save":
            cases.add("cvar saved with nothing to write" if last == "saved []" else "cvar saved")
        elif kind in ("turn", "steer", "follow_up", "abort"):
            if last == "error no_loop":
                cases.add("abort without a loop" if kind == "abort" else "turn without a loop")
            elif last == "error idle":
                cases.add("abort with no turn")
            elif last.startswith("memory ") and said[-2].startswith("turn_end failed"):
                cases.add("chat turn ends with the chat's status")
            elif last.startswith("turn_end failed") and mode == "chat-busy":
                cases.add("turn in a chat another process owns")
            elif last.startswith("turn_end failed"):
                cases.add({"turn": "turn without a model", "steer": "steer starts a turn", "follow_up": "follow_up starts a turn"}[str(kind)])
        elif kind == "reopen" and mode == "serve-client":
            cases.add("a relay whose agent ended takes the session over")
            if event.get("asking") is not None and said[0] == "error disconnected":
                cases.add("a request of the relay its agent never answered: disconnected")
        elif kind == "reopen":
            cases.add("a second claim becomes a client, then takes the session over")
            if before.pinned:
                cases.add("takeover of a pinned session")
            elif world.model is not None:
                cases.add("takeover on the saved default")
            if last.endswith(" rows=default_model"):
                cases.add("takeover with a saved default it cannot honour")
            if model.value(before, "defaultProvider") == KEYLESS[0] and last.endswith(" rows=default_model"):
                cases.add("a saved default whose provider has no credentials")
            if "claim refused OSError" in said:
                cases.add("a claim that cannot bind its socket gives the session back")
        elif kind == "cycle_thinking_level":
            if last.startswith("thinking level=null"):
                cases.add("cycle answers null")
            else:
                cases.add("cycle backward" if event.get("backward") else "cycle forward")
        elif kind == "status":
            cases.add("status")
        elif kind == "get_model_catalog":
            cases.add("model catalog")
    return cases


BRIDGE = Bridge(
    area="daemon",
    count=MORE_FIRST + len(MORE),
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
)
