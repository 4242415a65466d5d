"""What each wire client sends for the chat's own requests, judged by reading the request the
loopback server received in the API's own structure (request_reading): a chat turn (the view in
blocks, the per-turn state and the ``Turn:``-marked message, all ``Message.parts``, rule 26) and a
compaction (the view and its task) carry the view and the user's words in their user turn, whole,
on all four built APIs. A client that reads ``Message.text`` only sends an empty user turn and
fails here."""

from __future__ import annotations

import pytest
from wire_support import APIS, model, reply
from request_reading import user_texts

from eukhe.inference.wire.events import ToolCall
from eukhe.inference.wire.plan import Message, Request
from eukhe.memory.prompts import compress_task, turn_text
from eukhe.memory.request import Layers, build_request
from spec.loopback import LoopbackServer, Stream, Text

WORDS = "please rename the field «naïve» to plain_name"
VIEW = [f"{k}+1|line {k} of the chat" for k in range(9)]  # two whole blocks and a rest (BLOCK 4)


def turn_request(words: str = WORDS) -> Request:
    return build_request(Layers.of(), VIEW, [Message("user", "Now: 2030-01-01 10:00:00"), Message("user", turn_text(words))])


def sent(server: LoopbackServer, api: str, request: Request, model_id: str = "test-model") -> list[str]:
    server.script(Stream([Text("ok")]))
    reply(model(server, api, model_id), request)
    return user_texts(api, server.last.body)


@pytest.mark.parametrize("api", APIS)
def test_a_chat_turn_sends_the_view_and_the_users_words(server: LoopbackServer, api: str) -> None:
    request = turn_request()
    assert request.messages[0].parts and not request.messages[0].text  # the turn's words ride in parts only
    texts = sent(server, api, request)
    whole = "".join(texts)
    assert all(texts), f"an empty user text went out: {texts!r}"
    assert WORDS in whole and "Now: 2030-01-01 10:00:00" in whole
    assert whole.startswith("<chat>\n0+1|line 0 of the chat\n") and "8+1|line 8 of the chat\n</chat>" in whole
    assert whole == "".join(text for text, _mark in request.messages[0].parts)  # nothing lost, nothing added


@pytest.mark.parametrize("api", APIS)
def test_a_turn_in_a_tool_loop_keeps_its_first_message(server: LoopbackServer, api: str) -> None:
    call = ToolCall(0, "call_1", "date", '{"id": 0}')
    conversation = [Message("user", turn_text(WORDS)), Message("assistant", "", tool_calls=(call,)), Message("tool", "Monday", tool_call_id="call_1", tool_name="date")]
    texts = sent(server, api, build_request(Layers.of(), VIEW, conversation))
    assert WORDS in "".join(texts) and all(texts)


@pytest.mark.parametrize("api", APIS)
def test_a_compaction_sends_its_task(server: LoopbackServer, api: str) -> None:
    task = compress_task(7, "user", "the message to compress: ünïcode and all")
    texts = sent(server, api, build_request(Layers.of(), VIEW, [Message("user", task)]))
    assert task in "".join(texts) and all(texts)


@pytest.mark.parametrize("api", APIS)
def test_a_forced_call_appends_its_soft_prompt_to_the_turn(server: LoopbackServer, api: str) -> None:
    """The soft prompt of a forced call joins the last user message, parts or not (S6.3)."""
    from dataclasses import replace

    from eukhe.inference import force

    request = replace(turn_request(), forced_tool="date", forced=force.ForcedRequest(0, False, force.soft_prompt("date")))
    whole = "".join(sent(server, api, request))
    assert WORDS in whole and whole.endswith(force.soft_prompt("date"))
