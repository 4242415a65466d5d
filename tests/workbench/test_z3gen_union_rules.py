"""The proofs of catalog_union_bundled_gives, catalog_union_every_model_once and catalog_union_order refuse a wrong callee
or a wrong union: the facts of union's callees (field_of, merge) and the inductions on union's
loops, which the laws prove of bend's own code (tests/laws runs them; proving them again here
would cost minutes of z3 a run), fail for the same code with one token changed. field_of's fact,
a second's work, is proved here too."""

from __future__ import annotations

import pytest

from bend import catalog_union as m
from bend.catalog_union import OPTIONAL, Entry, field_of, find, merge
from spec import evidence
from spec.laws import catalog_union as laws
from spec.registry import PROVED
from spec.z3gen import generated


# bend.catalog_union.field_of with one token changed: a name it does not find is reported there.
def wrong_field_of(entry: Entry, name: str) -> tuple[bool, object]:
    for field, value in entry.optional:
        if field == name:
            return True, value
    return True, None


# bend.catalog_union.merge with one token changed: it fills only on different apis.
def wrong_merge(bundled: Entry, compiled: Entry) -> Entry:
    if bundled.api == compiled.api:
        return bundled
    fields: list[tuple[str, object]] = []
    for name in OPTIONAL:
        present, value = field_of(bundled, name)
        if present:
            fields.append((name, value))
        else:
            there, filled = field_of(compiled, name)
            if there:
                fields.append((name, filled))
    return Entry(bundled.provider, bundled.id, bundled.api, bundled.base_url, bundled.data, tuple(fields))


# bend.catalog_union.union with one token changed: a bundled entry is merged with itself.
def wrong_union(bundled: tuple[Entry, ...] | None, compiled: tuple[Entry, ...]) -> tuple[Entry, ...]:
    if bundled is None:
        return compiled
    out: list[Entry] = []
    for entry in bundled:
        twin = find(compiled, entry.key)
        out.append(entry if twin is None else merge(entry, entry))
    for entry in compiled:
        if find(bundled, entry.key) is None:
            out.append(entry)
    return tuple(out)


# bend.catalog_union.union with one token changed: the compiled entries a bundled entry has are appended.
def wrong_second_loop(bundled: tuple[Entry, ...] | None, compiled: tuple[Entry, ...]) -> tuple[Entry, ...]:
    if bundled is None:
        return compiled
    out: list[Entry] = []
    for entry in bundled:
        twin = find(compiled, entry.key)
        out.append(entry if twin is None else merge(entry, twin))
    for entry in compiled:
        if find(bundled, entry.key) is not None:
            out.append(entry)
    return tuple(out)


for _wrong in (wrong_field_of, wrong_merge, wrong_union, wrong_second_loop):
    _wrong.__module__ = m.__name__  # an encoding stands for a function of bend/; its callees are its module's


def test_field_of_fact_is_proved_of_field_of_and_refused_for_a_wrong_one() -> None:
    assert laws.field_of_lemma(generated(field_of)).strength is PROVED
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.field_of_lemma(generated(wrong_field_of))


def test_merge_fact_is_refused_for_a_wrong_merge() -> None:
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.merge_lemma(generated(wrong_merge, opaque=(field_of,)))


def test_the_union_induction_of_rule_2_refuses_a_wrong_union() -> None:
    name = OPTIONAL[1]
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.union_induction(generated(wrong_union, opaque=(find, merge)), find, merge, laws._gives(name), laws._gives_calls(name),
                             laws._gives_second_calls, missing=False)


def test_the_inductions_of_rule_1_refuse_a_wrong_union() -> None:
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.rule_1_proof(generated(wrong_second_loop, opaque=(find, merge)), find, merge)


def test_the_order_induction_refuses_a_wrong_union() -> None:
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.order_proof(generated(wrong_second_loop, opaque=(find, merge)), find, merge)
    with pytest.raises(evidence.LawFailed, match="counterexample"):
        laws.union_induction(generated(wrong_union, opaque=(find, merge)), find, merge, laws._one_entry, laws._one_entry_calls, laws._gives_second_calls, missing=False)
