"""Amazon Bedrock ConverseStream (api "bedrock-converse-stream").

Request: POST {baseUrl}/model/{modelId}/converse-stream, the model id percent-encoded whole (an
inference profile's ``:`` and an ARN's ``/`` included), a JSON body and no Accept header (the
AWS SDKs send none: the event stream is the operation's only answer). The base URL is the runtime endpoint
``https://bedrock-runtime.{region}.amazonaws.com``; the region is an ARN model id's own, else
AWS_REGION, else AWS_DEFAULT_REGION, else the one the base URL names, else us-east-1, and a base
URL that is a standard runtime endpoint of another region follows it (as the AWS SDKs pick the
endpoint from the region; a proxy's URL is kept as it is).

Auth, the first that is there: the provider's key (``WireModel.api_key``), else
AWS_BEARER_TOKEN_BEDROCK, is a Bedrock API key sent as ``Authorization: Bearer``; else
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN when set) sign the request
with SigV4 (service ``bedrock``, ``sigv4``) over the exact bytes sent; neither is a BadRequest
before any request.

Body (the Converse API's): ``messages`` of content blocks: ``text``, ``image`` ({format,
source: {bytes}}, base64 in JSON), ``toolUse`` ({toolUseId, name, input}), ``toolResult``
({toolUseId, content: text and image blocks, status ``error`` on a failed call}) in user turns,
and an assistant's signed reasoning first, before its text and its toolUse blocks, as a tool
loop with thinking needs it: ``reasoningContent`` {reasoningText: {text, signature}} or
{redactedContent} (base64); consecutive messages of one role are merged (every result of a turn
in one user message). ``system`` text blocks; ``toolConfig`` {tools: [{toolSpec: {name,
description, inputSchema: {json}, strict}}], toolChoice {tool: {name}} for a forced call (S6.3:
the plan drops it under manual thinking, which Claude on Bedrock rejects)}; ``inferenceConfig``
{maxTokens, temperature (not with thinking)}. Claude's thinking goes in
``additionalModelRequestFields`` (S6.13): adaptive_thinking gives ``thinking: {type: adaptive}``
and ``output_config: {effort}``, the effort being the ladder's wire string (a model whose map
has ``xhigh: "xhigh"`` has native xhigh), else Bedrock's default for the level (minimal and low:
low, medium, high; anything else high); otherwise manual ``thinking: {type: enabled,
budget_tokens}`` with the rulebook's budget (maxTokens raised to budget + maxTokens when the
budget reaches it). thinking_block_binding adds ``thinking.block_binding:
{prefix_mismatch_behavior: drop_block}`` and its beta (``anthropic_beta``), except in GovCloud
(a us-gov- region or model id), which rejects it. prompt_caching (the rulebook's answer, else
AWS_BEDROCK_FORCE_CACHE=1 for a model it names not) places a ``cachePoint {type: default}``
block after each cache mark (memory.md rule 29): a marked system prompt, a marked text piece, a
marked message's end.

Stream: not SSE but the AWS event stream (``eventstream``), each message's ``:message-type``
``event`` with its ``:event-type`` and a JSON payload: ``messageStart``, ``contentBlockStart``
(start.toolUse: toolUseId, name), ``contentBlockDelta`` (delta.text; delta.toolUse.input, the
call's arguments in pieces; delta.reasoningContent.text, .signature, .redactedContent),
``contentBlockStop`` (a reasoning block's signature, its pieces joined, or its redacted content
goes out here), ``messageStop`` (stopReason: end_turn, stop_sequence -> stop; max_tokens,
model_context_window_exceeded -> length; tool_use -> toolUse; guardrail_intervened,
content_filtered -> refusal, with no text; any other value -> stop, kept raw), then ``metadata``
(usage inputTokens, outputTokens, cacheReadInputTokens, cacheWriteInputTokens; the end). A
body may end after messageStop without metadata (no usage). ``:message-type exception`` frames
(``:exception-type`` throttlingException, serviceUnavailableException, internalServerException,
modelStreamErrorException: retryable; validationException: not) and ``error`` frames
(``:error-code``, ``:error-message``) are ProviderErrors; an HTTP error's kind is its
x-amzn-ErrorType header's.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import AsyncGenerator, Mapping
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from eukhe import strict_json
from eukhe.inference.wire import eventstream, sigv4
from eukhe.inference.wire.base import Reader, WireClient, as_int, closing, error_kind, retry_hint, should_retry
from eukhe.inference.wire.events import (
    LENGTH,
    REFUSAL,
    STOP,
    TOOL_USE,
    BadRequest,
    Event,
    MalformedEvent,
    ProviderError,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    Usage,
)
from eukhe.inference.wire.plan import API_BEDROCK, Image, Message, Plan, Request, Thought

EVENT_STREAM = "application/vnd.amazon.eventstream"
SERVICE = "bedrock"  # SigV4's signing name of the runtime
DEFAULT_REGION = "us-east-1"
RUNTIME_HOST = re.compile(r"^bedrock-runtime(-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$")
ARN_REGION = re.compile(r"^arn:aws(?:-[a-z0-9-]+)?:bedrock:([a-z0-9-]+):")
BLOCK_BINDING = {"prefix_mismatch_behavior": "drop_block"}  # a thinking block whose prefix changed is dropped, not refused
BLOCK_BINDING_BETA = "thinking-binding-controls-2026-08-01"
# Bedrock's effort for a level the model's ladder does not spell
DEFAULT_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}
STOP_REASONS = {
    "end_turn": STOP,
    "stop_sequence": STOP,
    "max_tokens": LENGTH,
    "model_context_window_exceeded": LENGTH,
    "tool_use": TOOL_USE,
    "guardrail_intervened": REFUSAL,
    "content_filtered": REFUSAL,
}
# the exception frames of ConverseStream, and whether the same request may succeed again
EXCEPTIONS = {
    "throttlingException": True,
    "serviceUnavailableException": True,
    "internalServerException": True,
    "modelStreamErrorException": True,
    "validationException": False,
}


def json_bytes(body: dict[str, Any]) -> bytes:
    """The body as sent and signed, written as the AWS SDK for Python writes it (``json.dumps``'
    defaults: ASCII, spaced separators), so the same request is the same bytes and signature."""
    return json.dumps(body, allow_nan=False).encode("utf-8")


# -- the request ---------------------------------------------------------------------------------------


def _image(image: Image) -> dict[str, Any]:
    return {"image": {"format": image.media_type.split("/", 1)[1], "source": {"bytes": image.base64}}}


def _thought(thought: Thought) -> dict[str, Any]:
    if thought.redacted:
        return {"reasoningContent": {"redactedContent": thought.signature}}
    return {"reasoningContent": {"reasoningText": {"text": thought.text, "signature": thought.signature}}}


def _marked(blocks: list[dict[str, Any]]) -> None:
    """A cache point after the blocks so far (one, however many marks fall there)."""
    if blocks and "cachePoint" not in blocks[-1]:
        blocks.append({"cachePoint": {"type": "default"}})


def _tool_use(message: Message) -> list[dict[str, Any]]:
    out = []
    for call in message.tool_calls:
        try:
            arguments = strict_json.loads(call.arguments) if call.arguments else {}
        except json.JSONDecodeError:
            arguments = {}
        out.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": arguments if isinstance(arguments, dict) else {}}})
    return out


def _blocks(message: Message, caching: bool) -> list[dict[str, Any]]:
    """One message's content blocks, a cache point after each cache mark when caching."""
    if message.role == "tool":
        content: list[dict[str, Any]] = [{"text": message.text}] if message.text or not message.images else []
        content += [_image(i) for i in message.images]
        result: dict[str, Any] = {"toolUseId": message.tool_call_id or "", "content": content}
        if message.is_error:
            result["status"] = "error"
        blocks: list[dict[str, Any]] = [{"toolResult": result}]
    else:
        # a tool loop with thinking needs the reply's reasoning back, signed, first
        blocks = [_thought(t) for t in message.reasoning() if t.signature] if message.role == "assistant" else []
        for text, mark in message.pieces:
            if text:  # the API refuses a blank text block
                blocks.append({"text": text})
                if mark and caching:
                    _marked(blocks)
        blocks += [_image(i) for i in message.images]
        blocks += _tool_use(message)
        blocks = blocks or [{"text": ""}]
    if message.cache and caching:
        _marked(blocks)
    return blocks


