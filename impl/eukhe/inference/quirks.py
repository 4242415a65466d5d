"""The quirks rulebook in production (inference.md S6.1, S6.2, S6.7, S6.13).

Family, model and host settings as data: a rule is a layer, a target id and directives with
values. ``compile_rulebook`` checks every directive once and indexes the settings by layer and
target; ``Rulebook.query`` answers a directive for a model: explicit model.compat first, then
the host, the model, the family, else Unknown. The shipped rulebook (rulebook.json, package
data) is compiled once (``shipped()``) and checked against the compiled model catalog.

This is production's own code (indexed, regexes compiled once); the quirks bridge holds it to
the model ``bend.infer`` byte for byte on generated rulebooks.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from eukhe import strict_json
log = logging.getLogger(__name__)

LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
CAPABILITIES: tuple[str, ...] = (
    "count_tokens",
    "list_models",
    "embed",
    "generate_image",
    "tokenize",
    "usage",
    "web_search",
    "compact",
)

# Directive::ALL with its value types.
DIRECTIVE_TYPES: dict[str, str] = {
    "adaptive_thinking": "bool",
    "thinking_block_binding": "bool",
    "prompt_caching": "bool",
    "explicit_cache_breakpoints": "bool",
    "google_thinking_level": "bool",
    "prompt_progress": "bool",
    "supports_store": "bool",
    "supports_developer_role": "bool",
    "strict_cap": "int",
    "max_tokens_field": "str",
    "cache_control_marks": "str",
    "thinking_budgets": "budgets",
    "thinking_ladder": "ladder",
    **{name: "dialect" for name in CAPABILITIES},
}
DIRECTIVES: tuple[str, ...] = tuple(DIRECTIVE_TYPES)

# Endpoint dialects and the operations each one has.
DIALECT_OPERATIONS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"count_tokens", "list_models", "usage", "web_search"}),
    "google": frozenset({"count_tokens", "list_models", "embed", "generate_image", "web_search"}),
    "llama-cpp": frozenset({"count_tokens", "list_models", "embed", "tokenize"}),
    "ollama": frozenset({"list_models", "embed"}),
    "openai": frozenset({"count_tokens", "list_models", "embed", "generate_image", "usage", "web_search", "compact"}),
}

# Directives a scope-capabilities host may set, and the ones whose lookup sees those hosts.
CAPABILITY_SCOPED: frozenset[str] = frozenset({*CAPABILITIES, "prompt_progress"})

LAYER_ORDER: tuple[str, ...] = ("family", "model", "host")

# model.compat keys (models.json, catalog) that answer a directive explicitly.
COMPAT_KEYS: dict[str, str] = {
    "forceAdaptiveThinking": "adaptive_thinking",
    "supportsPromptProgress": "prompt_progress",
    "supportsStore": "supports_store",
    "supportsDeveloperRole": "supports_developer_role",
    "promptCaching": "prompt_caching",
    "maxTokensField": "max_tokens_field",
    "strictCap": "strict_cap",
}

_ERROR_ORDER = (
    "BadPattern",
    "DuplicateFamily",
    "DuplicateHost",
    "UnknownScope",
    "UnknownLayer",
    "UnknownDirective",
    "WrongType",
    "NoOperation",
    "UnorderedBudgets",
    "OutOfScope",
    "Clash",
    "FamilyOverlap",
)


class QuirksError(Exception):
    """QuirksError::<kind>(<where>): a rulebook that does not compile, or families overlapping."""

    def __init__(self, kind: str, where: str) -> None:
        super().__init__(f"QuirksError::{kind}({where})")
        self.kind = kind
        self.where = where

    @property
    def order(self) -> tuple[str, int]:
        return (self.where, _ERROR_ORDER.index(self.kind))


class RulebookError(ValueError):
    """A rulebook document whose shape is wrong (not a quirks rule: the JSON itself)."""


Value = Any


@dataclass(frozen=True)
class FamilyDef:
    id: str
    pattern: str
    min: tuple[int, ...] | None = None
    below: tuple[int, ...] | None = None
    exclude: str | None = None


@dataclass(frozen=True)
class HostDef:
    id: str
    api: str | None = None
    provider: str | None = None
    urls: tuple[str, ...] = ()
    scope: str = "wire"


@dataclass(frozen=True)
class RuleDef:
    layer: str
    target: str
    settings: tuple[tuple[str, Value], ...]


# -- values -----------------------------------------------------------------------------------


def _check_value(directive: str, value: Value) -> tuple[Value, str | None]:
    kind = DIRECTIVE_TYPES.get(directive)
    if kind is None:
        return None, "UnknownDirective"
    if kind == "bool":
        return (value, None) if type(value) is bool else (None, "WrongType")
    if kind == "int":
        return (value, None) if type(value) is int and value >= 0 else (None, "WrongType")
    if kind == "str":
        return (value, None) if type(value) is str else (None, "WrongType")
    if kind == "dialect":
        if value is False:
            return False, None
        if type(value) is not str:
            return None, "WrongType"
        if directive not in DIALECT_OPERATIONS.get(value, frozenset()):
            return None, "NoOperation"
        return value, None
    if kind == "budgets":
        if type(value) is not list or len(value) != 4 or any(type(b) is not int for b in value):
            return None, "WrongType"
        if any(value[i] > value[i + 1] for i in range(3)):
            return None, "UnorderedBudgets"
        return tuple(value), None
    if type(value) is not dict or any(k not in LEVELS or not (v is None or type(v) is str) for k, v in value.items()):
        return None, "WrongType"
    return tuple((level, value[level]) for level in LEVELS if level in value), None


def check_value(directive: str, value: Value) -> Value:
    """A directive's value as compiled, or QuirksError (for compat values and the CLI)."""
    checked, problem = _check_value(directive, value)
    if problem is not None:
        raise QuirksError(problem, f"compat/{directive}")
    return checked


