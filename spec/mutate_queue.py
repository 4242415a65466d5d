"""`make mutate QUEUE=redis://HOST:PORT`: the mutants of a run farmed to workers through a task
queue (RQ on Redis: the server the hunts already share), each worker in its own checkout.

A whole memory run is about a day on two cores; its mutants are independent, so any number of
machines can judge them side by side. The coordinator (``python -m spec.mutate --queue URL
[--area ..] [--mutants ..|--sample N|--rest N] [--batch N]``, in a checkout whose tracked files
are those of its commit) lays the area's workspace as the one-process run does, generates the
mutants (mutmut's own generation, nothing run), chooses the same mutants it would judge (those
named, the seeded sample, the draw from the rest, or for a whole run every one not judged yet),
and enqueues them in jobs: a job is a batch of mutant names of one area at one commit (sorted,
so a batch's mutants share their functions and so their judges). It waits for the verdicts and
writes them into its own workspace's results (mutmut's .meta files), where ``write`` and
``record`` read them exactly as after a one-process run: build/mutation.json, and
spec/mutation_scores.json with ``--record`` (with, beside the run's settings, which workers
judged how many mutants).

A worker (``python -m spec.mutate worker --queue URL --checkout DIR``, ``make mutate-worker``)
runs in its own checkout (a git clone or worktree; it runs the checkout's own code, and refuses
to start on tracked files that differ from the checkout's commit). It listens on the queue of
its checkout's commit only (``eukhe-mutate-<commit>``), so a worker at another commit never takes
a job of this run; and it refuses a job whose commit is not its checkout's HEAD (a checkout moved
under a running worker) or whose tools (mutmut, mypy, Hypothesis, pytest, Python) are not its
own, naming both: the job fails there and is retried once, by any worker. A job is judged with
the same machinery as the one-process run: the area's workspace in the worker's checkout
(build/mutate/<area>/, laid by ``spec.mutate.prepare_area``) and ``mutmut run`` of the batch's
names there (its stats pass once per workspace, its clean run of the batch's judges, the type
check, then a forked child per mutant); the verdicts are mutmut's exit codes read back from the
workspace, with each mutant's seconds and the type checker's message.

Why RQ and not Celery: a job here is one function call on a batch of names that returns a small
JSON document, and the queue must be the Redis server already shared by the hunts; RQ is that
and no more (jobs, a worker that forks a process per job and beats a heartbeat while it runs,
retry of a job whose worker died, JSON serialization), with types of its own (py.typed), and no
broker or result-backend settings to keep apart. Celery would add a second configuration and
pickled or signed messages for no feature this needs.

A worker that dies mid-job stops beating its heartbeat: its job is found abandoned (by the
coordinator, which sweeps the queue's started jobs while it waits) and retried once. A job that
fails (mutmut's clean run failing, a refusal, a timeout: ``--job-timeout``) ends the run: the
coordinator cancels the jobs not started, stops the ones running, prints why, and exits 1; the
verdicts already in stay in its workspace.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from importlib.metadata import version
from pathlib import Path
from typing import Any

import redis
from rq import Queue, Retry, Worker
from rq.command import send_stop_job_command
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from spec import mutate
from spec.binding import ROOT

QUEUE_PREFIX = "eukhe-mutate"
RETRIES = 1  # a job whose worker died, or that failed, is enqueued again once
POLL_SECONDS = 0.5  # the coordinator looks at its jobs this often
SWEEP_SECONDS = 30.0  # and at the queue's started jobs (abandoned by a dead worker) this often
RESULT_TTL = 7 * 24 * 3600  # verdicts and failures stay in Redis a week
REEXEC = "EUKHE_MUTATE_WORKER_IN_CHECKOUT"  # set once a worker has moved into its checkout

# This worker's settings (worker_main), read by the jobs it runs (forked from it).
WORKER: dict[str, Any] = {}


class Refused(RuntimeError):
    """A worker refuses a job that is not for its checkout: another commit, or other tools."""


def queue_name(commit: str) -> str:
    """The queue of one commit: only workers whose checkout is at it listen there."""
    return f"{QUEUE_PREFIX}-{commit}"


def head(checkout: Path) -> str:
    """The checkout's commit (full)."""
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout} is not a git checkout: {done.stderr.strip()}")
    return done.stdout.strip()


