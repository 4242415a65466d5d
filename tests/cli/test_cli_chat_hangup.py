"""`eukhe chat` that can no longer read its terminal ends as at Ctrl-D (status 0), and is never
left reading a terminal for ever:
- the terminal goes away (its window closed): its reads give end of file;
- the chat is a background job of its terminal (``eukhe chat &``) in a shell that ignores
  SIGTTIN, so it is not stopped when it reads the terminal: its reads fail with EIO.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import Screen, eukhe_env
from loopback_models import write_loopback_models
from pty_screen import Screen as ProcessScreen

from spec.loopback import LoopbackServer, Stream, Text

PROMPT = r"\[mem 0K/128K\]\n> "


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    with LoopbackServer() as server:
        server.responder = lambda recorded: Stream([Text("Done it.")])
        yield eukhe_env(write_loopback_models(tmp_path / "agent", server, {"loop-resp": "openai-responses"}), TERM="xterm")


def ended(screen: ProcessScreen, why: str) -> int:
    """The process's status once it ends (killed and failed if it runs 30 s more)."""
    try:
        return screen.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        screen.proc.kill()
        screen.proc.wait()
        pytest.fail(f"eukhe chat still ran 30 s after {why}")


def test_the_chat_ends_when_its_terminal_closes(env: dict[str, str], tmp_path: Path) -> None:
    screen = Screen(["chat", "--provider", "loop-resp"], env, tmp_path)
    try:
        screen.expect(PROMPT)
        screen.type("say it")
        screen.expect(r"Done it\.\n")
        screen.expect(r"> ")
    except BaseException:
        screen.close()
        raise
    os.close(screen.fd)  # the terminal goes
    assert ended(screen, "its terminal closed") == 0


def controlling_terminal() -> None:
    """In the shell's process before it starts: a session of its own, the pty its controlling
    terminal (so that job control applies to the chat it starts in the background)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_a_background_chat_that_cannot_read_its_terminal_ends(env: dict[str, str], tmp_path: Path) -> None:
    job = "trap '' TTIN; set -m; \"$0\" -m eukhe chat --provider loop-resp & wait $!"
    screen = ProcessScreen(["sh", "-c", job, sys.executable], env, tmp_path, preexec=controlling_terminal)
    try:
        screen.expect(PROMPT)
        screen.type("say it")  # the chat's read of it, from the background, fails with EIO
        assert ended(screen, "its read of the terminal failed") == 0
    finally:
        os.close(screen.fd)
