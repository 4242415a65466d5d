"""Subagents end to end (issue 28 item 4; control.md S4; memory.md rules 57, 58): ``eukhe agent
serve`` as a real process, its children real processes (``python -m eukhe.agent.child``), the
model the loopback server over HTTP. Named scenario: a subagent's report."""

from __future__ import annotations

import json
import os
import re
import select
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_support import DEADLINE, Agent, agents, home, of_type, server
from loopback_models import write_loopback_models

from eukhe.session import MAIN, Kind, Store
from spec.loopback import Call, LoopbackServer, Stall, Stream, Text, Wait

__all__ = ["agents", "home", "server"]  # the fixtures, used by name


def last_user(recorded: Any) -> str:
    users = [m for m in recorded.body["messages"] if m.get("role") == "user"]
    return str(users[-1].get("content")) if users else ""


def cvar(agent: Agent, line: str) -> None:
    agent.send({"v": 1, "type": "cvar", "line": line, "id": line})
    assert agent.until(lambda e: e.get("re") == line)["outcomes"][0]["refused"] is False


def command(agent: Agent, line: str) -> dict[str, Any]:
    agent.send({"v": 1, "type": "command", "line": line, "id": line})
    return agent.until(lambda e: e.get("re") == line)


def report_row(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["type"] == "row" and e["kind"] == "subagent" and e["text"].startswith(f"[{name}]")


def started_pid(event: dict[str, Any]) -> int:
    found = re.search(r"\(pid (\d+)\)", event["text"])
    assert found is not None, event
    return int(found.group(1))


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended, waited on through a pidfd (never a sleep)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], DEADLINE)
        return bool(readable)
    finally:
        os.close(fd)


def test_a_subagents_report_comes_back_as_the_tool_result(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(
        Stream([Call("task", json.dumps({"name": "reviewer", "task": "what does a.txt say?"}))], stop="toolUse"),  # main
        Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"),  # the reviewer
        Stream([Text("a.txt says alpha.")]),  # the reviewer's report
        Stream([Text("The reviewer says alpha.")]),  # main
    )
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "ask a reviewer about a.txt"})
    seen: list[dict[str, Any]] = []
    first.until(lambda e: seen.append(e) is None and e["type"] == "turn_end")
    assert seen[-1]["reason"] == "answered"
    (result,) = [e for e in seen if e["type"] == "tool_result"]
    assert result["text"] == "[reviewer] a.txt says alpha." and result["is_error"] is False
    child = [e["event"] for e in seen if e["type"] == "subagent" and e["agent"] == "reviewer"]
    assert [e["type"] for e in child if e["type"] in ("turn_start", "tool_call", "tool_result", "turn_end")] == ["turn_start", "tool_call", "tool_result", "turn_end"]
    assert "alpha" in next(e["text"] for e in child if e["type"] == "tool_result")
    assert first.end() == 0
    asked = [last_user(r) for r in server.requests]
    assert asked[1] == "what does a.txt say?"  # a fresh call: the task alone
    assert server.requests[1].peer == server.requests[2].peer  # the child's calls share its pool's connection
    assert [m.get("role") for m in server.requests[1].body["messages"] if m.get("role") != "system"] == ["user"]
    assert "subagent reviewer" in json.dumps(server.requests[1].body)
    assert any(m.get("role") == "tool" and m.get("content") == "[reviewer] a.txt says alpha." for m in server.requests[3].body["messages"])
    with Store(home / "sessions").open("s1", writer=False) as session:
        reviewer = session.conversation(f"{MAIN}.reviewer").model_view()
        main = session.conversation(MAIN).model_view()
    assert [e.kind for e in reviewer] == [Kind.USER, Kind.ASSISTANT, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.ASSISTANT]
    assert reviewer[0].content == "what does a.txt say?" and reviewer[-1].content == {"text": "a.txt says alpha."}
    assert [e.kind for e in main] == [Kind.USER, Kind.ASSISTANT, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.ASSISTANT]


