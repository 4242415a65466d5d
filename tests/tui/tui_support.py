"""Helpers of the terminal UI's tests: ``until`` waits on a condition of the app while its pilot
lets it run (no sleep times a step: the deadline only bounds a failing run); ``session_document``
reads a document of session s1 as a reader, while the agent writes; ``mock_agent`` serves s1 in
the test's own event loop (the real agent's requests, no turn loop: the app headless on a mock
agent, as the seed's dictation tests run); ``recorders`` puts ``/bin/sh`` recorder programs
alone on PATH."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from eukhe.agent import daemon
from eukhe.session import MAIN, Store

WAIT = 30.0  # seconds: bounds a wait that never comes true (a failing run)


async def until(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    """Let the app run until ``condition`` holds; AssertionError naming ``what`` past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}; the screen shows:\n{pilot.app.transcript.text}\n{pilot.app.status_text}")
        await pilot.pause(0.01)


def session_document(home: Path, name: str) -> Any:
    """A document of session s1's main conversation, read as a reader (the agent writes)."""
    with Store(home / "sessions").open("s1", writer=False) as session:
        return session.conversation(MAIN).document(name)



@contextlib.asynccontextmanager
async def mock_agent(home: Path) -> AsyncIterator[daemon.Daemon]:
    """The agent of session s1 in this event loop, with no turn loop (turns are refused)."""
    session = daemon._open_writer(Store(home / "sessions"), "s1")
    agent = daemon.Daemon(home, session, None)
    await agent.start()
    try:
        yield agent
    finally:
        await agent.close()


def recorders(where: Path, monkeypatch: pytest.MonkeyPatch, programs: dict[str, str]) -> Path:
    """``programs`` (name -> the body of a ``/bin/sh`` script) in ``where``, which becomes the
    whole PATH (with ``head`` and ``sleep`` for the scripts): no recorder of the machine is found.
    Temporary files (the takes' WAVs) go to ``where/tmp``."""
    where.mkdir(parents=True, exist_ok=True)
    for tool in ("head", "sleep"):
        found = shutil.which(tool)
        assert found is not None, tool
        (where / tool).symlink_to(found)
    for name, body in programs.items():
        script = where / name
        script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", str(where))
    (where / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(where / "tmp"))
    return where


AUDIO = "head -c 3200 /dev/zero; exec sleep 60"  # 0.1 s of silence, then records until stopped
SILENT = "exec sleep 60"  # records no audio at all
