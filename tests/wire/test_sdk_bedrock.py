"""botocore judges the two pieces of the Bedrock wire that are ours by hand: the AWS
event-stream framing (impl/eukhe/inference/wire/eventstream.py) and the SigV4 signer
(impl/eukhe/inference/wire/sigv4.py). Production never imports botocore; these tests do.

1. Framing, both ways: botocore's ``EventStreamBuffer`` parses what the loopback server's encoder
   (spec.loopback.event_frame: the product only reads frames) frames (every
   header type, empty and large payloads, unicode), fed in pieces of every size; our decoder
   parses what botocore frames (botocore's own test vectors' encoder: its
   ``EventStreamMessage`` is built from our decoded parts and re-serialized by hand from
   botocore's prelude, so a byte botocore would read differently fails here). A flipped byte in
   the prelude or the message is refused by both.
2. Signing: ``botocore.auth.SigV4Auth`` computes the same Authorization header as our signer for
   the same request (method, URL with a model id that needs percent-encoding, headers, body),
   credentials (with and without a session token), region, service and time (botocore's clock
   ``get_current_datetime`` pinned to ours).

And boto3 judges our client (impl/eukhe/inference/wire/bedrock_converse_stream.py):

3. The same turn (tests/wire/test_sdk_requests.py's tool loop with thinking: system prompt,
   tools, the view with its cache marks, a reply with its signed and its redacted reasoning and a
   call, the result) sent by our client and by boto3's ``bedrock-runtime`` client
   ``converse_stream`` (endpoint_url the loopback, static credentials, region), for an adaptive,
   a block-binding and a manual-thinking Claude, signed with SigV4 (with and without a session
   token; botocore's clock pinned to the time our request was signed) or with a Bedrock API key
   (AWS_BEARER_TOKEN_BEDROCK): method, path, query, content type, the Authorization header, the
   signing date and token, and the body agree, byte for byte.
4. Our bodies are valid input of ConverseStream in botocore's service model: converted to the
   params ``converse_stream`` takes (the model id from the path; base64 blobs as bytes, by the
   input shape), botocore's ``ParamValidator`` finds no error (no unknown key, no missing or
   mistyped member), and botocore's rest-json serializer writes those params as the very bytes
   we sent, to the very path.
5. Every event the loopback renders for Bedrock validates against its event shape in botocore's
   model, and boto3's ``converse_stream`` reads every scripted loopback stream
   (tests/wire/test_sdk_loopback.py's) to what our client reads: text, thinking, signatures,
   calls, usage, the raw stop, the refusal; an exception frame and a cut make both fail.
6. Differential: seeded generated streams (text split over deltas with unicode; reasoning with
   signatures in pieces and redacted content; calls with their input split over many deltas,
   parallel calls; usage with cache reads and writes, or no metadata at all; every stop reason;
   exception and error frames mid-stream; Bedrock's ``p`` padding), framed here by hand
   (botocore has no encoder) and checked by botocore's parser, served whole (``Body``) and read
   by botocore's EventStream of the response and by our client: they agree on everything decoded,
   or fail alike (the same exception type and message). No expected value is written here.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import boto3
import botocore.auth
import botocore.serialize
import botocore.session
import pytest
import sdk_judges
import test_sdk_loopback as loopback_judges
import test_sdk_requests as request_judges
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials as BotoCredentials
from botocore.eventstream import EventStreamBuffer, ParserError
from botocore.exceptions import EventStreamError
from botocore.validate import ParamValidator
from sdk_judges import Failed, Judged, read_alike
from wire_support import ask, model, reply

from eukhe.inference import force
from eukhe.inference.wire import eventstream, sigv4
from eukhe.inference.wire.events import ProviderError
from eukhe.inference.wire.eventstream import Decoder, FramingError
from eukhe.inference.wire.plan import Message, Request, Thought
from spec.loopback import RENDER, Body, ErrorEvent, Int8, Int16, Int32, LoopbackServer, Recorded, Stream, Text, boto_params, event_frame

WHEN = datetime(2026, 1, 1, 12, 34, 56, tzinfo=timezone.utc)
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")

MESSAGES: list[tuple[dict[str, Any], bytes]] = [
    ({":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}, b'{"contentBlockIndex":0,"delta":{"text":"Hello"}}'),
    ({":message-type": "exception", ":exception-type": "throttlingException"}, '{"message":"Too many tokens — «slow»"}'.encode()),
    ({}, b""),
    ({"t": True, "f": False, "i8": Int8(-7), "i16": Int16(-300), "i32": Int32(70000), "i64": 2**40, "b": b"\x00\xff", "s": "naïve ✓",
      "ts": WHEN, "u": UUID}, b"x" * 70000),
]


def boto_parse(data: bytes, piece: int) -> list[Any]:
    buffer = EventStreamBuffer()
    out = []
    for at in range(0, len(data), piece):
        buffer.add_data(data[at : at + piece])
        out += list(buffer)
    return out


def plain(value: Any) -> Any:
    """A header value as botocore gives it: an int for every integer width, a timestamp's
    epoch milliseconds, a UUID's 16 bytes."""
    if isinstance(value, (Int8, Int16, Int32)):
        return value.value
    if isinstance(value, datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, uuid.UUID):
        return value.bytes
    return value


