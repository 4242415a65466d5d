"""Evidence helpers: each checks a property and returns the ``Evidence`` the report prints.

A law's check returns an ``Evidence``: a strength and a sentence saying exactly what was
covered. The registry refuses a law whose label is stronger than its evidence
(``spec.report.run``), so the strength a law claims is the strength of what it ran.

Proved (for every input):
- ``exhaust``: every point of a ``Domain`` that is a product of whole finite types
  (``Finite``), checked point by point. A domain with any ``Bound`` factor (a range we
  chose) gives bounded evidence instead.
- ``reachable``: every state reachable from every initial point under every action, the
  initial states and the actions each a ``Domain``; proved when neither has a ``Bound``.
- ``prove``: z3 finds the negation of a claim unsatisfiable (the assumptions themselves
  must be satisfiable, or the proof is vacuous and fails).
- ``induction``: a base case and a step, each proved.

Bounded: ``bounded`` (exactly the inputs the seed names, or every input up to a bound we
chose), and the two above over a domain with a ``Bound``.

Tested: ``examples`` and ``machine`` (Hypothesis in the active profile, with counts).

Combining: ``all_of`` (each part proves a piece of the claim: the weakest counts),
``also`` (several pieces of evidence for the same claim: the strongest counts), and
``Evidence.with_production`` (the same law run on production, reported beside it).

A property returns True (or None) when it holds and False or raises when it does not;
the first failing case raises ``LawFailed`` naming it.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import z3
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from hypothesis.strategies import SearchStrategy

from spec import profiles
from spec.registry import BOUNDED, PROVED, TESTED, Strength

T = TypeVar("T")
S = TypeVar("S", bound=Hashable)


class LawFailed(AssertionError):
    """A law does not hold; the message names the case."""


@dataclass(frozen=True)
class Evidence:
    """What a law's check covered. ``strength`` speaks of the model (bend/), or of production
    for a law that only production has; ``production`` is the strength of the same law run
    on production (impl/eukhe) when it is."""

    strength: Strength
    sentence: str
    production: Strength | None = None

    def __str__(self) -> str:
        return self.sentence

    def with_production(self, evidence: Evidence) -> Evidence:
        """This evidence of the model, and ``evidence`` of production under the same law."""
        both = _weakest([self.production, evidence.strength])
        return Evidence(self.strength, f"{self.sentence}; production: {evidence.sentence}", both)


def _weakest(strengths: Iterable[Strength | None]) -> Strength | None:
    known = [s for s in strengths if s is not None]
    return max(known, key=_ORDER.index) if known else None


def _strongest(strengths: Iterable[Strength | None]) -> Strength | None:
    known = [s for s in strengths if s is not None]
    return min(known, key=_ORDER.index) if known else None


_ORDER = [PROVED, BOUNDED, TESTED]


def at_least(strength: Strength, label: Strength) -> bool:
    """True when evidence of ``strength`` supports a law labelled ``label``."""
    return _ORDER.index(strength) <= _ORDER.index(label)


def all_of(*parts: Evidence) -> Evidence:
    """The claim is the conjunction of the parts: the weakest part is the claim's strength."""
    if not parts:
        raise LawFailed("no evidence to combine")
    weakest = _weakest(p.strength for p in parts)
    assert weakest is not None
    return Evidence(weakest, "; ".join(p.sentence for p in parts), _weakest(p.production for p in parts))


def also(main: Evidence, *more: Evidence) -> Evidence:
    """Several pieces of evidence for one claim (a proof within a bound and a hunt beyond it):
    the strongest one is the claim's strength."""
    parts = (main, *more)
    strongest = _strongest(p.strength for p in parts)
    assert strongest is not None
    return Evidence(strongest, "; ".join(p.sentence for p in parts), _strongest(p.production for p in parts))


def induction(base: Evidence, step: Evidence, *, label: str) -> Evidence:
    """A proof by induction: proved when the base case and the step are both proved."""
    both = all_of(base, step)
    return Evidence(both.strength, f"induction on {label}: base: {base.sentence}; step: {step.sentence}", both.production)


# ---------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Finite(Generic[T]):
    """A whole finite type a law declares: every value it has (levels, verdicts, booleans)."""

    name: str
    values: tuple[T, ...]

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"finite type {self.name} has no value")
        if len(set(map(repr, self.values))) != len(self.values):
            raise ValueError(f"finite type {self.name} repeats a value")


@dataclass(frozen=True)
class Bound(Finite[T]):
    """A part of an infinite type we chose to enumerate (stacks of at most 3 layers): a
    domain with one of these is bounded, never proved. ``bound`` says what was chosen."""

    bound: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.bound:
            raise ValueError(f"bound {self.name} does not say what it bounds")


