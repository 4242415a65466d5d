"""The four default_model laws of inference.md S6 "models.json and the saved default model".

Judges: each law states its rule on the world directly (in the catalog, enabled, keyed, the
first usable model of the chain), never through ``resolve``'s own helpers.

Proofs, about the code: spec.z3gen generates the z3 encodings of ``resolve`` and of ``startup``
(whose loop over the chain z3 proved ends) from their source, ``x in t`` each the membership
Python's ``in`` computes (``spec.z3gen.member``). The judges state "in the catalog", "enabled"
and "keyed" with that membership on the world's tuples, never through ``usable``. That the
replacement is the first usable model of the chain is proved by induction on startup's loop
(the step's hypothesis at the states ``successors`` gives): from any index i, for every k, if
chain[k] is usable and no model of chain[i:k] is, the loop returns chain[k]; if no model of
chain[i:] is usable it returns None; what it returns is usable. Each law is then proved of
``resolve`` for every saved default and every world (any catalogs, enabledModels, keyed
providers and chains of any length, any ids), with that fact at the state ``resolve``'s call of
startup enters its loop with.

The bounded domain below runs beside the proofs, and production on it (the model's laws are
proved, production's are bounded): providers p and q, models p/a, p/b, q/a; the saved default unset, one of
them, or r/z (a provider nobody knows); every catalog (8), enabledModels unset or any subset
(9), every set of keyed providers (4), every startup chain of at most 2 distinct models (10):
14,400 worlds. Hypothesis hunts more models. Production (``eukhe.inference.default_model.resolve_default``) runs on the same
worlds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import z3
from hypothesis import strategies as st

from bend import default_model as m
from eukhe.inference import default_model as production
from spec.evidence import Evidence, LawFailed, all_of, also, bounded, examples, induction, prove
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import facts, fresh, generated, item, member, same

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


# -- the proofs: z3 encodings generated from the code of resolve and startup --------------------------

RESOLVE, STARTUP = generated(m.resolve), generated(m.startup)
SAVED_T, WORLD = fresh(m.Key | None, "saved"), fresh(m.World, "world")
_I, _J, _K = z3.Ints("i j k")
INPUTS = [*facts(SAVED_T), *facts(WORLD)]  # every tuple's length is a natural
TIES = [RESOLVE.tie, STARTUP.tie]


def _usable(key: Any) -> Any:
    """The key (a pair of terms) is in the catalog, inside enabledModels when it is set, and its
    provider is keyed: the seed's three conditions, each Python's ``in`` on the world's tuples."""
    enabled = WORLD.enabled
    return z3.And(member(WORLD.catalog, key), z3.Or(enabled.none, member(enabled.value, key)), member(WORLD.keyed, key.item0))


def _chain(index: Any) -> Any:
    return item(WORLD.chain, index)


def _none_usable(start: Any, end: Any) -> Any:
    """No model of chain[start:end] is usable."""
    return z3.ForAll([_J], z3.Implies(z3.And(start <= _J, _J < end), z3.Not(_usable(_chain(_J)))))


def _is_first_usable(start: Any, got: Any) -> Any:
    """``got`` (an optional key) is the first usable model of chain[start:], None if there is
    none, and usable when it is one: for the free k, if chain[k] is usable and none before it
    from ``start`` is, ``got`` is chain[k]."""
    n = WORLD.chain.length
    first_at_k = z3.And(start <= _K, _K < n, _usable(_chain(_K)), _none_usable(start, _K))
    return z3.And(
        z3.Implies(first_at_k, z3.And(z3.Not(got.none), same(got.value, _chain(_K)))),
        z3.Implies(_none_usable(start, n), got.none),
        z3.Implies(z3.Not(got.none), _usable(got.value)),
    )


def _startup_holds(at: dict[str, Any]) -> Any:
    return z3.Implies(at["_index"] >= 0, _is_first_usable(at["_index"], STARTUP.loop(**at)))


@cache
def startup_lemma() -> Evidence:
    """startup's loop, entered at any index i, returns the first usable model of chain[i:]:
    induction on its loop (z3 proved it ends), the step's hypothesis at the states its body runs
    it again with."""
    state = {"world": WORLD, "_index": _I}
    test = _I < WORLD.chain.length
    base = prove(lambda: z3.Implies(z3.Not(test), _startup_holds(state)), label="base: the chain is walked (the first usable from its end is None)", assumptions=INPUTS, ties=TIES)
    step = prove(
        lambda: z3.Implies(z3.And(test, *(_startup_holds(after) for _path, after in STARTUP.successors(**state))), _startup_holds(state)),
        label="step: chain[i] is returned when usable, else the first usable after it", assumptions=INPUTS, ties=TIES,
    )
    return induction(base, step, of=STARTUP.of, label=f"{STARTUP.of}'s walk over the chain (the first usable model)")