def uncommitted(checkout: Path) -> list[str]:
    """The tracked files of the checkout that differ from its commit."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=checkout, capture_output=True, text=True, check=True
    )
    return [line[3:] for line in done.stdout.splitlines() if line.strip()]


def tools() -> dict[str, str]:
    """What decides a verdict besides the commit: the mutation engine (its mutant names), the type
    checker, the test runner and Hypothesis (the judges' examples), and Python."""
    found = {name: version(name) for name in ("mutmut", "mypy", "hypothesis", "pytest")}
    found["python"] = f"{sys.version_info.major}.{sys.version_info.minor}"
    return found


def read_verdicts(space: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """The named mutants' verdicts in a workspace (mutmut's .meta files): exit code, seconds
    (when its judges ran) and the type checker's message (when it refused the mutant)."""
    found: dict[str, dict[str, Any]] = {}
    wanted = set(names)
    for meta in sorted((space / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, code in data.get("exit_code_by_key", {}).items():
            if name in wanted:
                found[name] = {
                    "exit_code": code,
                    "seconds": data.get("durations_by_key", {}).get(name),
                    "type_error": data.get("type_check_error_by_key", {}).get(name),
                }
    return found


def merge_verdicts(space: Path, verdicts: dict[str, dict[str, Any]]) -> None:
    """Write verdicts judged elsewhere into a workspace's .meta files, as mutmut writes its own."""
    owners: dict[str, Path] = {}
    metas: dict[Path, dict[str, Any]] = {}
    for meta in sorted((space / "mutants").rglob("*.py.meta")):
        metas[meta] = json.loads(meta.read_text(encoding="utf-8"))
        owners.update({name: meta for name in metas[meta].get("exit_code_by_key", {})})
    unknown = sorted(set(verdicts) - set(owners))
    if unknown:
        raise RuntimeError(f"verdicts for mutants this tree does not have: {', '.join(unknown[:5])}")
    changed: set[Path] = set()
    for name, verdict in verdicts.items():
        data = metas[owners[name]]
        data["exit_code_by_key"][name] = verdict["exit_code"]
        if verdict.get("seconds") is not None:
            data.setdefault("durations_by_key", {})[name] = verdict["seconds"]
        if verdict.get("type_error") is not None:
            data.setdefault("type_check_error_by_key", {})[name] = verdict["type_error"]
        changed.add(owners[name])
    for meta in sorted(changed):
        meta.write_text(json.dumps(metas[meta], indent=4), encoding="utf-8")


# -- the job, run by a worker in its checkout -------------------------------------------------


def judge(job: dict[str, Any]) -> dict[str, Any]:
    """Judge a batch of mutants in this worker's checkout (ROOT) with mutmut, as the one-process
    run does; refuse a batch of another commit or of other tools, naming both."""
    commit = head(ROOT)
    if job["commit"] != commit:
        raise Refused(f"job for commit {job['commit']} refused: this worker's checkout {ROOT} is at {commit}")
    changed = uncommitted(ROOT)
    if changed:
        raise Refused(f"job for commit {commit} refused: this worker's checkout {ROOT} has changes to {', '.join(changed[:5])}")
    mine = tools()
    if job["tools"] != mine:
        raise Refused(f"job refused: it was made with {job['tools']}, this worker ({ROOT}) has {mine}")
    area, names, only = str(job["area"]), [str(n) for n in job["mutants"]], job.get("only")
    started = time.monotonic()
    space, _ = mutate.prepare_area(area, list(job["judges"]), names, only, check=False)
    log = space / "worker.log"
    code = mutate.run_mutmut(space, int(WORKER.get("max_children") or os.cpu_count() or 2), names, log)
    if code != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-30:])
        raise RuntimeError(f"mutmut run exited {code} in {space} (its output: {log}):\n{tail}")
    verdicts = read_verdicts(space, names)
    missing = [n for n in names if n not in verdicts]
    if missing:
        raise RuntimeError(f"mutants this checkout's mutmut does not have: {', '.join(missing[:5])}")
    stats = space / "mutants" / "mutmut-stats.json"
    stats_time = json.loads(stats.read_text(encoding="utf-8")).get("stats_time") if stats.exists() else None
    return {
        "commit": commit,
        "worker": str(WORKER.get("name") or os.environ.get("RQ_WORKER_ID") or socket.gethostname()),
        "verdicts": verdicts,
        "seconds": round(time.monotonic() - started, 1),
        "stats_pass_cpu_s": None if stats_time is None else round(float(stats_time), 1),
    }


# -- the worker ------------------------------------------------------------------------------


class QueueWorker(Worker):
    def unsubscribe(self) -> None:
        """Tell the server this worker's channel is gone, and let the process end without waiting
        for the pubsub thread. rq unsubscribes and then joins that thread; once unsubscribed, the
        thread waits up to 60 s for a new subscription (rq's sleep_time), so a worker asked to stop
        could take a minute to. The thread is a daemon: it ends with the process."""
        if self.pubsub_thread:
            self.pubsub.unsubscribe()


def worker_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spec.mutate worker",
        description="judge mutants from the task queue in a checkout of the commit the run judges",
    )
    parser.add_argument("--queue", required=True, metavar="redis://HOST:PORT[/DB]", help="the Redis server of the task queue")
    parser.add_argument("--checkout", default=".", type=Path, help="this worker's own checkout (a git clone or worktree)")
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 2, help="mutants judged side by side")
    parser.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    parser.add_argument("--debug", action="store_true", help="mutmut's debug output, in build/mutate/<area>/worker.log")
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    if checkout != ROOT.resolve():
        # Run the checkout's own code (its spec/ lays the workspace from its tracked files).
        if os.environ.get(REEXEC) == str(checkout):
            raise SystemExit(f"worker: the code run from {checkout} is still {ROOT}'s: is PYTHONPATH set elsewhere?")
        path = os.pathsep.join([str(checkout / "impl"), str(checkout), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = dict(os.environ, PYTHONPATH=path, **{REEXEC: str(checkout)})
        again = ["-m", "spec.mutate", "worker", "--queue", args.queue, "--checkout", str(checkout)]
        again += ["--max-children", str(args.max_children)] + ["--burst"] * args.burst + ["--debug"] * args.debug
        os.chdir(checkout)
        os.execve(sys.executable, [sys.executable, *again], env)
    changed = uncommitted(ROOT)
    if changed:
        print(f"worker: {ROOT} has changes to tracked files ({', '.join(changed[:5])}): a worker judges its checkout's commit", file=sys.stderr)
        return 2
    connection = redis.Redis.from_url(args.queue)
    try:
        connection.ping()
    except redis.exceptions.RedisError as error:
        print(f"worker: no Redis answers at {args.queue}: {error}", file=sys.stderr)
        return 1
    commit = head(ROOT)
    name = f"{socket.gethostname()}.{os.getpid()}"
    WORKER.update(max_children=args.max_children, name=name)
    mutate.DEBUG = args.debug
    queue = Queue(queue_name(commit), connection=connection, serializer=JSONSerializer)
    worker = QueueWorker([queue], connection=connection, name=name, serializer=JSONSerializer)
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # `kill -USR1`: where a stuck worker is, on its stderr
    print(f"mutation worker {name}: checkout {ROOT} at {commit}, listening on {queue.name} at {args.queue}", flush=True)
    worker.work(burst=args.burst, logging_level="INFO")
    return 0


# -- the coordinator -------------------------------------------------------------------------


def run_queued(
    url: str, area: str, judges: list[str], mutants: list[str] | None = None, only: list[str] | None = None,
    sample: tuple[int, int] | None = None, rest: tuple[int, int] | None = None, *, batch: int = 40,
    job_timeout: int = 4 * 3600, deadline: float | None = None,
) -> int:
    """Judge the area's mutants (chosen as run_area chooses them) by workers through the queue;
    their verdicts go into this tree's workspace. 0 when every job came back, else 1 (2: this
    tree is not its commit)."""
    record = str(mutate.RECORDED.relative_to(ROOT))
    changed = [path for path in uncommitted(ROOT) if path != record]  # the record is this command's own output
    if changed:
        print(
            f"mutate --queue: the workers judge a commit, and this tree has changes to tracked files "
            f"({', '.join(changed[:5])}): commit them, or run from a clean checkout",
            file=sys.stderr,
        )
        return 2
    commit = head(ROOT)
    connection = redis.Redis.from_url(url)
    try:
        connection.ping()
    except redis.exceptions.RedisError as error:
        print(f"mutate --queue: no Redis answers at {url}: {error}", file=sys.stderr)
        return 1
    space, chosen = mutate.prepare_area(area, judges, mutants, only, sample, rest, generate=True)
    names = sorted(chosen) if chosen is not None else sorted(n for n, s in mutate.results(area).items() if s == "not checked")
    batches = [names[i : i + batch] for i in range(0, len(names), max(1, batch))]
    queue = Queue(queue_name(commit), connection=connection, serializer=JSONSerializer)
    listening = Worker.all(queue=queue)
    print(
        f"mutate --queue {area}: {len(names)} mutants at {commit[:12]} in {len(batches)} jobs on {queue.name}; "
        f"{len(listening)} workers listening there"
        + ("" if listening else f" (start them: python -m spec.mutate worker --queue {url} --checkout DIR, DIR a checkout of {commit[:12]})"),
        flush=True,
    )
    elsewhere = [w.name for w in Worker.all(connection=connection) if any(q.startswith(QUEUE_PREFIX) and q != queue.name for q in w.queue_names())]
    if elsewhere:
        print(f"mutate --queue: workers listening for other commits (they take none of these jobs): {', '.join(sorted(elsewhere))}", flush=True)
    payload = {"area": area, "commit": commit, "tools": tools(), "judges": judges, "only": only}
    jobs = [
        queue.enqueue(
            "spec.mutate_queue.judge",
            {**payload, "mutants": names_of_job},
            job_timeout=job_timeout,
            result_ttl=RESULT_TTL,
            failure_ttl=RESULT_TTL,
            retry=Retry(max=RETRIES),
            description=f"mutate {area} {index + 1}/{len(batches)}: {len(names_of_job)} mutants at {commit[:12]}",
        )
        for index, names_of_job in enumerate(batches)
    ]
    pending = {job.id: index for index, job in enumerate(jobs)}
    by_worker: Counter[str] = Counter()
    stats_pass: dict[str, float] = {}
    failures: list[str] = []
    judged = 0
    started = time.monotonic()
    swept = started
    try:
        while pending and not failures:
            if deadline is not None and time.monotonic() - started > deadline:
                failures.append(f"gave up after {deadline:g} s (--deadline) with {len(pending)} jobs not done")
                break
            for job in Job.fetch_many(list(pending), connection=connection, serializer=JSONSerializer):
                if job is None:
                    failures.append("a job vanished from Redis")
                    continue
                status = job.get_status(refresh=False)
                if status == JobStatus.FINISHED:
                    done: dict[str, Any] = job.return_value()  # type: ignore[assignment]
                    merge_verdicts(space, done["verdicts"])
                    judged += len(done["verdicts"])
                    by_worker[str(done["worker"])] += len(done["verdicts"])
                    if done.get("stats_pass_cpu_s") is not None:
                        stats_pass[str(done["worker"])] = float(done["stats_pass_cpu_s"])
                    counts = Counter(mutate.status_of(v["exit_code"]) for v in done["verdicts"].values())
                    print(
                        f"mutate --queue {area}: job {pending.pop(job.id) + 1}/{len(jobs)} by {done['worker']} in {done['seconds']} s: "
                        f"{dict(sorted(counts.items()))}; {judged}/{len(names)} judged",
                        flush=True,
                    )
                elif status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
                    result = job.latest_result()
                    why = (result.exc_string or "").strip().splitlines()[-1:] if result is not None else []
                    failures.append(f"job {pending[job.id] + 1}/{len(jobs)} {status.value}: {' '.join(why) or '(no reason recorded)'}")
                    pending.pop(job.id)
            if pending and not failures:
                if time.monotonic() - swept > SWEEP_SECONDS:  # jobs whose worker died: retried or failed
                    queue.started_job_registry.cleanup()
                    swept = time.monotonic()
                time.sleep(POLL_SECONDS)
    finally:
        for job in Job.fetch_many(list(pending), connection=connection, serializer=JSONSerializer):
            if job is None:
                continue
            if job.get_status(refresh=False) == JobStatus.STARTED:
                send_stop_job_command(connection, job.id, serializer=JSONSerializer)
            else:
                job.cancel()
    account = {
        "queue": f"RQ on Redis, queue {queue.name}",
        "jobs": len(jobs),
        "batch": batch,
        "by_worker": dict(sorted(by_worker.items())),
        "stats_pass_cpu_s": dict(sorted(stats_pass.items())),
        "wall_s": round(time.monotonic() - started, 1),
    }
    (space / mutate.QUEUED).write_text(json.dumps(account, indent=1) + "\n", encoding="utf-8")
    for failure in failures:
        print(f"mutate --queue {area}: {failure}", file=sys.stderr)
    return 1 if failures else 0