def boolean(name: str) -> Finite[bool]:
    return Finite(name, (False, True))


@dataclass(frozen=True)
class Domain:
    """A product of finite types, enumerated point by point as tuples in declaration order."""

    factors: tuple[Finite[Any], ...]
    where: Callable[..., bool] | None = field(default=None, compare=False)
    where_says: str = ""

    @property
    def bounds(self) -> list[str]:
        return [f.bound for f in self.factors if isinstance(f, Bound)]

    @property
    def whole(self) -> bool:
        return not self.bounds

    @property
    def size(self) -> int:
        return math.prod(len(f.values) for f in self.factors)

    def points(self) -> Iterator[tuple[Any, ...]]:
        for point in itertools.product(*(f.values for f in self.factors)):
            if self.where is None or self.where(*point):
                yield point

    def describe(self) -> str:
        text = " x ".join(f"{len(f.values):,} {f.name}" for f in self.factors)
        if self.where_says:
            text += f" ({self.where_says})"
        if self.bounds:
            text += f"; bound: {', '.join(self.bounds)}"
        return text


def domain(*factors: Finite[Any], where: Callable[..., bool] | None = None, where_says: str = "") -> Domain:
    """The product of ``factors``; ``where`` keeps only the points a precondition admits
    (``where_says`` states it), so the law is proved for every point that satisfies it."""
    if where is not None and not where_says:
        raise ValueError("a domain restricted by `where` must say what it keeps")
    return Domain(tuple(factors), where, where_says)


def _strength_of(*domains: Domain) -> Strength:
    return PROVED if all(d.whole for d in domains) else BOUNDED


# -- capture (the hunt, spec.hunt) -----------------------------------------------------------
# While a list is set here, ``examples`` and ``machine`` record what they would run instead of
# running it, and the enumerations and proofs return at once: running a law's check then only
# collects its Hypothesis properties, so `make fuzz` can hunt each one as a @given test.
_CAPTURED: list[tuple[str, Any, dict[str, SearchStrategy[Any]]]] | None = None


# Explicit examples pinned by `eukhe laws pin` (spec.hunt.pin): (law name, n) -> the arguments
# of each pinned example of the law's n-th Hypothesis property; run first, every time.
PINNED: dict[tuple[str, int], list[dict[str, Any]]] = {}
_RUNNING: list[Any] = ["", 0]  # the law whose check runs now, and how many properties it has reached


def running(name: str) -> None:
    """Say which law's check runs next (spec.report.run), so its pinned examples are found."""
    _RUNNING[:] = [name, 0]


def _next_property() -> list[dict[str, Any]]:
    name, index = _RUNNING
    _RUNNING[1] = index + 1
    return PINNED.get((name, index), [])


def _capturing() -> bool:
    return _CAPTURED is not None


def _captured(strength: Strength) -> Evidence:
    return Evidence(strength, "not run: capturing the Hypothesis properties")


def _holds(prop: Callable[[T], bool | None], case: T) -> None:
    if prop(case) is False:
        raise LawFailed(f"fails for {case!r}")


def exhaust(space: Domain, prop: Callable[..., bool | None]) -> Evidence:
    """Check ``prop(*point)`` at every point of ``space``; proved when ``space`` is whole."""
    if _capturing():
        return _captured(PROVED)
    count = 0
    for point in space.points():
        if prop(*point) is False:
            raise LawFailed(f"fails for {point!r}")
        count += 1
    if count == 0:
        raise LawFailed(f"no point in {space.describe()}")
    kind = "exhaustive" if space.whole else "bounded"
    return Evidence(_strength_of(space), f"{kind}: {space.describe()} ({count:,} cases)")


def bounded(cases: Iterable[T], prop: Callable[[T], bool | None], *, label: str) -> Evidence:
    """Check ``prop`` on exactly the inputs ``label`` names: those the seed names, or every
    input up to a bound we chose (the label says which)."""
    if _capturing():
        return _captured(PROVED)
    count = 0
    for case in cases:
        _holds(prop, case)
        count += 1
    if count == 0:
        raise LawFailed(f"no case computed for {label}")
    return Evidence(BOUNDED, f"bounded: {label} ({count:,} cases)")


