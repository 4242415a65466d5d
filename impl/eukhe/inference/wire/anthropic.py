"""Anthropic Messages (api "anthropic-messages").

Request: POST {baseUrl}/v1/messages, ``Authorization: Bearer`` and ``anthropic-version:
2026-10-21`` (as the current SDK, anthropic 2.15, sends them); ``stream: true``;
``max_tokens``; ``system`` as text blocks; messages of content blocks (``text``, ``tool_use``,
``tool_result``; an assistant's signed ``thinking`` and ``redacted_thinking`` blocks first, as
a tool loop with thinking needs them), a ``cache_control: {type: ephemeral}`` mark on the last
block of each marked message (memory.md rule 29; never a 1-hour entry: no ttl); tools with
``input_schema`` (``strict`` per the strict plan, S6.4); forced choice ``{type: tool,
name}`` only where the predicate allows it: manual extended thinking rejects it, so the plan
drops the flag and warns (S6.3). Thinking (S6.13): adaptive_thinking gives ``thinking: {type:
adaptive}`` with ``output_config.effort``; otherwise manual ``thinking: {type: enabled,
budget_tokens}`` with the rulebook's budget (max_tokens raised
to budget + max_tokens when the budget reaches it: the API wants budget_tokens < max_tokens).

Stream: ``message_start`` (message.usage), ``content_block_start`` (text, thinking,
redacted_thinking, tool_use with id and name), ``content_block_delta`` (text_delta,
thinking_delta, signature_delta, input_json_delta), ``content_block_stop``, ``message_delta``
(delta.stop_reason: end_turn, stop_sequence, pause_turn -> stop; max_tokens,
model_context_window_exceeded -> length; tool_use -> toolUse; refusal -> refusal, with
delta.stop_details.explanation its text; usage, output_tokens_details.thinking_tokens the
reasoning count),
``message_stop`` (the end), ``ping``, ``error`` (ProviderError).
"""

from __future__ import annotations

import json
from typing import Any

from eukhe import strict_json
from eukhe.inference.wire.base import Reader, WireClient, as_int
from eukhe.inference.wire.events import (
    LENGTH,
    REFUSAL,
    STOP,
    TOOL_USE,
    Event,
    MalformedEvent,
    ProviderError,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    Usage,
)
from eukhe.inference.wire.plan import API_ANTHROPIC, Image, Message, Plan, Request, Thought
from eukhe.inference.wire.sse import SseEvent

VERSION = "2026-10-21"  # what the current SDK sends (anthropic 2.15: ANTHROPIC_API_VERSION)
STOP_REASONS = {
    "end_turn": STOP,
    "stop_sequence": STOP,
    "pause_turn": STOP,
    "max_tokens": LENGTH,
    "model_context_window_exceeded": LENGTH,
    "tool_use": TOOL_USE,
    "refusal": REFUSAL,
}
CACHE_MARK = {"type": "ephemeral"}


def _image(image: Image) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.base64}}


def _thought(thought: Thought) -> dict[str, Any]:
    if thought.redacted:
        return {"type": "redacted_thinking", "data": thought.signature}
    return {"type": "thinking", "thinking": thought.text, "signature": thought.signature}


def _blocks(message: Message, marks: bool = False) -> list[dict[str, Any]]:
    if message.role == "tool":
        content: Any = message.text
        if message.images:  # a text block may not be empty
            content = ([{"type": "text", "text": message.text}] if message.text else []) + [_image(i) for i in message.images]
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": content, **({"is_error": True} if message.is_error else {})}]
    blocks: list[dict[str, Any]] = []
    if message.role == "assistant":
        # a tool loop with thinking on needs the reply's thinking blocks back, signed, first
        blocks += [_thought(t) for t in message.reasoning() if t.signature]
    for text, mark in message.pieces:
        if text:  # the API refuses an empty text block
            blocks.append({"type": "text", "text": text, **({"cache_control": CACHE_MARK} if mark and marks else {})})
    blocks += [_image(i) for i in message.images]
    for call in message.tool_calls:
        try:
            arguments = strict_json.loads(call.arguments) if call.arguments else {}
        except json.JSONDecodeError:
            arguments = {}
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments if isinstance(arguments, dict) else {}})
    return blocks or [{"type": "text", "text": ""}]


def anthropic_messages(plan: Plan) -> list[dict[str, Any]]:
    """Tool results go in user turns; consecutive messages of one role are merged."""
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message, plan.cache_marks)
        if message.cache and plan.cache_marks:
            blocks[-1] = {**blocks[-1], "cache_control": CACHE_MARK}
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


