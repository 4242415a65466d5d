"""The model a command or a session talks to (inference.md S6: the catalog, models.json, the
saved default, credentials): ``resolve_model`` names the provider and model (given, else the
saved default, else the rulebook's provider default, else the provider's first model) and finds
its base URL and key; ``NoModel`` says why there is none, and whether the command line can fix
it. `eukhe ask`, `eukhe chat`, the agent's turns, its subagents and the compactor's model all
resolve through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eukhe.inference import catalog, quirks


class NoModel(Exception):
    """Why a command has no model to talk to. ``usage`` tells whether the command line can fix
    it (an unknown provider or model: exit 2) or only the environment can (no credentials, a
    damaged auth.json: exit 1). The text names no command: each caller says who asked."""

    def __init__(self, reason: str, usage: bool) -> None:
        super().__init__(reason)
        self.usage = usage


def _credential(agent: Path, provider: str, custom: catalog.CustomProvider | None) -> str:
    """The key of a provider: models.json's apiKey, else auth.json's credential (a string, or an
    object with key, apiKey or access), else the <PROVIDER>_API_KEY variable; "" when none."""
    import os

    from eukhe.settings.config import AUTH_FILE, AuthStorage
    from eukhe.settings.files import DocumentError

    if custom is not None:
        return custom.api_key
    try:
        stored = AuthStorage(agent / AUTH_FILE).get(provider)
    except DocumentError as error:
        raise NoModel(f"{agent / AUTH_FILE}: {error}", usage=False) from error
    if isinstance(stored, str) and stored:
        return stored
    if isinstance(stored, dict):
        for name in ("key", "apiKey", "access"):
            if isinstance(stored.get(name), str) and stored[name]:
                return str(stored[name])
    return os.environ.get(provider.upper().replace("-", "_") + "_API_KEY", "")


def resolve_model(agent: Path, cvars: Any, provider: str | None, model_id: str | None) -> Any:
    """The model a command talks to: the provider (given, else defaultProvider), the model (given,
    else defaultModel of that provider, else the rulebook's provider default, else the
    provider's first model), its base URL and key from the catalog, models.json and auth.json.
    Raises NoModel, or the rulebook's and the catalog's own errors."""
    from eukhe.inference import tiers
    from eukhe.inference.wire.plan import WireModel

    saved_provider = cvars.value([], "defaultProvider") or ""
    saved_model = cvars.value([], "defaultModel") or ""
    provider = provider or saved_provider
    if not provider:
        raise NoModel("no provider: pass --provider or set defaultProvider", usage=True)
    reg = catalog.registry(agent)
    custom = reg.custom_providers.get(provider)
    listed = [m for m in reg.models if m.provider == provider]
    if not listed and custom is None:
        known = sorted({m.provider for m in reg.models} | set(reg.custom_providers))
        raise NoModel(f"unknown provider {provider!r} (providers: {', '.join(known)})", usage=True)
    if not model_id:
        if saved_model and provider == saved_provider:
            model_id = saved_model
        else:
            model_id = tiers.provider_default_model(quirks.shipped(), provider)
            if model_id is None or reg.find(provider, model_id) is None:
                model_id = listed[0].id if listed else None
    if not model_id:
        raise NoModel(f"provider {provider} lists no model: pass --model", usage=True)
    found = reg.find(provider, model_id)
    if found is None and custom is None:
        raise NoModel(f"provider {provider} has no model {model_id!r} (models: {', '.join(m.id for m in listed)})", usage=True)
    key = _credential(agent, provider, custom)
    if not key:
        variable = provider.upper().replace("-", "_") + "_API_KEY"
        raise NoModel(f"provider {provider} has no credentials (auth.json, or {variable}); run `eukhe login {provider}`", usage=False)
    if found is not None:
        return WireModel.of(found, key)
    assert custom is not None
    return WireModel(provider, model_id, custom.api, custom.base_url, key)
