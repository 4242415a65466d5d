"""The requests each wire API sends, recorded by the loopback server: path, headers, auth, the
body's model, messages, tools, stream flags and reasoning parameters, and every model fact read
from the rulebook (inference.md S6.3, S6.4, S6.7, S6.9, S6.13; the seed's wire tests
openai_completions::tests::{tool_choice, service_tier, host_quirks} and
anthropic_forced_tool_choice under their names)."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

import pytest
from wire_support import APIS, ask, events, model, reply

from eukhe.inference import force, quirks
from eukhe.inference.wire.events import PromptProgress, TextDelta, ToolCall
from eukhe.inference.wire.plan import Image, Message, Request, Tool, WireModel
from spec.loopback import Call, LoopbackServer, Progress, RawBytes, Recorded, Stream, Text, Thinking

READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
BASH = Tool("bash", "Run a command", {"type": "object", "properties": {"command": {"type": "string"}}})
EMPTY_BOOK = quirks.compile_rulebook([], [], [], quirks.shipped().tables)  # the tables, no family, host or rule


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None, **options: Any) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request, **options)
    return server.last


def conversation() -> tuple[Message, ...]:
    call = ToolCall(0, "call_1", "read", '{"path": "a.txt"}')
    return (
        Message("user", "read a.txt"),
        Message("assistant", "Reading.", tool_calls=(call,)),
        Message("tool", "file body", tool_call_id="call_1", tool_name="read"),
        Message("user", "thanks"),
    )


# -- each API's request --------------------------------------------------------------------------


def test_the_chat_completions_request(server: LoopbackServer) -> None:
    got = sent(server, model(server, "openai-completions", key="sk-chat"), Request(conversation(), system="Be brief.", tools=(READ,)))
    assert (got.method, got.path) == ("POST", "/v1/chat/completions")
    assert got.headers["authorization"] == "Bearer sk-chat" and got.headers["accept"] == "text/event-stream"
    assert got.headers["content-type"] == "application/json"
    body = got.body
    assert body["model"] == "test-model" and body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 4096  # the loopback host's max_tokens_field
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": "Reading.", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.txt"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "file body"},
        {"role": "user", "content": "thanks"},
    ]
    assert body["tools"] == [{"type": "function", "function": {"name": "read", "description": "Read a file", "parameters": dict(READ.parameters), "strict": False}}]
    assert "tool_choice" not in body and "reasoning_effort" not in body and "store" not in body


def test_the_responses_request(server: LoopbackServer) -> None:
    got = sent(server, model(server, "openai-responses", key="sk-resp"), Request(conversation(), system="Be brief.", tools=(READ,)))
    assert (got.method, got.path) == ("POST", "/v1/responses")
    assert got.headers["authorization"] == "Bearer sk-resp"
    body = got.body
    assert body["stream"] is True and body["instructions"] == "Be brief." and body["max_output_tokens"] == 4096
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "read a.txt"}]},
        {"role": "assistant", "content": "Reading."},
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path": "a.txt"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "file body"},
        {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
    ]
    assert body["tools"] == [{"type": "function", "name": "read", "description": "Read a file", "parameters": dict(READ.parameters), "strict": False}]
    assert "store" not in body  # the loopback host has no store (supports_store false)


def test_the_responses_request_asks_for_no_storage_where_there_is_a_store(server: LoopbackServer) -> None:
    wire = model(server, "openai-responses", compat={"supportsStore": True})
    assert sent(server, wire).body["store"] is False


def test_the_anthropic_messages_request(server: LoopbackServer) -> None:
    got = sent(server, model(server, "anthropic-messages", key="sk-ant"), Request(conversation(), system="Be brief.", tools=(READ,)))
    assert (got.method, got.path) == ("POST", "/v1/messages")
    assert got.headers["authorization"] == "Bearer sk-ant" and got.headers["anthropic-version"] == "2026-10-21"  # as anthropic 2.15 sends them
    assert "x-api-key" not in got.headers
    body = got.body
    assert body["stream"] is True and body["max_tokens"] == 4096 and body["system"] == [{"type": "text", "text": "Be brief."}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "file body"}, {"type": "text", "text": "thanks"}]},
    ]
    assert body["tools"] == [{"name": "read", "description": "Read a file", "input_schema": dict(READ.parameters)}]


def test_the_google_request(server: LoopbackServer) -> None:
    got = sent(server, model(server, "google-generative-ai", "gemini-x", key="g-key"), Request(conversation(), system="Be brief.", tools=(READ,)))
    assert (got.method, got.path, got.query) == ("POST", "/v1beta/models/gemini-x:streamGenerateContent", {"alt": ["sse"]})
    assert got.headers["x-goog-api-key"] == "g-key"
    body = got.body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [
        {"role": "user", "parts": [{"text": "read a.txt"}]},
        {"role": "model", "parts": [{"text": "Reading."}, {"functionCall": {"name": "read", "args": {"path": "a.txt"}, "id": "call_1"}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read", "id": "call_1", "response": {"output": "file body"}}}, {"text": "thanks"}]},
    ]
    assert body["tools"] == [{"functionDeclarations": [{"name": "read", "description": "Read a file", "parametersJsonSchema": dict(READ.parameters)}]}]
    assert body["generationConfig"]["maxOutputTokens"] == 4096 and "toolConfig" not in body


# -- images (a zoom(id, 1) result, memory.md rule 53) ---------------------------------------------

PNG, JPEG = Image("image/png", b"\x89PNG one"), Image("image/jpeg", b"\xff\xd8 two")
PNG64, JPEG64 = "iVBORyBvbmU=", "/9ggdHdv"


def with_images() -> tuple[Message, ...]:
    calls = (ToolCall(0, "call_1", "zoom", '{"id": 3, "n": 1}'), ToolCall(1, "call_2", "zoom", '{"id": 4, "n": 1}'))
    return (
        Message("user", "look", images=(JPEG,)),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "3+1|a", tool_call_id="call_1", tool_name="zoom", images=(PNG,)),
        Message("tool", "", tool_call_id="call_2", tool_name="zoom", images=(JPEG,)),
        Message("user", "thanks"),
    )


def test_the_images_of_tool_results_and_user_turns_on_each_api(server: LoopbackServer) -> None:
    seeing = {"input": ("text", "image")}
    chat = sent(server, replace(model(server, "openai-completions"), **seeing), Request(with_images())).body["messages"]
    assert chat[0] == {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + JPEG64}}]}
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool", "user", "user"]  # a tool message is text: its images come after the results
    assert chat[2]["content"] == "3+1|a" and chat[3]["content"] == ""
    assert chat[4]["content"] == [{"type": "image_url", "image_url": {"url": f"data:image/{kind};base64,{data}"}} for kind, data in (("png", PNG64), ("jpeg", JPEG64))]
    responses = sent(server, replace(model(server, "openai-responses"), **seeing), Request(with_images())).body["input"]
    assert responses[0]["content"][1] == {"type": "input_image", "image_url": "data:image/jpeg;base64," + JPEG64}
    assert responses[3]["output"] == [{"type": "input_text", "text": "3+1|a"}, {"type": "input_image", "image_url": "data:image/png;base64," + PNG64}]
    assert responses[4]["output"] == [{"type": "input_image", "image_url": "data:image/jpeg;base64," + JPEG64}]
    anthropic = sent(server, replace(model(server, "anthropic-messages"), **seeing), Request(with_images())).body["messages"]
    jpeg_block = {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": JPEG64}}
    assert anthropic[0]["content"] == [{"type": "text", "text": "look"}, jpeg_block]
    assert anthropic[2]["content"][:2] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "3+1|a"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG64}}]},
        {"type": "tool_result", "tool_use_id": "call_2", "content": [jpeg_block]},  # no empty text block
    ]
    google = sent(server, replace(model(server, "google-generative-ai", "gemini-x"), **seeing), Request(with_images())).body["contents"]
    assert google[0]["parts"] == [{"text": "look"}, {"inlineData": {"mimeType": "image/jpeg", "data": JPEG64}}]
    assert google[2]["parts"][1] == {"inlineData": {"mimeType": "image/png", "data": PNG64}}


@pytest.mark.parametrize("api", APIS)
def test_a_model_that_takes_text_only_is_sent_no_image(server: LoopbackServer, api: str) -> None:
    got = sent(server, model(server, api), Request(with_images()))
    assert "base64" not in got.raw.decode() and "inlineData" not in got.raw.decode()
    assert "(1 image not sent: the model takes text only)" in got.raw.decode()


@pytest.mark.parametrize("api", APIS)
def test_the_models_headers_are_sent(server: LoopbackServer, api: str) -> None:
    wire = WireModel("loop", "m", api, model(server, api).base_url, "k", headers={"x-extra": "yes"})
    assert sent(server, wire).headers["x-extra"] == "yes"


# -- forced calls (S6.3) ---------------------------------------------------------------------------

FORCED_WIRE = {
    "openai-completions": ("tool_choice", {"type": "function", "function": {"name": "read"}}),
    "openai-responses": ("tool_choice", {"type": "function", "name": "read"}),
    "anthropic-messages": ("tool_choice", {"type": "tool", "name": "read"}),
    "google-generative-ai": ("toolConfig", {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}}),
}


def _last_user_text(api: str, body: dict[str, Any]) -> str:
    if api == "openai-completions":
        return str(body["messages"][-1]["content"])
    if api == "openai-responses":
        return str(body["input"][-1]["content"][0]["text"])
    if api == "anthropic-messages":
        return str(body["messages"][-1]["content"][-1]["text"])
    return str(body["contents"][-1]["parts"][-1]["text"])


@pytest.mark.parametrize("api", APIS)
def test_a_forced_call_flags_native_choice_and_ends_with_the_soft_prompt(server: LoopbackServer, api: str) -> None:
    prompt = force.soft_prompt("read")
    flagged = sent(server, model(server, api, reasoning=False), ask("go", tools=(READ, BASH), forced_tool="read", forced=force.ForcedRequest(1, True, prompt)))
    field, value = FORCED_WIRE[api]
    assert flagged.body[field] == value
    assert _last_user_text(api, flagged.body) == f"go\n\n{prompt}"
    soft = sent(server, model(server, api, reasoning=False), ask("go", tools=(READ, BASH), forced_tool="read", forced=force.ForcedRequest(0, False, prompt)))
    assert field not in soft.body or "allowedFunctionNames" not in json.dumps(soft.body[field])
    assert _last_user_text(api, soft.body) == f"go\n\n{prompt}"


def test_the_forced_choice_predicate_matches_the_wire(server: LoopbackServer, caplog: pytest.LogCaptureFixture) -> None:
    """anthropic_forced_tool_choice: manual extended thinking rejects forced choice, so the flag
    is dropped with a warning; adaptive thinking and no thinking carry it."""
    forced = force.ForcedRequest(1, True, force.soft_prompt("read"))
    request = ask("go", tools=(READ,), forced_tool="read", forced=forced, thinking="high")
    with caplog.at_level(logging.WARNING):
        manual = sent(server, model(server, "anthropic-messages", "some-claude-proxy"), request)
    assert manual.body["thinking"]["type"] == "enabled" and "tool_choice" not in manual.body
    assert any("forced choice of read dropped" in r.getMessage() for r in caplog.records)
    assert force.maps_forced_tool_choice("anthropic-messages", manual_thinking=True) is False
    adaptive = sent(server, model(server, "anthropic-messages", "claude-opus-5"), request)
    assert adaptive.body["thinking"] == {"type": "adaptive"} and adaptive.body["tool_choice"] == {"type": "tool", "name": "read"}
    plain = sent(server, model(server, "anthropic-messages", "some-claude-proxy", reasoning=False), request)
    assert "thinking" not in plain.body and plain.body["tool_choice"] == {"type": "tool", "name": "read"}


def test_manual_extended_thinking_has_no_native_forced_choice(server: LoopbackServer) -> None:
    """generation::force::tests at the wire: every attempt of a forced call under manual thinking
    goes without tool_choice, each ending with the soft prompt."""
    supported = force.maps_forced_tool_choice("anthropic-messages", manual_thinking=True)
    attempts: list[Recorded] = []

    def send(r: force.ForcedRequest) -> bool:
        attempts.append(sent(server, model(server, "anthropic-messages"), ask("go", tools=(READ,), forced_tool="read", forced=r, thinking="medium")))
        return r.attempt == 2

    force.run("read", 2, supported, True, send)
    assert len(attempts) == 3
    assert all("tool_choice" not in a.body for a in attempts)
    assert all(_last_user_text("anthropic-messages", a.body).endswith(force.soft_prompt("read")) for a in attempts)


# -- strict cap (S6.4) -----------------------------------------------------------------------------


def test_the_strict_cap_marks_the_highest_priorities_on_every_api(server: LoopbackServer) -> None:
    tools = (Tool("a", priority=0), Tool("b", priority=5), Tool("c", priority=1), Tool("d", priority=5))
    request = ask(tools=tools)
    chat = sent(server, model(server, "openai-completions", compat={"strictCap": 2}), request).body
    assert [t["function"]["strict"] for t in chat["tools"]] == [False, True, False, True]
    responses = sent(server, model(server, "openai-responses", compat={"strictCap": 2}), request).body
    assert [t["strict"] for t in responses["tools"]] == [False, True, False, True]
    anthropic = sent(server, model(server, "anthropic-messages", compat={"strictCap": 2}), request).body
    assert [t.get("strict", False) for t in anthropic["tools"]] == [False, True, False, True]
    google = sent(server, model(server, "google-generative-ai", compat={"strictCap": 2}), request).body
    assert google["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    assert [t["name"] for t in google["tools"][0]["functionDeclarations"]] == ["a", "b", "c", "d"]  # none dropped
    none_strict = sent(server, model(server, "openai-completions"), request).body
    assert [t["function"]["strict"] for t in none_strict["tools"]] == [False] * 4  # no rule: cap 0


# -- thinking (S6.9, S6.13) ------------------------------------------------------------------------


def test_a_custom_qwen_3_8_model_sends_the_rulebook_ladder(server: LoopbackServer) -> None:
    """openai_completions::tests::tool_choice: a custom provider's qwen3.8-27b with no map sends
    the family ladder's wire strings; a level it does not offer is clamped first."""
    wire = model(server, "openai-completions", "qwen3.8-27b", provider="my-llama")
    sent_effort = {level: sent(server, wire, ask(thinking=level)).body.get("reasoning_effort") for level in ("off", "low", "medium", "high", "xhigh")}
    assert sent_effort == {"off": "none", "low": "low", "medium": "medium", "high": "xhigh", "xhigh": "xhigh"}
    older = model(server, "openai-completions", "qwen3-8b", provider="my-llama")
    off = sent(server, older, ask(thinking="off")).body
    assert off["chat_template_kwargs"] == {"enable_thinking": False} and "reasoning_effort" not in off
    assert sent(server, older, ask(thinking="high")).body["reasoning_effort"] == "high"


