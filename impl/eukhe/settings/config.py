"""Config documents (control.md S4b) and the config layer of the cvars (S4).

Documents: ``<agent dir>/settings.json`` (global), ``<project>/.eukhe/settings.json``
(project), ``<agent dir>/mcp-connections.json`` and ``<agent dir>/auth.json``. Every writer
(``mcp_add``, ``mcp_remove``, ``set_setting``, ``record_connection``, ``AuthStorage.set`` and
``remove``) is one read-modify-write under the file's lock (``files.update_document``): a read
failure writes nothing and raises ``DocumentError``; only a missing file reads as empty; keys
the change does not touch keep their values; the document changed is the one on disk.

``load`` reads the config: global settings.json < project settings.json < global config.cfg <
project config.cfg (S4), each leaf applied or named (S4b.3), the project's guarded items
withheld when it is not trusted (S4b.5), mcpServers entries as units (S4b.6) and the
in-flight limits failing closed (S4b.4).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eukhe.settings.cfg import CfgFile, SettingsError, read_cfg
from eukhe.settings.cvar import Cvars, CvarError, Layer, Registry
from eukhe.settings.files import DocumentError, dumps_document, read_document, update_document, write_atomic

SETTINGS_FILE = "settings.json"
PROJECT_DIR = ".eukhe"
CONFIG_CFG = "config.cfg"
MCP_CONNECTIONS = "mcp-connections.json"
AUTH_FILE = "auth.json"
PROMPT_FILES = ("SYSTEM.md", "APPEND_SYSTEM.md")
KNOWN_TOP = frozenset({"version", "mcpServers"})
GUARDED_IDS = ("maxToolRounds", "subagentMaxConcurrency", "subagentStallMs", "toolBlockingBudgetMs", "thinkingBudgets",
               "retry.maxRetries", "retry.failover.maxRetries", "mcpServers", "kernelTransport", "SYSTEM.md", "APPEND_SYSTEM.md",
               "autonomous", "directors")


def guarded(item: str) -> bool:
    """S4b.5: a limit, a system prompt, a credential or a key that runs code."""
    return any(item == g or item.startswith(g + ".") for g in GUARDED_IDS)


@dataclass(frozen=True)
class Paths:
    agent_dir: Path
    project_dir: Path | None = None

    @property
    def global_settings(self) -> Path:
        return self.agent_dir / SETTINGS_FILE

    @property
    def global_cfg(self) -> Path:
        return self.agent_dir / CONFIG_CFG

    @property
    def project_settings(self) -> Path | None:
        return None if self.project_dir is None else self.project_dir / PROJECT_DIR / SETTINGS_FILE

    @property
    def project_cfg(self) -> Path | None:
        return None if self.project_dir is None else self.project_dir / PROJECT_DIR / CONFIG_CFG

    @property
    def mcp_connections(self) -> Path:
        return self.agent_dir / MCP_CONNECTIONS

    @property
    def auth(self) -> Path:
        return self.agent_dir / AUTH_FILE


# -- leaves (S4b.3) ---------------------------------------------------------------------------


@dataclass
class Leaves:
    applied: dict[str, Any] = field(default_factory=dict)
    named: list[tuple[str, CvarError]] = field(default_factory=list)


def leaves(registry: Registry, document: Mapping[str, Any], *, project: bool) -> Leaves:
    """Each leaf of a settings document applies or is named by a CvarError; a bad leaf drops only itself."""
    prefixes = {cvar.id[: i] for cvar in registry for i, ch in enumerate(cvar.id) if ch == "."}
    cvars = Cvars(registry)
    out = Leaves()

    def walk(prefix: str, obj: Mapping[str, Any]) -> None:
        for key, value in obj.items():
            path = prefix + key
            if not prefix and key in KNOWN_TOP:
                if key == "version":
                    out.applied[key] = value
                elif isinstance(value, dict):
                    for name, entry in value.items():
                        if isinstance(entry, dict):
                            out.applied[f"mcpServers.{name}"] = entry
                        else:
                            out.named.append((f"mcpServers.{name}", CvarError("BadValue", f"mcpServers.{name}", "an mcpServers entry is an object")))
                else:
                    out.named.append((path, CvarError("BadValue", path, "mcpServers is an object of entries")))
            elif "." in key:  # the Settings type's keys are names (S4b.3): a key with a dot names no setting
                dotted = f'{prefix}"{key}"'  # quoted, so that it never reads as a path of nested keys
                out.named.append((dotted, CvarError("Undeclared", dotted)))
            elif path in registry:
                error = cvars.check(path, value, project)
                if error is None:
                    out.applied[path] = value
                else:
                    out.named.append((path, error))
            elif isinstance(value, dict) and path in prefixes:
                walk(path + ".", value)
            else:
                out.named.append((path, CvarError("Undeclared", path)))

    walk("", document)
    return out


# -- limits (S4b.4) -------------------------------------------------------------------------

MISSING = object()


def in_flight(raw: Any, provider: str) -> int | None:
    """A provider's in-flight limit from the raw providerMaxInFlight value (MISSING: none set).
    Malformed fails closed: a value that is not a map limits every provider to 1, an entry
    that is not a whole number limits its provider to 1. None means no limit."""
    if raw is MISSING:
        return None
    if not isinstance(raw, dict):
        return 1
    if provider not in raw:
        return None
    entry = raw[provider]
    return entry if type(entry) is int and entry >= 0 else 1


# -- writers (S4b.1, S4b.2) ------------------------------------------------------------------


def _put(document: dict[str, Any], path: list[str], value: Any) -> None:
    for key in path[:-1]:
        inner = document.get(key)
        if not isinstance(inner, dict):
            inner = {}
            document[key] = inner
        document = inner
    document[path[-1]] = value


def _remove(document: dict[str, Any], path: list[str]) -> None:
    for key in path[:-1]:
        inner = document.get(key)
        if not isinstance(inner, dict):
            return
        document = inner
    document.pop(path[-1], None)


def put(path: Path, keys: list[str], value: Any) -> dict[str, Any]:
    return update_document(path, lambda doc: _put(doc, keys, value))


def remove(path: Path, keys: list[str]) -> dict[str, Any]:
    return update_document(path, lambda doc: _remove(doc, keys))


def mcp_add(settings: Path, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """``eukhe mcp add``: put the entry whole under mcpServers.<name>."""
    return put(settings, ["mcpServers", name], entry)


def mcp_remove(settings: Path, name: str) -> dict[str, Any]:
    return remove(settings, ["mcpServers", name])


def record_connection(connections: Path, name: str, record: dict[str, Any]) -> dict[str, Any]:
    """A connection record of mcp-connections.json."""
    return put(connections, ["connections", name], record)


class AuthStorage:
    """auth.json: one credential per provider, the file always 0600 (its mode is set before it
    is renamed into place). set and remove return the read error to the caller."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, provider: str) -> Any:
        return read_document(self.path).get(provider)

    def set(self, provider: str, credential: Any) -> None:
        update_document(self.path, lambda doc: _put(doc, [provider], credential), private=True)

    def remove(self, provider: str) -> None:
        update_document(self.path, lambda doc: _remove(doc, [provider]), private=True)


