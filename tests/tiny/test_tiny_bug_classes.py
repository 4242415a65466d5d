"""The tiny models' bug classes (inference.md S9): role, chain, titles, base URL and runtime read
from a settings file and then ignored; stt.enabled's default; --base-url against the setting and
the variable; the fsync of each downloaded file."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.settings.agent import EukheSettings
from eukhe.tiny import catalog, download
from eukhe.tiny.settings import TinySettings
from tests.bug_classes import table_default, Fsyncs, seed_defaults, write_json
from tests.tiny.test_download import GOOD, _model, _serve, server  # noqa: F401 (server: the fixture)


def test_the_tiny_settings_in_settings_json_are_used(tmp_path: Path) -> None:
    """Caught: TinySettings.from_cvars kept titles on whatever titles.generate said."""
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {
        "modelRoles": {"tiny": "kokoro-82m", "judge": "judge-x"},
        "retry": {"fallbackChains": {"tiny": ["a", "b"]}},
        "titles": {"generate": False},
        "tinyModels": {"baseUrl": "http://mirror.example"},
        "providers": {"tinyRuntimeLibrary": "/opt/ort.so"},
    })
    found = TinySettings.load(agent)
    assert found.primary("tiny") == "kokoro-82m" and found.primary("judge") == "judge-x"
    assert found.fallback("tiny") == ("a", "b")
    assert found.titles is False
    assert (found.base_url, found.runtime_library) == ("http://mirror.example", "/opt/ort.so")


def test_stt_enabled_defaults_to_the_seeds_value(tmp_path: Path) -> None:
    """Caught: the table declared stt.enabled with default true (the seed: "stt.enabled (default false)")."""
    stated = seed_defaults()["stt.enabled"]
    assert table_default("stt.enabled") is stated is EukheSettings(tmp_path / "agent").cvars.value([], "stt.enabled")
    assert TinySettings.load(tmp_path / "agent") == TinySettings()  # no file: no role, no chain, titles on, catalog hosts


def test_base_url_flag_wins_over_the_setting_and_the_setting_over_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Caught: tiny-models download took tinyModels.baseUrl before the --base-url it was given."""
    agent = tmp_path / "agent"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(download.BASE_URL_ENV, "ftp://from-the-variable")
    model = catalog.CATALOG[0].id

    def refused(*flags: str) -> str:
        assert main(["--agent-dir", str(agent), "tiny-models", "download", model, *flags]) == 2
        return capsys.readouterr().err

    assert "ftp://from-the-variable" in refused()
    write_json(agent / "settings.json", {"tinyModels": {"baseUrl": "ftp://from-the-setting"}})
    assert "the setting tinyModels.baseUrl 'ftp://from-the-setting'" in refused()
    assert "--base-url 'ftp://from-the-flag'" in refused("--base-url", "ftp://from-the-flag")


def test_every_downloaded_file_is_fsynced(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Caught: download's _fetch left out os.fsync of the fetched file before its checks and rename."""
    _serve({})
    synced = Fsyncs(monkeypatch)
    where = download.download(tmp_path, _model(), base=server)
    names = {Path(p).name for p in synced.paths}
    assert {Path(name).name for name in GOOD} <= names, synced.paths
    assert all((where / name).is_file() for name in GOOD)
