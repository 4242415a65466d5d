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
values nothing constrains), for every compiled catalog; catalog_union_one_source_unchanged, by
induction on union's two loops over its encoding with find and merge left opaque (two facts of
theirs proved of their own code and stated at the calls), for a fixed catalog position and
fixed source positions, so no invariant quantifies over positions (see one_source_proof). The
other rules quantify over every
position and key of both sources: a proof is an induction on union's two loops (``loop(_at=1)``
reaches the second) with invariants that quantify over positions; z3 answers unknown on such
invariants as premises beside the loops' recursive functions (measured), so they stay bounded.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import z3
from hypothesis import strategies as st

from bend import catalog_union as m
from eukhe.inference import catalog as production
from spec.evidence import Evidence, all_of, also, bounded, examples, induction, prove
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import Generated, Items, applied, facts, fresh, generated, item, same_items

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


@law("catalog_union_one_source_unchanged", "S6 catalog 3", "A model in one source is in the catalog unchanged.", PROVED, derivation="rule 3 of the catalog union")
def catalog_union_one_source_unchanged() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        for entry in out:
            bb = [x for x in b or () if x.key == entry.key]
            cc = [x for x in c if x.key == entry.key]
            if len(bb) + len(cc) == 1 and entry != (bb + cc)[0]:
                return False
        return True

    return also(one_source_proof(), _law(prop, "models in one source"))


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


# -- catalog_union_one_source_unchanged: proved, by induction on union's two loops ------------------
#
# The encoding of union generated from its code with find and merge left opaque (spec.z3gen: each
# call an application of uninterpreted functions of its arguments, so the proof holds whatever they
# compute), beside two facts proved of their own code and stated at the calls union makes: find
# gives None for a key no entry of the source has (induction on find's loop), and merge keeps the
# bundled entry's key. For a position p of the catalog and two positions qi, qj (of the bundled and
# of the compiled source), each fixed: every state of union's second loop, then of its first, whose
# list is no longer than p, ends in a catalog whose item p (when it has one) is the bundled entry at
# qi when its key is that entry's and no compiled entry has it, and the compiled entry at qj when its
# key is that one's and no bundled entry has it; and a state's items stay where they are (the loops
# only append). The step of each loop assumes this at exactly the states its body runs the loop
# again with (``successors``), and the precondition of the module (within one source each key once)
# at the one pair of positions it reads. Keys are compared, entries equal field by field (tuples by
# length and items).

UNION_OPAQUE = generated(m.union, opaque=(m.find, m.merge))
FIND, MERGE = generated(m.find), generated(m.merge)
_SOURCES_TIES = [UNION_OPAQUE.tie, FIND.tie, MERGE.tie]
_B, _C = fresh(tuple[m.Entry, ...] | None, "bundled"), fresh(tuple[m.Entry, ...], "compiled")
_OUT, _AT, _AT0 = fresh(tuple[m.Entry, ...], "out"), z3.Int("index"), z3.Int("index@0")
_P, _QI, _QJ = z3.Ints("p qi qj")
_KEY = fresh(m.Key, "key")
_FACTS = [*facts(_B), *facts(_C), *facts(_OUT)]


def _key(x: Any) -> tuple[Any, Any]:
    return (x.provider, x.id)


def _has_key(x: Any, key: tuple[Any, Any]) -> Any:
    return z3.And(x.provider == key[0], x.id == key[1])


def _entry_same(x: Any, y: Any) -> Any:
    """Python's == of two entries: every field, tuples by length and items (``same_items``)."""
    return z3.And(x.provider == y.provider, x.id == y.id, x.api == y.api, x.base_url == y.base_url,
                  same_items(x.data, y.data), same_items(x.optional, y.optional))


def _nowhere(items: Items, key: tuple[Any, Any], start: Any = 0) -> Any:
    """No entry of ``items`` from position ``start`` on has ``key``."""
    j = z3.Int("j")
    return z3.ForAll([j], z3.Implies(z3.And(start <= j, j < items.length), z3.Not(_has_key(item(items, j), key))))


