"""spec.z3gen on the config model's objects: a JSON value carried (``bend.cvar.Value``), ``Obj``
built in bend.config, a filtering generator and ``sorted()`` encoded by the facts that define
them (``side_facts``). The encodings agree with the functions on concrete objects, leave sorted's
order open, refuse the builtins in a loop, and a changed function or a missing fact makes the
claims of the mcpServers laws fail."""

from __future__ import annotations

import linecache
import textwrap
from collections.abc import Callable
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

import bend.config as m
from bend.cvar import Obj
from spec import z3gen
from spec.evidence import LawFailed, check
from spec.laws import config as laws
from spec.registry import PROVED
from spec.z3gen import OBJECT, Unsupported, _Translator, concrete, facts, fresh, generated, side_facts

PUT, REMOVE = generated(m.put), generated(m.remove)


def _has(o: Any, name: Any, entry: Any) -> Any:
    return laws._has(o, name, entry)


def _holds(o: Any, name: Any, entry: Any) -> Any:
    return laws._holds(o, name, entry)


def _entails(premises: list[Any], claim: Any) -> bool:
    """z3 finds ``claim`` follows from ``premises`` (its negation unsatisfiable with them)."""
    verdict, _ = check([*premises, z3.Not(claim)], 30_000)
    assert verdict != z3.unknown
    return bool(verdict == z3.unsat)


def _possible(premises: list[Any]) -> bool:
    verdict, _ = check(premises, 30_000)
    assert verdict != z3.unknown
    return bool(verdict == z3.sat)


def _from_source(name: str, source: str) -> Callable[..., Any]:
    """A function of bend.config (its globals, its module name) with the given source, readable by
    inspect as a file's: a changed model function for the translation to read."""
    filename = f"<changed {name}>"
    text = textwrap.dedent(source)
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = dict(vars(m))
    exec(compile(text, filename, "exec"), namespace)  # noqa: S102 (the test's own source)
    fn = namespace[name]
    assert fn.__module__ == "bend.config"
    return fn  # type: ignore[no-any-return]


# -- what is translated ---------------------------------------------------------------------------


def test_a_json_value_is_carried_as_object() -> None:
    o = fresh(Obj, "o")
    assert o.pairs.array[1].sort() == z3.ArraySort(z3.IntSort(), OBJECT)  # the entries: JSON values carried
    assert z3gen._kind(m.Value) is object


def test_put_is_built_from_a_filter_and_sorted_with_their_facts() -> None:
    o = fresh(Obj, "o")
    after = PUT(o, z3.String("k"), z3.Const("v", OBJECT))
    assert type(after).__name__ == "ObjTerms"
    kinds = {z3gen._SIDE_KIND[d] for d in z3gen._SIDE_KIND if any(d in str(f) for f in side_facts(after))}
    assert kinds == {"sorted", "filter"}
    assert side_facts(after, only="sorted") and len(side_facts(after, only="sorted")) < len(side_facts(after))


def test_the_same_call_gives_the_same_terms() -> None:
    """A claim and its premises translate put apart: the results (named by a digest of the
    arguments) must be the same terms, or the facts would speak of other constants."""
    o = fresh(Obj, "o")
    k, v = z3.String("k"), z3.Const("v", OBJECT)
    first, second = PUT(o, k, v), PUT(o, k, v)
    assert all(a.eq(b) for a, b in zip(z3gen._leaves_of(first), z3gen._leaves_of(second), strict=True))
    other = PUT(o, z3.String("k2"), v)
    assert not all(a.eq(b) for a, b in zip(z3gen._leaves_of(first), z3gen._leaves_of(other), strict=True))


keys = st.sampled_from(["a", "b", "c", ""])
objects = st.dictionaries(keys, st.integers(0, 3), max_size=3).map(lambda d: Obj(tuple(sorted(d.items()))))


@settings(max_examples=25, deadline=None)
@given(obj=objects, key=keys, entry=st.integers(0, 3))
def test_put_and_remove_agree_with_the_functions_on_concrete_objects(obj: Obj, key: str, entry: int) -> None:
    """On a concrete object the facts fix the result's pairs as a set (not their number: the
    filter's count is only bounded): each name reads as the function's result reads (the value
    carried is a constant named by its repr)."""
    o = concrete(obj, Obj)
    for got, want in ((PUT(o, z3.StringVal(key), concrete(entry, m.Value)), m.put(obj, key, entry)), (REMOVE(o, z3.StringVal(key)), m.remove(obj, key))):
        premises = side_facts(got)
        table = dict(want.pairs)
        for name in ("a", "b", "c", "", "d"):
            if name in table:
                assert _entails(premises, _holds(got, z3.StringVal(name), concrete(table[name], m.Value)))
            else:
                k = z3.Int("k")
                assert _entails(premises, z3.ForAll([k], z3.Implies(z3.And(0 <= k, k < got.pairs.length), got.pairs.array[0][k] != z3.StringVal(name))))


