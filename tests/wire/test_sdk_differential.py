"""Differential tests: our wire clients against the vendors' own SDKs, on streams the SDKs' own
pydantic event models build.

For each API, a seeded generator draws ``PER_API`` reply shapes (text split over many deltas,
unicode; thinking with signatures, Anthropic's redacted thinking; tool calls with arguments
split across many deltas, parallel calls, Gemini's signed calls; usage with cached and
cache-write tokens and reasoning tokens, or none; refusals and content filters; length stops;
Gemini's blocked prompts; mid-stream errors). Each shape becomes a stream of SDK objects
(openai ``ChatCompletionChunk`` and the Responses event classes, anthropic's ``Raw*Event``
classes, google-genai ``GenerateContentResponse``, mistralai's conversation event models),
serialized to SSE bytes as the vendor sends them (OpenAI, Anthropic and Mistral name each
event; Gemini's are camelCase JSON with base64 signatures), and served as one whole body by the
loopback server (``Body``). The same bytes are read by our client and by the SDK's stream
reader; the two must agree on the text, the thinking, the signatures, the calls (id, name,
arguments), the usage numbers, the raw stop, the refusal, and on failing: an error the SDK
raises is one our client raises, with the same message. Nothing here states an expected value:
the SDK is the judge.

The APIs that are another host of one wire share its generator; what varies is the path, the
SDK client that reads it (as their own judges build it) and our client's model:

- azure-openai-responses: the Responses shapes, read by ``openai.AzureOpenAI``'s
  ``responses.stream`` on Azure's path (tests/wire/test_sdk_azure.py);
- openai-codex-responses: the Responses shapes, read by the openai SDK at the Codex backend's
  path (tests/wire/test_sdk_codex.py); the backend's own ``response.done`` end is no event the
  SDK knows, so it is not drawn here (tests/wire/test_wire_codex.py reads it);
- google-vertex: the Gemini shapes, with what Vertex adds (a content filter's
  ``finishMessage``, a blocked prompt's ``blockReasonMessage``, ``createTime`` and
  ``responseId``, its further block reasons), read by google-genai in Vertex mode
  (tests/wire/test_sdk_vertex.py);
- mistral-conversations: its own shapes (text as strings or text chunks, thinking chunks with
  signatures, calls in pieces keyed by tool_call_id and interleaved, server-side tool and
  handoff events, usage with absent counts, an error event, a body ending before
  ``conversation.response.done``), read by the mistralai SDK's conversation event stream
  (tests/wire/test_sdk_mistral.py). Mistral has no refusal, no stop reason and no cache counts.
"""

from __future__ import annotations

import base64
import datetime
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import test_sdk_azure as azure_judges
import test_sdk_codex as codex_judges
import test_sdk_mistral as mistral_judges
import test_sdk_vertex as vertex_judges
from anthropic.types import (
    ErrorResponse,
    InputJSONDelta,
    Message,
    MessageDeltaUsage,
    OverloadedErrorObject,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RedactedThinkingBlock,
    RefusalStopDetails,
    SignatureDelta,
    TextBlock,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
)
from anthropic.types import TextDelta as AnthropicTextDelta
from anthropic.types import Usage as AnthropicUsage
from anthropic.types.output_tokens_details import OutputTokensDetails as AnthropicOutputDetails
from anthropic.types.raw_message_delta_event import Delta as MessageDelta
from google.genai import types as g
from mistralai.client import models as mistral
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta, ChoiceDeltaToolCall, ChoiceDeltaToolCallFunction
from openai.types.completion_usage import CompletionTokensDetails, CompletionUsage, PromptTokensDetails
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseErrorEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryPartAddedEvent,
    ResponseReasoningSummaryPartDoneEvent,
    ResponseReasoningSummaryTextDeltaEvent,
    ResponseReasoningSummaryTextDoneEvent,
    ResponseRefusalDeltaEvent,
    ResponseRefusalDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response import IncompleteDetails
from openai.types.responses.response_reasoning_item import Summary
from openai.types.responses.response_reasoning_summary_part_added_event import Part as SummaryPartAdded
from openai.types.responses.response_reasoning_summary_part_done_event import Part as SummaryPartDone
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from openai.types.shared import ErrorObject
from pydantic import BaseModel
from sdk_judges import Failed, Judged, judge_anthropic, judge_chat, judge_google, judge_responses, ours
from wire_support import ask, model, reply

