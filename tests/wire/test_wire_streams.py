"""Each wire API against the loopback server: text and thinking streams, tool calls assembled
from their deltas, every stop reason, usage, typed errors, a stall past the timeout, a cut
connection, the stream filter hook (issue 14 parts 1-3; inference.md S6.10)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from wire_support import APIS, ask, events, model, reply

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.events import (
    LENGTH,
    REFUSAL,
    STOP,
    TOOL_USE,
    ConnectFailed,
    Delta,
    MalformedEvent,
    ProviderError,
    Retryable,
    Stop,
    StreamCut,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
    WireTimeout,
)
from spec.loopback import Call, Cut, Delay, Fail, LoopbackServer, RawBytes, Stall, Stream, Text, Thinking, Tokens

api_param = pytest.mark.parametrize("api", APIS)


@api_param
def test_text_and_thinking_stream_in_order(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Thinking("let me "), Thinking("think"), Text("Hel"), Text("lo, "), Text("world")]))
    got = events(model(server, api), ask(thinking="high"))
    deltas = [e for e in got if isinstance(e, (TextDelta, ThinkingDelta))]
    assert [(type(e).__name__, e.text) for e in deltas] == [
        ("ThinkingDelta", "let me "),
        ("ThinkingDelta", "think"),
        ("TextDelta", "Hel"),
        ("TextDelta", "lo, "),
        ("TextDelta", "world"),
    ]
    assert len({e.block for e in deltas if isinstance(e, TextDelta)}) == 1
    assert {e.block for e in deltas if isinstance(e, ThinkingDelta)}.isdisjoint({e.block for e in deltas if isinstance(e, TextDelta)})
    assert isinstance(got[-1], Stop) and got[-1].reason == STOP
    assert sum(isinstance(e, Stop) for e in got) == 1


@api_param
def test_tool_calls_are_assembled_from_their_deltas(server: LoopbackServer, api: str) -> None:
    first = '{"path": "src/main.py", "limit": 40}'
    second = '{"command": "ls -la \\u00e9", "nested": {"a": [1, 2]}}'
    server.script(Stream([Text("Reading."), Call("read", first, "call_a", pieces=5), Call("bash", second, "call_b", pieces=7)], stop="toolUse"))
    got = events(model(server, api))
    calls = [e for e in got if isinstance(e, ToolCall)]
    assert [(c.index, c.id, c.name) for c in calls] == [(0, "call_a", "read"), (1, "call_b", "bash")]
    assert json.loads(calls[0].arguments) == json.loads(first) and json.loads(calls[1].arguments) == json.loads(second)
    deltas = [e for e in got if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0, 1}
    if api != "google-generative-ai":  # Google sends each call whole
        assert "".join(d.arguments for d in deltas if d.index == 0) == first
        assert len([d for d in deltas if d.index == 0]) > 2
    # the end: the calls, then usage, then the one Stop
    tail = got[-4:]
    assert [type(e) for e in tail] == [ToolCall, ToolCall, Usage, Stop]
    assert tail[-1] == Stop(TOOL_USE, tail[-1].raw)


@api_param
@pytest.mark.parametrize("stop", [STOP, LENGTH, TOOL_USE, REFUSAL])
def test_each_stop_reason_is_read(server: LoopbackServer, api: str, stop: str) -> None:
    parts = [Text("partial answer")] + ([Call("read", '{"path": "a"}')] if stop == TOOL_USE else [])
    server.script(Stream(parts, stop=stop))
    assert reply(model(server, api)).stop.reason == stop


@api_param
def test_a_length_stop_keeps_its_tool_calls(server: LoopbackServer, api: str) -> None:
    """S6.10: tool calls are read at stream end whatever the stop reason (a length reply's calls
    are reported; the harness marks them truncated)."""
    server.script(Stream([Call("write", '{"path": "a", "content": "x"}', "call_w")], stop=LENGTH))
    got = reply(model(server, api))
    assert got.stop.reason == LENGTH
    assert [(c.id, c.name) for c in got.tool_calls] == [("call_w", "write")]


@api_param
def test_usage_is_read(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("ok")], usage=Tokens(input=120, output=33, cache_read=900, reasoning=7)))
    usage = reply(model(server, api)).usage
    assert usage is not None
    assert (usage.input, usage.output, usage.cache_read) == (120, 33, 900)
    if api != "anthropic-messages":  # Anthropic reports no reasoning count
        assert usage.reasoning == 7


@api_param
def test_a_reply_without_usage_has_none_or_zeros(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("ok")], usage=None))
    got = reply(model(server, api))
    assert got.text == "ok" and (got.usage is None or got.usage.output == 0)


@api_param
@pytest.mark.parametrize(("status", "retryable"), [(400, False), (401, False), (429, True), (500, True), (529, True)])
def test_http_errors_are_typed_with_status_and_body(server: LoopbackServer, api: str, status: int, retryable: bool) -> None:
    body = json.dumps({"error": {"type": "scripted_error", "message": "no luck"}})
    server.script(Fail(status, body))
    with pytest.raises(ProviderError) as caught:
        reply(model(server, api, provider="loopprov"))
    error = caught.value
    assert (error.provider, error.status, error.body, error.kind, error.retryable) == ("loopprov", status, body, "scripted_error", retryable)
    assert str(error).startswith(f"loopprov: HTTP {status} scripted_error: ")
    assert "no luck" in str(error)


ERROR_EVENTS = {
    "openai-completions": b'data: {"error": {"code": 502, "message": "upstream died"}}\n\n',
    "openai-responses": b'event: response.failed\ndata: {"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "upstream died"}}}\n\n',
    "anthropic-messages": b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "upstream died"}}\n\n',
    "google-generative-ai": b'data: {"error": {"code": 503, "status": "UNAVAILABLE", "message": "upstream died"}}\n\n',
}


@api_param
def test_an_error_event_mid_stream_is_a_provider_error(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("start"), RawBytes(ERROR_EVENTS[api])]))
    with pytest.raises(ProviderError) as caught:
        reply(model(server, api))
    assert caught.value.status is None and caught.value.retryable
    assert "upstream died" in str(caught.value) and "error event" in str(caught.value)


@api_param
def test_a_malformed_event_is_named(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("a"), RawBytes(b"event: content_block_delta\ndata: {not json\n\n")]))
    with pytest.raises(MalformedEvent) as caught:
        reply(model(server, api, provider="p1"))
    assert str(caught.value).startswith("p1: event ") and "not JSON" in str(caught.value)


@api_param
def test_a_stall_ends_in_the_clients_timeout(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("a"), Stall(), Text("never")]))
    with pytest.raises(WireTimeout) as caught:
        reply(model(server, api, provider="slowprov"), timeout=0.5)
    assert server.stalled.is_set()
    assert str(caught.value).startswith("slowprov: no answer from http://127.0.0.1:") and "timeout" in str(caught.value)
    assert caught.value.retryable


@api_param
def test_a_stall_released_by_the_test_finishes_the_reply(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("before "), Stall(), Text("after")]))
    wire = model(server, api)

    async def run() -> str:
        client = client_for(wire, timeout=30)
        task = asyncio.ensure_future(collect(client.stream(ask())))
        await asyncio.get_running_loop().run_in_executor(None, server.stalled.wait, 30)
        server.release()
        return (await task).text

    assert asyncio.run(run()) == "before after"


@api_param
def test_slow_chunks_still_make_one_reply(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("a"), Delay(0.01), Text("b"), Delay(0.01), Text("c")]))
    assert reply(model(server, api)).text == "abc"


@api_param
def test_a_cut_connection_is_a_stream_cut(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("half an ans"), Cut()]))
    with pytest.raises(StreamCut) as caught:
        reply(model(server, api, provider="cutprov"))
    assert str(caught.value).startswith("cutprov: ") and caught.value.retryable


@api_param
def test_a_body_that_ends_without_the_end_event_is_a_stream_cut(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("no end")], end=False))
    with pytest.raises(StreamCut) as caught:
        reply(model(server, api))
    assert "before its end event" in str(caught.value)


@api_param
def test_a_refused_connection_names_the_provider(api: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from eukhe.inference.wire.plan import WireModel

    wire = WireModel("deadprov", "m", api, f"http://127.0.0.1:{port}/v1", "k")
    with pytest.raises(ConnectFailed) as caught:
        reply(wire)
    assert str(caught.value).startswith(f"deadprov: cannot connect to http://127.0.0.1:{port}/")


class Repeating(Retryable):
    pass


@api_param
def test_the_filter_sees_every_delta_and_its_error_ends_the_stream(server: LoopbackServer, api: str) -> None:
    seen: list[Delta] = []

    def watch(delta: Delta) -> None:
        seen.append(delta)

    server.script(Stream([Thinking("t1"), Text("a"), Text("b")]))
    got = reply(model(server, api), ask(thinking="high"), filter=watch)
    assert [d.text for d in seen] == ["t1", "a", "b"] and got.text == "ab"

    def cut(delta: Delta) -> None:
        if delta.text == "loop":
            raise Repeating("stream_repeating")

    server.script(Stream([Text("ok "), Text("loop"), Text("never")]))
    with pytest.raises(Repeating):
        reply(model(server, api), filter=cut)
    # the next attempt (a new request) is served normally
    server.script(Stream([Text("fresh")]))
    assert reply(model(server, api)).text == "fresh"