def _resolve_proof(claim: Callable[[Any, Any], Any], what: str, *, replacement: bool = True) -> Evidence:
    """``claim(saved, resolved)`` of resolve's encoding for every saved default and world, given
    (when the claim is about the ``replacement``) startup's fact at the state resolve's call of
    it enters its loop with."""
    if not replacement:
        return prove(lambda: claim(SAVED_T, RESOLVE(SAVED_T, WORLD)), label=f"{what}, for every saved default and world", assumptions=INPUTS, ties=TIES)
    entry = prove(
        lambda: z3.Implies(_startup_holds(STARTUP.entered(WORLD)), claim(SAVED_T, RESOLVE(SAVED_T, WORLD))),
        label=f"{what}, for every saved default and world", assumptions=INPUTS, ties=TIES,
    )
    return all_of(startup_lemma(), entry)


def _row_is(row: Any, saved: Any, reason: str, replacement: Any) -> Any:
    """The row is there and names the saved default, the reason and the replacement (a Maybe, or
    None: the row names none)."""
    named = row.value.replacement.none if replacement is None else same(row.value.replacement, replacement)
    return z3.And(z3.Not(row.none), same(row.value.saved, saved), row.value.reason == z3.StringVal(reason), named)


def _unusable_error(error: Any) -> Any:
    return z3.And(z3.Not(error.none), error.value == z3.StringVal(m.DEFAULT_UNUSABLE))


def _law(prop: Any, what: str, proof: Evidence | None = None) -> Evidence:
    model = bounded(_computed(), lambda c: prop(c[0], c[1], c[2]), label=f"{LABEL}: {what}")
    prod = bounded(_computed(), lambda c: prop(c[0], c[1], c[3]), label=f"production resolve_default: {LABEL}")
    def hunted(w: tuple[int | None, int, int | None, int, list[int]]) -> bool:
        saved, world = _hunted(*w)
        return bool(prop(saved, world, _model_outcome(saved, world)))

    hunt = examples(hunted, w=HUNTED)
    if proof is not None:
        return also(proof, model, hunt).with_production(prod)
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
    PROVED,
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

    def claim(saved: Any, out: Any) -> Any:
        key, model, row = saved.value, out.model, out.row
        enabled = z3.Or(WORLD.enabled.none, member(WORLD.enabled.value, key))
        return z3.Implies(
            z3.Not(saved.none),
            z3.If(
                z3.Not(member(WORLD.catalog, key)), z3.And(_is_first_usable(0, model), _row_is(row, key, REASONS[0], model)),
                z3.If(
                    z3.Not(enabled), z3.And(_is_first_usable(0, model), _row_is(row, key, REASONS[1], model)),
                    z3.If(
                        z3.Not(member(WORLD.keyed, key.item0)), z3.And(model.none, _row_is(row, key, REASONS[2], None)),
                        z3.And(z3.Not(model.none), same(model.value, key)),
                    ),
                ),
            ),
        )

    proof = _resolve_proof(claim, "a saved default is honoured, or its row names it, the reason and the first usable model of the chain (none for no credentials), which the session starts on")
    return _law(prop, "honoured, or reported with its replacement", proof)


@law("default_quiet_when_honoured", "S6 models.json 1", "A session on its saved default shows no row and no error.", PROVED)
def default_quiet_when_honoured() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        usable = saved is not None and saved in world.catalog and (world.enabled is None or saved in world.enabled) and saved[0] in world.keyed
        return (out[0] == saved and out[1] is None and not out[2]) if usable else out[0] != saved or saved is None

    def claim(saved: Any, out: Any) -> Any:
        honoured = z3.And(same(out.model, saved), out.row.none, z3.Not(_unusable_error(out.error)))
        return z3.Implies(z3.Not(saved.none), z3.If(_usable(saved.value), honoured, z3.Not(same(out.model, saved))))

    proof = _resolve_proof(claim, "a usable saved default is the model, with no row and no error; an unusable one is never the model")
    return _law(prop, "a usable saved default is honoured quietly", proof)


@law("default_quiet_when_unset", "S6 models.json", "No saved default: the startup default, no row, no error.", PROVED)
def default_quiet_when_unset() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        return saved is not None or out == (_first_usable(world), None, False)

    def claim(saved: Any, out: Any) -> Any:
        return z3.Implies(saved.none, z3.And(_is_first_usable(0, out.model), out.row.none, z3.Not(_unusable_error(out.error))))

    proof = _resolve_proof(claim, "no saved default: the first usable model of the chain, no row, no error")
    return _law(prop, "unset", proof)


@law(
    "default_unkeyed_never_moves",
    "S6 models.json 2",
    "A saved default whose provider lacks credentials is never replaced: DefaultUnusable, modelless, a row naming it and the reason.",
    PROVED,
)
def default_unkeyed_never_moves() -> Evidence:
    def prop(saved: m.Key | None, world: m.World, out: Outcome) -> bool:
        if saved is None or saved not in world.catalog or (world.enabled is not None and saved not in world.enabled) or saved[0] in world.keyed:
            return True
        return out == (None, (saved, "no_credentials", None), True)

    def claim(saved: Any, out: Any) -> Any:
        key = saved.value
        unkeyed = z3.And(
            z3.Not(saved.none), member(WORLD.catalog, key), z3.Or(WORLD.enabled.none, member(WORLD.enabled.value, key)), z3.Not(member(WORLD.keyed, key.item0))
        )
        return z3.Implies(unkeyed, z3.And(out.model.none, _row_is(out.row, key, "no_credentials", None), _unusable_error(out.error)))

    proof = _resolve_proof(claim, "a saved default in the catalog and enabledModels whose provider has no credentials: modelless, its row with no replacement, DefaultUnusable", replacement=False)
    return _law(prop, "unkeyed provider", proof).with_production(_commands_resolve())


