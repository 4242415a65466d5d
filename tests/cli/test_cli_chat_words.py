"""`eukhe chat` in a real terminal (a pty) against the loopback server in OpenAI Responses mode and
Gemini mode: the words the user types reach the provider. The judge is the request the loopback
received, read in the API's own structure (Responses ``input`` items' ``input_text`` blocks;
Gemini ``contents`` parts' ``text``): its user turn carries the typed words whole and no empty
text block."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from loopback_models import write_loopback_models
from cli_support import Screen

from spec.loopback import LoopbackServer, Recorded, Stream, Text

PROVIDERS = {"loop-resp": "openai-responses", "loop-gem": "google-generative-ai"}
TYPED = "rename the field «naïve» to plain_name, please"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        running.responder = lambda recorded: Stream([Text("Done it.")])  # every call (a turn, a compaction) is answered
        yield running


@pytest.fixture
def home(tmp_path: Path, server: LoopbackServer) -> Path:
    return write_loopback_models(tmp_path / "agent", server, PROVIDERS)


def user_texts(recorded: Recorded) -> list[str]:
    body: dict[str, Any] = recorded.body
    if recorded.api == "openai-responses":
        return [b["text"] for item in body["input"] if item.get("role") == "user" for b in item["content"] if b["type"] == "input_text"]
    return [p["text"] for content in body["contents"] if content["role"] == "user" for p in content["parts"] if "text" in p]


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_the_typed_words_reach_the_provider(server: LoopbackServer, home: Path, provider: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_") and not k.endswith("_API_KEY")}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(home.parent), "TERM": "xterm"})
    screen = Screen(["chat", "--provider", provider], env, home.parent)
    try:
        screen.expect(r"\[mem 0K/128K\]\n> ")
        screen.type(TYPED)
        screen.expect(r"Done it\.\n")
        screen.expect(r"> ")
        screen.type("/quit")
    finally:
        status = screen.close()
    assert status == 0
    turns = [r for r in server.requests if TYPED in "".join(user_texts(r))]
    assert turns, f"no request carried the typed words; user texts sent: {[user_texts(r) for r in server.requests]!r}"
    turn = turns[0]
    assert turn.api == PROVIDERS[provider] and f"key-{provider}" in json.dumps(turn.headers)
    texts = user_texts(turn)
    assert all(texts), f"an empty text block went out: {texts!r}"
    assert "".join(texts).startswith("<chat>\n") and "</chat>" in "".join(texts)