def test_adaptive_thinking_comes_from_the_rulebook(server: LoopbackServer) -> None:
    adaptive = sent(server, model(server, "anthropic-messages", "claude-opus-5"), ask(thinking="high")).body
    assert adaptive["thinking"] == {"type": "adaptive"} and adaptive["output_config"] == {"effort": "high"}
    bare = sent(server, model(server, "anthropic-messages", "claude-opus-5"), ask(thinking="high"), book=EMPTY_BOOK).body
    assert bare["thinking"] == {"type": "enabled", "budget_tokens": 16384}  # thinking_defaults.budgets, high
    assert bare["max_tokens"] > bare["thinking"]["budget_tokens"]


def test_google_sends_thinking_level_or_the_rule_budget(server: LoopbackServer) -> None:
    level = sent(server, model(server, "google-generative-ai", "gemini-3-pro"), ask(thinking="low")).body
    assert level["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "LOW"}
    budget = sent(server, model(server, "google-generative-ai", "gemini-2.5-pro"), ask(thinking="low")).body
    assert budget["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": 2048}
    clamped = sent(server, model(server, "google-generative-ai", "gemini-2.5-pro"), ask(thinking="low", thinking_budgets={"low": 10})).body
    assert clamped["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 128
    unnamed = sent(server, model(server, "google-generative-ai", "gemini-x"), ask(thinking="medium")).body
    assert unnamed["generationConfig"]["thinkingConfig"]["thinkingBudget"] == -1
    off = sent(server, model(server, "google-generative-ai", "gemini-3-pro"), ask()).body
    assert "thinkingConfig" not in off["generationConfig"]


def test_responses_sends_effort_and_explicit_cache_breakpoints(server: LoopbackServer) -> None:
    messages = (Message("user", "view", cache=True), Message("user", "task"))
    mini = sent(server, model(server, "openai-responses", "gpt-5.5-mini"), Request(messages, thinking="medium")).body
    assert mini["reasoning"] == {"effort": "medium", "summary": "auto", "context": "all_turns"}
    assert mini["input"][0]["content"][-1]["prompt_cache_breakpoint"] == {"mode": "explicit"}  # on the content block
    assert "prompt_cache_breakpoint" not in json.dumps(mini["input"][1]) and all("prompt_cache_breakpoint" not in item for item in mini["input"])
    older = sent(server, model(server, "openai-responses", "gpt-5.2"), Request(messages, thinking="medium")).body
    assert older["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert "prompt_cache_breakpoint" not in json.dumps(older["input"])


def test_a_model_without_reasoning_sends_no_thinking(server: LoopbackServer) -> None:
    for api in APIS:
        body = sent(server, model(server, api, "qwen3.8-27b", reasoning=False), ask(thinking="high")).body
        text = json.dumps(body)
        assert "reasoning" not in text and "thinking" not in text.replace("enable_thinking", "") and "effort" not in text


@pytest.mark.parametrize("api", APIS)
def test_wire_apis_never_test_the_model_id(server: LoopbackServer, api: str) -> None:
    """S6.13: with a rulebook that says nothing, every model id gets the same request."""
    request = Request((Message("user", "hi", cache=True),), system="s", tools=(READ,), thinking="high", forced_tool="read",
                      forced=force.ForcedRequest(1, True, force.soft_prompt("read")))
    bodies = []
    for model_id in ("claude-opus-5", "gemini-3-pro", "gpt-5.5-mini", "qwen3.8-27b", "grok-4.6", "plain"):
        got = sent(server, model(server, api, model_id), request, book=EMPTY_BOOK)
        body = dict(got.body)
        body.pop("model", None)
        bodies.append(json.dumps(body, sort_keys=True))
    assert len(set(bodies)) == 1


# -- hosts (S6.2) and cache marks ----------------------------------------------------------------------


def _has_marks(body: dict[str, Any]) -> bool:
    return '"cache_control"' in json.dumps(body)


def test_a_custom_provider_at_openrouter_ai_sends_no_cache_marks(server: LoopbackServer) -> None:
    """host_quirks: a custom provider whose base URL names openrouter.ai gets the openrouter-url
    settings (no store, no developer role) and no cache marks; the openrouter provider gets them."""
    base = server.url + "/openrouter.ai/api/v1"
    request = Request((Message("user", "view", cache=True), Message("user", "task")), system="sys", system_cache=True, thinking="high")
    custom = sent(server, model(server, "openai-completions", "anthropic/claude-opus-4-6", provider="my-router", base=base), request).body
    assert not _has_marks(custom)
    assert custom["messages"][0] == {"role": "system", "content": "sys"} and "store" not in custom
    assert custom["reasoning"] == {"effort": "high"}
    real = sent(server, model(server, "openai-completions", "anthropic/claude-opus-4-6", provider="openrouter", base=base), request).body
    assert real["messages"][1]["content"] == [{"type": "text", "text": "view", "cache_control": {"type": "ephemeral"}}]
    assert real["messages"][0]["content"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
    assert real["messages"][2]["content"] == "task"


def test_the_openrouter_provider_at_a_loopback_url_keeps_the_openrouter_settings(server: LoopbackServer) -> None:
    request = Request((Message("user", "view", cache=True),), thinking="high")
    routed = sent(server, model(server, "openai-completions", "anthropic/claude-opus-4-6", provider="openrouter"), request).body
    assert _has_marks(routed) and routed["reasoning"] == {"effort": "high"}
    assert "max_completion_tokens" in routed and "max_tokens" not in routed  # not the loopback host's field
    other = sent(server, model(server, "openai-completions", "qwen/qwen3-8b", provider="openrouter"), request).body
    assert not _has_marks(other)  # marks only for the prefix the rulebook names
    local = sent(server, model(server, "openai-completions", "anthropic/claude-opus-4-6", provider="my-proxy"), request).body
    assert not _has_marks(local) and "max_tokens" in local and local["reasoning_effort"] == "high"


def test_anthropic_cache_marks_are_ephemeral_with_no_ttl(server: LoopbackServer) -> None:
    request = Request((Message("user", "view", cache=True), Message("assistant", "ok"), Message("user", "task", cache=True)), system="sys", system_cache=True)
    body = sent(server, model(server, "anthropic-messages"), request).body
    assert body["system"] == [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}]
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][2]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "ttl" not in json.dumps(body) and "cache_control" not in json.dumps(body["messages"][1])


def test_service_tier_is_sent_as_asked(server: LoopbackServer) -> None:
    """openai_completions::tests::service_tier."""
    chat = sent(server, model(server, "openai-completions", provider="openrouter"), ask(service_tier="flex")).body
    assert chat["service_tier"] == "flex"
    responses = sent(server, model(server, "openai-responses"), ask(service_tier="priority")).body
    assert responses["service_tier"] == "priority"
    assert "service_tier" not in sent(server, model(server, "openai-completions"), ask()).body


# -- the conventions of llama.cpp, vLLM, Ollama, OpenRouter -------------------------------------------


def test_llama_cpp_prompt_progress(server: LoopbackServer) -> None:
    server.script(Stream([Progress(100, 20, 50), Progress(100, 20, 100), Text("hi")]))
    got = events(model(server, "openai-completions", provider="llama-cpp"))
    assert server.last.body["return_progress"] is True
    progress = [e for e in got if isinstance(e, PromptProgress)]
    assert progress == [PromptProgress(100, 20, 50, 1.0), PromptProgress(100, 20, 100, 1.0)]
    assert got.index(progress[-1]) < next(i for i, e in enumerate(got) if isinstance(e, TextDelta))
    assert "return_progress" not in sent(server, model(server, "openai-completions", provider="my-llama")).body
    assert sent(server, model(server, "openai-completions", provider="my-llama", compat={"supportsPromptProgress": True})).body["return_progress"] is True


def test_openrouter_and_ollama_reasoning_field(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("hmm"), Text("ok")], chat_reasoning_field="reasoning"))
    got = reply(model(server, "openai-completions"), ask(thinking="high"))
    assert (got.thinking, got.text) == ("hmm", "ok")


