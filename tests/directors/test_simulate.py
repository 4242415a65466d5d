"""`eukhe directors simulate --script FILE` on a real session directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.session import Store


def write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_simulate_prints_each_step_and_the_display_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write(
        tmp_path / "script.jsonl",
        [
            {"goal": "make the build green"},
            {"input": "fix it"},
            {"command": "/remind run the tests"},
            {"reply": {"text": "looking", "tool_calls": [{"name": "bash", "arguments": {"cmd": "make"}, "result": "ok"}]}},
            {"reply": {"text": "waiting"}},
            {"reply": {"text": "waiting"}},
            {"reply": {"text": "waiting"}},
        ],
    )
    sessions = tmp_path / "sessions"
    assert main(["directors", "simulate", "--script", str(script), "--session-dir", str(sessions)]) == 0
    out = capsys.readouterr().out
    assert "line 4: step verdicts=[reminder:leave, goal:again] decision=continue" in out
    assert "continuation: run the tests" in out
    assert "line 7: step verdicts=[goal:yield] decision=yield" in out
    assert "row eukhe.director: Goal paused. No progress: 3 goal continuations in a row" in out
    (session_id,) = Store(sessions).ids()
    with Store(sessions).open(session_id, writer=False) as session:
        conversation = session.conversation("main")
        goal = conversation.document("eukhe.goal")
        assert isinstance(goal, dict) and goal["status"] == "paused"
        assert any(e.display_only and e.custom_type == "eukhe.director" for e in conversation.user_view())


def test_simulate_names_the_line_of_a_malformed_script(tmp_path: Path) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"goal": "x"}\n{"reply": {"text": 3}}\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "eukhe", "directors", "simulate", "--script", str(script), "--session-dir", str(tmp_path / "s")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"eukhe directors simulate: {script}:2: reply.text: Input should be a valid string"]
    assert not (tmp_path / "s").exists()


def test_simulate_takes_its_limits_from_the_agents_cvars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """directors.stallSteps set in the global config.cfg: the goal pauses after 2 continuations."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "config.cfg").write_text("set directors.stallSteps 2\n", encoding="utf-8")
    monkeypatch.setenv("EUKHE_AGENT_DIR", str(agent))  # over the autouse agent dir
    script = write(
        tmp_path / "script.jsonl",
        [{"goal": "make the build green"}, {"input": "fix it"}] + [{"reply": {"text": "waiting"}}] * 3,
    )
    assert main(["directors", "simulate", "--script", str(script), "--session-dir", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "No progress: 2 goal continuations in a row" in out
