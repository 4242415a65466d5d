"""Google generateContent (api "google-generative-ai"), streamed.

Request: POST {baseUrl}/models/{model}:streamGenerateContent?alt=sse, ``x-goog-api-key``;
``contents`` (role user or model; parts ``text``, ``functionCall``, ``functionResponse``, each
thoughtSignature back on the part it came with), ``systemInstruction``; tools as
``functionDeclarations`` with ``parametersJsonSchema``; forced choice as
``toolConfig.functionCallingConfig: {mode: ANY, allowedFunctionNames: [name]}`` (S6.3), else
``VALIDATED`` when the strict plan holds a strict tool (S6.4); ``generationConfig``:
``maxOutputTokens`` and ``thinkingConfig`` with ``includeThoughts`` and either
``thinkingLevel`` (the rulebook's google_thinking_level; upper case, the enum's spelling) or
``thinkingBudget`` (S6.13: the rule's budget, the user's clamped to it, else -1, dynamic).

Stream: each ``data:`` is a GenerateContentResponse: ``candidates[0].content.parts`` (``text``,
``thought: true`` for thinking, ``thoughtSignature``, ``functionCall`` whole with ``name``,
``args`` and maybe ``id``), ``candidates[0].finishReason`` (STOP -> stop, or toolUse with calls;
MAX_TOKENS, CONTINUATION -> length; the content filters SAFETY, RECITATION, PROHIBITED_CONTENT,
BLOCKLIST, SPII, IMAGE_SAFETY, IMAGE_PROHIBITED_CONTENT, IMAGE_RECITATION, MODEL_ARMOR -> refusal,
``finishMessage`` its text; MALFORMED_FUNCTION_CALL and others -> stop with the raw value), ``usageMetadata``
(promptTokenCount, cachedContentTokenCount, candidatesTokenCount, thoughtsTokenCount). There is
no end event: the body may end once a finishReason arrived; before that it was cut. A prompt
blocked before any candidate (``promptFeedback.blockReason``) is ``PromptBlocked``, not retried.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from eukhe import strict_json
from eukhe.inference.wire.base import Reader, WireClient, as_int
from eukhe.inference.wire.events import (
    LENGTH,
    REFUSAL,
    STOP,
    TOOL_USE,
    Event,
    MalformedEvent,
    PromptBlocked,
    ProviderError,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    Usage,
)
from eukhe.inference.wire.plan import API_GOOGLE, Image, Message, Plan, Request
from eukhe.inference.wire.sse import SseEvent

# google-genai's FinishReason: the content filters are refusals; the rest stop with their raw value
FINISH = {"STOP": STOP, "MAX_TOKENS": LENGTH, "CONTINUATION": LENGTH}
FINISH.update(dict.fromkeys(("SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR"), REFUSAL))
LEVELS = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high", "max": "high"}


def _image(image: Image) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.media_type, "data": image.base64}}


def _arguments(text: str) -> dict[str, Any]:
    try:
        args = strict_json.loads(text) if text else {}
    except json.JSONDecodeError:
        args = {}
    return args if isinstance(args, dict) else {}


def _model_parts(message: Message) -> list[dict[str, Any]]:
    """An assistant's parts: its text, then its calls, each thoughtSignature back on the part
    it came with (a call's on its functionCall part, Gemini 3 wants those; the others on the
    text part, else the first part)."""
    parts: list[dict[str, Any]] = [{"text": message.words}] if message.words else []
    for call in message.tool_calls:
        part: dict[str, Any] = {"functionCall": {"name": call.name, "args": _arguments(call.arguments), "id": call.id}}
        if call.signature:
            part["thoughtSignature"] = call.signature
        parts.append(part)
    signatures = [t.signature for t in message.reasoning() if t.signature]
    if signatures and parts and "thoughtSignature" not in parts[0]:
        parts[0] = {**parts[0], "thoughtSignature": signatures[0]}
    return parts


def google_contents(plan: Plan) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in plan.messages:
        parts: list[dict[str, Any]] = []
        if message.role == "tool":
            role = "user"
            parts.append({"functionResponse": {"name": message.tool_name or "", "id": message.tool_call_id, "response": {"output": message.text}}})
            parts += [_image(i) for i in message.images]
        elif message.role == "assistant":
            role = "model"
            parts = _model_parts(message)
        else:
            role = "user"
            texts = [text for text, _mark in message.pieces if text]
            parts = [{"text": text} for text in texts] if texts or message.images else [{"text": ""}]
            parts += [_image(i) for i in message.images]
        if not parts:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out


class GoogleGenerative(WireClient):
    api = API_GOOGLE

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {"contents": google_contents(plan)}
        if request.system:
            body["systemInstruction"] = {"parts": [{"text": request.system}]}
        if request.tools:
            # parametersJsonSchema takes JSON Schema as it is; parameters is an OpenAPI subset that
            # refuses what the tools use (a union of types, lower-case type names)
            declarations = [{"name": t.name, "description": t.description, "parametersJsonSchema": dict(t.parameters)} for t in request.tools]
            body["tools"] = [{"functionDeclarations": declarations}]
            if plan.forced_tool is not None:
                body["toolConfig"] = {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [plan.forced_tool]}}
            elif any(plan.strict):
                body["toolConfig"] = {"functionCallingConfig": {"mode": "VALIDATED"}}
        config: dict[str, Any] = {"maxOutputTokens": plan.max_tokens}
        if plan.level != "off" and plan.effort is not None:
            thinking: dict[str, Any] = {"includeThoughts": True}
            if plan.google_thinking_level:
                level = plan.effort if plan.effort_from_ladder else LEVELS.get(plan.level, "high")
                thinking["thinkingLevel"] = level.upper()  # the enum's own spelling, as the SDK sends it
            elif plan.budget is not None:
                thinking["thinkingBudget"] = plan.budget
            config["thinkingConfig"] = thinking
        if request.temperature is not None:
            config["temperature"] = request.temperature
        body["generationConfig"] = config
        own = {"x-goog-api-key": self.model.api_key} if self.model.api_key else {}
        return self.url(f"/models/{quote(self.model.id, safe='')}:streamGenerateContent?alt=sse"), self.headers(own), body

    def reader(self, plan: Plan) -> Reader:
        return GoogleReader(self.provider)


class GoogleReader(Reader):
    def __init__(self, provider: str) -> None:
        super().__init__(provider)
        self.finish_reason: str | None = None
        self.finish_message = ""

    def complete(self) -> bool:
        return self.finish_reason is not None

    def feed(self, event: SseEvent) -> list[Event]:
        data = self.json(event)
        if isinstance(data, list):  # a JSON array stream item: the first object
            data = data[0] if data else {}
        if not isinstance(data, dict):
            raise MalformedEvent(self.provider, f"a chunk is not a JSON object: {event.data[:120]!r}")
        if "error" in data:
            error = data["error"]
            raise ProviderError(self.provider, None, json.dumps(error), str(error.get("status", "")) if isinstance(error, dict) else "")
        out: list[Event] = []
        usage = data.get("usageMetadata")
        if isinstance(usage, dict):
            cached = as_int(usage.get("cachedContentTokenCount"))
            thoughts = as_int(usage.get("thoughtsTokenCount"))
            self.usage = Usage(
                max(as_int(usage.get("promptTokenCount")) - cached, 0), as_int(usage.get("candidatesTokenCount")) + thoughts, cached, 0, thoughts
            )
        feedback = data.get("promptFeedback")
        blocked = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if isinstance(blocked, str) and blocked and not data.get("candidates"):
            raise PromptBlocked(self.provider, f"the prompt was blocked (promptFeedback.blockReason {blocked})", blocked)
        candidates = data.get("candidates")
        if candidates is None:
            return out
        if not isinstance(candidates, list):
            raise MalformedEvent(self.provider, "candidates is not a list")
        for candidate in candidates[:1]:
            if not isinstance(candidate, dict):
                raise MalformedEvent(self.provider, "a candidate is not an object")
            content = candidate.get("content") or {}
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if not isinstance(part, dict):
                    raise MalformedEvent(self.provider, "a part is not an object")
                if isinstance(part.get("text"), str) and part["text"]:
                    out.append(ThinkingDelta(part["text"], 0) if part.get("thought") is True else TextDelta(part["text"], 1))
                call = part.get("functionCall")
                signature = part.get("thoughtSignature")
                signature = signature if isinstance(signature, str) else ""
                if isinstance(call, dict):
                    args = call.get("args")
                    key = ("call", len(self.calls))
                    arguments = json.dumps(args if args is not None else {}, ensure_ascii=False)
                    out.append(self.calls.delta(key, str(call.get("id") or ""), str(call.get("name") or ""), arguments, signature=signature))
                elif signature:
                    out.append(ThinkingSignature(signature, 0))
            reason = candidate.get("finishReason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
            message = candidate.get("finishMessage")
            if isinstance(message, str):
                self.finish_message = message
        return out

    def finish(self) -> list[Event]:
        if self.finish_reason is not None:
            mapped = FINISH.get(self.finish_reason, STOP)
            if mapped == STOP and len(self.calls):
                mapped = TOOL_USE
            self.stop = Stop(mapped, self.finish_reason)
            if mapped == REFUSAL:
                self.refusal = [self.finish_message]
        return super().finish()