@pytest.mark.parametrize("piece", [1, 7, 4096, 1 << 20])
def test_botocore_parses_what_we_frame(piece: int) -> None:
    data = b"".join(event_frame(headers, payload) for headers, payload in MESSAGES)
    parsed = boto_parse(data, piece)
    assert len(parsed) == len(MESSAGES)
    for message, (headers, payload) in zip(parsed, MESSAGES):
        assert message.payload == payload
        got = dict(message.headers)
        want = {name: plain(value) for name, value in headers.items()}
        assert got == want


def boto_frame(headers: dict[str, Any], payload: bytes) -> bytes:
    """A message framed as botocore's serializer writes one for Bedrock's tests
    (botocore.eventstream has no encoder: this is the framing its parser and its test suite
    define, written with binascii.crc32 as botocore checks it)."""
    import binascii

    block = b""
    for name, value in headers.items():
        raw = name.encode()
        block += struct.pack("!B", len(raw)) + raw + struct.pack("!BH", 7, len(value.encode())) + value.encode()
    total = 16 + len(block) + len(payload)
    prelude = struct.pack("!II", total, len(block))
    prelude += struct.pack("!I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + block + payload
    return body + struct.pack("!I", binascii.crc32(body) & 0xFFFFFFFF)


@pytest.mark.parametrize("piece", [1, 5, 64, 1 << 20])
def test_our_decoder_parses_what_botocore_parses(piece: int) -> None:
    rng = random.Random(5)
    frames = []
    for k in range(40):
        headers = {":event-type": rng.choice(["messageStart", "contentBlockDelta", "metadata"]), ":content-type": "application/json", f"x-{k}": "é" * rng.randrange(0, 40)}
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000)))
        frames.append(boto_frame(headers, payload))
    data = b"".join(frames)
    theirs = boto_parse(data, 1 << 20)
    decoder = Decoder()
    ours = []
    for at in range(0, len(data), piece):
        ours += decoder.feed(data[at : at + piece])
    assert decoder.pending == 0
    assert [(m.headers, m.payload) for m in ours] == [(dict(m.headers), m.payload) for m in theirs]
    assert [event_frame(m.headers, m.payload) for m in ours] == frames  # string headers: our framing is byte for byte botocore's


@pytest.mark.parametrize("where", [0, 5, 9, 20, -1])
def test_a_flipped_byte_is_refused_by_both(where: int) -> None:
    frame = bytearray(event_frame({":event-type": "messageStop"}, b'{"stopReason":"end_turn"}'))
    frame[where] ^= 0x01
    with pytest.raises(ParserError):
        boto_parse(bytes(frame), 1 << 20)
    with pytest.raises(FramingError):
        Decoder().feed(bytes(frame))


