"""A request past the protocol's line limit (64 MiB) is never sent: the agent would drop it unread,
and its ``too_long`` could not name the request, so a sender waiting for the answer would wait for
ever. ``AgentClient.send`` refuses it (the other requests of the same call go on), answering
``too_long`` with its id among the events, where the relay of ``eukhe agent serve`` and the
full-screen client read them. The relay gets there from a stdin line under the limit: the id it
gives a request without one can push its line past.

Real processes: ``eukhe agent serve`` serving the session, a client in this process or a second
``eukhe agent serve`` relaying for it. Each wait is bounded by a deadline that only a failing run
reaches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from agent_support import DEADLINE, Agent, agents, home, of_type, server

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import Store

__all__ = ["agents", "home", "server"]  # the fixtures, used by name


async def answers_until(client: AgentClient, ident: str) -> list[p.Event]:
    """The events up to and with the first that answers ``ident``."""
    seen = [await client.next()]
    while getattr(seen[-1], "re", None) != ident:
        seen.append(await client.next())
    return seen


def too_long(events: list[p.Event]) -> list[p.ErrorEvent]:
    return [e for e in events if isinstance(e, p.ErrorEvent) and e.kind == p.TOO_LONG]


def test_send_refuses_a_request_past_the_limit_and_sends_the_others(home: Path, agents: Callable[[], Agent]) -> None:
    serving = agents()
    serving.until(of_type("state"))
    long = p.TurnRequest(text="x" * p.LINE_LIMIT, id="long")

    async def scenario() -> None:
        client = await AgentClient.connect(p.socket_path(home, Store(home / "sessions").path("s1")))
        try:
            assert isinstance(await asyncio.wait_for(client.next(), DEADLINE), p.StateEvent)
            await asyncio.wait_for(client.send(p.StatusRequest(id="before"), long, p.StatusRequest(id="after")), DEADLINE)
            seen = await asyncio.wait_for(answers_until(client, "after"), DEADLINE)
            assert [(e.re, e.kind) for e in too_long(seen)] == [("long", p.TOO_LONG)]  # none from the agent: it read no such line
            assert [(e.type, getattr(e, "re", None)) for e in seen if getattr(e, "re", None) in ("before", "after")] == [("state", "before"), ("state", "after")]
            refused = await asyncio.wait_for(client.request(long.model_copy(update={"id": "again"})), DEADLINE)  # request: the same refusal
            assert isinstance(refused, p.ErrorEvent) and (refused.re, refused.kind) == ("again", p.TOO_LONG)
            assert await asyncio.wait_for(client.next(), DEADLINE) == refused  # among the events too, as any answer is
            assert isinstance(await asyncio.wait_for(client.request(p.StatusRequest(id="last")), DEADLINE), p.StateEvent)
        finally:
            await client.close()

    asyncio.run(scenario())
    assert serving.end() == 0


def test_the_relay_answers_a_stdin_line_its_id_pushes_past_the_limit_and_ends_with_its_input(home: Path, agents: Callable[[], Agent]) -> None:
    serving = agents()
    serving.until(of_type("state"))
    head, tail = b'{"v":1,"type":"turn","text":"', b'"}'
    line = head + b"y" * (p.LINE_LIMIT - 1 - len(head) - len(tail)) + tail  # one byte under the limit
    given = p.decode_request(line).model_copy(update={"id": "console-1"})  # the id the relay gives it
    assert len(line) < p.LINE_LIMIT < len(p.encode(given)) - 1
    del given
    relay = agents()  # a second process for the session: a client of the first, relaying for stdin
    relay.until(of_type("state"))
    assert relay.process.stdin is not None
    relay.process.stdin.write(line + b"\n" + json.dumps({"v": 1, "type": "status", "id": "after"}).encode() + b"\n")
    relay.process.stdin.close()
    del line
    seen = [relay.until(lambda event: event.get("re") in ("console-1", "after"))]
    if seen[0].get("re") != "after":
        seen.append(relay.until(lambda event: event.get("re") == "after"))
    assert [(e["type"], e["re"], e.get("kind")) for e in seen] == [("error", "console-1", p.TOO_LONG), ("state", "after", None)]
    assert relay.process.wait(DEADLINE) == 0  # its input ended and each request was answered
    assert relay.lines.get(timeout=DEADLINE) is None  # nothing more on stdout
    assert serving.end() == 0
