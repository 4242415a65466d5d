"""Thinking kept and sent back in a tool loop: a real turn (``eukhe.memory.turn.Turns`` on a chat
owned in a temporary directory) against the loopback server, whose first reply thinks and calls
a tool and whose second answers. The judge is the second request the server received, read in
the API's own structure, against what each vendor documents for tool loops with reasoning:

- Anthropic: the assistant turn opens with the thinking block, its text and signature as
  streamed (signature_delta), before the tool_use block;
- OpenAI Responses: the reasoning item goes back by its id with its encrypted_content (from
  ``response.output_item.done``) and its summary, before the function_call;
- Gemini: the thoughtSignature comes back on the functionCall part it came with, and only there
  (parallel calls: the first carries it);
- OpenAI chat completions: the API has no place for it; nothing of the thinking goes back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.inference.wire import client_for
from eukhe.inference.wire.plan import WireModel
from eukhe.memory.owner import Memory
from eukhe.memory.turn import Turns
from spec.loopback import Call, LoopbackServer, Recorded, Stream, Text, Thinking, base_url

SIG = "c2lnbmF0dXJlIG9mIHRoZSBjYWxs"  # base64, as Gemini sends it


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "chat" / "main") as owned:
        yield owned


def second_request(memory: Memory, server: LoopbackServer, api: str, model_id: str, first: Stream) -> Recorded:
    server.script(first, Stream([Text("It is Monday.")]))
    wire = WireModel("loop", model_id, api, base_url(server, api), "key-loop", reasoning=True, max_tokens=1024)
    turns = Turns(memory, client_for(wire, timeout=30.0), thinking="high", settle_seconds=0.0)
    outcome = asyncio.run(turns.turn("what day is it?"))
    assert outcome.reply == "It is Monday." and outcome.steps == 2
    return server.wait_requests(2)[1]


def test_anthropic_gets_its_signed_thinking_block_back(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Look up the date ", "sig-A1"), Thinking("of message 0.", "sig-A1"), Call("date", '{"id": 0}', "toolu_1")], stop="toolUse")
    got = second_request(memory, server, "anthropic-messages", "claude-opus-5", first)
    assistant = [m for m in got.body["messages"] if m["role"] == "assistant"]
    assert len(assistant) == 1
    assert assistant[0]["content"] == [
        {"type": "thinking", "thinking": "Look up the date of message 0.", "signature": "sig-A1"},
        {"type": "tool_use", "id": "toolu_1", "name": "date", "input": {"id": 0}},
    ]


def test_responses_gets_its_reasoning_item_back(memory: Memory, server: LoopbackServer) -> None:
    # The loopback sends a Thinking part as a reasoning item whose end (response.output_item.done)
    # carries its signature as encrypted_content, since the request includes reasoning.encrypted_content.
    first = Stream([Thinking("Look up the date.", "gAAAA-enc"), Call("date", '{"id": 0}', "fc_call")], stop="toolUse")
    got = second_request(memory, server, "openai-responses", "gpt-5.2", first)
    assert got.body["include"] == ["reasoning.encrypted_content"]
    kinds = [item.get("type", item.get("role")) for item in got.body["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert got.body["input"][1] == {"type": "reasoning", "id": "rs_0", "summary": [{"type": "summary_text", "text": "Look up the date."}], "encrypted_content": "gAAAA-enc"}


def test_gemini_gets_the_thought_signature_back_on_its_call(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Two looks at the date."), Call("date", '{"id": 0}', "g1", signature=SIG), Call("date", '{"id": 0}', "g2")], stop="toolUse")
    got = second_request(memory, server, "google-generative-ai", "gemini-3-pro", first)
    model_turns = [c for c in got.body["contents"] if c["role"] == "model"]
    assert len(model_turns) == 1
    assert model_turns[0]["parts"] == [
        {"functionCall": {"name": "date", "args": {"id": 0}, "id": "g1"}, "thoughtSignature": SIG},
        {"functionCall": {"name": "date", "args": {"id": 0}, "id": "g2"}},
    ]


def test_chat_completions_sends_no_thinking_back(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Look up the date."), Call("date", '{"id": 0}', "call_1")], stop="toolUse")
    got = second_request(memory, server, "openai-completions", "test-model", first)
    assistant = [m for m in got.body["messages"] if m["role"] == "assistant"]
    assert assistant == [{"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "date", "arguments": '{"id": 0}'}}]}]
