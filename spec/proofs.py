"""Proof helpers the law modules share: a z3 proof with a time limit, opaque values, sequences
known only by what was appended to them, callees abstracted to their outcomes.

Every z3 solver the proof machinery makes answers within ``LIMIT_MS`` milliseconds: importing
this module (spec.z3gen imports it, and so does every law module that proves) sets z3's global
timeout, which each solver z3 makes from then on takes (``spec.evidence.prove``'s, a lemma's, the
termination check of a loop spec.z3gen encodes), unless it sets its own. An ``unknown`` (a
timeout) is never a proof: ``prove`` here raises ``ProofTimeout``, a ``LawFailed`` naming the
claim and the limit, so a slow or undecidable claim (z3 can search a broken function's
recursive unfolding for minutes) shows as a failed law, never as a hang or a pass.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import z3

from spec import evidence
from spec.evidence import Evidence, LawFailed, Tie

LIMIT_MS = evidence.LIMIT_MS

z3.set_param("timeout", LIMIT_MS)  # every solver made from now on gives up (unknown) after LIMIT_MS

_UNDECIDED = "z3 could not decide "  # how spec.evidence.prove reports a verdict other than sat or unsat


class ProofTimeout(LawFailed):
    """z3 gave no answer (unknown: its time limit ran out) for a claim: the claim is not proved."""

    def __init__(self, label: str, ms: int, said: str) -> None:
        super().__init__(f"z3 gave no answer (unknown, a timeout) within its limit of {ms:,} ms for the claim {label!r}: not proved ({said})")
        self.label, self.ms = label, ms


def prove(
    claim: Callable[[], Any], *, label: str, assumptions: Callable[[], Sequence[Any]] | Sequence[Any] = (),
    ties: Sequence[Tie] = (), ms: int = LIMIT_MS,
) -> Evidence:
    """``spec.evidence.prove`` with z3's timeout ``ms`` on each of its solver calls: z3's unknown
    after it raises ``ProofTimeout``; a counterexample or a vacuous claim fails as it does there."""
    return _within(label, ms, lambda: evidence.prove(claim, label=label, assumptions=assumptions, ties=ties, ms=ms))


timed = prove  # the name the chat memory's laws use


def lemma(claim: Callable[[], Any], *, label: str, assumptions: Sequence[Any] = (), ms: int = LIMIT_MS) -> Evidence:
    """``spec.evidence.lemma`` (a fact of mathematics, about no code) with z3's timeout ``ms``: an
    unknown after it raises ``ProofTimeout``."""
    return _within(label, ms, lambda: evidence.lemma(claim, label=label, assumptions=assumptions, ms=ms))


def _within(label: str, ms: int, run: Callable[[], Evidence]) -> Evidence:
    """``run``'s evidence; its failure for z3's unknown becomes ``ProofTimeout``."""
    try:
        return run()
    except ProofTimeout:
        raise
    except LawFailed as failed:
        if str(failed).startswith(_UNDECIDED):
            raise ProofTimeout(label, ms, str(failed)) from failed
        raise


class Prefix:
    """A sequence known by a name and what was appended to it (``s[:i] + (c,)``): a step run on
    it holds for every sequence in its place; prepending anything but ``()`` fails the law."""

    def __init__(self, name: str, tail: tuple[Any, ...] = ()) -> None:
        self.name, self.tail = name, tail

    def __add__(self, more: object) -> Prefix:
        if not isinstance(more, tuple):
            raise LawFailed(f"a step appended {more!r} to {self!r}")
        return Prefix(self.name, self.tail + more)

    def __radd__(self, before: object) -> Prefix:
        if before != ():
            raise LawFailed(f"a step put {before!r} before {self!r}")
        return self

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Prefix) and (self.name, self.tail) == (other.name, other.tail)

    def __hash__(self) -> int:
        return hash((self.name, self.tail))

    def __repr__(self) -> str:
        return f"{self.name} + {self.tail!r}"


class Rest(Exception):
    """A search asked for the part of a sequence after its head (``Cons``)."""


class Cons:
    """A sequence known by its head alone: iterating gives the head, then asking for more raises
    ``Rest`` (a search that asks goes on to the rest, whatever it holds): the step of an induction
    on a search runs the search on one."""

    def __init__(self, head: Any) -> None:
        self.head = head

    def __iter__(self) -> Iterator[Any]:
        yield self.head
        raise Rest()


def _names(node: ast.AST, ctx: type[ast.expr_context]) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ctx)}


def _read_early(statements: list[ast.stmt], assigned: set[str], fresh: set[str]) -> set[str]:
    """The names of ``fresh`` the statements read before a pass through them assigns them (given
    ``assigned`` already): a name assigned at the top level of the statements, by an assignment or
    as a loop's target for that loop, is assigned from there on; one assigned inside a branch or a
    nested loop's body is not, after it."""
    early: set[str] = set()
    assigned = set(assigned)
    for statement in statements:
        if isinstance(statement, ast.For):
            early |= _names(statement.iter, ast.Load) & fresh - assigned
            early |= _read_early(statement.body, assigned | _names(statement.target, ast.Store), fresh)
            early |= _read_early(statement.orelse, assigned, fresh)
        elif isinstance(statement, (ast.If, ast.While)):
            early |= _names(statement.test, ast.Load) & fresh - assigned
            early |= _read_early(statement.body, assigned, fresh) | _read_early(statement.orelse, assigned, fresh)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            early |= _names(statement, ast.Load) & fresh - assigned
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            assigned |= set().union(*(_names(target, ast.Store) for target in targets))
        elif isinstance(statement, ast.AugAssign):  # reads its target first
            early |= (_names(statement, ast.Load) | _names(statement.target, ast.Store)) & fresh - assigned
        else:  # any other statement (with, try, match, an expression, return, ...): its reads, nothing assigned after
            early |= _names(statement, ast.Load) & fresh - assigned
    return early


