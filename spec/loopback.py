"""A real model API server on loopback for tests (issue 14 part 2; issue 12 reuses it).

``LoopbackServer`` is an HTTP/1.1 server (the standard library's ThreadingHTTPServer) on
127.0.0.1 at an ephemeral port. It speaks the wire APIs with streaming, by path:

- ``.../chat/completions``              OpenAI chat completions (data: chunks, data: [DONE])
- ``.../codex/responses``               OpenAI Codex Responses (the Responses stream)
- ``.../openai/.../responses``          Azure OpenAI Responses (the Responses stream)
- ``.../responses``                     OpenAI Responses (typed events)
- ``.../publishers/google/models/<m>:streamGenerateContent``  Vertex (Gemini's stream, finishMessage)
- ``.../v1/conversations``              Mistral Conversations (named events)
- ``.../model/<id>/converse-stream``    Amazon Bedrock ConverseStream (AWS event-stream frames,
                                        application/vnd.amazon.eventstream, not SSE)
- ``.../messages``                      Anthropic Messages (named events)
- ``.../models/<m>:streamGenerateContent``  Google generateContent (alt=sse)

It records every request (``Recorded``: method, path, query, headers, JSON body) and answers
each with the next scripted reply, first in first out. A reply is written once, independent of
the API, and rendered in the API's own stream form:

    server.script(Stream([Thinking("hmm"), Text("Hello"), Call("read", '{"path": "a"}')],
                        stop="toolUse", usage=Tokens(12, 5)))
    server.script(Fail(429, '{"error": {"type": "rate_limit_error", "message": "slow down"}}'))

``Body(data)`` sends a whole event-stream body as it is (the SDK-built streams of
tests/wire/test_sdk_differential.py; on Bedrock's path, frames built by tests/wire/test_sdk_bedrock.py),
with the content type of the path's API.

Parts: ``Text``, ``Thinking`` (its signature: Anthropic's signature_delta, the Responses reasoning
item's encrypted_content when the request includes reasoning.encrypted_content), ``Call``
(arguments streamed in ``pieces``; Google sends calls whole; ``signature``: Gemini's
thoughtSignature on the call's part, as ``Text.signature`` on a text part), ``Refusal`` (the
model declines, each API in its own form), ``ErrorEvent`` (the API's mid-stream error event),
``Progress`` (llama.cpp's prompt_progress, chat only); controls between them:
``Stall`` (no byte until the test calls ``release()``, or the server closes; ``stalled`` is set
when one begins), ``Wait(event)``
(until a threading.Event the test sets), ``Delay(seconds)`` (a slow chunk), ``Cut`` (the
connection is closed mid-body, no final chunk), ``RawBytes`` (bytes as they are: malformed
events). ``Stream.end=False`` ends the body cleanly but without the API's end event. Stop
reasons: ``stop``, ``length``, ``toolUse``, ``refusal`` (``raw_stop`` sends any other value).

Tests synchronise on events, never on sleeps: ``wait_requests(n)`` returns once n requests
arrived; ``stalled`` is set when a Stall begins. No mock of httpx: the clients talk real HTTP.
When no reply is queued, ``responder`` (a function of the recorded request) answers, so
concurrent requests can be served by what they ask; with neither, the answer is HTTP 500.
With ``cache`` set to a ``PromptCache``, the usage of every streamed reply is accounted as
Anthropic's prompt cache would (reads and writes at the request's cache_control marks).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from eukhe.inference.wire import eventstream

STALL_CAP = 60.0  # seconds a Stall or Wait holds a thread at most (the server never hangs a run)

# -- AWS event-stream frames (Bedrock's stream) -------------------------------------------------------
# The product only reads frames (eukhe.inference.wire.eventstream.Decoder); the server writes them.
# Judged by botocore's parser (tests/wire/test_sdk_bedrock.py).


@dataclass(frozen=True)
class Int8:
    value: int


@dataclass(frozen=True)
class Int16:
    value: int


@dataclass(frozen=True)
class Int32:
    value: int


FrameHeader = eventstream.HeaderValue | Int8 | Int16 | Int32


def _frame_header(name: str, value: FrameHeader) -> bytes:
    raw = name.encode("utf-8")
    if not 0 < len(raw) < 256:
        raise eventstream.FramingError(f"header name {name!r} must be 1 to 255 bytes")
    head = struct.pack(">B", len(raw)) + raw
    if isinstance(value, bool):
        return head + struct.pack(">B", 0 if value else 1)
    if isinstance(value, Int8):
        return head + struct.pack(">Bb", 2, value.value)
    if isinstance(value, Int16):
        return head + struct.pack(">Bh", 3, value.value)
    if isinstance(value, Int32):
        return head + struct.pack(">Bi", 4, value.value)
    if isinstance(value, int):
        return head + struct.pack(">Bq", 5, value)
    if isinstance(value, bytes):
        return head + struct.pack(">BH", 6, len(value)) + value
    if isinstance(value, str):
        text = value.encode("utf-8")
        return head + struct.pack(">BH", 7, len(text)) + text
    if isinstance(value, datetime):
        return head + struct.pack(">Bq", 8, int(value.timestamp() * 1000))
    return head + struct.pack(">B", 9) + value.bytes


def event_frame(headers: dict[str, FrameHeader], payload: bytes) -> bytes:
    """One framed message (an int without a width is written as int64)."""
    block = b"".join(_frame_header(name, value) for name, value in headers.items())
    total = eventstream.PRELUDE + len(block) + len(payload) + 4
    if len(block) > eventstream.MAX_HEADERS or total > eventstream.MAX_MESSAGE:
        raise eventstream.FramingError(f"a message of {total} bytes with {len(block)} bytes of headers is past the format's limits")
    prelude = struct.pack(">II", total, len(block))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + block + payload
    return body + struct.pack(">I", zlib.crc32(body))


def boto_params(value: Any, shape: Any) -> Any:
    """A JSON value as botocore takes the param of ``shape`` (a botocore ``Shape``), for its
    ParamValidator to judge: blobs (base64 in JSON) as bytes; documents as they are; keys the
    shape lacks kept, for the validator to refuse."""
    if shape.type_name == "blob" and isinstance(value, str):
        return base64.b64decode(value)
    if shape.type_name == "list" and isinstance(value, list):
        return [boto_params(item, shape.member) for item in value]
    if shape.type_name == "map" and isinstance(value, dict):
        return {k: boto_params(v, shape.value) for k, v in value.items()}
    if shape.type_name == "structure" and isinstance(value, dict) and not shape.is_document_type:
        members = shape.members
        return {k: boto_params(v, members[k]) if k in members else v for k, v in value.items()}
    return value


# -- the script ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str
    signature: str | None = None  # Gemini: a thoughtSignature on this text part (other APIs: none)


@dataclass(frozen=True)
class Thinking:
    text: str
    signature: str = "sig"


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str = "{}"
    id: str | None = None
    pieces: int = 2
    signature: str | None = None  # Gemini: the thoughtSignature on the call's part (other APIs: none)


@dataclass(frozen=True)
class Refusal:
    """The model declines: OpenAI chat's delta.refusal, a Responses refusal content part,
    Anthropic's stop_details.explanation (with ``stop="refusal"``); Gemini has no text for it."""

    text: str


