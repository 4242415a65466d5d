"""The openai SDK's Azure client judges our Azure OpenAI Responses client (api
"azure-openai-responses").

1. The same turn (a tool loop with reasoning, tests/wire/test_sdk_requests.py) sent by our client
   and by ``openai.AzureOpenAI`` at the loopback server, in Azure's two shapes: the resource
   endpoint (``azure_endpoint``, an api-key, a dated api-version: ``/openai/responses``) and the
   v1 API's base URL with a Microsoft Entra ID token (``/openai/v1/responses``, Bearer). Method,
   path, query, auth headers and body must agree.
2. Our bodies validate against the SDK's Responses request types (extra keys forbidden).
3. ``AzureOpenAI(...).responses.stream`` reads the loopback's stream on the Azure path as our
   client does, for every script of tests/wire/test_sdk_loopback.py; an error event and a cut
   make both fail.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import openai
import pytest
import test_sdk_loopback as loopback_judges
import test_sdk_requests as request_judges
from sdk_judges import Failed, Judged, judge_responses, read_alike
from wire_support import ask, model, reply


from eukhe.inference.wire.plan import Request
from spec.loopback import RENDER, LoopbackServer, Stream, Text

API = "azure-openai-responses"
KEY = request_judges.KEY


def responses_arguments(request: Request, model_id: str) -> dict[str, Any]:
    """The SDK's arguments of ``request_judges.loop_turn`` for a Responses host, no explicit breakpoints."""
    view, assistant, result = request.messages
    thought = assistant.thoughts[0]
    return dict(
        model=model_id,
        stream=True,
        instructions=request.system,
        max_output_tokens=4096,
        include=["reasoning.encrypted_content"],
        reasoning={"effort": "high", "summary": "auto"},
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": text} for text, _marked in view.parts]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": thought.text}], "encrypted_content": thought.signature},
            {"role": "assistant", "content": assistant.text},
            {"type": "function_call", "call_id": "call_1", "name": "date", "arguments": '{"id": 3}'},
            {"type": "function_call_output", "call_id": "call_1", "output": result.text},
        ],
        tools=[{"type": "function", "name": t.name, "description": t.description, "parameters": dict(t.parameters), "strict": False} for t in request.tools],
    )


SHAPES = {
    "resource endpoint, api-key": ({"azureDeployment": "prod-gpt", "azureApiVersion": "2025-04-01-preview"}, "/openai"),
    "v1 base URL, Entra ID token": ({"azureDeployment": "prod-gpt", "azureAuth": "bearer"}, "/openai/v1"),
}


def sdk_client(server: LoopbackServer, shape: str) -> openai.AzureOpenAI:
    if shape == "resource endpoint, api-key":
        return openai.AzureOpenAI(azure_endpoint=server.url, api_key=KEY, api_version="2025-04-01-preview", max_retries=0)
    return openai.AzureOpenAI(base_url=server.url + "/openai/v1", azure_ad_token=KEY, api_version="v1", max_retries=0)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_azure_responses_as_the_sdk_sends_it(server: LoopbackServer, shape: str) -> None:
    compat, root = SHAPES[shape]
    request = request_judges.loop_turn("openai-responses")
    server.script(Stream([Text("ok")]))
    reply(model(server, API, "gpt-5.2", key=KEY, compat=compat, base=server.url + root), request)
    got = server.last
    client = sdk_client(server, shape)
    judged = request_judges.theirs(server, lambda: client.responses.create(**responses_arguments(request, "prod-gpt")).close())
    auth = "api-key" if "api-key" in shape else "authorization"
    request_judges.same_request(got, judged, (auth,))
    assert "api-key" not in got.headers if auth == "authorization" else "authorization" not in got.headers
    assert got.body == judged.body


@pytest.mark.parametrize("what", ["a turn", "a tool loop with thinking", "a forced call", "an image result", "a compaction"])
def test_our_azure_bodies_validate_against_the_sdk_types(server: LoopbackServer, what: str) -> None:
    for model_id in ("gpt-5.5-mini", "gpt-5.2"):
        wire = replace(model(server, API, model_id, key=KEY), input=("text", "image"))
        server.script(Stream([Text("ok")]))
        reply(wire, request_judges.requests_of("openai-responses")[what])
        request_judges.PARAMS["openai-responses"].validate_python([server.last.body])


@pytest.mark.parametrize("name", [*loopback_judges.SCRIPTS, *loopback_judges.FAILING])
def test_the_azure_sdk_reads_the_loopback_stream_as_our_client_does(server: LoopbackServer, name: str) -> None:
    scripted = loopback_judges.script("openai-responses", name)
    for frame in loopback_judges.payloads(RENDER[API](scripted, "m", {"include": ["reasoning.encrypted_content"]})):
        loopback_judges.validate("openai-responses", frame)
    server.script(scripted)
    try:
        theirs: Judged | Failed = judge_responses(server.url, sdk_client(server, "resource endpoint, api-key"))
    except Exception as error:
        theirs = Failed(type(error).__name__, str(error))
    assert server.last.api == API and server.last.path == "/openai/responses"
    server.script(scripted)
    wire = model(server, API, key=KEY)
    if name == "cut":
        assert isinstance(theirs, Failed) and theirs.kind in ("APIConnectionError", "RemoteProtocolError"), theirs
    read_alike(name, theirs, lambda thinking: reply(wire, ask(thinking="high")) if thinking else reply(wire), "openai-responses", error="The server had an error", signed=True)
    assert server.last.api == API