from eukhe.inference.wire.events import PromptBlocked, ProviderError, StreamCut, WireError
from eukhe.inference.wire.plan import WireModel
from spec.loopback import VERTEX_LOCATION, VERTEX_PROJECT, Body, LoopbackServer

PER_API = 40
CREATED = 1767225600
ALPHABET = "abcdefghij klmnop,.;:!?\n\t\"'\\{}[]<>é漢字✓🙂«»"


# -- drawing a shape ------------------------------------------------------------------------------


def words(rng: random.Random, most: int = 14) -> list[str]:
    """A text as its deltas: 1..most pieces (a piece may be one character, or a few words)."""
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, most))]


def json_pieces(rng: random.Random) -> tuple[str, list[str]]:
    """A JSON object's text, cut at random places into 1..12 pieces (a cut may split a string)."""
    value = {f"k{i}{rng.choice('xyé')}": rng.choice([rng.randint(-10**9, 10**9), "".join(words(rng, 3)), rng.random() < 0.5, None, [1, "two", {"n": 3}]]) for i in range(rng.randint(0, 4))}
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    cuts = sorted({rng.randint(1, max(1, len(text) - 1)) for _ in range(rng.randint(0, 11))})
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)]) if text[a:b]]
    return text, pieces


def signature(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHabcdefgh0123456789+/") for _ in range(rng.choice([4, 8, 44])))


def tokens(rng: random.Random) -> dict[str, int]:
    cached = rng.choice([0, 0, rng.randint(1, 5000)])
    written = rng.choice([0, 0, rng.randint(1, 3000)])
    plain = rng.randint(0, 9000)
    reasoning = rng.choice([0, rng.randint(1, 900)])
    return {"plain": plain, "cached": cached, "written": written, "reasoning": reasoning, "output": reasoning + rng.randint(0, 2000)}


# -- OpenAI chat completions ----------------------------------------------------------------------


def sse(obj: BaseModel, name: str | None = None, **dump: Any) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {obj.model_dump_json(**dump)}\n\n".encode()


def chat_stream(rng: random.Random) -> bytes:
    def chunk(delta: ChoiceDelta | None = None, finish: Any = None, usage: CompletionUsage | None = None, empty: bool = False) -> bytes:
        choices = [] if empty else [Choice(index=0, delta=delta or ChoiceDelta(), finish_reason=finish)]
        made = ChatCompletionChunk(id="chatcmpl-d", object="chat.completion.chunk", created=CREATED, model="m", choices=choices, **({"usage": usage} if usage else {}))
        return sse(made, exclude_unset=True)

    out = [chunk(ChoiceDelta(role="assistant", content=""))]
    if rng.random() < 0.4:
        out += [chunk(ChoiceDelta.model_validate({"reasoning_content": piece})) for piece in words(rng)]
    refused = rng.random() < 0.15
    if refused:
        out += [chunk(ChoiceDelta(refusal=piece)) for piece in words(rng, 6)]
    else:
        out += [chunk(ChoiceDelta(content=piece)) for piece in (words(rng) if rng.random() < 0.8 else [])]
    calls = 0 if refused else rng.choice([0, 0, 1, 2, 3])
    for index in range(calls):
        _text, pieces = json_pieces(rng)
        head = ChoiceDeltaToolCall(index=index, id=f"call_{rng.randint(0, 10**6)}_{index}", type="function", function=ChoiceDeltaToolCallFunction(name=f"tool_{index}", arguments=""))
        out.append(chunk(ChoiceDelta(tool_calls=[head])))
        out += [chunk(ChoiceDelta(tool_calls=[ChoiceDeltaToolCall(index=index, function=ChoiceDeltaToolCallFunction(arguments=piece))])) for piece in pieces]
    if rng.random() < 0.1:  # a mid-stream error (OpenRouter's form): no finish
        error = ErrorObject(message=f"upstream failed {rng.randint(0, 99)}", type="server_error", param=None, code=None)
        return b"".join(out) + f"data: {json.dumps({'error': error.model_dump()})}\n\n".encode()
    finish = "stop" if refused else ("tool_calls" if calls else rng.choice(["stop", "stop", "length", "content_filter"]))
    if calls and rng.random() < 0.2:
        finish = "length"
    out.append(chunk(ChoiceDelta(), finish))
    if rng.random() < 0.8:
        t = tokens(rng)
        prompt = t["plain"] + t["cached"] + t["written"]
        details = PromptTokensDetails(cached_tokens=t["cached"], **({"cache_write_tokens": t["written"]} if t["written"] else {}))
        usage = CompletionUsage(prompt_tokens=prompt, completion_tokens=t["output"], total_tokens=prompt + t["output"], prompt_tokens_details=details,
                                completion_tokens_details=CompletionTokensDetails(reasoning_tokens=t["reasoning"]))
        out.append(chunk(usage=usage, empty=True))
    return b"".join(out) + b"data: [DONE]\n\n"


# -- OpenAI Responses -----------------------------------------------------------------------------


def responses_stream(rng: random.Random) -> bytes:
    numbers = iter(range(10**6))
    out: list[bytes] = []

    def emit(kind: type[BaseModel], **fields: Any) -> None:
        made = kind(sequence_number=next(numbers), **fields)
        out.append(sse(made, str(made.type), exclude_unset=True))  # type: ignore[attr-defined]

    def response(status: Any, output: list[Any], **fields: Any) -> Response:
        return Response(id="resp_d", object="response", created_at=CREATED, model="m", status=status, output=output, parallel_tool_calls=True, tool_choice="auto", tools=[], **fields)

    emit(ResponseCreatedEvent, type="response.created", response=response("in_progress", []))
    done: list[Any] = []
    refused = False
    for _ in range(rng.randint(0, 4)):
        index = len(done)
        kind = rng.choice(["reasoning", "message", "message", "call"])
        if kind == "reasoning":
            item_id, pieces = f"rs_{index}", words(rng)
            text = "".join(pieces)
            emit(ResponseOutputItemAddedEvent, type="response.output_item.added", output_index=index, item=ResponseReasoningItem(id=item_id, type="reasoning", summary=[]))
            emit(ResponseReasoningSummaryPartAddedEvent, type="response.reasoning_summary_part.added", item_id=item_id, output_index=index, summary_index=0, part=SummaryPartAdded(type="summary_text", text=""))
            for piece in pieces:
                emit(ResponseReasoningSummaryTextDeltaEvent, type="response.reasoning_summary_text.delta", item_id=item_id, output_index=index, summary_index=0, delta=piece)
            emit(ResponseReasoningSummaryTextDoneEvent, type="response.reasoning_summary_text.done", item_id=item_id, output_index=index, summary_index=0, text=text)
            emit(ResponseReasoningSummaryPartDoneEvent, type="response.reasoning_summary_part.done", item_id=item_id, output_index=index, summary_index=0, part=SummaryPartDone(type="summary_text", text=text))
            item: Any = ResponseReasoningItem(id=item_id, type="reasoning", summary=[Summary(type="summary_text", text=text)], encrypted_content=signature(rng))
        elif kind == "message":
            item_id = f"msg_{index}"
            emit(ResponseOutputItemAddedEvent, type="response.output_item.added", output_index=index, item=ResponseOutputMessage(id=item_id, type="message", role="assistant", status="in_progress", content=[]))
            parts: list[Any] = []
            for k in range(rng.choice([1, 1, 2])):
                pieces = words(rng)
                text = "".join(pieces)
                if rng.random() < 0.2:
                    refused = True
                    emit(ResponseContentPartAddedEvent, type="response.content_part.added", item_id=item_id, output_index=index, content_index=k, part=ResponseOutputRefusal(type="refusal", refusal=""))
                    for piece in pieces:
                        emit(ResponseRefusalDeltaEvent, type="response.refusal.delta", item_id=item_id, output_index=index, content_index=k, delta=piece)
                    emit(ResponseRefusalDoneEvent, type="response.refusal.done", item_id=item_id, output_index=index, content_index=k, refusal=text)
                    part: Any = ResponseOutputRefusal(type="refusal", refusal=text)
                else:
                    emit(ResponseContentPartAddedEvent, type="response.content_part.added", item_id=item_id, output_index=index, content_index=k, part=ResponseOutputText(type="output_text", text="", annotations=[]))
                    for piece in pieces:
                        emit(ResponseTextDeltaEvent, type="response.output_text.delta", item_id=item_id, output_index=index, content_index=k, delta=piece, logprobs=[])
                    emit(ResponseTextDoneEvent, type="response.output_text.done", item_id=item_id, output_index=index, content_index=k, text=text, logprobs=[])
                    part = ResponseOutputText(type="output_text", text=text, annotations=[])
                emit(ResponseContentPartDoneEvent, type="response.content_part.done", item_id=item_id, output_index=index, content_index=k, part=part)
                parts.append(part)
            item = ResponseOutputMessage(id=item_id, type="message", role="assistant", status="completed", content=parts)
        else:
            item_id, (arguments, pieces) = f"fc_{index}", json_pieces(rng)
            call_id, name = f"call_{rng.randint(0, 10**6)}", f"tool_{index}"
            emit(ResponseOutputItemAddedEvent, type="response.output_item.added", output_index=index,
                 item=ResponseFunctionToolCall(id=item_id, type="function_call", call_id=call_id, name=name, arguments="", status="in_progress"))
            for piece in pieces:
                emit(ResponseFunctionCallArgumentsDeltaEvent, type="response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=piece)
            emit(ResponseFunctionCallArgumentsDoneEvent, type="response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=arguments)
            item = ResponseFunctionToolCall(id=item_id, type="function_call", call_id=call_id, name=name, arguments=arguments, status="completed")
        emit(ResponseOutputItemDoneEvent, type="response.output_item.done", output_index=index, item=item)
        done.append(item)
    if rng.random() < 0.1:
        emit(ResponseErrorEvent, type="error", code="server_error", message=f"The server had an error {rng.randint(0, 99)}", param=None)
        return b"".join(out)
    usage = None
    if rng.random() < 0.85:
        t = tokens(rng)
        total_in = t["plain"] + t["cached"] + t["written"]
        usage = ResponseUsage(input_tokens=total_in, input_tokens_details=InputTokensDetails(cached_tokens=t["cached"], cache_write_tokens=t["written"]),
                              output_tokens=t["output"], output_tokens_details=OutputTokensDetails(reasoning_tokens=t["reasoning"]), total_tokens=total_in + t["output"])
    if not refused and rng.random() < 0.3:
        reason = rng.choice(["max_output_tokens", "content_filter"])
        emit(ResponseIncompleteEvent, type="response.incomplete", response=response("incomplete", done, usage=usage, incomplete_details=IncompleteDetails(reason=reason)))
    else:
        emit(ResponseCompletedEvent, type="response.completed", response=response("completed", done, usage=usage))
    return b"".join(out)


# -- Anthropic Messages ---------------------------------------------------------------------------


def anthropic_stream(rng: random.Random) -> bytes:
    out: list[bytes] = []

    def emit(made: BaseModel) -> None:
        out.append(sse(made, str(made.type), exclude_unset=True))  # type: ignore[attr-defined]

    t = tokens(rng)
    start = AnthropicUsage(input_tokens=t["plain"], output_tokens=1, cache_read_input_tokens=t["cached"], cache_creation_input_tokens=t["written"])
    emit(RawMessageStartEvent(type="message_start", message=Message(id="msg_d", type="message", role="assistant", model="m", content=[], stop_reason=None, stop_sequence=None, usage=start)))
    if rng.random() < 0.5:
        out.append(b'event: ping\ndata: {"type": "ping"}\n\n')
    calls = 0
    for index in range(rng.randint(0, 4)):
        kind = rng.choice(["thinking", "text", "text", "tool_use", "redacted"])
        if kind == "thinking":
            emit(RawContentBlockStartEvent(type="content_block_start", index=index, content_block=ThinkingBlock(type="thinking", thinking="", signature="")))
            for piece in words(rng):
                emit(RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=ThinkingDelta(type="thinking_delta", thinking=piece)))
            emit(RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=SignatureDelta(type="signature_delta", signature=signature(rng))))
        elif kind == "redacted":
            emit(RawContentBlockStartEvent(type="content_block_start", index=index, content_block=RedactedThinkingBlock(type="redacted_thinking", data=signature(rng))))
        elif kind == "text":
            emit(RawContentBlockStartEvent(type="content_block_start", index=index, content_block=TextBlock(type="text", text="")))
            for piece in words(rng):
                emit(RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=AnthropicTextDelta(type="text_delta", text=piece)))
        else:
            calls += 1
            _text, pieces = json_pieces(rng)
            emit(RawContentBlockStartEvent(type="content_block_start", index=index, content_block=ToolUseBlock(type="tool_use", id=f"toolu_{rng.randint(0, 10**6)}", name=f"tool_{index}", input={})))
            for piece in pieces:
                emit(RawContentBlockDeltaEvent(type="content_block_delta", index=index, delta=InputJSONDelta(type="input_json_delta", partial_json=piece)))
        emit(RawContentBlockStopEvent(type="content_block_stop", index=index))
    if rng.random() < 0.1:
        out.append(sse(ErrorResponse(type="error", error=OverloadedErrorObject(type="overloaded_error", message=f"Overloaded {rng.randint(0, 99)}")), "error", exclude_unset=True))
        return b"".join(out)
    stop = "tool_use" if calls else rng.choice(["end_turn", "end_turn", "max_tokens", "refusal", "stop_sequence", "pause_turn", "model_context_window_exceeded"])
    delta = MessageDelta(stop_reason=stop, stop_sequence=None)
    if stop == "refusal":
        delta = MessageDelta(stop_reason=stop, stop_sequence=None, stop_details=RefusalStopDetails(type="refusal", category=rng.choice([None, "cyber", "bio"]), explanation=rng.choice([None, "".join(words(rng, 4))])))
    usage = MessageDeltaUsage(output_tokens=t["output"])
    if rng.random() < 0.5:  # newer servers repeat the input side and give the thinking count
        usage = MessageDeltaUsage(output_tokens=t["output"], input_tokens=t["plain"], cache_read_input_tokens=t["cached"], cache_creation_input_tokens=t["written"],
                                  output_tokens_details=AnthropicOutputDetails(thinking_tokens=t["reasoning"]))
    emit(RawMessageDeltaEvent(type="message_delta", delta=delta, usage=usage))
    emit(RawMessageStopEvent(type="message_stop"))
    return b"".join(out)


