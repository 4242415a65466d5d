"""OpenAI Responses (api "openai-responses").

Request: POST {baseUrl}/responses, ``Authorization: Bearer``; ``stream: true``; the system
prompt as ``instructions``; ``input`` items (user ``input_text``, assistant ``output_text``,
``function_call`` and ``function_call_output``); ``max_output_tokens``; ``store: false``
unless the rulebook says the host has no store (supports_store false: the field is left out);
tools as ``{type: function, name, parameters, strict}`` per the strict plan (S6.4); forced
choice ``{type: function, name}`` (S6.3); ``reasoning: {effort, summary: auto}`` with the
ladder's wire string; explicit cache breakpoints (S6.13, explicit_cache_breakpoints) as
``prompt_cache_breakpoint`` on the marked items and ``reasoning.context: all_turns``;
``service_tier``.

Stream: typed events (``data.type``), no [DONE]: ``response.output_item.added`` (a
function_call item: call_id, name), ``response.output_text.delta``,
``response.reasoning_summary_text.delta`` and ``response.reasoning_text.delta``,
``response.function_call_arguments.delta`` / ``.done``, ``response.output_item.done`` (a
reasoning item's encrypted_content), and the end: ``response.completed`` (stop, or toolUse with
calls), ``response.incomplete`` (incomplete_details.reason max_output_tokens: length;
content_filter: refusal), ``response.failed`` and ``error`` (ProviderError). Usage:
input_tokens with input_tokens_details.cached_tokens, output_tokens with
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
from eukhe.inference.wire.plan import API_RESPONSES, Image, Plan, Request
from eukhe.inference.wire.sse import SseEvent

INCOMPLETE = {"max_output_tokens": LENGTH, "content_filter": REFUSAL}


def _image(image: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image.data_url}


def response_input(plan: Plan, request: Request) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        items: list[dict[str, Any]] = []
        if message.role == "tool":
            output: Any = message.text
            if message.images:
                output = ([{"type": "input_text", "text": message.text}] if message.text else []) + [_image(i) for i in message.images]
            items.append({"type": "function_call_output", "call_id": message.tool_call_id or "", "output": output})
        elif message.role == "assistant":
            if message.text:
                items.append({"role": "assistant", "content": [{"type": "output_text", "text": message.text}]})
            for call in message.tool_calls:
                items.append({"type": "function_call", "call_id": call.id, "name": call.name, "arguments": call.arguments})
        else:
            items.append({"role": "user", "content": [{"type": "input_text", "text": message.text}] + [_image(i) for i in message.images]})
        if message.cache and plan.explicit_cache_breakpoints and items:
            items[-1]["prompt_cache_breakpoint"] = True
        out.extend(items)
    return out


class OpenAIResponses(WireClient):
    api = API_RESPONSES

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
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
        headers = self.headers({"authorization": f"Bearer {self.model.api_key}"} if self.model.api_key else {})
        return self.url("/responses"), headers, body

    def reader(self, plan: Plan) -> Reader:
        return ResponsesReader(self.provider)


class ResponsesReader(Reader):
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
                return [ThinkingSignature(item["encrypted_content"], index)]
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
            out_details = usage.get("output_tokens_details") or {}
            reasoning = as_int(out_details.get("reasoning_tokens")) if isinstance(out_details, dict) else 0
            total_in = as_int(usage.get("input_tokens"))
            self.usage = Usage(max(total_in - cached, 0), as_int(usage.get("output_tokens")), cached, 0, reasoning, tier if isinstance(tier, str) else None)
        status = str(response.get("status") or ("incomplete" if kind == "response.incomplete" else "completed"))
        if status == "incomplete" or kind == "response.incomplete":
            details = response.get("incomplete_details") or {}
            raw = str(details.get("reason") or "incomplete") if isinstance(details, dict) else "incomplete"
            self.stop = Stop(INCOMPLETE.get(raw, LENGTH), raw)
        else:
            self.stop = Stop(TOOL_USE if len(self.calls) else STOP, status)
        self.done = True


def _text(reader: Reader, data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise MalformedEvent(reader.provider, f"{data.get('type')}: {name} is not a string")
    return value
