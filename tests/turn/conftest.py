"""Fixtures of the turn tests: a real loopback model server (spec/loopback.py), a chat owned in a
temporary directory, and turns against the server over real HTTP for each API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from spec.loopback import LoopbackServer


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def chat_dir(tmp_path: Path) -> Path:
    return tmp_path / "chat" / "main"
