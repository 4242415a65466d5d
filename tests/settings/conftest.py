"""Fixtures of the settings tests: a real agent dir, project dir and sessions dir per test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    agent, project, sessions = tmp_path / "agent", tmp_path / "project", tmp_path / "sessions"
    agent.mkdir()
    (project / ".eukhe").mkdir(parents=True)
    return agent, project, sessions
