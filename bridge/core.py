"""The bridge framework: scenario files, the two runners, byte-for-byte comparison, digests.

A scenario is a JSON Lines file of events generated from a fixed seed. The model side
(``bend.<area>.transcript``, or an external program named by ``BRIDGE_MODEL_CMD``) and the
production side (``bridge.<area>``, driving ``eukhe``) each print a transcript: lines that
begin with the number of the event they follow. The two must be equal byte for byte, and
their sha256 must equal the digest committed in ``scenarios/<area>/digests.sha256``, so a
change on either side shows in a regression run.

Each area's bridge module defines ``BRIDGE = Bridge(...)``; ``bridges()`` finds them all.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pkgutil
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
DIGESTS = "digests.sha256"
MODEL_CMD_ENV = "BRIDGE_MODEL_CMD"
# A replay stops at its first mismatch (the verdict is the same: any mismatch fails it). Set by
# the mutation run's pytest plugin under a mutant (spec.mutate), where a killed mutant's replay
# need not run the scenarios after the one that tells it apart.
STOP_AT_FIRST_MISMATCH = False

Event = dict[str, Any]
Printer = Callable[[Sequence[Event]], list[str]]
ModelPrinter = Callable[[list[Event]], list[str]]  # a bend transcript, called on a fresh list


T = TypeVar("T")


class Shared(Generic[T]):
    """One object every scenario of a replay shares (a loopback server, say): made at the first
    ``get``, ended by ``close`` (a bridge's ``finish``), made again by a later ``get``."""

    def __init__(self, make: Callable[[], T], end: Callable[[T], None]) -> None:
        self._make = make
        self._end = end
        self._value: T | None = None
        self._lock = threading.Lock()

    def get(self) -> T:
        with self._lock:
            if self._value is None:
                self._value = self._make()
            return self._value

    def close(self) -> None:
        with self._lock:
            value, self._value = self._value, None
        if value is not None:
            self._end(value)


@dataclass(frozen=True)
class Bridge:
    """One area's bridge.

    generate: the scenario of a given index (deterministic: the index seeds it).
    model / production: the transcript lines of each side for a scenario's events.
    cases: the rule cases the seed names for this bridge; reached: which of them a scenario
    reaches (the coverage check requires every case over all scenarios).
    finish: called once a replay of several scenarios ended (a bridge that keeps processes from
    one scenario to the next ends them here).
    """

    area: str
    count: int
    generate: Callable[[int], list[Event]]
    model: ModelPrinter
    production: Printer
    cases: frozenset[str]
    reached: Callable[[Sequence[Event]], set[str]]
    finish: Callable[[], None] | None = None

    @property
    def directory(self) -> Path:
        return SCENARIOS / self.area

    def file(self, index: int) -> Path:
        return self.directory / f"{index:04d}.jsonl"


class BridgeError(Exception):
    """A scenario file that cannot be read, or an external model that failed."""


class Stuck(BridgeError):
    """A process of a bridge's production side that did not answer, or did not end, within
    its deadline (the message names it and what it waited for)."""


def bridges() -> list[Bridge]:
    import bridge as package

    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name in {"core", "__main__"} or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"bridge.{info.name}")
        if isinstance(getattr(module, "BRIDGE", None), Bridge):
            found.append(module.BRIDGE)
    return found


def by_area(area: str) -> Bridge:
    for candidate in bridges():
        if candidate.area == area:
            return candidate
    raise BridgeError(f"no bridge for area {area!r}; areas: {[b.area for b in bridges()]}")


# -- scenario files ---------------------------------------------------------------------------


