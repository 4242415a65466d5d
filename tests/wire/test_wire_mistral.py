"""Mistral Conversations (api "mistral-conversations"), over the loopback server: the request
(path, Bearer auth, store false, instructions, the conversation as entries, tools, forced
choice, reasoning effort, images) and the stream (text and thinking chunks, calls in pieces,
usage, the end event, errors)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from wire_support import ask, model, reply

from eukhe.inference import force
from eukhe.inference.wire.events import MalformedEvent, ProviderError, StreamCut, ToolCall
from eukhe.inference.wire.plan import Image, Message, Request, Thought, Tool, WireModel
from spec.loopback import Call, Cut, ErrorEvent, Fail, LoopbackServer, RawBytes, Recorded, Stream, Text, Thinking, Tokens

API = "mistral-conversations"
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
PNG = Image("image/png", b"\x89PNG")


def mistral(server: LoopbackServer, model_id: str = "mistral-large-latest", **fields: Any) -> WireModel:
    return replace(model(server, API, model_id, provider="mistral", key="mi-key"), **fields)


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    return server.last


def conversation() -> tuple[Message, ...]:
    call = ToolCall(0, "call_1", "read", '{"path": "a.txt"}')
    return (
        Message("user", "read a.txt"),
        Message("assistant", "Reading.", tool_calls=(call,), thoughts=(Thought("Open it.", "sig-1"),)),
        Message("tool", "file body", tool_call_id="call_1", tool_name="read"),
        Message("user", "thanks"),
    )


def test_the_conversations_request(server: LoopbackServer) -> None:
    got = sent(server, mistral(server), Request(conversation(), system="Be brief.", tools=(READ,), temperature=0.3))
    assert (got.method, got.path, got.query, got.api) == ("POST", "/v1/conversations", {}, API)
    assert got.headers["authorization"] == "Bearer mi-key" and got.headers["accept"] == "text/event-stream"
    body = got.body
    assert (body["model"], body["stream"], body["store"], body["instructions"]) == ("mistral-large-latest", True, False, "Be brief.")
    assert body["inputs"] == [
        {"type": "message.input", "role": "user", "content": "read a.txt"},
        {"type": "message.output", "role": "assistant", "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "Open it."}], "signature": "sig-1"},
            {"type": "text", "text": "Reading."},
        ]},
        {"type": "function.call", "tool_call_id": "call_1", "name": "read", "arguments": '{"path": "a.txt"}'},
        {"type": "function.result", "tool_call_id": "call_1", "result": "file body"},
        {"type": "message.input", "role": "user", "content": "thanks"},
    ]
    assert body["tools"] == [{"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": dict(READ.parameters), "strict": False}}]
    assert body["completion_args"] == {"max_tokens": 4096, "temperature": 0.3}


def test_a_forced_call_is_tool_choice_any_and_the_soft_prompt(server: LoopbackServer) -> None:
    forced = force.ForcedRequest(1, True, force.soft_prompt("read"))
    got = sent(server, mistral(server), Request((Message("user", "go"),), tools=(READ,), forced_tool="read", forced=forced))
    assert got.body["completion_args"]["tool_choice"] == "any"
    assert got.body["inputs"][-1]["content"].endswith(force.soft_prompt("read"))
    unforced = sent(server, mistral(server), Request((Message("user", "go"),), tools=(READ,), forced_tool="read"))
    assert "tool_choice" not in unforced.body["completion_args"]  # the first request flags only when free


@pytest.mark.parametrize("level", ["low", "medium", "high"])
def test_the_reasoning_effort_is_the_ladders(server: LoopbackServer, level: str) -> None:
    got = sent(server, mistral(server, "magistral-medium-latest"), ask(thinking=level))
    assert got.body["completion_args"]["reasoning_effort"] == level
    plain = sent(server, mistral(server, reasoning=False), ask(thinking=level))
    assert "reasoning_effort" not in plain.body["completion_args"]


def test_images_go_as_image_url_chunks(server: LoopbackServer) -> None:
    messages = (Message("user", "look", images=(PNG,)), Message("assistant", "", tool_calls=(ToolCall(0, "c1", "zoom", "{}"),)),
                Message("tool", "zoomed", tool_call_id="c1", tool_name="zoom", images=(PNG,)))
    got = sent(server, mistral(server, input=("text", "image")), Request(messages))
    url = PNG.data_url
    assert got.body["inputs"][0]["content"] == [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": url}]
    assert got.body["inputs"][2:] == [
        {"type": "function.result", "tool_call_id": "c1", "result": "zoomed"},
        {"type": "message.input", "role": "user", "content": [{"type": "image_url", "image_url": url}]},
    ]


def test_the_stream_is_read(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("Hmm. ", "s1"), Text("Rea"), Text("ding."), Call("read", '{"path": "a"}', "call_1", pieces=4), Call("date", "{}", "call_2")],
                         stop="toolUse", usage=Tokens(30, 8)))
    got = reply(mistral(server), ask(thinking="high"))
    assert (got.text, got.thinking, got.signatures) == ("Reading.", "Hmm. ", ("s1",))
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [("call_1", "read", '{"path": "a"}'), ("call_2", "date", "{}")]
    assert (got.stop.reason, got.stop.raw) == ("toolUse", "conversation.response.done")
    assert got.usage is not None and (got.usage.input, got.usage.output) == (30, 8)
    server.script(Stream([Text("fine")]))
    assert reply(mistral(server)).stop.reason == "stop"


def test_errors_are_typed(server: LoopbackServer) -> None:
    server.script(Fail(429, '{"object": "error", "message": "Requests rate limit exceeded", "type": "rate_limited", "code": "1300"}', (("retry-after", "3"),)))
    with pytest.raises(ProviderError) as error:
        reply(mistral(server))
    assert (error.value.status, error.value.retryable, error.value.retry_after) == (429, True, 3.0)
    server.script(Stream([Text("x"), ErrorEvent("server_error", "mistral failed", 3000)]))
    with pytest.raises(ProviderError, match="mistral failed") as event_error:
        reply(mistral(server))
    assert event_error.value.kind == "3000" and event_error.value.status is None
    server.script(Stream([Text("x"), Cut()]))
    with pytest.raises(StreamCut):
        reply(mistral(server))
    server.script(Stream([Text("x")], end=False))
    with pytest.raises(StreamCut):
        reply(mistral(server))


@pytest.mark.parametrize("frame, says", [
    (RawBytes(b"event: message.output.delta\ndata: {not json\n\n"), "not JSON"),
    (RawBytes(b'data: {"type": "function.call.delta", "name": "x", "arguments": "{}"}\n\n'), "tool_call_id"),
    (RawBytes(b'data: {"type": "message.output.delta", "content": 3}\n\n'), "content"),
])
def test_a_malformed_event_is_named(server: LoopbackServer, frame: RawBytes, says: str) -> None:
    server.script(Stream([Text("a"), frame]))
    with pytest.raises(MalformedEvent, match=says):
        reply(mistral(server))


def test_the_provider_is_in_provider_caps_and_its_models_reach_this_client(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main
    from eukhe.inference import catalog
    from eukhe.inference.wire import CLIENTS

    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "mistral"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[0] == "mistral" and line.count("=") == 8
    shipped = [m for m in catalog.compiled() if m.provider == "mistral"]
    assert shipped and {m.api for m in shipped} == {"mistral-conversations"} and CLIENTS["mistral-conversations"].api == "mistral-conversations"
