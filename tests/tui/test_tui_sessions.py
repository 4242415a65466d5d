"""The terminal UI's sessions (issue 29): ``/rewind ENTRY`` moves the head through the session's
agent (a real ``eukhe agent serve`` process), ``/new`` and ``/fork [ENTRY]`` make a session in
the client and switch the app to it: the old connection closes, the transcript starts again
from a row naming the session, and the new session's agent (started by the app, as ``eukhe
tui`` does) sends its state. Nothing waits on a clock: each step waits for what it needs."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_support import Agent, of_type
from tui_support import session_document, until

from eukhe.agent import protocol as p
from eukhe.session import MAIN, Kind, Store
from eukhe.session.records import Origin
from eukhe.tui import EukheApp
from spec.loopback import LoopbackServer, Stream, Text, Wait

SIZE = (100, 30)


def app_of(home: Path) -> EukheApp:
    return EukheApp(home, Store(home / "sessions").path("s1"), "s1", home.parent)


def state_of(app: EukheApp) -> p.StateEvent | None:
    """The state the app's present connection began with, once it has come."""
    return next((e for e in app.seen if isinstance(e, p.StateEvent)), None)


def on(app: EukheApp, session: str) -> bool:
    """The app is attached to ``session``'s agent (its state has come)."""
    state = state_of(app)
    return app.session == session and state is not None and state.session == session


def serving(agents: Callable[[], Agent]) -> Agent:
    agent = agents()
    agent.until(of_type("state"))
    return agent


def branch(home: Path, session: str) -> list[tuple[int, Kind, Any]]:
    """The head's branch of ``session``'s main (read as a reader)."""
    with Store(home / "sessions").open(session, writer=False) as opened:
        return [(e.id, e.kind, e.content) for e in opened.conversation(MAIN).branch()]


def origin_of(home: Path, session: str) -> Origin | None:
    with Store(home / "sessions").open(session, writer=False) as opened:
        return opened.conversation(MAIN).origin


async def run(pilot: Any, line: str, shows: str) -> None:
    pilot.app.draft.insert(line)
    await pilot.pause()
    await pilot.press("enter")
    await until(pilot, lambda: shows in pilot.app.transcript.text, f"{shows!r} after {line}")


async def send(pilot: Any, line: str) -> None:
    pilot.app.draft.insert(line)
    await pilot.pause()
    await pilot.press("enter")


@contextmanager
def started_agents() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The agents the app starts: each ends by itself once its last client has gone."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
        assert [process.wait(60) for process in started] == [0] * len(started)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_fork_makes_a_session_of_the_branch_and_the_app_becomes_a_client_of_its_agent(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    server.script(Stream([Text("Hello there.")]))
    agent = serving(agents)

    async def main(started: list[subprocess.Popen[bytes]]) -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: on(app, "s1"), "the agent's state")
            await send(pilot, "hi")
            await until(pilot, lambda: any(isinstance(e, p.TurnEndEvent) for e in app.seen), "the turn's end")
            before = branch(home, "s1")
            assert any(kind is Kind.USER and content == "hi" for _, kind, content in before), before
            await send(pilot, "/fork")  # at the head, as the agent has it now
            await until(pilot, lambda: app.session != "s1" and on(app, app.session), "the fork's agent")
            forked = app.session
            assert app.started is not None  # no agent served the fork: the app started one
            started.append(app.started)
            state = state_of(app)
            assert state is not None and state.pid == app.started.pid and state.head == before[-1][0]
            assert branch(home, forked) == before  # every entry of the branch, the same ids
            assert origin_of(home, forked) == Origin("s1", MAIN, before[-1][0])
            assert app.transcript.lines[0] == f"session {forked}: forked from session s1 at entry {before[-1][0]}"
            assert "> hi" not in app.transcript.text  # what the app showed of s1 has gone
            assert "model loop/loop-model" in app.status_text  # the fork keeps the session's model
            first = before[0][0]
            await send(pilot, f"/fork {first}")  # a fork of the fork, at its first entry
            await until(pilot, lambda: app.session not in ("s1", forked) and on(app, app.session), "the second fork's agent")
            assert app.started is not None
            started.append(app.started)
            assert branch(home, app.session)[:1] == before[:1] and origin_of(home, app.session) == Origin(forked, MAIN, first)
            second = app.session
            await run(pilot, "/fork 999", "/fork 999: conversation 'main' has no entry 999")
            await run(pilot, "/fork x", "/fork x: an entry id is a whole number")
            assert app.session == second and on(app, second)

    with started_agents() as started:
        asyncio.run(main(started))
    assert branch(home, "s1")[-1][1] is Kind.ASSISTANT  # s1 is not changed by its forks
    assert agent.end() == 0