def test_a_message_past_the_limits_is_refused() -> None:
    with pytest.raises(FramingError):
        event_frame({}, b"x" * eventstream.MAX_MESSAGE)
    prelude = struct.pack(">II", eventstream.MAX_MESSAGE + 1, 0)
    with pytest.raises(FramingError, match="limits"):
        Decoder().feed(prelude + struct.pack(">I", eventstream._crc(prelude)))


URLS = [
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-opus-4-6-v1%3A0/converse-stream",
    "https://bedrock-runtime.eu-west-3.amazonaws.com/model/mistral.mistral-large-2407-v1%3A0/converse-stream?b=2&a=1",
    "http://127.0.0.1:8123/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
]


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("token", [None, "FwoGZXIvYXdzEB-session/token+=="])
def test_botocore_signs_as_we_do(url: str, token: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: WHEN.replace(tzinfo=None))
    body = '{"messages":[{"role":"user","content":[{"text":"héllo"}]}]}'.encode()
    headers = {"content-type": "application/json", "accept": "application/vnd.amazon.eventstream", "x-amzn-bedrock-trace": "  a   b  "}
    region = url.split(".")[1] if "amazonaws" in url else "us-west-2"
    ours = sigv4.sign("POST", url, headers, body, sigv4.Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token), region, "bedrock", WHEN)
    request = AWSRequest(method="POST", url=url, headers=dict(headers), data=body)
    botocore.auth.SigV4Auth(BotoCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token), "bedrock", region).add_auth(request)
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-date"] == request.headers["X-Amz-Date"] == "20260101T123456Z"
    assert ours.get("x-amz-security-token") == request.headers.get("X-Amz-Security-Token")


def test_a_changed_request_changes_the_signature() -> None:
    credentials = sigv4.Credentials("AKID", "secret")
    base = sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", credentials, "us-east-1", "bedrock", WHEN)
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{ }", credentials, "us-east-1", "bedrock", WHEN) != base
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", credentials, "us-west-2", "bedrock", WHEN) != base
    assert sigv4.sign("POST", URLS[0], {"content-type": "application/json"}, b"{}", sigv4.Credentials("AKID", "other"), "us-east-1", "bedrock", WHEN) != base


# -- boto3 judges our client ------------------------------------------------------------------------

API = "bedrock-converse-stream"
REGION = "us-east-1"
ACCESS, SECRET = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEB-session/token+=="
KEY = request_judges.KEY
OPUS_46 = "us.anthropic.claude-opus-4-6-v1:0"  # adaptive thinking (claude-adaptive-4-6)
OPUS_5 = "us.anthropic.claude-opus-5-v1:0"  # adaptive thinking with block binding (claude-adaptive)
SONNET_37 = "anthropic.claude-3-7-sonnet-20250219-v1:0"  # manual thinking (claude-cached)
HAIKU_3 = "anthropic.claude-3-haiku-20240307-v1:0"  # no thinking, no cache (claude-uncached)
REDACTED = b"\x00opaque redacted reasoning \xff"
THOUGHTS = (Thought("Check the date first.", "sig-bedrock"), Thought("", base64.b64encode(REDACTED).decode(), redacted=True))
CORE = botocore.session.get_session()
BOTO = boto3.session.Session(botocore_session=CORE)  # one session: the service model is loaded once
CONVERSE_STREAM = CORE.get_service_model("bedrock-runtime").operation_model("ConverseStream")
EVENTS = CONVERSE_STREAM.output_shape.members["stream"]
FILTERED = frozenset({"guardrail_intervened", "content_filtered"})  # the StopReason values of withheld output
AUTHS = ("sigv4", "sigv4-session", "bearer")


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No AWS setting of this machine reaches boto3 or our client: each test sets its own."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                 "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_BEDROCK_FORCE_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))


