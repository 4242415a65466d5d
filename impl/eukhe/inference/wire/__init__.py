"""The wire APIs (inference.md S6, issue 14): one client per API over httpx, async and streaming,
each turning its stream into the project's events (``events``) through one SSE reader
(``sse``; Bedrock's through the AWS event-stream framing, ``eventstream``), each building its
request from the rulebook's plan (``plan``).

- openai-completions: ``OpenAIChat`` (llama.cpp's server, vLLM, Ollama, OpenRouter);
- openai-responses: ``OpenAIResponses``;
- anthropic-messages: ``AnthropicMessages``;
- google-generative-ai: ``GoogleGenerative``;
- azure-openai-responses: ``AzureOpenAIResponses`` (the Responses wire on Azure's paths);
- openai-codex-responses: ``OpenAICodexResponses`` (the Responses wire of the ChatGPT backend);
- google-vertex: ``GoogleVertex`` (Gemini's wire on Vertex's paths);
- mistral-conversations: ``MistralConversations``;
- bedrock-converse-stream: ``BedrockConverseStream`` (Amazon Bedrock's ConverseStream: SigV4 or
  a Bedrock API key, ``sigv4``; binary event-stream frames).

``client_for(model)`` picks the client of the model's API; ``collect`` reads a whole stream
into a ``Reply``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Any

from eukhe.inference.wire.anthropic import AnthropicMessages
from eukhe.inference.wire.azure_openai_responses import AzureOpenAIResponses
from eukhe.inference.wire.base import WireClient, closing
from eukhe.inference.wire.bedrock_converse_stream import BedrockConverseStream
from eukhe.inference.wire.events import (
    BadRequest,
    Event,
    PromptProgress,
    Refusal,
    Stop,
    TextDelta,
    ThinkingDelta,
    ThinkingSignature,
    ToolCall,
    Usage,
)
from eukhe.inference.wire.google import GoogleGenerative
from eukhe.inference.wire.google_vertex import GoogleVertex
from eukhe.inference.wire.mistral import MistralConversations
from eukhe.inference.wire.openai_chat import OpenAIChat
from eukhe.inference.wire.openai_codex_responses import OpenAICodexResponses
from eukhe.inference.wire.openai_responses import OpenAIResponses
from eukhe.inference.wire.plan import Message, Request, Tool, WireModel

CLIENTS: dict[str, type[WireClient]] = {
    c.api: c
    for c in (
        OpenAIChat,
        OpenAIResponses,
        AnthropicMessages,
        GoogleGenerative,
        AzureOpenAIResponses,
        OpenAICodexResponses,
        GoogleVertex,
        MistralConversations,
        BedrockConverseStream,
    )
}

__all__ = ["CLIENTS", "Message", "Reply", "Request", "Tool", "WireClient", "WireModel", "client_for", "closing", "collect"]


def client_for(model: WireModel, **options: Any) -> WireClient:
    kind = CLIENTS.get(model.api)
    if kind is None:
        raise BadRequest(f"{model.provider}: wire API {model.api!r} has no client here (clients: {', '.join(CLIENTS)})")
    return kind(model, **options)


@dataclass(frozen=True)
class Reply:
    text: str
    thinking: str
    tool_calls: tuple[ToolCall, ...]
    stop: Stop
    usage: Usage | None
    signatures: tuple[str, ...] = ()
    progress: tuple[PromptProgress, ...] = ()
    refusal: str | None = None  # the refusal's text when the model declined (stop refusal)


async def collect(events: AsyncIterable[Event]) -> Reply:
    text: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    signatures: list[str] = []
    progress: list[PromptProgress] = []
    usage: Usage | None = None
    refusal: str | None = None
    stop: Stop | None = None
    async with closing(aiter(events)) as stream:
        async for event in stream:
            if isinstance(event, TextDelta):
                text.append(event.text)
            elif isinstance(event, ThinkingDelta):
                thinking.append(event.text)
            elif isinstance(event, ThinkingSignature):
                signatures.append(event.signature)
            elif isinstance(event, ToolCall):
                calls.append(event)
            elif isinstance(event, PromptProgress):
                progress.append(event)
            elif isinstance(event, Refusal):
                refusal = event.text
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Stop):
                stop = event
    assert stop is not None, "every stream ends with Stop or raises"
    return Reply("".join(text), "".join(thinking), tuple(calls), stop, usage, tuple(signatures), tuple(progress), refusal)
