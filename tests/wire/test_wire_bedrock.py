"""Amazon Bedrock ConverseStream (api "bedrock-converse-stream"), over the loopback server: the
request (path with the model id percent-encoded, the auth modes: a Bedrock API key as Bearer,
SigV4 from AWS credentials, none; the region; the Converse body: messages of content blocks, the
reasoning sent back first, tools, forced choice, Claude's thinking in
additionalModelRequestFields, block binding, cache points, images) and the stream (AWS
event-stream frames: text, reasoning with its signature or redacted content, calls in pieces,
the stop reasons, usage, exception and error frames, HTTP errors, a cut, a frame that does not
parse). What botocore makes of the same requests and streams is judged in test_sdk_bedrock.py."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from wire_support import ask, model, reply

from eukhe.inference import force
from eukhe.inference.wire import CLIENTS, client_for
from eukhe.inference.wire.bedrock_converse_stream import BLOCK_BINDING_BETA, BedrockConverseStream
from eukhe.inference.wire.events import BadRequest, MalformedEvent, ProviderError, StreamCut, ToolCall
from eukhe.inference.wire.plan import Image, Message, Request, Thought, Tool, WireModel
from spec.loopback import Call, Cut, ErrorEvent, Fail, LoopbackServer, RawBytes, Recorded, Stream, Text, Thinking, Tokens, event_frame

API = "bedrock-converse-stream"
OPUS_46 = "us.anthropic.claude-opus-4-6-v1:0"  # adaptive thinking, prompt caching (claude-adaptive-4-6)
OPUS_5 = "us.anthropic.claude-opus-5-v1:0"  # adaptive, block binding, caching (claude-adaptive)
SONNET_37 = "anthropic.claude-3-7-sonnet-20250219-v1:0"  # manual thinking, caching (claude-cached)
HAIKU_3 = "anthropic.claude-3-haiku-20240307-v1:0"  # no caching (claude-uncached)
PROFILE = "arn:aws:bedrock:eu-west-3:123456789012:application-inference-profile/abc123"  # names no model
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
PNG = Image("image/png", b"\x89PNG")
REDACTED = base64.b64encode(b"\x00opaque redacted thinking\xff").decode()
AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_BEDROCK_FORCE_CACHE")


@pytest.fixture(autouse=True)
def no_aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in AWS:
        monkeypatch.delenv(name, raising=False)


def bedrock(server: LoopbackServer, model_id: str = OPUS_46, *, key: str = "br-key", **fields: Any) -> WireModel:
    return replace(model(server, API, model_id, provider="amazon-bedrock", key=key), **fields)


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    return server.last


def frame(event: str, payload: dict[str, Any]) -> RawBytes:
    return RawBytes(event_frame({":event-type": event, ":content-type": "application/json", ":message-type": "event"}, json.dumps(payload).encode()))


def exception(kind: str, message: str) -> RawBytes:
    return RawBytes(event_frame({":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"}, json.dumps({"message": message}).encode()))


def conversation() -> tuple[Message, ...]:
    call = ToolCall(0, "tooluse_1", "read", '{"path": "a.txt"}')
    thoughts = (Thought("Open it.", "sig-1"), Thought("", REDACTED, redacted=True))
    return (
        Message("user", "read a.txt"),
        Message("assistant", "Reading.", tool_calls=(call,), thoughts=thoughts),
        Message("tool", "no such file", tool_call_id="tooluse_1", tool_name="read", is_error=True),
        Message("user", "thanks"),
    )


# -- the request ---------------------------------------------------------------------------------


def test_the_converse_stream_request(server: LoopbackServer) -> None:
    got = sent(server, bedrock(server, HAIKU_3, reasoning=False), Request(conversation(), system="Be brief.", tools=(READ,), temperature=0.3))
    assert (got.method, got.path, got.query, got.api) == ("POST", "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream", {}, API)
    assert got.headers["authorization"] == "Bearer br-key" and got.headers["content-type"] == "application/json"
    assert "x-amz-date" not in got.headers
    assert got.body == {
        "messages": [
            {"role": "user", "content": [{"text": "read a.txt"}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Open it.", "signature": "sig-1"}}},
                {"reasoningContent": {"redactedContent": REDACTED}},
                {"text": "Reading."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "read", "input": {"path": "a.txt"}}},
            ]},
            {"role": "user", "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "no such file"}], "status": "error"}},
                {"text": "thanks"},
            ]},
        ],
        "system": [{"text": "Be brief."}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "read", "description": "Read a file", "inputSchema": {"json": dict(READ.parameters)}}}]},
        "inferenceConfig": {"maxTokens": 4096, "temperature": 0.3},
    }


def test_the_body_is_the_bytes_the_aws_sdk_writes(server: LoopbackServer) -> None:
    got = sent(server, bedrock(server), ask("naïve «quoted»"))
    assert got.raw == json.dumps(got.body).encode()  # ASCII, spaced separators: boto3's serializer


@pytest.mark.parametrize("model_id, path_id", [
    (OPUS_46, "us.anthropic.claude-opus-4-6-v1%3A0"),
    (PROFILE, "arn%3Aaws%3Abedrock%3Aeu-west-3%3A123456789012%3Aapplication-inference-profile%2Fabc123"),
])
def test_the_model_id_is_percent_encoded_whole(server: LoopbackServer, model_id: str, path_id: str) -> None:
    assert sent(server, bedrock(server, model_id)).path == f"/model/{path_id}/converse-stream"


def test_the_bearer_key_of_the_environment(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "env-bearer")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKID")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    assert sent(server, bedrock(server, key="")).headers["authorization"] == "Bearer env-bearer"
    assert sent(server, bedrock(server, key="provider-key")).headers["authorization"] == "Bearer provider-key"  # the provider's key first


@pytest.mark.parametrize("token", [None, "session/token+=="])
def test_aws_credentials_sign_with_sigv4(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, token: str | None) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKID")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    if token is not None:
        monkeypatch.setenv("AWS_SESSION_TOKEN", token)
    got = sent(server, bedrock(server, key=""))
    date = got.headers["x-amz-date"]
    signed = "content-type;host;x-amz-date" + (";x-amz-security-token" if token else "")
    assert got.headers["authorization"].startswith(f"AWS4-HMAC-SHA256 Credential=AKID/{date[:8]}/eu-west-3/bedrock/aws4_request, SignedHeaders={signed}, Signature=")
    assert got.headers.get("x-amz-security-token") == token


def test_no_credentials_is_a_bad_request(server: LoopbackServer) -> None:
    with pytest.raises(BadRequest, match="AWS_BEARER_TOKEN_BEDROCK"):
        reply(bedrock(server, key=""))
    assert server.requests == []


def built_url(wire: WireModel) -> str:
    client = client_for(wire)
    request = ask()
    return client.build(request, client.plan(request))[0]


@pytest.mark.parametrize("base, model_id, environment, url", [
    ("https://bedrock-runtime.us-east-1.amazonaws.com", OPUS_46, {}, "https://bedrock-runtime.us-east-1.amazonaws.com"),
    ("https://bedrock-runtime.us-east-1.amazonaws.com", OPUS_46, {"AWS_REGION": "eu-west-1"}, "https://bedrock-runtime.eu-west-1.amazonaws.com"),
    ("https://bedrock-runtime.us-east-1.amazonaws.com", OPUS_46, {"AWS_DEFAULT_REGION": "ap-south-1"}, "https://bedrock-runtime.ap-south-1.amazonaws.com"),
    ("https://bedrock-runtime-fips.us-east-1.amazonaws.com", OPUS_46, {"AWS_REGION": "us-west-2"}, "https://bedrock-runtime-fips.us-west-2.amazonaws.com"),
    ("https://bedrock-runtime.us-east-1.amazonaws.com", PROFILE, {"AWS_REGION": "eu-west-1"}, "https://bedrock-runtime.eu-west-3.amazonaws.com"),
    ("https://proxy.example.com/bedrock", OPUS_46, {"AWS_REGION": "eu-west-1"}, "https://proxy.example.com/bedrock"),
])
def test_the_region_picks_the_standard_endpoint(monkeypatch: pytest.MonkeyPatch, base: str, model_id: str, environment: dict[str, str], url: str) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    wire = WireModel("amazon-bedrock", model_id, API, base, "k", reasoning=True)
    assert built_url(wire).startswith(url + "/model/")


@pytest.mark.parametrize("base, environment, region", [
    ("https://bedrock-runtime.ca-central-1.amazonaws.com", {}, "ca-central-1"),
    ("https://proxy.example.com", {}, "us-east-1"),
    ("https://proxy.example.com", {"AWS_DEFAULT_REGION": "sa-east-1"}, "sa-east-1"),
    ("https://proxy.example.com", {"AWS_DEFAULT_REGION": "sa-east-1", "AWS_REGION": "eu-north-1"}, "eu-north-1"),
])
def test_the_signing_region(monkeypatch: pytest.MonkeyPatch, base: str, environment: dict[str, str], region: str) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    client = client_for(WireModel("amazon-bedrock", OPUS_46, API, base, "k"))
    assert isinstance(client, BedrockConverseStream) and client.region() == region


@pytest.mark.parametrize("level, effort", [("minimal", "low"), ("low", "low"), ("medium", "medium"), ("high", "high")])
def test_adaptive_thinking_with_bedrocks_effort(server: LoopbackServer, level: str, effort: str) -> None:
    got = sent(server, bedrock(server, OPUS_46, reasoning=True), ask(thinking=level, temperature=0.5))
    assert got.body["additionalModelRequestFields"] == {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort}}
    assert got.body["inferenceConfig"] == {"maxTokens": 4096}  # no temperature with thinking


def test_a_native_xhigh_is_the_ladders_wire_string(server: LoopbackServer) -> None:
    wire = bedrock(server, OPUS_46, reasoning=True, thinking_level_map={"xhigh": "xhigh"})
    assert sent(server, wire, ask(thinking="xhigh")).body["additionalModelRequestFields"]["output_config"] == {"effort": "xhigh"}
    capped = bedrock(server, OPUS_46, reasoning=True)  # no xhigh on its ladder: clamped to high
    assert sent(server, capped, ask(thinking="xhigh")).body["additionalModelRequestFields"]["output_config"] == {"effort": "high"}


def test_manual_thinking_has_a_budget_below_max_tokens(server: LoopbackServer) -> None:
    got = sent(server, bedrock(server, SONNET_37, reasoning=True), ask(thinking="high"))
    assert got.body["additionalModelRequestFields"] == {"thinking": {"type": "enabled", "budget_tokens": 16384}}
    assert got.body["inferenceConfig"] == {"maxTokens": 16384 + 4096}
    low = sent(server, bedrock(server, SONNET_37, reasoning=True), ask(thinking="low"))
    assert low.body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 2048 and low.body["inferenceConfig"] == {"maxTokens": 4096}
    off = sent(server, bedrock(server, SONNET_37, reasoning=True), ask(temperature=0.2))
    assert "additionalModelRequestFields" not in off.body and off.body["inferenceConfig"] == {"maxTokens": 4096, "temperature": 0.2}


def test_block_binding_outside_govcloud(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    fields = sent(server, bedrock(server, OPUS_5, reasoning=True), ask(thinking="medium")).body["additionalModelRequestFields"]
    assert fields == {
        "thinking": {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}},
        "output_config": {"effort": "medium"},
        "anthropic_beta": [BLOCK_BINDING_BETA],
    }
    assert "block_binding" not in sent(server, bedrock(server, OPUS_46, reasoning=True), ask(thinking="medium")).body["additionalModelRequestFields"]["thinking"]
    gov = sent(server, bedrock(server, "us-gov.anthropic.claude-opus-5-v1:0", reasoning=True), ask(thinking="medium")).body["additionalModelRequestFields"]
    assert gov == {"thinking": {"type": "adaptive"}, "output_config": {"effort": "medium"}}
    monkeypatch.setenv("AWS_REGION", "us-gov-west-1")
    assert sent(server, bedrock(server, OPUS_5, reasoning=True), ask(thinking="medium")).body["additionalModelRequestFields"] == gov


def marked_request() -> Request:
    view = Message("user", parts=(("view line 1\n", False), ("view line 2\n", True), ("words", False)))
    call = ToolCall(0, "t1", "read", "{}")
    return Request((view, Message("assistant", "", tool_calls=(call,)), Message("tool", "body", tool_call_id="t1", cache=True)),
                   system="Be brief.", system_cache=True, tools=(READ,))


POINT = {"cachePoint": {"type": "default"}}


def test_cache_points_at_the_marks_where_the_model_caches(server: LoopbackServer) -> None:
    body = sent(server, bedrock(server, OPUS_46), marked_request()).body
    assert body["system"] == [{"text": "Be brief."}, POINT]
    assert body["messages"][0]["content"] == [{"text": "view line 1\n"}, {"text": "view line 2\n"}, POINT, {"text": "words"}]
    assert body["messages"][2]["content"] == [{"toolResult": {"toolUseId": "t1", "content": [{"text": "body"}]}}, POINT]
    plain = sent(server, bedrock(server, HAIKU_3), marked_request()).body
    assert "cachePoint" not in json.dumps(plain)


def test_a_model_the_rulebook_names_not_caches_only_when_forced(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "cachePoint" not in json.dumps(sent(server, bedrock(server, PROFILE), marked_request()).body)
    explicit = bedrock(server, PROFILE, compat={"promptCaching": True})
    assert sent(server, explicit, marked_request()).body["system"] == [{"text": "Be brief."}, POINT]
    monkeypatch.setenv("AWS_BEDROCK_FORCE_CACHE", "1")
    assert sent(server, bedrock(server, PROFILE), marked_request()).body["system"] == [{"text": "Be brief."}, POINT]
    assert "cachePoint" not in json.dumps(sent(server, bedrock(server, HAIKU_3), marked_request()).body)  # the rulebook's false wins


def test_a_forced_call_names_its_tool_unless_manual_thinking_rejects_it(server: LoopbackServer) -> None:
    forced = force.ForcedRequest(1, True, force.soft_prompt("read"))
    request = Request((Message("user", "go"),), tools=(READ,), forced_tool="read", forced=forced)
    got = sent(server, bedrock(server, OPUS_46, reasoning=True), replace(request, thinking="high"))
    assert got.body["toolConfig"]["toolChoice"] == {"tool": {"name": "read"}}
    assert got.body["messages"][-1]["content"][-1]["text"].endswith(force.soft_prompt("read"))
    manual = sent(server, bedrock(server, SONNET_37, reasoning=True), replace(request, thinking="high"))
    assert "toolChoice" not in manual.body["toolConfig"] and manual.body["additionalModelRequestFields"]["thinking"]["type"] == "enabled"


def test_strict_tools_per_the_plan(server: LoopbackServer) -> None:
    tools = (READ, Tool("write", "", {"type": "object"}, priority=2))
    body = sent(server, bedrock(server, OPUS_46, compat={"strictCap": 1}), Request((Message("user", "go"),), tools=tools)).body
    assert body["toolConfig"]["tools"] == [
        {"toolSpec": {"name": "read", "description": "Read a file", "inputSchema": {"json": dict(READ.parameters)}}},
        {"toolSpec": {"name": "write", "inputSchema": {"json": {"type": "object"}}, "strict": True}},  # no empty description
    ]


def test_images_go_as_image_blocks(server: LoopbackServer) -> None:
    messages = (Message("user", "look", images=(PNG,)), Message("assistant", "", tool_calls=(ToolCall(0, "c1", "zoom", "{}"),)),
                Message("tool", "", tool_call_id="c1", tool_name="zoom", images=(PNG,)))
    body = sent(server, bedrock(server, input=("text", "image")), Request(messages)).body
    image = {"image": {"format": "png", "source": {"bytes": PNG.base64}}}
    assert body["messages"][0]["content"] == [{"text": "look"}, image]
    assert body["messages"][2]["content"] == [{"toolResult": {"toolUseId": "c1", "content": [image]}}]
    text_only = sent(server, bedrock(server), Request(messages)).body
    assert '"image"' not in json.dumps(text_only)  # a model that takes text only gets a line saying so


# -- the stream ----------------------------------------------------------------------------------


def test_the_stream_is_read(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("Hmm. ", "s1"), Thinking("Yes.", "s1"), Text("Rea"), Text("ding."), Call("read", '{"path": "a"}', "t1", pieces=4), Call("date", "{}", "t2")],
                         stop="toolUse", usage=Tokens(30, 8, cache_read=100, cache_write=20)))
    got = reply(bedrock(server), ask(thinking="high"))
    assert (got.text, got.thinking, got.signatures) == ("Reading.", "Hmm. Yes.", ("s1",))
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [("t1", "read", '{"path": "a"}'), ("t2", "date", "{}")]
    assert (got.stop.reason, got.stop.raw) == ("toolUse", "tool_use")
    assert got.usage is not None and (got.usage.input, got.usage.output, got.usage.cache_read, got.usage.cache_write) == (30, 8, 100, 20)


def test_a_signature_in_pieces_and_redacted_content_go_out_whole_at_the_blocks_stop(server: LoopbackServer) -> None:
    raw = b"\x00\x01 redacted \xfe"
    pieces = [frame("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"reasoningContent": {"text": "a"}}}),
              frame("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"reasoningContent": {"signature": "sig-"}}}),
              frame("contentBlockDelta", {"contentBlockIndex": 5, "delta": {"reasoningContent": {"signature": "whole"}}}),
              frame("contentBlockStop", {"contentBlockIndex": 5}),
              frame("contentBlockDelta", {"contentBlockIndex": 6, "delta": {"reasoningContent": {"redactedContent": base64.b64encode(raw[:4]).decode()}}}),
              frame("contentBlockDelta", {"contentBlockIndex": 6, "delta": {"reasoningContent": {"redactedContent": base64.b64encode(raw[4:]).decode()}}}),
              frame("contentBlockStop", {"contentBlockIndex": 6})]
    server.script(Stream([*pieces, Text("ok")]))
    got = reply(bedrock(server), ask(thinking="high"))
    assert got.signatures == ("sig-whole", base64.b64encode(raw).decode())
    server.script(Stream([pieces[0], pieces[1], Text("ok")]))  # a block that never stopped: its signature at messageStop
    assert reply(bedrock(server), ask(thinking="high")).signatures == ("sig-",)


@pytest.mark.parametrize("raw, reason", [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("model_context_window_exceeded", "length"),
    ("tool_use", "toolUse"), ("guardrail_intervened", "refusal"), ("content_filtered", "refusal"), ("malformed_model_output", "stop"),
])
def test_the_stop_reasons(server: LoopbackServer, raw: str, reason: str) -> None:
    server.script(Stream([Text("x")], raw_stop=raw))
    got = reply(bedrock(server))
    assert (got.stop.reason, got.stop.raw) == (reason, raw)
    assert got.refusal == ("" if reason == "refusal" else None)


def test_a_body_may_end_after_message_stop_without_metadata(server: LoopbackServer) -> None:
    server.script(Stream([Text("x")], usage=None))
    got = reply(bedrock(server))
    assert got.text == "x" and got.usage is None and got.stop.raw == "end_turn"


@pytest.mark.parametrize("kind, retryable", [
    ("throttlingException", True), ("serviceUnavailableException", True), ("internalServerException", True),
    ("modelStreamErrorException", True), ("validationException", False),
])
def test_exception_frames_are_typed(server: LoopbackServer, kind: str, retryable: bool) -> None:
    server.script(Stream([Text("x"), ErrorEvent(kind, "it went wrong «here»")]))
    with pytest.raises(ProviderError, match="it went wrong «here»") as error:
        reply(bedrock(server))
    assert (error.value.kind, error.value.status, error.value.retryable) == (kind, None, retryable)


def test_an_error_frame_is_a_provider_error(server: LoopbackServer) -> None:
    error_frame = RawBytes(event_frame({":message-type": "error", ":error-code": "InternalFailure", ":error-message": "stream broke"}, b""))
    server.script(Stream([Text("x"), error_frame]))
    with pytest.raises(ProviderError, match="stream broke") as error:
        reply(bedrock(server))
    assert (error.value.kind, error.value.status, error.value.retryable) == ("InternalFailure", None, True)


def test_http_errors_are_typed(server: LoopbackServer) -> None:
    throttled = (("x-amzn-ErrorType", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"), ("retry-after", "2"))
    server.script(Fail(429, '{"message": "Too many requests, please wait before trying again."}', throttled))
    with pytest.raises(ProviderError, match="Too many requests") as error:
        reply(bedrock(server))
    assert (error.value.status, error.value.kind, error.value.retryable, error.value.retry_after) == (429, "ThrottlingException", True, 2.0)
    server.script(Fail(400, '{"__type": "com.amazon.coral.validate#ValidationException", "message": "messages: blank text"}'))
    with pytest.raises(ProviderError) as invalid:
        reply(bedrock(server))
    assert (invalid.value.status, invalid.value.kind, invalid.value.retryable) == (400, "ValidationException", False)
    server.script(Fail(503, '{"error": {"type": "overloaded", "message": "a proxy in front"}}'))
    with pytest.raises(ProviderError) as proxied:
        reply(bedrock(server))
    assert (proxied.value.kind, proxied.value.retryable) == ("overloaded", True)


def test_a_cut_or_an_unfinished_stream_is_a_stream_cut(server: LoopbackServer) -> None:
    server.script(Stream([Text("half an ans"), Cut()]))
    with pytest.raises(StreamCut):
        reply(bedrock(server))
    server.script(Stream([Text("x")], end=False))
    with pytest.raises(StreamCut):
        reply(bedrock(server))
    half = event_frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b'{"contentBlockIndex": 0, "delta": {"text": "y"}}')
    server.script(Stream([Text("x"), RawBytes(half[: len(half) // 2])], end=False))
    with pytest.raises(StreamCut):
        reply(bedrock(server))


def flipped() -> RawBytes:
    data = bytearray(event_frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b'{"contentBlockIndex": 0, "delta": {"text": "y"}}'))
    data[-1] ^= 1
    return RawBytes(bytes(data))


@pytest.mark.parametrize("part, says", [
    (flipped(), "does not parse"),
    (RawBytes(event_frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b"{not json")), "not JSON"),
    (frame("contentBlockDelta", {"contentBlockIndex": 9, "delta": {"toolUse": {"input": "{}"}}}), "no toolUse start"),
    (frame("contentBlockDelta", {"contentBlockIndex": -1, "delta": {"text": "y"}}), "contentBlockIndex"),
    (frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "not base64!"}}}), "base64"),
    (frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": 3}}), "text is not a string"),
])
def test_a_malformed_frame_is_named(server: LoopbackServer, part: RawBytes, says: str) -> None:
    server.script(Stream([Text("a"), part]))
    with pytest.raises(MalformedEvent, match=says):
        reply(bedrock(server))


def test_a_reply_that_is_no_event_stream_is_malformed(server: LoopbackServer) -> None:
    from spec.loopback import Body

    server.script(Fail(200, '{"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}}}'))  # Converse's JSON, not the stream
    with pytest.raises(MalformedEvent, match="not an event stream"):
        reply(bedrock(server))
    server.script(Body(b'data: {"type": "message_start"}\n\n'))  # SSE bytes as the event stream's type
    with pytest.raises(MalformedEvent, match="does not parse"):
        reply(bedrock(server))


def test_the_provider_is_in_provider_caps_and_its_models_reach_this_client(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main
    from eukhe.inference import catalog

    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "amazon-bedrock"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[0] == "amazon-bedrock" and line.count("=") == 8
    shipped = [m for m in catalog.compiled() if m.provider == "amazon-bedrock"]
    assert shipped and {m.api for m in shipped} == {API} and CLIENTS[API] is BedrockConverseStream
