"""spec.z3gen on the catalog union's code: JSON values carried as ``object`` (a sort nothing
constrains), tuple fields of dataclasses held in tuples, local lists (``[]``, ``append``,
``tuple()``), a property read on a record; each agrees with the function on sampled inputs, and
what would make the translation a guess is refused."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from bend import catalog_union as m
from spec.z3gen import OBJECT, Items, Maybe, Unsupported, _Translator, concrete, fresh, generated, member, same_items

FIND, FIELD_OF, MERGE, UNION = generated(m.find), generated(m.field_of), generated(m.merge), generated(m.union)
ENTRIES = tuple[m.Entry, ...]


def _entailed(claim: Any) -> bool:
    solver = z3.Solver()
    solver.add(z3.Not(claim))
    return bool(solver.check() == z3.unsat)


def _length(term: Any) -> int:
    value = z3.simplify(term)
    assert z3.is_int_value(value), value
    return int(value.as_long())


def _same(got: Any, want: Any) -> Any:
    """The terms ``got`` hold what the closed terms ``want`` hold (tuples up to their lengths)."""
    if isinstance(want, Items):
        n = _length(want.length)
        return z3.And(got.length == n, *(_same(_at(got, k), _at(want, k)) for k in range(n)))
    if isinstance(want, Maybe):  # closed: its flag is known
        return got.none if z3.is_true(z3.simplify(want.none)) else z3.And(z3.Not(got.none), _same(got.value, want.value))
    if isinstance(want, tuple):
        return z3.And(*(_same(a, b) for a, b in zip(got, want, strict=True)))
    return got == want


def _at(items: Items, k: int) -> Any:
    def select(array: Any) -> Any:
        if isinstance(array, tuple):
            return type(array)(*(select(part) for part in array))
        return z3.Select(array, k)

    return select(items.array)


KEYS = (("p", "a"), ("p", "b"), ("q", "a"))
VALUES = st.sampled_from([None, 0, 1.5, "x", ("l",), (("k", 1),), True])


@st.composite
def _sources(draw: st.DrawFn, apis: tuple[str, ...] = ("x", "y")) -> tuple[m.Entry, ...]:
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=2))
    out = []
    for provider, id_ in keys:
        fields = draw(st.lists(st.sampled_from(m.OPTIONAL), unique=True, max_size=2))
        optional = tuple((f, draw(VALUES)) for f in m.OPTIONAL if f in fields)
        data = tuple(("name", draw(VALUES)) for _ in range(draw(st.integers(0, 2))))
        out.append(m.Entry(provider, id_, draw(st.sampled_from(apis)), draw(st.sampled_from(["u", "v"])), data, optional))
    return tuple(out)


@settings(max_examples=30)  # z3 unfolds both loops and merge's: about a second an example
@given(bundled=st.none() | _sources(), compiled=_sources())
def test_the_union_is_translated_exactly(bundled: tuple[m.Entry, ...] | None, compiled: tuple[m.Entry, ...]) -> None:
    """union: two loops, a local list appended to and copied, find through the property key,
    merge's loop over OPTIONAL filling a list of pairs of carried JSON values."""
    got = UNION(concrete(bundled, ENTRIES | None), concrete(compiled, ENTRIES))
    assert _entailed(_same(got, concrete(m.union(bundled, compiled), ENTRIES)))


@given(entries=_sources(), key=st.sampled_from(KEYS))
def test_find_through_a_property_is_pythons(entries: tuple[m.Entry, ...], key: m.Key) -> None:
    got = FIND(concrete(entries, ENTRIES), concrete(key, m.Key))
    assert _entailed(_same(got, concrete(m.find(entries, key), m.Entry | None)))


@given(entries=_sources(), name=st.sampled_from([*m.OPTIONAL, "other"]))
def test_a_json_value_or_none_returned_in_a_pair_is_pythons(entries: tuple[m.Entry, ...], name: str) -> None:
    for entry in entries:
        got = FIELD_OF(concrete(entry, m.Entry), z3.StringVal(name))
        assert _entailed(_same(got, concrete(m.field_of(entry, name), tuple[bool, object])))


def test_carried_values_are_any_values() -> None:
    """Two distinct JSON values are not proved equal, and None is some value of the sort: the
    encoding says nothing of a carried value beyond where it is carried."""
    a, b = concrete({"k": 1}, object), concrete([1], object)
    assert a.sort() == OBJECT and not _entailed(a == b) and not _entailed(a != b)
    assert not _entailed(concrete(None, object) != a)


