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
    assert usage.reasoning == 7  # Anthropic: usage.output_tokens_details.thinking_tokens


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


@api_param
def test_an_empty_reply_and_a_thinking_only_reply(server: LoopbackServer, api: str) -> None:
    server.script(Stream([]), Stream([Thinking("only thoughts")]))
    empty = reply(model(server, api))
    assert (empty.text, empty.thinking, empty.tool_calls, empty.stop.reason) == ("", "", (), STOP)
    thinking = reply(model(server, api), ask(thinking="high"))
    assert (thinking.text, thinking.thinking) == ("", "only thoughts")


@api_param
def test_retry_after_is_read_from_a_429(server: LoopbackServer, api: str) -> None:
    server.script(Fail(429, "{}", (("retry-after", "7"),)), Fail(429, "{}", (("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"),)))
    for expected in (7.0, 0.0):  # an HTTP date gone by: no wait
        with pytest.raises(ProviderError) as caught:
            reply(model(server, api))
        assert caught.value.retry_after == expected


def test_a_responder_serves_what_each_request_asks(server: LoopbackServer) -> None:
    from spec.loopback import Recorded

    def answer(request: Recorded) -> Stream:
        return Stream([Text("echo: " + request.body["messages"][-1]["content"])])

    server.responder = answer
    wire = model(server, "openai-completions")

    async def run() -> list[str]:
        replies = await asyncio.gather(*(collect(client_for(wire, timeout=10).stream(ask(f"q{i}"))) for i in range(8)))
        return [r.text for r in replies]

    assert asyncio.run(run()) == [f"echo: q{i}" for i in range(8)]
    assert len(server.wait_requests(8)) == 8


def test_no_scripted_reply_is_an_http_500(server: LoopbackServer) -> None:
    with pytest.raises(ProviderError) as caught:
        reply(model(server, "anthropic-messages"))
    assert caught.value.status == 500 and "no scripted reply" in caught.value.body


def _sse(obj: object, event: str | None = None) -> RawBytes:
    head = f"event: {event}\n" if event else ""
    return RawBytes(f"{head}data: {json.dumps(obj)}\n\n".encode())


MALFORMED = [
    ("openai-completions", _sse([1, 2]), "not a JSON object"),
    ("openai-completions", _sse({"choices": {"x": 1}}), "choices is not a list"),
    ("openai-completions", _sse({"choices": [3]}), "a choice is not an object"),
    ("openai-completions", _sse({"choices": [{"delta": "x"}]}), "delta is not an object"),
    ("openai-completions", _sse({"choices": [{"delta": {"tool_calls": ["x"]}}]}), "a tool call delta is not an object"),
    ("openai-completions", _sse({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]}), "function is not an object"),
    ("openai-responses", _sse({"type": "response.output_text.delta", "output_index": "0", "delta": "x"}), "output_index is not an integer"),
    ("openai-responses", _sse({"type": "response.output_text.delta", "output_index": 0, "delta": 5}), "delta is not a string"),
    ("openai-responses", _sse({"type": "response.completed"}), "without its response object"),
    ("anthropic-messages", _sse({"type": "content_block_delta", "index": "1", "delta": {}}), "index is not an integer"),
    ("anthropic-messages", _sse({"type": "content_block_start", "index": 5}), "without its content_block"),
    ("anthropic-messages", _sse({"type": "content_block_delta", "index": 5}), "without its delta"),
    ("anthropic-messages", _sse({"type": "content_block_delta", "index": 9, "delta": {"type": "input_json_delta", "partial_json": "{"}}), "no tool_use block"),
    ("anthropic-messages", _sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": None}}), "text is not a string"),
    ("google-generative-ai", _sse("text"), "not a JSON object"),
    ("google-generative-ai", _sse({"candidates": {}}), "candidates is not a list"),
    ("google-generative-ai", _sse({"candidates": [1]}), "a candidate is not an object"),
    ("google-generative-ai", _sse({"candidates": [{"content": {"parts": [1]}}]}), "a part is not an object"),
]


@pytest.mark.parametrize(("api", "frame", "says"), MALFORMED)
def test_an_event_of_the_wrong_shape_is_malformed(server: LoopbackServer, api: str, frame: RawBytes, says: str) -> None:
    server.script(Stream([Text("a"), frame, Text("b")]))
    with pytest.raises(MalformedEvent) as caught:
        reply(model(server, api, provider="shapeprov"))
    assert str(caught.value).startswith("shapeprov: ") and says in str(caught.value)


