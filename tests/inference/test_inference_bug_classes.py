"""The inference layer's bug classes (inference.md S6.5, S6.6; control.md S4b.1): retry and
stream-repeat settings read from a settings file and then ignored; their defaults; a command's
--provider and --model against the saved default model; the fsync of a credential's write."""

from __future__ import annotations

from pathlib import Path

import pytest

from eukhe.inference.resolve import resolve_model
from eukhe.inference.guard import Guard
from eukhe.inference.wire.retry import Policy
from eukhe.settings.agent import EukheSettings
from eukhe.settings.config import AuthStorage
from tests.bug_classes import table_default, Fsyncs, seed_defaults, write_json


def test_retry_and_repeat_settings_in_settings_json_are_used(tmp_path: Path) -> None:
    """Caught: Guard.from_settings built the guard with 64 chunks, not retry.provider.streamRepeatLimit."""
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"retry": {"enabled": False, "maxRetries": 1, "baseDelayMs": 10, "provider": {"streamRepeatLimit": 32}}})
    settings = EukheSettings(agent)
    policy = Policy.from_settings(lambda cvar: settings.cvars.value([], cvar))
    assert (policy.enabled, policy.max_retries, policy.base_delay_ms) == (False, 1, 10)
    assert Guard.from_settings(lambda cvar: settings.cvars.value([], cvar)).limit == 32


def test_inference_settings_default_to_the_seeds_values(tmp_path: Path) -> None:
    """Caught: the table declared retry.provider.streamRepeatLimit with default 32 (the seed: "default 64")."""
    stated = seed_defaults()
    cvars = EukheSettings(tmp_path / "agent").cvars
    for cvar in ("retry.provider.streamRepeatLimit", "compaction.keepRecentTokens", "compaction.providerTokenCount"):
        assert table_default(cvar) == stated[cvar] == cvars.value([], cvar), cvar
    assert Guard.from_settings(lambda cvar: cvars.value([], cvar)).limit == stated["retry.provider.streamRepeatLimit"]


def test_the_given_provider_and_model_win_over_the_saved_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: resolve_model took defaultProvider before the --provider it was given."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-a")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-o")
    agent = tmp_path / "agent"
    write_json(agent / "settings.json", {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"})
    cvars = EukheSettings(agent).cvars
    saved = resolve_model(agent, cvars, None, None)
    assert (saved.provider, saved.id) == ("anthropic", "claude-sonnet-4-5")
    given = resolve_model(agent, cvars, "openai", "gpt-5.5-mini")
    assert (given.provider, given.id) == ("openai", "gpt-5.5-mini")
    other = resolve_model(agent, cvars, "openai", None)  # the saved model is anthropic's: not taken for openai
    assert other.provider == "openai" and other.id != "claude-sonnet-4-5"
    model = resolve_model(agent, cvars, None, "claude-opus-4-6")
    assert (model.provider, model.id) == ("anthropic", "claude-opus-4-6")


def test_a_credential_is_written_whole_and_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caught: write_atomic left out the fsync of the directory after the rename."""
    path = tmp_path / "agent" / "auth.json"
    path.parent.mkdir()
    synced = Fsyncs(monkeypatch)
    AuthStorage(path).set("openai", {"type": "api_key", "key": "sk-1"})
    assert AuthStorage(path).get("openai") == {"type": "api_key", "key": "sk-1"}
    assert synced.written_whole(path), synced.paths
