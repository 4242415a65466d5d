"""The four default_model laws of inference.md S6 "models.json and the saved default model".

Judges: each law states its rule on the world directly (in the catalog, enabled, keyed, the
first usable model of the chain), never through ``resolve``'s own helpers.

Domain (bounded): providers p and q, models p/a, p/b, q/a; the saved default unset, one of
them, or r/z (a provider nobody knows); every catalog (8), enabledModels unset or any subset
(9), every set of keyed providers (4), every startup chain of at most 2 distinct models (10):
14,400 worlds. Ids and lists are unbounded in the seed, so this is bounded; Hypothesis hunts
more models. Production (``eukhe.inference.default_model.resolve_default``) runs on the same
worlds.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache
from typing import Any

from hypothesis import strategies as st

from bend import default_model as m
from eukhe.inference import default_model as production
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples
from spec.registry import BOUNDED, law

MODELS: tuple[m.Key, ...] = (("p", "a"), ("p", "b"), ("q", "a"))
SAVED: tuple[m.Key | None, ...] = (None, *MODELS, ("r", "z"))
REASONS = ("not_in_catalog", "not_enabled", "no_credentials")  # the seed's three reasons


def _subsets(items: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    return [tuple(x for x, keep in zip(items, mask) if keep) for mask in itertools.product((False, True), repeat=len(items))]


def _worlds() -> Iterator[tuple[m.Key | None, m.World]]:
    chains = [c for n in range(3) for c in itertools.permutations(MODELS, n)]
    for saved, catalog, enabled, keyed, chain in itertools.product(SAVED, _subsets(MODELS), [None, *_subsets(MODELS)], _subsets(("p", "q")), chains):
        yield saved, m.World(catalog, enabled, keyed, chain)


LABEL = "5 saved defaults x 8 catalogs x 9 enabledModels x 4 keyed sets x 10 chains (14,400 worlds)"


def _first_usable(world: m.World) -> m.Key | None:
    for key in world.chain:
        if key in world.catalog and (world.enabled is None or key in world.enabled) and key[0] in world.keyed:
            return key
    return None


Outcome = tuple[m.Key | None, tuple[m.Key, str, m.Key | None] | None, bool]


def _model_outcome(saved: m.Key | None, world: m.World) -> Outcome:
    r = m.resolve(saved, world)
    return r.model, None if r.row is None else (r.row.saved, r.row.reason, r.row.replacement), r.error == m.DEFAULT_UNUSABLE


def _key(text: object) -> m.Key | None:
    if text is None:
        return None
    provider, model = str(text).split("/", 1)
    return (provider, model)


def _production_outcome(saved: m.Key | None, world: m.World) -> Outcome:
    r = production.resolve_default(saved, world.catalog, world.enabled, world.keyed, world.chain)
    row = None
    if r.row is not None:
        if r.row["kind"] != production.ROW_KIND:
            return (None, None, False)
        saved_key = _key(r.row["saved"])
        assert saved_key is not None
        row = (saved_key, str(r.row["reason"]), _key(r.row["replacement"]))
    unusable = isinstance(r.error, production.DefaultUnusable) and saved is not None and r.error.provider == saved[0] and "login" in str(r.error)
    return r.model, row, unusable


Case = tuple[m.Key | None, m.World, Outcome, Outcome]


@cache
def _computed() -> tuple[Case, ...]:
    """Each world with the model's outcome and production's, computed once for the four laws."""
    return tuple((saved, world, _model_outcome(saved, world), _production_outcome(saved, world)) for saved, world in _worlds())


def _law(prop: Any, what: str) -> Evidence:
    model = bounded(_computed(), lambda c: prop(c[0], c[1], c[2]), label=f"{LABEL}: {what}")
    prod = bounded(_computed(), lambda c: prop(c[0], c[1], c[3]), label=f"production resolve_default: {LABEL}")
    def hunted(w: tuple[int | None, int, int | None, int, list[int]]) -> bool:
        saved, world = _hunted(*w)
        return bool(prop(saved, world, _model_outcome(saved, world)))

    hunt = examples(hunted, w=HUNTED)
    return also(model, hunt).with_production(prod)


POOL: tuple[m.Key, ...] = tuple((p, i) for p in ("p", "q", "r", "ü", "") for i in ("a", "b", ""))
PROVIDERS = ("p", "q", "r", "ü", "")
# A hunted world as bit masks over POOL and PROVIDERS, the saved default and the chain as indexes.
HUNTED = st.tuples(
    st.none() | st.integers(0, len(POOL) - 1),
    st.integers(0, 2 ** len(POOL) - 1),
    st.none() | st.integers(0, 2 ** len(POOL) - 1),
    st.integers(0, 2 ** len(PROVIDERS) - 1),
    st.lists(st.integers(0, len(POOL) - 1), max_size=6, unique=True),
)


def _hunted(saved: int | None, catalog: int, enabled: int | None, keyed: int, chain: list[int]) -> tuple[m.Key | None, m.World]:
    def pick(mask: int) -> tuple[m.Key, ...]:
        return tuple(k for i, k in enumerate(POOL) if mask >> i & 1)

    world = m.World(pick(catalog), None if enabled is None else pick(enabled), tuple(p for i, p in enumerate(PROVIDERS) if keyed >> i & 1), tuple(POOL[i] for i in chain))
    return None if saved is None else POOL[saved], world


@law(
    "default_honoured_or_reported",
    "S6 models.json 1-3",
    "An unpinned session starts on its saved default, or a display-only row names the saved default, the reason and the replacement (the next startup default).",
    BOUNDED,
)
def default_honoured_or_reported() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        model, row, _unusable = out
        if saved is None:
            return True
        if saved not in world.catalog:
            reason: str | None = REASONS[0]
        elif world.enabled is not None and saved not in world.enabled:
            reason = REASONS[1]
        elif saved[0] not in world.keyed:
            reason = REASONS[2]
        else:
            reason = None
        if reason is None:
            return model == saved
        replacement = None if reason == REASONS[2] else _first_usable(world)
        return row == (saved, reason, replacement) and model == replacement

    return _law(prop, "honoured, or reported with its replacement")


@law("default_quiet_when_honoured", "S6 models.json 1", "A session on its saved default shows no row and no error.", BOUNDED)
def default_quiet_when_honoured() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        usable = saved is not None and saved in world.catalog and (world.enabled is None or saved in world.enabled) and saved[0] in world.keyed
        return (out[0] == saved and out[1] is None and not out[2]) if usable else out[0] != saved or saved is None

    return _law(prop, "a usable saved default is honoured quietly")


@law("default_quiet_when_unset", "S6 models.json", "No saved default: the startup default, no row, no error.", BOUNDED)
def default_quiet_when_unset() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        return saved is not None or out == (_first_usable(world), None, False)

    return _law(prop, "unset")


@law(
    "default_unkeyed_never_moves",
    "S6 models.json 2",
    "A saved default whose provider lacks credentials is never replaced: DefaultUnusable, modelless, a row naming it and the reason.",
    BOUNDED,
)
def default_unkeyed_never_moves() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        if saved is None or saved not in world.catalog or (world.enabled is not None and saved not in world.enabled) or saved[0] in world.keyed:
            return True
        return out == (None, (saved, "no_credentials", None), True)

    return _law(prop, "unkeyed provider")


# -- models.json (derived: S6 "models.json and the saved default model" rules 1-2) ------------------------

GOOD_PROVIDER: dict[str, Any] = {
    "baseUrl": "http://127.0.0.1:8080/v1",
    "apiKey": "k",
    "api": "openai-completions",
    "models": [
        {
            "id": "m",
            "name": "M",
            "reasoning": True,
            "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 10,
            "maxTokens": 5,
            "thinkingLevelMap": {"off": None, "xhigh": "xhigh"},
            "compat": {"supportsStore": False},
        }
    ],
}

# Every field path of a provider entry, each with the values that are bad and the ones that are
# fine per the seed's rule 1 (wrong type, missing baseUrl/apiKey, invalid model drop the provider).
Path_ = tuple[Any, ...]
WRONG_VALUES: tuple[Any, ...] = (None, 3, "s", [1], {"a": 1}, True, 1.5)
FITTING = {"baseUrl": str, "apiKey": str, "reasoning": bool, "contextWindow": int}


def _fits(path: tuple[Any, ...], value: Any) -> bool:
    """The values of WRONG_VALUES that are of the field's own type (so not wrong)."""
    kind = FITTING.get(path[-1])
    return kind is not None and type(value) is kind
