"""The model catalog: the compiled catalog, the bundled one, their union, models.json on top
(inference.md S6 "the built-in model catalog", "models.json and the saved default model").

- ``compiled()``: the compiled tables (catalog.json, package data).
- ``load_bundled(path)``: models.bundled.json, strictly parsed; missing or damaged -> None (the
  union is then the compiled catalog), with a diagnostic.
- ``effective_catalog``: projects both sources (key and api), calls the compiled union
  ``bend.catalog_union.union_fast`` (it runs as the compiled model, pinned to the union by the
  law catalog_union_fast) and assembles the models back.
- ``load_models_json(path)``: each providers.<id> loads alone; a bad one drops only that
  provider with a diagnostic naming providers.<id>; an unreadable or unparsable file gives one
  diagnostic and no custom models.
- ``registry``: the effective catalog with the custom models on top, and every diagnostic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError, field_validator

from bend import catalog_union as compiled_union
from eukhe import strict_json

# Wire APIs compiled in (transport pinning: a bundled entry naming another is damaged).
APIS: tuple[str, ...] = (
    "anthropic-messages",
    "bedrock-converse-stream",
    "openai-completions",
    "openai-responses",
    "openai-codex-responses",
    "azure-openai-responses",
    "google-generative-ai",
    "google-vertex",
    "mistral-conversations",
)
OPTIONAL_FIELDS: tuple[str, ...] = compiled_union.OPTIONAL
LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


@dataclass(frozen=True)
class CatalogModel:
    provider: str
    id: str
    api: str
    base_url: str
    name: str
    reasoning: bool
    input: tuple[str, ...] = ("text",)
    cost: tuple[tuple[str, float], ...] = ()
    context_window: int = 0
    max_tokens: int = 0
    thinking_level_map: dict[str, str | None] | None = None
    compat: dict[str, Any] | None = None
    featured: bool | None = None
    headers: dict[str, str] | None = None
    source: str = "compiled"

    @property
    def key(self) -> tuple[str, str]:
        return (self.provider, self.id)

    def rate(self, name: str) -> float:
        return dict(self.cost).get(name, 0.0)

    def optional(self, name: str) -> Any:
        return {
            "thinkingLevelMap": self.thinking_level_map,
            "compat": self.compat,
            "featured": self.featured,
            "headers": self.headers,
        }[name]


class _Cost(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cacheRead: float = Field(default=0, ge=0, allow_inf_nan=False)
    cacheWrite: float = Field(default=0, ge=0, allow_inf_nan=False)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr = Field(min_length=1)
    name: StrictStr | None = None
    reasoning: StrictBool = False
    input: list[StrictStr] = ["text"]
    cost: _Cost = _Cost(input=0, output=0)
    contextWindow: StrictInt = Field(default=128_000, gt=0)
    maxTokens: StrictInt = Field(default=16_384, gt=0)
    thinkingLevelMap: dict[StrictStr, StrictStr | None] | None = None
    compat: dict[str, Any] | None = None
    featured: StrictBool | None = None
    headers: dict[StrictStr, StrictStr] | None = None

    @field_validator("thinkingLevelMap")
    @classmethod
    def _levels(cls, value: dict[str, str | None] | None) -> dict[str, str | None] | None:
        for level in value or {}:
            if level not in LEVELS:
                raise ValueError(f"unknown thinking level {level!r}")
        return value


class _Provider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: StrictStr = Field(min_length=1)
    api: StrictStr
    baseUrl: StrictStr = Field(min_length=1)
    models: list[_Model]

    @field_validator("api")
    @classmethod
    def _api(cls, value: str) -> str:
        if value not in APIS:
            raise ValueError(f"wire API {value!r} is not compiled in")
        return value


class _Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int
    providers: list[_Provider]


def _models_of(provider: str, api: str, base_url: str, models: Sequence[_Model], source: str) -> list[CatalogModel]:
    return [
        CatalogModel(
            provider=provider,
            id=m.id,
            api=api,
            base_url=base_url,
            name=m.name if m.name is not None else m.id,
            reasoning=m.reasoning,
            input=tuple(m.input),
            cost=tuple(m.cost.model_dump().items()),
            context_window=m.contextWindow,
            max_tokens=m.maxTokens,
            thinking_level_map=m.thinkingLevelMap,
            compat=m.compat,
            featured=m.featured,
            headers=m.headers,
            source=source,
        )
        for m in models
    ]


class CatalogError(ValueError):
    """A catalog document that does not parse strictly."""


def parse_catalog(text: str, source: str) -> list[CatalogModel]:
    try:
        strict_json.loads(text)  # at most 100 deep, no NaN or Infinity, before pydantic reads it
    except json.JSONDecodeError as error:
        raise CatalogError(f"not JSON: {error.msg} at line {error.lineno} column {error.colno}") from None
    try:
        document = _Catalog.model_validate_json(text)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{where or 'document'}: {first['msg']}") from error
    if document.version != 1:
        raise CatalogError(f"version: unknown version {document.version}")
    models: list[CatalogModel] = []
    seen: set[tuple[str, str]] = set()
    for provider in document.providers:
        for model in _models_of(provider.id, provider.api, provider.baseUrl, provider.models, source):
            if model.key in seen:
                raise CatalogError(f"providers.{provider.id}: model {model.id!r} listed twice")
            seen.add(model.key)
            models.append(model)
    return models


@cache
def compiled() -> tuple[CatalogModel, ...]:
    """The compiled catalog (pi-ai tables and Prime Inference entries)."""
    text = resources.files("eukhe.inference").joinpath("catalog.json").read_text(encoding="utf-8")
    return tuple(parse_catalog(text, "compiled"))


def load_bundled(path: Path) -> tuple[list[CatalogModel] | None, list[str]]:
    """models.bundled.json: the models, or None when missing or damaged (with a diagnostic)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, []
    except (OSError, UnicodeDecodeError) as error:
        return None, [f"{path}: unreadable: {error}"]
    try:
        return parse_catalog(text, "bundled"), []
    except CatalogError as error:
        return None, [f"{path}: damaged bundle, compiled catalog used: {error}"]


