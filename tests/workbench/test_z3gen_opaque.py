"""spec.z3gen on opaque callees that take or give records, tuples and optional values (the catalog
union with find and merge left opaque): each term of such a call's result is an uninterpreted
function of every term of its arguments, a loop translated with callees left opaque is another
recursive function than the one translated with them inlined, and the induction of
catalog_union_one_source_unchanged refuses a union that is wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import z3

from bend import catalog_union as m
from bend.catalog_union import Entry, find, merge
from spec import evidence
from spec.laws import catalog_union as laws
from spec.registry import PROVED
from spec.z3gen import Items, applied, facts, fresh, generated, item, same_items

ENTRIES = tuple[m.Entry, ...]


def _entailed(claim: Any) -> bool:
    solver = z3.Solver()
    solver.add(z3.Not(claim))
    return bool(solver.check() == z3.unsat)


def _same_entry(x: Any, y: Any) -> Any:
    return z3.And(x.provider == y.provider, x.id == y.id, x.api == y.api, x.base_url == y.base_url,
                  same_items(x.data, y.data), same_items(x.optional, y.optional))


def test_an_opaque_call_on_records_is_a_function_of_its_arguments() -> None:
    """The same call twice is the same value; calls on different arguments are not known equal;
    an optional result has a flag nothing fixes."""
    x, y, z = fresh(m.Entry, "x"), fresh(m.Entry, "y"), fresh(m.Entry, "z")
    assert _entailed(_same_entry(applied(m.merge, x, y), applied(m.merge, x, y)))
    assert not _entailed(_same_entry(applied(m.merge, x, y), applied(m.merge, x, z)))
    c, k = fresh(ENTRIES, "c"), fresh(m.Key, "k")
    found = applied(m.find, c, k)
    assert not _entailed(found.none) and not _entailed(z3.Not(found.none))


def _one_bundled() -> tuple[Any, Any, Any, Any]:
    bundled, compiled = fresh(ENTRIES | None, "b"), fresh(ENTRIES, "c")
    given = z3.And(z3.Not(bundled.none), bundled.value.length == 1, compiled.length == 0, *facts(bundled))
    return bundled, compiled, given, item(bundled.value, 0)


def test_opaque_callees_say_nothing_of_what_they_compute() -> None:
    """One bundled entry and no compiled one: union's catalog has one entry whatever find and
    merge compute; that it is the bundled entry needs find's None, so it is proved with find
    inlined and not with it opaque. Built inlined first: the opaque encoding's loops are other
    recursive functions, not the inlined ones found in a shared cache."""
    bundled, compiled, given, x = _one_bundled()
    inlined, kept = generated(m.union), generated(m.union, opaque=(m.find, m.merge))
    assert _entailed(z3.Implies(given, _same_entry(item(inlined(bundled, compiled), 0), x)))
    assert not _entailed(z3.Implies(given, _same_entry(item(kept(bundled, compiled), 0), x)))
    assert _entailed(z3.Implies(given, kept(bundled, compiled).length == 1))
    assert "find, merge uninterpreted" in kept.tie.sentence


# A union of the catalog module's shape for the induction to refuse, calling the module's find and
# merge (left opaque, their bodies are never read) and named as one of its functions (an encoding
# stands for a function of bend/, and its callees are its module's): bend.catalog_union.union with
# one token changed, the bundled entry looked up in the bundled source itself, so an entry of the
# bundle alone is merged with itself.
def wrong_union(bundled: tuple[Entry, ...] | None, compiled: tuple[Entry, ...]) -> tuple[Entry, ...]:
    if bundled is None:
        return compiled
    out: list[Entry] = []
    for entry in bundled:
        twin = find(bundled, entry.key)
        out.append(entry if twin is None else merge(entry, twin))
    for entry in compiled:
        if find(bundled, entry.key) is None:
            out.append(entry)
    return tuple(out)


wrong_union.__module__ = m.__name__


def union_verdicts() -> dict[str, str]:
    """The induction's strength on the right union, and its refusal of the wrong one."""
    right = laws.union_induction(generated(m.union, opaque=(find, merge)), find, merge)
    try:
        laws.union_induction(generated(wrong_union, opaque=(find, merge)), find, merge)
    except evidence.LawFailed as refused:
        return {"right": right.strength.value, "wrong": str(refused)}
    return {"right": right.strength.value, "wrong": "proved"}


def test_the_union_induction_proves_the_right_union_and_refuses_a_wrong_one() -> None:
    """In an interpreter of its own: z3's search on these claims follows the order in which the
    process made its terms (one context for the process), and after the other workbench tests one
    check ran past its 60 s limit in a CI run (7 s in a fresh process, 20 s after them here)."""
    script = "import json, sys; sys.path.insert(0, sys.argv[1]); import test_z3gen_opaque as t; print(json.dumps(t.union_verdicts()))"
    here = Path(__file__).parent
    done = subprocess.run([sys.executable, "-c", script, str(here)], capture_output=True, text=True, check=False, cwd=here.parent.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts = json.loads(done.stdout.splitlines()[-1])
    assert verdicts["right"] == PROVED.value
    assert "counterexample" in verdicts["wrong"], verdicts["wrong"]
