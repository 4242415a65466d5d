"""Azure OpenAI Responses (api "azure-openai-responses"): the Responses wire on Azure's paths,
over the loopback server: the path and its api-version, the api-key or Bearer auth, the
deployment as the body's model, the Responses body as the Responses client builds it, and the
stream read as the Responses stream."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from wire_support import ask, model, reply

from eukhe.inference import force
from eukhe.inference.wire import client_for
from eukhe.inference.wire.events import BadRequest, ProviderError, StreamCut
from eukhe.inference.wire.plan import Message, Request, Tool, WireModel
from spec.loopback import Call, Cut, ErrorEvent, Fail, LoopbackServer, Recorded, Stream, Text, Thinking, Tokens

API = "azure-openai-responses"
READ = Tool("read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})


def azure(server: LoopbackServer, compat: dict[str, Any] | None = None, **fields: Any) -> WireModel:
    return replace(model(server, API, "gpt-5.2", key="az-key", compat=compat), **fields)


def sent(server: LoopbackServer, wire: WireModel, request: Request | None = None) -> Recorded:
    server.script(Stream([Text("ok")]))
    reply(wire, request)
    return server.last


def test_the_request_goes_to_the_responses_path_with_api_version_and_api_key(server: LoopbackServer) -> None:
    got = sent(server, azure(server), Request((Message("user", "hi"),), system="Be brief.", tools=(READ,)))
    assert (got.method, got.path, got.query) == ("POST", "/openai/v1/responses", {"api-version": ["v1"]})
    assert got.api == API
    assert got.headers["api-key"] == "az-key" and "authorization" not in got.headers
    assert got.body["model"] == "gpt-5.2" and got.body["instructions"] == "Be brief." and got.body["stream"] is True
    assert got.body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert got.body["tools"][0]["name"] == "read"


def test_the_body_is_the_responses_clients(server: LoopbackServer) -> None:
    forced = force.ForcedRequest(1, True, force.soft_prompt("read"))
    request = Request((Message("user", "hi"),), system="S", tools=(READ,), thinking="high", forced_tool="read", forced=forced)
    wire = azure(server)
    azure_body = client_for(wire).build(request, client_for(wire).plan(request))[2]
    responses = replace(wire, api="openai-responses")
    responses_body = client_for(responses).build(request, client_for(responses).plan(request))[2]
    assert azure_body == responses_body
    assert azure_body["tool_choice"] == {"type": "function", "name": "read"} and azure_body["reasoning"]["effort"] == "high"


def test_the_deployment_version_and_bearer_come_from_compat(server: LoopbackServer) -> None:
    wire = azure(server, {"azureDeployment": "my-gpt", "azureApiVersion": "2025-04-01-preview", "azureAuth": "bearer"})
    got = sent(server, wire)
    assert got.query == {"api-version": ["2025-04-01-preview"]}
    assert got.headers["authorization"] == "Bearer az-key" and "api-key" not in got.headers
    assert got.body["model"] == "my-gpt"


def test_a_deployment_path_in_the_base_url_is_kept(server: LoopbackServer) -> None:
    got = sent(server, azure(server, base_url=server.url + "/openai/deployments/dep"))
    assert got.path == "/openai/deployments/dep/responses"


@pytest.mark.parametrize("compat", [{"azureAuth": "basic"}, {"azureApiVersion": ""}, {"azureDeployment": 3}])
def test_a_bad_azure_setting_is_a_bad_request_before_any_request(server: LoopbackServer, compat: dict[str, Any]) -> None:
    with pytest.raises(BadRequest, match="compat.azure"):
        reply(azure(server, compat))
    assert server.requests == []


def test_the_stream_is_read_as_the_responses_stream(server: LoopbackServer) -> None:
    server.script(Stream([Thinking("Let me see. ", "enc-1"), Text("Reading."), Call("read", '{"path": "a"}', "call_1", pieces=3)],
                         stop="toolUse", usage=Tokens(20, 9, cache_read=100, cache_write=4, reasoning=3)))
    got = reply(azure(server), ask(thinking="high"))
    assert (got.text, got.thinking, got.signatures) == ("Reading.", "Let me see. ", ("enc-1",))
    assert [(c.id, c.name, c.arguments) for c in got.tool_calls] == [("call_1", "read", '{"path": "a"}')]
    assert (got.stop.reason, got.stop.raw) == ("toolUse", "completed")
    assert got.usage is not None and (got.usage.input, got.usage.output, got.usage.cache_read, got.usage.cache_write, got.usage.reasoning) == (20, 9, 100, 4, 3)


def test_errors_are_typed_with_their_retry_hint(server: LoopbackServer) -> None:
    server.script(Fail(429, '{"error": {"code": "429", "message": "Rate limit"}}', (("retry-after-ms", "1500"),)))
    with pytest.raises(ProviderError) as error:
        reply(azure(server))
    assert (error.value.status, error.value.retryable, error.value.retry_after, error.value.kind) == (429, True, 1.5, "429")
    server.script(Stream([Text("par"), ErrorEvent("server_error", "boom")]))
    with pytest.raises(ProviderError, match="boom"):
        reply(azure(server))
    server.script(Stream([Text("half"), Cut()]))
    with pytest.raises(StreamCut):
        reply(azure(server))


def test_a_forced_call_flags_native_choice_on_azure(server: LoopbackServer) -> None:
    forced = force.ForcedRequest(1, True, force.soft_prompt("read"))
    got = sent(server, azure(server), Request((Message("user", "go"),), tools=(READ,), forced_tool="read", forced=forced))
    assert got.body["tool_choice"] == {"type": "function", "name": "read"}
    assert got.body["input"][-1]["content"][-1]["text"].endswith(force.soft_prompt("read"))


def test_the_catalogs_base_url_takes_the_resource_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from eukhe.inference import catalog
    from eukhe.inference.wire.azure_openai_responses import AzureOpenAIResponses

    shipped = next(m for m in catalog.compiled() if m.provider == "azure-openai")
    wire = WireModel.of(shipped, "k")
    monkeypatch.delenv("AZURE_OPENAI_RESOURCE_NAME", raising=False)
    with pytest.raises(BadRequest, match="no Azure resource name"):
        AzureOpenAIResponses(wire).root()
    assert AzureOpenAIResponses(replace(wire, compat={"azureResource": "my-res"})).root() == "https://my-res.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "env-res")
    assert AzureOpenAIResponses(wire).root() == "https://env-res.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "evil.example.com/x")
    with pytest.raises(BadRequest):
        AzureOpenAIResponses(wire).root()


def test_the_provider_is_in_provider_caps_and_its_models_reach_this_client(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from eukhe.cli import main
    from eukhe.inference import catalog
    from eukhe.inference.wire import CLIENTS

    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "azure-openai"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.split("\t")[0] == "azure-openai" and line.count("=") == 8
    shipped = [m for m in catalog.compiled() if m.provider == "azure-openai"]
    assert shipped and {m.api for m in shipped} == {"azure-openai-responses"} and CLIENTS["azure-openai-responses"].api == "azure-openai-responses"
