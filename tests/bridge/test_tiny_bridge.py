"""The tiny bridge's reads from its processes: each has a deadline, and passing it fails with
``Stuck`` naming the process and what it waited for; after a failure the thread's processes are
ended and the next scenario starts new ones."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from bend import tiny as model
from bridge import core, tiny


@pytest.fixture
def short_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiny, "DEADLINE", 1.0)


def test_a_process_that_does_not_answer_is_stuck(monkeypatch: pytest.MonkeyPatch) -> None:
    run = tiny._Run("module")
    run.start("p2")  # within the usual deadline: on a loaded machine a process takes seconds to start
    monkeypatch.setattr(tiny, "DEADLINE", 1.0)
    started = time.monotonic()
    with pytest.raises(core.Stuck, match=r"p2 gave no answer to 'nonsense' within 1 s \(it waited for a reply that never comes\)"):
        run.ask("p2", "nonsense", "a reply that never comes")
    assert time.monotonic() - started < 30
    pids = [d.process.pid for d in run.pool.drivers.values()]
    run.close(failed=True)
    assert getattr(tiny._LOCAL, "pool", None) is None
    assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def test_fifo_waits_have_deadlines(short_deadline: None) -> None:
    where = Path(tempfile.mkdtemp(prefix="ekt", dir="/tmp"))
    try:
        os.mkfifo(where / "received")
        os.mkfifo(where / "release")
        fd = os.open(where / "received", os.O_RDONLY | os.O_NONBLOCK)
        try:
            with pytest.raises(core.Stuck, match="did not open .*received within 1 s"):
                tiny._await_received(fd, where / "received", "p1")
        finally:
            os.close(fd)
        with pytest.raises(core.Stuck, match="nobody opened .*release .*within 1 s"):
            tiny._release(where / "release", "p1's request")
    finally:
        for name in ("received", "release"):
            (where / name).unlink(missing_ok=True)
        where.rmdir()


def test_a_scenario_after_a_stuck_one_starts_new_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    run = tiny._Run("module")
    run.start("p1")
    with monkeypatch.context() as short:
        short.setattr(tiny, "DEADLINE", 1.0)
        with pytest.raises(core.Stuck):
            run.ask("p1", "nonsense", "nothing")
        run.close(failed=True)
    events = core.read(tiny.BRIDGE.file(tiny.SHORT_FIRST))
    assert tiny.production(events) == model.transcript(events)
    tiny.finish()
