"""A mutation run farmed to two workers through the task queue (RQ on a loopback redis-server)
gives the verdicts of a one-process run, mutant by mutant.

Four clones of this repository's HEAD in a temporary directory (the working tree may hold
uncommitted edits: the clones hold the commit): one for the one-process run (``python -m
spec.mutate --area effort --mutants ...``), one for the coordinator (the same command with
``--queue``), one for each worker (``python -m spec.mutate worker --queue ... --checkout DIR``;
the second is started from outside its checkout and moves into it). The mutants are a fixed
selection of impl/eukhe/effort.py's (the smallest area): killed by the judges, refused by
mypy --strict (caught by type check), and the one listed equivalent (it survives).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spec import mutate, mutate_queue, mutate_types

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = [
    "eukhe.effort.x_clamp__mutmut_1",  # clamp(None, level): mypy refuses it
    "eukhe.effort.x_parse_level__mutmut_1",  # `in` for `not in`: killed
    "eukhe.effort.xǁThinkingSessionǁcycle__mutmut_11",  # listed equivalent: survives
    "eukhe.effort.xǁThinkingSessionǁswitch__mutmut_1",  # killed
]
JUDGES = ["tests/effort"]  # the queue is under test, not the area's judges: its unit tests suffice
RUN_SECONDS = 600  # the deadline of each run (the one-process run, the coordinator)
START_SECONDS = 60  # the deadline of a worker's start
STOP_SECONDS = 15  # the deadline of a worker's stop (rq's pubsub thread could hold it up to 60 s)


def _kill_session(process: subprocess.Popen[bytes]) -> None:
    """End a process started in a session of its own and every process still in that session
    (rq's work horse puts itself in a process group of its own, within the session)."""
    sid = process.pid
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # the fields after the name: state, ppid, pgrp, session
            try:
                os.kill(int(stat.parent.name), signal.SIGKILL)
            except ProcessLookupError:
                pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


@pytest.fixture
def queue_url(redis_url: str) -> str:
    """The test's redis-server (tests/conftest.py), where rq is installed."""
    pytest.importorskip("rq", reason="the Python package rq is not installed (pip install -e '.[dev]')")
    return redis_url


def _clone(source: Path, where: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(source), str(where)], check=True, capture_output=True, timeout=120)
    return where