def test_a_wrong_merge_does_not_prove_the_bundled_field_kept() -> None:
    """The claim "merge keeps a present bundled field" is proved of the code, and refuted of a
    merge that lets the compiled entry win (merge with its arguments swapped): the encoding
    tells them apart."""
    b, c, value = fresh(m.Entry, "b"), fresh(m.Entry, "c"), z3.Const("v", OBJECT)
    pair = b.optional.array
    given_b = b._replace(optional=Items(type(pair)(z3.Store(pair.item0, 0, z3.StringVal("compat")), z3.Store(pair.item1, 0, value)), z3.IntVal(1)))

    def kept(out: Any) -> z3.CheckSatResult:
        present, held = FIELD_OF(out, z3.StringVal("compat"))
        solver = z3.Solver()
        solver.add(c.optional.length >= 0, z3.Not(z3.And(present, held == value)))
        return solver.check()

    assert kept(MERGE(given_b, c)) == z3.unsat
    assert kept(MERGE(c, given_b)) == z3.sat


@dataclass(frozen=True)
class Holder:
    value: object
    items: tuple[tuple[str, object], ...] = ()


def _compares(a: object, b: object) -> bool:
    return a == b


def _compares_pairs(h: Holder, x: str, v: object) -> bool:
    return (x, v) in h.items


def _compares_records(h: Holder, g: Holder) -> bool:
    return h == g


def _aliases(t: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    other = out
    out.append(1)
    return tuple(other)


def _walks_list(t: tuple[int, ...]) -> int:
    out: list[int] = []
    for x in t:
        out.append(x)
    total = 0
    for y in out:
        total = total + y
    return total


def _given_again(t: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = []
    out.append(1)
    out = []
    return tuple(out)


def _declared_full(t: tuple[int, ...]) -> tuple[int, ...]:
    out: list[int] = [1]
    return tuple(out)


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (_compares, "a comparison of object"),
        (_compares_pairs, "a comparison of object"),
        (_compares_records, "a comparison of object"),
        (_aliases, "the list out read other than by len"),
        (_walks_list, "the list out read other than by len"),
        (_given_again, "the list out is given another value"),
        (_declared_full, "declared with other than"),
    ],
)
def test_what_would_be_a_guess_is_refused(fn: Callable[..., object], says: str) -> None:
    with pytest.raises(Unsupported, match=says):
        translate = _Translator(fn)
        translate([fresh(kind, name) for name, kind in zip(translate.parameters, translate.sorts)])


def _appends_and_measures(t: tuple[int, ...], x: int) -> int:
    out: list[int] = []
    for y in t:
        if y != x:
            out.append(y)
    out.append(x)
    kept = tuple(out)
    return len(out) * 100 + kept[0] * 10 + kept[-1]


@given(t=st.lists(st.integers(-3, 3), max_size=5).map(tuple), x=st.integers(-3, 3))
def test_a_local_list_is_pythons(t: tuple[int, ...], x: int) -> None:
    got = _Translator(_appends_and_measures)([concrete(t, tuple[int, ...]), z3.IntVal(x)])
    assert _entailed(got == _appends_and_measures(t, x))


@settings(max_examples=20)
@given(bundled=_sources(), compiled=_sources(), start=st.integers(0, 2))
def test_a_later_loop_entered_midway_is_the_rest_of_the_function(bundled: tuple[m.Entry, ...], compiled: tuple[m.Entry, ...], start: int) -> None:
    """``loop(_at=1, ...)``: union's second loop (over the compiled entries), entered at any
    position with what the first loop built, is the function's rest from there; its
    ``successors`` are its body's two paths (appended or not), each running it again one on."""
    built = tuple(entry if m.find(compiled, entry.key) is None else m.merge(entry, m.find(compiled, entry.key)) for entry in bundled)  # type: ignore[arg-type]
    names = {"bundled": concrete(bundled, ENTRIES | None), "compiled": concrete(compiled, ENTRIES), "out": concrete(built, ENTRIES),
             "_index": z3.IntVal(start), "_index@0": z3.IntVal(len(bundled))}
    want = built + tuple(e for e in compiled[start:] if m.find(bundled, e.key) is None)
    assert _entailed(_same(UNION.loop(_at=1, **names), concrete(want, ENTRIES)))
    paths = UNION.successors(_at=1, **names)
    assert len(paths) == 2 and all(_entailed(after["_index"] == start + 1) for _conditions, after in paths)


