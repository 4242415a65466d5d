"""Hunting with HypoFuzz: every Hypothesis property of every law as a @given test, the shared
example database, the hunt's record, and pinning a find as an explicit example.

- ``targets()`` runs each law's check with ``spec.evidence`` capturing: the enumerations and
  proofs return at once and each ``examples(prop, **strategies)`` / ``machine(cls)`` is
  recorded instead of run. Each property becomes a ``Target``: a @given test (a state
  machine's TestCase for ``machine``) named ``test_<area>__<law>__<n>``, which
  tests/hunt/test_hunt_targets.py puts at module level for pytest and ``hypothesis fuzz``.
- ``database()``: the example database of the hunt profiles: a directory
  (``.hypothesis/examples``, or the path EUKHE_HUNT_DB names), or Redis when EUKHE_HUNT_DB
  is ``redis://HOST:PORT[/DB]`` (Hypothesis' RedisExampleDatabase), so many machines share
  every find.
- ``record``/``summarize``: each hunting process appends its example count every few seconds
  to build/hunt/samples-<pid>.jsonl; ``summarize`` joins them into build/hunt.json, which the
  review report plots.
- ``pin(law)``: the failing examples the database holds for a law's targets, written into
  the law's file as explicit examples (``PINNED``), which ``examples`` runs first every time.
"""

from __future__ import annotations

import functools
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.strategies import SearchStrategy

ROOT = Path(__file__).resolve().parent.parent
DB_ENV = "EUKHE_HUNT_DB"
LOG_ENV = "EUKHE_HUNT_LOG"
TARGETS_FILE = "tests/hunt/test_hunt_targets.py"
SAMPLE_EVERY = 5.0  # seconds between two samples of a hunting process


def database() -> ExampleDatabase:
    """The hunt's example database: Redis for redis://..., else a directory. One object per
    address in a process: HypoFuzz skips a test whose database is not the profile's (by
    identity, for Redis)."""
    return _database(os.environ.get(DB_ENV, ""))


@functools.cache
def _database(where: str) -> ExampleDatabase:
    if where.startswith("redis://"):
        import redis
        from hypothesis.extra.redis import RedisExampleDatabase

        return RedisExampleDatabase(redis.Redis.from_url(where), key_prefix=b"eukhe-hunt:")
    return DirectoryBasedExampleDatabase(where or str(ROOT / ".hypothesis" / "examples"))


@dataclass(frozen=True)
class Target:
    law: str  # area/name
    index: int  # the n-th property of the law
    kind: str  # given or machine
    test: Any  # the @given test function, or a state machine's TestCase class

    @property
    def name(self) -> str:
        area, law = self.law.split("/")
        return f"test_{area}__{law}__{self.index}"

    @property
    def nodeid(self) -> str:
        return f"{TARGETS_FILE}::{self.name}"


class _Sampler:
    """Counts the examples this process ran and appends a sample every few seconds."""

    def __init__(self) -> None:
        self.examples = 0
        self.failures = 0
        self.last = 0.0
        self.directory = os.environ.get(LOG_ENV, "")

    def tick(self, failed: bool) -> None:
        self.examples += 1
        self.failures += failed
        now = time.time()
        if self.directory and now - self.last >= SAMPLE_EVERY:
            self.last = now
            path = Path(self.directory) / f"samples-{os.getpid()}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"time": now, "examples": self.examples, "failures": self.failures}) + "\n")


SAMPLER = _Sampler()


