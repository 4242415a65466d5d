"""What a request asks of a provider, decided before any wire API writes a byte (inference.md
S6.3, S6.4, S6.9, S6.13).

``Request`` is the project's request (messages, tools, the thinking level, a forced call);
``WireModel`` is the model with its provider's base URL and key. ``make_plan`` reads every
model fact from the rulebook (S6.13: no wire API tests the model id): the host's settings
(max_tokens_field, supports_store, supports_developer_role, cache_control_marks), the strict
cap (S6.4, ``constrained.strict_budget``), native forced choice (S6.3, the wire API's predicate
``maps_forced_tool_choice``; a flag it cannot carry is dropped with a warning), the thinking
ladder's wire strings (S6.9) and budgets (S6.13), adaptive thinking, Google's thinkingLevel,
OpenAI's explicit cache breakpoints, llama.cpp's prompt progress. The clients only spell the
plan in their API's form.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from eukhe import effort
from eukhe.inference import constrained, force, ladder, quirks
from eukhe.inference.catalog import CatalogModel
from eukhe.inference.wire.events import ToolCall

log = logging.getLogger(__name__)

API_CHAT = "openai-completions"
API_RESPONSES = "openai-responses"
API_ANTHROPIC = "anthropic-messages"
API_GOOGLE = "google-generative-ai"
API_AZURE = "azure-openai-responses"
API_CODEX = "openai-codex-responses"
API_VERTEX = "google-vertex"
API_MISTRAL = "mistral-conversations"
API_BEDROCK = "bedrock-converse-stream"
APIS: tuple[str, ...] = (API_CHAT, API_RESPONSES, API_ANTHROPIC, API_GOOGLE, API_AZURE, API_CODEX, API_VERTEX, API_MISTRAL, API_BEDROCK)
GEMINI_APIS = frozenset({API_GOOGLE, API_VERTEX})  # Gemini's body: thinking budgets, thinkingLevel (S6.13)
MANUAL_THINKING_APIS = frozenset({API_ANTHROPIC, API_BEDROCK})  # Claude's manual extended thinking: a token budget


@dataclass(frozen=True)
class Tool:
    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    priority: int = 0
    strict_required: bool = False


IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}


@dataclass(frozen=True)
class Image:
    """An image a message carries (a zoom(id, 1) result, memory.md rule 53)."""

    media_type: str  # one of IMAGE_TYPES' values
    data: bytes

    @property
    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64}"


@dataclass(frozen=True)
class Thought:
    """A reasoning block of an assistant's reply that the provider wants back in a tool loop:
    Anthropic's thinking block (``text`` and its ``signature``) or redacted_thinking
    (``redacted``, its data in ``signature``); an OpenAI Responses reasoning item (``item`` its
    id, ``text`` its summary, ``signature`` its encrypted_content); a Gemini thoughtSignature
    not on a function call (those ride on the ``ToolCall``)."""

    text: str = ""
    signature: str = ""
    redacted: bool = False
    item: str = ""


@dataclass(frozen=True)
class Message:
    """One message: ``user`` or ``assistant`` text (an assistant may carry tool calls and the
    thinking it showed with its signature), or a ``tool`` result answering ``tool_call_id``. ``cache`` asks for a
    cache mark at its end (memory.md rule 29), where the API and the rulebook allow marks."""

    role: str
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    cache: bool = False
    is_error: bool = False
    thinking: str = ""  # an assistant's thinking, sent back where the API wants it (with its signature)
    signature: str = ""  # the provider's signature of that thinking (Anthropic, Google)
    parts: tuple[tuple[str, bool], ...] = ()  # a user message's text pieces, each with a cache mark (rule 29); text unused then
    images: tuple[Image, ...] = ()  # a user message's or a tool result's images; sent only to a model that takes images
    thoughts: tuple[Thought, ...] = ()  # an assistant's reasoning blocks, in reply order, sent back in tool loops

    @property
    def pieces(self) -> tuple[tuple[str, bool], ...]:
        """The message's words as text pieces, each with its cache mark: ``parts``, else ``text``."""
        return self.parts if self.parts else ((self.text, False),)

    @property
    def words(self) -> str:
        """The message's whole text: its parts joined, else ``text``."""
        return "".join(text for text, _mark in self.parts) if self.parts else self.text

    def reasoning(self) -> tuple[Thought, ...]:
        """``thoughts``, else the one thinking block of ``thinking`` and ``signature``."""
        if self.thoughts:
            return self.thoughts
        if self.signature:
            return (Thought(self.thinking, self.signature, redacted=not self.thinking),)
        return ()


