"""Where the tiny models live under the agent dir (S9).

- ``<agent dir>/models/tiny/<id>``: an installed model; ``.staging-<id>-<pid>`` while it downloads.
- ``<agent dir>/run/tiny/``: the worker's socket ``<id>-onnx.sock``, bind lock
  ``<id>-onnx.bind.lock`` and log ``<id>-onnx.log``; made 0700 by worker and client, even if
  it exists already.
"""

from __future__ import annotations

import os
from pathlib import Path

BACKEND = "onnx"


def models_dir(agent_dir: Path) -> Path:
    return agent_dir / "models" / "tiny"


def model_dir(agent_dir: Path, model_id: str) -> Path:
    return models_dir(agent_dir) / model_id


def run_dir(agent_dir: Path) -> Path:
    return agent_dir / "run" / "tiny"


def ensure_run_dir(agent_dir: Path) -> Path:
    """The run dir, created if missing and made 0700 whatever its mode was."""
    path = run_dir(agent_dir)
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def socket_path(agent_dir: Path, model_id: str) -> Path:
    return run_dir(agent_dir) / f"{model_id}-{BACKEND}.sock"


def lock_path(agent_dir: Path, model_id: str) -> Path:
    return run_dir(agent_dir) / f"{model_id}-{BACKEND}.bind.lock"


def log_path(agent_dir: Path, model_id: str) -> Path:
    return run_dir(agent_dir) / f"{model_id}-{BACKEND}.log"
