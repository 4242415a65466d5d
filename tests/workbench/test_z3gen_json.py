"""spec.z3gen on the config model's objects: a JSON value carried (``bend.cvar.Value``), ``Obj``
built in bend.config, a filtering generator and ``sorted()`` encoded by the facts that define
them (``side_facts``, each builtin's two ways apart). The encodings agree with the functions on
concrete objects, leave sorted's order open, refuse the builtins in a loop; the mcpServers proofs'
steps fail on a changed put, each step's z3 checks are small, and without the facts nothing
follows."""

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
from spec.proofs import ProofTimeout
from spec.registry import PROVED
from spec.z3gen import OBJECT, WAYS, Unsupported, _Translator, concrete, facts, fresh, generated, side_facts

PUT, REMOVE = generated(m.put), generated(m.remove)
FORWARD = ("sorted forward", "filter forward")
BACK = ("sorted back", "filter back")


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
    """A function of bend.config (its globals, its module name, annotations read as the module's
    are) with the given source, readable by inspect as a file's: a changed model function for the
    translation to read."""
    filename = f"<changed {name}>"
    text = "from __future__ import annotations\n" + textwrap.dedent(source)
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
    text = " ".join(str(f) for f in side_facts(after))
    assert {z3gen._SIDE_KIND[d] for d in z3gen._SIDE_KIND if d in text} == {"sorted", "filter"}
    every = side_facts(after)
    for way in WAYS:  # each way adds one quantified fact to the ground ones
        assert len(side_facts(after, only=())) < len(side_facts(after, only=way)) < len(every)
    assert len(side_facts(after, only="sorted")) == len(side_facts(after, only=("sorted forward", "sorted back")))
    assert not any(z3.is_quantifier(f) for f in side_facts(after, only=()))
    with pytest.raises(ValueError, match="no such way"):
        side_facts(after, only="sorted sideways")


def test_the_same_call_gives_the_same_terms() -> None:
    """A claim and its premises translate put apart: the results (named by a digest of the
    arguments) must be the same terms, or the facts would speak of other constants; remove's
    result is put's filter (the same code, the same terms)."""
    o = fresh(Obj, "o")
    k, v = z3.String("k"), z3.Const("v", OBJECT)
    first, second = PUT(o, k, v), PUT(o, k, v)
    assert all(a.eq(b) for a, b in zip(z3gen._leaves_of(first), z3gen._leaves_of(second), strict=True))
    other = PUT(o, z3.String("k2"), v)
    assert not all(a.eq(b) for a, b in zip(z3gen._leaves_of(first), z3gen._leaves_of(other), strict=True))
    removed = {f.sexpr() for f in side_facts(REMOVE(o, k))}
    assert removed and removed < {f.sexpr() for f in side_facts(first)}


keys = st.sampled_from(["a", "b", "c", ""])
objects = st.dictionaries(keys, st.integers(0, 3), max_size=3).map(lambda d: Obj(tuple(sorted(d.items()))))


def _only(o: Any, name: Any, entry: Any) -> Any:
    return laws._only(o, name, entry)


@settings(max_examples=15, deadline=None)
@given(obj=objects, key=keys, entry=st.integers(0, 3))
def test_put_and_remove_agree_with_the_functions_on_concrete_objects(obj: Obj, key: str, entry: int) -> None:
    """On a concrete object the facts fix the result's pairs as a set: each name the function's
    result has is had by the encoding's (from the back ways: each kept item is somewhere in the
    result) with that entry alone (forward ways: each item of the result is a kept one or the
    one put added), and no other name is (forward ways). The value carried is a constant named
    by its repr."""
    o = concrete(obj, Obj)
    for got, want in ((PUT(o, z3.StringVal(key), concrete(entry, m.Value)), m.put(obj, key, entry)), (REMOVE(o, z3.StringVal(key)), m.remove(obj, key))):
        table = dict(want.pairs)
        for name in ("a", "b", "c", "", "d"):
            if name in table:
                value = concrete(table[name], m.Value)
                assert _entails(side_facts(got, only=BACK), laws._has(got, z3.StringVal(name), value))
                assert _entails(side_facts(got, only=FORWARD), _only(got, z3.StringVal(name), value))
            else:
                i = z3.Int("i")
                absent = z3.ForAll([i], z3.Implies(z3.And(0 <= i, i < got.pairs.length), got.pairs.array[0][i] != z3.StringVal(name)))
                assert _entails(side_facts(got, only=FORWARD), absent)