def _fill(bundled: CatalogModel, compiled_model: CatalogModel) -> CatalogModel:
    return replace(
        bundled,
        thinking_level_map=bundled.thinking_level_map if bundled.thinking_level_map is not None else compiled_model.thinking_level_map,
        compat=bundled.compat if bundled.compat is not None else compiled_model.compat,
        featured=bundled.featured if bundled.featured is not None else compiled_model.featured,
        headers=bundled.headers if bundled.headers is not None else compiled_model.headers,
    )


def effective_catalog(bundled: Sequence[CatalogModel] | None, compiled_models: Sequence[CatalogModel]) -> list[CatalogModel]:
    """The union: bundled, then compiled-only; computed by the compiled model over the projection."""
    interned: dict[str, str] = {}

    def project(models: Sequence[CatalogModel]) -> tuple[tuple[tuple[str, str], str], ...]:
        return tuple(((m.provider, m.id), interned.setdefault(m.api, m.api)) for m in models)

    places = compiled_union.union_fast(None if bundled is None else project(bundled), project(compiled_models))
    out: list[CatalogModel] = []
    for place in places:
        if place.bundled is None:
            assert place.compiled is not None
            out.append(compiled_models[place.compiled])
        else:
            assert bundled is not None
            entry = bundled[place.bundled]
            out.append(_fill(entry, compiled_models[place.compiled]) if place.fill and place.compiled is not None else entry)
    return out


# -- models.json ------------------------------------------------------------------------------------


class _CustomProvider(BaseModel):
    model_config = ConfigDict(extra="forbid")
    baseUrl: StrictStr = Field(min_length=1)
    apiKey: StrictStr = Field(min_length=1)
    api: StrictStr = "openai-completions"
    headers: dict[StrictStr, StrictStr] | None = None
    models: list[_Model] = []

    @field_validator("api")
    @classmethod
    def _api(cls, value: str) -> str:
        if value not in APIS:
            raise ValueError(f"unknown wire API {value!r}")
        return value


@dataclass(frozen=True)
class CustomProvider:
    id: str
    base_url: str
    api_key: str
    api: str
    models: tuple[CatalogModel, ...]


@dataclass
class ModelsJson:
    providers: dict[str, CustomProvider] = field(default_factory=dict)
    diagnostics: list[str] = field(default_factory=list)


def parse_models_json(text: str, where: str = "models.json") -> ModelsJson:
    """Each providers.<id> loads alone; a bad one is dropped with a diagnostic naming it."""
    out = ModelsJson()
    try:
        # depth capped; a number JSON does not have (NaN, Infinity, 1e999) is read as Python reads
        # it and refused by its provider's check, so only that provider is dropped (rule 1)
        document = strict_json.loads(text, finite=False)
    except json.JSONDecodeError as error:
        out.diagnostics.append(f"{where}: not JSON: {error.msg} at line {error.lineno} column {error.colno}")
        return out
    if not isinstance(document, dict):
        out.diagnostics.append(f"{where}: a JSON object is expected")
        return out
    providers = document.get("providers", {})
    if not isinstance(providers, dict):
        out.diagnostics.append(f"{where}: providers: an object is expected")
        return out
    for key in document:
        if key != "providers":
            out.diagnostics.append(f"{where}: {key}: unknown key (ignored)")
    for provider_id, raw in providers.items():
        try:
            parsed = _CustomProvider.model_validate(raw)
        except ValidationError as error:
            first = error.errors()[0]
            place = ".".join(str(p) for p in first["loc"])
            out.diagnostics.append(f"{where}: providers.{provider_id}{'.' + place if place else ''}: {first['msg']} (provider dropped)")
            continue
        models = _models_of(provider_id, parsed.api, parsed.baseUrl, parsed.models, "models.json")
        ids = [m.id for m in models]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            out.diagnostics.append(f"{where}: providers.{provider_id}.models: {twice[0]!r} listed twice (provider dropped)")
            continue
        out.providers[provider_id] = CustomProvider(provider_id, parsed.baseUrl, parsed.apiKey, parsed.api, tuple(models))
    return out


def load_models_json(path: Path) -> ModelsJson:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ModelsJson()
    except (OSError, UnicodeDecodeError) as error:
        return ModelsJson(diagnostics=[f"{path}: unreadable: {error}"])
    return parse_models_json(text, str(path))


@dataclass
class Registry:
    models: list[CatalogModel]
    diagnostics: list[str]
    custom_providers: dict[str, CustomProvider]

    def find(self, provider: str, model_id: str) -> CatalogModel | None:
        for model in self.models:
            if model.key == (provider, model_id):
                return model
        return None


def registry(agent_dir: Path | None, bundled_path: Path | None = None) -> Registry:
    """The catalog every view reads: the union of the sources, models.json on top."""
    diagnostics: list[str] = []
    bundled = None
    if bundled_path is not None:
        bundled, problems = load_bundled(bundled_path)
        diagnostics.extend(problems)
    models = effective_catalog(bundled, compiled())
    custom = ModelsJson() if agent_dir is None else load_models_json(agent_dir / "models.json")
    diagnostics.extend(custom.diagnostics)
    overriding = {m.key for p in custom.providers.values() for m in p.models}
    merged = [m for m in models if m.key not in overriding]
    for provider in custom.providers.values():
        merged.extend(provider.models)
    return Registry(merged, diagnostics, custom.providers)
