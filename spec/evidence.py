"""Evidence helpers: each checks a property and returns the ``Evidence`` the report prints.

A law's check returns an ``Evidence``: a strength and a sentence saying exactly what was
covered. The registry refuses a law whose label is stronger than its evidence
(``spec.report.run``), so the strength a law claims is the strength of what it ran. Evidence of
strength proved (or proved-for-encoding) is made only by the helpers here: ``Evidence(PROVED,
...)`` built anywhere else raises ``EvidenceError``.

Proved (for every input, about the real function):
- ``exhaust``: every point of a ``Domain`` that is a product of whole finite types
  (``Finite``), checked point by point. A domain with any ``Bound`` factor (a range we
  chose) gives bounded evidence instead.
- ``reachable``: every state reachable from every initial point under every action, the
  initial states and the actions each a ``Domain``; proved when neither has a ``Bound``.
- ``prove``: z3 finds the negation of a claim unsatisfiable. The claim is built by a function
  that calls the law file's z3 encodings of real functions (``@encoding("bend.m.f")``), and
  ``prove`` refuses it, saying why in one line, when it is vacuous: it calls no encoding, it
  simplifies to True, a premise (an assumption, or the antecedent of the claim's implication)
  is unsatisfiable alone or with the others, or it still holds with every encoding replaced by
  an uninterpreted function (it would hold for any code). The proof is about the code only
  when every encoding is tied to its function (``tie``) over the whole domain; otherwise it is
  proved-for-encoding.
- ``induction``: a base case and a step, each proved, both about the function named as the
  one whose unfolding is the step.

Proved-for-encoding: ``prove`` over an encoding whose tie is bounded or sampled.

Bounded: ``bounded`` (exactly the inputs the seed names, or every input up to a bound we
chose), and the two above over a domain with a ``Bound``.

Tested: ``examples`` and ``machine`` (Hypothesis in the active profile, with counts).

Combining: ``all_of`` (each part proves a piece of the claim: the weakest counts), ``also``
(the first part proves the whole claim, the others add to it: the first part's strength
counts, never a stronger added one), and ``Evidence.with_production`` (the same law run on
production, reported beside it).

A property returns True (or None) when it holds and False or raises when it does not;
the first failing case raises ``LawFailed`` naming it.
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from types import CodeType, FrameType
from typing import Any, Generic, TypeVar

import z3
from hypothesis import example as hexample
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test
from hypothesis.strategies import SearchStrategy

from spec import profiles
from spec.registry import BOUNDED, PROVED, PROVED_FOR_ENCODING, STRENGTHS, TESTED, Strength

T = TypeVar("T")
S = TypeVar("S", bound=Hashable)
F = TypeVar("F", bound=Callable[..., Any])


class LawFailed(AssertionError):
    """A law does not hold, or its proof is refused; the message names the case or the reason."""


class EvidenceError(Exception):
    """Evidence of strength proved made outside the evidence helpers."""


_SEAL = object()  # held by the helpers of this module alone: only they make proved evidence
_SEALED = (PROVED, PROVED_FOR_ENCODING)


@dataclass(frozen=True)
class Proof:
    """What one proof covers, for the report: its object (the whole domain, the z3 encoding and
    its tie to the code, or the function unfolded by induction), the z3 claim as text, and the
    non-vacuity checks it passed. The claim is z3's own SMT-LIB text (``sexpr``): z3's Python
    pretty-printer took 25.6 s of catalog_union_bundled_gives' 91 s (cProfile) on its large claims."""

    object: str
    claim: str = ""
    checks: tuple[str, ...] = ()
    lemma: bool = False  # a fact of mathematics, about no code (``lemma``)


