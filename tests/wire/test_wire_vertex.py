"""Google Vertex AI (api "google-vertex"), over the loopback server: Vertex's path (project,
location, publisher, model), Bearer auth, Gemini's body with the rulebook's thinking level or
budget (S6.13: "Google per-level budget, Gemini API and Vertex"), and the stream read by
Gemini's reader, a refusal's finishMessage included."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from wire_support import ask, model, reply

from eukhe.inference.wire import client_for
from eukhe.inference.wire.events import BadRequest, PromptBlocked, ProviderError, StreamCut
from eukhe.inference.wire.google_vertex import GoogleVertex
from eukhe.inference.wire.plan import Message, Request, Tool, WireModel
from spec.loopback import Body, Call, Cut, ErrorEvent, Fail, LoopbackServer, Recorded, Refusal, Stream, Text, Thinking, Tokens

API = "google-vertex"
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
PATH = "/v1/projects/loop-project/locations/us-central1/publishers/google/models/{}:streamGenerateContent"


def vertex(server: LoopbackServer, model_id: str = "gemini-3-pro", **fields: Any) -> WireModel:
    return replace(model(server, API, model_id, provider="google-vertex", key="ya29.token"), **fields)


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    return server.last


def test_the_request_goes_to_vertexs_path_with_a_bearer_token(server: LoopbackServer) -> None:
    got = sent(server, vertex(server), Request((Message("user", "hi"),), system="Be brief.", tools=(READ,), thinking="high"))
    assert (got.method, got.path, got.query, got.api) == ("POST", PATH.format("gemini-3-pro"), {"alt": ["sse"]}, API)
    assert got.headers["authorization"] == "Bearer ya29.token" and "x-goog-api-key" not in got.headers
    body = got.body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}] and body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "HIGH"}


def test_the_body_is_geminis(server: LoopbackServer) -> None:
    request = Request((Message("user", "hi"),), system="S", tools=(READ,), thinking="low")
    wire = vertex(server)
    gemini = replace(wire, api="google-generative-ai")
    assert client_for(wire).build(request, client_for(wire).plan(request))[2] == client_for(gemini).build(request, client_for(gemini).plan(request))[2]


@pytest.mark.parametrize("level, budget", [("minimal", 128), ("low", 2048), ("high", 32768)])
def test_gemini_2_5_on_vertex_sends_the_rule_budget(server: LoopbackServer, level: str, budget: int) -> None:
    got = sent(server, vertex(server, "gemini-2.5-pro"), ask(thinking=level))
    assert got.body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingBudget": budget}
    user = sent(server, vertex(server, "gemini-2.5-pro"), ask(thinking="high", thinking_budgets={"high": 99_999}))
    assert user.body["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 32768  # the user's, clamped to the rule's high


def test_project_and_location_come_from_compat_else_the_environment(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    compat = {"vertexProject": "proj-a", "vertexLocation": "europe-west4"}
    got = sent(server, vertex(server, base_url=server.url + "/v1", compat=compat))
    assert got.path == "/v1/projects/proj-a/locations/europe-west4/publishers/google/models/gemini-3-pro:streamGenerateContent"
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "proj-env")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "global")
    got = sent(server, vertex(server, base_url=server.url + "/v1"))
    assert got.path == "/v1/projects/proj-env/locations/global/publishers/google/models/gemini-3-pro:streamGenerateContent"


@pytest.mark.parametrize("location, host", [("us-east5", "https://us-east5-aiplatform.googleapis.com/v1"), ("global", "https://aiplatform.googleapis.com/v1")])
def test_the_catalog_base_url_takes_the_location(location: str, host: str) -> None:
    wire = WireModel("google-vertex", "gemini-3-pro", API, "https://{location}-aiplatform.googleapis.com/v1", "t", compat={"vertexProject": "p", "vertexLocation": location})
    assert GoogleVertex(wire).root() == f"{host}/projects/p/locations/{location}"


def test_no_project_is_a_bad_request_before_any_request(server: LoopbackServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(BadRequest, match="no Vertex project"):
        reply(vertex(server, base_url=server.url + "/v1"))
    with pytest.raises(BadRequest, match="vertexProject"):
        reply(vertex(server, base_url=server.url + "/v1", compat={"vertexProject": "a/b"}))
    assert server.requests == []


def test_the_stream_is_read_by_geminis_reader(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("Hmm."), Text("Reading."), Call("read", '{"path": "a"}', "call_1", signature="c2ln")], stop="toolUse",
                         usage=Tokens(40, 12, cache_read=16, reasoning=5)))
    got = reply(vertex(server), ask(thinking="high"))
    assert (got.text, got.thinking, got.stop.reason, got.stop.raw) == ("Reading.", "Hmm.", "toolUse", "STOP")
    assert [(c.id, c.name, c.arguments, c.signature) for c in got.tool_calls] == [("call_1", "read", '{"path": "a"}', "c2ln")]
    assert got.usage is not None and (got.usage.input, got.usage.output, got.usage.cache_read, got.usage.reasoning) == (40, 12, 16, 5)


def test_a_refusal_keeps_vertexs_finish_message(server: LoopbackServer) -> None:
    server.script(Stream([Refusal("Blocked for safety.")], stop="refusal"))
    got = reply(vertex(server))
    assert (got.stop.reason, got.stop.raw, got.refusal) == ("refusal", "SAFETY", "Blocked for safety.")


def test_errors_are_typed(server: LoopbackServer) -> None:
    server.script(Fail(429, '[{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota", "details": '
                            '[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}]'))
    with pytest.raises(ProviderError) as error:
        reply(vertex(server))
    assert (error.value.status, error.value.kind, error.value.retry_after) == (429, "RESOURCE_EXHAUSTED", 7.0)
    server.script(Stream([Text("x"), ErrorEvent("INTERNAL", "vertex failed")]))
    with pytest.raises(ProviderError, match="vertex failed"):
        reply(vertex(server))
    server.script(Stream([Text("x"), Cut()]))
    with pytest.raises(StreamCut):
        reply(vertex(server))
    server.script(Body(b'data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}\n\n'))
    with pytest.raises(PromptBlocked):
        reply(vertex(server))


def test_the_provider_is_in_provider_caps_and_its_models_reach_this_client(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main
    from eukhe.inference import catalog
    from eukhe.inference.wire import CLIENTS

    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "google-vertex"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[0] == "google-vertex" and line.count("=") == 8
    shipped = [m for m in catalog.compiled() if m.provider == "google-vertex"]
    assert shipped and {m.api for m in shipped} == {"google-vertex"} and CLIENTS["google-vertex"].api == "google-vertex"
