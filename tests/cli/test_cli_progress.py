"""Progress bars on the commands that can run long (`memory simulate`, its `--cache`, `memory
import`, `directors simulate`): drawn on a terminal only. On pipes not one byte of a bar: the
output is what the work alone prints. On a pseudo-terminal the bar shows and runs to its end;
with standard error on a terminal and standard output on a pipe, standard output keeps its
bytes (no line of it is sent through the bar's console)."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import RunProcess, Screen, eukhe_env
from rich.console import Console

from eukhe.commands.memory_simulate import simulate
from eukhe.commands.progress_bar import step, terminal_bar
from eukhe.session import Store, assistant, user

ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _terminal_env(agent: Path) -> dict[str, str]:
    env = eukhe_env(agent)
    for name in ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        env.pop(name, None)
    env["TERM"] = "xterm-256color"
    return env


def _on_a_terminal(agent: Path, *argv: str, done: str, then: str) -> str:
    """``eukhe ARGV`` with standard output and error on a pseudo-terminal: the screen up to the
    bar's ``done`` (a regex) and then ``then`` (a regex), escapes taken out."""
    screen = Screen(list(argv), _terminal_env(agent), agent.parent)
    try:
        screen.expect(done)
        screen.expect(then)
    finally:
        status = screen.close()
    assert status == 0, screen.seen
    return ESCAPE.sub("", screen.seen)


def _stderr_on_a_terminal(agent: Path, *argv: str) -> tuple[int, bytes, str]:
    """``eukhe ARGV`` with standard error on a pseudo-terminal and standard output on a pipe:
    (status, standard output's bytes, what the terminal showed)."""
    parent, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "eukhe", *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=child,
        env=_terminal_env(agent), cwd=agent.parent,
    )
    os.close(child)
    shown = _drain(parent)
    out, _ = process.communicate(timeout=120)
    return process.returncode, out, shown


def _drain(parent: int) -> str:
    """All a pseudo-terminal showed, read until every end of it closed; closes ``parent``."""
    shown = []
    while True:
        try:
            chunk = os.read(parent, 65536)
        except OSError:  # every other end closed
            break
        if not chunk:
            break
        shown.append(chunk)
    os.close(parent)
    return b"".join(shown).decode("utf-8", "replace")


def _sessions(root: Path, count: int) -> None:
    store = Store(root)
    for k in range(count):
        with store.create(f"20260101T0000{k:02d}-abcd00{k:02d}") as session:
            session.conversation().commit([user(f"question {k}"), assistant({"text": f"answer {k}"})])