def authorize(monkeypatch: pytest.MonkeyPatch, auth: str) -> str:
    """The environment of one auth mode for our client; the provider key it is given."""
    if auth == "bearer":
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", KEY)  # boto3 reads it; our client is given the key
        return KEY
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_REGION", REGION)
    if auth == "sigv4-session":
        monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    return ""


def sdk_client(base: str, auth: str = "sigv4") -> Any:
    return BOTO.client(
        "bedrock-runtime", endpoint_url=base, region_name=REGION, aws_access_key_id=ACCESS, aws_secret_access_key=SECRET,
        aws_session_token=TOKEN if auth == "sigv4-session" else None, config=Config(retries={"max_attempts": 1, "mode": "standard"}),
    )


def turn() -> Request:
    request = request_judges.loop_turn("openai-completions")
    view, assistant, result = request.messages
    return replace(request, messages=(view, replace(assistant, thoughts=THOUGHTS), result))


THINKING: dict[str, tuple[int, dict[str, Any]]] = {  # maxTokens and additionalModelRequestFields of the turn, at thinking "high"
    OPUS_46: (4096, {"thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}),
    OPUS_5: (4096, {"thinking": {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}, "output_config": {"effort": "high"},
                    "anthropic_beta": ["thinking-binding-controls-2026-08-01"]}),
    SONNET_37: (16384 + 4096, {"thinking": {"type": "enabled", "budget_tokens": 16384}}),
}


def sdk_arguments(request: Request, model_id: str) -> dict[str, Any]:
    """The turn in converse_stream's terms, spelled here from the turn."""
    view, assistant, result = request.messages
    point = {"cachePoint": {"type": "default"}}
    first: list[dict[str, Any]] = []
    for text, marked in view.parts:
        first += [{"text": text}] + ([point] if marked else [])
    max_tokens, fields = THINKING[model_id]
    return dict(
        modelId=model_id,
        messages=[
            {"role": "user", "content": first},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": THOUGHTS[0].text, "signature": THOUGHTS[0].signature}}},
                {"reasoningContent": {"redactedContent": REDACTED}},
                {"text": assistant.text},
                {"toolUse": {"toolUseId": "call_1", "name": "date", "input": {"id": 3}}},
            ]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "call_1", "content": [{"text": result.text}]}}, point]},
        ],
        system=[{"text": request.system}],
        toolConfig={"tools": [{"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": dict(t.parameters)}}} for t in request.tools]},
        inferenceConfig={"maxTokens": max_tokens},
        additionalModelRequestFields=fields,
    )


def read_whole(response: dict[str, Any]) -> None:
    for _event in response["stream"]:
        pass


class Prepared(Exception):
    """boto3's request, caught as it was about to go out."""

    def __init__(self, request: Any) -> None:
        super().__init__("prepared")
        self.request = request


def prepared(client: Any, arguments: dict[str, Any]) -> Recorded:
    """The request ``client`` prepares for ``arguments``, caught as it was about to go out, whole
    (URL, headers, bytes): botocore sends a Bearer key only over HTTPS, which the loopback is not."""

    def catch(request: Any, **_: Any) -> None:
        raise Prepared(request)

    client.meta.events.register("before-send.bedrock-runtime.ConverseStream", catch)
    with pytest.raises(Prepared) as caught:
        client.converse_stream(**arguments)
    request = caught.value.request
    parts = urlsplit(request.url)
    raw = bytes(request.body)
    headers = {k.lower(): v.decode() if isinstance(v, bytes) else v for k, v in request.headers.items()}
    return Recorded(request.method, parts.path, parse_qs(parts.query), headers, json.loads(raw), raw, API)


