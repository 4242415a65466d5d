"""The tiny election bridge: interleavings of several real processes and workers on one socket
(inference.md S9 worker 1-6; the seed's bridge/bridge_tiny.bend "stays for the interleaving
only: several processes and workers on one socket over time").

A scenario is a sequence of needs (a process p1..p3 wants the worker with a launch tag; some
then send a request the worker holds in flight), releases of held requests, and exits of the
seated worker. The model side is ``bend.tiny.transcript``. The production side runs each
process as a real ``python -m bridge._tiny_driver`` with a real ``TinyClient``; workers are
real processes with the fake (echo) engine, started by production's ``launch``; an exit is
SIGTERM to the seated worker. It prints what it observed: the outcome each client reported,
which worker (numbered by the order its pid first appeared) answered, and which workers ended
(waited for on a pidfd, never by timing).

Scenarios 0..2 are the first ones (7-11 steps each; their workers are ``eukhe tiny-worker``
itself). SHORT_FIRST.. are short: 2-4 steps, often a join, about 1.7 worker starts each, and
their first event says ``"launch": "module"``: their workers are ``python -m
bridge._tiny_worker``, the same ``eukhe.tiny.worker.run`` without the command line's imports
(a start costs about a quarter of the CPU). The short ones alone reach every rule case and
input class. A worker holds the requests of several processes in flight at once, and they
are released in any order (S9: a replaced worker "finishes other processes' in-flight requests";
the model's free inputs: "any order").

The processes p1..p3 (``_Pool``, one per thread) live from one scenario to the next: a scenario
starts only its workers, and its processes close their clients at its end; ``finish`` (the end
of a replay) ends them.

No read from a child process waits without a deadline (DEADLINE): a driver's answer, the FIFO
that says a worker holds a request, the reader of the FIFO that releases it, a process's exit. A
read that passes it fails with ``Stuck``, naming the process and what it waited for; the
scenario's workers and the thread's processes are then ended (SIGKILL after the deadline), so
nothing is left behind and the next scenario starts new processes.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend import tiny as model
from bridge.core import Bridge, Event, Stuck
from eukhe.tiny import paths

PROCESSES = ("p1", "p2", "p3")
TAGS = ("q4", "fp16", "fp32")
MODEL = "echo-bridge"
COUNT = 300
SHORT_FIRST = 3
DEADLINE = 60.0  # seconds: a hang guard on every read from a child process, never part of a result


def generate(index: int) -> list[Event]:
    """Scenario ``index``: needs of random processes and tags (some holding a request), releases
    and exits. A short one (SHORT_FIRST..) has 2-4 steps, often needs the tag of the need before
    (a join: no worker to start) and starts its workers without the command line (``launch``)."""
    rng = random.Random(f"tiny-{index}")
    short = index >= SHORT_FIRST
    events: list[Event] = []
    world = model.World()
    holding: set[str] = set()
    last: str | None = None
    for _ in range(rng.randrange(2, 5) if short else rng.randrange(7, 12)):
        free = [p for p in PROCESSES if p not in holding]
        roll = rng.random()
        if holding and roll < 0.25:
            process = rng.choice(sorted(holding))
            done = model.release(world, process)
            assert done is not None
            world = done[0]
            holding.discard(process)
            events.append({"do": "release", "proc": process})
            continue
        if roll < 0.35 and model.exit_worker(world) is not None:
            world = model.exit_worker(world)[0]  # type: ignore[index]
            events.append({"do": "exit"})
            continue
        if not free:
            continue
        process = rng.choice(free)
        tag = rng.choice(TAGS)
        if short and last is not None and rng.random() < 0.4:
            tag = last
        last = tag
        event: Event = {"do": "need", "proc": process, "tag": tag}
        world = model.need(world, tag)[0]
        seated = model.current(world)
        if rng.random() < 0.35 and seated is not None:
            held = model.hold(world, process)
            if held is not None:
                world = held
                holding.add(process)
                event["hold"] = True
        events.append(event)
    for process in sorted(holding):
        events.append({"do": "release", "proc": process})
    if short:
        events[0]["launch"] = "module"
    return events


def _wait_exit(pid: int, limit: float | None = None) -> bool:
    """Whether process ``pid`` ended within ``limit`` seconds (DEADLINE by default)."""
    limit = DEADLINE if limit is None else limit
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], limit)
        return bool(ready)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    return not _wait_exit(pid, 0)


class _Measured:
    """Under coverage (``coverage run ... -m pytest``), the bridge's real processes are measured
    too: the drivers and the workers they start get ``COVERAGE_PROCESS_START`` (an rc file with
    the running measurement's branch and source settings, parallel data files in a temp dir) and
    a ``sitecustomize`` on their ``PYTHONPATH`` that calls ``coverage.process_startup()``; when
    their pool closes (its processes have ended, and every scenario's workers), their data is
    merged into the running measurement (saved with it). Without coverage running this does
    nothing."""

    def __init__(self) -> None:
        self.env: dict[str, str] = {}
        self.where: Path | None = None
        self.cov: Any = None
        try:
            import coverage
        except ImportError:  # coverage is a dev dependency
            return
        self.cov = coverage.Coverage.current()
        if self.cov is None:
            return
        self.where = Path(tempfile.mkdtemp(prefix="ekcov", dir="/tmp"))
        config = self.cov.config
        source = "".join(f"\n    {os.path.abspath(s)}" for s in (config.source or []))
        rc = self.where / "coveragerc"
        rc.write_text(f"[run]\nbranch = {bool(config.branch)}\nparallel = True\ndata_file = {self.where / 'data'}\nsource ={source}\n", encoding="utf-8")
        site = self.where / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text("import coverage\n\ncoverage.process_startup()\n", encoding="utf-8")
        path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
        self.env = {"COVERAGE_PROCESS_START": str(rc), "PYTHONPATH": path}

    def merge(self) -> None:
        if self.where is None or self.cov is None:
            return
        import coverage

        with _MERGING:  # runs replay on threads (the external-model test)
            data = self.cov.get_data()
            for part_file in sorted(self.where.glob("data.*")):
                part = coverage.CoverageData(basename=str(part_file))
                part.read()
                data.update(part)
        shutil.rmtree(self.where, ignore_errors=True)


_MERGING = threading.Lock()


def _deadline_passed(end: float) -> bool:
    return time.monotonic() >= end


class _Driver:
    """One process (``python -m bridge._tiny_driver``): commands on its stdin, one answer line
    each on its stdout, read with a deadline."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bridge._tiny_driver", MODEL],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self.process.stdout is not None
        self.out = self.process.stdout.fileno()
        self.buffer = b""

    def ask(self, command: str, waits_for: str) -> str:
        """The answer line to ``command``; Stuck after DEADLINE, naming ``waits_for``."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(command.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise Stuck(f"tiny: {self.name} exited (status {self.process.poll()}) before {command!r}") from None
        end = time.monotonic() + DEADLINE
        while b"\n" not in self.buffer:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.out], [], [], left)[0]:
                raise Stuck(f"tiny: {self.name} gave no answer to {command!r} within {DEADLINE:.0f} s (it waited for {waits_for})")
            chunk = os.read(self.out, 65536)
            if not chunk:
                raise Stuck(f"tiny: {self.name} closed its output (status {self.process.wait()}) before answering {command!r} ({waits_for})")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8").strip()

    def close(self) -> str:
        """End the process: EOF on its stdin, then its exit within DEADLINE (else SIGKILL)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            self.process.wait(timeout=DEADLINE)
            problem = ""
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            problem = f"{self.name} did not exit within {DEADLINE:.0f} s of the end of its input (killed)"
        self.process.stdout.close()
        return problem


def _await_received(fd: int, fifo: Path, process: str) -> None:
    """Wait until the worker opened and closed ``fifo`` (it holds the request), within DEADLINE.
    ``fd`` is ``fifo`` opened for reading without blocking before the request was sent: such a
    reader sees a hangup only once a writer that came after it has gone (Linux)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    end = time.monotonic() + DEADLINE
    while True:
        left = end - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            raise Stuck(f"tiny: the worker serving {process} did not open {fifo} within {DEADLINE:.0f} s (the held request never arrived)")
        if not os.read(fd, 4096):
            return


def _release(fifo: Path, what: str, deadline: float | None = None) -> None:
    """Open ``fifo`` for writing once its reader (the worker holding the request) has it open,
    then close it: the reader sees its end. Stuck when no reader came within ``deadline``
    (DEADLINE by default)."""
    deadline = DEADLINE if deadline is None else deadline
    end = time.monotonic() + deadline
    pause = 0.0005
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            if error.errno != errno.ENXIO:
                raise
            if _deadline_passed(end):
                raise Stuck(f"tiny: nobody opened {fifo} to wait for its release within {deadline:.0f} s ({what})") from None
            time.sleep(pause)  # the worker opens it right after the FIFO it was received by
            pause = min(pause * 2, 0.05)
            continue
        os.close(fd)
        return


class _Pool:
    """The processes p1..p3 of one thread, kept from one scenario to the next: a scenario tells
    each process it uses its agent dir and how its workers start (``use``), and ends with ``end``,
    so it starts only its workers. Under coverage the pool's processes and their workers are
    measured in the pool's directory, merged when the pool closes (``finish``, at the end of a
    replay, or at exit). A scenario that fails closes its thread's pool."""

    def __init__(self) -> None:
        self.measured = _Measured()
        # OPENBLAS_NUM_THREADS=1: numpy, which every worker imports (eukhe.tiny.engine), then starts
        # no BLAS thread pool; the echo engine never computes, so only the start gets cheaper
        # (about a third of a worker's start on two busy cores)
        self.env = {**os.environ, "EUKHE_TINY_WORKER_IDLE_MS": "600000", "OPENBLAS_NUM_THREADS": "1", **self.measured.env}
        self.drivers: dict[str, _Driver] = {}

    def driver(self, process: str) -> _Driver:
        if process not in self.drivers:
            self.drivers[process] = _Driver(process, self.env)
        return self.drivers[process]

    def close(self) -> list[str]:
        problems = [driver.close() for driver in self.drivers.values()]
        self.drivers.clear()
        self.measured.merge()
        return [p for p in problems if p]