def _script(tmp_path: Path, lines: int) -> Path:
    path = tmp_path / "script.jsonl"
    rows = ['{"input": "hi"}'] + ['{"reply": {"text": "step %d"}}' % k for k in range(lines - 1)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


# -- the helper -----------------------------------------------------------------------------------


def test_a_bar_on_a_file_is_disabled_and_writes_nothing() -> None:
    sink = io.StringIO()
    with terminal_bar(console=Console(file=sink)) as bar:
        task = bar.add_task("work", total=3)
        assert bar.disable and step(bar, task) is None
        bar.update(task, completed=3)
    assert sink.getvalue() == ""


def test_a_bar_on_a_terminal_draws_and_its_step_moves_it() -> None:
    parent, child = pty.openpty()
    with open(child, "w", encoding="utf-8", closefd=True) as tty:
        console = Console(file=tty, force_terminal=None, width=80, _environ={"TERM": "xterm"})
        with terminal_bar(console=console) as bar:
            moved = step(bar, bar.add_task("work", total=None))
            assert not bar.disable and moved is not None
            moved(2, 4)
    shown = _drain(parent)
    assert "work" in shown and "2/4" in ESCAPE.sub("", shown)


def test_a_dumb_terminal_gets_no_bar() -> None:
    parent, child = pty.openpty()
    with open(child, "w", encoding="utf-8", closefd=True) as tty:
        with terminal_bar(console=Console(file=tty, _environ={"TERM": "dumb"})) as bar:
            assert bar.disable
    os.close(parent)


# -- eukhe memory simulate ----------------------------------------------------------------------


def test_memory_simulate_on_pipes_prints_only_the_statistics(run: RunProcess) -> None:
    done = run("memory", "simulate", "--messages", "600")
    assert done.status == 0 and done.err == ""
    assert done.out == json.dumps(simulate(600).stats(), indent=1) + "\n"


def test_memory_simulate_on_a_terminal_shows_its_bar(agent: Path) -> None:
    shown = _on_a_terminal(agent, "memory", "simulate", "--messages", "600", done="600/600", then='"model_calls"')
    assert re.search(r"simulate ━+ 600/600", shown), "the bar ran to its end; the statistics follow it"


def test_memory_simulate_with_stderr_on_a_terminal_keeps_stdout_bytes(agent: Path) -> None:
    status, out, shown = _stderr_on_a_terminal(agent, "memory", "simulate", "--messages", "600")
    assert status == 0
    assert out == (json.dumps(simulate(600).stats(), indent=1) + "\n").encode("utf-8")
    assert "600/600" in ESCAPE.sub("", shown), "the bar went to standard error, the terminal"


def test_memory_simulate_cache_on_pipes_and_on_a_terminal(run: RunProcess, agent: Path) -> None:
    done = run("memory", "simulate", "--messages", "30", "--cache")
    assert done.status == 0 and done.err == "" and done.out.startswith("{\n") and "\x1b" not in done.out
    assert json.loads(done.out)["cache"]["messages"] == 30
    shown = _on_a_terminal(agent, "memory", "simulate", "--messages", "30", "--cache", done=r"cache (?:(?!simulate)[^\n])*30/30", then='"failed_calls"')
    assert re.search(r"simulate ━+ 30/30", shown), "the simulation and the cache measure each have a bar"


# -- eukhe memory import -----------------------------------------------------------------------


def test_memory_import_on_pipes_prints_one_line(run: RunProcess, tmp_path: Path) -> None:
    _sessions(tmp_path / "sessions", 3)
    done = run("memory", "import", "--session-dir", str(tmp_path / "sessions"))
    assert done.status == 0 and done.err == ""
    assert done.out == f"imported 6 messages from 3 sessions in {tmp_path / 'sessions'} (from --session-dir); 0 entries already in the chat\n"


def test_memory_import_on_a_terminal_shows_its_bar(agent: Path, tmp_path: Path) -> None:
    _sessions(tmp_path / "sessions", 3)
    shown = _on_a_terminal(agent, "memory", "import", "--session-dir", str(tmp_path / "sessions"), done="3/3", then="imported 6 messages from 3 sessions")
    assert re.search(r"import ━+ 3/3", shown)


# -- eukhe directors simulate -------------------------------------------------------------------


def _without_session_line(text: str) -> str:
    first, _, rest = text.partition("\n")
    assert first.startswith("session ")
    return rest


def test_directors_simulate_on_pipes_and_with_stderr_on_a_terminal(run: RunProcess, agent: Path, tmp_path: Path) -> None:
    script = _script(tmp_path, 40)
    piped = run("directors", "simulate", "--script", str(script))
    assert piped.status == 0 and piped.err == "" and "\x1b" not in piped.out
    status, out, shown = _stderr_on_a_terminal(agent, "directors", "simulate", "--script", str(script))
    assert status == 0
    assert _without_session_line(out.decode("utf-8")) == _without_session_line(piped.out), "stdout keeps its bytes"
    assert "40/40" in ESCAPE.sub("", shown)


@pytest.mark.parametrize("lines", [40])
def test_directors_simulate_on_a_terminal_shows_its_bar(agent: Path, tmp_path: Path, lines: int) -> None:
    script = _script(tmp_path, lines)
    shown = _on_a_terminal(agent, "directors", "simulate", "--script", str(script), done=f"line {lines}: step", then=f"{lines}/{lines}")
    assert re.search(rf"simulate ━+ {lines}/{lines}", shown)
