"""The agent process of a session (eukhe.agent.daemon) over its real socket: a new client gets
the state first, every event reaches every client, a client that comes back misses nothing,
turns are driven through the Runner interface (a scripted loop here), the other requests run
the real settings, Directors, reasoning-depth rules and catalog, bad lines get typed errors on
a connection that stays open, a client that does not read is dropped, and a second process for
the session is a client of the first and takes over when it ends (real processes).

Nothing waits on a clock: each step waits for the event or the line it needs (with a deadline
that only bounds a failing run)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eukhe.agent import daemon
from eukhe.agent import protocol as p
from agent_support import DEADLINE, Agent, agents, of_type
from eukhe.agent.client import AgentClient, AgentGone
from eukhe.paths import socket_address
from eukhe.session import MAIN, Session, SessionLocked, Store
from eukhe.settings.agent import CVAR_DOC, ERROR_ROW, CvarAgent, EukheSettings

T = TypeVar("T")
QUICK = ("quick", "bad", "thread", "flood")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An agent dir with one session, s1; no EUKHE_ variable and no provider key from outside."""
    for name in [k for k in os.environ if k.startswith("EUKHE_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    agent = tmp_path / "agent"
    with Store(agent / "sessions").create("s1"):
        pass
    return agent


def run(work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(work, DEADLINE))


class Scripted:
    """A small turn loop: a turn emits a few events, then waits for a steer (``more`` keeps it
    waiting, any other text ends it) or an abort; follow-ups run after it as turns of their own.
    Texts: ``quick`` ends at once, ``crash`` raises, ``bad`` emits events the protocol does not
    have, ``thread`` emits from another thread, ``flood`` emits 4000 deltas of 1 KB."""

    def __init__(self, session: Session, cvar: CvarAgent, emit: daemon.Emit) -> None:
        assert session.id == "s1" and cvar.conversation.name == MAIN and session.writer
        self.emit = emit
        self.steers: asyncio.Queue[str] = asyncio.Queue()
        self.follow: list[str] = []
        self.aborted = asyncio.Event()
        self.runs = 0

    async def turn(self, text: str) -> None:
        while True:
            self.runs += 1
            run_id = f"r{self.runs}"
            self.emit({"type": "turn_start", "run": run_id, "text": text})
            if text == "crash":
                raise RuntimeError("planted failure")
            if text == "bad":
                self.emit({"type": "delta", "text": 1})
                self.emit({"type": "gossip", "text": "x"})
            if text == "thread":
                sender = threading.Thread(target=self.emit, args=({"type": "delta", "text": "from a thread"},))
                sender.start()
                sender.join()
                await asyncio.sleep(0)  # a yield: the agent's loop takes what the thread handed it
            if text == "flood":
                for _ in range(4000):
                    self.emit({"type": "delta", "text": "x" * 1000})
                    await asyncio.sleep(0)  # a turn streams: it yields between its events
            self.emit({"type": "delta", "text": "Hel"})
            self.emit({"type": "delta", "text": "lo"})
            self.emit({"type": "thinking", "text": "a thought"})
            self.emit({"type": "tool_call", "id": "c1", "name": "read", "arguments": '{"path": "a.txt"}'})
            self.emit({"type": "tool_result", "id": "c1", "text": "contents", "is_error": False, "kind": None})
            while text not in QUICK:
                steer = asyncio.ensure_future(self.steers.get())
                abort = asyncio.ensure_future(self.aborted.wait())
                await asyncio.wait({steer, abort}, return_when=asyncio.FIRST_COMPLETED)
                if abort.done():
                    steer.cancel()
                    self.aborted.clear()
                    self.emit({"type": "turn_end", "run": run_id, "reason": "aborted", "text": ""})
                    return
                abort.cancel()
                said = steer.result()
                self.emit({"type": "row", "kind": "note", "text": f"steered: {said}"})
                if said != "more":
                    break
            self.emit({"type": "turn_end", "run": run_id, "reason": "answered", "text": "Hello"})
            if not self.follow:
                return
            text = self.follow.pop(0)

    def steer(self, text: str) -> None:
        self.steers.put_nowait(text)

    def follow_up(self, text: str) -> None:
        self.follow.append(text)

    def abort(self) -> None:
        self.aborted.set()


@contextlib.asynccontextmanager
async def serving(agent: Path, factory: daemon.RunnerFactory | None = Scripted, **options: Any) -> AsyncIterator[daemon.Daemon]:
    store = Store(agent / "sessions")
    session = daemon._open_writer(store, "s1")
    agent_process = daemon.Daemon(agent, session, factory, **options)
    await agent_process.start()
    try:
        yield agent_process
    finally:
        await agent_process.close()


async def connect(agent_process: daemon.Daemon) -> tuple[AgentClient, p.StateEvent]:
    client = await AgentClient.connect(agent_process.address)
    state = await client.next()
    assert isinstance(state, p.StateEvent)
    return client, state


def of(kind: str) -> Callable[[p.Event], bool]:
    return lambda event: event.type == kind


async def collect(client: AgentClient, last: str) -> list[p.Event]:
    """The events up to and with the first of type ``last``."""
    seen: list[p.Event] = []
    while True:
        seen.append(await client.next())
        if seen[-1].type == last:
            return seen


TURN = ["turn_start", "delta", "delta", "thinking", "tool_call", "tool_result"]


def test_every_client_gets_the_state_first_then_every_event_and_a_late_client_the_turn_so_far(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            for path, mode in ((agent_process.address, 0o600), (home / "run" / "agent", 0o700), (home / "run", 0o700)):
                assert stat.S_IMODE(os.stat(path).st_mode) == mode, path  # the user's alone
            one, first = await connect(agent_process)
            two, second = await connect(agent_process)
            assert first.session == "s1" and first.pid == os.getpid() and first.head is not None
            assert not first.running and first.turn == [] and first.directors == [] and first.goal is None
            assert (first.clients, second.clients) == (1, 2)
            reply = await one.request(p.TurnRequest(text="hi", id="t1"))
            assert isinstance(reply, p.OkEvent) and (reply.re, reply.request) == ("t1", "turn")
            seen_one, seen_two = await collect(one, "tool_result"), await collect(two, "tool_result")
            assert [e.type for e in seen_one] == ["ok", *TURN]  # the reply went to the asker alone
            assert [e.type for e in seen_two] == TURN
            assert seen_one[1:] == seen_two
            assert seen_two[0] == p.TurnStartEvent(run="r1", text="hi")
            three, late = await connect(agent_process)
            assert late.running
            assert [e.type for e in late.turn] == ["turn_start", "delta", "thinking", "tool_call", "tool_result"]
            assert late.turn[1] == p.DeltaEvent(text="Hello")  # the deltas so far, joined
            assert (await three.request(p.SteerRequest(text="done"))).type == "ok"
            for client in (one, two, three):
                row = await client.until(of("row"))
                end = await client.until(of("turn_end"))
                assert row == p.RowEvent(kind="note", text="steered: done")
                assert end == p.TurnEndEvent(run="r1", reason="answered", text="Hello")
            after = await two.request(p.StatusRequest(id="s"))
            assert isinstance(after, p.StateEvent) and after.re == "s"
            assert not after.running and after.turn == [] and after.clients == 3
            for client in (one, two, three):
                await client.close()

    run(scenario())


def test_a_client_that_comes_back_mid_turn_misses_nothing(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            one, _ = await connect(agent_process)
            await one.request(p.TurnRequest(text="hi"))
            await one.until(of("tool_result"))
            await one.close()  # gone, while the turn goes on
            two, _ = await connect(agent_process)
            await two.request(p.SteerRequest(text="more"))
            assert await two.until(of("row")) == p.RowEvent(kind="note", text="steered: more")
            back, state = await connect(agent_process)
            assert state.running and state.turn[-1] == p.RowEvent(kind="note", text="steered: more")
            assert [e.type for e in state.turn] == ["turn_start", "delta", "thinking", "tool_call", "tool_result", "row"]
            await back.request(p.SteerRequest(text="done"))
            for client in (back, two):
                assert (await client.until(of("turn_end"))).reason == "answered"
            await back.close()
            await two.close()

    run(scenario())


def test_a_follow_up_runs_as_the_next_turn_and_a_second_turn_is_refused_while_one_runs(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            await client.request(p.TurnRequest(text="hi"))
            await client.until(of("tool_result"))
            busy = await client.request(p.TurnRequest(text="another", id="b"))
            assert isinstance(busy, p.ErrorEvent) and (busy.re, busy.kind) == ("b", "busy")
            assert "steer" in busy.message and "follow_up" in busy.message
            queued = await client.request(p.FollowUpRequest(text="quick"))
            assert isinstance(queued, p.OkEvent) and queued.text == "the message runs after this turn"
            await client.request(p.SteerRequest(text="done"))
            first = await client.until(of("turn_end"))
            start = await client.until(of("turn_start"))
            second = await client.until(of("turn_end"))
            assert (first.run, start, second.run) == ("r1", p.TurnStartEvent(run="r2", text="quick"), "r2")
            state = await client.request(p.StatusRequest())
            assert isinstance(state, p.StateEvent) and not state.running
            for request in (p.SteerRequest(text="quick"), p.FollowUpRequest(text="quick")):  # no turn runs: each starts one
                started = await client.request(request)
                assert isinstance(started, p.OkEvent) and started.text == "the turn starts"
                assert (await client.until(of("turn_start"))).text == "quick"
                await client.until(of("turn_end"))
            await client.close()

    run(scenario())


def test_abort_ends_the_running_turn_and_is_refused_when_none_runs(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            one, _ = await connect(agent_process)
            two, _ = await connect(agent_process)
            idle = await one.request(p.AbortRequest(id="a0"))
            assert isinstance(idle, p.ErrorEvent) and (idle.kind, idle.message) == ("idle", "no turn runs: nothing to abort")
            await one.request(p.TurnRequest(text="hi"))
            await two.until(of("tool_result"))
            assert (await two.request(p.AbortRequest())).type == "ok"
            for client in (one, two):
                assert await client.until(of("turn_end")) == p.TurnEndEvent(run="r1", reason="aborted", text="")
            state = await one.request(p.StatusRequest())
            assert isinstance(state, p.StateEvent) and not state.running
            await one.close()
            await two.close()

    run(scenario())


def test_an_agent_no_client_reaches_ends_once_the_first_client_time_passed(home: Path) -> None:
    """An agent started for a client (--idle-exit) whose client never connects (it gave up, or
    died between the start and the connect) ends by itself; once a client came, only idleness
    ends it. Before, it served until a signal."""

    async def scenario() -> None:
        async with serving(home) as agent_process:
            await agent_process.until_idle(first_client=0.01)  # the run's deadline fails it if it never returns
            assert not agent_process.served
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            waiting = asyncio.ensure_future(agent_process.until_idle(first_client=0.0))
            state = await client.request(p.StatusRequest())  # a round trip: the wait ran meanwhile
            assert isinstance(state, p.StateEvent) and not waiting.done()
            await client.close()
            await waiting

    run(scenario())


def test_a_turn_that_fails_is_an_error_and_an_end_and_the_agent_goes_on(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            await client.request(p.TurnRequest(text="crash"))
            failed = await client.until(of("error"))
            assert isinstance(failed, p.ErrorEvent) and failed.kind == "turn_failed" and failed.re is None
            assert "RuntimeError: planted failure" in failed.message
            end = await client.until(of("turn_end"))
            assert end == p.TurnEndEvent(run="r1", reason="failed", text="RuntimeError: planted failure")
            state = await client.request(p.StatusRequest())
            assert isinstance(state, p.StateEvent) and not state.running and state.turn == []
            await client.request(p.TurnRequest(text="quick"))  # the next turn runs
            assert (await client.until(of("turn_end"))).reason == "answered"
            await client.close()

    run(scenario())


def test_the_loops_events_are_checked_and_may_come_from_any_thread(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            await client.request(p.TurnRequest(text="bad"))
            for says in ("delta text: Input should be a valid string", 'type "gossip"'):
                dropped = await client.until(of("error"))
                assert isinstance(dropped, p.ErrorEvent) and dropped.kind == "bad_event" and says in dropped.message
            await client.until(of("turn_end"))
            await client.request(p.TurnRequest(text="thread"))
            start = await client.until(of("turn_start"))
            assert start.text == "thread"
            assert p.DeltaEvent(text="from a thread") in await collect(client, "turn_end")  # when the loop takes it
            await client.close()

    run(scenario())


def test_without_a_turn_loop_each_turn_request_is_answered_that_none_is_installed(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home, factory=None) as agent_process:
            client, _ = await connect(agent_process)
            for request in (p.TurnRequest(text="hi"), p.SteerRequest(text="s"), p.FollowUpRequest(text="f"), p.AbortRequest()):
                answer = await client.request(request)
                assert isinstance(answer, p.ErrorEvent) and (answer.kind, answer.message) == ("no_loop", "turn loop not installed")
            await client.close()

    run(scenario())


GARBAGE: list[tuple[bytes, str]] = [
    (b"\xff\xfe", p.NOT_UTF8),
    (b"", p.NOT_JSON),
    (b"{", p.NOT_JSON),
    (b"[" * 150 + b"]" * 150, p.NOT_JSON),
    (b'{"v": 1, "type": "turn", "text": NaN}', p.NOT_JSON),
    (b"[]", p.NOT_OBJECT),
    (b'{"type": "status"}', p.VERSION),
    (b'{"v": 3, "type": "status"}', p.VERSION),
    (b'{"v": 1, "type": "fly"}', p.UNKNOWN_TYPE),
    (b'{"v": 1, "type": "turn", "text": ""}', p.INVALID),
    (b'{"v": 1, "type": "status", "more": 1}', p.INVALID),
    (b'{"v": 1, "type": "turn", "text": "\\ud800"}', p.NOT_UTF8),
    (b"\x00\x01\x02", p.NOT_JSON),
    (b"x" * 5000, p.TOO_LONG),
]


def test_each_bad_line_gets_a_typed_error_and_the_connection_stays_open(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home, line_limit=1024) as agent_process:
            with socket_address(agent_process.address.parent, agent_process.address.name) as where:
                reader, writer = await asyncio.open_unix_connection(where)
            assert isinstance(p.decode_event(await reader.readline()), p.StateEvent)
            for line, kind in GARBAGE:
                writer.write(line + b"\n")
                answer = p.decode_event(await reader.readline())
                assert isinstance(answer, p.ErrorEvent) and answer.kind == kind, (line[:40], answer)
            writer.write(b'{"v": 1, "type": "fly", "id": "mine"}\r\n')
            refused = p.decode_event(await reader.readline())
            assert isinstance(refused, p.ErrorEvent) and refused.re == "mine" and refused.kind == p.UNKNOWN_TYPE
            writer.write(b'{"v": 1, "type": "status", "id": "last"}')  # no newline: the end of the stream ends it
            writer.write_eof()
            last = p.decode_event(await reader.readline())
            assert isinstance(last, p.StateEvent) and last.re == "last"
            assert await reader.read() == b""  # answered, then closed
            writer.close()
            client, state = await connect(agent_process)  # the agent goes on
            assert state.clients == 1
            await client.close()

    run(scenario())


WORD = st.text(max_size=12)
CVAR_LINES = st.one_of(
    st.sampled_from([
        "set retry.maxRetries 5", "toggle retry.enabled", "set directors.stackCap 1", "set defaultThinkingLevel low",
        'alias go "set transport sse"', "go", "set nosuch 1", "toggle temperature", "set retry.maxRetries 99999999999999999999",
        'set "', "bind x y; action z", "set sessionDir /tmp", "",
    ]),
    WORD,
)
COMMAND_LINES = st.one_of(
    st.sampled_from([
        "/remind r", "/force bash", "/force bash --tries 3", "/force", "/force a b", "/force x --tries", "/effort", "/effort max",
        "/effort off", "/effort none", "/model", "/model anthropic/claude-opus-5", "/model xai/grok-4.6", "/model gpt-5.5",
        "/model local/x", "/model /", "/remind", "/", "/force 'unclosed", "/rewind 1", "/rewind 2", "/rewind -1", "/rewind ²",
    ]),
    st.builds(lambda verb, rest: f"{verb} {rest}", st.sampled_from(["/remind", "/force", "/effort", "/model", "/rewind", "/x"]), WORD),
).filter(bool)
ANY_REQUEST = st.one_of(
    st.builds(p.cvar_request, CVAR_LINES, st.booleans()),
    st.builds(p.CommandRequest, line=COMMAND_LINES),
    st.builds(p.CycleThinkingLevelRequest, backward=st.booleans()),
    st.builds(p.CvarSaveRequest),
    st.builds(p.StatusRequest),
    st.builds(p.GetModelCatalogRequest),
    st.builds(p.TurnRequest, text=st.text(min_size=1, max_size=5)),
    st.builds(p.AbortRequest),
)


def test_no_sequence_of_requests_breaks_the_agent(home: Path) -> None:
    async def scenario(requests: list[p.Request]) -> None:
        async with serving(home, factory=None) as agent_process:
            client, _ = await connect(agent_process)
            for request in requests:
                answer = await client.request(request)
                assert answer.type != "state" or isinstance(request, p.StatusRequest)
                if isinstance(answer, p.ErrorEvent):
                    assert answer.kind != "internal", (request, answer)
            after = await client.request(p.StatusRequest())  # still serving, and the state still reads
            assert isinstance(after, p.StateEvent)
            await client.close()

    @given(st.lists(ANY_REQUEST, min_size=1, max_size=6))
    def check(requests: list[p.Request]) -> None:
        run(scenario(requests))

    check()


def test_a_client_that_does_not_read_is_dropped_and_gets_the_state_when_it_comes_back(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home, pending_limit=64 * 1024) as agent_process:
            with socket_address(agent_process.address.parent, agent_process.address.name) as where:
                _, idle = await asyncio.open_unix_connection(where)  # never reads
            reader_client, _ = await connect(agent_process)
            await reader_client.request(p.TurnRequest(text="flood"))
            deltas = 0
            while (event := await reader_client.next()).type != "turn_end":
                deltas += event.type == "delta"
            assert deltas == 4002  # 4000, "Hel" and "lo": everything reached the client that reads
            assert len(agent_process.clients) == 1  # the other was dropped
            idle.close()
            back, state = await connect(agent_process)
            assert not state.running and state.clients == 2
            await back.close()
            await reader_client.close()

    run(scenario())


def test_cvar_lines_run_on_the_sessions_agent_and_global_sets_go_to_the_global_config(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            local = await client.request(p.cvar_request("set retry.maxRetries 7; set temperature 0.5; set sessionDir /x; bind x y"))
            assert isinstance(local, p.CvarResultEvent) and not local.global_
            assert [(o.command, o.outcome, o.refused) for o in local.outcomes] == [
                ("set retry.maxRetries 7", "ok", False),
                ("set temperature 0.5", "ok", False),
                ("set sessionDir /x", "CvarError::Global(sessionDir)", True),
                ("bind x y", "client-only", False),
            ]
            assert agent_process.cvar.value("retry.maxRetries") == 7
            glob = await client.request(p.cvar_request("set retry.maxRetries 4; toggle retry.enabled; set retry.maxRetries x; alias a b", True))
            assert isinstance(glob, p.CvarResultEvent) and glob.global_
            assert [o.refused for o in glob.outcomes] == [False, False, True, True]
            assert glob.outcomes[2].outcome.startswith("CvarError::BadValue(retry.maxRetries)")
            settings = EukheSettings(home)
            assert settings.cvars.value([], "retry.maxRetries") == 4 and settings.cvars.value([], "retry.enabled") is False
            for line, kind, says in (
                ('set "open', "ParseError", ""),
                ("nosuch", "ExpandError", "ExpandError::Unknown(nosuch)"),
            ):
                refused = await client.request(p.cvar_request(line))
                assert isinstance(refused, p.ErrorEvent) and refused.kind == kind and says in refused.message
            saved = await client.request(p.CvarSaveRequest())
            assert isinstance(saved, p.CvarSavedEvent) and Path(saved.path) == home / "agents" / "main.cfg"
            assert {s.cvar: s.value for s in saved.written} == {"retry.maxRetries": 7}  # temperature does not persist
            assert "retry.maxRetries 7" in Path(saved.path).read_text()
            await client.close()
        with Store(home / "sessions").open("s1", writer=False) as session:  # the sets are session state
            assert session.conversation(MAIN).document(CVAR_DOC)["sets"] == [["retry.maxRetries", 7], ["temperature", 0.5]]

    run(scenario())


def test_the_state_carries_the_sessions_switches_and_every_client_gets_them_again_when_a_cvar_line_changes_them(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            one, state = await connect(agent_process)
            two, _ = await connect(agent_process)
            assert state.switches == {"serviceTier": "auto", "autonomous.enabled": False, "stt.enabled": False}
            done = await one.request(p.cvar_request("set serviceTier flex; toggle stt.enabled; toggle autonomous.enabled"))
            assert isinstance(done, p.CvarResultEvent) and not any(o.refused for o in done.outcomes)
            changed = {"serviceTier": "flex", "autonomous.enabled": True, "stt.enabled": True}
            for client in (one, two):
                sent = await client.until(of("switches"))
                assert sent == p.SwitchesEvent(switches=changed)
            await one.request(p.cvar_request("set retry.maxRetries 3"))  # no switch changes: nothing is sent again
            await one.request(p.cvar_request("toggle stt.enabled", True))  # the global config.cfg: the session's value stays
            await one.request(p.cvar_request("set serviceTier priority"))
            assert (await two.until(of("switches"))) == p.SwitchesEvent(switches={**changed, "serviceTier": "priority"})
            state = await two.request(p.StatusRequest())
            assert isinstance(state, p.StateEvent) and state.switches == {**changed, "serviceTier": "priority"}
            await one.close()
            await two.close()

    run(scenario())


def test_settings_errors_show_as_rows_once_per_session_and_each_new_one_reaches_every_client(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.cfg").write_text("set nosuch 1\n")
    (home / "models.json").write_text('{"providers": {"bad": {"baseUrl": 3}}}')

    def rows(kind: str) -> list[Any]:
        with Store(home / "sessions").open("s1", writer=False) as session:
            return [e.content for e in session.conversation(MAIN).user_view() if e.custom_type == kind]

    async def scenario(again: bool) -> None:
        async with serving(home) as agent_process:
            one, state = await connect(agent_process)
            assert any("nosuch" in error for error in state.settings_errors)
            assert any("providers.bad" in error for error in state.settings_errors)
            if again:
                assert state.rows == []  # shown in this session before: not again
                await one.close()
                return
            assert {row.kind for row in state.rows} == {"settings_error"} and len(state.rows) == 2
            two, _ = await connect(agent_process)
            (home / "config.cfg").write_text("set nosuch 1\nset retry.maxRetries banana\n")
            await one.request(p.cvar_request("set retry.maxRetries 2"))  # the config is read again first
            for client in (one, two):
                row = await client.until(of("row"))
                assert row.kind == "settings_error" and "retry.maxRetries" in row.text
            await one.close()
            await two.close()

    run(scenario(False))
    assert len(rows(ERROR_ROW)) == 3
    run(scenario(True))
    assert len(rows(ERROR_ROW)) == 3


def test_remind_and_force_push_directors_for_every_client_and_a_full_stack_is_refused(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            one, _ = await connect(agent_process)
            two, _ = await connect(agent_process)
            done = await one.request(p.CommandRequest(line="/remind check the tests"))
            assert isinstance(done, p.OkEvent) and done.text == "reminder pushed: 1 layers"
            pushed = await two.until(of("directors"))
            assert isinstance(pushed, p.DirectorsEvent)
            assert pushed.stack == [{"budget": 1, "kind": "reminder", "data": {"text": "check the tests"}}]
            await one.request(p.CommandRequest(line="/force bash --tries 2"))
            forced = await two.until(of("directors"))
            assert isinstance(forced, p.DirectorsEvent) and forced.stack[-1]["kind"] == "forced"
            assert forced.stack[-1]["data"]["tool"] == "bash" and forced.stack[-1]["data"]["tries"] == 2
            for line, kind, says in (
                ("/force", "CommandError", "/force needs one tool"),
                ("/force bash --tries x", "CommandError", "is not a whole number"),
                ("/force bash --tries ²", "CommandError", "is not a whole number"),  # a digit to isdigit, not to int()
                ("/remind", "CommandError", "/remind needs a text"),
                ("/fly away", "CommandError", "unknown command '/fly'"),
            ):
                refused = await one.request(p.CommandRequest(line=line))
                assert isinstance(refused, p.ErrorEvent) and refused.kind == kind and says in refused.message, (line, refused)
            await one.request(p.cvar_request("set directors.stackCap 2"))
            full = await one.request(p.CommandRequest(line="/remind one more"))
            assert isinstance(full, p.ErrorEvent) and full.kind == "PushRefused" and "directors.stackCap 2" in full.message
            state = await two.request(p.StatusRequest())
            assert isinstance(state, p.StateEvent) and [layer["kind"] for layer in state.directors] == ["reminder", "forced"]
            await one.close()
            await two.close()

    run(scenario())


def test_rewind_moves_the_head_and_every_client_gets_the_state_as_of_it(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            one, opened = await connect(agent_process)
            two, _ = await connect(agent_process)
            start = opened.head  # the thinking level settled at open
            assert start is not None and opened.model is None
            await one.request(p.CommandRequest(line="/remind check the tests"))
            await one.request(p.CommandRequest(line="/model anthropic/claude-opus-5"))
            moved = await one.request(p.StatusRequest())
            assert isinstance(moved, p.StateEvent) and moved.head is not None and moved.head > start
            assert [layer["kind"] for layer in moved.directors] == ["reminder"] and moved.model is not None
            done = await one.request(p.CommandRequest(line=f"/rewind {start}", id="rw"))
            assert isinstance(done, p.OkEvent) and (done.re, done.request) == ("rw", "command")
            assert done.text == f"rewound: the head of main is entry {start}"
            for client in (one, two):  # every client: the state as of the entry, sent before the ok
                state = await client.until(lambda e: e.type in ("state", "ok") and getattr(e, "re", None) in (None, "rw"))
                assert isinstance(state, p.StateEvent) and state.re is None
                assert (state.head, state.directors, state.model, state.thinking_level) == (start, [], None, "medium")
            assert agent_process.main.head == start and agent_process.main.document("eukhe.directors") is None
            assert moved.head in {e.id for e in agent_process.main.entries()}  # a branch move: nothing is deleted
            for line, kind, says in (
                (f"/rewind {moved.head + 50}", "SessionError", f"has no entry {moved.head + 50}"),
                ("/rewind -1", "SessionError", "has no entry -1"),
                ("/rewind three", "CommandError", "an entry id is a whole number, not 'three'"),
                ("/rewind", "CommandError", "an entry id is a whole number, not ''"),
            ):
                refused = await one.request(p.CommandRequest(line=line))
                assert isinstance(refused, p.ErrorEvent) and refused.kind == kind and says in refused.message, (line, refused)
            assert agent_process.main.head == start
            await one.request(p.TurnRequest(text="hi"))
            await one.until(of("tool_result"))
            busy = await two.request(p.CommandRequest(line=f"/rewind {start}"))
            assert isinstance(busy, p.ErrorEvent) and busy.kind == "busy" and "a turn runs" in busy.message
            await two.request(p.SteerRequest(text="done"))
            await one.until(of("turn_end"))
            assert (await one.request(p.CommandRequest(line=f"/rewind {start}"))).type == "ok"  # the turn has ended
            await one.close()
            await two.close()

    run(scenario())


def test_a_rewind_before_the_thinking_level_was_settled_settles_it_again(home: Path) -> None:
    with Store(home / "sessions").open("s1") as session:
        (before,) = session.conversation(MAIN).commit(documents={"note": "before the agent"})

    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, opened = await connect(agent_process)
            assert opened.head == before + 1  # the level settled at open
            done = await client.request(p.CommandRequest(line=f"/rewind {before}"))
            settled = before + 2
            assert isinstance(done, p.OkEvent) and done.text == f"rewound: the head of main is entry {before}, then entry {settled} (the thinking level as of it, settled)"
            state = await client.until(of("state"))
            assert isinstance(state, p.StateEvent) and (state.head, state.thinking_level) == (settled, "medium")
            assert agent_process.main.entry(settled).parent == before and agent_process.main.document("eukhe.thinking_level") == "medium"
            await client.close()

    run(scenario())


def test_effort_model_and_cycle_follow_the_levels_the_model_offers_and_are_kept_by_the_session(home: Path) -> None:
    async def first() -> None:
        async with serving(home) as agent_process:
            client, state = await connect(agent_process)
            assert state.model is None and state.thinking_level == "medium" and state.offered_levels is None
            kept = await client.request(p.CommandRequest(line="/effort max"))  # no catalog model: kept as asked
            assert isinstance(kept, p.ThinkingLevelEvent) and kept.level == "max" and kept.offered_levels is None
            assert await client.until(of("row")) == p.RowEvent(kind="effort", text="thinking level medium -> max")
            still = await client.request(p.CycleThinkingLevelRequest())
            assert isinstance(still, p.ThinkingLevelEvent) and still.level is None
            switched = await client.request(p.CommandRequest(line="/model anthropic/claude-opus-5"))
            assert isinstance(switched, p.OkEvent) and switched.text == "model anthropic/claude-opus-5"
            assert await client.until(of("row")) == p.RowEvent(kind="note", text="model anthropic/claude-opus-5")
            assert await client.until(of("row")) == p.RowEvent(kind="effort", text="thinking level max -> high")
            changed = await client.until(of("model"))
            assert isinstance(changed, p.ModelEvent) and changed.re is None and changed.thinking_level == "high"
            assert changed.offered_levels == ["off", "minimal", "low", "medium", "high"]
            wrapped = await client.request(p.CycleThinkingLevelRequest())
            assert isinstance(wrapped, p.ThinkingLevelEvent) and wrapped.level == "off"
            back = await client.request(p.CycleThinkingLevelRequest(backward=True))
            assert isinstance(back, p.ThinkingLevelEvent) and back.level == "high"
            low = await client.request(p.CommandRequest(line="/effort low"))
            assert isinstance(low, p.ThinkingLevelEvent) and low.level == "low"
            bad = await client.request(p.CommandRequest(line="/effort huge"))
            assert isinstance(bad, p.ErrorEvent) and bad.kind == "EffortError" and "huge" in bad.message
            for line, says in (
                ("/model gpt-5.5", "names several models (openai/gpt-5.5, openai-codex/gpt-5.5, azure-openai/gpt-5.5)"),
                ("/model nosuch/x", "no model 'nosuch/x' in the catalog"),
                ("/model anthropic/nosuch", "provider anthropic has no model 'nosuch' (models: claude-opus-5,"),
            ):
                refused = await client.request(p.CommandRequest(line=line))
                assert isinstance(refused, p.ErrorEvent) and refused.kind == "unknown_model" and says in refused.message, refused
            await client.request(p.CommandRequest(line="/model claude-3-5-haiku"))  # one model has this id; it does not reason
            plain = await client.until(lambda e: isinstance(e, p.ModelEvent) and e.model is not None and e.model.id == "claude-3-5-haiku")
            assert isinstance(plain, p.ModelEvent) and plain.thinking_level == "off" and plain.offered_levels == ["off"]
            assert (await client.request(p.CycleThinkingLevelRequest())).level is None  # type: ignore[union-attr]
            await client.request(p.CommandRequest(line="/model xai/grok-4.5"))  # no off: off clamps up
            shown = await client.request(p.CommandRequest(line="/model"))
            assert isinstance(shown, p.ModelEvent) and shown.re is not None
            assert shown.model == p.ModelRef(provider="xai", id="grok-4.5") and shown.thinking_level == "minimal"
            await client.close()

    async def reopened() -> None:
        async with serving(home) as agent_process:
            client, state = await connect(agent_process)
            assert state.model == p.ModelRef(provider="xai", id="grok-4.5") and state.thinking_level == "minimal"
            assert state.offered_levels == ["minimal", "low", "medium", "high"]
            await client.close()

    run(first())
    run(reopened())


def test_the_model_catalog_lists_every_model_with_its_levels_and_the_models_json_errors(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    custom = {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "k", "models": [{"id": "qwen3.8-27b", "reasoning": True}]}
    (home / "models.json").write_text(json.dumps({"providers": {"local": custom, "broken": {"apiKey": "k"}}}))

    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            answer = await client.request(p.GetModelCatalogRequest())
            assert isinstance(answer, p.ModelCatalogEvent)
            models = {(m.provider, m.id): m for m in answer.models}
            opus = models[("anthropic", "claude-opus-5")]
            assert opus.reasoning and opus.context_window == 200_000 and opus.thinking_levels == ["off", "minimal", "low", "medium", "high"]
            assert "xhigh" in models[("anthropic", "claude-opus-4-6")].thinking_levels  # its own map
            assert models[("openai", "gpt-4o")].thinking_levels == ["off"]
            assert models[("local", "qwen3.8-27b")].thinking_levels == ["off", "low", "medium", "xhigh"]  # S10: the family's ladder
            assert models[("local", "qwen3.8-27b")].source == "models.json"
            assert models[("openai", "gpt-4o")].service_tiers == ["default", "auto", "scale"]  # S6.8: the rulebook's tiers, per model
            assert opus.service_tiers == ["default"]
            assert len(answer.models) == len(models) > 30
            assert [error for error in answer.models_json_errors if "providers.broken" in error]
            await client.request(p.CommandRequest(line="/model local/qwen3.8-27b"))
            changed = await client.until(of("model"))
            assert isinstance(changed, p.ModelEvent) and changed.offered_levels == ["off", "low", "medium", "xhigh"]
            await client.close()

    run(scenario())


def test_an_unpinned_session_starts_on_the_saved_default_or_says_why_not(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home.mkdir(parents=True, exist_ok=True)

    async def opened() -> p.StateEvent:
        async with serving(home) as agent_process:
            client, state = await connect(agent_process)
            await client.close()
            return state

    (home / "config.cfg").write_text("set defaultProvider anthropic\nset defaultModel claude-opus-5\n")
    no_key = run(opened())
    assert no_key.model is None
    assert [row.kind for row in no_key.rows] == ["default_model"] and "DefaultUnusable" in no_key.rows[0].text
    assert "eukhe login anthropic" in no_key.rows[0].text
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    keyed = run(opened())
    assert keyed.model == p.ModelRef(provider="anthropic", id="claude-opus-5") and keyed.rows == []
    with Store(home / "sessions").open("s1", writer=False) as session:  # what the turn loop reads
        agent = CvarAgent(EukheSettings(home), session.conversation(MAIN))
        assert daemon.session_model(home, agent) == keyed.model
        assert session.conversation(MAIN).document(daemon.THINKING_DOC) == "medium"
    assert keyed.offered_levels == ["off", "minimal", "low", "medium", "high"]
    (home / "config.cfg").write_text("set defaultProvider anthropic\nset defaultModel claude-gone\n")
    missing = run(opened())
    assert missing.model is None and "anthropic/claude-gone: not_in_catalog" in missing.rows[0].text
    with Store(home / "sessions").open("s1", writer=False) as session:
        shown = [e for e in session.conversation(MAIN).user_view() if e.custom_type == "eukhe.default_model"]
    assert [e.content["reason"] for e in shown] == ["no_credentials", "not_in_catalog"]  # type: ignore[index]
    assert all(e.display_only for e in shown)

    async def pin() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
            await client.request(p.CommandRequest(line="/model openai/gpt-4o"))
            await client.close()

    run(pin())
    pinned = run(opened())  # a pinned session keeps its model, whatever the default says
    assert pinned.model == p.ModelRef(provider="openai", id="gpt-4o") and pinned.rows == []
    with Store(home / "sessions").open("s1", writer=False) as session:
        assert daemon.session_model(home, CvarAgent(EukheSettings(home), session.conversation(MAIN))) == pinned.model


def test_a_second_claim_is_a_client_a_stale_socket_is_replaced_and_a_holder_with_no_socket_is_busy(home: Path) -> None:
    store = Store(home / "sessions")
    address = p.socket_path(home, store.path("s1"))
    address.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with socket_address(address.parent, address.name) as where:
        stale.bind(where)
    stale.close()  # a dead agent's socket: it stays on disk, and nothing listens

    async def scenario() -> None:
        owner = await daemon.claim(home, store, "s1", Scripted)
        assert isinstance(owner, daemon.Daemon)
        try:
            second = await daemon.claim(home, store, "s1", Scripted)
            assert isinstance(second, AgentClient)
            state = await second.next()
            assert isinstance(state, p.StateEvent) and state.pid == os.getpid() and state.clients == 1
            await second.close()
        finally:
            await owner.close()
        assert not address.exists()
        with store.open("s1", writer=True):  # a writer with no socket: a claim tries, then gives up
            with pytest.raises(daemon.AgentBusy) as busy:
                await daemon.claim(home, store, "s1", Scripted, seconds=0.2)
        assert "no agent answers" in str(busy.value) and f"pid {os.getpid()}" in str(busy.value)

    run(scenario())


def test_a_client_sees_the_end_of_the_agent(home: Path) -> None:
    async def scenario() -> None:
        async with serving(home) as agent_process:
            client, _ = await connect(agent_process)
        assert [event async for event in client.events()] == []
        with pytest.raises(AgentGone):
            await client.next()
        with pytest.raises(AgentGone):
            await client.request(p.StatusRequest())
        await client.close()
        with pytest.raises(FileNotFoundError):
            await AgentClient.connect(agent_process.address)

    run(scenario())


# -- real processes -------------------------------------------------------------------------------


def test_a_second_agent_process_is_a_client_of_the_first_and_takes_over_when_it_ends(home: Path, agents: Callable[[], Agent]) -> None:
    first = agents()
    assert first.until(of_type("state"))["pid"] == first.process.pid
    second = agents()
    assert second.until(of_type("state"))["pid"] == first.process.pid  # a client: the first serves
    with pytest.raises(SessionLocked):  # one writer
        Store(home / "sessions").open("s1", writer=True)
    second.send({"v": 1, "type": "command", "line": "/remind from the second", "id": "r"})
    for one in (first, second):  # the change reaches every client; the asker's answer comes after it
        assert one.until(of_type("directors"))["stack"][0]["data"]["text"] == "from the second"
    assert second.until(lambda e: e.get("re") == "r")["type"] == "ok"
    second.send({"v": 1, "type": "fly"})  # answered by the process that read it, naming what is wrong
    assert second.until(of_type("error"))["kind"] == "unknown_type"
    third = agents()  # a client whose input ends: it ends once answered
    assert third.process.stdin is not None
    third.send({"v": 1, "type": "status", "id": "q"})
    third.process.stdin.close()
    assert third.until(lambda e: e.get("re") == "q")["pid"] == first.process.pid
    assert third.process.wait(DEADLINE) == 0
    fourth = agents()  # a client that is told to stop, stops; the agent goes on
    assert fourth.until(of_type("state"))["pid"] == first.process.pid
    assert fourth.end() == 0
    assert first.end() == 0
    took_over = second.until(lambda e: e["type"] == "state" and e["pid"] == second.process.pid)
    assert took_over["directors"][0]["data"]["text"] == "from the second"  # the state is the session's
    second.send({"v": 1, "type": "status", "id": "after"})
    assert second.until(lambda e: e.get("re") == "after")["pid"] == second.process.pid
    assert second.end() == 0
    for one in (first, second, third, fourth):
        assert one.stderr() == ""
    assert list((home / "run" / "agent").iterdir()) == []  # no socket is left behind
    with Store(home / "sessions").open("s1", writer=True):  # nor the lock
        pass


def test_when_the_agent_process_is_killed_a_client_process_takes_over_its_stale_socket(home: Path, agents: Callable[[], Agent]) -> None:
    first = agents()
    first.until(of_type("state"))
    second = agents()
    assert second.until(of_type("state"))["pid"] == first.process.pid
    second.send({"v": 1, "type": "command", "line": "/force bash", "id": "f"})
    assert second.until(lambda e: e.get("re") == "f")["type"] == "ok"
    first.process.kill()  # no goodbye: its socket stays on disk, the kernel drops its lock
    assert first.process.wait(DEADLINE) == -signal.SIGKILL
    took_over = second.until(lambda e: e["type"] == "state" and e["pid"] == second.process.pid)
    assert [layer["kind"] for layer in took_over["directors"]] == ["forced"]
    assert second.end() == 0 and second.stderr() == ""


def test_serving_a_session_that_does_not_exist_is_one_line_and_exit_2(home: Path, agents: Callable[[], Agent]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_")}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(home.parent)})
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", "agent", "serve", "--session", "nosuch"],
        capture_output=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().splitlines() == [f"eukhe agent serve: no session at {home / 'sessions' / 'nosuch'}"]
