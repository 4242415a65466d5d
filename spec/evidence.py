"""Evidence helpers: each checks a property and returns the sentence the report prints.

- ``exhaust``: every case of a finite domain (strength proved: say what makes it finite).
- ``reachable``: every state reachable from the initial ones under every action (proved).
- ``bounded``: every case of the inputs the seed names (strength bounded).
- ``prove``: z3 finds the negation of a claim unsatisfiable (proved).
- ``examples`` / ``machine``: Hypothesis in the active profile (tested).

A property returns True (or None) when it holds and False or raises when it does not;
the first failing case raises ``LawFailed`` naming it.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

import z3
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from hypothesis.strategies import SearchStrategy

from spec import profiles

T = TypeVar("T")
S = TypeVar("S", bound=Hashable)


class LawFailed(AssertionError):
    """A law does not hold; the message names the case."""


def _holds(prop: Callable[[T], bool | None], case: T) -> None:
    if prop(case) is False:
        raise LawFailed(f"fails for {case!r}")


def exhaust(cases: Iterable[T], prop: Callable[[T], bool | None], *, label: str) -> str:
    """Check ``prop`` on every case; ``label`` says what the domain is and why it is finite."""
    count = 0
    for case in cases:
        _holds(prop, case)
        count += 1
    if count == 0:
        raise LawFailed(f"no case enumerated for {label}")
    return f"exhaustive: {label} ({count:,} cases)"


def bounded(cases: Iterable[T], prop: Callable[[T], bool | None], *, label: str) -> str:
    """Check ``prop`` on exactly the inputs the seed names (``label``: which ones)."""
    count = 0
    for case in cases:
        _holds(prop, case)
        count += 1
    if count == 0:
        raise LawFailed(f"no case computed for {label}")
    return f"bounded: {label} ({count:,} cases)"


def reachable(
    initial: Iterable[S],
    step: Callable[[S], Iterable[tuple[object, S]]],
    invariant: Callable[[S], bool | None],
    *,
    transition: Callable[[S, object, S], bool | None] | None = None,
    label: str,
) -> str:
    """Breadth-first search of every reachable state; the invariant holds on each state and
    ``transition`` (when given) on each edge. Returns the number of states and edges covered."""
    seen: set[S] = set()
    queue: deque[S] = deque()
    for state in initial:
        if state not in seen:
            seen.add(state)
            queue.append(state)
    edges = 0
    while queue:
        state = queue.popleft()
        if invariant(state) is False:
            raise LawFailed(f"invariant fails in reachable state {state!r}")
        for action, after in step(state):
            edges += 1
            if transition is not None and transition(state, action, after) is False:
                raise LawFailed(f"fails on {state!r} --{action!r}--> {after!r}")
            if after not in seen:
                seen.add(after)
                queue.append(after)
    if not seen:
        raise LawFailed(f"no state reached for {label}")
    return f"exhaustive: {label} ({len(seen):,} reachable states, {edges:,} transitions)"


def prove(claim: z3.BoolRef, *, label: str, assumptions: Iterable[z3.BoolRef] = ()) -> str:
    """Prove ``claim`` under ``assumptions`` by showing its negation unsatisfiable."""
    solver = z3.Solver()
    for fact in assumptions:
        solver.add(fact)
    solver.add(z3.Not(claim))
    verdict = solver.check()
    if verdict == z3.sat:
        raise LawFailed(f"z3 counterexample for {label}: {solver.model()}")
    if verdict != z3.unsat:
        raise LawFailed(f"z3 could not decide {label}: {verdict}")
    return f"z3: unsat ({label})"


def examples(prop: Callable[..., bool | None], **strategies: SearchStrategy[Any]) -> str:
    """Run ``prop`` under Hypothesis in the active profile and count the examples it ran.

    The profile alone decides how many examples run: law checks never set max_examples.
    """
    count = 0

    @functools.wraps(prop)
    def counted(**kwargs: Any) -> None:
        nonlocal count
        count += 1
        if prop(**kwargs) is False:
            raise LawFailed(f"fails for {kwargs!r}")

    given(**strategies)(counted)()
    return f"hypothesis: {count:,} examples (profile {profiles.active()})"


def machine(cls: type[RuleBasedStateMachine]) -> str:
    """Run a Hypothesis state machine in the active profile; count runs and steps."""
    runs = 0
    steps = 0

    class Counted(cls):  # type: ignore[valid-type, misc]
        def __init__(self) -> None:
            nonlocal runs
            runs += 1
            super().__init__()

        def check_invariants(self, *args: Any, **kwargs: Any) -> Any:
            nonlocal steps
            steps += 1
            return super().check_invariants(*args, **kwargs)

    Counted.__name__ = cls.__name__
    run_state_machine_as_test(Counted, settings=hsettings())
    return f"hypothesis: {runs:,} runs, {steps:,} checked states (profile {profiles.active()})"
