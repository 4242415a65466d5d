"""Agent processes for the tests: ``python -m eukhe agent serve`` as a real process whose
stdout lines (one JSON event each) a thread reads, waited on one at a time with a deadline that
only bounds a failing run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from loopback_models import write_loopback_models

from eukhe.session import MAIN, Store
from spec import breaks
from spec.loopback import LoopbackServer

DEADLINE = 60.0  # seconds: bounds a run that hangs; no step waits on it


class Agent:
    """``python -m eukhe agent serve --session s1`` as a real process; its stdout read as lines
    of JSON by a thread, waited on one at a time."""

    def __init__(self, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not (k.startswith("EUKHE_") or k.endswith("_API_KEY"))}
        env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(home.parent)})
        path = breaks.child_path(home.parent / "site", env.get("PYTHONPATH"))  # under a deliberate break, the process has it too
        if path is not None:
            env["PYTHONPATH"] = path
        self.process = subprocess.Popen(
            [sys.executable, "-m", "eukhe", "agent", "serve", "--session", "s1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=home.parent,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE
        while True:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"the process ended (exit {self.process.wait()}): {self.stderr()}")
            if predicate(line):
                return line

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def end(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(DEADLINE)

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read().decode("utf-8", "replace")


@pytest.fixture
def agents(home: Path) -> Iterator[Callable[[], Agent]]:
    started: list[Agent] = []

    def start() -> Agent:
        started.append(Agent(home))
        return started[-1]

    yield start
    for one in started:
        if one.process.poll() is None:
            one.process.kill()
            one.process.wait()
        for stream in (one.process.stdin, one.process.stdout, one.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def of_type(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda event: event.get("type") == kind


def serve_session(agent: Path, sessions: Path, session_id: str, project: Path, told: Any) -> None:
    """The agent of a session with the real turn loop, in a process of its own (a fork server's
    child): it sends its socket's address on ``told`` once it serves, then serves until killed."""
    from eukhe.agent import daemon
    from eukhe.agent.runner import runner_factory
    from eukhe.session import Store

    os.chdir(project)

    async def main() -> None:
        held = await daemon.claim(agent, Store(sessions), session_id, runner_factory, project_dir=project)
        assert isinstance(held, daemon.Daemon)
        told.send(str(held.address))
        told.close()
        await asyncio.Event().wait()

    asyncio.run(main())


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackServer) -> Path:
    """An agent dir with one session, s1, pinned to a loopback model, titles off (a test that
    titles turns them on); a project (the agent's working directory, tmp_path) holding a.txt."""
    for name in [k for k in os.environ if k.startswith("EUKHE_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    agent = write_loopback_models(tmp_path / "agent", server, {"loop": "openai-completions"})
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    (agent / "settings.json").write_text(json.dumps({"titles": {"generate": False}}), encoding="utf-8")
    with Store(agent / "sessions").create("s1") as session:
        session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "loop", "id": "loop-model"}})
    return agent
