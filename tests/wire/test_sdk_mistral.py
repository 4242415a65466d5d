"""The mistralai SDK judges our Mistral Conversations client (api "mistral-conversations").

1. The same turn (tests/wire/test_sdk_requests.py's tool loop: instructions, tools, the view,
   a reply with its reasoning and a call, the result) sent by our client and by
   ``Mistral(server_url=<loopback>).beta.conversations.start_stream``, the SDK's arguments spelled
   here from the turn: method, path, auth and body agree (the SDK adds its entries' defaults
   ``object: "entry"`` and ``prefix: false``; nothing else).
2. Our bodies validate as the SDK's ``ConversationStreamRequest`` (every entry and tool a
   model of its union, no key the model lacks).
3. Every event the loopback renders validates as the SDK's ``ConversationEvents`` data, and the
   SDK's own event stream reader reads the loopback stream to what our client reads: text,
   thinking, signatures, calls, usage; an error event and a cut make both fail.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import test_sdk_loopback as loopback_judges
import test_sdk_requests as request_judges
from mistralai.client import Mistral, models
from pydantic import TypeAdapter
from sdk_judges import Failed, Judged, read_alike
from wire_support import ask, model, reply


from eukhe.inference.wire.plan import Message, Thought
from spec.loopback import RENDER, LoopbackServer, Stream, Text

API = "mistral-conversations"
KEY = request_judges.KEY
THOUGHT = Thought("Check the date first.", "mistral-sig")


def turn() -> Any:
    request = request_judges.loop_turn("openai-completions")
    view, assistant, result = request.messages
    return replace(request, messages=(view, replace(assistant, thoughts=(THOUGHT,)), result))


def test_mistral_conversations_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = turn()
    view, assistant, result = request.messages
    server.script(Stream([Text("ok")]))
    reply(model(server, API, "magistral-medium-latest", provider="mistral", key=KEY), request)
    got = server.last
    client = Mistral(api_key=KEY, server_url=server.url)

    def send() -> None:
        client.beta.conversations.start_stream(
            model="magistral-medium-latest",
            store=False,
            instructions=request.system,
            inputs=[
                {"type": "message.input", "role": "user", "content": [{"type": "text", "text": t} for t in request_judges.pieces(view)]},
                {"type": "message.output", "role": "assistant", "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": THOUGHT.text}], "signature": THOUGHT.signature},
                    {"type": "text", "text": assistant.text},
                ]},
                {"type": "function.call", "tool_call_id": "call_1", "name": "date", "arguments": '{"id": 3}'},
                {"type": "function.result", "tool_call_id": "call_1", "result": result.text},
            ],
            tools=[{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": False}} for t in request.tools],
            completion_args={"max_tokens": 4096, "reasoning_effort": "high"},
        ).response.close()

    judged = request_judges.theirs(server, send)
    assert (got.method, got.path, got.query) == (judged.method, judged.path, judged.query) == ("POST", "/v1/conversations", {})
    assert got.headers["authorization"] == judged.headers["authorization"] == f"Bearer {KEY}"
    assert got.headers["content-type"] == judged.headers["content-type"] == "application/json"
    assert got.headers["accept"] == judged.headers["accept"] == "text/event-stream"
    assert got.body == without_entry_object(judged.body)


def without_entry_object(body: Any) -> Any:
    """The body without the defaults the SDK's entry models write: ``object: "entry"`` on every
    entry, ``prefix: false`` on a message.input."""
    body = json.loads(json.dumps(body))
    for entry in body["inputs"]:
        assert entry.pop("object") == "entry"
        if entry["type"] == "message.input":
            assert entry.pop("prefix") is False
    return body


STRICT_REQUEST = TypeAdapter(models.ConversationStreamRequest)


def validate_request(body: dict[str, Any]) -> None:
    """Our body as the SDK's request: it parses, and serializes back to itself (a key the
    SDK's models lack would be dropped, a wrong type refused)."""
    parsed = models.ConversationStreamRequest.model_validate(body)
    again = json.loads(parsed.model_dump_json(by_alias=True, exclude_unset=True))
    assert again == body


@pytest.mark.parametrize("what", ["a turn", "a tool loop with thinking", "a forced call", "an image result", "a compaction"])
def test_our_mistral_bodies_validate_against_the_sdk_types(server: LoopbackServer, what: str) -> None:
    wire = replace(model(server, API, "mistral-large-latest", provider="mistral", key=KEY), input=("text", "image"))
    requests = request_judges.requests_of("openai-completions")
    request = requests[what]
    if what == "a tool loop with thinking":
        request = turn()
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    validate_request(server.last.body)