def stateless_loop(function: Callable[..., Any], over: str, carried: frozenset[str] = frozenset()) -> None:
    """Check on ``function``'s source the premise an induction on its loop over ``over`` (a
    ``Cons`` in the step: one item, then the rest) argues in words: the loop iterates ``over``
    itself (no ``enumerate``, slice or reversal around it) and carries no state but ``carried``
    (the state the proof models): every other name its body binds is assigned in each iteration
    before that iteration reads it, it reads no local the function bound before the loop, and it
    writes no global. So no iteration can depend on how many came before it, and the step run on
    the head holds of every item. Raises LawFailed naming what breaks the premise."""
    name = getattr(function, "__qualname__", repr(function))
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    loops = [n for n in ast.walk(tree) if isinstance(n, ast.For) and ast.unparse(n.iter) == over]
    if len(loops) != 1:
        raise LawFailed(f"{name}: {len(loops)} loops iterate {over} itself, not one (the induction's premise)")
    loop = loops[0]
    own = _names(loop.target, ast.Store)
    fresh = set().union(*(_names(statement, ast.Store) for statement in loop.body + loop.orelse)) - own - set(carried)
    if early := sorted(_read_early(loop.body, own, fresh)):
        raise LawFailed(f"{name}: its loop over {over} reads {', '.join(early)} before the iteration assigns it: state the induction does not carry")
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(loop)):
        raise LawFailed(f"{name}: its loop over {over} writes a name outside the function")
    arguments = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    bound_before = set().union(*(_names(n, ast.Store) for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.end_lineno is not None and n.end_lineno < loop.lineno))
    if read := sorted((_names(loop, ast.Load) & bound_before) - arguments - carried - own - fresh):
        raise LawFailed(f"{name}: its loop over {over} reads {', '.join(read)}, bound before it: state the induction does not carry")


class Opaque:
    """A value a function under proof may pass on but never read: everything but identity (``is``)
    raises, so a check that ran on it holds for every value in its place."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __repr__(self) -> str:
        return f"<opaque {object.__getattribute__(self, '_name')}>"


def _refuse(op: str) -> Any:
    def refuse(self: Opaque, *args: object, **kwargs: object) -> NoReturn:
        raise LawFailed(f"the function under proof read {self!r} ({op})")

    return refuse


for _op in ("__eq__ __ne__ __lt__ __le__ __gt__ __ge__ __hash__ __len__ __iter__ __getitem__ __contains__ __bool__ "
            "__add__ __radd__ __getattr__ __setattr__ __str__ __format__").split():
    setattr(Opaque, _op, _refuse(_op))


@contextmanager
def callees(module: Any, **stubs: Any) -> Iterator[None]:
    """Run with some functions of ``module`` replaced by stubs (each callee abstracted to the
    outcomes the proof enumerates), put back after: a proof about the caller's own code."""
    saved = {name: getattr(module, name) for name in stubs}
    for name, stub in stubs.items():
        setattr(module, name, stub)
    try:
        yield
    finally:
        for name, original in saved.items():
            setattr(module, name, original)