_LOCAL = threading.local()
_POOLS: list[_Pool] = []
_POOLS_LOCK = threading.Lock()


def _pool() -> _Pool:
    pool: _Pool | None = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = _Pool()
        with _POOLS_LOCK:
            _POOLS.append(pool)
    return pool


def _drop_pool() -> list[str]:
    """Close this thread's pool (its processes end, their measurement is merged)."""
    pool: _Pool | None = getattr(_LOCAL, "pool", None)
    if pool is None:
        return []
    _LOCAL.pool = None
    with _POOLS_LOCK:
        if pool in _POOLS:
            _POOLS.remove(pool)
    return pool.close()


def finish() -> None:
    """The end of a replay: this thread's processes end; Stuck when one does not."""
    problems = _drop_pool()
    if problems:
        raise Stuck("tiny: " + "; ".join(problems))


@atexit.register
def _close_pools() -> None:
    with _POOLS_LOCK:
        pools = list(_POOLS)
        _POOLS.clear()
    for pool in pools:
        pool.close()


class _Run:
    def __init__(self, launch: str) -> None:
        self.launch = launch
        self.pool = _pool()
        self.agent_dir = Path(tempfile.mkdtemp(prefix="ekb", dir="/tmp"))
        where = paths.model_dir(self.agent_dir, MODEL)
        where.mkdir(parents=True)
        (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
        self.used: list[str] = []  # the processes of this scenario, in order of first use
        self.numbers: dict[int, int] = {}  # worker pid -> number in order of first sight
        self.seated: int | None = None  # pid of the worker the last need was served by
        self.held: dict[str, tuple[int, Path]] = {}  # process -> (worker pid, hold dir)

    def start(self, process: str) -> _Driver:
        """``process``'s driver, told this scenario's agent dir and launch at its first use."""
        driver = self.pool.driver(process)
        if process not in self.used:
            self.used.append(process)
            said = driver.ask(f"use {self.agent_dir} {self.launch}", "the start of a scenario")
            assert said == "ok", said
        return driver

    def ask(self, process: str, command: str, waits_for: str) -> str:
        return self.start(process).ask(command, waits_for)

    def number(self, pid: int) -> int:
        return self.numbers.setdefault(pid, len(self.numbers) + 1)

    def ended(self, pid: int) -> str:
        """`; worker k exited` once the process ended, else what went wrong."""
        if any(w == pid for w, _ in self.held.values()):
            return "" if _alive(pid) else f"; worker {self.number(pid)} died holding a request"
        return f"; worker {self.number(pid)} exited" if _wait_exit(pid) else f"; worker {self.number(pid)} did not exit"

    def close(self, failed: bool) -> None:
        """End the scenario: its processes close their clients (``end``), its workers end
        (SIGTERM; SIGKILL after DEADLINE). After a failure, requests still held are released
        first and the thread's pool is closed (its processes end, killed after DEADLINE); after a
        clean run a process or worker that does not end is a Stuck error."""
        problems: list[str] = []
        for process, (_pid, hold) in sorted(self.held.items()):
            try:
                _release(hold / "release", f"cleanup of {process}'s held request", 1.0)
            except (Stuck, OSError):
                pass
            shutil.rmtree(hold, ignore_errors=True)
        if not failed:
            for process in self.used:
                try:
                    said = self.pool.driver(process).ask("end", "closing its client")
                except Stuck as error:
                    said = str(error)
                if said != "ok":
                    problems.append(said)
        for pid, number in self.numbers.items():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            if not _wait_exit(pid):
                problems.append(f"worker {number} (pid {pid}) did not exit within {DEADLINE:.0f} s of SIGTERM (killed)")
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _wait_exit(pid)
        shutil.rmtree(self.agent_dir, ignore_errors=True)
        if failed:
            _drop_pool()
        elif problems:
            _drop_pool()
            raise Stuck("tiny: " + "; ".join(problems))


def production(events: Sequence[Event]) -> list[str]:
    """The production transcript; workers start as ``eukhe tiny-worker`` unless the first event
    says ``"launch": "module"`` (``bridge._tiny_worker``; the model ignores the key)."""
    run = _Run("module" if events and events[0].get("launch") == "module" else "cli")
    lines = []
    failed = True
    try:
        for number, event in enumerate(events):
            kind = event["do"]
            if kind == "need":
                process, tag = str(event["proc"]), str(event["tag"])
                outcome, pid_text = run.ask(process, f"need {tag}", "its election: ping, shutdown, the launched worker's first line, check").split()
                pid = int(pid_text)
                before = run.seated
                run.seated = pid
                line = f"{number} need {process} {tag} -> {outcome} worker {run.number(pid)}"
                if before is not None and before != pid:
                    line += run.ended(before)
                if event.get("hold"):
                    hold = Path(tempfile.mkdtemp(prefix="ekh", dir="/tmp"))
                    os.mkfifo(hold / "received")
                    os.mkfifo(hold / "release")
                    run.held[process] = (pid, hold)
                    received = os.open(hold / "received", os.O_RDONLY | os.O_NONBLOCK)
                    try:
                        run.ask(process, f"hold {hold}", "starting the request's thread")
                        _await_received(received, hold / "received", process)
                    finally:
                        os.close(received)
                    line += "; held"
            elif kind == "release":
                process = str(event["proc"])
                pid, hold = run.held.pop(process)
                _release(hold / "release", f"{process}'s request held by worker {run.number(pid)}")
                answer, served = run.ask(process, "wait", "the answer to its held request").rsplit(" ", 1)
                shutil.rmtree(hold, ignore_errors=True)
                line = f"{number} release {process} -> answered by worker {run.number(int(served))}"
                if answer != f"hold:{hold}":
                    line += f"; answer {answer!r}"
                if int(served) != run.seated:
                    line += run.ended(int(served))
            else:
                seated = run.seated
                assert seated is not None, "an exit with no seated worker"
                os.kill(seated, signal.SIGTERM)
                run.seated = None
                line = f"{number} exit -> worker {run.number(seated)} " + ("exited" if _wait_exit(seated) else "did not exit")
            lines.append(line)
        failed = False
    finally:
        run.close(failed)
    return lines


CASES = frozenset(
    {
        "started",
        "joined",
        "replaced",
        "a replaced worker drains a held request, then exits",
        "a replaced worker holding nothing exits at once",
        "a held request answered by the seated worker",
        "an exit, then a start",
        # input classes (S9 "free inputs": needs of any processes and tags, worker exits, any
        # order): every process and every tag, all of them in one scenario, requests held at once
        # and released in another order, a need while a request is held, replaced workers
        # draining side by side
        *(f"class: a need from {process}" for process in PROCESSES),
        *(f"class: a need of tag {tag}" for tag in TAGS),
        "class: three processes",
        "class: three tags",
        "class: two requests held at once",
        "class: one worker holds two requests at once",
        "class: releases in another order than their holds",
        "class: a need while another process holds a request",
        "class: two replaced workers draining at once",
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    world = model.World()
    exited = False
    for event in events:
        kind = event["do"]
        if kind == "need":
            cases.add(f"class: a need from {event['proc']}")
            cases.add(f"class: a need of tag {event['tag']}")
            if any(process != event["proc"] for process, _ in world.holds):
                cases.add("class: a need while another process holds a request")
            world, outcome, _, gone = model.need(world, str(event["tag"]))
            cases.add(outcome)
            if outcome == model.REPLACED and gone:
                cases.add("a replaced worker holding nothing exits at once")
            if outcome == model.STARTED and exited:
                cases.add("an exit, then a start")
            if event.get("hold"):
                world = model.hold(world, str(event["proc"])) or world
            if len(world.holds) >= 2:
                cases.add("class: two requests held at once")
            if any(len(worker.inflight) >= 2 for worker in world.workers):
                cases.add("class: one worker holds two requests at once")
            if sum(1 for worker in world.workers if not worker.seated) >= 2:
                cases.add("class: two replaced workers draining at once")
        elif kind == "release":
            if world.holds and world.holds[0][0] != event["proc"]:
                cases.add("class: releases in another order than their holds")
            seated = model.current(world)
            done = model.release(world, str(event["proc"]))
            assert done is not None
            world, serving, gone = done
            if gone:
                cases.add("a replaced worker drains a held request, then exits")
            elif seated is not None and serving == seated.number:
                cases.add("a held request answered by the seated worker")
        else:
            gone_world = model.exit_worker(world)
            assert gone_world is not None
            world = gone_world[0]
            exited = True
    if {e.get("proc") for e in events if e["do"] == "need"} >= set(PROCESSES):
        cases.add("class: three processes")
    if {e.get("tag") for e in events if e["do"] == "need"} >= set(TAGS):
        cases.add("class: three tags")
    return cases


BRIDGE = Bridge(
    area="tiny",
    count=COUNT,
    generate=generate,
    model=model.transcript,
    production=production,
    cases=CASES,
    reached=reached,
    finish=finish,
)
