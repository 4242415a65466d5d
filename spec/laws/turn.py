"""The turn law of the chat memory (area optchat; derived: memory.md rules 46-51, 55, 57, 58, D10,
D11; issue 12 deliverable 5). Registered here beside spec/laws/optchat.py with ``area="optchat"``.

turn_starts_from_the_view: for every history of messages of any kind, size and text, with the
compactor building any number of lines between them, for every settle deadline (a number of
looks at the planner, the compactor building lines at each look) and every script of the model
(replies, thoughts, tool calls good and bad, a message sent during a call), production's turn
(``eukhe.memory.turn.Turns`` on a chat owned on disk):

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

Judge: ``spec.oracles.turn``, written from the seed's text, reading the chat's files on disk
(messages, node lines, view.json); never ``eukhe.memory.turn``'s functions. The compactor is
played by the law (it builds the calls that run), the model is an in-process script with the wire
clients' ``stream`` (real HTTP is the tests' part: tests/turn).

Why tested: histories, texts and scripts are unbounded and no finite type covers them; the
evidence is Hypothesis examples in the active profile.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from eukhe.inference.wire.events import Event, Stop, StreamCut, TextDelta, ThinkingDelta, ToolCall, Usage
from eukhe.inference.wire.plan import Message, Request
from eukhe.memory.chat import Config
from eukhe.memory.owner import Memory
from eukhe.memory.records import kind_of
from eukhe.memory.turn import Deadline, LockedChat, TurnError, Turns, chat_turns
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

    def __init__(self, steps: tuple[Step, ...], during: Callable[[int], Awaitable[None]] | None = None) -> None:
        self.steps = steps
        self.requests: list[Request] = []
        self.during = during

    async def stream(self, request: Request) -> AsyncIterator[Event]:
        k = len(self.requests)
        self.requests.append(request)
        step = self.steps[k] if k < len(self.steps) else EXTRA
        if step.thinking:
            yield ThinkingDelta(f"{THOUGHT} {k}")
        if step.text:
            yield TextDelta(step.text)
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


def _check_run(requests: list[Request], view: str, first: str, what: str) -> None:
    """Every call of a run sends the same leading message (the view, then ``first``), the same
    layers, and repeats the call before it."""
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
    for earlier, later in zip(requests, requests[1:]):
        if (later.system, later.tools) != (earlier.system, earlier.tools):
            _fail(f"{what}: the system prompt or the tools changed between calls")
        # a run only appends: its own messages after the leading one, whose text may grow only by
        # messages that joined before any reply of the model (leading user texts join it)
        if not _joined(later.messages[0]).startswith(_joined(earlier.messages[0])):
            _fail(f"{what}: a call changed the leading message of the call before it")
        if _bare(later.messages[1:])[: len(earlier.messages) - 1] != _bare(earlier.messages[1:]):
            _fail(f"{what}: a call does not repeat the call before it")
    for request in requests:
        if STATE in request.system or any(THOUGHT in _joined(m) for m in request.messages):
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


async def _play(case: Case, directory: Path) -> None:
    with Memory(directory, SMALL) as memory:
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
        at_pin = [len(O.node_lines(directory))]
        looks = [0]

        def clock() -> float:  # each look at the planner: the compactor builds, the law records
            if looks[0]:
                build(case.per_look)
                at_pin[0] = len(O.node_lines(directory))
            looks[0] += 1
            return float(looks[0])

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


SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None  # fsync in memory


def _run(case: Case) -> None:
    with tempfile.TemporaryDirectory(prefix="eukhe-turn-law-", dir=SCRATCH) as scratch:
        asyncio.run(_play(case, Path(scratch) / "chat"))


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
    "a turn's every call opens with the view of the messages before it (summaries, unsummarized lines cut to 512 bytes, never the placeholder), then the state, then the marked message whole; it logs its rows as they happen, joins a message sent during a call between tool calls, carries nothing to the next turn; a subagent pins one view and logs one work message",
    TESTED,
    area="optchat",
    derivation="memory.md rules 46-51, 55, 57, 58, D10, D11 (the turn; the seed secures them by tests, this law by generated histories)",
)
def turn_starts_from_the_view() -> Evidence:
    return examples(lambda case: _run(case), case=_case)
