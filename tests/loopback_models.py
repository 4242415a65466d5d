"""An agent dir whose models.json points each named provider at the loopback server, for the
tests that run eukhe's commands against it."""

from __future__ import annotations

import json
from pathlib import Path

from spec.loopback import LoopbackServer, base_url


def write_loopback_models(agent: Path, server: LoopbackServer, providers: dict[str, str], *, reasoning: bool = False) -> Path:
    """models.json in ``agent`` (made if missing): each provider speaks its API to ``server``
    with key ``key-<name>`` and one model ``<name>-model`` (a reasoning model if ``reasoning``)."""
    agent.mkdir(parents=True, exist_ok=True)
    model: dict[str, object] = {"reasoning": True} if reasoning else {}
    models = {
        name: {"baseUrl": base_url(server, api), "apiKey": f"key-{name}", "api": api, "models": [{"id": f"{name}-model", **model}]}
        for name, api in providers.items()
    }
    (agent / "models.json").write_text(json.dumps({"providers": models}), encoding="utf-8")
    return agent
