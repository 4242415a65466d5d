"""The chat memory on disk at scale (issue 11 item 9): prints JSON with

- appends per second with fsync: ``DurableChat.message`` on a real store (one write and one fsync
  per line, view.json replaced after each message), in the temp dir and, when it exists, in
  /dev/shm (tmpfs: the cost without the disk's flush);
- the start of a chat of N messages (default 1,000,000): reading the day files, folding the view
  from the merge lines, checking it against view.json and rebuilding the planner
  (``Store`` + ``DurableChat.open``), in seconds (wall and CPU), with the process's peak resident
  memory and the load average, three times, each in a fresh process: the first start with no
  index (it scans every line and writes ``index.bin``), a start with the index, and a start after
  1,000 messages were appended (by the store, its fsync skipped) since the index was written.
  The appended lines are cut off again afterwards, so the fixture stays the chat of N messages.

The big chat is written by the same ``DurableChat`` with a sink that buffers its lines (no fsync:
writing 3,000,000 fsynced lines would take hours on this disk, and what is measured is the start);
it is a fixture, kept under ``build/bench-memory-store/`` and reused while its marker file is
there. The start only reads it: the fork that measures it opens the store, and nothing is
appended (the reopening of a chat the compactor kept up with writes no line).
Messages: sizes 20-700 bytes from a fixed seed (one in four needs a model call); the compactor is
never late (every started call ends at once with a line of 300-512 bytes).

    .venv/bin/python benchmarks/bench_memory_store.py [--messages 1000000] [--appends 300] [--dir DIR]

Goal (issue 11): the start of 10^6 messages in at most 10 s and 1 GiB resident on 2 cores.
Benchmarks never assert time: this prints what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time
import subprocess
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "impl")]

from eukhe.memory.chat import Config  # noqa: E402
from eukhe.memory.durable import DurableChat  # noqa: E402
from eukhe.memory.records import MergeLine, Message, NodeLine, encode  # noqa: E402
from eukhe.memory import daylog  # noqa: E402
from eukhe.memory.store import INDEX_FILE, Store  # noqa: E402
from eukhe.memory.view import Node  # noqa: E402

CLOCK = "2026-11-30T12:00:00+00:00"


def text(r: random.Random, i: int) -> str:
    size = r.randint(20, 700)
    body = f"m{i} " + "word " * (size // 5 + 1)
    return body[:size]


class Buffered:
    """A sink writing the store's files through buffers, without fsync (to build a big chat)."""

    def __init__(self, directory: Path) -> None:
        (directory / "tree").mkdir(parents=True, exist_ok=True)
        self.main: IO[bytes] = open(directory / "2026-11-30.jsonl", "ab", buffering=1 << 20)
        self.tree: IO[bytes] = open(directory / "tree" / "2026-11-30.jsonl", "ab", buffering=1 << 20)
        self.directory = directory
        self.last: list[Node] = []

    def message(self, record: Message) -> None:
        self.main.write(encode(record))

    def node(self, record: NodeLine) -> None:
        self.tree.write(encode(record))

    def merge(self, record: MergeLine) -> None:
        self.tree.write(encode(record))

    def view(self, nodes: object) -> None:
        pass

    def close(self, nodes: list[Node]) -> None:
        self.main.close()
        self.tree.close()
        (self.directory / "view.json").write_text(json.dumps([list(n) for n in nodes], separators=(",", ":")))


def build(directory: Path, count: int, seed: int = 2026) -> float:
    r = random.Random(seed)
    sink = Buffered(directory)
    durable = DurableChat.open(Config(), [], [], sink, lambda: CLOCK)
    started = time.perf_counter()
    for i in range(count):
        durable.message(text(r, i))
        while durable.chat.running:
            durable.done(0, "a summary line " + "s" * r.randint(285, 497))
    sink.close(list(durable.chat.view.nodes))
    return time.perf_counter() - started