# -- Google generateContent -----------------------------------------------------------------------


def _wire_json(value: Any) -> Any:
    """JSON of what pydantic's Python mode leaves: bytes in standard base64, as the API sends them
    (pydantic's JSON mode writes URL-safe base64), times in RFC 3339."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime.datetime):
        return value.isoformat().replace("+00:00", "Z")
    raise TypeError(f"no JSON for {value!r}")


def google_stream(rng: random.Random, vertex: bool = False) -> bytes:
    """Gemini's shapes; ``vertex``: as Vertex sends them (a content filter's finishMessage, a
    blocked prompt's blockReasonMessage, createTime and responseId, its further block reasons)."""
    stamp = {"create_time": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc), "response_id": f"resp-{rng.randint(0, 10**6)}"} if vertex else {}

    def chunk(made: g.GenerateContentResponse) -> bytes:
        for name, value in stamp.items():
            setattr(made, name, value)
        fields = made.model_dump(by_alias=True, exclude_none=True)
        return f"data: {json.dumps(fields, default=_wire_json)}\n\n".encode()

    def candidate(parts: list[g.Part], finish: g.FinishReason | None = None) -> g.GenerateContentResponse:
        content = g.Content(role="model", parts=parts)
        return g.GenerateContentResponse(candidates=[g.Candidate(content=content, index=0, finish_reason=finish)], model_version="m")

    t = tokens(rng)
    usage = g.GenerateContentResponseUsageMetadata(prompt_token_count=t["plain"] + t["cached"], cached_content_token_count=t["cached"] or None,
                                                   candidates_token_count=t["output"] - t["reasoning"], thoughts_token_count=t["reasoning"] or None, total_token_count=t["plain"] + t["cached"] + t["output"])
    if rng.random() < 0.1:
        reasons = [g.BlockedReason.SAFETY, g.BlockedReason.PROHIBITED_CONTENT, g.BlockedReason.OTHER, g.BlockedReason.BLOCKLIST]
        if vertex:
            reasons += [g.BlockedReason.JAILBREAK, g.BlockedReason.MODEL_ARMOR, g.BlockedReason.IMAGE_SAFETY]
        feedback = g.GenerateContentResponsePromptFeedback(block_reason=rng.choice(reasons))
        if vertex and rng.random() < 0.7:
            feedback.block_reason_message = "".join(words(rng, 4))
        return chunk(g.GenerateContentResponse(prompt_feedback=feedback, usage_metadata=usage, model_version="m"))
    out: list[bytes] = []
    if rng.random() < 0.4:
        out += [chunk(candidate([g.Part(text=piece, thought=True)])) for piece in words(rng)]
    out += [chunk(candidate([g.Part(text=piece)])) for piece in (words(rng) if rng.random() < 0.8 else [])]
    calls = rng.choice([0, 0, 1, 2, 3])
    parts = []
    for index in range(calls):
        text, _pieces = json_pieces(rng)
        call = g.FunctionCall(name=f"tool_{index}", args=json.loads(text), **({"id": f"g{rng.randint(0, 10**6)}"} if rng.random() < 0.7 else {}))
        signed = {"thought_signature": rng.randbytes(rng.randint(4, 40))} if index == 0 and rng.random() < 0.6 else {}
        parts.append(g.Part(function_call=call, **signed))
    if parts:
        together = rng.random() < 0.5  # parallel calls in one chunk, or one chunk each
        out += [chunk(candidate(parts))] if together else [chunk(candidate([p])) for p in parts]
    if rng.random() < 0.1:
        error = {"error": {"code": 503, "message": f"The model is overloaded {rng.randint(0, 99)}", "status": "UNAVAILABLE"}}
        return b"".join(out) + f"data: {json.dumps(error)}\n\n".encode()
    finishes = [g.FinishReason.STOP, g.FinishReason.STOP, g.FinishReason.MAX_TOKENS, g.FinishReason.SAFETY, g.FinishReason.RECITATION,
                g.FinishReason.PROHIBITED_CONTENT, g.FinishReason.BLOCKLIST, g.FinishReason.SPII, g.FinishReason.OTHER, g.FinishReason.MALFORMED_FUNCTION_CALL]
    if vertex:
        finishes += [g.FinishReason.SAFETY, g.FinishReason.MODEL_ARMOR, g.FinishReason.IMAGE_SAFETY]
    finish = g.FinishReason.STOP if calls else rng.choice(finishes)
    last: list[g.Part] = [g.Part(text="", thought_signature=rng.randbytes(12))] if rng.random() < 0.3 else []
    end = candidate(last, finish)
    if vertex and finish != g.FinishReason.STOP and rng.random() < 0.8:  # Vertex says why it stopped
        assert end.candidates is not None
        end.candidates[0].finish_message = "".join(words(rng, 5))
    if rng.random() < 0.85:
        end.usage_metadata = usage
    out.append(chunk(end))
    return b"".join(out)


