"""Service tiers and prices missing from catalog rows (inference.md S6.8, S6.12), read from the
rulebook's tables: quirks::service_tiers, supports_service_tier, service_tier_multiplier,
cache_write_1h_multiplier, and models::calculate_cost / apply_service_tier_pricing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from eukhe.inference.catalog import CatalogModel
from eukhe.inference.quirks import Rulebook

DEFAULT_TIER = "default"


def model_tiers(model: Any) -> tuple[str, ...]:
    """The service tiers ``model`` (anything with provider, api, id and name) honours, by the
    shipped rulebook."""
    from eukhe.inference import quirks

    book = quirks.shipped()
    return service_tiers(book, model.provider, model.api, book.family(model.id, model.name).id)


def service_tiers(book: Rulebook, provider: str, api: str, family: str | None) -> tuple[str, ...]:
    """default + the tiers of every entry matching provider, API and (if it names one) family."""
    tiers = [DEFAULT_TIER]
    for entry in book.tables.get("service_tiers", []):
        if entry["provider"] != provider or entry["api"] != api:
            continue
        if "family" in entry and entry["family"] != family:
            continue
        for tier in entry["tiers"]:
            if tier not in tiers:
                tiers.append(tier)
    return tuple(tiers)


def supports_service_tier(book: Rulebook, provider: str, api: str, family: str | None, tier: str) -> bool:
    return tier in service_tiers(book, provider, api, family)


def service_tier_multiplier(book: Rulebook, provider: str, api: str, tier: str | None, model_id: str) -> float:
    """The multiplier of the provider+API+id row for the tier, else of the provider+API row
    without an id; none: 1."""
    if tier is None:
        return 1.0
    general: float | None = None
    for row in book.tables.get("service_tier_prices", []):
        if row["provider"] != provider or row["api"] != api or tier not in row["tiers"]:
            continue
        if row.get("model") == model_id:
            return float(row["multiplier"])
        if "model" not in row and general is None:
            general = float(row["multiplier"])
    return 1.0 if general is None else general


def cache_write_1h_multiplier(book: Rulebook, model_id: str) -> float | None:
    """The input-rate multiplier of the first row whose regex matches the lowercased id; None:
    the model's cache write rate applies."""
    lowered = model_id.lower()
    for row in book.tables.get("cache_write_1h_prices", []):
        if re.search(row["pattern"], lowered):
            return float(row["multiplier"])
    return None


@dataclass(frozen=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0  # 5-minute writes
    cache_write_1h: int = 0
    service_tier: str | None = None  # the response's tier, else the request's


def calculate_cost(book: Rulebook, model: CatalogModel, usage: Usage) -> float:
    """Dollars for a usage: rates are per million tokens; 1-hour cache writes at the input rate
    times the rulebook multiplier (else the cache write rate); then the service tier multiplier."""
    per = 1_000_000
    write_1h = cache_write_1h_multiplier(book, model.id)
    rate_1h = model.rate("cacheWrite") if write_1h is None else model.rate("input") * write_1h
    base = (
        usage.input * model.rate("input")
        + usage.output * model.rate("output")
        + usage.cache_read * model.rate("cacheRead")
        + usage.cache_write * model.rate("cacheWrite")
        + usage.cache_write_1h * rate_1h
    ) / per
    cost = base * service_tier_multiplier(book, model.provider, model.api, usage.service_tier, model.id)
    return cost if math.isfinite(cost) else math.inf


def provider_default_model(book: Rulebook, provider: str) -> str | None:
    """quirks::provider_default_model: the provider's default model id; unlisted: none."""
    defaults: Mapping[str, Any] = book.tables.get("provider_defaults", {})
    value = defaults.get(provider)
    return value if isinstance(value, str) else None