def bedrock_messages(plan: Plan, caching: bool) -> list[dict[str, Any]]:
    """Tool results go in user turns; consecutive messages of one role are merged."""
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, caching)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def effort(plan: Plan) -> str:
    """The adaptive effort: the ladder's wire string, else Bedrock's default for the level."""
    if plan.effort_from_ladder and plan.effort is not None:
        return plan.effort
    return DEFAULT_EFFORT.get(plan.level, "high")


def additional_fields(plan: Plan, binding: bool) -> dict[str, Any] | None:
    """Claude's thinking, as Bedrock passes it to the model (additionalModelRequestFields)."""
    fields: dict[str, Any]
    if plan.adaptive:
        fields = {"thinking": {"type": "adaptive"}, "output_config": {"effort": effort(plan)}}
    elif plan.manual_thinking and plan.budget is not None:
        fields = {"thinking": {"type": "enabled", "budget_tokens": plan.budget}}
    else:
        return None
    if binding:
        fields["thinking"]["block_binding"] = {**BLOCK_BINDING}
        fields["anthropic_beta"] = [BLOCK_BINDING_BETA]
    return fields


def tool_config(request: Request, plan: Plan) -> dict[str, Any]:
    tools = []
    for tool, strict in zip(request.tools, plan.strict):
        spec: dict[str, Any] = {"name": tool.name}
        if tool.description:  # the API refuses an empty description
            spec["description"] = tool.description
        spec["inputSchema"] = {"json": dict(tool.parameters)}
        if strict:
            spec["strict"] = True
        tools.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": tools}
    if plan.forced_tool is not None:
        config["toolChoice"] = {"tool": {"name": plan.forced_tool}}
    return config


