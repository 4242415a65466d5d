"""The live compactor over real HTTP against the loopback server, both APIs (memory.md rules
30, 35-42, D5, D9): the prefix gate, the cut and the shortest line, retries only for a waiting
turn, the third failure, the call deadline, the idle chat; every built node on disk."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from compactor_support import ANTHROPIC, CHAT, anthropic, routed

from eukhe.inference.wire import client_for
from eukhe.inference.wire.plan import WireModel
from eukhe.memory import NODE
from eukhe.memory.chat import Config
from eukhe.memory.compactor import CALL_DEADLINE, RETRY, Compactor, build_line
from eukhe.memory.durable import DurableChat
from eukhe.memory.prompts import LIMIT_MARK, RULER, cut_follow_up
from eukhe.memory.request import Layers
from eukhe.memory.store import Store
from eukhe.memory.text import cut, size
from spec.loopback import Fail, LoopbackServer, Recorded, Stall, Stream, Text, Thinking, Wait

APIS = (ANTHROPIC, CHAT)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def wire(server: LoopbackServer, api: str) -> WireModel:
    return anthropic(server) if api == ANTHROPIC else routed(server)


def short(i: int) -> str:
    return f"short message {i}"


def long(tag: str, n: int = 700) -> str:
    return (tag + " ") * (n // (len(tag) + 1) + 1)


class Rig:
    """A chat on disk, its compactor speaking ``api`` to the loopback server."""

    def __init__(self, tmp: Path, server: LoopbackServer, api: str, config: Config = Config()) -> None:
        self.directory = tmp / "chat"
        self.store = Store(self.directory)
        self.durable = DurableChat.open(config, self.store.messages, self.store.tree, self.store, self.store.now)
        self.clock = Clock()
        self.server = server
        self.compactor = Compactor(
            self.durable, client_for(wire(server, api), timeout=30.0), Layers.of("notes"), thinking="medium", clock=self.clock
        )

    async def until(self, predicate: Callable[[], bool], timeout: float = 20.0) -> None:
        compactor = self.compactor

        async def loop() -> None:
            while not predicate():
                compactor.changed.clear()
                await compactor.changed.wait()

        await asyncio.wait_for(loop(), timeout)

    async def requests(self, n: int) -> list[Recorded]:
        return await asyncio.to_thread(self.server.wait_requests, n, 20.0)

    def tree_lines(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.directory / "tree").glob("*.jsonl")):
            out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [line for line in out if "l" in line]

    def events(self, event: str) -> list[str]:
        return [row.render() for row in self.compactor.rows if row.event == event]


def user_texts(request: Recorded) -> list[str]:
    """Each message's texts (content blocks joined), in order."""
    out = []
    for message in request.body["messages"]:
        content = message.get("content")
        if isinstance(content, list):
            out.append("".join(block.get("text", "") for block in content))
        else:
            out.append(content or "")
    return out


@pytest.fixture
def rig_of(tmp_path: Path, server: LoopbackServer) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(api: str, config: Config = Config()) -> Rig:
        rig = Rig(tmp_path / str(len(made)), server, api, config)
        made.append(rig)
        return rig

    yield make
    server.release()
    for rig in made:
        rig.store.close()


