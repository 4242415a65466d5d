"""OpenAI chat completions (api "openai-completions"), with the conventions of llama.cpp's server,
vLLM, Ollama and OpenRouter.

Request: POST {baseUrl}/chat/completions, ``Authorization: Bearer``; ``stream: true`` with
``stream_options.include_usage``; the system prompt as a ``developer`` message only where the
rulebook says the host supports it (supports_developer_role), else ``system``; the max-tokens
field the rulebook names (max_tokens_field; default ``max_completion_tokens``); ``store: false``
where supported (supports_store); tools as functions, ``strict`` per the strict plan (S6.4);
native forced choice as ``tool_choice: {type: function, function: {name}}`` (S6.3); thinking as
``reasoning_effort`` with the ladder's wire string (OpenRouter hosts: ``reasoning: {effort}``),
the wire string ``off`` being the chat template toggle
(``chat_template_kwargs.enable_thinking: false``, llama.cpp and vLLM Qwen templates);
``return_progress`` where the rulebook sets prompt_progress (llama.cpp, S6.7); cache_control
marks on anthropic/ models at OpenRouter (cache_control_marks).

Stream: ``data:`` chunks, ``data: [DONE]`` last. ``choices[0].delta``: ``content``,
``reasoning_content`` (llama.cpp, vLLM, DeepSeek) or ``reasoning`` (OpenRouter, Ollama),
``tool_calls`` by ``index`` (Ollama may send whole calls without one: each is a new call),
``refusal`` (the model declines: a refusal whatever the finish_reason, its text kept),
``finish_reason`` (stop, length, tool_calls, function_call, content_filter: refusal). ``usage``
(prompt_tokens with prompt_tokens_details.cached_tokens and cache_write_tokens, completion_tokens with
completion_tokens_details.reasoning_tokens) in its own chunk. ``prompt_progress`` chunks
(llama.cpp). An ``error`` object in a chunk (OpenRouter mid-stream) is a ProviderError. vLLM,
llama.cpp and Ollama stop with ``stop`` plus calls: the calls are read all the same (S6.10).
"""

from __future__ import annotations

import json
from typing import Any

from eukhe.inference.wire.base import Reader, WireClient, as_int, kind_of
from eukhe.inference.wire.events import (
    LENGTH,
    REFUSAL,
    STOP,
    TOOL_USE,
    Event,
    MalformedEvent,
    PromptProgress,
    ProviderError,
    Stop,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from eukhe.inference.wire.plan import API_CHAT, Image, Message, Plan, Request
from eukhe.inference.wire.sse import SseEvent

FINISH = {"stop": STOP, "length": LENGTH, "tool_calls": TOOL_USE, "function_call": TOOL_USE, "content_filter": REFUSAL}
OPENROUTER_HOSTS = frozenset({"openrouter", "openrouter-url"})
CACHE_MARK = {"type": "ephemeral"}


def _text_content(text: str, mark: bool) -> Any:
    if not mark:
        return text
    return [{"type": "text", "text": text, "cache_control": CACHE_MARK}]


def chat_messages(plan: Plan, request: Request) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        role = "developer" if plan.developer_role else "system"
        out.append({"role": role, "content": _text_content(request.system, plan.cache_marks and request.system_cache)})
    seen: list[Image] = []  # a tool message carries text only: its images follow the tool results as a user message
    for message in plan.messages:
        if seen and message.role != "tool":
            out.append(_images_message(seen))
            seen = []
        out.append(_message(message, plan.cache_marks and message.cache, plan.cache_marks))
        if message.role == "tool":
            seen += message.images
    if seen:
        out.append(_images_message(seen))
    return out


def _image_part(image: Image) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image.data_url}}


def _images_message(images: list[Image]) -> dict[str, Any]:
    return {"role": "user", "content": [_image_part(i) for i in images]}


def _message(message: Message, mark: bool, marks: bool = False) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": _text_content(message.text, mark)}
    if message.role == "assistant":
        entry: dict[str, Any] = {"role": "assistant", "content": _text_content(message.words, mark) if message.words else None}
        if message.tool_calls:
            entry["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in message.tool_calls
            ]
        return entry
    if message.images or mark or (marks and message.parts):
        content: list[dict[str, Any]] = [
            {"type": "text", "text": text, **({"cache_control": CACHE_MARK} if part_mark and marks else {})} for text, part_mark in message.pieces if text
        ]
        content += [_image_part(i) for i in message.images]
        content = content or [{"type": "text", "text": ""}]
        if mark:
            content[-1] = {**content[-1], "cache_control": CACHE_MARK}
        return {"role": "user", "content": content}
    return {"role": "user", "content": message.words}