def dumps(events: Sequence[Event]) -> str:
    return "".join(json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n" for e in events)


def read(path: Path) -> list[Event]:
    """The events of a scenario file; BridgeError names a file that cannot be read or a bad line."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise BridgeError(f"cannot read scenario {path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise BridgeError(f"{path}: not UTF-8 at byte {error.start}") from None
    events = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            event = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise BridgeError(f"{path}:{number}: not JSON: {error}") from None
        if not isinstance(event, dict):
            raise BridgeError(f"{path}:{number}: an event is a JSON object")
        events.append(event)
    return events


def digest(lines: Sequence[str]) -> str:
    return hashlib.sha256(text(lines).encode("utf-8")).hexdigest()


def text(lines: Sequence[str]) -> str:
    return "".join(line + "\n" for line in lines)


def read_digests(directory: Path) -> dict[str, str]:
    path = directory / DIGESTS
    if not path.exists():
        return {}
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        value, name = line.split("  ", 1)
        table[name] = value
    return table


def rendered(b: Bridge, known: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every scenario file and the digest file of an area, as ``make scenarios`` writes them.
    ``known``: the digests of the model's transcripts already computed in this process, by the
    scenario file's text (the replay's), so the model does not run twice on a scenario."""
    files: dict[str, str] = {}
    digests = []
    for index in range(b.count):
        events = b.generate(index)
        name = b.file(index).name
        files[name] = dumps(events)
        found = None if known is None else known.get(files[name])
        digests.append(f"{found if found is not None else digest(b.model(list(events)))}  {name}\n")
    files[DIGESTS] = "".join(digests)
    return files


def regenerate(b: Bridge) -> int:
    b.directory.mkdir(parents=True, exist_ok=True)
    files = rendered(b)
    for stale in b.directory.glob("*.jsonl"):
        if stale.name not in files:
            stale.unlink()
    for name, content in files.items():
        (b.directory / name).write_text(content, encoding="utf-8")
    return len(files) - 1


def stale(b: Bridge, known: Mapping[str, str] | None = None) -> list[str]:
    """Names of committed files that regeneration would change, add or remove (``known`` as
    for ``rendered``)."""
    want = rendered(b, known)
    have = {p.name: p.read_text(encoding="utf-8") for p in b.directory.glob("*") if p.is_file()}
    return sorted(n for n in set(want) | set(have) if want.get(n) != have.get(n))


# -- replay ------------------------------------------------------------------------------------


def model_lines(b: Bridge, path: Path, events: Sequence[Event]) -> list[str]:
    """The model side: in process, or the external program BRIDGE_MODEL_CMD ('prog {scenario}')."""
    command = os.environ.get(MODEL_CMD_ENV)
    if not command:
        return b.model(list(events))
    argv = [part.replace("{scenario}", str(path)) for part in shlex.split(command)]
    # The model is no production code: under `coverage run` it is not measured (nor slowed).
    env = {k: v for k, v in os.environ.items() if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, env=env)
    if done.returncode != 0:
        raise BridgeError(f"{MODEL_CMD_ENV} {argv} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout.splitlines()


@dataclass(frozen=True)
class Mismatch:
    area: str
    path: Path
    event: str
    model: str
    production: str

    def __str__(self) -> str:
        return (
            f"bridge {self.area}: {self.path} differs at event {self.event}\n"
            f"  model:      {self.model}\n"
            f"  production: {self.production}\n"
            f"  replay: {sys.executable} -m bridge replay {self.area} {self.path}"
        )


def _event_of(line: str) -> str:
    return line.split(" ", 1)[0] if line else "?"


def compare(area: str, path: Path, model: Sequence[str], production: Sequence[str]) -> Mismatch | None:
    for m, p in zip(model, production):
        if m != p:
            return Mismatch(area, path, _event_of(m or p), m, p)
    if len(model) != len(production):
        shorter = min(len(model), len(production))
        extra = (model if len(model) > shorter else production)[shorter]
        return Mismatch(
            area,
            path,
            _event_of(extra),
            model[shorter] if len(model) > shorter else "(transcript ended)",
            production[shorter] if len(production) > shorter else "(transcript ended)",
        )
    return None


def replay(b: Bridge, path: Path, expected: str | None = None) -> Mismatch | None:
    """Run both sides on one scenario file; compare them and, when given, the expected digest."""
    events = read(path)
    model = model_lines(b, path, events)
    production = b.production(events)
    found = compare(b.area, path, model, production)
    if found is None and expected is not None and digest(model) != expected:
        return Mismatch(b.area, path, "(digest)", f"sha256 {digest(model)}", f"committed {expected}")
    return found


def replay_all(b: Bridge) -> tuple[int, list[Mismatch]]:
    digests = read_digests(b.directory)
    files = sorted(b.directory.glob("*.jsonl"))
    if not files:
        raise BridgeError(f"no scenario files in {b.directory}: run `make scenarios`")
    mismatches = []
    try:
        for path in files:
            if path.name not in digests:
                raise BridgeError(f"{path} has no digest in {b.directory / DIGESTS}")
            found = replay(b, path, digests[path.name])
            if found is not None:
                mismatches.append(found)
                if STOP_AT_FIRST_MISMATCH:
                    break
    except BaseException:
        finish(b, quietly=True)
        raise
    finish(b)
    return len(files), mismatches


def finish(b: Bridge, quietly: bool = False) -> None:
    """The bridge's ``finish`` after a replay of several scenarios (``quietly``: while another
    error is on its way, whose report its own error must not replace)."""
    if b.finish is None:
        return
    try:
        b.finish()
    except Exception:
        if not quietly:
            raise


def coverage(b: Bridge) -> set[str]:
    """The rule cases reached by the committed scenarios."""
    reached: set[str] = set()
    for path in sorted(b.directory.glob("*.jsonl")):
        reached |= b.reached(read(path))
    return reached
