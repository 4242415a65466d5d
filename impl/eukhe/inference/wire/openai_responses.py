"""OpenAI Responses (api "openai-responses").

Request: POST {baseUrl}/responses, ``Authorization: Bearer``; ``stream: true``; the system
prompt as ``instructions``; ``input`` items (user ``input_text`` blocks, assistant text as an easy input message,
``function_call`` and ``function_call_output``); ``max_output_tokens``; ``store: false``
unless the rulebook says the host has no store (supports_store false: the field is left out);
tools as ``{type: function, name, parameters, strict}`` per the strict plan (S6.4); forced
choice ``{type: function, name}`` (S6.3); ``reasoning: {effort, summary: auto}`` with the
ladder's wire string; explicit cache breakpoints (S6.13, explicit_cache_breakpoints) as
``prompt_cache_breakpoint: {mode: explicit}`` on the marked content blocks and
``reasoning.context: all_turns`` (the SDK's types, openai 3.57, have the breakpoint on
input_text, input_image and input_file blocks, never on an item); ``service_tier``. An assistant's reasoning items go back
before its output, by id with their encrypted_content (``store: false``: the server keeps
nothing).

Stream: typed events (``data.type``), no [DONE]: ``response.output_item.added`` (a
function_call item: call_id, name), ``response.output_text.delta``,
``response.reasoning_summary_text.delta`` and ``response.reasoning_text.delta``,
``response.function_call_arguments.delta`` / ``.done``, ``response.output_item.done`` (a
reasoning item's encrypted_content; a message's refusal parts), ``response.refusal.delta`` /
``.done`` (the model declines: a refusal stop with its text), and the end:
``response.completed`` (stop, or toolUse with calls; refusal when a refusal part came),
``response.incomplete`` (incomplete_details.reason max_output_tokens: length;
content_filter: refusal), ``response.failed`` and ``error`` (ProviderError). Usage:
input_tokens with input_tokens_details.cached_tokens and cache_write_tokens, output_tokens with
output_tokens_details.reasoning_tokens.
"""

from __future__ import annotations

import json
from typing import Any

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
from eukhe.inference.wire.plan import API_RESPONSES, Image, Message, Plan, Request, Thought
from eukhe.inference.wire.sse import SseEvent

INCOMPLETE = {"max_output_tokens": LENGTH, "content_filter": REFUSAL}


BREAKPOINT = {"mode": "explicit"}  # prompt_cache_breakpoint, on a content block


def _image(image: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image.data_url}


def _marked(block: dict[str, Any], mark: bool) -> dict[str, Any]:
    return {**block, "prompt_cache_breakpoint": BREAKPOINT} if mark else block


def _content(message: Message, breakpoints: bool) -> list[dict[str, Any]]:
    """A user message's or a tool result's content blocks: each text piece (an empty piece
    dropped, unless it is all there is), then the images; with explicit breakpoints, a marked
    piece and the last block of a marked message carry one."""
    pieces = [(text, mark) for text, mark in message.pieces if text] or [("", False)]
    if message.images and pieces == [("", False)]:
        pieces = []
    blocks = [_marked({"type": "input_text", "text": text}, mark and breakpoints) for text, mark in pieces] + [_image(i) for i in message.images]
    if message.cache and breakpoints:
        blocks[-1] = _marked(blocks[-1], True)
    return blocks


def _reasoning(thought: Thought) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning", "id": thought.item, "summary": [{"type": "summary_text", "text": thought.text}] if thought.text else []}
    if thought.signature:
        item["encrypted_content"] = thought.signature
    return item


def response_input(plan: Plan, request: Request) -> list[dict[str, Any]]:
    breakpoints = plan.explicit_cache_breakpoints
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        if message.role == "tool":
            output: Any = message.text
            if message.images or (message.cache and breakpoints):
                output = _content(message, breakpoints)
            out.append({"type": "function_call_output", "call_id": message.tool_call_id or "", "output": output})
        elif message.role == "assistant":
            # reasoning items go back before the output they led to (store false: by their
            # encrypted_content; an item without its id cannot be sent)
            out += [_reasoning(t) for t in message.reasoning() if t.item]
            if message.words:
                # the easy input message: an output_text block would need the output item's id and status
                out.append({"role": "assistant", "content": message.words})
            for call in message.tool_calls:
                out.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
        else:
            out.append({"role": "user", "content": _content(message, breakpoints)})
    return out