MUTATIONS: tuple[tuple[str, Path_, Any, bool], ...] = (
    # (what, path, new value or DELETE, still loads)
    ("missing baseUrl", ("baseUrl",), "DELETE", False),
    ("missing apiKey", ("apiKey",), "DELETE", False),
    ("empty baseUrl", ("baseUrl",), "", False),
    ("empty apiKey", ("apiKey",), "", False),
    ("missing models", ("models",), "DELETE", True),
    ("unknown api", ("api",), "smoke-signals", False),
    ("unknown key in provider", ("colour",), "blue", False),
    ("unknown key in model", ("models", 0, "colour"), "blue", False),
    ("unknown key in cost", ("models", 0, "cost", "tip"), 1, False),
    ("missing model id", ("models", 0, "id"), "DELETE", False),
    ("empty model id", ("models", 0, "id"), "", False),
    ("missing cost input", ("models", 0, "cost", "input"), "DELETE", False),
    ("negative cost", ("models", 0, "cost", "output"), -1, False),
    ("infinite cost", ("models", 0, "cost", "output"), float("inf"), False),
    ("NaN cost", ("models", 0, "cost", "output"), float("nan"), False),
    ("zero context window", ("models", 0, "contextWindow"), 0, False),
    ("unknown thinking level", ("models", 0, "thinkingLevelMap", "ultra"), "x", False),
    ("thinking entry not a string", ("models", 0, "thinkingLevelMap", "off"), 1, False),
    ("unicode model id", ("models", 0, "id"), "模型-ü", True),
    ("huge context window", ("models", 0, "contextWindow"), 10**30, True),
    ("missing optional name", ("models", 0, "name"), "DELETE", True),
    ("null thinking map", ("models", 0, "thinkingLevelMap"), None, True),
    ("a model listed twice", ("models", 1), GOOD_PROVIDER["models"][0], False),
    *((f"wrong type at {p}", p, v, False) for p in (("baseUrl",), ("apiKey",), ("models",), ("models", 0, "reasoning"), ("models", 0, "contextWindow"), ("models", 0, "cost")) for v in WRONG_VALUES if not _fits(p, v)),
)


