"""The tiny models' settings, read through the settings layer (``eukhe.settings``: the cvar
registry over the global and project settings.json and config.cfg, control.md S4, S4b).

Declared in the cvar table and read here:
- ``modelRoles.<role>`` (String; the neutral default "" is unset): the role's primary model
  for each of the roles tiny, judge, translate, speech and dictation (S9 roles 1);
- ``retry.fallbackChains`` (Map of lists of Strings): ``retry.fallbackChains.<role>`` is the
  role's fallback chain; a role without a key is unset, an explicit ``[]`` means the primary
  only (S9 roles 1);
- ``titles.generate`` (Bool, default true): false titles nothing (S9 Uses);
- ``providers.tinyRuntimeLibrary`` (S9 engine; the Python onnxruntime package ships its own
  library, so it is read but not used at load time);
- ``tinyModels.baseUrl``, the download base URL (eukhe's own key: the seed names none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASE_URL_CVAR = "tinyModels.baseUrl"
RUNTIME_CVAR = "providers.tinyRuntimeLibrary"
CHAINS_CVAR = "retry.fallbackChains"
TITLES_CVAR = "titles.generate"
ROLES = ("tiny", "judge", "translate", "speech", "dictation")


@dataclass(frozen=True)
class TinySettings:
    primaries: Mapping[str, str] = field(default_factory=dict)
    chains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    titles: bool = True
    base_url: str | None = None
    runtime_library: str | None = None

    def primary(self, role: str) -> str | None:
        return self.primaries.get(role) or None

    def fallback(self, role: str) -> tuple[str, ...] | None:
        return self.chains.get(role)

    @classmethod
    def from_cvars(cls, cvars: Any) -> TinySettings:
        """From a ``eukhe.settings.cvar.Cvars`` (the config's values; ids it does not declare
        are unset)."""

        def value(cvar: str) -> Any:
            return cvars.config_value(cvar) if cvar in cvars.registry else None

        primaries = {role: found for role in ROLES if isinstance(found := value(f"modelRoles.{role}"), str) and found}
        raw = value(CHAINS_CVAR)
        chains = {role: tuple(chain) for role, chain in raw.items()} if isinstance(raw, dict) else {}
        titles = value(TITLES_CVAR)
        base, runtime = value(BASE_URL_CVAR), value(RUNTIME_CVAR)
        return cls(
            primaries,
            chains,
            titles is not False,
            base if isinstance(base, str) and base else None,
            runtime if isinstance(runtime, str) and runtime else None,
        )

    @classmethod
    def load(cls, agent_dir: Path, project_dir: Path | None = None) -> TinySettings:
        from eukhe.settings.agent import EukheSettings

        return cls.from_cvars(EukheSettings(agent_dir, project_dir).cvars)