def test_ollama_whole_calls_without_an_index(server: LoopbackServer) -> None:
    server.script(Stream([Call("read", '{"path": "a"}', "c1"), Call("read", '{"path": "b"}', "c2")], stop="stop", chat_call_index=False))
    got = reply(model(server, "openai-completions"))
    assert [(c.id, c.arguments) for c in got.tool_calls] == [("c1", '{"path": "a"}'), ("c2", '{"path": "b"}')]


def test_vllm_stops_with_stop_plus_calls_and_the_calls_are_read(server: LoopbackServer) -> None:
    server.script(Stream([Call("bash", '{"command": "ls"}', "c1")], stop="stop"))
    got = reply(model(server, "openai-completions"))
    assert got.stop.reason == "stop" and [c.name for c in got.tool_calls] == ["bash"]


def test_openrouter_keepalive_comments_are_skipped(server: LoopbackServer) -> None:
    server.script(Stream([RawBytes(b": OPENROUTER PROCESSING\n\n"), Text("a"), RawBytes(b": OPENROUTER PROCESSING\r\n\r\n"), Text("b")]))
    assert reply(model(server, "openai-completions")).text == "ab"


def test_a_chat_stream_that_closes_after_its_finish_reason_is_whole(server: LoopbackServer) -> None:
    finish = b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}\n\n'
    server.script(Stream([Text("cut short"), RawBytes(finish)], end=False))
    got = reply(model(server, "openai-completions"))
    assert (got.text, got.stop.reason, got.stop.raw) == ("cut short", "length", "length")