@pytest.mark.parametrize("model_id", list(THINKING))
@pytest.mark.parametrize("auth", AUTHS)
def test_converse_stream_as_boto3_sends_it(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch, model_id: str, auth: str) -> None:
    request = turn()
    key = authorize(monkeypatch, auth)
    server.script(Stream([Text("ok")]))
    reply(model(server, API, model_id, provider="amazon-bedrock", key=key), request)
    got = server.last
    if auth != "bearer":  # boto3 signs at the time ours was signed
        when = datetime.strptime(got.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
        monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    arguments = sdk_arguments(request, model_id)
    if auth == "bearer":
        judged = prepared(sdk_client(server.url.replace("http:", "https:"), auth), arguments)
    else:
        client = sdk_client(server.url, auth)
        judged = request_judges.theirs(server, lambda: read_whole(client.converse_stream(**arguments)))
    path = f"/model/{quote(model_id, safe='')}/converse-stream"
    assert (got.method, got.path, got.query) == (judged.method, judged.path, judged.query) == ("POST", path, {})
    assert got.headers["content-type"] == judged.headers["content-type"] == "application/json"
    for name in ("authorization", "x-amz-date", "x-amz-security-token"):
        assert got.headers.get(name) == judged.headers.get(name), name
    assert got.headers["authorization"].startswith(f"Bearer {KEY}" if auth == "bearer" else f"AWS4-HMAC-SHA256 Credential={ACCESS}/")
    assert got.body == judged.body
    assert got.raw == judged.raw


def test_botocore_signs_our_recorded_request_as_we_did(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's signer over the request as it arrived (its bytes, the headers we signed)."""
    authorize(monkeypatch, "sigv4-session")
    server.script(Stream([Text("ok")]))
    reply(model(server, API, OPUS_46, provider="amazon-bedrock", key=""), turn())
    got = server.last
    when = datetime.strptime(got.headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    signed = got.headers["authorization"].split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    headers = {name: got.headers[name] for name in signed if name not in ("x-amz-date", "x-amz-security-token", "host")}
    again = AWSRequest(method=got.method, url=server.url + got.path, headers=headers, data=got.raw)
    botocore.auth.SigV4Auth(BotoCredentials(ACCESS, SECRET, TOKEN), "bedrock", REGION).add_auth(again)
    assert again.headers["Authorization"] == got.headers["authorization"]


# -- our bodies are valid ConverseStream input --------------------------------------------------------


def sdk_params(recorded: Recorded) -> dict[str, Any]:
    """What ``converse_stream`` would be given for the recorded request: its model id (from the
    path) and its body as params."""
    model_id = unquote(recorded.path.split("/")[2])
    return {"modelId": model_id, **boto_params(recorded.body, CONVERSE_STREAM.input_shape)}


def validate(recorded: Recorded) -> None:
    """botocore's validator finds nothing wrong, and its serializer writes the same bytes."""
    params = sdk_params(recorded)
    report = ParamValidator().validate(params, CONVERSE_STREAM.input_shape)
    assert not report.has_errors(), report.generate_report()
    serialized = botocore.serialize.create_serializer("rest-json").serialize_to_request(params, CONVERSE_STREAM)
    assert serialized["url_path"] == recorded.path
    assert serialized["body"] == recorded.raw


def bodies(server: LoopbackServer, model_id: str) -> Iterator[Recorded]:
    requests = request_judges.requests_of("openai-completions")
    requests["a tool loop with thinking"] = turn()
    requests["a forced call"] = replace(requests["a forced call"], forced=force.ForcedRequest(1, True, force.soft_prompt("date")))
    requests["an error result"] = Request((Message("user", "go"), Message("tool", "failed", tool_call_id="c", is_error=True)), system="s", temperature=0.5)
    wire = replace(model(server, API, model_id, provider="amazon-bedrock", key=KEY), input=("text", "image"))
    for request in requests.values():
        server.script(Stream([Text("ok")]))
        reply(wire, request)
        yield server.last


@pytest.mark.parametrize("model_id", [*THINKING, HAIKU_3])
def test_our_bodies_validate_against_botocores_model(server: LoopbackServer, model_id: str) -> None:
    for recorded in bodies(server, model_id):
        validate(recorded)


def test_botocores_model_refuses_a_wrong_body() -> None:
    shape = CONVERSE_STREAM.input_shape
    for wrong in (
        {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "x", "cache_control": {"type": "ephemeral"}}]}]},  # Anthropic's mark
        {"modelId": "m", "messages": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "n"}}]}]},  # no input
        {"modelId": "m", "messages": [{"content": [{"text": "x"}]}], "inferenceConfig": {"maxTokens": "many"}},  # no role, a mistyped number
        {"modelId": "m", "messages": [], "inferenceConfig": {"max_tokens": 5}},
    ):
        assert ParamValidator().validate(wrong, shape).has_errors(), wrong


