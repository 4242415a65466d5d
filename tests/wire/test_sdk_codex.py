"""The openai SDK judges our Codex Responses client (api "openai-codex-responses"), pointed at
the ChatGPT backend's base URL on the loopback server (``{root}/backend-api/codex``).

1. The same turn (tests/wire/test_sdk_requests.py's tool loop) sent by our client and by
   ``openai.OpenAI(...).responses.create`` with the backend's headers and body as the Codex
   backend takes them (store false, encrypted reasoning, no max_output_tokens): method, path,
   query, auth and Codex headers, and body agree.
2. Our bodies validate against the SDK's Responses request types (extra keys forbidden).
3. The SDK's ``responses.stream`` at the Codex path reads the loopback stream as our client does.
"""

from __future__ import annotations

from dataclasses import replace

import openai
import pytest
import test_sdk_loopback as loopback_judges
import test_sdk_requests as request_judges
from sdk_judges import Failed, Judged, judge_responses, read_alike
from test_sdk_azure import responses_arguments
from test_wire_codex import jwt
from wire_support import ask, model, reply


from spec.loopback import LoopbackServer, Stream, Text

API = "openai-codex-responses"
TOKEN = jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-judged"}})
HEADERS = {"chatgpt-account-id": "acct-judged", "OpenAI-Beta": "responses=experimental", "originator": "eukhe"}


def sdk_client(server: LoopbackServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url + "/backend-api/codex", api_key=TOKEN, default_headers=HEADERS, max_retries=0)


def test_codex_responses_as_the_sdk_sends_it(server: LoopbackServer) -> None:
    request = request_judges.loop_turn("openai-responses")
    server.script(Stream([Text("ok")]))
    reply(model(server, API, "gpt-5.2", provider="openai-codex", key=TOKEN), request)
    got = server.last
    arguments = responses_arguments(request, "gpt-5.2")
    del arguments["max_output_tokens"]
    client = sdk_client(server)
    judged = request_judges.theirs(server, lambda: client.responses.create(**arguments, store=False).close())
    assert (got.method, got.path, got.query) == (judged.method, judged.path, judged.query) == ("POST", "/backend-api/codex/responses", {})
    for name in ("authorization", "chatgpt-account-id", "openai-beta", "originator", "content-type"):
        assert got.headers.get(name) == judged.headers.get(name), name
    assert got.body == judged.body


@pytest.mark.parametrize("what", ["a turn", "a tool loop with thinking", "a forced call", "an image result", "a compaction"])
def test_our_codex_bodies_validate_against_the_sdk_types(server: LoopbackServer, what: str) -> None:
    for model_id in ("gpt-5.5", "gpt-5.2-codex"):
        wire = replace(model(server, API, model_id, provider="openai-codex", key=TOKEN), input=("text", "image"))
        server.script(Stream([Text("ok")]))
        reply(wire, request_judges.requests_of("openai-responses")[what])
        request_judges.PARAMS["openai-responses"].validate_python([server.last.body])


@pytest.mark.parametrize("name", [*loopback_judges.SCRIPTS, *loopback_judges.FAILING])
def test_the_sdk_reads_the_codex_loopback_stream_as_our_client_does(server: LoopbackServer, name: str) -> None:
    scripted = loopback_judges.script("openai-responses", name)
    server.script(scripted)
    try:
        theirs: Judged | Failed = judge_responses(server.url, sdk_client(server))
    except Exception as error:
        theirs = Failed(type(error).__name__, str(error))
    assert server.last.api == API
    server.script(scripted)
    wire = model(server, API, provider="openai-codex", key=TOKEN)
    if name == "cut":
        assert isinstance(theirs, Failed) and theirs.kind in ("APIConnectionError", "RemoteProtocolError"), theirs
    read_alike(name, theirs, lambda thinking: reply(wire, ask(thinking="high")) if thinking else reply(wire), "openai-responses", error="The server had an error", signed=True)
    assert server.last.api == API
