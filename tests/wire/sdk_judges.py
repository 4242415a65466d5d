"""The vendors' SDKs read a stream and say what it holds, in the terms our clients' ``Reply`` has,
so the two can be compared field by field (tests/wire/test_sdk_loopback.py,
tests/wire/test_sdk_differential.py).

Each judge points the SDK at a server by its base URL and reads one whole stream with the SDK's
own accumulator: openai ``chat.completions.stream`` (get_final_completion) and
``responses.stream`` (get_final_response; an incomplete response is the SDK's own
response.incomplete event, whose output the SDK fills from the items it assembled), anthropic
``messages.stream`` (get_final_message), google-genai ``generate_content_stream`` (each
chunk, joined). The only arithmetic here is the vendors' documented token relations (a
prompt count includes its cached part; Gemini's output is candidates plus thoughts).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import pytest
import openai
from google import genai
from google.genai import types

from eukhe.inference.wire import Reply
from eukhe.inference.wire.events import REFUSAL, ProviderError, StreamCut

# The FinishReason values google-genai documents as output withheld by a content filter
# ("potentially violates safety policies", "prohibited", "blocklist", "SPII", "recitation",
# "blocked by Model Armor").
GEMINI_FILTERS = frozenset({"SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "MODEL_ARMOR"})


@dataclass(frozen=True)
class Judged:
    text: str
    thinking: str
    signatures: tuple[str, ...]
    calls: tuple[tuple[str, str, Any], ...]  # id, name, arguments (text where the SDK keeps text, else the parsed object)
    usage: tuple[int, int, int, int, int] | None  # input not from cache, output, cache read, cache write, reasoning
    raw_stop: str
    refusal: str | None  # the refusal's text ("" when the provider gave none); None: no refusal


@dataclass(frozen=True)
class Failed:
    """The SDK raised: its exception's type and what it says."""

    kind: str
    said: str


def _arguments(api: str, text: str) -> Any:
    return text if api.startswith("openai") else json.loads(text)


def ours(api: str, reply: Reply) -> Judged:
    """Our client's reply in the judges' terms."""
    usage = None
    if reply.usage is not None:
        u = reply.usage
        usage = (u.input, u.output, u.cache_read, u.cache_write, u.reasoning)
    calls = tuple((c.id, c.name, _arguments(api, c.arguments)) for c in reply.tool_calls)
    signatures = reply.signatures + tuple(c.signature for c in reply.tool_calls if c.signature)
    refusal = reply.refusal if reply.stop.reason == REFUSAL else None
    return Judged(reply.text, reply.thinking, signatures, calls, usage, reply.stop.raw, refusal)


def judge_chat(base: str) -> Judged:
    client = openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0)
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
        for _event in stream:
            pass
        # the accumulated snapshot: get_final_completion refuses a length or content_filter
        # finish (it would parse the content), though the stream was read whole
        final = stream.current_completion_snapshot
    choice = final.choices[0]
    message = choice.message
    thinking = (message.model_extra or {}).get("reasoning_content") or (message.model_extra or {}).get("reasoning") or ""
    calls = tuple((c.id, c.function.name, c.function.arguments) for c in message.tool_calls or [] if c.type == "function")
    usage = None
    if final.usage is not None:
        u = final.usage
        details = u.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details is not None else 0
        written = (details.cache_write_tokens or 0) if details is not None else 0
        reasoning = (u.completion_tokens_details.reasoning_tokens or 0) if u.completion_tokens_details is not None else 0
        usage = (u.prompt_tokens - cached - written, u.completion_tokens, cached, written, reasoning)
    refused = message.refusal is not None or choice.finish_reason == "content_filter"
    return Judged(message.content or "", thinking, (), calls, usage, choice.finish_reason, (message.refusal or "") if refused else None)


def judge_responses(base: str, client: openai.OpenAI | None = None) -> Judged:
    """``client``: the SDK's client of another host of the API (AzureOpenAI, the Codex backend's)."""
    client = client if client is not None else openai.OpenAI(base_url=base + "/v1", api_key="k", max_retries=0)
    final: Any = None
    with client.responses.stream(model="m", input="hi", include=["reasoning.encrypted_content"]) as stream:
        for event in stream:
            if event.type == "response.incomplete":
                final = event.response
            elif event.type == "error":  # the SDK yields it as an event; the stream has ended
                raise StreamErrorEvent(f"{event.code}: {event.message}")
        if final is None:
            final = stream.get_final_response()
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    refusals: list[str] = []
    calls: list[tuple[str, str, Any]] = []
    for item in final.output:
        if item.type == "message":
            for part in item.content:
                if part.type == "output_text":
                    text.append(part.text)
                elif part.type == "refusal":
                    refusals.append(part.refusal)
        elif item.type == "reasoning":
            thinking += [s.text for s in item.summary]
            if item.encrypted_content is not None:
                signatures.append(item.encrypted_content)
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, item.arguments))
    usage = None
    if final.usage is not None:
        u = final.usage
        cached, written = u.input_tokens_details.cached_tokens, u.input_tokens_details.cache_write_tokens
        usage = (u.input_tokens - cached - written, u.output_tokens, cached, written, u.output_tokens_details.reasoning_tokens)
    if final.status == "incomplete":
        raw = final.incomplete_details.reason if final.incomplete_details is not None and final.incomplete_details.reason else "incomplete"
    else:
        raw = final.status or "completed"
    refusal = "".join(refusals) if refusals else ("" if raw == "content_filter" else None)
    return Judged("".join(text), "".join(thinking), tuple(signatures), tuple(calls), usage, raw, refusal)