def _bundled_items() -> Items:
    """The bundled source's entries: none when it is missing (the law reads ``b or ()``)."""
    return Items(_B.value.array, z3.If(_B.none, 0, _B.value.length))


def _unique_at(items: Items, q: Any, i: Any) -> Any:
    """The module's precondition (within one source each key once) at the positions q and i."""
    return z3.Implies(_has_key(item(items, q), _key(item(items, i))), q == i)


def _one_source(x: Any) -> Any:
    """The law at one catalog entry x: in the bundled source alone (the entry at qi has its key, no
    compiled entry has it), x is that entry; in the compiled source alone, x is the entry at qj."""
    bundled, key = _bundled_items(), _key(x)
    alone_b = z3.And(_nowhere(_C, key), 0 <= _QI, _QI < bundled.length, _has_key(item(bundled, _QI), key))
    alone_c = z3.And(_nowhere(bundled, key), 0 <= _QJ, _QJ < _C.length, _has_key(item(_C, _QJ), key))
    return z3.And(z3.Implies(alone_b, _entry_same(x, item(bundled, _QI))), z3.Implies(alone_c, _entry_same(x, item(_C, _QJ))))


def _union_holds(union: Generated, state: dict[str, Any]) -> Any:
    """At a state of one of union's loops: the items of its list stay (item p, when p is below its
    length), and item p of the catalog, when p is not below it, is one the law allows."""
    got, out = union.loop(**state), state["out"]
    stays = z3.Implies(z3.And(0 <= _P, _P < out.length), z3.And(got.length >= out.length, _entry_same(item(got, _P), item(out, _P))))
    return z3.And(stays, _union_later(union, state))


def _union_later(union: Generated, state: dict[str, Any]) -> Any:
    """Item p of the catalog, when p is not below the length of the state's list, is one the law allows."""
    got, out = union.loop(**state), state["out"]
    return z3.Implies(z3.And(0 <= state["_index"], out.length <= _P, _P < got.length), _one_source(item(got, _P)))


def _again(union: Generated, state: dict[str, Any]) -> list[dict[str, Any]]:
    """The states union's loop (``_at`` of ``state``) runs again with, from ``state``."""
    at = state.get("_at", 0)
    return [{**after, "_at": at} for _path, after in union.successors(**state)]


def _find_holds(state: dict[str, Any]) -> Any:
    return z3.Implies(z3.And(0 <= state["_index"], _nowhere(state["entries"], state["key"], state["_index"])), FIND.loop(**state).none)


@cache
def _find_lemma() -> Evidence:
    """find(entries, key) is None when no entry has the key: induction on find's loop."""
    state = {"entries": _C, "key": _KEY, "_index": _AT}
    test = _AT < _C.length
    base = prove(lambda: z3.Implies(z3.Not(test), _find_holds(state)), label="find's loop at the end of the entries: None", assumptions=_FACTS, ties=_SOURCES_TIES)
    step = prove(lambda: z3.Implies(z3.And(test, *(_find_holds(after) for _path, after in FIND.successors(**state))), _find_holds(state)),
                 label="find's loop: no entry from i on has the key, so entry i has not and none from i + 1 on has", assumptions=_FACTS, ties=_SOURCES_TIES)
    entry = prove(lambda: z3.Implies(_find_holds(FIND.entered(_C, _KEY)), z3.Implies(_nowhere(_C, _KEY), FIND(_C, _KEY).none)),
                  label="find enters its loop at 0: no entry with the key gives None", assumptions=_FACTS, ties=_SOURCES_TIES)
    return all_of(induction(base, step, of=FIND.of, label="find's walk over the entries"), entry)