def vertex_stream(rng: random.Random) -> bytes:
    return google_stream(rng, vertex=True)


# -- Mistral Conversations ------------------------------------------------------------------------


def mistral_stream(rng: random.Random) -> bytes:
    out: list[bytes] = []
    when = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)

    def emit(made: BaseModel) -> None:
        out.append(sse(made, str(made.type), by_alias=True))  # type: ignore[attr-defined]

    emit(mistral.ResponseStartedEvent(conversation_id="conv_d", created_at=when))
    index = 0
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice(["thinking", "text", "text", "calls", "server"])
        if kind == "thinking":
            pieces = words(rng)
            signed = rng.random() < 0.7
            alone = signed and rng.random() < 0.3  # the signature on a chunk of its own, no text
            for k, piece in enumerate(pieces):
                thinking: list[Any] = [mistral.TextChunk(text=piece)]
                if rng.random() < 0.1:
                    thinking.append(mistral.ReferenceChunk(reference_ids=[rng.randint(0, 9)]))
                last = signed and not alone and k == len(pieces) - 1
                chunk = mistral.ThinkChunk(thinking=thinking, signature=signature(rng) if last else rng.choice([None, ""]))
                emit(mistral.MessageOutputEvent(id=f"msg_{index}", output_index=index, content_index=0, content=chunk, model="m", created_at=when))
            if alone:
                emit(mistral.MessageOutputEvent(id=f"msg_{index}", output_index=index, content_index=0, content=mistral.ThinkChunk(thinking=[], signature=signature(rng))))
        elif kind == "text":
            for piece in words(rng):
                content: Any = piece if rng.random() < 0.6 else mistral.TextChunk(text=piece)
                emit(mistral.MessageOutputEvent(id=f"msg_{index}", output_index=index, content_index=1, content=content, model="m"))
            if rng.random() < 0.2:  # a web search's citation: no text of the reply
                reference = mistral.ToolReferenceChunk(tool="web_search", title="".join(words(rng, 3)), url="https://example.com/a")
                emit(mistral.MessageOutputEvent(id=f"msg_{index}", output_index=index, content_index=2, content=reference))
        elif kind == "calls":  # parallel calls, their pieces interleaved, each piece with its id and name
            pending: list[tuple[int, str, list[str]]] = []
            for n in range(rng.choice([1, 1, 2, 3])):
                _text, pieces = json_pieces(rng)
                pending.append((index + n, f"c{rng.randint(0, 10**8):08d}{n}", pieces))
            index += len(pending) - 1
            while pending:
                at = rng.randrange(len(pending))
                where, call_id, pieces = pending[at]
                emit(mistral.FunctionCallEvent(id=f"fc_{where}", name=f"tool_{where}", tool_call_id=call_id, arguments=pieces.pop(0), output_index=where, model="m"))
                if not pieces:
                    pending.pop(at)
        else:  # server-side work: a built-in tool run, or a handoff between agents
            if rng.random() < 0.5:
                emit(mistral.ToolExecutionStartedEvent(id=f"tool_{index}", name="web_search", arguments='{"query": "q"}', output_index=index))
                emit(mistral.ToolExecutionDeltaEvent(id=f"tool_{index}", name="web_search", arguments="…", output_index=index))
                emit(mistral.ToolExecutionDoneEvent(id=f"tool_{index}", name="web_search", output_index=index, info={"results": rng.randint(0, 9)}))
            else:
                emit(mistral.AgentHandoffStartedEvent(id=f"handoff_{index}", previous_agent_id="ag_a", previous_agent_name="a", output_index=index))
                emit(mistral.AgentHandoffDoneEvent(id=f"handoff_{index}", next_agent_id="ag_b", next_agent_name="b", output_index=index))
        index += 1
    ending = rng.random()
    if ending < 0.1:
        emit(mistral.ResponseErrorEvent(message=f"Service unavailable {rng.randint(0, 99)}", code=rng.choice([500, 503, 3000])))
    elif ending < 0.15:
        pass  # the body ends before conversation.response.done
    else:
        t = tokens(rng)
        prompt, completion = t["plain"] + t["cached"], t["output"]
        counts: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
        for name in counts:
            if rng.random() < 0.1:
                counts[name] = None  # left out
        if rng.random() < 0.2:
            counts.update(connector_tokens=rng.randint(0, 99), connectors={"web_search": rng.randint(0, 9)})
        emit(mistral.ResponseDoneEvent(usage=mistral.ConversationUsageInfo(**counts), created_at=when))
    return b"".join(out)