def _env(code: Path | None) -> dict[str, str]:
    """The environment of a child: the code of ``code`` (a clone) first, else this tree's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EUKHE_", "HYPOTHESIS_", "MUTANT_"))}
    env.pop("PYTHONPATH", None)
    if code is not None:
        env["PYTHONPATH"] = f"{code / 'impl'}{os.pathsep}{code}"
    return env


def _mutate(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spec.mutate", "--area", "effort", "--max-children", "1", "--judges", *JUDGES, "--mutants", *MUTANTS, *args],
        cwd=clone, env=_env(clone), capture_output=True, text=True, timeout=RUN_SECONDS + 120, check=False,
    )


def _statuses(clone: Path) -> dict[str, str]:
    found = mutate_queue.read_verdicts(clone / "build" / "mutate" / "effort", MUTANTS)
    return {name: mutate.status_of(found[name]["exit_code"]) for name in sorted(found)}


def _area_entry(clone: Path) -> dict[str, object]:
    (entry,) = json.loads((clone / "build" / "mutation.json").read_text(encoding="utf-8"))["areas"]
    return {k: v for k, v in entry.items() if k not in ("timing", "queued")}


def _stacks(worker: subprocess.Popen[bytes], log: Path) -> str:
    """The stack of every thread of a stuck worker (its SIGUSR1 dump, in its log), and the log before."""
    before = log.stat().st_size
    worker.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while log.stat().st_size == before and time.monotonic() < deadline:
        time.sleep(0.1)
    return _tail(log, lines=150)


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]) if path.exists() else "(no output)"


def test_two_workers_through_the_queue_agree_with_one_process(queue_url: str, tmp_path: Path) -> None:
    import redis
    from rq import Queue, Worker
    from rq.job import Job, JobStatus
    from rq.serializers import JSONSerializer

    started = time.monotonic()
    solo = _clone(ROOT, tmp_path / "solo")  # HEAD of this repository; the others are clones of it
    coordinator, first, second = (_clone(solo, tmp_path / name) for name in ("coordinator", "first", "second"))
    commit = mutate_queue.head(solo)

    one = _mutate(solo)
    assert one.returncode == 0, one.stdout[-3000:] + one.stderr[-3000:]
    alone = _statuses(solo)
    assert sorted(alone) == sorted(MUTANTS), alone
    kinds = set(alone.values())
    # the selection holds each kind of verdict (re-choose it if impl/eukhe/effort.py changed)
    assert {"killed", "caught by type check", "survived"} <= kinds, alone
    solo_seconds = time.monotonic() - started

    connection = redis.Redis.from_url(queue_url)
    queue = Queue(mutate_queue.queue_name(commit), connection=connection, serializer=JSONSerializer)
    workers: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    try:
        for checkout, cwd, code, log in ((first, first, first, logs[0]), (second, tmp_path, None, logs[1])):
            with log.open("wb") as out:  # a file, not a pipe: nothing to read while it runs
                workers.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "spec.mutate", "worker", "--queue", queue_url, "--checkout", str(checkout), "--max-children", "1"],
                        cwd=cwd, env=_env(code), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                    )
                )
        deadline = time.monotonic() + START_SECONDS
        while Worker.count(queue=queue) < 2:  # both listen on the commit's queue before any job is there
            dead = [(log, w.returncode) for w, log in zip(workers, logs) if w.poll() is not None]
            assert not dead and time.monotonic() < deadline, f"the workers did not start: {dead}\n" + "\n".join(map(_tail, logs))
            time.sleep(0.1)

        queued_started = time.monotonic()
        farmed = _mutate(coordinator, "--queue", queue_url, "--batch", "2", "--deadline", str(RUN_SECONDS))
        queued_seconds = time.monotonic() - queued_started
        assert farmed.returncode == 0, farmed.stdout[-3000:] + farmed.stderr[-3000:] + "\n".join(map(_tail, logs))
        assert _statuses(coordinator) == alone, farmed.stdout[-3000:]
        assert _area_entry(coordinator) == _area_entry(solo)  # the same summary in build/mutation.json
        account = json.loads((coordinator / "build" / "mutate" / "effort" / mutate.QUEUED).read_text(encoding="utf-8"))
        assert account["jobs"] == 2 and sum(account["by_worker"].values()) == len(MUTANTS), account
        assert len(account["by_worker"]) == 2, f"both workers judged mutants: {account}"

        # A job of another commit, put on this commit's queue, is refused by the worker taking it.
        other = "0" * 40
        job: Job = queue.enqueue(
            "spec.mutate_queue.judge",
            {"area": "effort", "commit": other, "tools": mutate_queue.tools(), "judges": [], "only": None, "mutants": MUTANTS[:1]},
        )
        deadline = time.monotonic() + START_SECONDS
        while job.get_status(refresh=True) not in (JobStatus.FINISHED, JobStatus.FAILED):
            assert time.monotonic() < deadline, "the refusal did not come back"
            time.sleep(0.1)
        result = job.latest_result()
        assert job.get_status() == JobStatus.FAILED and result is not None and result.exc_string is not None
        assert f"job for commit {other} refused" in result.exc_string and f"is at {commit}" in result.exc_string

        for worker in workers:  # rq's warm shutdown: an idle worker stops at once
            worker.send_signal(signal.SIGTERM)
        for worker, log in zip(workers, logs):
            try:
                code = worker.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                pytest.fail(f"a worker did not stop on SIGTERM; its threads:\n{_stacks(worker, log)}")
            assert code == 0, _tail(log)
    finally:
        for worker in workers:
            _kill_session(worker)
    print(
        f"\n{len(MUTANTS)} mutants {alone}; one process {solo_seconds:.1f} s (its clone included), "
        f"two workers through the queue {queued_seconds:.1f} s, whole test {time.monotonic() - started:.1f} s"
    )


def test_a_worker_refuses_a_job_of_another_commit_naming_both() -> None:
    commit = mutate_queue.head(ROOT)
    other = "f" * 40
    job: dict[str, object] = {"area": "effort", "commit": other, "tools": mutate_queue.tools(), "judges": [], "only": None, "mutants": []}
    with pytest.raises(mutate_queue.Refused) as refused:
        mutate_queue.judge(job)
    assert other in str(refused.value) and commit in str(refused.value)


GUARDED = """\
from typing import TypeGuard


