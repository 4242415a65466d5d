"""spec.proofs.stateless_loop: the premise of the inductions on loops (bend.cvar.lookup,
bend.config.get, bend.infer's setting, lookup, _least and compile_book's two loops), that the loop
carries no state the proof does not model, checked on the function's source. The step
of such an induction runs the search on a sequence known by its head alone (``Cons``), so it
cannot see a search that counts what it has read: each wrong search below passes the step and
must be refused here; the searches as they are pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bend import config, cvar, infer
from spec.evidence import LawFailed
from spec.proofs import stateless_loop
from wrong_models import edited

SEARCHES: list[tuple[Callable[..., Any], str, frozenset[str]]] = [
    (cvar.lookup, "reg", frozenset()),
    (config.get, "obj.pairs", frozenset()),
    (infer.setting, "compiled.settings", frozenset()),
    (infer.lookup, "query.compat", frozenset()),
    (infer._least, "errors", frozenset({"best"})),
    (infer.compile_book, "book.rules", frozenset({"errors", "settings"})),
    (infer.compile_book, "rule.directives", frozenset({"errors", "settings"})),
]


@pytest.mark.parametrize(("function", "over", "carried"), SEARCHES, ids=[f.__qualname__ for f, _o, _c in SEARCHES])
def test_the_searches_carry_no_state(function: Callable[..., Any], over: str, carried: frozenset[str]) -> None:
    stateless_loop(function, over, carried)


LOOP = "    for decl in reg:\n"
WRONG = {
    "a count": LOOP.replace("    for", "    count = 0\n    for") + "        count += 1\n        if count > 3:\n            break\n",
    "enumerate": "    for i, decl in enumerate(reg):\n        if i > 3:\n            break\n",
    "a slice": "    for decl in reg[:4]:\n",
    "the reverse": "    for decl in reversed(reg):\n",
    "a list of those seen": "    seen = []\n" + LOOP + "        seen.append(decl)\n        if len(seen) > 3:\n            break\n",
    "a global count": LOOP + "        global COUNT\n",
    "a name read before the iteration binds it": LOOP + "        if decl == last:\n            break\n        last = decl\n",
}


@pytest.mark.parametrize("name", WRONG)
def test_a_search_that_carries_state_is_refused(name: str) -> None:
    wrong = edited(cvar.lookup, (LOOP, WRONG[name]))
    with pytest.raises(LawFailed, match="cvar|lookup"):
        stateless_loop(wrong, "reg")


def test_state_the_proof_models_is_allowed_and_no_other() -> None:
    stateless_loop(infer._least, "errors", frozenset({"best"}))
    with pytest.raises(LawFailed, match="reads best before"):
        stateless_loop(infer._least, "errors")


def test_a_name_assigned_before_it_is_read_in_each_iteration_is_no_state() -> None:
    temporary = edited(cvar.lookup, (LOOP, LOOP + "        seen = decl\n        if seen is None:\n            break\n"))
    stateless_loop(temporary, "reg")
