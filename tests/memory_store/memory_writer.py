"""The crash campaign's writer: python memory_writer.py DIR SEED LENGTH START MODE TARGET CUT

Opens the chat at DIR (store and durable planner) and runs the seeded history from event START,
printing ``ack N`` after event N returns (its lines fsynced). MODE ``free`` runs on until killed;
``line``: at the TARGET-th log line it writes only the first CUT/1000 of the line's bytes, prints
``at`` and waits (a crash inside the write); ``view``: at the TARGET-th view.json save it writes
part of the new file and waits before the rename. At the end it prints ``end`` and waits.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from memory_workload import CLOCK, CONFIG, history, line, text  # noqa: E402

from eukhe.memory import daylog  # noqa: E402
from eukhe.memory import store as store_module  # noqa: E402
from eukhe.memory.durable import DurableChat  # noqa: E402
from eukhe.memory.store import Store  # noqa: E402


def stop() -> None:
    print("at", flush=True)
    sys.stdin.read()  # killed here
    os._exit(3)


def main(argv: list[str]) -> int:
    directory, seed, length, start, mode, target, cut = Path(argv[0]), int(argv[1]), int(argv[2]), int(argv[3]), argv[4], int(argv[5]), int(argv[6])
    writes = [0, 0]
    real_write = daylog.write_line

    def write_line(fd: int, data: bytes) -> None:
        writes[0] += 1
        if mode == "line" and writes[0] == target:
            os.write(fd, data[: len(data) * cut // 1000])
            stop()
        real_write(fd, data)

    real_view = store_module.Store.view

    def view(self: Store, nodes: object) -> None:
        writes[1] += 1
        if mode == "view" and writes[1] == target:
            partial = self.directory / f".view.json.{os.getpid()}"
            partial.write_text('[[0,0],[0,', encoding="utf-8")
            stop()
        real_view(self, nodes)  # type: ignore[arg-type]

    daylog.write_line = write_line  # type: ignore[assignment]
    store_module.Store.view = view  # type: ignore[method-assign]
    store = Store(directory, now=lambda: CLOCK)
    chat = DurableChat.open(CONFIG, store.messages, store.tree, store, lambda: CLOCK)
    events = history(seed, length)
    ordinal = sum(1 for e in events[:start] if e[0] == "m")
    for number in range(start, len(events)):
        kind, size, key = events[number]
        if kind == "m":
            chat.message(text(ordinal, size), key=key)
            ordinal += 1
        else:
            while chat.chat.running:
                chat.done(0, line(chat.chat.running[0]))
        print(f"ack {number}", flush=True)
    print("end", flush=True)
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
