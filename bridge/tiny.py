"""The tiny election bridge: interleavings of several real processes and workers on one socket
(inference.md S9 worker 1-6; the seed's bridge/bridge_tiny.bend "stays for the interleaving
only: several processes and workers on one socket over time").

A scenario is a sequence of needs (a process p1..p3 wants the worker with a launch tag; some
then send a request the worker holds in flight), releases of held requests, and exits of the
seated worker. The model side is ``bend.tiny.transcript``. The production side runs each
process as a real ``python -m bridge._tiny_driver`` with a real ``TinyClient``; workers are
real ``eukhe tiny-worker`` processes with the fake (echo) engine; an exit is SIGTERM to the
seated worker. It prints what it observed: the outcome each client reported, which worker
(numbered by the order its pid first appeared) answered, and which workers ended (waited for
on a pidfd, never by timing).
"""

from __future__ import annotations

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bend import tiny as model
from bridge.core import Bridge, Event
from eukhe.tiny import paths

PROCESSES = ("p1", "p2", "p3")
TAGS = ("q4", "fp16", "fp32")
MODEL = "echo-bridge"
COUNT = 3


def generate(index: int) -> list[Event]:
    rng = random.Random(f"tiny-{index}")
    events: list[Event] = []
    world = model.World()
    holding: set[str] = set()
    for _ in range(rng.randrange(7, 12)):
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
        event: Event = {"do": "need", "proc": process, "tag": tag}
        world = model.need(world, tag)[0]
        if rng.random() < 0.35:
            held = model.hold(world, process)
            if held is not None:
                world = held
                holding.add(process)
                event["hold"] = True
        events.append(event)
    for process in sorted(holding):
        events.append({"do": "release", "proc": process})
    return events


def _wait_exit(pid: int, limit: float = 60.0) -> bool:
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
    a ``sitecustomize`` on their ``PYTHONPATH`` that calls ``coverage.process_startup()``; once
    they have exited, their data is merged into the running measurement (saved with it). Without
    coverage running this does nothing."""

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


class _Run:
    def __init__(self) -> None:
        self.agent_dir = Path(tempfile.mkdtemp(prefix="ekb", dir="/tmp"))
        where = paths.model_dir(self.agent_dir, MODEL)
        where.mkdir(parents=True)
        (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")
        self.drivers: dict[str, subprocess.Popen[str]] = {}
        self.numbers: dict[int, int] = {}  # worker pid -> number in order of first sight
        self.seated: int | None = None  # pid of the worker the last need was served by
        self.held: dict[str, tuple[int, Path]] = {}  # process -> (worker pid, hold dir)
        self.measured = _Measured()
        self.env = {**os.environ, "EUKHE_TINY_WORKER_IDLE_MS": "600000", **self.measured.env}

    def driver(self, process: str) -> subprocess.Popen[str]:
        if process not in self.drivers:
            self.drivers[process] = subprocess.Popen(
                [sys.executable, "-m", "bridge._tiny_driver", str(self.agent_dir), MODEL],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=self.env,
            )
        return self.drivers[process]

    def ask(self, process: str, command: str) -> str:
        d = self.driver(process)
        assert d.stdin is not None and d.stdout is not None
        d.stdin.write(command + "\n")
        d.stdin.flush()
        return d.stdout.readline().strip()

    def number(self, pid: int) -> int:
        return self.numbers.setdefault(pid, len(self.numbers) + 1)

    def ended(self, pid: int) -> str:
        """`; worker k exited` once the process ended, else what went wrong."""
        if any(w == pid for w, _ in self.held.values()):
            return "" if _alive(pid) else f"; worker {self.number(pid)} died holding a request"
        return f"; worker {self.number(pid)} exited" if _wait_exit(pid) else f"; worker {self.number(pid)} did not exit"

    def close(self) -> None:
        for d in self.drivers.values():
            if d.stdin is not None:
                d.stdin.close()
            d.wait(timeout=60)
        for pid in self.numbers:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            _wait_exit(pid)
        shutil.rmtree(self.agent_dir, ignore_errors=True)
        self.measured.merge()


def production(events: Sequence[Event]) -> list[str]:
    run = _Run()
    lines = []
    try:
        for number, event in enumerate(events):
            kind = event["do"]
            if kind == "need":
                process, tag = str(event["proc"]), str(event["tag"])
                outcome, pid_text = run.ask(process, f"need {tag}").split()
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
                    run.ask(process, f"hold {hold}")
                    with open(hold / "received", encoding="utf-8") as received:  # the worker has it
                        received.read()
                    run.held[process] = (pid, hold)
                    line += "; held"
            elif kind == "release":
                process = str(event["proc"])
                pid, hold = run.held.pop(process)
                with open(hold / "release", "w", encoding="utf-8"):
                    pass
                answer, served = run.ask(process, "wait").rsplit(" ", 1)
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
    finally:
        run.close()
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
        "class: three processes",
        "class: three tags",
    }
)


def reached(events: Sequence[Event]) -> set[str]:
    cases: set[str] = set()
    world = model.World()
    exited = False
    for event in events:
        kind = event["do"]
        if kind == "need":
            world, outcome, _, gone = model.need(world, str(event["tag"]))
            cases.add(outcome)
            if outcome == model.REPLACED and gone:
                cases.add("a replaced worker holding nothing exits at once")
            if outcome == model.STARTED and exited:
                cases.add("an exit, then a start")
            if event.get("hold"):
                world = model.hold(world, str(event["proc"])) or world
        elif kind == "release":
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
)