def test_the_sdk_types_refuse_a_wrong_entry() -> None:
    from pydantic import ValidationError

    with pytest.raises((ValidationError, AssertionError)):
        validate_request({"model": "m", "stream": True, "inputs": [{"type": "function.result", "tool_call_id": "c", "output": "x"}]})
    with pytest.raises((ValidationError, AssertionError)):
        validate_request({"model": "m", "stream": True, "inputs": "hi", "completion_args": {"tool_choice": {"type": "function", "name": "x"}}})


def judge_mistral(base: str) -> Judged:
    """The SDK's event stream read to a reply: string or text-chunk content is text, thinking
    chunks are thinking (their signatures kept), call pieces joined per tool_call_id."""
    client = Mistral(api_key="k", server_url=base)
    text: list[str] = []
    thinking: list[str] = []
    signatures: list[str] = []
    calls: dict[str, list[Any]] = {}
    usage = None
    last = ""
    with client.beta.conversations.start_stream(inputs="hi", model="m", store=False) as stream:
        for event in stream:
            data = event.data
            last = event.event
            if isinstance(data, models.MessageOutputEvent):
                content = data.content
                if isinstance(content, str):
                    text.append(content)
                elif isinstance(content, models.TextChunk):
                    text.append(content.text)
                elif isinstance(content, models.ThinkChunk):
                    thinking += [c.text for c in content.thinking if isinstance(c, models.TextChunk)]
                    if isinstance(content.signature, str) and content.signature:
                        signatures.append(content.signature)
            elif isinstance(data, models.FunctionCallEvent):
                calls.setdefault(data.tool_call_id, [data.tool_call_id, data.name, ""])[2] += data.arguments
            elif isinstance(data, models.ResponseDoneEvent):
                u = data.usage
                usage = (u.prompt_tokens or 0, u.completion_tokens or 0, 0, 0, 0)
            elif isinstance(data, models.ResponseErrorEvent):
                raise RuntimeError(f"{data.code}: {data.message}")
    if last != "conversation.response.done":
        raise RuntimeError(f"the stream ended after {last!r}, before conversation.response.done")
    return Judged("".join(text), "".join(thinking), tuple(signatures), tuple((c[0], c[1], json.loads(c[2])) for c in calls.values()), usage, last, None)


EVENTS = TypeAdapter(models.ConversationEventsData)


@pytest.mark.parametrize("name", [*loopback_judges.SCRIPTS, *loopback_judges.FAILING])
def test_the_sdk_reads_the_mistral_loopback_stream_as_our_client_does(server: LoopbackServer, name: str) -> None:
    scripted = loopback_judges.script("google-generative-ai", name)  # Gemini's error: a code and a message, as Mistral's
    for data in loopback_judges.payloads(RENDER[API](scripted, "m")):
        parsed = EVENTS.validate_python(json.loads(data))
        assert not isinstance(parsed, models.UnknownConversationEventsData), data
    server.script(scripted)
    try:
        theirs: Judged | Failed = judge_mistral(server.url)
    except Exception as error:
        theirs = Failed(type(error).__name__, str(error))
    assert server.last.api == API
    server.script(scripted)
    wire = model(server, API, provider="mistral", key=KEY)
    read_alike(name, theirs, lambda thinking: reply(wire, ask(thinking="high")) if thinking else reply(wire), "anthropic-messages", error="Internal error", fields=("text", "thinking", "calls", "usage", "raw_stop"), signed=True)  # arguments compared parsed
    if isinstance(theirs, Judged):
        assert theirs.text == "".join(p.text for p in scripted.parts if isinstance(p, Text))


def test_the_sdk_reads_a_message_that_is_an_assistant_turn() -> None:
    """The assistant entry our client writes is the SDK's MessageOutputEntry, its thinking a ThinkChunk."""
    from eukhe.inference.wire.mistral import _assistant

    entry = _assistant(Message("assistant", "Done.", thoughts=(THOUGHT,)))[0]
    parsed = models.MessageOutputEntry.model_validate(entry)
    assert isinstance(parsed.content, list) and isinstance(parsed.content[0], models.ThinkChunk) and parsed.content[0].signature == THOUGHT.signature
