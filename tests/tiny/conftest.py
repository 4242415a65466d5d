"""Fixtures of the tiny tests: agent dirs short enough for Unix socket paths, installed fake
(echo) models, and waiting for a process to end without any timing."""

from __future__ import annotations

import json
import os
import select
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.tiny import paths

MODEL = "echo-test"


def install_echo(agent_dir: Path, model_id: str = MODEL) -> Path:
    where = paths.model_dir(agent_dir, model_id)
    where.mkdir(parents=True, exist_ok=True)
    (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
    return where


def wait_exit(pid: int, limit: float = 60.0) -> None:
    """Block until process ``pid`` has ended (a pidfd becomes readable); ``limit`` only stops a
    hung test, it is never part of what is asserted."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        ready, _, _ = select.select([fd], [], [], limit)
        assert ready, f"process {pid} did not end"
    finally:
        os.close(fd)


def alive(pid: int) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        ready, _, _ = select.select([fd], [], [], 0)
        return not ready
    finally:
        os.close(fd)


@pytest.fixture
def agent_dir() -> Iterator[Path]:
    where = Path(tempfile.mkdtemp(prefix="ekt", dir="/tmp"))
    install_echo(where)
    yield where
    sock_dir = paths.run_dir(where)
    for sock in sock_dir.glob("*.sock") if sock_dir.exists() else ():
        _stop_worker_at(sock)
    shutil.rmtree(where, ignore_errors=True)


def _stop_worker_at(sock: Path) -> None:
    from eukhe.tiny.worker import probe

    found = probe(sock)
    if found.sock is not None:
        found.sock.close()
        if found.pid is not None:
            try:
                os.kill(found.pid, 15)
                wait_exit(found.pid)
            except ProcessLookupError:
                pass


@pytest.fixture
def idle_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EUKHE_TINY_WORKER_IDLE_MS", "600000")