@dataclass(frozen=True)
class Evidence:
    """What a law's check covered. ``strength`` speaks of the model (bend/), or of production
    for a law that only production has; ``production`` is the strength of the same law run
    on production (impl/eukhe) when it is. ``about`` names the real functions a proof is
    about (``induction`` checks them); ``proofs`` says what each proof covers."""

    strength: Strength
    sentence: str
    production: Strength | None = None
    about: frozenset[str] = frozenset()
    proofs: tuple[Proof, ...] = ()
    seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.strength in _SEALED or self.production in _SEALED) and self.seal is not _SEAL:
            raise EvidenceError(
                f"evidence of strength {self.strength.value} is made only by the evidence helpers "
                f"(exhaust, reachable, prove, induction), not directly: {self.sentence!r}"
            )

    def __str__(self) -> str:
        return self.sentence

    def with_production(self, evidence: Evidence) -> Evidence:
        """This evidence of the model, and ``evidence`` of production under the same law."""
        both = _weakest([self.production, evidence.strength])
        return _made(
            self.strength, f"{self.sentence}; production: {evidence.sentence}", both,
            self.about | evidence.about, self.proofs + evidence.proofs,
        )

    def reworded(self, sentence: str) -> Evidence:
        """The same evidence under a longer sentence (what else the check ran, said beside it)."""
        return replace(self, sentence=sentence)


def _made(
    strength: Strength, sentence: str, production: Strength | None = None,
    about: frozenset[str] = frozenset(), proofs: tuple[Proof, ...] = (),
) -> Evidence:
    return Evidence(strength, sentence, production, about, proofs, _SEAL)


def _weakest(strengths: Iterable[Strength | None]) -> Strength | None:
    known = [s for s in strengths if s is not None]
    return max(known, key=STRENGTHS.index) if known else None


def at_least(strength: Strength, label: Strength) -> bool:
    """True when evidence of ``strength`` supports a law labelled ``label``."""
    return STRENGTHS.index(strength) <= STRENGTHS.index(label)


def _joined(parts: Sequence[Evidence]) -> tuple[frozenset[str], tuple[Proof, ...]]:
    return frozenset().union(*(p.about for p in parts)), tuple(q for p in parts for q in p.proofs)


def all_of(*parts: Evidence) -> Evidence:
    """The claim is the conjunction of the parts: the weakest part is the claim's strength."""
    if not parts:
        raise LawFailed("no evidence to combine")
    weakest = _weakest(p.strength for p in parts)
    assert weakest is not None
    about, proofs = _joined(parts)
    return _made(weakest, "; ".join(p.sentence for p in parts), _weakest(p.production for p in parts), about, proofs)


def also(whole: Evidence, *more: Evidence) -> Evidence:
    """``whole`` shows the whole claim; ``more`` adds to it (a hunt beyond a proof's bound, an
    agreement beside a proof): the claim is as strong as ``whole``, never as a stronger added
    part, which proves the whole claim only where it is passed first."""
    parts = (whole, *more)
    about, proofs = _joined(parts)
    production = whole.production if whole.production is not None else _weakest(p.production for p in more)
    return _made(whole.strength, "; ".join(p.sentence for p in parts), production, about, proofs)


def induction(base: Evidence, step: Evidence, *, of: str, label: str) -> Evidence:
    """A proof by induction on the unfolding of the real function ``of`` ("bend.cvar.registry"):
    proved when the base and the step are both proved and both are about ``of``."""
    if _capturing():  # the parts are placeholders about no function, and nothing is checked
        return _captured(PROVED)
    for name, part in (("base", base), ("step", step)):
        if of not in part.about:
            raise LawFailed(
                f"induction on {of} ({label}): the {name} is not about {of} "
                f"(it is about {', '.join(sorted(part.about)) or 'no function'})"
            )
    both = all_of(base, step)
    proof = Proof(f"induction on the unfolding of {of} ({label})", checks=(f"base and step both about {of}",))
    return _made(
        both.strength, f"induction on {label} (unfolding {of}): base: {base.sentence}; step: {step.sentence}",
        both.production, both.about, (proof, *both.proofs),
    )


