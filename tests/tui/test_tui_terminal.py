"""The real `eukhe` in a real terminal (tmux), as a person uses it: `eukhe` alone on a terminal
opens the client on the session written last, starts that session's agent, runs a turn with a
tool call against the loopback model server, survives a resize, and quits with /quit; the
agent it started then ends by itself. A whole session in two terminals: both see one turn, a
bind of binds.cfg toggles a setting, /remind pushes a reminder, dictation records with a
``/bin/sh`` recorder and is transcribed by the installed dictation model (whisper-base's files,
its engine the worker's echo engine, which answers the audio's length), and /model switches
the model for both. Waits are on what the screen shows, each bounded by a deadline that only a
failing run reaches."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from eukhe.session import SessionLocked, Store
from eukhe.tiny import catalog, paths, protocol, worker
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

    def screen(self, window: str = "main") -> str:
        return self.run("capture-pane", "-p", "-t", window)

    def until(self, condition: Callable[[str], bool], what: str, window: str = "main") -> str:
        deadline = time.monotonic() + WAIT
        while True:
            shown = self.screen(window)
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
    _eukhe(tmux, "main", env, tmp_path, status)

    tmux.until(lambda s: "model loop/loop-model" in s, "the status line")
    tmux.run("send-keys", "-t", "main", "-l", "what does a.txt say?")
    tmux.run("send-keys", "-t", "main", "Enter")
    shown = tmux.until(lambda s: "It says alpha." in s, "the answer")
    assert "read" in shown and "a.txt" in shown  # the tool call's block

    tmux.run("resize-window", "-t", "main", "-x", "72", "-y", "20")
    tmux.until(lambda s: "model loop/loop-model" in s and max(len(line) for line in s.splitlines()) <= 72, "the status line at 72 columns")

    _quit(tmux, "main", status)
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


def _eukhe(tmux: Tmux, window: str, env: dict[str, str], where: Path, status: Path, size: tuple[int, int] = (100, 30)) -> None:
    """`eukhe` alone in a new tmux session ``window`` of the test's server; how it ended goes to
    ``status``. PATH is set in the command itself: the shell tmux starts may set its own."""
    command = f"PATH={shlex.quote(env['PATH'])} {shlex.quote(sys.executable)} -m eukhe; echo $? > {shlex.quote(str(status))}"
    tmux.run("-f", "/dev/null", "new-session", "-d", "-s", window, "-x", str(size[0]), "-y", str(size[1]), "-c", str(where), *_env_args(env), command)


def _quit(tmux: Tmux, window: str, status: Path) -> None:
    tmux.run("send-keys", "-t", window, "-l", "/quit")
    tmux.run("send-keys", "-t", window, "Enter")
    deadline = time.monotonic() + WAIT
    while not status.exists() or not status.read_text().strip():
        assert time.monotonic() < deadline, f"eukhe did not quit; the screen shows:\n{tmux.screen(window)}"
        time.sleep(0.05)
    assert status.read_text().strip() == "0"


@pytest.fixture
def dictation_worker_stopped(home: Path) -> Iterator[None]:
    """The dictation model's tiny worker, which the test's clients launch, is shut down after the
    test: a worker outlives the processes it serves (inference.md S9), and would outlive the test."""
    yield
    found = worker.probe(paths.socket_path(home, "whisper-base"))
    if found.sock is not None and found.reader is not None:
        protocol.send(found.sock, {"op": "shutdown"})
        assert found.reader.read(60) == b'{"ok":true,"bye":true}'
        found.sock.close()


@pytest.mark.usefixtures("dictation_worker_stopped")
def test_a_whole_session_in_two_terminals(home: Path, server: LoopbackServer, tmux: Tmux, tmp_path: Path) -> None:
    server.script(Stream([Call("read", '{"path": "a.txt"}')], stop="toolUse"), Stream([Text("It says alpha.")]))
    (home / "binds.cfg").write_text('bind f5 "toggle autonomous.enabled"\nbind f8 "action app.stt.toggle"\n', encoding="utf-8")
    whisper = paths.model_dir(home, "whisper-base")  # installed (its files present: it is unpinned), run by the echo engine
    for f in next(m for m in catalog.CATALOG if m.id == "whisper-base").files:
        (whisper / f.path).parent.mkdir(parents=True, exist_ok=True)
        (whisper / f.path).write_bytes(b"")
    (whisper / "engine.json").write_text('{"kind": "echo"}', encoding="utf-8")
    bin_dir = tmp_path / "bin"  # the whole PATH: the recorder, and what its script runs
    bin_dir.mkdir()
    for tool in ("head", "sleep"):
        found = shutil.which(tool)
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "arecord").write_text("#!/bin/sh\nhead -c 3200 /dev/zero; exec sleep 60\n", encoding="utf-8")  # 0.1 s of audio, then records until stopped
    (bin_dir / "arecord").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not (k.startswith(("EUKHE_", "TMUX")) or k.endswith("_API_KEY") or k in PINNING)}
    env.update({"EUKHE_AGENT_DIR": str(home), "HOME": str(tmp_path), "TERM": "xterm-256color", "PATH": str(bin_dir)})
    first, second = tmp_path / "first-status", tmp_path / "second-status"
    _eukhe(tmux, "main", env, tmp_path, first)
    tmux.until(lambda s: "model loop/loop-model" in s, "the first client's status line")
    _eukhe(tmux, "second", env, tmp_path, second, (90, 24))
    tmux.until(lambda s: "model loop/loop-model" in s, "the second client's status line", "second")

    # a turn from the first terminal, seen whole in the second
    tmux.run("send-keys", "-t", "main", "-l", "what does a.txt say?")
    tmux.run("send-keys", "-t", "main", "Enter")
    tmux.until(lambda s: "It says alpha." in s, "the answer")
    shown = tmux.until(lambda s: "It says alpha." in s and "what does a.txt say?" in s, "the turn in the second terminal", "second")
    assert "read" in shown and "a.txt" in shown

    # a bind of binds.cfg toggles a session switch: both status lines show it
    tmux.run("send-keys", "-t", "main", "F5")
    tmux.until(lambda s: "autonomous" in _status(s), "autonomous on the status line")
    tmux.until(lambda s: "autonomous" in _status(s), "autonomous on the second status line", "second")

    # /remind: a reminder on the Director stack, on both status lines
    tmux.run("send-keys", "-t", "main", "-l", "/remind run the tests")
    tmux.run("send-keys", "-t", "main", "Enter")
    tmux.until(lambda s: "reminder" in _status(s), "the reminder on the status line")
    tmux.until(lambda s: "reminder" in _status(s), "the reminder on the second status line", "second")

    # dictation: off until stt.enabled, then a take recorded and transcribed into the draft
    tmux.run("send-keys", "-t", "main", "F8")
    tmux.until(lambda s: "Dictation is off" in s, "the hint that dictation is off")
    tmux.run("send-keys", "-t", "main", "-l", "/set stt.enabled true")
    tmux.run("send-keys", "-t", "main", "Enter")
    tmux.until(lambda s: "set stt.enabled true: ok" in s, "the set's reply")
    tmux.run("send-keys", "-t", "main", "F8")
    tmux.until(lambda s: _status(s).startswith("[REC]"), "[REC] leading the status line")
    tmux.run("send-keys", "-t", "main", "F8")
    tmux.until(lambda s: "1600 samples at 16000 Hz" in s and not _status(s).startswith("["), "the transcript in the draft")

    # /model: the picker, then the model both clients show (each key waits for the draft to show
    # the one before it: a failure names the step that did not happen)
    tmux.run("send-keys", "-t", "main", "C-u")
    tmux.until(lambda s: _draft(s) == "", "the draft emptied by ctrl+u")
    tmux.run("send-keys", "-t", "main", "-l", "/model")
    tmux.until(lambda s: _draft(s) == "/model", "/model in the draft")
    tmux.run("send-keys", "-t", "main", "Enter")
    shown = tmux.until(lambda s: "* loop/loop-model" in s, "the picker, on the current model")
    listed = re.findall(r"[*\s] (\S+/\S+)  \[", shown)  # the models the picker shows, in order
    above = listed[listed.index("loop/loop-model") - 1]
    tmux.run("send-keys", "-t", "main", "Up")
    tmux.run("send-keys", "-t", "main", "Enter")
    tmux.until(lambda s: f"model {above}" in _status(s), "the switched model")
    tmux.until(lambda s: f"model {above}" in _status(s), "the switched model in the second terminal", "second")

    _quit(tmux, "second", second)
    _quit(tmux, "main", first)
    assert len(server.requests) == 2


def _status(screen: str) -> str:
    """The status line: the last line the screen shows."""
    lines = [line for line in screen.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _draft(screen: str) -> str:
    """The draft's text: the lines inside its box (between its top and bottom borders)."""
    lines = screen.splitlines()
    top = next((i for i, line in enumerate(lines) if "\u2594\u2594\u2594" in line), None)
    if top is None:
        return "(no draft on the screen)"
    inside = []
    for line in lines[top + 1 :]:
        if "\u2581\u2581\u2581" in line:
            break
        inside.append(line.strip().strip("\u258a\u258e").strip())
    return "\n".join(inside).strip()


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
