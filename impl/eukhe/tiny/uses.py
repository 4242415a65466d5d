"""The uses of the roles (S9 Roles and Uses): resolve a role's model, and translate.

Availability (roles 2): a local model is available when installed; a provider model when it is
the session's usable model. The pick is ``bend.tiny.pick`` (through ``roles.choose``).
"""

from __future__ import annotations

from pathlib import Path

from eukhe.tiny import catalog, roles, tasks
from eukhe.tiny.client import TinyClient


def installed_models(agent_dir: Path) -> frozenset[str]:
    return frozenset(m.id for m in catalog.CATALOG if catalog.install_state(agent_dir, m) == catalog.INSTALLED)


def resolve(
    role: str,
    agent_dir: Path,
    *,
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    session_model: str | None = None,
    session_usable: bool = False,
) -> str:
    candidates = roles.chain(role, primary, fallback, session_model)
    local = installed_models(agent_dir)

    def available(name: str) -> bool:
        return name in local or (session_usable and name == session_model)

    return roles.choose(role, candidates, available)


def translate(agent_dir: Path, language: str, text: str, *, primary: str | None = None, fallback: tuple[str, ...] | None = None) -> str:
    """Translate English ``text`` into ``language`` on the translate role's local model."""
    model = resolve("translate", agent_dir, primary=primary, fallback=fallback)
    request = tasks.translate_request(language, text)
    with TinyClient(agent_dir, model) as client:
        reply = client.chat(request.messages, prefill=request.prefill, stop=request.stop, max_tokens=request.max_tokens)
    return tasks.parse_translation(language, text, reply)