def test_agent_from_a_client_reports_as_a_work_row_that_the_next_turn_sees(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("Alpha, and nothing else.")]), Stream([Text("It said alpha.")]))
    first = agents()
    first.until(of_type("state"))
    assert command(first, "/agent reviewer read a.txt and say what it holds")["type"] == "ok"
    assert first.until(report_row("reviewer"))["text"] == "[reviewer] Alpha, and nothing else."
    first.send({"v": 1, "type": "turn", "text": "what did the reviewer say?"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    texts = [str(m.get("content")) for m in server.requests[1].body["messages"] if m.get("role") == "user"]
    assert texts == ["[reviewer] Alpha, and nothing else.", "what did the reviewer say?"]
    with Store(home / "sessions").open("s1", writer=False) as session:
        rows = [e for e in session.conversation(MAIN).model_view() if e.kind is Kind.CUSTOM]
        assert [(r.custom_type, r.content) for r in rows] == [("eukhe.work", {"text": "[reviewer] Alpha, and nothing else."})]
        assert session.conversation(f"{MAIN}.reviewer").model_view()[0].content == "read a.txt and say what it holds"


def test_a_refused_agent_command_names_why(home: Path, agents: Callable[[], Agent]) -> None:
    first = agents()
    first.until(of_type("state"))
    assert command(first, "/agent 9lives do it")["kind"] == "invalid_name"
    cvar(first, "set subagentMaxConcurrency 0")
    assert command(first, "/agent reviewer do it")["kind"] == "no_slots"
    assert first.end() == 0


def test_a_subagent_inherits_its_parents_family_under_its_profile(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    (home / "agents").mkdir()
    (home / "agents" / "reviewer.cfg").write_text("set serviceTier auto\n", encoding="utf-8")  # the profile wins over the parent's set
    server.responder = lambda recorded: Stream([Text(f"Done: {last_user(recorded)}.")])
    first = agents()
    first.until(of_type("state"))
    cvar(first, "set serviceTier default")  # a set of the parent, main
    for name in ("helper", "reviewer"):
        assert command(first, f"/agent {name} task of {name}")["type"] == "ok"
        assert first.until(report_row(name))["text"] == f"[{name}] Done: task of {name}."
    first.send({"v": 1, "type": "turn", "text": "and you?"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    tiers = {last_user(r): r.body.get("service_tier") for r in server.requests}
    assert tiers == {"task of helper": "default", "task of reviewer": None, "and you?": "default"}


def test_subagent_max_concurrency_makes_a_second_child_wait_for_the_first(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.responder = lambda r: Stream([Text("one "), Wait(gate), Text("done")]) if last_user(r) == "first task" else Stream([Text("two done")])
    first = agents()
    first.until(of_type("state"))
    cvar(first, "set subagentMaxConcurrency 1")
    command(first, "/agent one first task")
    first.until(lambda e: e["type"] == "subagent" and e["agent"] == "one" and e["event"]["type"] == "delta")
    command(first, "/agent two second task")
    waiting = first.until(lambda e: e["type"] == "row" and e["kind"] == "subagent" and e["text"].startswith("two waits"))
    assert waiting["text"] == "two waits for a slot: 1 of subagentMaxConcurrency 1 run"
    assert [last_user(r) for r in server.requests] == ["first task"]  # two has not asked: it waits
    gate.set()
    order: list[str] = []
    first.until(lambda e: order.append(f"{e['type']}:{e.get('agent') or e.get('text', '')[:5]}") is None and report_row("two")(e))
    assert order.index("row:[one]") < order.index("subagent:two")  # two started once one had reported
    assert first.end() == 0
    assert [last_user(r) for r in server.requests] == ["first task", "second task"]


def test_a_stalled_subagent_is_killed_and_the_result_says_it_stalled(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Call("task", json.dumps({"name": "slow", "task": "hang"}))], stop="toolUse"))
    # by content, not by order: the child may be killed before its request arrives (300 ms after
    # its first line), and then main's next request must not take the child's Stall
    server.responder = lambda r: Stream([Stall()]) if last_user(r) == "hang" else Stream([Text("It stalled.")])
    first = agents()
    first.until(of_type("state"))
    cvar(first, "set subagentStallMs 300")
    first.send({"v": 1, "type": "turn", "text": "go"})
    pid = started_pid(first.until(lambda e: e["type"] == "row" and e["kind"] == "subagent" and e["text"].startswith("slow starts")))
    result = first.until(of_type("tool_result"))
    assert result["is_error"] is True and result["kind"] == "stalled"
    assert result["text"] == "stalled: subagent slow sent nothing for 300 ms (subagentStallMs); its process group was killed"
    assert gone(pid)
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    server.release()
    assert first.end() == 0


def test_killing_the_parent_kills_its_children(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Stall()]))
    first = agents()
    first.until(of_type("state"))
    command(first, "/agent slow hang")
    pid = started_pid(first.until(lambda e: e["type"] == "row" and e["kind"] == "subagent" and e["text"].startswith("slow starts")))
    server.stalled.wait(DEADLINE)  # the child's request is in flight
    first.process.kill()
    first.process.wait(DEADLINE)
    assert gone(pid)
    server.release()


def test_an_aborted_turn_kills_the_subagent_of_its_task_call(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Call("task", json.dumps({"task": "hang"}))], stop="toolUse"), Stream([Stall()]))
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "go"})
    started = first.until(lambda e: e["type"] == "row" and e["kind"] == "subagent" and e["text"].startswith("agent1 starts"))
    server.stalled.wait(DEADLINE)
    first.send({"v": 1, "type": "status", "id": "mid"})
    state = first.until(lambda e: e.get("re") == "mid")
    assert state["running"] and any(e["type"] == "subagent" and e["agent"] == "agent1" for e in state["turn"])
    first.send({"v": 1, "type": "abort"})
    assert first.until(of_type("turn_end"))["reason"] == "aborted"
    assert gone(started_pid(started))
    server.release()
    assert first.end() == 0


