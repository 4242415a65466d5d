"""The loopback server is held to the vendors' SDKs (spec/loopback.py).

1. Every event the loopback renders, for every script below on every API, validates against the
   SDK's own type: openai ``ChatCompletionChunk``, openai ``ResponseStreamEvent`` (a pydantic
   TypeAdapter over the union), anthropic ``RawMessageStreamEvent`` (its ``error`` event:
   ``ErrorResponse``; ``ping`` has no type there and carries nothing), google-genai
   ``GenerateContentResponse`` from the JSON text (extra keys forbidden, signatures base64).
2. Each SDK's streaming helper reads the whole loopback stream over real HTTP (openai
   ``chat.completions.stream`` and ``responses.stream``, anthropic ``messages.stream``,
   google-genai ``generate_content_stream``), and what it read is what our client reads from
   the same script: text, thinking, signatures, calls, usage, the raw stop, the refusal. A
   script that ends in an error event or a cut connection makes both raise.

Ollama's calls without an index (``chat_call_index=False``), ``raw_stop`` and ``RawBytes`` are
deliberate deviations from the vendors' forms and are not held to them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import ErrorResponse, RawMessageStreamEvent
from google.genai import types
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent
from pydantic import TypeAdapter
from sdk_judges import Failed, Judged, judge, ours
from wire_support import APIS, ask, model, reply

from eukhe.inference.wire.events import ProviderError, StreamCut
from spec.loopback import RENDER, Call, Cut, ErrorEvent, LoopbackServer, Refusal, Stream, Text, Thinking, Tokens

SIG = "c2lnbmF0dXJlIG9mIHRoZSBjYWxs"  # base64: Gemini's signatures are bytes
ARGS = '{"path": "src/a.py", "lines": [1, 2, 3], "note": "naïve «quoted» \\"x\\""}'

SCRIPTS: dict[str, Stream] = {
    "text": Stream([Text("Hello")]),
    "text-in-pieces": Stream([Text(c) for c in "Hello, wörld! ✓ 漢字"]),
    "empty": Stream([]),
    "thinking": Stream([Thinking("Let me think. ", "c2lnLTE="), Thinking("Done.", "c2lnLTE="), Text("Answer.")], usage=Tokens(20, 9, reasoning=4)),
    "tool-call": Stream([Text("Reading."), Call("read", ARGS, "call_r", pieces=7)], stop="toolUse"),
    "parallel-calls": Stream([Call("read", '{"path": "a"}', "call_1", pieces=3), Call("bash", '{"command": "ls"}', "call_2", pieces=4), Call("date", "{}", "call_3")], stop="toolUse"),
    "thinking-then-call": Stream([Thinking("Check the date.", "c2lnLTI="), Call("date", '{"id": 0}', "call_d", signature=SIG)], stop="toolUse"),
    "signed-text": Stream([Thinking("Short."), Text("Yes.", signature=SIG)]),
    "usage": Stream([Text("ok")], usage=Tokens(input=120, output=33, cache_read=900, cache_write=64, reasoning=7)),
    "no-usage": Stream([Text("ok")], usage=None),
    "length": Stream([Text("trunc"), Call("write", '{"path": "a"}', "call_w")], stop="length"),
    "refusal": Stream([Refusal("I can't help with that.")], stop="refusal"),
    "refusal-after-text": Stream([Text("Well, "), Refusal("no.")], stop="refusal"),
    "content-filter": Stream([Text("partial")], stop="refusal"),
}
# the error each API names in its own words
ERRORS = {"openai-completions": ErrorEvent("server_error", "The server had an error"), "openai-responses": ErrorEvent("server_error", "The server had an error"),
          "anthropic-messages": ErrorEvent("overloaded_error", "Overloaded"), "google-generative-ai": ErrorEvent("INTERNAL", "Internal error", 500)}
FAILING = ("error", "cut")


def script(api: str, name: str) -> Stream:
    if name == "error":
        return Stream([Text("par"), ERRORS[api]])
    if name == "cut":
        return Stream([Thinking("hmm"), Text("half an ans"), Cut()])
    return SCRIPTS[name]


RESPONSES = TypeAdapter(ResponseStreamEvent)
ANTHROPIC = TypeAdapter(RawMessageStreamEvent)


def validate(api: str, data: str) -> None:
    """One event's JSON against the SDK's type (raises pydantic's ValidationError)."""
    obj = json.loads(data)
    if api == "openai-completions":
        ChatCompletionChunk.model_validate(obj)
    elif api == "openai-responses":
        RESPONSES.validate_python(obj)
    elif api == "anthropic-messages":
        if obj.get("type") == "error":
            ErrorResponse.model_validate(obj)
        elif obj.get("type") != "ping":
            ANTHROPIC.validate_python(obj)
    else:
        types.GenerateContentResponse.model_validate_json(data)


def payloads(frames: list[Any]) -> list[str]:
    """The data of each rendered event (the end marker [DONE] and the controls left out)."""
    out = []
    for frame in frames:
        if isinstance(frame, bytes) and frame != b"data: [DONE]\n\n":
            text = frame.decode()
            assert text.endswith("\n\n") and text.count("data: ") == 1, text
            out.append(text.split("data: ", 1)[1].rstrip("\n"))
    return out


NAMES = [*SCRIPTS, *FAILING]
CASES = [pytest.param(api, name, id=f"{api}-{name}") for api in APIS for name in NAMES]


@pytest.mark.parametrize("api, name", CASES)
def test_every_loopback_event_validates_against_the_sdk_type(api: str, name: str) -> None:
    frames = RENDER[api](script(api, name), "m", {"include": ["reasoning.encrypted_content"]})
    events = payloads(frames)
    # an error chunk of chat or Gemini is no chunk of the API: the SDK raises on it (judged below)
    checked = [e for e in events if not (api in ("openai-completions", "google-generative-ai") and e.startswith('{"error"'))]
    assert len(checked) >= (1 if api == "google-generative-ai" else 2)
    for data in checked:
        validate(api, data)


def test_the_responses_stream_numbers_its_events_in_order() -> None:
    for name in NAMES:
        numbers = [json.loads(e)["sequence_number"] for e in payloads(RENDER["openai-responses"](script("openai-responses", name), "m"))]
        assert numbers == list(range(len(numbers))), name


@pytest.mark.parametrize("api, name", CASES)
def test_the_sdk_reads_the_whole_loopback_stream_as_our_client_does(server: LoopbackServer, api: str, name: str) -> None:
    server.script(script(api, name))
    theirs = judge(api, server.url)
    server.script(script(api, name))
    if name == "error":
        assert isinstance(theirs, Failed) and ERRORS[api].message in theirs.said, theirs
        with pytest.raises(ProviderError) as error:
            reply(model(server, api))
        assert ERRORS[api].message in error.value.body and error.value.kind == ERRORS[api].kind and error.value.status is None
        return
    if name == "cut":
        assert isinstance(theirs, Failed) and theirs.kind in ("APIConnectionError", "RemoteProtocolError"), theirs
        with pytest.raises(StreamCut):
            reply(model(server, api))
        return
    assert isinstance(theirs, Judged), theirs
    mine = ours(api, reply(model(server, api), ask(thinking="high")))  # the SDK's request includes reasoning.encrypted_content
    assert (mine.text, mine.thinking, mine.calls, mine.raw_stop, mine.refusal) == (theirs.text, theirs.thinking, theirs.calls, theirs.raw_stop, theirs.refusal)
    assert sorted(mine.signatures) == sorted(theirs.signatures)
    if theirs.usage is not None or api != "anthropic-messages":
        assert mine.usage == theirs.usage
    scripted = script(api, name)
    assert theirs.text == "".join(p.text for p in scripted.parts if isinstance(p, Text))
    assert len(theirs.calls) == len([p for p in scripted.parts if isinstance(p, Call)])