@dataclass(frozen=True)
class ErrorEvent:
    """The API's mid-stream error event; the body ends after it."""

    kind: str = "server_error"  # the error's type (Gemini: its status, e.g. INTERNAL; Bedrock: its exception, e.g. throttlingException)
    message: str = "scripted stream error"
    code: int = 500  # Gemini's error code


@dataclass(frozen=True)
class Progress:
    total: int
    cache: int
    processed: int
    time_ms: float = 1.0


@dataclass(frozen=True)
class Stall:
    pass


@dataclass(frozen=True)
class Wait:
    event: threading.Event


@dataclass(frozen=True)
class Delay:
    seconds: float


@dataclass(frozen=True)
class Cut:
    pass


@dataclass(frozen=True)
class RawBytes:
    data: bytes


Part = Text | Thinking | Call | Refusal | ErrorEvent | Progress | Stall | Wait | Delay | Cut | RawBytes


@dataclass(frozen=True)
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0


@dataclass(frozen=True)
class Stream:
    parts: Sequence[Part] = ()
    stop: str = "stop"  # stop, length, toolUse, refusal
    usage: Tokens | None = field(default_factory=lambda: Tokens(10, 5))
    raw_stop: str | None = None  # the provider's own stop value, sent as is
    end: bool = True  # False: the body ends without the API's end event
    chat_reasoning_field: str = "reasoning_content"  # OpenRouter and Ollama say "reasoning"
    chat_call_index: bool = True  # False: Ollama's whole calls without an index
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Fail:
    status: int
    body: str = '{"error": {"type": "server_error", "message": "scripted failure"}}'
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Body:
    """A whole event-stream body sent as it is (bytes another tool wrote, e.g. a vendor SDK's
    own events serialized): no event of the API is added."""

    data: bytes


Script = Stream | Fail | Body


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: Any  # the JSON body, or None when it was not JSON
    raw: bytes
    api: str
    peer: int = 0  # the client's port: the requests of one connection share it


# -- the prompt cache ------------------------------------------------------------------------------------

LOOKBACK = 20  # blocks a cache mark looks back for an entry written earlier, the mark's own block first (Anthropic's rule)

# Where a request's bytes stand in the cache (``Account.bytes`` keys: region, class). Regions:
# "prefix" = the blocks up to the last mark before the request's final block (the marked prefix:
# tools, system prompt, the view to its last whole block); "end" = the rest (the view's unmarked
# lines, the new message or task, follow-ups). Classes, for each block, first that holds:
# "read" (read from cache); "lookback" (an entry on this request's chain exists, but farther than
# LOOKBACK blocks before every mark); "unmarked" (an earlier request sent these same blocks, but no
# entry ends within them on this chain: its marks lay after the point where this request goes
# another way); "new" (no earlier request sent this prefix: new or rewritten content);
# "short" is not a class: a mark whose prefix is below ``minimum`` bytes writes nothing.
REGIONS = ("prefix", "end")
CLASSES = ("read", "lookback", "unmarked", "new")


@dataclass(frozen=True)
class Account:
    """One request's cache accounting: its usage and its bytes by (region, class)."""

    label: str
    usage: Tokens
    bytes: dict[tuple[str, str], int]

    @property
    def prefix(self) -> int:
        return sum(n for (region, _c), n in self.bytes.items() if region == "prefix")

    @property
    def total(self) -> int:
        return sum(self.bytes.values())


