"""google-genai in Vertex mode judges our Vertex client (api "google-vertex").

``genai.Client(vertexai=True, project, location, credentials=<a static access token>,
http_options=HttpOptions(base_url=<loopback>, api_version="v1"))``:

1. sends the same turn as our client (tests/wire/test_sdk_requests.py's tool loop, Gemini 3's
   thinkingLevel): method, path (project, location, publisher, model), query, Bearer auth and
   body agree (the SDK's snake-case spellings compared in camel case, as for the Gemini API);
2. our bodies validate against the SDK's pydantic models (Content, Tool, ToolConfig,
   GenerationConfig);
3. every event the loopback renders on Vertex's path validates as a GenerateContentResponse, and
   ``generate_content_stream`` reads the loopback stream as our client does (Vertex keeps a
   refusal's finishMessage, which the Gemini API's SDK drops).
"""

from __future__ import annotations

import base64
from dataclasses import replace

import google.auth.credentials
import pytest
import test_sdk_loopback as loopback_judges
import test_sdk_requests as request_judges
from google import genai
from google.genai import types
from sdk_judges import Failed, Judged, judge_google, read_alike
from wire_support import ask, model, reply


from spec.loopback import RENDER, VERTEX_LOCATION, VERTEX_PROJECT, LoopbackServer, Stream, Text

API = "google-vertex"
KEY = request_judges.KEY


class StaticToken(google.auth.credentials.Credentials):  # type: ignore[misc]
    """An access token that never expires (the SDK asks for no refresh)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def refresh(self, request: object) -> None:
        pass

    @property
    def expired(self) -> bool:
        return False

    @property
    def valid(self) -> bool:
        return True


def sdk_client(server: LoopbackServer) -> genai.Client:
    return genai.Client(vertexai=True, project=VERTEX_PROJECT, location=VERTEX_LOCATION, credentials=StaticToken(KEY),
                        http_options=types.HttpOptions(base_url=server.url, api_version="v1"))


def test_vertex_generate_content_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = request_judges.loop_turn("google-generative-ai")
    view, assistant, result = request.messages
    server.script(Stream([Text("ok")]))
    reply(model(server, API, "gemini-3-pro", provider="google-vertex", key=KEY), request)
    got = server.last
    contents = [
        types.Content(role="user", parts=[types.Part(text=text) for text in request_judges.pieces(view)]),
        types.Content(
            role="model",
            parts=[
                types.Part(text=assistant.text, thought_signature=base64.b64decode(request_judges.SIG)),
                types.Part(function_call=types.FunctionCall(name="date", args={"id": 3}, id="call_1"), thought_signature=base64.b64decode(request_judges.CALL_SIG)),
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
    client = sdk_client(server)

    def send() -> None:
        for _chunk in client.models.generate_content_stream(model="gemini-3-pro", contents=contents, config=config):  # type: ignore[arg-type]
            break

    judged = request_judges.theirs(server, send)
    request_judges.same_request(got, judged, ("authorization",))
    assert got.path == f"/v1/projects/{VERTEX_PROJECT}/locations/{VERTEX_LOCATION}/publishers/google/models/gemini-3-pro:streamGenerateContent"
    body = request_judges.camel(judged.body)
    body["systemInstruction"] = {k: v for k, v in body["systemInstruction"].items() if k != "role"}
    assert got.body == body


@pytest.mark.parametrize("what", ["a turn", "a tool loop with thinking", "a forced call", "an image result", "a compaction"])
def test_our_vertex_bodies_validate_against_the_sdk_types(server: LoopbackServer, what: str) -> None:
    for model_id in ("gemini-3-pro", "gemini-2.5-flash"):
        wire = replace(model(server, API, model_id, provider="google-vertex", key=KEY), input=("text", "image"))
        server.script(Stream([Text("ok")]))
        reply(wire, request_judges.requests_of("google-generative-ai")[what])
        request_judges.validate("google-generative-ai", server.last)


@pytest.mark.parametrize("name", [*loopback_judges.SCRIPTS, *loopback_judges.FAILING])
def test_the_vertex_sdk_reads_the_loopback_stream_as_our_client_does(server: LoopbackServer, name: str) -> None:
    scripted = loopback_judges.script("google-generative-ai", name)
    frames = loopback_judges.payloads(RENDER[API](scripted, "m"))
    for data in frames:
        if not data.startswith('{"error"'):
            types.GenerateContentResponse.model_validate_json(data)
    server.script(scripted)
    try:
        theirs: Judged | Failed = judge_google(server.url, sdk_client(server))
    except Exception as error:
        theirs = Failed(type(error).__name__, str(error))
    assert server.last.api == API
    server.script(scripted)
    wire = model(server, API, provider="google-vertex", key=KEY)
    read_alike(name, theirs, lambda thinking: reply(wire, ask(thinking="high")) if thinking else reply(wire), "google-generative-ai", error="Internal error")
    if name.startswith("refusal"):
        assert theirs.refusal  # Vertex's finishMessage reached both