# -- the hosts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Host:
    """An API as the differential drives it: the stream its SDK's events make, the SDK reader
    that judges it (pointed at the server), our client's model of it, and the API whose terms
    ``ours`` reads our reply in (an API another host of a wire reads as that wire)."""

    stream: Callable[[random.Random], bytes]
    sdk: Callable[[LoopbackServer], Judged]
    wire: Callable[[LoopbackServer], WireModel]
    terms: str


KEY = azure_judges.KEY


def _ours(api: str, **fields: Any) -> Callable[[LoopbackServer], WireModel]:
    return lambda server: model(server, api, **fields)


HOSTS: dict[str, Host] = {
    "openai-completions": Host(chat_stream, lambda s: judge_chat(s.url), _ours("openai-completions"), "openai-completions"),
    "openai-responses": Host(responses_stream, lambda s: judge_responses(s.url), _ours("openai-responses"), "openai-responses"),
    "anthropic-messages": Host(anthropic_stream, lambda s: judge_anthropic(s.url), _ours("anthropic-messages"), "anthropic-messages"),
    "google-generative-ai": Host(google_stream, lambda s: judge_google(s.url), _ours("google-generative-ai"), "google-generative-ai"),
    "azure-openai-responses": Host(
        responses_stream,
        lambda s: judge_responses(s.url, azure_judges.sdk_client(s, "resource endpoint, api-key")),
        _ours("azure-openai-responses", key=KEY),
        "openai-responses",
    ),
    "openai-codex-responses": Host(
        responses_stream, lambda s: judge_responses(s.url, codex_judges.sdk_client(s)), _ours("openai-codex-responses", provider="openai-codex", key=codex_judges.TOKEN), "openai-responses"
    ),
    "google-vertex": Host(vertex_stream, lambda s: judge_google(s.url, vertex_judges.sdk_client(s)), _ours("google-vertex", provider="google-vertex", key=KEY), "google-generative-ai"),
    "mistral-conversations": Host(mistral_stream, lambda s: mistral_judges.judge_mistral(s.url), _ours("mistral-conversations", provider="mistral", key=KEY), "mistral-conversations"),
}
# the path each SDK asked at: the host the loopback took it for
PATHS = {
    "azure-openai-responses": "/openai/responses",
    "openai-codex-responses": "/backend-api/codex/responses",
    "google-vertex": f"/v1/projects/{VERTEX_PROJECT}/locations/{VERTEX_LOCATION}/publishers/google/models/m:streamGenerateContent",
    "mistral-conversations": "/v1/conversations",
}
CASES = [pytest.param(api, seed, id=f"{api}-{seed}") for api in HOSTS for seed in range(PER_API)]


