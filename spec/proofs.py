"""Proof helpers the law modules share: a z3 proof with a time limit, opaque values, sequences
known only by what was appended to them, callees abstracted to their outcomes.

``spec.evidence.prove`` runs z3 without a limit; a law that calls ``timed`` gets z3's answer
within ``ms`` milliseconds or fails honestly ("z3 could not decide ...: unknown"), so a slow
solver on a loaded machine shows as a failure, never as a hang. The limit is set on each
solver the proof makes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import z3

from spec.evidence import Evidence, LawFailed, Tie, prove

LIMIT_MS = 20_000


def timed(
    claim: Callable[[], Any], *, label: str, assumptions: Callable[[], Sequence[Any]] | Sequence[Any] = (),
    ties: Sequence[Tie] = (), ms: int = LIMIT_MS,
) -> Evidence:
    """``prove`` with z3's timeout ``ms`` on each of its solver calls (unknown after it: the law fails)."""
    return prove(claim, label=label, assumptions=assumptions, ties=ties, ms=ms)


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
