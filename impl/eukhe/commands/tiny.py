"""Tiny model commands (inference.md S9).

    eukhe tiny-worker ID --backend onnx --agent-dir DIR   (hidden: started by clients)
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eukhe.cli import UsageError


def register(sub: Any) -> None:
    worker = sub.add_parser("tiny-worker")
    worker.add_argument("model_id")
    worker.add_argument("--backend", required=True, choices=["onnx"])
    worker.add_argument("--agent-dir", dest="worker_agent_dir", required=True)
    worker.add_argument("--device", default="cpu", choices=["cpu"])
    worker.add_argument("--dtype", default="q4")
    worker.set_defaults(run=run_worker)


def run_worker(args: argparse.Namespace) -> int:
    from eukhe.tiny import worker

    if not args.model_id or "/" in args.model_id or args.model_id.startswith("."):
        raise UsageError(f"eukhe tiny-worker: bad model id {args.model_id!r}")
    agent_dir = Path(args.worker_agent_dir)
    if not agent_dir.is_absolute():
        raise UsageError(f"eukhe tiny-worker: --agent-dir must be absolute, got {args.worker_agent_dir!r}")
    return worker.run(agent_dir, args.model_id, args.device, args.dtype)
