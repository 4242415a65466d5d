"""The agent end to end: ``eukhe agent serve`` as a real process running the real turn loop
(eukhe.agent.runner) against the loopback model server over HTTP, with the real tools in the
project directory; clients in this process and in other processes watch it."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_support import DEADLINE, Agent, agents, home, of_type, server
from loopback_models import write_loopback_models

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import MAIN, Kind, Store
from eukhe.agent.compaction import SUMMARY_PROMPT
from eukhe.tiny import catalog, paths, worker
from eukhe.tiny import protocol as tiny_protocol
from eukhe.tiny.uses import TITLE_PROMPT
from spec.loopback import Call, LoopbackServer, Stall, Stream, Text, Thinking, Wait, base_url

__all__ = ["agents", "home", "server"]  # the fixtures, used by name


def turn_events(agent: Agent, text: str) -> list[dict[str, Any]]:
    agent.send({"v": 1, "type": "turn", "text": text})
    seen: list[dict[str, Any]] = []
    while not seen or seen[-1]["type"] != "turn_end":
        seen.append(agent.until(lambda event: event["type"] in {"turn_start", "tool_call", "tool_result", "step", "turn_end", "delta", "note", "retry"}))
    return seen


def during_a_turn(agent: Agent, request: dict[str, Any], text: str = "go") -> None:
    """Start a turn, wait for its first delta, then send ``request`` and wait for its ok."""
    agent.until(of_type("state"))
    agent.send({"v": 1, "type": "turn", "text": text})
    agent.until(lambda e: e["type"] == "delta")
    agent.send({"v": 1, **request})
    agent.until(lambda e: e["type"] == "ok" and e["request"] == request["type"])


def test_a_turn_calls_a_real_tool_over_http_and_every_client_sees_it(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("It says alpha.")]))
    first = agents()
    assert first.until(of_type("state"))["model"] == {"provider": "loop", "id": "loop-model"}
    second = agents()  # a client in another process
    assert second.until(of_type("state"))["pid"] == first.process.pid
    events = turn_events(first, "what does a.txt say?")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn_start" and kinds[-1] == "turn_end" and events[-1]["reason"] == "answered"
    result = next(e for e in events if e["type"] == "tool_result")
    assert "alpha" in result["text"] and result["is_error"] is False
    assert "".join(e["text"] for e in events if e["type"] == "delta") == "It says alpha."
    assert second.until(of_type("turn_end"))["reason"] == "answered"  # the other client saw the same turn
    second_request = server.requests[1].body["messages"]
    assert any(m.get("role") == "tool" and "alpha" in str(m.get("content")) for m in second_request)  # the result went back
    assert first.end() == 0
    with Store(home / "sessions").open("s1", writer=False) as session:
        kinds_logged = [e.kind for e in session.conversation(MAIN).model_view()]
    assert kinds_logged == [Kind.USER, Kind.ASSISTANT, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.ASSISTANT]


def test_a_client_that_reconnects_mid_turn_gets_the_turn_so_far(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("Half "), Wait(gate), Text("done.")]))
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "go"})
    first.until(lambda e: e["type"] == "delta" and e["text"] == "Half ")

    async def late_client() -> list[p.Event]:
        client = await AgentClient.connect(p.socket_path(home, Store(home / "sessions").path("s1")))
        state = await client.next()
        assert isinstance(state, p.StateEvent) and state.running
        so_far: list[p.Event] = list(state.turn)
        gate.set()
        while not so_far or so_far[-1].type != "turn_end":
            so_far.append(await client.next())
        await client.close()
        return so_far

    seen = asyncio.run(asyncio.wait_for(late_client(), DEADLINE))
    kinds = [e.type for e in seen]
    assert kinds[0] == "turn_start" and "tool_result" in kinds and kinds[-1] == "turn_end"
    assert "".join(e.text for e in seen if isinstance(e, p.DeltaEvent)) == "Half done."
    assert first.end() == 0


def test_a_session_without_a_usable_model_ends_the_turn_naming_why(home: Path, agents: Callable[[], Agent]) -> None:
    (home / "models.json").write_text(json.dumps({"providers": {}}), encoding="utf-8")
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "hi"})
    end = first.until(of_type("turn_end"))
    assert end["reason"] == "failed" and "loop" in end["text"]
    assert first.end() == 0


def test_steer_joins_the_running_turn_between_tool_calls(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("Looking "), Wait(gate), Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("Done.")]))
    first = agents()
    during_a_turn(first, {"type": "steer", "text": "also check b.txt"})
    gate.set()
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    after_tools = server.requests[1].body["messages"]
    texts = [str(m.get("content")) for m in after_tools]
    assert "also check b.txt" in texts[-1] and any("alpha" in t for t in texts)  # after the result, as a user message
    assert first.end() == 0


def test_a_follow_up_runs_as_the_next_turn(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("First "), Wait(gate), Text("answer.")]), Stream([Text("Second answer.")]))
    first = agents()
    during_a_turn(first, {"type": "follow_up", "text": "two"}, text="one")
    gate.set()
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.until(of_type("turn_start"))["text"] == "two"
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0


def test_abort_ends_the_running_turn(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("Thinking "), Stall()]))
    first = agents()
    during_a_turn(first, {"type": "abort"})
    assert first.until(of_type("turn_end"))["reason"] == "aborted"
    server.release()
    first.send({"v": 1, "type": "status", "id": "after"})
    assert first.until(lambda e: e.get("re") == "after")["running"] is False
    assert first.end() == 0


def send_together(agent: Agent, *requests: dict[str, Any]) -> None:
    """The requests in one write: the agent reads them in one go, the later ones before the turn
    the first asks for has begun."""
    assert agent.process.stdin is not None
    agent.process.stdin.write(b"".join(json.dumps({"v": 1, **r}).encode() + b"\n" for r in requests))
    agent.process.stdin.flush()


def test_a_steer_a_follow_up_and_an_abort_sent_with_the_turn_are_not_lost(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("First.")]), Stream([Text("Also done.")]), Stream([Text("Next done.")]))
    first = agents()
    first.until(of_type("state"))
    send_together(first, {"type": "turn", "text": "one"}, {"type": "steer", "text": "and this"}, {"type": "follow_up", "text": "then that"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert "and this" in str(server.requests[1].body["messages"][-1]["content"])  # it joined the turn after its answer
    assert first.until(of_type("turn_start"))["text"] == "then that"
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    asked = len(server.requests)
    send_together(first, {"type": "turn", "text": "two"}, {"type": "abort"})
    assert first.until(lambda e: e["type"] == "ok" and e["request"] == "abort")["text"] == "the turn is aborted"
    assert first.until(of_type("turn_end"))["reason"] == "aborted"
    first.send({"v": 1, "type": "status", "id": "after"})
    assert first.until(lambda e: e.get("re") == "after")["running"] is False
    assert len(server.requests) == asked  # the aborted turn asked the model nothing
    assert first.end() == 0


def test_a_steer_that_comes_as_the_answer_ends_joins_and_the_turn_goes_on(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("Almost "), Wait(gate), Text("done.")]), Stream([Text("Checked b.txt too.")]))
    first = agents()
    during_a_turn(first, {"type": "steer", "text": "and b.txt?"})
    gate.set()
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert len(server.requests) == 2 and "and b.txt?" in str(server.requests[1].body["messages"][-1].get("content"))
    assert first.end() == 0


@pytest.mark.parametrize("mode", ["one-at-a-time", "all"])
def test_the_steering_mode_joins_one_message_or_all_of_them(mode: str, home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("Almost "), Wait(gate), Text("done.")]), Stream([Text("One.")]), Stream([Text("Two.")]))
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "cvar", "line": f"set steeringMode {mode}", "id": "c"})
    assert first.until(lambda e: e.get("re") == "c")["outcomes"][0]["refused"] is False
    first.send({"v": 1, "type": "turn", "text": "go"})
    first.until(lambda e: e["type"] == "delta")
    for text in ("first note", "second note"):
        first.send({"v": 1, "type": "steer", "text": text})
        first.until(lambda e: e["type"] == "ok" and e["request"] == "steer")
    gate.set()
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    asked = [str(r.body["messages"][-1].get("content")) for r in server.requests[1:]]
    if mode == "all":
        assert asked == ["first note\n\nsecond note"]
    else:
        assert asked == ["first note", "second note"]
    assert first.end() == 0


def test_the_service_tier_is_asked_for_only_where_the_model_honours_it(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("A.")]), Stream([Text("B.")]))
    first = agents()
    first.until(of_type("state"))
    for tier, text in (("default", "one"), ("flex", "two")):  # the loop provider's API has no flex tier (S6.8)
        first.send({"v": 1, "type": "cvar", "line": f"set serviceTier {tier}", "id": tier})
        first.until(lambda e: e.get("re") == tier)
        first.send({"v": 1, "type": "turn", "text": text})
        assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert [r.body.get("service_tier") for r in server.requests] == ["default", None]
    assert first.end() == 0


def test_the_auto_tier_asks_for_no_tier_where_the_model_honours_auto(tmp_path: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    """serviceTier auto is the provider's own choice: no tier is asked for, even of an API whose
    tiers include auto (OpenAI Responses, S6.8); a tier the model honours is asked for."""
    agent = write_loopback_models(tmp_path / "agent", server, {"openai": "openai-responses"})
    with Store(agent / "sessions").open("s1") as session:
        session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "openai", "id": "openai-model"}})
    server.script(Stream([Text("A.")]), Stream([Text("B.")]))
    first = agents()
    first.until(of_type("state"))
    for tier, text in (("auto", "one"), ("default", "two")):
        first.send({"v": 1, "type": "cvar", "line": f"set serviceTier {tier}", "id": tier})
        first.until(lambda e: e.get("re") == tier)
        first.send({"v": 1, "type": "turn", "text": text})
        assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    assert [r.body.get("service_tier") for r in server.requests] == [None, "default"]


def titled_or_answered(recorded: Any) -> Any:
    """The session model answers a title request with a title, any other with an answer."""
    last = str(recorded.body["messages"][-1].get("content"))
    return Stream([Text("Fixing the parser")]) if last.startswith(TITLE_PROMPT) else Stream([Text("Answer.")])


def test_the_first_message_titles_the_session_with_its_model_when_no_tiny_model_is_installed(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.responder = titled_or_answered
    (home / "settings.json").write_text(json.dumps({"titles": {"generate": True}}), encoding="utf-8")
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "the parser drops the last token"})
    seen: list[dict[str, Any]] = []  # the title and the turn's end, in either order
    first.until(lambda e: seen.append(e) is None and {"title", "turn_end"} <= {x.get("kind", x["type"]) for x in seen})
    assert [x["text"] for x in seen if x.get("kind") == "title"] == ["Fixing the parser"]
    first.send({"v": 1, "type": "turn", "text": "and the lexer?"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    titles = [r for r in server.requests if str(r.body["messages"][-1].get("content")).startswith(TITLE_PROMPT)]
    assert len(titles) == 1 and titles[0].body["messages"][-1]["content"].endswith("the parser drops the last token")
    with Store(home / "sessions").open("s1", writer=False) as session:
        assert session.conversation(MAIN).document("eukhe.title") == {"title": "Fixing the parser", "by": "model"}


def test_the_first_message_titles_the_session_with_the_tiny_model_when_one_is_installed(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.responder = titled_or_answered
    (home / "settings.json").write_text(json.dumps({"titles": {"generate": True}}), encoding="utf-8")
    tiny = catalog.find("lfm2.5-230m")  # installed (its files present), run by the echo engine
    for f in tiny.files:
        (paths.model_dir(home, tiny.id) / f.path).parent.mkdir(parents=True, exist_ok=True)
        (paths.model_dir(home, tiny.id) / f.path).write_bytes(b"")
    (paths.model_dir(home, tiny.id) / "engine.json").write_text('{"kind": "echo"}', encoding="utf-8")
    try:
        first = agents()
        first.until(of_type("state"))
        first.send({"v": 1, "type": "turn", "text": "the parser drops the last token"})
        seen: list[dict[str, Any]] = []  # the title and the turn's end, in either order
        first.until(lambda e: seen.append(e) is None and {"title", "turn_end"} <= {x.get("kind", x["type"]) for x in seen})
        echoed = TITLE_PROMPT.split("\n", 1)[0][:80]  # the echo engine answers the prompt: its first line is the title
        assert [x["text"] for x in seen if x.get("kind") == "title"] == [echoed]
        assert first.end() == 0
    finally:  # the worker outlives the processes it serves (inference.md S9), and would outlive the test
        found = worker.probe(paths.socket_path(home, tiny.id))
        if found.sock is not None and found.reader is not None:
            tiny_protocol.send(found.sock, {"op": "shutdown"})
            assert found.reader.read(60) == b'{"ok":true,"bye":true}'
            found.sock.close()
    assert [str(r.body["messages"][-1].get("content")) for r in server.requests] == ["the parser drops the last token"]
    with Store(home / "sessions").open("s1", writer=False) as session:
        assert session.conversation(MAIN).document("eukhe.title") == {"title": echoed, "by": "tiny"}


def test_titles_generate_false_titles_nothing(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.responder = titled_or_answered
    (home / "settings.json").write_text(json.dumps({"titles": {"generate": False}}), encoding="utf-8")
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "hello"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    assert [str(r.body["messages"][-1].get("content")) for r in server.requests] == ["hello"]


@pytest.mark.parametrize("api", ["anthropic-messages", "google-generative-ai"])
def test_a_reasoning_models_signed_thinking_goes_back_in_the_tool_loop(api: str, tmp_path: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    agent = write_loopback_models(tmp_path / "agent", server, {"claude": api}, reasoning=True)
    with Store(agent / "sessions").open("s1") as session:
        session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "claude", "id": "claude-model"}, "eukhe.thinking_level": "high"})
    server.script(
        Stream([Thinking("I should read a.txt", signature="sig-1"), Call("read", '{"path": "a.txt"}', signature="call-sig")], stop="toolUse"),
        Stream([Text("It says alpha.")]),
        Stream([Text("Yes.")]),
    )
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "read a.txt"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    first.send({"v": 1, "type": "turn", "text": "sure?"})  # the next turn reads the first back from the session's log
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0
    for sent in (json.dumps(server.requests[1].body), json.dumps(server.requests[2].body)):
        if api == "anthropic-messages":
            assert '"thinking": "I should read a.txt", "signature": "sig-1"' in sent
        else:
            assert '"thoughtSignature": "call-sig"' in sent
            assert '"functionResponse": {"name": "read"' in sent  # the API requires the name of the call it answers


def compaction_replies(recorded: Any) -> Any:
    """The summary for a compaction's request; three reads for the first turn; else an answer."""
    messages = recorded.body["messages"]
    last = str(messages[-1].get("content"))
    if last == SUMMARY_PROMPT:
        return Stream([Text("The user had x.txt, y.txt and z.txt read; all three hold numbered lines.")])
    if last == "read the three files":
        return Stream([Call("read", json.dumps({"path": name})) for name in ("x.txt", "y.txt", "z.txt")], stop="toolUse")
    return Stream([Text("Done.")])