def identical(production: Callable[..., Any], model: Callable[..., Any], *, label: str) -> Evidence:
    """Production runs the model's function itself (the seed: the rule "runs as the compiled
    model"): the same function object, so every law of the model holds of production."""
    if production is not model:
        raise LawFailed(f"{label}: production's {_dotted(production)} is not the model's {_dotted(model)}")
    name = _dotted(model)
    return _made(PROVED, f"production runs {name} itself (the same function object): {label}",
                 about=frozenset({name}), proofs=(Proof(f"identity: production's function is {name}"),))


def _dotted(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


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
    return _made(strength, "not run: capturing the Hypothesis properties")


def _holds(prop: Callable[[T], bool | None], case: T) -> None:
    if prop(case) is False:
        raise LawFailed(f"fails for {case!r}")


def exhaust(space: Domain, prop: Callable[..., bool | None], *, about: Sequence[Callable[..., Any]] = ()) -> Evidence:
    """Check ``prop(*point)`` at every point of ``space``; proved when ``space`` is whole.
    ``about`` names the real functions the property runs (for ``induction``): each must be
    called while the property runs, or the law fails."""
    if _capturing():
        return _captured(PROVED)
    count = 0
    with _Calls(about):
        for point in space.points():
            if prop(*point) is False:
                raise LawFailed(f"fails for {point!r}")
            count += 1
    if count == 0:
        raise LawFailed(f"no point in {space.describe()}")
    kind = "exhaustive" if space.whole else "bounded"
    strength = _strength_of(space)
    proofs = (Proof(f"whole domain: {space.describe()}"),) if strength is PROVED else ()
    return _made(strength, f"{kind}: {space.describe()} ({count:,} cases)", about=frozenset(map(_dotted, about)), proofs=proofs)


class _Calls:
    """Which of some functions ran, seen by a profile hook that goes away once all have."""

    def __init__(self, functions: Sequence[Callable[..., Any]]) -> None:
        self.waiting: dict[CodeType, str] = {}
        for fn in functions:
            code = getattr(fn, "__code__", None)
            if code is None:
                raise LawFailed(f"{_dotted(fn)} has no Python code to watch")
            self.waiting[code] = _dotted(fn)
        self.previous: Any = None

    def hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in self.waiting:
            del self.waiting[frame.f_code]
            if not self.waiting:
                sys.setprofile(self.previous)

    def __enter__(self) -> None:
        if self.waiting:
            self.previous = sys.getprofile()
            sys.setprofile(self.hook)

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        if self.waiting:
            sys.setprofile(self.previous)
            if kind is None:
                raise LawFailed(f"the property never called {', '.join(sorted(self.waiting.values()))}, which it says it is about")


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
    return _made(BOUNDED, f"bounded: {label} ({count:,} cases)")


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
    strength = _strength_of(initial, actions)
    proofs = (Proof(f"every reachable state: from {initial.describe()} under {actions.describe()}"),) if strength is PROVED else ()
    return _made(
        strength,
        f"{kind}: {label}: from {initial.describe()} under {actions.describe()} "
        f"({states:,} reachable states, {edges:,} transitions)",
        proofs=proofs,
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
    return _made(BOUNDED, f"bounded: {label} ({states:,} reachable states, {edges:,} transitions)")


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


# -- z3 proofs about encodings of real functions ------------------------------------------------------


class _Encodings:
    """While a claim is built: which encodings it called, and whether they stand in for their
    functions (``uninterpreted``: each returns an uninterpreted function of its arguments)."""

    called: set[str] | None = None
    uninterpreted = False


def encoding(of: str) -> Callable[[F], F]:
    """Mark a law file's z3 encoding of the real function ``of`` ("bend.infer.over"): a Python
    function from z3 terms (and plain values) to z3 terms, or tuples of them. ``prove`` learns
    from the calls which functions a claim is about, and replaces each encoding by an
    uninterpreted function to check that the claim depends on it."""
    if not (of.startswith("bend.") or of.startswith("eukhe.")):
        raise ValueError(f"an encoding stands for a function of bend/ or impl/, not {of!r}")

    def mark(build: F) -> F:
        @functools.wraps(build)
        def encoded(*args: Any, **kwargs: Any) -> Any:
            if _Encodings.called is not None:
                _Encodings.called.add(of)
            if _Encodings.uninterpreted:
                return _stand_in(of, build(*args, **kwargs), (*args, *(kwargs[k] for k in sorted(kwargs))))
            return build(*args, **kwargs)

        encoded.of = of  # type: ignore[attr-defined]
        return encoded  # type: ignore[return-value]

    return mark


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=repr) for leaf in _leaves(value[key])]
    return [value]


