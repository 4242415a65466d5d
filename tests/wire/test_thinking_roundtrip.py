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

The four newer hosts, each by what its vendor documents:

- Azure OpenAI Responses: as OpenAI Responses (the same input items; in stateless use the
  reasoning item goes back with its encrypted_content), on Azure's path (the rulebook leaves
  ``store`` out for the loopback host, so nothing is said of it here);
- OpenAI Codex Responses: the backend keeps nothing (``store: false``, always), so the request
  includes ``reasoning.encrypted_content`` (OpenAI's guide for stateless and zero-data-retention
  use) and the reasoning item goes back whole, its encrypted_content with its id and summary, as
  the Responses API reference spells an input reasoning item (the id is required there);
- Vertex: as Gemini, the thoughtSignature back on the functionCall part it came with;
- Mistral Conversations: a thinking chunk (``ThinkChunk``, whose ``signature`` the mistralai SDK
  documents as "to replay some reasoning blocks across turns"; Mistral's SDK examples replay the
  assistant turn with its ThinkChunks intact) goes back inside the assistant's
  ``message.output`` entry, its text as a text chunk and its signature as streamed, before the
  ``function.call`` entry. The entry is read back by the SDK's own ``MessageOutputEntry``.

Each second request also validates as its SDK's request types (openai's strict
ResponseCreateParamsStreaming, google-genai's Content, mistralai's ConversationStreamRequest).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_sdk_requests as request_judges
from mistralai.client import models as mistral
from test_sdk_mistral import validate_request as validate_mistral

from eukhe.inference.wire import client_for
from eukhe.inference.wire.plan import WireModel
from eukhe.memory.owner import Memory
from eukhe.memory.turn import Turns
from spec.loopback import VERTEX_LOCATION, VERTEX_PROJECT, Call, LoopbackServer, Recorded, Stream, Text, Thinking, base_url

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


def responses_second_request(memory: Memory, server: LoopbackServer, api: str, model_id: str) -> Recorded:
    """A Responses host's second request, judged: it includes the encrypted reasoning, and its
    input gives the reasoning item back by id with its encrypted_content and summary, right
    before the function_call it led to. The loopback sends a Thinking part as a reasoning item
    whose end (response.output_item.done) carries its signature as encrypted_content, only to a
    request that includes reasoning.encrypted_content."""
    first = Stream([Thinking("Look up the date.", "gAAAA-enc"), Call("date", '{"id": 0}', "fc_call")], stop="toolUse")
    got = second_request(memory, server, api, model_id, first)
    assert got.api == api
    assert got.body["include"] == ["reasoning.encrypted_content"]
    kinds = [item.get("type", item.get("role")) for item in got.body["input"]]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert got.body["input"][1] == {"type": "reasoning", "id": "rs_0", "summary": [{"type": "summary_text", "text": "Look up the date."}], "encrypted_content": "gAAAA-enc"}
    assert got.body["input"][2] == {"type": "function_call", "call_id": "fc_call", "name": "date", "arguments": '{"id": 0}'}
    request_judges.validate("openai-responses", got)
    return got


def test_responses_gets_its_reasoning_item_back(memory: Memory, server: LoopbackServer) -> None:
    responses_second_request(memory, server, "openai-responses", "gpt-5.2")


def test_azure_gets_its_reasoning_item_back(memory: Memory, server: LoopbackServer) -> None:
    got = responses_second_request(memory, server, "azure-openai-responses", "gpt-5.2")
    assert got.path == "/openai/v1/responses" and got.query == {"api-version": ["v1"]}


def test_codex_gets_its_reasoning_item_back_whole(memory: Memory, server: LoopbackServer) -> None:
    """store false: nothing is kept server-side, the encrypted_content carries the reasoning."""
    got = responses_second_request(memory, server, "openai-codex-responses", "gpt-5.2-codex")
    assert got.path == "/backend-api/codex/responses"
    assert got.body["store"] is False
    for entry in server.wait_requests(2):  # the first request asked for the encrypted reasoning too
        assert entry.body["store"] is False and entry.body["include"] == ["reasoning.encrypted_content"]


def gemini_model_parts(memory: Memory, server: LoopbackServer, api: str) -> list[Any]:
    """A Gemini host's second request: the one model turn's parts, the first call's signature
    back on its own part and nowhere else."""
    first = Stream([Thinking("Two looks at the date."), Call("date", '{"id": 0}', "g1", signature=SIG), Call("date", '{"id": 0}', "g2")], stop="toolUse")
    got = second_request(memory, server, api, "gemini-3-pro", first)
    assert got.api == api
    model_turns = [c for c in got.body["contents"] if c["role"] == "model"]
    assert len(model_turns) == 1
    assert model_turns[0]["parts"] == [
        {"functionCall": {"name": "date", "args": {"id": 0}, "id": "g1"}, "thoughtSignature": SIG},
        {"functionCall": {"name": "date", "args": {"id": 0}, "id": "g2"}},
    ]
    request_judges.validate("google-generative-ai", got)
    return list(model_turns[0]["parts"])


def test_gemini_gets_the_thought_signature_back_on_its_call(memory: Memory, server: LoopbackServer) -> None:
    gemini_model_parts(memory, server, "google-generative-ai")


def test_vertex_gets_the_thought_signature_back_on_its_call(memory: Memory, server: LoopbackServer) -> None:
    gemini_model_parts(memory, server, "google-vertex")
    path = server.wait_requests(2)[1].path
    assert path == f"/v1/projects/{VERTEX_PROJECT}/locations/{VERTEX_LOCATION}/publishers/google/models/gemini-3-pro:streamGenerateContent"


def test_mistral_gets_its_signed_thinking_chunk_back(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Look up the date ", "msig-1"), Thinking("of message 0.", "msig-1"), Call("date", '{"id": 0}', "call_m1")], stop="toolUse")
    got = second_request(memory, server, "mistral-conversations", "mistral-medium-latest", first)
    assert got.api == "mistral-conversations"
    entries = got.body["inputs"]
    kinds = [entry["type"] for entry in entries]
    assert kinds == ["message.input", "message.output", "function.call", "function.result"]
    assert entries[1] == {
        "type": "message.output",
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Look up the date of message 0."}], "signature": "msig-1"}],
    }
    assert entries[2] == {"type": "function.call", "tool_call_id": "call_m1", "name": "date", "arguments": '{"id": 0}'}
    # the SDK reads the entry as an assistant message whose content is its own ThinkChunk
    parsed = mistral.MessageOutputEntry.model_validate(entries[1])
    assert isinstance(parsed.content, list) and len(parsed.content) == 1
    chunk = parsed.content[0]
    assert isinstance(chunk, mistral.ThinkChunk) and chunk.signature == "msig-1"
    assert [c.text for c in chunk.thinking if isinstance(c, mistral.TextChunk)] == ["Look up the date of message 0."]
    validate_mistral(got.body)


def test_chat_completions_sends_no_thinking_back(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Look up the date."), Call("date", '{"id": 0}', "call_1")], stop="toolUse")
    got = second_request(memory, server, "openai-completions", "test-model", first)
    assistant = [m for m in got.body["messages"] if m["role"] == "assistant"]
    assert assistant == [{"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "date", "arguments": '{"id": 0}'}}]}]

