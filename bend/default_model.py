"""The saved default model (inference.md S6 "models.json and the saved default model").

Read it next to 004_cf1da0cad29d7f64.txt. Unpinned sessions start on the saved default
(defaultProvider/defaultModel), never silently replaced:

1. Not in the catalog, or outside a set enabledModels -> the next startup default (the first
   usable model of the startup chain); one display-only eukhe.default_model row names the
   saved default, the reason and the replacement.
2. Its provider lacks credentials -> DefaultUnusable (with a login hint); no substitute
   provider; the session opens modelless; the row names the saved default and the reason.
3. No replacement -> the session opens modelless, with the row.
4. The memory compactor (no memory.model) fails with the saved default and the reason.

``resolve`` runs as the compiled core in production (the seed: "resolve_default runs resolve
of bend/default_model.bend as the compiled Bend core"), so impl/eukhe/inference/ calls it.

Derived: a model of the startup chain is usable when it is in the catalog, inside a set
enabledModels, and its provider has credentials (the seed's three reasons, applied to the
replacement too); with no saved default the session starts on that first usable model, with
no row.
"""

from __future__ import annotations

from dataclasses import dataclass

Key = tuple[str, str]  # provider, model id

NOT_IN_CATALOG, NOT_ENABLED, NO_CREDENTIALS = "not_in_catalog", "not_enabled", "no_credentials"
REASONS: tuple[str, ...] = (NOT_IN_CATALOG, NOT_ENABLED, NO_CREDENTIALS)
DEFAULT_UNUSABLE = "DefaultUnusable"


@dataclass(frozen=True)
class World:
    catalog: tuple[Key, ...]
    enabled: tuple[Key, ...] | None  # None: enabledModels not set
    keyed: tuple[str, ...]  # providers with credentials
    chain: tuple[Key, ...]  # the startup model chain


@dataclass(frozen=True)
class Row:
    """The display-only eukhe.default_model row."""

    saved: Key
    reason: str
    replacement: Key | None


@dataclass(frozen=True)
class Resolved:
    model: Key | None  # None: the session opens modelless
    row: Row | None
    error: str | None  # DefaultUnusable


def usable(world: World, key: Key) -> bool:
    return key in world.catalog and (world.enabled is None or key in world.enabled) and key[0] in world.keyed


def startup(world: World) -> Key | None:
    for key in world.chain:
        if usable(world, key):
            return key
    return None


def resolve(saved: Key | None, world: World) -> Resolved:
    if saved is None:
        return Resolved(startup(world), None, None)
    reason: str | None = None
    if saved not in world.catalog:
        reason = NOT_IN_CATALOG
    elif world.enabled is not None and saved not in world.enabled:
        reason = NOT_ENABLED
    if reason is not None:
        replacement = startup(world)
        return Resolved(replacement, Row(saved, reason, replacement), None)
    if saved[0] not in world.keyed:
        return Resolved(None, Row(saved, NO_CREDENTIALS, None), DEFAULT_UNUSABLE)
    return Resolved(saved, None, None)


@dataclass(frozen=True)
class CompactorModel:
    model: Key | None
    failure: str | None  # names the saved default and the reason


def compactor_model(memory_model: Key | None, saved: Key | None, resolved: Resolved) -> CompactorModel:
    """Rule 4: memory.model if set; else the saved default when honoured; else a failure naming
    the saved default and the reason (a replaced default is never taken silently)."""
    if memory_model is not None:
        return CompactorModel(memory_model, None)
    if resolved.row is not None:
        return CompactorModel(None, f"saved default {resolved.row.saved[0]}/{resolved.row.saved[1]}: {resolved.row.reason}")
    if saved is None:
        return CompactorModel(resolved.model, None)
    return CompactorModel(saved, None)