def _as_z3(value: Any) -> z3.ExprRef | None:
    if isinstance(value, z3.ExprRef):
        return value
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    if isinstance(value, str):
        return z3.StringVal(value)
    return None


def _stand_in(of: str, shape: Any, args: tuple[Any, ...]) -> Any:
    """``shape`` (what the encoding returned) with every z3 term replaced by an uninterpreted
    function of the encoding's arguments: what any code with the same signature could return.
    Plain Python values the encoding returned stay (a stricter check, never a looser one)."""
    leaves = _leaves(args)
    terms = [t for t in map(_as_z3, leaves) if t is not None]
    rest = repr([leaf for leaf in leaves if _as_z3(leaf) is None])
    sorts = [t.sort() for t in terms]
    index = itertools.count()

    def swap(value: Any) -> Any:
        if isinstance(value, z3.ExprRef):
            fn = z3.Function(f"{of}~{next(index)}~{rest}", *sorts, value.sort())
            return fn(*terms)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*map(swap, value))
        if isinstance(value, (tuple, list)):
            return type(value)(map(swap, value))
        if isinstance(value, dict):
            return {key: swap(item) for key, item in value.items()}
        return value

    return swap(shape)


def _built(claim: Callable[[], Any], assumptions: Callable[[], Sequence[Any]] | Sequence[Any], uninterpreted: bool) -> tuple[Any, list[Any], set[str]]:
    if not callable(claim):
        raise LawFailed("prove takes the claim as a function that builds it from the law's encodings, not a built term")
    _Encodings.called, _Encodings.uninterpreted = set(), uninterpreted
    try:
        built = claim()
        premises = list(assumptions() if callable(assumptions) else assumptions)
        return built, premises, _Encodings.called
    finally:
        _Encodings.called, _Encodings.uninterpreted = None, False


def _conjuncts(term: z3.BoolRef) -> list[z3.BoolRef]:
    if z3.is_and(term):
        return [c for child in term.children() for c in _conjuncts(child)]
    return [term]


def _antecedents(claim: z3.BoolRef) -> list[z3.BoolRef]:
    """The premises a claim states itself: the antecedents of its implications, under its
    universal quantifiers (their variables made constants)."""
    found: list[z3.BoolRef] = []
    term = claim
    while True:
        if z3.is_quantifier(term) and term.is_forall():
            names = [z3.Const(f"{term.var_name(i)}!premise", term.var_sort(i)) for i in range(term.num_vars())]
            term = z3.substitute_vars(term.body(), *reversed(names))
        elif z3.is_implies(term):
            found.extend(_conjuncts(term.arg(0)))
            term = term.arg(1)
        else:
            return found


# z3's time limit on each check of the proof machinery (spec.proofs sets it for every solver).
# It bounds a hang, it measures nothing: `make test` runs the laws beside the bridges on two cores,
# where force_first_flag's step claim, a few seconds alone, once took more than 20 s.
LIMIT_MS = 60_000


def check(terms: Sequence[Any], ms: int | None) -> tuple[z3.CheckSatResult, z3.Solver]:
    """z3's verdict on ``terms`` together, within ``ms`` milliseconds, in a context of its own:
    the terms are translated into a fresh one (recursive definitions with them). z3's search
    follows the order in which its terms were made, so a check in the shared context would
    depend on every law built before it: a claim decided in a second alone once ran past a
    minute after the laws before it in one run."""
    fresh = z3.Context()
    solver = z3.Solver(ctx=fresh)
    if ms is not None:
        solver.set("timeout", ms)
    solver.add(*[z3.BoolVal(t, fresh) if isinstance(t, bool) else t.translate(fresh) for t in terms])
    return solver.check(), solver



