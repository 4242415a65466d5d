"""One eukhe process of the tiny election bridge: ``python -m bridge._tiny_driver MODEL``.

Reads commands on stdin, answers one line each on stdout:
- ``use AGENT_DIR LAUNCH`` → ``ok``: the scenario that begins uses AGENT_DIR, and its workers are
  started as ``eukhe tiny-worker`` (LAUNCH ``cli``) or as ``python -m bridge._tiny_worker``
  (``module``: the same worker without the command line's imports), both by production's
  ``eukhe.tiny.client.launch``;
- ``need TAG`` → ``<outcome> <worker pid>`` (a TinyClient with dtype TAG elects a worker);
- ``hold DIR`` → ``sent`` (a chat the fake engine holds until DIR/release is written);
- ``wait`` → ``<answer> <worker pid>`` once the held chat is answered;
- ``end`` → ``ok``: the scenario ended (its client is closed).

A driver lives from one scenario to the next (``bridge.tiny``'s pool); it ends at the end of its
input.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from eukhe.tiny import client as tiny_client
from eukhe.tiny.client import TinyClient

CLI_COMMAND = tiny_client.worker_command


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
            client = TinyClient(agent_dir, model_id, dtype=arg)
            outcome = client.ensure()
            print(outcome, client.worker_pid, flush=True)
        elif verb == "hold":
            assert client is not None
            held.clear()
            pid = client.worker_pid
            c = client

            def run(content: str = f"hold:{arg}") -> None:
                held.append(f"{c.chat([{'role': 'user', 'content': content}])} {pid}")

            thread = threading.Thread(target=run)
            thread.start()
            print("sent", flush=True)
        elif verb == "wait":
            assert thread is not None
            thread.join()
            print(held[0] if held else "failed", flush=True)
    if client is not None:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
