"""The tiny settings, unset to the letter (eukhe.tiny.settings: "ids it does not declare are
unset"; modelRoles' neutral default "" is unset; titles.generate defaults to true): a registry
that declares none of the ids gives the defaults of every field, and the empty strings of the
table's defaults are no value."""

from __future__ import annotations

from eukhe.settings.cvar import Cvars, Layer, Registry
from eukhe.settings.cvar_table import TABLE
from eukhe.tiny.settings import BASE_URL_CVAR, CHAINS_CVAR, RUNTIME_CVAR, TITLES_CVAR, TinySettings


def test_a_registry_that_declares_none_of_the_ids_gives_every_default() -> None:
    got = TinySettings.from_cvars(Cvars(Registry([])))
    assert got == TinySettings()
    assert (dict(got.primaries), dict(got.chains), got.titles, got.base_url, got.runtime_library) == ({}, {}, True, None, None)


def test_the_tables_empty_defaults_are_unset() -> None:
    got = TinySettings.from_cvars(Cvars(Registry(TABLE)))
    assert got == TinySettings()
    assert got.primary("tiny") is None and got.fallback("tiny") is None


def test_only_the_tables_declared_ids_are_read() -> None:
    declared = [d for d in TABLE if d.id in (CHAINS_CVAR, TITLES_CVAR, BASE_URL_CVAR, RUNTIME_CVAR)]
    assert len(declared) == 4
    sets = [(CHAINS_CVAR, {"judge": ["a", "b"], "tiny": []}), (TITLES_CVAR, False), (BASE_URL_CVAR, ""), (RUNTIME_CVAR, "/lib/ort.so")]
    got = TinySettings.from_cvars(Cvars(Registry(declared), [Layer("global settings.json", False, sets)]))
    assert dict(got.chains) == {"judge": ("a", "b"), "tiny": ()}
    assert (got.titles, got.base_url, got.runtime_library, dict(got.primaries)) == (False, None, "/lib/ort.so", {})
