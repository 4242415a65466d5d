"""The named scenarios of the turn loop (issue 28 item 6), each run by the running agent (the
agent process with its session runner) against the loopback model server (real HTTP, a real
session store, the real tools) and printed as the loop bridge prints it; each transcript must
equal the model's (bend/agent.py) and hold the lines that name its case."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bend.agent import transcript as model_transcript
from bridge import agent as loop_bridge

GOAL = {"goal": {"id": "g1", "objective": "make the tests pass"}}
READ_A = {"name": "read", "args": '{"path": "a.txt"}', "act": "read-a", "kind": "ok"}
LS_SRC = {"name": "ls", "args": '{"path": "src"}', "act": "ls-src", "kind": "ok"}


@pytest.fixture(autouse=True, scope="module")
def _server() -> Iterator[None]:
    yield
    loop_bridge.finish()


def run(*events: dict[str, Any]) -> list[str]:
    """The production transcript, after checking it equals the model's."""
    scenario = [{"setup": {}}, *events]
    production = loop_bridge.production(scenario)
    assert production == model_transcript([dict(e) for e in scenario])
    return production


def test_a_goal_that_completes() -> None:
    lines = run(
        GOAL,
        {"input": "fix it", "replies": [{"calls": [READ_A], "stop": "toolUse"}, {"text": "Fixed."}, {"calls": [LS_SRC], "stop": "toolUse"}, {"text": "Done."}]},
    )
    assert "step continue again goal:again" in lines
    assert 'continuation "Continue working toward the goal: make the tests pass"' in lines


def test_a_goal_without_progress_pauses_at_the_stall_cap() -> None:
    lines = run(GOAL, {"input": "fix it", "replies": [{"text": "Planning."}] * 6})
    assert [line for line in lines if line.startswith("step ")][-1] == "step yield yield goal:yield"
    assert any("No progress: 3 goal continuations in a row made no tool call with a new result" in line for line in lines)
    assert any("Progress check: 2 goal continuations in a row" in line for line in lines)
    assert lines[-1] == "end answered"


def test_a_reminder_goes_first_in_the_continuation() -> None:
    lines = run({"remind": "Run the tests."}, GOAL, {"input": "fix it", "replies": [{"calls": [READ_A], "stop": "toolUse"}, {"text": "Fixed."}]})
    assert "step continue again reminder:leave,goal:again" in lines
    assert 'continuation "Run the tests.\\n\\nContinue working toward the goal: make the tests pass"' in lines


def test_a_reminder_waits_on_the_stack_without_a_continuation() -> None:
    lines = run({"remind": "Run the tests."}, {"input": "hi", "replies": [{"text": "Hello."}]})
    assert "step yield none reminder:defer" in lines


def test_a_forced_call_missed_until_not_called() -> None:
    lines = run({"force": {"tool": "read", "tries": 1}}, {"input": "read it", "replies": [{"text": "No."}, {"text": "Still no."}]})
    assert lines[2:] == ["request forced=read/soft note=- sent=u7", "request forced=read/native note=- sent=u7", "end not_called"]


def test_a_forced_call_made_leaves_at_the_final_answer() -> None:
    lines = run({"force": {"tool": "read", "tries": 1}}, {"input": "read it", "replies": [{"calls": [READ_A], "stop": "toolUse"}, {"text": "Read."}]})
    assert "request forced=read/soft note=- sent=u7" in lines and "call read ok" in lines
    assert "request forced=- note=- sent=u7 a:read t" in lines  # the call made, the force left
    assert "step yield none forced:leave" in lines


def test_a_stream_loop_is_cut_and_retried_with_a_note() -> None:
    lines = run({"input": "go", "replies": [{"fault": "loop"}, {"text": "Answer."}]})
    assert lines[1:] == ["request forced=- note=- sent=u2", "note loop 1/8", "request forced=- note=loop sent=u2", "step yield none -", "end answered"]


def test_a_cut_stream_is_retried_with_a_note() -> None:
    lines = run({"input": "go", "replies": [{"fault": "cut"}, {"text": "Answer."}]})
    assert "note cut 1/8" in lines and "request forced=- note=cut sent=u2" in lines