class PromptCache:
    """A model of Anthropic's prompt cache, for requests carrying ``cache_control`` marks
    (Anthropic Messages; OpenAI chat completions with marks, as OpenRouter takes them for
    anthropic/ models), after Anthropic's documented rules:

    - The prompt is read as blocks in cache order (tools, system, then each message's content
      blocks); an entry is keyed by the whole prefix up to a block (a hash chain over blocks).
    - A mark writes an entry for the prefix ending at its block, when that prefix has at least
      ``minimum`` bytes (Anthropic's minimum cacheable length; 0 here by default).
    - A request reads the longest prefix ending at a block within ``LOOKBACK`` blocks before one
      of its marks (the mark's block counted first) whose entry an earlier request wrote
      (``cache_read_input_tokens``); the bytes from there to its last mark are written
      (``cache_creation_input_tokens``); the bytes after its last mark are plain input
      (``input_tokens``); the three add up to the request's input.

    Sizes are UTF-8 bytes of the blocks' JSON (the share read from cache is what the measures
    use). Entries never expire: the calls it models follow each other within the 5-minute life of
    an entry, and nothing pings to keep them (rule 31). Every request's ``Account`` is kept in
    ``accounts`` (``label`` names its kind: a function of the body), so a measure can say why each
    byte was not read (``CLASSES``)."""

    def __init__(self, minimum: int = 0, label: Callable[[Any], str] | None = None, keep: bool = True) -> None:
        self.entries: set[bytes] = set()
        self.seen: set[bytes] = set()  # every prefix (block chain) any request sent
        self.minimum = minimum
        self.label = label
        self.keep = keep
        self.accounts: list[Account] = []
        self.lock = threading.Lock()

    @staticmethod
    def blocks(api: str, body: Any) -> list[tuple[str, bool]]:
        out: list[tuple[str, bool]] = []
        if not isinstance(body, dict):
            return out

        def add(block: Any) -> None:
            marked = isinstance(block, dict) and "cache_control" in block
            clean = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
            out.append((json.dumps(clean, ensure_ascii=False, sort_keys=True), marked))

        for tool in body.get("tools") or []:
            add(tool)
        system = body.get("system")
        if isinstance(system, list):
            for block in system:
                add(block)
        elif isinstance(system, str):
            add({"type": "text", "text": system})
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            role = message.get("role") if isinstance(message, dict) else None
            if isinstance(content, list):
                for block in content:
                    add({"role": role, **block} if isinstance(block, dict) else block)
            else:
                add({"role": role, "text": content})
        return out

    def account(self, api: str, body: Any) -> Tokens:
        """The usage of one request: (input, 0, cache read, cache write) in bytes."""
        blocks = self.blocks(api, body)
        sizes = [len(text.encode("utf-8")) for text, _marked in blocks]
        chain: list[bytes] = []
        digest = hashlib.sha256()
        for text, _marked in blocks:
            digest.update(text.encode("utf-8") + b"\x00")
            chain.append(digest.copy().digest())
        ends = [sum(sizes[: k + 1]) for k in range(len(sizes))]
        marks = [k for k, (_text, marked) in enumerate(blocks) if marked and ends[k] >= self.minimum]
        with self.lock:
            read_to = 0  # blocks read from cache
            for mark in marks:
                for k in range(mark, max(-1, mark - LOOKBACK), -1):
                    if chain[k] in self.entries:
                        read_to = max(read_to, k + 1)
                        break
            # without the lookback: the longest entry on the chain at or before the last mark
            anywhere = next((k + 1 for k in range(marks[-1], -1, -1) if chain[k] in self.entries), 0) if marks else 0
            shared = next((k + 1 for k in range(len(chain) - 1, -1, -1) if chain[k] in self.seen), 0)
            for mark in marks:
                self.entries.add(chain[mark])
            self.seen.update(chain)
        read = sum(sizes[:read_to])
        written = sum(sizes[read_to : marks[-1] + 1]) if marks and marks[-1] + 1 > read_to else 0
        usage = Tokens(sum(sizes) - read - written, 5, read, written)
        if self.keep:
            last = len(blocks) - 1
            prefix_end = max((k for k, (_t, marked) in enumerate(blocks) if marked and k < last), default=-1)
            counts: dict[tuple[str, str], int] = {}
            for k, n in enumerate(sizes):
                region = "prefix" if k <= prefix_end else "end"
                kind = "read" if k < read_to else "lookback" if k < anywhere else "unmarked" if k < shared else "new"
                counts[region, kind] = counts.get((region, kind), 0) + n
            with self.lock:  # labelled in the order of ``accounts``
                self.accounts.append(Account(self.label(body) if self.label is not None else "", usage, counts))
        return usage


# -- rendering ----------------------------------------------------------------------------------------
#
# Each API's stream as its vendor sends it: every event validates against the vendor SDK's own
# type and each SDK's stream helper reads the whole stream (tests/wire/test_sdk_loopback.py),
# except where a script deviates on purpose (RawBytes, raw_stop, chat_call_index=False).

Frame = bytes | Stall | Wait | Delay | Cut
CREATED = 1767225600  # the creation time every reply states (2026-01-01): replays are byte-identical