def _decide(built: z3.BoolRef, premises: list[Any], what: str, ms: int | None) -> list[Any]:
    """The checks a proof and a lemma share: the claim is no tautology, its premises (the
    assumptions and the antecedents it states) are satisfiable together, and z3 finds its
    negation unsatisfiable under them. The premises it stated, for the report."""
    if z3.is_true(z3.simplify(built)):
        raise LawFailed(f"{what} simplifies to True: it proves nothing")
    stated = premises + _antecedents(built)
    together = check(stated, ms)[0] if stated else z3.sat
    if together == z3.unknown:
        raise LawFailed(f"z3 could not decide whether the premises of {what} are satisfiable (unknown, a timeout): not proved")
    if together != z3.sat:
        alone = [str(p) for p in stated if check([p], ms)[0] == z3.unsat]
        which = f"the premise {alone[0][:200]} is unsatisfiable" if alone else "its premises are unsatisfiable together"
        raise LawFailed(f"{what}: {which}: the proof would be vacuous")
    verdict, solver = check([*premises, z3.Not(built)], ms)
    if verdict == z3.sat:
        raise LawFailed(f"z3 counterexample for {what}: {solver.model()}")
    if verdict != z3.unsat:
        raise LawFailed(f"z3 could not decide {what}: {verdict}")
    return stated


@dataclass(frozen=True)
class Tie:
    """The equality of an encoding with the real function it stands for, as far as it was
    checked: ``strength`` proved when over a domain of whole finite types."""

    of: str
    strength: Strength
    sentence: str
    seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.strength in _SEALED and self.seal is not _SEAL:
            raise EvidenceError(f"a tie of strength {self.strength.value} is made only by tie and spec.z3gen, not directly: {self.of}")


def tie(
    encoded: Callable[..., Any],
    real: Callable[..., Any],
    cases: Domain | tuple[Iterable[tuple[Any, ...]], str],
    *,
    args: Callable[..., tuple[Any, ...]] | None = None,
    value: Callable[[Any], Any] = lambda result: result,
) -> Tie:
    """Check that ``encoded`` (an ``@encoding``) computes what ``real`` returns at each case:
    the encoding is applied to ``args(*case)`` (each value as a z3 constant by default) and its
    simplified term read back as Python, ``real`` to the case and its result read by ``value``.
    ``cases`` is a ``Domain`` (proved when whole) or (cases, label) that says what they are."""
    of = getattr(encoded, "of", None)
    if of is None:
        raise LawFailed(f"{_dotted(encoded)} is not an @encoding")
    if _dotted(real) != of:
        raise LawFailed(f"the encoding of {of} is tied to {_dotted(real)}, another function")

    def agrees(*case: Any) -> bool:
        built = encoded(*(args(*case) if args is not None else tuple(_constant(v) for v in case)))
        got, want = _read(built), value(real(*case))
        if got != want:
            raise LawFailed(f"the encoding of {of} gives {got!r} where the function gives {want!r} at {case!r}")
        return True

    if isinstance(cases, Domain):
        found = exhaust(cases, agrees)
    else:
        found = bounded(cases[0], lambda case: agrees(*case), label=cases[1])
    return Tie(of, found.strength, f"tied to {of}: {found.sentence}", _SEAL)


def _constant(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_constant(v) for v in value)
    made = _as_z3(value)
    return value if made is None else made


def _read(term: Any) -> Any:
    """A closed z3 term's value as Python (booleans, integers, strings, tuples of them)."""
    if isinstance(term, (tuple, list)):
        return tuple(_read(t) for t in term)
    if not isinstance(term, z3.ExprRef):
        return term
    value = z3.simplify(term)
    if z3.is_true(value) or z3.is_false(value):
        return z3.is_true(value)
    if z3.is_int_value(value):
        return value.as_long()
    if z3.is_string_value(value):
        return value.as_string()
    raise LawFailed(f"the encoding's term {value} has no closed value")


