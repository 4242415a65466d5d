"""`eukhe chat`: what it shows of the agent's events and what they do to its exit status.

The events are the agent protocol's own (eukhe.agent.protocol), shown by the chat's client as
the agent would send them; no agent runs here. The chat's bridge reaches the rows of a plain
turn; these are the rest: a Director's step, a subagent's end, a turn that met a bug, an agent
that ends while lines remain."""

from __future__ import annotations

import asyncio
import io
import os
from typing import Any

import pytest

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentGone
from eukhe.cli import EXIT_BUG, EXIT_FAULT, EXIT_OK
from eukhe.commands.chat import ChatClient, Terminal

MEMORY = p.MemoryEvent(view_bytes=2_500, ceiling=128_000, messages=2, nodes=2, view_lines=2, text="", lines=[])


def chat_of(client: Any = None) -> tuple[ChatClient, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return ChatClient(client, Terminal(out, err), "lab"), out, err


def test_a_continuing_or_failing_step_shows_its_decision_and_rule_and_a_yield_shows_nothing() -> None:
    chat, out, err = chat_of()
    chat.show(p.StepEvent(decision="continue", rule="goal", verdicts=["goal:continue"], continuation="keep going"))
    chat.show(p.StepEvent(decision="yield", rule="none", verdicts=[]))
    chat.show(p.StepEvent(decision="fail", rule="max_steps", verdicts=[]))
    assert out.getvalue() == "[step] continue (goal)\n[step] fail (max_steps)\n" and err.getvalue() == ""
    assert chat.status == EXIT_OK  # the turn's end tells how the run ended


@pytest.mark.parametrize(
    ("end", "row", "status"),
    [
        (p.TurnEndEvent(run="r1", reason="failed", text="no model"), "[helper] failed: no model\n", EXIT_FAULT),
        (p.TurnEndEvent(run="r1", reason="aborted", text=""), "[helper] aborted\n", EXIT_FAULT),
        (p.TurnEndEvent(run="r1", reason="refused", text="cannot"), "[helper] refused: cannot\n", EXIT_OK),  # a refusal is an answer
        (p.TurnEndEvent(run="r1", reason="answered", text="done"), "", EXIT_OK),  # its report comes as the tool's result
    ],
)
def test_a_subagents_end_shows_unless_answered_and_a_failure_sets_the_exit_status(end: p.TurnEndEvent, row: str, status: int) -> None:
    chat, out, err = chat_of()
    chat.show(p.SubagentEvent(agent="helper", event=end))
    assert (out.getvalue(), err.getvalue(), chat.status) == (row, "", status)


def test_a_turn_that_met_a_bug_says_so_and_exits_as_a_bug(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("EUKHE_DEBUG", raising=False)
    chat, out, err = chat_of()
    chat.show(p.DeltaEvent(text="Half a"))
    chat.show(p.ErrorEvent(kind="turn_failed", message="KeyError: 'x'"))
    chat.show(p.TurnEndEvent(run="r1", reason="failed", text="KeyError: 'x'"))
    assert out.getvalue() == "Half a\n"  # the error starts a line of its own
    assert err.getvalue().splitlines() == ["eukhe chat: a bug in eukhe (KeyError: 'x'); please report it", "eukhe chat: KeyError: 'x'"]
    assert chat.status == EXIT_BUG  # the worse of the two
    assert capsys.readouterr().err == ""  # the trace of the bug only under EUKHE_DEBUG=1
    monkeypatch.setenv("EUKHE_DEBUG", "1")
    chat.show(p.ErrorEvent(kind="turn_failed", message="Traceback: the whole of it"))
    assert capsys.readouterr().err == "Traceback: the whole of it\n"


def test_an_error_of_the_agent_shows_unless_it_answers_a_request() -> None:
    chat, out, err = chat_of()
    chat.show(p.ErrorEvent(kind="settings", message="settings.json: not JSON"))
    chat.show(p.ErrorEvent(re="7", kind="busy", message="a turn runs"))  # the request's own answer: shown where it was asked
    assert (out.getvalue(), err.getvalue(), chat.status) == ("", "eukhe chat: settings.json: not JSON\n", EXIT_OK)


def test_the_rows_of_a_turn() -> None:
    chat, out, _ = chat_of()
    for event in (
        p.ToolCallEvent(id="c1", name="read", arguments='{"path": "a.txt"}'),
        p.ToolResultEvent(id="c1", text="x" * 300 + "\nsecond\nthird", is_error=False),
        p.ToolResultEvent(id="c2", text="", is_error=True),
        p.RetryEvent(attempt=2, retries=5, kind="rate_limited", wait=1.25),
        p.NoteEvent(kind="loop", used=1, max=3),
        p.RowEvent(kind="effort", text="thinking high"),
        p.RowEvent(kind="memory", text="mem 3K/128K"),
    ):
        chat.show(event)
    assert out.getvalue().splitlines() == [
        '[tool] read {"path": "a.txt"}',
        f"[result] {'x' * 200} (+2 lines)",
        "[result] ",
        "[retry 2/5: lab: rate_limited; waiting 1.2 s]",
        "[note 1/3: loop]",
        "[effort] thinking high",
        "mem 3K/128K",
    ]


def test_a_turn_that_ends_unanswered_fails_the_chat_and_the_memory_bar_then_prompts() -> None:
    chat, out, err = chat_of()
    chat.show(p.TurnStartEvent(run="r1", text="hi"))
    assert chat.running and not chat.idle.is_set()
    chat.show(MEMORY)  # a bar while the turn runs: no prompt yet
    chat.show(p.TurnEndEvent(run="r1", reason="failed", text=""))
    assert err.getvalue() == "eukhe chat: failed\n" and chat.status == EXIT_FAULT  # no text: the reason
    chat.show(p.MemoryEvent(re="9", view_bytes=0, ceiling=128_000, messages=0, nodes=0, view_lines=0, text="", lines=[]))
    assert not chat.idle.is_set()  # the answer to a request is no end of the run
    chat.show(MEMORY)
    assert chat.idle.is_set() and out.getvalue() == "[mem 2K/128K]\n> "


class _Gone:
    """The connection of an agent that has ended: every read and request meets its end."""

    async def next(self) -> Any:
        raise AgentGone("the agent ended")

    async def request(self, request: Any) -> Any:
        if isinstance(request, p.CommandRequest) and request.line == "/memory":
            return MEMORY  # the first prompt's bar came before the agent ended
        raise AgentGone("the agent ended")

    async def close(self) -> None:
        pass


def test_lines_typed_after_the_agent_ended_end_the_chat_with_a_fault() -> None:
    chat, out, err = chat_of(_Gone())
    read, write = os.pipe()
    os.write(write, b"hello\nmore\n")
    os.close(write)
    try:
        assert asyncio.run(chat.run(read)) == EXIT_FAULT
    finally:
        os.close(read)
    assert out.getvalue() == "[mem 2K/128K]\n> "
    assert err.getvalue() == "eukhe chat: the chat's agent ended\n"
