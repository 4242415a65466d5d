"""The crash test: a real writer process, killed with SIGKILL at seeded random points during
1,000 operations (commits and rewinds), reopened after each kill.

Each round starts a writer (tests/session/session_writer.py: a process forked from the test's
own, so no interpreter start and no imports per kill; ``EUKHE_CRASH_EXEC=1`` starts a fresh
interpreter each time instead) and lets it run a seeded number of operations, gated through a
pipe; it reports each operation on another pipe after its record is fsynced. Two kinds of kill, chosen by the seeded generator:

- free: the writer may run a few operations past the reports the test waits for; the kill
  lands wherever the writer is (building, writing, fsyncing, or waiting);
- torn: the writer is killed after its last report, and the test cuts that last record at a
  seeded byte offset inside it, as a crash in the middle of the write would leave it.

The operations go to sessions of ``SEGMENT`` (1,000) operations each, one after the other.
After each kill the session is read back from disk and must hold every reported record
(minus the one the test cut), no partial record, and exactly the state of the plain model
(``spec.laws.session.ModelTree``) after as many operations as the log holds; the bytes of
the log before the kill must be a prefix of the bytes after it (nothing rewritten).
``make test`` runs at least 200 kills; ``EUKHE_HUNT=1`` runs 5,000 operations and 1,000 kills.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import session_writer
from session_workload import CONVERSATIONS, Op, op_at

from eukhe.session import Store
from spec.laws.session import ModelTree, differences

HUNT = os.environ.get("EUKHE_HUNT") == "1"
SEED = 3
TOTAL = 5_000 if HUNT else 1_000
# Operations per session: every kill reopens the session and reads its whole log back (the
# writer's open and the test's check), so one session of n operations costs O(n^2); the hunt
# runs its 5,000 operations as 5 sessions of 1,000, each one as long as the CI run's session.
SEGMENT = 1_000
MIN_KILLS = 1_000 if HUNT else 200
WRITER = Path(__file__).with_name("session_writer.py")
EXEC = os.environ.get("EUKHE_CRASH_EXEC") == "1"


def apply_to_model(op: Op, model: ModelTree) -> None:
    if op.rewind_pick is not None and model.head is not None:
        ids = sorted(model.entries)
        model.rewind(ids[op.rewind_pick % len(ids)])
    else:
        model.commit(list(op.entries), op.documents)


class Writer:
    """One writer process: forked from this process (``session_writer.fork``), or with
    ``EUKHE_CRASH_EXEC=1`` a fresh interpreter (``python session_writer.py``). Either way a
    process of its own that the test kills with SIGKILL and reaps before it reads the logs."""

    def __init__(self, root: Path, sid: str, first: int, last: int) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        if EXEC:
            argv = [sys.executable, str(WRITER), str(root), sid, str(SEED), str(last), str(first)]
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert self.process.stdin is not None and self.process.stdout is not None
            self.pid, self.stdin, self.stdout = self.process.pid, self.process.stdin, self.process.stdout
        else:
            self.pid, self.stdin, self.stdout = session_writer.fork(str(root), sid, SEED, last, first)

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        if self.process is not None:
            self.process.wait()
        else:
            os.waitpid(self.pid, 0)
        for stream in (self.stdin, self.stdout):
            try:
                stream.close()
            except BrokenPipeError:  # a buffered command the dead writer never read
                pass


def _read_line(stream: IO[bytes]) -> list[str]:
    line = stream.readline()
    assert line.endswith(b"\n"), f"the writer stopped talking: {line!r}"
    return line.decode().split()


def test_a_writer_killed_at_random_points_loses_no_fsynced_record(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions")
    rng = random.Random(SEED)
    kills = torn_kills = 0
    for first in range(0, TOTAL, SEGMENT):
        found = _crash_session(store, f"crash-{first // SEGMENT}", first, min(TOTAL, first + SEGMENT), rng)
        kills, torn_kills = kills + found[0], torn_kills + found[1]
    print(f"crash test: {TOTAL} operations in {-(-TOTAL // SEGMENT)} sessions, {kills} kills ({torn_kills} cut a record)")
    assert kills >= MIN_KILLS, f"only {kills} kills in {TOTAL} operations"
    assert torn_kills >= kills // 5, f"only {torn_kills} of {kills} kills cut a record"


def _crash_session(store: Store, sid: str, first: int, last: int, rng: random.Random) -> tuple[int, int]:
    """Operations ``first`` to ``last - 1`` in a new session ``sid``, the writer killed after
    each few; returns (kills, kills that cut a record)."""
    store.create(sid).close()
    paths = {name: store.path(sid) / f"{name}.jsonl" for name in CONVERSATIONS}
    models = {name: ModelTree() for name in CONVERSATIONS}
    applied = first  # operations the model has taken
    kills = torn_kills = 0
    before = {name: b"" for name in CONVERSATIONS}
    while applied < last:
        writer = Writer(store.root, sid, first, last)
        ready = _read_line(writer.stdout)
        assert ready == ["ready", str(applied)], f"the reopened writer holds {ready}, the model {applied} operations"
        for name, path in paths.items():  # the recovery of a torn tail only appends
            after = path.read_bytes() if path.exists() else b""
            assert after.startswith(before[name]), f"{path}: a writer's open rewrote bytes of the log"
        torn = rng.random() < 0.4
        wanted = rng.randint(1, 6)
        extra = 0 if torn else rng.randint(0, 3)
        writer.stdin.write(f"go {wanted + extra}\n".encode())
        writer.stdin.flush()
        reports = [_read_line(writer.stdout) for _ in range(min(wanted, last - applied))]
        writer.kill()
        kills += 1
        confirmed = applied + len(reports)
        if torn and reports and reports[-1][0] == "done":
            _, _index, name, start, end = reports[-1]
            cut = rng.randint(int(start) + 1, int(end) - 1)
            with paths[name].open("r+b") as log:
                log.truncate(cut)
            confirmed -= 1
            torn_kills += 1
        with store.open(sid, writer=False) as reader:
            held = first + sum(reader.conversation(n).seq for n in reader.conversations() if n in CONVERSATIONS)
            assert held >= confirmed, f"kill {kills}: the log holds {held} operations, {confirmed} were fsynced"
            assert held <= applied + wanted + extra, f"kill {kills}: the log holds {held} operations, more than were run"
            while applied < held:
                op = op_at(SEED, applied)
                apply_to_model(op, models[op.conversation])
                applied += 1
            for name in CONVERSATIONS:
                if models[name].entries:
                    found = differences(reader.conversation(name), models[name], every_entry=False)
                    assert not found, f"{sid} kill {kills}, conversation {name}: " + "; ".join(found)
                    assert [e.id for e in reader.conversation(name).entries()] == sorted(models[name].entries)
        before = {name: path.read_bytes() if path.exists() else b"" for name, path in paths.items()}
    assert applied == last
    with store.open(sid) as session:  # a last writer: the state survives a clean close too
        documents = {name: session.conversation(name).documents() for name in CONVERSATIONS}
    with store.open(sid, writer=False) as reader:
        assert {name: reader.conversation(name).documents() for name in CONVERSATIONS} == documents
        assert documents == {name: models[name].documents() for name in CONVERSATIONS}
    return kills, torn_kills
