"""The real `eukhe` in a real terminal (tmux), as a person uses it: `eukhe` alone on a terminal
opens the client on the session written last, starts that session's agent, runs a turn with a
tool call against the loopback model server, survives a resize, and quits with /quit; the
agent it started then ends by itself. Waits are on what the screen shows, each bounded by a
deadline that only a failing run reaches."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eukhe.session import SessionLocked, Store
from spec.loopback import Call, LoopbackServer, Stream, Text

WAIT = 60.0
PINNING = ("COLUMNS", "LINES")
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed: the terminal test needs it")


class Tmux:
    """One tmux server of its own (``-L``), one window running a command."""

    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str) -> str:
        # the server's environment is this one's at its start: without COLUMNS and LINES (the
        # test run may set them), which would pin a pane's size for ever
        env = {k: v for k, v in os.environ.items() if k not in PINNING and not k.startswith("TMUX")}
        done = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, check=True, env=env)
        return done.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "main")

    def until(self, condition: Callable[[str], bool], what: str) -> str:
        deadline = time.monotonic() + WAIT
        while True:
            shown = self.screen()
            if condition(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {WAIT:g} s for {what}; the screen shows:\n{shown}")
            time.sleep(0.05)  # between two looks at the screen; no step depends on its length

    def pane(self, field: str) -> str:
        return self.run("display-message", "-p", "-t", "main", f"#{{{field}}}").strip()


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    terminal = Tmux(f"eukhe-test-{os.getpid()}-{tmp_path.name}")
    try:
        yield terminal
    finally:
        subprocess.run(["tmux", "-L", terminal.name, "kill-server"], capture_output=True)


def test_eukhe_alone_on_a_terminal_runs_a_turn_resizes_and_quits(home: Path, server: LoopbackServer, tmux: Tmux, tmp_path: Path) -> None:
    server.script(Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("It says alpha.")]))
    env = {k: v for k, v in os.environ.items() if not (k.startswith(("EUKHE_", "TMUX")) or k.endswith("_API_KEY") or k in PINNING)}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(tmp_path), "TERM": "xterm-256color"})
    status = tmp_path / "eukhe-exit-status"  # how eukhe ended, written by the shell after it
    command = f"{sys.executable} -m eukhe; echo $? > {status}"
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", "main", "-x", "100", "-y", "30", "-c", str(tmp_path), *_env_args(env), command)

    tmux.until(lambda s: "model loop/loop-model" in s, "the status line")
    tmux.run("send-keys", "-t", "main", "-l", "what does a.txt say?")
    tmux.run("send-keys", "-t", "main", "Enter")
    shown = tmux.until(lambda s: "It says alpha." in s, "the answer")
    assert "read" in shown and "a.txt" in shown  # the tool call's block

    tmux.run("resize-window", "-t", "main", "-x", "72", "-y", "20")
    tmux.until(lambda s: "model loop/loop-model" in s and max(len(line) for line in s.splitlines()) <= 72, "the status line at 72 columns")

    tmux.run("send-keys", "-t", "main", "-l", "/quit")
    tmux.run("send-keys", "-t", "main", "Enter")
    deadline = time.monotonic() + WAIT
    while not status.exists() or not status.read_text().strip():
        assert time.monotonic() < deadline, f"eukhe did not quit; the screen shows:\n{tmux.screen()}"
        time.sleep(0.05)
    assert status.read_text().strip() == "0"
    assert len(server.requests) == 2  # the turn's two requests: the call, then the answer

    # the agent the client started serves no one now: it ends, and frees the session's lock
    deadline = time.monotonic() + WAIT
    while True:
        try:
            Store(home / "sessions").open("s1").close()
            break
        except SessionLocked:
            assert time.monotonic() < deadline, "the agent the client started did not end"
            time.sleep(0.05)


def _env_args(env: dict[str, str]) -> list[str]:
    out: list[str] = []
    for key, value in env.items():
        out += ["-e", f"{key}={value}"]
    return out


def test_off_a_terminal_tui_refuses_and_eukhe_alone_stays_a_usage_error(home: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EUKHE_")}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(tmp_path)})
    for argv, said in ((["tui"], "eukhe tui: needs a terminal"), ([], "COMMAND")):
        done = subprocess.run([sys.executable, "-m", "eukhe", *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 2 and said in done.stderr and done.stdout == "", (argv, done)
