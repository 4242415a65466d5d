"""The crash test: a real writer process, killed with SIGKILL at seeded random points during
1,000 operations (commits and rewinds), reopened after each kill.

Each round starts a writer (tests/session/session_writer.py) and lets it run a seeded number
of operations, gated through its stdin; it reports each operation on a pipe after its record
is fsynced. Two kinds of kill, chosen by the seeded generator:

- free: the writer may run a few operations past the reports the test waits for; the kill
  lands wherever the writer is (building, writing, fsyncing, or waiting);
- torn: the writer is killed after its last report, and the test cuts that last record at a
  seeded byte offset inside it, as a crash in the middle of the write would leave it.

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

from session_workload import CONVERSATIONS, Op, op_at

from eukhe.session import Store
from spec.laws.session import ModelTree, differences

HUNT = os.environ.get("EUKHE_HUNT") == "1"
SEED = 3
TOTAL = 5_000 if HUNT else 1_000
MIN_KILLS = 1_000 if HUNT else 200
WRITER = Path(__file__).with_name("session_writer.py")


def apply_to_model(op: Op, model: ModelTree) -> None:
    if op.rewind_pick is not None and model.head is not None:
        ids = sorted(model.entries)
        model.rewind(ids[op.rewind_pick % len(ids)])
    else:
        model.commit(list(op.entries), op.documents)


def _read_line(stream: IO[bytes]) -> list[str]:
    line = stream.readline()
    assert line.endswith(b"\n"), f"the writer stopped talking: {line!r}"
    return line.decode().split()


def test_a_writer_killed_at_random_points_loses_no_fsynced_record(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions")
    store.create("crash").close()
    paths = {name: store.path("crash") / f"{name}.jsonl" for name in CONVERSATIONS}
    models = {name: ModelTree() for name in CONVERSATIONS}
    applied = 0  # operations the model has taken
    rng = random.Random(SEED)
    kills = torn_kills = 0
    before = {name: b"" for name in CONVERSATIONS}
    while applied < TOTAL:
        writer = subprocess.Popen(
            [sys.executable, str(WRITER), str(store.root), "crash", str(SEED), str(TOTAL)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert writer.stdin is not None and writer.stdout is not None
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
        reports = [_read_line(writer.stdout) for _ in range(min(wanted, TOTAL - applied))]
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        writer.stdin.close()
        writer.stdout.close()
        kills += 1
        confirmed = applied + len(reports)
        if torn and reports and reports[-1][0] == "done":
            _, _index, name, start, end = reports[-1]
            cut = rng.randint(int(start) + 1, int(end) - 1)
            with paths[name].open("r+b") as log:
                log.truncate(cut)
            confirmed -= 1
            torn_kills += 1
        with store.open("crash", writer=False) as reader:
            held = sum(reader.conversation(n).seq for n in reader.conversations() if n in CONVERSATIONS)
            assert held >= confirmed, f"kill {kills}: the log holds {held} operations, {confirmed} were fsynced"
            assert held <= applied + wanted + extra, f"kill {kills}: the log holds {held} operations, more than were run"
            while applied < held:
                op = op_at(SEED, applied)
                apply_to_model(op, models[op.conversation])
                applied += 1
            for name in CONVERSATIONS:
                if models[name].entries:
                    found = differences(reader.conversation(name), models[name], every_entry=False)
                    assert not found, f"kill {kills}, conversation {name}: " + "; ".join(found)
                    assert [e.id for e in reader.conversation(name).entries()] == sorted(models[name].entries)
        before = {name: path.read_bytes() if path.exists() else b"" for name, path in paths.items()}
    print(f"crash test: {TOTAL} operations, {kills} kills ({torn_kills} cut a record)")
    assert applied == TOTAL
    assert kills >= MIN_KILLS, f"only {kills} kills in {TOTAL} operations"
    assert torn_kills >= kills // 5, f"only {torn_kills} of {kills} kills cut a record"
    with store.open("crash") as session:  # a last writer: the state survives a clean close too
        documents = {name: session.conversation(name).documents() for name in CONVERSATIONS}
    with store.open("crash", writer=False) as reader:
        assert {name: reader.conversation(name).documents() for name in CONVERSATIONS} == documents
        assert documents == {name: models[name].documents() for name in CONVERSATIONS}