@dataclass(frozen=True)
class Request:
    messages: tuple[Message, ...]
    system: str = ""
    system_cache: bool = False
    tools: tuple[Tool, ...] = ()
    thinking: str | None = None  # a level of the ladder; None: off
    max_tokens: int | None = None  # None: the model's maxTokens
    forced_tool: str | None = None  # the tool of a forced call (S6.3)
    forced: force.ForcedRequest | None = None  # this attempt's flag and soft prompt
    service_tier: str | None = None
    thinking_budgets: Mapping[str, int] | None = None  # the user's thinkingBudgets
    temperature: float | None = None


@dataclass(frozen=True)
class WireModel:
    provider: str
    id: str
    api: str
    base_url: str
    api_key: str = ""
    name: str | None = None
    reasoning: bool = False
    thinking_level_map: Mapping[str, str | None] | None = None
    compat: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    max_tokens: int = 16_384
    input: tuple[str, ...] = ("text",)  # the catalog's input kinds: "image" when the model takes images

    @property
    def key(self) -> quirks.ModelKey:
        return quirks.ModelKey(self.id, self.name, self.provider, self.api, self.base_url, quirks.compat_of(self.compat))

    @classmethod
    def of(cls, model: CatalogModel, api_key: str, base_url: str | None = None) -> WireModel:
        return cls(
            model.provider,
            model.id,
            model.api,
            model.base_url if base_url is None else base_url,
            api_key,
            model.name,
            model.reasoning,
            model.thinking_level_map,
            model.compat,
            model.headers,
            model.max_tokens,
            model.input,
        )


@dataclass(frozen=True)
class Plan:
    host: str | None
    messages: tuple[Message, ...]  # the request's, the soft prompt last when a call is forced
    max_tokens: int
    max_tokens_field: str | None  # None: the API's default field
    developer_role: bool | None
    store: bool | None
    strict: tuple[bool, ...]  # per tool, in order (S6.4)
    forced_tool: str | None  # native forced choice, only where the API carries it (S6.3)
    forced_dropped: bool  # a flag given where it cannot be sent: dropped, warned
    level: str  # the sent level, clamped to what the model offers; "off": no thinking
    effort: str | None  # the ladder's wire string, else the level's own name; None: off
    effort_from_ladder: bool  # effort is a wire string of the ladder, sent as is (S10 ladder 3)
    budget: int | None  # a token budget (manual thinking, Google without thinkingLevel)
    adaptive: bool
    manual_thinking: bool
    google_thinking_level: bool
    explicit_cache_breakpoints: bool
    cache_marks: bool  # cache_control marks (Anthropic; anthropic/ models on OpenRouter)
    prompt_progress: bool
    service_tier: str | None


def _flag(book: quirks.Rulebook, key: quirks.ModelKey, directive: str) -> bool | None:
    answer = book.query(key, directive)
    return bool(answer.value) if answer.known else None