# -- boto3 reads the loopback's Bedrock streams --------------------------------------------------------


def judge_bedrock(base: str) -> Judged:
    """boto3's converse_stream read to a reply: text and reasoning deltas joined, each reasoning
    block's signature pieces joined and its redacted bytes joined (base64, as JSON carries them),
    each call's input joined per block; every event validated against its shape in the model."""
    response = sdk_client(base).converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}])
    text: list[str] = []
    thinking: list[str] = []
    signed: dict[int, list[str]] = {}
    redacted: dict[int, list[bytes]] = {}
    calls: dict[int, list[str]] = {}
    usage, raw = None, None
    for event in response["stream"]:
        (name, data), = event.items()
        report = ParamValidator().validate(data, EVENTS.members[name])
        assert not report.has_errors(), report.generate_report()
        index = data.get("contentBlockIndex")
        if name == "contentBlockStart" and "toolUse" in data["start"]:
            calls[index] = [data["start"]["toolUse"]["toolUseId"], data["start"]["toolUse"]["name"], ""]
        elif name == "contentBlockDelta":
            delta = data["delta"]
            if "text" in delta:
                text.append(delta["text"])
            elif "toolUse" in delta:
                calls[index][2] += delta["toolUse"]["input"]
            elif "reasoningContent" in delta:
                reasoning = delta["reasoningContent"]
                thinking.append(reasoning.get("text", ""))
                if "signature" in reasoning:
                    signed.setdefault(index, []).append(reasoning["signature"])
                if "redactedContent" in reasoning:
                    redacted.setdefault(index, []).append(reasoning["redactedContent"])
        elif name == "messageStop":
            raw = data["stopReason"]
        elif name == "metadata":
            u = data["usage"]
            usage = (u["inputTokens"], u["outputTokens"], u.get("cacheReadInputTokens", 0), u.get("cacheWriteInputTokens", 0), 0)
    if raw is None:
        raise RuntimeError("the stream ended before messageStop")
    signatures = tuple("".join(pieces) for pieces in signed.values()) + tuple(base64.b64encode(b"".join(p)).decode() for p in redacted.values())
    call_list = tuple((c[0], c[1], json.loads(c[2])) for c in calls.values())
    return Judged("".join(text), "".join(thinking), signatures, call_list, usage, raw, "" if raw in FILTERED else None)


def judged(base: str) -> Judged | Failed:
    try:
        return judge_bedrock(base)
    except Exception as error:  # whatever boto3 raises (EventStreamError, its urllib3's, an assert of a shape)
        return Failed(type(error).__name__, str(error))


THROTTLED = ErrorEvent("throttlingException", "Too many tokens, please wait before trying again.")


def bedrock_script(name: str) -> Stream:
    if name == "error":
        return Stream([Text("par"), THROTTLED])
    return loopback_judges.script("anthropic-messages", name)


