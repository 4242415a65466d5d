"""The wire client gives every connection back to its pool (issue 12: a 3,000-message simulation
sharing one httpx client ran out of connections, PoolTimeout).

The leak: a call cancelled while its response was being closed (the compactor stops the calls
of nodes the planner stopped when a turn waits; ``poll`` cancels calls past the deadline) left
the close half done, and httpcore kept the connection as in use for ever. The client now closes
the response before the reply's end events go out, in a task of its own that no cancellation
interrupts, and reads the body to its end so the connection is reused.

Every test shares one client with a pool of one or two connections and a short pool timeout
(the timeout only turns a held connection into a failure; nothing here measures time). The
close window is reached deterministically: ``Gated`` is a real httpx transport in front of
httpx's own, whose response close waits for the test when armed; the server is the loopback
one (spec/loopback.py), which counts the connections it accepted.

Before the fix, the first test (the simulation's failure) failed with PoolTimeout, as did the
early stop and the reuse tests; the held-close tests passed then (the body was left unread, and
garbage collection of its readers closed the response late): they guard the shielded close of
the fixed client (break ``compactor_wire_close_cancelled``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import httpx
import pytest
from compactor_support import ANTHROPIC, CHAT, anthropic, local

from eukhe.inference.wire import client_for, collect
from eukhe.inference.wire.base import WireClient
from eukhe.inference.wire.events import Stop, TextDelta
from eukhe.inference.wire.plan import Message, Request, WireModel
from eukhe.memory.chat import Config
from eukhe.memory.compactor import CALL_DEADLINE, Compactor
from eukhe.memory.durable import DurableChat
from eukhe.memory.request import Layers
from eukhe.memory.store import Store
from spec.loopback import LoopbackServer, Recorded, Stall, Stream, Text, Wait

POOL = 3.0  # seconds a call waits for a pooled connection before PoolTimeout (a held one fails)
REQUEST = Request(system="s", messages=(Message("user", "hi"),))


def timeout() -> httpx.Timeout:
    return httpx.Timeout(30.0, pool=POOL)


def wire(server: LoopbackServer, api: str) -> WireModel:
    return anthropic(server) if api == ANTHROPIC else local(server)


class _GatedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, gated: Gated) -> None:
        self.inner = inner
        self.gated = gated

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            yield chunk

    async def aclose(self) -> None:
        if self.gated.hold:
            self.gated.hold -= 1
            self.gated.closing.set()
            await self.gated.gate.wait()
        await self.inner.aclose()


class Gated(httpx.AsyncBaseTransport):
    """httpx's transport, whose next ``hold`` response closes wait until ``gate`` is set (as a
    close awaiting its connection's lock or its socket's shutdown would); ``closing`` is set
    when one waits."""

    def __init__(self, connections: int) -> None:
        self.inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=connections))
        self.hold = 0
        self.closing = asyncio.Event()
        self.gate = asyncio.Event()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers, stream=_GatedStream(response.stream, self), extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def later_calls_succeed(client: WireClient, server: LoopbackServer, n: int) -> None:
    for k in range(n):
        server.script(Stream([Text(f"later {k}")]))
        reply = await collect(client.stream(REQUEST))
        assert reply.text == f"later {k}"


async def cancelled(task: asyncio.Task[Any]) -> None:
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


@pytest.mark.parametrize("api", (ANTHROPIC, CHAT))
def test_calls_cancelled_after_their_reply_give_their_connections_back(api: str, server: LoopbackServer) -> None:
    """The simulation's failure, over httpx's own transport: a consumer cancelled right after the
    reply's Stop, at each of the next few steps of the loop (the compactor's calls stopped by a
    waiting turn as their stream closes). Before the fix each left its connection in use and
    the third call of a pool of two waited for a connection until PoolTimeout."""

    async def run() -> None:
        async with httpx.AsyncClient(timeout=timeout(), limits=httpx.Limits(max_connections=2)) as http:
            client = client_for(wire(server, api), timeout=timeout(), http=http)
            for steps in (0, 1, 2, 0, 1, 2):
                server.script(Stream([Text("a"), Text("b")]))
                seen = asyncio.Event()

                async def consume() -> None:
                    try:
                        async for event in client.stream(REQUEST):
                            if isinstance(event, Stop):
                                seen.set()
                    finally:
                        seen.set()  # a failed call wakes the test too

                task = asyncio.create_task(consume())
                await seen.wait()  # woken right after the Stop: the cancel lands within the next steps
                assert not (task.done() and task.exception()), f"the call failed: {task.exception()!r}"
                for _ in range(steps):
                    await asyncio.sleep(0)  # one step of the loop, not a wait
                await cancelled(task)
            await later_calls_succeed(client, server, 3)

    asyncio.run(run())


@pytest.mark.parametrize("api", (ANTHROPIC, CHAT))
def test_a_call_cancelled_during_its_close_gives_its_connection_back(api: str, server: LoopbackServer) -> None:
    """The close of a response finishes even when its call is cancelled meanwhile: one
    connection in the pool, the call cancelled while its close waits, the next calls get the
    connection."""

    async def run() -> None:
        gated = Gated(1)
        async with httpx.AsyncClient(timeout=timeout(), transport=gated) as http:
            client = client_for(wire(server, api), timeout=timeout(), http=http)
            server.script(Stream([Text("a")]))
            gated.hold = 1
            task = asyncio.create_task(collect(client.stream(REQUEST)))
            await asyncio.wait_for(gated.closing.wait(), 20.0)
            await cancelled(task)
            gated.gate.set()
            await later_calls_succeed(client, server, 3)

    asyncio.run(run())


def test_a_consumer_that_stops_early_inside_closing_gives_the_connection_back(server: LoopbackServer) -> None:
    """``closing`` around a stream: a consumer that leaves mid-reply (the server still holds the
    body open) closes the request on its way out, not at garbage collection."""
    from eukhe.inference.wire import closing

    async def run() -> None:
        async with httpx.AsyncClient(timeout=timeout(), limits=httpx.Limits(max_connections=1)) as http:
            client = client_for(wire(server, ANTHROPIC), timeout=timeout(), http=http)
            kept = []
            for _ in range(3):
                server.script(Stream([Text("first"), Stall(), Text("never")]))
                events = client.stream(REQUEST)
                kept.append(events)  # referenced: only the close gives the connection back
                async with closing(events) as stream:
                    async for event in stream:
                        if isinstance(event, TextDelta):
                            break
            server.release()
            await later_calls_succeed(client, server, 2)

    asyncio.run(run())


@pytest.mark.parametrize("api", (ANTHROPIC, CHAT))
def test_sequential_calls_reuse_one_connection(api: str, server: LoopbackServer) -> None:
    """The body is read to its end after the API's end event, so the server's kept-alive
    connection goes back to the pool: five calls, one connection."""

    async def run() -> None:
        async with httpx.AsyncClient(timeout=timeout()) as http:
            client = client_for(wire(server, api), timeout=timeout(), http=http)
            await later_calls_succeed(client, server, 5)

    asyncio.run(run())
    assert len(server.requests) == 5
    assert server.connections == 1


# -- the live compactor ------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def long(tag: str, n: int = 700) -> str:
    return (tag + " ") * (n // (len(tag) + 1) + 1)


def run_compactor(tmp_path: Path, server: LoopbackServer, connections: int, body: Callable[[Compactor, Gated, Clock], Coroutine[Any, Any, None]]) -> Compactor:
    store = Store(tmp_path / "chat")
    durable = DurableChat.open(Config(), store.messages, store.tree, store, store.now)
    clock = Clock()
    box: list[Compactor] = []

    async def run() -> None:
        gated = Gated(connections)
        async with httpx.AsyncClient(timeout=timeout(), transport=gated) as http:
            client = client_for(wire(server, ANTHROPIC), timeout=timeout(), http=http)
            compactor = Compactor(durable, client, Layers.of("notes"), clock=clock)
            box.append(compactor)
            try:
                await body(compactor, gated, clock)
            finally:
                await compactor.close()

    try:
        asyncio.run(run())
    finally:
        server.release()
        store.close()
    return box[0]


async def until(compactor: Compactor, predicate: Callable[[], bool]) -> None:
    async def loop() -> None:
        while not predicate():
            compactor.changed.clear()
            await compactor.changed.wait()

    await asyncio.wait_for(loop(), 20.0)


async def requests(server: LoopbackServer, n: int) -> list[Recorded]:
    return await asyncio.to_thread(server.wait_requests, n, 20.0)


@pytest.mark.parametrize("stop", ("a turn waits", "the deadline"))
def test_compactions_stopped_as_their_stream_closes_give_their_connections_back(stop: str, tmp_path: Path, server: LoopbackServer) -> None:
    """D5, D9 over a pool of one connection: a merge whose reply is whole is stopped while its
    response closes, by a waiting turn (the planner stops merges) or by its deadline (``poll``).
    The connection comes back: every later compaction is built, none fails for want of one."""
    go = threading.Event()
    server.script(Stream([Text("a" * 300)]), Stream([Text("b" * 300)]), Stream([Wait(go), Text("m" * 100)]))
    server.responder = lambda recorded: Stream([Text("x" * 100)])

    async def body(c: Compactor, gated: Gated, clock: Clock) -> None:
        c.message(long("one"))
        c.message(long("two"))
        await until(c, lambda: (1, 0) in c.tasks)
        await requests(server, 3)  # the merge's request: its reply waits for go
        gated.hold = 1
        go.set()
        await asyncio.wait_for(gated.closing.wait(), 20.0)
        assert (1, 0) in c.tasks  # the merge's reply is whole; its response is closing
        if stop == "a turn waits":
            c.message(long("three"))  # its call waits for the pool's one connection
            c.wait()
            assert (1, 0) not in c.tasks and [r.render() for r in c.rows if r.event == "stopped"] == ["memory: stopped 0+2 (a turn waits)"]
        else:
            clock.now += CALL_DEADLINE
            c.poll()
            assert (1, 0) not in c.tasks and [r.render() for r in c.rows if r.event == "failed"] == ["memory: failed 0+2 (failure 1: no line within 600 s)"]
            c.message(long("three"))  # the merge is tried again (rule 38); both wait for the connection
        gated.gate.set()
        if c.waiting:
            await until(c, lambda: c.settled)
            c.go()
        c.message(long("four"))
        await until(c, lambda: not c.tasks)
        await c.idle()

    compactor = run_compactor(tmp_path, server, 1, body)
    failed = [row.render() for row in compactor.rows if row.event == "failed" and "600 s" not in row.note]
    assert failed == []
    assert compactor.settled
    assert compactor.chat.chat.is_built((1, 0))
