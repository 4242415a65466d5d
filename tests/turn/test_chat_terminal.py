"""`eukhe chat` in a real terminal: a `python -m eukhe chat` process on a pseudo-terminal (the
standard library's pty), its provider pointed at the loopback server through models.json, for the
OpenAI chat completions and Anthropic Messages APIs. The test types lines and reads the screen."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback_models import write_loopback_models
from pty_screen import Screen
from turn_support import chat_command, environ, logged, turns_of, view_of

from spec.loopback import Call, Fail, LoopbackServer, Stream, Text, Thinking, Wait

PROVIDERS = {"loop-chat": "openai-completions", "loop-ant": "anthropic-messages"}


@pytest.fixture
def agent(tmp_path: Path, server: LoopbackServer) -> Path:
    return write_loopback_models(tmp_path / "agent", server, PROVIDERS)


@pytest.fixture
def screens(agent: Path) -> Iterator[list[Screen]]:
    made: list[Screen] = []
    yield made
    for screen in made:
        if screen.proc.poll() is None:
            screen.proc.kill()
            screen.proc.wait(timeout=30)


def chat(agent: Path, screens: list[Screen], *argv: str) -> Screen:
    screen = Screen(chat_command(*argv), environ(agent), agent.parent)
    screens.append(screen)
    return screen


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_chat_runs_turns_in_a_terminal(server: LoopbackServer, agent: Path, screens: list[Screen], provider: str) -> None:
    screen = chat(agent, screens, "--provider", provider)
    screen.expect(r"\[mem 0K/128K\]\n> ")

    server.script(Stream([Thinking("a greeting"), Text("Hi, "), Text("there.")]))
    screen.type("hello")
    screen.expect(r"\[thinking\] a greeting\nHi, there\.\n")
    screen.expect(r"\[mem \d+K/128K\]\n> ")
    first = server.wait_requests(1)[0]
    assert first.api == PROVIDERS[provider] and f"key-{provider}" in json.dumps(first.headers)
    assert view_of(first) == "<chat>\n</chat>"

    server.script(Stream([Call("zoom", '{"id": 0, "n": 1}', "z1")], stop="toolUse"), Stream([Text("You said hello.")]))
    screen.type("what did I say?")
    shown = screen.expect(r"You said hello\.\n")
    assert '[tool] zoom {"id": 0, "n": 1}' in shown and "[result] 0+1|hello" in shown
    screen.expect(r"> ")
    assert view_of(server.wait_requests(3)[1]) == "<chat>\n0+1|hello\n1+1|Hi, there.\n</chat>"

    screen.type("/memory")
    screen.expect(r"mem 0K/128K  messages 6  nodes \d+  view lines \d+\nchat .*\n")
    screen.type("/memory view")
    view = screen.expect(r"</chat>\n")
    assert "0+1|hello" in view or "0+2|" in view or "0+4|" in view
    screen.type("/memory model")
    screen.expect(r"memory\.model \(unset: the auxiliary model\)  memory\.thinking medium\n")
    screen.type(f"/memory model {provider}/{provider}-model low")
    screen.expect(rf"memory\.model {provider}/{provider}-model  memory\.thinking low \(saved\)\n")
    screen.type("/memory model")
    screen.expect(rf"memory\.model {provider}/{provider}-model  memory\.thinking low\n")

    # a message typed while the call runs joins it between tool calls (rule 46)
    go = threading.Event()
    server.script(Stream([Wait(go), Call("date", '{"id": 0}', "d1")], stop="toolUse"), Stream([Text("Joined fine.")]))
    screen.type("first part")
    server.wait_requests(4)
    screen.type("second part")
    screen.expect(r"\[queued: joins the running call\]\n")
    go.set()
    shown = screen.expect(r"Joined fine\.\n")
    assert "[joined] second part" in shown
    second = turns_of(server.wait_requests(5)[4])
    assert second[-1] == ("user", "second part") and second[-2][0] == "tool"

    screen.type("/quit")
    assert screen.close() == 0
    assert "Traceback" not in screen.seen
    rows = logged(agent / "chat" / "main")
    assert rows[:2] == [("user", "hello"), ("eukhe", "Hi, there.")]
    assert ("user", "second part") in rows and rows[-1] == ("eukhe", "Joined fine.")
    assert not any("a greeting" in text for _, text in rows)  # thoughts are never logged


def test_chat_bad_input_is_one_line_and_the_chat_goes_on(server: LoopbackServer, agent: Path, screens: list[Screen]) -> None:
    screen = chat(agent, screens, "--provider", "loop-chat")
    screen.expect(r"> ")
    for line, says in [
        ("/memory bogus", r"eukhe chat: unknown /memory command 'bogus'"),
        ("/memory model nonsense", r"eukhe chat: a model is written provider/id, not 'nonsense'"),
        ("/memory model a/b extreme", r"eukhe chat: /memory model: .*extreme"),
        ("/nope", r"eukhe chat: unknown command '/nope'"),
        ("/agent 9x find it", r"eukhe chat: '9x' is not an agent's name"),
        ("/agent Solo", r"eukhe chat: /agent NAME TASK: name the subagent and give it a task"),
    ]:
        screen.type(line)
        screen.expect(says + r".*\n")
        screen.expect(r"> ")
    os.write(screen.fd, b"\xff\xfe bad bytes\n")
    screen.expect(r"eukhe chat: the line is not UTF-8")
    server.script(Fail(400, '{"error": {"type": "invalid_request_error", "message": "boom"}}'))  # not retried
    screen.type("fail please")
    screen.expect(r"eukhe chat: loop-chat: HTTP 400 invalid_request_error: .*boom.*\n")
    screen.expect(r"> ")
    server.script(Stream([Text("Still here.")]))
    screen.type("are you there?")
    screen.expect(r"Still here\.\n")
    screen.type("/quit")
    assert screen.close() == 1  # the chat went on after the failed turn; its exit status says one failed (issue 30)
    assert "Traceback" not in screen.seen


def test_chat_subagent_reports_as_work(server: LoopbackServer, agent: Path, screens: list[Screen]) -> None:
    screen = chat(agent, screens, "--provider", "loop-ant")
    screen.expect(r"> ")
    server.script(Stream([Text("Scouted: nothing odd.")]))
    screen.type("/agent Scout look around")
    screen.expect(r"\[agent\] subagent Scout starts.*\n")
    screen.expect(r"\[subagent\] \[Scout\] Scouted: nothing odd\.\n")
    screen.type("/quit")
    assert screen.close() == 0
    assert logged(agent / "chat" / "main") == [("work", "[Scout] Scouted: nothing odd.")]


def test_chat_startup_errors_are_one_line(agent: Path) -> None:
    for argv, status, says in [
        (["--provider", "nobody"], 2, "eukhe chat: unknown provider 'nobody'"),
        (["--provider", "loop-chat", "--thinking", "extreme"], 2, "eukhe chat: --thinking:"),
    ]:
        done = subprocess.run(chat_command(*argv), capture_output=True, env=environ(agent), cwd=agent.parent, timeout=60, stdin=subprocess.DEVNULL, check=False)
        err = done.stderr.decode()
        assert done.returncode == status and err.startswith(says) and len(err.splitlines()) == 1, err


def test_chat_reads_lines_from_a_file(server: LoopbackServer, agent: Path, tmp_path: Path) -> None:
    """Input that is a regular file (no terminal): its lines are turns and commands, then the end."""
    script = tmp_path / "lines.txt"
    script.write_text("hello from a file\n/memory view\n", encoding="utf-8")
    server.script(Stream([Text("Got it.")]))
    with script.open("rb") as source:
        done = subprocess.run(chat_command("--provider", "loop-chat"), stdin=source, capture_output=True, env=environ(agent), cwd=agent.parent, timeout=60, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert "Got it.\n" in out and "0+1|hello from a file\n" in out and "[mem 0K/128K]" in out


def test_chat_runs_the_compactor_on_the_memory_model(server: LoopbackServer, agent: Path, screens: list[Screen]) -> None:
    """With memory.model set, the live compactor summarizes a long message over loopback (memory:
    rows on the screen) and the next turn's view shows the summary, not the message."""
    from turn_support import Router, is_compaction

    Router(server, lambda recorded: Stream([Text("the long one, summarized")]), [Stream([Text("Noted.")]), Stream([Text("Saw the summary.")])])
    screen = chat(agent, screens, "--provider", "loop-ant")
    screen.expect(r"memory: no compactor: .*memory\.model is unset.*\n")
    screen.type("/memory model loop-ant/loop-ant-model low")
    screen.expect(r"memory: compactor on loop-ant/loop-ant-model \(memory\.model, thinking low\)\n")
    screen.type("a long message " + "x" * 900)
    screen.expect(r"Noted\.\n")
    if "memory: built 0+1" not in screen.seen:  # the call runs beside the turn: its row may come first
        screen.expect(r"memory: built 0\+1")
    screen.type("again")
    screen.expect(r"Saw the summary\.\n")
    screen.type("/quit")
    assert screen.close() == 0
    turns = [r for r in server.requests if not is_compaction(r)]
    assert view_of(turns[1]).splitlines()[1] == "0+1|the long one, summarized"
    compactions = [r for r in server.requests if is_compaction(r)]
    assert len(compactions) == 1 and "x" * 900 in json.dumps(compactions[0].body)


