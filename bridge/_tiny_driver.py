"""One eukhe process of the tiny election bridge: ``python -m bridge._tiny_driver AGENT_DIR MODEL``.

Reads commands on stdin, answers one line each on stdout:
- ``need TAG`` → ``<outcome> <worker pid>`` (a TinyClient with dtype TAG elects a worker);
- ``hold DIR`` → ``sent`` (a chat the fake engine holds until DIR/release is written);
- ``wait`` → ``<answer> <worker pid>`` once the held chat is answered.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from eukhe.tiny.client import TinyClient


def main(argv: list[str]) -> int:
    agent_dir, model_id = Path(argv[0]), argv[1]
    client: TinyClient | None = None
    held: list[str] = []
    thread: threading.Thread | None = None
    for raw in sys.stdin:
        verb, _, arg = raw.strip().partition(" ")
        if verb == "need":
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
