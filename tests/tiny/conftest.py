"""Fixtures of the tiny tests: agent dirs short enough for Unix socket paths, installed fake
(echo) models, and waiting for a process to end without any timing.

No wait of a test is without a deadline (LIMIT): a process's end, the FIFO that says the echo
engine holds a request (``await_held``), its release (``release``), a thread's end (``joined``).
Passing one fails the test naming what it waited for; the limit is never part of what a test
asserts."""

from __future__ import annotations

import http.server
import json
import os
import select
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.tiny import paths

MODEL = "echo-test"
LIMIT = 60.0  # seconds: a hang guard on every wait of a test, never part of a result


def install_echo(agent_dir: Path, model_id: str = MODEL) -> Path:
    where = paths.model_dir(agent_dir, model_id)
    where.mkdir(parents=True, exist_ok=True)
    (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
    return where


def wait_exit(pid: int, limit: float = LIMIT) -> None:
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


def hold_dir() -> Path:
    """A dir with the FIFOs of a held echo request (``hold:<dir>``): received, release."""
    where = Path(tempfile.mkdtemp(prefix="ekf", dir="/tmp"))
    os.mkfifo(where / "received")
    os.mkfifo(where / "release")
    return where


class Holding:
    """``received`` opened for reading before the request is sent (without blocking): the
    engine's open for writing then waits for this reader, and this reader sees a hangup once
    the engine has opened and closed it (Linux)."""

    def __init__(self, hold: Path, name: str = "received") -> None:
        self.fifo = hold / name
        self.fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)

    def wait(self, limit: float = LIMIT) -> None:
        """Until the engine holds the request; fails after ``limit`` naming the FIFO."""
        try:
            poller = select.poll()
            poller.register(self.fd, select.POLLIN | select.POLLHUP)
            while True:
                assert poller.poll(limit * 1000), f"nobody opened {self.fifo} within {limit} s (what holds it never got there)"
                if not os.read(self.fd, 4096):
                    return
        finally:
            os.close(self.fd)


def release(hold: Path, limit: float = LIMIT) -> None:
    """Let the held request go: open ``release`` for writing (the open waits for the engine,
    its reader) and close it, on a thread joined within ``limit``; a reader that never came
    fails naming the FIFO (the thread is then let go by a reader of our own)."""
    fifo = hold / "release"
    opener = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    opener.start()
    opener.join(limit)
    if opener.is_alive():
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # ends the blocked open
        opener.join(limit)
        raise AssertionError(f"nobody opened {fifo} to wait for its release within {limit} s")


def joined(thread: threading.Thread, limit: float = LIMIT) -> None:
    thread.join(limit)
    assert not thread.is_alive(), f"thread {thread.name} did not end within {limit} s"


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


def loopback_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """A real HTTP server on loopback with ``handler``, for a fixture to yield: its base URL;
    shut down and closed when the fixture ends."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
