"""One eukhe process of the tiny election bridge: ``python -m bridge._tiny_driver MODEL``.

Reads commands on stdin, answers one line each on stdout:
- ``use AGENT_DIR LAUNCH`` → ``ok``: the scenario that begins uses AGENT_DIR, and its workers are
  started as ``eukhe tiny-worker`` (LAUNCH ``cli``) or as ``python -m bridge._tiny_worker``
  (``module``: the same worker without the command line's imports), both by production's
  ``eukhe.tiny.client.launch``;
- ``need TAG`` → ``<outcome> <worker pid>`` (a TinyClient with dtype TAG elects a worker);
- ``hold DIR`` → ``sent`` (a chat the fake engine holds until DIR/release is written);
- ``wait`` → ``<answer> <worker pid>`` once the held chat is answered (``failed: <error>
  <worker pid>`` when it failed, or gave no answer within DEADLINE);
- ``end`` → ``ok``: the scenario ended (its client is closed).

A driver lives from one scenario to the next (``bridge.tiny``'s pool); it ends at the end of its
input. Its client's reads have deadlines (DEADLINE: a ping, a bye, a launched worker's first
line, a request's answer), and so has its wait for the held chat, so a driver never hangs on a
worker (``bridge.tiny`` has its own deadline on the driver).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from eukhe.tiny import client as tiny_client
from eukhe.tiny.client import TinyClient, TinyError

CLI_COMMAND = tiny_client.worker_command
DEADLINE = 60.0  # seconds: every wait of the driver on a worker


def module_command(agent_dir: Path, model_id: str, device: str, dtype: str) -> list[str]:
    """``eukhe.tiny.client.worker_command`` with ``-m bridge._tiny_worker`` for ``-m eukhe tiny-worker``."""
    command = CLI_COMMAND(agent_dir, model_id, device, dtype)
    assert command[1:4] == ["-m", "eukhe", "tiny-worker"], command
    return [command[0], "-m", "bridge._tiny_worker", *command[4:]]


def main(argv: list[str]) -> int:
    model_id = argv[0]
    agent_dir: Path | None = None
    client: TinyClient | None = None
    held: list[str] = []
    thread: threading.Thread | None = None
    held_by: int | None = None  # the worker pid the held chat was sent to
    for raw in sys.stdin:
        verb, _, arg = raw.strip().partition(" ")
        if verb in ("use", "end"):
            if client is not None:
                client.close()
                client = None
            if verb == "use":
                where, launch = arg.rsplit(" ", 1)
                agent_dir = Path(where)
                # production's launch() builds its command line with worker_command
                tiny_client.worker_command = module_command if launch == "module" else CLI_COMMAND
            print("ok", flush=True)
        elif verb == "need":
            assert agent_dir is not None, "need before use"
            if client is not None:
                client.close()
            client = TinyClient(agent_dir, model_id, dtype=arg, answer_deadline=DEADLINE, request_deadline=DEADLINE)
            outcome = client.ensure()
            print(outcome, client.worker_pid, flush=True)
        elif verb == "hold":
            assert client is not None
            held.clear()
            pid = held_by = client.worker_pid
            c = client

            def run(content: str = f"hold:{arg}") -> None:
                try:
                    held.append(f"{c.chat([{'role': 'user', 'content': content}])} {pid}")
                except TinyError as error:
                    held.append(f"failed: {type(error).__name__}: {error} {pid}")

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            print("sent", flush=True)
        elif verb == "wait":
            assert thread is not None
            thread.join(DEADLINE * 2)  # the chat's own deadline ends it first
            print(held[0] if held else f"failed: no answer within {DEADLINE * 2:g} s {held_by}", flush=True)
    if client is not None:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