def stream_of(api: str, seed: int) -> bytes:
    return HOSTS[api].stream(random.Random(f"{api}/{seed}"))


def judge(server: LoopbackServer, api: str) -> Judged | Failed:
    """What the SDK makes of the scripted stream: its reply, or the error it raised."""
    try:
        return HOSTS[api].sdk(server)
    except Exception as error:  # whatever the SDK raises (its own errors, its httpx's, its asserts)
        return Failed(type(error).__name__, str(error))


RESPONSES_NEEDLES = [b"response.refusal.delta", b"function_call_arguments.delta", b"response.incomplete", b"event: error", b"encrypted_content", b"reasoning_summary_text.delta", b'"cache_write_tokens":']
NEEDLES = {
    "openai-completions": [b'"refusal":', b'"tool_calls":', b'"length"', b'"content_filter"', b'"error":', b'"cache_write_tokens":', b'"reasoning_content":'],
    "openai-responses": RESPONSES_NEEDLES,
    "anthropic-messages": [b"signature_delta", b"redacted_thinking", b"input_json_delta", b'"refusal"', b"event: error", b"max_tokens", b"thinking_tokens"],
    "google-generative-ai": [b'"thought": true', b"functionCall", b"thoughtSignature", b"SAFETY", b"MAX_TOKENS", b"blockReason", b'"error":'],
    "azure-openai-responses": RESPONSES_NEEDLES,
    "openai-codex-responses": RESPONSES_NEEDLES,
    "google-vertex": [b'"thought": true', b"functionCall", b"thoughtSignature", b"MAX_TOKENS", b"blockReason", b"blockReasonMessage", b"finishMessage", b'"error":', b"createTime"],
    "mistral-conversations": [b'"type":"thinking"', b'"signature":"', b"event: function.call.delta", b'"type":"text"', b"tool.execution.started", b"agent.handoff.started", b"tool_reference",
                              b"event: conversation.response.error", b"event: conversation.response.done", b'"connectors":'],
}


