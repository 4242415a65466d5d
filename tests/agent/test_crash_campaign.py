"""The crash campaign (issue 28): the agent process is killed with SIGKILL at a random point of
its turns, KILLS times (300; EUKHE_CRASH_KILLS sets another number), and started again on the
same session each time; no entry it acknowledged (an event broadcast after its commit: the
turn's start after the user entry, each tool call and each tool result) is lost, and none is
doubled: a restart never runs a killed turn again.

The agent is a real process running the real turn loop against the loopback model server (real
HTTP) with the real tools: the model reads a file, runs a short bash command, then answers, so
kills fall before a request, mid-stream, mid-tool and between commits. The processes come from
a fork server that imported eukhe once, so a kill and a restart cost milliseconds, not an
interpreter's start. The test waits on the agent's events and on a pipe, never on a clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest
from agent_support import DEADLINE, serve_session
from loopback_models import write_loopback_models

from eukhe.agent import protocol as p
from eukhe.agent.client import AgentClient
from eukhe.session import MAIN, Kind, Store
from spec.loopback import Call, LoopbackServer, Recorded, Script, Stream, Text

KILLS = int(os.environ.get("EUKHE_CRASH_KILLS", "300"))


def respond(recorded: Recorded) -> Script:
    """Read a.txt, then run bash, then answer: by the tool results the request carries."""
    body = recorded.body if isinstance(recorded.body, dict) else {}  # a request cut by a kill has no whole body
    results = sum(1 for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "tool")
    if results % 3 == 0:
        return Stream([Text("Reading."), Call("read", '{"path": "a.txt"}')], stop="toolUse")
    if results % 3 == 1:
        return Stream([Call("bash", '{"command": "echo checked"}')], stop="toolUse")
    return Stream([Text("All done.")])


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for name in [k for k in os.environ if k.startswith("EUKHE_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    with LoopbackServer() as server:
        server.responder = respond
        agent = write_loopback_models(tmp_path / "agent", server, {"loop": "openai-completions"})
        (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
        with Store(agent / "sessions").create("s1") as session:
            session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "loop", "id": "loop-model"}})
        yield agent, tmp_path


async def one_life(agent: Path, number: int, kill_after: int) -> tuple[list[p.Event], int]:
    """Start the agent, run turns ``number``, ``number + 1``, ... one after the other, and SIGKILL
    it after ``kill_after`` events of them: the events seen, and the number of the last turn
    asked for. Every life ends in a kill during a turn, so no restart is spent on a life that
    killed nothing."""
    context = multiprocessing.get_context("forkserver")
    ready, told = context.Pipe(duplex=False)
    process = context.Process(target=serve_session, args=(agent, agent / "sessions", "s1", agent.parent, told))
    process.start()
    told.close()
    try:
        address = await asyncio.get_running_loop().run_in_executor(None, ready.recv)
        client = await AgentClient.connect(Path(address))
        assert isinstance(await client.next(), p.StateEvent)
        await client.send(p.TurnRequest(text=f"task {number}"))
        seen: list[p.Event] = []
        while True:
            event = await client.next()
            if event.type == "ok":
                continue
            seen.append(event)
            if len(seen) == kill_after:
                try:
                    os.kill(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    process.join(DEADLINE)
                    raise AssertionError(f"the agent ended by itself (exit {process.exitcode}) at {seen}") from None
                break
            if event.type == "turn_end":  # the kill falls in the next turn
                number += 1
                await client.send(p.TurnRequest(text=f"task {number}"))
        await client.close()
        return seen, number
    finally:
        if process.is_alive():  # the kill failed with an error, or the life ran past its deadline
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile: the error that brought us here is the one to see
                os.kill(process.pid, signal.SIGKILL)
        process.join(DEADLINE)
        ready.close()


def test_three_hundred_sigkills_lose_no_acknowledged_entry_and_double_none(world: Any) -> None:
    agent, _project = world
    multiprocessing.set_forkserver_preload(["httpx", "httpcore", "eukhe.inference.wire", "eukhe.agent.daemon", "eukhe.agent.runner", "agent_support"])
    rng = random.Random(2026)
    acknowledged: list[tuple[str, str]] = []  # (kind, what) in the order the agent told them
    number = 0
    for _kill in range(KILLS):
        seen, number = asyncio.run(asyncio.wait_for(one_life(agent, number + 1, rng.randint(1, 9)), DEADLINE))
        for event in seen:
            if event.type == "turn_start":
                acknowledged.append(("user", event.text))
            elif event.type == "tool_call":
                acknowledged.append(("call", event.name))
            elif event.type == "tool_result":
                acknowledged.append(("result", event.text))
        with Store(agent / "sessions").open("s1", writer=False) as session:
            logged = session.conversation(MAIN).model_view()
        check(logged, acknowledged, number)


def check(logged: list[Any], acknowledged: list[tuple[str, str]], turns: int) -> None:
    """Every acknowledged entry is in the log, in order, once; each turn's user entry at most once."""
    shown: list[tuple[str, str]] = []
    for entry in logged:
        if entry.kind is Kind.USER:
            shown.append(("user", str(entry.content)))
        elif entry.kind is Kind.TOOL_CALL:
            shown.append(("call", str(entry.content["name"])))
        elif entry.kind is Kind.TOOL_RESULT:
            shown.append(("result", str(entry.content["text"])))
    users = [what for kind, what in shown if kind == "user"]
    assert len(users) == len(set(users)) <= turns, f"a user entry doubled: {users}"
    at = 0
    for item in acknowledged:  # a subsequence of the log: the log may hold one more entry per kill
        while at < len(shown) and shown[at] != item:
            at += 1
        assert at < len(shown), f"acknowledged {item} is not in the log after it"
        at += 1
    per_turn: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for kind, what in shown:
        if kind == "user":
            current = what
        per_turn.setdefault(current, []).append((kind, what))
    for turn, items in per_turn.items():
        assert len(items) <= 1 + 2 * 2, f"turn {turn!r} logged more than one run of it: {items}"
