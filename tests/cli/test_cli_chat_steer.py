"""`eukhe chat`: a line typed while a turn runs joins it (memory.md rule 46), and the chat still
waits for that turn at the end of its input.

A text is sent as a ``steer``: the agent joins it to the running turn, or starts a turn with it
when none runs. The client may learn that a turn runs from that answer before the turn's
``turn_start`` event reaches it (the event and the answer travel on one connection; the watch
that reads events runs when the client next waits). A line steered into that turn must not mark
the chat idle: the end of input would then leave before the turn ended, its reply unshown and
its failure out of the exit status. The agent here is a scripted stand-in for the client's
connection (its answers in the order the real agent gives them): no timing is involved."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from eukhe.agent import protocol as p
from eukhe.commands.chat import ChatClient, Terminal


class _Agent:
    """Answers ``steer`` with the ok of a steer that joined a running turn."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def request(self, request: Any) -> Any:
        self.sent.append(request.type)
        if isinstance(request, p.SteerRequest):
            return p.OkEvent(re=request.id, request=request.type, text=p.JOINS_THE_TURN)
        raise AssertionError(f"unexpected request {request!r}")


def test_a_line_steered_into_a_turn_not_yet_seen_keeps_the_chat_waiting() -> None:
    out, err = io.StringIO(), io.StringIO()
    agent = _Agent()
    chat = ChatClient(agent, Terminal(out, err), "lab")
    assert not chat.running  # the turn's turn_start has not reached this client yet

    async def typed() -> bool:
        return await chat.line(b"more\n")

    assert asyncio.run(typed()) is True
    assert agent.sent == ["steer"]
    assert out.getvalue() == "[queued: joins the running call]\n" and err.getvalue() == ""
    assert not chat.idle.is_set()  # a turn runs: the end of input waits for it


def test_a_refused_line_leaves_the_chat_idle() -> None:
    class Refusing(_Agent):
        async def request(self, request: Any) -> Any:
            self.sent.append(request.type)
            return p.ErrorEvent(re=request.id, kind="no_loop", message="turn loop not installed")

    out, err = io.StringIO(), io.StringIO()
    chat = ChatClient(Refusing(), Terminal(out, err), "lab")
    assert asyncio.run(chat.line(b"hello\n")) is True
    assert err.getvalue() == "eukhe chat: turn loop not installed\n"
    assert chat.idle.is_set()  # nothing runs: the end of input leaves at once


def test_a_line_whose_turn_ended_before_its_steer_came_starts_a_turn_the_chat_waits_for() -> None:
    """The turn that ran ends (its turn_end and the memory bar reach the client) before the steer
    reaches the agent: the agent starts a turn with the line, and the chat's
    end of input waits for that turn, not for the one that ended."""

    class EndingFirst(_Agent):
        def __init__(self) -> None:
            super().__init__()
            self.chat: ChatClient | None = None

        async def request(self, request: Any) -> Any:
            if isinstance(request, p.SteerRequest):
                assert self.chat is not None
                self.chat.show(p.TurnEndEvent(run="run-1", reason="answered", text=""))
                self.chat.show(p.MemoryEvent(view_bytes=0, ceiling=128_000, messages=2, nodes=2, view_lines=2, text="", lines=[]))
                self.sent.append(request.type)
                return p.OkEvent(re=request.id, request=request.type, text="the turn starts")
            return await super().request(request)

    out, err = io.StringIO(), io.StringIO()
    agent = EndingFirst()
    chat = ChatClient(agent, Terminal(out, err), "lab")
    agent.chat = chat
    assert asyncio.run(chat.line(b"more\n")) is True
    assert agent.sent == ["steer"]
    assert "[queued" not in out.getvalue() and err.getvalue() == ""  # it joined nothing: it is a turn of its own
    assert not chat.idle.is_set()  # its turn runs: the end of input waits for it