def _data(obj: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event is not None else ""
    return f"{head}data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


def _pieces(text: str, n: int) -> list[str]:
    n = max(1, n)
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _call_id(call: Call, i: int) -> str:
    return call.id if call.id is not None else f"call_{i}"


def _control(part: Stall | Wait | Delay | Cut | RawBytes | Progress) -> list[Frame]:
    """A part no API renders in its own form: a control, or bytes as they are."""
    if isinstance(part, Progress):
        return []
    return [part.data if isinstance(part, RawBytes) else part]


def _refusal(reply: Stream) -> str | None:
    texts = [part.text for part in reply.parts if isinstance(part, Refusal)]
    return "".join(texts) if texts else None


CHAT_STOP = {"stop": "stop", "length": "length", "toolUse": "tool_calls", "refusal": "content_filter"}
ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use", "refusal": "refusal"}
GOOGLE_STOP = {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP", "refusal": "SAFETY"}


def render_chat(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    head = {"id": "chatcmpl-loop", "object": "chat.completion.chunk", "created": CREATED, "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _data({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    out: list[Frame] = [chunk({"role": "assistant"})]
    calls = 0
    for part in reply.parts:
        if isinstance(part, Text):
            out.append(chunk({"content": part.text}))
        elif isinstance(part, Thinking):
            out.append(chunk({reply.chat_reasoning_field: part.text}))
        elif isinstance(part, Refusal):
            out.append(chunk({"refusal": part.text}))
        elif isinstance(part, Call):
            if not reply.chat_call_index:
                out.append(chunk({"tool_calls": [{"id": _call_id(part, calls), "type": "function", "function": {"name": part.name, "arguments": part.arguments}}]}))
            else:
                out.append(chunk({"tool_calls": [{"index": calls, "id": _call_id(part, calls), "type": "function", "function": {"name": part.name, "arguments": ""}}]}))
                for piece in _pieces(part.arguments, part.pieces):
                    out.append(chunk({"tool_calls": [{"index": calls, "function": {"arguments": piece}}]}))
            calls += 1
        elif isinstance(part, Progress):
            progress = {"total": part.total, "cache": part.cache, "processed": part.processed, "time_ms": part.time_ms}
            out.append(_data({**head, "choices": [], "prompt_progress": progress}))
        elif isinstance(part, ErrorEvent):
            out.append(_data({"error": {"message": part.message, "type": part.kind, "param": None, "code": None}}))
            return out
        else:
            out += _control(part)
    if reply.end:
        # OpenAI ends a refusal with finish_reason stop; content_filter is a filter with no text
        refused = reply.stop == "refusal" and _refusal(reply) is not None
        out.append(chunk({}, reply.raw_stop or ("stop" if refused else CHAT_STOP[reply.stop])))
        if reply.usage is not None:
            u = reply.usage
            prompt = u.input + u.cache_read + u.cache_write
            details: dict[str, int] = {"cached_tokens": u.cache_read}
            if u.cache_write:
                details["cache_write_tokens"] = u.cache_write
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": u.output,
                "total_tokens": prompt + u.output,
                "prompt_tokens_details": details,
                "completion_tokens_details": {"reasoning_tokens": u.reasoning},
            }
            out.append(_data({**head, "choices": [], "usage": usage}))
        out.append(b"data: [DONE]\n\n")
    return out


class _ResponsesItem:
    """The output item a Responses stream has open: a message (its content parts: output_text
    or refusal) or a reasoning item (one summary part)."""

    def __init__(self, kind: str, index: int) -> None:
        self.kind = kind
        self.index = index
        self.id = f"{'msg' if kind == 'message' else 'rs'}_{index}"
        self.parts: list[list[str]] = []  # [part type, text]
        self.signature = ""


def render_responses(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    # encrypted reasoning comes only to a request that includes it (store false keeps nothing)
    include = body.get("include") if isinstance(body, dict) else None
    encrypted = isinstance(include, list) and "reasoning.encrypted_content" in include
    numbers = iter(range(1 << 30))

    def event(kind: str, **fields: Any) -> bytes:
        return _data({"type": kind, **fields, "sequence_number": next(numbers)}, kind)

    def response(status: str, **fields: Any) -> dict[str, Any]:
        return {"id": "resp_loop", "object": "response", "created_at": CREATED, "model": model, "status": status, "output": [],
                "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], **fields}

    out: list[Frame] = [event("response.created", response=response("in_progress")), event("response.in_progress", response=response("in_progress"))]
    done: list[dict[str, Any]] = []  # the finished output items, for the final response
    index = -1
    item: _ResponsesItem | None = None
    calls = 0

    def where(open_item: _ResponsesItem) -> dict[str, Any]:
        return {"item_id": open_item.id, "output_index": open_item.index}

    def content(kind: str, text: str) -> dict[str, Any]:
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []} if kind == "output_text" else {"type": "refusal", "refusal": text}

    def close_part(open_item: _ResponsesItem) -> None:
        k = len(open_item.parts) - 1
        kind, text = open_item.parts[k]
        if kind == "output_text":
            out.append(event("response.output_text.done", **where(open_item), content_index=k, text=text, logprobs=[]))
        else:
            out.append(event("response.refusal.done", **where(open_item), content_index=k, refusal=text))
        out.append(event("response.content_part.done", **where(open_item), content_index=k, part=content(kind, text)))

    def close() -> None:
        nonlocal item
        if item is None:
            return
        if item.kind == "message":
            close_part(item)
            whole = {"id": item.id, "type": "message", "role": "assistant", "status": "completed", "content": [content(k, t) for k, t in item.parts]}
        else:
            text = item.parts[0][1]
            summary = {"type": "summary_text", "text": text}
            out.append(event("response.reasoning_summary_text.done", **where(item), summary_index=0, text=text))
            out.append(event("response.reasoning_summary_part.done", **where(item), summary_index=0, part=summary))
            whole = {"id": item.id, "type": "reasoning", "summary": [summary]}
            if encrypted:
                whole["encrypted_content"] = item.signature
        out.append(event("response.output_item.done", output_index=item.index, item=whole))
        done.append(whole)
        item = None

    def open_item(kind: str) -> _ResponsesItem:
        nonlocal item, index
        if item is not None and item.kind == kind:
            return item
        close()
        index += 1
        item = _ResponsesItem(kind, index)
        if kind == "message":
            out.append(event("response.output_item.added", output_index=index, item={"id": item.id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}))
        else:
            out.append(event("response.output_item.added", output_index=index, item={"id": item.id, "type": "reasoning", "summary": []}))
            out.append(event("response.reasoning_summary_part.added", **where(item), summary_index=0, part={"type": "summary_text", "text": ""}))
            item.parts.append(["summary_text", ""])
        return item

    for part in reply.parts:
        if isinstance(part, (Text, Refusal)):
            message = open_item("message")
            kind = "output_text" if isinstance(part, Text) else "refusal"
            if not message.parts or message.parts[-1][0] != kind:
                if message.parts:
                    close_part(message)
                message.parts.append([kind, ""])
                out.append(event("response.content_part.added", **where(message), content_index=len(message.parts) - 1, part=content(kind, "")))
            message.parts[-1][1] += part.text
            k = len(message.parts) - 1
            if isinstance(part, Text):
                out.append(event("response.output_text.delta", **where(message), content_index=k, delta=part.text, logprobs=[]))
            else:
                out.append(event("response.refusal.delta", **where(message), content_index=k, delta=part.text))
        elif isinstance(part, Thinking):
            reasoning = open_item("reasoning")
            reasoning.parts[0][1] += part.text
            reasoning.signature = part.signature
            out.append(event("response.reasoning_summary_text.delta", **where(reasoning), summary_index=0, delta=part.text))
        elif isinstance(part, Call):
            close()
            index += 1
            call = {"id": f"fc_{index}", "type": "function_call", "call_id": _call_id(part, calls), "name": part.name, "arguments": "", "status": "in_progress"}
            out.append(event("response.output_item.added", output_index=index, item=call))
            for piece in _pieces(part.arguments, part.pieces):
                out.append(event("response.function_call_arguments.delta", item_id=call["id"], output_index=index, delta=piece))
            out.append(event("response.function_call_arguments.done", item_id=call["id"], output_index=index, name=part.name, arguments=part.arguments))
            whole = {**call, "arguments": part.arguments, "status": "completed"}
            out.append(event("response.output_item.done", output_index=index, item=whole))
            done.append(whole)
            calls += 1
        elif isinstance(part, ErrorEvent):
            out.append(event("error", code=part.kind, message=part.message, param=None))
            return out
        else:
            out += _control(part)
    if reply.end:
        close()
        u = reply.usage or Tokens()
        cached = {"cached_tokens": u.cache_read, "cache_write_tokens": u.cache_write}
        total_in = u.input + u.cache_read + u.cache_write
        usage = {
            "input_tokens": total_in,
            "input_tokens_details": cached,
            "output_tokens": u.output,
            "output_tokens_details": {"reasoning_tokens": u.reasoning},
            "total_tokens": total_in + u.output,
        }
        fields: dict[str, Any] = {"output": done, "usage": usage if reply.usage is not None else None}
        # a refusal with its text is a completed response; a content filter with none is incomplete
        filtered = reply.stop == "refusal" and _refusal(reply) is None
        if reply.stop == "length" or filtered or reply.raw_stop is not None:
            reason = reply.raw_stop or ("max_output_tokens" if reply.stop == "length" else "content_filter")
            out.append(event("response.incomplete", response=response("incomplete", incomplete_details={"reason": reason}, **fields)))
        else:
            out.append(event("response.completed", response=response("completed", **fields)))
    return out


def render_anthropic(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    def event(kind: str, **fields: Any) -> bytes:
        return _data({"type": kind, **fields}, kind)

    u = reply.usage or Tokens()
    start_usage = {"input_tokens": u.input, "cache_read_input_tokens": u.cache_read, "cache_creation_input_tokens": u.cache_write, "output_tokens": 1}
    start: dict[str, Any] = {"id": "msg_loop", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": None, "stop_sequence": None, "usage": start_usage}
    out: list[Frame] = [event("message_start", message=start), event("ping")]
    index = -1
    open_kind: str | None = None
    signature = ""
    calls = 0

    def close() -> None:
        nonlocal open_kind
        if open_kind == "thinking":
            out.append(event("content_block_delta", index=index, delta={"type": "signature_delta", "signature": signature}))
        if open_kind is not None:
            out.append(event("content_block_stop", index=index))
        open_kind = None

    for part in reply.parts:
        if isinstance(part, (Text, Thinking)):
            kind = "text" if isinstance(part, Text) else "thinking"
            if open_kind != kind:
                close()
                index += 1
                open_kind = kind
                block = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": "", "signature": ""}
                out.append(event("content_block_start", index=index, content_block=block))
            if isinstance(part, Text):
                out.append(event("content_block_delta", index=index, delta={"type": "text_delta", "text": part.text}))
            else:
                signature = part.signature
                out.append(event("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": part.text}))
        elif isinstance(part, Call):
            close()
            index += 1
            open_kind = "tool_use"
            out.append(event("content_block_start", index=index, content_block={"type": "tool_use", "id": _call_id(part, calls), "name": part.name, "input": {}}))
            for piece in _pieces(part.arguments, part.pieces):
                out.append(event("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": piece}))
            close()
            calls += 1
        elif isinstance(part, Refusal):
            continue  # its text is the stop's explanation
        elif isinstance(part, ErrorEvent):
            out.append(event("error", error={"type": part.kind, "message": part.message}))
            return out
        else:
            out += _control(part)
    if reply.end:
        close()
        delta: dict[str, Any] = {"stop_reason": reply.raw_stop or ANTHROPIC_STOP[reply.stop], "stop_sequence": None}
        if delta["stop_reason"] == "refusal":
            delta["stop_details"] = {"type": "refusal", "category": None, "explanation": _refusal(reply)}
        usage: dict[str, Any] = {"output_tokens": u.output}
        if u.reasoning:
            usage["output_tokens_details"] = {"thinking_tokens": u.reasoning}
        out.append(event("message_delta", delta=delta, usage=usage))
        out.append(event("message_stop"))
    return out


def render_google(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    def chunk(parts: list[dict[str, Any]], finish: dict[str, Any] | None = None, usage: dict[str, Any] | None = None) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0, **(finish or {})}
        answer: dict[str, Any] = {"candidates": [candidate], "modelVersion": model, "responseId": "loop"}
        if usage is not None:
            answer["usageMetadata"] = usage
        return _data(answer)

    def signed(part: dict[str, Any], signature: str | None) -> dict[str, Any]:
        return {**part, "thoughtSignature": signature} if signature is not None else part

    out: list[Frame] = []
    for part in reply.parts:
        if isinstance(part, Text):
            out.append(chunk([signed({"text": part.text}, part.signature)]))
        elif isinstance(part, Thinking):
            out.append(chunk([{"text": part.text, "thought": True}]))
        elif isinstance(part, Call):
            try:
                args = json.loads(part.arguments)
            except json.JSONDecodeError:
                args = {"__raw": part.arguments}
            call: dict[str, Any] = {"name": part.name, "args": args}
            if part.id is not None:
                call["id"] = part.id
            out.append(chunk([signed({"functionCall": call}, part.signature)]))
        elif isinstance(part, Refusal):
            continue  # the Gemini API gives a refusal no text (finishMessage is Vertex's: the SDK drops it)
        elif isinstance(part, ErrorEvent):
            out.append(_data({"error": {"code": part.code, "message": part.message, "status": part.kind}}))
            return out
        else:
            out += _control(part)
    if reply.end:
        usage = None
        if reply.usage is not None:
            u = reply.usage
            usage = {
                "promptTokenCount": u.input + u.cache_read,
                "cachedContentTokenCount": u.cache_read,
                "candidatesTokenCount": u.output - u.reasoning,
                "thoughtsTokenCount": u.reasoning,
                "totalTokenCount": u.input + u.cache_read + u.output,
            }
        out.append(chunk([], {"finishReason": reply.raw_stop or GOOGLE_STOP[reply.stop]}, usage))
    return out


def render_vertex(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    """Gemini's stream as Vertex sends it: a refusal's text rides as the candidate's finishMessage."""
    out = render_google(reply, model, body)
    refusal = _refusal(reply)
    if reply.end and refusal is not None and out and isinstance(out[-1], bytes):
        last = json.loads(out[-1].decode().split("data: ", 1)[1])
        last["candidates"][0]["finishMessage"] = refusal
        out[-1] = _data(last)
    return out


def render_mistral(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    """Mistral's conversation stream: named events; a call's id and name on each of its pieces;
    no finish reason (a length or refusal stop has no form here) and no refusal text."""

    def event(kind: str, **fields: Any) -> bytes:
        return _data({"type": kind, "created_at": "2026-01-01T00:00:00Z", **fields}, kind)

    out: list[Frame] = [event("conversation.response.started", conversation_id="conv_loop")]
    index, kind_open, calls = -1, "", 0

    def at(kind: str) -> int:
        nonlocal index, kind_open
        if kind_open != kind or kind == "call":
            index += 1
            kind_open = kind
        return index

    for part in reply.parts:
        if isinstance(part, Text):
            out.append(event("message.output.delta", id="msg_loop", output_index=at("message"), content_index=0, model=model, role="assistant", content=part.text))
        elif isinstance(part, Thinking):
            chunk = {"type": "thinking", "thinking": [{"type": "text", "text": part.text}], "signature": part.signature}
            out.append(event("message.output.delta", id="msg_loop", output_index=at("message"), content_index=0, model=model, role="assistant", content=chunk))
        elif isinstance(part, Call):
            where, call_id = at("call"), _call_id(part, calls)
            for piece in _pieces(part.arguments, part.pieces):
                out.append(event("function.call.delta", id=f"fc_{where}", name=part.name, tool_call_id=call_id, arguments=piece, output_index=where, model=model))
            calls += 1
        elif isinstance(part, Refusal):
            continue
        elif isinstance(part, ErrorEvent):
            out.append(event("conversation.response.error", message=part.message, code=part.code))
            return out
        else:
            out += _control(part)
    if reply.end:
        u = reply.usage or Tokens()
        prompt = u.input + u.cache_read + u.cache_write
        out.append(event("conversation.response.done", usage={"prompt_tokens": prompt, "completion_tokens": u.output, "total_tokens": prompt + u.output}))
    return out


BEDROCK_STOP = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use", "refusal": "content_filtered"}
BEDROCK_EVENT_STREAM = "application/vnd.amazon.eventstream"


def _frame(event: str, payload: dict[str, Any]) -> bytes:
    data = json.dumps(payload, ensure_ascii=False).encode()
    return event_frame({":event-type": event, ":content-type": "application/json", ":message-type": "event"}, data)


def render_bedrock(reply: Stream, model: str, body: Any = None) -> list[Frame]:
    """ConverseStream's events, each an AWS event-stream message: text and reasoning as block
    deltas (no start event for them), a reasoning block's signature as its last delta, a call as
    a toolUse start and its input in pieces, messageStop, then metadata (its usage; none when the
    script has none). No refusal text (a refusal is the content_filtered stop); an ErrorEvent is
    an exception frame of its kind (throttlingException, ...)."""
    out: list[Frame] = [_frame("messageStart", {"role": "assistant"})]
    index, open_kind, signature, calls = -1, "", "", 0

    def close() -> None:
        nonlocal open_kind
        if open_kind == "thinking":
            out.append(_frame("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"signature": signature}}}))
        if open_kind:
            out.append(_frame("contentBlockStop", {"contentBlockIndex": index}))
        open_kind = ""

    def block(kind: str) -> int:
        nonlocal index, open_kind
        if open_kind != kind or kind == "call":
            close()
            index += 1
            open_kind = kind
        return index

    for part in reply.parts:
        if isinstance(part, Text):
            out.append(_frame("contentBlockDelta", {"contentBlockIndex": block("text"), "delta": {"text": part.text}}))
        elif isinstance(part, Thinking):
            signature = part.signature
            out.append(_frame("contentBlockDelta", {"contentBlockIndex": block("thinking"), "delta": {"reasoningContent": {"text": part.text}}}))
        elif isinstance(part, Call):
            at = block("call")
            out.append(_frame("contentBlockStart", {"contentBlockIndex": at, "start": {"toolUse": {"toolUseId": _call_id(part, calls), "name": part.name}}}))
            for piece in _pieces(part.arguments, part.pieces):
                out.append(_frame("contentBlockDelta", {"contentBlockIndex": at, "delta": {"toolUse": {"input": piece}}}))
            close()
            calls += 1
        elif isinstance(part, Refusal):
            continue
        elif isinstance(part, ErrorEvent):
            data = json.dumps({"message": part.message}, ensure_ascii=False).encode()
            out.append(event_frame({":exception-type": part.kind, ":content-type": "application/json", ":message-type": "exception"}, data))
            return out
        else:
            out += _control(part)
    if reply.end:
        close()
        out.append(_frame("messageStop", {"stopReason": reply.raw_stop or BEDROCK_STOP[reply.stop]}))
        if reply.usage is not None:
            u = reply.usage
            usage = {"inputTokens": u.input, "outputTokens": u.output, "totalTokens": u.input + u.output + u.cache_read + u.cache_write}
            if u.cache_read or u.cache_write:
                usage.update(cacheReadInputTokens=u.cache_read, cacheWriteInputTokens=u.cache_write)
            out.append(_frame("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
    return out


RENDER = {
    "openai-completions": render_chat,
    "openai-responses": render_responses,
    "anthropic-messages": render_anthropic,
    "google-generative-ai": render_google,
    "azure-openai-responses": render_responses,
    "openai-codex-responses": render_responses,
    "google-vertex": render_vertex,
    "mistral-conversations": render_mistral,
    "bedrock-converse-stream": render_bedrock,
}
CONTENT_TYPES = {"bedrock-converse-stream": BEDROCK_EVENT_STREAM}  # an API whose stream is no SSE
GEMINI = ("google-generative-ai", "google-vertex")


def api_of(path: str) -> str | None:
    if path.endswith("/chat/completions"):
        return "openai-completions"
    if path.endswith("/codex/responses"):
        return "openai-codex-responses"
    if path.endswith("/responses") and "/openai/" in path:
        return "azure-openai-responses"
    if path.endswith("/responses"):
        return "openai-responses"
    if "/publishers/google/models/" in path:
        return "google-vertex"
    if path.endswith("/v1/conversations"):
        return "mistral-conversations"
    if path.endswith("/converse-stream") and "/model/" in path:
        return "bedrock-converse-stream"
    if path.endswith("/messages"):
        return "anthropic-messages"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "google-generative-ai"
    return None


# -- the server ---------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # each frame goes out as written: without this, Nagle's algorithm and the client's
        # delayed acknowledgement hold every small chunk after the first for ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.owner._lock:
            self.server.owner.connections += 1

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionResetError:  # a client that closed a kept-alive connection
            self.close_connection = True

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        parts = urlsplit(self.path)
        api = api_of(parts.path)
        recorded = Recorded(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body, raw, api or "", self.client_address[1])
        owner._record(recorded)
        if api is None:
            self._plain(404, '{"error": {"type": "not_found", "message": "loopback: no API at this path"}}')
            return
        script = owner._next(recorded)
        if script is None:
            self._plain(500, '{"error": {"type": "loopback", "message": "loopback: no scripted reply left"}}')
            return
        if isinstance(script, Fail):
            self._plain(script.status, script.body, script.headers)
            return
        if isinstance(script, Body):
            self._stream([script.data], (), api)
            return
        cache = owner.cache
        if cache is not None and isinstance(script, Stream) and api in ("anthropic-messages", "openai-completions"):
            script = replace(script, usage=cache.account(api, body))
        model = body.get("model", "") if isinstance(body, dict) else ""
        if not model and api in GEMINI:
            model = parts.path.rsplit("/", 1)[-1].split(":", 1)[0]
        self._stream(RENDER[api](script, str(model), body), script.headers, api)

    def _plain(self, status: int, text: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _stream(self, frames: list[Frame], headers: tuple[tuple[str, str], ...], api: str) -> None:
        owner = self.server.owner
        self.send_response(200)
        self.send_header("content-type", CONTENT_TYPES.get(api, "text/event-stream"))
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        try:
            for frame in frames:
                if isinstance(frame, bytes):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                    self.wfile.flush()
                elif isinstance(frame, Stall):
                    owner._stall()
                elif isinstance(frame, Wait):
                    frame.event.wait(STALL_CAP)
                elif isinstance(frame, Delay):
                    owner._closing.wait(frame.seconds)
                else:  # Cut: close mid-body, no final chunk
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client went away (its timeout)
            self.close_connection = True


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    owner: LoopbackServer


class LoopbackServer:
    """A real HTTP server on 127.0.0.1 at an ephemeral port; a context manager."""

    def __init__(self) -> None:
        self._http = _Http(("127.0.0.1", 0), _Handler)
        self._http.owner = self
        self._lock = threading.Condition()
        self._scripts: deque[Script] = deque()
        self.requests: list[Recorded] = []
        self.connections = 0  # the connections accepted (HTTP/1.1 keeps them alive between requests)
        self.stalled = threading.Event()
        self._gate = threading.Condition()
        self._generation = 0  # release() moves it on: the stalls under way end
        self._closing = threading.Event()
        self.responder: Callable[[Recorded], Script | None] | None = None
        self.cache: PromptCache | None = None  # set: usage accounts prompt-cache reads at the cache marks
        self.record_file: str | None = None  # each request is also appended here as one JSON line
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.02,), name="loopback", daemon=True)

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        with self._gate:
            self._gate.notify_all()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def script(self, *scripts: Script) -> None:
        with self._lock:
            self._scripts.extend(scripts)

    def release(self) -> None:
        """End the Stalls under way (wait on ``stalled`` first); later Stalls hold again."""
        with self._gate:
            self._generation += 1
            self._gate.notify_all()

    def _stall(self) -> None:
        with self._gate:
            start = self._generation
            self.stalled.set()
            self._gate.wait_for(lambda: self._generation != start or self._closing.is_set(), STALL_CAP)

    def wait_requests(self, n: int, timeout: float = 10.0) -> list[Recorded]:
        """The first n requests, once they arrived (AssertionError after ``timeout``)."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.requests) >= n, timeout):
                raise AssertionError(f"loopback: {len(self.requests)} of {n} requests arrived within {timeout} s")
            return list(self.requests[:n])

    @property
    def last(self) -> Recorded:
        with self._lock:
            return self.requests[-1]

    def _record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)
            if self.record_file is not None:
                line = {"method": recorded.method, "path": recorded.path, "query": recorded.query, "headers": recorded.headers, "body": recorded.body}
                with open(self.record_file, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            self._lock.notify_all()

    def _next(self, recorded: Recorded) -> Script | None:
        """The next scripted reply; when none is queued, the ``responder``'s answer to the
        request (a test that serves concurrent requests by their content sets one)."""
        with self._lock:
            if self._scripts:
                return self._scripts.popleft()
            responder = self.responder
        return None if responder is None else responder(recorded)


VERTEX_PROJECT, VERTEX_LOCATION = "loop-project", "us-central1"  # the Vertex project and location of base_url


def base_url(server: LoopbackServer, api: str) -> str:
    """The base URL a provider of ``api`` is given to reach the server (each API's usual root)."""
    roots = {
        "openai-completions": "/v1",
        "openai-responses": "/v1",
        "anthropic-messages": "",
        "google-generative-ai": "/v1beta",
        "azure-openai-responses": "/openai/v1",
        "openai-codex-responses": "/backend-api",
        "google-vertex": f"/v1/projects/{VERTEX_PROJECT}/locations/{VERTEX_LOCATION}",
        "mistral-conversations": "",
        "bedrock-converse-stream": "",
    }
    return server.url + roots[api]


# -- a server of its own (another process's tests: a pty, tmux) --------------------------------------


def script_of(entry: Any) -> Script:
    """A scripted reply from JSON: {"fail": status, "body": text, "headers": {name: value}} (a
    Retry-After, say) or {"parts": [...], "stop": s,
    "usage": {"input": n, ...}, "end": bool}, parts {"text": t}, {"thinking": t}, {"call":
    {"name": n, "arguments": text, "id": i}}, {"refusal": t}, {"error": {"kind": k, "message": m}},
    {"delay": s}, {"stall": true}, {"cut": true}."""
    if not isinstance(entry, dict):
        raise ValueError(f"a scripted reply is a JSON object, not {entry!r}")
    if "fail" in entry:
        headers = entry.get("headers") or {}
        return Fail(int(entry["fail"]), str(entry.get("body", "")), tuple((str(k), str(v)) for k, v in dict(headers).items()))
    parts: list[Part] = []
    for part in entry.get("parts", []):
        if "text" in part:
            parts.append(Text(str(part["text"])))
        elif "thinking" in part:
            parts.append(Thinking(str(part["thinking"])))
        elif "call" in part:
            call = part["call"]
            parts.append(Call(str(call["name"]), str(call.get("arguments", "{}")), call.get("id")))
        elif "refusal" in part:
            parts.append(Refusal(str(part["refusal"])))
        elif "error" in part:
            error = part["error"]
            parts.append(ErrorEvent(str(error.get("kind", "server_error")), str(error.get("message", "scripted stream error"))))
        elif "delay" in part:
            parts.append(Delay(float(part["delay"])))
        elif part.get("stall"):
            parts.append(Stall())
        elif part.get("cut"):
            parts.append(Cut())
        else:
            raise ValueError(f"unknown scripted part {part!r}")
    usage = entry.get("usage")
    return Stream(parts, str(entry.get("stop", "stop")), Tokens(**usage) if isinstance(usage, dict) else Tokens(10, 5), end=bool(entry.get("end", True)))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m spec.loopback [--script FILE] [--record FILE]``: serve on loopback, print the
    base URL on stdout, answer with the file's replies (a JSON list) in order, append every
    request to the record file as one JSON line, and stop when stdin closes."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m spec.loopback", description=main.__doc__)
    parser.add_argument("--script", help="a JSON list of scripted replies")
    parser.add_argument("--record", help="a file each request is appended to as one JSON line")
    args = parser.parse_args(argv)
    server = LoopbackServer()
    if args.script:
        with open(args.script, encoding="utf-8") as handle:
            server.script(*(script_of(entry) for entry in json.load(handle)))
    server.record_file = args.record
    with server:
        print(server.url, flush=True)
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