class OpenAIResponses(WireClient):
    api = API_RESPONSES

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = self.headers({"authorization": f"Bearer {self.model.api_key}"} if self.model.api_key else {})
        return self.url("/responses"), headers, self.body(request, plan)

    def body(self, request: Request, plan: Plan) -> dict[str, Any]:
        """The Responses body of the request (the Azure and Codex clients send it on their paths)."""
        body: dict[str, Any] = {"model": self.model.id, "input": response_input(plan, request), "stream": True, "max_output_tokens": plan.max_tokens}
        if request.system:
            body["instructions"] = request.system
        if plan.store is not False:
            body["store"] = False
        if request.tools:
            body["tools"] = [
                {"type": "function", "name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": strict}
                for t, strict in zip(request.tools, plan.strict)
            ]
        if plan.forced_tool is not None:
            body["tool_choice"] = {"type": "function", "name": plan.forced_tool}
        reasoning: dict[str, Any] = {}
        if plan.effort is not None:
            reasoning["effort"] = plan.effort
            if plan.level != "off":
                reasoning["summary"] = "auto"
                body["include"] = ["reasoning.encrypted_content"]
        if plan.explicit_cache_breakpoints:
            reasoning["context"] = "all_turns"
        if reasoning:
            body["reasoning"] = reasoning
        if plan.service_tier is not None:
            body["service_tier"] = plan.service_tier
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def reader(self, plan: Plan) -> Reader:
        return ResponsesReader(self.provider)


class ResponsesReader(Reader):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.refusals: dict[tuple[int, int], str] = {}  # (output_index, content_index): its text

    def feed(self, event: SseEvent) -> list[Event]:
        data = self.obj(event)
        kind = data.get("type", event.event)
        index = data.get("output_index", 0)
        if not isinstance(index, int):
            raise MalformedEvent(self.provider, f"{kind}: output_index is not an integer")
        if kind == "response.output_text.delta":
            return [TextDelta(_text(self, data, "delta"), index)]
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            return [ThinkingDelta(_text(self, data, "delta"), index)]
        if kind == "response.output_item.added":
            item = data.get("item")
            if isinstance(item, dict) and item.get("type") == "function_call":
                arguments = item.get("arguments")
                return [self.calls.delta(index, str(item.get("call_id") or ""), str(item.get("name") or ""), arguments if isinstance(arguments, str) else "")]
            return []
        if kind in ("response.refusal.delta", "response.refusal.done"):
            key = (index, as_int(data.get("content_index")))
            if kind.endswith(".delta"):
                self.refusals[key] = self.refusals.get(key, "") + _text(self, data, "delta")
            else:
                self.refusals[key] = _text(self, data, "refusal")
            return []
        if kind == "response.function_call_arguments.delta":
            return [self.calls.delta(index, arguments=_text(self, data, "delta"))]
        if kind == "response.function_call_arguments.done":
            arguments = data.get("arguments")
            if isinstance(arguments, str):
                self.calls.replace_arguments(index, arguments)
            return []
        if kind == "response.output_item.done":
            item = data.get("item")
            if isinstance(item, dict) and item.get("type") == "reasoning" and isinstance(item.get("encrypted_content"), str):
                return [ThinkingSignature(item["encrypted_content"], index, item=str(item.get("id") or ""))]
            self._refusal_parts(index, item)
            return []
        if kind in ("response.completed", "response.incomplete"):
            self._end(data.get("response"), kind)
            return []
        if kind == "response.failed":
            response = data.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            code = error.get("code", "") if isinstance(error, dict) else ""
            raise ProviderError(self.provider, None, json.dumps(error if error is not None else data), str(code or "response.failed"))
        if kind == "error":
            raise ProviderError(self.provider, None, json.dumps(data), str(data.get("code") or ""))
        return []

    def _end(self, response: Any, kind: str) -> None:
        if not isinstance(response, dict):
            raise MalformedEvent(self.provider, f"{kind} without its response object")
        usage = response.get("usage")
        tier = response.get("service_tier")
        if isinstance(usage, dict):
            details = usage.get("input_tokens_details") or {}
            cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            written = as_int(details.get("cache_write_tokens")) if isinstance(details, dict) else 0
            out_details = usage.get("output_tokens_details") or {}
            reasoning = as_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
            total_in = as_int(usage.get("input_tokens"))
            shown = tier if isinstance(tier, str) else None
            self.usage = Usage(max(total_in - cached - written, 0), as_int(usage.get("output_tokens")), cached, written, reasoning, shown)
        output = response.get("output")
        for k, item in enumerate(output if isinstance(output, list) else []):
            self._refusal_parts(k, item)
        self.refusal = [self.refusals[key] for key in sorted(self.refusals)]
        status = str(response.get("status") or ("incomplete" if kind == "response.incomplete" else "completed"))
        if status == "incomplete" or kind == "response.incomplete":
            details = response.get("incomplete_details") or {}
            raw = str(details.get("reason") or "incomplete") if isinstance(details, dict) else "incomplete"
            self.stop = Stop(INCOMPLETE.get(raw, LENGTH), raw)
        else:
            self.stop = Stop(TOOL_USE if len(self.calls) else STOP, status)
        if self.refusal:  # a refusal is a completed response with a refusal content part
            self.stop = Stop(REFUSAL, self.stop.raw)
        self.done = True

    def _refusal_parts(self, index: int, item: Any) -> None:
        """The refusal parts of a finished message item, where no refusal event gave them."""
        content = item.get("content") if isinstance(item, dict) and item.get("type") == "message" else None
        for k, part in enumerate(content if isinstance(content, list) else []):
            if isinstance(part, dict) and part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                self.refusals.setdefault((index, k), part["refusal"])


def _text(reader: Reader, data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise MalformedEvent(reader.provider, f"{data.get('type')}: {name} is not a string")
    return value
