"""The Directors' bug classes (control.md S5.6, S5.8): a limit read from a settings file and
then ignored; the limits' defaults; a flag against the setting it stands for; the fsync of a
push's commit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.directors.commands import session_command
from eukhe.directors.hooks import DirectorLimits, Directors
from eukhe.session import Store
from eukhe.settings.agent import CvarAgent, EukheSettings
from tests.bug_classes import Fsyncs, seed_defaults, write_json

REMINDERS = '{"input": "go"}\n{"command": "/remind one"}\n{"command": "/remind two"}\n{"command": "/remind three"}\n'


def _simulate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[str]:
    script = tmp_path / "script.jsonl"
    script.write_text(REMINDERS, encoding="utf-8")
    assert main(["directors", "simulate", "--script", str(script), "--session-dir", str(tmp_path / "sessions"), *flags]) == 0
    return [line for line in capsys.readouterr().out.splitlines() if "/remind" in line]


def _agent() -> Path:
    return Path(os.environ["EUKHE_AGENT_DIR"])


def test_the_limits_set_in_settings_json_are_the_limits_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Caught: directors simulate built DirectorLimits() instead of the agent's cvars (the settings file ignored)."""
    write_json(_agent() / "settings.json", {"directors": {"stackCap": 1, "maxSteps": 7, "stallSteps": 2}, "autonomous": {"maxContinuations": 4}})
    with Store(tmp_path / "s").create() as session:
        main_ = session.conversation("main")
        limits = DirectorLimits.of(CvarAgent(EukheSettings(_agent(), tmp_path), main_).value)
    assert (limits.stack_cap, limits.max_steps, limits.stall_steps, limits.max_continuations) == (1, 7, 2, 4)
    lines = _simulate(tmp_path, capsys)
    assert "refused" not in lines[0] and all("refused" in line for line in lines[1:]), lines  # a cap of 1 pushed layer


def test_the_limits_default_to_the_seeds_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Caught: DirectorLimits declared stall_steps = 4 (the seed: "directors.stallSteps, default 3")."""
    stated = seed_defaults()
    seed = (stated["directors.stackCap"], stated["directors.maxSteps"], stated["directors.stallSteps"])
    bare = DirectorLimits()
    assert (bare.stack_cap, bare.max_steps, bare.stall_steps) == seed
    with Store(tmp_path / "s").create() as session:
        read = DirectorLimits.of(CvarAgent(EukheSettings(_agent(), tmp_path), session.conversation("main")).value)
    assert (read.stack_cap, read.max_steps, read.stall_steps) == seed
    assert not any("refused" in line for line in _simulate(tmp_path, capsys))  # 3 reminders fit a cap of 8


def test_a_limit_flag_wins_over_its_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Caught: directors simulate kept configured.stack_cap when --stack-cap was given."""
    write_json(_agent() / "settings.json", {"directors": {"stackCap": 1}})
    lines = _simulate(tmp_path, capsys, "--stack-cap", "2")
    assert ["refused" in line for line in lines] == [False, False, True], lines


def test_a_push_is_fsynced_in_the_conversation_log_before_it_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: the session log's append left out os.fsync after its write."""
    with Store(tmp_path / "s").create() as session:
        conversation = session.conversation("main")
        directors = Directors(conversation, DirectorLimits())
        synced = Fsyncs(monkeypatch)
        before = {p: p.stat().st_size for p in session.dir.glob("*.jsonl")}
        session_command(directors, "/remind write the tests")
        grown = [p for p in session.dir.glob("*.jsonl") if p.stat().st_size != before.get(p, 0)]
        assert grown, "the push was committed to a log"
        assert all(synced.of(p) >= 1 for p in grown), (grown, synced.paths)
