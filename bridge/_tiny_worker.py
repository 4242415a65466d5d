"""A tiny worker started without the command line: ``python -m bridge._tiny_worker MODEL_ID
--backend B --agent-dir DIR --device D --dtype T`` runs ``eukhe.tiny.worker.run`` as ``eukhe
tiny-worker`` does once it has checked its arguments (``eukhe.commands.tiny.run_worker``).

The short scenarios of the tiny bridge start their workers with it (``bridge._tiny_driver
... module``): a worker is still a real process that production's ``launch`` starts detached,
seats on the socket and serves, but it skips importing every command of the command line
(about 0.3 s of CPU per start, most of what a short scenario costs). The first scenarios start
``eukhe tiny-worker`` itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eukhe.tiny import worker


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bridge._tiny_worker")
    parser.add_argument("model_id")
    parser.add_argument("--backend", required=True)
    parser.add_argument("--agent-dir", required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--dtype", required=True)
    args = parser.parse_args(argv)
    return worker.run(Path(args.agent_dir), args.model_id, args.device, args.dtype)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