@dataclass(frozen=True)
class Persisted:
    """A setter's answer: written, and the file of a higher layer that sets the same setting."""

    shadowed_by: str | None = None

    def show(self) -> str:
        return "Persisted" if self.shadowed_by is None else f"Persisted::Shadowed({self.shadowed_by})"


def shadowing(registry: Registry, paths: Paths, cvar: str, names: Mapping[Path, str] | None = None) -> str | None:
    """The highest layer above the global settings.json that sets ``cvar`` (global config.cfg,
    project settings.json, project config.cfg), by the name of its file."""
    cvars = Cvars(registry)
    found: str | None = None
    layers: list[tuple[Path | None, bool]] = [(paths.global_cfg, False), (paths.project_settings, True), (paths.project_cfg, True)]
    for path, project in layers:
        if path is None:
            continue
        label = (names or {}).get(path, str(path))
        if path.suffix == ".cfg":
            if any(cvar == key for key, _ in read_cfg(path, cvars, local_only=project).sets):
                found = label
        else:
            try:
                if cvar in leaves(registry, read_document(path), project=project).applied:
                    found = label
            except DocumentError:
                pass
    return found


class SettingsManager:
    """The settings setters of a process (S4b.2). ``loaded`` is the copy of the global
    settings.json read at startup; a setter never writes it: it changes the document on disk."""

    def __init__(self, registry: Registry, paths: Paths, loaded: dict[str, Any] | None = None,
                 names: Mapping[Path, str] | None = None) -> None:
        self.registry = registry
        self.paths = paths
        self.names = names
        if loaded is None:
            try:
                loaded = read_document(paths.global_settings)
            except DocumentError:
                loaded = {}
        self.loaded = loaded

    def set(self, cvar: str, value: Any) -> Persisted:
        """Refuse a value the setting does not hold (CvarError); write the document on disk with
        the key changed (DocumentError when it cannot be read: nothing written); name a higher
        layer that shadows it."""
        error = Cvars(self.registry).check(cvar, value, False)
        if error is not None:
            raise error
        keys = cvar.split(".")
        update_document(self.paths.global_settings, lambda doc: _put(doc, keys, value))
        _put(self.loaded, keys, value)
        return Persisted(shadowing(self.registry, self.paths, cvar, self.names))


