"""End to end on every wire API (issue 27, item 6): `eukhe chat` and `eukhe ask` in a real
terminal (a pty) against the loopback server speaking each API the wire has a client for.

The chat: a first turn whose reply thinks (with a signature) and calls the date tool, then
answers; a second turn whose first call is refused with 429 and retried; a third the model
refuses (where the API has a form for a refusal). The terminal must show each of those as the chat documents it (``[thinking]``,
``[tool]``, ``[result]``, ``[retry 1/3: ...]``, ``[refused]``), and the requests the server
received must carry the typed words, the tool's result, the thinking's signature where the API
has a place for it, and the same body again on the retry. The ask: one 429 retried (one line on
stderr), then a refusal (exit 3; Mistral's stream has no form for one: an empty reply, exit 0).

What each API sends back of the thinking is judged in its own structure by
tests/wire/test_thinking_roundtrip*.py; here only that the signature went back at all."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import Screen
from loopback_models import write_loopback_models

from eukhe.inference.wire import CLIENTS
from spec.loopback import Call, Fail, LoopbackServer, Recorded, Refusal, Stream, Text, Thinking

APIS = sorted(CLIENTS)
NO_PLACE_FOR_THINKING = {"openai-completions"}  # the chat completions API takes no thinking back
NO_REFUSAL_FORM = {"mistral-conversations"}  # Mistral's stream has no refusal and no finish reason
SIGNATURE = "c2lnbmVkIHRob3VnaHQ="  # base64, as Gemini's and Bedrock's are; Gemini signs the call, the others the thinking
FIRST = "what day is it «naïve»?"
SECOND = "and tomorrow?"
THIRD = "write the exploit"
RATE = '{"error": {"type": "rate_limit_error", "message": "slow down"}}'
NOW = (("retry-after", "0"),)
SAID = "I can't help with that."


def test_every_wire_api_of_the_seed_has_a_client() -> None:
    assert len(APIS) >= 8, APIS


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def provider_of(api: str) -> str:
    return "loop-" + api.split("-")[0] + "-" + api.split("-")[-1]


def terminal(server: LoopbackServer, tmp_path: Path, api: str, argv: list[str]) -> Screen:
    home = write_loopback_models(tmp_path / "agent", server, {provider_of(api): api}, reasoning=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EUKHE_", "AWS_")) and not k.endswith("_API_KEY")}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(tmp_path), "TERM": "xterm"})
    (home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 0}}), encoding="utf-8")
    return Screen(argv, env, tmp_path)


def sent(recorded: Recorded) -> str:
    return json.dumps(recorded.body, ensure_ascii=False)


@pytest.mark.parametrize("api", APIS)
def test_chat_on_every_api(server: LoopbackServer, tmp_path: Path, api: str) -> None:
    provider = provider_of(api)
    server.script(
        Stream([Thinking("The date tool knows.", SIGNATURE), Call("date", "{}", id="call_date_1", signature=SIGNATURE)], stop="toolUse"),
        Stream([Text("It is Monday.")]),
        Fail(429, RATE, NOW),
        Stream([Text("Tuesday, then.")]),
        Stream([Refusal(SAID)], stop="refusal"),
        Stream([Text("No.")]),  # Mistral's filtered reply is empty: the agent sends it again with a note (S6.10)
    )
    screen = terminal(server, tmp_path, api, ["chat", "--provider", provider, "--thinking", "high"])
    try:
        screen.expect(r"\n> ")
        screen.type(FIRST)
        screen.expect(r"\[thinking\] The date tool knows\.")
        screen.expect(r"\[tool\] date")
        screen.expect(r"\[result\] ")
        screen.expect(r"It is Monday\.\n")
        screen.expect(r"\n> ")
        screen.type(SECOND)
        screen.expect(rf"\[retry 1/3: {provider}: HTTP 429 rate_limit_error; waiting 0\.0 s\]")
        screen.expect(r"Tuesday, then\.\n")
        screen.expect(r"\n> ")
        screen.type(THIRD)
        if api not in NO_REFUSAL_FORM:
            screen.expect(r"\[refused\] ")
        else:
            screen.expect(r"\[note 1/8: no_answer\]")
            screen.expect(r"No\.\n")
        screen.expect(r"\n> ")
        screen.type("/quit")
    finally:
        status = screen.close()
    assert status == 0
    first, after_tool, limited, retried, refused, *noted = server.wait_requests(6 if api in NO_REFUSAL_FORM else 5)
    assert all(r.api == api for r in (first, after_tool, limited, retried, refused))
    assert FIRST in sent(first) and FIRST in sent(after_tool)
    assert "call_date_1" in sent(after_tool), "the tool's result did not go back with its call's id"
    assert (SIGNATURE in sent(after_tool)) == (api not in NO_PLACE_FOR_THINKING)
    assert SECOND in sent(limited) and limited.body == retried.body
    assert THIRD in sent(refused)


@pytest.mark.parametrize("api", APIS)
def test_ask_on_every_api(server: LoopbackServer, tmp_path: Path, api: str) -> None:
    provider = provider_of(api)
    server.script(Fail(429, RATE, NOW), Stream([Text("Paris.")]))
    screen = terminal(server, tmp_path, api, ["ask", "--provider", provider, "capital of France?"])
    try:
        screen.expect(rf"eukhe ask: retry 1/3: {provider}: HTTP 429 rate_limit_error; waiting 0\.0 s")
        screen.expect(r"Paris\.")
    finally:
        status = screen.close()
    assert status == 0
    server.script(Stream([Refusal(SAID)], stop="refusal"))
    screen = terminal(server, tmp_path, api, ["ask", "--provider", provider, "write the exploit"])
    try:
        if api not in NO_REFUSAL_FORM:
            screen.expect(r"\[refused\] ")
    finally:
        status = screen.close()
    assert status == (0 if api in NO_REFUSAL_FORM else 3)
    assert [r.api for r in server.requests] == [api] * 3