def _mutated(path: Path_, value: Any) -> Any:
    import copy

    entry = copy.deepcopy(GOOD_PROVIDER)
    at: Any = entry
    for step in path[:-1]:
        at = at[step]
    if value == "DELETE":
        del at[path[-1]]
    elif isinstance(at, list) and path[-1] == len(at):
        at.append(value)
    else:
        at[path[-1]] = value
    return entry


@law(
    "default_models_json_each_provider_alone",
    "S6 models.json 1-2",
    "Each providers.<id> loads alone: a bad entry (at any depth) drops only that provider with a diagnostic naming it; an unreadable file is one diagnostic and no custom models.",
    BOUNDED,
    derivation="models.json rules 1 and 2 (the seed names no law for them)",
)
def default_models_json_each_provider_alone() -> Evidence:
    import json

    from eukhe.inference import catalog

    def alone(case: tuple[str, Path_, Any, bool]) -> bool:
        _what, path, value, loads = case
        document = {"providers": {"good": GOOD_PROVIDER, "other": _mutated(path, value)}}
        loaded = catalog.parse_models_json(json.dumps(document), "models.json")
        named = [d for d in loaded.diagnostics if "providers.other" in d]
        want = ["good", "other"] if loads else ["good"]
        return sorted(loaded.providers) == want and len(named) == (0 if loads else 1) and len(loaded.diagnostics) == len(named)

    providers = bounded(MUTATIONS, alone, label=f"{len(MUTATIONS)} mutations of a provider entry at every depth (missing, empty, unknown key, wrong type, non-finite, unicode, huge) beside a good one")
    whole = bounded(
        ("{", "", "[]", "3", '{"providers": []}', '{"providers": 1}', "\ufeff{}", '{"providers": {"a": '),
        lambda text: (lambda loaded: loaded.providers == {} and len(loaded.diagnostics) == 1)(catalog.parse_models_json(text)),
        label="8 unparsable or wrongly shaped files: one diagnostic, no custom models",
    )
    import tempfile
    from pathlib import Path

    def files(case: str) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            agent = Path(tmp)
            if case == "good":
                (agent / "models.json").write_text(json.dumps({"providers": {"local": GOOD_PROVIDER}}), encoding="utf-8")
            elif case == "not utf-8":
                (agent / "models.json").write_bytes(b"\xff\xfe{")
            elif case == "a directory":
                (agent / "models.json").mkdir()
            reg = catalog.registry(agent)
            found = reg.find("local", "m")
        if case == "good":
            return found is not None and found.source == "models.json" and reg.diagnostics == []
        if case == "absent":
            return found is None and reg.diagnostics == [] and len(reg.models) == len(catalog.compiled())
        return found is None and len(reg.diagnostics) == 1 and len(reg.models) == len(catalog.compiled())

    extra = catalog.parse_models_json(json.dumps({"providers": {"good": GOOD_PROVIDER}, "defaults": 1}))
    if sorted(extra.providers) != ["good"] or len(extra.diagnostics) != 1 or "defaults" not in extra.diagnostics[0]:
        raise LawFailed(f"an unknown top-level key should be one diagnostic and load the providers: {extra.diagnostics}")
    on_disk = bounded(("good", "absent", "not utf-8", "a directory"), files, label="models.json on disk: a good file, none, bytes that are not UTF-8, a directory")
    return all_of(providers, whole, on_disk)