def _given_test(target_name: str, nodeid: str, prop: Callable[..., Any], strategies: dict[str, SearchStrategy[Any]]) -> Any:
    def hunted(**kwargs: Any) -> None:
        failed = True
        try:
            assert prop(**kwargs) is not False, f"fails for {kwargs!r}"
            failed = False
        finally:
            SAMPLER.tick(failed)
            calls.append(dict(kwargs))

    calls: list[dict[str, Any]] = []  # what the target was called with (read by ``_stored``)
    hunted.calls = calls  # type: ignore[attr-defined]

    hunted.__name__ = hunted.__qualname__ = target_name
    # The database key: the same as HypoFuzz gives the collected test (its pytest node id), so a
    # find of `hypothesis fuzz` replays under pytest and the other way round, on every machine.
    hunted._hypothesis_internal_add_digest = nodeid.encode()  # type: ignore[attr-defined]
    return given(**strategies)(hunted)


def _machine_test(target_name: str, cls: type) -> Any:
    case = cls.TestCase  # type: ignore[attr-defined]
    return type(target_name.replace("test_", "Test", 1), (case,), {})


def capture(check: Callable[[], Any]) -> list[tuple[str, Any, dict[str, SearchStrategy[Any]]]]:
    """The Hypothesis properties a law's check would run, without running anything else."""
    from spec import evidence

    evidence._CAPTURED = []
    try:
        check()
    except Exception:  # noqa: BLE001 - a check that fails before its properties yields what it gave
        pass
    finally:
        found, evidence._CAPTURED = evidence._CAPTURED, None
    return found


def targets(areas: set[str] | None = None, laws: set[str] | None = None) -> list[Target]:
    """Every law's Hypothesis properties as tests (of the given areas or law keys only)."""
    from spec import registry

    out = []
    for law in registry.load():
        if (areas and law.area not in areas) or (laws and law.key not in laws and law.name not in laws):
            continue
        for index, (kind, what, strategies) in enumerate(capture(law.check)):
            stub = Target(law.key, index, kind, None)
            test = _given_test(stub.name, stub.nodeid, what, strategies) if kind == "given" else _machine_test(stub.name, what)
            out.append(Target(law.key, index, kind, test))
    return out


# -- the hunt's record ----------------------------------------------------------------------


def summarize(log: Path, out: Path, database_name: str) -> dict[str, Any]:
    """Join every process's samples into one curve (build/hunt.json): at each sample time, the
    sum over processes of their last counts."""
    streams: list[list[dict[str, Any]]] = []
    for path in sorted(log.glob("samples-*.jsonl")):
        streams.append([json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])
    times = sorted({s["time"] for stream in streams for s in stream})
    start = times[0] if times else 0.0
    samples = []
    for moment in times:
        last = [max((s for s in stream if s["time"] <= moment), key=lambda s: s["time"], default=None) for stream in streams]
        samples.append(
            {
                "seconds": round(moment - start, 1),
                "examples": sum(s["examples"] for s in last if s),
                "failures": sum(s["failures"] for s in last if s),
            }
        )
    document = {"database": database_name, "processes": len(streams), "samples": samples}
    out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return document


# -- pinning --------------------------------------------------------------------------------


def _stored(target: Target, db: ExampleDatabase) -> list[dict[str, Any]]:
    """The arguments of each failing example the database holds for a target (its primary key:
    the shrunk failures of pytest and of HypoFuzz), read by replaying them: Hypothesis runs the
    target on what the database holds (read only) and generates nothing, and the target notes
    the arguments of each call. A find fails only where it was found (a planted break, a
    defect since fixed): it is pinned all the same, to keep it checked."""
    from hypothesis import Phase, settings
    from hypothesis.database import ReadOnlyDatabase

    inner = target.test.hypothesis.inner_test
    inner.calls.clear()
    replay = settings(
        database=ReadOnlyDatabase(db), phases=[Phase.reuse], derandomize=False, deadline=None, report_multiple_bugs=True
    )
    try:
        replay(target.test)()
    except Exception:  # noqa: BLE001 - the replayed failure (or several): what we came for
        pass
    seen: list[dict[str, Any]] = []
    for args in inner.calls:
        if args not in seen:
            seen.append(args)
    return seen