# The resolver of the commands and the agent (eukhe.inference.resolve.resolve_model: `eukhe ask`,
# `eukhe chat`, the agent's turns) on a real agent dir: the saved default (defaultProvider,
# defaultModel) of a catalog provider and of a models.json provider, with the provider's key in no
# place, or in each place a key is read from (models.json apiKey; auth.json as a string, or an
# object's key, apiKey or access; <PROVIDER>_API_KEY), a damaged auth.json; a provider and model given
# instead, unknown ones (a models.json provider with an empty apiKey is dropped, so unknown), none at all. The rule: a provider without credentials is never replaced (a
# NoModel the environment must fix, naming the provider and its login), and no answer is ever a model
# of another provider than the one given or saved; a name that is not there is a usage error.
def _commands_resolve() -> Evidence:
    import json
    import os
    import tempfile
    from pathlib import Path

    from eukhe.inference import catalog
    from eukhe.inference.resolve import NoModel, resolve_model

    compiled = catalog.compiled()
    provider = compiled[0].provider
    model = next(m.id for m in compiled if m.provider == provider)
    variable = provider.upper().replace("-", "_") + "_API_KEY"
    custom = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "models": [{"id": "own-1"}, {"id": "own-2"}]}
    credentials: tuple[tuple[str, Any], ...] = (
        ("none", None), ("auth string", "sk-1"), ("auth key", {"key": "sk-2"}), ("auth apiKey", {"apiKey": "sk-3"}),
        ("auth access", {"access": "sk-4", "refresh": "r"}), ("auth object without a key", {"key": ""}), ("environment", "env"),
        ("damaged auth.json", "damaged"),
    )
    asks: tuple[tuple[tuple[str, str], str | None, str | None], ...] = (
        ((provider, model), None, None), ((provider, ""), None, None), (("", ""), provider, None), ((provider, model), provider, model),
        (("lawp", "own-2"), None, None), (("lawp", ""), None, None), (("lawk", "own-1"), None, None), (("lawp", "own-1"), "lawp", "unlisted"),
        (("", ""), None, None), ((provider, model), "nobody", None), ((provider, model), provider, "no-such-model"),
    )

    class Settings:
        def __init__(self, saved: tuple[str, str]) -> None:
            self.saved = {"defaultProvider": saved[0], "defaultModel": saved[1]}

        def value(self, path: list[str], name: str) -> str:
            return self.saved[name]

    def ok(case: tuple[tuple[str, Any], tuple[tuple[str, str], str | None, str | None]]) -> bool:
        (how, credential), (saved, given_provider, given_model) = case
        wanted = given_provider or saved[0]
        with tempfile.TemporaryDirectory() as temp:
            agent = Path(temp)
            (agent / "models.json").write_text(json.dumps({"providers": {"lawp": {**custom, "apiKey": "sk-own"}, "lawk": {**custom, "apiKey": ""}}}), encoding="utf-8")
            if how == "damaged auth.json":
                (agent / "auth.json").write_text("{", encoding="utf-8")
            elif credential is not None and how != "environment":
                (agent / "auth.json").write_text(json.dumps({provider: credential}), encoding="utf-8")
            before = os.environ.pop(variable, None)
            if how == "environment":
                os.environ[variable] = "sk-env"
            try:
                got = resolve_model(agent, Settings(saved), given_provider, given_model)
            except NoModel as error:
                got = error
            finally:
                os.environ.pop(variable, None)
                if before is not None:
                    os.environ[variable] = before
        known = wanted in (provider, "lawp")  # lawk has an empty apiKey: models.json rule 1 drops it
        model_id = given_model or (saved[1] if wanted == saved[0] else "")
        listed = wanted != provider or model_id in ("", model) or any(m.provider == provider and m.id == model_id for m in compiled)
        if not known or not listed and wanted == provider:
            return isinstance(got, NoModel) and got.usage and (wanted in str(got) or not wanted)
        keyed = wanted == "lawp" or (wanted == provider and how not in ("none", "auth object without a key", "damaged auth.json"))
        if not keyed:
            fix = f"eukhe login {wanted}" in str(got) or how == "damaged auth.json"
            return isinstance(got, NoModel) and not got.usage and fix
        if isinstance(got, NoModel):
            return False
        same = model_id == "" or got.id == model_id
        return bool(got.provider == wanted and same and got.api_key != "")

    cases = list(itertools.product(credentials, asks))
    return bounded(cases, ok, label=f"production resolve_model on a real agent dir: {len(credentials)} places of the key (none, auth.json forms, the environment, a damaged auth.json) x {len(asks)} saved defaults and given names")


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
