"""Decoding defects the vendors' documents name, judged against the loopback server's real HTTP
answers (its raw bytes where the script has no form for them): cache writes counted apart from
plain input (OpenAI chat prompt_tokens_details.cache_write_tokens, Responses
input_tokens_details.cache_write_tokens); retry hints in every form (retry-after-ms, Retry-After
seconds and HTTP date, Gemini's RetryInfo.retryDelay in the error body); an OpenAI mid-stream
error without a code keeps its type as its kind, never 'None'; a Gemini prompt blocked by
promptFeedback.blockReason is its own error, not retried (not a cut connection)."""

from __future__ import annotations

import json
from email.utils import format_datetime
from datetime import datetime, timezone

import pytest
from wire_support import APIS, model, reply

from eukhe.inference.wire.base import retry_after, retry_hint
from eukhe.inference.wire.events import PromptBlocked, ProviderError
from spec.loopback import Fail, LoopbackServer, RawBytes, Stream, Text


def _data(obj: object) -> RawBytes:
    return RawBytes(f"data: {json.dumps(obj)}\n\n".encode())


def test_chat_completions_counts_cache_writes(server: LoopbackServer) -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107, "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 50}}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
    server.script(Stream([_data(chunk), _data({**chunk, "choices": [], "usage": usage}), RawBytes(b"data: [DONE]\n\n")], end=False))
    got = reply(model(server, "openai-completions"))
    assert got.usage is not None and (got.usage.input, got.usage.cache_read, got.usage.cache_write, got.usage.output) == (20, 30, 50, 7)


def test_responses_counts_cache_writes(server: LoopbackServer) -> None:
    usage = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 50}, "output_tokens": 7,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 107}
    done = {"type": "response.completed", "sequence_number": 1, "response": {"id": "r", "status": "completed", "usage": usage}}
    server.script(Stream([Text("ok"), _data(done)], end=False))
    got = reply(model(server, "openai-responses"))
    assert got.usage is not None and (got.usage.input, got.usage.cache_read, got.usage.cache_write, got.usage.output) == (20, 30, 50, 7)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    "headers, body, seconds",
    [
        ((("retry-after-ms", "1500"), ("retry-after", "9")), "{}", 1.5),
        ((("retry-after", "7"),), "{}", 7.0),
        ((), json.dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}]}}), 31.0),
        ((), "{}", None),
    ],
)
def test_a_429_gives_its_retry_hint_in_every_form(server: LoopbackServer, api: str, headers: tuple[tuple[str, str], ...], body: str, seconds: float | None) -> None:
    server.script(Fail(429, body, headers))
    with pytest.raises(ProviderError) as caught:
        reply(model(server, api))
    assert caught.value.retry_after == seconds and caught.value.retryable


def test_retry_after_reads_an_http_date() -> None:
    now = datetime(2030, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    later = format_datetime(datetime(2030, 1, 1, 12, 0, 42, tzinfo=timezone.utc), usegmt=True)
    assert retry_after(later, now.timestamp()) == 42.0
    assert retry_hint({"retry-after": later}, "", now.timestamp()) == 42.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now.timestamp()) == 0.0  # a date gone by: no wait
    assert retry_after("soon") is None


def test_a_chat_mid_stream_error_without_a_code_names_its_type(server: LoopbackServer) -> None:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [{"index": 0, "delta": {"content": "par"}, "finish_reason": None}]}
    error = {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}}
    server.script(Stream([_data(chunk), _data(error)], end=False))
    with pytest.raises(ProviderError) as caught:
        reply(model(server, "openai-completions"))
    assert caught.value.kind == "server_error" and "None" not in str(caught.value).split(":")[1]


def test_a_gemini_blocked_prompt_is_its_own_error_and_not_retried(server: LoopbackServer) -> None:
    blocked = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9}, "modelVersion": "g"}
    server.script(Stream([_data(blocked)], end=False))
    with pytest.raises(PromptBlocked) as caught:
        reply(model(server, "google-generative-ai", "gemini-x"))
    assert caught.value.block_reason == "PROHIBITED_CONTENT" and not caught.value.retryable
    assert "PROHIBITED_CONTENT" in str(caught.value)