def test_chat_refuses_a_chat_another_process_owns(agent: Path) -> None:
    from eukhe.memory.owner import Memory

    with Memory(agent / "chat" / "main") as owner:
        assert owner.is_owner
        done = subprocess.run(chat_command("--provider", "loop-chat"), capture_output=True, env=environ(agent), cwd=agent.parent, timeout=60, stdin=subprocess.DEVNULL, check=False)
    err = done.stderr.decode()
    assert done.returncode == 1 and err.startswith("eukhe chat: another eukhe chat owns") and len(err.splitlines()) == 1, err


def test_chat_takes_the_memory_role_when_memory_model_is_unset(server: LoopbackServer, agent: Path, tmp_path: Path) -> None:
    """D6: memory.model, else the auxiliary model; eukhe's auxiliary model for the compactor is the
    memory role (modelRoles.memory). With only the role set, the compactor starts on it."""
    (agent / "config.cfg").write_text('set modelRoles.memory "loop-ant/loop-ant-model"\n', encoding="utf-8")
    script = tmp_path / "lines.txt"
    script.write_text("/quit\n", encoding="utf-8")
    with script.open("rb") as source:
        done = subprocess.run(chat_command("--provider", "loop-chat"), stdin=source, capture_output=True, env=environ(agent), cwd=agent.parent, timeout=60, check=False)
    out = done.stdout.decode()
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    assert "memory: compactor on loop-ant/loop-ant-model (auxiliary, thinking medium)" in out, out