@pytest.mark.parametrize("name", [*loopback_judges.SCRIPTS, *loopback_judges.FAILING])
def test_boto3_reads_the_bedrock_loopback_stream_as_our_client_does(server: LoopbackServer, name: str) -> None:
    scripted = bedrock_script(name)
    frames = [frame for frame in RENDER[API](scripted, "m") if isinstance(frame, bytes)]
    assert len(boto_parse(b"".join(frames), 1 << 20)) == len(frames)  # every frame is one botocore reads
    server.script(scripted)
    theirs = judged(server.url)
    assert server.last.api == API
    server.script(scripted)
    wire = model(server, API, provider="amazon-bedrock", key=KEY)
    read_alike(name, theirs, lambda thinking: reply(wire, ask(thinking="high")) if thinking else reply(wire), "anthropic-messages", error=THROTTLED.message, signed=True)
    if isinstance(theirs, Judged):
        assert theirs.text == "".join(p.text for p in scripted.parts if isinstance(p, Text))
    elif name == "error":
        assert "throttlingException" in theirs.said


# -- differential: generated streams, botocore and our client -----------------------------------------

SEEDS = range(40)
STOPS = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "guardrail_intervened", "content_filtered", "model_context_window_exceeded")
EXCEPTIONS = ("throttlingException", "serviceUnavailableException", "internalServerException", "modelStreamErrorException", "validationException")
WORDS = ("Hello", "wörld", "✓", "漢字", "«naïve»", "🚀 rocket", " ", "\n", "tab\t", 'quote "x"', "back\\slash", "ünïcödé", "")
PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def pieces_of(rng: random.Random, text: str, most: int) -> list[str]:
    cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randrange(0, most)))) if len(text) > 1 else []
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def generated(seed: int) -> list[tuple[dict[str, str], bytes]]:
    """One ConverseStream reply drawn from the seed, as (headers, payload) messages."""
    rng = random.Random(seed)
    out: list[tuple[dict[str, str], bytes]] = []

    def event(name: str, payload: dict[str, Any]) -> None:
        if rng.random() < 0.3:
            payload = {**payload, "p": PAD[: rng.randrange(1, len(PAD))]}  # Bedrock pads its events
        out.append(({":event-type": name, ":content-type": "application/json", ":message-type": "event"}, json.dumps(payload, ensure_ascii=rng.random() < 0.5).encode()))

    def failure() -> None:
        message = rng.choice(["Too many requests", "Model stream broke «mid-way»", "Service unavailable"])
        if rng.random() < 0.8:
            out.append(({":exception-type": rng.choice(EXCEPTIONS), ":content-type": "application/json", ":message-type": "exception"}, json.dumps({"message": message}).encode()))
        else:
            out.append(({":message-type": "error", ":error-code": "InternalFailure", ":error-message": message}, b""))

    event("messageStart", {"role": "assistant"})
    blocks = rng.randrange(0, 6)
    fail_at = rng.randrange(0, blocks + 1) if rng.random() < 0.3 else None
    for index in range(blocks):
        if index == fail_at:
            failure()
            return out
        kind = rng.choice(("text", "reasoning", "redacted", "tool", "tool"))
        if kind == "text":
            for piece in pieces_of(rng, "".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 12))) or "x", 8):
                event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}})
        elif kind == "reasoning":
            for piece in pieces_of(rng, "".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 10))) or "y", 6):
                event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": piece}}})
            if rng.random() < 0.9:
                signature = base64.b64encode(rng.randbytes(rng.randrange(8, 64))).decode()
                for piece in pieces_of(rng, signature, 2):
                    event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": piece}}})
        elif kind == "redacted":
            for _ in range(rng.randrange(1, 3)):
                data = base64.b64encode(rng.randbytes(rng.randrange(1, 40))).decode()
                event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"redactedContent": data}}})
        else:
            arguments = json.dumps({"path": f"src/{rng.choice(WORDS)}.py", "lines": [rng.randrange(100) for _ in range(rng.randrange(0, 4))], "note": rng.choice(WORDS)}, ensure_ascii=False)
            event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": f"tooluse_{seed}_{index}", "name": rng.choice(["read", "bash", "date"])}}})
            for piece in pieces_of(rng, arguments, 12):
                event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
        event("contentBlockStop", {"contentBlockIndex": index})
    if fail_at == blocks:
        failure()
        return out
    event("messageStop", {"stopReason": STOPS[seed % len(STOPS)]})  # every reason, each on several shapes
    shape = rng.choice(("none", "plain", "cache"))
    if shape != "none":
        usage = {"inputTokens": rng.randrange(1, 5000), "outputTokens": rng.randrange(0, 900)}
        if shape == "cache":
            usage.update(cacheReadInputTokens=rng.randrange(0, 9000), cacheWriteInputTokens=rng.randrange(0, 900))
        usage["totalTokens"] = sum(usage.values())
        event("metadata", {"usage": usage, "metrics": {"latencyMs": rng.randrange(1, 3000)}})
    return out


