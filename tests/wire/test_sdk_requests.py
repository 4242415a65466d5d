"""The vendors' SDKs judge the requests our wire clients send.

1. The same turn, sent twice to the loopback server (a real HTTP server that records what it
   receives): once by our client, once by the vendor's SDK pointed at the server by its base URL
   (openai ``responses.create`` and ``chat.completions.create`` with
   stream=True, anthropic ``messages.create``, google-genai ``generate_content_stream``), the SDK's
   arguments spelled here from the turn in the SDK's own types. The two recorded requests must
   agree: method, path and query, the auth and version headers, and the body, field by field.
   The turn is a chat turn in a tool loop: system prompt, the chat's tools, the view and the
   user's words (``Message.parts``), a reply with its reasoning and a tool call, the result.
2. Our request bodies validate against the SDK's request types: the openai and anthropic params
   TypedDicts through pydantic with extra keys forbidden at every depth, google-genai's pydantic
   models (Content, Tool, ToolConfig, GenerationConfig) field by field.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from google import genai
from google.genai import types
from openai.types.beta.response_create_params import ResponseCreateParamsStreaming as BetaResponseCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import ConfigDict, TypeAdapter
from wire_support import model, reply

from eukhe.inference import force
from eukhe.inference.wire.events import ToolCall
from eukhe.inference.wire.plan import Image, Message, Request, Thought
from eukhe.memory.prompts import turn_text
from eukhe.memory.request import Layers, build_request
from spec.loopback import LoopbackServer, Recorded, Stream, Text

WORDS = "please rename the field «naïve» to plain_name"
VIEW = [f"{k}+1|line {k} of the chat" for k in range(6)]
LAYERS = Layers.of()
KEY = "sk-judged"
SIG = base64.b64encode(b"gemini thought signature").decode()
CALL_SIG = base64.b64encode(b"gemini call signature").decode()
MODELS = {"openai-completions": "test-model", "openai-responses": "gpt-5.5-mini", "anthropic-messages": "claude-opus-5", "google-generative-ai": "gemini-3-pro"}
THOUGHTS = {
    "openai-completions": (),
    "openai-responses": (Thought("Check the date first.", "gAAAA-encrypted", item="rs_1"),),
    "anthropic-messages": (Thought("Check the date first.", "sig-ant"), Thought("", "redacted-data", redacted=True)),
    "google-generative-ai": (Thought("Check the date first.", SIG),),
}


def loop_turn(api: str, thinking: str | None = "high") -> Request:
    call = ToolCall(0, "call_1", "date", '{"id": 3}', CALL_SIG if api == "google-generative-ai" else "")
    conversation = [
        Message("user", "Now: 2030-01-01 10:00:00"),
        Message("user", turn_text(WORDS)),
        Message("assistant", "Looking at the date.", tool_calls=(call,), thoughts=THOUGHTS[api]),
        Message("tool", "Monday", tool_call_id="call_1", tool_name="date"),
    ]
    return build_request(LAYERS, VIEW, conversation, thinking)


def ours(server: LoopbackServer, api: str, request: Request, model_id: str | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(model(server, api, model_id or MODELS[api], key=KEY), request)
    return server.last


def theirs(server: LoopbackServer, send: Callable[[], None]) -> Recorded:
    server.script(Stream([Text("ok")]))
    before = len(server.requests)
    send()
    return server.wait_requests(before + 1)[before]


def pieces(message: Message) -> list[str]:
    return [text for text, _mark in message.pieces if text]


# -- the SDKs send the same turn ------------------------------------------------------------------


def test_openai_chat_completions_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = loop_turn("openai-completions")
    view, assistant, result = request.messages
    got = ours(server, "openai-completions", request)
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)

    def send() -> None:
        client.chat.completions.create(
            model="test-model",
            stream=True,
            stream_options={"include_usage": True},
            max_tokens=4096,  # the loopback host's max_tokens_field
            reasoning_effort="high",
            messages=[
                {"role": "system", "content": request.system},
                {"role": "user", "content": "".join(pieces(view))},
                {
                    "role": "assistant",
                    "content": assistant.text,
                    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "date", "arguments": '{"id": 3}'}}],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": result.text},
            ],
            tools=[{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": False}} for t in request.tools],
        ).close()

    judged = theirs(server, send)
    same_request(got, judged, ("authorization",))
    assert got.body == judged.body


@pytest.mark.parametrize("model_id", ["gpt-5.5-mini", "gpt-5.2"])
def test_openai_responses_as_the_sdk_sends_it(server: LoopbackServer, model_id: str) -> None:
    """gpt-5.5-mini has explicit cache breakpoints (on content blocks, as the SDK's types have
    them); gpt-5.2 has none."""
    request = loop_turn("openai-responses")
    view, assistant, result = request.messages
    got = ours(server, "openai-responses", request, model_id)
    explicit = model_id == "gpt-5.5-mini"
    mark = {"prompt_cache_breakpoint": {"mode": "explicit"}} if explicit else {}
    client = openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0)
    thought = assistant.thoughts[0]
    arguments: dict[str, Any] = dict(
        model=model_id,
        stream=True,
        instructions=request.system,
        max_output_tokens=4096,
        include=["reasoning.encrypted_content"],
        reasoning={"effort": "high", "summary": "auto", **({"context": "all_turns"} if explicit else {})},
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": text, **(mark if marked else {})} for text, marked in view.parts]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": thought.text}], "encrypted_content": thought.signature},
            {"role": "assistant", "content": assistant.text},
            {"type": "function_call", "call_id": "call_1", "name": "date", "arguments": '{"id": 3}'},
            {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": result.text, **mark}] if explicit else result.text},
        ],
        tools=[{"type": "function", "name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": False} for t in request.tools],
    )
    judged = theirs(server, lambda: client.responses.create(**arguments).close())
    same_request(got, judged, ("authorization",))
    assert got.body == judged.body


def test_anthropic_messages_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = loop_turn("anthropic-messages")
    view, assistant, result = request.messages
    got = ours(server, "anthropic-messages", request)
    client = anthropic.Anthropic(base_url=server.url, api_key=KEY, max_retries=0)
    mark = {"cache_control": {"type": "ephemeral"}}

    def send() -> None:
        client.messages.create(
            model="claude-opus-5",
            max_tokens=4096,
            stream=True,
            thinking={"type": "adaptive"},
            output_config={"effort": "high"},
            system=[{"type": "text", "text": request.system}],
            tools=[{"name": t.name, "description": t.description, "input_schema": dict(t.parameters)} for t in request.tools],  # type: ignore[misc]
            messages=[
                {"role": "user", "content": [{"type": "text", "text": text, **(mark if marked else {})} for text, marked in view.parts]},  # type: ignore[misc]
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Check the date first.", "signature": "sig-ant"},
                        {"type": "redacted_thinking", "data": "redacted-data"},
                        {"type": "text", "text": assistant.text},
                        {"type": "tool_use", "id": "call_1", "name": "date", "input": {"id": 3}},
                    ],
                },
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": result.text, "cache_control": {"type": "ephemeral"}}]},
            ],
        ).close()

    judged = theirs(server, send)
    same_request(got, judged, ("authorization", "anthropic-version"))
    assert got.body == judged.body


def test_google_generate_content_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = loop_turn("google-generative-ai")
    view, assistant, result = request.messages
    got = ours(server, "google-generative-ai", request)
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=server.url, api_version="v1beta"))
    contents = [
        types.Content(role="user", parts=[types.Part(text=text) for text in pieces(view)]),
        types.Content(
            role="model",
            parts=[
                types.Part(text=assistant.text, thought_signature=base64.b64decode(SIG)),
                types.Part(function_call=types.FunctionCall(name="date", args={"id": 3}, id="call_1"), thought_signature=base64.b64decode(CALL_SIG)),
            ],
        ),
        types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(name="date", id="call_1", response={"output": result.text}))]),
    ]
    config = types.GenerateContentConfig(
        system_instruction=request.system,
        tools=[types.Tool(function_declarations=[types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=dict(t.parameters)) for t in request.tools])],
        max_output_tokens=4096,
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_level=types.ThinkingLevel.HIGH),
    )

    def send() -> None:
        for _chunk in client.models.generate_content_stream(model="gemini-3-pro", contents=contents, config=config):  # type: ignore[arg-type]
            break

    judged = theirs(server, send)
    same_request(got, judged, ("x-goog-api-key",))
    # The SDK names the system instruction's role and spells some keys in snake case
    # (thinkingConfig's, parameters_json_schema; the API reads both spellings of a field name):
    # compared in camel case, the user's data (arguments, results, schemas) as sent.
    body = camel(judged.body)
    body["systemInstruction"] = {k: v for k, v in body["systemInstruction"].items() if k != "role"}
    assert got.body == body


def same_request(got: Recorded, judged: Recorded, headers: tuple[str, ...]) -> None:
    assert (got.method, got.path, got.query) == (judged.method, judged.path, judged.query)
    assert got.headers["content-type"] == judged.headers["content-type"] == "application/json"
    for name in headers:
        assert got.headers.get(name) == judged.headers.get(name), name
    assert KEY in got.headers[headers[0]]


DATA = {"args", "response", "parametersJsonSchema"}  # objects of the user's data: their keys are not field names


def camel(value: Any) -> Any:
    if isinstance(value, list):
        return [camel(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = "".join(w if i == 0 else w.title() for i, w in enumerate(key.split("_")))
            out[name] = item if name in DATA else camel(item)
        return out
    return value


# -- our bodies validate against the SDK's request types ---------------------------------------

STRICT = ConfigDict(extra="forbid")
PARAMS = {
    "openai-completions": TypeAdapter(list[CompletionCreateParamsStreaming], config=STRICT),
    "openai-responses": TypeAdapter(list[ResponseCreateParamsStreaming], config=STRICT),
    "anthropic-messages": TypeAdapter(list[MessageCreateParamsStreaming], config=STRICT),
}
BETA_RESPONSES = TypeAdapter(list[BetaResponseCreateParamsStreaming], config=STRICT)
PNG = Image("image/png", b"\x89PNG not really")


def requests_of(api: str) -> dict[str, Request]:
    turn = loop_turn(api)
    forced = force.ForcedRequest(0, True, force.soft_prompt("date"))
    return {
        "a turn": loop_turn(api, None),
        "a tool loop with thinking": turn,
        "a forced call": replace(loop_turn(api, None), forced_tool="date", forced=forced),
        "an image result": replace(turn, messages=turn.messages[:-1] + (replace(turn.messages[-1], images=(PNG,)),)),
        "a compaction": build_request(LAYERS, VIEW, [Message("user", "Compaction: compress message 3")], "low"),
    }


def validate(api: str, recorded: Recorded) -> None:
    body = recorded.body
    if api == "google-generative-ai":
        for content in body["contents"]:
            types.Content.model_validate(content)
        types.Content.model_validate(body["systemInstruction"])
        for tool in body.get("tools", []):
            types.Tool.model_validate(tool)
        if "toolConfig" in body:
            types.ToolConfig.model_validate(body["toolConfig"])
        types.GenerationConfig.model_validate(body["generationConfig"])
        assert set(body) <= {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"}
        return
    PARAMS[api].validate_python([body])
    if api == "openai-responses":
        BETA_RESPONSES.validate_python([body])


@pytest.mark.parametrize("api", list(MODELS))
@pytest.mark.parametrize("what", ["a turn", "a tool loop with thinking", "a forced call", "an image result", "a compaction"])
def test_our_bodies_validate_against_the_sdk_types(server: LoopbackServer, api: str, what: str) -> None:
    for model_id in {MODELS[api], "gpt-5.2" if api == "openai-responses" else MODELS[api]}:
        request = requests_of(api)[what]
        wire = replace(model(server, api, model_id, key=KEY), input=("text", "image"))
        server.script(Stream([Text("ok")]))
        reply(wire, request)
        validate(api, server.last)


def test_the_sdk_types_refuse_what_we_sent_before() -> None:
    """The judges bite: the old Responses breakpoint (a boolean on the input item), an assistant
    output_text block without its item's id and status, and a Gemini JSON-schema union under
    ``parameters`` are refused."""
    from pydantic import ValidationError

    old = {"model": "m", "stream": True, "input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}], "prompt_cache_breakpoint": True}]}
    with pytest.raises(ValidationError):
        PARAMS["openai-responses"].validate_python([old])
    with pytest.raises(ValidationError):
        BETA_RESPONSES.validate_python([old])
    assistant = {"model": "m", "stream": True, "input": [{"role": "assistant", "content": [{"type": "output_text", "text": "x"}]}]}
    with pytest.raises(ValidationError):
        PARAMS["openai-responses"].validate_python([assistant])
    with pytest.raises((ValidationError, AttributeError)):  # the SDK's enum chokes on the list of types
        types.Tool.model_validate({"functionDeclarations": [{"name": "zoom", "parameters": dict(LAYERS.tools[0].parameters)}]})