def test_a_loop_the_body_does_not_have_or_reach_is_refused() -> None:
    names = {"bundled": fresh(ENTRIES | None, "b"), "compiled": fresh(ENTRIES, "c"), "out": fresh(ENTRIES, "o"), "_index": z3.Int("k")}
    with pytest.raises(Unsupported, match="has no loop 2"):
        UNION.loop(_at=2, **names)
    with pytest.raises(Unsupported, match="needs _index, _index@0"):
        UNION.loop(_at=1, **names)  # the first loop's position is one of the names the second is entered with


def test_a_loop_not_reached_with_the_names_given_is_refused() -> None:
    names = {"bundled": fresh(ENTRIES | None, "b"), "compiled": fresh(ENTRIES, "c"), "out": fresh(ENTRIES, "o"), "_index": z3.Int("k"), "_index@0": z3.Int("i"), "extra": z3.Int("x")}
    with pytest.raises(Unsupported, match="does not reach this loop"):
        UNION.loop(_at=1, **names)


def _union_ints(bundled: tuple[int, ...] | None, compiled: tuple[int, ...]) -> tuple[int, ...]:
    if bundled is None:
        return compiled
    out: list[int] = []
    for x in bundled:
        out.append(x)
    for y in compiled:
        if y not in bundled:
            out.append(y)
    return tuple(out)


def _union_ints_wrong(bundled: tuple[int, ...] | None, compiled: tuple[int, ...]) -> tuple[int, ...]:
    if bundled is None:
        return ()
    out: list[int] = []
    for x in bundled:
        out.append(x)
    for y in compiled:
        out.append(y)
    return tuple(out)


def _refuted(claim: Any) -> bool:
    solver = z3.Solver()
    solver.add(z3.Not(claim))
    return bool(solver.check() == z3.sat)


def test_claims_over_lists_and_a_later_loop_fail_for_wrong_code() -> None:
    """The same claims, proved of the right function, are refuted of a wrong one: a missing
    bundle gives the compiled tuple; the second loop's body appends nothing for an item the
    bundle has."""
    b, c, out, k = fresh(tuple[int, ...] | None, "b"), fresh(tuple[int, ...], "c"), fresh(tuple[int, ...], "out"), z3.Int("k")
    lengths = z3.And(b.value.length >= 0, c.length >= 0, out.length >= 0)
    results = {}
    for fn in (_union_ints, _union_ints_wrong):
        translate = _Translator(fn)
        missing = z3.Implies(z3.And(lengths, b.none), same_items(translate([b, c]), c))
        translate([fresh(kind, name) for name, kind in zip(translate.parameters, translate.sorts)])  # its loops defined as the code reaches them
        paths = translate.successors(_at=1, bundled=b, compiled=c, out=out, _index=k, **{"_index@0": z3.Int("i")})
        has = member(b.value, z3.Select(c.array, k))
        kept = z3.Implies(z3.And(lengths, 0 <= k, k < c.length, has), z3.And(*(z3.Implies(z3.And(*conditions), after["out"].length == out.length) for conditions, after in paths)))
        results[fn.__name__] = (_entailed(missing), _entailed(kept), _refuted(missing), _refuted(kept))
    assert results["_union_ints"] == (True, True, False, False)
    assert results["_union_ints_wrong"] == (False, False, True, True)


@dataclass(frozen=True)
class Named:
    first: str
    second: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.first, self.second)

    @property
    def swapped(self) -> tuple[str, str]:
        return (self.second, self.first)


def _key_head(n: Named) -> str:
    return n.key[0]


def _swapped_head(n: Named) -> str:
    return n.swapped[0]


def _other_modules_property(e: m.Entry) -> str:
    return e.key[0]


def test_a_property_is_its_getters_code() -> None:
    """``n.key`` is the getter's code on the record: the claim "the key's head is the first
    field" is proved through ``key`` and refuted through a getter that swaps them; a property of
    a class of another module is refused."""
    n = fresh(Named, "n")
    assert _entailed(_Translator(_key_head)([n]) == n.first)
    assert _refuted(_Translator(_swapped_head)([n]) == n.first)
    with pytest.raises(Unsupported, match="the field key of e"):
        _Translator(_other_modules_property)([fresh(m.Entry, "e")])