def govcloud(region: str, model_id: str) -> bool:
    return region.startswith("us-gov-") or model_id.startswith(("us-gov.", "arn:aws-us-gov:"))


# -- the client ----------------------------------------------------------------------------------------


class BedrockConverseStream(WireClient):
    api = API_BEDROCK
    stream_type = EVENT_STREAM

    def region(self) -> str:
        """The region requests go to and are signed for."""
        arn = ARN_REGION.match(self.model.id)
        if arn is not None:
            return arn.group(1)
        configured = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        if configured:
            return configured
        host = RUNTIME_HOST.match(urlsplit(self.model.base_url).hostname or "")
        return host.group(2) if host is not None else DEFAULT_REGION

    def root(self, region: str) -> str:
        """The base URL; a standard runtime endpoint of another region is that region's."""
        base = self.model.base_url.rstrip("/")
        parts = urlsplit(base)
        host = RUNTIME_HOST.match(parts.hostname or "")
        if host is None or host.group(2) == region:
            return base
        name = f"bedrock-runtime{host.group(1) or ''}.{region}.amazonaws.com{host.group(3) or ''}"
        return urlunsplit(parts._replace(netloc=name if parts.port is None else f"{name}:{parts.port}"))

    def bearer_token(self) -> str | None:
        """A Bedrock API key: the provider's key, else AWS_BEARER_TOKEN_BEDROCK."""
        return self.model.api_key or os.environ.get("AWS_BEARER_TOKEN_BEDROCK") or None

    def credentials(self) -> sigv4.Credentials | None:
        """AWS credentials from the environment, the session token with them when set."""
        access, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
        if not access or not secret:
            return None
        return sigv4.Credentials(access, secret, os.environ.get("AWS_SESSION_TOKEN") or None)

    def _flag(self, directive: str) -> bool | None:
        answer = self.book.query(self.model.key, directive)
        return bool(answer.value) if answer.known else None

    def caching(self) -> bool:
        """prompt_caching as the rulebook answers it; for a model it names not, only
        AWS_BEDROCK_FORCE_CACHE=1 (an application inference profile's ARN names no model)."""
        answer = self._flag("prompt_caching")
        return answer if answer is not None else os.environ.get("AWS_BEDROCK_FORCE_CACHE") == "1"

    def headers(self, own: Mapping[str, str]) -> dict[str, str]:
        """JSON in, and no Accept (the AWS SDKs send none); the model's own headers last."""
        out = {"content-type": "application/json", **own}
        out.update(self.model.headers or {})
        return out

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        region = self.region()
        caching = self.caching()
        body: dict[str, Any] = {"messages": bedrock_messages(plan, caching)}
        if request.system:
            body["system"] = [{"text": request.system}]
            if request.system_cache and caching:
                _marked(body["system"])
        if request.tools:
            body["toolConfig"] = tool_config(request, plan)
        binding = bool(self._flag("thinking_block_binding")) and not govcloud(region, self.model.id)
        fields = additional_fields(plan, binding)
        inference: dict[str, Any] = {"maxTokens": plan.max_tokens}
        if plan.manual_thinking and plan.budget is not None and plan.budget >= plan.max_tokens:
            inference["maxTokens"] = plan.budget + plan.max_tokens  # the model wants budget_tokens < max_tokens
        if request.temperature is not None and fields is None:
            inference["temperature"] = request.temperature
        body["inferenceConfig"] = inference
        if fields is not None:
            body["additionalModelRequestFields"] = fields
        own: dict[str, str] = {}
        token = self.bearer_token()
        if token is not None:
            own["authorization"] = f"Bearer {token}"
        elif self.credentials() is None:
            raise BadRequest(
                f"{self.provider}: no AWS credentials: give the provider a Bedrock API key, or set AWS_BEARER_TOKEN_BEDROCK, "
                "or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
            )
        url = f"{self.root(region)}/model/{quote(self.model.id, safe='')}/converse-stream"
        return url, self.headers(own), body

    def request(self, http: httpx.AsyncClient, url: str, headers: dict[str, str], body: dict[str, Any]) -> httpx.Request:
        """The POST of the body's bytes, signed with SigV4 when no API key authorizes it."""
        content = json_bytes(body)
        credentials = self.credentials() if self.bearer_token() is None else None
        if credentials is not None:
            headers = {**headers, **sigv4.sign("POST", url, headers, content, credentials, self.region(), SERVICE)}
        return http.build_request("POST", url, headers=headers, content=content, timeout=self.timeout)

    def http_error(self, status: int, headers: httpx.Headers, body: str) -> ProviderError:
        """The kind is the x-amzn-ErrorType header's ("ThrottlingException:http://..."), else the
        body's __type ("...#ValidationException"), else what the body names."""
        kind = headers.get("x-amzn-errortype", "").split(":", 1)[0].strip()
        if not kind:
            try:
                data = strict_json.loads(body)
            except ValueError:
                data = None
            named = data.get("__type") if isinstance(data, dict) else None
            kind = named.rsplit("#", 1)[-1] if isinstance(named, str) else error_kind(body)
        return should_retry(ProviderError(self.provider, status, body, kind, retry_hint(headers, body)), headers)

    async def items(self, response: httpx.Response) -> AsyncGenerator[Any, None]:
        """The event-stream messages of the body, each whole (a frame split over reads waits)."""
        decoder = eventstream.Decoder()
        async with closing(response.aiter_bytes()) as chunks:
            async for chunk in chunks:
                try:
                    messages = decoder.feed(chunk)
                except eventstream.FramingError as error:
                    raise MalformedEvent(self.provider, f"the event stream does not parse: {error}") from None
                for message in messages:
                    yield message

    def reader(self, plan: Plan) -> Reader:
        return BedrockReader(self.provider)