def test_sorted_order_is_left_open() -> None:
    """Only that sorted permutes is encoded: z3 finds the result both in its argument's order and
    not, so no proof can rest on an order sorted was not shown to pick."""
    o = concrete(Obj((("a", 1), ("b", 2))), Obj)
    after = PUT(o, z3.StringVal("c"), concrete(3, m.Value))
    premises = side_facts(after)
    first = after.pairs.array[0][0]
    assert _possible([*premises, first == z3.StringVal("a")])
    assert _possible([*premises, first == z3.StringVal("c")])


def _sorted_in_loop(t: tuple[int, ...]) -> int:
    total = 0
    for x in t:
        total = total + len(sorted(t)) + x
    return total


def _filter_in_loop(t: tuple[int, ...]) -> int:
    total = 0
    for x in t:
        total = total + len(tuple(y for y in t if y != x))
    return total


def _maps(t: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + 1 for x in t)


def _sorted_of_a_number(n: int) -> int:
    return len(sorted(n))  # type: ignore[call-overload]  # refused by the translation, not by Python


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (_sorted_in_loop, r"sorted\(\) in a loop"),
        (_filter_in_loop, "a filtering generator in a loop"),
        (_maps, "a generator other than `x for x in t if ...`"),
        (_sorted_of_a_number, r"sorted\(\) of a value that is not a tuple"),
    ],
)
def test_what_is_not_translated_is_refused(fn: Callable[..., object], says: str) -> None:
    with pytest.raises(Unsupported, match=says):
        translate = _Translator(fn)
        translate([fresh(kind, name) for name, kind in zip(translate.parameters, translate.sorts, strict=True)])


# -- the claims fail for other code, or without the facts -------------------------------------------

_KEEPS_OLD = """
def put(obj: Obj, key: str, value: Value) -> Obj:
    kept = tuple(p for p in obj.pairs if p[0] == key)
    return Obj(tuple(sorted(kept + ((key, value),))))
"""

_DROPS_OTHERS = """
def put(obj: Obj, key: str, value: Value) -> Obj:
    kept = tuple(p for p in obj.pairs if p[0] != key and p[0] != "a")
    return Obj(tuple(sorted(kept + ((key, value),))))
"""


def test_a_changed_put_fails_the_claims() -> None:
    """A put whose filter keeps the old pairs of the key does not hold v alone at k (z3 refutes the
    claim on an object holding another entry at k); one that drops the pairs of another name (a)
    does not keep them. The real put passes both where the changed ones fail."""
    obj = concrete(Obj((("a", 1), ("k", 2))), Obj)
    k, n, v, w = z3.StringVal("k"), z3.StringVal("a"), concrete(3, m.Value), concrete(1, m.Value)
    values = z3.Distinct(concrete(1, m.Value), concrete(2, m.Value), concrete(3, m.Value))  # three JSON values, not one
    keeps_old = generated(_from_source("put", _KEEPS_OLD))
    drops = generated(_from_source("put", _DROPS_OTHERS))
    for put in (PUT, keeps_old, drops):
        after = put(obj, k, v)
        sets, keeps = _holds(after, k, v), _holds(after, n, w)
        if put is PUT:
            assert _entails([values, *side_facts(after)], z3.And(sets, keeps))
        elif put is keeps_old:
            assert _entails([values, *side_facts(after)], z3.Not(sets))
        else:
            assert _entails([values, *side_facts(after)], z3.Not(keeps))


def test_without_the_facts_nothing_follows() -> None:
    """The facts carry sorted's and the filter's meaning: without them put's result is unknown."""
    o = fresh(Obj, "o")
    k, v = z3.String("k"), z3.Const("v", OBJECT)
    after = PUT(o, k, v)
    assert _entails([*facts(o), *side_facts(after)], _holds(after, k, v))
    assert not _entails(facts(o), _holds(after, k, v))
    assert not _entails([*facts(o), *side_facts(after, only="filter")], _holds(after, k, v))


def test_the_mcp_proofs_are_about_the_code() -> None:
    sets, keeps = laws.put_proofs()
    assert sets.strength is PROVED and keeps.strength is PROVED
    assert {"bend.config.put", "bend.config.remove"} <= keeps.about
    never_merges, kept = laws.merge_proofs()
    assert never_merges.strength is PROVED and kept.strength is PROVED


def test_a_claim_that_holds_for_any_put_is_refused() -> None:
    """The registry's check still applies to claims over the new encodings: a claim true of any
    code (put's result is an object's terms with a natural length) is refused."""
    from spec.proofs import prove

    o = fresh(Obj, "o")
    k, v = z3.String("k"), z3.Const("v", OBJECT)
    with pytest.raises(LawFailed):
        prove(lambda: z3.Or(PUT(o, k, v).pairs.length >= 0, PUT(o, k, v).pairs.length < 0), assumptions=lambda: facts(o), ties=[PUT.tie], label="any put")
