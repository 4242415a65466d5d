"""Mistral Conversations (api "mistral-conversations"), streamed.

Request: POST {baseUrl}/v1/conversations (baseUrl ``https://api.mistral.ai``),
``Authorization: Bearer``; ``stream: true``, ``store: false`` (nothing kept server-side: every
request carries the whole conversation); ``model``; the system prompt as ``instructions``;
``inputs``, the conversation as entries: ``message.input`` (role user; content a string, or
``text`` and ``image_url`` chunks), ``message.output`` (role assistant; its reasoning as
``thinking`` chunks, each with its signature, then its text), ``function.call`` (tool_call_id,
name, arguments) and ``function.result`` (tool_call_id, result); tools as
``{type: function, function: {name, description, parameters, strict}}`` (S6.4);
``completion_args``: ``max_tokens``, ``temperature``, ``reasoning_effort`` (the ladder's wire
string, S6.9) and ``tool_choice`` ``any`` for a forced call (S6.3: the API names no tool in its
choice; the soft prompt names it).

Stream: named events, each ``data`` a JSON object with its ``type``:
``conversation.response.started``, ``message.output.delta`` (content a string or one chunk:
``text``, or ``thinking`` with its text chunks and signature), ``function.call.delta`` (the
call's tool_call_id and name on every piece, the arguments in pieces),
``tool.execution.*`` and ``agent.handoff.*`` (server-side work: skipped), and the end:
``conversation.response.done`` (usage prompt_tokens, completion_tokens; no finish reason: stop,
or toolUse with calls) or ``conversation.response.error`` (message, code: a ProviderError).
"""

from __future__ import annotations

import json
from typing import Any

from eukhe.inference.wire.base import Reader, WireClient, as_int
from eukhe.inference.wire.events import STOP, TOOL_USE, Event, MalformedEvent, ProviderError, Stop, TextDelta, ThinkingDelta, ThinkingSignature, Usage
from eukhe.inference.wire.plan import API_MISTRAL, Message, Plan, Request
from eukhe.inference.wire.sse import SseEvent

DONE = "conversation.response.done"


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    texts = [text for text, _mark in message.pieces if text]
    if not message.images and len(texts) <= 1:
        return texts[0] if texts else ""
    return [{"type": "text", "text": text} for text in texts] + [{"type": "image_url", "image_url": i.data_url} for i in message.images]


def _assistant(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for thought in message.reasoning():
        if thought.redacted:
            continue
        chunk: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": thought.text}]}
        if thought.signature:
            chunk["signature"] = thought.signature
        content.append(chunk)
    if message.words:
        content.append({"type": "text", "text": message.words})
    out: list[dict[str, Any]] = []
    if content:
        plain = len(content) == 1 and content[0]["type"] == "text"
        out.append({"type": "message.output", "role": "assistant", "content": message.words if plain else content})
    for call in message.tool_calls:
        out.append({"type": "function.call", "tool_call_id": call.id, "name": call.name, "arguments": call.arguments})
    return out


def mistral_inputs(plan: Plan) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        if message.role == "tool":
            out.append({"type": "function.result", "tool_call_id": message.tool_call_id or "", "result": message.text})
            if message.images:  # a function result is text only: its images follow as a user message
                images = [{"type": "image_url", "image_url": i.data_url} for i in message.images]
                out.append({"type": "message.input", "role": "user", "content": images})
        elif message.role == "assistant":
            out += _assistant(message)
        else:
            out.append({"type": "message.input", "role": "user", "content": _user_content(message)})
    return out


class MistralConversations(WireClient):
    api = API_MISTRAL

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {"model": self.model.id, "inputs": mistral_inputs(plan), "stream": True, "store": False}
        if request.system:
            body["instructions"] = request.system
        if request.tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": strict}}
                for t, strict in zip(request.tools, plan.strict)
            ]
        args: dict[str, Any] = {"max_tokens": plan.max_tokens}
        if request.temperature is not None:
            args["temperature"] = request.temperature
        if plan.forced_tool is not None:
            args["tool_choice"] = "any"
        if plan.effort is not None:
            args["reasoning_effort"] = plan.effort
        body["completion_args"] = args
        headers = self.headers({"authorization": f"Bearer {self.model.api_key}"} if self.model.api_key else {})
        return self.url("/v1/conversations"), headers, body

    def reader(self, plan: Plan) -> Reader:
        return MistralReader(self.provider)


class MistralReader(Reader):
    def feed(self, event: SseEvent) -> list[Event]:
        data = self.obj(event)
        kind = data.get("type", event.event)
        if kind == "message.output.delta":
            return self._content(data.get("content"), as_int(data.get("output_index")))
        if kind == "function.call.delta":
            key = data.get("tool_call_id") or data.get("id")
            if not isinstance(key, str) or not key:
                raise MalformedEvent(self.provider, "function.call.delta without its tool_call_id")
            arguments = data.get("arguments")
            if not isinstance(arguments, str):
                raise MalformedEvent(self.provider, "function.call.delta: arguments is not a string")
            return [self.calls.delta(key, key, str(data.get("name") or ""), arguments)]
        if kind == DONE:
            usage = data.get("usage")
            if isinstance(usage, dict):
                self.usage = Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))
            self.stop = Stop(TOOL_USE if len(self.calls) else STOP, DONE)
            self.done = True
            return []
        if kind == "conversation.response.error":
            code = data.get("code")
            raise ProviderError(self.provider, None, json.dumps(data), str(code) if isinstance(code, (int, str)) else "")
        return []

    def _content(self, content: Any, index: int) -> list[Event]:
        if isinstance(content, str):
            return [TextDelta(content, index)] if content else []
        if not isinstance(content, dict):
            raise MalformedEvent(self.provider, f"message.output.delta: content is neither text nor a chunk: {content!r:.120}")
        kind = content.get("type")
        if kind == "text":
            text = content.get("text")
            return [TextDelta(text, index)] if isinstance(text, str) and text else []
        if kind == "thinking":
            out: list[Event] = []
            for piece in content.get("thinking") or []:
                if isinstance(piece, dict) and piece.get("type") == "text" and isinstance(piece.get("text"), str) and piece["text"]:
                    out.append(ThinkingDelta(piece["text"], index))
            signature = content.get("signature")
            if isinstance(signature, str) and signature:
                out.append(ThinkingSignature(signature, index))
            return out
        return []  # image, document and tool-file chunks: not text of the reply
