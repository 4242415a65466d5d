"""Fixtures the test folders share: a redis-server of their own on loopback, for the hunts'
shared example database (tests/hunt) and the mutation queue (tests/workbench); and SIGINT as a
terminal's user has it, however the tests were started."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REDIS_START_SECONDS = 60  # the deadline of a redis-server's first answer


def pytest_configure(config: pytest.Config) -> None:
    """A shell starts its background jobs with SIGINT ignored, and an ignored signal stays ignored
    across exec: the recorders a dictation test stops with SIGINT (as a take's release does) would
    ignore it, and the test's outcome would hang on how pytest was started (a mutation run started
    with ``&`` failed its clean run so). The tests play a user at a terminal, where SIGINT is not
    ignored: an ignored SIGINT gets Python's own handler back, which a child's exec resets."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server on a free loopback port, saving nothing, ended after the test; skipped, with
    the reason, where Debian's redis-server or the redis package is missing."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("no redis-server (Debian's redis-server package; .ci/run and `make redis` install it as root)")
    redis = pytest.importorskip("redis", reason="the Python package redis is not installed (pip install -e '.[dev]')")
    port = free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        deadline = time.monotonic() + REDIS_START_SECONDS
        while True:
            try:
                if client.ping():
                    break
            except redis.exceptions.ConnectionError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"redis-server did not answer at {url} within {REDIS_START_SECONDS} s (exit code {process.poll()})")
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process's umask set to a common one and to none: what is made private is private under both."""
    old = os.umask(request.param)
    try:
        yield int(request.param)
    finally:
        os.umask(old)
