"""The sessions dir precedence of control.md S4b.7, one test per level, for each reader that
exists: ``eukhe.paths.resolve_session_dir`` and the CLI (`eukhe session list` says which dir
it read and lists the session made there). Each test sets every lower level too, so the
level under test must win over all of them. The setting is the Global cvar ``sessionDir`` of
the settings layer (S4): the global settings.json, then the global config.cfg (the later
layer wins); a project file never sets it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eukhe import cli, paths
from eukhe.session import Store

VARIABLES = (paths.AGENT_DIR_ENV, paths.SESSION_DIR_ENV, paths.LEGACY_SESSION_DIR_ENV)


class World:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "project"
        self.agent = root / "agent"
        for directory in (self.home, self.project, self.agent):
            directory.mkdir()
        self.monkeypatch = monkeypatch
        for name in VARIABLES:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.chdir(self.project)

    def level(self, level: int) -> None:
        """Set every level from ``level`` down: 1 flag (given to the readers), 2 EUKHE_SESSION_DIR,
        3 the legacy variable, 4 sessionDir in the global config.cfg, 5 sessionDir in the global
        settings.json. The agent dir is always ``agent`` (EUKHE_AGENT_DIR)."""
        self.monkeypatch.setenv(paths.AGENT_DIR_ENV, str(self.agent))
        if level <= 2:
            self.monkeypatch.setenv(paths.SESSION_DIR_ENV, str(self.root / "from-env"))
        if level <= 3:
            self.monkeypatch.setenv(paths.LEGACY_SESSION_DIR_ENV, str(self.root / "from-legacy"))
        if level <= 4:
            (self.agent / "config.cfg").write_text("set sessionDir from-cfg\n", encoding="utf-8")
        if level <= 5:
            _settings(self.agent / "settings.json", {"sessionDir": "from-global"})

    def check(self, expected: Path, source: str, flag: Path | None = None, capsys: pytest.CaptureFixture[str] | None = None) -> None:
        assert paths.resolve_session_dir(flag) == (expected, source)
        assert capsys is not None
        Store(expected).create("made-here").close()
        argv = ["session", *(["--session-dir", str(flag)] if flag else []), "list"]
        assert cli.main(argv) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == f"sessions in {expected} (from {source})"
        assert [line.split()[0] for line in out[1:]] == ["made-here"]


def _settings(path: Path, document: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return World(tmp_path, monkeypatch)


def test_the_session_dir_flag_wins(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(1)
    flag = world.root / "from-flag"
    world.check(flag, "--session-dir", flag, capsys)


def test_eukhe_session_dir_wins_over_the_legacy_variable_and_the_setting(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(2)
    world.check(world.root / "from-env", paths.SESSION_DIR_ENV, capsys=capsys)


def test_the_legacy_variable_wins_over_the_setting(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(3)
    world.check(world.root / "from-legacy", paths.LEGACY_SESSION_DIR_ENV, capsys=capsys)


def test_the_global_config_cfg_session_dir_wins_over_the_global_settings_json(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(4)
    world.check(world.agent / "from-cfg", "global config.cfg", capsys=capsys)


def test_the_global_settings_json_session_dir_wins_over_the_default(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(5)
    world.check(world.agent / "from-global", "global settings.json", capsys=capsys)


def test_a_project_settings_file_never_moves_the_sessions_dir(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """sessionDir is a Global cvar: the project settings.json of a trusted project does not
    set it (its sessionDir is a settings error); the global one still applies."""
    world.level(5)
    _settings(world.agent / "settings.json", {"sessionDir": "from-global", "trustedProjects": [str(world.project)]})
    project_settings = world.project / ".eukhe" / "settings.json"
    _settings(project_settings, {"sessionDir": "from-project", "maxToolRounds": 7})
    world.check(world.agent / "from-global", "global settings.json", capsys=capsys)
    assert cli.main(["settings", "show"]) == 0
    shown = capsys.readouterr()
    lines = shown.out.splitlines()
    assert "maxToolRounds = 7  [project settings.json]" in lines  # trusted: its guarded item applies
    assert 'sessionDir = "from-global"  [global settings.json]' in lines
    assert f"settings error: {project_settings}: sessionDir: CvarError::Global(sessionDir)" in shown.err
    (world.agent / "settings.json").unlink()  # and alone it does not set it either
    world.check(world.agent / "sessions", "default", capsys=capsys)


def test_the_default_is_the_agent_dirs_sessions(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.check(world.home / ".eukhe" / "sessions", "default", capsys=capsys)  # ~/.eukhe


def test_the_default_follows_eukhe_agent_dir(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.monkeypatch.setenv(paths.AGENT_DIR_ENV, str(world.agent))
    world.check(world.agent / "sessions", "default", capsys=capsys)


def test_the_default_follows_the_agent_dir_flag(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.monkeypatch.setenv(paths.AGENT_DIR_ENV, str(world.root / "not-this-one"))
    other = world.root / "flagged-agent"
    assert paths.resolve_session_dir(agent_dir_flag=other) == (other / "sessions", "default")
    Store(other / "sessions").create("made-here").close()
    assert cli.main(["--agent-dir", str(other), "session", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"sessions in {other / 'sessions'} (from default)", _listed("made-here")]


def _listed(session_id: str) -> str:
    return f"{session_id}  entries 0  head None  conversations main"


@pytest.mark.parametrize(
    "text, reason",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "not an object"),
        ('{"sessionDir": 7}', "sessionDir: CvarError::BadValue"),
    ],
    # plain ids: a node id with "::" in its parameters cannot be selected again by its id (pytest
    # reads the "::" as a separator: "not found", exit code 4), which mutmut does for every test
    ids=["not-json", "not-an-object", "bad-session-dir"],
)
def test_a_broken_global_settings_file_falls_back_is_named_and_never_written(
    world: World, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    settings = world.home / ".eukhe" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text, encoding="utf-8")
    world.check(world.home / ".eukhe" / "sessions", "default", capsys=capsys)  # the next level
    assert cli.main(["settings", "show"]) == 0
    err = capsys.readouterr().err
    assert f"settings error: {settings}" in err and reason in err
    assert settings.read_text(encoding="utf-8") == text
    # a higher level does not read it either
    world.monkeypatch.setenv(paths.SESSION_DIR_ENV, str(world.root / "from-env"))
    assert paths.session_dir() == world.root / "from-env"
    assert settings.read_text(encoding="utf-8") == text


def test_relative_and_home_paths(world: World) -> None:
    assert paths.session_dir("rel") == world.project / "rel"
    world.monkeypatch.setenv(paths.SESSION_DIR_ENV, "~/s")
    assert paths.session_dir() == world.home / "s"
    world.monkeypatch.setenv(paths.SESSION_DIR_ENV, "")  # an empty variable counts as unset
    world.monkeypatch.setenv(paths.LEGACY_SESSION_DIR_ENV, "legacy")
    assert paths.session_dir() == world.project / "legacy"
    world.monkeypatch.delenv(paths.LEGACY_SESSION_DIR_ENV)
    agent = world.home / ".eukhe"
    _settings(agent / "settings.json", {"sessionDir": "rel"})  # a relative setting: from the agent dir
    assert paths.session_dir() == agent / "rel"
    _settings(agent / "settings.json", {"sessionDir": "~/s2"})
    assert paths.session_dir() == world.home / "s2"
    (agent / "config.cfg").write_text('set sessionDir ""\n', encoding="utf-8")  # empty: unset
    assert paths.resolve_session_dir() == (agent / "sessions", "default")
