"""Helpers of the command-line tests: run `eukhe` as a real process (``python -m eukhe``, this
tree's PYTHONPATH inherited) or in process through ``eukhe.cli.main`` with captured output."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pty_screen
import pytest

from eukhe import cli


@dataclass(frozen=True)
class Done:
    status: int
    out: str
    err: str

    def one_error_line(self) -> str:
        """The one line a failure prints; fails when stderr is anything else."""
        lines = self.err.splitlines()
        assert len(lines) == 1, f"expected one line on stderr, got {self.err!r}"
        assert "Traceback" not in self.err
        return lines[0]


def eukhe_env(agent: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_")}
    env.update({"EUKHE_AGENT_DIR": str(agent), "HOME": str(agent.parent), "EUKHE_LOCK_TIMEOUT": "5"})
    env.update(extra)
    return env


def run_process(argv: list[str | bytes], agent: Path, *, cwd: Path | None = None, stdin: bytes | None = None, **extra: str) -> Done:
    """``python -m eukhe ARGV`` as a real process; bytes arguments go to the process as they are."""
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", *argv],
        capture_output=True,
        env=eukhe_env(agent, **extra),
        cwd=cwd or agent.parent,
        input=stdin,
        timeout=120,
        check=False,
    )
    return Done(done.returncode, done.stdout.decode("utf-8", "backslashreplace"), done.stderr.decode("utf-8", "backslashreplace"))


class RunProcess:
    def __init__(self, agent: Path) -> None:
        self.agent = agent

    def __call__(self, *argv: str | bytes, **extra: str) -> Done:
        return run_process(list(argv), self.agent, **extra)


class InProcess:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, *argv: str) -> Done:
        status = cli.main(list(argv))
        captured = self.capsys.readouterr()
        return Done(status, captured.out, captured.err)


def _chattr(flag: str, path: Path) -> bool:
    tool = shutil.which("chattr")
    if tool is None:
        return False
    return subprocess.run([tool, flag, str(path)], capture_output=True, check=False).returncode == 0




class Screen(pty_screen.Screen):
    """A ``python -m eukhe ARGV`` process on a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, *, preexec: Callable[[], None] | None = None) -> None:
        super().__init__([sys.executable, "-m", "eukhe", *argv], env, cwd, preexec=preexec)