@cache
def _merge_keeps_key() -> Evidence:
    x, y = fresh(m.Entry, "x"), fresh(m.Entry, "y")
    return prove(lambda: z3.And(MERGE(x, y).provider == x.provider, MERGE(x, y).id == x.id),
                 label="merge(bundled, compiled) has the bundled entry's key", assumptions=[*facts(x), *facts(y)], ties=_SOURCES_TIES)


def _calls_at(state: dict[str, Any], find: Callable[..., Any], merge: Callable[..., Any]) -> list[Any]:
    """The two facts above at the calls the first loop's body makes on the bundled entry it reads."""
    bundled = _B.value
    x = item(bundled, state["_index"])
    twin = applied(find, _C, type(_KEY)(x.provider, x.id))
    merged = applied(merge, x, twin.value)
    return [z3.Implies(_nowhere(_C, _key(x)), twin.none), merged.provider == x.provider, merged.id == x.id]


@cache
def one_source_proof() -> Evidence:
    """Rule 3 for every pair of sources whose keys are unique within each (the module's
    precondition), every catalog position p and source positions qi, qj: find's and merge's facts,
    and the induction on union's loops over its encoding with both left opaque."""
    return all_of(_find_lemma(), _merge_keeps_key(), union_induction(UNION_OPAQUE, m.find, m.merge))


def union_induction(union: Generated, find: Callable[..., Any], merge: Callable[..., Any]) -> Evidence:
    """The induction on the second loop of ``union`` (the encoding of a function written as
    bend.catalog_union.union is, ``find`` and ``merge`` its opaque callees), then on the first
    (whose end enters the second), then union's entry; find's and merge's facts are premises at
    their calls."""
    union.entered(_B, _C)  # the whole function translated first: its list and both loops
    present = [*_FACTS, z3.Not(_B.none)]
    second = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": _AT, "_index@0": _AT0, "_at": 1}
    first = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": _AT}
    exit_first = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": z3.IntVal(0), "_index@0": _AT, "_at": 1}
    of, ties = union.of, [union.tie]
    test2, test1 = _AT < _C.length, _AT < _B.value.length
    base2 = prove(lambda: z3.Implies(z3.Not(test2), _union_holds(union, second)), label="second loop at its end: the catalog is the list", assumptions=present, ties=ties)
    step2 = prove(
        lambda: z3.Implies(z3.And(test2, _unique_at(_C, _QJ, _AT), *(_union_holds(union, after) for after in _again(union, second))), _union_holds(union, second)),
        label="second loop: the compiled entry it appends at p is the compiled source's entry of its key", assumptions=present, ties=ties)
    base1 = prove(lambda: z3.Implies(z3.And(z3.Not(test1), _union_holds(union, exit_first)), _union_holds(union, first)),
                  label="first loop at its end enters the second with its list", assumptions=present, ties=ties)
    step1 = prove(
        lambda: z3.Implies(z3.And(test1, *_calls_at(first, find, merge), _unique_at(_B.value, _QI, _AT), *(_union_holds(union, after) for after in _again(union, first))), _union_holds(union, first)),
        label="first loop: the entry it appends at p is the bundled entry, merged only with a compiled entry of its key", assumptions=present, ties=ties)

    def law_at(got: Items) -> Any:
        return z3.Implies(z3.And(0 <= _P, _P < got.length), _one_source(item(got, _P)))

    some = prove(lambda: z3.Implies(z3.Not(_B.none), law_at(union(_B, _C)) == _union_later(union, union.entered(_B, _C))),
                 label="a bundle present: the law at union's catalog is the first loop's invariant at the state union enters it with (an empty list)",
                 assumptions=present, ties=ties)
    none = prove(lambda: z3.Implies(z3.And(_B.none, _unique_at(_C, _QJ, _P)), law_at(union(_B, _C))),
                 label="a bundle missing: the catalog is the compiled source", assumptions=_FACTS, ties=ties)
    loops = all_of(induction(base2, step2, of=of, label="union's second loop"), induction(base1, step1, of=of, label="union's first loop"))
    return all_of(loops, some, none)