def test_new_switches_to_an_empty_session_and_its_commands_go_to_its_own_agent(home: Path, agents: Callable[[], Agent]) -> None:
    agent = serving(agents)

    async def main(started: list[subprocess.Popen[bytes]]) -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: on(app, "s1"), "the agent's state")
            await run(pilot, "/effort", "thinking level ")
            [pump] = [w for w in app.workers if w.group == "agent"]  # the connection's events
            await send(pilot, "/new")
            await until(pilot, lambda: app.session != "s1" and on(app, app.session), "the new session's agent")
            assert pump.is_cancelled  # the old connection's pump shows nothing more (no "connection ended" row)
            assert [w for w in app.workers if w.group == "agent" and w.is_running]  # the new one is of the group a later switch cancels
            made = app.session
            assert app.started is not None
            started.append(app.started)
            state = state_of(app)
            assert state is not None and state.pid == app.started.pid and state.directors == []
            assert app.transcript.lines == [f"session {made}: a new session"]
            assert "no model: /model" in app.status_text  # an unpinned session with no saved default
            assert made in Store(home / "sessions").ids()
            assert not [kind for _, kind, _ in branch(home, made) if kind is Kind.USER]
            await send(pilot, "/remind only here")
            await until(pilot, lambda: "reminder" in app.status.stack, "the reminder on the new session's stack")
            with Store(home / "sessions").open(made, writer=False) as opened:
                layers = opened.conversation(MAIN).document("eukhe.directors")["layers"]
            assert [layer["data"]["text"] for layer in layers] == ["only here"]
            assert session_document(home, "eukhe.directors") is None  # s1 is not touched

    with started_agents() as started:
        asyncio.run(main(started))
    assert agent.end() == 0


def test_rewind_moves_the_head_through_the_agent_and_is_refused_while_a_turn_runs(home: Path, server: LoopbackServer, agents: Callable[[], Agent]) -> None:
    gate = threading.Event()
    server.script(Stream([Text("Half "), Wait(gate), Text("done.")]))
    agent = serving(agents)

    async def main() -> None:
        app = app_of(home)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: on(app, "s1"), "the agent's state")
            start = app.head
            assert start is not None
            await send(pilot, "/remind run the tests")
            await until(pilot, lambda: "reminder" in app.status.stack, "the reminder on the stack")
            shown = len(app.transcript.lines)
            await run(pilot, f"/rewind {start}", f"rewound: the head of main is entry {start}")
            assert app.status.stack == [] and app.head == start and "directors" not in app.status_text
            assert len(app.transcript.lines) == shown + 1  # the agent's new state shows no row twice
            assert branch(home, "s1")[-1][0] == start and session_document(home, "eukhe.directors") is None
            await run(pilot, "/rewind 999", "SessionError: conversation 'main' has no entry 999")
            await run(pilot, "/rewind", "/rewind ENTRY: move the head")
            await send(pilot, "go")
            await until(pilot, lambda: "Half" in app.transcript.text, "the turn under way")
            await run(pilot, f"/rewind {start}", "busy: a turn runs")
            gate.set()
            await until(pilot, lambda: any(isinstance(e, p.TurnEndEvent) for e in app.seen), "the turn's end")
            assert app.session == "s1"

    asyncio.run(main())
    assert agent.end() == 0