def appends(directory: Path, count: int) -> dict[str, float]:
    store = Store(directory, now=lambda: CLOCK)
    durable = DurableChat.open(Config(), store.messages, store.tree, store, store.now)
    r = random.Random(7)
    started = time.perf_counter()
    for i in range(count):
        durable.message(text(r, i))
    seconds = time.perf_counter() - started
    store.close()
    return {"appends": count, "seconds": round(seconds, 3), "appends_per_second": round(count / seconds, 1)}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start(directory: Path) -> dict[str, object]:
    cpu = _cpu()
    started = time.perf_counter()
    store = Store(directory, now=lambda: CLOCK)
    read = time.perf_counter()
    durable = DurableChat.open(Config(), store.messages, store.tree, store, store.now)
    check = store.check(durable.chat.view.nodes)
    done = time.perf_counter()
    result = {
        "index": store.index,
        "index_written": store.index_written,
        "messages": durable.chat.t,
        "nodes": durable.chat.built_count,
        "view_lines": len(durable.chat.view),
        "view_bytes": durable.chat.view.total,
        "view_json": check,
        "read_seconds": round(read - started, 2),
        "fold_and_reopen_seconds": round(done - read, 2),
        "start_seconds": round(done - started, 2),
        "start_cpu_seconds": round(_cpu() - cpu, 2),  # the figure that does not depend on the machine's load
        "peak_resident_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    store.close()
    return result


def append_more(directory: Path, count: int) -> None:
    """Append ``count`` messages through the store (the compactor keeping up), without fsync."""

    def write_line(fd: int, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    daylog.write_line = write_line  # type: ignore[assignment]
    store = Store(directory, now=lambda: CLOCK)
    durable = DurableChat.open(Config(), store.messages, store.tree, store, store.now)
    r = random.Random(99)
    for i in range(count):
        durable.message(text(r, durable.chat.t))
        while durable.chat.running:
            durable.done(0, "a summary line " + "s" * r.randint(285, 497))
    store.close()


def child(*args: str) -> dict[str, object]:
    """Run this script in a fresh process (its peak memory is its own); its JSON answer."""
    done = subprocess.run([sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True)
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def starts(chat: Path, appended: int) -> dict[str, object]:
    """The three starts (no index, with the index, after ``appended`` messages); the fixture is
    cut back to what it was afterwards."""
    out: dict[str, object] = {}
    (chat / INDEX_FILE).unlink(missing_ok=True)
    out["first_start_no_index"] = child("start", str(chat))
    out["start_with_index"] = child("start", str(chat))
    logs = [p for p in chat.rglob("*.jsonl")]
    sizes = {p: p.stat().st_size for p in logs}
    view = (chat / "view.json").read_bytes()
    try:
        child("append", str(chat), str(appended))
        out[f"start_after_{appended}_appends"] = child("start", str(chat))
    finally:
        for path in chat.rglob("*.jsonl"):
            if path not in sizes:
                path.unlink()
        for path, size in sizes.items():
            os.truncate(path, size)
        (chat / "view.json").write_bytes(view)
        (chat / INDEX_FILE).unlink(missing_ok=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--appends", type=int, default=300)
    parser.add_argument("--dir", type=Path, default=ROOT / "build" / "bench-memory-store", help="where the big chat is built and kept (a fixture: reused while its marker is there)")
    parser.add_argument("--skip-appends", action="store_true", help="measure the start only")
    parser.add_argument("--more", type=int, default=1_000, help="messages appended before the third start")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child[0] == "start":
            print(json.dumps(start(Path(args.child[1]))))
        else:
            append_more(Path(args.child[1]), int(args.child[2]))
            print("{}")
        return
    out: dict[str, object] = {}
    for label, base in (("disk", None), ("tmpfs", "/dev/shm")):
        if args.skip_appends:
            break
        if base is not None and not Path(base).is_dir():
            continue
        where = Path(tempfile.mkdtemp(prefix="eukhe-bench-", dir=base))
        try:
            out[f"appends_with_fsync_{label}"] = appends(where / "chat", args.appends)
        finally:
            shutil.rmtree(where)
    chat = args.dir / f"chat-{args.messages}"
    marker = args.dir / f"chat-{args.messages}.built"
    if not marker.exists():  # the fixture: built once (no fsync), kept under build/
        shutil.rmtree(chat, ignore_errors=True)
        built = build(chat, args.messages)
        marker.write_text(json.dumps({"written_seconds": round(built, 1)}))
    sizes = {str(p.relative_to(chat)): p.stat().st_size for p in chat.rglob("*.jsonl")}
    out["big_chat"] = {"messages": args.messages, "directory": str(chat), "bytes": sum(sizes.values()), **json.loads(marker.read_text())}
    print(json.dumps(out, indent=1), flush=True)
    print(json.dumps({"start": starts(chat, args.more)}, indent=1), flush=True)


if __name__ == "__main__":
    main()
