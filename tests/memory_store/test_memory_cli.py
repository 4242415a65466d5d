"""`eukhe memory` on the store: status, view, zoom, date, import, and the error lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.memory.owner import Memory
from eukhe.session import Store as Sessions
from eukhe.session import user


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_memory_status_view_zoom_date_and_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = str(tmp_path / "agent")
    with Memory(tmp_path / "agent" / "chat" / "main") as memory:
        memory.append("hello\nthere")
        memory.append("x" * 2_000)
    status, out, _ = run(capsys, "--agent-dir", agent, "memory")
    assert status == 0 and out.startswith("mem 0K/128K  messages 2  nodes 1  view lines 2\n") and "view.json at open: matches" in out
    status, out, _ = run(capsys, "--agent-dir", agent, "memory", "view")
    assert status == 0 and out == "<chat>\n0+1|hello there\n1+1|(not summarized yet: zoom it)\n</chat>\n"
    status, out, _ = run(capsys, "--agent-dir", agent, "memory", "zoom", "1", "1")
    assert status == 0 and out == "1+1|" + "x" * 2_000 + "\n"
    status, out, _ = run(capsys, "--agent-dir", agent, "memory", "date", "0")
    assert status == 0 and out[:4].isdigit() and "T" in out
    sessions = Sessions(tmp_path / "sessions")
    with sessions.create("20260101T000000-abcd0001") as session:
        session.conversation().commit([user("remember the milk")])
    status, out, _ = run(capsys, "--agent-dir", agent, "memory", "import", "--session-dir", str(tmp_path / "sessions"))
    assert status == 0 and out.startswith("imported 1 messages from 1 sessions")
    status, out, _ = run(capsys, "--agent-dir", agent, "memory", "import", "--session-dir", str(tmp_path / "sessions"))
    assert status == 0 and out.startswith("imported 0 messages from 1 sessions")


def test_memory_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = str(tmp_path / "agent")
    status, _, err = run(capsys, "--agent-dir", agent, "memory", "zoom", "0", "3")
    assert status == 2 and err == "eukhe memory: n=3 is not a power of 2\n"
    status, _, err = run(capsys, "--agent-dir", agent, "memory", "date", "7")
    assert status == 2 and err == "eukhe memory: no message 7: the chat has 0\n"
    status, _, err = run(capsys, "--agent-dir", agent, "memory", "zoom", "x", "1")
    assert status == 2 and "wants a whole number" in err
    day = tmp_path / "agent" / "chat" / "main" / "2026-11-30.jsonl"
    day.write_text('garbage\n{"i":0,"kind":"user","text":"a","size":1,"date":"2026-11-30T10:00:00+00:00"}\n')
    status, _, err = run(capsys, "--agent-dir", agent, "memory")
    assert status == 1 and err.count("\n") == 1 and "2026-11-30.jsonl: line 1: not JSON" in err