def test_the_generated_streams_have_many_distinct_shapes() -> None:
    """Not the same stream over and over: every seed's bytes differ, and across seeds each API
    reaches its stop kinds, refusals, errors, calls and thinking (the generator is not vacuous)."""
    for api in HOSTS:
        bodies = [stream_of(api, seed) for seed in range(PER_API)]
        assert len(set(bodies)) == PER_API
        joined = b"".join(bodies)
        missing = [n for n in NEEDLES[api] if n not in joined]
        assert not missing, f"{api}: no seed of {PER_API} reaches {missing}"
        if api == "mistral-conversations":  # some body ends with neither done nor error
            assert any(b"conversation.response.done" not in body and b"conversation.response.error" not in body for body in bodies)
        if api == "google-vertex":  # some blocked prompt, some filter, with Vertex's reason
            assert b"JAILBREAK" in joined or b"MODEL_ARMOR" in joined


def ended_early(theirs: Failed) -> bool:
    """The SDK's reader found the body ended before the API's end event (Mistral's judge says so)."""
    return "before conversation.response.done" in theirs.said


@pytest.mark.parametrize("api, seed", CASES)
def test_our_client_reads_what_the_sdk_reads(server: LoopbackServer, api: str, seed: int) -> None:
    host = HOSTS[api]
    data = stream_of(api, seed)
    server.script(Body(data))
    theirs = judge(server, api)
    assert server.last.api == api
    if api in PATHS:
        assert server.last.path == PATHS[api]
    server.script(Body(data))
    wire = host.wire(server)
    if isinstance(theirs, Failed):
        with pytest.raises(WireError) as raised:
            reply(wire, ask(thinking="high"))
        error = raised.value
        if theirs.kind == "PromptBlockedBySdk":
            assert isinstance(error, PromptBlocked) and error.block_reason == theirs.said
        elif ended_early(theirs):
            assert isinstance(error, StreamCut), error
        else:
            assert isinstance(error, ProviderError) and error.status is None, error
            said = json.loads(error.body).get("message") or json.loads(error.body).get("error", {}).get("message")
            assert said and said in theirs.said, (theirs, error)
        assert server.last.api == api
        return
    assert isinstance(theirs, Judged)
    mine = ours(host.terms, reply(wire, ask(thinking="high")))
    assert server.last.api == api
    assert mine.text == theirs.text
    assert mine.thinking == theirs.thinking
    assert sorted(mine.signatures) == sorted(theirs.signatures)
    # a Gemini call may come without an id: ours then names it by its place (call_<n>), the SDK leaves it None
    assert len(mine.calls) == len(theirs.calls)
    assert [(m[0] if t[0] else "", m[1], m[2]) for m, t in zip(mine.calls, theirs.calls)] == list(theirs.calls)
    assert mine.usage == theirs.usage
    assert mine.raw_stop == theirs.raw_stop
    assert mine.refusal == theirs.refusal
