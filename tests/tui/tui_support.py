"""Helpers of the terminal UI's tests: ``until`` waits on a condition of the app while its pilot
lets it run (no sleep times a step: the deadline only bounds a failing run); ``session_document``
reads a document of session s1 as a reader, while the agent writes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