def framed(messages: list[tuple[dict[str, str], bytes]]) -> bytes:
    data = b"".join(boto_frame(headers, payload) for headers, payload in messages)
    parsed = boto_parse(data, 1 << 20)
    assert [(dict(m.headers), m.payload) for m in parsed] == messages  # botocore reads each frame as built
    return data


def test_the_generated_streams_have_many_shapes() -> None:
    seen: set[str] = set()
    for seed in SEEDS:
        messages = generated(seed)
        kinds = [headers.get(":event-type") or headers.get(":exception-type") or headers[":error-code"] for headers, _ in messages]
        payloads = [json.loads(payload) for headers, payload in messages if payload]
        seen.update(kinds)
        seen.update(p["stopReason"] for p in payloads if "stopReason" in p)
        seen.update(key for p in payloads for key in p.get("delta", {}).get("reasoningContent", {}))
        seen.update(key for p in payloads for key in p.get("usage", {}))
        seen.update("p" for p in payloads if "p" in p)
        seen.update(["parallel calls"] if kinds.count("contentBlockStart") >= 2 else [])
        seen.update(["no metadata"] if "messageStop" in kinds and "metadata" not in kinds else [])
    wanted = {*STOPS, *EXCEPTIONS, "InternalFailure", "text", "signature", "redactedContent", "cacheReadInputTokens", "p", "parallel calls", "no metadata"}
    assert wanted <= seen, wanted - seen


def said_in(error: ProviderError) -> str:
    """The message our error carries: an exception frame's payload message, an error frame's
    ``code: message`` text."""
    try:
        return str(json.loads(error.body)["message"])
    except json.JSONDecodeError:
        return error.body.split(": ", 1)[1]


@pytest.mark.parametrize("seed", SEEDS)
def test_our_client_reads_what_botocore_reads(server: LoopbackServer, seed: int) -> None:
    data = framed(generated(seed))
    server.script(Body(data))
    theirs = judged(server.url)
    server.script(Body(data))
    wire = model(server, API, provider="amazon-bedrock", key=KEY)
    if isinstance(theirs, Failed):
        assert theirs.kind == EventStreamError.__name__, theirs
        with pytest.raises(ProviderError) as error:
            reply(wire, ask(thinking="high"))
        code, said = theirs.said.split("(", 1)[1].split(")", 1)[0], theirs.said.split(": ", 1)[1]
        assert (error.value.kind, error.value.status) == (code, None)
        assert said == said_in(error.value)
        return
    mine = sdk_judges.ours("anthropic-messages", reply(wire, ask(thinking="high")))  # arguments compared parsed
    assert (mine.text, mine.thinking, mine.calls, mine.usage, mine.raw_stop, mine.refusal) == (theirs.text, theirs.thinking, theirs.calls, theirs.usage, theirs.raw_stop, theirs.refusal)
    assert sorted(mine.signatures) == sorted(theirs.signatures)
