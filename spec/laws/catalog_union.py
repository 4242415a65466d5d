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
fixed source positions, so no invariant quantifies over positions (see one_source_proof);
catalog_union_bundled_gives the same way, one induction per optional field name, with facts of
find, field_of and merge proved of their code (see bundled_gives_proof), under the derived
precondition that an entry has each optional field once; catalog_union_every_model_once in parts,
each an induction on union's loops at fixed positions (a loop only appends; the bundled keys at
their positions; no compiled key missing; two items' keys differ; each item's key a source's:
see rule_1_proof); catalog_union_order by an induction against the law's list of keys written as
recursive functions of z3 (the compiled keys no bundled entry has, counted and indexed), and, for
a source read reversed, rules 1 and 3 and the entry of a key in both sources (merge of its two
entries, by induction): the dict of entries by key is a function of each source's entries by
key (see order_proof). union_fast builds dicts and sets: bounded.
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


@law("catalog_union_every_model_once", "S6 catalog 1", "Every model of either source is in the catalog exactly once; neither hides the other's.", PROVED, derivation="rule 1 of the catalog union")
def catalog_union_every_model_once() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        got = _keys(out)
        return len(got) == len(set(got)) and set(got) == set(_keys(b)) | set(_keys(c))

    checked = _law(prop, "each key of either source once")  # first: a wrong union fails here in seconds, before minutes of z3
    return also(every_model_once_proof(), checked)


