"""Thinking kept and sent back in a tool loop on Amazon Bedrock (api "bedrock-converse-stream"):
a real turn (``eukhe.memory.turn.Turns`` on a chat owned in a temporary directory) against the
loopback server, whose first reply reasons and calls a tool and whose second answers. The judge
is the second request the server received, read in the Converse API's structure, against what
Bedrock documents for Claude's tool loops with extended thinking: the assistant message carries
the reply's ``reasoningContent`` blocks first, each as streamed (the reasoning text with its
signature, joined from its pieces; redacted content as the opaque bytes it came as), then the
``toolUse`` blocks; and the request is valid ConverseStream input for botocore
(tests/wire/test_sdk_bedrock.py's judge: its validator, and its serializer writes the same bytes).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sdk_bedrock import validate

from eukhe.inference.wire import client_for
from eukhe.inference.wire.plan import WireModel
from eukhe.memory.owner import Memory
from eukhe.memory.turn import Turns
from spec.loopback import Call, LoopbackServer, RawBytes, Recorded, Stream, Text, Thinking, base_url, event_frame

API = "bedrock-converse-stream"
MODEL = "us.anthropic.claude-opus-4-6-v1:0"
SIG = "RXVrd2UgYmVkcm9jayBzaWduYXR1cmU="  # base64, as Bedrock's Claude signatures are
REDACTED = b"\x00\x9fopaque redacted reasoning\xff"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "chat" / "main") as owned:
        yield owned


def second_request(memory: Memory, server: LoopbackServer, first: Stream) -> Recorded:
    server.script(first, Stream([Text("It is Monday.")]))
    wire = WireModel("amazon-bedrock", MODEL, API, base_url(server, API), "key-loop", reasoning=True, max_tokens=1024)
    turns = Turns(memory, client_for(wire, timeout=30.0), thinking="high", settle_seconds=0.0)
    outcome = asyncio.run(turns.turn("what day is it?"))
    assert outcome.reply == "It is Monday." and outcome.steps == 2
    return server.wait_requests(2)[1]


def assistant_turns(recorded: Recorded) -> list[list[dict[str, object]]]:
    return [m["content"] for m in recorded.body["messages"] if m["role"] == "assistant"]


def test_bedrock_gets_its_signed_reasoning_before_the_tool_use(memory: Memory, server: LoopbackServer) -> None:
    first = Stream([Thinking("Look up the date ", SIG), Thinking("of message 0.", SIG), Call("date", '{"id": 0}', "tooluse_1")], stop="toolUse")
    got = second_request(memory, server, first)
    assert assistant_turns(got) == [[
        {"reasoningContent": {"reasoningText": {"text": "Look up the date of message 0.", "signature": SIG}}},
        {"toolUse": {"toolUseId": "tooluse_1", "name": "date", "input": {"id": 0}}},
    ]]
    validate(got)


def frame(payload: dict[str, object]) -> RawBytes:
    return RawBytes(event_frame({":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event"}, json.dumps(payload).encode()))


def test_redacted_reasoning_goes_back_as_the_bytes_it_came_as(memory: Memory, server: LoopbackServer) -> None:
    pieces = [base64.b64encode(REDACTED[:7]).decode(), base64.b64encode(REDACTED[7:]).decode()]
    redacted = [frame({"contentBlockIndex": 9, "delta": {"reasoningContent": {"redactedContent": piece}}}) for piece in pieces]
    stop = RawBytes(event_frame({":event-type": "contentBlockStop", ":content-type": "application/json", ":message-type": "event"}, b'{"contentBlockIndex": 9}'))
    signature_pieces = [frame({"contentBlockIndex": 8, "delta": {"reasoningContent": {"text": "Two looks."}}}),
                        frame({"contentBlockIndex": 8, "delta": {"reasoningContent": {"signature": SIG[:10]}}}),
                        frame({"contentBlockIndex": 8, "delta": {"reasoningContent": {"signature": SIG[10:]}}}),
                        RawBytes(event_frame({":event-type": "contentBlockStop", ":message-type": "event"}, b'{"contentBlockIndex": 8}'))]
    first = Stream([*signature_pieces, *redacted, stop, Call("date", '{"id": 0}', "tooluse_a"), Call("date", '{"id": 1}', "tooluse_b")], stop="toolUse")
    got = second_request(memory, server, first)
    assert assistant_turns(got) == [[
        {"reasoningContent": {"reasoningText": {"text": "Two looks.", "signature": SIG}}},
        {"reasoningContent": {"redactedContent": base64.b64encode(REDACTED).decode()}},
        {"toolUse": {"toolUseId": "tooluse_a", "name": "date", "input": {"id": 0}}},
        {"toolUse": {"toolUseId": "tooluse_b", "name": "date", "input": {"id": 1}}},
    ]]
    results = [block for m in got.body["messages"] if m["role"] == "user" for block in m["content"] if "toolResult" in block]
    assert [r["toolResult"]["toolUseId"] for r in results] == ["tooluse_a", "tooluse_b"]  # both results in the one user turn after it
    validate(got)


def test_reasoning_without_a_signature_is_not_sent_back(memory: Memory, server: LoopbackServer) -> None:
    unsigned = frame({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Unsigned thought."}}})
    first = Stream([unsigned, Call("date", '{"id": 0}', "tooluse_1")], stop="toolUse")
    got = second_request(memory, server, first)
    assert assistant_turns(got) == [[{"toolUse": {"toolUseId": "tooluse_1", "name": "date", "input": {"id": 0}}}]]
