"""The turn law of the chat memory (area optchat; derived: memory.md rules 46-51, 55, 57, 58, D10,
D11; issue 12 deliverable 5). Registered here beside spec/laws/optchat.py with ``area="optchat"``.

turn_starts_from_the_view: for every history of messages of any kind, size and text, with the
compactor building any number of lines between them, for every settle deadline (a number of
looks at the planner, the compactor building lines at each look) and every script of the model
(replies, thoughts, tool calls good and bad, a message sent during a call), production's turn
(``eukhe.memory.turn.Turns`` on a chat owned on disk, and the agent's turn loop with the chat's
context, as ``eukhe chat`` runs it, below):

- sends, as the first message of every call of the turn, the view of the messages before the new
  one, rendered as it stood when the wait ended: each line its logged summary, a line not
  summarized by then its message cut to 512 bytes, never the placeholder (rules 47, 49, D10);
  then the per-turn state, then the new message marked ``Turn:`` and whole (rules 51, D11);
  the system prompt and tools are the same in every call and hold no state (rule 27);
- each call repeats the one before and only appends the turn's own messages (rule 49);
- logs the message (several messages when long, rules 10, 55), then each reply, tool call and
  result as the calls go, a message sent during a call as user between tool calls, never a
  thought (rules 8, 46, 48);
- a subagent's calls each carry one view, then its task, unmarked; the chat gains exactly one
  work message ``[Name] report`` (rules 57, 58), and zoom("Name") gives its steps (rule 54);
- the next turn carries nothing of the last one but what the view shows (rule 50).

The same case is played twice, each on a chat of its own with the same history: through
``Turns`` (what ``eukhe memory simulate --cache`` runs), and through the path ``eukhe chat`` runs:
the agent's one turn loop (``eukhe.agent.loop.Agent``) on a session's main conversation with the
chat's context (``eukhe.agent.chat.ChatMemory``: the run pins the view, each request is the pinned
view, ``Now:`` and the local date and time, the ``Turn:`` message, then the run's own messages;
each committed step is logged to the chat), its tools the chat's zoom and date
(``ChatMemory.tools``, offered with ``ChatMemory.offer``), its cvars their defaults but
maxToolRounds 3 and memory.settleTimeoutMs the case's deadline. On that path the law judges the
same things (the pinned view as it stood when the wait ended, the state and the marked message
whole in every call, each call repeating the one before, the rows logged as the calls go, never a
thought, what the law's compactor is told, the next run carrying nothing but the view), except
where the loop differs from ``Turns`` by design:

- a reply with no text and no call, or a stream cut after it began, is not an end (``Turns``
  ends, or fails, there): the loop sends the request again with a note (inference.md S6.5,
  S6.10: ``no_answer``, ``cut``), nothing of the reply logged; the note is the retry's last user
  message, never logged and not repeated by the next call; each is one ``note`` event;
- the run is bounded by maxToolRounds (control.md S4b.4), not by a number of calls: a reply with
  calls past it ends the run (``max_tool_rounds``), the reply and its calls neither run nor
  logged;
- a call refused before its tool runs gets the tool runner's error (S6 argument repair): an
  unknown tool ``tool_unavailable: ...`` naming it, arguments that are not a JSON object
  ``invalid_arguments: ...`` (their tool row logs the repair's ``{__parseError, __rawJson}``);
  a tool's own error stays ``error: ...``; every error result goes back with is_error (zoom's
  float id ``{"id": 0.0}`` is message 0 on both paths: to JSON Schema 0.0 is an integer, so the
  argument repair leaves it as it is);
- a message sent during a call joins through ``Agent.steer`` (steeringMode one-at-a-time) after
  the next reply the loop keeps: after its calls' results, or after its answer, and the run goes
  on; one left when its run ended (``max_tool_rounds``) runs next as a run of its own, with a
  view of its own covering every message before it;
- after each final answer the Director stack takes its step (an empty stack yields): the runs'
  events are ``turn_start``, ``step``, ``turn_end answered`` (no step at ``max_tool_rounds``);
- a second turn while one runs is not refused (the agent queues messages): not judged there;
- no subagent: the agent's subagents are the ``task`` tool of the agent process, not part of
  this path; zoom("Helper") names no agent there (an ``error:`` result) and the subagent's view,
  report and zoom("Name") are judged on ``Turns`` only.

Judge: ``spec.oracles.turn``, written from the seed's text, reading the chat's files on disk
(messages, node lines, view.json); never ``eukhe.memory.turn``'s or ``eukhe.agent``'s functions
(the expected runs of the agent path are computed by the law from the rules above). The
compactor is played by the law (it builds the calls that run), the model is an in-process script
with the wire clients' ``stream`` (its filter, the agent's repetition guard, sees every delta;
real HTTP is the tests' part: tests/turn).

Why tested: histories, texts and scripts are unbounded and no finite type covers them; the
evidence is Hypothesis examples in the active profile.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from eukhe.agent.chat import ChatMemory
from eukhe.agent.loop import Agent
from eukhe.agent.tools.base import ToolContext
from eukhe.inference.wire.events import Event, Stop, StreamCut, StreamFilter, TextDelta, ThinkingDelta, ToolCall, Usage
from eukhe.inference.wire.plan import Message, Request
from eukhe.memory.chat import Config
from eukhe.memory.owner import Memory
from eukhe.memory.records import kind_of
from eukhe.memory.turn import Deadline, LockedChat, TurnError, Turns, chat_turns
from eukhe.session import MAIN, Store
from eukhe.settings.cvar_table import table
from spec.evidence import Evidence, LawFailed, examples
from spec.oracles import turn as O
from spec.registry import TESTED, law

SMALL = Config(jobs=3, ceiling=3_000, floor=1_500, cceiling=1_200, cfloor=600)
KINDS = ("user", "eukhe", "tool", "echo", "work", "note")
STATE = "2026-11-30 12:00:00 Monday (law clock)"
TASK = "check message 0"
REPORT = "[Helper] helper report"
THOUGHT = "THOUGHT-MARK"
MAX_STEPS = 3
AGENT = "Helper"

# The tool calls a script may make: (name, raw arguments, what the result must be)
CALLS: dict[str, tuple[str, str, str]] = {
    "zoom_message": ("zoom", '{"id": 0, "n": 1}', "message 0"),
    "zoom_strings": ("zoom", '{"id": "0", "n": "1"}', "message 0"),
    "zoom_float": ("zoom", '{"id": 0.0, "n": 1.0}', "message 0"),
    "zoom_bad_multiple": ("zoom", '{"id": 3, "n": 2}', "error"),
    "zoom_bool": ("zoom", '{"id": true}', "error"),
    "zoom_bad_name": ("zoom", '{"id": "no name!"}', "error"),
    "zoom_name": ("zoom", '{"id": "Helper"}', "agent"),
    "date_first": ("date", '{"id": 0}', "date 0"),
    "date_far": ("date", '{"id": 1000000}', "error"),
    "not_json": ("zoom", "{oops", "error"),
    "not_object": ("date", "[1, 2]", "error"),
    "unknown_tool": ("grep", '{"pattern": "x"}', "error"),
}


@dataclass(frozen=True)
class Step:
    thinking: bool
    text: str
    calls: tuple[str, ...]


EXTRA = Step(False, "(nothing more)", ())


@dataclass(frozen=True)
class Case:
    history: tuple[tuple[str, str, int], ...]  # (kind, text, lines the compactor builds after it)
    lines: tuple[str, ...]  # the compactor's lines, used in turn
    looks: int  # the deadline passes at this many looks at the planner
    per_look: int  # lines the compactor builds at each look
    message: str
    steps: tuple[Step, ...]
    join_at: int  # the call during which a message is sent (-1: none)
    join_text: str
    report_at: int  # the call during which a subagent runs to its report (-1: after the turn)
    fail_at: int  # the call whose stream is cut (-1: none)
    driven: bool  # the turn drives a compactor (the law's, on the owner's locked chat)


class Scripted:
    """A model answering from a script, with the wire clients' ``stream``; records each request.
    Before a call's stream ends it runs ``during(k)`` (the law sends a message, runs a subagent,
    or cuts the stream there)."""

    provider = "law"

    def __init__(self, steps: tuple[Step, ...], during: Callable[[int], Awaitable[None]] | None = None) -> None:
        self.steps = steps
        self.requests: list[Request] = []
        self.during = during

    async def stream(self, request: Request, filter: StreamFilter | None = None) -> AsyncIterator[Event]:
        """The wire clients' stream; ``filter`` (the agent's repetition guard) sees each delta."""
        k = len(self.requests)
        self.requests.append(request)
        step = self.steps[k] if k < len(self.steps) else EXTRA
        deltas: list[TextDelta | ThinkingDelta] = [ThinkingDelta(f"{THOUGHT} {k}")] if step.thinking else []
        deltas += [TextDelta(step.text)] if step.text else []
        for delta in deltas:
            if filter is not None:
                filter(delta)
            yield delta
        for n, key in enumerate(step.calls):
            name, arguments, _ = CALLS[key]
            yield ToolCall(n, f"c{k}_{n}", name, arguments)
        if self.during is not None:
            await self.during(k)
        yield Usage(10, 5)
        yield Stop("toolUse" if step.calls else "stop", "scripted")


# -- the judge ---------------------------------------------------------------------------------------


def _fail(why: str) -> None:
    raise LawFailed(why)


def _joined(message: Message) -> str:
    return "".join(text for text, _ in message.parts) if message.parts else message.text


def _bare(messages: tuple[Message, ...]) -> list[Message]:
    """Messages without their cache marks (the request-end mark moves as a run grows)."""
    return [replace(m, cache=False) for m in messages]


def _tool_row(key: str) -> str:
    name, arguments, _ = CALLS[key]
    try:
        value: Any = json.loads(arguments)
    except json.JSONDecodeError:
        value = arguments
    return f"{name} {json.dumps(value, ensure_ascii=False, sort_keys=True)}"


def _result_ok(key: str, text: str, first: tuple[str, str, str], agent: Callable[[], list[str]] | None) -> bool:
    """A tool result against the chat on disk (``first``: message 0, logged before any call)."""
    want = CALLS[key][2]
    if want == "error":
        return text.startswith("error: ")
    if want == "message 0":
        whole = f"0+1|{O.flatten(first[1])}"
        return text == whole if len(whole) <= O.PAGE else (len(text) == O.PAGE and text.startswith(whole[:1000]))
    if want == "date 0":
        return text.startswith(datetime.fromisoformat(first[2]).astimezone().strftime("%Y-%m-%d %H:%M:%S "))
    return _clipped(text, "\n".join(agent())) if agent is not None else text.startswith("error: ")


def _clipped(text: str, whole: str) -> bool:
    """``text`` is ``whole``, or (longer than 30,000 characters) its clipped form (rule 9)."""
    return text == whole if len(whole) <= O.PAGE else len(text) == O.PAGE and text.startswith(whole[:1000])


def _echo_judge(key: str, first: tuple[str, str, str], agent: Callable[[], list[str]] | None) -> Callable[[str], bool]:
    def judge(text: str) -> bool:
        return _result_ok(key, text, first, agent)

    return judge


def _expected_rows(case: Case, first: tuple[str, str, str], agent: Callable[[], list[str]]) -> tuple[list[tuple[str, Callable[[str], bool]]], int, bool]:
    """The rows a turn logs after its message (kind and a judge of the text), its calls, and
    whether a call was cut (the turn then fails, logging what was sent to that call)."""
    rows: list[tuple[str, Callable[[str], bool]]] = []
    calls = 0
    while calls < MAX_STEPS:
        step = case.steps[calls] if calls < len(case.steps) else EXTRA
        reported, joined = case.report_at == calls, case.join_at == calls
        if reported:
            rows.append((O.WORK, REPORT.__eq__))
        if case.fail_at == calls:
            if joined:
                rows.append(("user", case.join_text.__eq__))
            return rows, calls + 1, True
        if step.text:
            rows.append(("eukhe", step.text.__eq__))
        for key in step.calls:
            rows.append(("tool", _tool_row(key).__eq__))
            rows.append(("echo", _echo_judge(key, first, agent if 0 <= case.report_at <= calls else None)))
        if joined:
            rows.append(("user", case.join_text.__eq__))
        calls += 1
        if not step.calls and not joined and not reported:
            break
    return rows, calls, False


def _check_rows(got: list[tuple[str, str, str]], want: list[tuple[str, Callable[[str], bool]]], what: str) -> None:
    if len(got) != len(want):
        _fail(f"{what}: logged {[(k, t[:40]) for k, t, _ in got]}, expected {len(want)} rows")
    for (kind, text, _), (want_kind, judge) in zip(got, want):
        if kind != want_kind or not judge(text):
            _fail(f"{what}: logged ({kind}, {text[:80]!r}), expected a {want_kind} row")


def _check_run(requests: list[Request], view: str, first: str, what: str, noted: frozenset[int] = frozenset(), state: str = STATE) -> None:
    """Every call of a run sends the same leading message (the view, then ``first``), the same
    layers, and repeats the call before it; the calls in ``noted`` (the agent's noted retries)
    end with one user message more, the note, that the next call does not repeat."""
    if not requests:
        _fail(f"{what}: no call was made")
    lead = requests[0].messages[0]
    text = _joined(lead)
    if not text.startswith(view + "\n\n"):
        _fail(f"{what}: the first message does not open with the view {view[:200]!r}: {text[:200]!r}")
    if text[len(view) + 2 :] != first:
        _fail(f"{what}: after the view comes {text[len(view) + 2 :][:120]!r}, not {first[:120]!r}")
    if O.PLACEHOLDER in view:
        _fail(f"{what}: the view shows the placeholder")
    sent: list[tuple[Message, ...]] = []
    for k, request in enumerate(requests):
        if k in noted:
            note = request.messages[-1]
            if len(request.messages) < 2 or note.role != "user" or note.parts or not note.text:
                _fail(f"{what}: a noted retry does not end with its note")
        sent.append(request.messages[:-1] if k in noted else request.messages)
    for (earlier, said), (later, says) in zip(zip(requests, sent), zip(requests[1:], sent[1:])):
        if (later.system, later.tools) != (earlier.system, earlier.tools):
            _fail(f"{what}: the system prompt or the tools changed between calls")
        # a run only appends: its own messages after the leading one, whose text may grow only by
        # messages that joined before any reply of the model (leading user texts join it)
        if not _joined(says[0]).startswith(_joined(said[0])):
            _fail(f"{what}: a call changed the leading message of the call before it")
        if _bare(says[1:])[: len(said) - 1] != _bare(said[1:]):
            _fail(f"{what}: a call does not repeat the call before it")
    for request in requests:
        if state in request.system or any(THOUGHT in _joined(m) for m in request.messages):
            _fail(f"{what}: state in the system prompt, or a thought sent back")


class LawCompactor:
    """What a turn tells the chat's compactor, played by the law on the owner's chat through
    ``LockedChat`` (the lock the live compactor's changes take); it counts what it was told."""

    def __init__(self, chat: LockedChat) -> None:
        self.chat = chat
        self.told: list[str] = []

    def wait(self) -> None:
        self.told.append("wait")
        self.chat.wait()

    def go(self) -> None:
        self.told.append("go")
        self.chat.go()

    def poll(self) -> None:
        self.told.append("poll")
        self.chat.tick()

    def sync(self) -> None:
        self.told.append("sync")

    def message(self, text: str, kind: str = "user", key: str | None = None) -> int:
        self.told.append("message")
        return self.chat.message(text, kind_of(kind), key)


class Subagent:
    """The law's subagent: run once by the master's turns, checked against the chat on disk as it
    stood when it started."""

    def __init__(self, turns: Turns, directory: Path) -> None:
        self.turns = turns
        self.directory = directory
        self.model = Scripted((Step(True, "looking", ("zoom_message",)), Step(False, "helper report", ())))
        self.ran = False

    async def run(self) -> None:
        directory = self.directory
        start = O.messages(directory)
        view = O.view_text(O.saved_view(directory), dict(O.node_lines(directory)), [t for _, t, _ in start])
        await self.turns.subagent(AGENT, TASK, deadline=Deadline(0, clock=lambda: 0.0), model=self.model)
        self.ran = True
        if O.covered(view) != list(range(len(start))):
            _fail("the subagent's view does not cover the chat")
        _check_run(self.model.requests, view, TASK, "subagent")
        gained = O.messages(directory)[len(start) :]
        if [(k, t) for k, t, _ in gained] != [(O.WORK, REPORT)]:
            _fail(f"the subagent logged {gained}, not one work message (rules 57, 58)")

    def chat(self) -> list[str]:
        """Its whole chat as zoom("Helper") must give it (rule 54)."""
        echo = _joined(self.model.requests[1].messages[-1])
        return ["user: " + TASK, "eukhe: looking", f"tool: {_tool_row('zoom_message')}", f"echo: {echo}", "eukhe: helper report"]


async def _refused(call: Awaitable[Any], kind: type[Exception], what: str) -> None:
    try:
        await call
    except kind:
        return
    _fail(f"{what} was not refused with {kind.__name__}")


def _seed(memory: Memory, case: Case) -> tuple[LawCompactor | None, Callable[[int], None]]:
    """The case's history on the owned chat, the compactor building lines between its messages:
    the law's compactor (when the case drives one) and ``build`` (the compactor builds lines)."""
    core = memory.core
    assert core is not None
    lines = iter(case.lines * (1 + 64 // max(1, len(case.lines))))
    locked = LockedChat(memory)
    compactor = LawCompactor(locked) if case.driven else None

    def build(count: int) -> None:
        for _ in range(count):
            if not core.chat.chat.running:
                return
            (locked if case.driven else core.chat).done(0, next(lines))

    for kind, text, builds in case.history:
        memory.append(text, kind)
        with core.lock:
            build(builds)
    return compactor, build


def _looks(directory: Path, build: Callable[[int], None], per_look: int) -> tuple[list[int], Callable[[], float]]:
    """The law's clock for a waiting turn: each look at the planner after the first builds
    ``per_look`` lines (the compactor's work meanwhile); the cell holds how many lines were built
    at the last look, the view the turn pinned."""
    at_pin = [len(O.node_lines(directory))]
    looks = [0]

    def clock() -> float:
        if looks[0]:
            build(per_look)
            at_pin[0] = len(O.node_lines(directory))
        looks[0] += 1
        return float(looks[0])

    return at_pin, clock


async def _play(case: Case, directory: Path) -> None:
    with Memory(directory, SMALL) as memory:
        compactor, build = _seed(memory, case)
        with Memory(directory) as client:  # a turn runs in the owner only
            try:
                Turns(client, Scripted(()))
            except TurnError:
                pass
            else:
                _fail("a client handle ran turns")
        before = O.messages(directory)
        texts = [t for _, t, _ in before]
        nodes = O.saved_view(directory)
        at_pin, clock = _looks(directory, build, case.per_look)

        async def during(k: int) -> None:
            if k == 0:
                await _refused(turns.turn("a second turn"), TurnError, "a turn while a turn runs")
            if k == case.report_at:
                await helper.run()
            if k == case.join_at and not turns.send(case.join_text):
                _fail("a message sent during a call was refused")
            if k == case.fail_at:
                raise StreamCut("law", "the law cuts this call")

        model = Scripted(case.steps, during)
        turns = chat_turns(memory, model)
        turns.poll, turns.max_steps, turns.now, turns.compactor = 0.0, MAX_STEPS, lambda: STATE, compactor
        helper = Subagent(turns, directory)
        if turns.send("no call runs"):
            _fail("a message was taken with no call running")
        await _refused(turns.turn(" \n "), ValueError, "a turn without text")
        await _refused(turns.subagent("9lives", TASK), ValueError, "a subagent with a bad name")
        await _refused(turns.subagent(AGENT, "  "), ValueError, "a subagent without a task")
        try:
            await turns.turn(case.message, deadline=Deadline(case.looks, clock=clock))
            cut = False
        except StreamCut:
            cut = True

        built = dict(O.node_lines(directory)[: at_pin[0]])
        view = O.view_text(nodes, built, texts)
        if O.covered(view) != list(range(len(texts))):
            _fail(f"the view covers {O.covered(view)}, not the {len(texts)} messages before the turn's")
        head = f"Now: {STATE}\n\n"
        lead = _joined(model.requests[0].messages[0])
        tail = lead[len(view) + 2 + len(head) :]
        if not tail.startswith(O.TURN_MARK) or not tail.endswith("\n\n" + case.message):
            _fail(f"the message is not marked {O.TURN_MARK} and whole after the state: {tail[:120]!r}")
        _check_run(model.requests, view, head + tail, "turn")
        logged = O.messages(directory)
        after = logged[len(before) :]
        joined, count = "", 0
        while count < len(after) and len(joined) < len(case.message):
            joined += after[count][1]
            count += 1
        if not O.pages_of(case.message, [t for _, t, _ in after[:count]]) or any(k != "user" for k, _, _ in after[:count]):
            _fail("the turn's message is not logged first, as consecutive user messages (rules 10, 55)")
        if compactor is not None:
            told = compactor.told
            waited = "wait" in told
            if told.count("message") != count or waited != ("go" in told) or told.count("wait") > 1:
                _fail(f"the compactor was told {told}: the wait, its end and every page of the message go through it (D5)")
            if len(after) > count and "sync" not in told:
                _fail("the compactor was never told of the turn's logged rows")
        want, calls, failed = _expected_rows(case, logged[0], helper.chat)
        _check_rows(after[count:], want, "turn")
        if (len(model.requests), cut) != (calls, failed):
            _fail(f"the turn made {len(model.requests)} calls (cut: {cut}), the script {calls} (cut: {failed})")
        for k in range(calls - 1):
            if k not in (case.join_at, case.report_at):
                continue
            last = model.requests[k + 1].messages[-1]
            said = case.join_text if k == case.join_at else REPORT
            alone = last.role == "user" and not last.parts and last.text == said
            leading = len(model.requests[k + 1].messages) == 1 and _joined(last).endswith("\n\n" + said)  # joined before any reply
            if not (alone or leading):
                _fail("a message sent during a call does not follow the results of its tool calls")
        if any(THOUGHT in t for _, t, _ in O.messages(directory)):
            _fail("a thought was logged (rule 8)")
        if not helper.ran:
            await helper.run()

        # the next turn: nothing carried over but the view (rule 50); zoom("Name") (rule 54)
        second = Scripted((Step(False, "", ("zoom_name",)), Step(False, "done", ())))
        turns.model = second
        before2 = O.messages(directory)
        await turns.turn("next", deadline=Deadline(0, clock=lambda: 0.0))
        first = second.requests[0]
        if len(first.messages) != 1:
            _fail(f"the next turn's first call carries {len(first.messages)} messages, not the view with its message alone")
        view2 = _joined(first.messages[0]).split("</chat>")[0] + "</chat>"
        if O.covered(view2) != list(range(len(before2))):
            _fail("the next turn's view does not cover every message before it")
        result = second.requests[1].messages[-1].text
        if not _clipped(result, "\n".join(helper.chat())):
            _fail(f"zoom({AGENT!r}) gave {result[:200]!r}, not the agent's whole chat")


# -- the agent path: the turn loop `eukhe chat` runs ---------------------------------------------------

CVARS: dict[str, Any] = {cvar.id: cvar.default for cvar in table()}  # each cvar's default (control.md S4)
AGENT_ROUNDS = MAX_STEPS  # maxToolRounds on the agent path: a reply with calls past it ends the run
NOW = re.compile(r"Now: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) [^\n]+")  # the state: the local date and time
# The calls whose results the agent's tool runner refuses before the tool runs (inference.md S6
# argument repair, rules 2 and 6): the prefix of the error result's text.
REFUSED = {"not_json": "invalid_arguments: ", "not_object": "invalid_arguments: ", "unknown_tool": "tool_unavailable: "}
ERRORS = ("error: ", "invalid_arguments: ", "tool_unavailable: ")


@dataclass
class Run:
    """One run of the agent path as the loop's rules give it: its message, the calls it makes (the
    script's indexes), the rows it logs after its message, the calls whose request carries a
    note, the text that joined after each call, and how it ends."""

    message: str
    calls: list[int]
    rows: list[tuple[str, Callable[[str], bool]]]
    noted: set[int]
    joins: dict[int, str]
    end: str = "answered"


def _agent_call(key: str) -> Callable[[str], bool]:
    """The tool row of a call on the agent path: its name and JSON input; arguments that do not
    parse to an object are the repair's ``{__parseError, __rawJson}`` (S6 argument repair, rule 2)."""
    name, arguments, _ = CALLS[key]
    if key not in ("not_json", "not_object"):
        return _tool_row(key).__eq__

    def judge(text: str) -> bool:
        head, _, rest = text.partition(" ")
        try:
            value = json.loads(rest)
        except json.JSONDecodeError:
            return False
        return head == name and isinstance(value, dict) and sorted(value) == ["__parseError", "__rawJson"] and value["__rawJson"] == arguments[:512] and bool(value["__parseError"])

    return judge


def _agent_echo(key: str, first: tuple[str, str, str]) -> Callable[[str], bool]:
    """A tool result on the agent path: no subagent runs there (zoom("Helper") names no agent);
    a refused call is ``invalid_arguments: ...`` or ``tool_unavailable: ...`` (the docstring)."""

    def judge(text: str) -> bool:
        if key in REFUSED:
            return text.startswith(REFUSED[key]) and (key != "unknown_tool" or repr(CALLS[key][0]) in text)
        if CALLS[key][2] in ("error", "agent"):
            return text.startswith("error: ")
        return _result_ok(key, text, first, None)

    return judge


def _agent_runs(case: Case, first: tuple[str, str, str]) -> list[Run]:
    """The runs the agent makes of the case (the loop's rules, inference.md S6.5, S6.10, control.md
    S4b.4, memory.md rule 46): a cut stream or a reply with no text and no call is sent again with
    a note, nothing logged; a reply with calls past maxToolRounds ends the run, nothing of it
    logged; a message sent during a call joins after the next reply kept (after its calls'
    results, or after its answer: the run goes on); one left when its run ended runs next."""
    runs: list[Run] = []
    message, k, pending = case.message, 0, []
    while True:
        run = Run(message, [], [], set(), {})
        runs.append(run)
        rounds, note = 0, False
        while True:
            step = case.steps[k] if k < len(case.steps) else EXTRA
            run.calls.append(k)
            if note:
                run.noted.add(k)
            if case.join_at == k:
                pending.append(case.join_text)
            k += 1
            note = case.fail_at == k - 1 or not (step.text or step.calls)
            if note:
                continue
            if step.calls and rounds >= AGENT_ROUNDS:
                run.end = "max_tool_rounds"
                break
            if step.text:
                run.rows.append(("eukhe", step.text.__eq__))
            rounds += bool(step.calls)
            for key in step.calls:
                run.rows.append(("tool", _agent_call(key)))
                run.rows.append(("echo", _agent_echo(key, first)))
            if pending:  # steeringMode one-at-a-time
                run.joins[k - 1] = pending.pop(0)
                run.rows.append(("user", run.joins[k - 1].__eq__))
            elif not step.calls:
                break
        if not pending:
            return runs
        message = pending.pop(0)


def _message_pages(after: list[tuple[str, str, str]], message: str, what: str) -> int:
    """How many messages the run's message was logged as (first, consecutive user messages)."""
    joined, count = "", 0
    while count < len(after) and len(joined) < len(message):
        joined += after[count][1]
        count += 1
    if not O.pages_of(message, [t for _, t, _ in after[:count]]) or any(k != "user" for k, _, _ in after[:count]):
        _fail(f"{what}: the message is not logged first, as consecutive user messages (rules 10, 55)")
    return count


def _lead(request: Request, view: str, message: str, what: str) -> str:
    """The leading message after the view: the state (``Now:`` and the local date and time), then
    the message marked ``Turn:`` and whole; returns the state."""
    text = _joined(request.messages[0])
    if not text.startswith(view + "\n\n"):
        _fail(f"{what}: the first message does not open with the view {view[:200]!r}: {text[:200]!r}")
    state, _, tail = text[len(view) + 2 :].partition("\n\n")
    now = NOW.fullmatch(state)
    if now is None:
        _fail(f"{what}: no state after the view: {state[:120]!r}")
    else:
        datetime.strptime(now.group(1), "%Y-%m-%d %H:%M:%S")
    if not tail.startswith(O.TURN_MARK) or not tail.endswith("\n\n" + message):
        _fail(f"{what}: the message is not marked {O.TURN_MARK} and whole after the state: {tail[:120]!r}")
    return state


async def _play_agent(case: Case, directory: Path, root: Path) -> None:
    """The case through the agent's turn loop with the chat's context, judged as ``_play`` judges
    ``Turns`` where the two agree (the module's docstring says where they differ)."""
    with Memory(directory, SMALL) as memory, Store(root / "sessions").create() as session:
        compactor, build = _seed(memory, case)
        before = O.messages(directory)
        texts = [t for _, t, _ in before]
        nodes = O.saved_view(directory)
        at_pin, clock = _looks(directory, build, case.per_look)

        cvars = dict(CVARS, **{"maxToolRounds": AGENT_ROUNDS, "memory.settleTimeoutMs": case.looks * 1000})
        said: list[dict[str, Any]] = []
        chat = ChatMemory(memory, lambda row: None, compactor=compactor, clock=clock, poll=0.0)
        tools = chat.tools()
        chat.offer(tools)
        conversation = session.conversation(MAIN)
        (root / "work").mkdir()

        def agent(model: Scripted) -> Agent:  # the runner makes one per turn
            return Agent(conversation, model, "law", ToolContext(root / "work"), cvars.__getitem__, said.append, tools=tools, chat=chat)

        async def during(k: int) -> None:
            if k == case.join_at:
                running.steer(case.join_text)
            if k == case.fail_at:
                raise StreamCut("law", "the law cuts this call")

        model = Scripted(case.steps, during)
        running = agent(model)
        await running.turn(case.message)

        logged = O.messages(directory)
        runs = _agent_runs(case, logged[0])
        requests = model.requests
        if len(requests) != sum(len(run.calls) for run in runs):
            _fail(f"the agent made {len(requests)} calls, the script {[run.calls for run in runs]}")
        ends = [(e["type"], e.get("reason")) for e in said if e["type"] in ("turn_start", "step", "turn_end")]
        want_ends = [e for run in runs for e in [("turn_start", None), *([("step", None)] if run.end == "answered" else []), ("turn_end", run.end)]]
        if ends != want_ends:
            _fail(f"the agent's runs went {ends}, not {want_ends} (the stack's step after each final answer)")
        if sum(e["type"] == "note" for e in said) != sum(len(run.noted) for run in runs):
            _fail("the agent's noted retries are not the script's cut and empty replies (S6.5, S6.10)")
        after = logged[len(before) :]
        pages = 0
        for number, run in enumerate(runs):
            what = f"agent run {number}"
            sent = requests[run.calls[0] : run.calls[-1] + 1]
            first_of_run = len(logged) - len(after)
            if number == 0:
                built = dict(O.node_lines(directory)[: at_pin[0]])
                view = O.view_text(nodes, built, texts)
            else:  # a message left when a run ended: a run of its own, its own view (rule 47)
                view = _joined(sent[0].messages[0]).split("</chat>")[0] + "</chat>"
            if O.covered(view) != list(range(first_of_run)):
                _fail(f"{what}: the view covers {O.covered(view)}, not the {first_of_run} messages before the run's")
            state = _lead(sent[0], view, run.message, what)
            _check_run(sent, view, _joined(sent[0].messages[0])[len(view) + 2 :], what, frozenset(k - run.calls[0] for k in run.noted), state)
            if any(_joined(r.messages[0]) != _joined(sent[0].messages[0]) for r in sent):
                _fail(f"{what}: a call of the run changed its leading message (the pinned view, the state, the message)")
            if [t.name for t in sent[0].tools][:2] != ["zoom", "date"]:
                _fail(f"{what}: the chat's tools do not lead with zoom and date (rule 27)")
            count = _message_pages(after, run.message, what)
            pages += count
            _check_rows(after[count : count + len(run.rows)], run.rows, what)
            after = after[count + len(run.rows) :]
            for k, text in run.joins.items():
                last = requests[k + 1].messages[-1]
                if (last.role, last.parts, last.text) != ("user", (), text):
                    _fail(f"{what}: a message sent during a call does not follow the reply and results of its call")
            for request in sent:
                for m in request.messages:
                    if m.role == "tool" and m.is_error != m.text.startswith(ERRORS):
                        _fail(f"{what}: a tool result {m.text[:80]!r} is_error={m.is_error}")
        if after:
            _fail(f"the agent logged more than its runs: {[(k, t[:40]) for k, t, _ in after]}")
        if compactor is not None:
            told = compactor.told
            if told.count("message") != pages or told.count("wait") != told.count("go") or told.count("wait") > len(runs):
                _fail(f"the compactor was told {told}: the wait, its end and every page of each message go through it (D5)")
            if any(run.rows for run in runs) and "sync" not in told:
                _fail("the compactor was never told of the runs' logged rows")
        if any(THOUGHT in t for _, t, _ in O.messages(directory)):
            _fail("the agent logged a thought (rule 8)")

        # the next turn: a new run carries nothing of the last one but what the view shows (rule 50)
        cvars["memory.settleTimeoutMs"] = 0
        second = Scripted((Step(False, "", ("zoom_message",)), Step(False, "done", ())))
        before2 = O.messages(directory)
        await agent(second).turn("next")
        first = second.requests[0]
        if len(first.messages) != 1 or len(second.requests) != 2:
            _fail(f"the agent's next run sent {[len(r.messages) for r in second.requests]} messages, not the view with its message alone, then its call")
        view2 = _joined(first.messages[0]).split("</chat>")[0] + "</chat>"
        if O.covered(view2) != list(range(len(before2))):
            _fail("the agent's next run's view does not cover every message before it")
        _lead(first, view2, "next", "the agent's next run")
        reply = second.requests[1].messages
        if len(reply) != 3 or reply[-1].role != "tool" or not _result_ok("zoom_message", reply[-1].text, logged[0], None):
            _fail(f"the agent's next run sent {[(m.role, _joined(m)[:60]) for m in reply[1:]]} after its message, not its call and result alone")
        kinds = [k for k, _, _ in O.messages(directory)[len(before2) :]]
        if kinds != ["user", "tool", "echo", "eukhe"]:
            _fail(f"the agent's next run logged {kinds}")

        # /memory and /memory view as the chat's agent answers them (memory.md "Use"): the status
        # counts every message of the chat, the view covers them all in order (rule 14)
        every = O.messages(directory)
        status, _ = chat.command([], None)
        if f"  messages {len(every)}  " not in status:
            _fail(f"/memory says {status!r}, not the chat's {len(every)} messages")
        _, shown = chat.command(["view"], None)
        if shown[:1] != ["<chat>"] or shown[-1:] != ["</chat>"] or O.covered("\n".join(shown)) != list(range(len(every))):
            _fail(f"/memory view covers {O.covered(chr(10).join(shown)) if shown[:1] == ['<chat>'] else shown[:2]}, not the chat's {len(every)} messages")
        try:
            chat.command(["bogus"], None)
        except ValueError:
            pass
        else:
            _fail("/memory bogus was not refused")


SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None  # fsync in memory


def _run(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="eukhe-turn-law-", dir=SCRATCH) as scratch:
        asyncio.run(_play(case, Path(scratch) / "chat"))
        asyncio.run(_play_agent(case, Path(scratch) / "agent" / "chat", Path(scratch) / "agent"))


# -- generators ----------------------------------------------------------------------------------------

_chars = st.characters(codec="utf-8", exclude_categories=["Cs"])
_words = st.text(_chars, min_size=1, max_size=24)
_texts = st.builds(lambda base, repeat: base * repeat, _words, st.sampled_from((1, 1, 2, 30, 90, 400)))
_history = st.lists(st.tuples(st.sampled_from(KINDS), _texts, st.sampled_from((0, 0, 1, 3))), max_size=10)
_lines = st.lists(st.builds(lambda base, repeat: O.cut_bytes(base * repeat), _words, st.sampled_from((1, 5, 200))), min_size=1, max_size=4)
_message = st.builds(
    lambda base, paged: base * (O.PAGE // len(base) + 2) if paged else base,
    st.text(_chars, min_size=1, max_size=40).filter(lambda t: t.strip() != ""),
    st.sampled_from((False, False, False, True)),
)
_step = st.builds(Step, st.booleans(), st.sampled_from(("", "Reply.", "ünïcode ✓", "two\nlines")), st.lists(st.sampled_from(sorted(CALLS)), max_size=3).map(tuple))
_case = st.builds(
    Case,
    _history.map(tuple),
    _lines.map(tuple),
    st.integers(0, 4),
    st.integers(0, 2),
    _message,
    st.lists(_step, min_size=1, max_size=4).map(tuple),
    st.integers(-1, 3),
    st.sampled_from(("and also this", "one more thing ✓")),
    st.integers(-1, 3),
    st.sampled_from((-1, -1, -1, 0, 1, 2)),
    st.booleans(),
)


@law(
    "turn_starts_from_the_view",
    "memory §6 rules 46-51, 55, 57, 58; D10, D11",
    "a turn's every call opens with the view of the messages before it (summaries, unsummarized lines cut to 512 bytes, never the placeholder), then the state, then the marked message whole; it logs its rows as they happen, joins a message sent during a call between tool calls, carries nothing to the next turn; a subagent pins one view and logs one work message; judged on Turns and on the agent loop eukhe chat runs (its noted retries, refusals and steering as designed)",
    TESTED,
    area="optchat",
    derivation="memory.md rules 46-51, 55, 57, 58, D10, D11 (the turn; the seed secures them by tests, this law by generated histories)",
)
def turn_starts_from_the_view() -> Evidence:
    return examples(lambda case: _run(case), case=_case)