def make_plan(book: quirks.Rulebook, model: WireModel, request: Request) -> Plan:
    key = model.key
    host = book.host(key.api, key.provider, key.base_url)
    chosen = ladder.ladder(book, key, model.reasoning, model.thinking_level_map)
    level = effort.clamp(chosen.offered, request.thinking or "off") if chosen.offered else "off"
    wire = chosen.wire(level)
    thinking_on = model.reasoning and level != "off"
    if thinking_on:
        effort_text: str | None = wire if wire is not None else level
    else:
        effort_text = wire if model.reasoning else None  # an off entry's wire string ("none", the template toggle "off")
    adaptive = bool(_flag(book, key, "adaptive_thinking")) and thinking_on
    manual = thinking_on and not adaptive and model.api in MANUAL_THINKING_APIS
    google_level = bool(_flag(book, key, "google_thinking_level"))
    budget: int | None = None
    if thinking_on and (manual or (model.api in GEMINI_APIS and not google_level)):
        budget = ladder.thinking_budget(book, key, level, request.thinking_budgets, dynamic=model.api in GEMINI_APIS)
    cap_answer = book.query(key, "strict_cap")
    cap = int(cap_answer.value) if cap_answer.known else 0
    specs = [constrained.ToolSpec(t.name, t.priority, t.strict_required) for t in request.tools]
    strict = constrained.strict_budget(specs, cap).strict if specs else ()
    forced_tool: str | None = None
    dropped = False
    messages = request.messages if "image" in model.input else _without_images(request.messages)
    if request.forced_tool is not None:
        forced = request.forced or force.ForcedRequest(0, False, force.soft_prompt(request.forced_tool))
        if forced.forced_choice:
            if force.maps_forced_tool_choice(model.api, manual):
                forced_tool = request.forced_tool
            else:
                dropped = True
                log.warning("%s: native forced choice of %s dropped: %s cannot carry it here", model.provider, request.forced_tool, model.api)
        messages = _with_soft_prompt(messages, forced.soft_prompt)
    marks_answer = book.query(key, "cache_control_marks")
    if model.api == API_ANTHROPIC:
        marks = True
    elif marks_answer.known and isinstance(marks_answer.value, str):
        marks = key.id.startswith(marks_answer.value)  # the rulebook names the id prefix that gets marks
    else:
        marks = False
    field_answer = book.query(key, "max_tokens_field")
    return Plan(
        host=host,
        messages=messages,
        max_tokens=request.max_tokens if request.max_tokens is not None else model.max_tokens,
        max_tokens_field=field_answer.value if field_answer.known else None,
        developer_role=_flag(book, key, "supports_developer_role"),
        store=_flag(book, key, "supports_store"),
        strict=strict,
        forced_tool=forced_tool,
        forced_dropped=dropped,
        level=level,
        effort=effort_text,
        effort_from_ladder=wire is not None,
        budget=budget,
        adaptive=adaptive,
        manual_thinking=manual,
        google_thinking_level=google_level,
        explicit_cache_breakpoints=bool(_flag(book, key, "explicit_cache_breakpoints")),
        cache_marks=marks,
        prompt_progress=bool(_flag(book, key, "prompt_progress")),
        service_tier=request.service_tier,
    )


def _without_images(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """A model that takes no images gets none; a line of the message's text says so instead."""
    out: list[Message] = []
    for message in messages:
        if message.images:
            count = len(message.images)
            note = f"({count} image{'s' if count != 1 else ''} not sent: the model takes text only)"
            if message.parts:
                message = replace(message, images=(), parts=message.parts + (("\n" + note, False),))
            else:
                message = replace(message, images=(), text=f"{message.text}\n{note}" if message.text else note)
        out.append(message)
    return tuple(out)


def _with_soft_prompt(messages: tuple[Message, ...], prompt: str) -> tuple[Message, ...]:
    """The request ends with the soft prompt: appended to a last user message, else a new one."""
    if messages and messages[-1].role == "user":
        last = messages[-1]
        if last.parts:
            return messages[:-1] + (replace(last, parts=last.parts + (("\n\n" + prompt, False),)),)
        return messages[:-1] + (replace(last, text=f"{last.text}\n\n{prompt}" if last.text else prompt),)
    return messages + (Message("user", prompt),)