def reachable(
    initial: Domain,
    actions: Domain,
    step: Callable[[S, tuple[Any, ...]], S | None],
    invariant: Callable[[S], bool | None],
    *,
    start: Callable[..., S] | None = None,
    transition: Callable[[S, tuple[Any, ...], S], bool | None] | None = None,
    label: str,
) -> Evidence:
    """Breadth-first search of every state reachable from every point of ``initial`` (turned
    into a state by ``start``, else the point itself) under every point of ``actions``
    (``step`` returns None where an action does not apply). The invariant holds on each
    state, ``transition`` (when given) on each edge. Proved when neither domain has a bound:
    the search visits every reachable state of the system."""
    if _capturing():
        return _captured(PROVED)
    starts = (start(*point) if start is not None else point for point in initial.points())
    every_action = list(actions.points())

    def moves(state: S) -> Iterator[tuple[object, S]]:
        for action in every_action:
            after = step(state, action)
            if after is not None:
                yield action, after

    states, edges = _search(starts, moves, invariant, transition, label)  # type: ignore[arg-type]
    kind = "exhaustive" if initial.whole and actions.whole else "bounded"
    return Evidence(
        _strength_of(initial, actions),
        f"{kind}: {label}: from {initial.describe()} under {actions.describe()} "
        f"({states:,} reachable states, {edges:,} transitions)",
    )


def explore(
    initial: Iterable[S],
    step: Callable[[S], Iterable[tuple[object, S]]],
    invariant: Callable[[S], bool | None],
    *,
    transition: Callable[[S, object, S], bool | None] | None = None,
    label: str,
) -> Evidence:
    """Breadth-first search from the states we chose under the actions ``step`` offers: every
    state reached is checked, but the start and the actions are ours, so this is bounded
    (``label`` says the bound). ``reachable`` is the proved form over whole domains."""
    if _capturing():
        return _captured(PROVED)
    states, edges = _search(initial, step, invariant, transition, label)
    return Evidence(BOUNDED, f"bounded: {label} ({states:,} reachable states, {edges:,} transitions)")


def _search(
    initial: Iterable[S],
    moves: Callable[[S], Iterable[tuple[object, S]]],
    invariant: Callable[[S], bool | None],
    transition: Callable[[S, Any, S], bool | None] | None,
    label: str,
) -> tuple[int, int]:
    """Breadth-first search: the invariant on each state reached, ``transition`` on each edge;
    the number of states and of edges."""
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
        for action, after in moves(state):
            edges += 1
            if transition is not None and transition(state, action, after) is False:
                raise LawFailed(f"fails on {state!r} --{action!r}--> {after!r}")
            if after not in seen:
                seen.add(after)
                queue.append(after)
    if not seen:
        raise LawFailed(f"no state reached for {label}")
    return len(seen), edges


def prove(claim: z3.BoolRef, *, label: str, assumptions: Sequence[z3.BoolRef] = ()) -> Evidence:
    """Prove ``claim`` under ``assumptions`` by showing its negation unsatisfiable. The
    assumptions must be satisfiable on their own: a proof from contradictory ones is vacuous."""
    if _capturing():
        return _captured(PROVED)
    if assumptions:
        alone = z3.Solver()
        alone.add(*assumptions)
        if alone.check() != z3.sat:
            raise LawFailed(f"z3: the assumptions of {label} are not satisfiable: the proof would be vacuous")
    solver = z3.Solver()
    solver.add(*assumptions)
    solver.add(z3.Not(claim))
    verdict = solver.check()
    if verdict == z3.sat:
        raise LawFailed(f"z3 counterexample for {label}: {solver.model()}")
    if verdict != z3.unsat:
        raise LawFailed(f"z3 could not decide {label}: {verdict}")
    return Evidence(PROVED, f"z3: unsat ({label})")


def examples(prop: Callable[..., bool | None], **strategies: SearchStrategy[Any]) -> Evidence:
    """Run ``prop`` under Hypothesis in the active profile and count the examples it ran.

    The profile alone decides how many examples run: law checks never set max_examples.
    """
    if _CAPTURED is not None:
        _CAPTURED.append(("given", prop, dict(strategies)))
        return _captured(PROVED)
    pinned = _next_property()
    count = 0

    @functools.wraps(prop)
    def counted(**kwargs: Any) -> None:
        nonlocal count
        count += 1
        if prop(**kwargs) is False:
            raise LawFailed(f"fails for {kwargs!r}")

    test = counted
    for args in pinned:
        test = hexample(**args)(test)
    given(**strategies)(test)()
    return Evidence(TESTED, f"hypothesis: {count:,} examples (profile {profiles.active()})")


def machine(cls: type[RuleBasedStateMachine]) -> Evidence:
    """Run a Hypothesis state machine in the active profile; count runs and steps."""
    if _CAPTURED is not None:
        _CAPTURED.append(("machine", cls, {}))
        return _captured(PROVED)
    _next_property()
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
    return Evidence(TESTED, f"hypothesis: {runs:,} runs, {steps:,} checked states (profile {profiles.active()})")
