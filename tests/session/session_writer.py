"""The writer process of the crash test: ``python session_writer.py ROOT SESSION SEED TOTAL [FIRST]``, or
``fork(...)`` from the test's own process (the test's default: a Python start and its imports
cost about 0.2 s of CPU, times 1,000+ kills).

It opens the session for writing, says ``ready <ops done>`` on stdout, then for each line
``go <n>`` on stdin runs up to n more operations of the workload, reporting each one after
its record is fsynced: ``done <index> <conversation> <start offset> <end offset>``. The test
kills it with SIGKILL at a point it picks; nothing here sleeps or times anything.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import IO

from spec import breaks

if __name__ == "__main__":  # a deliberate break (EUKHE_BREAK) applies in the writer process too
    breaks.install_from_env()  # (a forked writer has the test process's: conftest installed it)

from session_workload import CONVERSATIONS, apply_to_store, op_at  # noqa: E402

from eukhe.session import Store  # noqa: E402


def main(root: str, session_id: str, seed: int, total: int, commands: IO[bytes] | None = None, reports: int = 1,
         first: int = 0) -> None:
    """The writer of operations ``first`` to ``total - 1`` of the workload in one session:
    commands (``go <n>`` lines) from ``commands`` (default stdin), reports to the file
    descriptor ``reports`` (default stdout)."""
    session = Store(Path(root)).open(session_id, writer=True)
    conversations = {name: session.conversation(name) for name in CONVERSATIONS}
    done = first + sum(c.seq for c in conversations.values())
    os.write(reports, f"ready {done}\n".encode())
    for line in commands if commands is not None else sys.stdin.buffer:
        for _ in range(int(line.split()[1])):
            if done >= total:
                break
            op = op_at(seed, done)
            conversation = conversations[op.conversation]
            start = conversation.path.stat().st_size if conversation.path.exists() else 0
            apply_to_store(op, conversation)
            end = conversation.path.stat().st_size
            os.write(reports, f"done {done} {op.conversation} {start} {end}\n".encode())
            done += 1
    session.close()


def fork(root: str, session_id: str, seed: int, total: int, first: int = 0) -> tuple[int, IO[bytes], IO[bytes]]:
    """A writer process forked from this one (the crash test's own process, where eukhe.session
    and the workload are imported already, and a deliberate break is installed already): no
    interpreter start, no imports. Returns (pid, its commands, its reports). The child never
    returns: it leaves with ``os._exit`` (no atexit handler or buffer of the parent runs in it)."""
    command_read, command_write = os.pipe()
    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer
        code = 1
        try:
            os.close(command_write)
            os.close(report_read)
            with os.fdopen(command_read, "rb") as commands:
                main(root, session_id, seed, total, commands, report_write, first)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(command_read)
    os.close(report_write)
    return pid, os.fdopen(command_write, "wb"), os.fdopen(report_read, "rb")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), first=int(sys.argv[5]) if len(sys.argv) > 5 else 0)
