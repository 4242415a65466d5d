"""What the user sees of the Directors' entry points and state changes, pinned exactly
(control.md S5.4, S5.6, S5.7, S5.8; issue 9 item 6(b)): every answer of the host request
directors.push for every params shape, the error messages of /remind and /force, the kind data
of a forced layer, the call or miss of each forced request with its NotCalled display row,
the goal's and the autonomous run's documents after each change, and the canonical bytes of
a document. Every expected value is written by hand from the seed and the documented
behaviour, never computed by production."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eukhe.directors.commands import CommandError, host_push, session_command
from eukhe.directors.document import DIRECTORS_DOC, LOOP_DOC, canonical
from eukhe.directors.hooks import (
    AUTONOMOUS_DOC,
    DIRECTOR_NOTICE_CUSTOM_TYPE,
    GOAL_DOC,
    Decided,
    DirectorLimits,
    Directors,
    ForcedToolError,
    GoalError,
    PushRefused,
    Reply,
    Step,
    notcalled_row,
)
from eukhe.directors.stack import Layer, LayerKind
from eukhe.session import Conversation, Session, Store


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with Store(tmp_path / "sessions").create("k1") as opened:
        yield opened


def notices(conversation: Conversation) -> list[object]:
    return [
        e.content for e in conversation.user_view() if e.custom_type == DIRECTOR_NOTICE_CUSTOM_TYPE and e.display_only
    ]


def forced(tool: str, tries: int) -> dict[str, Any]:
    """A freshly pushed forced layer as the document holds it: 1 unit of budget (S5.7)."""
    data = {"tool": tool, "tries": tries, "misses": 0, "requests": 0, "called": False}
    return {"budget": 1, "kind": "forced", "data": data}


def reminder(text: str) -> dict[str, Any]:
    return {"budget": 1, "kind": "reminder", "data": {"text": text}}


def stack_of(*layers: dict[str, Any]) -> dict[str, Any]:
    return {"layers": list(layers), "version": 1}


BAD_PARAMS = {"error": {"kind": "BadParams", "message": "directors.push needs kind reminder with text, or forced with tool"}}
BAD_TRIES = {"error": {"kind": "BadParams", "message": "tries must be a whole number"}}


def refused(message: str) -> dict[str, Any]:
    return {"error": {"kind": "PushRefused", "message": message}}


# (params, stackCap, the answer): S5.7, goal.remind(text) and goal.force_tool(tool, tries=1).
HOST_PUSH_CASES: list[tuple[str, dict[str, Any], int, dict[str, Any]]] = [
    ("reminder", {"kind": "reminder", "text": "check the tests"}, 8, {"stack": stack_of(reminder("check the tests"))}),
    ("reminder unicode", {"kind": "reminder", "text": "café ✓"}, 8, {"stack": stack_of(reminder("café ✓"))}),
    ("forced, tries absent is 1", {"kind": "forced", "tool": "bash"}, 8, {"stack": stack_of(forced("bash", 1))}),
    ("forced, tries 3", {"kind": "forced", "tool": "grep", "tries": 3}, 8, {"stack": stack_of(forced("grep", 3))}),
    ("forced, tries 0", {"kind": "forced", "tool": "grep", "tries": 0}, 8, {"stack": stack_of(forced("grep", 0))}),
    ("forced, huge tries", {"kind": "forced", "tool": "t", "tries": 2**40}, 8, {"stack": stack_of(forced("t", 2**40))}),
    ("forced, tries -1", {"kind": "forced", "tool": "bash", "tries": -1}, 8, BAD_TRIES),
    ("forced, tries True", {"kind": "forced", "tool": "bash", "tries": True}, 8, BAD_TRIES),
    ("forced, tries False", {"kind": "forced", "tool": "bash", "tries": False}, 8, BAD_TRIES),
    ("forced, tries '2'", {"kind": "forced", "tool": "bash", "tries": "2"}, 8, BAD_TRIES),
    ("forced, tries 2.0", {"kind": "forced", "tool": "bash", "tries": 2.0}, 8, BAD_TRIES),
    ("forced, tries null", {"kind": "forced", "tool": "bash", "tries": None}, 8, BAD_TRIES),
    ("kind missing, text", {"text": "hello"}, 8, BAD_PARAMS),
    ("kind missing, tool", {"tool": "bash"}, 8, BAD_PARAMS),
    ("no params", {}, 8, BAD_PARAMS),
    ("another kind", {"kind": "goal", "text": "x", "tool": "y"}, 8, BAD_PARAMS),
    ("reminder without text", {"kind": "reminder", "tool": "bash"}, 8, BAD_PARAMS),
    ("reminder, text not a string", {"kind": "reminder", "text": 5}, 8, BAD_PARAMS),
    ("forced without tool", {"kind": "forced", "text": "hello"}, 8, BAD_PARAMS),
    ("forced, tool not a string", {"kind": "forced", "tool": 5, "tries": 1}, 8, BAD_PARAMS),
    ("forced, tool null", {"kind": "forced", "tool": None}, 8, BAD_PARAMS),
    ("reminder, blank text", {"kind": "reminder", "text": "  "}, 8, refused("/remind needs a text")),
    ("forced, blank tool", {"kind": "forced", "tool": " "}, 8, refused("/force needs a tool name")),
    ("reminder, stack full", {"kind": "reminder", "text": "a"}, 0,
     refused("the Director stack is full: 0 pushed layers, directors.stackCap 0")),
    ("forced, stack full", {"kind": "forced", "tool": "bash"}, 0,
     refused("the Director stack is full: 0 pushed layers, directors.stackCap 0")),
]


@pytest.mark.parametrize(("params", "cap", "answer"), [c[1:] for c in HOST_PUSH_CASES], ids=[c[0] for c in HOST_PUSH_CASES])
def test_host_push_answers(session: Session, params: dict[str, Any], cap: int, answer: dict[str, Any]) -> None:
    main = session.conversation("main")
    assert host_push(Directors(main, DirectorLimits(stack_cap=cap)), params) == answer
    # An answered stack is the one stored; an error stores nothing.
    assert main.document(DIRECTORS_DOC) == answer.get("stack")


# (line, the message the user reads)
COMMAND_ERRORS = [
    ("/remindx check", "unknown command /remindx"),
    ("/remind", "/remind needs a text: /remind <text>"),
    ("  /remind   ", "/remind needs a text: /remind <text>"),
    ("/force 'bash", "/force: No closing quotation"),
    ("/forcex bash", "unknown command /forcex"),
    ("/force bash --tries", "/force: --tries needs a number"),
    ("/force bash --tries x", "/force: --tries 'x' is not a whole number"),
    ("/force bash --tries -1", "/force: --tries '-1' is not a whole number"),
    ("/force", "/force needs one tool: /force <tool> [--tries <n>]"),
    ("/force a b", "/force needs one tool: /force <tool> [--tries <n>]"),
    ("/force --tries 2", "/force needs one tool: /force <tool> [--tries <n>]"),
    ("hello there", "not a Director command: hello"),
    ("/goal x", "not a Director command: /goal"),
    ("", "not a Director command: (empty)"),
    ("   ", "not a Director command: (empty)"),
]


@pytest.mark.parametrize(("line", "message"), COMMAND_ERRORS)
def test_session_command_errors_name_what_is_wrong(session: Session, line: str, message: str) -> None:
    main = session.conversation("main")
    with pytest.raises(CommandError) as raised:
        session_command(Directors(main), line)
    assert str(raised.value) == message
    assert main.document(DIRECTORS_DOC) is None


COMMANDS = [
    ("/remind   keep the API stable  ", stack_of(reminder("keep the API stable"))),
    ("/force bash", stack_of(forced("bash", 1))),
    ("/force grep --tries 3", stack_of(forced("grep", 3))),
    ("/force --tries 2 grep", stack_of(forced("grep", 2))),
    ("/force --tries 0 'my tool'", stack_of(forced("my tool", 0))),
]


@pytest.mark.parametrize(("line", "document"), COMMANDS)
def test_session_commands_push(session: Session, line: str, document: dict[str, Any]) -> None:
    main = session.conversation("main")
    assert session_command(Directors(main), line) == document
    assert main.document(DIRECTORS_DOC) == document


def test_force_refuses_negative_tries_and_takes_zero(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    with pytest.raises(PushRefused) as raised:
        directors.force("bash", tries=-1)
    assert str(raised.value) == "--tries must be a whole number"
    assert main.document(DIRECTORS_DOC) is None
    directors.force("bash", tries=0, budget=2)
    assert main.document(DIRECTORS_DOC) == stack_of({**forced("bash", 0), "budget": 2})


def row(tool: str, requests: int) -> dict[str, Any]:
    """The display row of a forced call never made (S5.4, S6.3)."""
    return {
        "notice": "forced_tool_not_called",
        "error": "ForcedToolError::NotCalled",
        "tool": tool,
        "requests": requests,
        "message": f"ForcedToolError::NotCalled: the forced tool {tool} was not called in {requests} request(s)",
    }


def test_notcalled_row() -> None:
    assert notcalled_row(ForcedToolError("bash", 2)) == row("bash", 2)
    assert notcalled_row(ForcedToolError("grep", 0)) == {
        "notice": "forced_tool_not_called",
        "error": "ForcedToolError::NotCalled",
        "tool": "grep",
        "requests": 0,
        "message": "ForcedToolError::NotCalled: the forced tool grep was not called in 0 request(s)",
    }


# A forced layer's kind data as stored, and the responses to forced requests: "miss" and
# "call" follow a before_request that forces; "bare" is a response to a request nothing forced.
# Each response's result: True (retry), False, or the NotCalled message; then the stack data
# left (None: the layer is gone) and the display rows.
AFTER_RESPONSE_CASES: list[tuple[str, dict[str, Any], list[str], list[object], dict[str, Any] | None, list[object]]] = [
    ("tries 1: a miss retries, the call ends it",
     forced("bash", 1)["data"], ["miss", "call", "bare", "bare"], [True, False, False, False],
     {"tool": "bash", "tries": 1, "misses": 1, "requests": 2, "called": True}, []),
    ("tries 1: the second miss fails with 2 requests",
     forced("bash", 1)["data"], ["miss", "miss"],
     [True, "ForcedToolError::NotCalled: the forced tool bash was not called in 2 request(s)"], None, [row("bash", 2)]),
    ("tries 0: the first miss fails",
     forced("grep", 0)["data"], ["miss"],
     ["ForcedToolError::NotCalled: the forced tool grep was not called in 1 request(s)"], None, [row("grep", 1)]),
    ("tries 2: the third miss fails",
     forced("edit", 2)["data"], ["miss", "miss", "miss"],
     [True, True, "ForcedToolError::NotCalled: the forced tool edit was not called in 3 request(s)"], None, [row("edit", 3)]),
    ("stored data with the tool only: tries 1, no misses, no requests yet",
     {"tool": "bash"}, ["miss"], [True], {"tool": "bash", "requests": 1, "misses": 1}, []),
    ("stored data with the tool only: the second miss fails",
     {"tool": "bash"}, ["miss", "miss"],
     [True, "ForcedToolError::NotCalled: the forced tool bash was not called in 2 request(s)"], None, [row("bash", 2)]),
    ("stored data with the tool only: the call",
     {"tool": "bash"}, ["call"], [False], {"tool": "bash", "requests": 1, "called": True}, []),
    ("stored counts go on",
     {"tool": "bash", "tries": 3, "misses": 2, "requests": 5, "called": False}, ["miss", "miss"],
     [True, "ForcedToolError::NotCalled: the forced tool bash was not called in 7 request(s)"], None, [row("bash", 7)]),
    ("a response nothing forced changes nothing",
     forced("bash", 0)["data"], ["bare", "bare"], [False, False], forced("bash", 0)["data"], []),
    ("a call, then a response nothing forced",
     forced("bash", 0)["data"], ["call", "bare"], [False, False],
     {"tool": "bash", "tries": 0, "misses": 0, "requests": 1, "called": True}, []),
]


@pytest.mark.parametrize(
    ("data", "responses", "results", "left", "rows"),
    [c[1:] for c in AFTER_RESPONSE_CASES],
    ids=[c[0] for c in AFTER_RESPONSE_CASES],
)
def test_after_response(
    session: Session, data: dict[str, Any], responses: list[str], results: list[object], left: dict[str, Any] | None, rows: list[object]
) -> None:
    main = session.conversation("main")
    main.commit(documents={DIRECTORS_DOC: stack_of(reminder("r"), {"budget": 1, "kind": "forced", "data": data})})
    directors = Directors(main)
    got: list[object] = []
    for response in responses:
        if response != "bare":
            assert directors.before_request() == data["tool"]
        try:
            got.append(directors.after_response(called=response == "call"))
        except ForcedToolError as error:
            got.append(str(error))
    assert got == results
    layers = [reminder("r")] if left is None else [reminder("r"), {"budget": 1, "kind": "forced", "data": left}]
    assert main.document(DIRECTORS_DOC) == stack_of(*layers)
    assert notices(main) == rows


def test_a_response_before_any_forced_request(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    assert directors.after_response(called=False) is False
    assert directors.after_response(called=True) is False
    assert main.document(DIRECTORS_DOC) is None
    assert notices(main) == []


def goal_doc(status: str, reason: str | None, stall: object) -> dict[str, Any]:
    return {"id": "g1", "objective": "ship it", "status": status, "reason": reason, "stall": stall}


STALL = {"run": "r1", "goal": "g1", "count": 2}

# (the stored goal, the status and reason set, the goal after)
GOAL_CASES = [
    (goal_doc("active", None, STALL), "paused", "the user paused it", goal_doc("paused", "the user paused it", STALL)),
    (goal_doc("paused", "stalled", STALL), "active", None, goal_doc("active", None, None)),
    (goal_doc("paused", "stalled", STALL), "active", "resumed", goal_doc("active", "resumed", None)),
    (goal_doc("active", "old", STALL), "failed", "tests broke", goal_doc("failed", "tests broke", STALL)),
    (goal_doc("active", "old", STALL), "complete", None, goal_doc("complete", None, STALL)),
    (goal_doc("active", None, None), "budget_limited", "out of steps", goal_doc("budget_limited", "out of steps", None)),
    (goal_doc("active", None, STALL), "cleared", None, goal_doc("cleared", None, STALL)),
]


@pytest.mark.parametrize(("stored", "status", "reason", "after"), GOAL_CASES)
def test_set_goal_status(session: Session, stored: dict[str, Any], status: str, reason: str | None, after: dict[str, Any]) -> None:
    main = session.conversation("main")
    main.commit(documents={GOAL_DOC: stored})
    Directors(main).set_goal_status(status, reason)
    assert main.document(GOAL_DOC) == after


def test_set_goal_status_errors(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    with pytest.raises(GoalError) as raised:
        directors.set_goal_status("paused")
    assert str(raised.value) == "no goal to set paused: set a goal first"
    directors.set_goal("ship it", "g1")
    with pytest.raises(GoalError) as raised:
        directors.set_goal_status("bogus")
    assert str(raised.value) == "unknown goal status 'bogus' (one of active, paused, budget_limited, complete, failed, cleared)"
    assert main.document(GOAL_DOC) == goal_doc("active", None, None)


def test_set_autonomous(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main, DirectorLimits(max_continuations=5))
    directors.set_autonomous(True)
    assert main.document(AUTONOMOUS_DOC) == {"used": 0, "max": 5, "enabled": True, "stop": None}
    main.commit(documents={AUTONOMOUS_DOC: {"used": 3, "max": 7, "enabled": True, "stop": None}})
    directors.set_autonomous(False, "a gate stopped it")
    assert main.document(AUTONOMOUS_DOC) == {"used": 3, "max": 7, "enabled": False, "stop": "a gate stopped it"}
    directors.set_autonomous(True)
    assert main.document(AUTONOMOUS_DOC) == {"used": 3, "max": 7, "enabled": True, "stop": None}


CANONICAL = [
    ({"version": 1, "layers": []}, '{"layers":[],"version":1}'),
    ({"b": [1, {"d": None, "c": True}], "a": "x"}, '{"a":"x","b":[1,{"c":true,"d":null}]}'),
    ({"text": "café ✓"}, '{"text":"caf\\u00e9 \\u2713"}'),
    ({"z": 1.5, "Z": -2}, '{"Z":-2,"z":1.5}'),
]


@pytest.mark.parametrize(("value", "text"), CANONICAL)
def test_canonical(value: object, text: str) -> None:
    assert canonical(value) == text


def test_loop_doc_of_a_conversation_without_one(session: Session) -> None:
    assert Directors(session.conversation("main")).loop_doc() == {"run": None, "steps": 0, "end": "", "last": None}


def test_limits_of_an_agents_cvars() -> None:
    values = {"directors.stackCap": 1, "directors.maxSteps": 2, "directors.stallSteps": 4, "autonomous.maxContinuations": 5}
    limits = DirectorLimits.of(values.__getitem__)
    assert (limits.stack_cap, limits.max_steps, limits.stall_steps, limits.max_continuations) == (1, 2, 4, 5)


def test_only_reminders_and_forced_calls_are_pushed(session: Session) -> None:
    main = session.conversation("main")
    with pytest.raises(PushRefused) as raised:
        Directors(main).push(Layer(LayerKind.GOAL, 1))
    assert str(raised.value) == "only reminders and forced calls are pushed, not goal"
    with pytest.raises(PushRefused) as raised:
        Directors(main).push(Layer(LayerKind.AUTONOMOUS, 1))
    assert str(raised.value) == "only reminders and forced calls are pushed, not autonomous"
    assert main.document(DIRECTORS_DOC) is None


# (stored layers, the tool before_request forces): the top forced layer not yet called.
BEFORE_REQUEST_CASES: list[tuple[list[dict[str, Any]], str | None]] = [
    ([], None),
    ([forced("bash", 1), reminder("r")], "bash"),
    ([forced("bash", 1), reminder("r"), reminder("s")], "bash"),
    ([forced("bash", 1), forced("grep", 1)], "grep"),
    ([forced("bash", 1), {"budget": 1, "kind": "forced", "data": {**forced("grep", 1)["data"], "called": True}}], "bash"),
    ([reminder("r"), {"budget": 1, "kind": "forced", "data": {**forced("grep", 1)["data"], "called": True}}], None),
]


@pytest.mark.parametrize(("layers", "tool"), BEFORE_REQUEST_CASES)
def test_before_request(session: Session, layers: list[dict[str, Any]], tool: str | None) -> None:
    main = session.conversation("main")
    if layers:
        main.commit(documents={DIRECTORS_DOC: stack_of(*layers)})
    directors = Directors(main)
    assert directors.before_request() == tool
    if tool is None:
        # Nothing forced this request: its response is neither a call nor a miss.
        assert directors.after_response(called=False) is False
        assert main.document(DIRECTORS_DOC) == (stack_of(*layers) if layers else None)


def step(decision: Decided, rule: str, verdicts: list[str], continuation: str | None = None,
         rows: list[str] | None = None, error: str | None = None) -> Step:
    return Step(decision, rule, verdicts, continuation, rows or [], error)


AUTO = "Continue the autonomous run."
NOTCALLED_3 = "ForcedToolError::NotCalled: the forced tool bash was not called in 3 request(s)"
NOTCALLED_0 = "ForcedToolError::NotCalled: the forced tool grep was not called in 0 request(s)"
PAUSED_REASON = "No progress: 1 goal continuations in a row made no tool call with a new result"
PAUSED_ROW = (
    "Goal paused. No progress: 1 goal continuations in a row made no tool call with a new result. "
    "Send a message or resume the goal to give it the full progress cap again."
)
NOTE_1 = (
    "Progress check: 1 goal continuation in a row made no tool call with a new result. "
    "The goal pauses at 3. Take one concrete step now."
)


def last(generation: str, s: Step) -> dict[str, Any]:
    return {"generation": generation, "decision": s.decision.value, "rule": s.rule, "verdicts": s.verdicts,
            "continuation": s.continuation, "error": s.error}


def stall(run: str, count: int) -> dict[str, Any]:
    return {"run": run, "goal": "g1", "work": 0, "count": count}


# Each case: limits; documents stored before begin; the run begun (None: no begin); the
# steps of the final answers g0, g1, ...; documents after; display rows; model context rows.
OnYieldCase = tuple[
    DirectorLimits, dict[str, Any], str | None, list[Step], dict[str, Any], list[object], list[tuple[str | None, object]]
]
ON_YIELD_CASES: dict[str, OnYieldCase] = {
    "the autonomous run continues up to its limit": (
        DirectorLimits(max_continuations=2),
        {AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 2, "stop": None}},
        "r1",
        [step(Decided.CONTINUE, "again", ["autonomous:again"], AUTO)] * 2 + [step(Decided.YIELD, "yield", ["autonomous:yield"])],
        {
            AUTONOMOUS_DOC: {"enabled": True, "used": 2, "max": 2, "stop": None},
            DIRECTORS_DOC: stack_of({"budget": 0, "kind": "autonomous"}),
            LOOP_DOC: {"run": "r1", "steps": 198, "end": "yield",
                       "last": last("g2", step(Decided.YIELD, "yield", ["autonomous:yield"]))},
        },
        [],
        [("eukhe.continuation", {"text": AUTO})] * 2,
    ),
    "an autonomous document without max takes autonomous.maxContinuations": (
        DirectorLimits(max_continuations=1),
        {AUTONOMOUS_DOC: {"enabled": True, "used": 1}},
        "r1",
        [step(Decided.YIELD, "yield", ["autonomous:yield"])],
        {AUTONOMOUS_DOC: {"enabled": True, "used": 1}, DIRECTORS_DOC: stack_of({"budget": 0, "kind": "autonomous"})},
        [],
        [],
    ),
    "an autonomous document without used has used none": (
        DirectorLimits(max_continuations=9),
        {AUTONOMOUS_DOC: {"enabled": True, "max": 1}},
        "r1",
        [step(Decided.CONTINUE, "again", ["autonomous:again"], AUTO)],
        {AUTONOMOUS_DOC: {"enabled": True, "max": 1, "used": 1}, DIRECTORS_DOC: stack_of({"budget": 0, "kind": "autonomous"})},
        [],
        [("eukhe.continuation", {"text": AUTO})],
    ),
    "a disabled autonomous run leaves": (
        DirectorLimits(),
        {AUTONOMOUS_DOC: {"enabled": False, "used": 0, "max": 5, "stop": None},
         DIRECTORS_DOC: stack_of({"budget": 3, "kind": "autonomous"})},
        "r1",
        [step(Decided.YIELD, "none", ["autonomous:leave"])],
        {AUTONOMOUS_DOC: {"enabled": False, "used": 0, "max": 5, "stop": None}, DIRECTORS_DOC: stack_of()},
        [],
        [],
    ),
    "an autonomous run a gate stopped yields": (
        DirectorLimits(),
        {AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": "the gate said stop"}},
        "r1",
        [step(Decided.YIELD, "yield", ["autonomous:yield"])],
        {AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": "the gate said stop"},
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "autonomous"})},
        [],
        [],
    ),
    "a forced call without budget aborts with its requests": (
        DirectorLimits(),
        {DIRECTORS_DOC: stack_of({"budget": 0, "kind": "forced",
                                  "data": {"tool": "bash", "tries": 1, "misses": 1, "requests": 3, "called": False}})},
        "r1",
        [step(Decided.FAIL, "abort", ["forced:abort"], None, [NOTCALLED_3], NOTCALLED_3)],
        {DIRECTORS_DOC: stack_of()},
        [row("bash", 3)],
        [],
    ),
    "a forced call without budget and no stored requests": (
        DirectorLimits(),
        {DIRECTORS_DOC: stack_of({"budget": 0, "kind": "forced", "data": {"tool": "grep"}})},
        "r1",
        [step(Decided.FAIL, "abort", ["forced:abort"], None, [NOTCALLED_0], NOTCALLED_0)],
        {DIRECTORS_DOC: stack_of()},
        [row("grep", 0)],
        [],
    ),
    "the goal's stall record names its run and goal": (
        DirectorLimits(),
        {GOAL_DOC: goal_doc("active", None, None)},
        "r7",
        [step(Decided.CONTINUE, "again", ["goal:again"], "Continue working toward the goal: ship it"),
         step(Decided.CONTINUE, "again", ["goal:again"], "Continue working toward the goal: ship it\n" + NOTE_1)],
        {GOAL_DOC: goal_doc("active", None, stall("r7", 1)), DIRECTORS_DOC: stack_of({"budget": 198, "kind": "goal"})},
        [],
        [("eukhe.goal", {"text": "Continue working toward the goal: ship it"}),
         ("eukhe.goal", {"text": "Continue working toward the goal: ship it\n" + NOTE_1})],
    ),
    "the goal pauses at directors.stallSteps 1": (
        DirectorLimits(stall_steps=1),
        {GOAL_DOC: goal_doc("active", None, None)},
        "r1",
        [step(Decided.CONTINUE, "again", ["goal:again"], "Continue working toward the goal: ship it"),
         step(Decided.YIELD, "yield", ["goal:yield"], None, [PAUSED_ROW])],
        {GOAL_DOC: goal_doc("paused", PAUSED_REASON, stall("r1", 1)), DIRECTORS_DOC: stack_of({"budget": 199, "kind": "goal"})},
        [{"notice": "goal_paused", "message": PAUSED_ROW}],
        [("eukhe.goal", {"text": "Continue working toward the goal: ship it"})],
    ),
    "a goal without an objective": (
        DirectorLimits(),
        {GOAL_DOC: {"id": "g1", "status": "active", "reason": None, "stall": None}},
        "r1",
        [step(Decided.CONTINUE, "again", ["goal:again"], "Continue working toward the goal: ")],
        {GOAL_DOC: {"id": "g1", "status": "active", "reason": None, "stall": stall("r1", 0)}},
        [],
        [("eukhe.goal", {"text": "Continue working toward the goal: "})],
    ),
    "no loop document: no step left": (
        DirectorLimits(),
        {DIRECTORS_DOC: stack_of(forced("bash", 1))},
        None,
        [step(Decided.YIELD, "no_step", ["forced:again"])],
        {DIRECTORS_DOC: stack_of(forced("bash", 1)),
         LOOP_DOC: {"run": None, "steps": 0, "end": "yield", "last": last("g0", step(Decided.YIELD, "no_step", ["forced:again"]))}},
        [],
        [],
    ),
    "a reminder waits above a stopped autonomous run": (
        DirectorLimits(),
        {AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": "gate"}, DIRECTORS_DOC: stack_of(reminder("check"))},
        "r1",
        [step(Decided.YIELD, "yield", ["reminder:defer", "autonomous:yield"])],
        {DIRECTORS_DOC: stack_of({"budget": 5, "kind": "autonomous"}, reminder("check")),
         LOOP_DOC: {"run": "r1", "steps": 200, "end": "yield",
                    "last": last("g0", step(Decided.YIELD, "yield", ["reminder:defer", "autonomous:yield"]))}},
        [],
        [],
    ),
    "a reminder waits above a goal that pauses": (
        DirectorLimits(stall_steps=1),
        {GOAL_DOC: goal_doc("active", None, stall("r1", 0)), LOOP_DOC: {"run": "r1", "steps": 200, "end": "", "last": None},
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "goal"}, reminder("check"))},
        None,
        [step(Decided.YIELD, "yield", ["reminder:defer", "goal:yield"], None, [PAUSED_ROW])],
        {GOAL_DOC: goal_doc("paused", PAUSED_REASON, stall("r1", 1)),
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "goal"}, reminder("check")),
         LOOP_DOC: {"run": "r1", "steps": 200, "end": "yield",
                    "last": last("g0", step(Decided.YIELD, "yield", ["reminder:defer", "goal:yield"], None, [PAUSED_ROW]))}},
        [{"notice": "goal_paused", "message": PAUSED_ROW}],
        [],
    ),
    "a reminder waits above a forced call that aborts": (
        DirectorLimits(),
        {LOOP_DOC: {"run": "r1", "steps": 200, "end": "", "last": None},
         DIRECTORS_DOC: stack_of({"budget": 0, "kind": "forced",
                                  "data": {"tool": "bash", "tries": 1, "misses": 0, "requests": 3, "called": False}},
                                 reminder("check"))},
        None,
        [step(Decided.FAIL, "abort", ["reminder:defer", "forced:abort"], None, [NOTCALLED_3], NOTCALLED_3)],
        {DIRECTORS_DOC: stack_of(reminder("check"))},
        [row("bash", 3)],
        [],
    ),
    "a loop document without steps: the reminder waits, no step": (
        DirectorLimits(),
        {LOOP_DOC: {"run": "r1", "end": "", "last": None}, AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": "gate"},
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "autonomous"}, reminder("check"))},
        None,
        [step(Decided.YIELD, "yield", ["reminder:defer", "autonomous:yield"])],
        {LOOP_DOC: {"run": "r1", "steps": 0, "end": "yield",
                    "last": last("g0", step(Decided.YIELD, "yield", ["reminder:defer", "autonomous:yield"]))}},
        [],
        [],
    ),
    "a loop document without steps: no step for a continuation": (
        DirectorLimits(),
        {LOOP_DOC: {"run": "r1", "end": "", "last": None}, AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": None},
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "autonomous"})},
        None,
        [step(Decided.YIELD, "no_step", ["autonomous:again"])],
        {LOOP_DOC: {"run": "r1", "end": "yield", "last": last("g0", step(Decided.YIELD, "no_step", ["autonomous:again"]))},
         AUTONOMOUS_DOC: {"enabled": True, "used": 0, "max": 5, "stop": None},
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "autonomous"})},
        [],
        [],
    ),
    "no step left: a reminder above the goal waits": (
        DirectorLimits(),
        {LOOP_DOC: {"run": "r1", "steps": 0, "end": "", "last": None}, GOAL_DOC: goal_doc("active", None, None),
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "goal"}, reminder("check"))},
        None,
        [step(Decided.YIELD, "no_step", ["reminder:defer", "goal:again"])],
        {LOOP_DOC: {"run": "r1", "steps": 0, "end": "yield",
                    "last": last("g0", step(Decided.YIELD, "no_step", ["reminder:defer", "goal:again"]))},
         GOAL_DOC: goal_doc("active", None, None),
         DIRECTORS_DOC: stack_of({"budget": 5, "kind": "goal"}, reminder("check"))},
        [],
        [],
    ),
}


@pytest.mark.parametrize("case", list(ON_YIELD_CASES), ids=list(ON_YIELD_CASES))
def test_on_yield_steps(session: Session, case: str) -> None:
    limits, before, run, steps, after, rows, context = ON_YIELD_CASES[case]
    main = session.conversation("main")
    main.commit(documents=before)
    directors = Directors(main, limits)
    if run is not None:
        directors.begin(run)
    got = [directors.on_yield(f"g{n}", Reply("an answer")) for n in range(len(steps))]
    assert got == steps
    for name, value in after.items():
        assert main.document(name) == value, name
    assert notices(main) == rows
    assert [(e.custom_type, e.content) for e in main.model_view() if e.custom_type in ("eukhe.goal", "eukhe.continuation")] == context
    # A rerun of the last generation repeats its decision, rows and all, and commits nothing.
    final = steps[-1]
    again = directors.on_yield(f"g{len(steps) - 1}", Reply("an answer"))
    assert again == Step(final.decision, final.rule, final.verdicts, final.continuation, [], final.error,
                         repeated=True, committed=False)


def test_on_yield_writes_nothing_without_a_stack_or_after_the_end(session: Session) -> None:
    main = session.conversation("main")
    directors = Directors(main)
    assert directors.on_yield("g0", Reply("an answer")) == Step(Decided.YIELD, "none", [], None, [], committed=False)
    assert main.document(LOOP_DOC) is None
    for end, decided in (("fail", Decided.FAIL), ("yield", Decided.YIELD)):
        loop = {"run": "r1", "steps": 7, "end": end, "last": None}
        main.commit(documents={DIRECTORS_DOC: stack_of(forced("bash", 1)), LOOP_DOC: loop})
        assert directors.on_yield("g1", Reply("an answer")) == Step(decided, "ended", [], None, [], committed=False)
        assert main.document(LOOP_DOC) == loop
        assert main.document(DIRECTORS_DOC) == stack_of(forced("bash", 1))


MODEL_ERROR = "model error: an empty reply (no text and no tool call)"
MODEL_ERROR_CASES: list[tuple[dict[str, Any] | None, dict[str, Any] | None]] = [
    (goal_doc("active", None, None), goal_doc("failed", MODEL_ERROR, None)),
    (goal_doc("paused", "stalled", None), goal_doc("paused", "stalled", None)),
    (None, None),
]


@pytest.mark.parametrize(("goal", "after"), MODEL_ERROR_CASES)
def test_an_empty_reply_fails_the_step(session: Session, goal: dict[str, Any] | None, after: dict[str, Any] | None) -> None:
    main = session.conversation("main")
    if goal is not None:
        main.commit(documents={GOAL_DOC: goal})
    directors = Directors(main)
    directors.begin("r1")
    failed = Step(Decided.FAIL, "model_error", [], None, [], MODEL_ERROR)
    assert directors.on_yield("g0", Reply("  ", tool_calls=0)) == failed
    assert main.document(GOAL_DOC) == after
    assert main.document(LOOP_DOC) == {"run": "r1", "steps": 200, "end": "fail", "last": last("g0", failed)}
    assert directors.on_yield("g0", Reply("")) == Step(Decided.FAIL, "model_error", [], None, [], MODEL_ERROR,
                                                       repeated=True, committed=False)