def found(law: str, db: ExampleDatabase | None = None) -> list[tuple[Target, dict[str, Any]]]:
    db = db or database()
    return [(t, args) for t in targets(laws={law}) if t.kind == "given" for args in _stored(t, db)]


PINNED_START = "# -- pinned by `eukhe laws pin` (examples run first, every time) --"


def pin(law: str, db: ExampleDatabase | None = None) -> tuple[Path, list[str]]:
    """Write each stored failing example of ``law`` into its file as an explicit example of
    its property: ``PINNED[(law name, n)]`` holds the arguments, which ``spec.evidence.examples``
    runs before it generates anything. Returns the file and the lines added."""
    from spec import registry

    matches = [x for x in registry.load() if law in (x.key, x.name)]
    if not matches:
        raise KeyError(f"no law {law!r}")
    entry = matches[0]
    finds = found(entry.key, db)
    path = Path(__import__(entry.check.__module__, fromlist=["_"]).__file__ or "")
    text = path.read_text(encoding="utf-8")
    lines = []
    for target, args in finds:
        line = f"PINNED.setdefault(({entry.name!r}, {target.index}), []).append({args!r})"
        if line not in text:
            lines.append(line)
    if lines:
        if PINNED_START not in text:
            text = text.rstrip("\n") + f"\n\n\n{PINNED_START}\nfrom spec.evidence import PINNED  # noqa: E402\n\n"
        text = text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")
    return path, lines


def names(text: str) -> list[str]:
    return re.findall(r"test_\w+__\w+__\d+", text)


# -- the local Redis ------------------------------------------------------------------------


def redis_address(url: str) -> tuple[str, int]:
    from urllib.parse import urlparse

    parsed = urlparse(url)
    return parsed.hostname or "127.0.0.1", parsed.port or 6379


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.exceptions.RedisError:
        return False


def start_redis(url: str) -> str:
    """A redis-server (Debian's package, installed by apt-get as root when absent) on the
    loopback port of ``url`` when none answers there. Says what it did."""
    import shutil
    import subprocess

    if redis_answers(url):
        return f"redis answers at {url}"
    host, port = redis_address(url)
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise RuntimeError(f"no redis answers at {url}, and it is not on this machine: start it there")
    if shutil.which("redis-server") is None:
        if os.geteuid() != 0:
            raise RuntimeError("no redis-server: apt-get install redis-server (as root), or point EUKHE_HUNT_DB at one")
        subprocess.run(["apt-get", "install", "-y", "-qq", "redis-server"], check=True, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    subprocess.run(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "yes"],
        check=True,
    )
    for _ in range(50):
        if redis_answers(url):
            return f"started redis-server on 127.0.0.1:{port}"
        time.sleep(0.1)
    raise RuntimeError(f"redis-server did not answer at {url}")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m spec.hunt", description="the hunt's helpers for `make fuzz`")
    verbs = parser.add_subparsers(dest="verb", required=True)
    summary = verbs.add_parser("summarize", help="join the hunting processes' samples into build/hunt.json")
    summary.add_argument("--log", default="build/hunt", type=Path)
    summary.add_argument("--out", default="build/hunt.json", type=Path)
    verbs.add_parser("redis", help="start a local redis-server for EUKHE_HUNT_DB=redis://127.0.0.1:PORT when none answers")
    args = parser.parse_args(argv)
    where = os.environ.get(DB_ENV, "") or ".hypothesis/examples"
    if args.verb == "summarize":
        document = summarize(args.log, args.out, where)
        last = document["samples"][-1] if document["samples"] else {"examples": 0, "failures": 0}
        print(f"hunt: {document['processes']} processes, {last['examples']:,} examples, {last['failures']} failing; database {where}")
        return 0
    if not where.startswith("redis://"):
        print("redis: EUKHE_HUNT_DB is not redis://HOST:PORT; nothing to start")
        return 0
    try:
        print(start_redis(where))
    except RuntimeError as error:
        print(f"redis: {error}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
