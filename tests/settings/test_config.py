"""Regression tests of control.md S4b (config documents), on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eukhe.settings import config
from eukhe.settings.agent import EukheSettings
from eukhe.settings.cvar import CvarError
from eukhe.settings.cvar_table import registry
from eukhe.settings.files import DocumentError

Dirs = tuple[Path, Path, Path]


def test_add_refuses_a_settings_file_that_does_not_parse(dirs: Dirs) -> None:
    settings = dirs[0] / "settings.json"
    for broken in (b"{not json", b"[1, 2]", b'"text"'):
        settings.write_bytes(broken)
        with pytest.raises(DocumentError):
            config.mcp_add(settings, "git", {"command": "g"})
        with pytest.raises(DocumentError):
            config.mcp_remove(settings, "git")
        assert settings.read_bytes() == broken


def test_a_setter_keeps_a_field_that_failed_to_load_and_a_concurrent_edit(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    path = agent_dir / "settings.json"
    path.write_text(json.dumps({"transport": "pigeon", "retry": {"maxRetries": 2}}))
    manager = config.SettingsManager(registry(), config.Paths(agent_dir))
    assert manager.loaded["transport"] == "pigeon"
    config.mcp_add(path, "git", {"command": "g"})  # another writer, after the manager loaded
    with pytest.raises(CvarError):
        manager.set("transport", "pigeon")  # a value the setting does not hold is refused
    assert manager.set("retry.enabled", False).show() == "Persisted"
    assert json.loads(path.read_text()) == {
        "transport": "pigeon", "retry": {"maxRetries": 2, "enabled": False}, "mcpServers": {"git": {"command": "g"}},
    }


def test_another_version_is_refused_and_never_rewritten(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    for name in ("settings.json", "mcp-connections.json", "auth.json"):
        (agent_dir / name).write_text(json.dumps({"version": 2, "x": 1}))
    before = {p.name: p.read_bytes() for p in agent_dir.iterdir()}
    with pytest.raises(DocumentError, match="unknown version"):
        config.SettingsManager(registry(), config.Paths(agent_dir)).set("defaultModel", "m")
    with pytest.raises(DocumentError, match="unknown version"):
        config.record_connection(agent_dir / "mcp-connections.json", "git", {"pid": 1})
    with pytest.raises(DocumentError, match="unknown version"):
        config.AuthStorage(agent_dir / "auth.json").set("openai", {"key": "k"})
    assert {p.name: p.read_bytes() for p in agent_dir.iterdir() if p.suffix == ".json"} == before


def test_set_over_an_unreadable_auth_file_is_refused_and_writes_nothing(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    auth = agent_dir / "auth.json"
    auth.write_bytes(b'{"openai": {"key": "\xff"}}')
    storage = config.AuthStorage(auth)
    with pytest.raises(DocumentError, match="unreadable"):
        storage.set("anthropic", {"key": "k"})
    with pytest.raises(DocumentError):
        storage.remove("openai")
    assert auth.read_bytes() == b'{"openai": {"key": "\xff"}}'
    auth.unlink()
    storage.set("anthropic", {"key": "k"})  # only a missing file reads as empty
    assert json.loads(auth.read_text()) == {"anthropic": {"key": "k"}} and auth.stat().st_mode & 0o777 == 0o600


def test_a_bad_leaf_drops_only_itself_and_is_named(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "settings.json").write_text(json.dumps(
        {"retry": {"enabled": False, "maxRetries": "many", "bogus": 1}, "transport": "sse", "idleEvictionMinutes": "soon",
         "providerMaxInFlight": {"openai": 2, "anthropic": "x"}}
    ))
    settings = EukheSettings(agent_dir)
    named = sorted(e.source.rsplit(": ", 1)[-1] + " " + e.message.split(": ")[0] for e in settings.config.errors)
    assert named == ["idleEvictionMinutes CvarError::BadValue(idleEvictionMinutes)",
                     "providerMaxInFlight CvarError::BadValue(providerMaxInFlight)",
                     "retry.bogus CvarError::Undeclared(retry.bogus)",
                     "retry.maxRetries CvarError::BadValue(retry.maxRetries)"]
    value = settings.cvars.value
    assert value([], "retry.enabled") is False and value([], "transport") == "sse"
    assert value([], "retry.maxRetries") == 3 and value([], "idleEvictionMinutes") == "off"
    # the malformed limit fails closed: its bad entry limits to 1, the whole entry applies
    assert settings.config.limit("openai") == 2 and settings.config.limit("anthropic") == 1
    assert settings.config.limit("google") is None


def test_a_malformed_limit_that_is_not_a_map_limits_every_provider(dirs: Dirs) -> None:
    agent_dir = dirs[0]
    (agent_dir / "settings.json").write_text(json.dumps({"providerMaxInFlight": 8}))
    loaded = EukheSettings(agent_dir).config
    assert loaded.limit("openai") == 1 and loaded.limit("anything") == 1


def test_a_setting_a_cfg_file_shadows_says_so(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "config.cfg").write_text("set retry.maxRetries 9\n")
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"transport": "sse"}))
    manager = config.SettingsManager(registry(), config.Paths(agent_dir, project))
    assert manager.set("retry.maxRetries", 4).shadowed_by == str(agent_dir / "config.cfg")
    assert manager.set("transport", "websocket").show() == f"Persisted::Shadowed({project / '.eukhe' / 'settings.json'})"
    assert manager.set("defaultModel", "m").show() == "Persisted"
    assert json.loads((agent_dir / "settings.json").read_text()) == {"retry": {"maxRetries": 4}, "transport": "websocket", "defaultModel": "m"}


def test_a_project_mcp_entry_never_takes_global_credentials(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "settings.json").write_text(json.dumps({
        "trustedProjects": [str(project)],
        "mcpServers": {"git": {"command": "g", "url": "https://global", "headers": {"Authorization": "secret"}}, "web": {"command": "w"}},
    }))
    (project / ".eukhe" / "settings.json").write_text(json.dumps({"mcpServers": {"git": {"command": "local-git"}}}))
    loaded = EukheSettings(agent_dir, project).config
    assert loaded.trusted
    assert loaded.servers == {"git": {"command": "local-git"}, "web": {"command": "w"}}


def test_an_untrusted_project_changes_no_limit_prompt_or_credential(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (project / ".eukhe" / "settings.json").write_text(json.dumps({
        "maxToolRounds": 999, "autonomous": {"enabled": True}, "transport": "sse", "mcpServers": {"x": {"command": "evil"}},
    }))
    (project / ".eukhe" / "config.cfg").write_text("set directors.maxSteps 9999\nset trustedProjects \"[\\\".\\\"]\"\n")
    (project / ".eukhe" / "SYSTEM.md").write_text("obey the project")
    settings = EukheSettings(agent_dir, project)
    value = settings.cvars.value
    assert not settings.config.trusted
    assert value([], "maxToolRounds") == 50 and value([], "autonomous.enabled") is False
    assert value([], "directors.maxSteps") == 200 and value([], "transport") == "sse"
    assert settings.config.servers == {} and settings.config.prompts == {}
    warning = settings.config.trust_warning()
    assert warning is not None
    for item in ("maxToolRounds", "autonomous.enabled", "directors.maxSteps", "mcpServers.x", "SYSTEM.md"):
        assert item in warning
    assert any("Global(trustedProjects)" in e.message for e in settings.config.errors)  # only the global layer trusts


def test_a_trusted_projects_prompts_are_read_and_an_unreadable_one_is_named(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}))
    (project / ".eukhe" / "SYSTEM.md").write_text("obey the project")
    (project / ".eukhe" / "APPEND_SYSTEM.md").write_bytes(b"\xff\xfe not utf-8")
    loaded = EukheSettings(agent_dir, project).config
    assert loaded.trusted and loaded.prompts == {"SYSTEM.md": "obey the project"}
    unreadable = [e for e in loaded.errors if e.source == str(project / ".eukhe" / "APPEND_SYSTEM.md")]
    assert len(unreadable) == 1 and unreadable[0].message.startswith("cannot be read: ")


def test_an_empty_entry_of_trusted_projects_trusts_nothing(dirs: Dirs) -> None:
    agent_dir, _, _ = dirs
    (agent_dir / "settings.json").write_text(json.dumps({"trustedProjects": [""]}))  # not the agent directory
    (agent_dir / ".eukhe").mkdir()
    (agent_dir / ".eukhe" / "SYSTEM.md").write_text("obey the project")
    loaded = EukheSettings(agent_dir, agent_dir).config
    assert not loaded.trusted and loaded.prompts == {}


def test_a_document_error_without_detail_says_its_kind_alone(dirs: Dirs) -> None:
    agent_dir, project, _ = dirs
    (agent_dir / "settings.json").write_text("[1, 2]")
    errors = [e for e in EukheSettings(agent_dir, project).config.errors if e.source == str(agent_dir / "settings.json")]
    assert [e.message for e in errors] == ["not an object"]
