"""The sessions dir precedence of control.md S4b.7, one test per level, for each reader that
exists: ``eukhe.paths.resolve_session_dir`` and the CLI (`eukhe session list` says which dir
it read and lists the session made there). Each test sets every lower level too, so the
level under test must win over all of them."""

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
        3 the legacy variable, 4 project sessionDir, 5 global sessionDir."""
        if level <= 2:
            self.monkeypatch.setenv(paths.SESSION_DIR_ENV, str(self.root / "from-env"))
        if level <= 3:
            self.monkeypatch.setenv(paths.LEGACY_SESSION_DIR_ENV, str(self.root / "from-legacy"))
        if level <= 4:
            _settings(self.project / ".eukhe" / "settings.json", {"sessionDir": "from-project", "theme": "dark"})
        if level <= 5:
            self.monkeypatch.setenv(paths.AGENT_DIR_ENV, str(self.agent))
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


def test_the_project_session_dir_setting_wins_over_the_global_one(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(4)
    settings = world.project / ".eukhe" / "settings.json"
    world.check(world.project / "from-project", str(settings), capsys=capsys)


def test_the_global_session_dir_setting_wins_over_the_default(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.level(5)
    world.check(world.agent / "from-global", str(world.agent / "settings.json"), capsys=capsys)


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
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"sessionDir": 7}', "sessionDir is 7, not a path"),
    ],
)
def test_a_broken_settings_file_is_named_and_never_written(
    world: World, capsys: pytest.CaptureFixture[str], text: str, reason: str
) -> None:
    settings = world.home / ".eukhe" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(text, encoding="utf-8")
    with pytest.raises(paths.SettingsFileError) as error:
        paths.session_dir()
    assert error.value.path == settings and reason in str(error.value) and str(settings) in str(error.value)
    assert cli.main(["session", "list"]) == 1
    err = capsys.readouterr().err
    assert str(settings) in err and reason in err
    assert settings.read_text(encoding="utf-8") == text
    # a higher level never reads it
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
