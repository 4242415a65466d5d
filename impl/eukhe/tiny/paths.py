"""Where the tiny models live under the agent dir (S9).

- ``<agent dir>/models/tiny/<id>``: an installed model; ``.staging-<id>-<pid>`` while it downloads
  (``.old-<id>-<pid>`` for a moment, where an install is replaced without an atomic exchange).
  A process killed mid-download (SIGKILL) leaves its staging dir: ``sweep`` removes those of
  processes that are gone, at the next download or list, and leaves a live process's alone.
- ``<agent dir>/run/tiny/``: the worker's socket ``<id>-onnx.sock``, bind lock
  ``<id>-onnx.bind.lock`` and log ``<id>-onnx.log``; made 0700 by worker and client, even if
  it exists already.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
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


LEFTOVERS = (".staging-", ".old-")


def owner(name: str) -> tuple[str, int] | None:
    """The model id and pid of a ``.staging-<id>-<pid>`` or ``.old-<id>-<pid>`` name, else None."""
    for prefix in LEFTOVERS:
        if name.startswith(prefix):
            model_id, _, pid = name[len(prefix) :].rpartition("-")
            if model_id and pid.isdigit() and pid == str(int(pid)):
                return model_id, int(pid)
    return None


def process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def sweep(agent_dir: Path, model_id: str | None = None, warn: Callable[[str], None] | None = None) -> list[Path]:
    """Remove the staging (and replaced-install) dirs of processes that are gone: of
    ``model_id``, or of every model. A live process's dir is left alone. The dirs removed."""
    where = models_dir(agent_dir)
    try:
        entries = list(where.iterdir())
    except OSError:  # no models dir (or none readable): nothing to sweep
        return []
    removed = []
    for entry in sorted(entries):
        found = owner(entry.name)
        if found is None or (model_id is not None and found[0] != model_id) or process_alive(found[1]):
            continue
        try:
            shutil.rmtree(entry)
        except FileNotFoundError:  # another process swept it first
            continue
        except OSError as error:
            if warn is not None:
                warn(f"warning: could not remove the staging dir {entry} of a process that is gone: {error}")
            continue
        removed.append(entry)
    return removed
