"""Fixtures of the command-line tests: a real agent dir per test, the `eukhe` command as a real
process or in process (cli_support), and a read-only directory that holds for root."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import InProcess, RunProcess, _chattr


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh agent dir (not yet made: eukhe makes it), also set as EUKHE_AGENT_DIR in process."""
    path = tmp_path / "agent"
    for name in [k for k in os.environ if k.startswith("EUKHE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EUKHE_AGENT_DIR", str(path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return path


@pytest.fixture
def run(agent: Path) -> "RunProcess":
    return RunProcess(agent)


@pytest.fixture
def inproc(agent: Path, capsys: pytest.CaptureFixture[str]) -> "InProcess":
    return InProcess(capsys)


@pytest.fixture
def freeze() -> Iterator[Callable[[Path], Path]]:
    """Make a directory read-only for everyone, root included: chattr +i (immutable). Root
    ignores mode bits, so a chmod would not bite here; skipped where the file system has no
    immutable flag. The flag is taken off again after the test."""
    frozen: list[Path] = []

    def make(path: Path) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        if not _chattr("+i", path):
            pytest.skip("chattr +i is not available here (and root ignores chmod)")
        frozen.append(path)
        probe = path / ".probe"
        try:
            probe.write_text("x")
        except OSError:
            return path
        probe.unlink()
        pytest.skip("chattr +i did not make the directory read-only here")

    yield make
    for path in frozen:
        _chattr("-i", path)