def _nat(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def first(body: dict[str, object]) -> int:
    seq = body.get("seq")
    if not _nat(seq) or seq < 1:
        raise ValueError("seq")
    return seq


class Box:
    def twice(self, n: int) -> int:
        return n * 2
"""
# as mutmut writes them beside the original (only the mutants' functions matter here)
GUARDED_MUTANTS = """\
def x_first__mutmut_1(body: dict[str, object]) -> int:
    seq = body.get("XXseqXX")
    if not _nat(seq) or seq < 1:
        raise ValueError("seq")
    return seq


def x_first__mutmut_2(body: dict[str, object]) -> int:
    seq = body.get("seq")
    if not _nat(seq) or seq < 1:
        raise ValueError("seq")
    return None


class Box:
    def xǁBoxǁtwice__mutmut_1(self, n: int) -> int:
        return n / 2
"""


def test_the_type_check_applies_each_mutant_to_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mypy --strict refuses the mutants that break the module's types, and only those: the one
    that keeps a TypeGuard's narrowing passes (over mutmut's trampolined file it would not)."""
    names = ["eukhe.guard.x_first__mutmut_1", "eukhe.guard.x_first__mutmut_2", "eukhe.guard.xǁBoxǁtwice__mutmut_1"]
    (tmp_path / "impl" / "eukhe").mkdir(parents=True)
    (tmp_path / "impl" / "eukhe" / "__init__.py").write_text("")
    (tmp_path / "impl" / "eukhe" / "guard.py").write_text(GUARDED)
    (tmp_path / "mutants" / "eukhe").mkdir(parents=True)
    (tmp_path / "mutants" / "eukhe" / "guard.py").write_text(GUARDED_MUTANTS)
    (tmp_path / "mutants" / "eukhe" / "guard.py.meta").write_text(json.dumps({"exit_code_by_key": {n: None for n in names}}))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mypy]\nstrict = true\nmypy_path = ["impl", "."]\nexplicit_package_bases = true\n'
    )
    monkeypatch.chdir(tmp_path)
    refused = mutate_types.check(tmp_path)
    assert sorted(refused) == names[1:], refused
    assert "Incompatible return value type" in refused[names[1]][2]
    assert refused[names[2]][:2] == (tmp_path / "mutants" / "eukhe" / "guard.py", 16)  # the line of the mutant's def
    assert mutate_types.check(tmp_path) == refused  # the kept verdicts
    assert mutate_types.split_name(names[2]) == ("eukhe.guard", "xǁBoxǁtwice__mutmut_1", "Box", "twice")


STOPPING = """
import sys, threading, time
import redis
from rq import Queue
from spec.mutate_queue import QueueWorker

connection = redis.Redis.from_url(sys.argv[1])
worker = QueueWorker([Queue("eukhe-mutate-stopping", connection=connection)], connection=connection, name="stopping")
worker.subscribe()
worker.pubsub.unsubscribe()
while worker.pubsub.subscribed:  # until the pubsub thread reads the reply: then it waits for a subscription
    time.sleep(0.01)
stop = threading.Thread(target=worker.unsubscribe, daemon=True)
stop.start()
stop.join(float(sys.argv[2]))
print("still stopping" if stop.is_alive() else "stopped", flush=True)
"""


def test_a_worker_stops_without_waiting_for_its_pubsub_thread(queue_url: str) -> None:
    """rq unsubscribes a stopping worker and then joins its pubsub thread, which, once unsubscribed,
    waits up to 60 s for a new subscription: CI saw a worker take over 60 s to stop. The thread is
    brought to that wait first; QueueWorker's unsubscribe must return without it."""
    run = subprocess.run(
        [sys.executable, "-c", STOPPING, queue_url, str(STOP_SECONDS)],
        cwd=ROOT, env=_env(None), capture_output=True, text=True, timeout=STOP_SECONDS + 60, check=False,
    )
    assert (run.returncode, run.stdout) == (0, "stopped\n"), run.stderr[-3000:]
