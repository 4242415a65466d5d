"""`eukhe tui`'s choice of session before the client starts (impl/eukhe/commands/tui.py): the
terminal UI itself is judged in tests/tui; here the command is run in this process with a
terminal for stdin and stdout and the client replaced by a recorder."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from eukhe.cli import UsageError
from eukhe.commands import tui as command
from eukhe.session import MAIN, Store
from eukhe.tui import app


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str]]:
    """The sessions the client was started on (its session dir and id), with a terminal for
    stdin and stdout."""
    calls: list[tuple[Path, str]] = []

    def client(agent: Path, session_dir: Path, session_id: str, cwd: Path) -> int:
        calls.append((session_dir, session_id))
        return 0

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(app, "run_tui", client)
    return calls


def _args(tmp_path: Path, **given: Any) -> argparse.Namespace:
    return argparse.Namespace(**{"agent_dir": str(tmp_path / "agent"), "session_dir": str(tmp_path / "sessions"), "session": None, "new": False, **given})


def test_a_session_its_agent_writes_is_opened_as_a_client_of_that_agent(tmp_path: Path, started: list[tuple[Path, str]]) -> None:
    """The session's agent holds its writer lock while it serves it: the command only checks that
    the session exists (as a reader), and the client joins the agent."""
    store = Store(tmp_path / "sessions")
    with store.create() as created:
        session_id = created.dir.name
    with store.open(session_id):  # the session's agent, its one writer
        assert command.run_tui(_args(tmp_path, session=session_id)) == 0
    assert started == [(store.path(session_id), session_id)]


def test_an_unknown_session_is_a_usage_error_naming_it(tmp_path: Path, started: list[tuple[Path, str]]) -> None:
    Store(tmp_path / "sessions").create().close()
    with pytest.raises(UsageError, match=r"^eukhe tui: .*nosuch"):
        command.run_tui(_args(tmp_path, session="nosuch"))
    assert started == []


def test_the_session_written_last_else_a_new_one(tmp_path: Path, started: list[tuple[Path, str]]) -> None:
    store = Store(tmp_path / "sessions")
    assert command.run_tui(_args(tmp_path)) == 0  # none yet: a new one
    first = started[-1][1]
    assert store.ids() == [first]
    with store.create() as created:
        second = created.dir.name
    os.utime(store.path(second) / f"{MAIN}.jsonl", ns=(1, 1))  # written long before the first
    assert command.run_tui(_args(tmp_path)) == 0 and started[-1][1] == first
    os.utime(store.path(first) / f"{MAIN}.jsonl", ns=(0, 0))
    assert command.run_tui(_args(tmp_path)) == 0 and started[-1][1] == second
    assert command.run_tui(_args(tmp_path, new=True)) == 0
    assert started[-1][1] not in (first, second) and len(store.ids()) == 3
