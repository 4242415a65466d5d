"""The chat memory's bug classes (memory.md D6, D10, rule 6): the memory model and thinking read
from a settings file and then ignored; the memory settings' defaults; memory.model against the
memory role; the fsync of a logged message."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.memory.owner import Memory
from eukhe.memory.request import MemoryModelUnset, choose_model
from eukhe.settings.agent import EukheSettings
from tests.bug_classes import table_default, Fsyncs, seed_defaults, write_json


def _choice(agent: Path) -> tuple[str, str, str, str]:
    """The compactor's model as `eukhe chat` chooses it from the settings of ``agent``."""
    cvars = EukheSettings(agent).cvars
    chosen = choose_model(
        cvars.value([], "memory.model") or "", cvars.value([], "memory.thinking") or "medium", cvars.value([], "modelRoles.memory") or None, None, "-"
    )
    return chosen.provider, chosen.id, chosen.thinking, chosen.source


def test_the_memory_model_and_thinking_set_in_settings_json_are_used(tmp_path: Path) -> None:
    """Caught: choose_model sent "medium" in place of the memory.thinking it was given."""
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"memory": {"model": "anthropic/claude-haiku-4-5", "thinking": "high"}})
    assert _choice(agent) == ("anthropic", "claude-haiku-4-5", "high", "memory.model")
    write_json(agent / "settings.json", {"memory": {"thinking": "low"}, "modelRoles": {"memory": "openai/gpt-4.1-mini"}})
    assert _choice(agent) == ("openai", "gpt-4.1-mini", "low", "auxiliary")


def test_the_memory_settings_default_to_the_seeds_values(tmp_path: Path) -> None:
    """Caught: the table declared memory.settleTimeoutMs with default 2000 (the seed: "default 20 s")."""
    stated = seed_defaults()
    cvars = EukheSettings(tmp_path / "agent").cvars
    for cvar in ("memory.settleTimeoutMs", "memory.thinking"):
        assert table_default(cvar) == stated[cvar] == cvars.value([], cvar), cvar
    with pytest.raises(MemoryModelUnset):  # D6: no memory model by default, never the turn's
        _choice(tmp_path / "agent")


def test_memory_model_wins_over_the_memory_role(tmp_path: Path) -> None:
    """Caught: choose_model took the memory role (auxiliary) first when both were set."""
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"memory": {"model": "anthropic/claude-haiku-4-5"}, "modelRoles": {"memory": "openai/gpt-4.1-mini"}})
    assert _choice(agent)[:2] == ("anthropic", "claude-haiku-4-5")


def test_a_logged_message_is_fsynced_with_its_day_file_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: write_line of the day log left out os.fsync after the write."""
    chat = tmp_path / "agent" / "chat" / "main"
    with Memory(chat) as memory:
        synced = Fsyncs(monkeypatch)
        memory.append("the first message")
        days = sorted(p for p in chat.rglob("*.jsonl"))
        assert days and all(synced.of(day) >= 1 for day in days), (days, synced.paths)
        assert any(synced.of(day.parent) >= 1 for day in days), "a new day file's entry is durable"
        count = sum(synced.of(day) for day in days)
        memory.append("the second message")
        assert sum(synced.of(day) for day in days) > count
