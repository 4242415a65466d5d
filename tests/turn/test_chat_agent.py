"""The chat served by its agent (issue 28 item 7): `eukhe chat` processes as clients of the agent
of the session ``chat``, real HTTP to the loopback server. What the agent adds to the chat: its
real tools beside zoom and date in one tool set, the run's conversation behind the pinned view,
the log of every step, several clients watching one chat."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from loopback_models import write_loopback_models
from pty_screen import Screen
from turn_support import chat_command, environ, logged, view_of

from spec.loopback import Call, LoopbackServer, Stream, Text

PROVIDERS = {"loop-chat": "openai-completions", "loop-ant": "anthropic-messages"}


def watching(agent: Path) -> Screen:
    """`eukhe chat` on a terminal, on the loop-chat provider."""
    return Screen(chat_command("--provider", "loop-chat"), environ(agent), agent.parent)


def piped(agent: Path, lines: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        chat_command(*argv), input=lines.encode(), capture_output=True, env=environ(agent), cwd=agent.parent, timeout=120, check=False
    )


def test_a_chat_turn_runs_the_agents_tools_behind_the_pinned_view(server: LoopbackServer, tmp_path: Path) -> None:
    agent = write_loopback_models(tmp_path / "agent", server, PROVIDERS)
    (tmp_path / "notes.txt").write_text("the answer is 42\n", encoding="utf-8")
    server.script(
        Stream([Call("read", json.dumps({"path": "notes.txt"}), id="call_read_1")], stop="toolUse"),
        Stream([Text("It says 42.")]),
    )
    done = piped(agent, "what do my notes say?\n", "--provider", "loop-ant")
    out = done.stdout.decode()
    assert done.returncode == 0 and done.stderr == b"", (out, done.stderr)
    assert "[tool] read" in out and "the answer is 42" in out.split("[result]", 1)[1] and "It says 42.\n" in out
    first, after_tool = server.wait_requests(2)
    for request in (first, after_tool):
        tools = [tool["name"] for tool in request.body["tools"]]
        assert tools[:2] == ["zoom", "date"] and {"read", "write", "edit", "bash", "task"} <= set(tools), tools
        assert view_of(request).startswith("<chat>")  # the pinned view opens every request of the run
        assert "Turn:" in json.dumps(request.body) and "what do my notes say?" in json.dumps(request.body)
    assert first.body["system"] == after_tool.body["system"] and "call_read_1" in json.dumps(after_tool.body)
    rows = logged(agent / "chat" / "main")
    assert rows[0] == ("user", "what do my notes say?")
    assert [kind for kind, _ in rows] == ["user", "tool", "echo", "eukhe"], rows  # rule 48: each step as it happens
    assert "the answer is 42" in rows[2][1] and rows[3] == ("eukhe", "It says 42.")


def test_the_next_turn_carries_only_the_view(server: LoopbackServer, tmp_path: Path) -> None:
    """Rule 50: a second run sends the view (which now holds the first run) and its own message,
    never the first run's conversation as messages."""
    agent = write_loopback_models(tmp_path / "agent", server, PROVIDERS)
    server.script(Stream([Text("One.")]), Stream([Text("Two.")]))
    screen = watching(agent)
    try:
        screen.expect(r"\n> ")
        screen.type("first question")
        screen.expect(r"One\.\n")
        screen.expect(r"\n> ")  # the run ended: the next line is a run of its own
        screen.type("second question")
        screen.expect(r"Two\.\n")
        screen.type("/quit")
    finally:
        assert screen.close() == 0
    first, second = server.wait_requests(2)
    messages = second.body["messages"]
    assert "first question" in view_of(second) and "One." in view_of(second)
    assert not any(m.get("role") == "assistant" for m in messages), messages  # nothing carried over but the view
    said = [m for m in messages if m.get("role") != "system"]
    assert len(said) == 1 and said[0]["content"].endswith("\n\nsecond question"), said  # one message: view, state, Turn: message


def test_two_clients_watch_one_chat(server: LoopbackServer, tmp_path: Path) -> None:
    """The agent serves the chat to every client: a turn one client sends shows on the other's
    terminal, and both end without loss."""
    agent = write_loopback_models(tmp_path / "agent", server, PROVIDERS)
    server.script(Stream([Text("Seen by both.")]))
    watcher = watching(agent)
    try:
        watcher.expect(r"\n> ")
        done = piped(agent, "hello from the other client\n", "--provider", "loop-chat")
        assert done.returncode == 0 and "Seen by both." in done.stdout.decode(), done.stderr
        watcher.expect(r"Seen by both\.\n")
        watcher.expect(r"\[mem \d+K/128K\]\n> ")
        watcher.type("/quit")
    finally:
        status = watcher.close()
    assert status == 0
    assert logged(agent / "chat" / "main") == [("user", "hello from the other client"), ("eukhe", "Seen by both.")]


def test_a_subagent_of_the_chat_starts_from_the_view_and_zoom_reads_its_steps(server: LoopbackServer, tmp_path: Path) -> None:
    """Rules 54, 57, 58: the subagent's request is the view, then its task; its steps go to its own
    log, which zoom("Name") reads; the chat gains one work message, its report."""
    agent = write_loopback_models(tmp_path / "agent", server, PROVIDERS)
    server.script(Stream([Text("Noted.")]), Stream([Text("Scouted: nothing odd.")]))
    screen = watching(agent)
    try:
        screen.expect(r"\n> ")
        screen.type("remember the blue door")
        screen.expect(r"Noted\.\n")
        screen.expect(r"\n> ")
        screen.type("/agent Scout look around")
        screen.expect(r"\[subagent\] \[Scout\] Scouted: nothing odd\.\n")
        server.script(Stream([Call("zoom", json.dumps({"id": "Scout"}), id="call_zoom_1")], stop="toolUse"), Stream([Text("It saw nothing.")]))
        screen.type("what did Scout do?")
        screen.expect(r"It saw nothing\.\n")
        screen.type("/quit")
    finally:
        assert screen.close() == 0
    _, scout, _, zoomed = server.wait_requests(4)
    said = [m for m in scout.body["messages"] if m.get("role") != "system"]
    assert said[0]["content"].startswith("<chat>\n0+1|remember the blue door\n1+1|Noted.\n</chat>\n\n") and said[0]["content"].endswith("look around")
    result = json.dumps(zoomed.body["messages"][-1])
    assert "user: look around" in result and "eukhe: Scouted: nothing odd." in result and "blue door" not in result
    rows = logged(agent / "chat" / "main")
    assert ("work", "[Scout] Scouted: nothing odd.") in rows and ("user", "look around") not in rows  # its task stays in its own log