def set_setting(registry: Registry, paths: Paths, cvar: str, value: Any) -> Persisted:
    return SettingsManager(registry, paths, {}).set(cvar, value)


# -- the config layer (S4, S4b.3-6) -------------------------------------------------------------


@dataclass
class Config:
    layers: list[Layer]
    errors: list[SettingsError]
    aliases: list[tuple[str, Any]]
    trusted: bool
    withheld: list[str]
    prompts: dict[str, str]
    servers: dict[str, Any]
    in_flight_raw: Any

    def limit(self, provider: str) -> int | None:
        return in_flight(self.in_flight_raw, provider)

    def trust_warning(self) -> str | None:
        if not self.withheld:
            return None
        return "untrusted project: withheld " + ", ".join(self.withheld)


def _trusted(project_dir: Path, agent_dir: Path, layers: list[Layer]) -> bool:
    entries: list[Any] = []
    for layer in layers:
        for key, value in layer.sets:
            if key == "trustedProjects" and isinstance(value, list):
                entries = value
    here = os.path.realpath(project_dir)
    for entry in entries:
        if isinstance(entry, str) and entry:
            where = Path(os.path.expanduser(entry))
            if os.path.realpath(where if where.is_absolute() else agent_dir / where) == here:
                return True
    return False


def load(registry: Registry, paths: Paths) -> Config:
    """Read the config layers, every settings error kept (a file that cannot be read gives nothing)."""
    errors: list[SettingsError] = []
    cvars = Cvars(registry)

    def document(path: Path, project: bool) -> Leaves:
        try:
            found = leaves(registry, read_document(path), project=project)
        except DocumentError as error:
            errors.append(SettingsError(str(path), f"{error.kind}" + (f" ({error.detail})" if error.detail else "")))
            return Leaves()
        errors.extend(SettingsError(f"{path}: {where}", f"{e.show()}: {e.message}") for where, e in found.named)
        return found

    g = document(paths.global_settings, False)
    g_cfg = read_cfg(paths.global_cfg, cvars, local_only=False)
    errors.extend(g_cfg.errors)
    global_layers = [Layer("global settings.json", False, [(k, v) for k, v in g.applied.items() if k in registry]),
                     Layer("global config.cfg", False, g_cfg.sets)]
    trusted = paths.project_dir is not None and _trusted(paths.project_dir, paths.agent_dir, global_layers)
    p = Leaves()
    p_cfg = CfgFile(Path("-"))
    prompts: dict[str, str] = {}
    if paths.project_dir is not None:
        assert paths.project_settings is not None and paths.project_cfg is not None
        p = document(paths.project_settings, True)
        p_cfg = read_cfg(paths.project_cfg, cvars, local_only=True)
        errors.extend(p_cfg.errors)
        for name in PROMPT_FILES:
            prompt = paths.project_dir / PROJECT_DIR / name
            if prompt.is_file():
                try:
                    prompts[name] = prompt.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as error:
                    errors.append(SettingsError(str(prompt), f"cannot be read: {error}"))
    withheld: set[str] = set()

    def allowed(item: str) -> bool:
        if trusted or not guarded(item):
            return True
        withheld.add(item)
        return False

    p_sets = [(k, v) for k, v in p.applied.items() if k in registry and allowed(k)]
    pc_sets = [(k, v) for k, v in p_cfg.sets if allowed(k)]
    servers = {k[len("mcpServers."):]: v for k, v in g.applied.items() if k.startswith("mcpServers.")}
    for key, entry in p.applied.items():
        if key.startswith("mcpServers.") and allowed(key):
            servers[key[len("mcpServers."):]] = entry  # a unit: replaces the global entry whole
    prompts = {name: text for name, text in prompts.items() if allowed(name)}
    layers = [global_layers[0], Layer("project settings.json", True, p_sets), global_layers[1], Layer("project config.cfg", True, pc_sets)]
    raw: Any = _raw_limit(paths.global_settings)
    for key, value in g_cfg.sets:
        if key == "providerMaxInFlight":
            raw = value
    return Config(layers, errors, list(g_cfg.aliases) + list(p_cfg.aliases), trusted, sorted(withheld), prompts,
                  dict(sorted(servers.items())), raw)


def _raw_limit(path: Path) -> Any:
    """The raw providerMaxInFlight of a settings file, malformed or not (MISSING: unset)."""
    try:
        return read_document(path).get("providerMaxInFlight", MISSING)
    except DocumentError:
        return MISSING