@law(
    "catalog_union_bundled_gives",
    "S6 catalog 2",
    "A model in both: api, baseUrl, data and optional fields from the bundle; the compiled entry fills missing optional fields only on the same api.",
    PROVED,
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

    checked = _law(prop, "models in both")  # first: a wrong union fails here in seconds, before minutes of z3
    return also(bundled_gives_proof(), checked)


@law("catalog_union_one_source_unchanged", "S6 catalog 3", "A model in one source is in the catalog unchanged.", PROVED, derivation="rule 3 of the catalog union")
def catalog_union_one_source_unchanged() -> Evidence:
    def prop(b: tuple[m.Entry, ...] | None, c: tuple[m.Entry, ...], out: tuple[m.Entry, ...]) -> bool:
        for entry in out:
            bb = [x for x in b or () if x.key == entry.key]
            cc = [x for x in c if x.key == entry.key]
            if len(bb) + len(cc) == 1 and entry != (bb + cc)[0]:
                return False
        return True

    checked = _law(prop, "models in one source")  # first: a wrong union fails here in seconds, before minutes of z3
    return also(one_source_proof(), checked)


@law(
    "catalog_union_order",
    "S6 catalog 4",
    "Bundled models first, then the compiled-only ones in compiled order; reordering one source moves no field between models.",
    PROVED,
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

    # Either source read reversed: by rule 1 (each key of either source once, and no other) and the
    # entry of each key (rule 3 for a key in one source, ``_one_entry`` for a key in both: merge of
    # its two entries), the dict of entries by key is a function of each source's entries by key,
    # which reversing a source (keys still once each) leaves as they are.
    proof = all_of(catalog_order_proof(), every_model_once_proof(), one_source_proof())
    return also(proof, _law(prop, "order, and the same entries when either source is read reversed"))


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


Law = Callable[[Any], Any]  # the law at one catalog entry (its terms): a z3 formula


def _union_holds(union: Generated, state: dict[str, Any], law: Law = _one_source) -> Any:
    """At a state of one of union's loops: the items of its list stay (item p, when p is below its
    length), and item p of the catalog, when p is not below it, is one the law allows."""
    got, out = union.loop(**state), state["out"]
    stays = z3.Implies(z3.And(0 <= _P, _P < out.length), z3.And(got.length >= out.length, _entry_same(item(got, _P), item(out, _P))))
    return z3.And(stays, _union_later(union, state, law))


def _union_later(union: Generated, state: dict[str, Any], law: Law = _one_source) -> Any:
    """Item p of the catalog, when p is not below the length of the state's list, is one the law allows."""
    got, out = union.loop(**state), state["out"]
    return z3.Implies(z3.And(0 <= state["_index"], out.length <= _P, _P < got.length), law(item(got, _P)))


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


Calls = Callable[[dict[str, Any], Callable[..., Any], Callable[..., Any]], list[Any]]


def _frame(union: Generated) -> tuple[list[Any], dict[str, Any], dict[str, Any], dict[str, Any], Any, Any]:
    """The inductions' frame on union's loops (the whole function translated first: its list and
    both loops): the premises with a bundle present, the first loop's state, the second's, the
    first's exit into the second (its index 0, the first's kept), and each loop's test."""
    union.entered(_B, _C)
    present = [*_FACTS, z3.Not(_B.none)]
    first = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": _AT}
    second = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": _AT, "_index@0": _AT0, "_at": 1}
    exit_first = {"bundled": _B, "compiled": _C, "out": _OUT, "_index": z3.IntVal(0), "_index@0": _AT, "_at": 1}
    return present, first, second, exit_first, _AT < _B.value.length, _AT < _C.length


def union_induction(union: Generated, find: Callable[..., Any], merge: Callable[..., Any], law: Law = _one_source,
                    calls: Calls | None = None, second_calls: Calls | None = None, what: str = "rule 3", missing: bool = True) -> Evidence:
    """The induction on the second loop of ``union`` (the encoding of a function written as
    bend.catalog_union.union is, ``find`` and ``merge`` its opaque callees), then on the first
    (whose end enters the second), then union's entry; find's and merge's facts are premises at
    their calls (``calls`` at the first loop's, ``second_calls`` at the second's). ``law`` is the
    law at one catalog entry (rule 3 by default: ``_one_source``). ``missing`` False: a law that
    speaks of no catalog a missing bundle gives (a model in both sources) is not claimed there."""
    at_first = calls if calls is not None else _calls_at
    present, first, second, exit_first, test1, test2 = _frame(union)
    of, ties = union.of, [union.tie]
    at_second = second_calls(second, find, merge) if second_calls is not None else []
    base2 = prove(lambda: z3.Implies(z3.Not(test2), _union_holds(union, second, law)), label=f"{what}: second loop at its end: the catalog is the list", assumptions=present, ties=ties)
    step2 = prove(
        lambda: z3.Implies(z3.And(test2, _unique_at(_C, _QJ, _AT), *at_second, *(_union_holds(union, after, law) for after in _again(union, second))), _union_holds(union, second, law)),
        label=f"{what}: second loop: the compiled entry it appends at p is the compiled source's entry of its key", assumptions=present, ties=ties)
    base1 = prove(lambda: z3.Implies(z3.And(z3.Not(test1), _union_holds(union, exit_first, law)), _union_holds(union, first, law)),
                  label=f"{what}: first loop at its end enters the second with its list", assumptions=present, ties=ties)
    step1 = prove(
        lambda: z3.Implies(z3.And(test1, *at_first(first, find, merge), _unique_at(_B.value, _QI, _AT), *(_union_holds(union, after, law) for after in _again(union, first))), _union_holds(union, first, law)),
        label=f"{what}: first loop: the entry it appends at p is the bundled entry, merged only with a compiled entry of its key", assumptions=present, ties=ties)

    def law_at(got: Items) -> Any:
        return z3.Implies(z3.And(0 <= _P, _P < got.length), law(item(got, _P)))

    some = prove(lambda: z3.Implies(z3.Not(_B.none), law_at(union(_B, _C)) == _union_later(union, union.entered(_B, _C), law)),
                 label=f"{what}: a bundle present: the law at union's catalog is the first loop's invariant at the state union enters it with (an empty list)",
                 assumptions=present, ties=ties)
    loops = all_of(induction(base2, step2, of=of, label=f"union's second loop ({what})"), induction(base1, step1, of=of, label=f"union's first loop ({what})"))
    if not missing:
        return all_of(loops, some)
    none = prove(lambda: z3.Implies(z3.And(_B.none, _unique_at(_C, _QJ, _P)), law_at(union(_B, _C))),
                 label=f"{what}: a bundle missing: the catalog is the compiled source", assumptions=_FACTS, ties=ties)
    return all_of(loops, some, none)


# -- catalog_union_bundled_gives: proved, by the same induction with the law of rule 2 -------------
#
# The law at a catalog entry x, for a bundled position qi and a compiled position qj whose entries
# both have x's key, and one optional field name of OPTIONAL at a time: x has the bundled entry's
# api, base URL and data; x has the field exactly when the bundled entry has it, or the compiled
# one has it and their apis are the same; and every field of that name in x (position u) holds the
# bundled entry's value (its field of that name at position r), else the compiled one's (at s). The
# judge reads the fields as the law's dict does, by a recursive function of z3 written here (a
# field of the name at some position from i on: ``_PRESENT``) and by positions, fixed like p, qi
# and qj, so no invariant quantifies over positions. Derived precondition beside the module's
# (within one source each key once): within one entry each optional field once (the entry's
# ``optional`` is "the present optional fields, in OPTIONAL order"; the law's dict keeps the last
# of equal names, field_of the first), stated at the pairs of positions a step reads.
#
# Three facts of union's callees, each proved of its own code, are premises at the calls union
# makes (their bodies are left opaque in union's encoding): find finds the entry of a key some
# entry has (induction on find's loop); field_of(entry, name) answers whether a field of the name
# is there, and the value at its position (induction on field_of's loop); merge, with field_of left
# opaque, keeps the bundled entry's api, base URL and data, and its fields are field_of's answers
# on the bundled entry, else on the compiled one, when the apis are the same, and the bundled
# entry's own fields otherwise (its encoding generated from its code, over OPTIONAL unrolled).

FIELD_OF = generated(m.field_of)
MERGE_FIELDS = generated(m.merge, opaque=(m.field_of,))
_R, _S, _U = z3.Ints("r s u")
_NAME = z3.String("name")
_X, _Y = fresh(m.Entry, "x"), fresh(m.Entry, "y")
_NAMES = z3.ArraySort(z3.IntSort(), z3.StringSort())
# the judge: some field from position i on of the given name (``name in dict(optional)``, read
# from i): i < n and (the name at i, or some field from i + 1 on); false from n on
_PRESENT = z3.RecFunction("catalog_union.judge:present", _NAMES, z3.IntSort(), z3.StringSort(), z3.IntSort(), z3.BoolSort())
_js, _jn, _jk, _ji = z3.Const("names", _NAMES), z3.Int("n"), z3.String("name"), z3.Int("i")
z3.RecAddDefinition(_PRESENT, [_js, _jn, _jk, _ji], z3.If(_ji < _jn, z3.Or(_js[_ji] == _jk, _PRESENT(_js, _jn, _jk, _ji + 1)), z3.BoolVal(False)))


def _has_field(optional: Items, name: Any, at: Any = 0) -> Any:
    """Some optional field from position ``at`` on is named ``name`` (the judge, ``_PRESENT``)."""
    return _PRESENT(optional.array.item0, optional.length, name, at)


def _named(optional: Items, at: Any, name: Any) -> Any:
    """The optional field at position ``at`` is named ``name``."""
    return z3.And(0 <= at, at < optional.length, optional.array.item0[at] == name)


def _value(optional: Items, at: Any) -> Any:
    return optional.array.item1[at]


def _names_once_at(optional: Items, a: Any, b: Any) -> Any:
    """The derived precondition (within one entry each optional field once) at positions a and b."""
    return z3.Implies(optional.array.item0[a] == optional.array.item0[b], a == b)


def _field_of_holds(state: dict[str, Any], field_of: Generated = FIELD_OF) -> Any:
    got, optional, at, name = field_of.loop(**state), state["entry"].optional, state["_index"], state["name"]
    found = z3.Implies(z3.And(at <= _R, _named(optional, _R, name)), z3.And(got.item0, _value(optional, _R) == got.item1))
    return z3.Implies(0 <= at, z3.And(got.item0 == _has_field(optional, name, at), found))


def _field_of_fact(entry: Any, name: Any, r: Any) -> Any:
    """field_of(entry, name) answers whether a field of the name is there, and, when one is at
    position r, its value (each name once in the entry: precondition)."""
    got = applied(m.field_of, entry, name)
    return z3.And(got.item0 == _has_field(entry.optional, name), z3.Implies(_named(entry.optional, r, name), z3.And(got.item0, got.item1 == _value(entry.optional, r))))


@cache
def _field_of_lemma() -> Evidence:
    return field_of_lemma(FIELD_OF)


def field_of_lemma(field_of: Generated) -> Evidence:
    """field_of's fact, by induction on field_of's loop (``field_of``: its encoding generated from
    the code of bend.catalog_union.field_of)."""
    state = {"entry": _X, "name": _NAME, "_index": _AT}
    test, facts_, ties = _AT < _X.optional.length, facts(_X), [field_of.tie]
    base = prove(lambda: z3.Implies(z3.Not(test), _field_of_holds(state, field_of)), label="field_of's loop at the end of the fields: not there",
                 assumptions=facts_, ties=ties)
    step = prove(lambda: z3.Implies(z3.And(test, _names_once_at(_X.optional, _R, _AT), *(_field_of_holds(after, field_of) for _path, after in field_of.successors(**state))), _field_of_holds(state, field_of)),
                 label="field_of's loop: the field at i of the name is the one (each name once), else the answer from i + 1", assumptions=facts_, ties=ties)
    got = field_of(_X, _NAME)
    entry = prove(lambda: z3.Implies(_field_of_holds(field_of.entered(_X, _NAME), field_of), z3.And(
        got.item0 == _has_field(_X.optional, _NAME), z3.Implies(_named(_X.optional, _R, _NAME), z3.And(got.item0, got.item1 == _value(_X.optional, _R))))),
        label="field_of enters its loop at 0", assumptions=facts_, ties=ties)
    return all_of(induction(base, step, of=field_of.of, label="field_of's walk over the optional fields"), entry)


def _merge_kept(merged: Any, x: Any) -> Any:
    """merge keeps the bundled entry's api, base URL and data."""
    return z3.And(merged.api == x.api, merged.base_url == x.base_url, same_items(merged.data, x.data))


def _merge_filled(merged: Any, x: Any, y: Any, name: str) -> Any:
    """On the same api, for one name of OPTIONAL: the field is there when field_of finds it in x or
    in y, and each field of the name (position u) holds field_of's value from x, else from y."""
    text = z3.StringVal(name)
    fx, fy = applied(m.field_of, x, text), applied(m.field_of, y, text)
    return z3.And(_has_field(merged.optional, text) == z3.Or(fx.item0, fy.item0),
                  z3.Implies(_named(merged.optional, _U, text), _value(merged.optional, _U) == z3.If(fx.item0, fx.item1, fy.item1)))


def _merge_fields(merged: Any, x: Any, y: Any, name: str) -> Any:
    """merge's fact at a call merge(x, y), for one name of OPTIONAL: on the same api, the bundled
    entry's api, base URL and data and the fields ``_merge_filled`` says; on different apis, the
    bundled entry itself."""
    return z3.If(x.api == y.api, z3.And(_merge_kept(merged, x), _merge_filled(merged, x, y, name)), _entry_same(merged, x))


@cache
def _merge_lemma() -> Evidence:
    return merge_lemma(MERGE_FIELDS)


def merge_lemma(merge: Generated) -> Evidence:
    """merge's fact for each name of OPTIONAL, over its encoding (``merge``: generated from the code
    of bend.catalog_union.merge, field_of left opaque): on different apis; on the same api, what it
    keeps, then each name's fields."""
    facts_ = [*facts(_X), *facts(_Y)]
    same, ties = _X.api == _Y.api, [merge.tie]
    apart = prove(lambda: z3.Implies(z3.Not(same), _entry_same(merge(_X, _Y), _X)), label="merge(x, y) on different apis: x", assumptions=facts_, ties=ties)
    kept = prove(lambda: z3.Implies(same, _merge_kept(merge(_X, _Y), _X)), label="merge(x, y) on the same api: x's api, base URL and data", assumptions=facts_, ties=ties)

    def filling(name: str, part: int) -> Callable[[], Any]:
        return lambda: z3.Implies(same, _merge_filled(merge(_X, _Y), _X, _Y, name).children()[part])

    filled = [prove(filling(name, part), label=f"merge(x, y) on the same api, the field {name}: {'there when x or y has it' if part == 0 else 'the value of x, else of y'}",
                    assumptions=facts_, ties=ties)
              for name in m.OPTIONAL for part in (0, 1)]
    return all_of(apart, kept, *filled)


def _find_found_holds(state: dict[str, Any]) -> Any:
    got, entries, at = FIND.loop(**state), state["entries"], state["_index"]
    there = z3.And(0 <= at, at <= _QJ, _QJ < entries.length, _has_key(item(entries, _QJ), state["key"]))
    return z3.And(_find_holds(state), z3.Implies(there, z3.And(z3.Not(got.none), _entry_same(got.value, item(entries, _QJ)))))


@cache
def _find_found_lemma() -> Evidence:
    """find(entries, key) is the entry at q when that entry has the key (within one source each key
    once), and None when no entry has it: induction on find's loop."""
    state = {"entries": _C, "key": _KEY, "_index": _AT}
    test = _AT < _C.length
    base = prove(lambda: z3.Implies(z3.Not(test), _find_found_holds(state)), label="find's loop at the end of the entries", assumptions=_FACTS, ties=[FIND.tie])
    step = prove(lambda: z3.Implies(z3.And(test, _unique_at(_C, _QJ, _AT), *(_find_found_holds(after) for _path, after in FIND.successors(**state))), _find_found_holds(state)),
                 label="find's loop: the entry at i with the key is the one at q (each key once), else the answer from i + 1", assumptions=_FACTS, ties=[FIND.tie])
    found = FIND(_C, _KEY)
    entry = prove(lambda: z3.Implies(_find_found_holds(FIND.entered(_C, _KEY)), z3.Implies(z3.And(0 <= _QJ, _QJ < _C.length, _has_key(item(_C, _QJ), _KEY)),
                                                                                          z3.And(z3.Not(found.none), _entry_same(found.value, item(_C, _QJ))))),
                  label="find enters its loop at 0: an entry at q with the key is found", assumptions=_FACTS, ties=[FIND.tie])
    return all_of(induction(base, step, of=FIND.of, label="find's walk over the entries, to the entry of the key"), entry)


def _gives(name: str) -> Law:
    """Rule 2 at a catalog entry x, for one optional field name (see above)."""
    text = z3.StringVal(name)

    def law_at(x: Any) -> Any:
        bundled, key = _bundled_items(), _key(x)
        have, twin = item(bundled, _QI), item(_C, _QJ)
        both = z3.And(0 <= _QI, _QI < bundled.length, _has_key(have, key), 0 <= _QJ, _QJ < _C.length, _has_key(twin, key), _names_once_at(have.optional, _R, _U))
        same = have.api == twin.api
        fields = z3.And(
            _has_field(x.optional, text) == z3.Or(_has_field(have.optional, text), z3.And(same, _has_field(twin.optional, text))),
            z3.Implies(_named(x.optional, _U, text), z3.And(
                z3.Implies(_named(have.optional, _R, text), _value(x.optional, _U) == _value(have.optional, _R)),
                z3.Implies(z3.And(z3.Not(_has_field(have.optional, text)), same, _named(twin.optional, _S, text)), _value(x.optional, _U) == _value(twin.optional, _S)))))
        return z3.Implies(both, z3.And(x.api == have.api, x.base_url == have.base_url, same_items(x.data, have.data), fields))

    return law_at


def _gives_calls(name: str) -> Calls:
    def calls(state: dict[str, Any], find: Callable[..., Any], merge: Callable[..., Any]) -> list[Any]:
        """At the first loop's calls on the bundled entry x it reads: find finds the compiled entry
        at qj when it has x's key; merge keeps x's key and gives its fields (its fact for the name);
        field_of's fact on x and on the entry find gave."""
        x = item(_B.value, state["_index"])
        twin = applied(find, _C, type(_KEY)(x.provider, x.id))
        merged = applied(merge, x, twin.value)
        found = z3.Implies(z3.And(0 <= _QJ, _QJ < _C.length, _has_key(item(_C, _QJ), _key(x))), z3.And(z3.Not(twin.none), _entry_same(twin.value, item(_C, _QJ))))
        text = z3.StringVal(name)
        return [found, merged.provider == x.provider, merged.id == x.id, _merge_fields(merged, x, twin.value, name),
                _field_of_fact(x, text, _R), _field_of_fact(twin.value, text, _S)]

    return calls


def _gives_second_calls(state: dict[str, Any], find: Callable[..., Any], merge: Callable[..., Any]) -> list[Any]:
    """At the second loop's call on the compiled entry y it reads: find finds the bundled entry at
    qi when it has y's key."""
    y = item(_C, state["_index"])
    there = applied(find, _B.value, type(_KEY)(y.provider, y.id))
    return [z3.Implies(z3.And(0 <= _QI, _QI < _B.value.length, _has_key(item(_B.value, _QI), _key(y))), z3.Not(there.none))]


@cache
def bundled_gives_proof() -> Evidence:
    """Rule 2 for every pair of sources whose keys are unique within each and whose entries have
    each optional field once (the preconditions), every catalog position p, source positions qi
    and qj, field positions r, s and u, and each name of OPTIONAL: the three callee facts, and the
    induction on union's loops over its encoding with find and merge left opaque, one per name. A
    missing bundle gives no model in both sources: the law says nothing of it."""
    names = m.OPTIONAL
    return all_of(_find_found_lemma(), _merge_keeps_key(), _field_of_lemma(), _merge_lemma(),
                  *(union_induction(UNION_OPAQUE, m.find, m.merge, _gives(n), _gives_calls(n), _gives_second_calls, what=f"rule 2, the field {n}", missing=False) for n in names))


# -- catalog_union_every_model_once: proved, by inductions on union's loops ------------------------
#
# Rule 1 in five parts, each for fixed positions (no invariant quantifies over positions of the
# catalog) over union's encoding with find and merge left opaque, with find's and merge's facts at
# the calls (proved above of their own code):
# - stays: a loop only appends (item p of the catalog is item p of the list of any state that has
#   one), an induction of its own, instantiated in the other steps at the positions they append at;
# - bundled: the catalog's item qi has the key of the bundled entry qi (the first loop appends at
#   its own index);
# - compiled: a compiled entry whose key no bundled entry has is not missing from the catalog
#   (stated the other way round: a key the catalog has nowhere is not such an entry's);
# - once: two items p1 < p of the catalog have different keys (each source's keys once; the first
#   loop's items have the bundled keys in order, the second loop's items keys no later compiled
#   entry and no bundled entry has);
# - from the sources: each catalog item's key is some bundled or compiled entry's (the law at one
#   item, by ``union_induction``).
# Together they are the law: the keys of the catalog are distinct (once), each is a source's (from
# the sources), and each source's key is there: a bundled one at its position (bundled), a compiled
# one at the position of its bundled twin, or, when it has none, somewhere (compiled). The module's
# precondition (within one source each key once) is stated where a step reads it: at the pair of
# bundled positions p1 and the loop's index, and, for the compiled entry the second loop reads, as
# no later compiled entry having its key.

_P1, _W = z3.Int("p1"), z3.Int("w")
_N_B = _bundled_items().length


def _stays(union: Generated, state: dict[str, Any], p: Any) -> Any:
    """Item p of the list of a state is item p of the catalog the loop ends with, which is no shorter."""
    got, out = union.loop(**state), state["out"]
    return z3.And(got.length >= out.length, z3.Implies(z3.And(0 <= p, p < out.length), _entry_same(item(got, p), item(out, p))))


Holds = Callable[[dict[str, Any], int], Any]  # an invariant at a state of the first (0) or second (1) loop


def _loops(union: Generated, holds: Holds, at_first: Callable[[dict[str, Any], dict[str, Any]], list[Any]],
           at_second: Callable[[dict[str, Any], dict[str, Any]], list[Any]], what: str) -> Evidence:
    """The induction on union's second loop, then its first, of ``holds``; ``at_first(state, after)``
    and ``at_second`` are the premises of a step that runs the loop again with ``after`` (facts of
    the calls, of the stays lemma)."""
    present, first, second, exit_first, test1, test2 = _frame(union)
    of, ties = union.of, [union.tie]

    def step(state: dict[str, Any], k: int, test: Any, at: Callable[[dict[str, Any], dict[str, Any]], list[Any]]) -> Any:
        nexts = _again(union, state)
        return z3.Implies(z3.And(test, *(fact for after in nexts for fact in at(state, after)), *(holds(after, k) for after in nexts)), holds(state, k))

    base2 = prove(lambda: z3.Implies(z3.Not(test2), holds(second, 1)), label=f"{what}: second loop at its end", assumptions=present, ties=ties)
    step2 = prove(lambda: step(second, 1, test2, at_second), label=f"{what}: second loop's step", assumptions=present, ties=ties)
    base1 = prove(lambda: z3.Implies(z3.And(z3.Not(test1), holds(exit_first, 1)), holds(first, 0)), label=f"{what}: first loop at its end enters the second",
                  assumptions=present, ties=ties)
    step1 = prove(lambda: step(first, 0, test1, at_first), label=f"{what}: first loop's step", assumptions=present, ties=ties)
    return all_of(induction(base2, step2, of=of, label=f"union's second loop ({what})"), induction(base1, step1, of=of, label=f"union's first loop ({what})"))


def _stays_holds(union: Generated) -> Holds:
    return lambda state, _k: _stays(union, state, _P)


def _appended_stays(union: Generated) -> Callable[[dict[str, Any], dict[str, Any]], list[Any]]:
    """The stays lemma at a step's next state, at the position the step appends at and at p1."""
    return lambda state, after: [_stays(union, after, state["out"].length), _stays(union, after, _P1)]


def _find_calls(state: dict[str, Any], find: Callable[..., Any]) -> list[Any]:
    """find's facts at the second loop's call on the compiled entry y it reads: None when no
    bundled entry has y's key, not None when the bundled entry at p1 has it."""
    y = item(_C, state["_index"])
    there = applied(find, _B.value, type(_KEY)(y.provider, y.id))
    return [z3.Implies(_nowhere(_B.value, _key(y)), there.none),
            z3.Implies(z3.And(0 <= _P1, _P1 < _B.value.length, _has_key(item(_B.value, _P1), _key(y))), z3.Not(there.none))]


def _merge_key_calls(state: dict[str, Any], merge: Callable[..., Any], find: Callable[..., Any]) -> list[Any]:
    x = item(_B.value, state["_index"])
    merged = applied(merge, x, applied(find, _C, type(_KEY)(x.provider, x.id)).value)
    return [merged.provider == x.provider, merged.id == x.id]


def _key_at(items: Items, at: Any) -> tuple[Any, Any]:
    return _key(item(items, at))


def once_holds(union: Generated) -> Holds:
    """Two catalog items p1 < p, p at or after the state's list's end, have different keys; what the
    list holds at p1 so far (the bundled key p1; in the second loop, past the bundled ones, a key no
    compiled entry from the loop's index on has)."""
    def holds(state: dict[str, Any], k: int) -> Any:
        got, out, at = union.loop(**state), state["out"], state["_index"]
        bundled = _B.value
        known = z3.Implies(z3.And(0 <= _P1, _P1 < bundled.length, _P1 < out.length), _has_key(item(out, _P1), _key_at(bundled, _P1)))
        if k == 0:
            given = z3.And(out.length == at, at <= bundled.length, known)
        else:
            given = z3.And(bundled.length <= out.length, known,
                           z3.Implies(z3.And(bundled.length <= _P1, _P1 < out.length), _nowhere(_C, _key_at(out, _P1), at)))
        apart = z3.Implies(z3.And(0 <= _P1, _P1 < _P, out.length <= _P, _P < got.length), z3.Not(_has_key(item(got, _P1), _key_at(got, _P))))
        return z3.Implies(z3.And(0 <= at, given), z3.And(got.length >= out.length, apart))

    return holds


def bundled_holds(union: Generated) -> Holds:
    """The catalog's item qi, when the first loop has not passed qi, has the bundled key qi."""
    def holds(state: dict[str, Any], k: int) -> Any:
        got, out, at = union.loop(**state), state["out"], state["_index"]
        longer = got.length >= out.length
        if k == 1:
            return z3.Implies(0 <= at, longer)
        bundled = _B.value
        there = z3.Implies(z3.And(at <= _QI, _QI < bundled.length), z3.And(_QI < got.length, _has_key(item(got, _QI), _key_at(bundled, _QI))))
        return z3.Implies(z3.And(0 <= at, out.length == at, at <= bundled.length), z3.And(longer, there))

    return holds


def _compiled_missing(got: Items, start: Any) -> Any:
    """The compiled entry qj (from ``start`` on) has a key no bundled entry and no catalog item has."""
    key = _key_at(_C, _QJ)
    return z3.And(start <= _QJ, _QJ < _C.length, _nowhere(_bundled_items(), key), _nowhere(got, key))


def compiled_holds(union: Generated) -> Holds:
    """No compiled entry from the second loop's index on (every one, in the first loop) whose key no
    bundled entry has is missing from the catalog."""
    def holds(state: dict[str, Any], k: int) -> Any:
        got, out, at = union.loop(**state), state["out"], state["_index"]
        return z3.Implies(0 <= at, z3.And(got.length >= out.length, z3.Not(_compiled_missing(got, at if k == 1 else z3.IntVal(0)))))

    return holds


def _rule_1_part(union: Generated, holds: Holds, at_first: Callable[[dict[str, Any], dict[str, Any]], list[Any]],
                 at_second: Callable[[dict[str, Any], dict[str, Any]], list[Any]], law_at: Callable[[Items], Any], what: str,
                 missing: Callable[[], Any] | None) -> Evidence:
    """One part of rule 1: the induction of ``holds`` on union's loops, union's entry into the first
    loop (the law ``law_at`` its catalog), and, with ``missing``, the law when the bundle is None
    (``missing()`` its premises)."""
    loops = _loops(union, holds, at_first, at_second, what)
    present = [*_FACTS, z3.Not(_B.none)]
    some = prove(lambda: z3.Implies(z3.And(z3.Not(_B.none), holds(union.entered(_B, _C), 0)), law_at(union(_B, _C))),
                 label=f"{what}: a bundle present: union enters its first loop with an empty list at 0", assumptions=present, ties=[union.tie])
    if missing is None:
        return all_of(loops, some)
    none = prove(lambda: z3.Implies(z3.And(_B.none, missing()), law_at(union(_B, _C))), label=f"{what}: a bundle missing: the catalog is the compiled source",
                 assumptions=_FACTS, ties=[union.tie])
    return all_of(loops, some, none)


def rule_1_proof(union: Generated, find: Callable[..., Any], merge: Callable[..., Any]) -> Evidence:
    """The four inductions of rule 1 over ``union`` (bend.catalog_union.union's encoding, ``find``
    and ``merge`` its opaque callees), and the law at one item by ``union_induction``."""
    appended = _appended_stays(union)

    def first(state: dict[str, Any], after: dict[str, Any]) -> list[Any]:
        return [*appended(state, after), *_merge_key_calls(state, merge, find), _unique_at(_B.value, _P1, state["_index"])]

    def second(state: dict[str, Any], after: dict[str, Any]) -> list[Any]:
        y = item(_C, state["_index"])
        return [*appended(state, after), *_find_calls(state, find), _nowhere(_C, _key(y), state["_index"] + 1)]

    def once(got: Items) -> Any:
        return z3.Implies(z3.And(0 <= _P1, _P1 < _P, _P < got.length), z3.Not(_has_key(item(got, _P1), _key_at(got, _P))))

    def bundled(got: Items) -> Any:
        b = _B.value
        return z3.Implies(z3.And(0 <= _QI, _QI < b.length), z3.And(_QI < got.length, _has_key(item(got, _QI), _key_at(b, _QI))))

    def sources(x: Any) -> Any:
        return z3.Not(z3.And(_nowhere(_bundled_items(), _key(x)), _nowhere(_C, _key(x))))

    stays = _loops(union, _stays_holds(union), lambda s, a: [], lambda s, a: [], "rule 1, a loop only appends")
    parts = (
        _rule_1_part(union, once_holds(union), first, second, once, "rule 1, each key once", lambda: _unique_at(_C, _P1, _P)),
        _rule_1_part(union, bundled_holds(union), first, second, bundled, "rule 1, the bundled keys", None),
        _rule_1_part(union, compiled_holds(union), first, second, lambda got: z3.Not(_compiled_missing(got, z3.IntVal(0))), "rule 1, the compiled keys", lambda: z3.BoolVal(True)),
    )
    return all_of(stays, *parts, union_induction(union, find, merge, sources, what="rule 1, each key from a source"))


@cache
def every_model_once_proof() -> Evidence:
    """Rule 1 for every pair of sources whose keys are unique within each (the module's
    precondition), every catalog position p1 < p and source positions qi, qj: find's and merge's
    facts (proved of their code), and the inductions on union's loops with both left opaque."""
    return all_of(_find_lemma(), _find_found_lemma(), _merge_keeps_key(), rule_1_proof(UNION_OPAQUE, m.find, m.merge))


# -- catalog_union_order: proved, by an induction on union's loops against the list the law builds --
#
# The law's list of keys (the bundled keys, then the compiled keys no bundled entry has, in compiled
# order) as the judge's recursive functions of z3 (``_IN_BUNDLED``: some bundled entry from j on has
# the key; ``_NEW_COUNT``: how many compiled entries from i on have a key no bundled entry has;
# ``_NEW_AT``: the index of the t-th of them from i on): the catalog is as long as the bundled
# source and the new compiled keys together, its item p < len(bundled) has the bundled key p (the
# part "bundled" of rule 1), and its item p past them the key of the compiled entry
# ``_NEW_AT(0, p - len(bundled))``. find answers None exactly when no bundled entry has the key
# (induction on find's loop). Reading either source reversed: rules 1-3 and ``_one_entry`` (the
# catalog's entry of a key in both sources is merge of the two, by induction) say the catalog's
# entry of each key is a function of the source entries of that key alone, and its keys are the
# sources' keys, each once: a source read reversed has the same entries (keys still once each),
# so the same dict of entries by key.

_KEYS = z3.ArraySort(z3.IntSort(), z3.StringSort())
_SOURCE = [z3.Const(f"judge.{name}", _KEYS) for name in ("bp", "bi", "cp", "ci")]
_NB, _NC, _JK1, _JK2, _JJ, _JT = z3.Int("judge.nb"), z3.Int("judge.nc"), z3.String("judge.k1"), z3.String("judge.k2"), z3.Int("judge.j"), z3.Int("judge.t")
_IN_BUNDLED = z3.RecFunction("catalog_union.judge:in_bundled", _KEYS, _KEYS, z3.IntSort(), z3.StringSort(), z3.StringSort(), z3.IntSort(), z3.BoolSort())
z3.RecAddDefinition(_IN_BUNDLED, [_SOURCE[0], _SOURCE[1], _NB, _JK1, _JK2, _JJ], z3.If(
    _JJ < _NB, z3.Or(z3.And(_SOURCE[0][_JJ] == _JK1, _SOURCE[1][_JJ] == _JK2), _IN_BUNDLED(_SOURCE[0], _SOURCE[1], _NB, _JK1, _JK2, _JJ + 1)), z3.BoolVal(False)))
_JUDGE_ARGS = [*_SOURCE, _NB, _NC]


def _new_at_j() -> Any:
    """The compiled entry j's key is in no bundled entry (the judge)."""
    return z3.Not(_IN_BUNDLED(_SOURCE[0], _SOURCE[1], _NB, _SOURCE[2][_JJ], _SOURCE[3][_JJ], z3.IntVal(0)))


_NEW_COUNT = z3.RecFunction("catalog_union.judge:new_count", *(a.sort() for a in _JUDGE_ARGS), z3.IntSort(), z3.IntSort())
z3.RecAddDefinition(_NEW_COUNT, [*_JUDGE_ARGS, _JJ], z3.If(_JJ < _NC, z3.If(_new_at_j(), 1, 0) + _NEW_COUNT(*_JUDGE_ARGS, _JJ + 1), z3.IntVal(0)))
_NEW_AT = z3.RecFunction("catalog_union.judge:new_at", *(a.sort() for a in _JUDGE_ARGS), z3.IntSort(), z3.IntSort(), z3.IntSort())
z3.RecAddDefinition(_NEW_AT, [*_JUDGE_ARGS, _JJ, _JT], z3.If(_JJ < _NC, z3.If(
    _new_at_j(), z3.If(_JT == 0, _JJ, _NEW_AT(*_JUDGE_ARGS, _JJ + 1, _JT - 1)), _NEW_AT(*_JUDGE_ARGS, _JJ + 1, _JT)), z3.IntVal(-1)))


def _sources_of(bundled: Items, compiled: Items) -> list[Any]:
    return [bundled.array.provider, bundled.array.id, compiled.array.provider, compiled.array.id, bundled.length, compiled.length]


def _in_bundled(bundled: Items, key: tuple[Any, Any], at: Any = 0) -> Any:
    return _IN_BUNDLED(bundled.array.provider, bundled.array.id, bundled.length, key[0], key[1], at)


def _find_in_holds(state: dict[str, Any], find: Generated = FIND) -> Any:
    got, at = find.loop(**state), state["_index"]
    return z3.Implies(0 <= at, got.none == z3.Not(_in_bundled(state["entries"], state["key"], at)))


@cache
def _find_in_lemma() -> Evidence:
    """find(entries, key) is None exactly when no entry has the key (the judge's ``_IN_BUNDLED``):
    induction on find's loop."""
    state = {"entries": _C, "key": _KEY, "_index": _AT}
    test = _AT < _C.length
    base = prove(lambda: z3.Implies(z3.Not(test), _find_in_holds(state)), label="find's loop at the end of the entries: None, and no entry from there",
                 assumptions=_FACTS, ties=[FIND.tie])
    step = prove(lambda: z3.Implies(z3.And(test, *(_find_in_holds(after) for _path, after in FIND.successors(**state))), _find_in_holds(state)),
                 label="find's loop: the entry at i has the key, else the answer from i + 1", assumptions=_FACTS, ties=[FIND.tie])
    # find(entries, key) is its loop entered at 0 (the same term: the state at 0 is the claim itself)
    return induction(base, step, of=FIND.of, label="find's walk over the entries, against the judge's")


def order_holds(union: Generated) -> Holds:
    """The catalog from a state: as long as the state's list, the bundled entries the first loop
    has not read and the new compiled keys from the second loop's index (from 0 in the first);
    its item p past the list and past the bundled entries has the key of the compiled entry
    ``_NEW_AT`` of it."""
    def holds(state: dict[str, Any], k: int) -> Any:
        got, out, at = union.loop(**state), state["out"], state["_index"]
        bundled, judge = _B.value, _sources_of(_B.value, _C)
        start = at if k == 1 else z3.IntVal(0)
        rest = z3.IntVal(0) if k == 1 else bundled.length - at
        first_new = out.length + rest  # where the new compiled keys from ``start`` begin
        length = got.length == first_new + _NEW_COUNT(*judge, start)
        keyed = z3.Implies(z3.And(first_new <= _P, _P < got.length), z3.And(
            _key_at(got, _P)[0] == _C.array.provider[_NEW_AT(*judge, start, _P - first_new)],
            _key_at(got, _P)[1] == _C.array.id[_NEW_AT(*judge, start, _P - first_new)]))
        given = z3.And(0 <= at, at <= bundled.length) if k == 0 else 0 <= at
        return z3.Implies(given, z3.And(length, keyed))

    return holds


def _one_entry(x: Any) -> Any:
    """The catalog's entry x of a key the bundled entry qi and the compiled entry qj both have is
    merge of the two (merge left opaque: whatever it computes)."""
    bundled, key = _bundled_items(), _key(x)
    have, twin = item(bundled, _QI), item(_C, _QJ)
    both = z3.And(0 <= _QI, _QI < bundled.length, _has_key(have, key), 0 <= _QJ, _QJ < _C.length, _has_key(twin, key))
    return z3.Implies(both, _entry_same(x, applied(m.merge, have, twin)))


def _one_entry_calls(state: dict[str, Any], find: Callable[..., Any], merge: Callable[..., Any]) -> list[Any]:
    """At the first loop's calls on the bundled entry x: find finds the compiled entry at qj when
    it has x's key; merge keeps x's key."""
    x = item(_B.value, state["_index"])
    twin = applied(find, _C, type(_KEY)(x.provider, x.id))
    merged = applied(merge, x, twin.value)
    found = z3.Implies(z3.And(0 <= _QJ, _QJ < _C.length, _has_key(item(_C, _QJ), _key(x))), z3.And(z3.Not(twin.none), _entry_same(twin.value, item(_C, _QJ))))
    return [found, merged.provider == x.provider, merged.id == x.id]


def order_proof(union: Generated, find: Callable[..., Any], merge: Callable[..., Any]) -> Evidence:
    """Rule 4 over ``union`` (bend.catalog_union.union's encoding, ``find`` and ``merge`` its
    opaque callees): the induction of ``order_holds``, union's entry, the catalog of a missing
    bundle, and the catalog's entry of a key in both sources (``_one_entry``, by induction)."""
    appended = _appended_stays(union)

    def first(state: dict[str, Any], after: dict[str, Any]) -> list[Any]:
        return appended(state, after)

    def second(state: dict[str, Any], after: dict[str, Any]) -> list[Any]:
        y = item(_C, state["_index"])
        there = applied(find, _B.value, type(_KEY)(y.provider, y.id))
        return [*appended(state, after), there.none == z3.Not(_in_bundled(_B.value, _key(y)))]

    def in_order(got: Items) -> Any:
        b, judge = _B.value, _sources_of(_B.value, _C)
        new = _NEW_AT(*judge, z3.IntVal(0), _P - b.length)
        return z3.And(got.length == b.length + _NEW_COUNT(*judge, z3.IntVal(0)),
                      z3.Implies(z3.And(b.length <= _P, _P < got.length), z3.And(_key_at(got, _P)[0] == _C.array.provider[new], _key_at(got, _P)[1] == _C.array.id[new])))

    stays = _loops(union, _stays_holds(union), lambda s, a: [], lambda s, a: [], "rule 4, a loop only appends")
    order = _rule_1_part(union, order_holds(union), first, second, in_order, "rule 4, the keys in order", None)
    missing = prove(lambda: z3.Implies(_B.none, z3.And(union(_B, _C).length == _C.length, z3.Implies(z3.And(0 <= _P, _P < _C.length),
                                                                                                      _has_key(item(union(_B, _C), _P), _key_at(_C, _P))))),
                    label="rule 4, a bundle missing: the catalog's keys are the compiled keys in order", assumptions=_FACTS, ties=[union.tie])
    one = union_induction(union, find, merge, _one_entry, _one_entry_calls, _gives_second_calls, what="rule 4, the entry of a key in both sources", missing=False)
    return all_of(stays, order, missing, one)


@cache
def catalog_order_proof() -> Evidence:
    """Rule 4 for every pair of sources whose keys are unique within each (the module's
    precondition): find's facts (proved of its code), the order's inductions on union's loops with
    find and merge left opaque, and rules 1-3 (the dict of entries by key read reversed)."""
    return all_of(_find_in_lemma(), _find_found_lemma(), _merge_keeps_key(), order_proof(UNION_OPAQUE, m.find, m.merge))