# -- the stream ----------------------------------------------------------------------------------------


class BedrockReader(Reader):
    """ConverseStream's events: a reasoning block's signature (or redacted content) is kept
    until the block stops, then goes out whole."""

    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.signatures: dict[int, list[str]] = {}
        self.redacted: dict[int, list[bytes]] = {}

    def complete(self) -> bool:
        return self.stop is not None  # messageStop came; metadata, the usage, may follow

    def feed(self, event: eventstream.Message) -> list[Event]:
        kind = event.header(":message-type") or "event"
        if kind == "exception":
            raise self._exception(event)
        if kind == "error":
            code = event.header(":error-code")
            raise ProviderError(self.provider, None, f"{code}: {event.header(':error-message')}", code)
        name = event.header(":event-type")
        data = self._payload(event, name)
        if name == "contentBlockDelta":
            return self._delta(data)
        if name == "contentBlockStart":
            start = data.get("start")
            call = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(call, dict):
                return [self.calls.delta(self._index(data), _text(self, call, "toolUseId"), _text(self, call, "name"))]
            return []
        if name == "contentBlockStop":
            return self._signed(self._index(data))
        if name == "messageStop":
            raw = _text(self, data, "stopReason")
            self.stop = Stop(STOP_REASONS.get(raw, STOP), raw)
            return [signed for index in sorted({*self.signatures, *self.redacted}) for signed in self._signed(index)]
        if name == "metadata":
            usage = data.get("usage")
            if isinstance(usage, dict):
                self.usage = Usage(
                    as_int(usage.get("inputTokens")), as_int(usage.get("outputTokens")),
                    as_int(usage.get("cacheReadInputTokens")), as_int(usage.get("cacheWriteInputTokens")),
                )
            self.done = self.stop is not None
        return []  # messageStart, and events of other content (citations, images)

    def _exception(self, event: eventstream.Message) -> ProviderError:
        kind = event.header(":exception-type")
        error = ProviderError(self.provider, None, event.payload.decode("utf-8", errors="replace"), kind)
        error.retryable = EXCEPTIONS.get(kind, error.retryable)
        return error

    def _payload(self, event: eventstream.Message, name: str) -> dict[str, Any]:
        try:
            data = strict_json.loads(event.payload)  # at most 100 deep, no NaN or Infinity
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise MalformedEvent(self.provider, f"event {name!r} is not JSON: {error}: {event.payload[:120]!r}") from None
        if not isinstance(data, dict):
            raise MalformedEvent(self.provider, f"event {name!r} is not a JSON object: {event.payload[:120]!r}")
        return data

    def _index(self, data: dict[str, Any]) -> int:
        index = data.get("contentBlockIndex")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise MalformedEvent(self.provider, f"contentBlockIndex is not a block index: {index!r}")
        return index

    def _delta(self, data: dict[str, Any]) -> list[Event]:
        index = self._index(data)
        delta = data.get("delta")
        if not isinstance(delta, dict):
            raise MalformedEvent(self.provider, "contentBlockDelta without its delta")
        if "text" in delta:
            return [TextDelta(_text(self, delta, "text"), index)]
        call = delta.get("toolUse")
        if isinstance(call, dict):
            if not self.calls.known(index):
                raise MalformedEvent(self.provider, f"toolUse input for block {index}, which no toolUse start opened")
            return [self.calls.delta(index, arguments=_text(self, call, "input"))]
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            out: list[Event] = []
            if "text" in reasoning:
                out.append(ThinkingDelta(_text(self, reasoning, "text"), index))
            if "signature" in reasoning:
                self.signatures.setdefault(index, []).append(_text(self, reasoning, "signature"))
            if "redactedContent" in reasoning:
                try:
                    data_bytes = base64.b64decode(_text(self, reasoning, "redactedContent"), validate=True)
                except binascii.Error:
                    raise MalformedEvent(self.provider, f"redactedContent of block {index} is not base64") from None
                self.redacted.setdefault(index, []).append(data_bytes)
            return out
        return []

    def _signed(self, index: int) -> list[Event]:
        """The block's signature (its pieces joined) or redacted content (base64), once."""
        out: list[Event] = []
        pieces = self.signatures.pop(index, None)
        if pieces is not None:
            out.append(ThinkingSignature("".join(pieces), index))
        redacted = self.redacted.pop(index, None)
        if redacted is not None:
            out.append(ThinkingSignature(base64.b64encode(b"".join(redacted)).decode("ascii"), index, redacted=True))
        return out


def _text(reader: Reader, data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise MalformedEvent(reader.provider, f"{name} is not a string")
    return value
