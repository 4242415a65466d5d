"""The catalog_union laws: rules 1-5 of inference.md S6 "the built-in model catalog", and
union_fast (the compiled fast path equals the union). The seed names the family
(laws/catalog_union.bend C1) but not the laws; the names here are ours (derived).

Judges: each law states its rule directly on the two sources (which keys, which fields, which
order), never through ``union``; ``catalog_union_fast`` compares the fast path with ``union``,
the rule statement the seed pins it to.

Domain (bounded): sources over two keys, each source missing or a sequence of distinct keys,
each entry with any subset of two optional fields (thinkingLevelMap, featured), bundled entries
on api x, compiled ones on x or y (apis are only compared for equality), every value tagged
with its source: 41 bundled x 145 compiled sources plus a missing bundle (6,090 pairs). Keys, fields and lengths are unbounded in the seed, so this is
bounded; Hypothesis hunts longer catalogs over five keys. Production
(``eukhe.inference.catalog.effective_catalog``) runs on the same domain.

Proved: catalog_union_bundle_missing, over union's encoding generated from its code (spec.z3gen:
both loops, find through the property key, merge's loop over OPTIONAL; JSON values carried as
values nothing constrains), for every compiled catalog. The other rules quantify over every
position and key of both sources: a proof is an induction on union's two loops (``loop(_at=1)``
reaches the second) with invariants that quantify over positions; z3 answers unknown on such
invariants as premises beside the loops' recursive functions (measured), so they stay bounded.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import cache
from typing import Any

import z3
from hypothesis import strategies as st

from bend import catalog_union as m
from eukhe.inference import catalog as production
from spec.evidence import Evidence, also, bounded, examples, prove
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import facts, fresh, generated, same_items

KEYS: tuple[m.Key, ...] = (("p", "a"), ("q", "a"))
APIS = ("x", "y")
FIELDS = ("thinkingLevelMap", "featured")


def _entry(key: m.Key, api: str, fields: tuple[str, ...], source: str) -> m.Entry:
    values = {"thinkingLevelMap": {"off": source}, "featured": source == "bundled"}
    optional = tuple((f, values[f]) for f in m.OPTIONAL if f in fields)
    return m.Entry(key[0], key[1], api, f"https://{source}.example", (("name", f"{source}:{key[1]}"),), optional)


def _variants(apis: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((api, fields) for api in apis for n in range(3) for fields in itertools.combinations(FIELDS, n))


def _sources(source: str, keys: tuple[m.Key, ...] = KEYS) -> Iterator[tuple[m.Entry, ...]]:
    # Apis are only compared for equality: bundled entries use x, compiled ones x or y.
    variants_of = _variants(APIS[:1] if source == "bundled" else APIS)
    for n in range(len(keys) + 1):
        for order in itertools.permutations(keys, n):
            for variants in itertools.product(variants_of, repeat=n):
                yield tuple(_entry(k, api, fields, source) for k, (api, fields) in zip(order, variants))


def _pairs() -> Iterator[tuple[tuple[m.Entry, ...] | None, tuple[m.Entry, ...]]]:
    compiled = list(_sources("compiled"))
    for c in compiled:
        yield None, c
    for b in _sources("bundled"):
        for c in compiled:
            yield b, c


LABEL = "sources over 2 keys, every subset of 2 optional fields, compiled api equal to the bundled one or not; bundle missing or present (6,090 pairs)"


def _to_production(entries: tuple[m.Entry, ...], source: str) -> list[production.CatalogModel]:
    out = []
    for e in entries:
        opt = dict(e.optional)
        out.append(
            production.CatalogModel(
                provider=e.provider,
                id=e.id,
                api=e.api,
                base_url=e.base_url,
                name=str(dict(e.data)["name"]),
                reasoning=True,
                thinking_level_map=opt.get("thinkingLevelMap"),  # type: ignore[arg-type]
                featured=opt.get("featured"),  # type: ignore[arg-type]
                source=source,
            )
        )
    return out


def _from_production(models: list[production.CatalogModel]) -> tuple[m.Entry, ...]:
    out = []
    for model in models:
        optional = tuple((f, model.optional(f)) for f in m.OPTIONAL if model.optional(f) is not None)
        out.append(m.Entry(model.provider, model.id, model.api, model.base_url, (("name", model.name),), optional))
    return tuple(out)


def _production_union(bundled: tuple[m.Entry, ...] | None, compiled: tuple[m.Entry, ...]) -> tuple[m.Entry, ...]:
    return _from_production(production.effective_catalog(None if bundled is None else _to_production(bundled, "bundled"), _to_production(compiled, "compiled")))


Prop = Any


Case = tuple[tuple[m.Entry, ...] | None, tuple[m.Entry, ...], tuple[m.Entry, ...], tuple[m.Entry, ...]]


@cache
def _computed() -> tuple[Case, ...]:
    """Each pair of sources with the model's union and production's, computed once for the six laws."""
    return tuple((b, c, m.union(b, c), _production_union(b, c)) for b, c in _pairs())


def _law(prop: Prop, what: str) -> Evidence:
    model = bounded(_computed(), lambda c: prop(c[0], c[1], c[2]), label=f"{LABEL}: {what}")
    prod = bounded(_computed(), lambda c: prop(c[0], c[1], c[3]), label=f"production effective_catalog: {LABEL}")
    def hunted(b: list[tuple[int, int, int]] | None, c: list[tuple[int, int, int]]) -> bool:
        bundled, compiled = _source(b, "bundled"), _source(c, "compiled") or ()
        return bool(prop(bundled, compiled, m.union(bundled, compiled)))

    hunt = examples(hunted, b=st.none() | SOURCE, c=SOURCE)
    return also(model, hunt).with_production(prod)


HUNT_KEYS: tuple[m.Key, ...] = (("p", "a"), ("p", "b"), ("q", "a"), ("q", "ü"), ("", ""))
# A hunted source: up to 5 entries as (key index, api index, field mask), distinct keys kept.
SOURCE = st.lists(st.tuples(st.integers(0, len(HUNT_KEYS) - 1), st.integers(0, 1), st.integers(0, 3)), max_size=5, unique_by=lambda t: t[0])


def _source(raw: list[tuple[int, int, int]] | None, tag: str) -> tuple[m.Entry, ...] | None:
    if raw is None:
        return None
    return tuple(_entry(HUNT_KEYS[k], APIS[a], tuple(f for i, f in enumerate(FIELDS) if mask >> i & 1), tag) for k, a, mask in raw)


def _keys(entries: tuple[m.Entry, ...] | None) -> list[m.Key]:
    return [] if entries is None else [e.key for e in entries]


@law("catalog_union_every_model_once", "S6 catalog 1", "Every model of either source is in the catalog exactly once; neither hides the other's.", BOUNDED, derivation="rule 1 of the catalog union")
def catalog_union_every_model_once() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        got = _keys(out)
        return len(got) == len(set(got)) and set(got) == set(_keys(b)) | set(_keys(c))

    return _law(prop, "each key of either source once")


@law(
    "catalog_union_bundled_gives",
    "S6 catalog 2",
    "A model in both: api, baseUrl, data and optional fields from the bundle; the compiled entry fills missing optional fields only on the same api.",
    BOUNDED,
    derivation="rule 2 of the catalog union",
)
def catalog_union_bundled_gives() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        for entry in out:
            bb = [x for x in b or () if x.key == entry.key]
            cc = [x for x in c if x.key == entry.key]
            if not bb or not cc:
                continue
            have, twin = bb[0], cc[0]
            if (entry.api, entry.base_url, entry.data) != (have.api, have.base_url, have.data):
                return False
            for name in m.OPTIONAL:
                mine, theirs = dict(have.optional), dict(twin.optional)
                want = mine[name] if name in mine else theirs[name] if name in theirs and twin.api == have.api else "absent"
                if dict(entry.optional).get(name, "absent") != want:
                    return False
        return True

    return _law(prop, "models in both")


@law("catalog_union_one_source_unchanged", "S6 catalog 3", "A model in one source is in the catalog unchanged.", BOUNDED, derivation="rule 3 of the catalog union")
def catalog_union_one_source_unchanged() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        for entry in out:
            bb = [x for x in b or () if x.key == entry.key]
            cc = [x for x in c if x.key == entry.key]
            if len(bb) + len(cc) == 1 and entry != (bb + cc)[0]:
                return False
        return True

    return _law(prop, "models in one source")


@law(
    "catalog_union_order",
    "S6 catalog 4",
    "Bundled models first, then the compiled-only ones in compiled order; reordering one source moves no field between models.",
    BOUNDED,
    derivation="rule 4 of the catalog union",
)
def catalog_union_order() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        if b is None:
            return _keys(out) == _keys(c)
        want = _keys(b) + [k for k in _keys(c) if k not in _keys(b)]
        by_key = {e.key: e for e in out}
        for rev_b, rev_c in ((tuple(reversed(b)), c), (b, tuple(reversed(c)))):
            again = {e.key: e for e in m.union(rev_b, rev_c)}
            if again != by_key:
                return False
        return _keys(out) == want

    return _law(prop, "order, and the same entries when either source is read reversed")


# union's encoding, generated from its code (spec.z3gen: its two loops, find and merge unfolded,
# the entries' JSON fields carried as values nothing constrains).
UNION = generated(m.union)
COMPILED, BUNDLED = fresh(tuple[m.Entry, ...], "compiled"), fresh(tuple[m.Entry, ...] | None, "bundled")


@law("catalog_union_bundle_missing", "S6 catalog 5", "A missing or damaged bundle gives the compiled catalog.", PROVED, derivation="rule 5 of the catalog union")
def catalog_union_bundle_missing() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        return b is not None or out == c

    proof = prove(
        lambda: z3.Implies(BUNDLED.none, same_items(UNION(BUNDLED, COMPILED), COMPILED)),
        label="a bundle that is None: union(bundle, compiled) holds the compiled catalog's entries, for every compiled catalog (any length, any fields, any JSON values)",
        assumptions=[*facts(BUNDLED), *facts(COMPILED)], ties=[UNION.tie],
    )
    union = also(proof, _law(prop, "bundle missing"))
    return union.with_production(_damaged_bundles())


DAMAGED: tuple[tuple[str, str], ...] = (
    ("not JSON", "{"),
    ("empty file", ""),
    ("not UTF-8", ""),
    ("a list", "[]"),
    ("unknown version", '{"version": 2, "providers": []}'),
    ("missing providers", '{"version": 1}'),
    ("unknown top-level key", '{"version": 1, "providers": [], "pin": "x"}'),
    ("a transport not compiled in", '{"version": 1, "providers": [{"id": "p", "api": "smoke-signals", "baseUrl": "u", "models": []}]}'),
    ("unknown provider key", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [], "x": 1}]}'),
    ("missing baseUrl", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "models": []}]}'),
    ("a model listed twice", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [{"id": "a"}, {"id": "a"}]}]}'),
    ("unknown model key", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [{"id": "a", "x": 1}]}]}'),
    ("wrong model type", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [{"id": 7}]}]}'),
    ("non-finite cost", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [{"id": "a", "cost": {"input": Infinity, "output": 1}}]}]}'),
    ("unknown cost key", '{"version": 1, "providers": [{"id": "p", "api": "openai-completions", "baseUrl": "u", "models": [{"id": "a", "cost": {"input": 1, "output": 1, "tip": 1}}]}]}'),
)


def _damaged_bundles() -> Evidence:
    """Production: every damaged bundle (malformed at every depth) is refused with one
    diagnostic, and the registry is then the compiled catalog (rule 5)."""
    import tempfile
    from pathlib import Path

    compiled = list(production.compiled())

    def refused(case: tuple[str, str]) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "models.bundled.json"
            if case[0] == "not UTF-8":
                path.write_bytes(b"\xff\xfe{")
            else:
                path.write_text(case[1], encoding="utf-8")
            bundled, problems = production.load_bundled(path)
            reg = production.registry(None, path)
        return bundled is None and len(problems) == 1 and reg.models == compiled

    return bounded(DAMAGED, refused, label=f"production: {len(DAMAGED)} damaged bundles (every depth: document, provider, model, cost) give the compiled catalog")


@law("catalog_union_fast", "S6 catalog (union_fast)", "The compiled fast path over the projection, assembled back, equals the union.", BOUNDED, derivation="the seed's law union_fast")
def catalog_union_fast() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        places = m.union_fast(None if b is None else m.project(b), m.project(c))
        return m.assemble(b, c, places) == out

    return _law(prop, "fast path = union")
