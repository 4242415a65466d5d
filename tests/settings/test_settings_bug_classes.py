"""The settings' bug classes (control.md S4, S4b): a value read from a settings file and then
ignored; a default in the table; the precedence of the config's layers; the fsync of a write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from eukhe.settings.agent import EukheSettings
from tests.bug_classes import table_default, Fsyncs, seed_defaults, write_json


def test_values_set_in_each_settings_file_are_the_values_read(dirs: tuple[Path, Path, Path]) -> None:
    """Caught: config.load built the global settings.json layer with no sets (its applied leaves ignored)."""
    agent, project, _ = dirs
    write_json(agent / "settings.json", {"retry": {"baseDelayMs": 777, "enabled": False}, "directors": {"stackCap": 5}, "memory": {"thinking": "high"}})
    (agent / "config.cfg").write_text("set compaction.keepRecentTokens 1234\nset titles.generate false\n", encoding="utf-8")
    write_json(project / ".eukhe" / "settings.json", {"steeringMode": "all"})
    (project / ".eukhe" / "config.cfg").write_text("set followUpMode all\n", encoding="utf-8")
    wanted = {
        "retry.baseDelayMs": 777,
        "retry.enabled": False,
        "directors.stackCap": 5,
        "memory.thinking": "high",
        "compaction.keepRecentTokens": 1234,
        "titles.generate": False,
        "steeringMode": "all",
        "followUpMode": "all",
    }
    assert all(table_default(cvar) != value for cvar, value in wanted.items()), "each set differs from its default"
    settings = EukheSettings(agent, project)
    assert settings.config.errors == []
    assert {cvar: settings.cvars.value([], cvar) for cvar in wanted} == wanted


def test_every_default_the_seeds_state_is_the_tables(dirs: tuple[Path, Path, Path]) -> None:
    """Caught: the table declared directors.stackCap with default 9 (the seed: "default 8")."""
    agent, project, _ = dirs
    stated = seed_defaults()
    assert len(stated) >= 10, stated  # the seeds state ten defaults in their text
    assert {cvar: table_default(cvar) for cvar in stated} == stated
    cvars = EukheSettings(agent, project).cvars  # no file: every value is its default
    assert {cvar: cvars.value([], cvar) for cvar in stated} == stated


def test_the_layers_win_in_the_seeds_order(dirs: tuple[Path, Path, Path]) -> None:
    """Caught: the layers listed global config.cfg before project settings.json (the project's settings.json won over the global cfg)."""
    agent, project, _ = dirs
    files: list[tuple[Path, Callable[[int], object]]] = [
        (agent / "settings.json", lambda v: write_json(agent / "settings.json", {"retry": {"baseDelayMs": v}})),
        (project / ".eukhe" / "settings.json", lambda v: write_json(project / ".eukhe" / "settings.json", {"retry": {"baseDelayMs": v}})),
        (agent / "config.cfg", lambda v: (agent / "config.cfg").write_text(f"set retry.baseDelayMs {v}\n", encoding="utf-8")),
        (project / ".eukhe" / "config.cfg", lambda v: (project / ".eukhe" / "config.cfg").write_text(f"set retry.baseDelayMs {v}\n", encoding="utf-8")),
    ]
    for value, (_, write) in enumerate(files, 1):
        write(value)
    # S4: settings.json (global, then project), then config.cfg (global, then project): a higher layer wins
    for top in (4, 3, 2, 1):
        assert EukheSettings(agent, project).cvars.value([], "retry.baseDelayMs") == top
        files[top - 1][0].unlink()
    assert EukheSettings(agent, project).cvars.value([], "retry.baseDelayMs") == table_default("retry.baseDelayMs")
    # a project file never sets a Global cvar
    write_json(project / ".eukhe" / "settings.json", {"memory": {"thinking": "low"}})
    write_json(agent / "settings.json", {"memory": {"thinking": "high"}})
    assert EukheSettings(agent, project).cvars.value([], "memory.thinking") == "high"


def test_a_global_set_is_fsynced_before_it_returns(dirs: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: write_atomic left out the fsync of the temporary file before its rename."""
    agent, project, _ = dirs
    settings = EukheSettings(agent, project)
    synced = Fsyncs(monkeypatch)
    settings.set_global("retry.baseDelayMs", "4321")
    assert (agent / "config.cfg").read_text(encoding="utf-8").strip() == "set retry.baseDelayMs 4321"
    assert synced.written_whole(agent / "config.cfg"), synced.paths