def test_a_report_that_comes_during_a_turn_joins_it_after_the_tool_results(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(
        Stream([Text("Reading "), Wait(gate), Call("read", '{"path": "a.txt"}')], stop="toolUse"),  # main, held
        Stream([Text("Checked.")]),  # the helper, while main's request is held
        Stream([Text("Done, and the helper checked.")]),  # main, after the read and the report
    )
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "go"})
    first.until(of_type("delta"))
    command(first, "/agent helper check it")
    assert first.until(report_row("helper"))["text"] == "[helper] Checked."
    gate.set()
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    roles = [(m.get("role"), str(m.get("content"))[:20]) for m in server.requests[2].body["messages"] if m.get("role") != "system"]
    assert [r for r, _ in roles] == ["user", "assistant", "tool", "user"] and roles[-1][1] == "[helper] Checked."


def test_a_subagent_thinks_at_its_parents_level(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    """The spawn line carries the parent's thinking level; the child's requests send it (a
    reasoning model on Chat Completions: reasoning_effort)."""
    write_loopback_models(home, server, {"loop": "openai-completions"}, reasoning=True)
    server.responder = lambda recorded: Stream([Text(f"Done: {last_user(recorded)}.")])
    first = agents()
    first.until(of_type("state"))
    assert command(first, "/effort high")["type"] == "thinking_level"
    assert command(first, "/agent helper think it over")["type"] == "ok"
    assert first.until(report_row("helper"))["text"] == "[helper] Done: think it over."
    assert first.end() == 0
    [child] = [r for r in server.requests if last_user(r) == "think it over"]
    assert child.body.get("reasoning_effort") == "high"