def test_events_the_apis_add_are_read_or_skipped(server: LoopbackServer) -> None:
    """Ollama's object arguments, Google's array chunks and thought signatures, Responses'
    encrypted reasoning and its top-level error event, Anthropic's redacted thinking and a text
    block that starts with text, unknown events skipped."""
    ollama = {"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "o1", "function": {"name": "read", "arguments": {"path": "é"}}}]}}]}
    server.script(Stream([_sse(ollama)], stop="toolUse"))
    assert [(c.id, json.loads(c.arguments)) for c in reply(model(server, "openai-completions")).tool_calls] == [("o1", {"path": "é"})]

    chunk = [{"candidates": [{"content": {"parts": [{"text": "hi", "thoughtSignature": "g-sig"}]}}]}]
    server.script(Stream([_sse(chunk), _sse([]), _sse({"usageMetadata": {"promptTokenCount": 3}})]))
    got = reply(model(server, "google-generative-ai"))
    assert (got.text, got.signatures) == ("hi", ("g-sig",))

    item = {"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "encrypted_content": "enc"}}
    server.script(Stream([_sse(item), _sse({"type": "response.something_new", "output_index": 0})]))
    assert reply(model(server, "openai-responses")).signatures == ("enc",)
    server.script(Stream([_sse({"type": "error", "code": "rate_limit_exceeded", "message": "slow"})]))
    with pytest.raises(ProviderError) as caught:
        reply(model(server, "openai-responses"))
    assert caught.value.kind == "rate_limit_exceeded"

    redacted = {"type": "content_block_start", "index": 7, "content_block": {"type": "redacted_thinking", "data": "r-data"}}
    started = {"type": "content_block_start", "index": 8, "content_block": {"type": "text", "text": "pre"}}
    other = {"type": "content_block_delta", "index": 8, "delta": {"type": "citations_delta"}}
    server.script(Stream([_sse(redacted), _sse(started), _sse(other), Text("post")]))
    got = reply(model(server, "anthropic-messages"))
    assert got.signatures == ("r-data",) and got.text == "prepost"


@api_param
def test_temperature_and_service_tier_are_sent(server: LoopbackServer, api: str) -> None:
    server.script(Stream([Text("a")]))
    reply(model(server, api, reasoning=False, compat={"supportsStore": True}), ask(temperature=0.0, service_tier="flex"))
    text = json.dumps(server.last.body)
    assert '"temperature": 0.0' in text
    if api in ("openai-completions", "openai-responses", "anthropic-messages"):
        assert server.last.body["service_tier"] == "flex"
    if api == "openai-completions":
        assert server.last.body["store"] is False


def test_a_guards_feed_becomes_a_filter_that_raises_its_cut(server: LoopbackServer) -> None:
    """events.filter_of: each delta is fed with its block (text and thinking told apart); the
    first non-None answer is raised as it is and ends the stream."""
    from collections.abc import Hashable

    from eukhe.inference.wire.events import filter_of

    fed: list[tuple[Hashable, str]] = []

    class Cut(Exception):
        pass

    def feed(block: Hashable, text: str) -> Cut | None:
        fed.append((block, text))
        return Cut(text) if text == "again" else None

    server.script(Stream([Thinking("t"), Text("once"), Text("again"), Text("never")]))
    with pytest.raises(Cut, match="again"):
        reply(model(server, "anthropic-messages"), ask(thinking="high"), filter=filter_of(feed))
    assert [text for _, text in fed] == ["t", "once", "again"]
    assert fed[0][0][0] == "thinking" and fed[1][0][0] == "text" and fed[1][0] == fed[2][0]


def test_a_character_split_across_network_chunks_arrives_whole(server: LoopbackServer) -> None:
    head = b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xc3'
    tail = b'\xa9 \xf0\x9f\x98'
    end = b'\x80"}}]}\n\n'
    server.script(Stream([RawBytes(head), RawBytes(tail), RawBytes(end)]))
    assert reply(model(server, "openai-completions")).text == "café 😀"


def test_a_reply_past_its_deadline_fails_even_while_bytes_trickle(server: LoopbackServer) -> None:
    server.script(Stream([Text("a"), Delay(0.4), Text("b"), Delay(0.4), Text("c"), Delay(0.4), Text("d")]))
    with pytest.raises(WireTimeout) as caught:
        reply(model(server, "openai-completions", provider="trickle"), deadline=0.3)
    assert str(caught.value).startswith("trickle: no whole reply from http://127.0.0.1:") and "deadline (0.3 s)" in str(caught.value)
    server.script(Stream([Text("quick")]))
    assert reply(model(server, "openai-completions"), deadline=30).text == "quick"


@api_param
def test_a_200_that_is_no_event_stream_is_named(server: LoopbackServer, api: str) -> None:
    server.script(Fail(200, '{"object": "chat.completion", "choices": []}'))
    with pytest.raises(MalformedEvent) as caught:
        reply(model(server, api, provider="jsonprov"))
    assert str(caught.value).startswith("jsonprov: HTTP 200 answered application/json, not an event stream: ")


def test_release_ends_the_stall_under_way_and_a_later_stall_holds_again(server: LoopbackServer) -> None:
    server.script(Stream([Text("one"), Stall(), Text(" two")]), Stream([Text("three"), Stall(), Text(" four")]))
    wire = model(server, "openai-responses")

    async def one_reply() -> str:
        task = asyncio.ensure_future(collect(client_for(wire, timeout=30).stream(ask())))
        await asyncio.get_running_loop().run_in_executor(None, server.stalled.wait, 30)
        server.stalled.clear()
        server.release()
        return (await task).text

    assert asyncio.run(one_reply()) == "one two"
    assert asyncio.run(one_reply()) == "three four"