class OpenAIChat(WireClient):
    api = API_CHAT

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model.id,
            "messages": chat_messages(plan, request),
            "stream": True,
            "stream_options": {"include_usage": True},
            (plan.max_tokens_field or "max_completion_tokens"): plan.max_tokens,
        }
        if plan.store:
            body["store"] = False
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": strict},
                }
                for t, strict in zip(request.tools, plan.strict)
            ]
        if plan.forced_tool is not None:
            body["tool_choice"] = {"type": "function", "function": {"name": plan.forced_tool}}
        if plan.effort is not None:
            if plan.effort == "off" and plan.effort_from_ladder:
                body["chat_template_kwargs"] = {"enable_thinking": False}
            elif plan.host in OPENROUTER_HOSTS:
                body["reasoning"] = {"effort": plan.effort}
            else:
                body["reasoning_effort"] = plan.effort
        if plan.prompt_progress:
            body["return_progress"] = True
        if plan.service_tier is not None:
            body["service_tier"] = plan.service_tier
        if request.temperature is not None:
            body["temperature"] = request.temperature
        headers = self.headers({"authorization": f"Bearer {self.model.api_key}"} if self.model.api_key else {})
        return self.url("/chat/completions"), headers, body

    def reader(self, plan: Plan) -> Reader:
        return ChatReader(self.provider)


class ChatReader(Reader):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.finish_reason: str | None = None

    def complete(self) -> bool:
        # [DONE] ends the stream; a server that closes after the finish_reason (and its usage
        # chunk) without [DONE] has still given a whole reply.
        return self.done or self.finish_reason is not None

    def feed(self, event: SseEvent) -> list[Event]:
        if event.data.strip() == "[DONE]":
            self.done = True
            self._close()
            return []
        chunk = self.obj(event)
        out: list[Event] = []
        error = chunk.get("error")
        if error is not None:
            raise ProviderError(self.provider, None, json.dumps(error), kind_of(error))
        progress = chunk.get("prompt_progress")
        if isinstance(progress, dict):
            out.append(
                PromptProgress(
                    as_int(progress.get("total")),
                    as_int(progress.get("cache")),
                    as_int(progress.get("processed")),
                    float(progress.get("time_ms") or 0),
                )
            )
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt = as_int(usage.get("prompt_tokens"))
            details = usage.get("prompt_tokens_details") or {}
            cached = as_int(details.get("cached_tokens")) if isinstance(details, dict) else 0
            written = as_int(details.get("cache_write_tokens")) if isinstance(details, dict) else 0
            completion = usage.get("completion_tokens_details") or {}
            reasoning = as_int(completion.get("reasoning_tokens")) if isinstance(completion, dict) else 0
            tier = chunk.get("service_tier")
            shown = tier if isinstance(tier, str) else None
            self.usage = Usage(max(prompt - cached - written, 0), as_int(usage.get("completion_tokens")), cached, written, reasoning, shown)
        choices = chunk.get("choices")
        if choices is None:
            return out
        if not isinstance(choices, list):
            raise MalformedEvent(self.provider, f"choices is not a list: {event.data[:120]!r}")
        for choice in choices[:1]:
            if not isinstance(choice, dict):
                raise MalformedEvent(self.provider, f"a choice is not an object: {event.data[:120]!r}")
            delta = choice.get("delta") or {}
            if not isinstance(delta, dict):
                raise MalformedEvent(self.provider, f"delta is not an object: {event.data[:120]!r}")
            for name in ("reasoning_content", "reasoning"):
                thought = delta.get(name)
                if isinstance(thought, str) and thought:
                    out.append(ThinkingDelta(thought, 0))
                    break
            content = delta.get("content")
            if isinstance(content, str) and content:
                out.append(TextDelta(content, 1))
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                self.refusal.append(refusal)
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for call in calls:
                    out.append(self._call(call))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        return out

    def _call(self, call: Any) -> Event:
        if not isinstance(call, dict):
            raise MalformedEvent(self.provider, f"a tool call delta is not an object: {call!r:.120}")
        function = call.get("function") or {}
        if not isinstance(function, dict):
            raise MalformedEvent(self.provider, f"a tool call's function is not an object: {call!r:.120}")
        index = call.get("index")
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if not isinstance(index, int) or isinstance(index, bool):
            # Ollama: whole calls with no index; each one is a new call
            index = ("whole", len(self.calls))
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # Ollama's native form: an object, not text
            arguments = json.dumps(arguments, ensure_ascii=False)
        name = function.get("name") if isinstance(function.get("name"), str) else None
        return self.calls.delta(index, call_id, name, arguments if isinstance(arguments, str) else "")

    def _close(self) -> None:
        raw = self.finish_reason or "stop"
        # OpenAI ends a refusal with finish_reason stop: its text in delta.refusal says it
        self.stop = Stop(REFUSAL if self.refusal else FINISH.get(raw, STOP), raw)

    def finish(self) -> list[Event]:
        if self.stop is None and self.finish_reason is not None:
            self._close()
        return super().finish()
