"""Fixtures of the terminal UI's tests: the loopback model server, an agent dir whose session s1
is pinned to a loopback model, and real agent processes serving it (``agents``, from
tests/agent/agent_support.py)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agent"))

from agent_support import agents  # noqa: E402
from loopback_models import write_loopback_models  # noqa: E402

from eukhe.session import MAIN, Store  # noqa: E402
from spec.loopback import LoopbackServer  # noqa: E402

__all__ = ["agents"]  # the fixture, used by name


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: LoopbackServer) -> Path:
    """An agent dir with one session, s1, pinned to the loopback model loop/loop-model (a second
    provider, other, in the catalog), titles off; the project (tmp_path) holds a.txt."""
    for name in [k for k in os.environ if k.startswith("EUKHE_") or k.endswith("_API_KEY")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    agent = write_loopback_models(tmp_path / "agent", server, {"loop": "openai-completions", "other": "anthropic-messages"})
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    (agent / "settings.json").write_text(json.dumps({"titles": {"generate": False}}), encoding="utf-8")
    with Store(agent / "sessions").create("s1") as session:
        session.conversation(MAIN).commit(documents={"eukhe.model": {"provider": "loop", "id": "loop-model"}})
    return agent
