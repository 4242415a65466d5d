"""The chat memory's prompts and requests (memory.md rules 26, 27, 29, 31, 32, 35, 36, 44, 51,
D4, D6, D11), sent over real HTTP to the loopback server."""

from __future__ import annotations

import json

import pytest
from compactor_support import anthropic, local, routed, send

from bend import compactor as model
from eukhe.inference.wire.events import ToolCall
from eukhe.inference.wire.plan import Message
from eukhe.memory import NODE, PLACEHOLDER
from eukhe.memory.chat import Chat, Config
from eukhe.memory.prompts import (
    COMPACTION_MARK,
    LIMIT_MARK,
    RULER,
    TOOLS,
    TURN_MARK,
    compress_task,
    cut_follow_up,
    merge_task,
    system_prompt,
    turn_text,
)
from eukhe.memory.request import (
    Layers,
    MemoryModelUnset,
    build_request,
    choose_model,
    compaction_input,
    view_parts,
)
from eukhe.memory.text import size
from eukhe.memory.view import render_lines
from spec.loopback import LoopbackServer

MARK = {"type": "ephemeral"}


def lines(n: int) -> list[str]:
    return [f"{i}+1|line {i}" for i in range(n)]


def test_the_view_is_marked_at_its_last_whole_block(server: LoopbackServer) -> None:
    """Rule 29: the view in blocks of 4 lines, one mark at the end of the last whole block, one
    at the request's end; Anthropic and anthropic/ models on OpenRouter get them, others none;
    no 1-hour entries (rule 31)."""
    layers = Layers.of()
    request = build_request(layers, lines(10), [Message("user", turn_text("hello"))])
    _reply, sent = send(server, anthropic(server), request)
    blocks = sent.body["messages"][0]["content"]
    assert len(sent.body["messages"]) == 1 and len(blocks) == 3
    assert blocks[0] == {"type": "text", "text": "<chat>\n" + "".join(f"{line}\n" for line in lines(4))}
    assert blocks[1] == {"type": "text", "text": "".join(f"{line}\n" for line in lines(8)[4:]), "cache_control": MARK}
    assert blocks[2]["text"].startswith("8+1|line 8\n9+1|line 9\n</chat>\n\n" + TURN_MARK) and blocks[2]["cache_control"] == MARK
    assert "ttl" not in json.dumps(sent.body) and sent.body["system"][0]["text"] == layers.system
    _reply, sent = send(server, routed(server), request)
    user = sent.body["messages"][1]["content"]
    assert "cache_control" not in user[0] and user[1]["cache_control"] == MARK and user[1]["text"].endswith("7+1|line 7\n") and user[2]["cache_control"] == MARK
    _reply, sent = send(server, local(server), request)
    assert '"cache_control"' not in json.dumps(sent.body)
    assert sent.body["messages"][1]["content"] == "<chat>\n" + "".join(f"{line}\n" for line in lines(10)) + "</chat>\n\n" + turn_text("hello")
    for count, marked in ((0, False), (3, False), (4, True), (7, True), (8, True)):
        parts = view_parts(lines(count))
        assert [mark for _text, mark in parts] == ([False] * (count // 4 - 1) + [True, False] if marked else [False, False])
        assert all(text.count("\n") == 4 + (k == 0) for k, (text, _mark) in enumerate(parts[:-1])) or not marked
        assert "".join(text for text, _mark in parts) == "<chat>\n" + "".join(f"{line}\n" for line in lines(count)) + "</chat>"
    three = build_request(layers, lines(3), [Message("user", "task")])
    _reply, sent = send(server, anthropic(server), three)
    assert [("cache_control" in block) for block in sent.body["messages"][0]["content"]] == [False, True]


def test_a_request_joins_the_leading_user_texts_behind_the_view(server: LoopbackServer) -> None:
    """Rules 26, 51, D11: [tools] [system] [view] [message]; per-turn state and the Turn-marked
    message join the view's user message behind it; the turn's later steps follow; the request
    end carries the mark."""
    layers = Layers.of("Static tool notes.", "Answer in French.")
    call = ToolCall(0, "call_0", "zoom", '{"id": 0, "n": 1}')
    conversation = [
        Message("user", "State: 2 devices online."),
        Message("user", turn_text("what did we decide?")),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "0+1|we chose SQLite", tool_call_id="call_0", tool_name="zoom"),
    ]
    request = build_request(layers, lines(5), conversation)
    assert [t.name for t in request.tools[:2]] == ["zoom", "date"] and request.system == layers.system
    _reply, sent = send(server, anthropic(server), request)
    first, second, third = sent.body["messages"]
    assert first["role"] == "user" and len(first["content"]) == 2
    assert first["content"][1]["text"] == "4+1|line 4\n</chat>\n\nState: 2 devices online.\n\n" + turn_text("what did we decide?")
    assert "cache_control" not in first["content"][1]
    assert second["content"][0]["type"] == "tool_use" and third["content"][-1]["cache_control"] == MARK
    assert [t["name"] for t in sent.body["tools"]][:2] == ["zoom", "date"]
    _reply, sent = send(server, local(server), request)
    roles = [m["role"] for m in sent.body["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert sent.body["messages"][1]["content"].endswith("State: 2 devices online.\n\n" + turn_text("what did we decide?"))


def test_the_system_prompt_is_one_and_holds_no_state() -> None:
    """Rules 27, 44, D4: memory layer, static tool notes, user instructions, in that order; no
    date, no state: the same inputs give the same bytes; the device paragraph only with device tools."""
    prompt = system_prompt("NOTES", "INSTRUCTIONS")
    assert prompt == system_prompt("NOTES", "INSTRUCTIONS")
    assert prompt.index(COMPACTION_MARK) < prompt.index("NOTES") < prompt.index("INSTRUCTIONS")
    assert "computers" not in prompt and "computers" in system_prompt(devices=True)
    for needle in ("2026", "2025", "today", "o'clock"):
        assert needle not in prompt
    assert TURN_MARK in prompt and PLACEHOLDER in prompt and "zoom(id, n)" in prompt and "date(id)" in prompt
    assert Layers.of().tools == TOOLS and all(t.parameters["required"] == ["id"] for t in TOOLS)


def _chat() -> Chat:
    """A chat with a built merge and one unbuilt long message among short ones."""
    chat = Chat(Config())
    for i in range(6):
        chat.message(f"short message {i}")
    chat.message("L" * 700)  # 6: its node waits for the compactor
    chat.message("after the long one")
    return chat


def test_compactions_reuse_the_turns_prompt_and_see_built_lines_only(server: LoopbackServer) -> None:
    """Rules 32, 34, 41: a compaction sends the turns' tools and system prompt, its compaction
    view holds built lines only and ends before its node; the task follows the view."""
    chat = _chat()
    layers = Layers.of("notes", "mine")
    view, task = compaction_input(chat, (0, 6), lambda i: "user")
    assert view == [f"{n}|{chat.text(node)}" for n, node in ((f"{node[1] << node[0]}+{1 << node[0]}", node) for node in chat.context((0, 6)))]
    assert all(PLACEHOLDER not in line for line in view) and view and view[-1].startswith("5+1|")
    assert task == compress_task(6, "user", "L" * 700)
    compaction = build_request(layers, view, [Message("user", task)], thinking="medium")
    turn = build_request(layers, [f"{n}" for n in range(3)], [Message("user", turn_text("hi"))])
    assert compaction.system == turn.system and compaction.tools == turn.tools
    _reply, sent = send(server, anthropic(server), compaction)
    blocks = sent.body["messages"][0]["content"]
    assert blocks[-1]["text"].endswith(task) and PLACEHOLDER not in json.dumps(sent.body["messages"])
    # the turn view shows the placeholder; the compaction view of the line after stops before it
    assert render_lines(chat.view.nodes, chat.text)[6] == f"6+1|{PLACEHOLDER}"
    after, _task = compaction_input(chat, (0, 7), lambda i: "eukhe")
    assert after == view  # stops at the first unbuilt line (rule 41)


def test_tasks_carry_the_ruler_and_the_whole_input() -> None:
    """Rule 35: tasks start Compaction:, show 512 dashes, then <input> with the whole input."""
    text = "x" * 3000 + "\nlast line é"
    task = compress_task(41, "echo", text)
    assert task.startswith(COMPACTION_MARK) and RULER in task and len(RULER) == NODE and set(RULER) == {"-"}
    assert task.endswith("<input>\necho: " + text + "\n</input>") and task.index(RULER) < task.index("<input>")
    merge = merge_task("40+4", "44+4", 40, 47, "left line", "right line")
    assert merge.startswith(COMPACTION_MARK) and "40+4" in merge and "44+4" in merge and "40..47" in merge and "<chat>" in merge
    assert merge.endswith("<input>\n40+4|left line\n44+4|right line\n</input>") and RULER in merge
    chat = Chat(Config())
    for i in range(2):
        chat.message(("é" * 200) + f" half {i}")
    _view, built = compaction_input(chat, (1, 0), lambda i: "user")
    assert built == merge_task("0+1", "1+1", 0, 1, chat.text((0, 0)) or "", chat.text((0, 1)) or "")


@pytest.mark.parametrize("tail", ["a", "é", "€", "𝄞"])
@pytest.mark.parametrize("short", range(5))
def test_the_cut_falls_at_the_limit_without_splitting_characters(tail: str, short: int) -> None:
    """Rule 36: the follow-up gives the size, the first 512 bytes whole characters only, then
    the limit marker; the production wording is the model's."""
    line = "x" * (NODE - short) + tail * 40
    text = cut_follow_up(line)
    assert text == model.follow_up(line)
    head = text.split("\n", 1)[1]
    assert head.endswith(LIMIT_MARK)
    shown = head[: -len(LIMIT_MARK)]
    assert size(shown) <= NODE and line.startswith(shown) and size(shown) > NODE - len(tail.encode())
    assert f"{size(line)} bytes" in text


def test_the_model_is_memory_model_else_auxiliary_else_a_typed_failure() -> None:
    """D6: memory.model, else the auxiliary model, with memory.thinking; with neither the failure
    names the saved default and the reason."""
    chosen = choose_model("anthropic/claude-haiku-4-5", "low", "openai/gpt-5-mini", "x/y", "")
    assert (chosen.provider, chosen.id, chosen.thinking, chosen.source) == ("anthropic", "claude-haiku-4-5", "low", "memory.model")
    aux = choose_model("", "medium", "openrouter/anthropic/claude-haiku-4.5", None, "")
    assert (aux.provider, aux.id, aux.source) == ("openrouter", "anthropic/claude-haiku-4.5", "auxiliary")
    with pytest.raises(MemoryModelUnset) as error:
        choose_model(" ", "medium", None, "anthropic/claude-opus-4-6", "provider anthropic has no credentials")
    assert "anthropic/claude-opus-4-6" in str(error.value) and "no credentials" in str(error.value)
    with pytest.raises(ValueError):
        choose_model("no-slash", "medium", None, None, "")


def test_the_scripted_server_reads_the_prompt_cache_at_the_marks(server: LoopbackServer) -> None:
    """Item 9's accounting: the loopback server's PromptCache reads the longest prefix an earlier
    mark wrote, within 20 blocks before a mark; a view grown at its end reads all but its new
    blocks; a call with no marks reads nothing."""
    from spec.loopback import PromptCache

    server.cache = PromptCache()
    layers = Layers.of()
    first, sent1 = send(server, anthropic(server), build_request(layers, lines(40), [Message("user", turn_text("one"))]))
    assert first.usage is not None and first.usage.cache_read == 0 and first.usage.cache_write > 0 and first.usage.input == 0
    second, _sent = send(server, anthropic(server), build_request(layers, lines(46), [Message("user", turn_text("two"))]))
    assert second.usage is not None and second.usage.cache_read > 0
    total = second.usage.input + second.usage.cache_read + second.usage.cache_write
    assert second.usage.cache_read / total > 0.7  # the 40 lines' 10 blocks, tools and system
    far, _sent = send(server, anthropic(server), build_request(layers, lines(200), [Message("user", turn_text("far"))]))
    assert far.usage is not None and far.usage.cache_read == 0  # the old entries are more than 20 blocks back
    plain, _sent = send(server, local(server), build_request(layers, lines(40), [Message("user", "x")]))
    assert plain.usage is not None and plain.usage.cache_read == 0