def prove(
    claim: Callable[[], Any],
    *,
    label: str,
    assumptions: Callable[[], Sequence[Any]] | Sequence[Any] = (),
    ties: Sequence[Tie] = (),
    ms: int | None = None,
) -> Evidence:
    """Prove the claim ``claim()`` builds under ``assumptions`` (a sequence, or a function that
    builds them, when they call encodings) by showing its negation unsatisfiable, within ``ms``
    milliseconds when given. Refused, with the reason, when vacuous: the claim calls no
    ``@encoding``, simplifies to True, has an unsatisfiable premise (alone or with the others),
    or still holds with its encodings uninterpreted. Proved when each encoding it calls has a
    ``tie`` of strength proved among ``ties``; proved-for-encoding otherwise."""
    if _capturing():
        return _captured(PROVED)
    built, premises, called = _built(claim, assumptions, uninterpreted=False)
    if not called:
        raise LawFailed(f"z3 claim of {label} calls no encoding of bend/ or impl/: it is about no code")
    if not isinstance(built, z3.BoolRef):
        raise LawFailed(f"z3 claim of {label} is {built!r}, not a z3 formula")
    stated = _decide(built, premises, f"z3 claim of {label}", ms)
    names = ", ".join(sorted(called))
    free, free_premises, _ = _built(claim, assumptions, uninterpreted=True)
    uninterpreted = check([*free_premises, z3.Not(free)], ms if ms is not None else LIMIT_MS)[0]
    if uninterpreted == z3.unknown:
        raise LawFailed(f"z3 could not decide whether the claim of {label} holds with {names} uninterpreted (unknown, a timeout): not proved")
    if uninterpreted != z3.sat:
        raise LawFailed(f"z3 claim of {label} holds with {names} uninterpreted: it would hold for any code")
    by_name = {t.of: t for t in ties}
    tied = [by_name[name] for name in sorted(called) if name in by_name]
    whole = len(tied) == len(called) and all(t.strength is PROVED for t in tied)
    untied = sorted(called - set(by_name))
    ties_said = "; ".join([t.sentence for t in tied] + ([f"not tied: {', '.join(untied)}"] if untied else []))
    checks = (
        "calls an encoding of the code", "does not simplify to True",
        f"{len(stated)} premise(s) satisfiable together", f"fails with {names} uninterpreted",
    )
    proof = Proof(f"z3 encoding of {names}; {ties_said}", built.sexpr(), checks)
    return _made(
        PROVED if whole else PROVED_FOR_ENCODING, f"z3: unsat ({label}); {ties_said}",
        about=frozenset(called), proofs=(proof,),
    )


def lemma(
    claim: Callable[[], Any], *, label: str, assumptions: Sequence[Any] = (), ms: int | None = None
) -> Evidence:
    """A fact of mathematics that a proof about the code relies on (the pigeonhole principle),
    proved by z3: about no code, so its claim calls no encoding (use ``prove`` for one that
    does). It must not simplify to True and its premises must be satisfiable together; a law
    whose every proof is a lemma is refused by the registry (it proves nothing of the code)."""
    if _capturing():
        return _captured(PROVED)
    built, premises, called = _built(claim, assumptions, uninterpreted=False)
    if called:
        raise LawFailed(f"lemma {label} calls the encodings {', '.join(sorted(called))}: it is about code, a proof for prove")
    if not isinstance(built, z3.BoolRef):
        raise LawFailed(f"lemma {label} is {built!r}, not a z3 formula")
    stated = _decide(built, premises, f"lemma {label}", ms)
    checks = ("about no code", "does not simplify to True", f"{len(stated)} premise(s) satisfiable together")
    return _made(PROVED, f"lemma, z3: unsat ({label})", proofs=(Proof(f"lemma (mathematics): {label}", built.sexpr(), checks, lemma=True),))


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
    return _made(TESTED, f"hypothesis: {count:,} examples (profile {profiles.active()})")


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
    return _made(TESTED, f"hypothesis: {runs:,} runs, {steps:,} checked states (profile {profiles.active()})")