def test_a_leaked_tool_call_is_rebuilt() -> None:
    lines = run({"input": "go", "replies": [{"text": "Calling:", "leaks": [READ_A]}, {"text": "Read."}]})
    assert "row note: rebuilt 1 leaked tool call(s)" in lines and "call read ok" in lines
    assert "request forced=- note=- sent=u2 a:read t" in lines  # the rebuilt call and its result go back


def test_leaked_markup_that_names_no_tool_gets_a_note_then_answers() -> None:
    ghost = {"name": "ghost", "args": "{}", "act": "ghost", "kind": "tool_unavailable"}
    lines = run({"input": "go", "replies": [{"text": "Calling:", "leaks": [ghost]}] * 3})
    assert lines.count("request forced=- note=leak sent=u2") == 2 and lines[-1] == "end answered"


def test_broken_arguments_are_repaired_and_refused() -> None:
    calls = [
        {"name": "read", "args": '{"path": "b.txt",}', "act": "read-b", "kind": "ok"},
        {"name": "read", "args": "{'path': 'src/c.py'}", "act": "read-c", "kind": "ok"},
        {"name": "read", "args": '{"path": ', "act": "read-cut", "kind": "invalid_arguments"},
        {"name": "reed", "args": '{"path": "a.txt"}', "act": "reed", "kind": "tool_unavailable"},
    ]
    lines = run({"input": "go", "replies": [{"calls": calls, "stop": "toolUse"}, {"text": "Done."}]})
    assert lines[2:6] == ["call read ok", "call read ok", "call read invalid_arguments", "call reed tool_unavailable"]
    assert lines[6] == "request forced=- note=- sent=u2 a:read,read,read,reed t t t t"  # one reply, then its four results


def test_arguments_holding_a_lone_surrogate_are_refused_and_the_run_goes_on() -> None:
    """A model's arguments may escape a lone surrogate (``\\ud800``): valid JSON, no UTF-8 text.
    The call is refused (invalid_arguments) and the next request sends those arguments again, as
    JSON escapes: before, encoding that request failed and the run ended failed."""
    call = {"name": "read", "args": '{"path": "\\ud800.txt"}', "act": "read-surrogate", "kind": "invalid_arguments"}
    lines = run({"input": "go", "replies": [{"calls": [call], "stop": "toolUse"}, {"text": "Done."}]})
    assert lines[2:] == ["call read invalid_arguments", "request forced=- note=- sent=u2 a:read t", "step yield none -", "end answered"]


def test_a_429_is_retried() -> None:
    lines = run({"input": "go", "replies": [{"fault": "fail"}, {"fault": "fail"}, {"text": "Answer."}]})
    assert lines[1:] == ["request forced=- note=- sent=u2", "retry 1/3", "request forced=- note=- sent=u2", "retry 2/3", "request forced=- note=- sent=u2", "step yield none -", "end answered"]


def test_retries_run_out_and_the_run_fails() -> None:
    lines = run({"setup": {"max_retries": 1}}, {"input": "go", "replies": [{"fault": "fail"}] * 2})
    assert lines[-2:] == ["request forced=- note=- sent=u2", "end failed"]


def test_notes_run_out_and_an_empty_reply_fails_the_goal() -> None:
    lines = run(GOAL, {"input": "go", "replies": [{"stop": "stop"}] * 9})
    assert "note no_answer 8/8" in lines and "step fail model_error -" in lines and lines[-1] == "end failed"


def test_max_tool_rounds_ends_the_run() -> None:
    lines = run({"setup": {"max_tool_rounds": 1}}, {"input": "go", "replies": [{"calls": [READ_A], "stop": "toolUse"}, {"calls": [LS_SRC], "stop": "toolUse"}]})
    assert lines[-1] == "end max_tool_rounds" and "call ls ok" not in lines


def test_a_length_stop_runs_no_call() -> None:
    lines = run({"input": "go", "replies": [{"calls": [READ_A], "stop": "length"}, {"text": "Done."}]})
    assert "call read truncated" in lines