def test_thinking_goes_back_with_its_signature(server: LoopbackServer) -> None:
    call = ToolCall(0, "c1", "read", '{"path": "a"}')
    history = (Message("user", "go"), Message("assistant", "", tool_calls=(call,), thinking="plan", signature="sig-1"),
               Message("tool", "body", tool_call_id="c1", tool_name="read"))
    anthropic = sent(server, model(server, "anthropic-messages"), Request(history)).body
    assert anthropic["messages"][1]["content"][0] == {"type": "thinking", "thinking": "plan", "signature": "sig-1"}
    redacted = (Message("user", "go"), Message("assistant", "ok", signature="opaque"))
    assert sent(server, model(server, "anthropic-messages"), Request(redacted)).body["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "opaque"}
    google = sent(server, model(server, "google-generative-ai"), Request(history)).body
    assert google["contents"][1]["parts"][0]["thoughtSignature"] == "sig-1"


def test_a_shared_http_client_serves_many_requests(server: LoopbackServer) -> None:
    import asyncio

    import httpx

    from eukhe.inference.wire import client_for, collect

    server.script(*[Stream([Text(f"r{i}")]) for i in range(3)])

    async def run() -> list[str]:
        async with httpx.AsyncClient(timeout=10) as http:
            out = []
            for api in ("openai-completions", "anthropic-messages", "google-generative-ai"):
                out.append((await collect(client_for(model(server, api), http=http).stream(ask()))).text)
            assert not http.is_closed  # the client given is the caller's to close
            return out

    assert asyncio.run(run()) == ["r0", "r1", "r2"]
