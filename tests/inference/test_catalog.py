"""The model catalog, models.json and the saved default model (inference.md S6), with the seed's
tests chain::tests::a_bundle_without_a_compiled_model_keeps_it and model_catalog_e2e's
a_bundle_without_a_compiled_model_still_lists_it, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eukhe.cli import main
from eukhe.inference import catalog, default_model, quirks


def _bundle(models: list[dict[str, object]], provider: str = "anthropic", api: str = "anthropic-messages") -> str:
    return json.dumps({"version": 1, "providers": [{"id": provider, "api": api, "baseUrl": "https://bundle.example", "models": models}]})


def test_a_bundle_without_a_compiled_model_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "models.bundled.json"
    path.write_text(_bundle([{"id": "claude-opus-4-6", "name": "Opus (bundled)", "reasoning": True, "featured": True}]))
    bundled, problems = catalog.load_bundled(path)
    assert problems == [] and bundled is not None
    union = catalog.effective_catalog(bundled, catalog.compiled())
    keys = [m.key for m in union]
    assert keys[0] == ("anthropic", "claude-opus-4-6")
    assert ("anthropic", "claude-haiku-5.5") in keys and len(keys) == len(set(keys)) == len(catalog.compiled())
    opus = union[0]
    assert opus.name == "Opus (bundled)" and opus.base_url == "https://bundle.example" and opus.featured is True
    assert opus.thinking_level_map == {"xhigh": "max"}  # filled from the compiled entry: same api
    assert [m.key for m in union[1:]] == [m.key for m in catalog.compiled() if m.key != ("anthropic", "claude-opus-4-6")]


def test_a_bundle_on_another_api_fills_nothing() -> None:
    compiled = [m for m in catalog.compiled() if m.key == ("anthropic", "claude-opus-4-6")]
    bundled = catalog.parse_catalog(_bundle([{"id": "claude-opus-4-6"}], api="openai-completions"), "bundled")
    union = catalog.effective_catalog(bundled, compiled)
    assert union[0].thinking_level_map is None and union[0].api == "openai-completions"


def test_a_bundle_without_a_compiled_model_still_lists_it(tmp_path: Path) -> None:
    # The pinned snapshot lacks Claude Haiku 5.5 (compiled, not pinned); with an Anthropic login it
    # is listed and usable as the saved default.
    bundle = tmp_path / "models.bundled.json"
    bundle.write_text(_bundle([{"id": "claude-opus-4-6", "reasoning": True}, {"id": "claude-sonnet-4-6", "reasoning": True}]))
    reg = catalog.registry(tmp_path, bundle)
    assert reg.find("anthropic", "claude-haiku-5.5") is not None
    chosen = default_model.resolve_default(("anthropic", "claude-haiku-5.5"), [m.key for m in reg.models], None, ["anthropic"], [])
    assert chosen.model == ("anthropic", "claude-haiku-5.5") and chosen.row is None and chosen.error is None


def test_a_missing_or_damaged_bundle_gives_the_compiled_catalog(tmp_path: Path) -> None:
    assert catalog.load_bundled(tmp_path / "absent.json") == (None, [])
    for text in ("{", '{"version": 1, "providers": [{"id": "x", "api": "smoke-signals", "baseUrl": "u", "models": []}]}', _bundle([{"id": "a"}, {"id": "a"}]), '{"version": 2, "providers": []}', _bundle([{"id": "a", "cost": {"input": "NaN", "output": 1}}])):
        path = tmp_path / "models.bundled.json"
        path.write_text(text)
        bundled, problems = catalog.load_bundled(path)
        assert bundled is None and len(problems) == 1 and "damaged bundle" in problems[0]
        assert catalog.registry(None, path).models == list(catalog.compiled())
    path.write_bytes(b"\xff\xfe")
    assert catalog.load_bundled(path)[0] is None


def test_each_models_json_provider_loads_alone(tmp_path: Path) -> None:
    document = {
        "providers": {
            "good": {"baseUrl": "http://127.0.0.1:8080/v1", "apiKey": "k", "models": [{"id": "qwen3.8-27b", "reasoning": True}]},
            "no-key": {"baseUrl": "http://x", "models": []},
            "no-url": {"apiKey": "k", "models": []},
            "bad-model": {"baseUrl": "http://x", "apiKey": "k", "models": [{"id": 3}]},
            "bad-level": {"baseUrl": "http://x", "apiKey": "k", "models": [{"id": "m", "thinkingLevelMap": {"ultra": "x"}}]},
            "twice": {"baseUrl": "http://x", "apiKey": "k", "models": [{"id": "m"}, {"id": "m"}]},
            "not-an-object": 7,
        }
    }
    (tmp_path / "models.json").write_text(json.dumps(document))
    loaded = catalog.load_models_json(tmp_path / "models.json")
    assert list(loaded.providers) == ["good"]
    named = sorted(d.split("providers.")[1].split(".")[0].split(":")[0] for d in loaded.diagnostics)
    assert named == ["bad-level", "bad-model", "no-key", "no-url", "not-an-object", "twice"]
    reg = catalog.registry(tmp_path)
    assert reg.find("good", "qwen3.8-27b") is not None and len(reg.diagnostics) == 6


def test_an_unreadable_models_json_is_one_diagnostic_and_no_custom_models(tmp_path: Path) -> None:
    for text in ("{not json", "[1, 2]", '{"providers": []}'):
        (tmp_path / "models.json").write_text(text)
        loaded = catalog.load_models_json(tmp_path / "models.json")
        assert loaded.providers == {} and len(loaded.diagnostics) == 1
    (tmp_path / "models.json").write_bytes(b"\xff")
    assert len(catalog.load_models_json(tmp_path / "models.json").diagnostics) == 1
    assert catalog.load_models_json(tmp_path / "absent.json").diagnostics == []
    (tmp_path / "models.json").write_text('{"providers": {}, "extra": 1}')
    assert catalog.load_models_json(tmp_path / "models.json").diagnostics == [f"{tmp_path / 'models.json'}: extra: unknown key (ignored)"]


def test_the_saved_default_is_honoured_or_reported() -> None:
    catalog_keys = [("anthropic", "claude-opus-4-6"), ("openai", "gpt-5.5")]
    gone = default_model.resolve_default(("anthropic", "claude-2"), catalog_keys, None, ["anthropic", "openai"], [("openai", "gpt-5.5")])
    assert gone.model == ("openai", "gpt-5.5")
    assert gone.row == {"kind": "eukhe.default_model", "saved": "anthropic/claude-2", "reason": "not_in_catalog", "replacement": "openai/gpt-5.5"}
    unkeyed = default_model.resolve_default(("anthropic", "claude-opus-4-6"), catalog_keys, None, ["openai"], [("openai", "gpt-5.5")])
    assert unkeyed.model is None and isinstance(unkeyed.error, default_model.DefaultUnusable)
    assert "eukhe login anthropic" in str(unkeyed.error) and unkeyed.row is not None and unkeyed.row["reason"] == "no_credentials"
    nothing = default_model.resolve_default(("anthropic", "claude-opus-4-6"), catalog_keys, [("openai", "gpt-5.5")], ["anthropic"], [])
    assert nothing.model is None and nothing.row is not None and nothing.row["reason"] == "not_enabled" and nothing.row["replacement"] is None


def test_the_memory_compactor_fails_with_the_saved_default_and_reason() -> None:
    from bend import default_model as m

    world = m.World((("openai", "gpt-5.5"),), None, ("openai",), (("openai", "gpt-5.5"),))
    resolved = m.resolve(("anthropic", "claude-2"), world)
    failed = m.compactor_model(None, ("anthropic", "claude-2"), resolved)
    assert failed.model is None and failed.failure == "saved default anthropic/claude-2: not_in_catalog"
    assert m.compactor_model(("openai", "gpt-5.5"), ("anthropic", "claude-2"), resolved).model == ("openai", "gpt-5.5")
    honoured = m.resolve(("openai", "gpt-5.5"), world)
    assert m.compactor_model(None, ("openai", "gpt-5.5"), honoured) == m.CompactorModel(("openai", "gpt-5.5"), None)
    assert m.compactor_model(None, None, m.resolve(None, world)).model == ("openai", "gpt-5.5")


# -- the command line ------------------------------------------------------------------------------------


def test_model_list_prints_the_catalog_and_diagnostics_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"local": {"baseUrl": "http://127.0.0.1:8080", "apiKey": "k", "models": [{"id": "qwen3.8-27b", "reasoning": True}]}, "broken": {"apiKey": "k"}}}))
    assert main(["--agent-dir", str(tmp_path), "model", "list"]) == 0
    out, err = capsys.readouterr()
    assert "local/qwen3.8-27b\topenai-completions\tqwen3.8-27b\toff,low,medium,xhigh\tmodels.json" in out.splitlines()
    assert "anthropic/claude-haiku-5.5" in out
    assert "providers.broken" in err and len(err.splitlines()) == 1
    assert main(["--agent-dir", str(tmp_path), "model", "list", "--bundled", str(tmp_path / "nope.json")]) == 2


def test_provider_caps_and_quirks_query(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--agent-dir", str(tmp_path), "provider", "caps", "openai"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("openai\tcount_tokens=openai") and "tokenize=unsupported" in out
    assert main(["--agent-dir", str(tmp_path), "provider", "caps"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len({m.provider for m in catalog.compiled()})
    assert main(["--agent-dir", str(tmp_path), "quirks", "query", "gemini-2.5-flash", "--provider", "google"]) == 0
    lines = dict(line.split("\t", 1) for line in capsys.readouterr().out.splitlines())
    assert lines["family"] == "gemini-2.5-flash"
    assert lines["thinking_budgets"] == "[128, 2048, 8192, 24576]\tfamily"
    assert lines["embed"] == '"google"\thost' and lines["strict_cap"] == "unknown\t-"
    assert main(["--agent-dir", str(tmp_path), "quirks", "query", "elpis-fast", "--provider", "prime-inference"]) == 0
    assert "family\t-" in capsys.readouterr().out


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for argv in (["provider", "caps", "nobody"], ["quirks", "query", " "], ["quirks"], ["model", "list", "--bundled", "/nonexistent/x.json"]):
        done = subprocess.run([sys.executable, "-m", "eukhe", "--agent-dir", str(tmp_path), *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, argv
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr


def test_a_damaged_compat_is_a_typed_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"local": {"baseUrl": "http://x", "apiKey": "k", "models": [{"id": "m", "compat": {"supportsStore": "yes"}}]}}}))
    assert main(["--agent-dir", str(tmp_path), "quirks", "query", "m", "--provider", "local"]) == 2
    assert "QuirksError::WrongType(compat/supports_store)" in capsys.readouterr().err
    assert isinstance(quirks.shipped(), quirks.Rulebook)
