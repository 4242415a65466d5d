"""The writer process of the crash test: ``python session_writer.py ROOT SESSION SEED TOTAL``.

It opens the session for writing, says ``ready <ops done>`` on stdout, then for each line
``go <n>`` on stdin runs up to n more operations of the workload, reporting each one after
its record is fsynced: ``done <index> <conversation> <start offset> <end offset>``. The test
kills it with SIGKILL at a point it picks; nothing here sleeps or times anything.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from spec import breaks

breaks.install_from_env()  # a deliberate break (EUKHE_BREAK) applies in the writer process too

from session_workload import CONVERSATIONS, apply_to_store, op_at  # noqa: E402

from eukhe.session import Store  # noqa: E402


def main(root: str, session_id: str, seed: int, total: int) -> None:
    session = Store(Path(root)).open(session_id, writer=True)
    conversations = {name: session.conversation(name) for name in CONVERSATIONS}
    done = sum(c.seq for c in conversations.values())
    os.write(1, f"ready {done}\n".encode())
    for line in sys.stdin:
        for _ in range(int(line.split()[1])):
            if done >= total:
                break
            op = op_at(seed, done)
            conversation = conversations[op.conversation]
            start = conversation.path.stat().st_size if conversation.path.exists() else 0
            apply_to_store(op, conversation)
            end = conversation.path.stat().st_size
            os.write(1, f"done {done} {op.conversation} {start} {end}\n".encode())
            done += 1
    session.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