# -- revision -----------------------------------------------------------------------------------

_REVISION = re.compile(r"[0-9][0-9.]*")
_MAX_PART = 10**4000


def _part(digits: str) -> int:
    stripped = digits.lstrip("0")
    return _MAX_PART if len(stripped) > 4000 else int(stripped or "0")


def revision(rest: str) -> tuple[int, ...]:
    """The revision in what follows a family's prefix: the first digit run; a size (8b) is not
    one; none: 0."""
    found = _REVISION.search(rest)
    if found is None:
        return (0,)
    after = rest[found.end() :]
    if after.startswith("b") and not re.match(r"b[0-9a-z]", after):
        return (0,)
    parts = tuple(_part(p) for p in found.group().split(".") if p)
    return parts or (0,)


def _cmp(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = max(len(a), len(b))
    pa, pb = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return (pa > pb) - (pa < pb)


# -- the compiled rulebook ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Family:
    id: str
    pattern: re.Pattern[str]
    exclude: re.Pattern[str] | None
    min: tuple[int, ...] | None
    below: tuple[int, ...] | None

    def matches(self, text: str) -> bool:
        found = self.pattern.match(text)
        if found is None or (self.exclude is not None and self.exclude.search(text)):
            return False
        rev = revision(text[found.end() :])
        return (self.min is None or _cmp(rev, self.min) >= 0) and (self.below is None or _cmp(rev, self.below) < 0)


@dataclass(frozen=True)
class ModelKey:
    """What a query knows of a model: id, name, provider, wire API, base URL, explicit compat."""

    id: str
    name: str | None = None
    provider: str = ""
    api: str = ""
    base_url: str = ""
    compat: Mapping[str, Value] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A directive's answer: its value and the layer it came from (compat, host, model,
    family); ``known`` False is Unknown (the wire API's default applies)."""

    known: bool
    value: Value = None
    layer: str = ""


UNKNOWN = Answer(False)


@dataclass(frozen=True)
class Family:
    """The family of a model: its id, or None; ``overlap`` names the families that all matched."""

    id: str | None
    overlap: tuple[str, ...] = ()


@dataclass
class Rulebook:
    """A compiled rulebook: families, hosts, the settings by (layer, target), and the tables."""

    families: tuple[_Family, ...]
    hosts: tuple[HostDef, ...]
    settings: dict[tuple[str, str], dict[str, Value]]
    tables: Mapping[str, Any] = field(default_factory=dict)
    _logged: set[str] = field(default_factory=set, repr=False)

    @property
    def setting_count(self) -> int:
        return sum(len(v) for v in self.settings.values())

    def matching(self, model_id: str, name: str | None = None) -> list[str]:
        """The ids of the families that match a model (S6.2: its bare id, the last segment of its
        path, or its name, lowercased), sorted."""
        texts = [model_id.lower().rsplit("/", 1)[-1]]
        if name is not None:
            texts.append(name.lower())
        return sorted({f.id for f in self.families if any(f.matches(t) for t in texts)})

    def family(self, model_id: str, name: str | None = None) -> Family:
        found = self.matching(model_id, name)
        if len(found) == 1:
            return Family(found[0])
        if found and model_id not in self._logged:
            self._logged.add(model_id)
            log.error("%s", QuirksError("FamilyOverlap", f"{model_id}: {', '.join(found)}"))
        return Family(None, tuple(found))

    def host(self, api: str, provider: str, base_url: str, *, capabilities: bool = False) -> str | None:
        hosts = [h for h in self.hosts if capabilities or h.scope == "wire"]
        by_api = sorted(h.id for h in hosts if api and h.api == api)
        if by_api:
            return by_api[0]
        by_provider = sorted(h.id for h in hosts if provider and h.provider == provider)
        if by_provider:
            return by_provider[0]
        url = base_url.lower()
        ranked = [(-len(frag), h.id) for h in hosts for frag in h.urls if frag and frag.lower() in url]
        return min(ranked)[1] if ranked else None

    def query(self, key: ModelKey, directive: str) -> Answer:
        if directive in key.compat:
            return Answer(True, key.compat[directive], "compat")
        host = self.host(key.api, key.provider, key.base_url, capabilities=directive in CAPABILITY_SCOPED)
        if host is not None and directive in self.settings.get(("host", host), {}):
            return Answer(True, self.settings[("host", host)][directive], "host")
        if directive in self.settings.get(("model", key.id), {}):
            return Answer(True, self.settings[("model", key.id)][directive], "model")
        family = self.family(key.id, key.name).id
        if family is not None and directive in self.settings.get(("family", family), {}):
            return Answer(True, self.settings[("family", family)][directive], "family")
        return UNKNOWN

    def check_catalog(self, models: Iterable[tuple[str, str | None]]) -> None:
        """Rulebook::check_catalog: no two families may match a compiled-catalog model."""
        for model_id, name in models:
            found = self.matching(model_id, name)
            if len(found) > 1:
                raise QuirksError("FamilyOverlap", f"{model_id}: {', '.join(found)}")


def compile_rulebook(
    families: Sequence[FamilyDef], hosts: Sequence[HostDef], rules: Sequence[RuleDef], tables: Mapping[str, Any] | None = None
) -> Rulebook:
    """Compile: every error is collected and the least (by where, then kind) is raised, so the
    error does not depend on rule order."""
    errors: list[QuirksError] = []
    compiled_families: list[_Family] = []
    family_ids: set[str] = set()
    for fam in families:
        if fam.id in family_ids:
            errors.append(QuirksError("DuplicateFamily", f"family/{fam.id}"))
        family_ids.add(fam.id)
        try:
            pattern = re.compile(fam.pattern)
            exclude = None if fam.exclude is None else re.compile(fam.exclude)
        except re.error:
            errors.append(QuirksError("BadPattern", f"family/{fam.id}"))
            continue
        compiled_families.append(_Family(fam.id, pattern, exclude, fam.min, fam.below))
    scopes: dict[str, str] = {}
    for host in hosts:
        if host.id in scopes:
            errors.append(QuirksError("DuplicateHost", f"host/{host.id}"))
        else:
            scopes[host.id] = host.scope
        if host.scope not in ("wire", "capabilities"):
            errors.append(QuirksError("UnknownScope", f"host/{host.id}"))
    settings: dict[tuple[str, str], dict[str, Value]] = {}
    for rule in rules:
        if rule.layer not in LAYER_ORDER:
            errors.append(QuirksError("UnknownLayer", f"{rule.layer}/{rule.target}"))
            continue
        table = settings.setdefault((rule.layer, rule.target), {})
        capability_host = rule.layer == "host" and scopes.get(rule.target) == "capabilities"
        for directive, raw in rule.settings:
            where = f"{rule.layer}/{rule.target}/{directive}"
            value, problem = _check_value(directive, raw)
            if problem is None and capability_host and directive not in CAPABILITY_SCOPED:
                problem = "OutOfScope"
            if problem is not None:
                errors.append(QuirksError(problem, where))
            elif directive not in table:
                table[directive] = value
            elif table[directive] != value:
                errors.append(QuirksError("Clash", where))
    if errors:
        raise min(errors, key=lambda e: e.order)
    return Rulebook(tuple(compiled_families), tuple(hosts), {k: v for k, v in settings.items() if v}, dict(tables or {}))


# -- the document ---------------------------------------------------------------------------------


def _version(value: Any, where: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if type(value) is not list or not value or any(type(p) is not int or p < 0 for p in value):
        raise RulebookError(f"{where}: a revision is a non-empty list of naturals")
    return tuple(value)


def _text(value: Any, where: str, *, optional: bool = False) -> Any:
    if value is None and optional:
        return None
    if type(value) is not str:
        raise RulebookError(f"{where}: expected a string")
    return value


def parse_document(document: Any) -> tuple[list[FamilyDef], list[HostDef], list[RuleDef], dict[str, Any]]:
    """The families, hosts, rules and tables of a rulebook document (rulebook.json's shape)."""
    if type(document) is not dict:
        raise RulebookError("a rulebook is a JSON object")
    known = {"version", "families", "hosts", "rules", "service_tiers", "service_tier_prices", "cache_write_1h_prices", "provider_defaults", "thinking_defaults"}
    for key in document:
        if key not in known:
            raise RulebookError(f"unknown key {key!r}")
    if document.get("version") != 1:
        raise RulebookError(f"unknown version {document.get('version')!r}")
    families = []
    for i, raw in enumerate(document.get("families", [])):
        where = f"families[{i}]"
        if type(raw) is not dict or set(raw) - {"id", "pattern", "min", "below", "except"}:
            raise RulebookError(f"{where}: a family has id, pattern, min, below, except")
        families.append(
            FamilyDef(
                _text(raw.get("id"), f"{where}.id"),
                _text(raw.get("pattern"), f"{where}.pattern"),
                _version(raw.get("min"), f"{where}.min"),
                _version(raw.get("below"), f"{where}.below"),
                _text(raw.get("except"), f"{where}.except", optional=True),
            )
        )
    hosts = []
    for i, raw in enumerate(document.get("hosts", [])):
        where = f"hosts[{i}]"
        if type(raw) is not dict or set(raw) - {"id", "api", "provider", "urls", "scope"}:
            raise RulebookError(f"{where}: a host has id, api, provider, urls, scope")
        urls = raw.get("urls", [])
        if type(urls) is not list or any(type(u) is not str for u in urls):
            raise RulebookError(f"{where}.urls: a list of strings")
        hosts.append(
            HostDef(
                _text(raw.get("id"), f"{where}.id"),
                _text(raw.get("api"), f"{where}.api", optional=True),
                _text(raw.get("provider"), f"{where}.provider", optional=True),
                tuple(urls),
                _text(raw.get("scope", "wire"), f"{where}.scope"),
            )
        )
    rules = []
    for i, raw in enumerate(document.get("rules", [])):
        where = f"rules[{i}]"
        if type(raw) is not dict or set(raw) != {"layer", "target", "set"} or type(raw["set"]) is not dict:
            raise RulebookError(f"{where}: a rule has layer, target and set (an object)")
        rules.append(RuleDef(_text(raw["layer"], f"{where}.layer"), _text(raw["target"], f"{where}.target"), tuple(raw["set"].items())))
    tables = {k: v for k, v in document.items() if k not in {"version", "families", "hosts", "rules"}}
    return families, hosts, rules, tables


def load(text: str) -> Rulebook:
    try:
        document = strict_json.loads(text)
    except json.JSONDecodeError as error:
        raise RulebookError(f"not JSON: {error.msg} at line {error.lineno}") from error
    families, hosts, rules, tables = parse_document(document)
    return compile_rulebook(families, hosts, rules, tables)


def shipped_text() -> str:
    return resources.files("eukhe.inference").joinpath("rulebook.json").read_text(encoding="utf-8")


@cache
def shipped() -> Rulebook:
    """The shipped rulebook, compiled once and checked against the compiled model catalog."""
    from eukhe.inference import catalog

    book = load(shipped_text())
    book.check_catalog((m.id, m.name) for m in catalog.compiled())
    return book


def compat_of(raw: Mapping[str, Any] | None) -> dict[str, Value]:
    """The directives a model.compat object answers explicitly (other compat keys are kept by
    the model but answer no directive)."""
    out: dict[str, Value] = {}
    for key, value in (raw or {}).items():
        directive = COMPAT_KEYS.get(key)
        if directive is not None:
            out[directive] = check_value(directive, value)
    return out