def three_big_files(tmp_path: Path, server: LoopbackServer, lines: int) -> None:
    """A model with a 20,000-token window and 1,000 max tokens (threshold 17,000, limit 19,000
    tokens of the local estimate), and x.txt, y.txt and z.txt of ``lines`` numbered lines."""
    models = {"providers": {"loop": {"baseUrl": base_url(server, "openai-completions"), "apiKey": "k", "api": "openai-completions",
                                     "models": [{"id": "loop-model", "contextWindow": 20_000, "maxTokens": 1_000}]}}}  # fmt: skip
    (tmp_path / "agent" / "models.json").write_text(json.dumps(models), encoding="utf-8")
    for name in ("x.txt", "y.txt", "z.txt"):
        (tmp_path / name).write_text("".join(f"line {n:05d} of {name}, a file the agent reads whole\n" for n in range(lines)), encoding="utf-8")
    server.responder = compaction_replies


def summaries(server: LoopbackServer) -> list[Any]:
    return [r for r in server.requests if str(r.body["messages"][-1].get("content")) == SUMMARY_PROMPT]


def test_a_background_compaction_is_placed_at_the_next_run_boundary(tmp_path: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    three_big_files(tmp_path, server, 400)  # the three results put a request between the threshold and the limit
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "read the three files"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"  # one turn so far: nothing before it to compact
    assert summaries(server) == []
    first.send({"v": 1, "type": "turn", "text": "what do they hold?"})
    seen: list[dict[str, Any]] = []  # the compaction's summary and the turn's end, in either order
    first.until(lambda e: seen.append(e) is None and any(x["type"] == "turn_end" for x in seen) and any(x.get("kind") == "compaction" for x in seen))
    assert [x["text"].split(":")[0] for x in seen if x.get("kind") == "compaction"] == ["compaction ready"]
    (summary,) = summaries(server)
    assert "line 00001 of x.txt" in json.dumps(summary.body)  # it summarized the first turn
    second_turn = next(r for r in reversed(server.requests) if r is not summary)
    assert "line 00001 of x.txt" in json.dumps(second_turn.body)  # not placed mid-run: turn 2 sent the whole view
    first.send({"v": 1, "type": "turn", "text": "and now?"})
    assert first.until(lambda e: e.get("kind") == "compaction")["text"].startswith("compaction_end")  # at the run boundary
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    third = json.dumps(server.requests[-1].body)
    assert "line 00001 of x.txt" not in third and "The user had x.txt, y.txt and z.txt read" in third and "what do they hold?" in third
    assert first.end() == 0
    with Store(tmp_path / "agent" / "sessions").open("s1", writer=False) as session:
        rows = [e for e in session.conversation(MAIN).model_view() if e.custom_type == "eukhe.compaction"]
    assert len(rows) == 1 and rows[0].content["summary"].startswith("The user had")


def test_a_request_over_the_limit_waits_for_the_compaction_and_places_it_first(tmp_path: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    three_big_files(tmp_path, server, 460)  # over the limit
    first = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "read the three files"})
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    first.send({"v": 1, "type": "turn", "text": "what do they hold?"})
    kinds = [first.until(lambda e: e.get("kind") == "compaction")["text"].split(":")[0] for _ in range(2)]
    assert kinds == ["compaction ready", "compaction_end"]  # placed mid-run, before the request
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    asked = json.dumps(server.requests[-1].body)
    assert "line 00001 of x.txt" not in asked and "The user had x.txt" in asked and "what do they hold?" in asked
    assert first.end() == 0
