"""OpenAI Codex Responses (api "openai-codex-responses"), over the loopback server: the ChatGPT
backend's path and headers (the account id from the token's claim), what its body differs in
from the Responses body (store false and encrypted reasoning always, instructions always, no
max_output_tokens or temperature), the service tiers the rulebook gives it, and its stream
(the Responses stream, ``response.done`` as its end)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest
from wire_support import ask, model, reply

from eukhe.inference import quirks, tiers
from eukhe.inference.wire import client_for
from eukhe.inference.wire.events import ProviderError, StreamCut
from eukhe.inference.wire.openai_codex_responses import account_id
from eukhe.inference.wire.plan import Message, Request, Tool, WireModel
from spec.loopback import Body, Call, Cut, ErrorEvent, Fail, LoopbackServer, Recorded, Stream, Text, Thinking, Tokens

API = "openai-codex-responses"
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})


def jwt(claims: dict[str, Any]) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256'})}.{part(claims)}.c2ln"


TOKEN = jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}, "exp": 2000000000})


def codex(server: LoopbackServer, **fields: Any) -> WireModel:
    return replace(model(server, API, "gpt-5.5", provider="openai-codex", key=TOKEN), **fields)


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    return server.last


def test_the_request_goes_to_the_codex_path_with_the_backends_headers(server: LoopbackServer) -> None:
    got = sent(server, codex(server), Request((Message("user", "hi"),), system="Be brief.", tools=(READ,), temperature=0.2, max_tokens=99))
    assert (got.method, got.path, got.query, got.api) == ("POST", "/backend-api/codex/responses", {}, API)
    assert got.headers["authorization"] == f"Bearer {TOKEN}" and got.headers["chatgpt-account-id"] == "acct-123"
    assert got.headers["openai-beta"] == "responses=experimental" and got.headers["originator"] == "eukhe"
    body = got.body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"] and body["instructions"] == "Be brief."
    assert "max_output_tokens" not in body and "temperature" not in body
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}] and body["tools"][0]["name"] == "read"


def test_instructions_are_sent_without_a_system_prompt_and_include_is_not_doubled(server: LoopbackServer) -> None:
    got = sent(server, codex(server, id="gpt-5.2"), ask(thinking="high"))
    assert got.body["instructions"] == "" and got.body["include"] == ["reasoning.encrypted_content"]
    assert got.body["reasoning"] == {"effort": "high", "summary": "auto"}
    marked = sent(server, codex(server), ask(thinking="high"))  # gpt-5.5: the rulebook's explicit cache breakpoints
    assert marked.body["reasoning"] == {"effort": "high", "summary": "auto", "context": "all_turns"}


def test_the_body_is_the_responses_body_but_for_the_backends_differences(server: LoopbackServer) -> None:
    request = Request((Message("user", "hi"),), system="S", tools=(READ,), thinking="medium", service_tier="priority")
    wire = codex(server)
    body = client_for(wire).build(request, client_for(wire).plan(request))[2]
    responses = replace(wire, api="openai-responses")
    plain = client_for(responses).build(request, client_for(responses).plan(request))[2]
    assert {k: v for k, v in body.items() if k not in ("store",)} == {k: v for k, v in plain.items() if k not in ("max_output_tokens", "store")}
    assert body["service_tier"] == "priority"


def test_the_rulebook_gives_codex_its_tiers_and_no_flex() -> None:
    book = quirks.shipped()
    family = book.family("gpt-5.2", None).id
    assert family == "gpt-priority"
    assert set(tiers.service_tiers(book, "openai-codex", API, family)) == {"default", "auto", "scale", "priority"}
    assert set(tiers.service_tiers(book, "openai", "openai-responses", family)) == {"default", "auto", "scale", "flex", "priority"}


@pytest.mark.parametrize("token", ["sk-plain", "a.b.c", jwt({"sub": "x"})])
def test_a_token_without_the_claim_sends_no_account_header(server: LoopbackServer, token: str) -> None:
    assert account_id(token) is None
    got = sent(server, codex(server, api_key=token))
    assert "chatgpt-account-id" not in got.headers and got.headers["authorization"] == f"Bearer {token}"


def test_the_stream_is_read_as_the_responses_stream(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("Hmm. ", "enc"), Text("Yes."), Call("read", '{"path": "a"}', "call_1")], stop="toolUse", usage=Tokens(30, 8, cache_read=64, reasoning=2)))
    got = reply(codex(server), ask(thinking="low"))
    assert (got.text, got.thinking, got.signatures, got.stop.reason) == ("Yes.", "Hmm. ", ("enc",), "toolUse")
    assert [(c.id, c.name) for c in got.tool_calls] == [("call_1", "read")]
    assert got.usage is not None and (got.usage.input, got.usage.output, got.usage.cache_read, got.usage.reasoning) == (30, 8, 64, 2)


def test_response_done_ends_the_stream(server: LoopbackServer) -> None:
    done = {"type": "response.done", "response": {"id": "r", "status": "completed", "output": [], "usage": {"input_tokens": 5, "output_tokens": 2}}}
    body = b'data: {"type": "response.output_text.delta", "output_index": 0, "delta": "hi"}\n\n' + f"data: {json.dumps(done)}\n\n".encode()
    server.script(Body(body))
    got = reply(codex(server))
    assert (got.text, got.stop.reason, got.stop.raw) == ("hi", "stop", "completed")
    assert got.usage is not None and (got.usage.input, got.usage.output) == (5, 2)
    server.script(Body(body.replace(b"event: ", b"").replace(b"response.done", b"response.in_progress")))
    with pytest.raises(StreamCut):
        reply(codex(server))


def test_errors_are_typed(server: LoopbackServer) -> None:
    server.script(Fail(429, '{"error": {"type": "usage_limit_reached", "message": "limit", "resets_in_seconds": 60}}', (("retry-after", "60"),)))
    with pytest.raises(ProviderError) as error:
        reply(codex(server))
    assert (error.value.status, error.value.kind, error.value.retry_after, error.value.retryable) == (429, "usage_limit_reached", 60.0, True)
    server.script(Stream([Text("x"), ErrorEvent("server_error", "codex failed")]))
    with pytest.raises(ProviderError, match="codex failed"):
        reply(codex(server))
    server.script(Stream([Text("x"), Cut()]))
    with pytest.raises(StreamCut):
        reply(codex(server))


def test_the_provider_is_in_provider_caps_and_its_models_reach_this_client(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main
    from eukhe.inference import catalog
    from eukhe.inference.wire import CLIENTS

    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "openai-codex"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[0] == "openai-codex" and line.count("=") == 8
    shipped = [m for m in catalog.compiled() if m.provider == "openai-codex"]
    assert shipped and {m.api for m in shipped} == {"openai-codex-responses"} and CLIENTS["openai-codex-responses"].api == "openai-codex-responses"