@pytest.mark.parametrize("api", APIS)
def test_a_waiting_compaction_goes_once_the_writers_response_starts(api: str, rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """Rule 30: two compactions with the same marked prefix (the view to its last whole block):
    the second is sent only once the first one's response has started, not before, and not
    only after it ended."""
    rig = rig_of(api)
    begin, finish = threading.Event(), threading.Event()
    server.script(Stream([Wait(begin), Text("line of message eight"), Wait(finish), Text(" whole")]), Stream([Text("line of message nine")]))

    async def run() -> None:
        c = rig.compactor
        for i in range(8):
            c.message(short(i))
        c.message(long("eight"))
        first = (await rig.requests(1))[0]
        c.message(long("nine"), "eukhe")
        await rig.until(lambda: bool(rig.events("wait")))
        assert len(server.requests) == 1 and c.gate.waiting == 1
        begin.set()  # the writer's response starts; it is not over (finish is not set)
        second = (await rig.requests(2))[1]
        assert not finish.is_set() and (0, 8) in c.tasks
        finish.set()
        await rig.until(lambda: c.settled)
        await c.idle()
        assert user_texts(first)[-1].endswith("user: " + long("eight") + "\n</input>")
        assert user_texts(second)[-1].endswith("eukhe: " + long("nine") + "\n</input>")
        head = [m for m in (first.body, second.body)]
        assert head[0]["messages"][0] == head[1]["messages"][0] or head[0].get("system") == head[1].get("system")

    asyncio.run(run())
    assert rig.events("wait") == ["memory: wait 9+1 (its prefix is being written)"]
    built = {(n["l"], n["i"]): n["text"] for n in rig.tree_lines()}
    assert built[(0, 8)] == "line of message eight whole" and built[(0, 9)] == "line of message nine"


@pytest.mark.parametrize("api", APIS)
def test_over_long_lines_get_the_cut_and_the_shortest_cut_wins(api: str, rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """Rules 36, 37, D9: a line over 512 bytes gets the follow-up in the same conversation; a
    follow-up not shorter ends the tries; the shortest line, cut at a character boundary to
    512 bytes, is the node's line on disk."""
    rig = rig_of(api)
    r1 = "é" * 450  # 900 bytes
    r2 = "a" + "€" * 233  # 700 bytes: the best; its cut falls inside a 3-byte character
    r3 = "b" * 800  # not shorter than r2: the last try
    server.script(Stream([Thinking("hmm"), Text(r1)]), Stream([Text(r2)]), Stream([Text(r3)]))

    async def run() -> None:
        c = rig.compactor
        c.message(long("subject", 2000))
        await rig.until(lambda: c.settled)
        await c.idle()

    asyncio.run(run())
    requests = server.wait_requests(3)
    assert len(server.requests) == 3
    assert user_texts(requests[1])[-2:] == [r1, cut_follow_up(r1)]
    assert user_texts(requests[2])[-4:] == [r1, cut_follow_up(r1), r2, cut_follow_up(r2)]
    assert cut_follow_up(r1).endswith(LIMIT_MARK) and RULER in user_texts(requests[0])[-1]
    line = rig.tree_lines()[0]
    assert (line["l"], line["i"]) == (0, 0) and line["text"] == cut(r2) and size(line["text"]) == 511
    assert rig.events("built") == ["memory: built 0+1 (511 bytes from the reply, 3 calls)"]


def test_the_line_builder_keeps_the_shortest_of_five_and_stops_at_empty() -> None:
    """D9 on production's own line builder: five shrinking replies over the limit are five calls;
    an empty or thinking-only reply is the last try; no reply builds from the input."""
    five = build_line("src", ["x" * (1000 - 10 * k) for k in range(6)])
    assert len(five.calls) == 5 and five.line == "x" * NODE and five.origin == "reply"
    empty = build_line("s" * 600, ["   "])
    assert len(empty.calls) == 1 and empty.line == "s" * NODE and empty.origin == "input"
    fit = build_line("s", ["x" * 900, "short", "never read"])
    assert [ask for ask, _line in fit.calls] == ["", cut_follow_up("x" * 900)] and fit.line == "short"


@pytest.mark.parametrize("api", APIS)
def test_a_failed_node_is_tried_again_only_for_a_waiting_turn(api: str, rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """Rule 38, D5: a failed node is not retried by the clock alone; while a turn waits, every
    10 s; and at the next message."""
    rig = rig_of(api)
    server.script(Fail(500), Fail(503), Stream([Text("built at last")]))

    async def run() -> None:
        c = rig.compactor
        c.message(long("failing"))
        await rig.until(lambda: len(rig.events("failed")) == 1)
        rig.clock.now += 5 * RETRY
        c.poll()
        assert len(server.requests) == 1 and not c.tasks  # nobody waits: no retry
        c.wait()
        rig.clock.now += RETRY - 1
        c.poll()
        assert len(server.requests) == 1
        rig.clock.now += 1
        c.poll()
        await rig.until(lambda: len(rig.events("failed")) == 2)
        assert len(server.requests) == 2
        c.go()
        c.message(short(1))  # the next message retries it
        await rig.until(lambda: c.settled)
        await c.idle()

    asyncio.run(run())
    assert len(server.requests) == 3
    assert [n["text"] for n in rig.tree_lines() if n["i"] == 0 and n["l"] == 0] == ["built at last"]
    assert rig.events("failed")[0].startswith("memory: failed 0+1 (failure 1: loop") or "failure 1" in rig.events("failed")[0]


@pytest.mark.parametrize("api", APIS)
def test_a_node_that_keeps_failing_is_built_from_its_input(api: str, rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """Rule 38, D5: the third failure builds the node from its input cut to 512 bytes, logged."""
    rig = rig_of(api)
    text = "ü" * 300 + " tail"
    server.script(Fail(500), Fail(500), Fail(429), Stream([Text("merged line")]))

    async def run() -> None:
        c = rig.compactor
        c.message(text)
        for k in range(1, 3):
            await rig.until(lambda: len(rig.events("failed")) == k)
            c.message(short(k))
        await rig.until(lambda: c.chat.chat.is_built((1, 0)))
        await c.idle()

    asyncio.run(run())
    assert len(server.requests) == 4  # three for the message, one for the merge it then makes ready
    node = [n for n in rig.tree_lines() if (n["l"], n["i"]) == (0, 0)]
    assert [n["text"] for n in node] == [cut(text, NODE)] and size(cut(text, NODE)) == 512
    assert "<input>\n0+1|" + cut(text, NODE) + "\n1+1|" + short(1) in user_texts(server.requests[3])[-1]
    assert rig.events("capped") == ["memory: capped 0+1 (failure 3: built from its input cut to 512 bytes)"]


def test_a_call_past_ten_minutes_fails(rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """D9: a model call past 10 minutes fails (the clock is the compactor's)."""
    rig = rig_of(ANTHROPIC)
    server.script(Stream([Stall()]))

    async def run() -> None:
        c = rig.compactor
        c.message(long("slow"))
        await rig.requests(1)
        rig.clock.now += CALL_DEADLINE - 1
        c.poll()
        assert not rig.events("failed")
        rig.clock.now += 1
        c.poll()
        assert rig.events("failed") == ["memory: failed 0+1 (failure 1: no line within 600 s)"]
        await c.close()

    asyncio.run(run())


def test_an_idle_chat_makes_no_call(rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """Rule 38 (the seed's Use): short messages are their own lines; nothing runs, nothing is
    sent, however long the clock runs or a turn waits."""
    rig = rig_of(CHAT)

    async def run() -> None:
        c = rig.compactor
        for i in range(20):
            c.message(short(i))
        c.wait()
        for _ in range(5):
            rig.clock.now += RETRY
            c.poll()
        assert c.settled and not c.tasks

    asyncio.run(run())
    assert server.requests == [] and rig.compactor.rows == []


def test_a_waiting_turn_stops_the_merges(rig_of: Callable[..., Rig], server: LoopbackServer) -> None:
    """D5: while a turn waits only the view's unbuilt message lines run; a merge under way stops
    and starts again once the view settled."""
    rig = rig_of(ANTHROPIC)
    third = threading.Event()
    server.script(Stream([Text("a" * 300)]), Stream([Text("b" * 300)]), Stream([Stall()]), Stream([Wait(third), Text("c" * 10)]), Stream([Text("m" * 100)]))

    async def run() -> None:
        c = rig.compactor
        c.message(long("one"))
        c.message(long("two"))
        await rig.until(lambda: (1, 0) in c.tasks)
        await rig.requests(3)
        c.message(long("three"))
        await rig.requests(4)
        c.wait()
        assert c.waiting and (1, 0) not in c.tasks and rig.events("stopped") == ["memory: stopped 0+2 (a turn waits)"]
        third.set()
        await rig.until(lambda: c.settled and not c.waiting)
        await rig.until(lambda: c.chat.chat.is_built((1, 0)))
        await c.idle()

    asyncio.run(run())
    assert len(server.requests) == 5