class AnthropicMessages(WireClient):
    api = API_ANTHROPIC

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model.id, "max_tokens": plan.max_tokens, "messages": anthropic_messages(plan), "stream": True}
        if request.system:
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if request.system_cache and plan.cache_marks:
                block["cache_control"] = CACHE_MARK
            body["system"] = [block]
        if request.tools:
            tools = []
            for tool, strict in zip(request.tools, plan.strict):
                entry: dict[str, Any] = {"name": tool.name, "description": tool.description, "input_schema": dict(tool.parameters)}
                if strict:
                    entry["strict"] = True
                tools.append(entry)
            body["tools"] = tools
        if plan.forced_tool is not None:
            body["tool_choice"] = {"type": "tool", "name": plan.forced_tool}
        if plan.adaptive:
            body["thinking"] = {"type": "adaptive"}
            if plan.effort is not None:
                body["output_config"] = {"effort": plan.effort}
        elif plan.manual_thinking and plan.budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": plan.budget}
            if plan.budget >= plan.max_tokens:  # the API wants budget_tokens < max_tokens
                body["max_tokens"] = plan.budget + plan.max_tokens
        if request.temperature is not None and not (plan.adaptive or plan.manual_thinking):
            body["temperature"] = request.temperature
        if plan.service_tier is not None:
            body["service_tier"] = plan.service_tier
        own = {"anthropic-version": VERSION}
        if self.model.api_key:
            own["authorization"] = f"Bearer {self.model.api_key}"
        return self.url("/v1/messages"), self.headers(own), body

    def reader(self, plan: Plan) -> Reader:
        return AnthropicReader(self.provider)


class AnthropicReader(Reader):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.kinds: dict[int, str] = {}
        self.input = self.output = self.cache_read = self.cache_write = self.reasoning = 0
        self.raw_stop: str | None = None

    def feed(self, event: SseEvent) -> list[Event]:
        data = self.obj(event)
        kind = data.get("type", event.event)
        if kind == "ping":
            return []
        if kind == "error":
            error = data.get("error")
            code = error.get("type", "") if isinstance(error, dict) else ""
            raise ProviderError(self.provider, None, json.dumps(error if error is not None else data), str(code))
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                self._usage(message["usage"])
            return []
        index = data.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedEvent(self.provider, f"{kind}: index is not an integer")
        if kind == "content_block_start":
            block = data.get("content_block")
            if not isinstance(block, dict):
                raise MalformedEvent(self.provider, "content_block_start without its content_block")
            block_kind = str(block.get("type"))
            self.kinds[index] = block_kind
            if block_kind == "tool_use":
                return [self.calls.delta(index, str(block.get("id") or ""), str(block.get("name") or ""))]
            if block_kind == "text" and block.get("text"):
                return [TextDelta(str(block["text"]), index)]
            if block_kind == "redacted_thinking" and isinstance(block.get("data"), str):
                return [ThinkingSignature(block["data"], index, redacted=True)]
            return []
        if kind == "content_block_delta":
            delta = data.get("delta")
            if not isinstance(delta, dict):
                raise MalformedEvent(self.provider, "content_block_delta without its delta")
            delta_kind = delta.get("type")
            if delta_kind == "text_delta":
                return [TextDelta(_str(self, delta, "text"), index)]
            if delta_kind == "thinking_delta":
                return [ThinkingDelta(_str(self, delta, "thinking"), index)]
            if delta_kind == "signature_delta":
                return [ThinkingSignature(_str(self, delta, "signature"), index)]
            if delta_kind == "input_json_delta":
                if not self.calls.known(index):
                    raise MalformedEvent(self.provider, f"input_json_delta for block {index}, which is no tool_use block")
                return [self.calls.delta(index, arguments=_str(self, delta, "partial_json"))]
            return []
        if kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self.raw_stop = delta["stop_reason"]
            details = delta.get("stop_details") if isinstance(delta, dict) else None
            if isinstance(details, dict) and isinstance(details.get("explanation"), str):
                self.refusal = [details["explanation"]]
            if isinstance(data.get("usage"), dict):
                self._usage(data["usage"])
            return []
        if kind == "message_stop":
            raw = self.raw_stop or "end_turn"
            self.stop = Stop(STOP_REASONS.get(raw, STOP), raw)
            self.usage = Usage(self.input, self.output, self.cache_read, self.cache_write, self.reasoning)
            self.done = True
        return []

    def _usage(self, usage: dict[str, Any]) -> None:
        # message_start gives the input side, message_delta the running output count (and,
        # on newer servers, the input side again): the latest value of each field wins.
        if "input_tokens" in usage:
            self.input = as_int(usage.get("input_tokens"))
        if "output_tokens" in usage:
            self.output = as_int(usage.get("output_tokens"))
        if "cache_read_input_tokens" in usage:
            self.cache_read = as_int(usage.get("cache_read_input_tokens"))
        if "cache_creation_input_tokens" in usage:
            self.cache_write = as_int(usage.get("cache_creation_input_tokens"))
        details = usage.get("output_tokens_details")
        if isinstance(details, dict) and "thinking_tokens" in details:
            self.reasoning = as_int(details.get("thinking_tokens"))


def _str(reader: Reader, data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise MalformedEvent(reader.provider, f"{name} is not a string")
    return value
