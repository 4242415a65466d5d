"""The tiny roles and titles read their settings through the settings layer (S9 roles 1 and
Uses, control.md S4b): modelRoles.<role>, retry.fallbackChains.<role>, titles.generate; the ids
the cvar table does not declare are unset. Titles run in the background: a turn never waits
(shown with the worker holding the title request, no timing)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from eukhe.settings.cvar import Cvars, Layer, Registry
from eukhe.settings.cvar_table import TABLE
from eukhe.tiny import catalog, paths, roles, uses
from eukhe.tiny.settings import BASE_URL_CVAR, RUNTIME_CVAR, TinySettings
from tests.tiny.conftest import Holding, hold_dir, joined, release


def _install(agent_dir: Path, model_id: str) -> None:
    where = paths.model_dir(agent_dir, model_id)
    for f in catalog.find(model_id).files:
        (where / f.path).parent.mkdir(parents=True, exist_ok=True)
        (where / f.path).write_bytes(b"x")
    (where / "engine.json").write_text(json.dumps({"kind": "echo"}), encoding="utf-8")


def _settings_json(agent_dir: Path, document: dict[str, object]) -> None:
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text(json.dumps(document), encoding="utf-8")


def test_settings_are_read_from_settings_json(tmp_path: Path) -> None:
    assert TinySettings.load(tmp_path) == TinySettings()  # nothing set: every role unset, titles on
    _settings_json(
        tmp_path,
        {
            "modelRoles": {"tiny": "lfm2.5-350m", "translate": "lfm2.5-230m"},
            "retry": {"fallbackChains": {"tiny": ["prov/m"], "translate": []}},
            "titles": {"generate": False},
        },
    )
    got = TinySettings.load(tmp_path)
    assert got.primary("tiny") == "lfm2.5-350m" and got.primary("translate") == "lfm2.5-230m"
    assert got.fallback("tiny") == ("prov/m",) and got.fallback("translate") == () and got.fallback("judge") is None
    assert got.primary("judge") is None and got.primary("speech") is None  # not declared in the cvar table
    assert got.titles is False and got.base_url is None and got.runtime_library is None


def test_the_roles_runtime_library_and_base_url_are_read_from_the_table() -> None:
    registry = Registry(TABLE)
    sets = [("modelRoles.judge", "openai/gpt-x"), ("modelRoles.speech", "kokoro"), ("modelRoles.dictation", "whisper-base"), (BASE_URL_CVAR, "http://127.0.0.1:1"), (RUNTIME_CVAR, "/lib/ort.so")]
    got = TinySettings.from_cvars(Cvars(registry, [Layer("global settings.json", False, sets)]))
    assert (got.primary("judge"), got.primary("speech"), got.primary("dictation"), got.base_url, got.runtime_library) == ("openai/gpt-x", "kokoro", "whisper-base", "http://127.0.0.1:1", "/lib/ort.so")


def test_roles_follow_the_settings(tmp_path: Path) -> None:
    for model in ("lfm2.5-230m", "lfm2.5-350m"):
        _install(tmp_path, model)
    assert uses.resolve("translate", tmp_path, settings=TinySettings.load(tmp_path)) == "lfm2.5-350m"  # the catalog order
    _settings_json(tmp_path, {"modelRoles": {"translate": "lfm2.5-230m"}})
    assert uses.resolve("translate", tmp_path, settings=TinySettings.load(tmp_path)) == "lfm2.5-230m"
    _settings_json(tmp_path, {"modelRoles": {"tiny": "absent"}, "retry": {"fallbackChains": {"tiny": []}}})
    with pytest.raises(roles.Unavailable) as caught:  # explicit []: the primary only
        uses.resolve("tiny", tmp_path, settings=TinySettings.load(tmp_path))
    assert caught.value.candidates == ("absent",)
    _settings_json(tmp_path, {"retry": {"fallbackChains": {"tiny": ["absent", "lfm2.5-350m"]}}})
    settings = TinySettings.load(tmp_path)
    assert uses.resolve("tiny", tmp_path, settings=settings) == "lfm2.5-350m"
    assert uses.resolve("tiny", tmp_path, primary="lfm2.5-230m", settings=settings) == "lfm2.5-230m"  # explicit wins
    _settings_json(tmp_path, {"retry": {"fallbackChains": {"judge": ["lfm2.5-230m"]}}})
    assert uses.judge_model(tmp_path, settings=TinySettings.load(tmp_path)) == "local/lfm2.5-230m"


def test_cli_translate_reads_the_settings(
    agent_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from eukhe.cli import main

    agent = agent_dir  # its fixture stops the worker the translation leaves running
    _install(agent, "lfm2.5-230m")
    monkeypatch.chdir(tmp_path)
    _settings_json(agent, {"modelRoles": {"translate": "lfm2.5-350m"}, "retry": {"fallbackChains": {"translate": []}}})
    assert main(["--agent-dir", str(agent), "translate", "German", "hello"]) == 1  # 350m only, not installed
    assert "Unavailable" in capsys.readouterr().err
    _settings_json(agent, {"modelRoles": {"translate": "lfm2.5-230m"}})
    assert main(["--agent-dir", str(agent), "translate", "German", "hello"]) == 1  # the echo engine echoes
    assert "TranslationError::Unchanged" in capsys.readouterr().err


def test_titles_never_block_the_turn_and_follow_titles_generate(agent_dir: Path) -> None:
    agent = agent_dir
    _install(agent, "lfm2.5-230m")
    got: list[str | None] = []
    hold = hold_dir()
    holding = Holding(hold)
    thread = uses.start_title(agent, f"hold:{hold}", got.append, settings=TinySettings.load(agent))
    assert thread is not None  # the turn goes on: start_title has returned
    holding.wait()  # the worker holds the title request now
    assert got == [] and thread.is_alive()  # no title yet, and nobody waited for one
    release(hold)
    joined(thread)
    assert len(got) == 1 and got[0] is not None and got[0].startswith("Write a short title")
    _settings_json(agent, {"titles": {"generate": False}})
    assert uses.start_title(agent, "fix the build", got.append, settings=TinySettings.load(agent)) is None
    done = threading.Event()
    _settings_json(agent, {"modelRoles": {"tiny": "absent"}, "retry": {"fallbackChains": {"tiny": []}}})

    def on_title(title: str | None) -> None:
        got.append(title)
        done.set()

    thread = uses.start_title(agent, "fix the build", on_title, settings=TinySettings.load(agent))
    assert thread is not None
    joined(thread)
    assert done.is_set() and got[-1] is None  # Unavailable: no title
