"""Fixtures of the tools' tests: a working directory of real files in tmp_path, a context over
it (a short kill grace, so a killed group is ended quickly), and ``call``, which runs one tool
call the way the model makes it (eukhe.agent.tools.run_call) to its result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from eukhe.agent.tools import ToolContext, ToolResult, run_call

Call = Callable[..., ToolResult]


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def context(workdir: Path) -> ToolContext:
    return ToolContext(workdir, bash_timeout_ms=60_000, kill_grace_ms=100)


@pytest.fixture
def call(context: ToolContext) -> Call:
    def run(name: str, arguments: str | Mapping[str, Any] | None = None, **given: Any) -> ToolResult:
        async def main() -> ToolResult:  # an asyncio.Event serves one event loop: a fresh hook per run
            return await run_call(name, given if arguments is None else arguments, replace(context, cancel=asyncio.Event()))

        return asyncio.run(main())

    return run
