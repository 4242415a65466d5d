"""Reasoning depth's bug classes (inference.md S10): defaultThinkingLevel read from a settings
file and then ignored; its default; the stored level against the setting. A thinking level is
session state held in memory here: the effort area writes no file, so no durability call."""

from __future__ import annotations

from pathlib import Path

from eukhe.effort import CatalogModel, ThinkingSession
from eukhe.settings.agent import EukheSettings
from tests.bug_classes import table_default, seed_defaults, write_json

REASONS = CatalogModel("m", True, None)


def _opened(agent: Path, stored: str | None = None) -> str:
    default = EukheSettings(agent).cvars.value([], "defaultThinkingLevel")
    return ThinkingSession(REASONS, stored=stored, default=default).open()


def test_default_thinking_level_in_settings_json_opens_a_session(tmp_path: Path) -> None:
    """Caught: settled_level skipped the default setting (stored, else medium)."""
    write_json(tmp_path / "agent" / "settings.json", {"defaultThinkingLevel": "high"})
    assert _opened(tmp_path / "agent") == "high"
    write_json(tmp_path / "agent" / "settings.json", {"defaultThinkingLevel": "low"})
    assert _opened(tmp_path / "agent") == "low"


def test_a_session_opens_at_the_seeds_default_level(tmp_path: Path) -> None:
    """Caught: settled_level fell back to off, not medium, when neither a stored level nor the setting was there."""
    stated = seed_defaults()["defaultThinkingLevel"]
    assert table_default("defaultThinkingLevel") == stated == _opened(tmp_path / "agent")
    assert ThinkingSession(REASONS).open() == stated  # no setting given at all: "else medium"


def test_the_stored_level_wins_over_the_default_setting(tmp_path: Path) -> None:
    """Caught: settled_level took the default setting before the session's stored level."""
    write_json(tmp_path / "agent" / "settings.json", {"defaultThinkingLevel": "high"})
    assert _opened(tmp_path / "agent", stored="low") == "low"