def judge_anthropic(base: str) -> Judged:
    client = anthropic.Anthropic(base_url=base, api_key="k", max_retries=0)
    with client.messages.stream(model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]) as stream:
        message = stream.get_final_message()
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    calls: list[tuple[str, str, Any]] = []
    for block in message.content:
        if block.type == "text":
            text.append(block.text)
        elif block.type == "thinking":
            thinking.append(block.thinking)
            signatures.append(block.signature)
        elif block.type == "redacted_thinking":
            signatures.append(block.data)
        elif block.type == "tool_use":
            calls.append((block.id, block.name, block.input))
    u = message.usage
    reasoning = u.output_tokens_details.thinking_tokens if u.output_tokens_details is not None else 0
    usage = (u.input_tokens, u.output_tokens, u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0, reasoning)
    raw = message.stop_reason or ""
    refusal = None
    if raw == "refusal":
        refusal = (message.stop_details.explanation or "") if message.stop_details is not None else ""
    return Judged("".join(text), "".join(thinking), tuple(signatures), tuple(calls), usage, raw, refusal)


def judge_google(base: str, client: genai.Client | None = None) -> Judged:
    """``client``: the SDK's client in another mode (Vertex)."""
    client = client if client is not None else genai.Client(api_key="k", http_options=types.HttpOptions(base_url=base, api_version="v1beta"))
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    calls: list[tuple[str, str, Any]] = []
    raw, message, usage = "", None, None
    for chunk in client.models.generate_content_stream(model="m", contents="hi"):
        if chunk.usage_metadata is not None:
            u = chunk.usage_metadata
            cached, thoughts = u.cached_content_token_count or 0, u.thoughts_token_count or 0
            usage = ((u.prompt_token_count or 0) - cached, (u.candidates_token_count or 0) + thoughts, cached, 0, thoughts)
        if chunk.prompt_feedback is not None and chunk.prompt_feedback.block_reason is not None and not chunk.candidates:
            raise PromptBlockedBySdk(str(chunk.prompt_feedback.block_reason.value))
        for candidate in (chunk.candidates or [])[:1]:
            for part in (candidate.content.parts if candidate.content is not None else None) or []:
                if part.function_call is not None:
                    call = part.function_call
                    calls.append((call.id or "", call.name or "", call.args if call.args is not None else {}))
                elif part.text:
                    (thinking if part.thought else text).append(part.text)
                if part.thought_signature is not None:
                    signatures.append(base64.b64encode(part.thought_signature).decode())
            if candidate.finish_reason is not None:
                raw = candidate.finish_reason.value
            if candidate.finish_message is not None:
                message = candidate.finish_message
    refusal = (message or "") if raw in GEMINI_FILTERS else None
    return Judged("".join(text), "".join(thinking), tuple(signatures), tuple(calls), usage, raw, refusal)


class StreamErrorEvent(Exception):
    """openai's responses.stream yields an ``error`` event rather than raising: said so here."""


class PromptBlockedBySdk(Exception):
    """google-genai gives a blocked prompt as a response without candidates: said so here."""


JUDGES: dict[str, Callable[[str], Judged]] = {
    "openai-completions": judge_chat,
    "openai-responses": judge_responses,
    "anthropic-messages": judge_anthropic,
    "google-generative-ai": judge_google,
}

def judge(api: str, base: str) -> Judged | Failed:
    """What the SDK makes of the stream at ``base``: its reply, or the error it raised."""
    try:
        return JUDGES[api](base)
    except Exception as error:  # whatever the SDK raises (its own errors, its httpx's, its asserts)
        return Failed(type(error).__name__, str(error))


READ = ("text", "thinking", "calls", "raw_stop", "refusal", "usage")


def read_alike(
    name: str, theirs: Judged | Failed, read: Callable[[bool], Reply], api: str, *, error: str, fields: tuple[str, ...] = READ, signed: bool = False
) -> None:
    """Our client reads the scripted stream ``name`` as the SDK did (``theirs``): the same failure
    for the error and the cut scripts, else the same ``fields`` (and signatures, when ``signed``).
    ``read(thinking)`` reads our client's reply, with thinking asked for or not."""
    if name == "error":
        assert isinstance(theirs, Failed) and error in theirs.said, theirs
        with pytest.raises(ProviderError, match=error):
            read(False)
        return
    if name == "cut":
        assert isinstance(theirs, Failed), theirs
        with pytest.raises(StreamCut):
            read(False)
        return
    assert isinstance(theirs, Judged), theirs
    mine = ours(api, read(True))
    assert tuple(getattr(mine, f) for f in fields) == tuple(getattr(theirs, f) for f in fields)
    if signed:
        assert sorted(mine.signatures) == sorted(theirs.signatures)

