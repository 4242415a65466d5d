"""providerMaxInFlight across processes (eukhe.agent.inflight): the slots are real flock'd files
that another process holds; a request waits while every slot is taken, takes a free one at once,
and gets the slot of a holder killed with SIGKILL. The steps wait on the other process's lines
and on the slots' own waiting signal, never on a clock."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_support import DEADLINE, Agent, agents, of_type
from loopback_models import write_loopback_models

from eukhe.agent.inflight import Slots
from eukhe.session import MAIN, Store
from spec.loopback import LoopbackServer, Stream, Text

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Any]:
    started: list[subprocess.Popen[str]] = []

    def hold(slot: Path) -> subprocess.Popen[str]:
        slot.parent.mkdir(parents=True, exist_ok=True)
        process = subprocess.Popen([sys.executable, "-c", HOLDER, str(slot)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        started.append(process)
        return process

    yield hold
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_a_request_waits_while_another_process_holds_the_only_slot(tmp_path: Path, holder: Any) -> None:
    slots_seen: list[int] = []

    async def scenario() -> int:
        waiting = asyncio.Event()
        loop = asyncio.get_running_loop()
        slots = Slots(tmp_path, "loop", 1, on_wait=lambda index: (slots_seen.append(index), loop.call_soon_threadsafe(waiting.set)))
        other = holder(slots.dir / "0.lock")

        async def request() -> int:
            async with slots.held() as index:
                return index

        task = asyncio.create_task(request())
        await waiting.wait()  # every slot was taken: it waits
        assert not task.done()
        assert other.stdin is not None
        other.stdin.close()  # the other process ends: its slot is free
        return await task

    assert asyncio.run(asyncio.wait_for(scenario(), DEADLINE)) == 0
    assert slots_seen == [0]


def test_a_free_slot_is_taken_at_once(tmp_path: Path, holder: Any) -> None:
    slots = Slots(tmp_path, "loop", 2, on_wait=lambda index: pytest.fail("waited with a slot free"))
    holder(slots.dir / "0.lock")

    async def scenario() -> int:
        async with slots.held() as index:
            return index

    assert asyncio.run(asyncio.wait_for(scenario(), DEADLINE)) == 1


def test_the_slot_of_a_holder_killed_with_sigkill_is_free(tmp_path: Path, holder: Any) -> None:
    slots = Slots(tmp_path, "loop", 1)
    other = holder(slots.dir / "0.lock")
    os.kill(other.pid, signal.SIGKILL)
    other.wait()

    async def scenario() -> int:
        async with slots.held() as index:
            return index

    assert asyncio.run(asyncio.wait_for(scenario(), DEADLINE)) == 0


def test_a_limit_of_zero_is_taken_as_one(tmp_path: Path) -> None:
    assert Slots(tmp_path, "loop", 0).limit == 1


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        running.responder = lambda recorded: Stream([Text("Hi.")])
        yield running


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackServer) -> Path:
    for name in [k for k in os.environ if k.startswith("EUKHE_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    agent = write_loopback_models(tmp_path / "agent", server, {"loop": "openai-completions"})
    (agent / "settings.json").write_text(json.dumps({"providerMaxInFlight": {"loop": 1}}), encoding="utf-8")
    with Store(agent / "sessions").create("s1") as session:
        session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "loop", "id": "loop-model"}})
    return agent


def test_an_agent_waits_while_another_process_holds_its_providers_only_slot(home: Path, server: LoopbackServer, holder: Any, agents: Any) -> None:
    other = holder(home / "run" / "inflight" / "loop" / "0.lock")
    first: Agent = agents()
    first.until(of_type("state"))
    first.send({"v": 1, "type": "turn", "text": "hi"})
    first.until(of_type("turn_start"))
    assert server.requests == []  # the turn started; its request waits for the slot
    assert other.stdin is not None
    other.stdin.close()  # until the slot is free, the turn cannot send its request
    assert first.until(of_type("turn_end"))["reason"] == "answered"
    assert first.end() == 0


__all__ = ["agents"]