def test_sorted_order_is_left_open() -> None:
    """Only that sorted's items are its argument's and its argument's are its own is encoded: z3
    finds the result both in its argument's order and not, so no proof can rest on an order
    sorted was not shown to pick."""
    o = concrete(Obj((("a", 1), ("b", 2))), Obj)
    after = PUT(o, z3.StringVal("c"), concrete(3, m.Value))
    first = after.pairs.array[0][0]
    for ways in (FORWARD, BACK):
        premises = side_facts(after, only=ways)
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


# -- the proofs fail for other code, or without the facts; their checks are small ------------------

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


@pytest.mark.parametrize(
    ("source", "step"),
    [
        (_KEEPS_OLD, "each pair of name k of put(o, k, v) holds v"),
        (_DROPS_OTHERS, "a pair (n, w) of remove(o, k), n other than k, is a pair of put(o, k, v)"),
    ],
    ids=["keeps the old pairs of the key", "drops the pairs of another name"],
)
def test_a_changed_put_fails_the_proof(source: str, step: str) -> None:
    """The mcpServers proofs' steps (``put_steps``) run on a changed put: one whose filter keeps
    the old pairs of the key (put(o, k, v) may hold another entry at k), one that drops the
    pairs of the name "a" (a pair of remove(o, k) is not in put's result): z3 gives a
    counterexample for the step the change breaks, not a timeout. The real put passes them all."""
    changed = generated(_from_source("put", source))
    with pytest.raises(LawFailed, match="counterexample") as failed:
        laws.put_steps(changed, REMOVE)
    assert not isinstance(failed.value, ProofTimeout)
    assert step in str(failed.value)
    sets, keeps = laws.put_steps(PUT, REMOVE)
    assert sets.strength is PROVED and keeps.strength is PROVED


def test_without_the_facts_nothing_follows() -> None:
    """The facts carry sorted's and the filter's meaning: without them, or with the other way
    only, put's result is unknown."""
    o = fresh(Obj, "o")
    k, v = z3.String("k"), z3.Const("v", OBJECT)
    after = PUT(o, k, v)
    assert _entails([*facts(o), *side_facts(after, only="sorted back")], laws._has(after, k, v))
    assert not _entails(facts(o), laws._has(after, k, v))
    assert not _entails([*facts(o), *side_facts(after, only=FORWARD)], laws._has(after, k, v))
    assert _entails([*facts(o), *side_facts(after, only=FORWARD)], _only(after, k, v))
    assert not _entails([*facts(o), *side_facts(after, only="sorted forward")], _only(after, k, v))
    assert not _entails([*facts(o), *side_facts(after, only=BACK)], _only(after, k, v))


def test_the_mcp_proofs_are_about_the_code_and_small(z3_checks: list[tuple[str, float]]) -> None:
    """Each of the five steps is three z3 checks (premises satisfiable, the claim, the claim with
    the encodings uninterpreted), each well inside the proof machinery's limit: a few tens of
    milliseconds on an idle machine, so 10 s leaves room for a loaded one (spec.proofs.LIMIT_MS
    is 60 s)."""
    sets, keeps = laws.put_steps(PUT, REMOVE)
    assert sets.strength is PROVED and keeps.strength is PROVED
    assert {"bend.config.put", "bend.config.remove"} <= keeps.about
    assert len(sets.proofs) == 2 and len(keeps.proofs) == 3
    assert len(z3_checks) == 15
    slow = [(what, round(took, 2)) for what, took in z3_checks if took > 10]
    assert not slow, slow
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
